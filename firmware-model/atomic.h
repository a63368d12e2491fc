/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: the HFI's atomic unit - descriptor rules and the
 * arithmetic of each operation.
 */
#ifndef _PERCS_FM_ATOMIC_H
#define _PERCS_FM_ATOMIC_H

#include "fm_env.h"

/**
 * struct fm_atomic_desc - an atomic descriptor, checked and decoded
 * @ext: the extension header as posted
 * @compare: the comparand of a CSWAP, else 0
 * @ops: the operations; @ext.count of them are valid
 */
struct fm_atomic_desc {
	struct percs_atomic_ext ext;
	u64 compare;
	struct percs_atomic_op ops[PERCS_ATOMIC_MAX_PACKED];
};

int fm_atomic_parse(const struct percs_pkt_hdr *h, const void *payload,
		    struct fm_atomic_desc *d);
const char *fm_atomic_op_name(unsigned int op);

/*
 * Inline below: the target side runs these once per operation on its
 * packet path (atomic.c in the kernel), where a call costs as much as the
 * work.
 */

/**
 * fm_atomic_mask() - the bits of an operand of @width bytes
 * @width: 1, 2, 4 or 8
 *
 * Return: the mask of the low @width bytes.
 */
static inline u64 fm_atomic_mask(unsigned int width)
{
	return width >= 8 ? ~(u64)0 : ((u64)1 << (width * 8)) - 1;
}

/**
 * fm_atomic_check_addr() - may an operand of @width bytes live at @addr?
 * @addr: effective address
 * @width: 1, 2, 4 or 8
 *
 * Operands are naturally aligned, so one never crosses a page (or a cache
 * line) and the target applies it with one instruction.
 *
 * Return: 0, or -EINVAL when @addr is not a multiple of @width.
 */
static inline int fm_atomic_check_addr(u64 addr, unsigned int width)
{
	return addr & (width - 1) ? -EINVAL : 0;
}

/**
 * fm_atomic_apply() - the value an operation leaves
 * @op: PERCS_ATOMIC_*
 * @width: 1, 2, 4 or 8
 * @old: the value found (low @width bytes)
 * @operand: the operand (low @width bytes)
 * @compare: the comparand of a CSWAP
 *
 * Arithmetic is modulo 2^(8 * @width): ADD of two's complement values is
 * the same for signed and unsigned operands, and wraps.
 *
 * Return: the new value, in the low @width bytes (the rest zero); equal
 * to @old when nothing changes (a CSWAP that finds another value).
 */
static inline u64 fm_atomic_apply(unsigned int op, unsigned int width,
				  u64 old, u64 operand, u64 compare)
{
	u64 mask = fm_atomic_mask(width);

	old &= mask;
	operand &= mask;
	switch (op) {
	case PERCS_ATOMIC_ADD:
		return (old + operand) & mask;
	case PERCS_ATOMIC_AND:
		return old & operand;
	case PERCS_ATOMIC_OR:
		return old | operand;
	case PERCS_ATOMIC_XOR:
		return old ^ operand;
	case PERCS_ATOMIC_CSWAP:
		return old == (compare & mask) ? operand : old;
	default:
		return old;
	}
}

#endif /* _PERCS_FM_ATOMIC_H */
