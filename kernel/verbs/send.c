// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: the send queue and the transfers it carries.
 *
 * A posted request is queued, then the queue is run at once in the
 * poster's context (pv_sq_progress()): each request finds its peer QP by
 * LID and QPN, crosses the emulated network (percs_kapi_xfer(): route,
 * link counters, knobs, the job rule), and moves its bytes between the
 * pinned pages of the registrations on both sides.  An RC SEND that finds
 * no receive posted waits (RNR) and is retried by a work item, up to
 * rnr_retry times (7: for ever); an RC request that finds no QP ready for
 * it at the other end (not there, not connected back, or not yet ready to
 * receive: InfiniBand drops such packets and nothing acknowledges them)
 * is retried after the local ACK timeout, retry_cnt times, then completes
 * with a retry error; everything else completes before the post returns.
 * RC requests complete in order; the first error moves the QP to the
 * error state and flushes what is queued behind it.
 *
 * UC and UD requests are not acknowledged: the drop and duplicate knobs
 * of the network apply to them, and what cannot be delivered (no receive,
 * a wrong Q_Key, no such QP) is lost silently, as on InfiniBand.  RC
 * requests cross with the link-level retry of FIFO and RDMA packets, so
 * the network never loses them.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "verbs.h"

/*
 * Senders whose head request met an RNR, with the receiver they wait
 * for: a receive posted there runs them at once (pv_rnr_wake()); the
 * work item is the fallback, a jiffy later.
 */
static DEFINE_SPINLOCK(pv_rnr_lock);
static LIST_HEAD(pv_rnr_waiters);

/* Wait for a receive of @peer (sq_lock held). */
static void pv_rnr_wait(struct pv_qp *qp, struct pv_qp *peer)
{
	spin_lock(&pv_rnr_lock);
	qp->rnr_lid = peer->dev->lid;
	qp->rnr_qpn = peer->ib.qp_num;
	qp->rnr_srq = peer->srq;
	if (list_empty(&qp->rnr_node))
		list_add_tail(&qp->rnr_node, &pv_rnr_waiters);
	spin_unlock(&pv_rnr_lock);
}

/**
 * pv_rnr_forget() - take a QP off the RNR waiters (it is being destroyed)
 * @qp: the QP, already in RESET
 */
void pv_rnr_forget(struct pv_qp *qp)
{
	spin_lock(&pv_rnr_lock);
	list_del_init(&qp->rnr_node);
	spin_unlock(&pv_rnr_lock);
}

#define PV_RNR_BATCH	16

/**
 * pv_rnr_wake() - receives were posted: run the senders waiting for them
 * @qp: the QP they were posted to, or NULL
 * @srq: the SRQ they were posted to, or NULL
 *
 * Caller holds no lock.  A sender found here is off the list and valid
 * until rcu_read_unlock(): pv_destroy_qp() takes it off under the lock,
 * then waits for a grace period.
 */
void pv_rnr_wake(struct pv_qp *qp, struct pv_srq *srq)
{
	struct pv_qp *w, *next, *batch[PV_RNR_BATCH];
	unsigned int n = 0, i;

	if (list_empty(&pv_rnr_waiters))
		return;
	rcu_read_lock();
	spin_lock(&pv_rnr_lock);
	list_for_each_entry_safe(w, next, &pv_rnr_waiters, rnr_node) {
		if (srq ? w->rnr_srq != srq :
		    w->rnr_lid != qp->dev->lid || w->rnr_qpn != qp->ib.qp_num)
			continue;
		list_del_init(&w->rnr_node);
		batch[n++] = w;
		if (n == PV_RNR_BATCH)
			break;
	}
	spin_unlock(&pv_rnr_lock);
	for (i = 0; i < n; i++)
		pv_sq_progress(batch[i]);
	rcu_read_unlock();
}

/**
 * struct pv_seg - a resolved piece of a transfer
 * @pmr: the registration (NULL: @buf is a kernel buffer)
 * @va: user address of the first byte in @pmr
 * @buf: kernel buffer when @pmr is NULL
 * @len: bytes
 */
struct pv_seg {
	struct percs_mr *pmr;
	u64 va;
	const u8 *buf;
	u64 len;
};

struct pv_segs {
	struct pv_seg s[PV_MAX_SGE];
	u32 n;
	u64 total;
};

/*
 * Resolve a gather/scatter list of @dev's keys for a QP of @pd.
 * Return: 0, -EINVAL (no such key), -EACCES, -ERANGE.
 */
static int pv_resolve(struct pv_dev *dev, struct ib_pd *pd,
		      const struct ib_sge *sge, u32 nr, int access,
		      struct pv_segs *out)
{
	u32 i;
	int ret;

	out->n = 0;
	out->total = 0;
	for (i = 0; i < nr; i++) {
		struct pv_mr *mr;

		if (!sge[i].length)
			continue;
		mr = pv_mr_lookup_rcu(dev, sge[i].lkey);
		if (!mr)
			return -EINVAL;
		ret = pv_mr_check(mr, pd, sge[i].addr, sge[i].length, access);
		if (ret)
			return ret;
		out->s[out->n].pmr = mr->pmr;
		out->s[out->n].va = pv_mr_va(mr, sge[i].addr);
		out->s[out->n].len = sge[i].length;
		out->n++;
		out->total += sge[i].length;
	}
	return 0;
}

/* One contiguous piece: a registration, or a kernel buffer. */
static void pv_seg_one(struct pv_segs *out, struct percs_mr *pmr, u64 va,
		       const void *buf, u64 len)
{
	out->s[0].pmr = pmr;
	out->s[0].va = va;
	out->s[0].buf = buf;
	out->s[0].len = len;
	out->n = 1;
	out->total = len;
}

/*
 * Copy @len bytes from @src to @dst, skipping @skip bytes of @dst first.
 * The sink is always registered memory.  Return: 0 or -ERANGE.
 */
static int pv_copy(const struct pv_segs *dst, u64 skip,
		   const struct pv_segs *src, u64 len)
{
	u32 di = 0, si = 0;
	u64 doff = skip, soff = 0;
	int ret;

	while (di < dst->n && doff >= dst->s[di].len)
		doff -= dst->s[di++].len;
	while (len) {
		const struct pv_seg *d, *s;
		u64 n;

		if (di >= dst->n || si >= src->n)
			return -ERANGE;
		d = &dst->s[di];
		s = &src->s[si];
		n = min3(len, d->len - doff, s->len - soff);
		if (s->pmr)
			ret = percs_kapi_mr_copy(d->pmr, d->va + doff, s->pmr,
						 s->va + soff, n);
		else
			ret = percs_kapi_mr_write(d->pmr, d->va + doff,
						  s->buf + soff, n);
		if (ret)
			return ret;
		len -= n;
		doff += n;
		soff += n;
		if (doff == d->len) {
			di++;
			doff = 0;
		}
		if (soff == s->len) {
			si++;
			soff = 0;
		}
	}
	return 0;
}

/**
 * struct pv_xfer - one request being carried out
 * @qp: the requester
 * @wqe: the request
 * @local: its resolved local side
 * @dev: the peer device
 * @peer: the peer QP
 * @unreliable: UC or UD: losses are silent
 */
struct pv_xfer {
	struct pv_qp *qp;
	struct pv_swqe *wqe;
	struct pv_segs local;
	struct pv_dev *dev;
	struct pv_qp *peer;
	bool unreliable;
};

/* Which receive an arriving message consumes.  Return: false if none. */
static bool pv_take_recv(struct pv_qp *peer, struct pv_rwqe *r)
{
	bool got = false;

	if (peer->srq)
		return pv_srq_take(peer->srq, r);
	spin_lock(&peer->rq_lock);
	if (peer->state == IB_QPS_RTR || peer->state == IB_QPS_RTS ||
	    peer->state == IB_QPS_SQD)
		got = pv_rq_take(&peer->rq, r);
	spin_unlock(&peer->rq_lock);
	return got;
}

/*
 * RC found no receive: wait for one, then look once more.  A receive
 * posted between the first look and the wait is seen by this look; one
 * posted after it finds us waiting (the receive queue's lock orders the
 * two).  Return: true with @r when the second look found one.
 */
static bool pv_recv_or_wait(struct pv_xfer *x, struct pv_rwqe *r)
{
	pv_rnr_wait(x->qp, x->peer);
	if (!pv_take_recv(x->peer, r))
		return false;
	pv_rnr_forget(x->qp);
	return true;
}

static void pv_recv_complete(struct pv_xfer *x, const struct pv_rwqe *r,
			     enum ib_wc_status status, enum ib_wc_opcode op,
			     u32 byte_len)
{
	struct pv_swqe *wqe = x->wqe;
	struct ib_wc wc = {
		.wr_id = r->wr_id,
		.status = status,
		.opcode = op,
		.byte_len = byte_len,
		.qp = &x->peer->ib,
		.src_qp = x->qp->ib.qp_num,
		.slid = x->qp->dev->lid,
		.port_num = 1,
	};

	if (wqe->opcode == IB_WR_SEND_WITH_IMM ||
	    wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = wqe->imm;
	}
	pv_cq_post(to_pv_cq(x->peer->ib.recv_cq), &wc,
		   wqe->flags & IB_SEND_SOLICITED);
}

/*
 * Deliver a SEND into a receive of the peer.  Return: the requester's
 * status, or -EAGAIN (RC, no receive posted: RNR).
 */
static int pv_do_send(struct pv_xfer *x, enum ib_wc_status *st)
{
	u64 skip = x->qp->ib.qp_type == IB_QPT_UD ? PV_UD_GRH : 0;
	struct pv_segs sink;
	struct pv_rwqe r;
	int ret;

	if (!pv_take_recv(x->peer, &r)) {
		if (x->unreliable || !pv_recv_or_wait(x, &r))
			return x->unreliable ? 0 : -EAGAIN;
	}
	ret = pv_resolve(x->dev, x->peer->ib.pd, r.sge, r.num_sge,
			 IB_ACCESS_LOCAL_WRITE, &sink);
	if (ret) {
		pv_recv_complete(x, &r, IB_WC_LOC_PROT_ERR, IB_WC_RECV, 0);
		*st = IB_WC_REM_OP_ERR;
		return 0;
	}
	if (sink.total < skip + x->local.total) {
		pv_recv_complete(x, &r, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0);
		*st = IB_WC_REM_INV_REQ_ERR;
		return 0;
	}
	if (pv_copy(&sink, skip, &x->local, x->local.total)) {
		pv_recv_complete(x, &r, IB_WC_LOC_PROT_ERR, IB_WC_RECV, 0);
		*st = IB_WC_REM_OP_ERR;
		return 0;
	}
	pv_recv_complete(x, &r, IB_WC_SUCCESS, IB_WC_RECV,
			 skip + x->local.total);
	return 0;
}

/* The peer's region of an rkey, checked for @access; NULL if refused. */
/*
 * The peer's MR a transfer of @len bytes at the request's remote address
 * may use with @access, or NULL.  A zero-length transfer names no memory
 * and its R_Key is not checked (IB C9-88; rdma-core users such as UCX
 * flush a QP with one): only the peer QP's access is, and the answer is
 * ZERO_SIZE_PTR, which the caller never dereferences.
 */
static struct pv_mr *pv_remote_mr(struct pv_xfer *x, u64 len, int access)
{
	struct pv_mr *mr;

	if ((x->peer->access & access) != access)
		return NULL;
	if (!len)
		return ZERO_SIZE_PTR;
	mr = pv_mr_lookup_rcu(x->dev, x->wqe->rkey);
	if (!mr || pv_mr_check(mr, x->peer->ib.pd, x->wqe->remote_addr, len,
			       access))
		return NULL;
	return mr;
}

static int pv_do_write(struct pv_xfer *x, enum ib_wc_status *st)
{
	bool imm = x->wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	struct pv_segs sink;
	struct pv_rwqe r;
	struct pv_mr *mr;

	mr = pv_remote_mr(x, x->local.total, IB_ACCESS_REMOTE_WRITE);
	if (!mr) {
		if (!x->unreliable)
			*st = IB_WC_REM_ACCESS_ERR;
		return 0;
	}
	/* The receive first: an RNR must leave memory untouched. */
	if (imm && !pv_take_recv(x->peer, &r)) {
		if (x->unreliable || !pv_recv_or_wait(x, &r))
			return x->unreliable ? 0 : -EAGAIN;
	}
	if (mr == ZERO_SIZE_PTR)
		goto done;
	pv_seg_one(&sink, mr->pmr, pv_mr_va(mr, x->wqe->remote_addr), NULL,
		   x->local.total);
	if (pv_copy(&sink, 0, &x->local, x->local.total)) {
		*st = IB_WC_REM_ACCESS_ERR;
		return 0;
	}
done:
	if (imm)
		pv_recv_complete(x, &r, IB_WC_SUCCESS,
				 IB_WC_RECV_RDMA_WITH_IMM, x->local.total);
	return 0;
}

/* The bytes of the response back to the requester (READ, atomics). */
static int pv_response(struct pv_xfer *x, u64 bytes)
{
	return percs_kapi_xfer(x->peer->win, x->qp->dev->info.hub,
			       x->qp->dev->info.unit,
			       percs_kapi_window_index(x->qp->win), bytes, 0);
}

static int pv_do_read(struct pv_xfer *x, enum ib_wc_status *st)
{
	u64 len = x->wqe->len;
	struct pv_segs src;
	struct pv_mr *mr;

	mr = pv_remote_mr(x, len, IB_ACCESS_REMOTE_READ);
	if (!mr) {
		*st = IB_WC_REM_ACCESS_ERR;
		return 0;
	}
	/* The response lost: a read is asked again (it changes nothing). */
	if (pv_response(x, len) < 0)
		return -ETIMEDOUT;
	if (mr == ZERO_SIZE_PTR)
		return 0;
	pv_seg_one(&src, mr->pmr, pv_mr_va(mr, x->wqe->remote_addr), NULL,
		   len);
	if (pv_copy(&x->local, 0, &src, len))
		*st = IB_WC_LOC_PROT_ERR;
	return 0;
}

static int pv_do_atomic(struct pv_xfer *x, enum ib_wc_status *st)
{
	struct pv_swqe *wqe = x->wqe;
	struct pv_segs src;
	struct pv_mr *mr;
	u64 orig;
	int ret;

	mr = pv_remote_mr(x, sizeof(u64), IB_ACCESS_REMOTE_ATOMIC);
	if (!mr) {
		*st = IB_WC_REM_ACCESS_ERR;
		return 0;
	}
	ret = percs_kapi_mr_atomic64(mr->pmr, pv_mr_va(mr, wqe->remote_addr),
				     wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
				     PERCS_KAPI_AMO_CMP_SWAP :
				     PERCS_KAPI_AMO_FETCH_ADD,
				     wqe->compare_add, wqe->swap, &orig);
	if (ret) {
		*st = IB_WC_REM_INV_REQ_ERR;
		return 0;
	}
	if (pv_response(x, sizeof(u64)) < 0) {
		*st = IB_WC_RETRY_EXC_ERR;
		return 0;
	}
	pv_seg_one(&src, NULL, 0, &orig, sizeof(orig));
	if (pv_copy(&x->local, 0, &src, sizeof(orig)))
		*st = IB_WC_LOC_PROT_ERR;
	return 0;
}

/* Find and check the peer.  Return: 0, or 1 when it cannot be reached. */
static int pv_find_peer(struct pv_xfer *x)
{
	struct pv_qp *qp = x->qp, *peer;
	u16 dlid = qp->dlid;
	u32 dqpn = qp->dest_qpn;

	if (qp->ib.qp_type == IB_QPT_UD) {
		dlid = x->wqe->dlid;
		dqpn = x->wqe->remote_qpn;
	}
	x->dev = pv_dev_by_lid(dlid);
	if (!x->dev)
		return 1;
	peer = pv_qp_lookup_rcu(x->dev, dqpn);
	if (!peer || peer->ib.qp_type != qp->ib.qp_type)
		return 1;
	switch (READ_ONCE(peer->state)) {
	case IB_QPS_RTR:
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		break;
	default:
		/* Not ready to receive: the packet is dropped. */
		return 1;
	}
	if (qp->ib.qp_type == IB_QPT_UD) {
		u32 qkey = x->wqe->remote_qkey;

		/* The high bit: use the QP's own Q_Key (IB 10.2.5). */
		if (qkey & 0x80000000)
			qkey = qp->qkey;
		if (qkey != READ_ONCE(peer->qkey))
			return 1;
	} else if (READ_ONCE(peer->dlid) != qp->dev->lid ||
		   READ_ONCE(peer->dest_qpn) != qp->ib.qp_num) {
		/* Not connected back to us. */
		return 1;
	}
	x->peer = peer;
	return 0;
}

/*
 * Carry out the request at the head of the send queue, under
 * rcu_read_lock() and qp->sq_lock.  Return: 0 with *@st set, -EAGAIN
 * (RNR: try again later) or -ETIMEDOUT (RC, nothing acknowledged it:
 * retry after the ACK timeout).
 */
static int pv_execute(struct pv_qp *qp, struct pv_swqe *wqe,
		      enum ib_wc_status *st)
{
	struct pv_xfer x = {
		.qp = qp,
		.wqe = wqe,
		.unreliable = qp->ib.qp_type != IB_QPT_RC,
	};
	bool sink = wqe->opcode == IB_WR_RDMA_READ ||
		    wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
	u64 wire = sink ? 0 : wqe->len;
	int copies, ret = 0;

	*st = IB_WC_SUCCESS;
	if (wqe->flags & IB_SEND_INLINE)
		pv_seg_one(&x.local, NULL, 0, wqe->inline_data, wqe->len);
	else if (pv_resolve(qp->dev, qp->ib.pd, wqe->sge, wqe->num_sge,
			    sink ? IB_ACCESS_LOCAL_WRITE : 0, &x.local))
		goto prot_err;
	if (sink && x.local.total < wqe->len)
		goto prot_err;

	/* RC: no acknowledgement comes; UC, UD: lost silently. */
	if (pv_find_peer(&x))
		return x.unreliable ? 0 : -ETIMEDOUT;
	copies = percs_kapi_xfer(qp->win, x.dev->info.hub, x.dev->info.unit,
				 x.peer->ib.qp_num - PV_QPN_BASE, wire,
				 x.unreliable ? PERCS_KAPI_XFER_UNRELIABLE : 0);
	if (copies < 0)
		return x.unreliable ? 0 : -ETIMEDOUT;
	/* UC has sequence numbers: only UD sees a duplicate arrive. */
	if (qp->ib.qp_type != IB_QPT_UD)
		copies = min(copies, 1);
	for (; copies > 0 && !ret && *st == IB_WC_SUCCESS; copies--) {
		switch (wqe->opcode) {
		case IB_WR_SEND:
		case IB_WR_SEND_WITH_IMM:
			ret = pv_do_send(&x, st);
			break;
		case IB_WR_RDMA_WRITE:
		case IB_WR_RDMA_WRITE_WITH_IMM:
			ret = pv_do_write(&x, st);
			break;
		case IB_WR_RDMA_READ:
			ret = pv_do_read(&x, st);
			break;
		default:
			ret = pv_do_atomic(&x, st);
			break;
		}
	}
	return ret;

prot_err:
	*st = IB_WC_LOC_PROT_ERR;
	return 0;
}

static enum ib_wc_opcode pv_wc_opcode(u32 opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	default:
		return IB_WC_SEND;
	}
}

/* Complete the head request (sq_lock held) and drop it from the queue. */
static void pv_sq_complete(struct pv_qp *qp, enum ib_wc_status st)
{
	struct pv_swqe *wqe = &qp->sq[qp->sq_head];

	if (st != IB_WC_SUCCESS || qp->sig_all ||
	    (wqe->flags & IB_SEND_SIGNALED)) {
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = st,
			.opcode = pv_wc_opcode(wqe->opcode),
			.byte_len = wqe->len,
			.qp = &qp->ib,
			.port_num = 1,
		};

		pv_cq_post(to_pv_cq(qp->ib.send_cq), &wc, false);
	}
	qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
	qp->sq_count--;
}

/* The local ACK timeout in jiffies, at least one: 4.096 us << timeout. */
static unsigned long pv_ack_timeout(const struct pv_qp *qp)
{
	return max(1UL, usecs_to_jiffies((4096ULL << qp->timeout) / 1000));
}

/*
 * Another try for the head request later, or false when it has used its
 * retries.  Under qp->sq_lock.
 */
static bool pv_retry_later(struct pv_qp *qp, int why)
{
	if (why == -EAGAIN) {
		if (qp->rnr_retry != 7 && !qp->rnr_left)
			return false;
		if (qp->rnr_retry != 7)
			qp->rnr_left--;
		schedule_delayed_work(&qp->rnr_work, 1);
		return true;
	}
	/* A try made by a post while the timer runs is not counted. */
	if (delayed_work_pending(&qp->rnr_work))
		return true;
	/* A timeout of 0 is infinite: the request waits for ever. */
	if (qp->timeout && !qp->retry_left)
		return false;
	if (qp->timeout)
		qp->retry_left--;
	schedule_delayed_work(&qp->rnr_work, pv_ack_timeout(qp));
	return true;
}

/**
 * pv_sq_progress() - carry out the queued requests, in order
 * @qp: the QP; the caller holds none of its locks
 *
 * Stops at an RNR or an unacknowledged request (the work item retries)
 * or an error (the QP goes to the error state and the rest is flushed).
 */
void pv_sq_progress(struct pv_qp *qp)
{
	enum ib_wc_status st = IB_WC_SUCCESS;
	int ret;

	spin_lock(&qp->sq_lock);
	while (qp->sq_count && qp->state == IB_QPS_RTS) {
		rcu_read_lock();
		ret = pv_execute(qp, &qp->sq[qp->sq_head], &st);
		rcu_read_unlock();
		if (ret) {
			if (pv_retry_later(qp, ret))
				break;
			st = ret == -EAGAIN ? IB_WC_RNR_RETRY_EXC_ERR :
					      IB_WC_RETRY_EXC_ERR;
		}
		if (!list_empty(&qp->rnr_node))
			pv_rnr_forget(qp);
		qp->rnr_left = qp->rnr_retry;
		qp->retry_left = qp->retry_cnt;
		pv_sq_complete(qp, st);
		if (st != IB_WC_SUCCESS)
			break;
	}
	spin_unlock(&qp->sq_lock);
	if (st != IB_WC_SUCCESS)
		pv_qp_error(qp);
}

/**
 * pv_rnr_work() - retry a send queue that met an RNR
 * @work: the QP's rnr_work
 */
void pv_rnr_work(struct work_struct *work)
{
	pv_sq_progress(container_of(to_delayed_work(work), struct pv_qp,
				    rnr_work));
}

/**
 * pv_sq_flush() - complete every queued request with a flush error
 * @qp: the QP, in the error state; the caller holds none of its locks
 */
void pv_sq_flush(struct pv_qp *qp)
{
	spin_lock(&qp->sq_lock);
	while (qp->sq_count) {
		struct pv_swqe *wqe = &qp->sq[qp->sq_head];
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = pv_wc_opcode(wqe->opcode),
			.qp = &qp->ib,
		};

		pv_cq_post(to_pv_cq(qp->ib.send_cq), &wc, false);
		qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
		qp->sq_count--;
	}
	spin_unlock(&qp->sq_lock);
}

static bool pv_opcode_ok(enum ib_qp_type type, u32 opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return type != IB_QPT_UD;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

/*
 * Check one request and copy it into @wqe (inline data included: this
 * may fault, so no lock is held).  Return: 0 or -EINVAL, -EFAULT.
 */
static int pv_build(struct pv_qp *qp, const struct ib_send_wr *wr,
		    struct pv_swqe *wqe)
{
	enum ib_qp_type type = qp->ib.qp_type;
	u64 len = 0;
	int i;

	if (!pv_opcode_ok(type, wr->opcode))
		return -EINVAL;
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	if (wr->send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED |
			       IB_SEND_SOLICITED | IB_SEND_INLINE))
		return -EINVAL;
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->flags = wr->send_flags;
	wqe->imm = wr->ex.imm_data;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > PV_MAX_MSG || (type == IB_QPT_UD && len > PV_MTU_BYTES))
		return -EINVAL;
	wqe->len = len;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (len != sizeof(u64))
			return -EINVAL;
		wqe->remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rkey = atomic_wr(wr)->rkey;
		wqe->compare_add = atomic_wr(wr)->compare_add;
		wqe->swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}
	if (type == IB_QPT_UD) {
		if (!ud_wr(wr)->ah)
			return -EINVAL;
		wqe->dlid = to_pv_ah(ud_wr(wr)->ah)->dlid;
		wqe->remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->remote_qkey = ud_wr(wr)->remote_qkey;
	}

	/* Inline: the bytes now, from the poster's memory. */
	if ((wr->send_flags & IB_SEND_INLINE) &&
	    (wr->opcode == IB_WR_SEND || wr->opcode == IB_WR_SEND_WITH_IMM ||
	     wr->opcode == IB_WR_RDMA_WRITE ||
	     wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)) {
		u64 off = 0;

		if (len > PV_MAX_INLINE)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			const struct ib_sge *sge = &wr->sg_list[i];

			if (copy_from_user(wqe->inline_data + off,
					   u64_to_user_ptr(sge->addr),
					   sge->length))
				return -EFAULT;
			off += sge->length;
		}
		wqe->num_sge = 0;
	} else {
		wqe->flags &= ~IB_SEND_INLINE;
		wqe->num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wqe->sge));
	}
	return 0;
}

/**
 * pv_post_send() - queue send requests and carry them out
 * @ibqp: the QP (RTS, SQD or ERR)
 * @wr: the requests
 * @bad: out: the first request not queued
 *
 * Return: 0, -EINVAL (the QP is in RESET, INIT or RTR; an opcode its type
 * does not have; too many SGEs; a message over the MTU on UD or inline
 * data over %PV_MAX_INLINE; unknown send flags), -EFAULT (inline data not
 * readable), -ENOMEM (the send queue is full).
 */
int pv_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		 const struct ib_send_wr **bad)
{
	struct pv_qp *qp = to_pv_qp(ibqp);
	struct pv_swqe *wqe;
	bool flush;
	int ret = 0;

	pv_count(ibqp->device, PV_STAT_POST_SEND);
	/* Only user QPs exist (no kernel ULP can get a DMA MR). */
	if (!ibqp->uobject) {
		*bad = wr;
		return -EOPNOTSUPP;
	}
	wqe = kmalloc(sizeof(*wqe), GFP_KERNEL);
	if (!wqe) {
		*bad = wr;
		return -ENOMEM;
	}
	for (; wr; wr = wr->next) {
		ret = pv_build(qp, wr, wqe);
		if (ret)
			break;
		spin_lock(&qp->sq_lock);
		if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT ||
		    qp->state == IB_QPS_RTR)
			ret = -EINVAL;
		else if (qp->sq_count == qp->sq_size)
			ret = -ENOMEM;
		else
			qp->sq[(qp->sq_head + qp->sq_count++) % qp->sq_size] =
				*wqe;
		spin_unlock(&qp->sq_lock);
		if (ret)
			break;
	}
	kfree(wqe);
	if (ret)
		*bad = wr;
	spin_lock(&qp->sq_lock);
	flush = qp->state == IB_QPS_ERR;
	spin_unlock(&qp->sq_lock);
	if (flush)
		pv_sq_flush(qp);
	else
		pv_sq_progress(qp);
	return ret;
}
