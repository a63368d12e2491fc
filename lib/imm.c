// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: immediate send (ICSWX).  One call fills one 128-byte slot,
 * publishes it and answers accepted (0) or busy (-EAGAIN).  This is the
 * lowest-latency path: no allocation, no system call in poll mode, and in
 * kick mode exactly one.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static inline bool imm_full(const struct lp_imm *q)
{
	return q->tail - q->head >= q->slots;
}

static inline __attribute__((always_inline))
int imm_post(struct percs_window *w, const struct percs_pkt_hdr *h,
	     const void *buf, size_t len)
{
	struct lp_imm *q = &w->imm;

	if (lp_unlikely(imm_full(q))) {
		q->head = lp_load_acquire(&w->status->imm_head);
		if (imm_full(q)) {
			int ret;

			/*
			 * Every slot is held.  Give the engine one chance to
			 * drain them (kick mode, or a sleeping poller) before
			 * answering busy.
			 */
			if (w->poll && lp_engine_live(w))
				return -EAGAIN;
			ret = w->doorbell(w, PERCS_KICK_F_IMM);
			if (ret < 0)
				return ret;
			q->head = lp_load_acquire(&w->status->imm_head);
			if (imm_full(q))
				return -EAGAIN;
		}
	}
	memcpy(q->next, h, sizeof(*h));
	if (len)
		memcpy(q->next + sizeof(*h), buf, len);
	q->next += PERCS_FLIT_SIZE;
	if (q->next == q->end)
		q->next = q->base;
	q->tail++;
	lp_store_release(&w->db->imm_tail, q->tail);
	return lp_notify(w, PERCS_KICK_F_IMM);
}

int percs_icswx(struct percs_window *w, const struct percs_addr *dst,
		const void *buf, size_t len, uint32_t tag)
{
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_IMM,
		.route = PERCS_ROUTE_DIRECT,
		.length = (uint16_t)len,
		.tag = tag,
	};

	if (lp_unlikely(len > PERCS_IMM_PAYLOAD))
		return -EMSGSIZE;
	if (lp_unlikely(!dst || (len && !buf)))
		return -EINVAL;
	h.dst = *dst;
	return imm_post(w, &h, buf, len);
}

int percs_icswx_hdr(struct percs_window *w, const struct percs_pkt_hdr *hdr,
		    const void *buf, size_t len)
{
	struct percs_pkt_hdr h;

	if (len > PERCS_IMM_PAYLOAD)
		return -EMSGSIZE;
	if (!hdr || (len && !buf))
		return -EINVAL;
	int ret;

	h = *hdr;
	h.length = (uint16_t)len;
	ret = lp_cq_room(w, lp_pkt_asks(h.flags));
	if (ret)
		return ret;
	ret = imm_post(w, &h, buf, len);
	lp_cq_owe(w, lp_pkt_asks(h.flags), ret);
	return ret;
}
