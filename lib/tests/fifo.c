// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: FIFO send and receive: ring positions, wrap, full
 * rings, sizes.
 */
#include "unit.h"

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
	static uint8_t buf[PERCS_MAX_PAYLOAD];
	struct fwin *a = fwin_new(1, 4096, 8192, 0);
	struct fwin *b = fwin_new(2, 8192, 4096, 0);
	uint32_t sent = 0, got = 0, rnd = 12345, total = 20000;

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
		got = stream_recv_some(b, got, rnd);
	}
	stream_end(a, b, sent, total);
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

const struct unit_test fifo_tests[] = {
	{ "fifo: packet at every ring position and size, pad on wrap", test_wrap_every_position },
	{ "fifo: random-size stream through unequal rings", test_stream_random_sizes },
	{ "fifo: full send ring gives -EAGAIN", test_full_ring_eagain },
	{ "fifo: room for packet but not pad+packet gives -EAGAIN", test_full_ring_with_pad },
	{ "fifo: payload 2016 accepted, 2017 -EMSGSIZE", test_max_payload },
	{ "fifo: caller-built headers", test_compose_hdr },
	{ NULL, NULL }
};
