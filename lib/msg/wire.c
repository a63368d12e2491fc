// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-msg: putting packets on the wire.
 *
 * A packet is the struct pm_hdr, an optional extension and the data.  Small
 * ones go as immediate sends (one cache line, no FIFO); the others are
 * built in place in the send FIFO.  When the target's receive FIFO is full
 * the packet is copied to the endpoint's backlog and sent later from the
 * progress engine, in order: a sender never blocks inside a send, so it
 * keeps draining its own receive FIFO and two ranks sending to each other
 * cannot deadlock.  A send that says more follow (PM_POST_MORE) is only
 * composed; the next trigger publishes it with the others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg_internal.h"

static void pkt_build(unsigned char *p, const struct pm_hdr *h,
		      const void *ext, size_t ext_len, const void *data,
		      size_t len)
{
	memcpy(p, h, sizeof(*h));
	if (ext_len)
		memcpy(p + sizeof(*h), ext, ext_len);
	if (len)
		memcpy(p + sizeof(*h) + ext_len, data, len);
}

int pm_trigger(struct percs_msg *m)
{
	if (!m->untriggered)
		return 0;
	m->untriggered = 0;
	return percs_send_trigger(m->w);
}

/* One packet, now (or composed: @more); -EAGAIN when there is no room. */
static int wire_send(struct percs_msg *m, unsigned int dst,
		     const struct pm_hdr *h, const void *ext, size_t ext_len,
		     const void *data, size_t len, bool more)
{
	size_t total = sizeof(*h) + ext_len + len;
	void *p;
	int ret;

	if (!more && total <= PERCS_IMM_PAYLOAD) {
		/* An immediate send would overtake what waits in the FIFO. */
		ret = pm_trigger(m);
		if (ret)
			return ret;
		unsigned char line[PERCS_IMM_PAYLOAD];

		pkt_build(line, h, ext, ext_len, data, len);
		ret = percs_icswx(m->w, &m->addrs[dst], line, total, PM_PKT_TAG);
		if (ret == 0) {
			if (h->type == PM_EAGER)
				m->cnt.imm_sent++;
			return 0;
		}
		if (ret != -EAGAIN)
			return ret;
		/* Every slot busy: the FIFO may still have room. */
	}
	ret = percs_send_reserve(m->w, &m->addrs[dst], total, PM_PKT_TAG, 0, &p);
	if (ret == -EAGAIN) {
		/* Publish what is queued and let the engine make room. */
		m->untriggered = 0;
		ret = percs_send_trigger(m->w);
		if (ret)
			return ret;
		ret = percs_send_reserve(m->w, &m->addrs[dst], total,
					 PM_PKT_TAG, 0, &p);
	}
	if (ret)
		return ret;
	pkt_build(p, h, ext, ext_len, data, len);
	m->untriggered++;
	return more ? 0 : pm_trigger(m);
}

static int backlog_add(struct percs_msg *m, unsigned int dst,
		       const struct pm_hdr *h, const void *ext, size_t ext_len,
		       const void *data, size_t len)
{
	size_t total = sizeof(*h) + ext_len + len;
	struct pm_backlog *b = malloc(sizeof(*b) + total);

	if (!b)
		return -ENOMEM;
	b->dst = dst;
	b->len = total;
	pkt_build(b->pkt, h, ext, ext_len, data, len);
	pm_list_add_tail(&m->backlog, &b->link);
	if (++m->backlog_len > m->cnt.backlog_peak)
		m->cnt.backlog_peak = m->backlog_len;
	return 0;
}

/*
 * In a job a window goes away only with its rank (or after every rank
 * left): a send the kernel refuses because the target window is gone
 * (-ECONNREFUSED) declares the target failed; the packet is dropped.
 */
int pm_post(struct percs_msg *m, unsigned int dst, const struct pm_hdr *h,
	    const void *ext, size_t ext_len, const void *data, size_t len,
	    unsigned int flags)
{
	int ret;

	/* A FIN or CREDIT for a dead peer: nobody reads it. */
	if (pm_peer_failed(m, (int)dst))
		return 0;
	/* Behind a backlog, wait in line (keeps the FIFO fair per target). */
	if (pm_list_empty(&m->backlog)) {
		ret = wire_send(m, dst, h, ext, ext_len, data, len,
				flags & PM_POST_MORE);
		if (ret == -ECONNREFUSED && m->watch)
			return percs_msg_fail_peer(m, dst);
		if (ret != -EAGAIN)
			return ret;
	}
	return backlog_add(m, dst, h, ext, ext_len, data, len);
}

int pm_post_imm(struct percs_msg *m, unsigned int dst, const struct pm_hdr *h,
		const void *data, size_t len)
{
	unsigned char line[PERCS_IMM_PAYLOAD];
	size_t total = sizeof(*h) + len;
	int ret;

	if (total > PERCS_IMM_PAYLOAD || m->untriggered ||
	    !pm_list_empty(&m->backlog) || pm_peer_failed(m, (int)dst))
		return 1;
	pkt_build(line, h, NULL, 0, data, len);
	ret = percs_icswx(m->w, &m->addrs[dst], line, total, PM_PKT_TAG);
	if (ret == -EAGAIN)
		return 1;
	if (ret == -ECONNREFUSED && m->watch)
		return percs_msg_fail_peer(m, dst);
	if (!ret && h->type == PM_EAGER)
		m->cnt.imm_sent++;
	return ret;
}

int pm_backlog_flush(struct percs_msg *m)
{
	while (!pm_list_empty(&m->backlog)) {
		struct pm_backlog *b = pm_container(m->backlog.next,
						    struct pm_backlog, link);
		const struct pm_hdr *h = (const void *)b->pkt;
		int ret = wire_send(m, b->dst, h, NULL, 0,
				    b->pkt + sizeof(*h), b->len - sizeof(*h),
				    false);

		if (ret == -EAGAIN)
			return 0;
		if (ret == -ECONNREFUSED && m->watch) {
			/* Drops b and the rest of the peer's backlog. */
			ret = percs_msg_fail_peer(m, b->dst);
			if (ret)
				return ret;
			continue;
		}
		if (ret)
			return ret;
		pm_list_del(&b->link);
		m->backlog_len--;
		free(b);
	}
	return 0;
}
