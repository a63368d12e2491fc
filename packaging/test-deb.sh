#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-deb.sh SRC BUILD VERSION: make deb (packaging/make-deb.sh, into
# BUILD/deb), then the packages: the four of them at VERSION, what each
# holds, percs-dkms's DKMS hooks, the wrappers naming the multiarch
# library directory, and lintian finding no error and no warning.  TAP on
# stdout; --count prints the number of tests.
# The checks are functions run through check(); each ends A && B || {
# say why; return 1; }.
# shellcheck disable=SC2317,SC2015
set -uo pipefail
plan=7
[ "${1-}" = --count ] && { echo "$plan"; exit 0; }
src=${1:?usage: test-deb.sh SRC BUILD VERSION}
build=${2:?} ver=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/tap.sh
. "$here/tap.sh"
make=${MAKE:-make}
out=$build/deb
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
multiarch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)

tap_plan "$plan"
start=$(date +%s)
check "make deb" "$make" -s -C "$src" BUILD="$build" deb
echo "# make deb: $(($(date +%s) - start)) s"

deb() {
	local a=$arch
	[ "$1" = percs-dkms ] && a=all
	echo "$out/${1}_${ver}_$a.deb"
}
pkgs=(percs-dkms libpercs1 libpercs-dev percs-tools)
four() {
	local p bad=0
	for p in "${pkgs[@]}"; do
		[ -f "$(deb "$p")" ] || { echo "missing: $(deb "$p")"; bad=1; }
	done
	[ "$bad" = 0 ] || ls "$out"
	return "$bad"
}
check "percs-dkms, libpercs1, libpercs-dev, percs-tools $ver" four

# holds PACKAGE PATH...: the package has every PATH (./ relative).
holds() {
	local p=$1 list f bad=0
	shift
	list=$(dpkg-deb -c "$(deb "$p")" | awk '{ print $6 }') || return 1
	for f in "$@"; do
		grep -qx "\./$f" <<<"$list" || { echo "$p lacks /$f"; bad=1; }
	done
	return "$bad"
}
lib=usr/lib/$multiarch
contents() {
	local bad=0 b
	holds libpercs1 "$lib/libpercs.so.1" "$lib/libpercs.so.$ver" || bad=1
	holds libpercs-dev usr/bin/percs-cc usr/bin/percs-oshcc \
		usr/include/percs/percs.h usr/include/percs/mpi/mpi.h \
		usr/include/percs/shmem/shmem.h usr/include/linux/percs.h \
		"$lib/libpercs.a" "$lib/libpercs.so" "$lib/libpercs-mpi.a" \
		"$lib/pkgconfig/libpercs.pc" usr/share/man/man1/percs-cc.1.gz \
		usr/share/man/man7/libpercs.7.gz || bad=1
	for b in bench ctl topo run oshrun; do
		holds percs-tools "usr/bin/percs-$b" "usr/share/man/man1/percs-$b.1.gz" || bad=1
	done
	holds percs-dkms "usr/src/percs-$ver/dkms.conf" "usr/src/percs-$ver/Kbuild" \
		"usr/src/percs-$ver/kernel/main.c" "usr/src/percs-$ver/kernel/verbs/main.c" \
		"usr/src/percs-$ver/include/uapi/linux/percs.h" || bad=1
	return "$bad"
}
check "each package holds its files" contents

dkms_hooks() {
	local t rc=0
	t=$(mktemp -d) || return 1
	dpkg-deb -e "$(deb percs-dkms)" "$t" &&
	grep -q 'dkms' "$t/postinst" && grep -q 'dkms' "$t/prerm" &&
	grep -q '^Depends:.*dkms' "$t/control" &&
	dpkg-deb --fsys-tarfile "$(deb percs-dkms)" |
		tar -xOf - "./usr/src/percs-$ver/dkms.conf" >"$t/dkms.conf" &&
	grep -qx "PACKAGE_VERSION=\"$ver\"" "$t/dkms.conf" || { ls "$t"; rc=1; }
	rm -rf "$t"
	return "$rc"
}
check "percs-dkms: DKMS builds percs $ver on install, removes it on removal" dkms_hooks

wrapper() {
	local cc
	cc=$(dpkg-deb --fsys-tarfile "$(deb libpercs-dev)" | tar -xOf - ./usr/bin/percs-cc) &&
	grep -q "^libdir=\${PERCS_CC_DESTDIR-}/$lib\$" <<<"$cc" &&
	grep -q "^inc=\${PERCS_CC_DESTDIR-}/usr/include/percs/mpi\$" <<<"$cc" &&
	! grep -q -F -e "$src" -e "$build" <<<"$cc" ||
		{ grep -n 'inc=\|libdir=' <<<"$cc"; return 1; }
}
check "the packaged percs-cc names /$lib and no build path" wrapper

depends() {
	local d
	d=$(dpkg-deb -f "$(deb libpercs-dev)" Depends) &&
	grep -q "libpercs1 (= $ver)" <<<"$d" || { echo "libpercs-dev: Depends: ${d-}"; return 1; }
}
check "libpercs-dev depends on libpercs1 (= $ver)" depends

start=$(date +%s)
check "lintian: no error, no warning (source and binary packages)" \
	lintian --fail-on error,warning "$out/percs_${ver}_$arch.changes"
echo "# lintian: $(($(date +%s) - start)) s"

[ "$n" = "$plan" ] || echo "# test-deb.sh: ran $n tests, planned $plan"
exit $failed
