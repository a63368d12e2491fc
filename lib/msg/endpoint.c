// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-msg: the endpoint, its per-peer state and the progress engine.
 *
 * Memory per endpoint: the address table (8 bytes x N), a pointer per peer
 * (8 x N) and a struct pm_peer (40 bytes) per peer actually talked to,
 * plus at most unexpected_max bytes of buffered eager messages, whatever
 * N is.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msg_internal.h"

uint64_t pm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

_Static_assert(PERCS_MSG_DEF_EAGER == PM_FIFO_DATA,
	       "the eager default is one packet's worth");

size_t percs_msg_eager_limit(void)
{
	return PM_FIFO_DATA;
}

int percs_msg_open(struct percs_window *w, unsigned int rank,
		   unsigned int size, const struct percs_addr *peers,
		   const struct percs_msg_attr *attr, struct percs_msg **out)
{
	struct percs_addr me;
	struct percs_msg *m;
	int ret;

	if (!w || !peers || !out || rank >= size)
		return -EINVAL;
	me = percs_window_addr(w);
	if (memcmp(&me, &peers[rank], sizeof(me)))
		return -EINVAL;
	if (attr && attr->eager_max > PM_FIFO_DATA)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->addrs = malloc(sizeof(*peers) * size);
	m->peers = calloc(size, sizeof(*m->peers));
	if (!m->addrs || !m->peers) {
		free(m->addrs);
		free(m->peers);
		free(m);
		return -ENOMEM;
	}
	memcpy(m->addrs, peers, sizeof(*peers) * size);
	m->w = w;
	ret = pm_rcache_open(m);
	if (ret) {
		free(m->addrs);
		free(m->peers);
		free(m);
		return ret;
	}
	m->rank = rank;
	m->size = size;
	m->eager_max = attr && attr->eager_max ? attr->eager_max :
		       PERCS_MSG_DEF_EAGER;
	m->unexpected_max = attr && attr->unexpected_max ?
			    attr->unexpected_max : PERCS_MSG_DEF_UNEXPECTED;
	m->credit_init = size > 1 ? m->unexpected_max / (size - 1) : 0;
	m->next_id = 1;
	pm_list_init(&m->posted);
	pm_list_init(&m->unexpected);
	pm_list_init(&m->rndv_sends);
	pm_list_init(&m->queued_reads);
	pm_list_init(&m->reading);
	pm_list_init(&m->backlog);
	*out = m;
	return 0;
}

static void inmsg_list_free(struct pm_link *h)
{
	while (!pm_list_empty(h)) {
		struct pm_link *l = h->next;

		pm_list_del(l);
		free(pm_container(l, struct pm_inmsg, link));
	}
}

/* Requests the owner freed still running, packets still queued. */
static bool close_waits(const struct percs_msg *m)
{
	return m->orphans || !pm_list_empty(&m->backlog);
}

/* Requests their owner freed that never finished (a peer stopped). */
static void orphans_free(struct percs_msg *m, struct pm_link *h)
{
	struct pm_link *l = h->next;

	while (l != h) {
		struct percs_msg_req *r = pm_container(l, struct percs_msg_req,
						       link);

		l = l->next;
		if (!r->freed)
			continue;
		pm_list_del(&r->link);
		if (r->mr)
			pm_mr_put(m, r->mr);
		free(r);
	}
}

int percs_msg_close(struct percs_msg *m)
{
	uint64_t deadline;
	unsigned int i;
	int ret = 0;

	if (!m)
		return 0;
	if (m->pending > m->orphans)
		return -EBUSY;
	/*
	 * Finish what the owner let go of (sends it freed, FINs and
	 * credits the peers wait for): the peers make progress, so this
	 * ends; the deadline only guards against a peer that stopped.
	 */
	deadline = pm_now_ns() + PM_CLOSE_NS;
	/* A peer died: the job is ending, what others wait for is moot. */
	if (m->nr_failed)
		deadline = 0;
	m->idle_rounds = 0;
	ret = pm_trigger(m);
	while (!ret && close_waits(m) && !m->error && pm_now_ns() < deadline) {
		percs_msg_progress(m);
		if (close_waits(m))
			percs_msg_idle(m);
	}
	if (!ret && m->error)
		ret = m->error;
	else if (!ret && close_waits(m) && !m->nr_failed)
		ret = -ETIMEDOUT;
	while (!pm_list_empty(&m->backlog)) {
		struct pm_link *l = m->backlog.next;

		pm_list_del(l);
		free(pm_container(l, struct pm_backlog, link));
	}
	orphans_free(m, &m->posted);
	orphans_free(m, &m->rndv_sends);
	orphans_free(m, &m->queued_reads);
	orphans_free(m, &m->reading);
	inmsg_list_free(&m->unexpected);
	for (i = 0; i < m->size; i++) {
		if (m->peers[i]) {
			inmsg_list_free(&m->peers[i]->ooo);
			free(m->peers[i]);
		}
	}
	while (m->free_reqs) {
		struct percs_msg_req *r = m->free_reqs;

		m->free_reqs = (struct percs_msg_req *)r->link.next;
		free(r);
	}
	percs_mr_cache_free(m->rcache);
	free(m->peers);
	free(m->failed);
	free(m->addrs);
	free(m);
	return ret;
}

unsigned int percs_msg_rank(const struct percs_msg *m)
{
	return m->rank;
}

unsigned int percs_msg_size(const struct percs_msg *m)
{
	return m->size;
}

struct percs_window *percs_msg_window(const struct percs_msg *m)
{
	return m->w;
}

int percs_msg_peer_addr(const struct percs_msg *m, unsigned int rank,
			struct percs_addr *out)
{
	if (!m || !out || rank >= m->size)
		return -EINVAL;
	*out = m->addrs[rank];
	return 0;
}

void percs_msg_counters(const struct percs_msg *m,
			struct percs_msg_counters *c)
{
	*c = m->cnt;
}

struct pm_peer *pm_peer(struct percs_msg *m, unsigned int rank)
{
	struct pm_peer *p = m->peers[rank];

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->credit = m->credit_init;
	pm_list_init(&p->ooo);
	m->peers[rank] = p;
	return p;
}

struct percs_msg_req *pm_req_get(struct percs_msg *m)
{
	struct percs_msg_req *r = m->free_reqs;

	if (!r)
		return calloc(1, sizeof(*r));
	m->free_reqs = (struct percs_msg_req *)r->link.next;
	m->nr_free_reqs--;
	memset(r, 0, sizeof(*r));
	return r;
}

void pm_req_put(struct percs_msg *m, struct percs_msg_req *r)
{
	if (m->nr_free_reqs >= PM_REQ_CACHE) {
		free(r);
		return;
	}
	r->link.next = (struct pm_link *)m->free_reqs;
	m->free_reqs = r;
	m->nr_free_reqs++;
}

void pm_req_done(struct percs_msg_req *r)
{
	r->state = PM_ST_DONE;
	r->m->pending--;
	if (r->freed) {
		r->m->orphans--;
		pm_req_put(r->m, r);
	}
}

int percs_msg_progress(struct percs_msg *m)
{
	int ret;

	if (m->error)
		return m->error;
	ret = pm_watch_progress(m);
	if (!ret)
		ret = pm_trigger(m);
	if (!ret)
		ret = pm_backlog_flush(m);
	if (!ret)
		ret = pm_drain(m);
	if (!ret)
		ret = pm_cq_drain(m);
	if (!ret)
		ret = pm_reads_start(m);
	/*
	 * Kick mode: a read moves 128 packets (250 KiB) per engine pass, and
	 * passes run in kicks: keep them coming while reads are in flight.
	 */
	if (!ret && m->reads) {
		ret = percs_kick(m->w, PERCS_KICK_F_SEND);
		if (ret > 0)
			ret = 0;	/* packets moved */
	}
	if (ret && ret != -EAGAIN && !m->error)
		m->error = ret;
	return m->error;
}

void percs_msg_idle(struct percs_msg *m)
{
	uint64_t waited;

	/*
	 * Spin first (the answer is usually microseconds away), then give
	 * the CPU to other ranks while kicking the engine, then sleep in
	 * poll(2): the machines this runs on may have fewer CPUs than
	 * ranks.  The phases restart whenever something arrives
	 * (idle_rounds goes back to 0).
	 */
	if (m->idle_rounds++ == 0)
		m->idle_since = pm_now_ns();
	if (m->idle_rounds & 15)
		return;
	waited = pm_now_ns() - m->idle_since;
	if (waited < PM_SPIN_NS)
		return;
	/* Kick mode: RDMA and blocked packets move in kicks. */
	percs_kick(m->w, PERCS_KICK_F_ALL);
	/* Waiting this long: is it for a peer that died? */
	pm_watch(m, PM_WATCH_IDLE);
	if (waited < PM_YIELD_NS) {
		sched_yield();
		return;
	}
	percs_wait(m->w, 1);
}

int percs_msg_test(struct percs_msg_req *r, struct percs_msg_status *st)
{
	int ret;

	if (!r)
		return -EINVAL;
	if (r->state != PM_ST_DONE) {
		ret = percs_msg_progress(r->m);
		if (ret)
			return ret;
	} else if (r->m->untriggered) {
		/* A done eager send may still wait for its trigger. */
		ret = pm_trigger(r->m);
		if (ret)
			return ret;
	}
	if (r->state != PM_ST_DONE)
		return 0;
	if (st)
		*st = r->status;
	return 1;
}

int percs_msg_wait(struct percs_msg_req *r, struct percs_msg_status *st)
{
	int ret;

	if (!r)
		return -EINVAL;
	r->m->idle_rounds = 0;
	while ((ret = percs_msg_test(r, st)) == 0)
		percs_msg_idle(r->m);
	return ret < 0 ? ret : 0;
}

void percs_msg_req_free(struct percs_msg_req *r)
{
	if (!r)
		return;
	if (r->state == PM_ST_DONE) {
		pm_req_put(r->m, r);
	} else if (!r->freed) {
		r->freed = true;
		r->m->orphans++;
	}
}
