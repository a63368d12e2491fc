// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: atomic descriptors - composed in the send FIFO, one completion
 * entry each.  The PGAS level on top of them is pgas.c.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static uint64_t width_mask(unsigned int width)
{
	return width >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (width * 8)) - 1;
}

/* Everything the HFI would refuse with -EINVAL before looking at memory. */
static bool atomic_wr_ok(const struct percs_atomic_wr *wr)
{
	bool fetch = wr->flags & PERCS_ATOMIC_F_FETCH;
	bool cswap = wr->op == PERCS_ATOMIC_CSWAP;
	uint64_t mask = width_mask(wr->width);

	if (wr->op > PERCS_ATOMIC_OP_MAX ||
	    (wr->width != 1 && wr->width != 2 && wr->width != 4 &&
	     wr->width != 8) ||
	    !wr->count || wr->count > PERCS_ATOMIC_MAX_PACKED ||
	    (wr->flags & ~PERCS_ATOMIC_F_ALL) || wr->reserved ||
	    wr->route > PERCS_ROUTE_MAX)
		return false;
	if (wr->count > 1 && (fetch || cswap))
		return false;
	if (!fetch && (wr->result_handle || wr->result_addr))
		return false;
	if (cswap && (wr->compare & ~mask))
		return false;
	for (unsigned int i = 0; i < wr->count; i++)
		if (wr->ops[i].operand & ~mask)
			return false;
	return true;
}

int lp_atomic_post(struct percs_window *w, const struct percs_atomic_wr *wr)
{
	uint8_t buf[PERCS_ATOMIC_LEN(PERCS_ATOMIC_MAX_PACKED) + sizeof(uint64_t)];
	struct percs_atomic_ext *e = (struct percs_atomic_ext *)buf;
	struct percs_pkt_hdr h;
	size_t len;

	if (!w || !wr || !atomic_wr_ok(wr))
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_ATOMIC;
	h.route = wr->route;
	h.route_arg = wr->route_arg;
	h.dst = wr->dst;
	h.tag = (uint32_t)wr->user_data;
	memset(e, 0, sizeof(*e));
	e->op = wr->op;
	e->width = wr->width;
	e->count = wr->count;
	e->flags = wr->flags;
	e->handle = wr->handle;
	e->user_data = wr->user_data;
	if (wr->flags & PERCS_ATOMIC_F_FETCH) {
		e->result_addr = (uint64_t)(uintptr_t)wr->result_addr;
		e->result_handle = wr->result_handle;
	}
	len = PERCS_ATOMIC_LEN(wr->count);
	memcpy(buf + sizeof(*e), wr->ops, wr->count * sizeof(wr->ops[0]));
	if (wr->op == PERCS_ATOMIC_CSWAP) {
		memcpy(buf + len, &wr->compare, sizeof(wr->compare));
		len += sizeof(wr->compare);
	}
	return lp_desc_post(w, &h, buf, len);
}

int percs_atomic_post(struct percs_window *w, const struct percs_atomic_wr *wr)
{
	/* Those entries would be taken for the PGAS level's own. */
	if (wr && (uint32_t)(wr->user_data >> 32) == PERCS_AMO_USER_DATA_TAG)
		return -EINVAL;
	return lp_atomic_post(w, wr);
}
