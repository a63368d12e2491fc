// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: the HFI's atomic unit.
 *
 * What a %PERCS_PKT_ATOMIC descriptor may contain, and what each operation
 * computes from the value it finds.  The kernel applies the result with a
 * compare-and-exchange of the operand's width on the target's memory, so
 * an operation is atomic with respect to other atomics and to the target
 * CPU's own atomic instructions on the same bytes; this file only says
 * what the new value is.
 */
#include "atomic.h"

static bool fm_atomic_width_ok(unsigned int width)
{
	return width == 1 || width == 2 || width == 4 || width == 8;
}

/**
 * fm_atomic_parse() - check an atomic descriptor and decode it
 * @h: its header (kind %PERCS_PKT_ATOMIC, already through fm_pkt_check())
 * @payload: the @h->length bytes after the header
 * @d: out: the descriptor
 *
 * Checks every field that does not need the target: the op, width, count
 * and flags, the reserved field, the exact length, operands no wider than
 * the width, that packed descriptors are non-fetching ADD/AND/OR/XOR, and
 * that the result location is given exactly when the op fetches.
 * Addresses are judged by the target (fm_atomic_check_addr() and the
 * registration).
 *
 * Return: 0, or -EINVAL.
 */
int fm_atomic_parse(const struct percs_pkt_hdr *h, const void *payload,
		    struct fm_atomic_desc *d)
{
	const struct percs_atomic_ext *e = payload;
	unsigned int i, len;
	bool fetch, cswap;
	u64 mask;

	if (h->length < sizeof(*e))
		return -EINVAL;
	memcpy(&d->ext, e, sizeof(*e));
	e = &d->ext;
	if (e->op > PERCS_ATOMIC_OP_MAX || !fm_atomic_width_ok(e->width) ||
	    !e->count || e->count > PERCS_ATOMIC_MAX_PACKED ||
	    (e->flags & ~PERCS_ATOMIC_F_ALL) || e->reserved)
		return -EINVAL;
	fetch = e->flags & PERCS_ATOMIC_F_FETCH;
	cswap = e->op == PERCS_ATOMIC_CSWAP;
	if (e->count > 1 && (fetch || cswap))
		return -EINVAL;
	if (!fetch && (e->result_handle || e->result_addr))
		return -EINVAL;
	len = PERCS_ATOMIC_LEN(e->count) + (cswap ? sizeof(u64) : 0);
	if (h->length != len)
		return -EINVAL;
	/* One fixed-size copy per op: the compiler inlines it (no memcpy). */
	for (i = 0; i < e->count; i++)
		memcpy(&d->ops[i], (const u8 *)payload + sizeof(*e) +
		       i * sizeof(d->ops[0]), sizeof(d->ops[0]));
	d->compare = 0;
	if (cswap)
		memcpy(&d->compare, (const u8 *)payload + len - sizeof(u64),
		       sizeof(u64));
	mask = fm_atomic_mask(e->width);
	if (d->compare & ~mask)
		return -EINVAL;
	for (i = 0; i < e->count; i++)
		if (d->ops[i].operand & ~mask)
			return -EINVAL;
	return 0;
}

/**
 * fm_atomic_op_name() - short name of an atomic op
 * @op: PERCS_ATOMIC_*
 *
 * Return: "add", "and", "or", "xor", "cswap", or "?".
 */
const char *fm_atomic_op_name(unsigned int op)
{
	static const char *const names[] = {
		[PERCS_ATOMIC_ADD] = "add", [PERCS_ATOMIC_AND] = "and",
		[PERCS_ATOMIC_OR] = "or", [PERCS_ATOMIC_XOR] = "xor",
		[PERCS_ATOMIC_CSWAP] = "cswap",
	};

	return op < FM_ARRAY_SIZE(names) ? names[op] : "?";
}
