// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the ring logic against fake windows.
 *
 * A fake window is a struct percs_window built by lp_window_new() over
 * plain malloc'ed regions (send/receive FIFO, doorbell, status page,
 * immediate slots, CQ) instead of mmaps of the device, with the window's
 * kick hook pointing at a tiny fake HFI in this file.  The fake HFI does
 * what the kernel engine does, in the simplest way: it moves packets from
 * send FIFOs and immediate slots into the destination window's receive
 * FIFO (padding at the ring end, honouring credits), posts completions and
 * maintains the status page, and it records every rule the library breaks
 * (a packet that wraps, a trigger past the ring) as a violation.
 *
 * Atomic descriptors are executed by a fake atomic unit (fake_atomic()) on
 * the process's own memory: registrations of target windows are a table
 * here, the initiator's result registrations come from the fake NMMU, and
 * completions can be held back to keep descriptors in flight.
 *
 * percs_window_reserve() is tested against a fake reserve ioctl that hands
 * out a memfd laid out like a window (the binary is linked with --wrap for
 * ioctl, mmap, mmap64 and munmap), including a failure injected at every mmap.
 *
 * Each test runs in a forked child with a timeout and prints one TAP line;
 * "--count" prints the number of tests (for results/lib.expected).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ---- minimal TAP checks (run inside the test's child) ------------------ */

static int t_failed;

static void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	t_failed++;
	if (t_failed > 20)
		return;
	printf("#   %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#define CHECK(c) do {							\
	if (!(c))							\
		t_fail(__FILE__, __LINE__, "check failed: %s", #c);	\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b)							\
		t_fail(__FILE__, __LINE__, "%s is %lld, expected %s = %lld", \
		       #a, _a, #b, _b);					\
} while (0)

#define REQUIRE(c) do {							\
	if (!(c)) {							\
		t_fail(__FILE__, __LINE__, "required: %s", #c);	\
		return;							\
	}								\
} while (0)

/* ---- the fake HFI -------------------------------------------------------- */

#define NWIN		16
#define JOB_KEY		42

struct fwin {
	struct percs_window *w;
	struct percs_addr addr;
	uint8_t *send;
	uint8_t *recv;
	uint8_t *imm;
	struct percs_doorbell *db;
	struct percs_status *st;
	struct percs_cqe *cq;
	uint32_t send_units;
	uint32_t recv_units;
	unsigned int kicks[3];	/* per PERCS_KICK_F_* bit */
	unsigned int nkicks;
};

static struct {
	struct fwin *win[NWIN];
	bool hubs;		/* window i is on hub i (for CAU trees) */
	bool paused;		/* kicks are counted but do nothing */
	bool threaded;		/* a thread runs the engine; kicks wake it */
	sem_t wake;
	unsigned int violations;
} H;

static void violation(const char *what, const struct fwin *f)
{
	H.violations++;
	printf("#   fake HFI: window %u: %s\n", f->addr.window, what);
}

static uint8_t *unit_ptr(uint8_t *base, uint32_t units, uint64_t pos)
{
	return base + (size_t)(pos & (units - 1)) * PERCS_FLIT_SIZE;
}

static void post_raw_cqe(struct fwin *f, const struct percs_cqe *c)
{
	uint64_t tail = f->st->cq_tail;

	if (tail - __atomic_load_n(&f->db->cq_head, __ATOMIC_ACQUIRE) >=
	    PERCS_CQ_ENTRIES) {
		f->st->cq_overflows++;
		__atomic_fetch_or(&f->st->flags, PERCS_STATUS_CQ_OVERFLOW,
				  __ATOMIC_SEQ_CST);
		return;
	}
	f->cq[tail % PERCS_CQ_ENTRIES] = *c;
	__atomic_store_n(&f->st->cq_tail, tail + 1, __ATOMIC_RELEASE);
}

static void post_cqe(struct fwin *f, const struct percs_pkt_hdr *h, int res,
		     bool imm)
{
	struct percs_cqe c = {
		.user_data = h->tag,
		.res = res,
		.kind = h->kind,
		.flags = imm ? PERCS_CQE_F_IMM : 0,
	};

	post_raw_cqe(f, &c);
}

static void fake_atomic(struct fwin *f, const struct percs_pkt_hdr *h);
static int fake_atomic_kick(void);
static int fake_coll(struct fwin *f, const struct percs_pkt_hdr *h);
static void fc_pump(void);

/* Free receive units of @d as the HFI sees them (credits in the doorbell). */
static uint64_t recv_free(struct fwin *d)
{
	uint64_t head = __atomic_load_n(&d->db->recv_head, __ATOMIC_ACQUIRE);
	uint64_t tail = d->st->recv_tail;

	if (head > tail || tail - head > d->recv_units) {
		violation("credit outside [recv_head, recv_tail]", d);
		return 0;
	}
	return d->recv_units - (tail - head);
}

/*
 * Deliver one packet from @s into its destination's receive FIFO.
 * Return: 0, -EAGAIN if the destination is full, or the send error.
 */
static int deliver(struct fwin *s, const struct percs_pkt_hdr *h)
{
	struct fwin *d = h->dst.window < NWIN ? H.win[h->dst.window] : NULL;
	uint32_t n = lp_pkt_units(h->length), pos, pad = 0;
	struct percs_pkt_hdr out;
	uint64_t tail;

	if (h->kind > PERCS_PKT_KIND_MAX || h->kind == PERCS_PKT_PAD)
		return -EINVAL;
	if ((h->dst.hub != 0 && !(H.hubs && h->dst.hub == h->dst.window)) ||
	    h->dst.hfi != 0)
		return -EHOSTUNREACH;
	if (!d)
		return -ECONNREFUSED;
	tail = d->st->recv_tail;
	pos = tail & (d->recv_units - 1);
	if (n > d->recv_units - pos)
		pad = d->recv_units - pos;
	if (recv_free(d) < pad + n) {
		/* SENDERS_WAIT, full barrier, re-check (pairs with credits). */
		__atomic_fetch_or(&d->st->flags, PERCS_STATUS_SENDERS_WAIT,
				  __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (recv_free(d) < pad + n)
			return -EAGAIN;
	}
	if (pad) {
		out = (struct percs_pkt_hdr) {
			.kind = PERCS_PKT_PAD,
			.length = lp_pad_length(pad),
		};
		memcpy(unit_ptr(d->recv, d->recv_units, tail), &out, sizeof(out));
		tail += pad;
	}
	out = *h;
	out.src = s->addr;
	out.job_key = JOB_KEY;
	memcpy(unit_ptr(d->recv, d->recv_units, tail), &out, sizeof(out));
	memcpy(unit_ptr(d->recv, d->recv_units, tail) + sizeof(out), h + 1,
	       h->length);
	d->st->packets_received++;
	__atomic_store_n(&d->st->recv_tail, tail + n, __ATOMIC_RELEASE);
	return 0;
}

static int finish(struct fwin *f, const struct percs_pkt_hdr *h, int r, bool imm)
{
	if (r == -EAGAIN) {
		f->st->send_blocked++;
		__atomic_fetch_or(&f->st->flags, PERCS_STATUS_SEND_BLOCKED,
				  __ATOMIC_SEQ_CST);
		return -EAGAIN;
	}
	if (r < 0) {
		f->st->send_errors++;
		post_cqe(f, h, r, imm);
	} else if (h->flags & PERCS_PKT_F_NOTIFY) {
		post_cqe(f, h, 0, imm);
	}
	f->st->packets_sent++;
	return 0;
}

/* Process @f's send FIFO up to its trigger.  Return: packets moved. */
static int engine_send(struct fwin *f)
{
	uint64_t head = f->st->send_head;
	uint64_t tail = __atomic_load_n(&f->db->send_tail, __ATOMIC_ACQUIRE);
	int moved = 0;

	if (tail < head || tail - head > f->send_units) {
		violation("trigger outside the ring", f);
		f->st->error = EINVAL;
		__atomic_fetch_or(&f->st->flags, PERCS_STATUS_ERROR,
				  __ATOMIC_SEQ_CST);
		return -EINVAL;
	}
	while (head != tail) {
		const struct percs_pkt_hdr *h;
		uint32_t pos = head & (f->send_units - 1), n;

		h = (const void *)unit_ptr(f->send, f->send_units, head);
		if (h->kind == PERCS_PKT_PAD) {
			if (h->length != lp_pad_length(f->send_units - pos))
				violation("pad does not reach the ring end", f);
			head += f->send_units - pos;
			continue;
		}
		n = lp_pkt_units(h->length);
		if (h->length > PERCS_MAX_PAYLOAD || n > f->send_units - pos ||
		    n > tail - head) {
			violation("packet wraps or passes the trigger", f);
			head = tail;
			break;
		}
		if (h->kind == PERCS_PKT_ATOMIC) {
			fake_atomic(f, h);
			f->st->packets_sent++;
		} else if (h->kind == PERCS_PKT_COLL) {
			/* -EBUSY: its slot is busy, it waits in the FIFO. */
			if (fake_coll(f, h) == -EBUSY)
				break;
			f->st->packets_sent++;
		} else if (finish(f, h, deliver(f, h), false) == -EAGAIN) {
			break;
		}
		head += n;
		moved++;
	}
	if (head == tail)
		__atomic_fetch_and(&f->st->flags, ~PERCS_STATUS_SEND_BLOCKED,
				   __ATOMIC_SEQ_CST);
	__atomic_store_n(&f->st->send_head, head, __ATOMIC_RELEASE);
	return moved;
}

static int engine_imm(struct fwin *f)
{
	uint64_t head = f->st->imm_head;
	uint64_t tail = __atomic_load_n(&f->db->imm_tail, __ATOMIC_ACQUIRE);
	int moved = 0;

	if (tail < head || tail - head > PERCS_IMM_SLOTS) {
		violation("imm_tail outside the slots", f);
		return -EINVAL;
	}
	for (; head != tail; head++, moved++) {
		const struct percs_pkt_hdr *h = (const void *)
			(f->imm + (head % PERCS_IMM_SLOTS) * PERCS_FLIT_SIZE);

		if (h->length > PERCS_IMM_PAYLOAD) {
			violation("immediate payload too long", f);
			continue;
		}
		if (finish(f, h, deliver(f, h), true) == -EAGAIN)
			break;
	}
	__atomic_store_n(&f->st->imm_head, head, __ATOMIC_RELEASE);
	return moved;
}

/* One pass over every window; senders blocked on a full FIFO retry too. */
static int engine_all(void)
{
	int moved = 0;

	for (int i = 0; i < NWIN; i++) {
		struct fwin *f = H.win[i];

		if (!f)
			continue;
		__atomic_fetch_and(&f->st->flags, ~PERCS_STATUS_SENDERS_WAIT,
				   __ATOMIC_SEQ_CST);
	}
	for (int i = 0; i < NWIN; i++) {
		struct fwin *f = H.win[i];
		int r;

		if (!f)
			continue;
		r = engine_send(f);
		moved += r > 0 ? r : 0;
		r = engine_imm(f);
		moved += r > 0 ? r : 0;
	}
	fc_pump();
	return moved;
}

static int fake_kick(struct percs_window *w, unsigned int flags)
{
	struct fwin *f = w->kick_ctx;
	int moved = 0, r;

	if (flags & ~PERCS_KICK_F_ALL)
		return -EINVAL;
	f->nkicks++;
	for (int b = 0; b < 3; b++)
		if (flags & (1U << b))
			f->kicks[b]++;
	if (H.threaded) {
		sem_post(&H.wake);
		return 0;
	}
	if (H.paused)
		return 0;
	r = fake_atomic_kick();
	if (r)
		return r;
	fc_pump();
	if (flags & PERCS_KICK_F_SEND) {
		r = engine_send(f);
		if (r < 0)
			return r;
		moved += r;
	}
	if (flags & PERCS_KICK_F_IMM) {
		r = engine_imm(f);
		if (r < 0)
			return r;
		moved += r;
	}
	fc_pump();
	if (flags & PERCS_KICK_F_CREDIT)
		moved += engine_all();
	return moved;
}

static void *zalloc(size_t size)
{
	void *p = aligned_alloc(4096, size);

	if (!p)
		abort();
	memset(p, 0, size);
	return p;
}

static struct fwin *fwin_new(uint16_t idx, uint32_t send_size,
			     uint32_t recv_size, uint32_t flags)
{
	struct fwin *f = calloc(1, sizeof(*f));
	struct lp_layout l;

	f->addr = (struct percs_addr){ .hub = H.hubs ? idx : 0, .window = idx };
	f->send = zalloc(send_size);
	f->recv = zalloc(recv_size);
	f->db = zalloc(4096);
	f->st = zalloc(4096);
	f->imm = zalloc(PERCS_IMM_SLOTS * PERCS_FLIT_SIZE);
	f->cq = zalloc(PERCS_CQ_ENTRIES * sizeof(struct percs_cqe));
	f->send_units = send_size / PERCS_FLIT_SIZE;
	f->recv_units = recv_size / PERCS_FLIT_SIZE;
	l = (struct lp_layout) {
		.send_fifo = f->send, .send_fifo_size = send_size,
		.recv_fifo = f->recv, .recv_fifo_size = recv_size,
		.doorbell = f->db, .status = f->st,
		.imm = f->imm, .imm_slots = PERCS_IMM_SLOTS,
		.cq = f->cq, .cq_entries = PERCS_CQ_ENTRIES,
		.flags = flags, .addr = f->addr,
	};
	if (lp_window_new(&l, -1, &f->w))
		abort();
	f->w->kick = fake_kick;
	f->w->doorbell = fake_kick;
	f->w->kick_ctx = f;
	H.win[idx] = f;
	return f;
}

static void fwin_free(struct fwin *f)
{
	if (!f)
		return;
	H.win[f->addr.window] = NULL;
	percs_window_release(f->w);
	free(f->send);
	free(f->recv);
	free(f->db);
	free(f->st);
	free(f->imm);
	free(f->cq);
	free(f);
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + 1);
}

static bool pattern_ok(const uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7 + 1))
			return false;
	return true;
}

/* Largest payload that takes exactly @units units. */
static size_t max_len(uint32_t units)
{
	return units * PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE;
}

static const struct percs_pkt_hdr *send_unit(struct fwin *f, uint64_t pos)
{
	return (const void *)unit_ptr(f->send, f->send_units, pos);
}

/* ---- tests ---------------------------------------------------------------- */

/*
 * For every start position of the 32-unit rings and every packet size of
 * 1..16 units: the packet lands at the tail or, when it would wrap, after a
 * pad entry at unit 0; it crosses the fake HFI intact and the receiver
 * skips the receive-side pad.
 */
static void test_wrap_every_position(void)
{
	static uint8_t buf[PERCS_MAX_PAYLOAD], out[PERCS_MAX_PAYLOAD];

	for (uint32_t p = 0; p < 32; p++) {
		for (uint32_t s = 1; s <= PERCS_MAX_PKT_UNITS; s++) {
			struct fwin *a = fwin_new(1, 4096, 4096, 0);
			struct fwin *b = fwin_new(2, 4096, 4096, 0);
			bool wraps = p + s > 32;
			size_t len = ((p + s) & 1) || s == 1 ? max_len(s) :
							       max_len(s - 1) + 1;
			struct percs_pkt_hdr h;
			uint32_t at;

			for (uint32_t i = 0; i < p; i++) {
				CHECK_EQ(percs_send(a->w, &b->addr, buf, 10, i, 0), 0);
				CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), 10);
			}
			CHECK_EQ(a->w->sq.tail, p);
			fill(buf, len, p * 100 + s);
			CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, len,
						    0xabc0000 + p, 0), 0);
			at = wraps ? 0 : p;
			if (wraps) {
				CHECK_EQ(send_unit(a, p)->kind, PERCS_PKT_PAD);
				CHECK_EQ(send_unit(a, p)->length,
					 (32 - p) * 128 - 32);
				CHECK_EQ(a->w->sq.tail, 32 + s);
			} else {
				CHECK_EQ(a->w->sq.tail, p + s);
			}
			CHECK_EQ(send_unit(a, at)->kind, PERCS_PKT_FIFO);
			CHECK_EQ(send_unit(a, at)->length, len);
			CHECK(!memcmp(send_unit(a, at) + 1, buf, len));

			CHECK_EQ(percs_send_trigger(a->w), 0);
			CHECK_EQ(a->st->send_head, a->w->sq.tail);
			memset(out, 0, sizeof(out));
			CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), len);
			CHECK(pattern_ok(out, len, p * 100 + s));
			CHECK_EQ(h.tag, 0xabc0000 + p);
			CHECK_EQ(h.src.window, 1);
			CHECK_EQ(h.job_key, JOB_KEY);
			CHECK_EQ(b->w->rq.head, b->st->recv_tail);
			CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), -EAGAIN);
			fwin_free(a);
			fwin_free(b);
		}
	}
	CHECK_EQ(H.violations, 0);
}

/* A long stream of random sizes through rings of different sizes. */
static void test_stream_random_sizes(void)
{
	static uint8_t buf[PERCS_MAX_PAYLOAD], out[PERCS_MAX_PAYLOAD];
	struct fwin *a = fwin_new(1, 4096, 8192, 0);
	struct fwin *b = fwin_new(2, 8192, 4096, 0);
	uint32_t sent = 0, got = 0, rnd = 12345, total = 20000;
	struct percs_pkt_hdr h;

	while (got < total) {
		/* Compose a burst, trigger once. */
		uint32_t burst = 1 + (rnd >> 7) % 8;

		for (uint32_t i = 0; i < burst && sent < total; i++) {
			size_t len;
			int r;

			rnd = rnd * 1103515245 + 12345;
			len = (rnd >> 8) % (PERCS_MAX_PAYLOAD + 1);
			fill(buf, len, sent);
			r = percs_send_compose(a->w, &b->addr, buf, len, sent, 0);
			if (r == -EAGAIN)
				break;
			CHECK_EQ(r, 0);
			sent++;
		}
		CHECK_EQ(percs_send_trigger(a->w), 0);
		/* Receive some, not always all. */
		for (uint32_t i = 0; i < 1 + (rnd >> 3) % 6; i++) {
			int r = percs_recv(b->w, &h, out, sizeof(out));

			if (r == -EAGAIN)
				break;
			REQUIRE(r >= 0);
			CHECK_EQ(h.tag, got);
			CHECK(pattern_ok(out, r, got));
			got++;
		}
	}
	CHECK_EQ(sent, total);
	CHECK_EQ(b->st->packets_received, total);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Compose until full: -EAGAIN, nothing written, send_space() agrees. */
static void test_full_ring_eagain(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[256] = { 0 };
	int i;

	CHECK_EQ(percs_send_space(a->w), PERCS_MAX_PAYLOAD);
	for (i = 0; i < 32; i++)
		CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, 96, i, 0), 0);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, 0, i, 0), -EAGAIN);
	CHECK_EQ(a->w->sq.tail, 32);
	CHECK_EQ(percs_send_space(a->w), 0);
	/* The HFI drains (B has room for exactly 32 units). */
	CHECK_EQ(percs_send_trigger(a->w), 0);
	CHECK_EQ(b->st->recv_tail, 32);
	CHECK_EQ(percs_send_space(a->w), PERCS_MAX_PAYLOAD);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, 96, i, 0), 0);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Room for the packet but not for pad + packet: -EAGAIN, then space. */
static void test_full_ring_with_pad(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	static uint8_t buf[PERCS_MAX_PAYLOAD];
	int i;

	for (i = 0; i < 10; i++)
		CHECK_EQ(percs_send(a->w, &b->addr, buf, 1, i, 0), 0);
	CHECK_EQ(a->st->send_head, 10);
	H.paused = true;
	for (i = 0; i < 10; i++)
		CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, 1, i, 0), 0);
	/* tail 20, head 10: 22 units free, 12 before the end. */
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, max_len(16), 0, 0),
		 -EAGAIN);
	CHECK_EQ(a->w->sq.tail, 20);
	CHECK_EQ(percs_send_space(a->w), max_len(12));
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, max_len(12) + 1, 0, 0),
		 -EAGAIN);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, max_len(12), 0, 0), 0);
	CHECK_EQ(a->w->sq.tail, 32);
	/* tail 32, head 10: 10 units free, all contiguous from unit 0. */
	CHECK_EQ(percs_send_space(a->w), max_len(10));
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, max_len(10), 0, 0), 0);
	CHECK_EQ(percs_send_space(a->w), 0);
	/* percs_send() kicks and retries once: still paused, so -EAGAIN. */
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 1, 0, 0), -EAGAIN);
	CHECK_EQ(a->kicks[0], 11);
	CHECK_EQ(a->db->send_tail, 42);
	CHECK_EQ(a->w->sq.tail, 42);
	H.paused = false;
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 1, 0, 0), 0);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* 2016 bytes is the largest FIFO payload, 2017 is refused. */
static void test_max_payload(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	static uint8_t buf[PERCS_MAX_PAYLOAD + 1], out[PERCS_MAX_PAYLOAD + 1];
	struct percs_pkt_hdr h;

	CHECK_EQ(PERCS_MAX_PAYLOAD, 2016);
	fill(buf, sizeof(buf), 7);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 2016, 1, 0), 0);
	CHECK_EQ(a->w->sq.tail, 16);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 2017, 2, 0), -EMSGSIZE);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, 2017, 2, 0), -EMSGSIZE);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, SIZE_MAX, 2, 0),
		 -EMSGSIZE);
	CHECK_EQ(a->w->sq.tail, 16);
	CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), 2016);
	CHECK(pattern_ok(out, 2016, 7));
	CHECK_EQ(h.length, 2016);
	CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), -EAGAIN);
	/* Bad arguments. */
	CHECK_EQ(percs_send_compose(a->w, NULL, buf, 1, 0, 0), -EINVAL);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, NULL, 1, 0, 0), -EINVAL);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, buf, 1, 0, 0x8000), -EINVAL);
	CHECK_EQ(percs_send_compose(a->w, &b->addr, NULL, 0, 0, 0), 0);
	fwin_free(a);
	fwin_free(b);
}

/* Caller-built headers: fields kept, length set, pads refused. */
static void test_compose_hdr(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[96] = { 1, 2, 3 }, out[96];
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_FIFO,
		.route = PERCS_ROUTE_SW_INDIRECT,
		.route_arg = 1,
		.flags = PERCS_PKT_F_NOTIFY,
		.length = 999,
		.dst = b->addr,
		.tag = 77,
	}, r;
	struct percs_cqe c;

	CHECK_EQ(percs_send_compose_hdr(a->w, &h, buf, 3), 0);
	CHECK_EQ(send_unit(a, 0)->route, PERCS_ROUTE_SW_INDIRECT);
	CHECK_EQ(send_unit(a, 0)->route_arg, 1);
	CHECK_EQ(send_unit(a, 0)->length, 3);
	CHECK_EQ(percs_send_trigger(a->w), 0);
	CHECK_EQ(percs_recv(b->w, &r, out, sizeof(out)), 3);
	CHECK_EQ(r.route, PERCS_ROUTE_SW_INDIRECT);
	CHECK_EQ(percs_cq_poll(a->w, &c, 1), 1);
	CHECK_EQ(c.user_data, 77);
	CHECK_EQ(c.res, 0);
	h.kind = PERCS_PKT_PAD;
	CHECK_EQ(percs_send_compose_hdr(a->w, &h, buf, 3), -EINVAL);
	h.kind = PERCS_PKT_IMM;
	CHECK_EQ(percs_send_compose_hdr(a->w, &h, buf, 2017), -EMSGSIZE);
	CHECK_EQ(percs_icswx_hdr(a->w, &h, buf, 96), 0);
	CHECK_EQ(percs_icswx_hdr(a->w, &h, buf, 97), -EMSGSIZE);
	CHECK_EQ(percs_recv(b->w, &r, out, sizeof(out)), 96);
	CHECK_EQ(r.kind, PERCS_PKT_IMM);
	CHECK_EQ(percs_cq_poll(a->w, &c, 1), 1);
	CHECK_EQ(c.flags, PERCS_CQE_F_IMM);
	fwin_free(a);
	fwin_free(b);
}

/* ---- RDMA descriptors ----------------------------------------------------- */

/* The descriptors percs_rdma_*() compose, field by field; bad arguments. */
static void test_rdma_descriptors(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t data[PERCS_RDMA_FIFO_MAX + 1], local[64];
	const struct percs_rdma_ext *e;
	struct percs_rdma_wr wr = {
		.op = PERCS_RDMA_OP_FIFO_WRITE, .route = PERCS_ROUTE_SW_INDIRECT,
		.route_arg = 2, .flags = PERCS_RDMA_F_NOTIFY_TARGET,
		.dst = b->addr, .remote_handle = 0x10005,
		.remote_addr = 0x7000, .local_addr = data, .len = 100,
		.user_data = 0x1122334455667788ULL,
	};

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	H.paused = true;
	CHECK_EQ(percs_rdma_write(a->w, &b->addr, 0x20003, 0x9000, 0x30001,
				  local, 12345, PERCS_RDMA_F_FENCE, 42), 0);
	CHECK_EQ(send_unit(a, 0)->kind, PERCS_PKT_RDMA);
	CHECK_EQ(send_unit(a, 0)->length, sizeof(*e));
	CHECK_EQ(send_unit(a, 0)->dst.window, 2);
	e = (const void *)(send_unit(a, 0) + 1);
	CHECK_EQ(e->op, PERCS_RDMA_OP_WRITE);
	CHECK_EQ(e->flags, PERCS_RDMA_F_FENCE);
	CHECK_EQ(e->handle, 0x20003);
	CHECK_EQ(e->local_handle, 0x30001);
	CHECK_EQ(e->remote_addr, 0x9000);
	CHECK_EQ(e->local_addr, (uintptr_t)local);
	CHECK_EQ(e->len, 12345);
	CHECK_EQ(e->user_data, 42);
	CHECK_EQ(e->reserved | e->reserved2, 0);
	CHECK_EQ(percs_rdma_read(a->w, &b->addr, 5, 6, 7, local, 8, 0, 9), 0);
	e = (const void *)(send_unit(a, 1) + 1);
	CHECK_EQ(e->op, PERCS_RDMA_OP_READ);
	CHECK_EQ(e->local_handle, 7);
	CHECK_EQ(percs_rdma_post(a->w, &wr), 0);
	CHECK_EQ(send_unit(a, 2)->length, sizeof(*e) + 100);
	CHECK_EQ(send_unit(a, 2)->route, PERCS_ROUTE_SW_INDIRECT);
	CHECK_EQ(send_unit(a, 2)->route_arg, 2);
	e = (const void *)(send_unit(a, 2) + 1);
	CHECK_EQ(e->op, PERCS_RDMA_OP_FIFO_WRITE);
	CHECK_EQ(e->local_handle, 0);
	CHECK_EQ(e->local_addr, 0);
	CHECK_EQ(e->user_data, 0x1122334455667788ULL);
	CHECK_EQ(memcmp(e + 1, data, 100), 0);
	wr.len = PERCS_RDMA_FIFO_MAX + 1;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EMSGSIZE);
	wr.len = 0;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	wr.len = 1;
	wr.local_addr = NULL;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	wr.local_addr = data;
	wr.op = PERCS_RDMA_OP_MAX + 1;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	wr.op = PERCS_RDMA_OP_WRITE;
	wr.flags = 0x80;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	CHECK_EQ(percs_rdma_post(NULL, &wr), -EINVAL);
	CHECK_EQ(percs_rdma_post(a->w, NULL), -EINVAL);
	CHECK_EQ(percs_rdma_write(a->w, NULL, 1, 2, 3, local, 4, 0, 0),
		 -EINVAL);
	H.paused = false;
	fwin_free(a);
	fwin_free(b);
}

/* ---- zero-copy compose: percs_send_reserve() ---------------------------- */

/* Does [p, p + len) lie inside @f's send FIFO? */
static bool in_send_fifo(const struct fwin *f, const void *p, size_t len)
{
	const uint8_t *b = p, *lo = f->send;
	const uint8_t *hi = lo + (size_t)f->send_units * PERCS_FLIT_SIZE;

	return b >= lo && b <= hi && len <= (size_t)(hi - b);
}

/*
 * For every start position of the 32-unit rings and every packet size of
 * 1..16 units: the payload area is in the send FIFO, contiguous, right
 * after the header the call wrote (after a pad entry and at unit 0 when
 * the packet would wrap), and what is written through it arrives.
 */
static void test_send_reserve_every_position(void)
{
	static uint8_t out[PERCS_MAX_PAYLOAD];

	for (uint32_t p = 0; p < 32; p++) {
		for (uint32_t s = 1; s <= PERCS_MAX_PKT_UNITS; s++) {
			struct fwin *a = fwin_new(1, 4096, 4096, 0);
			struct fwin *b = fwin_new(2, 4096, 4096, 0);
			bool wraps = p + s > 32;
			size_t len = (p + s) & 1 ? max_len(s) :
						   max_len(s - 1) + 1;
			const struct percs_pkt_hdr *e;
			struct percs_pkt_hdr h;
			void *pl = NULL;
			uint32_t at;

			if (s == 1)
				len = p & 1 ? 0 : max_len(1);
			for (uint32_t i = 0; i < p; i++) {
				CHECK_EQ(percs_send(a->w, &b->addr, out, 10, i, 0), 0);
				CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), 10);
			}
			REQUIRE(a->w->sq.tail == p);
			CHECK_EQ(percs_send_reserve(a->w, &b->addr, len,
						    0x5e0000 + p,
						    PERCS_PKT_F_NOTIFY, &pl), 0);
			REQUIRE(pl);
			at = wraps ? 0 : p;
			e = send_unit(a, at);
			if (wraps) {
				CHECK_EQ(send_unit(a, p)->kind, PERCS_PKT_PAD);
				CHECK_EQ(send_unit(a, p)->length,
					 (32 - p) * 128 - 32);
				CHECK_EQ(a->w->sq.tail, 32 + s);
			} else {
				CHECK_EQ(a->w->sq.tail, p + s);
			}
			/* The header, then the payload area right after it. */
			CHECK(pl == (const void *)(e + 1));
			CHECK(in_send_fifo(a, e, PERCS_PKT_HDR_SIZE + len));
			CHECK(in_send_fifo(a, pl, len));
			CHECK((const uint8_t *)pl + len <=
			      (const uint8_t *)e + (size_t)s * PERCS_FLIT_SIZE);
			CHECK_EQ(e->kind, PERCS_PKT_FIFO);
			CHECK_EQ(e->route, PERCS_ROUTE_DIRECT);
			CHECK_EQ(e->flags, PERCS_PKT_F_NOTIFY);
			CHECK_EQ(e->length, len);
			CHECK_EQ(e->dst.window, 2);
			CHECK_EQ(e->tag, 0x5e0000 + p);
			/* Nothing reaches the HFI before the trigger. */
			CHECK_EQ(a->db->send_tail, p);

			fill(pl, len, p * 100 + s);
			CHECK_EQ(percs_send_trigger(a->w), 0);
			CHECK_EQ(a->st->send_head, a->w->sq.tail);
			memset(out, 0, sizeof(out));
			CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), len);
			CHECK(pattern_ok(out, len, p * 100 + s));
			CHECK_EQ(h.tag, 0x5e0000 + p);
			CHECK_EQ(h.src.window, 1);
			CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), -EAGAIN);
			fwin_free(a);
			fwin_free(b);
		}
	}
	CHECK_EQ(H.violations, 0);
}

/*
 * A full FIFO, and one with room for the packet but not for pad + packet:
 * -EAGAIN, *payload NULL, nothing written; room again once the HFI drains.
 */
static void test_send_reserve_full(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	static uint8_t buf[PERCS_MAX_PAYLOAD];
	void *pl;
	int i;

	for (i = 0; i < 32; i++) {
		CHECK_EQ(percs_send_reserve(a->w, &b->addr, 96, i, 0, &pl), 0);
		CHECK(in_send_fifo(a, pl, 96));
	}
	pl = buf;
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, 0, i, 0, &pl), -EAGAIN);
	CHECK(pl == NULL);
	CHECK_EQ(a->w->sq.tail, 32);
	CHECK_EQ(percs_send_trigger(a->w), 0);
	CHECK_EQ(b->st->recv_tail, 32);
	for (i = 0; i < 32; i++)
		CHECK_EQ(percs_recv(b->w, NULL, buf, sizeof(buf)), 96);

	/* tail 32 + 20, head 32 + 10 (paused): 22 units free, 12 to the end. */
	for (i = 0; i < 10; i++)
		CHECK_EQ(percs_send(a->w, &b->addr, buf, 1, i, 0), 0);
	H.paused = true;
	for (i = 0; i < 10; i++)
		CHECK_EQ(percs_send_reserve(a->w, &b->addr, 1, i, 0, &pl), 0);
	memset(unit_ptr(a->send, a->send_units, 52), 0xee, 12 * PERCS_FLIT_SIZE);
	pl = buf;
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, max_len(16), 0, 0, &pl),
		 -EAGAIN);
	CHECK(pl == NULL);
	CHECK_EQ(a->w->sq.tail, 52);
	/* No pad was written for the refused packet. */
	CHECK_EQ(send_unit(a, 52)->kind, 0xee);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, max_len(13), 0, 0, &pl),
		 -EAGAIN);
	/* 8 units at the tail; then 14 free, 4 to the end: pad + 10 fit. */
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, max_len(8), 0, 0, &pl), 0);
	CHECK(pl == (void *)(send_unit(a, 52) + 1));
	CHECK_EQ(send_unit(a, 52)->kind, PERCS_PKT_FIFO);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, max_len(11), 0, 0, &pl),
		 -EAGAIN);
	CHECK_EQ(a->w->sq.tail, 60);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, max_len(10), 0, 0, &pl), 0);
	CHECK_EQ(send_unit(a, 60)->kind, PERCS_PKT_PAD);
	CHECK_EQ(send_unit(a, 60)->length, lp_pad_length(4));
	CHECK(pl == (void *)(send_unit(a, 0) + 1));
	CHECK_EQ(a->w->sq.tail, 74);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, 0, 0, 0, &pl), -EAGAIN);
	H.paused = false;
	CHECK_EQ(percs_send_trigger(a->w), 0);
	/* B's FIFO holds 32 units: receiving lets the rest through. */
	for (i = 0; i < 22; i++)
		CHECK(percs_recv(b->w, NULL, buf, sizeof(buf)) >= 0);
	CHECK_EQ(percs_recv(b->w, NULL, buf, sizeof(buf)), -EAGAIN);
	CHECK_EQ(a->st->send_head, 74);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, max_len(16), 0, 0, &pl), 0);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Sizes, bad arguments, a zero-length packet, the NOTIFY completion. */
static void test_send_reserve_args(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	static uint8_t out[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	struct percs_cqe c;
	void *pl = out;

	CHECK_EQ(percs_send_reserve(a->w, &b->addr, 2017, 1, 0, &pl), -EMSGSIZE);
	CHECK(pl == NULL);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, SIZE_MAX, 1, 0, &pl),
		 -EMSGSIZE);
	CHECK_EQ(percs_send_reserve(a->w, NULL, 8, 1, 0, &pl), -EINVAL);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, 8, 1, 0x8000, &pl), -EINVAL);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, 8, 1, 0, NULL), -EINVAL);
	CHECK_EQ(a->w->sq.tail, 0);

	CHECK_EQ(percs_send_reserve(a->w, &b->addr, 0, 3, PERCS_PKT_F_NOTIFY,
				    &pl), 0);
	CHECK(pl == (void *)(send_unit(a, 0) + 1));
	CHECK_EQ(a->w->sq.tail, 1);
	CHECK_EQ(percs_send_reserve(a->w, &b->addr, 2016, 4, 0, &pl), 0);
	CHECK(pl == (void *)(send_unit(a, 1) + 1));
	CHECK_EQ(a->w->sq.tail, 17);
	fill(pl, 2016, 4);
	CHECK_EQ(percs_send_trigger(a->w), 0);
	CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), 0);
	CHECK_EQ(h.tag, 3);
	CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), 2016);
	CHECK(pattern_ok(out, 2016, 4));
	CHECK_EQ(percs_cq_poll(a->w, &c, 1), 1);
	CHECK_EQ(c.user_data, 3);
	CHECK_EQ(c.res, 0);
	CHECK_EQ(percs_cq_poll(a->w, &c, 1), 0);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* What the caller leaves unwritten is sent as the FIFO holds it. */
static void test_send_reserve_in_place(void)
{
	struct fwin *a = fwin_new(1, 8192, 8192, 0);
	struct fwin *b = fwin_new(2, 8192, 8192, 0);
	static uint8_t out[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	void *pl;

	memset(a->send, 0x5a, 8192);
	for (uint32_t i = 0; i < 200; i++) {
		size_t len = (i * 173) % (PERCS_MAX_PAYLOAD + 1);
		int r = percs_send_reserve(a->w, &b->addr, len, i, 0, &pl);

		REQUIRE(r == 0);
		CHECK_EQ(percs_send_trigger(a->w), 0);
		CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), len);
		CHECK_EQ(h.tag, i);
		for (size_t k = 0; k < len; k++)
			if (out[k] != 0x5a) {
				CHECK_EQ(out[k], 0x5a);
				break;
			}
		/* Headers and pads written over it: the pattern again. */
		memset(a->send, 0x5a, 8192);
	}
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Reserve and compose interleaved in one stream share the ring. */
static void test_send_reserve_mixed_stream(void)
{
	static uint8_t buf[PERCS_MAX_PAYLOAD], out[PERCS_MAX_PAYLOAD];
	struct fwin *a = fwin_new(1, 4096, 8192, 0);
	struct fwin *b = fwin_new(2, 8192, 4096, 0);
	uint32_t sent = 0, got = 0, rnd = 777, total = 20000;
	struct percs_pkt_hdr h;

	while (got < total) {
		uint32_t burst = 1 + (rnd >> 7) % 8;

		for (uint32_t i = 0; i < burst && sent < total; i++) {
			size_t len;
			void *pl;
			int r;

			rnd = rnd * 1103515245 + 12345;
			len = (rnd >> 8) % (PERCS_MAX_PAYLOAD + 1);
			if (sent & 1) {
				r = percs_send_reserve(a->w, &b->addr, len,
						       sent, 0, &pl);
				if (!r) {
					CHECK(in_send_fifo(a, pl, len));
					fill(pl, len, sent);
				}
			} else {
				fill(buf, len, sent);
				r = percs_send_compose(a->w, &b->addr, buf,
						       len, sent, 0);
			}
			if (r == -EAGAIN)
				break;
			CHECK_EQ(r, 0);
			sent++;
		}
		CHECK_EQ(percs_send_trigger(a->w), 0);
		for (uint32_t i = 0; i < 1 + (rnd >> 3) % 6; i++) {
			int r = percs_recv(b->w, &h, out, sizeof(out));

			if (r == -EAGAIN)
				break;
			REQUIRE(r >= 0);
			CHECK_EQ(h.tag, got);
			CHECK(pattern_ok(out, r, got));
			got++;
		}
	}
	CHECK_EQ(sent, total);
	CHECK_EQ(b->st->packets_received, total);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/*
 * Target FIFO full: the packet waits at the sender's head, percs_send()
 * answers -EAGAIN after one kick; a receive returns credits at once
 * because senders wait, with a CREDIT kick, and the stream resumes in order.
 */
static void test_blocked_sender_and_credit_kick(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[96], out[96];
	struct percs_pkt_hdr h;
	int sent = 0, r;

	while ((r = percs_send(a->w, &b->addr, buf, 96, sent, 0)) == 0)
		sent++;
	CHECK_EQ(r, -EAGAIN);
	CHECK_EQ(sent, 64);	/* 32 in B's FIFO, 32 waiting in A's */
	CHECK_EQ(b->st->recv_tail, 32);
	CHECK(a->st->flags & PERCS_STATUS_SEND_BLOCKED);
	CHECK(b->st->flags & PERCS_STATUS_SENDERS_WAIT);
	CHECK_EQ(b->kicks[2], 0);

	CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), 96);
	CHECK_EQ(h.tag, 0);
	CHECK_EQ(b->db->recv_head, 1);
	CHECK_EQ(b->kicks[2], 1);
	CHECK_EQ(b->st->recv_tail, 33);
	for (int i = 1; i < 64; i++) {
		CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), 96);
		CHECK_EQ(h.tag, i);
	}
	CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), -EAGAIN);
	CHECK(!(a->st->flags & PERCS_STATUS_SEND_BLOCKED));
	CHECK_EQ(a->st->send_head, 64);
	CHECK_EQ(b->db->recv_head, 64);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 96, 64, 0), 0);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/*
 * Credits are lazy (a quarter ring at a time), never more than half the
 * ring is held back, an idle receive returns everything, and no CREDIT
 * kick happens unless senders wait.
 */
static void test_credit_lazy(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 16384, 0);	/* 128 units */
	uint8_t buf[96], out[96];
	bool lazy_seen = false;
	int i, n = 0;

	CHECK_EQ(b->w->rq.batch, 32);
	for (int round = 0; round < 40; round++) {
		/* 0..24 packets in flight, received in one go. */
		for (i = 0; i < round % 25; i++)
			CHECK_EQ(percs_send(a->w, &b->addr, buf, 96, n + i, 0), 0);
		for (i = 0; i < round % 25; i++) {
			CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), 96);
			CHECK(b->w->rq.head - b->db->recv_head <= 64);
			if (b->db->recv_head != b->w->rq.head)
				lazy_seen = true;
		}
		n += round % 25;
		CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), -EAGAIN);
		CHECK_EQ(b->db->recv_head, b->w->rq.head);
	}
	CHECK(lazy_seen);
	CHECK_EQ(b->nkicks, 0);

	/* Peek/consume hold credits until percs_recv_credit(). */
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 96, 0, 0), 0);
	REQUIRE(percs_recv_peek(b->w));
	percs_recv_consume(b->w);
	CHECK_EQ(b->db->recv_head + 1, b->w->rq.head);
	CHECK_EQ(percs_recv_credit(b->w), 0);
	CHECK_EQ(b->db->recv_head, b->w->rq.head);
	CHECK_EQ(b->nkicks, 0);
	/* With SENDERS_WAIT an explicit credit kicks. */
	b->st->flags |= PERCS_STATUS_SENDERS_WAIT;
	CHECK_EQ(percs_recv_credit(b->w), 0);
	CHECK_EQ(b->kicks[2], 1);
	CHECK_EQ(b->nkicks, 1);
	fwin_free(a);
	fwin_free(b);
}

/* Peek hands out packets in place; -EMSGSIZE leaves the packet there. */
static void test_recv_peek_and_emsgsize(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[300], out[300];
	const struct percs_pkt_hdr *h;
	struct percs_pkt_hdr hh;

	CHECK(percs_recv_peek(b->w) == NULL);
	fill(buf, sizeof(buf), 3);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 300, 5, 0), 0);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 20, 6, 0), 0);
	h = percs_recv_peek(b->w);
	REQUIRE(h);
	CHECK((const uint8_t *)h == b->recv);
	CHECK_EQ(h->length, 300);
	CHECK(pattern_ok((const uint8_t *)(h + 1), 300, 3));
	CHECK(percs_recv_peek(b->w) == h);	/* idempotent */
	CHECK_EQ(percs_recv(b->w, &hh, out, 299), -EMSGSIZE);
	CHECK(percs_recv_peek(b->w) == h);
	CHECK_EQ(percs_recv(b->w, &hh, out, 300), 300);
	CHECK_EQ(hh.tag, 5);
	h = percs_recv_peek(b->w);
	REQUIRE(h);
	CHECK((const uint8_t *)h == b->recv + 3 * PERCS_FLIT_SIZE);
	CHECK_EQ(h->tag, 6);
	percs_recv_consume(b->w);
	percs_recv_consume(b->w);	/* second consume is a no-op */
	CHECK_EQ(b->w->rq.head, 4);
	CHECK(percs_recv_peek(b->w) == NULL);
	fwin_free(a);
	fwin_free(b);
}

/* The HFI's indices and entries are checked before they are used. */
static void test_recv_bad_hfi_state(void)
{
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	struct percs_pkt_hdr *h = (void *)b->recv;
	uint8_t out[PERCS_MAX_PAYLOAD];

	b->st->recv_tail = 33;		/* more than the ring holds */
	CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), -EIO);
	b->w->rq.tail = 0;
	b->st->recv_tail = 1;		/* 1 unit but a 2-unit packet */
	h->kind = PERCS_PKT_FIFO;
	h->length = 200;
	CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), -EIO);
	h->length = 3000;		/* above the maximum */
	b->st->recv_tail = 32;
	CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), -EIO);
	h->length = 90;
	CHECK_EQ(percs_recv(b->w, NULL, out, sizeof(out)), 90);
	fwin_free(b);
}

/* ICSWX: all 32 slots held -> busy, after one IMM kick in kick mode. */
static void test_icswx_busy_kick_mode(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[96] = { 0 };
	int i;

	H.paused = true;
	for (i = 0; i < 32; i++)
		CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 96, i), 0);
	CHECK_EQ(a->kicks[1], 32);
	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 96, i), -EAGAIN);
	CHECK_EQ(a->kicks[1], 33);	/* one kick before answering busy */
	CHECK_EQ(a->db->imm_tail, 32);
	H.paused = false;
	/* The busy path's kick frees the slots, so this one is accepted. */
	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 96, i), 0);
	CHECK_EQ(b->st->recv_tail, 32);	/* B full: the 33rd line waits */
	CHECK_EQ(a->st->imm_head, 32);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Poll mode: busy without a kick unless the engine sleeps. */
static void test_icswx_busy_poll_mode(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, PERCS_WINDOW_F_POLL);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[96] = { 0 };
	int i;

	for (i = 0; i < 32; i++)
		CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 8, i), 0);
	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 8, i), -EAGAIN);
	CHECK_EQ(a->nkicks, 0);
	/* The engine empties the slots on its own. */
	CHECK_EQ(engine_imm(a), 32);
	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 8, i), 0);
	CHECK_EQ(a->nkicks, 0);
	/* Sleeping engine: the ICSWX wakes it. */
	a->st->flags |= PERCS_STATUS_NEED_WAKEUP;
	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 8, i), 0);
	CHECK_EQ(a->kicks[1], 1);
	CHECK_EQ(a->nkicks, 1);
	fwin_free(a);
	fwin_free(b);
}

/* 96 bytes fit a slot, 97 do not; slots wrap; packets arrive intact. */
static void test_icswx_sizes_and_wrap(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[128], out[128];
	struct percs_pkt_hdr h;

	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 97, 0), -EMSGSIZE);
	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, SIZE_MAX, 0), -EMSGSIZE);
	CHECK_EQ(percs_icswx(a->w, NULL, buf, 1, 0), -EINVAL);
	CHECK_EQ(a->db->imm_tail, 0);
	for (uint32_t i = 0; i < 100; i++) {
		size_t len = i % 97;

		fill(buf, len, i);
		CHECK_EQ(percs_icswx(a->w, &b->addr, buf, len, i), 0);
		CHECK_EQ(percs_recv(b->w, &h, out, sizeof(out)), len);
		CHECK_EQ(h.kind, PERCS_PKT_IMM);
		CHECK_EQ(h.tag, i);
		CHECK(pattern_ok(out, len, i));
	}
	CHECK_EQ(a->db->imm_tail, 100);
	CHECK(a->w->imm.next == a->imm + (100 % 32) * PERCS_FLIT_SIZE);
	CHECK_EQ(percs_icswx(a->w, &b->addr, buf, 96, 0), 0);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Kick mode triggers always kick; poll mode only on NEED_WAKEUP. */
static void test_trigger_kick_vs_poll(void)
{
	struct fwin *k = fwin_new(1, 4096, 4096, 0);
	struct fwin *p = fwin_new(2, 4096, 4096, PERCS_WINDOW_F_POLL);
	struct fwin *b = fwin_new(3, 4096, 4096, 0);
	uint8_t buf[8] = { 0 };

	CHECK_EQ(percs_send_trigger(k->w), 0);
	CHECK_EQ(percs_send_trigger(k->w), 0);
	CHECK_EQ(k->kicks[0], 2);

	CHECK_EQ(percs_send(p->w, &b->addr, buf, 8, 0, 0), 0);
	CHECK_EQ(p->db->send_tail, 1);
	CHECK_EQ(percs_send_trigger(p->w), 0);
	CHECK_EQ(p->nkicks, 0);
	p->st->flags |= PERCS_STATUS_NEED_WAKEUP;
	CHECK_EQ(percs_send(p->w, &b->addr, buf, 8, 0, 0), 0);
	CHECK_EQ(p->kicks[0], 1);
	CHECK_EQ(p->nkicks, 1);
	CHECK_EQ(b->st->recv_tail, 2);	/* the kick ran the engine */
	CHECK_EQ(percs_kick(p->w, PERCS_KICK_F_ALL), 0);
	CHECK_EQ(percs_kick(p->w, 1U << 7), -EINVAL);
	fwin_free(k);
	fwin_free(p);
	fwin_free(b);
}

/*
 * Auto mode: no kick while NEED_WAKEUP is clear and the beat moves; a
 * kick when the flag is set, or once the beat has stood still for the
 * bound (PERCS_AUTO_STALE_US=1000 here: no clock page, so the vDSO clock);
 * an empty receive or CQ poll kicks for a send the thread left, and not
 * when nothing is left.
 */
static void test_trigger_auto(void)
{
	struct fwin *a, *b = fwin_new(3, 4096, 4096, 0);
	uint8_t buf[8] = { 0 };
	struct percs_pkt_hdr h;
	struct percs_cqe c;

	setenv("PERCS_AUTO_STALE_US", "1000", 1);
	a = fwin_new(2, 4096, 4096, PERCS_WINDOW_F_AUTO);
	unsetenv("PERCS_AUTO_STALE_US");
	CHECK(a->w->au.on && a->w->poll);
	/* The thread beats: no system call, however many sends. */
	for (int i = 0; i < 10; i++) {
		a->st->poll_beat++;
		CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, i, 0), 0);
	}
	CHECK_EQ(a->nkicks, 0);
	/* Asleep or stepped aside: kick (the engine runs here). */
	a->st->flags |= PERCS_STATUS_NEED_WAKEUP;
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 10, 0), 0);
	CHECK_EQ(a->nkicks, 1);
	CHECK_EQ(b->st->recv_tail, 11);
	a->st->flags &= ~PERCS_STATUS_NEED_WAKEUP;
	/* The beat stops: no kick before the bound, kicks after it. */
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 11, 0), 0);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 12, 0), 0);
	CHECK_EQ(a->nkicks, 1);
	usleep(3000);
	/* An empty receive notices the sends the stopped thread left. */
	CHECK_EQ(percs_recv(a->w, &h, buf, sizeof(buf)), -EAGAIN);
	CHECK_EQ(a->nkicks, 2);
	CHECK_EQ(b->st->recv_tail, 13);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 13, 0), 0);
	CHECK_EQ(a->nkicks, 3);
	/* Nothing left to move: an empty CQ poll makes no system call. */
	CHECK_EQ(percs_cq_poll(a->w, &c, 1), 0);
	CHECK_EQ(a->nkicks, 3);
	/* The thread beats again: back to no system call. */
	a->st->poll_beat++;
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 14, 0), 0);
	CHECK_EQ(a->nkicks, 3);
	fwin_free(a);
	fwin_free(b);
}

/* A kick error (bad trigger) comes back from trigger and send. */
static void test_kick_error_propagates(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t buf[8] = { 0 };

	a->w->sq.tail = 1000;	/* a corrupted local tail */
	CHECK_EQ(percs_send_trigger(a->w), -EINVAL);
	CHECK(a->st->flags & PERCS_STATUS_ERROR);
	/* Full (by the bad tail): the retry's kick fails the same way. */
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 0, 0), -EINVAL);
	CHECK_EQ(H.violations, 2);
	fwin_free(a);
	fwin_free(b);
}

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

static void test_strerror(void)
{
	static const int errs[] = {
		EINVAL, EMSGSIZE, EOPNOTSUPP, EHOSTUNREACH, EADDRNOTAVAIL,
		ECONNREFUSED, EACCES, EAGAIN, ENOENT, ERANGE, EPERM, EFAULT,
		ETIMEDOUT,
	};

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *s = percs_strerror(-errs[i]);

		CHECK(s && *s);
		CHECK(!strcmp(s, percs_strerror(errs[i])));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(s, percs_strerror(-errs[j])));
	}
	CHECK(strstr(percs_strerror(-ECONNREFUSED), "not reserved"));
	CHECK(strstr(percs_strerror(-EACCES), "job key"));
	CHECK(strstr(percs_strerror(-ENOENT), "atomic"));
	CHECK(strstr(percs_strerror(-ERANGE), "atomic"));
	CHECK(strstr(percs_strerror(-EPERM), "atomic"));
	CHECK(strstr(percs_strerror(-EINVAL), "multiple of its width"));
	CHECK(strstr(percs_strerror(-EFAULT), "not mapped"));
	CHECK(strstr(percs_strerror(-ETIMEDOUT), "retransmission"));
	CHECK(!strcmp(percs_strerror(-ENOMEM), strerror(ENOMEM)));
	CHECK(!strcmp(percs_strerror(0), "Success"));
}

/* Device paths: PERCS_DEV_DIR, N = hub * 2 + unit, ENOENT, bad unit. */
static void test_hfi_open(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX", path[64];
	struct percs_hfi *hfi = NULL;
	struct percs_hfi_info info;
	int fd;

	REQUIRE(mkdtemp(dir));
	setenv("PERCS_DEV_DIR", dir, 1);
	CHECK_EQ(percs_hfi_open(1, 1, &hfi), -ENOENT);
	CHECK_EQ(percs_hfi_open(0, 2, &hfi), -EINVAL);
	CHECK_EQ(percs_hfi_open(0, 0, NULL), -EINVAL);
	snprintf(path, sizeof(path), "%s/percs-hfi3", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	REQUIRE(fd >= 0);
	close(fd);
	CHECK_EQ(percs_hfi_open(1, 1, &hfi), 0);
	REQUIRE(hfi);
	CHECK(percs_hfi_fd(hfi) >= 0);
	CHECK(fcntl(percs_hfi_fd(hfi), F_GETFD) & FD_CLOEXEC);
	/* A plain file is no HFI: the ioctl fails cleanly. */
	CHECK_EQ(percs_hfi_info(hfi, &info), -ENOTTY);
	percs_hfi_close(hfi);
	percs_hfi_close(NULL);
	percs_window_release(NULL);
	unlink(path);
	rmdir(dir);
}

/* The layout check refuses what the ring code cannot work with. */
static void test_layout_checks(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct percs_window *w;
	struct lp_layout l = {
		.send_fifo = a->send, .send_fifo_size = 4096,
		.recv_fifo = a->recv, .recv_fifo_size = 4096,
		.doorbell = a->db, .status = a->st,
		.imm = a->imm, .imm_slots = PERCS_IMM_SLOTS,
		.cq = a->cq, .cq_entries = PERCS_CQ_ENTRIES,
	};

	CHECK_EQ(lp_window_new(&l, -1, &w), 0);
	percs_window_release(w);
	l.send_fifo_size = 6144;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.send_fifo_size = 2048;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.send_fifo_size = 4096;
	l.cq_entries = 100;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.cq_entries = 256;
	l.imm_slots = 0;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.imm_slots = 32;
	l.status = NULL;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	fwin_free(a);
}

/* ---- reserve and map, against a fake reserve ioctl ---------------------- */

/*
 * The test binary is linked with --wrap for ioctl, mmap(64) and munmap: on
 * the fake HFI
 * fd, PERCS_IOC_WINDOW_RESERVE returns a memfd laid out like a window and
 * PERCS_IOC_KICK on it answers from fake_kick_ret; mmap can be told to
 * fail its Nth call (the iommufd selftests' fail-nth); munmaps are
 * counted.  Everything else goes to the C library.
 */
int __real_ioctl(int fd, unsigned long req, ...);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __real_munmap(void *addr, size_t len);
int __wrap_ioctl(int fd, unsigned long req, ...);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __wrap_munmap(void *addr, size_t len);
int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);
void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);

static struct {
	int hfi_fd;			/* the fake HFI, or -1 */
	int win_fd;			/* the last memfd handed out */
	int reserve_errno;		/* make the reserve fail with this */
	uint32_t drop_flags[PERCS_REGION_MAX];	/* clear in the layout */
	struct percs_window_reserve seen;	/* the last request */
	int kick_ret;
	unsigned long kick_arg;
	int mmap_calls, mmap_fail_nth, munmaps;
	uint32_t clock_version;		/* written into the clock page */
	uint64_t clock_offset;		/* where the clock page is */
	struct percs_mr_register mr_seen;	/* the last MR_REGISTER */
	struct percs_mr_deregister dereg_seen;	/* the last MR_DEREGISTER */
	int mr_errno;			/* make MR_REGISTER fail with this */
	int mr_calls;			/* MR_REGISTER and MR_DEREGISTER calls */
	uint32_t mr_live[8];		/* the fake's registrations (0: free) */
	uint64_t mr_addr[8], mr_len[8];	/* their ranges */
	uint32_t mr_access[8];		/* and rights */
	uint32_t mr_gen;
	int job_fd;			/* the fake job handed out, or -1 */
	int job_creates;		/* JOB_CREATE calls */
} R = { .hfi_fd = -1, .win_fd = -1, .clock_version = PERCS_CLOCK_VERSION,
	.job_fd = -1 };

static const uint32_t region_len[PERCS_REGION_MAX] = {
	[PERCS_REGION_SEND_FIFO] = 8192, [PERCS_REGION_RECV_FIFO] = 16384,
	[PERCS_REGION_DOORBELL] = 4096, [PERCS_REGION_STATUS] = 4096,
	[PERCS_REGION_IMM] = 4096, [PERCS_REGION_CQ] = 4096,
	[PERCS_REGION_CLOCK] = 4096,
};

static int fake_reserve(struct percs_window_reserve *r)
{
	uint64_t off = 0;
	int fd;

	R.seen = *r;
	if (R.reserve_errno) {
		errno = R.reserve_errno;
		return -1;
	}
	fd = memfd_create("percs-fake-window", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	for (int i = 0; i < PERCS_REGION_MAX; i++) {
		struct percs_region *reg = &r->regions[i];

		if (!region_len[i])
			continue;
		reg->offset = off;
		reg->length = region_len[i];
		reg->flags = PERCS_REGION_F_VALID;
		if (i == PERCS_REGION_SEND_FIFO || i == PERCS_REGION_DOORBELL ||
		    i == PERCS_REGION_IMM)
			reg->flags |= PERCS_REGION_F_WRITABLE;
		reg->flags &= ~R.drop_flags[i];
		if (i == PERCS_REGION_CLOCK)
			R.clock_offset = off;
		off += region_len[i];
	}
	if (ftruncate(fd, (off_t)off) ||
	    pwrite(fd, &R.clock_version, sizeof(R.clock_version),
		   (off_t)(R.clock_offset +
			   offsetof(struct percs_clock, version))) !=
	    sizeof(R.clock_version)) {
		close(fd);
		return -1;
	}
	r->imm_slots = PERCS_IMM_SLOTS;
	r->cq_entries = PERCS_CQ_ENTRIES;
	r->addr = (struct percs_addr){ .hub = 3, .hfi = 1, .window = 17 };
	r->fd = (uint32_t)fd;
	R.win_fd = fd;
	return fd;
}

/*
 * The fake NMMU: checks the request as the kernel does, keeps up to 8
 * handles (generation << 16 | slot) and answers ENOENT for others.
 */
static int fake_mr_register(struct percs_mr_register *r)
{
	R.mr_calls++;
	R.mr_seen = *r;
	if (R.mr_errno) {
		errno = R.mr_errno;
		return -1;
	}
	if (r->size != sizeof(*r) || r->flags || r->handle ||
	    r->access & ~PERCS_ACCESS_ALL || !r->length ||
	    r->length > PERCS_MR_MAX_LENGTH) {
		errno = EINVAL;
		return -1;
	}
	for (uint32_t i = 1; i < 8; i++) {
		if (!R.mr_live[i]) {
			R.mr_live[i] = ++R.mr_gen << 16 | i;
			R.mr_addr[i] = r->addr;
			R.mr_len[i] = r->length;
			R.mr_access[i] = r->access;
			r->handle = R.mr_live[i];
			return 0;
		}
	}
	errno = ENOSPC;
	return -1;
}

static int fake_mr_deregister(struct percs_mr_deregister *d)
{
	uint32_t slot = d->handle & 0xffff;

	R.mr_calls++;
	R.dereg_seen = *d;
	if (d->size != sizeof(*d) || d->flags || d->reserved) {
		errno = EINVAL;
		return -1;
	}
	if (slot >= 8 || !R.mr_live[slot] || R.mr_live[slot] != d->handle) {
		errno = ENOENT;
		return -1;
	}
	R.mr_live[slot] = 0;
	return 0;
}

static int fake_cau_ioctl(int fd, unsigned long req, unsigned long arg);

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	unsigned long arg;
	va_list ap;

	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (fd >= 0 && (req == PERCS_IOC_CAU_CREATE ||
			req == PERCS_IOC_CAU_JOIN ||
			req == PERCS_IOC_CAU_DESTROY))
		return fake_cau_ioctl(fd, req, arg);
	if (fd >= 0 && fd == R.hfi_fd && req == PERCS_IOC_WINDOW_RESERVE)
		return fake_reserve((struct percs_window_reserve *)arg);
	if (fd >= 0 && fd == R.hfi_fd && req == PERCS_IOC_JOB_CREATE) {
		struct percs_job_create *jc = (void *)arg;

		R.job_creates++;
		R.job_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		jc->fd = R.job_fd;
		jc->job_key = JOB_KEY;
		return R.job_fd;
	}
	if (fd >= 0 && fd == R.job_fd && req == PERCS_IOC_JOB_QUERY) {
		((struct percs_job_query *)arg)->job_key = JOB_KEY;
		return 0;
	}
	if (fd >= 0 && fd == R.win_fd && req == PERCS_IOC_MR_REGISTER)
		return fake_mr_register((struct percs_mr_register *)arg);
	if (fd >= 0 && fd == R.win_fd && req == PERCS_IOC_MR_DEREGISTER)
		return fake_mr_deregister((struct percs_mr_deregister *)arg);
	if (fd >= 0 && fd == R.win_fd && req == PERCS_IOC_KICK) {
		R.kick_arg = arg;
		if (R.kick_ret < 0) {
			errno = -R.kick_ret;
			return -1;
		}
		return R.kick_ret;
	}
	return __real_ioctl(fd, req, arg);
}

/* The doorbell: fdatasync() on the window is a kick of SEND | IMM. */
int __wrap_fdatasync(int fd)
{
	if (fd >= 0 && fd == R.win_fd) {
		R.kick_arg = PERCS_KICK_F_SEND | PERCS_KICK_F_IMM;
		if (R.kick_ret < 0) {
			errno = -R.kick_ret;
			return -1;
		}
		return 0;
	}
	return __real_fdatasync(fd);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	if (++R.mmap_calls == R.mmap_fail_nth) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap(addr, len, prot, flags, fd, off);
}

/* _FILE_OFFSET_BITS=64 turns the library's mmap() into mmap64(). */
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	if (++R.mmap_calls == R.mmap_fail_nth) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap64(addr, len, prot, flags, fd, off);
}

int __wrap_munmap(void *addr, size_t len)
{
	R.munmaps++;
	return __real_munmap(addr, len);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The protection /proc/self/maps shows for the mapping at @p ("rw-s"). */
static bool map_prot(const void *p, char prot[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, prot) == 3 &&
		    (unsigned long)p >= lo && (unsigned long)p < hi)
			found = true;
	fclose(f);
	return found;
}

static struct percs_hfi *fake_hfi_open(char *dir)
{
	struct percs_hfi *hfi = NULL;
	char path[64];
	int fd;

	if (!mkdtemp(dir))
		return NULL;
	setenv("PERCS_DEV_DIR", dir, 1);
	snprintf(path, sizeof(path), "%s/percs-hfi0", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return NULL;
	close(fd);
	if (percs_hfi_open(0, 0, &hfi))
		return NULL;
	R.hfi_fd = percs_hfi_fd(hfi);
	unlink(path);
	rmdir(dir);
	return hfi;
}

/*
 * A window that names no job joins the process's default job: the one
 * PERCS_JOB_FD names (checked to be a job), else a private job created
 * once.
 */
static void test_reserve_default_job(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX", num[16];
	struct percs_hfi *hfi = fake_hfi_open(dir);
	struct percs_window_attr attr = {
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
		.window = PERCS_WINDOW_ANY,
	};
	struct percs_window *w;
	int job, status, devnull;
	uint32_t key;
	pid_t pid;

	REQUIRE(hfi);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	REQUIRE(devnull > 0);
	/* A launcher's variable that names no job is an error, not ignored. */
	static const char *const bad[] = { "", "x", "0", "-3", "12x",
					   "99999999999" };
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("PERCS_JOB_FD", bad[i], 1);
		if (!*bad[i])
			continue;	/* empty: as if unset, tested below */
		CHECK_EQ(percs_job_default(hfi), -EINVAL);
	}
	snprintf(num, sizeof(num), "%d", devnull);
	setenv("PERCS_JOB_FD", num, 1);
	CHECK_EQ(percs_job_default(hfi), -EINVAL);
	R.seen.size = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EINVAL);
	CHECK_EQ(R.seen.size, 0);	/* nothing reserved */
	CHECK_EQ(R.job_creates, 0);

	/* A job fd in the variable: used as is, nothing created. */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct percs_job_create jc = { .size = sizeof(jc) };
		int fd = ioctl(percs_hfi_fd(hfi), PERCS_IOC_JOB_CREATE, &jc);

		snprintf(num, sizeof(num), "%d", fd);
		setenv("PERCS_JOB_FD", num, 1);
		R.job_creates = 0;
		_exit(percs_job_default(hfi) == fd && !R.job_creates &&
		      !percs_window_reserve(hfi, &attr, &w) &&
		      R.seen.job_fd == fd && !R.job_creates ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* No variable: one private job, created once, shared by windows. */
	unsetenv("PERCS_JOB_FD");
	job = percs_job_default(hfi);
	CHECK(job > 0);
	CHECK_EQ(job, R.job_fd);
	CHECK_EQ(percs_job_default(hfi), job);
	CHECK_EQ(R.job_creates, 1);
	CHECK_EQ(percs_job_key(job, &key), 0);
	CHECK_EQ(key, JOB_KEY);
	CHECK_EQ(percs_job_key(devnull, &key), -EINVAL);
	CHECK_EQ(percs_job_key(-1, &key), -EBADF);
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.seen.job_fd, job);
	percs_window_release(w);
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.seen.job_fd, job);
	CHECK_EQ(R.job_creates, 1);
	percs_window_release(w);
	close(devnull);
	percs_hfi_close(hfi);
}

/* Reserve maps every region with the right protection; release undoes it. */
static void test_reserve_maps_regions(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX", prot[5];
	struct percs_hfi *hfi = fake_hfi_open(dir);
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.recv_fifo_size = 16384,
	};
	struct percs_window *w;
	struct percs_status *st;
	int fds;

	REQUIRE(hfi);
	fds = count_fds();
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EPROTO);
	CHECK_EQ(R.seen.size, sizeof(struct percs_window_reserve));
	CHECK_EQ(R.seen.send_fifo_size, PERCS_FIFO_DEF_SIZE);
	CHECK_EQ(R.seen.recv_fifo_size, 16384);
	CHECK_EQ(R.seen.job_fd, 9);
	CHECK_EQ(R.seen.window, PERCS_WINDOW_ANY);
	/* No mode asked, none in the environment: auto. */
	CHECK_EQ(R.seen.flags, PERCS_WINDOW_F_AUTO);
	CHECK_EQ(R.mmap_calls, 0);	/* the default send FIFO is too big */
	CHECK_EQ(count_fds(), fds);	/* and the window fd was closed */

	attr.send_fifo_size = 8192;
	/* Kick mode asked for: the library's flag never reaches the kernel. */
	attr.flags = PERCS_WINDOW_ATTR_KICK;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.seen.flags, 0);
	CHECK_EQ(percs_window_mode(w), 0);
	CHECK_EQ(R.mmap_calls, 7);
	CHECK_EQ(percs_window_fd(w), R.win_fd);
	CHECK_EQ(count_fds(), fds + 1);
	CHECK_EQ(percs_window_addr(w).hub, 3);
	CHECK_EQ(percs_window_addr(w).window, 17);
	CHECK_EQ(w->sq.units, 64);
	CHECK_EQ(w->rq.units, 128);
	CHECK(map_prot(w->sq.base, prot) && !strcmp(prot, "rw-s"));
	CHECK(map_prot(w->rq.base, prot) && !strcmp(prot, "r--s"));
	CHECK(map_prot(w->db, prot) && !strcmp(prot, "rw-s"));
	CHECK(map_prot(w->status, prot) && !strcmp(prot, "r--s"));
	CHECK(map_prot(w->imm.base, prot) && !strcmp(prot, "rw-s"));
	CHECK(map_prot(w->cq.ring, prot) && !strcmp(prot, "r--s"));
	CHECK(percs_window_clock(w) != NULL);
	CHECK(map_prot((const void *)percs_window_clock(w), prot) &&
	      !strcmp(prot, "r--s"));

	/* The mappings are shared: what the "HFI" writes, we read. */
	st = __real_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			 R.win_fd, 8192 + 16384 + 4096);
	REQUIRE(st != MAP_FAILED);
	st->flags = PERCS_STATUS_SEND_BLOCKED;
	CHECK_EQ(percs_window_status(w)->flags, PERCS_STATUS_SEND_BLOCKED);
	__real_munmap(st, 4096);

	/* Kicks pass the flags as the argument and return the count. */
	R.kick_ret = 3;
	CHECK_EQ(percs_kick(w, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM), 3);
	CHECK_EQ(R.kick_arg, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
	/* The send doorbell is fdatasync(): the same kick, cheaper. */
	R.kick_ret = -EINVAL;
	CHECK_EQ(percs_send_trigger(w), -EINVAL);
	CHECK_EQ(R.kick_arg, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
	CHECK_EQ(w->db->send_tail, 0);

	/* The clock page as the "kernel" writes it: CLOCK_MONOTONIC mode. */
	{
		struct percs_clock *ck;
		struct timespec t0, t1;
		uint64_t ns, a, b;

		ck = __real_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				 R.win_fd, (off_t)R.clock_offset);
		REQUIRE(ck != MAP_FAILED);
		ck->mono_offset = 1000000;
		ck->seq = 2;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(percs_clock_ns(w, &ns), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		a = (uint64_t)t0.tv_sec * 1000000000u + t0.tv_nsec - 1000000;
		b = (uint64_t)t1.tv_sec * 1000000000u + t1.tv_nsec - 1000000;
		CHECK(ns >= a && ns <= b);
		CHECK_EQ(percs_window_clock(w)->updates, 0);
		ck->updates = 5;
		CHECK_EQ(percs_window_clock(w)->updates, 5);
		__real_munmap(ck, 4096);
	}

	R.munmaps = 0;
	percs_window_release(w);
	CHECK_EQ(R.munmaps, 7);
	CHECK_EQ(count_fds(), fds);
	percs_hfi_close(hfi);
}

/* Any failure after the ioctl undoes every mapping and closes the fd. */
static void test_reserve_unwinds(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	struct percs_hfi *hfi = fake_hfi_open(dir);
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
	};
	struct percs_window *w = NULL;
	int fds;

	REQUIRE(hfi);
	fds = count_fds();
	for (int nth = 1; nth <= 7; nth++) {
		R.mmap_calls = R.munmaps = 0;
		R.mmap_fail_nth = nth;
		CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -ENOMEM);
		CHECK_EQ(R.munmaps, nth - 1);
		CHECK_EQ(count_fds(), fds);
	}
	R.mmap_fail_nth = 0;

	/* A layout without a status page, or with a read-only send FIFO. */
	R.drop_flags[PERCS_REGION_STATUS] = PERCS_REGION_F_VALID;
	R.mmap_calls = R.munmaps = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EPROTO);
	CHECK_EQ(R.mmap_calls, 0);
	R.drop_flags[PERCS_REGION_STATUS] = 0;
	R.drop_flags[PERCS_REGION_SEND_FIFO] = PERCS_REGION_F_WRITABLE;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EPROTO);
	CHECK_EQ(R.mmap_calls, 0);
	R.drop_flags[PERCS_REGION_SEND_FIFO] = 0;
	CHECK_EQ(count_fds(), fds);

	/* No clock region (an older module), or a page of another version:
	 * the window works, the clock answers -EOPNOTSUPP.
	 */
	R.drop_flags[PERCS_REGION_CLOCK] = PERCS_REGION_F_VALID;
	R.mmap_calls = R.munmaps = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.mmap_calls, 6);
	CHECK(percs_window_clock(w) == NULL);
	{
		uint64_t ns = 77;

		CHECK_EQ(percs_clock_ns(w, &ns), -EOPNOTSUPP);
		CHECK_EQ(ns, 77);
	}
	percs_window_release(w);
	CHECK_EQ(R.munmaps, 6);
	R.drop_flags[PERCS_REGION_CLOCK] = 0;
	R.clock_version = PERCS_CLOCK_VERSION + 1;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK(percs_window_clock(w) == NULL);
	percs_window_release(w);
	R.clock_version = PERCS_CLOCK_VERSION;
	w = NULL;
	CHECK_EQ(count_fds(), fds);

	/* The ioctl's own errors come back as they are. */
	R.reserve_errno = ENOSPC;
	R.mmap_calls = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -ENOSPC);
	CHECK_EQ(R.mmap_calls, 0);
	R.reserve_errno = 0;
	CHECK_EQ(percs_window_reserve(hfi, NULL, &w), -EINVAL);
	CHECK_EQ(percs_window_reserve(hfi, &attr, NULL), -EINVAL);
	CHECK(w == NULL);
	CHECK_EQ(count_fds(), fds);
	percs_hfi_close(hfi);
}

/* ---- memory registration, against a fake NMMU ---------------------------- */

static struct percs_window *fake_window(struct percs_hfi **hfi, char *dir)
{
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
	};
	struct percs_window *w;

	*hfi = fake_hfi_open(dir);
	if (!*hfi || percs_window_reserve(*hfi, &attr, &w))
		return NULL;
	return w;
}

/* Register sends the range and rights as given; the handle comes back. */
static void test_mr_reg_dereg(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t *buf = malloc(8192);
	struct percs_hfi *hfi;
	struct percs_window *w = fake_window(&hfi, dir);
	uint32_t h1 = 0, h2 = 0, h3 = 0;

	REQUIRE(w && buf);
	CHECK_EQ(percs_mr_reg(w, buf + 3, 8189, PERCS_ACCESS_REMOTE_READ |
			      PERCS_ACCESS_REMOTE_WRITE, &h1), 0);
	CHECK_EQ(R.mr_seen.size, sizeof(struct percs_mr_register));
	CHECK_EQ(R.mr_seen.flags, 0);
	CHECK_EQ(R.mr_seen.handle, 0);
	CHECK_EQ(R.mr_seen.addr, (uintptr_t)(buf + 3));
	CHECK_EQ(R.mr_seen.length, 8189);
	CHECK_EQ(R.mr_seen.access,
		 PERCS_ACCESS_REMOTE_READ | PERCS_ACCESS_REMOTE_WRITE);
	CHECK_EQ(h1, 1u << 16 | 1);

	/* Every right, and none (a local source): passed through. */
	CHECK_EQ(percs_mr_reg(w, buf, 1, PERCS_ACCESS_ALL, &h2), 0);
	CHECK_EQ(R.mr_seen.access, PERCS_ACCESS_ALL);
	CHECK_EQ(R.mr_seen.length, 1);
	CHECK_EQ(percs_mr_reg(w, buf, 4096, 0, &h3), 0);
	CHECK_EQ(R.mr_seen.access, 0);
	CHECK(h2 != h1 && h3 != h1 && h3 != h2);

	CHECK_EQ(percs_mr_dereg(w, h1), 0);
	CHECK_EQ(R.dereg_seen.size, sizeof(struct percs_mr_deregister));
	CHECK_EQ(R.dereg_seen.flags, 0);
	CHECK_EQ(R.dereg_seen.reserved, 0);
	CHECK_EQ(R.dereg_seen.handle, h1);
	/* Gone: a second deregistration and a stale handle are -ENOENT. */
	CHECK_EQ(percs_mr_dereg(w, h1), -ENOENT);
	CHECK_EQ(percs_mr_reg(w, buf, 64, 0, &h1), 0);
	CHECK_EQ(h1 & 0xffff, 1);		/* the slot again ... */
	CHECK_EQ(percs_mr_dereg(w, 1u << 16 | 1), -ENOENT); /* ... not the handle */
	CHECK_EQ(percs_mr_dereg(w, h1), 0);
	CHECK_EQ(percs_mr_dereg(w, h2), 0);
	CHECK_EQ(percs_mr_dereg(w, h3), 0);
	CHECK_EQ(percs_mr_dereg(w, 0), -ENOENT);
	percs_window_release(w);
	percs_hfi_close(hfi);
	free(buf);
}

/* Kernel errors come back as -errno; bad arguments never reach it. */
static void test_mr_errors(void)
{
	static const int errs[] = { ENOMEM, EFAULT, ENOSPC, EINVAL, EPERM };
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t buf[64];
	struct percs_hfi *hfi;
	struct percs_window *w = fake_window(&hfi, dir);
	uint32_t h = 0xdeadbeef;
	int calls;

	REQUIRE(w);
	for (unsigned int i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		R.mr_errno = errs[i];
		CHECK_EQ(percs_mr_reg(w, buf, sizeof(buf), 0, &h), -errs[i]);
		CHECK_EQ(h, 0xdeadbeef);
	}
	R.mr_errno = 0;
	/* What the library does not check, the kernel does: passed as is. */
	CHECK_EQ(percs_mr_reg(w, buf, 0, 0, &h), -EINVAL);
	CHECK_EQ(R.mr_seen.length, 0);
	CHECK_EQ(percs_mr_reg(w, buf, SIZE_MAX, 0, &h), -EINVAL);
	CHECK_EQ(R.mr_seen.length, (uint64_t)SIZE_MAX);
	CHECK_EQ(percs_mr_reg(w, buf, 8, 1u << 4, &h), -EINVAL);
	CHECK_EQ(R.mr_seen.access, 1u << 4);
	CHECK_EQ(h, 0xdeadbeef);

	calls = R.mr_calls;
	CHECK_EQ(percs_mr_reg(NULL, buf, 8, 0, &h), -EINVAL);
	CHECK_EQ(percs_mr_reg(w, buf, 8, 0, NULL), -EINVAL);
	CHECK_EQ(percs_mr_dereg(NULL, 1), -EINVAL);
	CHECK_EQ(R.mr_calls, calls);
	CHECK_EQ(h, 0xdeadbeef);
	percs_window_release(w);
	percs_hfi_close(hfi);
}

/* ---- threaded: a polling engine with the NEED_WAKEUP handshake ---------- */

#define STREAM_PACKETS	100000
#define STREAM_IMM	20000

static bool engine_stop;
static unsigned int lost_wakeups, engine_sleeps;

/*
 * The engine thread: run passes while there is work; after a while idle,
 * set NEED_WAKEUP, full barrier, re-check, and sleep until kicked.  A sleep
 * that times out while a doorbell shows unprocessed work is a lost wake-up.
 */
static void *engine_thread(void *arg)
{
	unsigned int idle = 0;

	(void)arg;
	while (!__atomic_load_n(&engine_stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts;

		if (engine_all()) {
			idle = 0;
			continue;
		}
		if (++idle < 50) {
			sched_yield();
			continue;
		}
		for (int i = 0; i < NWIN; i++)
			if (H.win[i])
				__atomic_fetch_or(&H.win[i]->st->flags,
						  PERCS_STATUS_NEED_WAKEUP,
						  __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!engine_all()) {
			engine_sleeps++;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 3;
			if (sem_timedwait(&H.wake, &ts) && errno == ETIMEDOUT &&
			    !__atomic_load_n(&engine_stop, __ATOMIC_ACQUIRE) &&
			    engine_all())
				lost_wakeups++;
		}
		for (int i = 0; i < NWIN; i++)
			if (H.win[i])
				__atomic_fetch_and(&H.win[i]->st->flags,
						   ~PERCS_STATUS_NEED_WAKEUP,
						   __ATOMIC_SEQ_CST);
		idle = 0;
	}
	return NULL;
}

struct stream_arg {
	struct fwin *from;
	struct fwin *to;
	bool imm;
	unsigned int count;
	unsigned int bad;
};

static void *sender_thread(void *p)
{
	struct stream_arg *s = p;
	uint8_t buf[PERCS_MAX_PAYLOAD];

	for (uint32_t i = 0; i < s->count; i++) {
		size_t len = s->imm ? i % 97 : (i * 37) % 700;
		int r;

		fill(buf, len, i);
		do {
			r = s->imm ? percs_icswx(s->from->w, &s->to->addr, buf,
						 len, i) :
				     percs_send(s->from->w, &s->to->addr, buf,
						len, i, 0);
			if (r == -EAGAIN)
				sched_yield();
		} while (r == -EAGAIN);
		if (r)
			s->bad++;
	}
	return NULL;
}

static void *receiver_thread(void *p)
{
	struct stream_arg *s = p;
	uint8_t out[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	uint32_t i = 0;

	while (i < s->count) {
		int r = percs_recv(s->to->w, &h, out, sizeof(out));

		if (r == -EAGAIN) {
			sched_yield();
			continue;
		}
		if (r < 0 || h.tag != i || !pattern_ok(out, r, i))
			s->bad++;
		i++;
	}
	return NULL;
}

static void run_stream(bool imm, unsigned int count)
{
	struct fwin *a = fwin_new(1, 4096, 4096, PERCS_WINDOW_F_POLL);
	struct fwin *b = fwin_new(2, 4096, 4096, PERCS_WINDOW_F_POLL);
	struct stream_arg s = { .from = a, .to = b, .imm = imm, .count = count };
	pthread_t e, tx, rx;

	H.threaded = true;
	sem_init(&H.wake, 0, 0);
	REQUIRE(!pthread_create(&e, NULL, engine_thread, NULL));
	REQUIRE(!pthread_create(&rx, NULL, receiver_thread, &s));
	REQUIRE(!pthread_create(&tx, NULL, sender_thread, &s));
	pthread_join(tx, NULL);
	pthread_join(rx, NULL);
	__atomic_store_n(&engine_stop, true, __ATOMIC_RELEASE);
	sem_post(&H.wake);
	pthread_join(e, NULL);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(lost_wakeups, 0);
	CHECK_EQ(b->st->packets_received, count);
	CHECK_EQ(H.violations, 0);
	printf("#   %u packets, %u engine sleeps, %u sender kicks, %u receiver kicks\n",
	       count, engine_sleeps, a->nkicks, b->nkicks);
	fwin_free(a);
	fwin_free(b);
	sem_destroy(&H.wake);
}

static void test_threaded_fifo_stream(void)
{
	run_stream(false, STREAM_PACKETS);
}

static void test_threaded_icswx_stream(void)
{
	run_stream(true, STREAM_IMM);
}

/* ---- the global clock ------------------------------------------------------ */

/*
 * A window over static regions with a clock page the test writes, and a
 * fake time source: the TSC and CLOCK_MONOTONIC reads return what the test
 * says, and may call back (a writer striking in the middle of a read).
 */
struct fclock {
	struct percs_clock *page;
	struct percs_window *w;
	struct lp_clock_hooks hooks;
	uint64_t tsc, mono;
	int mono_err;
	unsigned int tsc_reads, mono_reads;
	void (*strike)(struct fclock *c, unsigned int nth_read);
};

static uint64_t fclock_tsc(void *ctx)
{
	struct fclock *c = ctx;

	c->tsc_reads++;
	if (c->strike)
		c->strike(c, c->tsc_reads + c->mono_reads);
	return c->tsc;
}

static int fclock_mono(void *ctx, uint64_t *ns)
{
	struct fclock *c = ctx;

	c->mono_reads++;
	if (c->strike)
		c->strike(c, c->tsc_reads + c->mono_reads);
	if (c->mono_err)
		return c->mono_err;
	*ns = c->mono;
	return 0;
}

/* The kernel's writer: odd count, full barrier, fields, release even. */
static void clock_write(struct percs_clock *p, uint32_t flags,
			uint64_t tsc_base, uint64_t ns_base, uint32_t mult,
			uint32_t shift, uint64_t mono_offset)
{
	uint32_t seq = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&p->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&p->flags, flags, __ATOMIC_RELAXED);
	__atomic_store_n(&p->ns_base, ns_base, __ATOMIC_RELAXED);
	__atomic_store_n(&p->mult, mult, __ATOMIC_RELAXED);
	__atomic_store_n(&p->shift, shift, __ATOMIC_RELAXED);
	__atomic_store_n(&p->mono_offset, mono_offset, __ATOMIC_RELAXED);
	__atomic_store_n(&p->tsc_base, tsc_base, __ATOMIC_RELAXED);
	__atomic_store_n(&p->seq, seq + 2, __ATOMIC_RELEASE);
}

static struct fwin *fclock_win;

static void fclock_init(struct fclock *c, uint32_t version)
{
	struct fwin *f = fwin_new(1, 4096, 4096, 0);
	struct lp_layout l = {
		.send_fifo = f->send, .send_fifo_size = 4096,
		.recv_fifo = f->recv, .recv_fifo_size = 4096,
		.doorbell = f->db, .status = f->st,
		.imm = f->imm, .imm_slots = PERCS_IMM_SLOTS,
		.cq = f->cq, .cq_entries = PERCS_CQ_ENTRIES,
	};

	memset(c, 0, sizeof(*c));
	c->page = zalloc(4096);
	c->page->version = version;
	l.clock = c->page;
	if (lp_window_new(&l, -1, &c->w))
		abort();
	c->hooks = (struct lp_clock_hooks){
		.tsc = fclock_tsc, .mono = fclock_mono, .ctx = c,
	};
	c->w->clock.hooks = &c->hooks;
	fclock_win = f;
}

static void fclock_fini(struct fclock *c)
{
	percs_window_release(c->w);
	free(c->page);
	fwin_free(fclock_win);
}

/* The exact (delta * mult) >> shift, mod 2^64 as the library's. */
static uint64_t ref_scale(uint64_t delta, uint32_t mult, uint32_t shift)
{
	return (uint64_t)(((unsigned __int128)delta * mult) >> shift);
}

static uint64_t rnd64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * TSC mode: ns_base + ((tsc - tsc_base) * mult >> shift) with the whole
 * 96-bit product, for deltas across the 32-bit boundary and huge ones, at
 * every scale the kernel can choose; a TSC below the base reads the base;
 * one TSC read per call, no CLOCK_MONOTONIC read.
 */
static void test_clock_conversion(void)
{
	static const struct { uint32_t mult, shift; } sc[] = {
		{ 1651921299u, 32 },	/* 2.6 GHz */
		{ 4294967295u, 32 },	/* just over 1 GHz */
		{ 2147483648u, 31 },	/* 1 GHz */
		{ 2863311530u, 30 },	/* 375 MHz */
		{ 3000000000u, 1 },
		{ 7, 0 },
	};
	static const uint64_t deltas[] = {
		0, 1, 2, 0xffffffffull, 0x100000000ull, 0x100000001ull,
		1000000000000ull, (1ull << 40) + 12345, 1ull << 62,
		1ull << 63, ~0ull - 1,
	};
	uint64_t seed = 0x9e3779b97f4a7c15ull, ns;
	struct fclock c;

	fclock_init(&c, PERCS_CLOCK_VERSION);
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		uint64_t tsc_base = 123456789, ns_base = 1000;

		clock_write(c.page, PERCS_CLOCK_F_TSC, tsc_base, ns_base,
			    sc[i].mult, sc[i].shift, 0);
		for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
			c.tsc = tsc_base + deltas[j];
			if (c.tsc < tsc_base)
				continue;
			CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
			CHECK_EQ(ns, ns_base + ref_scale(deltas[j], sc[i].mult,
							 sc[i].shift));
		}
		for (int j = 0; j < 2000; j++) {
			uint64_t d = rnd64(&seed) >> (j % 64);

			c.tsc = tsc_base + d;
			if (c.tsc < tsc_base)
				continue;
			CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
			CHECK_EQ(ns, ns_base + ref_scale(d, sc[i].mult,
							 sc[i].shift));
		}
		/* Before the base (another CPU's TSC a hair behind): the base. */
		c.tsc = tsc_base - 1;
		CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
		CHECK_EQ(ns, ns_base);
		c.tsc = 0;
		CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
		CHECK_EQ(ns, ns_base);
	}
	/* One second of a 2.6 GHz TSC is one second. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1651921299u, 32, 0);
	c.tsc = 2599983000ull;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK(ns >= 999999999 && ns <= 1000000000);
	c.tsc_reads = c.mono_reads = 0;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(c.tsc_reads, 1);
	CHECK_EQ(c.mono_reads, 0);
	/* A scale no kernel writes. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1, 33, 0);
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EPROTO);
	fclock_fini(&c);
}

/*
 * Without PERCS_CLOCK_F_TSC: CLOCK_MONOTONIC minus mono_offset, no TSC
 * read; its errors come back; no page, another version or NULL arguments.
 */
static void test_clock_fallback_and_args(void)
{
	struct fclock c;
	uint64_t ns = 0;

	fclock_init(&c, PERCS_CLOCK_VERSION);
	clock_write(c.page, 0, 999, 999, 1651921299u, 32, 1000);
	c.mono = 5000;
	c.tsc = 1ull << 40;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(ns, 4000);
	CHECK_EQ(c.tsc_reads, 0);
	CHECK_EQ(c.mono_reads, 1);
	c.mono_err = -EINVAL;
	ns = 1;
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EINVAL);
	CHECK_EQ(ns, 1);
	CHECK_EQ(percs_clock_ns(c.w, NULL), -EINVAL);
	CHECK_EQ(percs_clock_ns(NULL, &ns), -EINVAL);
	CHECK(percs_window_clock(c.w) == c.page);
	fclock_fini(&c);

	/* A page of a layout this library does not know: no clock. */
	fclock_init(&c, PERCS_CLOCK_VERSION + 1);
	clock_write(c.page, 0, 0, 0, 1, 0, 0);
	CHECK(percs_window_clock(c.w) == NULL);
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EOPNOTSUPP);
	fclock_fini(&c);

	/* The real CLOCK_MONOTONIC, no hooks. */
	fclock_init(&c, PERCS_CLOCK_VERSION);
	c.w->clock.hooks = NULL;
	clock_write(c.page, 0, 0, 0, 0, 0, 0);
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK(ns >= (uint64_t)t0.tv_sec * 1000000000u + t0.tv_nsec);
		CHECK(ns <= (uint64_t)t1.tv_sec * 1000000000u + t1.tv_nsec);
	}
	fclock_fini(&c);
}

/* Writers that strike in the middle of a read (from the time read hook). */
static void strike_rebase_once(struct fclock *c, unsigned int n)
{
	if (n == 1)	/* a whole rewrite: new scale and base */
		clock_write(c->page, PERCS_CLOCK_F_TSC, 1000, 5000000, 1u << 31,
			    32, 0);
}

static void strike_to_tsc(struct fclock *c, unsigned int n)
{
	if (n == 1)	/* fallback -> TSC mode while we read CLOCK_MONOTONIC */
		clock_write(c->page, PERCS_CLOCK_F_TSC, 1000, 7000, 1u << 31,
			    32, 0);
}

static void strike_begin(struct fclock *c, unsigned int n)
{
	if (n == 1) {	/* a rewrite begins: odd count, half the fields */
		__atomic_store_n(&c->page->seq, c->page->seq + 1,
				 __ATOMIC_SEQ_CST);
		c->page->ns_base = 1ull << 50;
	}
}

struct finisher {
	struct fclock *c;
	bool done;
};

/* Ends strike_begin's rewrite 20 ms later, from another thread. */
static void *finish_rewrite(void *p)
{
	struct finisher *f = p;
	struct percs_clock *k = f->c->page;

	usleep(20000);
	k->ns_base = 9000;
	k->tsc_base = 1000;
	k->mult = 1u << 31;
	k->shift = 32;
	__atomic_store_n(&f->done, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&k->seq, k->seq + 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The sequence count: a rewrite during a read makes the reader start over
 * and answer from the new page; an odd count makes it wait for the writer
 * (not answer from a half-written page); a count that stays odd gives up
 * with -EAGAIN instead of hanging.
 */
static void test_clock_seqcount_retry(void)
{
	struct finisher fin;
	struct fclock c;
	pthread_t th;
	uint64_t ns;

	fclock_init(&c, PERCS_CLOCK_VERSION);

	/* Complete rewrite between the first count load and the recheck. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1651921299u, 32, 0);
	c.tsc = 3000;
	c.strike = strike_rebase_once;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(ns, 5000000 + 1000);		/* (3000 - 1000) / 2 */
	CHECK_EQ(c.tsc_reads, 2);

	/* Mode switch during a CLOCK_MONOTONIC read. */
	clock_write(c.page, 0, 0, 0, 0, 0, 100);
	c.tsc_reads = c.mono_reads = 0;
	c.mono = 1ull << 40;
	c.strike = strike_to_tsc;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(ns, 7000 + 1000);
	CHECK_EQ(c.mono_reads, 1);
	CHECK_EQ(c.tsc_reads, 1);

	/* A rewrite that begins during the read and ends 20 ms later. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1651921299u, 32, 0);
	c.tsc_reads = c.mono_reads = 0;
	c.strike = strike_begin;
	fin = (struct finisher){ .c = &c };
	REQUIRE(!pthread_create(&th, NULL, finish_rewrite, &fin));
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK(__atomic_load_n(&fin.done, __ATOMIC_SEQ_CST));
	CHECK_EQ(ns, 9000 + 1000);
	CHECK_EQ(c.tsc_reads, 2);
	pthread_join(th, NULL);

	/* Odd for good: -EAGAIN after a second, no time read from a torn
	 * page.
	 */
	c.strike = NULL;
	c.tsc_reads = 0;
	c.page->seq |= 1;
	ns = 5;
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EAGAIN);
	CHECK_EQ(ns, 5);
	CHECK_EQ(c.tsc_reads, 0);
	fclock_fini(&c);
}

/* ---- threaded: readers against a writer rewriting the page --------------- */

#define CLK_MULT	1651921299u
#define CLK_SHIFT	32

static struct {
	struct percs_clock *page;
	uint64_t tsc;		/* the fake TSC: every read advances it */
	bool stop;
	unsigned long rewrites;
} CK;

static __thread unsigned long ck_tsc_reads;

static uint64_t ck_tsc(void *ctx)
{
	(void)ctx;
	ck_tsc_reads++;
	return __atomic_add_fetch(&CK.tsc, 977, __ATOMIC_SEQ_CST);
}

static int ck_mono(void *ctx, uint64_t *ns)
{
	(void)ctx;
	*ns = 0;
	return -ENOSYS;
}

/*
 * Rebase the page again and again on one line, F(t) = t * mult >> shift,
 * at random earlier points: any two rewrites pair a tsc_base with an
 * ns_base far from it, so a reader mixing fields of two rewrites is off by
 * up to seconds, while a consistent read is F(t) or F(t) - 1.
 */
static void *ck_writer(void *arg)
{
	uint64_t seed = 12345;

	(void)arg;
	while (!__atomic_load_n(&CK.stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = __atomic_load_n(&CK.tsc, __ATOMIC_SEQ_CST);
		uint64_t b = now ? rnd64(&seed) % now : 0;

		clock_write(CK.page, PERCS_CLOCK_F_TSC, b,
			    ref_scale(b, CLK_MULT, CLK_SHIFT), CLK_MULT,
			    CLK_SHIFT, 0);
		CK.rewrites++;
	}
	return NULL;
}

struct ck_reader {
	struct percs_window *w;
	unsigned long reads, bad, retries;
};

static void *ck_reader(void *arg)
{
	struct ck_reader *r = arg;
	uint64_t t0 = (uint64_t)time(NULL);

	/* Until plenty of reads raced a rewrite, at most 5 s. */
	while (r->retries < 500 && (uint64_t)time(NULL) < t0 + 5) {
		uint64_t before = __atomic_load_n(&CK.tsc, __ATOMIC_SEQ_CST);
		unsigned long calls = ck_tsc_reads;
		uint64_t ns, t, f;

		if (percs_clock_ns(r->w, &ns)) {
			r->bad++;
			continue;
		}
		/* The TSC value this read used is not returned: bound it. */
		t = __atomic_load_n(&CK.tsc, __ATOMIC_SEQ_CST);
		f = ref_scale(t, CLK_MULT, CLK_SHIFT);
		if (ns > f || ns + 1 < ref_scale(before, CLK_MULT, CLK_SHIFT))
			r->bad++;
		/* More than one TSC read for this call: it started over. */
		if (ck_tsc_reads - calls > 1)
			r->retries++;
		r->reads++;
	}
	return NULL;
}

static void test_clock_threaded_rewrites(void)
{
	static const struct lp_clock_hooks hooks = {
		.tsc = ck_tsc, .mono = ck_mono,
	};
	struct ck_reader rd[2];
	pthread_t wr, th[2];
	struct fclock c;

	fclock_init(&c, PERCS_CLOCK_VERSION);
	CK.page = c.page;
	CK.tsc = 1ull << 32;
	clock_write(CK.page, PERCS_CLOCK_F_TSC, 0, 0, CLK_MULT, CLK_SHIFT, 0);
	c.w->clock.hooks = &hooks;
	REQUIRE(!pthread_create(&wr, NULL, ck_writer, NULL));
	for (int i = 0; i < 2; i++) {
		rd[i] = (struct ck_reader){ .w = c.w };
		REQUIRE(!pthread_create(&th[i], NULL, ck_reader, &rd[i]));
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&CK.stop, true, __ATOMIC_RELEASE);
	pthread_join(wr, NULL);
	printf("#   %lu + %lu reads, %lu + %lu raced a rewrite, %lu rewrites\n",
	       rd[0].reads, rd[1].reads, rd[0].retries, rd[1].retries,
	       CK.rewrites);
	CHECK_EQ(rd[0].bad + rd[1].bad, 0);
	CHECK(rd[0].retries + rd[1].retries > 0);
	fclock_fini(&c);
}

/* ---- atomics: the fake atomic unit ---------------------------------------- */

/* A registration of a target window, as the fake atomic unit sees it. */
struct ftmr {
	uint16_t window;
	uint32_t handle;
	uint8_t *base;
	uint64_t len;
	uint32_t access;
};

/* One descriptor as the fake found it in the send FIFO. */
struct alog {
	struct percs_pkt_hdr h;
	struct percs_atomic_ext e;
	struct percs_atomic_op ops[PERCS_ATOMIC_MAX_PACKED];
	uint64_t compare;
};

#define A_LOG		4096
#define A_HELD		1024

static struct {
	struct ftmr mr[8];
	unsigned int nmr;
	bool hold;		/* completions wait in held[] */
	unsigned int release;	/* held completions posted per kick */
	unsigned int release_after; /* or all of them every Nth kick */
	unsigned int kicks;
	int kick_err;		/* kicks fail with this ... */
	unsigned int kick_err_after; /* ... once kicks passes this */
	struct {
		uint16_t win;
		struct percs_cqe c;
	} held[A_HELD];
	unsigned int nheld;
	int force_res;		/* complete every descriptor with this */
	unsigned int meddle;	/* change the operand before this many CSWAPs */
	unsigned int descs;	/* descriptors executed */
	unsigned int max_inflight; /* of descs minus entries consumed */
	struct alog log[A_LOG];
} A;

static uint32_t ftmr_add(uint16_t window, void *base, uint64_t len,
			 uint32_t access, uint32_t handle)
{
	struct ftmr *m = &A.mr[A.nmr++];

	*m = (struct ftmr){
		.window = window, .handle = handle ? handle : 0x700 + A.nmr,
		.base = base, .len = len, .access = access,
	};
	return m->handle;
}

static const struct ftmr *ftmr_find(uint16_t window, uint32_t handle)
{
	for (unsigned int i = 0; i < A.nmr; i++)
		if (A.mr[i].window == window && A.mr[i].handle == handle)
			return &A.mr[i];
	return NULL;
}

static uint64_t a_mask(unsigned int width)
{
	return width == 8 ? ~0ULL : (1ULL << (width * 8)) - 1;
}

static uint64_t a_load(const void *p, unsigned int width)
{
	switch (width) {
	case 1: return *(const uint8_t *)p;
	case 2: return *(const uint16_t *)p;
	case 4: return *(const uint32_t *)p;
	default: return *(const uint64_t *)p;
	}
}

static void a_store(void *p, unsigned int width, uint64_t v)
{
	switch (width) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 2: *(uint16_t *)p = (uint16_t)v; break;
	case 4: *(uint32_t *)p = (uint32_t)v; break;
	default: *(uint64_t *)p = v; break;
	}
}

/* The reference arithmetic (independent of the library and the kernel). */
static uint64_t a_apply(unsigned int op, unsigned int width, uint64_t old,
			uint64_t v, uint64_t cmp)
{
	switch (op) {
	case PERCS_ATOMIC_ADD: return (old + v) & a_mask(width);
	case PERCS_ATOMIC_AND: return old & v;
	case PERCS_ATOMIC_OR: return old | v;
	case PERCS_ATOMIC_XOR: return old ^ v;
	default: return old == cmp ? v : old;
	}
}

/* Every rule of the uAPI header: the library must never break one. */
static bool a_desc_ok(const struct percs_pkt_hdr *h, const struct alog *l)
{
	const struct percs_atomic_ext *e = &l->e;
	bool fetch = e->flags & PERCS_ATOMIC_F_FETCH;
	bool cswap = e->op == PERCS_ATOMIC_CSWAP;
	uint64_t m;

	if (h->length < sizeof(*e) || e->op > PERCS_ATOMIC_OP_MAX ||
	    (e->width != 1 && e->width != 2 && e->width != 4 && e->width != 8) ||
	    !e->count || e->count > PERCS_ATOMIC_MAX_PACKED ||
	    (e->flags & ~PERCS_ATOMIC_F_ALL) || e->reserved || h->flags ||
	    h->route > PERCS_ROUTE_MAX)
		return false;
	if (h->length != PERCS_ATOMIC_LEN(e->count) + (cswap ? 8 : 0))
		return false;
	if (e->count > 1 && (fetch || cswap))
		return false;
	if (!fetch && (e->result_addr || e->result_handle))
		return false;
	m = a_mask(e->width);
	if (l->compare & ~m)
		return false;
	for (unsigned int i = 0; i < e->count; i++)
		if (l->ops[i].operand & ~m)
			return false;
	return true;
}

/* The initiator's result location, checked against the fake NMMU. */
static int a_result_ok(const struct percs_atomic_ext *e)
{
	uint32_t slot = e->result_handle & 0xffff;

	if (slot >= 8 || !R.mr_live[slot] || R.mr_live[slot] != e->result_handle)
		return -ENOENT;
	if (!(R.mr_access[slot] & PERCS_ACCESS_LOCAL_WRITE))
		return -EPERM;
	if (e->result_addr < R.mr_addr[slot] ||
	    e->result_addr - R.mr_addr[slot] > R.mr_len[slot] - e->width)
		return -ERANGE;
	return 0;
}

/* Check, apply all operations or none, store the old value, complete. */
static void fake_atomic(struct fwin *f, const struct percs_pkt_hdr *h)
{
	struct alog l = { .h = *h };
	struct percs_cqe c = { .kind = PERCS_PKT_ATOMIC };
	const struct ftmr *t;
	uint64_t old = 0, inflight;
	int res = 0;

	memcpy(&l.e, h + 1, sizeof(l.e));
	memcpy(l.ops, (const uint8_t *)(h + 1) + sizeof(l.e),
	       (l.e.count <= PERCS_ATOMIC_MAX_PACKED ? l.e.count : 0) *
	       sizeof(l.ops[0]));
	if (l.e.op == PERCS_ATOMIC_CSWAP && h->length >= PERCS_ATOMIC_LEN(1) + 8)
		memcpy(&l.compare, (const uint8_t *)(h + 1) + PERCS_ATOMIC_LEN(1),
		       sizeof(l.compare));
	if (A.descs < A_LOG)
		A.log[A.descs] = l;
	c.user_data = l.e.user_data;
	if (!a_desc_ok(h, &l)) {
		violation("malformed atomic descriptor", f);
		res = -EINVAL;
		goto done;
	}
	if (A.force_res) {
		res = A.force_res;
		goto done;
	}
	if (h->dst.window >= NWIN || !H.win[h->dst.window]) {
		res = -ECONNREFUSED;
		goto done;
	}
	t = ftmr_find(h->dst.window, l.e.handle);
	if (!t) {
		res = -ENOENT;
		goto done;
	}
	if (!(t->access & PERCS_ACCESS_REMOTE_ATOMIC)) {
		res = -EPERM;
		goto done;
	}
	for (unsigned int i = 0; i < l.e.count; i++) {
		uint64_t a = l.ops[i].addr, base = (uintptr_t)t->base;

		if (a & (l.e.width - 1)) {
			res = -EINVAL;
			goto done;
		}
		if (a < base || a - base > t->len - l.e.width) {
			res = -ERANGE;
			goto done;
		}
	}
	if (l.e.flags & PERCS_ATOMIC_F_FETCH) {
		res = a_result_ok(&l.e);
		if (res) {
			c.flags = PERCS_CQE_F_LOCAL;
			goto done;
		}
	}
	for (unsigned int i = 0; i < l.e.count; i++) {
		void *p = (void *)(uintptr_t)l.ops[i].addr;
		uint64_t v;

		if (l.e.op == PERCS_ATOMIC_CSWAP && A.meddle) {
			A.meddle--;
			a_store(p, l.e.width, a_load(p, l.e.width) + 1);
		}
		v = a_load(p, l.e.width);
		if (!i)
			old = v;
		a_store(p, l.e.width, a_apply(l.e.op, l.e.width, v,
					      l.ops[i].operand, l.compare));
	}
	if (l.e.flags & PERCS_ATOMIC_F_FETCH)
		a_store((void *)(uintptr_t)l.e.result_addr, l.e.width, old);
done:
	c.res = res;
	A.descs++;
	inflight = A.descs - __atomic_load_n(&f->db->cq_head, __ATOMIC_ACQUIRE);
	if (inflight > A.max_inflight)
		A.max_inflight = (unsigned int)inflight;
	if (A.hold && A.nheld < A_HELD) {
		A.held[A.nheld].win = f->addr.window;
		A.held[A.nheld].c = c;
		A.nheld++;
		return;
	}
	post_raw_cqe(f, &c);
}

/* Post up to @n held completions, oldest first. */
static void a_release(unsigned int n)
{
	unsigned int i;

	if (n > A.nheld)
		n = A.nheld;
	for (i = 0; i < n; i++)
		post_raw_cqe(H.win[A.held[i].win], &A.held[i].c);
	memmove(A.held, A.held + n, (A.nheld - n) * sizeof(A.held[0]));
	A.nheld -= n;
}

/* Held completions come back on kicks, like replies to retransmissions. */
static int fake_atomic_kick(void)
{
	A.kicks++;
	if (A.kick_err && A.kicks > A.kick_err_after)
		return A.kick_err;
	if (A.release)
		a_release(A.release);
	if (A.release_after && A.kicks % A.release_after == 0)
		a_release(A.nheld);
	return 0;
}

static const struct alog *a_last(void)
{
	return A.descs ? &A.log[(A.descs - 1) % A_LOG] : NULL;
}

/*
 * An initiator a (kick mode unless @flags say poll), a target b with 4 KiB
 * registered for atomics, and the fake NMMU behind a's fd for the result
 * area.
 */
struct aenv {
	struct fwin *a, *b;
	uint8_t *mem;
	struct percs_rmr r;
};

static void aenv_init(struct aenv *e, uint32_t flags)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	e->a = fwin_new(1, 4096, 4096, flags);
	e->b = fwin_new(2, 4096, 4096, flags);
	e->mem = zalloc(4096);
	e->r = (struct percs_rmr){
		.win = e->b->addr,
		.handle = ftmr_add(2, e->mem, 4096, PERCS_ACCESS_REMOTE_ATOMIC, 0),
		.base = (uintptr_t)e->mem,
		.length = 4096,
	};
	e->a->w->fd = fd;
	R.win_fd = fd;
}

static void aenv_fini(struct aenv *e)
{
	fwin_free(e->a);
	fwin_free(e->b);
	free(e->mem);
}

/* ---- atomics: descriptors -------------------------------------------------- */

/* percs_atomic_post(): every field where the uAPI puts it, exact lengths. */
static void test_atomic_post_encoding(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	const struct percs_atomic_ext *e;
	const struct percs_atomic_op *op;
	const struct percs_pkt_hdr *h;
	uint64_t res, cmp, tail;
	struct percs_atomic_wr wr = {
		.op = PERCS_ATOMIC_ADD, .width = 8, .count = 1,
		.route = PERCS_ROUTE_SW_INDIRECT, .route_arg = 3,
		.dst = b->addr, .handle = 0x10007,
		.user_data = 0x1122334455667788ULL,
		.ops = { { 0x1000, ~0ULL } },
	}, bad;
	unsigned int kicks;

	H.paused = true;
	CHECK_EQ(percs_atomic_post(a->w, &wr), 0);
	h = send_unit(a, 0);
	e = (const void *)(h + 1);
	op = (const void *)(e + 1);
	CHECK_EQ(h->kind, PERCS_PKT_ATOMIC);
	CHECK_EQ(h->length, PERCS_ATOMIC_LEN(1));
	CHECK_EQ(h->length, 48);
	CHECK_EQ(h->route, PERCS_ROUTE_SW_INDIRECT);
	CHECK_EQ(h->route_arg, 3);
	CHECK_EQ(h->flags, 0);
	CHECK_EQ(h->dst.window, 2);
	CHECK_EQ(h->tag, 0x55667788);
	CHECK_EQ(e->op, PERCS_ATOMIC_ADD);
	CHECK_EQ(e->width, 8);
	CHECK_EQ(e->count, 1);
	CHECK_EQ(e->flags, 0);
	CHECK_EQ(e->handle, 0x10007);
	CHECK_EQ(e->user_data, 0x1122334455667788ULL);
	CHECK_EQ(e->result_addr | e->result_handle | e->reserved, 0);
	CHECK_EQ(op[0].addr, 0x1000);
	CHECK_EQ(op[0].operand, ~0ULL);

	/* CSWAP: the comparand follows the operation; the result location. */
	wr = (struct percs_atomic_wr){
		.op = PERCS_ATOMIC_CSWAP, .width = 4, .count = 1,
		.flags = PERCS_ATOMIC_F_FETCH, .dst = b->addr, .handle = 5,
		.result_handle = 9, .result_addr = &res,
		.compare = 0xdeadbeef, .user_data = 7,
		.ops = { { 0x2004, 0xcafe } },
	};
	CHECK_EQ(percs_atomic_post(a->w, &wr), 0);
	h = send_unit(a, 1);
	e = (const void *)(h + 1);
	op = (const void *)(e + 1);
	CHECK_EQ(h->length, PERCS_ATOMIC_LEN(1) + 8);
	CHECK_EQ(e->op, PERCS_ATOMIC_CSWAP);
	CHECK_EQ(e->width, 4);
	CHECK_EQ(e->flags, PERCS_ATOMIC_F_FETCH);
	CHECK_EQ(e->result_handle, 9);
	CHECK_EQ(e->result_addr, (uintptr_t)&res);
	CHECK_EQ(op[0].addr, 0x2004);
	CHECK_EQ(op[0].operand, 0xcafe);
	memcpy(&cmp, op + 1, sizeof(cmp));
	CHECK_EQ(cmp, 0xdeadbeef);

	/* Packed: four operations and the header are one 128-byte unit. */
	wr = (struct percs_atomic_wr){
		.op = PERCS_ATOMIC_XOR, .width = 2, .count = 4,
		.dst = b->addr, .handle = 6, .compare = 77,
		.ops = { { 0x10, 1 }, { 0x12, 2 }, { 0x20, 0xffff }, { 0x10, 4 } },
	};
	CHECK_EQ(percs_atomic_post(a->w, &wr), 0);
	h = send_unit(a, 2);
	e = (const void *)(h + 1);
	op = (const void *)(e + 1);
	CHECK_EQ(h->length, PERCS_ATOMIC_LEN(4));
	CHECK_EQ(PERCS_PKT_HDR_SIZE + h->length, PERCS_FLIT_SIZE);
	CHECK_EQ(e->count, 4);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(op[i].addr, wr.ops[i].addr);
		CHECK_EQ(op[i].operand, wr.ops[i].operand);
	}
	CHECK_EQ(a->w->sq.tail, 3);

	/* What the HFI would refuse is refused here, nothing composed. */
	tail = a->w->sq.tail;
	wr = (struct percs_atomic_wr){
		.op = PERCS_ATOMIC_OR, .width = 1, .count = 1,
		.dst = b->addr, .handle = 6, .ops = { { 0x10, 0xff } },
	};
#define BAD(field, val) do {						\
	bad = wr;							\
	bad.field = val;						\
	CHECK_EQ(percs_atomic_post(a->w, &bad), -EINVAL);		\
} while (0)
	BAD(op, PERCS_ATOMIC_OP_MAX + 1);
	BAD(width, 3);
	BAD(width, 16);
	BAD(width, 0);
	BAD(count, 0);
	BAD(count, PERCS_ATOMIC_MAX_PACKED + 1);
	BAD(flags, 2);
	BAD(reserved, 1);
	BAD(route, PERCS_ROUTE_MAX + 1);
	BAD(ops[0].operand, 0x100);
	BAD(result_handle, 3);
	BAD(result_addr, &res);
	BAD(user_data, (uint64_t)PERCS_AMO_USER_DATA_TAG << 32 | 5);
	bad = wr;
	bad.count = 2;
	bad.flags = PERCS_ATOMIC_F_FETCH;
	CHECK_EQ(percs_atomic_post(a->w, &bad), -EINVAL);
	bad.flags = 0;
	bad.op = PERCS_ATOMIC_CSWAP;
	CHECK_EQ(percs_atomic_post(a->w, &bad), -EINVAL);
	bad = wr;
	bad.count = 2;
	bad.width = 2;
	bad.ops[1] = (struct percs_atomic_op){ 0x12, 0x10000 };
	CHECK_EQ(percs_atomic_post(a->w, &bad), -EINVAL);
	bad = wr;
	bad.op = PERCS_ATOMIC_CSWAP;
	bad.width = 4;
	bad.compare = 1ULL << 32;
	CHECK_EQ(percs_atomic_post(a->w, &bad), -EINVAL);
	CHECK_EQ(percs_atomic_post(NULL, &wr), -EINVAL);
	CHECK_EQ(percs_atomic_post(a->w, NULL), -EINVAL);
	CHECK_EQ(a->w->sq.tail, tail);
#undef BAD
	/* The comparand of another op is not sent: no length change. */
	bad = wr;
	bad.compare = 1ULL << 40;
	bad.user_data = 0x50474152ULL << 32;	/* next to the reserved tag */
	CHECK_EQ(percs_atomic_post(a->w, &bad), 0);
	CHECK_EQ(send_unit(a, tail)->length, PERCS_ATOMIC_LEN(1));

	/* Full send FIFO: publish, one kick, then -EAGAIN. */
	while (a->w->sq.tail < a->send_units)
		CHECK_EQ(percs_atomic_post(a->w, &wr), 0);
	kicks = a->kicks[0];
	CHECK_EQ(percs_atomic_post(a->w, &wr), -EAGAIN);
	CHECK_EQ(a->kicks[0], kicks + 1);
	CHECK_EQ(a->db->send_tail, a->w->sq.tail);
	H.paused = false;
	CHECK_EQ(percs_atomic_post(a->w, &wr), 0);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Raw descriptors complete to the caller, with its user_data and status. */
static void test_atomic_post_completions(void)
{
	struct aenv v;
	uint64_t *m, res = 0;
	uint32_t rh;
	struct percs_cqe c[4];
	struct percs_atomic_wr wr;

	aenv_init(&v, 0);
	m = (uint64_t *)v.mem;
	m[1] = 40;
	REQUIRE(!percs_mr_reg(v.a->w, &res, sizeof(res),
			      PERCS_ACCESS_LOCAL_WRITE, &rh));
	wr = (struct percs_atomic_wr){
		.op = PERCS_ATOMIC_ADD, .width = 8, .count = 1,
		.flags = PERCS_ATOMIC_F_FETCH, .dst = v.r.win,
		.handle = v.r.handle, .result_handle = rh,
		.result_addr = &res, .user_data = 0xabcdef0123ULL,
		.ops = { { (uintptr_t)&m[1], 2 } },
	};
	CHECK_EQ(percs_atomic_post(v.a->w, &wr), 0);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 4), 1);
	CHECK_EQ(c[0].user_data, 0xabcdef0123ULL);
	CHECK_EQ(c[0].kind, PERCS_PKT_ATOMIC);
	CHECK_EQ(c[0].res, 0);
	CHECK_EQ(res, 40);
	CHECK_EQ(m[1], 42);
	/* Misaligned: the target says -EINVAL and nothing changes. */
	wr.ops[0].addr += 4;
	wr.user_data = 5;
	CHECK_EQ(percs_atomic_post(v.a->w, &wr), 0);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 4), 1);
	CHECK_EQ(c[0].user_data, 5);
	CHECK_EQ(c[0].res, -EINVAL);
	CHECK_EQ(m[1], 42);
	/* The raw level leaves the PGAS state alone. */
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/* ---- atomics: the PGAS level ---------------------------------------------- */

/* Which non-fetching operations share a packet, and when it leaves. */
static void test_amo_packing(void)
{
	struct aenv v;
	struct percs_rmr r2, r3;
	struct fwin *c;
	uint8_t *mem2;
	uint64_t *m, old;
	unsigned int d;

	aenv_init(&v, 0);
	c = fwin_new(3, 4096, 4096, 0);
	m = (uint64_t *)v.mem;
	mem2 = zalloc(4096);
	r2 = v.r;
	r2.handle = ftmr_add(2, mem2, 4096, PERCS_ACCESS_REMOTE_ATOMIC, 0);
	r2.base = (uintptr_t)mem2;
	/* Same handle number in another window: another target. */
	r3 = r2;
	r3.win = c->addr;
	ftmr_add(3, mem2, 4096, PERCS_ACCESS_REMOTE_ATOMIC, r2.handle);

	/* Four adds to one registration: one full packet, sent at once. */
	d = A.descs;
	for (int i = 0; i < 3; i++)
		CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8 * i, i + 1), 0);
	CHECK_EQ(A.descs, d);
	CHECK_EQ(m[0], 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 24, 4), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(a_last()->e.count, 4);
	CHECK_EQ(a_last()->h.length, PERCS_ATOMIC_LEN(4));
	CHECK_EQ(a_last()->e.op, PERCS_ATOMIC_ADD);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(a_last()->ops[i].addr, (uintptr_t)&m[i]);
		CHECK_EQ(m[i], i + 1);
	}
	/* Three, then quiet: one packet of three.  One: a plain descriptor. */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(percs_atomic_or64(v.a->w, &v.r, 32, 1ULL << i), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(a_last()->e.count, 3);
	CHECK_EQ(m[4], 7);
	CHECK_EQ(percs_atomic_xor64(v.a->w, &v.r, 32, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK_EQ(a_last()->e.count, 1);
	CHECK_EQ(a_last()->h.length, PERCS_ATOMIC_LEN(1));
	CHECK_EQ(m[4], 6);
	/* percs_wait() sends what is packed before it sleeps. */
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 40, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 40, 1), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK(percs_wait(v.a->w, 0) >= 0);
	CHECK_EQ(A.descs, d + 4);
	CHECK_EQ(a_last()->e.count, 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(m[5], 2);

	/* Another handle, op, width or window sends what is packed. */
	d = A.descs;
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &r2, 0, 1), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(a_last()->e.count, 2);
	CHECK_EQ(percs_atomic_and64(v.a->w, &r2, 0, 1), 0);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(a_last()->e.count, 1);
	CHECK_EQ(a_last()->e.handle, r2.handle);
	CHECK_EQ(percs_atomic_and32(v.a->w, &r2, 0, 1), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK_EQ(a_last()->e.width, 8);
	CHECK_EQ(percs_atomic_and32(v.a->w, &r3, 0, 1), 0);
	CHECK_EQ(A.descs, d + 4);
	CHECK_EQ(a_last()->e.width, 4);
	CHECK_EQ(a_last()->h.dst.window, 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 5);
	CHECK_EQ(a_last()->h.dst.window, 3);
	CHECK_EQ(m[0], 3);

	/* A fetching, blocking or CSWAP operation sends what is packed first. */
	d = A.descs;
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 4);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(A.log[d].e.count, 1);
	CHECK_EQ(a_last()->e.flags, PERCS_ATOMIC_F_FETCH);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_amo(v.a->w, &v.r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL,
			   PERCS_AMO_F_BLOCK), 0);
	CHECK_EQ(A.descs, d + 4);
	CHECK_EQ(a_last()->e.flags, 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_amo(v.a->w, &v.r, 0, PERCS_ATOMIC_CSWAP, 8, 0, 0, NULL,
			   0), 0);
	CHECK_EQ(A.descs, d + 6);
	CHECK_EQ(a_last()->e.op, PERCS_ATOMIC_CSWAP);
	CHECK_EQ(a_last()->e.flags, 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(m[0], 8);

	/* PACK_OFF: one packet per operation, sent at once. */
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
	d = A.descs;
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_OFF), 0);
	CHECK_EQ(A.descs, d + 1);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
		CHECK_EQ(A.descs, d + 2 + i);
		CHECK_EQ(a_last()->e.count, 1);
	}
	CHECK_EQ(m[1], 2 + 5);
	CHECK_EQ(percs_atomic_set_packing(v.a->w, 2), -EINVAL);
	CHECK_EQ(percs_atomic_set_packing(NULL, PERCS_PACK_AUTO), -EINVAL);
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_AUTO), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
	CHECK_EQ(A.descs, d + 5);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 6);
	CHECK_EQ(H.violations, 0);
	fwin_free(c);
	free(mem2);
	aenv_fini(&v);
}

/*
 * Fetching operations of every width and op against the reference, at
 * random aligned offsets: the memory around the operand is untouched, the
 * fetched value is exactly @width bytes (the rest of the caller's buffer
 * too), signed values wrap as two's complement.
 */
static void test_amo_fetch_widths(void)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	uint8_t shadow[64], buf[8];
	uint64_t seed = 12345, got;
	uint16_t o16 = 0;
	uint8_t o8 = 0;
	int16_t s16;
	struct aenv v;

	aenv_init(&v, 0);
	for (int i = 0; i < 64; i++)
		v.mem[i] = shadow[i] = (uint8_t)(i * 37 + 11);
	for (int k = 0; k < 2000; k++) {
		unsigned int width = widths[rnd64(&seed) % 4];
		unsigned int op = (unsigned int)(rnd64(&seed) % 4);
		uint64_t off = rnd64(&seed) % (64 / width) * width;
		uint64_t val = rnd64(&seed) & a_mask(width), old;
		bool nbi = k % 3 == 0;

		old = a_load(shadow + off, width);
		a_store(shadow + off, width, a_apply(op, width, old, val, 0));
		memset(buf, 0xee, sizeof(buf));
		CHECK_EQ(percs_amo(v.a->w, &v.r, off, op, width, val, 0, buf,
				   nbi ? 0 : PERCS_AMO_F_BLOCK), 0);
		if (nbi)
			CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
		got = a_load(buf, width);
		if (got != old || memcmp(v.mem, shadow, 64))
			CHECK_EQ(got, old);
		for (unsigned int j = width; j < 8; j++)
			if (buf[j] != 0xee)
				CHECK_EQ(buf[j], 0xee);
		if (memcmp(v.mem, shadow, 64)) {
			CHECK(!"memory differs from the reference");
			break;
		}
	}
	/* Wraparound and signed operands through the typed wrappers. */
	v.mem[100] = 0xff;
	CHECK_EQ(percs_atomic_fetch_add8(v.a->w, &v.r, 100, 1, &o8), 0);
	CHECK_EQ(o8, 0xff);
	CHECK_EQ(v.mem[100], 0);
	CHECK_EQ(v.mem[99] | v.mem[101], 0);
	memcpy(v.mem + 102, &(int16_t){ 1 }, 2);
	CHECK_EQ(percs_atomic_fetch_add16(v.a->w, &v.r, 102, (uint16_t)-3,
					  &o16), 0);
	CHECK_EQ(o16, 1);
	memcpy(&s16, v.mem + 102, 2);
	CHECK_EQ(s16, -2);
	CHECK_EQ(percs_atomic_fetch16(v.a->w, &v.r, 102, &o16), 0);
	CHECK_EQ((int16_t)o16, -2);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/* _nbi values are stored when the completion is taken, not before. */
static void test_amo_nbi_values(void)
{
	uint32_t o32 = 0xaaaaaaaa;
	uint64_t o64 = 1;
	struct aenv v;

	aenv_init(&v, 0);
	memcpy(v.mem + 8, &(uint32_t){ 10 }, 4);
	A.hold = true;
	CHECK_EQ(percs_atomic_fetch_add32_nbi(v.a->w, &v.r, 8, 5, &o32), 0);
	CHECK_EQ(percs_atomic_fetch_or64_nbi(v.a->w, &v.r, 16, 3, &o64), 0);
	CHECK_EQ(A.nheld, 2);
	CHECK_EQ(o32, 0xaaaaaaaa);
	a_release(A.nheld);
	CHECK_EQ(o32, 0xaaaaaaaa);	/* in the CQ, not taken yet */
	A.hold = false;
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(o32, 10);
	CHECK_EQ(o64, 0);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	aenv_fini(&v);
}

/* Compare-and-swap: success, failure, narrow widths; swap built on it. */
static void test_amo_cswap(void)
{
	uint64_t *m, old = 0;
	uint8_t o8 = 0;
	uint32_t o32 = 0;
	unsigned int d;
	struct aenv v;

	aenv_init(&v, 0);
	m = (uint64_t *)v.mem;
	m[0] = 5;
	CHECK_EQ(percs_atomic_compare_swap64(v.a->w, &v.r, 0, 5, 9, &old), 0);
	CHECK_EQ(old, 5);
	CHECK_EQ(m[0], 9);
	CHECK_EQ(a_last()->e.op, PERCS_ATOMIC_CSWAP);
	CHECK_EQ(a_last()->h.length, PERCS_ATOMIC_LEN(1) + 8);
	CHECK_EQ(a_last()->compare, 5);
	CHECK_EQ(a_last()->ops[0].operand, 9);
	CHECK_EQ(percs_atomic_compare_swap64(v.a->w, &v.r, 0, 5, 1, &old), 0);
	CHECK_EQ(old, 9);
	CHECK_EQ(m[0], 9);
	/* One byte of a word: its neighbours stay. */
	m[1] = 0x1122334455667788ULL;
	CHECK_EQ(percs_atomic_compare_swap8(v.a->w, &v.r, 11, 0x55, 0xee,
					    &o8), 0);
	CHECK_EQ(o8, 0x55);
	CHECK_EQ(m[1], 0x11223344ee667788ULL);
	CHECK_EQ(percs_atomic_compare_swap32_nbi(v.a->w, &v.r, 12, 0x11223344,
						 7, &o32), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(o32, 0x11223344);
	CHECK_EQ(m[1], 0x00000007ee667788ULL);

	/* Swap: one CSWAP when the old value is 0, two otherwise. */
	m[2] = 0;
	d = A.descs;
	CHECK_EQ(percs_atomic_swap64(v.a->w, &v.r, 16, 42, &old), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(old, 0);
	CHECK_EQ(m[2], 42);
	CHECK_EQ(percs_atomic_swap64(v.a->w, &v.r, 16, 43, &old), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK_EQ(old, 42);
	CHECK_EQ(m[2], 43);
	/* Another writer between the CSWAPs: it retries with what it saw. */
	A.meddle = 2;
	CHECK_EQ(percs_atomic_swap32(v.a->w, &v.r, 16, 100, &o32), 0);
	CHECK_EQ(A.descs, d + 6);
	CHECK_EQ(o32, 45);
	CHECK_EQ((uint32_t)m[2], 100);
	CHECK_EQ(percs_atomic_set8(v.a->w, &v.r, 24, 0x80), 0);
	CHECK_EQ(percs_atomic_fetch8(v.a->w, &v.r, 24, &o8), 0);
	CHECK_EQ(o8, 0x80);
	CHECK_EQ(percs_atomic_swap16(v.a->w, &v.r, 17, 1, NULL), -EINVAL);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/* quiet: the first error since the last quiet; blocking calls their own. */
static void test_amo_quiet_errors(void)
{
	struct percs_rmr noright, nohandle;
	uint64_t old = 0x5a5a;
	uint64_t *m;
	struct aenv v;

	aenv_init(&v, 0);
	m = (uint64_t *)v.mem;
	noright = v.r;
	noright.handle = ftmr_add(2, v.mem, 4096, PERCS_ACCESS_REMOTE_READ, 0);
	nohandle = v.r;
	nohandle.handle = 0xbad;

	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &noright, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &nohandle, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), -EPERM);
	CHECK_EQ(m[0], 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &nohandle, 0, 1, &old), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), -ENOENT);
	CHECK_EQ(old, 0x5a5a);

	/* A blocking call returns its own status and leaves quiet's alone. */
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &noright, 0, 1, &old), -EPERM);
	CHECK_EQ(old, 0x5a5a);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	A.force_res = -ETIMEDOUT;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), -ETIMEDOUT);
	CHECK_EQ(percs_atomic_compare_swap64(v.a->w, &v.r, 0, 2, 3, &old),
		 -ETIMEDOUT);
	CHECK_EQ(percs_atomic_swap64(v.a->w, &v.r, 0, 3, &old), -ETIMEDOUT);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(percs_atomic_xor64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), -ETIMEDOUT);
	A.force_res = 0;
	CHECK_EQ(m[0], 2);
	CHECK_EQ(old, 0x5a5a);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(percs_atomic_quiet(NULL), -EINVAL);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/* Bad arguments: refused before anything is sent or packed. */
static void test_amo_arg_errors(void)
{
	struct percs_rmr r;
	uint64_t old, tail;
	unsigned int d;
	struct aenv v;

	aenv_init(&v, 0);
	/* One operation waits packed: a refused call must not send it. */
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	tail = v.a->w->sq.tail;
	d = A.descs;
#define AMO(...) percs_amo(v.a->w, __VA_ARGS__)
	CHECK_EQ(AMO(&v.r, 4096, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -ERANGE);
	CHECK_EQ(AMO(&v.r, 4092, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -ERANGE);
	CHECK_EQ(AMO(&v.r, 4095, PERCS_ATOMIC_ADD, 2, 1, 0, &old, 0), -ERANGE);
	CHECK_EQ(AMO(&v.r, UINT64_MAX - 3, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0),
		 -ERANGE);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 8192, 1, &old), -ERANGE);
	CHECK_EQ(AMO(&v.r, 4, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 1, PERCS_ATOMIC_OR, 2, 1, 0, &old,
		     PERCS_AMO_F_BLOCK), -EINVAL);
	CHECK_EQ(percs_atomic_compare_swap32(v.a->w, &v.r, 6, 0, 1, NULL),
		 -EINVAL);
	r = v.r;		/* a registration starting at an odd address */
	r.base += 1;
	r.length -= 1;
	CHECK_EQ(AMO(&r, 0, PERCS_ATOMIC_ADD, 2, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 1, 0x100, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 4, 1ULL << 32, 0, NULL, 0),
		 -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_CSWAP, 2, 1, 0x10000, &old, 0),
		 -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 3, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 0, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 16, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_OP_MAX + 1, 8, 1, 0, NULL, 0),
		 -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 2), -EINVAL);
	CHECK_EQ(AMO(NULL, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -EINVAL);
	r = v.r;
	r.reserved = 1;
	CHECK_EQ(AMO(&r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(percs_amo(NULL, &v.r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0),
		 -EINVAL);
	CHECK_EQ(percs_amo_swap(v.a->w, &v.r, 0, 4, 1ULL << 32, NULL), -EINVAL);
#undef AMO
	CHECK_EQ(v.a->w->sq.tail, tail);
	CHECK_EQ(A.descs, d);
	CHECK_EQ(v.a->w->amo.pend.count, 1);
	/* The last operand of the registration is fine. */
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 4088, 1, &old), 0);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

static bool cqe_is_lib(const struct percs_cqe *c)
{
	return (uint32_t)(c->user_data >> 32) == PERCS_AMO_USER_DATA_TAG;
}

/*
 * The CQ is shared: the library's entries never reach percs_cq_poll(),
 * others met while it waits come back later, in order, with those still
 * in the ring after them.
 */
static void test_amo_cq_stash(void)
{
	struct percs_addr nowhere = { .window = 9 };
	struct percs_cqe c[8];
	uint64_t old = 0, nbi = 0, want = 0;
	uint8_t buf[8] = { 0 }, local[8];
	struct percs_atomic_wr wr;
	struct aenv v;
	int n;

	aenv_init(&v, 0);
	CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 8, 101, 0), 0);
	CHECK_EQ(percs_rdma_write(v.a->w, &nowhere, 1, 2, 3, local, 8, 0, 102),
		 0);
	wr = (struct percs_atomic_wr){
		.op = PERCS_ATOMIC_ADD, .width = 8, .count = 1,
		.dst = v.r.win, .handle = v.r.handle, .user_data = 103,
		.ops = { { v.r.base, 1 } },
	};
	CHECK_EQ(percs_atomic_post(v.a->w, &wr), 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 1);
	CHECK_EQ(v.a->w->cq.stash_count, 3);
	CHECK_EQ(v.a->db->cq_head, 4);		/* all four taken from the ring */
	CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 8, 104, 0), 0);
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1, &nbi), 0);
	CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 8, 105, 0), 0);
	CHECK_EQ(percs_wait(v.a->w, 0), 1);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 2), 2);
	CHECK_EQ(c[0].user_data, 101);
	CHECK_EQ(c[0].kind, PERCS_PKT_FIFO);
	CHECK_EQ(c[0].res, -ECONNREFUSED);
	CHECK_EQ(c[1].user_data, 102);
	CHECK_EQ(c[1].kind, PERCS_PKT_RDMA);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 8), 3);
	CHECK_EQ(c[0].user_data, 103);
	CHECK_EQ(c[0].kind, PERCS_PKT_ATOMIC);
	CHECK_EQ(c[0].res, 0);
	CHECK_EQ(c[1].user_data, 104);
	CHECK_EQ(c[2].user_data, 105);
	/* The library's entry between them was taken: value stored. */
	CHECK_EQ(nbi, 2);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 8), 0);
	CHECK_EQ(v.a->w->cq.stash_count, 0);

	/* Many rounds, ring wrapping, odd batches: each entry once, in order. */
	for (unsigned int i = 0; i < 1500; i++) {
		CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 0, 1000 + i, 0), 0);
		if (i % 3 == 0)
			CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1,
							  &old), 0);
		if (i % 4 == 0)
			CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 8,
							      1, &nbi), 0);
		if (i % 7 == 6 || i == 1499) {
			while ((n = percs_cq_poll(v.a->w, c, 3)) > 0) {
				for (int j = 0; j < n; j++, want++) {
					CHECK(!cqe_is_lib(&c[j]));
					CHECK_EQ(c[j].user_data, 1000 + want);
				}
			}
		}
	}
	CHECK_EQ(want, 1500);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 3 + 500);
	CHECK_EQ(((uint64_t *)v.mem)[1], 375);
	CHECK_EQ(v.a->st->cq_overflows, 0);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * A blocking operation with the send FIFO full: nothing is written, the
 * call fails with -EAGAIN once the HFI takes nothing, and the next one,
 * the HFI running again, goes through; then 100 more wrap the ring.
 */
static void test_amo_blocking_fifo_full(void)
{
	static uint8_t buf[8];
	uint64_t old = 7, tail;
	struct aenv v;
	unsigned int i;

	aenv_init(&v, 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 0);
	H.paused = true;
	for (i = 0; i < 32; i++)
		CHECK_EQ(percs_send_compose(v.a->w, &v.b->addr, buf, 8, i, 0),
			 0);
	tail = v.a->w->sq.tail;
	old = 7;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), -EAGAIN);
	CHECK_EQ(v.a->w->sq.tail, tail);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(old, 7);
	H.paused = false;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 1);
	for (i = 0; i < 100; i++) {
		CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
		CHECK_EQ(old, 2 + i);
	}
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 102);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * Completions held back: the library keeps exactly 64 descriptors in
 * flight, never more, and every fetched value arrives once.
 */
static void test_amo_outstanding_limit(void)
{
	static uint64_t vals[300];
	static bool seen[300];
	struct aenv v;

	aenv_init(&v, 0);
	A.hold = true;
	A.release = 1;
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_OFF), 0);
	for (int i = 0; i < 300; i++) {
		CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1,
						      &vals[i]), 0);
		CHECK(v.a->w->amo.outstanding <= LP_AMO_SLOTS);
	}
	CHECK_EQ(A.max_inflight, LP_AMO_SLOTS);
	A.release = 0;
	A.release_after = 3;
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 300);
	for (int i = 0; i < 300; i++) {
		if (vals[i] >= 300 || seen[vals[i]])
			CHECK(!"fetched value out of range or twice");
		else
			seen[vals[i]] = true;
	}
	/* Packed non-fetching ones: descriptors in flight, same bound. */
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_AUTO), 0);
	A.max_inflight = 0;
	A.release_after = 0;
	A.release = 1;
	for (int i = 0; i < 1200; i++)
		CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
	CHECK_EQ(A.max_inflight, LP_AMO_SLOTS);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(((uint64_t *)v.mem)[1], 1200);
	CHECK_EQ(v.a->st->cq_overflows, 0);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * The result area: registered with LOCAL_WRITE on the first fetch only,
 * one slot per descriptor in flight, deregistered at release; failures
 * to set it up send nothing.
 */
static void test_amo_result_area(void)
{
	uint64_t o[3], addr[3];
	uint32_t handle;
	unsigned int d;
	struct aenv v;
	int calls;

	aenv_init(&v, 0);
	calls = R.mr_calls;
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(R.mr_calls, calls);
	A.hold = true;
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1,
						      &o[i]), 0);
		addr[i] = a_last()->e.result_addr;
	}
	CHECK_EQ(R.mr_calls, calls + 1);
	CHECK_EQ(R.mr_seen.access, PERCS_ACCESS_LOCAL_WRITE);
	CHECK_EQ(R.mr_seen.length, LP_AMO_SLOTS * 8);
	handle = a_last()->e.result_handle;
	CHECK(handle != 0);
	CHECK_EQ(R.mr_live[handle & 0xffff], handle);
	CHECK(addr[0] != addr[1] && addr[1] != addr[2] && addr[0] != addr[2]);
	for (int i = 0; i < 3; i++)
		CHECK(addr[i] >= R.mr_seen.addr &&
		      addr[i] + 8 <= R.mr_seen.addr + R.mr_seen.length);
	A.hold = false;
	a_release(A.nheld);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK(o[0] == 1 && o[1] == 2 && o[2] == 3);
	fwin_free(v.a);
	CHECK_EQ(R.dereg_seen.handle, handle);
	CHECK_EQ(R.mr_live[handle & 0xffff], 0);
	fwin_free(v.b);
	free(v.mem);

	/* Registration or mapping fails: the error, nothing sent. */
	aenv_init(&v, 0);
	d = A.descs;
	R.mr_errno = ENOMEM;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, o), -ENOMEM);
	R.mr_errno = EFAULT;
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1, o), -EFAULT);
	R.mr_errno = 0;
	R.mmap_fail_nth = R.mmap_calls + 1;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, o), -ENOMEM);
	CHECK_EQ(A.descs, d);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, o), 0);
	CHECK_EQ(o[0], 0);
	CHECK_EQ(v.mem[0], 1);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * Blocking waits kick the engine (kick mode) until the completion comes:
 * here the fake answers only every fifth kick, as after retransmissions.
 */
static void test_amo_wait_kicks(void)
{
	unsigned int kicks, nkicks;
	uint64_t old = 0;
	struct aenv v;

	aenv_init(&v, 0);
	A.hold = true;
	A.release_after = 5;
	A.kicks = 1;
	kicks = v.a->kicks[0];
	nkicks = v.a->nkicks;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 7, &old), 0);
	CHECK_EQ(old, 0);
	CHECK(v.a->kicks[0] - kicks >= 4);
	CHECK_EQ(v.a->kicks[0] - kicks, v.a->nkicks - nkicks);
	CHECK_EQ(A.nheld, 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 7);
	/*
	 * A failing kick ends the wait with its error; the operation stays
	 * in flight and its late value is not stored (the caller had an
	 * error).
	 */
	A.release_after = 0;
	A.kick_err = -EIO;
	A.kick_err_after = A.kicks + 1;		/* the trigger's kick works */
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), -EIO);
	CHECK_EQ(v.a->w->amo.outstanding, 1);
	A.kick_err = 0;
	A.hold = false;
	a_release(A.nheld);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(old, 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 8);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * A CQ that overflowed lost a completion of the library's: the wait gives
 * up after lost_ms with -EOVERFLOW instead of hanging, keeps every other
 * entry, and a late entry of the lost slot is ignored.
 */
static void test_amo_cq_overflow_lost(void)
{
	struct percs_addr nowhere = { .window = 9 };
	uint64_t nbi = 0x77, old = 0x77;
	struct percs_cqe c[16], late;
	uint8_t buf[8] = { 0 };
	unsigned int got = 0;
	struct aenv v;
	int n;

	aenv_init(&v, 0);
	v.a->w->amo.lost_ms = 20;
	for (int i = 0; i < PERCS_CQ_ENTRIES; i++)
		CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 0, i, 0), 0);
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1, &nbi), 0);
	CHECK_EQ(v.a->st->cq_overflows, 1);
	late = (struct percs_cqe){
		.user_data = a_last()->e.user_data, .kind = PERCS_PKT_ATOMIC,
	};
	CHECK_EQ(percs_atomic_quiet(v.a->w), -EOVERFLOW);
	CHECK_EQ(nbi, 0x77);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	for (int i = 0; i < PERCS_CQ_ENTRIES; i++)
		CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 0, 1000 + i, 0), 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old),
		 -EOVERFLOW);
	CHECK_EQ(old, 0x77);
	/* The late entry of the first: no value stored, nothing freed. */
	post_raw_cqe(v.a, &late);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 2);
	CHECK_EQ(nbi, 0x77);
	/* The application is told once, then gets the entries that fit. */
	CHECK_EQ(percs_cq_poll(v.a->w, c, 16), -EOVERFLOW);
	while ((n = percs_cq_poll(v.a->w, c, 16)) > 0)
		for (int j = 0; j < n; j++, got++)
			CHECK_EQ(c[j].user_data, got < PERCS_CQ_ENTRIES ? got :
				 1000 + got - PERCS_CQ_ENTRIES);
	CHECK_EQ(got, 2 * PERCS_CQ_ENTRIES);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	aenv_fini(&v);
}

/* Poll mode: fetch-adds through the polling engine thread. */
static void test_amo_threaded_poll_mode(void)
{
	struct aenv v;
	pthread_t e;
	uint64_t old, sum = 0, nbi[8];

	aenv_init(&v, PERCS_WINDOW_F_POLL);
	H.threaded = true;
	sem_init(&H.wake, 0, 0);
	REQUIRE(!pthread_create(&e, NULL, engine_thread, NULL));
	for (unsigned int i = 0; i < 2000; i++) {
		CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
		sum += old;
		CHECK_EQ(percs_atomic_add32(v.a->w, &v.r, 8, 2), 0);
		if (i % 100 == 0) {
			for (int j = 0; j < 8; j++)
				CHECK_EQ(percs_atomic_fetch_add64_nbi(
					v.a->w, &v.r, 16, 1, &nbi[j]), 0);
			CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
			for (int j = 1; j < 8; j++)
				CHECK_EQ(nbi[j], nbi[j - 1] + 1);
		}
	}
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	__atomic_store_n(&engine_stop, true, __ATOMIC_RELEASE);
	sem_post(&H.wake);
	pthread_join(e, NULL);
	CHECK_EQ(sum, 1999ULL * 2000 / 2);
	CHECK_EQ(((uint64_t *)v.mem)[0], 2000);
	CHECK_EQ(((uint32_t *)v.mem)[2], 4000);
	CHECK_EQ(((uint64_t *)v.mem)[2], 160);
	CHECK_EQ(lost_wakeups, 0);
	CHECK_EQ(H.violations, 0);
	printf("#   %u engine sleeps, %u initiator kicks\n", engine_sleeps,
	       v.a->nkicks);
	aenv_fini(&v);
	sem_destroy(&H.wake);
}

/* The collectives' tests and their fake CAU use the fake HFI above. */
#include "coll-unit.c"

/* ---- runner ----------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "fifo: packet at every ring position and size, pad on wrap", test_wrap_every_position },
	{ "fifo: random-size stream through unequal rings", test_stream_random_sizes },
	{ "fifo: full send ring gives -EAGAIN", test_full_ring_eagain },
	{ "fifo: room for packet but not pad+packet gives -EAGAIN", test_full_ring_with_pad },
	{ "fifo: payload 2016 accepted, 2017 -EMSGSIZE", test_max_payload },
	{ "fifo: caller-built headers", test_compose_hdr },
	{ "rdma: descriptors and bad arguments", test_rdma_descriptors },
	{ "reserve-send: payload area in the FIFO after the header, every position, pad on wrap", test_send_reserve_every_position },
	{ "reserve-send: full ring and pad+packet shortfall give -EAGAIN, nothing written", test_send_reserve_full },
	{ "reserve-send: sizes, bad arguments, zero length, NOTIFY", test_send_reserve_args },
	{ "reserve-send: unwritten payload bytes are sent as the FIFO holds them", test_send_reserve_in_place },
	{ "reserve-send: interleaved with compose in one stream", test_send_reserve_mixed_stream },
	{ "fifo: blocked sender resumes on receiver credit kick", test_blocked_sender_and_credit_kick },
	{ "recv: lazy credits, at most half the ring held", test_credit_lazy },
	{ "recv: peek in place, -EMSGSIZE keeps the packet", test_recv_peek_and_emsgsize },
	{ "recv: bad HFI indices and entries give -EIO", test_recv_bad_hfi_state },
	{ "icswx: busy with 32 slots held (kick mode)", test_icswx_busy_kick_mode },
	{ "icswx: busy with 32 slots held (poll mode)", test_icswx_busy_poll_mode },
	{ "icswx: 96 B accepted, 97 B -EMSGSIZE, slot wrap", test_icswx_sizes_and_wrap },
	{ "doorbell: kick mode always kicks, poll mode on NEED_WAKEUP", test_trigger_kick_vs_poll },
	{ "doorbell: auto mode kicks on NEED_WAKEUP or a stopped beat", test_trigger_auto },
	{ "doorbell: kick errors reach the caller", test_kick_error_propagates },
	{ "cq: consumption, wrap, head published", test_cq },
	{ "wait: ready rings answer without sleeping", test_wait_fast_path },
	{ "strerror: texts for the send, RDMA and atomic errors", test_strerror },
	{ "hfi: device path, ENOENT, plain file", test_hfi_open },
	{ "window: layout checks", test_layout_checks },
	{ "reserve: regions mapped with their protection, release undoes", test_reserve_maps_regions },
	{ "reserve: no job named joins PERCS_JOB_FD's job or one private job", test_reserve_default_job },
	{ "reserve: a failing mmap or bad layout unwinds everything", test_reserve_unwinds },
	{ "mr: register passes range and rights, returns the handle; deregister", test_mr_reg_dereg },
	{ "mr: kernel errors come back as -errno, bad arguments never reach it", test_mr_errors },
	{ "threaded: FIFO stream through a polling engine", test_threaded_fifo_stream },
	{ "threaded: ICSWX stream through a polling engine", test_threaded_icswx_stream },
	{ "clock: TSC to ns with the 96-bit product, every scale, below the base", test_clock_conversion },
	{ "clock: CLOCK_MONOTONIC fallback, errors, no page, other version", test_clock_fallback_and_args },
	{ "clock: seqcount: rewrite mid-read retries, odd count waits, stuck gives -EAGAIN", test_clock_seqcount_retry },
	{ "clock: threaded readers against a writer rewriting the page", test_clock_threaded_rewrites },
	{ "atomic: descriptor encoding (lengths, comparand, packed line), refused fields, full FIFO", test_atomic_post_encoding },
	{ "atomic: raw descriptors complete to the caller with its user_data", test_atomic_post_completions },
	{ "amo: packing (4 adds one packet; handle/op/width/window/fetch/block/CSWAP/percs_wait flush; PACK_OFF)", test_amo_packing },
	{ "amo: fetched values per width and op against a reference, neighbours untouched", test_amo_fetch_widths },
	{ "amo: _nbi values stored when the completion is taken", test_amo_nbi_values },
	{ "amo: compare-and-swap success/failure, swap retries, set/fetch", test_amo_cswap },
	{ "amo: quiet returns the first error since the last, blocking calls their own", test_amo_quiet_errors },
	{ "amo: -ERANGE, -EINVAL with nothing sent or flushed", test_amo_arg_errors },
	{ "amo: shared CQ: library entries hidden, others kept in order", test_amo_cq_stash },
	{ "amo: a blocking operation with the send FIFO full: -EAGAIN, nothing written", test_amo_blocking_fifo_full },
	{ "amo: at most 64 descriptors in flight, reached, every value once", test_amo_outstanding_limit },
	{ "amo: result area registered on first fetch, deregistered at release, failures send nothing", test_amo_result_area },
	{ "amo: blocking waits kick until the completion comes; kick errors end them", test_amo_wait_kicks },
	{ "amo: CQ overflow: -EOVERFLOW after lost_ms, no hang, late entry ignored", test_amo_cq_overflow_lost },
	{ "amo: threaded: fetch-adds and quiet through a polling engine", test_amo_threaded_poll_mode },
	{ "cau: k-ary shape: one parent each, fan-out, depth, supernodes kept together, same on every member", test_cau_shape_kary },
	{ "cau: explicit shape and the kernel's checks in order (-EINVAL, -ELOOP, -EMLINK, -EEXIST)", test_cau_shape_explicit },
	{ "cau: allreduce every op x type, 64-byte chunks, 16 in flight, in place", test_cau_allreduce },
	{ "cau: results held back then written newest first: matched by seq", test_cau_seq_matching },
	{ "cau: other packets and CQEs met while waiting come back in order", test_cau_recv_stash },
	{ "cau: errors: op status, disagreement, tree end (CQE and probe), descriptor error, -EBUSY, arguments", test_cau_errors },
	{ "cau: reduce at the root, non-roots done at post, late error to the next call", test_cau_reduce },
	{ "cau: bcast on the CAU multicast: any length, any origin, early multicasts kept for their call", test_cau_bcast },
	{ "cau: many requests in flight, barriers among them, small FIFOs", test_cau_many_requests },
	{ "sw: allreduce binomial, recursive doubling, Rabenseifner on 1-11 ranks, exact, same bits everywhere", test_sw_allreduce },
	{ "sw: reduce and bcast from every root, barriers of every algorithm", test_sw_reduce_bcast_barrier },
	{ "sw: concurrent collectives on two groups, a late rank, a group created after its messages came", test_sw_concurrent_and_late },
	{ "sw: group and argument errors, -EPROTO, a member window gone", test_sw_errors },
	{ "coll: percs_coll_combine() is the CAU's ALU", test_coll_combine },
	{ "coll: threaded ranks with blocking CAU and software calls through a polling engine", test_coll_threaded_poll_mode },
};

#define NTESTS ((int)(sizeof(tests) / sizeof(tests[0])))

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc > 1 && !strcmp(argv[1], "--count")) {
		printf("%d\n", NTESTS);
		return 0;
	}
	printf("TAP version 13\n1..%d\n", NTESTS);
	for (int i = 0; i < NTESTS; i++) {
		int status;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			alarm(120);
			tests[i].fn();
			fflush(stdout);
			_exit(t_failed ? 1 : 0);
		}
		if (waitpid(pid, &status, 0) < 0) {
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %d - %s\n", i + 1, tests[i].name);
		} else {
			failed++;
			if (WIFSIGNALED(status))
				printf("#   killed by signal %d%s\n",
				       WTERMSIG(status),
				       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
			printf("not ok %d - %s\n", i + 1, tests[i].name);
		}
	}
	printf("# %d passed, %d failed\n", NTESTS - failed, failed);
	return failed ? 1 : 0;
}
