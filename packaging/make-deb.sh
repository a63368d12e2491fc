#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make-deb.sh SRC OUT VERSION: build the Debian packages (debian/) from a
# copy of the tree's files in OUT/percs-VERSION, not from the tree itself
# (no build products, no debian/tmp left in it); the source package and
# the .debs land in OUT, the copy is removed after a build that worked.
# VERSION is the library's (lib/lib.mk): the build stops when
# debian/changelog names another.  Unsigned; parallel with
# DEB_BUILD_OPTIONS as dpkg-buildpackage reads it (default: parallel=nproc).
set -euo pipefail
src=${1:?usage: make-deb.sh SRC OUT VERSION}
out=${2:?} ver=${3:?}

changelog=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
if [ "$changelog" != "$ver" ]; then
	echo "make-deb: debian/changelog says $changelog, lib/lib.mk $ver:" >&2
	echo "make-deb: add a changelog entry (dch -v $ver) or fix the version" >&2
	exit 1
fi

rm -rf "$out" && mkdir -p "$out/percs-$ver"
# The work tree's files as they are, tracked or new, without what git
# ignores (build products); elsewhere (no git, or git refusing a tree of
# another owner) tar leaves out what .gitignore names.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# shellcheck disable=SC2016 # $f is the inner shell's
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		xargs -0 cp -P --parents -t "$out/percs-$ver")
else
	tar -C "$src" --exclude-vcs --exclude-vcs-ignores --exclude=./build \
		--exclude=./debian/build --exclude=./debian/tmp -cf - . |
		tar -C "$out/percs-$ver" -xf -
fi
cd "$out/percs-$ver"
export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=$(nproc)}
dpkg-buildpackage -us -uc --no-sign >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "make-deb: dpkg-buildpackage failed; the log is $out/build.log" >&2
	exit 1
}
cd "$out" && rm -rf "percs-$ver"
ls "$out"/*.deb
