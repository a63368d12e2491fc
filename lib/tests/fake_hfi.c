// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the fake HFI: fake windows over malloc'ed rings and
 * an engine that moves packets between them as the kernel does, recording
 * every rule the library breaks as a violation.
 */
#include "unit.h"

struct fake_hfi H;

void violation(const char *what, const struct fwin *f)
{
	H.violations++;
	printf("#   fake HFI: window %u: %s\n", f->addr.window, what);
}

uint8_t *unit_ptr(uint8_t *base, uint32_t units, uint64_t pos)
{
	return base + (size_t)(pos & (units - 1)) * PERCS_FLIT_SIZE;
}

void post_raw_cqe(struct fwin *f, const struct percs_cqe *c)
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

void post_cqe(struct fwin *f, const struct percs_pkt_hdr *h, int res,
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
int deliver(struct fwin *s, const struct percs_pkt_hdr *h)
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
int engine_send(struct fwin *f)
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

int engine_imm(struct fwin *f)
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
int engine_all(void)
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

void *zalloc(size_t size)
{
	void *p = aligned_alloc(4096, size);

	if (!p)
		abort();
	memset(p, 0, size);
	return p;
}

struct fwin *fwin_new(uint16_t idx, uint32_t send_size,
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

void fwin_free(struct fwin *f)
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

void fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + 1);
}

bool pattern_ok(const uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7 + 1))
			return false;
	return true;
}

/*
 * The receiving half of a random stream test: take up to 1 + (@rnd >> 3) %
 * 6 packets from @b, each the next tag with its pattern.  Return: the
 * count received so far, @got plus those.
 */
uint32_t stream_recv_some(struct fwin *b, uint32_t got, uint32_t rnd)
{
	static uint8_t out[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;

	for (uint32_t i = 0; i < 1 + (rnd >> 3) % 6; i++) {
		int r = percs_recv(b->w, &h, out, sizeof(out));

		if (r == -EAGAIN)
			break;
		CHECK(r >= 0);
		if (r < 0)
			break;
		CHECK_EQ(h.tag, got);
		CHECK(pattern_ok(out, r, got));
		got++;
	}
	return got;
}

/* A random stream's end: all @total sent and received; frees both. */
void stream_end(struct fwin *a, struct fwin *b, uint32_t sent, uint32_t total)
{
	CHECK_EQ(sent, total);
	CHECK_EQ(b->st->packets_received, total);
	CHECK_EQ(H.violations, 0);
	fwin_free(a);
	fwin_free(b);
}

/* Largest payload that takes exactly @units units. */
size_t max_len(uint32_t units)
{
	return units * PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE;
}

const struct percs_pkt_hdr *send_unit(struct fwin *f, uint64_t pos)
{
	return (const void *)unit_ptr(f->send, f->send_units, pos);
}
