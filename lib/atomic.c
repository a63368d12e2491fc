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
	bool cswap = wr->op == PERCS_ATOMIC_CSWAP;
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_ATOMIC,
		.route = wr->route,
		.route_arg = wr->route_arg,
		.length = (uint16_t)(PERCS_ATOMIC_LEN(wr->count) +
				     (cswap ? sizeof(wr->compare) : 0)),
		.dst = wr->dst,
		.tag = (uint32_t)wr->user_data,
	};
	struct percs_atomic_ext e = {
		.op = wr->op,
		.width = wr->width,
		.count = wr->count,
		.flags = wr->flags,
		.handle = wr->handle,
		.user_data = wr->user_data,
	};
	uint8_t *p;
	int ret;

	if (wr->flags & PERCS_ATOMIC_F_FETCH) {
		e.result_addr = (uint64_t)(uintptr_t)wr->result_addr;
		e.result_handle = wr->result_handle;
	}
	/* Written in place: fixed-size copies, no staging buffer. */
	ret = lp_desc_reserve(w, &h, (void **)&p);
	if (ret)
		return ret;
	memcpy(p, &e, sizeof(e));
	p += sizeof(e);
	for (unsigned int i = 0; i < wr->count; i++, p += sizeof(wr->ops[0]))
		memcpy(p, &wr->ops[i], sizeof(wr->ops[0]));
	if (cswap)
		memcpy(p, &wr->compare, sizeof(wr->compare));
	return percs_send_trigger(w);
}

int percs_atomic_post(struct percs_window *w, const struct percs_atomic_wr *wr)
{
	int ret;

	if (!w || !wr || !atomic_wr_ok(wr))
		return -EINVAL;
	/* Those entries would be taken for the PGAS level's own. */
	if ((uint32_t)(wr->user_data >> 32) == PERCS_AMO_USER_DATA_TAG)
		return -EINVAL;
	ret = lp_cq_room(w, true);
	if (ret)
		return ret;
	ret = lp_atomic_post(w, wr);
	lp_cq_owe(w, true, ret);
	return ret;
}
