// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: what the collectives share - the CAU trees (cau.c) and the
 * software groups (coll_sw.c, coll_sched.c).
 *
 * A window's collective state (struct lp_coll) is made with its first tree
 * or group.  Their packets are taken wherever the receive FIFO is read
 * (fifo.c calls lp_coll_claim() for every packet it meets); their
 * completion entries are taken from the CQ stash (cq.c keeps there every
 * entry that is not a PGAS atomic's) whenever the collectives advance.
 * Requests are kept on a list per window, oldest first; progress walks
 * the trees (posting the chunks their slots allow) and the requests
 * (finishing CAU requests whose results are in, running the schedules of
 * software ones).  Waits kick (kick mode: only while the send FIFO holds
 * descriptors the HFI has not taken), spin, then sleep in ppoll(2) for 50
 * us doubling to 1 ms, and ask the kernel every 20 ms of waiting whether
 * the trees still exist (their end's completion entry may have been taken
 * by the application, or dropped by a full CQ).  Between spinning and
 * sleeping they yield the CPU for a while; with more members than online
 * CPUs they neither spin nor yield (see coll_may_spin()).
 *
 * Element arithmetic is the firmware model's CAU ALU (firmware-model/cau.c,
 * compiled into the library): the kernel's CAU uses the same code.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "firmware-model/cau.h"	/* the CAU's ALU */

/*
 * Between kicks: LP_COLL_SPINS ring checks, then LP_COLL_YIELDS rounds of
 * sched_yield() - with more ranks than CPUs (8 processes on the VM's 2
 * vCPUs) a spinning waiter holds the CPU that the rank it waits for needs:
 * in the TCG VM 4 ranks' allreduce took about 1 ms with 2000 spins and
 * 60 us with yields -, then sleeps.
 */
#define LP_COLL_SPINS		200
#define LP_COLL_YIELDS		50
#define LP_COLL_SLEEP_MIN_US	50
#define LP_COLL_SLEEP_MAX_US	1000
/*
 * The sleep when the send FIFO holds nothing for the HFI to take: then
 * only other ranks' engines and the kernel's timers move the collective,
 * and whatever arrives for this window (a result, a packet, a completion)
 * ends the ppoll(2).  A short timeout there only woke the rank to find
 * nothing - a context switch each, about 26 us in the TCG VM and the
 * main cost of a collective with more ranks than CPUs.
 */
#define LP_COLL_SLEEP_IDLE_US	20000

uint64_t lp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct lp_coll *lp_coll_get(struct percs_window *w)
{
	if (!w->coll)
		w->coll = calloc(1, sizeof(*w->coll));
	return w->coll;
}

/* ---- the ALU ---------------------------------------------------------------- */

/*
 * @acc = @acc op @in over @bytes (a multiple of the element size), or with
 * @left @acc = @in op @acc: the CAU's ALU takes at most 64 bytes a call.
 */
int lp_combine(unsigned int op, unsigned int type, uint8_t *acc,
	       const uint8_t *in, size_t bytes, bool left)
{
	unsigned int esize = fm_cau_elem_size(type);
	uint8_t tmp[PERCS_CAU_PAYLOAD];
	size_t off, n;

	if (!esize || bytes % esize)
		return -EINVAL;
	for (off = 0; off < bytes; off += n) {
		n = bytes - off < PERCS_CAU_PAYLOAD ? bytes - off :
						      PERCS_CAU_PAYLOAD;
		if (left) {
			memcpy(tmp, in + off, n);
			fm_cau_combine(op, type, (unsigned int)(n / esize), tmp,
				       acc + off);
			memcpy(acc + off, tmp, n);
		} else {
			fm_cau_combine(op, type, (unsigned int)(n / esize),
				       acc + off, in + off);
		}
	}
	return 0;
}

size_t percs_coll_type_size(unsigned int type)
{
	return fm_cau_elem_size(type);
}

int percs_coll_combine(unsigned int op, unsigned int type, size_t count,
		       void *acc, const void *in)
{
	size_t esize = fm_cau_elem_size(type);

	if (fm_cau_check(op, type, 0) || (count && (!acc || !in)) ||
	    count > SIZE_MAX / 8)
		return -EINVAL;
	return lp_combine(op, type, acc, in, count * esize, false);
}

/* ---- packets and completion entries ------------------------------------------ */

int lp_coll_claim(struct percs_window *w, const struct percs_pkt_hdr *h)
{
	struct lp_coll *c = w->coll;

	if (h->kind == PERCS_PKT_COLL)
		return c->nr_trees ? lp_cau_claim(w, h) : 0;
	if (h->kind == PERCS_PKT_FIFO && (h->tag >> 16) == PERCS_SW_TAG_HI &&
	    c->groups)
		return lp_sw_claim(w, h);
	return 0;
}

/*
 * Take the CQ's new entries (PGAS atomics' to pgas.c, the rest to the
 * stash) and the stash's entries of our trees and groups.  The stash is
 * looked through again only when it changed size, or with @all.
 */
int lp_coll_cq(struct percs_window *w, bool all)
{
	struct lp_coll *c = w->coll;
	struct lp_cq *q = &w->cq;
	uint32_t keep = 0, i;
	int ret = 0;

	if (lp_cq_ring_pending(w))
		ret = lp_cq_drain(w);
	if (!q->stash_count || (!all && q->stash_count == c->cq_seen)) {
		c->cq_seen = q->stash_count;
		return ret;
	}
	for (i = 0; i < q->stash_count; i++) {
		struct percs_cqe e =
			q->stash[(q->stash_head + i) & (q->stash_cap - 1)];

		if (e.kind == PERCS_PKT_COLL && lp_cau_cqe(w, &e))
			continue;
		if (e.kind == PERCS_PKT_FIFO && lp_sw_cqe(w, &e))
			continue;
		q->stash[(q->stash_head + keep++) & (q->stash_cap - 1)] = e;
	}
	q->stash_count = keep;
	c->cq_seen = keep;
	return ret;
}

/* ---- requests --------------------------------------------------------------- */

void lp_req_start(struct percs_window *w, struct percs_coll_req *r,
		  enum lp_req_kind kind)
{
	struct lp_coll *c = w->coll;

	r->w = w;
	r->kind = (uint8_t)kind;
	r->done = false;
	r->status = 0;
	r->next = NULL;
	r->prev = c->tail;
	if (c->tail)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
}

static void req_unlink(struct percs_coll_req *r)
{
	struct lp_coll *c = r->w->coll;

	if (r->prev)
		r->prev->next = r->next;
	else
		c->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		c->tail = r->prev;
	r->prev = r->next = NULL;
}

void lp_req_finish(struct percs_coll_req *r, int status)
{
	if (r->done)
		return;
	r->done = true;
	if (!r->status)
		r->status = status;
	if (r->kind == LP_REQ_CAU)
		r->cau.t->running--;
	else
		lp_sw_req_fini(r);
}

/*
 * A blocking call's wait failed for another reason than the request (a
 * kick's error): the request lives on the caller's stack, so nothing may
 * point to it afterwards.  A CAU tree that lost a request half posted no
 * longer counts operations as the other members do: it is unusable.
 */
static void req_abort(struct percs_coll_req *r, int err)
{
	struct percs_cau_tree *t;

	if (r->done)
		return;
	if (r->kind == LP_REQ_CAU) {
		t = r->cau.t;
		if (r->cau.posted < r->cau.nchunks) {
			/* Ends every request on it, this one included. */
			lp_cau_tree_end(t, err);
			return;
		}
		for (unsigned int i = 0; i < PERCS_CAU_MAX_INFLIGHT; i++)
			if (t->slot[i].req == r)
				t->slot[i] = (struct lp_cau_slot){ 0 };
	}
	lp_req_finish(r, err);
}

int lp_coll_progress(struct percs_window *w)
{
	struct lp_coll *c = w->coll;
	struct percs_coll_req *r, *next;
	unsigned int i, seen;
	int ret, err = 0;

	if (!c)
		return 0;
	ret = lp_coll_cq(w, false);
	if (ret)
		err = ret;
	ret = lp_recv_drain(w);
	if (ret < 0 && !err)
		err = ret;
	for (i = 1, seen = 0; i < LP_CAU_TREES && seen < c->nr_trees; i++) {
		if (!c->tree[i])
			continue;
		seen++;
		ret = lp_cau_post(c->tree[i]);
		if (ret && !err)
			err = ret;
	}
	for (r = c->head; r; r = next) {
		next = r->next;
		if (r->done)
			continue;
		if (r->kind == LP_REQ_CAU) {
			lp_cau_check(r);
		} else {
			ret = lp_sw_advance(r);
			if (ret && !err)
				err = ret;
		}
	}
	return err;
}

int percs_coll_progress(struct percs_window *w)
{
	if (!w)
		return -EINVAL;
	return lp_coll_progress(w);
}

/* Something new in the receive FIFO or the CQ? */
static bool coll_ready(struct percs_window *w)
{
	return lp_load_acquire(&w->status->recv_tail) != w->rq.head ||
	       lp_cq_ring_pending(w);
}

/*
 * Does the send FIFO hold descriptors the HFI has not taken?  Only then
 * has a kick-mode wait anything to kick: the kernel runs the CAU's
 * resends and the engine of a descriptor that waited for a tree slot by
 * itself.
 */
static bool coll_send_pending(struct percs_window *w)
{
	return lp_load_acquire(&w->status->send_head) != w->sq.tail;
}

/*
 * Should a waiter of @r spin and yield before it sleeps?  Every member of
 * a tree or group is a process of this machine (the emulated system is
 * one kernel): with more members than online CPUs some must be asleep for
 * the others to run, and a spinning waiter only delays the rank it waits
 * for.  Sleeping at once there made the collectives of 8 and 16 ranks on
 * 2 vCPUs faster, the software ones most (percs-bench coll).
 */
static bool coll_may_spin(const struct percs_coll_req *r)
{
	static long online;	/* sysconf() reads sysfs: once per process */
	uint32_t members = r->kind == LP_REQ_CAU ? r->cau.t->nr : r->sw.g->nr;
	long cpus = __atomic_load_n(&online, __ATOMIC_RELAXED);

	if (!cpus) {
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (cpus < 1)
			cpus = 1;
		__atomic_store_n(&online, cpus, __ATOMIC_RELAXED);
	}
	return members <= (unsigned long)cpus;
}

/*
 * Advance until @r finishes or @timeout_ms pass (-1: no limit).  Return:
 * its status, -EINPROGRESS at the time limit, or the error that stopped
 * the waiting (the request keeps running).
 */
static int coll_wait(struct percs_coll_req *r, int timeout_ms)
{
	struct percs_window *w = r->w;
	unsigned int us = LP_COLL_SLEEP_MIN_US, sleep_us;
	unsigned int spins = coll_may_spin(r) ? LP_COLL_SPINS : 0;
	unsigned int yields = spins ? LP_COLL_YIELDS : 0;
	uint64_t deadline = UINT64_MAX, now;
	int ret;

	if (timeout_ms >= 0)
		deadline = lp_now_ns() + (uint64_t)timeout_ms * 1000000;
	for (;;) {
		ret = lp_coll_progress(w);
		if (ret)
			return ret;
		if (r->done)
			return r->status;
		if (deadline != UINT64_MAX && lp_now_ns() >= deadline)
			return -EINPROGRESS;
		if (w->poll)
			ret = lp_notify(w, PERCS_KICK_F_SEND);
		else if (coll_send_pending(w))
			ret = w->doorbell(w, PERCS_KICK_F_SEND);
		if (ret < 0)
			return ret;
		for (unsigned int n = 0; n < spins && !coll_ready(w); n++)
			lp_cpu_relax();
		for (unsigned int n = 0; n < yields && !coll_ready(w); n++)
			sched_yield();
		if (coll_ready(w)) {
			us = LP_COLL_SLEEP_MIN_US;
			continue;
		}
		/* Nothing came: look for tree ends the CQ did not show. */
		lp_cau_probe(w);
		ret = lp_coll_cq(w, true);
		if (ret)
			return ret;
		if (r->done)
			continue;
		sleep_us = coll_send_pending(w) ? us : LP_COLL_SLEEP_IDLE_US;
		now = lp_now_ns();
		if (deadline != UINT64_MAX) {
			if (now >= deadline)
				return -EINPROGRESS;
			if ((deadline - now) / 1000 < sleep_us)
				sleep_us = (unsigned int)((deadline - now) / 1000) + 1;
		}
		ret = lp_sleep_us(w, sleep_us);
		if (ret)
			return ret;
		if (us < LP_COLL_SLEEP_MAX_US)
			us *= 2;
	}
}

int lp_req_run(struct percs_coll_req *r, struct percs_coll_req **out)
{
	int ret;

	if (out) {
		r->heap = true;
		*out = r;
		return 0;
	}
	ret = coll_wait(r, -1);
	if (!r->done)
		req_abort(r, ret);
	req_unlink(r);
	return ret;
}

int percs_coll_test(struct percs_coll_req *req)
{
	int ret;

	if (!req)
		return -EINVAL;
	if (req->done)
		return req->status;
	ret = lp_coll_progress(req->w);
	if (req->done)
		return req->status;
	return ret ? ret : -EINPROGRESS;
}

int percs_coll_wait(struct percs_coll_req *req, int timeout_ms)
{
	if (!req)
		return -EINVAL;
	if (req->done)
		return req->status;
	return coll_wait(req, timeout_ms < 0 ? -1 : timeout_ms);
}

int percs_coll_req_free(struct percs_coll_req *req)
{
	if (!req)
		return 0;
	if (!req->done)
		return -EBUSY;
	req_unlink(req);
	free(req);
	return 0;
}

/* ---- the window's release -------------------------------------------------- */

void lp_coll_release(struct percs_window *w)
{
	struct lp_coll *c = w->coll;
	struct percs_coll_req *r, *next;
	struct percs_sw_group *g, *gn;

	if (!c)
		return;
	for (r = c->head; r; r = next) {
		next = r->next;
		if (!r->done && r->kind == LP_REQ_SW)
			lp_sw_req_fini(r);
		free(r);	/* only heap requests outlive their call */
	}
	for (unsigned int i = 1; i < LP_CAU_TREES; i++) {
		if (c->tree[i])
			lp_cau_mc_free(c->tree[i]);
		free(c->tree[i]);
	}
	for (g = c->groups; g; g = gn) {
		gn = g->next;
		g->running = 0;
		lp_sw_group_free(g);
	}
	free(c);
	w->coll = NULL;
}
