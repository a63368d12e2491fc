// SPDX-License-Identifier: GPL-2.0
/*
 * percs selftests: FIFO send and receive.
 *
 * Every payload size, the size limit (library and HFI), ring wraparound with
 * pad entries on both sides, the four route classes with source and job key
 * stamping, completions and CQ overflow, backpressure, and a long
 * many-sender stream into a small receive FIFO checked for exactly-once
 * delivery.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define SMALL_FIFO	PERCS_FIFO_MIN_SIZE		/* 4 KiB: 32 units */
#define SMALL_UNITS	(SMALL_FIFO / PERCS_FLIT_SIZE)
#define BIG_FIFO	PERCS_FIFO_DEF_SIZE		/* 64 KiB */
#define ROUTES_FILE	"/sys/kernel/debug/percs/routes"
#define MAX_HFIS	1024

static unsigned int units_of(size_t len)
{
	return (PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) /
	       PERCS_FLIT_SIZE;
}

static int raw_kick(int fd, unsigned int flags)
{
	int ret = ioctl(fd, PERCS_IOC_KICK, (unsigned long)flags);

	return ret < 0 ? -errno : ret;
}

/* Packets per HFI and route class from debugfs: c[hfi][class]. */
struct routes {
	long long c[MAX_HFIS][3];
	unsigned int n;
};

static int read_routes(struct routes *r)
{
	char line[256];
	FILE *f = fopen(ROUTES_FILE, "re");

	if (!f)
		return -errno;
	memset(r, 0, sizeof(*r));
	while (fgets(line, sizeof(line), f)) {
		unsigned int hfi;
		long long a, b, c;

		if (sscanf(line, "%u %lld %lld %lld", &hfi, &a, &b, &c) != 4)
			continue;
		if (hfi >= MAX_HFIS)
			continue;
		r->c[hfi][0] = a;
		r->c[hfi][1] = b;
		r->c[hfi][2] = c;
		if (hfi + 1 > r->n)
			r->n = hfi + 1;
	}
	fclose(f);
	return r->n ? 0 : -EIO;
}

FIXTURE(fifo) {
	struct percs_hfi_info info;
	struct percs_hfi *hfi[MAX_HFIS];
	uint32_t key;
};

FIXTURE_SETUP(fifo)
{
	struct percs_hfi *h;

	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(0, 0, &h));
	ASSERT_EQ(0, percs_hfi_info(h, &self->info));
	self->hfi[0] = h;
	ASSERT_LE(self->info.nr_hubs * 2, MAX_HFIS);
	self->key = pt_new_key();
}

#define NET_FILE	PT_ISR_DIR "net"
#define NET_REFUSE	"net_refuse"	/* test build only (PERCS_TEST) */

FIXTURE_TEARDOWN(fifo)
{
	unsigned int i;

	/* A failed refusal test must not leave FIFO packets refused. */
	if (!access(PT_ISR_DIR NET_REFUSE, F_OK))
		pt_isr_set(NET_REFUSE, 0);

	for (i = 0; i < MAX_HFIS; i++)
		percs_hfi_close(self->hfi[i]);
}

/* The HFI (hub, unit), opened once per test. */
static struct percs_hfi *hfi_of(FIXTURE_DATA(fifo) *self, unsigned int hub,
				unsigned int unit)
{
	unsigned int id = hub * 2 + unit;

	if (id >= MAX_HFIS || hub >= self->info.nr_hubs)
		return NULL;
	if (!self->hfi[id] && pt_hfi_open(hub, unit, &self->hfi[id]))
		return NULL;
	return self->hfi[id];
}

static int reserve_on(FIXTURE_DATA(fifo) *self, unsigned int hub,
		      unsigned int unit, uint32_t flags, uint32_t send_size,
		      uint32_t recv_size, struct percs_window **out)
{
	struct percs_hfi *h = hfi_of(self, hub, unit);

	if (!h)
		return -ENODEV;
	return pt_reserve(h, flags, send_size, recv_size, self->key,
			  PERCS_WINDOW_ANY, out);
}

/* Every payload size from 0 to the maximum arrives byte for byte. */
TEST_F(fifo, every_payload_size)
{
	static uint8_t buf[PERCS_MAX_PAYLOAD + 64], got[PERCS_MAX_PAYLOAD + 64];
	struct percs_window *tx, *rx;
	struct percs_addr dst, src;
	const volatile struct percs_status *tst, *rst;
	struct percs_pkt_hdr h;
	struct percs_cqe cqe;
	unsigned int len;

	ASSERT_EQ(0, reserve_on(self, 0, 0, 0, BIG_FIFO, BIG_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 0, 1, 0, BIG_FIFO, BIG_FIFO, &rx));
	dst = percs_window_addr(rx);
	src = percs_window_addr(tx);

	for (len = 0; len <= PERCS_MAX_PAYLOAD; len++) {
		pt_fill(buf, len, len * 7919ull + self->key);
		memset(got, 0xa5, sizeof(got));
		ASSERT_EQ(0, pt_send(tx, &dst, buf, len, 0x10000 + len, 0,
				     PT_TIMEOUT_MS));
		ASSERT_EQ((int)len, pt_recv(rx, &h, got, sizeof(got),
					    PT_TIMEOUT_MS));
		ASSERT_EQ(PERCS_PKT_FIFO, h.kind);
		ASSERT_EQ(len, h.length);
		ASSERT_EQ(0x10000 + len, h.tag);
		ASSERT_EQ(0, h.flags);
		ASSERT_TRUE(pt_addr_eq(&src, &h.src));
		ASSERT_TRUE(pt_addr_eq(&dst, &h.dst));
		ASSERT_EQ(self->key, h.job_key);
		if (memcmp(buf, got, len))
			TH_LOG("payload of %u bytes differs", len);
		ASSERT_EQ(0, memcmp(buf, got, len));
		/* percs_recv copies exactly the payload, nothing more */
		ASSERT_EQ(0xa5, got[len]);
	}
	tst = percs_window_status(tx);
	rst = percs_window_status(rx);
	ASSERT_EQ(PERCS_MAX_PAYLOAD + 1, tst->packets_sent);
	ASSERT_EQ(0, tst->send_errors);
	ASSERT_EQ(PERCS_MAX_PAYLOAD + 1, rst->packets_received);
	ASSERT_EQ(0, percs_cq_poll(tx, &cqe, 1));
	ASSERT_EQ(0, tst->flags & (PERCS_STATUS_ERROR |
				   PERCS_STATUS_SEND_BLOCKED));
	percs_window_release(tx);
	percs_window_release(rx);
}

/* One byte too many: the library refuses it before it reaches the FIFO. */
TEST_F(fifo, oversize_refused_by_library)
{
	static uint8_t buf[PERCS_MAX_PAYLOAD + 1];
	struct percs_window *tx, *rx;
	struct percs_pkt_hdr h = { .kind = PERCS_PKT_FIFO };
	struct percs_addr dst;

	ASSERT_EQ(0, reserve_on(self, 0, 0, 0, BIG_FIFO, BIG_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 0, 0, 0, BIG_FIFO, BIG_FIFO, &rx));
	dst = percs_window_addr(rx);
	h.dst = dst;

	ASSERT_EQ(-EMSGSIZE, percs_send(tx, &dst, buf, sizeof(buf), 1, 0));
	ASSERT_EQ(-EMSGSIZE, percs_send_compose(tx, &dst, buf, sizeof(buf),
						1, 0));
	ASSERT_EQ(-EMSGSIZE, percs_send_compose_hdr(tx, &h, buf,
						    sizeof(buf)));
	/* Nothing was composed: the next good packet is the first one. */
	ASSERT_EQ(0, pt_send(tx, &dst, buf, 16, 2, 0, PT_TIMEOUT_MS));
	ASSERT_EQ(16, pt_recv(rx, &h, buf, sizeof(buf), PT_TIMEOUT_MS));
	ASSERT_EQ(2, h.tag);
	ASSERT_EQ(-EAGAIN, percs_recv(rx, NULL, buf, sizeof(buf)));
	ASSERT_EQ(1, percs_window_status(tx)->packets_sent);
	ASSERT_EQ(0, percs_window_status(tx)->send_errors);
	percs_window_release(tx);
	percs_window_release(rx);
}

/*
 * Written straight into the mapped send FIFO, a 2017-byte packet (17
 * units, all before the trigger) completes with -EMSGSIZE and is skipped;
 * the packet after it goes through.
 */
TEST_F(fifo, oversize_refused_by_hfi)
{
	static uint8_t buf[PERCS_MAX_PAYLOAD];
	const volatile struct percs_status *st;
	volatile struct percs_doorbell *db;
	const struct percs_cqe *cq;
	struct percs_pkt_hdr h, *p;
	struct percs_window *rx;
	struct pt_rawwin tx;
	unsigned int bad_units = units_of(PERCS_MAX_PAYLOAD + 1);
	uint8_t *sq;
	int hfd;

	ASSERT_EQ(17, bad_units);
	ASSERT_EQ(0, reserve_on(self, 0, 1, 0, BIG_FIFO, BIG_FIFO, &rx));
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, pt_rawwin_open(&tx, hfd, 0, BIG_FIFO, BIG_FIFO,
				    self->key));
	sq = tx.map[PERCS_REGION_SEND_FIFO];
	db = pt_rawwin_db(&tx);
	st = pt_rawwin_st(&tx);
	cq = tx.map[PERCS_REGION_CQ];

	p = (struct percs_pkt_hdr *)sq;
	memset(p, 0, sizeof(*p));
	p->kind = PERCS_PKT_FIFO;
	p->length = PERCS_MAX_PAYLOAD + 1;
	p->dst = percs_window_addr(rx);
	p->tag = 0x2017;
	memset(sq + PERCS_PKT_HDR_SIZE, 0x5a, PERCS_MAX_PAYLOAD + 1);
	/* a good maximum-size packet right after it */
	p = (struct percs_pkt_hdr *)(sq + bad_units * PERCS_FLIT_SIZE);
	memset(p, 0, sizeof(*p));
	p->kind = PERCS_PKT_FIFO;
	p->length = PERCS_MAX_PAYLOAD;
	p->dst = percs_window_addr(rx);
	p->tag = 0x2016;
	pt_fill(p + 1, PERCS_MAX_PAYLOAD, 2016);

	__atomic_store_n(&db->send_tail, bad_units + 16, __ATOMIC_RELEASE);
	ASSERT_EQ(2, raw_kick(tx.fd, PERCS_KICK_F_SEND));

	ASSERT_EQ(bad_units + 16, __atomic_load_n(&st->send_head,
						  __ATOMIC_ACQUIRE));
	ASSERT_EQ(1, __atomic_load_n(&st->cq_tail, __ATOMIC_ACQUIRE));
	ASSERT_EQ(-EMSGSIZE, cq[0].res);
	ASSERT_EQ(0x2017, cq[0].user_data);
	ASSERT_EQ(PERCS_PKT_FIFO, cq[0].kind);
	ASSERT_EQ(PERCS_CQE_F_UNASKED, cq[0].flags);
	ASSERT_EQ(1, st->send_errors);
	ASSERT_EQ(1, st->packets_sent);
	ASSERT_EQ(0, st->cq_overflows);
	ASSERT_EQ(0, st->flags & PERCS_STATUS_ERROR);

	ASSERT_EQ(PERCS_MAX_PAYLOAD, pt_recv(rx, &h, buf, sizeof(buf),
					     PT_TIMEOUT_MS));
	ASSERT_EQ(0x2016, h.tag);
	ASSERT_EQ(0, memcmp(buf, p + 1, PERCS_MAX_PAYLOAD));
	ASSERT_EQ(-EAGAIN, percs_recv(rx, NULL, buf, sizeof(buf)));

	pt_rawwin_close(&tx);
	close(hfd);
	percs_window_release(rx);
}

/* Raw ring bookkeeping for the wraparound test. */
struct wrap_stats {
	unsigned int send_at[SMALL_UNITS];	/* packets starting at unit */
	unsigned int recv_at[SMALL_UNITS];
	unsigned int send_pad_at[SMALL_UNITS];	/* pads starting at unit */
	unsigned int recv_pad_at[SMALL_UNITS];
	unsigned int send_pads, recv_pads;
};

/*
 * A 4 KiB send FIFO and a 4 KiB receive FIFO, both driven by hand: the
 * test writes packets and pad entries at exact unit positions and parses
 * the receive ring itself.  A third window skews the receive ring by three
 * units first so its pads fall elsewhere than the sender's.  Thousands of
 * packets of random sizes must arrive in order, intact, at every unit
 * offset of both rings.
 */
TEST_F(fifo, wraparound_raw_rings)
{
	const unsigned int total = 4000;
	static uint8_t expect[PERCS_MAX_PAYLOAD];
	struct wrap_stats ws = { 0 };
	struct pt_rawwin tx, rx;
	struct percs_window *skew;
	const volatile struct percs_status *tst, *rst;
	volatile struct percs_doorbell *tdb, *rdb;
	struct percs_addr dst, src;
	uint8_t *sq;
	const uint8_t *rq;
	uint64_t stail = 0, rhead = 0, deadline;
	unsigned int sent = 0, got = 0, i, skew_seen = 0, pads_differ = 0;
	int hfd_tx, hfd_rx;

	hfd_tx = pt_hfi_open_fd(1, 0);
	hfd_rx = pt_hfi_open_fd(1, 1);
	ASSERT_LE(0, hfd_tx);
	ASSERT_LE(0, hfd_rx);
	ASSERT_EQ(0, pt_rawwin_open(&tx, hfd_tx, 0, SMALL_FIFO, SMALL_FIFO,
				    self->key));
	ASSERT_EQ(0, pt_rawwin_open(&rx, hfd_rx, 0, SMALL_FIFO, SMALL_FIFO,
				    self->key));
	ASSERT_EQ(0, reserve_on(self, 1, 0, 0, BIG_FIFO, BIG_FIFO, &skew));
	sq = tx.map[PERCS_REGION_SEND_FIFO];
	rq = rx.map[PERCS_REGION_RECV_FIFO];
	tdb = pt_rawwin_db(&tx);
	rdb = pt_rawwin_db(&rx);
	tst = pt_rawwin_st(&tx);
	rst = pt_rawwin_st(&rx);
	dst = rx.req.addr;
	src = tx.req.addr;

	/* Skew the receive ring: one three-unit packet from another window. */
	ASSERT_EQ(0, pt_send(skew, &dst, expect, 300, 0xffff0000u, 0,
			     PT_TIMEOUT_MS));

	deadline = pt_now_ms() + 60000;
	while (got < total) {
		uint64_t shead = __atomic_load_n(&tst->send_head,
						 __ATOMIC_ACQUIRE);
		uint64_t rtail;

		/* Compose what fits, pads included. */
		while (sent < total) {
			unsigned int len = pt_mix64(sent ^ 0x5eed) %
					   (PERCS_MAX_PAYLOAD + 1);
			unsigned int n = units_of(len);
			unsigned int pos = stail % SMALL_UNITS;
			unsigned int pad = n > SMALL_UNITS - pos ?
					   SMALL_UNITS - pos : 0;
			struct percs_pkt_hdr *p;

			if (stail + pad + n - shead > SMALL_UNITS)
				break;
			if (pad) {
				p = (struct percs_pkt_hdr *)
					(sq + pos * PERCS_FLIT_SIZE);
				memset(p, 0, sizeof(*p));
				p->kind = PERCS_PKT_PAD;
				p->length = pad * PERCS_FLIT_SIZE -
					    PERCS_PKT_HDR_SIZE;
				ws.send_pad_at[pos]++;
				ws.send_pads++;
				stail += pad;
				pos = 0;
			}
			p = (struct percs_pkt_hdr *)(sq + pos * PERCS_FLIT_SIZE);
			memset(p, 0, sizeof(*p));
			p->kind = PERCS_PKT_FIFO;
			p->length = len;
			p->dst = dst;
			p->tag = sent;
			pt_fill(p + 1, len, sent + 1000);
			ws.send_at[pos]++;
			stail += n;
			sent++;
		}
		__atomic_store_n(&tdb->send_tail, stail, __ATOMIC_RELEASE);
		ASSERT_LE(0, raw_kick(tx.fd, PERCS_KICK_F_SEND));

		/* Parse whatever arrived. */
		rtail = __atomic_load_n(&rst->recv_tail, __ATOMIC_ACQUIRE);
		ASSERT_GE(SMALL_UNITS, rtail - rhead);
		while (rhead != rtail) {
			unsigned int pos = rhead % SMALL_UNITS;
			const struct percs_pkt_hdr *p =
				(const void *)(rq + pos * PERCS_FLIT_SIZE);

			if (p->kind == PERCS_PKT_PAD) {
				ASSERT_EQ((SMALL_UNITS - pos) * PERCS_FLIT_SIZE -
					  PERCS_PKT_HDR_SIZE, p->length);
				ASSERT_LE(SMALL_UNITS - pos, rtail - rhead);
				rhead += SMALL_UNITS - pos;
				ws.recv_pad_at[pos]++;
				ws.recv_pads++;
				continue;
			}
			ASSERT_EQ(PERCS_PKT_FIFO, p->kind);
			ASSERT_LE(units_of(p->length), SMALL_UNITS - pos);
			ASSERT_LE(units_of(p->length), rtail - rhead);
			ASSERT_EQ(self->key, p->job_key);
			if (p->tag == 0xffff0000u) {
				/* the skew packet */
				ASSERT_EQ(0, skew_seen);
				ASSERT_EQ(0, got);
				skew_seen = 1;
				rhead += units_of(p->length);
				continue;
			}
			ASSERT_EQ(got, p->tag);
			ASSERT_EQ(pt_mix64(got ^ 0x5eed) % (PERCS_MAX_PAYLOAD + 1),
				  p->length);
			ASSERT_TRUE(pt_addr_eq(&src, &p->src));
			pt_fill(expect, p->length, got + 1000);
			ASSERT_EQ(0, memcmp(expect, p + 1, p->length));
			ws.recv_at[pos]++;
			rhead += units_of(p->length);
			got++;
		}
		/* Credit, and retry the waiting sender if it waits. */
		__atomic_store_n(&rdb->recv_head, rhead, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&rst->flags, __ATOMIC_RELAXED) &
		    PERCS_STATUS_SENDERS_WAIT)
			ASSERT_LE(0, raw_kick(rx.fd, PERCS_KICK_F_CREDIT));
		ASSERT_GT(deadline, pt_now_ms());
	}
	ASSERT_EQ(1, skew_seen);
	for (i = 0; i < SMALL_UNITS; i++) {
		if (!ws.send_at[i] || !ws.recv_at[i])
			TH_LOG("unit %u: %u sent, %u received", i,
			       ws.send_at[i], ws.recv_at[i]);
		ASSERT_LT(0, ws.send_at[i]);
		ASSERT_LT(0, ws.recv_at[i]);
	}
	TH_LOG("%u packets; pads: %u in the send ring, %u in the receive ring",
	       total, ws.send_pads, ws.recv_pads);
	ASSERT_LT(0, ws.send_pads);
	ASSERT_LT(0, ws.recv_pads);
	/* The receive ring placed its pads by itself, not the sender's. */
	for (i = 0; i < SMALL_UNITS; i++)
		pads_differ += ws.send_pad_at[i] != ws.recv_pad_at[i];
	ASSERT_LT(0, pads_differ);
	ASSERT_EQ(stail, __atomic_load_n(&tst->send_head, __ATOMIC_ACQUIRE));
	ASSERT_EQ(total, tst->packets_sent);
	ASSERT_EQ(0, tst->send_errors);
	ASSERT_EQ(total + 1, rst->packets_received);
	ASSERT_EQ(0, (tst->flags | rst->flags) & PERCS_STATUS_ERROR);

	percs_window_release(skew);
	pt_rawwin_close(&tx);
	pt_rawwin_close(&rx);
	close(hfd_tx);
	close(hfd_rx);
}

/*
 * The same through libpercs (its own pads, lazy credits): 4 KiB rings on
 * both sides, random sizes, composed in batches.
 */
TEST_F(fifo, wraparound_library)
{
	const unsigned int total = 5000;
	static uint8_t buf[PERCS_MAX_PAYLOAD], expect[PERCS_MAX_PAYLOAD];
	unsigned int recv_at[SMALL_UNITS] = { 0 };
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	unsigned int sent = 0, got = 0, i;
	uint64_t deadline = pt_now_ms() + 60000;

	ASSERT_EQ(0, reserve_on(self, 2, 0, 0, SMALL_FIFO, SMALL_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 2, 0, 0, SMALL_FIFO, SMALL_FIFO, &rx));
	dst = percs_window_addr(rx);

	while (got < total) {
		const struct percs_pkt_hdr *p;
		int ret;

		while (sent < total) {
			unsigned int len = pt_mix64(sent * 3 + 1) %
					   (PERCS_MAX_PAYLOAD + 1);

			pt_fill(buf, len, sent);
			ret = percs_send_compose(tx, &dst, buf, len, sent, 0);
			if (ret == -EAGAIN)
				break;
			ASSERT_EQ(0, ret);
			sent++;
		}
		ASSERT_EQ(0, percs_send_trigger(tx));

		/* The receive ring is one page: a header's page offset is
		 * its unit offset.
		 */
		while ((p = percs_recv_peek(rx)) != NULL) {
			recv_at[((uintptr_t)p % SMALL_FIFO) /
				PERCS_FLIT_SIZE]++;
			ret = percs_recv(rx, &h, buf, sizeof(buf));
			ASSERT_EQ(pt_mix64(got * 3 + 1) % (PERCS_MAX_PAYLOAD + 1),
				  ret);
			ASSERT_EQ(got, h.tag);
			pt_fill(expect, ret, got);
			ASSERT_EQ(0, memcmp(expect, buf, ret));
			got++;
		}
		ASSERT_EQ(0, percs_recv_credit(rx));
		ASSERT_GT(deadline, pt_now_ms());
	}
	for (i = 0; i < SMALL_UNITS; i++)
		ASSERT_LT(0, recv_at[i]);
	ASSERT_EQ(total, percs_window_status(tx)->packets_sent);
	ASSERT_EQ(0, percs_window_status(tx)->send_errors);
	ASSERT_EQ(-EAGAIN, percs_recv(rx, NULL, buf, sizeof(buf)));
	percs_window_release(tx);
	percs_window_release(rx);
}

/*
 * One receiver, four senders: another window of the same HFI, the other
 * HFI of the hub, a hub of the same supernode and a hub of another one.
 * The receiver sees the HFI's src and job key whatever the sender wrote in
 * those fields; debugfs counts each HFI's packets in the right class.
 */
TEST_F(fifo, route_classes_and_stamping)
{
	struct { unsigned int hub, unit, cls, count; } s[4];
	struct percs_window *rx, *tx[4];
	struct routes *before, *after;
	struct percs_addr dst, src[4];
	unsigned int i, c, id, hps = self->info.hubs_per_supernode;
	unsigned int got[4] = { 0 };
	uint8_t buf[64];

	if (self->info.nr_supernodes < 2 || hps < 2)
		SKIP(return, "needs 2 supernodes of 2 hubs");
	s[0] = (typeof(s[0])){ 0, 0, 0, 2 };	/* same HFI */
	s[1] = (typeof(s[0])){ 0, 1, 0, 3 };	/* other HFI, same hub */
	s[2] = (typeof(s[0])){ 1, 0, 1, 5 };	/* same supernode */
	s[3] = (typeof(s[0])){ hps, 1, 2, 7 };	/* other supernode */

	before = calloc(1, sizeof(*before));
	after = calloc(1, sizeof(*after));
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, after);

	ASSERT_EQ(0, reserve_on(self, 0, 0, 0, BIG_FIFO, BIG_FIFO, &rx));
	dst = percs_window_addr(rx);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, reserve_on(self, s[i].hub, s[i].unit, 0, BIG_FIFO,
					BIG_FIFO, &tx[i]));
		src[i] = percs_window_addr(tx[i]);
	}
	ASSERT_EQ(0, read_routes(before));
	for (i = 0; i < 4; i++) {
		unsigned int k;

		for (k = 0; k < s[i].count; k++) {
			struct percs_pkt_hdr h = {
				.kind = PERCS_PKT_FIFO,
				.dst = dst,
				/* forged: the HFI must overwrite these */
				.src = { .hub = 77, .hfi = 1, .window = 5 },
				.job_key = self->key ^ 0x1234,
				.tag = i << 16 | k,
			};

			memset(buf, i, sizeof(buf));
			ASSERT_EQ(0, percs_send_compose_hdr(tx[i], &h, buf,
							    sizeof(buf)));
		}
		ASSERT_EQ(0, percs_send_trigger(tx[i]));
	}
	for (i = 0; i < 2 + 3 + 5 + 7; i++) {
		struct percs_pkt_hdr h;
		unsigned int from;

		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		from = h.tag >> 16;
		ASSERT_GT(4, from);
		ASSERT_EQ(got[from], h.tag & 0xffff);
		got[from]++;
		ASSERT_TRUE(pt_addr_eq(&src[from], &h.src));
		ASSERT_EQ(self->key, h.job_key);
		ASSERT_EQ(from, buf[0]);
	}
	ASSERT_EQ(0, read_routes(after));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(s[i].count, got[i]);
		ASSERT_EQ(s[i].count, percs_window_status(tx[i])->packets_sent);
	}
	/* Each HFI counted its packets once, in its class only. */
	for (id = 0; id < after->n; id++) {
		for (c = 0; c < 3; c++) {
			long long want = 0;

			for (i = 0; i < 4; i++)
				if (s[i].hub * 2 + s[i].unit == id &&
				    s[i].cls == c)
					want += s[i].count;
			if (after->c[id][c] - before->c[id][c] != want)
				TH_LOG("hfi %u class %u: %lld packets, want %lld",
				       id, c, after->c[id][c] - before->c[id][c],
				       want);
			ASSERT_EQ(want, after->c[id][c] - before->c[id][c]);
		}
	}
	for (i = 0; i < 4; i++)
		percs_window_release(tx[i]);
	percs_window_release(rx);
	free(before);
	free(after);
}

/* PERCS_PKT_F_NOTIFY: one entry with res 0 and the tag; none without it. */
TEST_F(fifo, notify_posts_completion)
{
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	struct percs_cqe cqe;
	uint8_t buf[100];

	ASSERT_EQ(0, reserve_on(self, 0, 0, 0, BIG_FIFO, BIG_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 0, 1, 0, BIG_FIFO, BIG_FIFO, &rx));
	dst = percs_window_addr(rx);
	pt_fill(buf, sizeof(buf), 1);

	ASSERT_EQ(0, pt_send(tx, &dst, buf, sizeof(buf), 0xabcd1234u,
			     PERCS_PKT_F_NOTIFY, PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(0, cqe.res);
	ASSERT_EQ(0xabcd1234u, cqe.user_data);
	ASSERT_EQ(PERCS_PKT_FIFO, cqe.kind);
	ASSERT_EQ(0, cqe.flags);
	ASSERT_EQ(0, cqe.reserved);
	ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
				       PT_TIMEOUT_MS));
	ASSERT_EQ(PERCS_PKT_F_NOTIFY, h.flags);
	ASSERT_EQ(0xabcd1234u, h.tag);

	/* Kick mode delivers inside the send: no entry can come later. */
	ASSERT_EQ(0, pt_send(tx, &dst, buf, sizeof(buf), 7, 0, PT_TIMEOUT_MS));
	ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
				       PT_TIMEOUT_MS));
	ASSERT_EQ(0, percs_cq_poll(tx, &cqe, 1));
	ASSERT_EQ(0, percs_window_status(tx)->send_errors);
	percs_window_release(tx);
	percs_window_release(rx);
}

/* The packets of one kind its handler refused (debugfs isr/net), or -1. */
static long long net_refused(const char *kind)
{
	char k[32], handler[32], line[128];
	long long n, ret = -1;
	FILE *f = fopen(NET_FILE, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %31s %lld", k, handler, &n) == 3 &&
		    !strcmp(k, kind))
			ret = n;
	fclose(f);
	return ret;
}

/*
 * The network's delivery table: with a FIFO handler that refuses
 * (isr/net_refuse, test build), each packet is counted as refused, the
 * sender's completion carries -EPROTO (asked for or not), and nothing
 * arrives; with the FIFO's own handler back, packets arrive again.
 */
TEST_F(fifo, refused_by_handler)
{
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	struct percs_cqe cqe;
	uint8_t buf[100];
	long long before;

	if (access(PT_ISR_DIR NET_REFUSE, F_OK))
		SKIP(return, "module built without PERCS_TEST");
	ASSERT_EQ(0, reserve_on(self, 0, 0, 0, BIG_FIFO, BIG_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 0, 1, 0, BIG_FIFO, BIG_FIFO, &rx));
	dst = percs_window_addr(rx);
	pt_fill(buf, sizeof(buf), 3);
	before = net_refused("fifo");
	ASSERT_LE(0, before);

	ASSERT_EQ(0, pt_isr_set(NET_REFUSE, 1));
	ASSERT_EQ(1, pt_isr_read(NET_REFUSE));
	ASSERT_EQ(0, pt_send(tx, &dst, buf, sizeof(buf), 0x5eed,
			     PERCS_PKT_F_NOTIFY, PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(-EPROTO, cqe.res);
	ASSERT_EQ(0x5eedu, cqe.user_data);
	ASSERT_EQ(PERCS_PKT_FIFO, cqe.kind);
	ASSERT_EQ(0, cqe.flags);
	/* Not asked for: the error still comes, marked unasked. */
	ASSERT_EQ(0, pt_send(tx, &dst, buf, sizeof(buf), 9, 0,
			     PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(-EPROTO, cqe.res);
	ASSERT_EQ(PERCS_CQE_F_UNASKED, cqe.flags);
	ASSERT_EQ(before + 2, net_refused("fifo"));
	ASSERT_EQ(-ETIMEDOUT, pt_recv(rx, &h, buf, sizeof(buf), 50));
	/* Only 0 and 1 mean something. */
	ASSERT_EQ(-EINVAL, pt_isr_set(NET_REFUSE, 2));

	ASSERT_EQ(0, pt_isr_set(NET_REFUSE, 0));
	ASSERT_EQ(0, pt_send(tx, &dst, buf, sizeof(buf), 10,
			     PERCS_PKT_F_NOTIFY, PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(0, cqe.res);
	ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
				       PT_TIMEOUT_MS));
	ASSERT_EQ(10u, h.tag);
	ASSERT_EQ(before + 2, net_refused("fifo"));
	percs_window_release(tx);
	percs_window_release(rx);
}

/* A CQ nobody drains overflows cleanly: entries counted, flag set. */
TEST_F(fifo, cq_overflow)
{
	const unsigned int n = PERCS_CQ_ENTRIES + 44;
	const volatile struct percs_status *st;
	struct percs_cqe cqe[PERCS_CQ_ENTRIES];
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	unsigned int i;
	uint8_t buf[8];

	ASSERT_EQ(0, reserve_on(self, 3, 0, 0, BIG_FIFO, BIG_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 3, 1, 0, BIG_FIFO, BIG_FIFO, &rx));
	dst = percs_window_addr(rx);
	st = percs_window_status(tx);

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, percs_send_compose(tx, &dst, NULL, 0, i,
						PERCS_PKT_F_NOTIFY));
	ASSERT_EQ(0, percs_send_trigger(tx));
	ASSERT_EQ(n, st->packets_sent);
	ASSERT_EQ(PERCS_CQ_ENTRIES, __atomic_load_n(&st->cq_tail,
						    __ATOMIC_ACQUIRE));
	ASSERT_EQ(n - PERCS_CQ_ENTRIES, st->cq_overflows);
	ASSERT_TRUE(st->flags & PERCS_STATUS_CQ_OVERFLOW);
	ASSERT_EQ(0, st->send_errors);
	ASSERT_EQ(0, st->flags & PERCS_STATUS_ERROR);

	/* Said once; then the entries that fit, the first ones, in order. */
	ASSERT_EQ(-EOVERFLOW, percs_cq_poll(tx, cqe, PERCS_CQ_ENTRIES));
	ASSERT_EQ(PERCS_CQ_ENTRIES, percs_cq_poll(tx, cqe, PERCS_CQ_ENTRIES));
	for (i = 0; i < PERCS_CQ_ENTRIES; i++) {
		ASSERT_EQ(i, cqe[i].user_data);
		ASSERT_EQ(0, cqe[i].res);
	}
	ASSERT_EQ(0, percs_cq_poll(tx, cqe, 1));
	/* Every packet arrived all the same. */
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pt_recv(rx, &h, buf, sizeof(buf), PT_TIMEOUT_MS));
		ASSERT_EQ(i, h.tag);
	}
	/* With room again, the next entry is posted. */
	ASSERT_EQ(0, pt_send(tx, &dst, NULL, 0, 0xc0ffee, PERCS_PKT_F_NOTIFY,
			     PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(tx, cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(0xc0ffee, cqe[0].user_data);
	ASSERT_EQ(n - PERCS_CQ_ENTRIES, st->cq_overflows);
	percs_window_release(tx);
	percs_window_release(rx);
}

/*
 * A receiver that does not consume: its 4 KiB FIFO takes 32 one-unit
 * packets, the rest stay in the sender's FIFO (SEND_BLOCKED, counted once,
 * SENDERS_WAIT on the receiver).  Consuming and returning credit moves
 * everything, in order, without another call on the sender.
 */
TEST_F(fifo, backpressure_holds_packets)
{
	const unsigned int n = 100;
	const volatile struct percs_status *tst, *rst;
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	struct percs_cqe cqe;
	struct pt_live live;
	uint8_t buf[96], expect[96];
	unsigned int i;

	ASSERT_EQ(0, reserve_on(self, 1, 0, 0, BIG_FIFO, BIG_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 1, 1, 0, BIG_FIFO, SMALL_FIFO, &rx));
	dst = percs_window_addr(rx);
	tst = percs_window_status(tx);
	rst = percs_window_status(rx);

	for (i = 0; i < n; i++) {
		pt_fill(buf, sizeof(buf), i);
		ASSERT_EQ(0, percs_send_compose(tx, &dst, buf, sizeof(buf), i,
						0));
	}
	ASSERT_EQ(0, percs_send_trigger(tx));
	ASSERT_EQ(SMALL_UNITS, rst->packets_received);
	ASSERT_EQ(SMALL_UNITS, __atomic_load_n(&tst->send_head,
					       __ATOMIC_ACQUIRE));
	ASSERT_EQ(SMALL_UNITS, tst->packets_sent);
	ASSERT_TRUE(tst->flags & PERCS_STATUS_SEND_BLOCKED);
	ASSERT_EQ(1, tst->send_blocked);
	ASSERT_TRUE(rst->flags & PERCS_STATUS_SENDERS_WAIT);
	ASSERT_EQ(0, pt_read_live(&live));
	ASSERT_LE(1, live.blocked_senders);

	/* Kicking again changes nothing while the receiver sleeps. */
	ASSERT_EQ(0, percs_kick(tx, PERCS_KICK_F_SEND));
	ASSERT_EQ(SMALL_UNITS, rst->packets_received);
	ASSERT_EQ(1, tst->send_blocked);
	ASSERT_EQ(0, tst->send_errors);
	ASSERT_EQ(0, percs_cq_poll(tx, &cqe, 1));

	for (i = 0; i < n; i++) {
		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(i, h.tag);
		pt_fill(expect, sizeof(expect), i);
		ASSERT_EQ(0, memcmp(expect, buf, sizeof(buf)));
	}
	ASSERT_EQ(-EAGAIN, percs_recv(rx, &h, buf, sizeof(buf)));
	ASSERT_EQ(n, tst->packets_sent);
	ASSERT_EQ(n, __atomic_load_n(&tst->send_head, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, tst->flags & PERCS_STATUS_SEND_BLOCKED);
	ASSERT_EQ(0, tst->send_errors);
	ASSERT_LE(1, tst->send_blocked);
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/*
 * poll(2) on a window reports POLLOUT while its send FIFO has room.  A
 * sender whose FIFO is full waits in poll() for POLLOUT; when another
 * process consumes (and its credit moves the sender's packets), the
 * waiter must wake up then, not at its timeout.
 */
TEST_F(fifo, pollout_wakes_when_send_fifo_drains)
{
	const volatile struct percs_status *tst;
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct pollfd pfd;
	uint8_t buf[64];
	uint64_t t0, waited;
	unsigned int n = 0;
	pid_t pid;
	int ret, status;

	ASSERT_EQ(0, reserve_on(self, 2, 1, 0, SMALL_FIFO, SMALL_FIFO, &tx));
	ASSERT_EQ(0, reserve_on(self, 2, 1, 0, SMALL_FIFO, SMALL_FIFO, &rx));
	dst = percs_window_addr(rx);
	tst = percs_window_status(tx);
	/* 32 one-unit packets fill the receiver, 32 more the send FIFO. */
	while (n < 2 * SMALL_UNITS) {
		ret = percs_send_compose(tx, &dst, buf, sizeof(buf), n, 0);
		if (ret == -EAGAIN) {
			ASSERT_EQ(0, percs_send_trigger(tx));
			continue;
		}
		ASSERT_EQ(0, ret);
		n++;
	}
	ASSERT_EQ(0, percs_send_trigger(tx));
	ASSERT_EQ(SMALL_UNITS, tst->send_head);
	ASSERT_EQ(0, percs_send_space(tx));
	pfd = (struct pollfd){ .fd = percs_window_fd(tx), .events = POLLOUT };
	ASSERT_EQ(0, poll(&pfd, 1, 0));

	/* Another process consumes everything 200 ms from now. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct percs_pkt_hdr h;
		unsigned int i;

		pt_pause_us(200000);
		for (i = 0; i < 2 * SMALL_UNITS; i++)
			if (pt_recv(rx, &h, buf, sizeof(buf), PT_TIMEOUT_MS) !=
			    sizeof(buf) || h.tag != i)
				_exit(1);
		_exit(0);
	}
	t0 = pt_now_ms();
	ret = poll(&pfd, 1, 5000);
	waited = pt_now_ms() - t0;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	TH_LOG("poll(POLLOUT) returned %d (revents %#x) after %llu ms; send_head %llu",
	       ret, pfd.revents, (unsigned long long)waited,
	       (unsigned long long)tst->send_head);
	ASSERT_EQ(2 * SMALL_UNITS, tst->send_head);
	ASSERT_EQ(1, ret);
	ASSERT_TRUE(pfd.revents & POLLOUT);
	/* Woken when the space appeared, not by the 5 s timeout. */
	ASSERT_GT(2500, waited);
	percs_window_release(tx);
	percs_window_release(rx);
}

/*
 * The long stream: four sender processes on four hubs (one in the other
 * supernode) push 1,000,000 packets of 16..512 bytes, each carrying its
 * sequence number, its sender and a checksum, into one receiver whose
 * 4 KiB FIFO is full most of the time.  Every packet must arrive exactly
 * once and intact; every sender must have been blocked.
 */
#define MS_SENDERS	4
/* 1,000,000 at scale 1 (pt_scale: smaller on the debug kernels) */
#define MS_PER_SENDER	((unsigned int)pt_scale(1000000u / MS_SENDERS))
#define MS_TOTAL	(MS_PER_SENDER * MS_SENDERS)
#define MS_MIN_LEN	16	/* struct ms_payload */
#define MS_MAX_LEN	512
#define MS_DEADLINE_MS	(15 * 60 * 1000)

struct ms_payload {
	uint32_t seq;
	uint32_t sender;
	uint64_t sum;	/* pt_checksum of the packet with sum = 0 */
};

struct ms_shared {
	struct percs_addr rx;
	uint32_t key;
	uint64_t deadline;
	struct {
		struct percs_addr addr;
		int ready;
		int failed;
		uint64_t composed;
		uint64_t sent;
		uint64_t blocked;
		uint64_t errors;
		uint64_t triggers;
		uint64_t waits;
	} s[MS_SENDERS];
};

static unsigned int ms_len(unsigned int sender, uint32_t seq)
{
	return MS_MIN_LEN + pt_mix64((uint64_t)sender << 32 | seq) %
			    (MS_MAX_LEN - MS_MIN_LEN + 1);
}

static void ms_build(uint8_t *buf, unsigned int sender, uint32_t seq,
		     unsigned int len)
{
	struct ms_payload p = { .seq = seq, .sender = sender };

	pt_fill(buf, len, (uint64_t)sender << 32 | seq);
	memcpy(buf, &p, sizeof(p));
	p.sum = pt_checksum(buf, len);
	memcpy(buf, &p, sizeof(p));
}

/* Child: reserve, stream MS_PER_SENDER packets in batches, drain. */
static int ms_sender(struct ms_shared *sh, unsigned int id, unsigned int hub)
{
	static uint8_t buf[MS_MAX_LEN];
	const volatile struct percs_status *st;
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_cqe cqe;
	uint32_t seq = 0;
	uint64_t last_head = 0;
	bool have = false;
	unsigned int len = 0;

	if (pt_hfi_open(hub, 0, &hfi) ||
	    pt_reserve(hfi, 0, BIG_FIFO, SMALL_FIFO, sh->key,
		       PERCS_WINDOW_ANY, &w)) {
		fprintf(stderr, "# sender %u: cannot reserve on hub %u\n", id,
			hub);
		return 1;
	}
	st = percs_window_status(w);
	sh->s[id].addr = percs_window_addr(w);
	__atomic_store_n(&sh->s[id].ready, 1, __ATOMIC_RELEASE);

	while (seq < MS_PER_SENDER) {
		unsigned int batch = 0;
		uint64_t head;
		int ret;

		/* Compose as many as fit, then one trigger. */
		while (seq < MS_PER_SENDER) {
			if (!have) {
				len = ms_len(id, seq);
				ms_build(buf, id, seq, len);
				have = true;
			}
			ret = percs_send_compose(w, &sh->rx, buf, len, seq, 0);
			if (ret == -EAGAIN)
				break;
			if (ret) {
				fprintf(stderr, "# sender %u: compose %d\n",
					id, ret);
				return 1;
			}
			have = false;
			seq++;
			batch++;
		}
		sh->s[id].composed = seq;
		ret = percs_send_trigger(w);
		sh->s[id].triggers++;
		if (ret < 0) {
			fprintf(stderr, "# sender %u: trigger %d\n", id, ret);
			return 1;
		}
		head = __atomic_load_n(&st->send_head, __ATOMIC_ACQUIRE);
		if (!batch || head == last_head) {
			/* FIFO full and nothing moved: the receiver's
			 * credits will move it; do not compete for the CPU.
			 */
			sh->s[id].waits++;
			pt_pause_us(200);
		}
		last_head = head;
		if (pt_now_ms() > sh->deadline) {
			fprintf(stderr, "# sender %u: deadline at seq %u\n",
				id, seq);
			return 1;
		}
	}
	/* Everything composed: wait until the HFI took all of it. */
	while (st->packets_sent + st->send_errors < MS_PER_SENDER) {
		sh->s[id].waits++;
		pt_pause_us(500);
		if (percs_kick(w, PERCS_KICK_F_SEND) < 0 ||
		    pt_now_ms() > sh->deadline) {
			fprintf(stderr, "# sender %u: stuck draining\n", id);
			return 1;
		}
	}
	sh->s[id].sent = st->packets_sent;
	sh->s[id].blocked = st->send_blocked;
	sh->s[id].errors = st->send_errors;
	while (percs_cq_poll(w, &cqe, 1) == 1)
		fprintf(stderr, "# sender %u: completion tag %llu res %d\n",
			id, (unsigned long long)cqe.user_data, cqe.res);
	percs_window_release(w);
	percs_hfi_close(hfi);
	return 0;
}

TEST_F_TIMEOUT(fifo, million_packets_four_senders, 20 * 60)
{
	const unsigned int hps = self->info.hubs_per_supernode;
	unsigned int hubs[MS_SENDERS];
	static uint8_t buf[PERCS_MAX_PAYLOAD];
	uint8_t *seen[MS_SENDERS];
	uint32_t next[MS_SENDERS] = { 0 };
	uint64_t out_of_order = 0, got = 0, start, ms, next_report;
	struct percs_window *rx;
	struct ms_shared *sh;
	struct percs_pkt_hdr h;
	pid_t pid[MS_SENDERS];
	unsigned int i;
	int status, failed = 0;

	if (self->info.nr_supernodes < 2 || hps < 4)
		SKIP(return, "needs 2 supernodes of 4 hubs");
	hubs[0] = 1;
	hubs[1] = 2;
	hubs[2] = 3;
	hubs[3] = hps;	/* first hub of supernode 1 */

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < MS_SENDERS; i++) {
		seen[i] = calloc(MS_PER_SENDER / 8 + 1, 1);
		ASSERT_NE(NULL, seen[i]);
	}
	ASSERT_EQ(0, reserve_on(self, 0, 0, 0, SMALL_FIFO, SMALL_FIFO, &rx));
	sh->rx = percs_window_addr(rx);
	sh->key = self->key;
	sh->deadline = pt_now_ms() + MS_DEADLINE_MS;

	start = pt_now_ms();
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < MS_SENDERS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(ms_sender(sh, i, hubs[i]));
	}
	for (i = 0; i < MS_SENDERS; i++)
		while (!__atomic_load_n(&sh->s[i].ready, __ATOMIC_ACQUIRE)) {
			ASSERT_GT(sh->deadline, pt_now_ms());
			pt_pause_us(1000);
		}

	next_report = start + 30000;
	while (got < MS_TOTAL) {
		struct ms_payload p;
		unsigned int from;
		uint64_t sum;
		int len = percs_recv(rx, &h, buf, sizeof(buf));

		if (len == -EAGAIN) {
			uint64_t now = pt_now_ms();

			if (now > sh->deadline)
				break;
			if (now > next_report) {
				TH_LOG("%llu packets after %llu s",
				       (unsigned long long)got,
				       (unsigned long long)(now - start) / 1000);
				next_report = now + 30000;
			}
			ASSERT_LE(0, percs_wait(rx, 100));
			continue;
		}
		ASSERT_LE(MS_MIN_LEN, len);
		ASSERT_GE(MS_MAX_LEN, len);
		ASSERT_EQ(PERCS_PKT_FIFO, h.kind);
		ASSERT_EQ(self->key, h.job_key);
		memcpy(&p, buf, sizeof(p));
		from = p.sender;
		ASSERT_GT(MS_SENDERS, from);
		ASSERT_GT(MS_PER_SENDER, p.seq);
		ASSERT_EQ(p.seq, h.tag);
		ASSERT_EQ(ms_len(from, p.seq), len);
		ASSERT_TRUE(pt_addr_eq(&sh->s[from].addr, &h.src));
		sum = p.sum;
		p.sum = 0;
		memcpy(buf, &p, sizeof(p));
		if (pt_checksum(buf, len) != sum)
			TH_LOG("sender %u seq %u: bad checksum", from, p.seq);
		ASSERT_EQ(sum, pt_checksum(buf, len));
		if (seen[from][p.seq / 8] & (1u << (p.seq % 8)))
			TH_LOG("sender %u seq %u: duplicate", from, p.seq);
		ASSERT_EQ(0, seen[from][p.seq / 8] & (1u << (p.seq % 8)));
		seen[from][p.seq / 8] |= 1u << (p.seq % 8);
		if (p.seq != next[from])
			out_of_order++;
		next[from] = p.seq + 1;
		got++;
	}
	ms = pt_now_ms() - start;
	/* Reap the senders (they are done once the HFI took everything). */
	for (i = 0; i < MS_SENDERS; i++) {
		uint64_t deadline = pt_now_ms() + 10000;
		pid_t r;

		while ((r = waitpid(pid[i], &status, WNOHANG)) == 0 &&
		       pt_now_ms() < deadline)
			pt_pause_us(1000);
		if (r == 0) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], &status, 0);
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	TH_LOG("%llu packets in %llu.%03llu s: %.0f packets/s; out of order %llu",
	       (unsigned long long)got, (unsigned long long)ms / 1000,
	       (unsigned long long)ms % 1000, got * 1000.0 / (ms ? ms : 1),
	       (unsigned long long)out_of_order);
	for (i = 0; i < MS_SENDERS; i++)
		TH_LOG("sender %u (hub %u): sent %llu blocked %llu errors %llu triggers %llu waits %llu",
		       i, hubs[i], (unsigned long long)sh->s[i].sent,
		       (unsigned long long)sh->s[i].blocked,
		       (unsigned long long)sh->s[i].errors,
		       (unsigned long long)sh->s[i].triggers,
		       (unsigned long long)sh->s[i].waits);
	ASSERT_EQ(MS_TOTAL, got);
	ASSERT_EQ(0, failed);
	for (i = 0; i < MS_SENDERS; i++) {
		uint32_t seq;

		for (seq = 0; seq < MS_PER_SENDER; seq++)
			ASSERT_TRUE(seen[i][seq / 8] & (1u << (seq % 8)));
		ASSERT_EQ(MS_PER_SENDER, sh->s[i].sent);
		ASSERT_EQ(0, sh->s[i].errors);
		ASSERT_LT(0, sh->s[i].blocked);
	}
	ASSERT_EQ(MS_TOTAL, percs_window_status(rx)->packets_received);
	ASSERT_EQ(-EAGAIN, percs_recv(rx, &h, buf, sizeof(buf)));
	percs_window_release(rx);
	for (i = 0; i < MS_SENDERS; i++)
		free(seen[i]);
	munmap(sh, sizeof(*sh));
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
