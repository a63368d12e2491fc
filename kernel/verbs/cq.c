// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: completion queues - a ring of work completions, polled
 * by the poll_cq command, with completion events for channels.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "verbs.h"

/**
 * pv_create_cq() - a completion queue
 * @ibcq: the core's object
 * @attr: entries (1..%PV_MAX_CQE), no flags
 * @udata: unused
 *
 * Return: 0, -EINVAL (entries), -EOPNOTSUPP (flags), -ENOMEM.
 */
int pv_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		 struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibcq->device);
	struct pv_cq *cq = to_pv_cq(ibcq);

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > PV_MAX_CQE)
		return -EINVAL;
	if (atomic_inc_return(&dev->nr_cqs) > PV_MAX_CQ) {
		atomic_dec(&dev->nr_cqs);
		return -ENOMEM;
	}
	cq->wc = vmalloc_array(attr->cqe, sizeof(*cq->wc));
	if (!cq->wc) {
		atomic_dec(&dev->nr_cqs);
		return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

int pv_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct pv_cq *cq = to_pv_cq(ibcq);

	vfree(cq->wc);
	atomic_dec(&to_pv_dev(ibcq->device)->nr_cqs);
	return 0;
}

/**
 * pv_cq_post() - add a completion, and raise the event it arms
 * @cq: the CQ
 * @wc: the completion
 * @solicited: the message asked for a solicited event
 *
 * A full ring loses the completion and raises IB_EVENT_CQ_ERR, as a
 * hardware CQ overrun does.  Any context but interrupts.
 */
void pv_cq_post(struct pv_cq *cq, const struct ib_wc *wc, bool solicited)
{
	bool event = false, overflow = false;

	spin_lock(&cq->lock);
	if (cq->count == cq->size) {
		cq->overflows++;
		overflow = true;
	} else {
		cq->wc[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED &&
		     (solicited || wc->status != IB_WC_SUCCESS))) {
			cq->notify = 0;
			event = true;
		}
	}
	spin_unlock(&cq->lock);
	if (overflow && cq->ib.event_handler) {
		struct ib_event ev = {
			.device = cq->ib.device,
			.element.cq = &cq->ib,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ib.event_handler(&ev, cq->ib.cq_context);
	}
	if (event && cq->ib.comp_handler)
		cq->ib.comp_handler(&cq->ib, cq->ib.cq_context);
}

int pv_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct pv_cq *cq = to_pv_cq(ibcq);
	int i;

	pv_count(ibcq->device, PV_STAT_POLL_CQ);
	spin_lock(&cq->lock);
	for (i = 0; i < n && cq->count; i++) {
		wc[i] = cq->wc[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock(&cq->lock);
	if (!i)
		pv_count(ibcq->device, PV_STAT_POLL_CQ_EMPTY);
	return i;
}

int pv_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct pv_cq *cq = to_pv_cq(ibcq);
	int ret = 0;

	pv_count(ibcq->device, PV_STAT_REQ_NOTIFY);
	spin_lock(&cq->lock);
	/* NEXT_COMP wins over SOLICITED when both were asked. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock(&cq->lock);
	return ret;
}
