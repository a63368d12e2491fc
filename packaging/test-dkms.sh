#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-dkms.sh SRC BUILD OUT KVER: make install-dkms-source into OUT/root,
# then dkms add and dkms build from that source for kernel KVER (its
# headers), in a DKMS tree and with a signing key of its own under OUT, so
# that nothing outside OUT changes; the modules' vermagic must be the
# kernel's.  make uninstall-dkms-source must leave the root empty.  OUT is
# removed at the end.  TAP on stdout; --count prints the number of tests.
# The checks are functions run through check(); each ends A && B || {
# say why; return 1; }.
# shellcheck disable=SC2317,SC2015
set -uo pipefail
plan=6
[ "${1-}" = --count ] && { echo "$plan"; exit 0; }
src=${1:?usage: test-dkms.sh SRC BUILD OUT KVER}
build=${2:?} out=${3:?} kver=${4:?}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/tap.sh
. "$here/tap.sh"
make=${MAKE:-make}
ver=$(sed -n 's/^LIBPERCS_VERSION := //p' "$src/lib/lib.mk")
root=$out/root
tree=$out/dkms
rm -rf "$out" && mkdir -p "$root" "$tree"

src_make() {
	"$make" -s -C "$src" BUILD="$build" DESTDIR="$root" "$@"
}

# The private tree and key; sign_file and the key names are the variables
# dkms reads from /etc/dkms/framework.conf, the environment beats unset ones.
dkms_here() {
	env mok_signing_key="$out/mok.key" mok_certificate="$out/mok.pub" \
		dkms "$@" -m percs -v "$ver" -k "$kver" --dkmstree "$tree" \
		--sourcetree "$root/usr/src"
}

tap_plan "$plan"
check "make install-dkms-source" src_make install-dkms-source

conf() {
	local c=$root/usr/src/percs-$ver/dkms.conf
	grep -qx 'PACKAGE_NAME="percs"' "$c" &&
	grep -qx "PACKAGE_VERSION=\"$ver\"" "$c" &&
	[ -f "$root/usr/src/percs-$ver/Kbuild" ] || { cat "$c"; return 1; }
}
check "/usr/src/percs-$ver: Kbuild and dkms.conf for percs $ver" conf

add_build() {
	local log
	dkms_here add && dkms_here build && return 0
	log=$tree/percs/$ver/build/make.log
	[ -f "$log" ] && tail -n 30 "$log"
	return 1
}
check "dkms add and dkms build for $kver" add_build

# The modules Kbuild builds for this kernel: percs_verbs.ko needs user verbs.
want=(percs)
grep -qs '^CONFIG_INFINIBAND_USER_ACCESS=[ym]' "/lib/modules/$kver/build/.config" &&
	want+=(percs_verbs)
built() {
	local m bad=0
	for m in "${want[@]}"; do
		[ -f "$tree/percs/$ver/$kver/x86_64/module/$m.ko" ] ||
			{ echo "$m.ko not built"; bad=1; }
	done
	[ "$bad" = 0 ] || find "$tree" -name '*.ko*'
	return "$bad"
}
check "built: ${want[*]/%/.ko}" built

vermagic() {
	local m got kernel
	kernel=$(modinfo -k "$kver" -F vermagic ib_core 2>/dev/null ||
		 modinfo -k "$kver" -F vermagic loop)
	[ "${kernel%% *}" = "$kver" ] || { echo "the kernel's vermagic: '$kernel'"; return 1; }
	for m in "${want[@]}"; do
		got=$(modinfo -F vermagic "$tree/percs/$ver/$kver/x86_64/module/$m.ko") &&
		[ "$got" = "$kernel" ] || { echo "$m.ko: '${got-}', kernel: '$kernel'"; return 1; }
	done
}
check "the modules' vermagic is the kernel's" vermagic

emptied() {
	src_make uninstall-dkms-source && [ -z "$(find "$root" ! -type d)" ]
}
check "make uninstall-dkms-source leaves nothing" emptied

rm -rf "$out"
[ "$n" = "$plan" ] || echo "# test-dkms.sh: ran $n tests, planned $plan"
exit $failed
