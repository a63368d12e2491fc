// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: flow control and receive: blocked senders, credits,
 * peek.
 */
#include "unit.h"

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
/*
 * A peek at the receive stash without a consume, then the library drains
 * the FIFO into the stash (a collective waiting): no packet lost or kept
 * twice, the order stays.
 */
static void test_recv_peek_stash_then_drain(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	const struct percs_pkt_hdr *h;
	struct percs_pkt_hdr hh;
	uint8_t buf[8] = { 0 }, out[8];

	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 1, 0), 0);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 2, 0), 0);
	CHECK_EQ(lp_recv_drain(b->w), 2);
	h = percs_recv_peek(b->w);
	REQUIRE(h);
	CHECK_EQ(h->tag, 1);
	CHECK_EQ(percs_send(a->w, &b->addr, buf, 8, 3, 0), 0);
	CHECK_EQ(lp_recv_drain(b->w), 1);
	CHECK_EQ(b->w->rstash.count, 3);
	for (uint32_t tag = 1; tag <= 3; tag++) {
		CHECK_EQ(percs_recv(b->w, &hh, out, sizeof(out)), 8);
		CHECK_EQ(hh.tag, tag);
	}
	CHECK_EQ(percs_recv(b->w, &hh, out, sizeof(out)), -EAGAIN);
	fwin_free(a);
	fwin_free(b);
}

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

const struct unit_test recv_tests[] = {
	{ "fifo: blocked sender resumes on receiver credit kick", test_blocked_sender_and_credit_kick },
	{ "recv: lazy credits, at most half the ring held", test_credit_lazy },
	{ "recv: peek in place, -EMSGSIZE keeps the packet", test_recv_peek_and_emsgsize },
	{ "recv: a peek at the stash, then a drain: order kept", test_recv_peek_stash_then_drain },
	{ "recv: bad HFI indices and entries give -EIO", test_recv_bad_hfi_state },
	{ NULL, NULL }
};
