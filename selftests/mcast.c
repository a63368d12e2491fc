// SPDX-License-Identifier: GPL-2.0
/*
 * mcast: CAU multicast (PERCS_COLL_MCAST descriptors) against the real module,
 * composed and read raw as coll.c does (the shared code is collkit/).
 *
 * Multicast: from every member of 16-member trees (binary, chain, star)
 * to every other exactly once, never to itself, with the origin's src,
 * tag, seq and data, counts 0 to the most (its malformed fields are
 * coll.c's); each origin's order at every member with several origins at once; 10,000
 * under drop/duplicate/delay; every member of a chain and of a star
 * multicasting into slowly read 4 KiB FIFOs (the nodes' buffers full,
 * crossing both ways on every edge) with no deadlock; multicasts and
 * allreduces interleaved on one tree; a tree destroyed or a member's
 * window closed with multicasts in flight.  libpercs's percs_cau_bcast()
 * from every root of 8 processes, 0 to 65536 bytes.
 *
 * mcast.modparams runs this on topology=4x4 (16 hubs); tests skip on fewer.
 * Afterwards the live counters (cau_trees included) drain to zero.
 */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"
#include "collkit/collkit.h"

/* ------------------------------------------------------------------ */
/* The fixture. */

FIXTURE(mcast) {
	struct collkit_saved saved;
};

FIXTURE_SETUP(mcast)
{
	const char *why;

	PT_REQUIRE_DEVICE();
	why = collkit_setup(&self->saved);
	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(mcast)
{
	struct pt_live l;

	if (_metadata->skip)
		return;
	/* Not an ASSERT: a failed one here would run the teardown again. */
	EXPECT_EQ(0, collkit_teardown(&self->saved, &l));
}

/*
 * Every member of a 16-member tree multicasts (every type, counts 0 to
 * the most): every other member gets each exactly once, with the origin's
 * window as src, its tag, its n-th as seq and its data; the origin never
 * gets its own.  Binary, chain rooted in the middle, star rooted at a
 * leaf's index; then a single-member tree, where a multicast reaches
 * nobody.  percs/cau counts them.
 */
TEST_F_TIMEOUT(mcast, mcast_every_member_to_every_other, 120)
{
	const unsigned int K = 3;
	struct pool p;
	struct tree trees[] = {
		{ .name = "binary16", .n = 16,
		  .parent = { ROOT, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
			      6, 7 } },
		{ .name = "chain16-root-7", .n = 16,
		  .parent = { 1, 2, 3, 4, 5, 6, 7, ROOT, 7, 8, 9, 10, 11, 12,
			      13, 14 } },
		{ .name = "star16-root-5", .n = 16,
		  .parent = { 5, 5, 5, 5, 5, ROOT, 5, 5, 5, 5, 5, 5, 5, 5,
			      5, 5 } },
	};
	struct percs_addr a[MAXM];
	struct mc_stats s;
	struct percs_cqe c;
	struct res r;
	char why[256];

	SKIPPED();
	ASSERT_EQ(0, pool_open(&p, 16, PERCS_FIFO_DEF_SIZE));
	for (unsigned int ti = 0; ti < ARRAY_SIZE(trees); ti++) {
		struct tree *t = &trees[ti];
		uint64_t next[MAXM][MAXM];
		unsigned int got = 0, bad = 0;

		for (unsigned int i = 0; i < t->n; i++) {
			t->m[i] = &p.m[i];
			a[i] = p.m[i].a;
			for (unsigned int o = 0; o < t->n; o++)
				next[i][o] = 1;
		}
		t->key = p.key;
		ASSERT_EQ(0, tree_setup(t));
		for (uint64_t k = 1; k <= K; k++)
			for (unsigned int i = 0; i < t->n; i++)
				ASSERT_EQ(0, mc_post(t->m[i]->w, t->id, i, k));
		for (unsigned int i = 0; i < t->n; i++) {
			for (unsigned int j = 0; j < (t->n - 1) * K; j++) {
				ASSERT_EQ(0, res_recv(t->m[i]->w, &r, WAIT_MS)) {
					TH_LOG("%s: member %u: %u of %u multicasts",
					       t->name, i, j, (t->n - 1) * K);
				}
				if (mc_check(&r, t->id, t->key, a, t->n, i,
					     next[i], why, sizeof(why)) < 0) {
					if (!bad++)
						TH_LOG("%s: member %u: %s",
						       t->name, i, why);
				} else {
					got++;
				}
			}
		}
		EXPECT_EQ(0, bad);
		EXPECT_EQ(t->n * (t->n - 1) * K, got);
		for (unsigned int i = 0; i < t->n; i++) {
			EXPECT_TRUE(res_none(t->m[i]->w, QUIET_MS)) {
				TH_LOG("%s: member %u: a packet more", t->name, i);
			}
			EXPECT_EQ(0, percs_cq_poll(t->m[i]->w, &c, 1));
		}
		ASSERT_EQ(0, mc_stats(t->id, &s));
		EXPECT_EQ(t->n * K, s.posted);
		EXPECT_EQ(t->n * (t->n - 1) * K, s.delivered);
		TH_LOG("%s: %u multicasts, %llu deliveries, %llu resent, %llu refused",
		       t->name, t->n * K, s.delivered, s.resent, s.refused);
		EXPECT_EQ(0, tree_end_check(t));
	}
	/* A lone member: accepted (NOTIFY: res 0), delivered to nobody. */
	{
		struct tree t1 = { .name = "single", .n = 1,
				   .parent = { ROOT } };
		struct desc d;

		t1.m[0] = &p.m[3];
		t1.key = p.key;
		ASSERT_EQ(0, tree_setup(&t1));
		for (uint64_t k = 1; k <= 2 * INFL; k++) {
			mc_desc(&d, t1.id, 0, k, true);
			ASSERT_EQ(0, desc_post(p.m[3].w, &d));
			ASSERT_EQ(1, cqe_wait(p.m[3].w, &c, WAIT_MS));
			EXPECT_EQ(0, c.res);
			EXPECT_EQ(mc_tag(0, k), c.user_data);
		}
		EXPECT_TRUE(res_none(p.m[3].w, QUIET_MS));
		ASSERT_EQ(0, mc_stats(t1.id, &s));
		EXPECT_EQ(2 * INFL, s.posted);
		EXPECT_EQ(0, s.delivered);
		EXPECT_EQ(0, cau_tree_op(p.m[3].fd, PERCS_IOC_CAU_DESTROY,
					 t1.id));
	}
	pool_close(&p);
}

/*
 * A multicast job: members of @origins send @per multicasts each while
 * every member reads what comes, checking each (mc_check(): exactly once,
 * in its origin's order, right data), until it has all the others';
 * then nothing more may come.  @slow_us: a reader pauses up to this long
 * after each packet; @hold_ms: nobody reads at first, so the FIFOs and
 * then the nodes' buffers fill.  Sends never wait for the send FIFO (a
 * member that stopped reading while its sends wait could stall the tree).
 */
struct mc_arg {
	uint32_t origins;	/* a bit per member */
	uint32_t poll;		/* a bit per member: poll-mode window */
	unsigned int per;	/* multicasts of each origin */
	unsigned int slow_us;
	unsigned int hold_ms;	/* nobody reads for this long at first */
	long got[MAXM];
	long ms[MAXM];
	struct mc_stats st;	/* the tree's counters at the end */
	int st_err;
};

static int mc_body(struct job *j, unsigned int idx, struct mem *m)
{
	struct mc_arg *a = j->arg;
	uint64_t next[MAXM], sent = 0, t0 = pt_now_ms();
	uint64_t deadline = t0 + 4 * FAULT_MS;
	unsigned int seed = (unsigned int)mix(getpid(), idx, t0);
	bool origin = a->origins & (1U << idx);
	long want = 0, got = 0;
	struct res r;
	char why[256];
	int ret = 0;

	for (unsigned int o = 0; o < j->n; o++) {
		next[o] = 1;
		if (o != idx && (a->origins & (1U << o)))
			want += a->per;
	}
	while (!ret && (got < want || (origin && sent < a->per))) {
		if (origin && sent < a->per) {
			ret = mc_try(m->w, j->tree, idx, sent + 1);
			if (!ret)
				sent++;
			else if (ret == -EAGAIN)
				ret = percs_kick(m->w, PERCS_KICK_F_SEND) < 0 ?
				      -EIO : 0;
			if (ret)
				break;
		}
		while (!ret && pt_now_ms() - t0 >= a->hold_ms &&
		       !res_recv(m->w, &r, 0)) {
			if (mc_check(&r, j->tree, j->key, j->addr, j->n, idx,
				     next, why, sizeof(why)) < 0) {
				fprintf(stderr, "# member %u: %s\n", idx, why);
				ret = -EPROTO;
			}
			got++;
			if (a->slow_us)
				usleep(rand_r(&seed) % a->slow_us);
		}
		if (job_failed(j))
			ret = -ECANCELED;
		if (!ret && pt_now_ms() > deadline) {
			fprintf(stderr, "# member %u: sent %llu of %u, received %ld of %ld\n",
				idx, (unsigned long long)sent, a->per, got,
				want);
			ret = -ETIMEDOUT;
		}
		if (!ret && (!origin || sent == a->per) && got < want &&
		    !percs_recv_peek(m->w))
			usleep(100);
	}
	a->got[idx] = got;
	a->ms[idx] = pt_now_ms() - t0;
	if (!ret)
		ret = job_barrier(j, 4);
	if (!ret && idx == 0)
		a->st_err = mc_stats(j->tree, &a->st);
	if (!ret && !res_none(m->w, 100)) {
		res_recv(m->w, &r, 1);
		fprintf(stderr, "# member %u: a packet more (coll %u seq %llu)\n",
			idx, r.e.coll, (unsigned long long)r.e.seq);
		ret = -EPROTO;
	}
	return ret;
}

/*
 * Run a multicast job of @n processes on a tree of @parent over @hub;
 * with @faults, 2% of the CAU's transfers dropped, duplicated and
 * delayed.  The tree's percs/cau counters in *@s (read by the last
 * member before the tree ends: a job's tree ends with its processes).
 */
static void mc_job(struct __test_metadata *_metadata, const char *name,
		   unsigned int n, const uint32_t *parent,
		   const unsigned int *hub, uint32_t rx, struct mc_arg *a,
		   bool faults)
{
	struct pt_atomic_stats s0, s1;
	long got = 0, want = 0, ms = 0;
	struct job *j;
	uint64_t t0;

	j = job_new(n, 0, parent, hub, mc_body, a);
	ASSERT_NE(NULL, j);
	j->rx = rx;
	j->poll = a->poll;
	ASSERT_EQ(0, pt_read_atomic_stats(&s0));
	if (faults)
		ASSERT_EQ(0, pt_faults_set(20000));
	t0 = pt_now_ms();
	EXPECT_EQ(0, pt_fork_n(n, job_child, j, 400000));
	pt_faults_set(0);
	ASSERT_EQ(0, pt_read_atomic_stats(&s1));
	for (unsigned int i = 0; i < n; i++) {
		unsigned int others = __builtin_popcount(a->origins &
							 ~(1U << i));

		got += a->got[i];
		want += (long)others * a->per;
		ms = a->ms[i] > ms ? a->ms[i] : ms;
	}
	TH_LOG("%s: %u origins x %u multicasts, %u members: %ld of %ld deliveries in %llu ms (slowest member %ld ms)%s",
	       name, __builtin_popcount(a->origins), a->per, n, got, want,
	       (unsigned long long)(pt_now_ms() - t0), ms,
	       faults ? "; 2% drop+dup+reorder" : "");
	EXPECT_EQ(want, got);
	ASSERT_EQ(0, a->st_err);
	TH_LOG("percs/cau: posted %llu delivered %llu resent %llu refused %llu",
	       a->st.posted, a->st.delivered, a->st.resent, a->st.refused);
	EXPECT_EQ(__builtin_popcount(a->origins) * a->per, a->st.posted);
	EXPECT_EQ(want, a->st.delivered);
	if (faults) {
		TH_LOG("dropped %lld duplicated %lld delayed %lld",
		       (long long)(s1.dropped - s0.dropped),
		       (long long)(s1.duplicated - s0.duplicated),
		       (long long)(s1.delayed - s0.delayed));
		EXPECT_LT(0, s1.dropped - s0.dropped);
		EXPECT_LT(0, s1.duplicated - s0.duplicated);
		EXPECT_LT(0, s1.delayed - s0.delayed);
	}
	munmap(j, sizeof(*j));
}

/*
 * Four origins of 16 members multicast at once: every member gets each
 * origin's multicasts in that origin's order (no order between origins
 * is promised, none is checked).  Two origins and two other members have
 * poll-mode windows (the HFI's thread posts, and is woken for a buffer).
 */
TEST_F_TIMEOUT(mcast, mcast_per_origin_order_several_origins, 180)
{
	static const uint32_t parent[MAXM] = {
		ROOT, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7,
	};
	struct mc_arg *a = pt_shared_alloc(sizeof(*a));
	unsigned int hub[MAXM];

	SKIPPED();
	ASSERT_NE(NULL, a);
	for (unsigned int i = 0; i < MAXM; i++)
		hub[i] = (i * 7) % NEED_HUBS;
	a->origins = 1U << 0 | 1U << 5 | 1U << 10 | 1U << 15;
	a->poll = 1U << 5 | 1U << 15 | 1U << 3 | 1U << 8;
	a->per = pt_scale(300);
	mc_job(_metadata, "binary16", MAXM, parent, hub, PERCS_FIFO_DEF_SIZE,
	       a, false);
	munmap(a, sizeof(*a));
}

/*
 * 10,000 multicasts (1,250 from each of 8 members) under 2% drop,
 * duplicate and delay of the CAU's transfers: each delivered exactly once
 * at every other member, in its origin's order; the tree resent.
 */
TEST_F_TIMEOUT(mcast, mcast_under_drop_dup_reorder, 400)
{
	static const uint32_t parent[FLT_N] = { ROOT, 0, 0, 1, 1, 2, 2, 3 };
	static const unsigned int hub[FLT_N] = { 0, 3, 5, 6, 9, 10, 12, 15 };
	struct mc_arg *a = pt_shared_alloc(sizeof(*a));

	SKIPPED();
	ASSERT_NE(NULL, a);
	a->origins = (1U << FLT_N) - 1;
	a->per = pt_scale(10000) / FLT_N + 1;
	mc_job(_metadata, "binary8", FLT_N, parent, hub, PERCS_FIFO_DEF_SIZE,
	       a, true);
	EXPECT_LT(0, a->st.resent);
	munmap(a, sizeof(*a));
}

/*
 * Every member of a 16-chain (rooted in the middle) and of a 16-star
 * multicasts at once into 4 KiB receive FIFOs that nobody reads for the
 * first 200 ms and that are read slowly then: multicasts cross every edge
 * both ways with the nodes' buffers full (percs/cau counts refusals), and
 * still all arrive, in order, without a deadlock.
 */
TEST_F_TIMEOUT(mcast, mcast_crossing_with_full_buffers_no_deadlock, 400)
{
	static const uint32_t chain[MAXM] = {
		1, 2, 3, 4, 5, 6, 7, ROOT, 7, 8, 9, 10, 11, 12, 13, 14,
	};
	static const uint32_t star[MAXM] = {
		ROOT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct mc_arg *a = pt_shared_alloc(sizeof(*a));
	unsigned int hub[MAXM];

	SKIPPED();
	ASSERT_NE(NULL, a);
	for (unsigned int i = 0; i < MAXM; i++)
		hub[i] = (i * 5) % NEED_HUBS;
	a->origins = (1U << MAXM) - 1;
	/* At least 15 x 16 for each 4 KiB FIFO of 31 packets. */
	a->per = pt_scale(150) < 16 ? 16 : pt_scale(150);
	a->slow_us = 400;
	a->hold_ms = 200;
	mc_job(_metadata, "chain16", MAXM, chain, hub, PERCS_FIFO_MIN_SIZE, a,
	       false);
	EXPECT_LT(0, a->st.refused);
	memset(a->got, 0, sizeof(a->got));
	mc_job(_metadata, "star16", MAXM, star, hub, PERCS_FIFO_MIN_SIZE, a,
	       false);
	EXPECT_LT(0, a->st.refused);
	munmap(a, sizeof(*a));
}

/*
 * Multicasts and allreduces interleaved on one tree of 8 (every member
 * posts an allreduce, then a multicast, each round), without and then
 * with drop/dup/reorder: the allreduces are numbered among themselves
 * (seq = round) and right, the multicasts among each origin's, each
 * exactly once and in order.
 */
TEST_F_TIMEOUT(mcast, mcast_and_allreduce_interleaved, 240)
{
	const unsigned int rounds = pt_scale(200) < 10 ? 10 : pt_scale(200);
	struct pool p;
	struct tree t = { .name = "mixed8", .n = 8,
			  .parent = { 2, 2, ROOT, 2, 0, 0, 1, 3 } };
	struct percs_addr a[MAXM];
	uint64_t next[MAXM][MAXM], sum, v;
	struct mc_stats s;
	struct res r;
	char why[256];
	unsigned int bad = 0;

	SKIPPED();
	ASSERT_EQ(0, pool_open(&p, 8, PERCS_FIFO_DEF_SIZE));
	for (unsigned int i = 0; i < t.n; i++) {
		t.m[i] = &p.m[i];
		a[i] = p.m[i].a;
		for (unsigned int o = 0; o < t.n; o++)
			next[i][o] = 1;
	}
	t.key = p.key;
	ASSERT_EQ(0, tree_setup(&t));
	for (uint64_t k = 1; k <= rounds; k++) {
		if (k == rounds / 2 + 1)
			ASSERT_EQ(0, pt_faults_set(20000));
		sum = 0;
		for (unsigned int i = 0; i < t.n; i++) {
			v = mix(k, i, 3);
			sum += v;
			ASSERT_EQ(0, post(t.m[i]->w, t.id, PERCS_COLL_ALLREDUCE,
					  PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1,
					  &v, (uint32_t)k));
			ASSERT_EQ(0, mc_post(t.m[i]->w, t.id, i, k));
		}
		for (unsigned int i = 0; i < t.n; i++) {
			bool reduced = false;

			for (unsigned int j = 0; j < t.n; j++) {
				ASSERT_EQ(0, res_recv(t.m[i]->w, &r, FAULT_MS)) {
					TH_LOG("round %llu member %u: %u of %u packets",
					       (unsigned long long)k, i, j, t.n);
				}
				if (r.e.coll == PERCS_COLL_MCAST) {
					if (mc_check(&r, t.id, t.key, a, t.n, i,
						     next[i], why,
						     sizeof(why)) < 0 && !bad++)
						TH_LOG("round %llu member %u: %s",
						       (unsigned long long)k, i,
						       why);
					continue;
				}
				memcpy(&v, r.data, 8);
				if (reduced || r.e.coll != PERCS_COLL_ALLREDUCE ||
				    r.e.seq != k || r.h.tag != k || v != sum ||
				    r.e.status) {
					if (!bad++)
						TH_LOG("round %llu member %u: coll %u seq %llu tag %u status %d sum %s",
						       (unsigned long long)k, i,
						       r.e.coll,
						       (unsigned long long)r.e.seq,
						       r.h.tag, r.e.status,
						       v == sum ? "right" : "wrong");
				}
				reduced = true;
			}
		}
	}
	pt_faults_set(0);
	EXPECT_EQ(0, bad);
	for (unsigned int i = 0; i < t.n; i++) {
		EXPECT_TRUE(res_none(t.m[i]->w, QUIET_MS));
	}
	ASSERT_EQ(0, mc_stats(t.id, &s));
	EXPECT_EQ(t.n * rounds, s.posted);
	EXPECT_EQ(t.n * (t.n - 1) * rounds, s.delivered);
	TH_LOG("%u rounds x 8 members (the second half under 2%% faults): resent %llu",
	       rounds, s.resent);
	EXPECT_EQ(0, tree_end_check(&t));
	pool_close(&p);
}

/*
 * A tree of five ends while multicasts are in flight (transfers held by
 * delay, drop and duplication; every member has more posted, with NOTIFY,
 * than its node takes at once, so some wait in the send FIFOs): by
 * member 0's DESTROY, or by the release of member 2's window.  Every
 * other member gets exactly one -ECONNRESET entry, and one entry per
 * descriptor (0: taken, or -ENOENT: after the end) without another kick;
 * what it received is in order and never twice; nothing comes after; the
 * tree is gone.
 */
static void mc_end_in_flight(struct __test_metadata *_metadata, bool destroy)
{
	const unsigned int n = 5, per = 24, ender = destroy ? 0 : 2;
	static const uint32_t parent[5] = { ROOT, 0, 0, 1, 2 };
	struct mem m[5];
	struct percs_addr a[5];
	struct pt_live live;
	struct percs_cqe c;
	struct desc d;
	uint32_t key = pt_new_key(), tree;
	uint64_t next[5][5];
	unsigned int i, k, taken = 0, late = 0;
	struct res r;
	char why[256];

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, mem_open(&m[i], (i * 3 + 1) % NEED_HUBS, i & 1, key,
				      PERCS_FIFO_DEF_SIZE));
		a[i] = m[i].a;
		for (k = 0; k < n; k++)
			next[i][k] = 1;
	}
	ASSERT_EQ(0, cau_create(m[0].fd, 0, a, parent, n, &tree));
	for (i = 1; i < n; i++)
		ASSERT_EQ(0, cau_tree_op(m[i].fd, PERCS_IOC_CAU_JOIN, tree));
	ASSERT_EQ(0, pt_isr_set("hold_us", 20000));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 500000));
	ASSERT_EQ(0, pt_isr_set("dup_ppm", 200000));
	ASSERT_EQ(0, pt_isr_set("drop_ppm", 200000));
	for (k = 1; k <= per; k++)
		for (i = 0; i < n; i++) {
			mc_desc(&d, tree, i, k, true);
			ASSERT_EQ(0, desc_post(m[i].w, &d));
		}
	usleep(20000);
	if (destroy) {
		ASSERT_EQ(0, cau_tree_op(m[0].fd, PERCS_IOC_CAU_DESTROY, tree));
	} else {
		mem_close(&m[ender]);
	}
	for (i = 0; i < n; i++) {
		unsigned int ok = 0, gone = 0, resets = 0, other = 0;
		uint64_t deadline = pt_now_ms() + WAIT_MS;

		if (i == ender && !destroy)
			continue;
		while (ok + gone < per || (i != ender && !resets)) {
			if (pt_cq_wait(m[i].w, &c, 50) != 1) {
				if (pt_now_ms() > deadline)
					break;
				continue;
			}
			if (c.res == -ECONNRESET && c.user_data == tree)
				resets++;
			else if (c.res == 0)
				ok++;
			else if (c.res == -ENOENT)
				gone++;
			else
				other++;
		}
		EXPECT_EQ(per, ok + gone) {
			TH_LOG("member %u: %u taken, %u -ENOENT of %u descriptors",
			       i, ok, gone, per);
		}
		EXPECT_EQ(i == ender ? 0 : 1, resets);
		EXPECT_EQ(0, other);
		EXPECT_EQ(0, percs_cq_poll(m[i].w, &c, 1));
		taken += ok;
		late += gone;
		/* What came before the end: in order, once. */
		while (!res_recv(m[i].w, &r, 0)) {
			EXPECT_LE(0, mc_check(&r, tree, key, a, n, i, next[i],
					      why, sizeof(why))) {
				TH_LOG("member %u: %s", i, why);
			}
		}
	}
	pt_faults_set(0);
	TH_LOG("%s: %u descriptors taken before the end, %u completed -ENOENT after it",
	       destroy ? "DESTROY" : "close", taken, late);
	EXPECT_LT(0, late);
	for (i = 0; i < n; i++) {
		if (i == ender && !destroy)
			continue;
		EXPECT_TRUE(res_none(m[i].w, 50));
	}
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(0, live.cau_trees);
	for (i = 0; i < n; i++)
		mem_close(&m[i]);
}

TEST_F_TIMEOUT(mcast, mcast_tree_destroyed_in_flight, 60)
{
	SKIPPED();
	mc_end_in_flight(_metadata, true);
}

TEST_F_TIMEOUT(mcast, mcast_member_closed_in_flight, 60)
{
	SKIPPED();
	mc_end_in_flight(_metadata, false);
}

/* ------------------------------------------------------------------ */
/* libpercs: percs_cau_bcast() on the kernel's multicast. */

#define LB_N	8

static const size_t lb_lens[] = { 0, 1, 63, 64, 65, 4096, 65536 };

static uint64_t lb_seed(unsigned int root, unsigned int li)
{
	return mix(root, li, 0x6c62);
}

/*
 * One member's part: a bcast of every length from every root (blocking),
 * each checked at every member (the bytes beyond untouched); then two
 * non-blocking bcasts of two roots and an allreduce at once.
 */
static int lb_body(struct job *j, unsigned int idx, struct percs_cau_tree *t)
{
	const size_t max = 65536;
	uint8_t *buf = malloc(max + 64), *ref = malloc(max + 64);
	uint8_t *b2 = malloc(1000), *r2 = malloc(1000);
	struct percs_coll_req *req[3];
	uint64_t v = idx + 1, sum = 0;
	int ret = 0;

	if (!buf || !ref || !b2 || !r2) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned int root = 0; !ret && root < j->n; root++) {
		for (unsigned int li = 0; li < ARRAY_SIZE(lb_lens); li++) {
			size_t len = lb_lens[li];

			pt_fill(ref, len, lb_seed(root, li));
			memset(buf, 0x5a, max + 64);
			if (idx == root)
				memcpy(buf, ref, len);
			ret = percs_cau_bcast(t, root, buf, len);
			if (ret) {
				fprintf(stderr, "# member %u: bcast from %u of %zu: %d\n",
					idx, root, len, ret);
				break;
			}
			if (memcmp(buf, ref, len) ||
			    (len < max && buf[len] != 0x5a) ||
			    buf[len + 63] != 0x5a) {
				fprintf(stderr, "# member %u: bcast from %u of %zu: wrong bytes\n",
					idx, root, len);
				ret = -EPROTO;
				break;
			}
		}
	}
	if (ret)
		goto out;
	/* Two roots at once, an allreduce between them. */
	pt_fill(ref, 1000, 11);
	pt_fill(r2, 1000, 12);
	memcpy(buf, ref, 1000);
	memcpy(b2, r2, 1000);
	if (idx != 1)
		memset(buf, 0, 1000);
	if (idx != j->n - 1)
		memset(b2, 0, 1000);
	ret = percs_cau_ibcast(t, 1, buf, 1000, &req[0]);
	if (!ret)
		ret = percs_cau_iallreduce(t, &v, &sum, 1, PERCS_CAU_T_U64,
					   PERCS_CAU_OP_SUM, &req[1]);
	if (!ret)
		ret = percs_cau_ibcast(t, j->n - 1, b2, 1000, &req[2]);
	for (unsigned int i = 0; !ret && i < 3; i++) {
		ret = percs_coll_wait(req[i], 30000);
		percs_coll_req_free(req[i]);
	}
	if (!ret && (memcmp(buf, ref, 1000) || memcmp(b2, r2, 1000) ||
		     sum != j->n * (j->n + 1) / 2)) {
		fprintf(stderr, "# member %u: ibcast/iallreduce: wrong result\n",
			idx);
		ret = -EPROTO;
	}
out:
	free(buf);
	free(ref);
	free(b2);
	free(r2);
	return ret;
}

/* A member's part in a test of libpercs's trees (struct job's arg). */
struct lib_part {
	int (*body)(struct job *j, unsigned int idx, struct percs_cau_tree *t);
};

/*
 * Every member: open its window, make or join a tree of all (fan-out 2),
 * run the lib_part's body, end the tree.
 */
static int lib_child(int idx, void *arg)
{
	struct job *j = arg;
	const struct lib_part *part = j->arg;
	struct percs_cau_member mem[MAXM];
	struct percs_cau_tree *t = NULL;
	const char *what = "open";
	struct mem m;
	int ret;

	ret = mem_open(&m, j->hub[idx], 0, j->key, j->rx);
	if (ret)
		goto fail;
	j->addr[idx] = m.a;
	what = "barrier";
	ret = job_barrier(j, 0);
	if (!ret)
		ret = percs_cau_shape_kary(j->addr, j->n, 0, 2, NULL, mem);
	if (!ret && idx == 0) {
		what = "create";
		ret = percs_cau_tree_create(m.w, mem, j->n, 0, &t);
		if (!ret)
			__atomic_store_n(&j->tree, percs_cau_tree_id(t),
					 __ATOMIC_SEQ_CST);
	}
	if (!ret)
		ret = job_barrier(j, 1);
	if (!ret && idx) {
		what = "join";
		ret = percs_cau_tree_join(m.w, j->tree, mem, j->n, 0, &t);
	}
	if (!ret)
		ret = job_barrier(j, 2);
	if (ret)
		goto fail;
	what = "body";
	ret = part->body(j, idx, t);
	if (ret)
		goto fail;
	what = "final barrier";
	ret = job_barrier(j, 3);
	if (ret)
		goto fail;
	ret = percs_cau_tree_destroy(t);
	mem_close(&m);
	return ret ? 1 : 0;
fail:
	fprintf(stderr, "# member %d (hub %u): %s: %d (%s)\n", idx,
		j->hub[idx], what, ret, percs_strerror(ret));
	__atomic_store_n(&j->fail, 1, __ATOMIC_SEQ_CST);
	if (t)
		percs_cau_tree_destroy(t);
	mem_close(&m);
	return 1;
}

/*
 * libpercs's bcast on the CAU's multicast, 8 processes: from every root,
 * 0, 1, 63, 64, 65, 4096 and 65536 bytes; roots return once posted, so
 * members meet the next bcast's multicasts while still in this one (the
 * library keeps them for the call they belong to).
 */
TEST_F_TIMEOUT(mcast, lib_bcast_every_root_and_length, 300)
{
	static const unsigned int hub[LB_N] = { 0, 3, 5, 6, 9, 10, 12, 15 };
	static const uint32_t unused[LB_N];
	static const struct lib_part part = { .body = lb_body };
	struct job *j = job_new(LB_N, 0, unused, hub, NULL, (void *)&part);
	uint64_t t0 = pt_now_ms();

	SKIPPED();
	ASSERT_NE(NULL, j);
	EXPECT_EQ(0, pt_fork_n(LB_N, lib_child, j, 280000));
	TH_LOG("%u processes: bcasts of %zu lengths from every root: %llu ms",
	       LB_N, ARRAY_SIZE(lb_lens),
	       (unsigned long long)(pt_now_ms() - t0));
	munmap(j, sizeof(*j));
}

/*
 * A member that waits sleeps until its result comes, it does not wake
 * to find nothing: member 1 enters a barrier 300 ms after member 0, and
 * member 0's voluntary context switches meanwhile stay near 300 / 20 (the
 * library's idle timeout) - waking every 50 us to 1 ms, as it once did,
 * made about 300, each a process switch (26 us in the TCG VM).
 */
#define IDLE_WAIT_MS	300
#define IDLE_MAX_SWITCHES	60

static long nvcsw_now(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_nvcsw;
}

static int idle_body(struct job *j, unsigned int idx, struct percs_cau_tree *t)
{
	long before;
	int ret;

	if (idx) {
		usleep(IDLE_WAIT_MS * 1000);
		return percs_cau_barrier(t);
	}
	before = nvcsw_now();
	ret = percs_cau_barrier(t);
	j->stat = nvcsw_now() - before;
	return ret;
}

TEST_F_TIMEOUT(mcast, lib_waiter_sleeps_until_its_result, 60)
{
	static const unsigned int hub[2] = { 0, 9 };
	static const uint32_t unused[2];
	static const struct lib_part part = { .body = idle_body };
	struct job *j = job_new(2, 0, unused, hub, NULL, (void *)&part);

	SKIPPED();
	ASSERT_NE(NULL, j);
	EXPECT_EQ(0, pt_fork_n(2, lib_child, j, 50000));
	TH_LOG("member 0 waited %u ms with %ld voluntary context switches",
	       IDLE_WAIT_MS, j->stat);
	EXPECT_LE(0, j->stat);
	EXPECT_GT(IDLE_MAX_SWITCHES, j->stat);
	munmap(j, sizeof(*j));
}


TEST_HARNESS_MAIN
