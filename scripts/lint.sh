#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh SRC BUILD KDIR: static checks of the kernel-side code, as TAP in
# BUILD/results/lint.tap: checkpatch (kernel style), kernel-doc, sparse,
# the uapi header's layout for -m64 and -m32, a C++ compile of the
# public headers, Documentation/*.rst without reStructuredText
# warnings (a malformed table renders as an error message), and that
# `make run` installs the dependencies before it builds anything.
set -uo pipefail
src=$1 build=$2 kdir=$3
res=$build/results
mkdir -p "$res" "$build/lint"
ksrc=$build/ksrc/linux-source-6.1
tap=$res/lint.tap
echo 13 >"$res/lint.expected"
: >"$tap"
n=0

# check NAME CMD...: one TAP line; the command's output goes under it.
check() {
	local name=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $name" >>"$tap"
	else
		echo "not ok $n - $name" >>"$tap"
		printf '%s\n' "$out" | head -n 40 | sed 's/^/# /' >>"$tap"
	fi
}

if [ ! -f "$ksrc/scripts/checkpatch.pl" ]; then
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$build/ksrc" \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

cd "$src" || exit 1
kfiles=(kernel/*.c kernel/*.h kernel/verbs/*.c kernel/verbs/*.h firmware-model/*.c firmware-model/*.h include/uapi/linux/percs.h)

checkpatch() {
	local out
	out=$(perl "$ksrc/scripts/checkpatch.pl" --no-tree -q --terse -f "${kfiles[@]}" | grep -v '^total:')
	[ -z "$out" ] || { printf '%s\n' "$out"; return 1; }
}
check "checkpatch: kernel/, firmware-model/, uapi header" checkpatch

kerneldoc() {
	local out
	out=$("$kdir/scripts/kernel-doc" -none "${kfiles[@]}" lib/percs.h \
		lib/msg/percs_msg.h include/mpi/mpi.h include/shmem/shmem.h 2>&1)
	[ -z "$out" ] || { printf '%s\n' "$out"; return 1; }
}
check "kernel-doc: every documented interface is well-formed" kerneldoc

sparse_check() {
	local out
	out=$(make -s -C "$kdir" M="$src" PERCS_TEST=1 C=2 CHECK=sparse modules 2>&1 |
		grep -E 'warning|error' | grep -v '^make')
	[ -z "$out" ] || { printf '%s\n' "$out"; return 1; }
}
check "sparse: the module" sparse_check

check "uapi layout, 64-bit" cc -std=c11 -Wall -Werror -I include/uapi \
	-o "$build/lint/layout64" scripts/uapi-layout.c
check "uapi layout, 32-bit" cc -m32 -std=c11 -Wall -Werror -I include/uapi \
	-o "$build/lint/layout32" scripts/uapi-layout.c
check "uapi header compiles alone, strict C89" sh -c \
	"echo '#include <linux/percs.h>' | cc -std=c89 -pedantic -Wall -Werror -I include/uapi -x c -c -o /dev/null -"
check "public headers compile as C++" sh -c \
	"echo '#include <percs.h>' | c++ -Wall -Werror -I include/uapi -I lib -x c++ -c -o /dev/null -"
check "messaging and MPI headers compile as C++" sh -c \
	"printf '#include <percs_msg.h>\\n#include <mpi.h>\\n' | c++ -Wall -Werror -I include/uapi -I lib -I lib/msg -I include/mpi -x c++ -c -o /dev/null -"
check "OpenSHMEM header compiles as C++ and as strict C11" sh -c \
	"echo '#include <shmem.h>' | c++ -Wall -Wextra -Werror -I include/shmem -x c++ -c -o /dev/null - && echo '#include <shmem.h>' | cc -std=c11 -pedantic -Wall -Wextra -Werror -I include/shmem -x c -c -o /dev/null -"

rst_check() {
	local f bad=0
	for f in Documentation/*.rst; do
		rst2pseudoxml --halt=warning --report=warning "$f" >/dev/null ||
			bad=1
	done
	return $bad
}
check "Documentation: reStructuredText without warnings" rst_check

# make run on a bare machine: deps.sh must come before the first compile
# and before anything asks for the kernel version (a dry run shows the
# order; a clean BUILD so that everything would be built).
run_order() {
	local out deps first
	out=$(make -n -C "$src" run BUILD="$build/lint/run-order" 2>&1) ||
		{ printf '%s\n' "$out" | tail -n 20; return 1; }
	deps=$(printf '%s\n' "$out" | grep -n 'scripts/deps.sh' | head -n1 | cut -d: -f1)
	first=$(printf '%s\n' "$out" | grep -nE 'M=[^ ]+ modules| -c -o |kver.sh' |
		head -n1 | cut -d: -f1)
	[ -n "$deps" ] && [ -n "$first" ] && [ "$deps" -lt "$first" ] ||
		{ echo "deps.sh at line ${deps:-none}, first build step at ${first:-none}"; return 1; }
}
check "make run: dependencies installed before anything is built" run_order

noshadow() {
	# Generated kernel build files must never be committed.
	! git ls-files | grep -E '\.(o|ko|mod|mod\.c|cmd)$|Module\.symvers|modules\.order'
}
check "no build products committed" noshadow

# libpercs's exports: exactly the percs_* functions its objects define,
# each in a named node of lib/libpercs.map (a function missing there would
# be local to the shared library, one exported but not defined a leak).
exports() {
	local so=$build/lib/libpercs.so.1 a=$build/lib/libpercs.a
	[ -f "$so" ] && [ -f "$a" ] || { echo "build $so and $a first (make)"; return 1; }
	diff <(nm -g --defined-only "$a" | awk '$2 == "T" && $3 ~ /^percs_/ { print $3 }' | sort -u) \
		<(objdump -T "$so" | awk 'NF >= 7 && $NF ~ /^percs_/ && $(NF - 1) ~ /^LIBPERCS_1/ { print $NF }' | sort -u)
}
check "libpercs exports its percs_* functions, each versioned" exports

echo "1..$n" >>"$tap"
cat "$tap"
