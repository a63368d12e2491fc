#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-install.sh SRC BUILD OUT: make install as a distribution does it
# (DESTDIR=OUT/stage PREFIX=/usr), check the staged tree, build the
# programs of packaging/tests against it from outside the tree, into
# OUT/bin (selftests/installed.sh runs them in the VM), then make install
# and make uninstall in a second root.  TAP on stdout; --count prints the
# number of tests.  $MAKE is the make to run (make pkg-tests passes its
# own).
# The checks are functions run through check(); each ends A && B || {
# say why; return 1; }.
# shellcheck disable=SC2317,SC2015
set -uo pipefail
plan=12
[ "${1-}" = --count ] && { echo "$plan"; exit 0; }
src=${1:?usage: test-install.sh SRC BUILD OUT}
build=${2:?} out=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/tap.sh
. "$here/tap.sh"
make=${MAKE:-make}
stage=$out/stage
bin=$out/bin
ver=$(sed -n 's/^LIBPERCS_VERSION := //p' "$src/lib/lib.mk")
cflags=(-std=c11 -Wall -Wextra -Werror -O2)
rm -rf "$stage" "$bin" "$out/root2" && mkdir -p "$bin"

# make install/uninstall into ROOT with PREFIX=/usr, whatever the caller's
# environment says about the other directories.
stage_make() {
	local root=$1
	shift
	env -u BINDIR -u LIBDIR -u INCLUDEDIR -u MANDIR -u PKGCONFIGDIR \
		"$make" -s -C "$src" BUILD="$build" DESTDIR="$root" PREFIX=/usr "$@"
}

# Everything a user needs, and nothing else, relative to the root.
expected() {
	local p
	for p in bench ctl topo run oshrun cc oshcc; do
		echo "usr/bin/percs-$p"
		echo "usr/share/man/man1/percs-$p.1"
	done
	for p in percs percs-san percs-msg percs-msg-san percs-mpi percs-mpi-san \
		percs-shmem percs-shmem-san; do
		echo "usr/lib/lib$p.a"
	done
	echo usr/lib/libpercs.so
	echo usr/lib/libpercs.so.1
	echo "usr/lib/libpercs.so.$ver"
	for p in libpercs percs-mpi percs-shmem; do
		echo "usr/lib/pkgconfig/$p.pc"
	done
	echo usr/include/linux/percs.h
	for p in percs.h percs_msg.h mpi/mpi.h shmem/shmem.h; do
		echo "usr/include/percs/$p"
	done
	echo usr/share/man/man7/libpercs.7
}

# The files and links under a root, relative to it, sorted.
files_in() {
	(cd "$1" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
}

tap_plan "$plan"
check "make install DESTDIR=... PREFIX=/usr" stage_make "$stage" install

same_files() {
	local d
	d=$(diff <(expected | LC_ALL=C sort) <(files_in "$stage"))
	[ -z "$d" ] || { printf '%s\n' "$d" | sed -n 's/^</missing:/p; s/^>/not expected:/p'; return 1; }
}
check "the staged files are exactly the expected ones" same_files

shlib() {
	local lib=$stage/usr/lib
	[ "$(readlink "$lib/libpercs.so")" = libpercs.so.1 ] &&
	[ "$(readlink "$lib/libpercs.so.1")" = "libpercs.so.$ver" ] &&
	[ -f "$lib/libpercs.so.$ver" ] && [ ! -L "$lib/libpercs.so.$ver" ] &&
	grep -q 'SONAME.*\[libpercs\.so\.1\]' <<<"$(readelf -d "$lib/libpercs.so.$ver")" ||
		{ ls -l "$lib"/libpercs.so*; readelf -d "$lib/libpercs.so.$ver"; return 1; }
}
check "libpercs.so -> libpercs.so.1 -> libpercs.so.$ver (soname libpercs.so.1)" shlib

man_pages() {
	local p bad=0
	for p in "$stage"/usr/bin/*; do
		p=${p##*/}
		[ -s "$stage/usr/share/man/man1/$p.1" ] ||
			{ echo "no man page for $p"; bad=1; }
	done
	return "$bad"
}
check "every installed program has its man page" man_pages

no_build_paths() {
	! grep -r -l -F -e "$src" -e "$build" "$stage/usr/bin/percs-cc" \
		"$stage/usr/bin/percs-oshcc" "$stage/usr/lib/pkgconfig"
}
check "installed wrappers and .pc files name no build-tree path" no_build_paths

wrappers_show() {
	local cc osh
	cc=$("$stage/usr/bin/percs-cc" -show x.c) && osh=$("$stage/usr/bin/percs-oshcc" -show x.c) &&
	grep -q -- '-I/usr/include/percs/mpi .*/usr/lib/libpercs-mpi\.a' <<<"$cc" &&
	grep -q -- '-I/usr/include/percs/shmem .*/usr/lib/libpercs-shmem\.a' <<<"$osh" ||
		{ echo "percs-cc: $cc"; echo "percs-oshcc: $osh"; return 1; }
}
check "percs-cc and percs-oshcc -show name the installed directories" wrappers_show

export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_LIBDIR=$stage/usr/lib/pkgconfig
unset PKG_CONFIG_PATH
pc_flags() {
	local f v
	f=$(pkg-config --cflags --libs libpercs) && v=$(pkg-config --modversion libpercs) &&
	[ "$f" = "-I$stage/usr/include -L$stage/usr/lib -lpercs " ] && [ "$v" = "$ver" ] ||
		{ echo "flags '${f-}', version '${v-}'"; return 1; }
}
check "pkg-config libpercs: the staged directories, version $ver" pc_flags

build_selfsend() {
	# shellcheck disable=SC2046 # pkg-config's output is a word list
	cc "${cflags[@]}" -o "$bin/selfsend" "$src/packaging/tests/selfsend.c" \
		$(pkg-config --cflags --libs libpercs) &&
	grep -q 'NEEDED.*\[libpercs\.so\.1\]' <<<"$(readelf -d "$bin/selfsend")"
}
check "a libpercs program builds with pkg-config alone, linked to libpercs.so.1" build_selfsend

check "an MPI program builds with the installed percs-cc" \
	env PERCS_CC_DESTDIR="$stage" "$stage/usr/bin/percs-cc" "${cflags[@]}" \
	-o "$bin/mpi-ring" "$src/packaging/tests/mpi-ring.c"
check "an OpenSHMEM program builds with the installed percs-oshcc" \
	env PERCS_OSHCC_DESTDIR="$stage" "$stage/usr/bin/percs-oshcc" "${cflags[@]}" \
	-o "$bin/shmem-ring" "$src/packaging/tests/shmem-ring.c"

build_pc_mpi_shmem() {
	local t
	t=$(mktemp -d) || return 1
	# shellcheck disable=SC2046 # pkg-config's output is a word list
	cc "${cflags[@]}" -o "$t/mpi" "$src/packaging/tests/mpi-ring.c" \
		$(pkg-config --cflags --libs percs-mpi) &&
	cc "${cflags[@]}" -o "$t/shmem" "$src/packaging/tests/shmem-ring.c" \
		$(pkg-config --cflags --libs percs-shmem)
	local rc=$?
	rm -rf "$t"
	return "$rc"
}
check "the MPI and OpenSHMEM programs build with pkg-config percs-mpi, percs-shmem" \
	build_pc_mpi_shmem

# A second root with a file of someone else's in a directory install uses.
round_trip() {
	local root=$out/root2 left
	mkdir -p "$root/usr/bin" && echo other >"$root/usr/bin/other" &&
	stage_make "$root" install >/dev/null && stage_make "$root" uninstall >/dev/null ||
		return 1
	left=$(files_in "$root")
	[ "$left" = usr/bin/other ] && [ ! -e "$root/usr/include/percs" ] ||
		{ echo "left behind:"; echo "$left"; find "$root/usr/include"; return 1; }
	rm -rf "$root"
}
check "make uninstall removes every installed file and nothing else" round_trip

[ "$n" = "$plan" ] || echo "# test-install.sh: ran $n tests, planned $plan"
exit $failed
