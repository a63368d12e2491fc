// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-msg: the send side.
 *
 * A message of at most eager_max bytes, for which the sender holds enough
 * credit at the receiver, is one PM_EAGER packet and its send is done at
 * once.  Any other message (larger, no credit, or synchronous) registers
 * its buffer for remote reads and sends a PM_RTS; the receiver reads the
 * data when it has matched a receive and answers PM_FIN, which completes
 * the send (with -EREMOTEIO when the FIN says the read failed).
 */
#include <errno.h>
#include <stdlib.h>

#include "msg_internal.h"

static struct percs_msg_req *req_new(struct percs_msg *m, int kind)
{
	struct percs_msg_req *r = pm_req_get(m);

	if (!r)
		return NULL;
	pm_list_init(&r->link);
	r->m = m;
	r->kind = (uint8_t)kind;
	r->state = PM_ST_POSTED;
	m->pending++;
	return r;
}

static int send_rts(struct percs_msg *m, struct percs_msg_req *r,
		    struct pm_peer *p, struct pm_hdr *h, unsigned int post)
{
	struct pm_rts rts = { 0 };
	int ret;

	if (r->len) {
		ret = pm_mr_get(m, r->buf, r->len, PERCS_ACCESS_REMOTE_READ,
				&r->mr);
		if (ret)
			return ret;
		rts.handle = r->mr;
		rts.addr = (uintptr_t)r->buf;
	}
	h->type = PM_RTS;
	h->seq = p->send_seq;
	r->id = m->next_id++;
	h->cookie = r->id;
	ret = pm_post(m, (unsigned int)r->peer, h, &rts, sizeof(rts), NULL, 0,
		      post);
	if (!ret && pm_peer_failed(m, r->peer))
		ret = -ECONNRESET;	/* its window is gone */
	if (ret) {
		if (r->mr)
			pm_mr_put(m, r->mr);
		r->mr = 0;
		return ret;
	}
	p->send_seq++;
	pm_list_add_tail(&m->rndv_sends, &r->link);
	m->cnt.rndv_sent++;
	return 0;
}

/*
 * The message as one PM_EAGER packet, sent or queued in the backlog (its
 * data copied either way) when it fits and the peer has credit for it.
 * Return: 0 (the buffer may be reused), 1 when it must go by rendezvous,
 * or -errno from the wire.
 */
static int eager_send(struct percs_msg *m, struct pm_peer *p, unsigned int dst,
		      struct pm_hdr *h, const void *buf, size_t len,
		      unsigned int post)
{
	int ret;

	if (len > m->eager_max || p->credit < PM_UNEXP_COST(len))
		return 1;
	h->type = PM_EAGER;
	h->seq = p->send_seq;
	ret = post ? 1 : pm_post_imm(m, dst, h, buf, len);
	if (ret > 0)
		ret = pm_post(m, dst, h, NULL, 0, buf, len, post);
	if (ret)
		return ret;
	p->send_seq++;
	p->credit -= PM_UNEXP_COST(len);
	m->cnt.eager_sent++;
	return 0;
}

int percs_msg_send_now(struct percs_msg *m, const void *buf, size_t len,
		       unsigned int dst, int tag, uint32_t ctx)
{
	struct pm_hdr h = { .tag = tag, .ctx = ctx, .len = len,
			    .src = m ? m->rank : 0 };
	struct pm_peer *p;
	int ret;

	if (!m || (len && !buf) || dst >= m->size || tag < 0)
		return -EINVAL;
	/* Anything unusual is percs_msg_isend()'s to do and to report. */
	if (m->error || pm_peer_failed(m, (int)dst) || len > m->eager_max)
		return 0;
	p = m->peers[dst];
	if (!p)
		return 0;
	ret = pm_watch_progress(m);
	if (ret)
		return ret;
	ret = eager_send(m, p, dst, &h, buf, len, 0);
	if (ret > 0)
		return 0;
	if (ret)
		return ret;
	/* Sent, and the send made the kernel refuse it: the peer is gone. */
	return pm_peer_failed(m, (int)dst) ? -ECONNRESET : 1;
}

int percs_msg_isend(struct percs_msg *m, const void *buf, size_t len,
		    unsigned int dst, int tag, uint32_t ctx, unsigned int flags,
		    struct percs_msg_req **req)
{
	struct pm_hdr h = { .tag = tag, .ctx = ctx, .len = len };
	unsigned int post = flags & PERCS_MSG_F_MORE ? PM_POST_MORE : 0;
	struct percs_msg_req *r;
	struct pm_peer *p;
	int ret;

	if (!m || !req || (len && !buf) || dst >= m->size || tag < 0 ||
	    (flags & ~(PERCS_MSG_F_SYNC | PERCS_MSG_F_MORE)))
		return -EINVAL;
	if (len > PERCS_MR_MAX_LENGTH)
		return -EMSGSIZE;
	if (m->error)
		return m->error;
	/* A rank that only sends eagerly never waits: it hears here. */
	ret = pm_watch_progress(m);
	if (ret)
		return ret;
	if (pm_peer_failed(m, (int)dst))
		return -ECONNRESET;
	p = pm_peer(m, dst);
	r = p ? req_new(m, PM_REQ_SEND) : NULL;
	if (!r)
		return -ENOMEM;
	r->buf = (void *)buf;
	r->len = len;
	r->peer = (int)dst;
	r->tag = tag;
	r->ctx = ctx;
	h.src = m->rank;

	ret = flags & PERCS_MSG_F_SYNC ? 1 :
	      eager_send(m, p, dst, &h, buf, len, post);
	if (ret == 0) {
		if (pm_peer_failed(m, (int)dst))
			r->status.error = -ECONNRESET;
		pm_req_done(r);
	} else if (ret > 0) {
		if (!(flags & PERCS_MSG_F_SYNC) && len <= m->eager_max)
			m->cnt.no_credit++;
		ret = send_rts(m, r, p, &h, post);
	}
	if (ret) {
		m->pending--;
		pm_req_put(m, r);
		return ret;
	}
	*req = r;
	return 0;
}

void pm_fin_arrived(struct percs_msg *m, uint64_t cookie, uint32_t status)
{
	struct pm_link *l;

	for (l = m->rndv_sends.next; l != &m->rndv_sends; l = l->next) {
		struct percs_msg_req *r = pm_container(l, struct percs_msg_req,
						       link);

		if (r->id != cookie)
			continue;
		pm_list_del(&r->link);
		if (r->mr)
			pm_mr_put(m, r->mr);
		r->mr = 0;
		/* The receiver's own request carries its errno. */
		if (status)
			r->status.error = -EREMOTEIO;
		pm_req_done(r);
		return;
	}
	/* Not ours (a stale or forged cookie): nothing to complete. */
}
