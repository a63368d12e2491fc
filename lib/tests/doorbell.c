// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the doorbell: kick, poll and auto modes.
 */
#include "unit.h"

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

const struct unit_test doorbell_tests[] = {
	{ "doorbell: kick mode always kicks, poll mode on NEED_WAKEUP", test_trigger_kick_vs_poll },
	{ "doorbell: auto mode kicks on NEED_WAKEUP or a stopped beat", test_trigger_auto },
	{ "doorbell: kick errors reach the caller", test_kick_error_propagates },
	{ NULL, NULL }
};
