#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh FLAVOR: build (once) a debug kernel from Debian's
# linux-source-6.1 with tools/vm/kconfig/debug-FLAVOR.config and print the
# path of its tree (bzImage at arch/x86/boot/bzImage; build modules for it
# with make -C TREE M=...).
# debug-kernel.sh --cached FLAVOR: print the path only if that kernel is
# built already; exit 1 without building it if not.
#
# Cached outside the work tree in $PERCS_KERNEL_CACHE (default
# /var/cache/percs) under a name made of the source package version and a
# hash of the fragment: rebuilt only when either changes.  A build takes
# 10-15 minutes on 2 cores; progress goes to stderr.
set -euo pipefail
cached_only=0
if [ "${1-}" = --cached ]; then
	cached_only=1
	shift
fi
flavor=${1:?usage: debug-kernel.sh [--cached] kasan|kcsan}
here=$(cd "$(dirname "$0")" && pwd)
frag=$here/kconfig/debug-$flavor.config
[ -r "$frag" ] || { echo "debug-kernel.sh: no fragment $frag" >&2; exit 2; }
tarball=/usr/src/linux-source-6.1.tar.xz
[ -r "$tarball" ] || { echo "debug-kernel.sh: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
hash=$( { echo "$srcver"; cat "$frag"; } | sha256sum | cut -c1-12)
cache=${PERCS_KERNEL_CACHE:-/var/cache/percs}
tree=$cache/linux-$srcver-$flavor-$hash/linux-source-6.1
say() { echo "debug-kernel($flavor): $*" >&2; }

if [ -f "$tree/.percs-built" ]; then
	echo "$tree"
	exit 0
fi
if [ $cached_only = 1 ]; then
	echo "debug-kernel.sh: the $flavor kernel is not built (in $cache)" >&2
	exit 1
fi

mkdir -p "$cache"
# Only one build per flavor at a time.
exec 9>"$cache/.lock-$flavor"
flock 9
if [ -f "$tree/.percs-built" ]; then
	echo "$tree"
	exit 0
fi
# Older builds of this flavor are superseded.
rm -rf "$cache"/linux-*-"$flavor"-*
mkdir -p "$(dirname "$tree")"
say "unpacking linux-source $srcver"
tar -xJf "$tarball" -C "$(dirname "$tree")"
cd "$tree"
say "configuring with $(basename "$frag")"
make -s KCONFIG_ALLCONFIG="$frag" allnoconfig >/dev/null
# allnoconfig can drop options a fragment asks for: every line must stick.
missing=0
while IFS= read -r line; do
	case $line in ''|'#'*) continue ;; esac
	if ! grep -qxF "$line" .config; then
		say "option did not stick: $line"
		missing=1
	fi
done <"$frag"
[ $missing = 0 ] || { say "fix the fragment"; exit 1; }

jobs=$(($(nproc) + 1))
say "building bzImage and modules with -j$jobs (10-15 minutes on 2 cores)"
start=$(date +%s)
log=$cache/build-$flavor.log
( make -j"$jobs" bzImage modules >"$log" 2>&1 ) &
pid=$!
while kill -0 $pid 2>/dev/null; do
	sleep 30
	n=$(find . -name '*.o' -newer .config 2>/dev/null | wc -l)
	say "$(( $(date +%s) - start )) s, $n objects built"
done
if ! wait $pid; then
	say "build failed; last lines of $log:"
	tail -n 30 "$log" >&2
	exit 1
fi
touch .percs-built
say "done in $(( $(date +%s) - start )) s"
echo "$tree"
