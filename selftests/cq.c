// SPDX-License-Identifier: GPL-2.0
/*
 * cq: a window's completion queue as a program sees it.
 *
 * Overflow is visible without a system call (the status page's counter and
 * flag) and percs_cq_poll() says so once with -EOVERFLOW, then hands out
 * the entries that did fit; percs_cq_limit() keeps a program's own
 * operations from overflowing it (-ENOBUFS beyond the limit, one paid back
 * per entry returned, entries of failed sends that asked for none marked
 * PERCS_CQE_F_UNASKED and not paid back); the two notify flags on a
 * network that holds nothing back both complete with the packet in place.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO	PERCS_FIFO_DEF_SIZE	/* 512 one-unit packets */

FIXTURE(cq) {
	uint32_t key;
	struct percs_hfi *hfi;
	struct percs_window *tx, *rx;
	struct percs_addr dst;
};

FIXTURE_SETUP(cq)
{
	PT_REQUIRE_DEVICE();
	self->key = pt_new_key();
	ASSERT_EQ(0, pt_hfi_open(0, 0, &self->hfi));
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO, FIFO, self->key,
				PERCS_WINDOW_ANY, &self->tx));
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO, FIFO, self->key,
				PERCS_WINDOW_ANY, &self->rx));
	self->dst = percs_window_addr(self->rx);
}

FIXTURE_TEARDOWN(cq)
{
	if (self->tx)
		percs_window_release(self->tx);
	if (self->rx)
		percs_window_release(self->rx);
	if (self->hfi)
		percs_hfi_close(self->hfi);
}

/* Take every entry there is; Return: how many, or the first -errno. */
static int cq_take_all(struct percs_window *w)
{
	struct percs_cqe c[64];
	int n = 0, k;

	while ((k = percs_cq_poll(w, c, 64)) > 0)
		n += k;
	return k < 0 ? k : n;
}

/* Take every packet waiting in @w's receive FIFO. */
static void rx_drain(struct percs_window *w)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];

	while (percs_recv(w, NULL, buf, sizeof(buf)) >= 0)
		;
}

/* An address on this HFI where no window is reserved. */
static struct percs_addr nowhere(const struct percs_addr *near)
{
	struct percs_addr a = *near;

	a.window = 250;
	return a;
}

TEST_F(cq, overflow_seen_in_the_status_page_and_by_poll)
{
	const volatile struct percs_status *st = percs_window_status(self->tx);
	unsigned int i, n = PERCS_CQ_ENTRIES + 44;
	struct percs_cqe c;

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pt_send(self->tx, &self->dst, &i, sizeof(i), i,
				     PERCS_PKT_F_NOTIFY, PT_TIMEOUT_MS));
	/* The HFI dropped what did not fit, and says so in shared memory. */
	EXPECT_EQ(44, st->cq_overflows);
	EXPECT_TRUE(st->flags & PERCS_STATUS_CQ_OVERFLOW);
	EXPECT_EQ(PERCS_CQ_ENTRIES, st->cq_tail);
	/* Poll says it once, then hands out the entries that fit, in order. */
	EXPECT_EQ(-EOVERFLOW, percs_cq_poll(self->tx, &c, 1));
	for (i = 0; i < PERCS_CQ_ENTRIES; i++) {
		ASSERT_EQ(1, percs_cq_poll(self->tx, &c, 1));
		ASSERT_EQ(i, c.user_data);
		ASSERT_EQ(0, c.res);
	}
	EXPECT_EQ(0, percs_cq_poll(self->tx, &c, 1));
	rx_drain(self->rx);
	/* A new overflow is reported again, once. */
	for (i = 0; i < PERCS_CQ_ENTRIES + 1; i++)
		ASSERT_EQ(0, pt_send(self->tx, &self->dst, &i, sizeof(i), i,
				     PERCS_PKT_F_NOTIFY, PT_TIMEOUT_MS));
	EXPECT_EQ(45, st->cq_overflows);
	EXPECT_EQ(-EOVERFLOW, percs_cq_poll(self->tx, &c, 1));
	EXPECT_EQ(PERCS_CQ_ENTRIES, cq_take_all(self->tx));
}

TEST_F(cq, limit_keeps_the_ring_from_overflowing)
{
	const volatile struct percs_status *st = percs_window_status(self->tx);
	unsigned int i, sent = 0, refused = 0;
	struct percs_cqe c[16];

	ASSERT_EQ(0, percs_cq_limit(self->tx, PERCS_CQ_ENTRIES));
	for (i = 0; i < PERCS_CQ_ENTRIES + 44; i++) {
		int ret = percs_send(self->tx, &self->dst, &i, sizeof(i), i,
				     PERCS_PKT_F_NOTIFY);

		ASSERT_TRUE(ret == 0 || ret == -ENOBUFS);
		sent += !ret;
		refused += ret == -ENOBUFS;
	}
	EXPECT_EQ(PERCS_CQ_ENTRIES, sent);
	EXPECT_EQ(44, refused);
	EXPECT_EQ(0, st->cq_overflows);
	/* Sends that ask for nothing are not bounded. */
	EXPECT_EQ(0, percs_send(self->tx, &self->dst, &i, sizeof(i), 0, 0));
	/* Each entry returned makes room for one more. */
	ASSERT_EQ(16, percs_cq_poll(self->tx, c, 16));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, percs_send(self->tx, &self->dst, &i, sizeof(i), i,
					PERCS_PKT_F_NOTIFY_REMOTE));
	EXPECT_EQ(-ENOBUFS, percs_send(self->tx, &self->dst, &i, sizeof(i), 0,
				       PERCS_PKT_F_NOTIFY));
	EXPECT_EQ(PERCS_CQ_ENTRIES, cq_take_all(self->tx));
	EXPECT_EQ(0, st->cq_overflows);
}

/* RDMA descriptors always ask for an entry: they count against it too. */
TEST_F(cq, limit_counts_rdma)
{
	struct pt_side a, b;
	struct percs_cqe c;
	int i;

	ASSERT_EQ(0, pt_side_open(&a, 0, 0, self->key, 4096,
				  PERCS_ACCESS_LOCAL_WRITE, PT_SIDE_PREFAULT));
	ASSERT_EQ(0, pt_side_open(&b, 1, 0, self->key, 4096,
				  PERCS_ACCESS_REMOTE_WRITE, PT_SIDE_PREFAULT));
	ASSERT_EQ(0, percs_cq_limit(a.w, 4));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, percs_rdma_write(a.w, &b.addr, b.mr,
					      (uintptr_t)b.buf, a.mr, a.buf,
					      64, 0, i));
	EXPECT_EQ(-ENOBUFS, percs_rdma_write(a.w, &b.addr, b.mr,
					     (uintptr_t)b.buf, a.mr, a.buf, 64,
					     0, 9));
	ASSERT_EQ(1, pt_cq_wait(a.w, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(0, percs_rdma_write(a.w, &b.addr, b.mr, (uintptr_t)b.buf,
				      a.mr, a.buf, 64, 0, 4));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(1, pt_cq_wait(a.w, &c, PT_TIMEOUT_MS));
	/* No limit: as many as the FIFO takes. */
	ASSERT_EQ(0, percs_cq_limit(a.w, 0));
	for (i = 0; i < 8; i++)
		EXPECT_EQ(0, percs_rdma_write(a.w, &b.addr, b.mr,
					      (uintptr_t)b.buf, a.mr, a.buf,
					      64, 0, i));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(1, pt_cq_wait(a.w, &c, PT_TIMEOUT_MS));
	pt_side_close(&a);
	pt_side_close(&b);
}

TEST_F(cq, limit_bad_arguments)
{
	EXPECT_EQ(-EINVAL, percs_cq_limit(NULL, 1));
	EXPECT_EQ(-EINVAL, percs_cq_limit(self->tx, PERCS_CQ_ENTRIES + 1));
	EXPECT_EQ(0, percs_cq_limit(self->tx, 1));
	EXPECT_EQ(0, percs_cq_limit(self->tx, 0));
}

/*
 * A failed send that asked for nothing still posts an entry, marked
 * UNASKED, and it pays nothing back.
 */
TEST_F(cq, unasked_failures_are_marked_and_not_paid_back)
{
	struct percs_addr gone = nowhere(&self->dst);
	struct percs_cqe c;
	int x = 1;

	ASSERT_EQ(0, percs_cq_limit(self->tx, 1));
	ASSERT_EQ(0, percs_send(self->tx, &gone, &x, sizeof(x), 7, 0));
	ASSERT_EQ(0, percs_send(self->tx, &self->dst, &x, sizeof(x), 8,
				PERCS_PKT_F_NOTIFY));
	ASSERT_EQ(1, pt_cq_wait(self->tx, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(7, c.user_data);
	EXPECT_EQ(-ECONNREFUSED, c.res);
	EXPECT_TRUE(c.flags & PERCS_CQE_F_UNASKED);
	/* The notified send's entry is still owed. */
	EXPECT_EQ(-ENOBUFS, percs_send(self->tx, &self->dst, &x, sizeof(x), 9,
				       PERCS_PKT_F_NOTIFY));
	ASSERT_EQ(1, pt_cq_wait(self->tx, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(8, c.user_data);
	EXPECT_EQ(0, c.res);
	EXPECT_FALSE(c.flags & PERCS_CQE_F_UNASKED);
	EXPECT_EQ(0, percs_send(self->tx, &self->dst, &x, sizeof(x), 9,
				PERCS_PKT_F_NOTIFY));
	/* A failure that was asked about is not marked. */
	ASSERT_EQ(1, pt_cq_wait(self->tx, &c, PT_TIMEOUT_MS));
	ASSERT_EQ(0, percs_cq_limit(self->tx, 0));
	ASSERT_EQ(0, percs_send(self->tx, &gone, &x, sizeof(x), 10,
				PERCS_PKT_F_NOTIFY_REMOTE));
	ASSERT_EQ(1, pt_cq_wait(self->tx, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(-ECONNREFUSED, c.res);
	EXPECT_FALSE(c.flags & PERCS_CQE_F_UNASKED);
}

/*
 * With nothing held back by the network, both flags complete once the
 * packet is in the receive FIFO; the immediate short form asks nothing.
 */
TEST_F(cq, notify_flags_without_faults)
{
	const volatile struct percs_status *rst = percs_window_status(self->rx);
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_IMM, .flags = PERCS_PKT_F_NOTIFY_REMOTE,
		.dst = self->dst, .tag = 3,
	};
	unsigned char buf[PERCS_IMM_PAYLOAD] = { 0 };
	struct percs_cqe c;

	ASSERT_EQ(0, pt_send(self->tx, &self->dst, buf, 8, 1,
			     PERCS_PKT_F_NOTIFY, PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(self->tx, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(1, rst->packets_received);
	ASSERT_EQ(0, pt_send(self->tx, &self->dst, buf, 8, 2,
			     PERCS_PKT_F_NOTIFY_REMOTE, PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(self->tx, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(2, c.user_data);
	EXPECT_EQ(2, rst->packets_received);
	ASSERT_EQ(0, percs_icswx_hdr(self->tx, &h, buf, sizeof(buf)));
	ASSERT_EQ(1, pt_cq_wait(self->tx, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(3, c.user_data);
	EXPECT_EQ(PERCS_CQE_F_IMM, c.flags);
	EXPECT_EQ(3, rst->packets_received);
	ASSERT_EQ(0, pt_icswx(self->tx, &self->dst, buf, 8, 4,
			      PT_TIMEOUT_MS));
	usleep(10000);
	EXPECT_EQ(4, rst->packets_received);
	EXPECT_EQ(0, percs_cq_poll(self->tx, &c, 1));
}

TEST_HARNESS_MAIN
