// SPDX-License-Identifier: GPL-2.0
/*
 * rdma: RDMA write, read and FIFO-to-memory between registered memory of
 * two windows, on the 3x4 topology of rdma.modparams so that every route
 * class exists (same window, same HFI, same hub, same supernode, other
 * supernode) and every route mode can be followed.
 *
 * Data is checked byte for byte, with the bytes around the target range
 * checked untouched, at the moment the completion arrives (so "complete
 * only when all landed" is tested, with the reorder knob up as well).
 * Fences, every protection status with the target untouched, target
 * notifications, and lifetime: munmap of registered ranges, deregistration
 * and window close with transfers in flight, a process killed in the middle
 * of large transfers both ways; afterwards the live counters (registrations,
 * pinned pages, packets in flight) drain to zero.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO		PERCS_FIFO_DEF_SIZE
#define PAGE		4096UL
#define BUF		(4UL << 20)	/* each side's registered buffer */
#define GUARD		64		/* bytes checked untouched around */
#define ALL_RIGHTS	(PERCS_ACCESS_LOCAL_WRITE | PERCS_ACCESS_REMOTE_READ | \
			 PERCS_ACCESS_REMOTE_WRITE)

/* One side: a window and a registered buffer of BUF bytes. */
static int side_open(struct pt_side *s, unsigned int hub, unsigned int unit,
		     uint32_t key, uint32_t access)
{
	return pt_side_open(s, hub, unit, key, BUF, access, 0);
}

/* Post one operation and wait for its completion; the CQE's res. */
static int rdma_wait(struct percs_window *w, const struct percs_rdma_wr *wr,
		     struct percs_cqe *cqe)
{
	struct percs_cqe c;
	int ret = percs_rdma_post(w, wr);

	if (ret)
		return ret;
	ret = pt_cq_wait(w, &c, PT_TIMEOUT_MS);
	if (ret < 0)
		return 1000 + ret;
	if (c.user_data != wr->user_data || c.kind != PERCS_PKT_RDMA)
		return 2000;
	if (cqe)
		*cqe = c;
	return c.res;
}

static struct percs_rdma_wr wr_of(uint8_t op, const struct pt_side *to,
				  uint64_t roff, const struct pt_side *from,
				  uint64_t loff, uint64_t len, uint64_t ud)
{
	struct percs_rdma_wr wr = {
		.op = op, .dst = to->addr, .remote_handle = to->mr,
		.remote_addr = (uintptr_t)to->buf + roff,
		.local_handle = from ? from->mr : 0,
		.local_addr = from ? from->buf + loff : NULL,
		.len = len, .user_data = ud,
	};

	return wr;
}

/* Where the second window of a test is, relative to hub 0 unit 0. */
struct place {
	const char *name;
	unsigned int hub, unit;
	bool same_window;
};

static const struct place places[] = {
	{ "same window", 0, 0, true },
	{ "same HFI", 0, 0, false },
	{ "other HFI", 0, 1, false },
	{ "same supernode", 2, 1, false },
	{ "other supernode", 5, 0, false },
	{ "third supernode", 11, 1, false },
};

#define HUBS_PER_SN	4

/* A valid intermediate supernode for sw_indirect from hub 0 to @hub. */
static uint16_t via_sn(unsigned int hub)
{
	unsigned int sn = hub / HUBS_PER_SN;

	return sn == 1 ? 2 : 1;
}

FIXTURE(rdma) {
	uint32_t key;
	struct pt_side a, b;
	long saved_ppm, saved_depth, saved_hold;
};

FIXTURE_SETUP(rdma)
{
	PT_REQUIRE_DEVICE();
	self->key = pt_new_key();
	self->saved_ppm = pt_isr_read("reorder_ppm");
	self->saved_depth = pt_isr_read("reorder_depth");
	self->saved_hold = pt_isr_read("hold_us");
	ASSERT_EQ(0, side_open(&self->a, 0, 0, self->key, ALL_RIGHTS));
	ASSERT_EQ(0, side_open(&self->b, 1, 1, self->key, ALL_RIGHTS));
}

FIXTURE_TEARDOWN(rdma)
{
	pt_side_close(&self->a);
	pt_side_close(&self->b);
	if (self->saved_ppm >= 0)
		pt_isr_set("reorder_ppm", self->saved_ppm);
	if (self->saved_depth > 0)
		pt_isr_set("reorder_depth", self->saved_depth);
	if (self->saved_hold > 0)
		pt_isr_set("hold_us", self->saved_hold);
	EXPECT_TRUE(pt_wait_mrs(0, 0, PT_TIMEOUT_MS));
	ASSERT_LIVE_ZERO();
}

/*
 * Random transfers from a to a window at @p with route mode @mode: each
 * checked byte for byte when its completion arrives, guards untouched.
 */
static void random_rw(struct __test_metadata *_metadata, struct pt_side *a,
		      const struct place *p, uint32_t key, uint8_t op,
		      uint8_t mode, unsigned int rounds, uint64_t maxlen,
		      uint64_t seed)
{
	struct pt_side other, *t = &other;
	unsigned int i;

	if (p->same_window) {
		t = a;
	} else {
		ASSERT_EQ(0, side_open(&other, p->hub, p->unit, key,
				       ALL_RIGHTS));
	}
	srandom(seed);
	for (i = 0; i < rounds; i++) {
		uint64_t len = 1 + random() % (op == PERCS_RDMA_OP_FIFO_WRITE ?
					       PERCS_RDMA_FIFO_MAX : maxlen);
		uint64_t span = BUF / 2 - len - 2 * GUARD;
		uint64_t soff = GUARD + random() % span;
		uint64_t doff = GUARD + random() % span;
		struct pt_side *src = op == PERCS_RDMA_OP_READ ? t : a;
		struct pt_side *dst = op == PERCS_RDMA_OP_READ ? a : t;
		struct percs_rdma_wr wr;
		uint8_t *want;

		if (t == a)	/* one buffer: source low half, target high */
			doff += BUF / 2;
		pt_fill(src->buf + soff, len, seed + i);
		memset(dst->buf + doff - GUARD, 0xa5, len + 2 * GUARD);
		if (op == PERCS_RDMA_OP_READ)
			wr = wr_of(op, t, soff, a, doff, len, i);
		else if (op == PERCS_RDMA_OP_WRITE)
			wr = wr_of(op, t, doff, a, soff, len, i);
		else
			wr = wr_of(op, t, doff, NULL, 0, len, i);
		if (op == PERCS_RDMA_OP_FIFO_WRITE)
			wr.local_addr = src->buf + soff;
		wr.route = mode;
		if (mode == PERCS_ROUTE_SW_INDIRECT)
			wr.route_arg = via_sn(p->hub);
		ASSERT_EQ(0, rdma_wait(a->w, &wr, NULL)) {
			TH_LOG("%s mode %u op %u len %llu", p->name, mode, op,
			       (unsigned long long)len);
		}
		want = malloc(len);
		ASSERT_NE(NULL, want);
		pt_fill(want, len, seed + i);
		ASSERT_EQ(0, memcmp(dst->buf + doff, want, len)) {
			TH_LOG("%s mode %u op %u len %llu: data differ",
			       p->name, mode, op, (unsigned long long)len);
		}
		free(want);
		for (uint64_t g = 0; g < GUARD; g++) {
			ASSERT_EQ(0xa5, dst->buf[doff - GUARD + g]);
			ASSERT_EQ(0xa5, dst->buf[doff + len + g]);
		}
	}
	if (!p->same_window)
		pt_side_close(&other);
}

static void every_place_mode(struct __test_metadata *_metadata,
			     struct pt_side *a, uint32_t key, uint8_t op,
			     unsigned int rounds, uint64_t maxlen)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(places); i++)
		for (uint8_t m = 0; m <= PERCS_ROUTE_MAX; m++)
			random_rw(_metadata, a, &places[i], key, op, m, rounds,
				  maxlen, 1000 * i + 100 * m + op);
}

TEST_F(rdma, write_every_route_class_and_mode)
{
	every_place_mode(_metadata, &self->a, self->key, PERCS_RDMA_OP_WRITE,
			 pt_scale(6), 300000);
}

TEST_F(rdma, read_every_route_class_and_mode)
{
	every_place_mode(_metadata, &self->a, self->key, PERCS_RDMA_OP_READ,
			 pt_scale(6), 300000);
}

TEST_F(rdma, fifo_write_every_route_class_and_mode)
{
	every_place_mode(_metadata, &self->a, self->key,
			 PERCS_RDMA_OP_FIFO_WRITE, pt_scale(6),
			 PERCS_RDMA_FIFO_MAX);
}

/* Small and page-edge sizes, unaligned both sides. */
TEST_F(rdma, write_read_edge_sizes)
{
	static const uint64_t lens[] = {
		1, 7, 8, 9, 1967, 1968, 1969, 4095, 4096, 4097, 8191, 65537,
		(1 << 20) + 3,
	};
	static const uint64_t offs[] = { 0, 1, 4095, 4096 - 7, 12345 };

	for (unsigned int i = 0; i < ARRAY_SIZE(lens); i++) {
		for (unsigned int j = 0; j < ARRAY_SIZE(offs); j++) {
			uint64_t so = GUARD + offs[j], d = GUARD + offs[(j + 1) % 5];
			struct percs_rdma_wr wr;

			pt_fill(self->a.buf + so, lens[i], i * 7 + j);
			memset(self->b.buf, 0, lens[i] + 2 * GUARD + 16384);
			wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, d, &self->a,
				   so, lens[i], j);
			ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
			ASSERT_EQ(0, memcmp(self->b.buf + d, self->a.buf + so,
					    lens[i]));
			ASSERT_EQ(0, self->b.buf[d - 1]);
			ASSERT_EQ(0, self->b.buf[d + lens[i]]);
			/* And back with a read to another place. */
			memset(self->a.buf + BUF / 2, 0, lens[i] + 16);
			wr = wr_of(PERCS_RDMA_OP_READ, &self->b, d, &self->a,
				   BUF / 2 + offs[j], lens[i], j);
			ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
			ASSERT_EQ(0, memcmp(self->a.buf + BUF / 2 + offs[j],
					    self->a.buf + so, lens[i]));
		}
	}
}

/*
 * Reordering turned up: completions still come only after every byte
 * landed; the network did hold RDMA packets back.
 */
TEST_F(rdma, reordered_complete_only_when_all_landed)
{
	long held0 = pt_stat_field(PT_ISR_DIR "flight", "held");

	ASSERT_EQ(0, pt_isr_set("reorder_depth", 16));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 300000));
	for (uint8_t op = 0; op <= PERCS_RDMA_OP_READ; op++)
		for (unsigned int i = 1; i < ARRAY_SIZE(places); i++)
			random_rw(_metadata, &self->a, &places[i], self->key,
				  op, PERCS_ROUTE_DIRECT, pt_scale(3), 400000,
				  77 + i + op);
	EXPECT_LT(held0, pt_stat_field(PT_ISR_DIR "flight", "held"));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 0));
}

/* Many operations outstanding, then all completions, each with its data. */
TEST_F(rdma, many_outstanding_writes)
{
	const unsigned int n = 200;
	const uint64_t len = 10000;
	struct percs_cqe c;
	unsigned int got = 0;
	uint8_t seen[200] = { 0 };

	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 100000));
	for (unsigned int i = 0; i < n; i++) {
		struct percs_rdma_wr wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b,
						i * len, &self->a, i * len,
						len, i);

		pt_fill(self->a.buf + i * len, len, i);
		ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
	}
	while (got < n) {
		ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, PT_TIMEOUT_MS));
		ASSERT_EQ(0, c.res);
		ASSERT_GT(n, c.user_data);
		ASSERT_EQ(0, seen[c.user_data]);
		seen[c.user_data] = 1;
		ASSERT_EQ(0, memcmp(self->b.buf + c.user_data * len,
				    self->a.buf + c.user_data * len, len));
		got++;
	}
	ASSERT_EQ(0, percs_cq_poll(self->a.w, &c, 1));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 0));
}

/*
 * Fences: unfenced writes, then a fenced read of everything they wrote
 * sees all of them; a fenced write after a write to the same bytes wins.
 * With reordering up, so the earlier writes are still in flight.
 */
TEST_F(rdma, fenced_read_sees_earlier_writes)
{
	const unsigned int n = 16;
	const uint64_t len = 65536;
	struct percs_rdma_wr wr;
	struct percs_cqe c;
	unsigned int rounds = pt_scale(5);

	ASSERT_EQ(0, pt_isr_set("reorder_depth", 32));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 500000));
	for (unsigned int r = 0; r < rounds; r++) {
		pt_fill(self->a.buf, n * len, r);
		memset(self->b.buf, 0, n * len);
		memset(self->a.buf + BUF / 2, 0xee, n * len);
		for (unsigned int i = 0; i < n; i++) {
			wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, i * len,
				   &self->a, i * len, len, i);
			ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
		}
		wr = wr_of(PERCS_RDMA_OP_READ, &self->b, 0, &self->a, BUF / 2,
			   n * len, 100);
		wr.flags = PERCS_RDMA_F_FENCE;
		ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
		for (unsigned int i = 0; i <= n; i++) {
			ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, PT_TIMEOUT_MS));
			ASSERT_EQ(0, c.res);
			/* The fenced read completes last. */
			if (i < n)
				ASSERT_GT(100, c.user_data);
		}
		ASSERT_EQ(100, c.user_data);
		ASSERT_EQ(0, memcmp(self->a.buf + BUF / 2, self->a.buf,
				    n * len));
	}
	/* Write then fenced write of the same bytes: the second one stays. */
	pt_fill(self->a.buf, len, 1);
	pt_fill(self->a.buf + len, len, 2);
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0, &self->a, 0, len, 1);
	ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0, &self->a, len, len, 2);
	wr.flags = PERCS_RDMA_F_FENCE;
	ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
	ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, PT_TIMEOUT_MS));
	ASSERT_EQ(1, c.user_data);
	ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, PT_TIMEOUT_MS));
	ASSERT_EQ(2, c.user_data);
	ASSERT_EQ(0, memcmp(self->b.buf, self->a.buf + len, len));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 0));
}

/* The target is told when asked, with the operation's user_data. */
TEST_F(rdma, notify_target)
{
	struct percs_rdma_wr wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0,
					&self->a, 0, 5000, 0x77);
	struct percs_cqe c;

	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	ASSERT_EQ(0, percs_cq_poll(self->b.w, &c, 1));
	wr.flags = PERCS_RDMA_F_NOTIFY_TARGET;
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	ASSERT_EQ(1, pt_cq_wait(self->b.w, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(0x77, c.user_data);
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(PERCS_PKT_RDMA, c.kind);
	EXPECT_EQ(PERCS_CQE_F_REMOTE, c.flags);
}

/* One protection case: its status and flags, the target untouched. */
static void expect_refused(struct __test_metadata *_metadata,
			   struct percs_window *w,
			   const struct percs_rdma_wr *wr, const uint8_t *tgt,
			   size_t tlen, int want, uint8_t want_flags)
{
	uint64_t sum = pt_checksum(tgt, tlen);
	struct percs_cqe c;

	ASSERT_EQ(want, rdma_wait(w, wr, &c)) {
		TH_LOG("op %u user_data %llu", wr->op,
		       (unsigned long long)wr->user_data);
	}
	EXPECT_EQ(want_flags, c.flags);
	EXPECT_EQ(sum, pt_checksum(tgt, tlen));
}

TEST_F(rdma, protection_statuses_target_untouched)
{
	struct pt_side ro, wo, other, nolw;
	struct percs_rdma_wr wr;
	uint32_t gone;

	memset(self->b.buf, 0x3c, BUF);
	memset(self->a.buf, 0x5a, BUF);
	/* Out of range: past the end, and wrapping. */
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, BUF - 100, &self->a, 0, 101,
		   1);
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF, -ERANGE, 0);
	wr.remote_addr = (uintptr_t)self->b.buf - 1;
	wr.len = 10;
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF, -ERANGE, 0);
	/* Unknown handle, and a deregistered one. */
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0, &self->a, 0, 100, 2);
	wr.remote_handle ^= 0x10000;
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF, -ENOENT, 0);
	ASSERT_EQ(0, percs_mr_reg(self->b.w, self->b.buf, PAGE,
				  PERCS_ACCESS_REMOTE_WRITE, &gone));
	ASSERT_EQ(0, percs_mr_dereg(self->b.w, gone));
	wr.remote_handle = gone;
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF, -ENOENT, 0);
	/* Missing rights: write to read-only, read from write-only. */
	ASSERT_EQ(0, side_open(&ro, 1, 0, self->key,
			       PERCS_ACCESS_REMOTE_READ));
	memset(ro.buf, 0x11, BUF);
	wr = wr_of(PERCS_RDMA_OP_WRITE, &ro, 0, &self->a, 0, 100, 3);
	expect_refused(_metadata, self->a.w, &wr, ro.buf, BUF, -EPERM, 0);
	ASSERT_EQ(0, side_open(&wo, 2, 0, self->key,
			       PERCS_ACCESS_REMOTE_WRITE));
	memset(self->a.buf, 0x5a, PAGE);
	wr = wr_of(PERCS_RDMA_OP_READ, &wo, 0, &self->a, 0, 100, 4);
	expect_refused(_metadata, self->a.w, &wr, self->a.buf, BUF, -EPERM, 0);
	/* The initiator's side: no LOCAL_WRITE for a read, bad handle. */
	ASSERT_EQ(0, side_open(&nolw, 0, 1, self->key,
			       PERCS_ACCESS_REMOTE_READ));
	memset(nolw.buf, 0x22, BUF);
	wr = wr_of(PERCS_RDMA_OP_READ, &self->b, 0, &nolw, 0, 100, 5);
	expect_refused(_metadata, nolw.w, &wr, nolw.buf, BUF, -EPERM,
		       PERCS_CQE_F_LOCAL);
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0, &self->a, 0, 100, 6);
	wr.local_handle ^= 0x10000;
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF, -ENOENT,
		       PERCS_CQE_F_LOCAL);
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0, &self->a, BUF - 5, 100, 7);
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF, -ERANGE,
		       PERCS_CQE_F_LOCAL);
	/* Another job's window, with a registration granting everything. */
	ASSERT_EQ(0, side_open(&other, 3, 0, pt_new_key(), ALL_RIGHTS));
	memset(other.buf, 0x33, BUF);
	wr = wr_of(PERCS_RDMA_OP_WRITE, &other, 0, &self->a, 0, 100, 8);
	expect_refused(_metadata, self->a.w, &wr, other.buf, BUF, -EACCES, 0);
	wr.op = PERCS_RDMA_OP_READ;
	expect_refused(_metadata, self->a.w, &wr, self->a.buf, BUF, -EACCES, 0);
	/* Bad destinations, as for FIFO sends. */
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0, &self->a, 0, 100, 9);
	wr.dst.window = 60000;
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF,
		       -EADDRNOTAVAIL, 0);
	wr.dst = self->b.addr;
	wr.dst.hub = 100000;
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF,
		       -EHOSTUNREACH, 0);
	wr.dst = self->b.addr;
	wr.dst.window = (self->b.addr.window + 7) % 200;
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF,
		       -ECONNREFUSED, 0);
	/* Malformed descriptors: EINVAL, EMSGSIZE. */
	wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0, &self->a, 0,
		   PERCS_MR_MAX_LENGTH + 1, 10);
	expect_refused(_metadata, self->a.w, &wr, self->b.buf, BUF, -EMSGSIZE,
		       0);
	/* Everything still works afterwards. */
	wr = wr_of(PERCS_RDMA_OP_WRITE, &ro, 0, &self->a, 0, 100, 11);
	wr.dst = self->b.addr;
	wr.remote_handle = self->b.mr;
	wr.remote_addr = (uintptr_t)self->b.buf;
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	ASSERT_EQ(0x5a, self->b.buf[99]);
	pt_side_close(&ro);
	pt_side_close(&wo);
	pt_side_close(&nolw);
	pt_side_close(&other);
}

/* Raw descriptors with bad fields: each EINVAL, nothing written. */
TEST_F(rdma, bad_descriptor_einval)
{
	struct percs_rdma_ext e = {
		.op = PERCS_RDMA_OP_WRITE, .handle = self->b.mr,
		.local_handle = self->a.mr,
		.remote_addr = (uintptr_t)self->b.buf,
		.local_addr = (uintptr_t)self->a.buf, .len = 64,
	};
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_RDMA, .dst = self->b.addr,
	};
	struct percs_cqe c;
	struct percs_rdma_ext bad[6];
	unsigned int i;

	memset(self->b.buf, 0x3c, PAGE);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		bad[i] = e;
		bad[i].user_data = 50 + i;
	}
	bad[0].op = 3;
	bad[1].flags = 0x80;
	bad[2].reserved = 1;
	bad[3].reserved2 = 1;
	bad[4].len = 0;
	bad[5].op = PERCS_RDMA_OP_FIFO_WRITE;	/* local fields set */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_EQ(0, percs_send_compose_hdr(self->a.w, &h, &bad[i],
						    sizeof(bad[i])));
		ASSERT_EQ(0, percs_send_trigger(self->a.w));
		ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, PT_TIMEOUT_MS));
		EXPECT_EQ(50 + i, c.user_data);
		EXPECT_EQ(-EINVAL, c.res);
	}
	/* Too short for the extension: the header's tag is echoed. */
	h.tag = 99;
	ASSERT_EQ(0, percs_send_compose_hdr(self->a.w, &h, &e, 40));
	ASSERT_EQ(0, percs_send_trigger(self->a.w));
	ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, PT_TIMEOUT_MS));
	EXPECT_EQ(99, c.user_data);
	EXPECT_EQ(-EINVAL, c.res);
	for (i = 0; i < PAGE; i++)
		ASSERT_EQ(0x3c, self->b.buf[i]);
}

/* 16 MiB each way between supernodes, byte for byte. */
TEST_F(rdma, large_16m_both_ways)
{
	const size_t len = 16UL << 20;
	struct pt_side big_a, big_b;
	uint8_t *a, *b;
	uint32_t ha, hb;
	struct percs_rdma_wr wr;

	a = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_NE(MAP_FAILED, b);
	pt_fill(a, len, 5);
	ASSERT_EQ(0, percs_mr_reg(self->a.w, a, len, ALL_RIGHTS, &ha));
	ASSERT_EQ(0, percs_mr_reg(self->b.w, b, len, ALL_RIGHTS, &hb));
	big_a = self->a;
	big_a.buf = a;
	big_a.mr = ha;
	big_b = self->b;
	big_b.buf = b;
	big_b.mr = hb;
	wr = wr_of(PERCS_RDMA_OP_WRITE, &big_b, 0, &big_a, 0, len, 1);
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	ASSERT_EQ(0, memcmp(a, b, len));
	pt_fill(b, len, 6);
	wr = wr_of(PERCS_RDMA_OP_READ, &big_b, 0, &big_a, 0, len, 2);
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	ASSERT_EQ(0, memcmp(a, b, len));
	ASSERT_EQ(0, percs_mr_dereg(self->a.w, ha));
	ASSERT_EQ(0, percs_mr_dereg(self->b.w, hb));
	munmap(a, len);
	munmap(b, len);
}

/*
 * RLIMIT_MEMLOCK: a registration above it fails with ENOMEM; what is
 * registered within it transfers.  Run unprivileged in a child.
 */
TEST_F(rdma, memlock_limit)
{
	pid_t pid;
	int status;

	/* Before the fork: the child's copy of the buffer is not registered. */
	pt_fill(self->a.buf, 32 * PAGE, 9);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { 64 * PAGE, 64 * PAGE };
		struct pt_side c;
		uint32_t h;
		uint8_t *big;
		struct percs_rdma_wr wr;

		/* The window first: the device is root's. */
		if (pt_hfi_open(0, 0, &c.hfi) ||
		    pt_reserve(c.hfi, 0, FIFO, FIFO, self->key,
			       PERCS_WINDOW_ANY, &c.w))
			_exit(11);
		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(65534) ||
		    setuid(65534))
			_exit(10);
		big = mmap(NULL, 128 * PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (big == MAP_FAILED)
			_exit(12);
		if (percs_mr_reg(c.w, big, 128 * PAGE, ALL_RIGHTS, &h) !=
		    -ENOMEM)
			_exit(13);
		if (percs_mr_reg(c.w, big, 32 * PAGE, ALL_RIGHTS, &h))
			_exit(14);
		c.buf = big;
		c.mr = h;
		c.addr = percs_window_addr(c.w);
		wr = wr_of(PERCS_RDMA_OP_WRITE, &c, 0, &self->a, 0, 32 * PAGE,
			   1);
		/* The parent's window posts into the child's memory. */
		if (rdma_wait(self->a.w, &wr, NULL))
			_exit(15);
		_exit(memcmp(big, self->a.buf, 32 * PAGE) ? 16 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * A registered range unmapped: transfers still complete (the pages stay
 * pinned until deregistration), the process sees fresh memory there.
 */
TEST_F(rdma, munmap_registered_ranges)
{
	uint8_t *p = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct percs_rdma_wr wr;
	struct pt_side s = self->b;
	uint32_t h;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, percs_mr_reg(self->b.w, p, 64 * PAGE, ALL_RIGHTS, &h));
	s.buf = p;
	s.mr = h;
	/* Unmapped after posting, before the completion is read. */
	pt_fill(self->a.buf, 64 * PAGE, 3);
	wr = wr_of(PERCS_RDMA_OP_WRITE, &s, 0, &self->a, 0, 64 * PAGE, 1);
	ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
	ASSERT_EQ(0, munmap(p, 64 * PAGE));
	struct percs_cqe c;

	ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, PT_TIMEOUT_MS));
	ASSERT_EQ(0, c.res);
	/* Both ways after the unmap, then read back what was written. */
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	memset(self->a.buf + BUF / 2, 0, 64 * PAGE);
	wr = wr_of(PERCS_RDMA_OP_READ, &s, 0, &self->a, BUF / 2, 64 * PAGE, 2);
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	ASSERT_EQ(0, memcmp(self->a.buf + BUF / 2, self->a.buf, 64 * PAGE));
	/* The initiator's source unmapped too. */
	ASSERT_EQ(0, munmap(self->a.buf + BUF / 2, BUF / 2));
	wr = wr_of(PERCS_RDMA_OP_WRITE, &s, 0, &self->a, BUF / 2, PAGE, 3);
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	ASSERT_EQ(0, percs_mr_dereg(self->b.w, h));
	/* side_close unmaps the whole buffer: map the half back. */
	ASSERT_EQ(self->a.buf + BUF / 2,
		  mmap(self->a.buf + BUF / 2, BUF / 2, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
}

/*
 * Deregistration and window close with transfers in flight: the first
 * operation's packets are held (long hold time), the fenced ones behind it
 * wait; the target's registration goes meanwhile: the waiting ones
 * complete with ENOENT, the pages stay pinned until the held packets land.
 * Then both windows close with the same backlog; everything drains.
 */
TEST_F(rdma, close_and_dereg_with_transfers_in_flight)
{
	struct percs_rdma_wr wr;
	struct percs_cqe c;
	int ok = 0, errs = 0;
	long pinned;

	ASSERT_EQ(0, pt_isr_set("hold_us", 300000));
	ASSERT_EQ(0, pt_isr_set("reorder_depth", 64));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 500000));
	for (unsigned int i = 0; i < 8; i++) {
		wr = wr_of(i & 1 ? PERCS_RDMA_OP_READ : PERCS_RDMA_OP_WRITE,
			   &self->b, 0, &self->a, 0, BUF, i);
		wr.flags = i ? PERCS_RDMA_F_FENCE : 0;
		ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
	}
	ASSERT_EQ(0, percs_cq_poll(self->a.w, &c, 1));
	pinned = pt_stat_field(PT_DEBUGFS_LIVE, "pinned_pages");
	ASSERT_EQ(0, percs_mr_dereg(self->b.w, self->b.mr));
	/* Still pinned: the held packets of the first one hold them. */
	EXPECT_EQ(pinned, pt_stat_field(PT_DEBUGFS_LIVE, "pinned_pages"));
	for (unsigned int i = 0; i < 8; i++) {
		ASSERT_EQ(1, pt_cq_wait(self->a.w, &c, 2 * PT_TIMEOUT_MS));
		if (!c.res)
			ok++;
		else if (c.res == -ENOENT)
			errs++;
	}
	EXPECT_EQ(8, ok + errs);
	EXPECT_EQ(7, errs);
	/*
	 * The last held packet's landing dropped the last reference; the
	 * pages are unpinned by the NMMU's work queue just after (not
	 * before the completion: on a slow kernel, a moment after it).
	 */
	EXPECT_EQ(pinned - BUF / PAGE,
		  pt_wait_live_field("pinned_pages", pinned - BUF / PAGE,
				     PT_TIMEOUT_MS));
	/* Now close both windows with the same backlog. */
	ASSERT_EQ(0, percs_mr_reg(self->b.w, self->b.buf, BUF, ALL_RIGHTS,
				  &self->b.mr));
	for (unsigned int i = 0; i < 8; i++) {
		wr = wr_of(i & 1 ? PERCS_RDMA_OP_READ : PERCS_RDMA_OP_WRITE,
			   &self->b, 0, &self->a, 0, BUF, i);
		wr.flags = i ? PERCS_RDMA_F_FENCE : 0;
		ASSERT_EQ(0, percs_rdma_post(self->a.w, &wr));
	}
	percs_window_release(self->b.w);
	self->b.w = NULL;
	percs_window_release(self->a.w);
	self->a.w = NULL;
	ASSERT_TRUE(pt_wait_mrs(0, 0, PT_TIMEOUT_MS));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 0));
}

/* A child streams large transfers both ways; killed in the middle. */
static int killed_child(struct pt_side *peer, uint32_t key)
{
	struct pt_side me;
	struct percs_rdma_wr wr;
	struct percs_cqe c;

	if (side_open(&me, 4, 1, key, ALL_RIGHTS))
		return 1;
	for (unsigned int i = 0;; i++) {
		wr = wr_of(i & 1 ? PERCS_RDMA_OP_READ : PERCS_RDMA_OP_WRITE,
			   peer, 0, &me, 0, BUF, i);
		if (percs_rdma_post(me.w, &wr))
			return 2;
		while (percs_cq_poll(me.w, &c, 1) == 1)
			;
	}
	return 0;
}

TEST_F(rdma, process_killed_mid_transfer)
{
	for (unsigned int r = 0; r < pt_scale(4); r++) {
		pid_t pid = fork();
		int status;

		ASSERT_LE(0, pid);
		if (!pid)
			_exit(killed_child(&self->b, self->key));
		usleep(30000 + 40000 * r);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status));
		/* Only the fixture's two registrations stay. */
		ASSERT_EQ(2, pt_wait_live_field("registrations", 2,
						PT_TIMEOUT_MS));
	}
	/* The target still works. */
	struct percs_rdma_wr wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0,
					&self->a, 0, 1000, 1);

	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
}

/* HFI 0's packets of one route class (debugfs routes), or -1. */
static long routes_of_hfi0(unsigned int col)
{
	FILE *f = fopen("/sys/kernel/debug/percs/routes", "re");
	unsigned long long v[3];
	unsigned int hfi;
	long ret = -1;
	char line[256];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %llu %llu %llu", &hfi, &v[0], &v[1],
			   &v[2]) == 4 && hfi == 0)
			ret = (long)v[col];
	fclose(f);
	return ret;
}

/* A 1 MiB write to the same supernode: its packets of 2048 B counted. */
TEST_F(rdma, packets_counted_per_route_class)
{
	const uint64_t len = 1 << 20;
	struct percs_rdma_wr wr = wr_of(PERCS_RDMA_OP_WRITE, &self->b, 0,
					&self->a, 0, len, 1);
	long before = routes_of_hfi0(1);

	ASSERT_LE(0, before);
	ASSERT_EQ(0, rdma_wait(self->a.w, &wr, NULL));
	EXPECT_EQ((len + PERCS_RDMA_SEG_DATA - 1) / PERCS_RDMA_SEG_DATA,
		  routes_of_hfi0(1) - before);
}

TEST_HARNESS_MAIN
