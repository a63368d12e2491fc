// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: zero-copy compose: percs_send_reserve().
 */
#include "unit.h"

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
	static uint8_t buf[PERCS_MAX_PAYLOAD];
	struct fwin *a = fwin_new(1, 4096, 8192, 0);
	struct fwin *b = fwin_new(2, 8192, 4096, 0);
	uint32_t sent = 0, got = 0, rnd = 777, total = 20000;

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
		got = stream_recv_some(b, got, rnd);
	}
	stream_end(a, b, sent, total);
}

const struct unit_test send_reserve_tests[] = {
	{ "reserve-send: payload area in the FIFO after the header, every position, pad on wrap", test_send_reserve_every_position },
	{ "reserve-send: full ring and pad+packet shortfall give -EAGAIN, nothing written", test_send_reserve_full },
	{ "reserve-send: sizes, bad arguments, zero length, NOTIFY", test_send_reserve_args },
	{ "reserve-send: unwritten payload bytes are sent as the FIFO holds them", test_send_reserve_in_place },
	{ "reserve-send: interleaved with compose in one stream", test_send_reserve_mixed_stream },
	{ NULL, NULL }
};
