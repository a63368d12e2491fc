#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh [EXTRA-PACKAGE...]: install, with apt-get on Debian 12, what
# `make check` needs. Quick when everything is there: it asks dpkg first and
# only runs apt-get update + install for the packages that are missing.
# More packages: a directory of the project can list the ones it needs in
# a file deps.list (one name a line, # comments), e.g. tools/bench/deps.list;
# names on the command line and in $PERCS_EXTRA_PACKAGES count too.
#
# Recommended packages are not installed (--no-install-recommends keeps a
# bare machine's install short): name every package you rely on, e.g.
# ibverbs-providers besides perftest for rdma_rxe.

set -uo pipefail

packages=(
	build-essential     # gcc, make, libc headers; libasan/libubsan come with gcc
	pkg-config
	ccache              # make check compiles only what changed (scripts/ccache-env.sh)
	gcc-multilib        # compile the uapi header with -m32
	linux-headers-amd64 # build the module (Kbuild)
	linux-image-amd64   # the kernel the test VM boots
	linux-source-6.1    # kselftest_harness.h, checkpatch.pl
	sparse              # make C=2 CHECK=sparse
	dwarves             # pahole: uapi struct layout
	scdoc               # man pages
	qemu-system-x86     # the test VM (tools/vm/percs-vm)
	busybox-static      # the VM's initramfs
	cpio
	kmod                # modprobe, insmod, modinfo
	xz-utils            # unpacking the kernel image and linux-source
)

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
srcdir=$(dirname "$here")

read -r -a extra_env <<<"${PERCS_EXTRA_PACKAGES-}"
names=("${packages[@]}" "$@" "${extra_env[@]}")
for list in "$srcdir"/*/deps.list "$srcdir"/*/*/deps.list; do
	[ -f "$list" ] || continue
	while read -r line; do
		line=${line%%#*}
		for p in $line; do
			names+=("$p")
		done
	done <"$list"
done
# Each name once, in order.
mapfile -t names < <(printf '%s\n' "${names[@]}" | awk 'NF && !seen[$0]++')

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
	echo "deps.sh: this is not a Debian system (no dpkg-query/apt-get);" >&2
	echo "deps.sh: install by hand: ${names[*]}" >&2
	exit 1
fi

# missing NAME...: print the names that are not installed.
missing() {
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)
		# second letter: the state; "i" is installed
		[[ ${st:1:2} == "i " ]] || echo "$p"
	done
}

apt_install() {
	local -a want=("$@")
	if ((EUID != 0)); then
		echo "deps.sh: these packages are missing and installing them needs root:" >&2
		echo "    apt-get install ${want[*]}" >&2
		echo "deps.sh: run that (or this script) as root, then try again" >&2
		exit 1
	fi
	echo "deps.sh: installing: ${want[*]}"
	if ((!updated)); then
		env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
			{ echo "deps.sh: apt-get update failed" >&2; exit 1; }
		updated=1
	fi
	env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends -o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold "${want[@]}" ||
		{ echo "deps.sh: apt-get install failed" >&2; exit 1; }
}

updated=0
mapfile -t todo < <(missing "${names[@]}")
if ((${#todo[@]})); then
	apt_install "${todo[@]}"
	mapfile -t still < <(missing "${todo[@]}")
	if ((${#still[@]})); then
		echo "deps.sh: still not installed: ${still[*]}" >&2
		exit 1
	fi
fi

# The module is built against the headers and tested on the image of one
# and the same version (scripts/kver.sh). The meta packages can leave them
# apart (an image installed earlier, headers of a newer point release): then
# add the headers that match an installed image.
if ! "$here/kver.sh" >/dev/null 2>&1; then
	extra=()
	for img in /boot/vmlinuz-*; do
		[ -e "$img" ] || continue
		v=${img#/boot/vmlinuz-}
		[ -d "/lib/modules/$v/build" ] || extra+=("linux-headers-$v")
	done
	((${#extra[@]})) && apt_install "${extra[@]}"
	if ! "$here/kver.sh" >/dev/null; then
		echo "deps.sh: no kernel version has both an image and headers installed" >&2
		exit 1
	fi
fi

if ((${#todo[@]} == 0)); then
	echo "deps.sh: all ${#names[@]} packages present"
fi
exit 0
