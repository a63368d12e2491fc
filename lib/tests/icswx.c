// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: immediate sends (ICSWX slots).
 */
#include "unit.h"

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

const struct unit_test icswx_tests[] = {
	{ "icswx: busy with 32 slots held (kick mode)", test_icswx_busy_kick_mode },
	{ "icswx: busy with 32 slots held (poll mode)", test_icswx_busy_poll_mode },
	{ "icswx: 96 B accepted, 97 B -EMSGSIZE, slot wrap", test_icswx_sizes_and_wrap },
	{ NULL, NULL }
};
