// SPDX-License-Identifier: GPL-2.0
/*
 * percs selftests: packets in flight and the reorder knob.
 *
 * With /sys/kernel/debug/percs/isr/reorder_ppm set, the network holds some
 * packets back and lets later ones overtake them.  Every packet must still
 * arrive exactly once with its bytes intact, through backpressure, and a
 * packet nothing overtakes must arrive when its hold time runs out.
 * Packets held for a window that closes are freed.  With the knob at 0
 * one sender's stream to one target arrives in order.  Completions:
 * PERCS_PKT_F_NOTIFY may come while the packet is still held;
 * PERCS_PKT_F_NOTIFY_REMOTE only once it is in the target's receive FIFO
 * (or -ECONNREFUSED when it was discarded with its target).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common.h"

#define BIG_FIFO	PERCS_FIFO_DEF_SIZE
#define SMALL_FIFO	PERCS_FIFO_MIN_SIZE

/* What a stream saw: each sequence number once, and how out of order. */
struct seen {
	unsigned char *got;
	unsigned int n;
	unsigned int received;
	unsigned int dups;
	unsigned int bad;		/* tag out of range or bytes wrong */
	unsigned int inversions;	/* arrived after a later one */
	long max_seq;
};

static void seen_init(struct seen *s, unsigned int n)
{
	memset(s, 0, sizeof(*s));
	s->got = calloc(n, 1);
	s->n = n;
	s->max_seq = -1;
}

static void seen_one(struct seen *s, uint32_t seq, const void *buf,
		     size_t len, size_t want_len)
{
	unsigned char want[PERCS_MAX_PAYLOAD];

	if (seq >= s->n || len != want_len) {
		s->bad++;
		return;
	}
	pt_fill(want, len, seq);
	if (memcmp(want, buf, len))
		s->bad++;
	if (s->got[seq]++)
		s->dups++;
	if ((long)seq < s->max_seq)
		s->inversions++;
	else
		s->max_seq = seq;
	s->received++;
}

/* Take every packet that is there now. */
static int drain(struct percs_window *rx, struct seen *s, size_t want_len)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	int ret;

	while ((ret = percs_recv(rx, &h, buf, sizeof(buf))) >= 0)
		seen_one(s, h.tag, buf, ret, want_len);
	return ret == -EAGAIN ? 0 : ret;
}

static int send_one(struct percs_window *tx, const struct percs_addr *dst,
		    bool imm, const void *buf, size_t len, uint32_t tag)
{
	if (imm)
		return pt_icswx(tx, dst, buf, len, tag, PT_TIMEOUT_MS);
	return pt_send(tx, dst, buf, len, tag, 0, PT_TIMEOUT_MS);
}

FIXTURE(reorder) {
	struct percs_hfi *hfi[2];	/* hub 0 and the last hub */
	uint32_t key;
	long saved[3];
};

static const char *const knobs[3] = { "reorder_ppm", "reorder_depth",
				       "hold_us" };

FIXTURE_SETUP(reorder)
{
	unsigned int i, last_hub;
	struct percs_hfi_info info;

	PT_REQUIRE_DEVICE();
	for (i = 0; i < 3; i++) {
		self->saved[i] = pt_isr_read(knobs[i]);
		ASSERT_LE(0, self->saved[i]);
	}
	ASSERT_EQ(0, pt_hfi_open(0, 0, &self->hfi[0]));
	ASSERT_EQ(0, percs_hfi_info(self->hfi[0], &info));
	last_hub = info.nr_hubs - 1;
	ASSERT_EQ(0, pt_hfi_open(last_hub, 0, &self->hfi[1]));
	self->key = pt_new_key();
}

FIXTURE_TEARDOWN(reorder)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		if (self->saved[i] >= 0)
			pt_isr_set(knobs[i], self->saved[i]);
	for (i = 0; i < 2; i++)
		if (self->hfi[i])
			percs_hfi_close(self->hfi[i]);
}

/*
 * Set the network's knobs, then reserve a sender on hub 0 and a receiver
 * (a receive FIFO of @recv_size bytes) on the last hub.
 * Return: 0, or the first failure's -errno.
 */
static int held_pair(FIXTURE_DATA(reorder) *self, unsigned long ppm,
		     unsigned long depth, unsigned long hold_us,
		     uint32_t recv_size, struct percs_window **tx,
		     struct percs_window **rx)
{
	int ret = pt_isr_set("reorder_ppm", ppm);

	if (!ret)
		ret = pt_isr_set("reorder_depth", depth);
	if (!ret)
		ret = pt_isr_set("hold_us", hold_us);
	if (!ret)
		ret = pt_reserve(self->hfi[0], 0, BIG_FIFO, BIG_FIFO, self->key,
				 PERCS_WINDOW_ANY, tx);
	if (!ret)
		ret = pt_reserve(self->hfi[1], 0, BIG_FIFO, recv_size,
				 self->key, PERCS_WINDOW_ANY, rx);
	return ret;
}

/* Out-of-range and malformed knob values are refused and change nothing. */
TEST_F(reorder, knobs_refuse_bad_values)
{
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 1234));
	EXPECT_EQ(-EINVAL, pt_isr_set("reorder_ppm", 1000001));
	EXPECT_EQ(-EINVAL, pt_isr_write("reorder_ppm", "lots"));
	EXPECT_EQ(-EINVAL, pt_isr_write("reorder_ppm", "-1"));
	EXPECT_EQ(1234, pt_isr_read("reorder_ppm"));
	EXPECT_EQ(-EINVAL, pt_isr_set("reorder_depth", 0));
	EXPECT_EQ(-EINVAL, pt_isr_set("reorder_depth", 100000));
	EXPECT_EQ(-EINVAL, pt_isr_set("hold_us", 0));
	EXPECT_EQ(-EINVAL, pt_isr_set("hold_us", 1000001));
	EXPECT_EQ(0, pt_isr_set("reorder_depth", 3));
	EXPECT_EQ(3, pt_isr_read("reorder_depth"));
}

/*
 * Stream @n packets of @len bytes (tag = sequence number) from tx to rx,
 * taking what arrived after each batch of @batch, then wait for the rest.
 */
static void stream(struct __test_metadata *_metadata, struct percs_window *tx,
		   struct percs_window *rx, bool imm, unsigned int n,
		   size_t len, unsigned int batch, struct seen *s)
{
	struct percs_addr dst = percs_window_addr(rx);
	unsigned char buf[PERCS_MAX_PAYLOAD];
	uint64_t deadline;
	unsigned int seq;

	seen_init(s, n);
	ASSERT_NE(NULL, s->got);
	for (seq = 0; seq < n; seq++) {
		pt_fill(buf, len, seq);
		for (;;) {
			int ret = imm ? percs_icswx(tx, &dst, buf, len, seq) :
					percs_send(tx, &dst, buf, len, seq, 0);

			if (!ret)
				break;
			ASSERT_EQ(-EAGAIN, ret);
			ASSERT_EQ(0, drain(rx, s, len));
		}
		if (seq % batch == batch - 1)
			ASSERT_EQ(0, drain(rx, s, len));
	}
	deadline = pt_now_ms() + PT_TIMEOUT_MS;
	while (s->received + s->bad < n && pt_now_ms() < deadline) {
		ASSERT_EQ(0, drain(rx, s, len));
		usleep(200);
	}
}

FIXTURE_VARIANT(reorder) {
	bool imm;
	size_t len;
};

FIXTURE_VARIANT_ADD(reorder, fifo_small) {
	.imm = false,
	.len = 8,
};

FIXTURE_VARIANT_ADD(reorder, fifo_full_packets) {
	.imm = false,
	.len = PERCS_MAX_PAYLOAD,
};

FIXTURE_VARIANT_ADD(reorder, icswx) {
	.imm = true,
	.len = PERCS_IMM_PAYLOAD,
};

/* The knob at 0: one sender's stream to one target stays in order. */
TEST_F(reorder, off_keeps_order)
{
	unsigned int n = pt_scale(4000);
	struct percs_window *tx, *rx;
	struct seen s;

	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 0));
	ASSERT_EQ(0, pt_reserve(self->hfi[0], 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx));
	stream(_metadata, tx, rx, variant->imm, n, variant->len, 16, &s);
	EXPECT_EQ(n, s.received);
	EXPECT_EQ(0, s.dups);
	EXPECT_EQ(0, s.bad);
	EXPECT_EQ(0, s.inversions);
	free(s.got);
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/* A quarter of the packets held: out of order, each exactly once. */
TEST_F(reorder, stream_arrives_out_of_order_exactly_once)
{
	unsigned int n = pt_scale(8000);
	long held0 = pt_stat_field(PT_ISR_DIR "flight", "held");
	struct percs_window *tx, *rx;
	struct seen s;

	ASSERT_LE(0, held0);
	ASSERT_EQ(0, held_pair(self, 250000, 8, 200, BIG_FIFO, &tx, &rx));
	stream(_metadata, tx, rx, variant->imm, n, variant->len, 16, &s);
	EXPECT_EQ(n, s.received);
	EXPECT_EQ(0, s.dups);
	EXPECT_EQ(0, s.bad);
	/* 1 in 4 held: a run without inversions would be a broken knob. */
	EXPECT_LT(n / 50, s.inversions);
	EXPECT_LT(held0 + n / 8, pt_stat_field(PT_ISR_DIR "flight", "held"));
	EXPECT_EQ(n, percs_window_status(rx)->packets_received);
	TH_LOG("%u packets, %u arrived after a later one", n, s.inversions);
	free(s.got);
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/* Every packet held, a receive FIFO of 4 KiB: backpressure, no loss. */
TEST_F(reorder, held_packets_wait_for_room)
{
	unsigned int n = pt_scale(3000);
	struct percs_window *tx, *rx;
	struct seen s;

	ASSERT_EQ(0, held_pair(self, 1000000, 4, 100, SMALL_FIFO, &tx, &rx));
	/* Drain only every 64 packets: the small FIFO fills up. */
	stream(_metadata, tx, rx, variant->imm, n, variant->len, 64, &s);
	EXPECT_EQ(n, s.received);
	EXPECT_EQ(0, s.dups);
	EXPECT_EQ(0, s.bad);
	free(s.got);
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/* Nothing overtakes a lone held packet: its hold time delivers it. */
TEST_F(reorder, lone_packet_arrives_after_hold_time)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];
	struct percs_window *tx, *rx;
	struct percs_pkt_hdr h;
	struct percs_addr dst;
	/*
	 * Long enough that the checks below run before the packet lands: a
	 * loaded debug kernel (PERCS_TEST_SCALE < 1) took over 50 ms.
	 */
	unsigned long hold_us = pt_scale(100) < 100 ? 500000 : 50000;
	uint64_t t0;

	ASSERT_EQ(0, held_pair(self, 1000000, 8, hold_us, BIG_FIFO, &tx, &rx));
	dst = percs_window_addr(rx);
	pt_fill(buf, variant->len, 99);
	t0 = pt_now_ms();
	ASSERT_EQ(0, send_one(tx, &dst, variant->imm, buf, variant->len, 99));
	/* Sent as far as the sender can tell, but not arrived. */
	EXPECT_EQ(1, percs_window_status(tx)->packets_sent);
	EXPECT_EQ(0, percs_window_status(rx)->packets_received);
	EXPECT_EQ(1, pt_stat_field(PT_ISR_DIR "flight", "in_flight"));
	ASSERT_EQ((int)variant->len, pt_recv(rx, &h, buf, sizeof(buf),
					     PT_TIMEOUT_MS));
	EXPECT_EQ(99, h.tag);
	TH_LOG("held packet arrived after %llu ms",
	       (unsigned long long)(pt_now_ms() - t0));
	EXPECT_EQ(0, pt_stat_field(PT_ISR_DIR "flight", "in_flight"));
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/* Packets held for a window that closes are freed, and counted. */
TEST_F(reorder, target_closes_with_packets_in_flight)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];
	long discarded0 = pt_stat_field(PT_ISR_DIR "flight", "discarded");
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	unsigned int i;

	ASSERT_LE(0, discarded0);
	ASSERT_EQ(0, held_pair(self, 1000000, 64, 1000000, BIG_FIFO, &tx, &rx));
	dst = percs_window_addr(rx);
	/* Depth 64: the first of 10 packets waits for 64 overtakers. */
	for (i = 0; i < 10; i++) {
		pt_fill(buf, variant->len, i);
		ASSERT_EQ(0, send_one(tx, &dst, variant->imm, buf,
				      variant->len, i));
	}
	EXPECT_LT(0, pt_stat_field(PT_ISR_DIR "flight", "in_flight"));
	percs_window_release(rx);
	EXPECT_EQ(0, pt_stat_field(PT_ISR_DIR "flight", "in_flight"));
	EXPECT_LT(discarded0, pt_stat_field(PT_ISR_DIR "flight", "discarded"));
	percs_window_release(tx);
	ASSERT_LIVE_ZERO();
}

/* One send with completion @flags: 0, -EAGAIN when busy, or -errno. */
static int send_flagged_once(struct percs_window *tx,
			     const struct percs_addr *dst, bool imm,
			     const void *buf, size_t len, uint32_t tag,
			     unsigned int flags)
{
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_IMM, .flags = flags, .dst = *dst, .tag = tag,
	};

	if (imm)
		return percs_icswx_hdr(tx, &h, buf, len);
	return percs_send(tx, dst, buf, len, tag, flags);
}

/* The same, retried (kicking) while busy until the default deadline. */
static int send_flagged(struct percs_window *tx, const struct percs_addr *dst,
			bool imm, const void *buf, size_t len, uint32_t tag,
			unsigned int flags)
{
	uint64_t deadline = pt_now_ms() + PT_TIMEOUT_MS;
	int ret;

	while ((ret = send_flagged_once(tx, dst, imm, buf, len, tag,
					flags)) == -EAGAIN &&
	       pt_now_ms() < deadline) {
		percs_kick(tx, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
		pt_pause_us(100);
	}
	return ret;
}

/* Every packet held for 300 ms: NOTIFY says it left, not that it landed. */
TEST_F(reorder, notify_can_come_before_arrival)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_cqe c;

	ASSERT_EQ(0, held_pair(self, 1000000, 8, 300000, BIG_FIFO, &tx, &rx));
	dst = percs_window_addr(rx);
	pt_fill(buf, variant->len, 5);
	ASSERT_EQ(0, send_flagged(tx, &dst, variant->imm, buf, variant->len,
				  5, PERCS_PKT_F_NOTIFY));
	ASSERT_EQ(1, pt_cq_wait(tx, &c, 100));
	EXPECT_EQ(5, c.user_data);
	EXPECT_EQ(0, c.res);
	/* Completed, and still in the network. */
	EXPECT_EQ(0, percs_window_status(rx)->packets_received);
	EXPECT_EQ(1, pt_stat_field(PT_ISR_DIR "flight", "in_flight"));
	ASSERT_EQ((int)variant->len, pt_recv(rx, NULL, buf, sizeof(buf),
					     PT_TIMEOUT_MS));
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/* NOTIFY_REMOTE: no entry while the packet is held, one once it landed. */
TEST_F(reorder, notify_remote_waits_for_arrival)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_cqe c;
	uint64_t t0;

	ASSERT_EQ(0, held_pair(self, 1000000, 8, 300000, BIG_FIFO, &tx, &rx));
	dst = percs_window_addr(rx);
	pt_fill(buf, variant->len, 6);
	t0 = pt_now_ms();
	ASSERT_EQ(0, send_flagged(tx, &dst, variant->imm, buf, variant->len,
				  6, PERCS_PKT_F_NOTIFY_REMOTE));
	EXPECT_EQ(1, percs_window_status(tx)->packets_sent);
	EXPECT_EQ(0, percs_cq_poll(tx, &c, 1));
	ASSERT_EQ(1, pt_cq_wait(tx, &c, PT_TIMEOUT_MS));
	/* By the time the entry is there, so is the packet. */
	EXPECT_EQ(1, percs_window_status(rx)->packets_received);
	EXPECT_LE(250, pt_now_ms() - t0);
	EXPECT_EQ(6, c.user_data);
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(variant->imm ? PERCS_PKT_IMM : PERCS_PKT_FIFO, c.kind);
	EXPECT_EQ(variant->imm ? PERCS_CQE_F_IMM : 0, c.flags);
	ASSERT_EQ((int)variant->len, pt_recv(rx, NULL, buf, sizeof(buf),
					     PT_TIMEOUT_MS));
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/*
 * A stream under reorder into a 4 KiB receive FIFO drained now and then:
 * every packet gets exactly one remote completion, and never before the
 * receive FIFO has taken as many packets as completions were seen.
 */
TEST_F(reorder, notify_remote_stream_never_ahead_of_arrivals)
{
	unsigned int n = pt_scale(2000), seq, done = 0, early = 0, bad = 0;
	unsigned char buf[PERCS_MAX_PAYLOAD];
	struct percs_window *tx, *rx;
	struct percs_cqe c[32];
	struct percs_addr dst;
	unsigned char *got;
	uint64_t deadline;
	struct seen s;
	int k, i, ret;

	ASSERT_EQ(0, held_pair(self, 250000, 8, 2000, SMALL_FIFO, &tx, &rx));
	dst = percs_window_addr(rx);
	seen_init(&s, n);
	got = calloc(n, 1);
	ASSERT_NE(NULL, got);
	deadline = pt_now_ms() + 4 * PT_TIMEOUT_MS;
	for (seq = 0; done < n && pt_now_ms() < deadline;) {
		bool sent = false;

		if (seq < n && seq - done < PERCS_CQ_ENTRIES / 2) {
			pt_fill(buf, variant->len, seq);
			ret = send_flagged_once(tx, &dst, variant->imm, buf,
						variant->len, seq,
						PERCS_PKT_F_NOTIFY_REMOTE);
			ASSERT_TRUE(!ret || ret == -EAGAIN);
			sent = !ret;
			seq += sent;
		}
		k = percs_cq_poll(tx, c, 32);
		ASSERT_LE(0, k);
		for (i = 0; i < k; i++) {
			if (c[i].res || c[i].user_data >= n ||
			    got[c[i].user_data]++)
				bad++;
			done++;
		}
		/* Read after the entries: the FIFO took at least as many. */
		if (done > percs_window_status(rx)->packets_received)
			early++;
		if (!sent || seq % 16 == 0) {
			ASSERT_EQ(0, drain(rx, &s, variant->len));
			percs_kick(tx, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
		}
	}
	ASSERT_EQ(0, drain(rx, &s, variant->len));
	EXPECT_EQ(n, done);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, early);
	EXPECT_EQ(n, s.received);
	EXPECT_EQ(0, s.dups);
	EXPECT_EQ(0, s.bad);
	TH_LOG("%u remote completions, %u packets out of order", done,
	       s.inversions);
	free(got);
	free(s.got);
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/*
 * The target goes with packets held: each of those completes with
 * -ECONNREFUSED, the ones that landed before with 0, every one once.
 */
TEST_F(reorder, notify_remote_of_discarded_packets)
{
	unsigned char buf[PERCS_MAX_PAYLOAD], once[10] = { 0 };
	unsigned int i, ok = 0, refused = 0, twice = 0;
	struct percs_window *tx, *rx;
	struct percs_cqe c;
	struct percs_addr dst;
	long held;

	ASSERT_EQ(0, held_pair(self, 1000000, 64, 1000000, BIG_FIFO, &tx, &rx));
	dst = percs_window_addr(rx);
	for (i = 0; i < 10; i++) {
		pt_fill(buf, variant->len, i);
		ASSERT_EQ(0, send_flagged(tx, &dst, variant->imm, buf,
					  variant->len, i,
					  PERCS_PKT_F_NOTIFY_REMOTE));
	}
	/* Nothing lands now but through later arrivals: there are none. */
	held = pt_stat_field(PT_ISR_DIR "flight", "in_flight");
	EXPECT_LT(0, held);
	EXPECT_EQ(10 - held, percs_window_status(rx)->packets_received);
	percs_window_release(rx);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(1, pt_cq_wait(tx, &c, PT_TIMEOUT_MS));
		ASSERT_GT(10, c.user_data);
		twice += once[c.user_data]++;
		ok += c.res == 0;
		refused += c.res == -ECONNREFUSED;
	}
	EXPECT_EQ(held, refused);
	EXPECT_EQ(10 - held, ok);
	EXPECT_EQ(0, twice);
	EXPECT_EQ(0, percs_cq_poll(tx, &c, 1));
	percs_window_release(tx);
	ASSERT_LIVE_ZERO();
}

/* A sender that goes first: its tickets go with it, nothing leaks. */
TEST_F(reorder, notify_remote_sender_closes_first)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	unsigned int i;

	ASSERT_EQ(0, held_pair(self, 1000000, 64, 20000, BIG_FIFO, &tx, &rx));
	dst = percs_window_addr(rx);
	for (i = 0; i < 10; i++) {
		pt_fill(buf, variant->len, i);
		ASSERT_EQ(0, send_flagged(tx, &dst, variant->imm, buf,
					  variant->len, i,
					  PERCS_PKT_F_NOTIFY_REMOTE));
	}
	percs_window_release(tx);
	/* The packets still land, after their hold time. */
	for (i = 0; i < 10; i++)
		ASSERT_EQ((int)variant->len, pt_recv(rx, NULL, buf,
						     sizeof(buf),
						     PT_TIMEOUT_MS));
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
