// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: receive rings, the storage of a QP's receive queue and of
 * an SRQ.  The caller holds the lock of the queue that owns the ring.
 */
#include <linux/vmalloc.h>

#include "verbs.h"

/**
 * pv_rq_init() - an empty ring
 * @rq: the ring
 * @size: entries, 1..%PV_MAX_QP_WR
 * @max_sge: SGEs per receive, 0..%PV_MAX_SGE
 *
 * Return: 0, -EINVAL (a size out of range), -ENOMEM.
 */
int pv_rq_init(struct pv_rq *rq, u32 size, u32 max_sge)
{
	if (!size || size > PV_MAX_QP_WR || max_sge > PV_MAX_SGE)
		return -EINVAL;
	rq->wqe = vmalloc_array(size, sizeof(*rq->wqe));
	if (!rq->wqe)
		return -ENOMEM;
	rq->size = size;
	rq->max_sge = max_sge;
	rq->head = 0;
	rq->count = 0;
	return 0;
}

void pv_rq_free(struct pv_rq *rq)
{
	vfree(rq->wqe);
	rq->wqe = NULL;
}

/**
 * pv_rq_post() - queue one receive
 * @rq: the ring, its owner's lock held
 * @wr: the request
 *
 * Return: 0, -ENOMEM (ring full), -EINVAL (too many SGEs).
 */
int pv_rq_post(struct pv_rq *rq, const struct ib_recv_wr *wr)
{
	struct pv_rwqe *e;

	if (wr->num_sge < 0 || wr->num_sge > rq->max_sge)
		return -EINVAL;
	if (rq->count == rq->size)
		return -ENOMEM;
	e = &rq->wqe[(rq->head + rq->count) % rq->size];
	e->wr_id = wr->wr_id;
	e->num_sge = wr->num_sge;
	memcpy(e->sge, wr->sg_list, wr->num_sge * sizeof(*e->sge));
	rq->count++;
	return 0;
}

/**
 * pv_rq_take() - consume the oldest receive
 * @rq: the ring, its owner's lock held
 * @out: the receive
 *
 * Return: false when the ring is empty.
 */
bool pv_rq_take(struct pv_rq *rq, struct pv_rwqe *out)
{
	if (!rq->count)
		return false;
	*out = rq->wqe[rq->head];
	rq->head = (rq->head + 1) % rq->size;
	rq->count--;
	return true;
}
