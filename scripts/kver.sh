#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the newest installed kernel version that has both a bootable image
# and matching headers: the one the module is built for and the VM boots.
best=
for d in /lib/modules/*/build; do
	[ -d "$d" ] || continue
	v=${d#/lib/modules/}; v=${v%/build}
	[ -e "/boot/vmlinuz-$v" ] || continue
	best=$(printf '%s\n%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -n1)
done
[ -n "$best" ] || { echo "kver.sh: no kernel with both /boot/vmlinuz-V and /lib/modules/V/build" >&2; exit 1; }
echo "$best"
