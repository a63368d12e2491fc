// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the completion queue and the wait fast path.
 */
#include "unit.h"

/* Completions: errors always, successes with NOTIFY; head in doorbell. */
static void test_cq(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 16384, 0);
	struct percs_addr nowhere = { .window = 9 }, far = { .hub = 5 };
	struct percs_cqe c[8];
	uint8_t buf[8] = { 0 }, out[8];
	uint64_t want = 0;

	CHECK_EQ(percs_cq_poll(a->w, c, 8), 0);
	CHECK_EQ(percs_cq_poll(a->w, c, -1), -EINVAL);
	CHECK_EQ(percs_cq_poll(a->w, NULL, 0), 0);
	CHECK_EQ(percs_send(a->w, &nowhere, buf, 8, 11, 0), 0);
	CHECK_EQ(percs_send(a->w, &far, buf, 8, 12, 0), 0);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 13, 0), 0);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 14, PERCS_PKT_F_NOTIFY), 0);
	CHECK_EQ(percs_cq_poll(a->w, c, 1), 1);
	CHECK_EQ(c[0].res, -ECONNREFUSED);
	CHECK_EQ(c[0].user_data, 11);
	CHECK_EQ(c[0].kind, PERCS_PKT_FIFO);
	CHECK_EQ(a->db->cq_head, 1);
	CHECK_EQ(percs_cq_poll(a->w, c, 8), 2);
	CHECK_EQ(c[0].res, -EHOSTUNREACH);
	CHECK_EQ(c[0].user_data, 12);
	CHECK_EQ(c[1].res, 0);
	CHECK_EQ(c[1].user_data, 14);
	CHECK_EQ(a->db->cq_head, 3);
	CHECK_EQ(percs_cq_poll(a->w, c, 8), 0);
	while (percs_recv(b->w, NULL, out, sizeof(out)) >= 0)
		;

	/* Wrap the 256-entry ring several times, taking odd batches. */
	for (int i = 0; i < 1000; i++) {
		CHECK_EQ(percs_send(a->w, &nowhere, buf, 0, 100 + i, 0), 0);
		if (i % 5 == 4 || i == 999) {
			int n;

			while ((n = percs_cq_poll(a->w, c, 3)) > 0)
				for (int j = 0; j < n; j++, want++) {
					CHECK_EQ(c[j].user_data, 100 + want);
					CHECK_EQ(c[j].res, -ECONNREFUSED);
				}
		}
	}
	CHECK_EQ(want, 1000);
	CHECK_EQ(a->db->cq_head, 1003);
	CHECK_EQ(a->st->cq_overflows, 0);
	CHECK_EQ(a->st->send_errors, 1002);
	CHECK_EQ(a->st->packets_sent, 1004);

	/* A bogus cq_tail never yields more than one ring. */
	a->st->cq_tail += 5000;
	CHECK_EQ(percs_cq_poll(a->w, c, 8), 8);
	fwin_free(a);
	fwin_free(b);
}

/* percs_wait() answers from the rings first and credits before sleeping. */
static void test_wait_fast_path(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	struct percs_addr nowhere = { .window = 9 };
	uint8_t buf[8] = { 0 };
	struct percs_cqe c;

	/* fd -1: poll(2) ignores it, so "nothing" is a timeout. */
	CHECK_EQ(percs_wait(b->w, 0), 0);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 0, 0), 0);
	CHECK_EQ(percs_wait(b->w, 1000), 1);
	REQUIRE(percs_recv_peek(b->w));
	percs_recv_consume(b->w);
	CHECK_EQ(b->db->recv_head, 0);
	CHECK_EQ(percs_wait(b->w, 0), 0);
	CHECK_EQ(b->db->recv_head, 1);
	CHECK_EQ(percs_send(a->w, &nowhere, buf, 8, 0, 0), 0);
	CHECK_EQ(percs_wait(a->w, 1000), 1);
	CHECK_EQ(percs_cq_poll(a->w, &c, 1), 1);
	CHECK_EQ(percs_wait(a->w, 0), 0);
	fwin_free(a);
	fwin_free(b);
}

const struct unit_test cq_tests[] = {
	{ "cq: consumption, wrap, head published", test_cq },
	{ "wait: ready rings answer without sleeping", test_wait_fast_path },
	{ NULL, NULL }
};
