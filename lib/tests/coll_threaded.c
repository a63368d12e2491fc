// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: collectives from threads through a polling engine.
 */
#include "unit.h"

struct crank {
	unsigned int rank, n;
	unsigned int bad;
};

static void *crank_thread(void *p)
{
	struct crank *c = p;
	unsigned int r = c->rank, n = c->n;
	struct percs_sw_group *g;
	uint64_t in[300], out[300], ref[300];
	uint8_t b[500];

	if (percs_sw_group_create(cw[r]->w, caddrs(n), n, 11, &g)) {
		c->bad++;
		return NULL;
	}
	for (unsigned int it = 0; it < 60; it++) {
		unsigned int algo = it % 4, cnt = 1 + (it * 37) % 300;

		cfill(in, cnt, PERCS_CAU_T_U64, r, it);
		cref(ref, cnt, PERCS_CAU_T_U64, PERCS_CAU_OP_SUM, n, it);
		if (percs_sw_allreduce(g, algo, in, out, cnt, PERCS_CAU_T_U64,
				       PERCS_CAU_OP_SUM) ||
		    memcmp(out, ref, cnt * 8))
			c->bad++;
		if (percs_cau_allreduce(ct[r], in, out, cnt, PERCS_CAU_T_U64,
					PERCS_CAU_OP_SUM) ||
		    memcmp(out, ref, cnt * 8))
			c->bad++;
		if (r == it % n)
			fill(b, sizeof(b), it);
		else
			memset(b, 0, sizeof(b));
		if (percs_sw_bcast(g, 0, it % n, b, sizeof(b)) ||
		    !pattern_ok(b, sizeof(b), it))
			c->bad++;
		memset(b, 0, sizeof(b));
		if (r == it % n)
			fill(b, sizeof(b), it + 1);
		if (percs_cau_bcast(ct[r], it % n, b, sizeof(b)) ||
		    !pattern_ok(b, sizeof(b), it + 1))
			c->bad++;
		if (percs_sw_barrier(g, it % 3 + 2 == 3 ? 1 : it % 3 + 2) ||
		    percs_cau_barrier(ct[r]))
			c->bad++;
	}
	if (percs_sw_group_destroy(g))
		c->bad++;
	return NULL;
}

static void test_coll_threaded_poll_mode(void)
{
	const unsigned int n = 6;
	struct crank c[NWIN];
	pthread_t e, t[NWIN];

	cenv_init(n, PERCS_WINDOW_F_POLL, 8192);
	REQUIRE(ctrees(n, PERCS_CAU_F_ORDERED, 2, 0) == 0);
	H.threaded = true;
	sem_init(&H.wake, 0, 0);
	REQUIRE(!pthread_create(&e, NULL, engine_thread, NULL));
	for (unsigned int i = 0; i < n; i++) {
		c[i] = (struct crank){ .rank = i, .n = n };
		REQUIRE(!pthread_create(&t[i], NULL, crank_thread, &c[i]));
	}
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(c[i].bad, 0);
	}
	__atomic_store_n(&engine_stop, true, __ATOMIC_RELEASE);
	sem_post(&H.wake);
	pthread_join(e, NULL);
	H.threaded = false;
	CHECK_EQ(lost_wakeups, 0);
	CHECK_EQ(FC.busy, 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
	sem_destroy(&H.wake);
}

const struct unit_test coll_threaded_tests[] = {
	{ "coll: threaded ranks with blocking CAU and software calls through a polling engine", test_coll_threaded_poll_mode },
	{ NULL, NULL }
};
