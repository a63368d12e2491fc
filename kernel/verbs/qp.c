// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: queue pairs - creation on an HFI window, the state
 * machine (ib_modify_qp_is_ok()), the receive queue, flushing.
 */
#include <linux/rcupdate.h>
#include <linux/vmalloc.h>

#include "verbs.h"

/**
 * pv_qp_lookup_rcu() - a QP by number, under rcu_read_lock()
 * @dev: the device
 * @qpn: the QPN
 *
 * Return: the QP, valid until rcu_read_unlock(), or NULL.
 */
struct pv_qp *pv_qp_lookup_rcu(struct pv_dev *dev, u32 qpn)
{
	return xa_load(&dev->qps, qpn);
}

static int pv_qp_check_caps(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (init->create_flags)
		return -EOPNOTSUPP;
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (cap->max_send_wr > PV_MAX_QP_WR ||
	    cap->max_send_sge > PV_MAX_SGE ||
	    cap->max_inline_data > PV_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > PV_MAX_QP_WR ||
			   cap->max_recv_sge > PV_MAX_SGE))
		return -EINVAL;
	return 0;
}

/**
 * pv_create_qp() - an RC, UC or UD queue pair on a window of the HFI
 * @ibqp: the core's object
 * @init: the attributes; its caps are raised to what is allocated
 * @udata: unused
 *
 * Return: 0, -EOPNOTSUPP (another type, create flags), -EINVAL (caps over
 * the device's limits), the errors of percs_kapi_window_create()
 * (-ENOSPC: the HFI has no free window; -EDQUOT), -ENOMEM.
 */
int pv_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		 struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibqp->device);
	struct pv_qp *qp = to_pv_qp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	int ret;

	ret = pv_qp_check_caps(init);
	if (ret)
		return ret;
	qp->dev = dev;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_DELAYED_WORK(&qp->rnr_work, pv_rnr_work);
	INIT_LIST_HEAD(&qp->rnr_node);
	qp->state = IB_QPS_RESET;
	qp->mtu = PV_MTU;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->sq_size = max(cap->max_send_wr, 1U);
	qp->max_send_sge = cap->max_send_sge;
	qp->sq = vmalloc_array(qp->sq_size, sizeof(*qp->sq));
	if (!qp->sq)
		return -ENOMEM;
	if (init->srq) {
		qp->srq = to_pv_srq(init->srq);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		ret = pv_rq_init(&qp->rq, max(cap->max_recv_wr, 1U),
				 cap->max_recv_sge);
		if (ret)
			goto out_sq;
	}
	cap->max_inline_data = PV_MAX_INLINE;

	qp->win = percs_kapi_window_create(dev->hfi, dev->job);
	if (IS_ERR(qp->win)) {
		ret = PTR_ERR(qp->win);
		goto out_rq;
	}
	ibqp->qp_num = PV_QPN_BASE + percs_kapi_window_index(qp->win);
	ret = xa_insert(&dev->qps, ibqp->qp_num, qp, GFP_KERNEL);
	if (ret)
		goto out_win;
	return 0;

out_win:
	percs_kapi_window_destroy(qp->win);
out_rq:
	pv_rq_free(&qp->rq);
out_sq:
	vfree(qp->sq);
	return ret;
}

/*
 * Complete every posted receive with a flush error (the QP is in the
 * error state).  Called with no lock held.
 */
static void pv_rq_flush(struct pv_qp *qp)
{
	struct pv_cq *cq = to_pv_cq(qp->ib.recv_cq);
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ib,
	};
	struct pv_rwqe e;

	if (qp->srq)
		return;
	for (;;) {
		spin_lock(&qp->rq_lock);
		if (!pv_rq_take(&qp->rq, &e)) {
			spin_unlock(&qp->rq_lock);
			break;
		}
		spin_unlock(&qp->rq_lock);
		wc.wr_id = e.wr_id;
		pv_cq_post(cq, &wc, false);
	}
}

static void pv_qp_set_state(struct pv_qp *qp, enum ib_qp_state state)
{
	spin_lock(&qp->sq_lock);
	spin_lock(&qp->rq_lock);
	qp->state = state;
	if (state == IB_QPS_RESET) {
		/* Back to a clean slate: what was posted is forgotten. */
		qp->sq_head = 0;
		qp->sq_count = 0;
		qp->rq.head = 0;
		qp->rq.count = 0;
	}
	spin_unlock(&qp->rq_lock);
	spin_unlock(&qp->sq_lock);
}

/**
 * pv_qp_error() - move a QP to the error state and flush its queues
 * @qp: the QP; the caller holds no lock of it
 */
void pv_qp_error(struct pv_qp *qp)
{
	pv_qp_set_state(qp, IB_QPS_ERR);
	pv_sq_flush(qp);
	pv_rq_flush(qp);
}

static int pv_modify_check(struct pv_qp *qp, struct ib_qp_attr *attr,
			   int mask)
{
	enum ib_qp_state cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state :
			       qp->state;
	enum ib_qp_state next = mask & IB_QP_STATE ? attr->qp_state : cur;

	if (!ib_modify_qp_is_ok(cur, next, qp->ib.qp_type, mask))
		return -EINVAL;
	if (mask & (IB_QP_ALT_PATH | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    (attr->ah_attr.type != RDMA_AH_ATTR_TYPE_IB ||
	     !pv_dev_by_lid(rdma_ah_get_dlid(&attr->ah_attr))))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > PV_MTU))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > PV_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > PV_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	return 0;
}

/**
 * pv_modify_qp() - change a QP's attributes and state
 * @ibqp: the QP
 * @attr: the attributes
 * @mask: IB_QP_* naming those to apply
 * @udata: unused
 *
 * Return: 0, -EINVAL (a transition or attribute the IB state machine does
 * not allow, a port other than 1, a P_Key index other than 0, a LID with
 * no HFI, an MTU above 2048), -EOPNOTSUPP (alternate paths, rate limits).
 */
int pv_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_udata *udata)
{
	struct pv_qp *qp = to_pv_qp(ibqp);
	int ret;

	ret = pv_modify_check(qp, attr, mask);
	if (ret)
		return ret;

	spin_lock(&qp->sq_lock);
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_AV)
		qp->dlid = rdma_ah_get_dlid(&attr->ah_attr);
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_PATH_MTU)
		qp->mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT) {
		qp->retry_cnt = attr->retry_cnt;
		qp->retry_left = attr->retry_cnt;
	}
	if (mask & IB_QP_RNR_RETRY) {
		qp->rnr_retry = attr->rnr_retry;
		qp->rnr_left = attr->rnr_retry;
	}
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	spin_unlock(&qp->sq_lock);

	if (mask & IB_QP_STATE) {
		if (attr->qp_state == IB_QPS_ERR) {
			pv_qp_error(qp);
		} else {
			pv_qp_set_state(qp, attr->qp_state);
			/* Sends posted while in SQD may go now. */
			if (attr->qp_state == IB_QPS_RTS)
				pv_sq_progress(qp);
		}
	}
	return 0;
}

int pv_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		struct ib_qp_init_attr *init)
{
	struct pv_qp *qp = to_pv_qp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock(&qp->sq_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->cap.max_send_wr = qp->sq_size;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = PV_MAX_INLINE;
	if (!qp->srq) {
		attr->cap.max_recv_wr = qp->rq.size;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}
	attr->ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(&attr->ah_attr, qp->dlid);
	rdma_ah_set_port_num(&attr->ah_attr, 1);
	attr->port_num = 1;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	spin_unlock(&qp->sq_lock);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/**
 * pv_destroy_qp() - unpublish, wait for the transfers that found the QP,
 *	release its window and queues
 * @ibqp: the QP
 * @udata: unused
 *
 * Return: 0.
 */
int pv_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct pv_qp *qp = to_pv_qp(ibqp);

	xa_erase(&qp->dev->qps, ibqp->qp_num);
	pv_qp_set_state(qp, IB_QPS_RESET);
	pv_rnr_forget(qp);
	cancel_delayed_work_sync(&qp->rnr_work);
	/* Senders that found it under RCU are done with it after this. */
	synchronize_rcu();
	percs_kapi_window_destroy(qp->win);
	if (!qp->srq)
		pv_rq_free(&qp->rq);
	vfree(qp->sq);
	return 0;
}

/**
 * pv_post_recv() - queue receives
 * @ibqp: the QP, not in RESET, with no SRQ
 * @wr: the requests
 * @bad: out: the first request not queued
 *
 * In the error state the receives complete at once with a flush error.
 *
 * Return: 0, -EINVAL (the QP uses an SRQ or is in RESET, too many SGEs),
 * -ENOMEM (the queue is full).
 */
int pv_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		 const struct ib_recv_wr **bad)
{
	struct pv_qp *qp = to_pv_qp(ibqp);
	bool flush;
	int ret = 0;

	pv_count(ibqp->device, PV_STAT_POST_RECV);
	if (qp->srq) {
		*bad = wr;
		return -EINVAL;
	}
	spin_lock(&qp->rq_lock);
	if (qp->state == IB_QPS_RESET) {
		spin_unlock(&qp->rq_lock);
		*bad = wr;
		return -EINVAL;
	}
	for (; wr; wr = wr->next) {
		ret = pv_rq_post(&qp->rq, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	flush = qp->state == IB_QPS_ERR;
	spin_unlock(&qp->rq_lock);
	if (flush)
		pv_rq_flush(qp);
	else
		pv_rnr_wake(qp, NULL);
	return ret;
}
