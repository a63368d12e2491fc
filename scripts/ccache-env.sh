# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ccache-env.sh SRC (sourced by check.sh): put ccache in front of every C
# compiler make check runs - the host build, Kbuild for all three kernels,
# percs-cc/percs-oshcc, mpicc, the Debian package build and DKMS - through
# /usr/lib/ccache in PATH, with its cache beside the cached debug kernels
# (/var/cache/percs/ccache, PERCS_CCACHE_DIR), so that a run after the
# first compiles only what changed.  The cache is keyed on the source after
# preprocessing and on every flag, so a hit is the object the compiler
# would have made; paths below SRC are taken relative to it
# (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so clones at other paths share it.
# PERCS_CCACHE=0 turns it off; without ccache installed nothing changes.

ccache_src=${1:?usage: . ccache-env.sh SRC}
ccache_dir=${PERCS_CCACHE_DIR:-/var/cache/percs/ccache}
if [ "${PERCS_CCACHE:-1}" = 1 ] && [ -d /usr/lib/ccache ] &&
   command -v ccache >/dev/null; then
	if mkdir -p "$ccache_dir" && [ -w "$ccache_dir" ]; then
		export CCACHE_DIR=$ccache_dir
		export CCACHE_BASEDIR=$ccache_src
		export CCACHE_NOHASHDIR=1
		export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
		export PATH=/usr/lib/ccache:$PATH
		# This run's hits and misses only (check.sh prints them).
		ccache -z >/dev/null
	else
		echo "check: $ccache_dir not writable: compiling without ccache" >&2
	fi
fi
