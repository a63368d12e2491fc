// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: raw atomic descriptors.
 */
#include "unit.h"

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

const struct unit_test atomic_tests[] = {
	{ "atomic: descriptor encoding (lengths, comparand, packed line), refused fields, full FIFO", test_atomic_post_encoding },
	{ "atomic: raw descriptors complete to the caller with its user_data", test_atomic_post_completions },
	{ NULL, NULL }
};
