// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: software collectives.
 */
#include "unit.h"

static struct percs_sw_group *sg[NWIN];

static void sgroups(unsigned int n, uint16_t ctx)
{
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_sw_group_create(cw[i]->w, caddrs(n), n, ctx,
					      &sg[i]) == 0);
}

/*
 * One software allreduce on @n ranks, all started and then tested in
 * turn; integer results exact, float results the same bits on every rank
 * and close to the rank-order reference.
 */
static void sw_allreduce_once(unsigned int n, unsigned int algo, size_t cnt,
			      unsigned int type, unsigned int op,
			      uint64_t seed)
{
	size_t bytes = cnt * fm_cau_elem_size(type);
	struct percs_coll_req *req[NWIN];
	uint8_t *in[NWIN], *out[NWIN], *ref = malloc(bytes + 1);
	bool flt = type >= PERCS_CAU_T_F32;
	int st[NWIN];

	cref(ref, cnt, type, op, n, seed);
	for (unsigned int i = 0; i < n; i++) {
		in[i] = malloc(bytes + 1);
		out[i] = malloc(bytes + 1);
		cfill(in[i], cnt, type, i, seed);
		memset(out[i], 0xa5, bytes + 1);
	}
	/* Started in reverse order: early messages wait as unexpected. */
	for (unsigned int i = n; i-- > 0;)
		REQUIRE(percs_sw_iallreduce(sg[i], algo, in[i],
					    i == 1 ? in[i] : out[i], cnt, type,
					    op, &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *res = i == 1 ? in[i] : out[i];

		CHECK_EQ(st[i], 0);
		if (flt ? memcmp(res, i ? (i == 1 ? in[1] : out[i]) : out[0],
				 bytes) || memcmp(res, n > 1 ? out[0] : res,
						  bytes) ||
			  !close_enough(res, ref, cnt, type) :
			  memcmp(res, ref, bytes))
			t_fail(__FILE__, __LINE__,
			       "n %u algo %u %s %s count %zu rank %u differs",
			       n, algo, fm_cau_op_name(op),
			       fm_cau_type_name(type), cnt, i);
		if (i != 1)
			CHECK_EQ(out[i][bytes], 0xa5);
	}
	for (unsigned int i = 0; i < n; i++) {
		free(in[i]);
		free(out[i]);
	}
	free(ref);
}

/* Every algorithm, 1 to 11 ranks, short to multi-packet vectors. */
static void test_sw_allreduce(void)
{
	static const size_t counts[] = { 0, 1, 3, 64, 1000, 5000 };
	static const unsigned int algos[] = {
		PERCS_SW_BINOMIAL, PERCS_SW_RECDBL, PERCS_SW_RABENSEIFNER,
		PERCS_SW_AUTO,
	};
	static const unsigned int ot[][2] = {
		{ PERCS_CAU_OP_SUM, PERCS_CAU_T_U64 },
		{ PERCS_CAU_OP_MIN, PERCS_CAU_T_S32 },
		{ PERCS_CAU_OP_SUM, PERCS_CAU_T_F64 },
		{ PERCS_CAU_OP_PROD, PERCS_CAU_T_F32 },
	};
	uint64_t seed = 1;

	for (unsigned int n = 1; n <= 11; n++) {
		/* Small receive FIFOs: senders wait for the receivers. */
		cenv_init(n, 0, n % 2 ? 4096 : 65536);
		sgroups(n, 7);
		for (unsigned int a = 0; a < 4; a++)
			for (unsigned int c = 0; c < 6; c++)
				for (unsigned int k = 0; k < 4; k++)
					sw_allreduce_once(n, algos[a], counts[c],
							  ot[k][1], ot[k][0],
							  seed++);
		for (unsigned int i = 0; i < n; i++) {
			CHECK_EQ(percs_sw_group_destroy(sg[i]), 0);
			CHECK_EQ(cw[i]->w->rstash.count, 0);
		}
		CHECK_EQ(H.violations, 0);
		cenv_fini(n);
	}
	/* Every op x type once, on 6 ranks. */
	{
		unsigned int op = 0, type = 0;

		cenv_init(6, 0, 65536);
		sgroups(6, 8);
		do {
			for (unsigned int a = 0; a < 3; a++)
				sw_allreduce_once(6, algos[a], 300, type, op,
						  seed++);
		} while (op_type_next(&op, &type));
		cenv_fini(6);
	}
}

/* Reduce to every root, bcast from every root, barriers, on 1 to 9 ranks. */
static void test_sw_reduce_bcast_barrier(void)
{
	static const unsigned int balgos[] = {
		PERCS_SW_AUTO, PERCS_SW_DISSEMINATION, PERCS_SW_BINOMIAL,
		PERCS_SW_RECDBL,
	};
	struct percs_coll_req *req[NWIN];
	int st[NWIN];

	for (unsigned int n = 1; n <= 9; n++) {
		cenv_init(n, 0, 4096);
		sgroups(n, 3);
		for (unsigned int root = 0; root < n; root++) {
			static int32_t in[NWIN][700], out[NWIN][700];
			int32_t ref[700];
			static uint8_t buf[NWIN][3000];
			size_t len = 1 + root * 700;

			cref(ref, 700, PERCS_CAU_T_S32, PERCS_CAU_OP_MAX, n,
			     root);
			for (unsigned int i = 0; i < n; i++) {
				cfill(in[i], 700, PERCS_CAU_T_S32, i, root);
				memset(out[i], 0, sizeof(out[i]));
				REQUIRE(percs_sw_ireduce(sg[i], PERCS_SW_AUTO,
					root, in[i], i == root ? out[i] : NULL,
					700, PERCS_CAU_T_S32, PERCS_CAU_OP_MAX,
					&req[i]) == 0);
			}
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++)
				CHECK_EQ(st[i], 0);
			CHECK(!memcmp(out[root], ref, sizeof(ref)));
			for (unsigned int i = 0; i < n; i++)
				if (i != root)
					CHECK_EQ(out[i][0], 0);

			if (len > sizeof(buf[0]))
				len = sizeof(buf[0]);
			for (unsigned int i = 0; i < n; i++) {
				if (i == root)
					fill(buf[i], len, root);
				else
					memset(buf[i], 0, sizeof(buf[i]));
				REQUIRE(percs_sw_ibcast(sg[i], PERCS_SW_BINOMIAL,
							root, buf[i], len,
							&req[i]) == 0);
			}
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++) {
				CHECK_EQ(st[i], 0);
				CHECK(pattern_ok(buf[i], len, root));
			}
		}
		for (unsigned int a = 0; a < 4; a++) {
			/* Everyone but the last enters: nobody leaves. */
			for (unsigned int i = 0; i + 1 < n; i++)
				REQUIRE(percs_sw_ibarrier(sg[i], balgos[a],
							  &req[i]) == 0);
			for (unsigned int k = 0; k < 50; k++)
				for (unsigned int i = 0; i + 1 < n; i++)
					CHECK_EQ(percs_coll_test(req[i]),
						 -EINPROGRESS);
			REQUIRE(percs_sw_ibarrier(sg[n - 1], balgos[a],
						  &req[n - 1]) == 0);
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++)
				CHECK_EQ(st[i], 0);
		}
		CHECK_EQ(H.violations, 0);
		cenv_fini(n);
	}
}

/*
 * Several collectives in flight at once on two groups of the same windows,
 * one rank starting late (its messages pile up as unexpected); a group
 * created after its first messages were kept for percs_recv().
 */
static void test_sw_concurrent_and_late(void)
{
	const unsigned int n = 5;
	struct percs_sw_group *g2[NWIN];
	struct percs_coll_req *req[NWIN * 3];
	uint64_t in[NWIN][300], out[NWIN][300], ref[300];
	uint8_t b[NWIN][100];
	struct percs_pkt_hdr h;
	uint8_t pkt[64];
	int st[NWIN * 3];

	cenv_init(n, 0, 65536);
	sgroups(n, 1);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_sw_group_create(cw[i]->w, caddrs(n), n, 2,
					      &g2[i]) == 0);
	for (unsigned int i = 1; i < n; i++) {
		cfill(in[i], 300, PERCS_CAU_T_U64, i, 42);
		memset(b[i], 0, sizeof(b[i]));
		REQUIRE(percs_sw_iallreduce(sg[i], PERCS_SW_RABENSEIFNER, in[i],
					    out[i], 300, PERCS_CAU_T_U64,
					    PERCS_CAU_OP_XOR, &req[3 * i]) == 0);
		REQUIRE(percs_sw_ibcast(g2[i], 0, 0, b[i], 100,
					&req[3 * i + 1]) == 0);
		REQUIRE(percs_sw_ibarrier(sg[i], PERCS_SW_AUTO,
					  &req[3 * i + 2]) == 0);
	}
	for (unsigned int k = 0; k < 100; k++)
		for (unsigned int i = 3; i < 3 * n; i++)
			CHECK_EQ(percs_coll_test(req[i]), -EINPROGRESS);
	/* The application's packet in the middle stays its own. */
	CHECK_EQ(percs_send(cw[3]->w, &cw[0]->addr, "app", 3, 77, 0), 0);
	cfill(in[0], 300, PERCS_CAU_T_U64, 0, 42);
	fill(b[0], 100, 9);
	REQUIRE(percs_sw_iallreduce(sg[0], PERCS_SW_RABENSEIFNER, in[0], out[0],
				    300, PERCS_CAU_T_U64, PERCS_CAU_OP_XOR,
				    &req[0]) == 0);
	REQUIRE(percs_sw_ibcast(g2[0], 0, 0, b[0], 100, &req[1]) == 0);
	REQUIRE(percs_sw_ibarrier(sg[0], PERCS_SW_AUTO, &req[2]) == 0);
	REQUIRE(run_reqs(req, 3 * n, st));
	cref(ref, 300, PERCS_CAU_T_U64, PERCS_CAU_OP_XOR, n, 42);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[3 * i], 0);
		CHECK_EQ(st[3 * i + 1], 0);
		CHECK_EQ(st[3 * i + 2], 0);
		CHECK(!memcmp(out[i], ref, sizeof(ref)));
		CHECK(pattern_ok(b[i], 100, 9));
		CHECK(!sg[i]->unexp);
	}
	CHECK_EQ(percs_recv(cw[0]->w, &h, pkt, sizeof(pkt)), 3);
	CHECK_EQ(h.tag, 77);
	CHECK_EQ(percs_recv(cw[0]->w, &h, pkt, sizeof(pkt)), -EAGAIN);

	/*
	 * Group 5 exists on ranks 1..4 only; rank 0's library meets their
	 * messages while it works for group 1 and keeps them as the
	 * application's, until rank 0 creates group 5.
	 */
	for (unsigned int i = 1; i < n; i++) {
		REQUIRE(percs_sw_group_create(cw[i]->w, caddrs(n), n, 5,
					      &g2[i]) == 0);
		REQUIRE(percs_sw_ibarrier(g2[i], PERCS_SW_DISSEMINATION,
					  &req[i]) == 0);
	}
	for (unsigned int k = 0; k < 20; k++)
		for (unsigned int i = 1; i < n; i++)
			CHECK_EQ(percs_coll_test(req[i]), -EINPROGRESS);
	CHECK_EQ(percs_coll_progress(cw[0]->w), 0);
	CHECK(cw[0]->w->rstash.count >= 1);
	REQUIRE(percs_sw_group_create(cw[0]->w, caddrs(n), n, 5, &g2[0]) == 0);
	CHECK_EQ(cw[0]->w->rstash.count, 0);
	REQUIRE(percs_sw_ibarrier(g2[0], PERCS_SW_DISSEMINATION, &req[0]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], 0);
	CHECK_EQ(percs_recv(cw[0]->w, &h, pkt, sizeof(pkt)), -EAGAIN);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/* Group and argument errors; a member's window gone; disagreeing counts. */
static void test_sw_errors(void)
{
	struct percs_addr a[4];
	struct percs_sw_group *g;
	struct percs_coll_req *req[NWIN];
	uint64_t in[NWIN][64], out[NWIN][64];
	struct percs_cqe c[4];
	int st[NWIN];

	cenv_init(3, 0, 65536);
	memcpy(a, caddrs(3), 3 * sizeof(a[0]));
	CHECK_EQ(percs_sw_group_create(cw[0]->w, a, 0, 1, &g), -EINVAL);
	CHECK_EQ(percs_sw_group_create(NULL, a, 3, 1, &g), -EINVAL);
	CHECK_EQ(percs_sw_group_create(cw[0]->w, a + 1, 2, 1, &g), -EPERM);
	a[2] = a[1];
	CHECK_EQ(percs_sw_group_create(cw[0]->w, a, 3, 1, &g), -EEXIST);
	sgroups(3, 1);
	CHECK_EQ(percs_sw_group_create(cw[0]->w, caddrs(3), 3, 1, &g), -EEXIST);
	CHECK_EQ(percs_sw_group_rank(sg[2]), 2);
	/* Refused calls use no collective number: the next ones match. */
	CHECK_EQ(percs_sw_reduce(sg[0], PERCS_SW_RECDBL, 0, in[0], out[0], 1,
				 PERCS_CAU_T_U64, PERCS_CAU_OP_SUM), -EOPNOTSUPP);
	CHECK_EQ(percs_sw_barrier(sg[0], PERCS_SW_RABENSEIFNER), -EOPNOTSUPP);
	CHECK_EQ(percs_sw_allreduce(sg[0], PERCS_SW_DISSEMINATION, in[0],
				    out[0], 1, PERCS_CAU_T_U64,
				    PERCS_CAU_OP_SUM), -EOPNOTSUPP);
	CHECK_EQ(percs_sw_allreduce(sg[0], 0, in[0], out[0], 1,
				    PERCS_CAU_T_F32, PERCS_CAU_OP_AND), -EINVAL);
	CHECK_EQ(percs_sw_allreduce(sg[0], 0, NULL, out[0], 1,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM), -EINVAL);
	CHECK_EQ(percs_sw_reduce(sg[0], 0, 3, in[0], out[0], 1,
				 PERCS_CAU_T_U64, PERCS_CAU_OP_SUM), -EINVAL);
	CHECK_EQ(percs_sw_bcast(sg[0], 0, 0, NULL, 5), -EINVAL);
	CHECK_EQ(percs_sw_allreduce(NULL, 0, in[0], out[0], 1, 0, 1), -EINVAL);
	CHECK_EQ(percs_sw_ibarrier(sg[0], 0, NULL), -EINVAL);
	CHECK_EQ(sg[0]->opseq, 0);
	/* Counts that disagree: the receiver of a wrong message: -EPROTO. */
	for (unsigned int i = 0; i < 3; i++)
		REQUIRE(percs_sw_iallreduce(sg[i], PERCS_SW_RECDBL, in[i],
					    out[i], i ? 64 : 32,
					    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					    &req[i]) == 0);
	run_reqs(req, 3, st);
	CHECK(st[0] == -EPROTO || st[1] == -EPROTO || st[2] == -EPROTO);
	CHECK_EQ(percs_sw_group_destroy(sg[0]), req[0] ? -EBUSY : 0);
	cenv_fini(3);

	/* The wrong message waited as unexpected: found when the step comes. */
	cenv_init(2, 0, 65536);
	sgroups(2, 1);
	REQUIRE(percs_sw_iallreduce(sg[1], PERCS_SW_RECDBL, in[1], out[1], 64,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
				    &req[1]) == 0);
	CHECK_EQ(percs_coll_progress(cw[0]->w), 0);
	CHECK(sg[0]->unexp != NULL);
	REQUIRE(percs_sw_iallreduce(sg[0], PERCS_SW_RECDBL, in[0], out[0], 32,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
				    &req[0]) == 0);
	CHECK_EQ(percs_coll_test(req[0]), -EPROTO);
	CHECK_EQ(percs_coll_req_free(req[0]), 0);
	CHECK_EQ(percs_sw_group_destroy(sg[0]), 0);
	cenv_fini(2);

	/* Rank 1's window does not exist: the send completes -ECONNREFUSED. */
	cenv_init(1, 0, 65536);
	a[0] = cw[0]->addr;
	a[1] = (struct percs_addr){ .hub = 9, .window = 9 };
	REQUIRE(percs_sw_group_create(cw[0]->w, a, 2, 4, &g) == 0);
	CHECK_EQ(percs_sw_allreduce(g, PERCS_SW_RECDBL, in[0], out[0], 8,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM),
		 -ECONNREFUSED);
	CHECK_EQ(percs_cq_poll(cw[0]->w, c, 4), 0);
	CHECK_EQ(percs_sw_group_destroy(g), 0);
	cenv_fini(1);
}

/* percs_coll_combine() and percs_coll_type_size(). */
static void test_coll_combine(void)
{
	double x[20], y[20];
	uint32_t u[3] = { 1, 5, 9 }, v[3] = { 4, 2, 9 };
	float nan_a, nan_b, fz[2] = { -0.0f, 0.0f }, fw[2] = { 0.0f, -0.0f };
	uint32_t bits;

	CHECK_EQ(percs_coll_type_size(PERCS_CAU_T_S32), 4);
	CHECK_EQ(percs_coll_type_size(PERCS_CAU_T_F64), 8);
	CHECK_EQ(percs_coll_type_size(9), 0);
	for (int i = 0; i < 20; i++) {
		x[i] = i;
		y[i] = 0.5 * i;
	}
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_SUM, PERCS_CAU_T_F64, 20, x,
				    y), 0);
	CHECK(x[19] == 19 * 1.5);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_MAX, PERCS_CAU_T_U32, 3, u,
				    v), 0);
	CHECK(u[0] == 4 && u[1] == 5 && u[2] == 9);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_XOR, PERCS_CAU_T_F64, 1, x,
				    y), -EINVAL);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_PROD, PERCS_CAU_T_S64, 1, x,
				    y), -EINVAL);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_SUM, PERCS_CAU_T_S64, 1, NULL,
				    y), -EINVAL);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_SUM, PERCS_CAU_T_S64, 0, NULL,
				    NULL), 0);
	/* MIN: -0.0 below +0.0 either way; the first NaN wins. */
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_MIN, PERCS_CAU_T_F32, 2, fz,
				    fw), 0);
	memcpy(&bits, &fz[0], 4);
	CHECK_EQ(bits, 0x80000000);
	memcpy(&bits, &fz[1], 4);
	CHECK_EQ(bits, 0x80000000);
	bits = 0x7fc00001;
	memcpy(&nan_a, &bits, 4);
	bits = 0x7fc00002;
	memcpy(&nan_b, &bits, 4);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_MAX, PERCS_CAU_T_F32, 1,
				    &nan_a, &nan_b), 0);
	memcpy(&bits, &nan_a, 4);
	CHECK_EQ(bits, 0x7fc00001);
}

const struct unit_test sw_tests[] = {
	{ "sw: allreduce binomial, recursive doubling, Rabenseifner on 1-11 ranks, exact, same bits everywhere", test_sw_allreduce },
	{ "sw: reduce and bcast from every root, barriers of every algorithm", test_sw_reduce_bcast_barrier },
	{ "sw: concurrent collectives on two groups, a late rank, a group created after its messages came", test_sw_concurrent_and_late },
	{ "sw: group and argument errors, -EPROTO, a member window gone", test_sw_errors },
	{ "coll: percs_coll_combine() is the CAU's ALU", test_coll_combine },
	{ NULL, NULL }
};
