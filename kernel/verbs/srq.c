// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: shared receive queues, with the limit event.
 */
#include "verbs.h"

/**
 * pv_create_srq() - a shared receive queue
 * @ibsrq: the core's object
 * @init: max_wr 1..%PV_MAX_QP_WR, max_sge up to %PV_MAX_SGE, a basic SRQ
 * @udata: unused
 *
 * Return: 0, -EOPNOTSUPP (XRC or tag matching), -EINVAL (sizes, a limit
 * not below max_wr), -ENOMEM.
 */
int pv_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		  struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibsrq->device);
	struct pv_srq *srq = to_pv_srq(ibsrq);
	int ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (init->attr.srq_limit >= init->attr.max_wr &&
	    init->attr.srq_limit)
		return -EINVAL;
	if (atomic_inc_return(&dev->nr_srqs) > PV_MAX_SRQ) {
		ret = -ENOMEM;
		goto out;
	}
	ret = pv_rq_init(&srq->rq, init->attr.max_wr, init->attr.max_sge);
	if (ret)
		goto out;
	spin_lock_init(&srq->lock);
	srq->limit = init->attr.srq_limit;
	return 0;
out:
	atomic_dec(&dev->nr_srqs);
	return ret;
}

/**
 * pv_modify_srq() - arm the limit (IB_SRQ_LIMIT); resizing is not
 *	supported
 * @ibsrq: the SRQ
 * @attr: the new limit
 * @mask: IB_SRQ_LIMIT
 * @udata: unused
 *
 * Return: 0, -EOPNOTSUPP (IB_SRQ_MAX_WR), -EINVAL (a limit not below the
 * queue's size).
 */
int pv_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		  enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct pv_srq *srq = to_pv_srq(ibsrq);

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit >= srq->rq.size)
			return -EINVAL;
		spin_lock(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock(&srq->lock);
	}
	return 0;
}

int pv_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct pv_srq *srq = to_pv_srq(ibsrq);

	attr->max_wr = srq->rq.size;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int pv_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct pv_srq *srq = to_pv_srq(ibsrq);

	pv_rq_free(&srq->rq);
	atomic_dec(&to_pv_dev(ibsrq->device)->nr_srqs);
	return 0;
}

int pv_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad)
{
	struct pv_srq *srq = to_pv_srq(ibsrq);
	int ret = 0;

	pv_count(ibsrq->device, PV_STAT_POST_RECV);
	spin_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		ret = pv_rq_post(&srq->rq, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	spin_unlock(&srq->lock);
	pv_rnr_wake(NULL, srq);
	return ret;
}

/**
 * pv_srq_take() - consume a receive of the SRQ for an arriving message
 * @srq: the SRQ
 * @out: the receive
 *
 * Raises IB_EVENT_SRQ_LIMIT_REACHED (and disarms) when the receives left
 * fall below the armed limit.
 *
 * Return: false when the SRQ is empty.
 */
bool pv_srq_take(struct pv_srq *srq, struct pv_rwqe *out)
{
	bool got, event = false;

	spin_lock(&srq->lock);
	got = pv_rq_take(&srq->rq, out);
	if (got && srq->limit && srq->rq.count < srq->limit) {
		srq->limit = 0;
		event = true;
	}
	spin_unlock(&srq->lock);
	if (event && srq->ib.event_handler) {
		struct ib_event ev = {
			.device = srq->ib.device,
			.element.srq = &srq->ib,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ib.event_handler(&ev, srq->ib.srq_context);
	}
	return got;
}
