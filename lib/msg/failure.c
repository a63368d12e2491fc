// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-msg: peers that failed (died, or exited without finalizing).
 *
 * The endpoint cannot see a peer die: a packet to a released window is
 * refused, but only once something is sent to it, and a rank that only
 * waits for the dead one would wait forever.  Whoever learns of the
 * death - percs-run, over the job's socket (job.c installs the watch) -
 * declares the peer failed, and from then on every transfer with it
 * ends with -ECONNRESET instead of waiting: posted receives from it (and
 * wildcard ones, which it might have been meant to match), reads queued
 * from it, rendezvous sends waiting for its FIN, and every new send to
 * it or receive from it.  Packets still owed to it (FIN, CREDIT,
 * backlog) are dropped.  What the peer sent before it died and was
 * already delivered can still be received.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "msg_internal.h"

/* The watch (a poll(2)) runs at most once a millisecond, unless told. */
#define PM_WATCH_NS	1000000

static void req_fail(struct percs_msg_req *r, int src)
{
	pm_list_del(&r->link);
	if (r->mr)
		pm_mr_put(r->m, r->mr);
	r->mr = 0;
	r->status.source = src;
	r->status.tag = r->tag;
	r->status.len = 0;
	r->status.msg_len = 0;
	r->status.error = -ECONNRESET;
	pm_req_done(r);
}

/* Fail the requests of @h whose peer is @rank (or any source). */
static void list_fail(struct percs_msg *m, struct pm_link *h,
		      unsigned int rank, bool by_rts)
{
	struct pm_link *l = h->next;

	(void)m;
	while (l != h) {
		struct percs_msg_req *r = pm_container(l, struct percs_msg_req,
						       link);
		int peer = by_rts ? (int)r->rts.src : r->peer;

		l = l->next;
		if (peer == (int)rank || peer == PERCS_MSG_ANY_SOURCE)
			req_fail(r, (int)rank);
	}
}

int percs_msg_fail_peer(struct percs_msg *m, unsigned int rank)
{
	struct pm_link *l;

	if (!m || rank >= m->size || rank == m->rank)
		return -EINVAL;
	if (!m->failed) {
		m->failed = calloc(m->size, 1);
		if (!m->failed)
			return -ENOMEM;
	}
	if (m->failed[rank])
		return 0;
	m->failed[rank] = 1;
	if (!m->nr_failed++)
		m->first_failed = rank;
	list_fail(m, &m->posted, rank, false);
	list_fail(m, &m->queued_reads, rank, true);
	list_fail(m, &m->rndv_sends, rank, false);
	/* Reads in flight end by themselves (the engine completes them). */
	for (l = m->backlog.next; l != &m->backlog;) {
		struct pm_backlog *b = pm_container(l, struct pm_backlog, link);

		l = l->next;
		if (b->dst != rank)
			continue;
		pm_list_del(&b->link);
		m->backlog_len--;
		free(b);
	}
	return 0;
}

bool percs_msg_peer_failed(const struct percs_msg *m, unsigned int rank)
{
	return m && rank < m->size && pm_peer_failed(m, (int)rank);
}

unsigned int percs_msg_failures(const struct percs_msg *m, int *first)
{
	if (first)
		*first = m && m->nr_failed ? (int)m->first_failed : -1;
	return m ? m->nr_failed : 0;
}

void pm_watch_set(struct percs_msg *m, int (*watch)(void *arg, int timeout_ms),
		  void *arg)
{
	m->watch = watch;
	m->watch_arg = arg;
}

int pm_watch(struct percs_msg *m, enum pm_watch_when when)
{
	struct timespec ts;
	uint64_t t;

	if (!m->watch)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (when != PM_WATCH_NOW && t - m->watch_last < PM_WATCH_NS)
		return 0;
	m->watch_last = t;
	if (when == PM_WATCH_NOW && !m->nr_failed)
		return m->watch(m->watch_arg, PM_WATCH_WAIT_MS);
	return m->watch(m->watch_arg, 0);
}
