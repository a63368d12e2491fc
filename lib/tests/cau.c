// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: CAU collectives: tree shapes, allreduce, reduce,
 * bcast, errors.
 */
#include "unit.h"

/*
 * The default shape: one root, every other member one parent, fan-out
 * within bounds, supernodes kept together (one crossing edge each), depth
 * of the two heaps, for many sizes, fan-outs, roots and supernode sizes.
 */
static void test_cau_shape_kary(void)
{
	static struct percs_addr a[PERCS_CAU_MAX_MEMBERS];
	static struct percs_cau_member m[PERCS_CAU_MAX_MEMBERS];
	static const unsigned int nrs[] = { 1, 2, 3, 5, 8, 9, 17, 64, 65, 100,
					    513, 1024 };
	static const unsigned int fans[] = { 0, 1, 2, 3, 4, 8, 32 };
	static const unsigned int hpss[] = { 0, 1, 4, 32 };
	unsigned int kids[PERCS_CAU_MAX_MEMBERS];

	for (unsigned int i = 0; i < PERCS_CAU_MAX_MEMBERS; i++)
		a[i] = (struct percs_addr){ .hub = (i * 7919) % 2048,
					    .hfi = i & 1, .window = i % 5 };
	for (unsigned int hi = 0; hi < 4; hi++)
	for (unsigned int ni = 0; ni < sizeof(nrs) / sizeof(nrs[0]); ni++)
	for (unsigned int fi = 0; fi < sizeof(fans) / sizeof(fans[0]); fi++) {
		struct percs_hfi_info topo = { .hubs_per_supernode = hpss[hi] };
		unsigned int nr = nrs[ni], hps = hpss[hi];
		unsigned int k = fans[fi] ? fans[fi] : PERCS_CAU_DEF_FANOUT;
		unsigned int roots[3] = { 0, nr / 2, nr - 1 };

		if (k == 1 && nr > 100)
			continue;	/* a chain: fine, but slow to check */
		for (unsigned int ri = 0; ri < 3; ri++) {
			unsigned int root = roots[ri], nroot = 0, cross = 0;
			unsigned int nsn = 0, biggest = 0;
			static unsigned int sncount[2048];
			int depth;

			REQUIRE(percs_cau_shape_kary(a, nr, root, fans[fi],
						     hps ? &topo : NULL, m) == 0);
			depth = percs_cau_shape_check(m, nr);
			CHECK(depth >= 0);
			memset(kids, 0, sizeof(kids));
			memset(sncount, 0, sizeof(sncount));
			for (unsigned int i = 0; i < nr; i++) {
				unsigned int sn = hps ? a[i].hub / hps : 0;

				CHECK(!memcmp(&m[i].win, &a[i], sizeof(a[i])));
				CHECK_EQ(m[i].reserved, 0);
				if (!sncount[sn]++)
					nsn++;
				if (sncount[sn] > biggest)
					biggest = sncount[sn];
				if (m[i].parent == PERCS_CAU_ROOT) {
					nroot++;
					CHECK_EQ(i, root);
					continue;
				}
				REQUIRE(m[i].parent < nr);
				kids[m[i].parent]++;
				if (hps && a[m[i].parent].hub / hps !=
				    a[i].hub / hps)
					cross++;
			}
			CHECK_EQ(nroot, 1);
			for (unsigned int i = 0; i < nr; i++)
				CHECK(kids[i] <= 2 * k &&
				      kids[i] <= PERCS_CAU_MAX_CHILDREN);
			/* A subtree leaves its supernode once: at its head. */
			if (hps)
				CHECK_EQ(cross, nsn - 1);
			CHECK(depth <= (int)(heap_height(biggest, k) +
					     heap_height(nsn, k)));
		}
	}
	/* The same arguments, the same shape (every member builds it). */
	{
		static struct percs_cau_member m2[PERCS_CAU_MAX_MEMBERS];
		struct percs_hfi_info topo = { .hubs_per_supernode = 32 };

		CHECK_EQ(percs_cau_shape_kary(a, 700, 5, 6, &topo, m), 0);
		CHECK_EQ(percs_cau_shape_kary(a, 700, 5, 6, &topo, m2), 0);
		CHECK(!memcmp(m, m2, 700 * sizeof(m[0])));
	}
	/* Errors. */
	CHECK_EQ(percs_cau_shape_kary(NULL, 4, 0, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 0, 0, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 1025, 0, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 4, 4, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 4, 0, PERCS_CAU_MAX_FANOUT + 1, NULL,
				      m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 4, 0, PERCS_CAU_MAX_FANOUT, NULL, m),
		 0);
	a[3].hub = a[1].hub;
	CHECK_EQ(percs_cau_shape_kary(a, 4, 0, 0, NULL, m), -EEXIST);
}

/* Explicit shapes and the checks, in the kernel's order. */
static void test_cau_shape_explicit(void)
{
	struct percs_addr a[80];
	struct percs_cau_member m[80];
	uint32_t p[80];

	for (unsigned int i = 0; i < 80; i++)
		a[i] = (struct percs_addr){ .hub = i, .window = 3 };
	/* A chain 0 <- 1 <- 2 <- 3 <- 4 rooted at 0: depth 4. */
	p[0] = PERCS_CAU_ROOT;
	for (unsigned int i = 1; i < 5; i++)
		p[i] = i - 1;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), 0);
	CHECK_EQ(percs_cau_shape_check(m, 5), 4);
	CHECK_EQ(m[3].parent, 2);
	CHECK_EQ(m[0].parent, PERCS_CAU_ROOT);
	/* Root at the end, a star: depth 1. */
	for (unsigned int i = 0; i < 5; i++)
		p[i] = 4;
	p[4] = PERCS_CAU_ROOT;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), 0);
	CHECK_EQ(percs_cau_shape_check(m, 5), 1);
	CHECK_EQ(percs_cau_shape_check(m, 1), -EINVAL);	/* no root */
	p[0] = PERCS_CAU_ROOT;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), -EINVAL);	/* two */
	p[0] = 5;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), -EINVAL);	/* range */
	p[0] = 1;
	p[1] = 2;
	p[2] = 0;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), -ELOOP);
	p[0] = p[1] = p[2] = 4;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), 0);
	m[2].reserved = 1;
	CHECK_EQ(percs_cau_shape_check(m, 5), -EINVAL);
	m[2].reserved = 0;
	m[2].win.reserved = 1;
	CHECK_EQ(percs_cau_shape_check(m, 5), -EINVAL);
	/* 65 children: -EMLINK; 64: fine. */
	for (unsigned int i = 0; i < 80; i++)
		p[i] = 0;
	p[0] = PERCS_CAU_ROOT;
	CHECK_EQ(percs_cau_shape_parents(a, p, 66, m), -EMLINK);
	CHECK_EQ(percs_cau_shape_parents(a, p, 65, m), 0);
	/* Two members on one hub, found after the shape. */
	a[7].hub = 2;
	CHECK_EQ(percs_cau_shape_parents(a, p, 10, m), -EEXIST);
	CHECK_EQ(percs_cau_shape_check(m, 0), -EINVAL);
	CHECK_EQ(percs_cau_shape_check(NULL, 3), -EINVAL);
	CHECK_EQ(percs_cau_shape_parents(NULL, p, 3, m), -EINVAL);
}

/* ---- tests: CAU collectives ------------------------------------------------- */

/*
 * Allreduce of every op x type and many lengths on 5 members: results as
 * the CAU computes (the fake combines in member order: exact for floats
 * too), chunks of 64 bytes, at most 16 in flight, the 16 reached.
 */
static void test_cau_allreduce(void)
{
	static const size_t counts[] = { 0, 1, 7, 8, 16, 17, 100, 1000 };
	const unsigned int n = 5;
	unsigned int op = 0, type = 0;
	uint8_t *in[NWIN], *out[NWIN], *ref;
	struct percs_coll_req *req[NWIN];
	uint64_t seed = 1, ops = 0;
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, PERCS_CAU_F_ORDERED, 2, 0) == 0);
	CHECK_EQ(FC.t[0].flags, PERCS_CAU_F_ORDERED);
	ref = malloc(8001);
	for (unsigned int i = 0; i < n; i++) {
		in[i] = malloc(8001);
		out[i] = malloc(8001);
	}
	do {
		for (unsigned int c = 0; c < sizeof(counts) / sizeof(counts[0]);
		     c++, seed++) {
			size_t cnt = counts[c], esz = percs_coll_type_size(type);

			if (cnt == 1000 && !(op == PERCS_CAU_OP_SUM &&
					     type == PERCS_CAU_T_F64) &&
			    !(op == PERCS_CAU_OP_XOR && type == PERCS_CAU_T_U32))
				continue;
			cref(ref, cnt, type, op, n, seed);
			for (unsigned int i = 0; i < n; i++) {
				cfill(in[i], cnt, type, i, seed);
				memset(out[i], 0xa5, 8001);
				REQUIRE(percs_cau_iallreduce(ct[i], in[i],
					out[i], cnt, type, op, &req[i]) == 0);
			}
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++) {
				CHECK_EQ(st[i], 0);
				if (memcmp(out[i], ref, cnt * esz))
					t_fail(__FILE__, __LINE__,
					       "%s %s count %zu member %u differs",
					       fm_cau_op_name(op),
					       fm_cau_type_name(type), cnt, i);
				CHECK_EQ(out[i][cnt * esz], 0xa5);
			}
			ops += (cnt * esz + 63) / 64;
		}
	} while (op_type_next(&op, &type));
	for (unsigned int i = 0; i < n; i++) {
		struct percs_cau_tree_info info;

		CHECK_EQ(percs_cau_tree_query(ct[i], &info), 0);
		CHECK_EQ(info.ops, ops);
		CHECK_EQ(info.me, i);
		CHECK_EQ(info.root, 0);
		CHECK_EQ(info.nr_members, n);
		CHECK_EQ(info.running, 0);
		CHECK_EQ(info.status, 0);
		CHECK_EQ(FC.t[0].peak[i], PERCS_CAU_MAX_INFLIGHT);
	}
	CHECK_EQ(FC.descs, ops * n);
	CHECK_EQ(FC.busy, 0);	/* never a 17th: the library waits first */
	CHECK_EQ(FC.bad, 0);
	CHECK_EQ(H.violations, 0);
	/* In place, blocking on one member once the others have posted. */
	for (unsigned int i = 1; i < n; i++) {
		cfill(in[i], 50, PERCS_CAU_T_S64, i, 99);
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], in[i], 50,
					     PERCS_CAU_T_S64, PERCS_CAU_OP_MIN,
					     &req[i]) == 0);
	}
	cfill(in[0], 50, PERCS_CAU_T_S64, 0, 99);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], in[0], 50, PERCS_CAU_T_S64,
				     PERCS_CAU_OP_MIN), 0);
	req[0] = NULL;
	REQUIRE(run_reqs(req, n, st));
	cref(ref, 50, PERCS_CAU_T_S64, PERCS_CAU_OP_MIN, n, 99);
	for (unsigned int i = 0; i < n; i++)
		CHECK(!memcmp(in[i], ref, 50 * 8));
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(percs_cau_tree_destroy(ct[i]), 0);
		free(in[i]);
		free(out[i]);
	}
	free(ref);
	cenv_fini(n);
}

/*
 * Results held back: each member has exactly 16 operations waiting, none
 * more; then written newest first: matched by seq, not by order.
 */
static void test_cau_seq_matching(void)
{
	const unsigned int n = 4, cnt = 1000;
	struct percs_coll_req *req[NWIN];
	double *in[NWIN], *out[NWIN], ref[1000];
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 0, 1) == 0);
	FC.hold = true;
	for (unsigned int i = 0; i < n; i++) {
		in[i] = malloc(cnt * 8);
		out[i] = calloc(cnt, 8);
		cfill(in[i], cnt, PERCS_CAU_T_F64, i, 5);
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], cnt,
					     PERCS_CAU_T_F64, PERCS_CAU_OP_MAX,
					     &req[i]) == 0);
	}
	for (unsigned int k = 0; k < 100; k++)
		for (unsigned int i = 0; i < n; i++)
			CHECK_EQ(percs_coll_test(req[i]), -EINPROGRESS);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(FC.t[0].posted[i], PERCS_CAU_MAX_INFLIGHT);
		CHECK_EQ(ct[i]->posted, PERCS_CAU_MAX_INFLIGHT);
	}
	FC.reverse = true;
	FC.hold = false;
	fc_pump();
	REQUIRE(run_reqs(req, n, st));
	cref(ref, cnt, PERCS_CAU_T_F64, PERCS_CAU_OP_MAX, n, 5);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[i], 0);
		CHECK(!memcmp(out[i], ref, sizeof(ref)));
		CHECK_EQ(FC.t[0].posted[i], 125);
		free(in[i]);
		free(out[i]);
	}
	CHECK_EQ(FC.busy, 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/*
 * The receive FIFO is shared: the application's packets, and results of
 * a tree the library does not know, met while the library waits, come
 * back from percs_recv() and percs_recv_peek() in order; the library's
 * own results never do.  The same for completion entries.
 */
static void test_cau_recv_stash(void)
{
	const unsigned int n = 3;
	struct percs_addr nowhere = { .hub = 9, .window = 9 };
	struct percs_coll_req *req[NWIN];
	struct percs_cau_member m[2];
	struct percs_cau_create cr = { .size = sizeof(cr) };
	struct percs_cau_tree_op jo = { .size = sizeof(jo) };
	struct percs_pkt_hdr h;
	const struct percs_pkt_hdr *ph;
	uint64_t v[NWIN], out[NWIN];
	uint8_t buf[256];
	struct percs_cqe c[8];
	int st[NWIN], r;

	cenv_init(n, 0, 16384);
	REQUIRE(ctrees(n, 0, 0, 0) == 0);
	/* A raw tree of windows 1 and 2, outside the library. */
	m[0] = (struct percs_cau_member){ .win = cw[2]->addr,
					  .parent = PERCS_CAU_ROOT };
	m[1] = (struct percs_cau_member){ .win = cw[1]->addr, .parent = 0 };
	cr.nr_members = 2;
	cr.members = (uintptr_t)m;
	REQUIRE(ioctl(cw[2]->w->fd, PERCS_IOC_CAU_CREATE, &cr) == 0);
	jo.tree = cr.tree;
	REQUIRE(ioctl(cw[1]->w->fd, PERCS_IOC_CAU_JOIN, &jo) == 0);

	CHECK_EQ(percs_send(cw[2]->w, &cw[1]->addr, "one", 3, 1, 0), 0);
	CHECK_EQ(percs_send(cw[1]->w, &nowhere, NULL, 0, 901, 0), 0);
	for (unsigned int i = 0; i < n; i++) {
		v[i] = i + 1;
		REQUIRE(percs_cau_iallreduce(ct[i], &v[i], &out[i], 1,
					     PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					     &req[i]) == 0);
	}
	CHECK_EQ(percs_send(cw[2]->w, &cw[1]->addr, "two", 3, 2, 0), 0);
	{
		/* A raw descriptor on the raw tree, from both members. */
		uint8_t d[PERCS_COLL_EXT_SIZE + 8] = { 0 };
		struct percs_coll_ext e = {
			.tree = cr.tree, .coll = PERCS_COLL_ALLREDUCE,
			.op = PERCS_CAU_OP_SUM, .type = PERCS_CAU_T_U64,
			.count = 1,
		};
		struct percs_pkt_hdr rh = { .kind = PERCS_PKT_COLL, .tag = 3 };

		memcpy(d, &e, sizeof(e));
		d[sizeof(e)] = 40;
		CHECK_EQ(percs_send_compose_hdr(cw[2]->w, &rh, d, sizeof(d)), 0);
		CHECK_EQ(percs_send_trigger(cw[2]->w), 0);
		d[sizeof(e)] = 2;
		CHECK_EQ(percs_send_compose_hdr(cw[1]->w, &rh, d, sizeof(d)), 0);
		CHECK_EQ(percs_send_trigger(cw[1]->w), 0);
	}
	CHECK_EQ(percs_send(cw[1]->w, &nowhere, NULL, 0, 902, 0), 0);
	REQUIRE(run_reqs(req, n, st));
	CHECK_EQ(percs_send(cw[2]->w, &cw[1]->addr, "four", 4, 4, 0), 0);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[i], 0);
		CHECK_EQ(out[i], 6);
	}
	CHECK(cw[1]->w->rstash.count >= 2);
	/* In order: one, two, the raw tree's result (tag 3), four. */
	ph = percs_recv_peek(cw[1]->w);
	REQUIRE(ph);
	CHECK_EQ(ph->tag, 1);
	CHECK_EQ(ph->kind, PERCS_PKT_FIFO);
	CHECK(!memcmp(ph + 1, "one", 3));
	percs_recv_consume(cw[1]->w);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, 2), -EMSGSIZE);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, sizeof(buf)), 3);
	CHECK_EQ(h.tag, 2);
	CHECK(!memcmp(buf, "two", 3));
	r = percs_recv(cw[1]->w, &h, buf, sizeof(buf));
	CHECK_EQ(r, PERCS_COLL_EXT_SIZE + PERCS_CAU_PAYLOAD);
	CHECK_EQ(h.kind, PERCS_PKT_COLL);
	CHECK_EQ(h.tag, 3);
	CHECK_EQ(buf[PERCS_COLL_EXT_SIZE], 42);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, sizeof(buf)), 4);
	CHECK_EQ(h.tag, 4);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, sizeof(buf)), -EAGAIN);
	CHECK_EQ(cw[1]->w->rstash.count, 0);
	/* The CQ: the application's two entries, in order, nothing else. */
	CHECK_EQ(percs_cq_poll(cw[1]->w, c, 8), 2);
	CHECK_EQ(c[0].user_data, 901);
	CHECK_EQ(c[1].user_data, 902);
	/* Window 2's own result of the raw tree; then nothing anywhere. */
	CHECK_EQ(percs_recv(cw[2]->w, &h, buf, sizeof(buf)),
		 PERCS_COLL_EXT_SIZE + PERCS_CAU_PAYLOAD);
	CHECK_EQ(h.tag, 3);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(percs_recv(cw[i]->w, &h, buf, sizeof(buf)), -EAGAIN);
		CHECK_EQ(cw[i]->db->recv_head, cw[i]->st->recv_tail);
	}
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/*
 * Errors: an operation's status (the other chunks' results still land);
 * members that disagree; a tree ended by a member (-ECONNRESET for the
 * running requests and every later call), also when the application took
 * the end's completion entry itself (the 20 ms probe); a descriptor's
 * error; -EBUSY for running requests; bad arguments.
 */
static void test_cau_errors(void)
{
	const unsigned int n = 3;
	struct percs_coll_req *req[NWIN];
	uint64_t in[NWIN][40], out[NWIN][40], ref[40];
	struct percs_cau_tree_info info;
	struct percs_cqe c[4];
	uint64_t t0;
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 0, 0) == 0);
	/* Operation 3 (of 5) fails: everyone gets -EINVAL, 4 chunks land. */
	FC.fail_seq = 3;
	FC.fail_status = -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		cfill(in[i], 40, PERCS_CAU_T_U64, i, 7);
		memset(out[i], 0, sizeof(out[i]));
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], 40,
					     PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					     &req[i]) == 0);
	}
	REQUIRE(run_reqs(req, n, st));
	cref(ref, 40, PERCS_CAU_T_U64, PERCS_CAU_OP_SUM, n, 7);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[i], -EINVAL);
		CHECK(!memcmp(out[i], ref, 16 * 8));
		CHECK(!memcmp(out[i] + 24, ref + 24, 16 * 8));
		CHECK_EQ(out[i][16], 0);
	}
	FC.fail_seq = 0;
	/* Disagreeing members (MAX against SUM): -EINVAL, and go on. */
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], 2,
					     PERCS_CAU_T_U64,
					     i ? PERCS_CAU_OP_SUM : PERCS_CAU_OP_MAX,
					     &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], -EINVAL);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ibarrier(ct[i], &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], 0);

	/* Bad arguments: nothing posted. */
	CHECK_EQ(percs_cau_allreduce(NULL, in[0], out[0], 1, 0, 1), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1,
				     PERCS_CAU_T_F64, PERCS_CAU_OP_XOR), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1,
				     PERCS_CAU_T_U32, PERCS_CAU_OP_PROD), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1, 6, 1), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1, 0, 8), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], NULL, out[0], 1, 0, 1), -EINVAL);
	CHECK_EQ(percs_cau_iallreduce(ct[0], in[0], out[0], 1, 0, 1, NULL),
		 -EINVAL);
	CHECK_EQ(percs_cau_bcast(ct[0], n, out[0], 8), -EINVAL);
	CHECK_EQ(percs_cau_ibarrier(ct[0], NULL), -EINVAL);
	CHECK_EQ(percs_coll_test(NULL), -EINVAL);
	CHECK_EQ(percs_coll_wait(NULL, 0), -EINVAL);
	CHECK_EQ(percs_coll_req_free(NULL), 0);
	CHECK_EQ(percs_cau_tree_query(ct[0], &info), 0);
	CHECK_EQ(info.ops, 5 + 1 + 1);

	/* Member 0 never posts; 1 and 2 wait; 0 ends the tree. */
	for (unsigned int i = 1; i < n; i++)
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], 3,
					     PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					     &req[i]) == 0);
	CHECK_EQ(percs_coll_wait(req[1], 5), -EINPROGRESS);
	CHECK_EQ(percs_coll_req_free(req[1]), -EBUSY);
	/* The application takes member 2's end entry itself. */
	CHECK_EQ(percs_cau_tree_destroy(ct[0]), 0);
	CHECK_EQ(percs_cq_poll(cw[2]->w, c, 4), 1);
	CHECK_EQ(c[0].res, -ECONNRESET);
	CHECK_EQ(c[0].kind, PERCS_PKT_COLL);
	CHECK_EQ(c[0].user_data, FC.t[0].id);
	CHECK_EQ(percs_coll_wait(req[1], 1000), -ECONNRESET);
	t0 = lp_now_ns();
	CHECK_EQ(percs_coll_wait(req[2], 2000), -ECONNRESET);
	CHECK(lp_now_ns() - t0 < 1000000000ULL);
	CHECK(lp_now_ns() - t0 >= 15000000ULL);	/* found by the probe */
	for (unsigned int i = 1; i < n; i++) {
		CHECK_EQ(percs_coll_req_free(req[i]), 0);
		CHECK_EQ(percs_cau_barrier(ct[i]), -ECONNRESET);
		CHECK_EQ(percs_cau_ibarrier(ct[i], &req[i]), -ECONNRESET);
		CHECK_EQ(percs_cau_tree_query(ct[i], &info), 0);
		CHECK_EQ(info.status, -ECONNRESET);
		CHECK_EQ(percs_cau_tree_destroy(ct[i]), 0);	/* ended */
	}

	/* A descriptor refused by the CAU (member 1 not joined any more). */
	REQUIRE(ctrees(2, 0, 0, 0) == 0);
	FC.t[1].joined[1] = false;
	REQUIRE(percs_cau_iallreduce(ct[1], in[1], out[1], 1, PERCS_CAU_T_U64,
				     PERCS_CAU_OP_SUM, &req[1]) == 0);
	CHECK_EQ(percs_coll_wait(req[1], 1000), -EPERM);
	CHECK_EQ(percs_coll_req_free(req[1]), 0);
	REQUIRE(percs_cau_iallreduce(ct[0], in[0], out[0], 1, PERCS_CAU_T_U64,
				     PERCS_CAU_OP_SUM, &req[0]) == 0);
	CHECK_EQ(percs_coll_wait(req[0], 1), -EINPROGRESS);
	/* Destroying ends this member's running requests too. */
	CHECK_EQ(percs_cau_tree_destroy(ct[0]), 0);
	CHECK_EQ(percs_coll_test(req[0]), -ECONNRESET);
	CHECK_EQ(percs_coll_req_free(req[0]), 0);
	/* The end's entry that came meanwhile is taken at the destroy. */
	CHECK_EQ(percs_cau_tree_destroy(ct[1]), 0);
	CHECK_EQ(percs_cq_poll(cw[1]->w, c, 4), 0);
	/* Not a member; bad flags; no such tree; joined twice. */
	{
		struct percs_cau_member m[2];
		struct percs_cau_tree *t;

		CHECK_EQ(percs_cau_shape_kary(caddrs(2), 2, 0, 0, NULL, m), 0);
		CHECK_EQ(percs_cau_tree_create(cw[2]->w, m, 2, 0, &t), -EPERM);
		CHECK_EQ(percs_cau_tree_create(cw[0]->w, m, 2, 2, &t), -EINVAL);
		CHECK_EQ(percs_cau_tree_join(cw[1]->w, 12345, m, 2, 0, &t),
			 -ENOENT);
		REQUIRE(percs_cau_tree_create(cw[0]->w, m, 2, 0, &t) == 0);
		CHECK_EQ(percs_cau_tree_join(cw[0]->w, percs_cau_tree_id(t), m,
					     2, 0, &ct[0]), -EALREADY);
		CHECK_EQ(cw[0]->w->coll->nr_trees, 1);
	}
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);	/* the release frees the tree left */
}

/*
 * Reduce: the result at the root only; the others are done once posted;
 * an error that comes for them later is the next call's.
 */
static void test_cau_reduce(void)
{
	const unsigned int n = 5, root = 2, cnt = 100;
	struct percs_coll_req *req[NWIN];
	uint32_t in[NWIN][100], out[NWIN][100], ref[100];
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 3, root) == 0);
	CHECK_EQ(ct[0]->root, root);
	for (unsigned int i = 0; i < n; i++) {
		cfill(in[i], cnt, PERCS_CAU_T_U32, i, 11);
		memset(out[i], 0, sizeof(out[i]));
	}
	/* The non-roots finish before the root has posted anything. */
	for (unsigned int i = 0; i < n; i++)
		if (i != root) {
			REQUIRE(percs_cau_ireduce(ct[i], in[i],
						  i == 1 ? NULL : out[i], cnt,
						  PERCS_CAU_T_U32,
						  PERCS_CAU_OP_SUM, &req[i]) == 0);
			CHECK_EQ(percs_coll_test(req[i]), 0);
			CHECK_EQ(percs_coll_req_free(req[i]), 0);
		}
	CHECK_EQ(percs_cau_reduce(ct[root], in[root], out[root], cnt,
				  PERCS_CAU_T_U32, PERCS_CAU_OP_SUM), 0);
	cref(ref, cnt, PERCS_CAU_T_U32, PERCS_CAU_OP_SUM, n, 11);
	CHECK(!memcmp(out[root], ref, sizeof(ref)));
	CHECK_EQ(out[0][0], 0);
	/* Operation 8 (the reduce's second chunk) fails. */
	FC.fail_seq = 8;
	FC.fail_status = -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ireduce(ct[i], in[i], out[i], 32,
					  PERCS_CAU_T_U32, PERCS_CAU_OP_SUM,
					  &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], i == root ? -EINVAL : 0);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ibarrier(ct[i], &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], i == root ? 0 : -EINVAL);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ibarrier(ct[i], &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/*
 * Bcast on the CAU's multicast: any length (1000 bytes: 16 multicasts, more
 * than an origin has buffers, so some wait in its send FIFO), any origin;
 * the origin's bytes and nothing beyond.  Then multicasts that come before
 * their call: roots 0 and 3 start both of their calls at once and finish
 * them before members 1 and 2 start; member 1 meets root 0's multicasts
 * while in its first call (the second is complete as soon as it starts),
 * and member 2 never makes the second call (what it kept is freed with
 * the tree).
 */
static void test_cau_bcast(void)
{
	static const size_t lens[] = { 0, 1, 7, 8, 63, 64, 65, 200, 1000 };
	const unsigned int n = 4;
	struct percs_coll_req *req[NWIN], *req2[NWIN];
	uint8_t buf[NWIN][1001], b2[NWIN][300];
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 0, 0) == 0);
	for (unsigned int li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
	for (unsigned int root = 0; root < n; root += n - 1) {
		size_t len = lens[li];

		for (unsigned int i = 0; i < n; i++) {
			if (i == root)
				fill(buf[i], sizeof(buf[i]), (uint32_t)len);
			else
				memset(buf[i], 0x5a, sizeof(buf[i]));
			REQUIRE(percs_cau_ibcast(ct[i], root, buf[i], len,
						 &req[i]) == 0);
		}
		REQUIRE(run_reqs(req, n, st));
		for (unsigned int i = 0; i < n; i++) {
			CHECK_EQ(st[i], 0);
			CHECK(pattern_ok(buf[i], len, (uint32_t)len));
			if (i != root)
				CHECK_EQ(buf[i][len], 0x5a);
		}
		CHECK(!len || (FC.last.coll == PERCS_COLL_MCAST &&
			       FC.last.op == PERCS_CAU_OP_NOP));
	}
	CHECK(FC.mc_busy > 0);
	/* Nothing but multicasts was posted: no operation numbers taken. */
	CHECK_EQ(ct[0]->posted, 0);

	/* Early multicasts, delivered origin by origin, newest origin first. */
	FC.reverse = true;
	for (unsigned int i = 0; i < n; i++) {
		memset(buf[i], 0x5a, sizeof(buf[i]));
		memset(b2[i], 0x5a, sizeof(b2[i]));
	}
	fill(buf[3], 300, 3);
	fill(b2[0], 200, 4);
	for (unsigned int i = 0; i < n; i += n - 1) {
		REQUIRE(percs_cau_ibcast(ct[i], 3, buf[i], 300, &req[i]) == 0);
		REQUIRE(percs_cau_ibcast(ct[i], 0, b2[i], 200, &req2[i]) == 0);
	}
	req[1] = req[2] = req2[1] = req2[2] = NULL;
	REQUIRE(run_reqs(req2, n, st));
	REQUIRE(run_reqs(req, n, st));
	CHECK(pattern_ok(buf[0], 300, 3));
	CHECK(pattern_ok(b2[3], 200, 4));
	for (unsigned int i = 1; i < 3; i++)
		REQUIRE(percs_cau_ibcast(ct[i], 3, buf[i], 300, &req[i]) == 0);
	req[0] = req[3] = NULL;
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 1; i < 3; i++) {
		CHECK_EQ(st[i], 0);
		CHECK(pattern_ok(buf[i], 300, 3));
	}
	/* Member 1 kept root 0's: complete at once, nothing more read. */
	REQUIRE(percs_cau_ibcast(ct[1], 0, b2[1], 200, &req2[1]) == 0);
	CHECK(req2[1]->done);
	CHECK_EQ(percs_coll_wait(req2[1], 0), 0);
	CHECK(pattern_ok(b2[1], 200, 4));
	CHECK_EQ(b2[1][200], 0x5a);
	CHECK_EQ(percs_coll_req_free(req2[1]), 0);
	FC.reverse = false;
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);	/* member 2's kept multicasts go with its tree */
}

/*
 * Many requests started at once on every member (more operations than 16):
 * they post in the order started and complete; barriers among them.
 */
static void test_cau_many_requests(void)
{
	const unsigned int n = 6, k = 12;
	struct percs_coll_req *req[NWIN * 24];
	int64_t in[NWIN][12][20], out[NWIN][12][20], ref[20];
	int st[NWIN * 24];

	cenv_init(n, 0, 8192);
	REQUIRE(ctrees(n, 0, 2, 0) == 0);
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < k; j++) {
			cfill(in[i][j], 20, PERCS_CAU_T_S64, i, 100 + j);
			REQUIRE(percs_cau_iallreduce(ct[i], in[i][j], out[i][j],
						     20, PERCS_CAU_T_S64,
						     PERCS_CAU_OP_SUM,
						     &req[i * 24 + 2 * j]) == 0);
			REQUIRE(percs_cau_ibarrier(ct[i],
						   &req[i * 24 + 2 * j + 1]) == 0);
		}
	REQUIRE(run_reqs(req, n * 24, st));
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < k; j++) {
			cref(ref, 20, PERCS_CAU_T_S64, PERCS_CAU_OP_SUM, n,
			     100 + j);
			CHECK_EQ(st[i * 24 + 2 * j], 0);
			CHECK_EQ(st[i * 24 + 2 * j + 1], 0);
			CHECK(!memcmp(out[i][j], ref, sizeof(ref)));
		}
	CHECK_EQ(FC.busy, 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

const struct unit_test cau_tests[] = {
	{ "cau: k-ary shape: one parent each, fan-out, depth, supernodes kept together, same on every member", test_cau_shape_kary },
	{ "cau: explicit shape and the kernel's checks in order (-EINVAL, -ELOOP, -EMLINK, -EEXIST)", test_cau_shape_explicit },
	{ "cau: allreduce every op x type, 64-byte chunks, 16 in flight, in place", test_cau_allreduce },
	{ "cau: results held back then written newest first: matched by seq", test_cau_seq_matching },
	{ "cau: other packets and CQEs met while waiting come back in order", test_cau_recv_stash },
	{ "cau: errors: op status, disagreement, tree end (CQE and probe), descriptor error, -EBUSY, arguments", test_cau_errors },
	{ "cau: reduce at the root, non-roots done at post, late error to the next call", test_cau_reduce },
	{ "cau: bcast on the CAU multicast: any length, any origin, early multicasts kept for their call", test_cau_bcast },
	{ "cau: many requests in flight, barriers among them, small FIFOs", test_cau_many_requests },
	{ NULL, NULL }
};
