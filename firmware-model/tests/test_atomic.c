// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of firmware-model/atomic.c: every op x width x signedness
 * against a reference written with C's own typed arithmetic, and the
 * descriptor rules.
 */
#include <stdint.h>

#include "atomic.h"
#include "fm_test.h"

/* Edge values of every width, as signed 64-bit numbers, plus a few others. */
static const int64_t values[] = {
	0, 1, 2, -1, -2, 0x7f, 0x80, -0x80, -0x81, 0xff, 0x100,
	0x7fff, 0x8000, -0x8000, 0xffff, 0x10000, 0x7fffffff,
	(int64_t)0x80000000, -(int64_t)0x80000000, (int64_t)0xffffffff,
	INT64_MAX, INT64_MIN, 0x0123456789abcdef, -0x0123456789abcdef,
};

/* The reference: the op in the C type of @width and signedness. */
#define REF(T)								\
	static uint64_t ref_##T(unsigned int op, int64_t a, int64_t b,	\
				int64_t c)				\
	{								\
		T x = (T)a, y = (T)b, z = (T)c, r;			\
		switch (op) {						\
		case PERCS_ATOMIC_ADD:					\
			r = (T)((uint64_t)x + (uint64_t)y);		\
			break;						\
		case PERCS_ATOMIC_AND:					\
			r = x & y;					\
			break;						\
		case PERCS_ATOMIC_OR:					\
			r = x | y;					\
			break;						\
		case PERCS_ATOMIC_XOR:					\
			r = x ^ y;					\
			break;						\
		default:						\
			r = x == z ? y : x;				\
		}							\
		return (uint64_t)r;					\
	}
REF(uint8_t) REF(uint16_t) REF(uint32_t) REF(uint64_t)
REF(int8_t) REF(int16_t) REF(int32_t) REF(int64_t)

static uint64_t reference(unsigned int op, unsigned int width, bool sign,
			  int64_t a, int64_t b, int64_t c)
{
	switch (width * 2 + sign) {
	case 2: return ref_uint8_t(op, a, b, c);
	case 3: return ref_int8_t(op, a, b, c);
	case 4: return ref_uint16_t(op, a, b, c);
	case 5: return ref_int16_t(op, a, b, c);
	case 8: return ref_uint32_t(op, a, b, c);
	case 9: return ref_int32_t(op, a, b, c);
	case 16: return ref_uint64_t(op, a, b, c);
	default: return ref_int64_t(op, a, b, c);
	}
}

FM_TEST(atomic_ops_match_reference)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	unsigned int op, wi, s, i, j, k, checked = 0;

	for (op = 0; op <= PERCS_ATOMIC_OP_MAX; op++)
	for (wi = 0; wi < FM_ARRAY_SIZE(widths); wi++)
	for (s = 0; s < 2; s++)
	for (i = 0; i < FM_ARRAY_SIZE(values); i++)
	for (j = 0; j < FM_ARRAY_SIZE(values); j++)
	for (k = 0; k < (op == PERCS_ATOMIC_CSWAP ? 3 : 1); k++) {
		unsigned int w = widths[wi];
		uint64_t m = fm_atomic_mask(w);
		/* CSWAP: comparand equal to the value, or not. */
		int64_t c = k == 0 ? values[i] :
			    k == 1 ? (int64_t)((uint64_t)values[i] + 1) :
			    values[j];
		uint64_t want = reference(op, w, s, values[i], values[j],
					  c) & m;
		uint64_t got = fm_atomic_apply(op, w, (uint64_t)values[i] & m,
					       (uint64_t)values[j] & m,
					       (uint64_t)c & m);

		checked++;
		CHECK_CTX(got == want,
			  "%s width %u %s: %llx op %llx (cmp %llx) = %llx, want %llx",
			  fm_atomic_op_name(op), w, s ? "signed" : "unsigned",
			  (unsigned long long)values[i] & m,
			  (unsigned long long)values[j] & m,
			  (unsigned long long)c & m,
			  (unsigned long long)got, (unsigned long long)want);
	}
	CHECK(checked > 10000);
}

FM_TEST(atomic_wraparound_and_cswap_failure)
{
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_ADD, 1, 0xff, 1, 0), 0);
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_ADD, 2, 0xffff, 2, 0), 1);
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_ADD, 4, 0x7fffffff, 1, 0),
		 0x80000000);
	CHECK(fm_atomic_apply(PERCS_ATOMIC_ADD, 8, ~0ULL, 1, 0) == 0);
	/* Signed -1 + 1 in one byte: 0xff + 0x01 = 0. */
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_ADD, 1, (uint8_t)-1, 1, 0), 0);
	/* Bits beyond the width are ignored and never produced. */
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_OR, 1, 0x1234, 0x00, 0), 0x34);
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_CSWAP, 4, 5, 9, 6), 5);
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_CSWAP, 4, 5, 9, 5), 9);
	CHECK_EQ(fm_atomic_apply(PERCS_ATOMIC_CSWAP, 1, 0x105, 9, 5), 9);
	CHECK_EQ(fm_atomic_mask(1), 0xff);
	CHECK(fm_atomic_mask(8) == ~0ULL);
}

FM_TEST(atomic_address_alignment)
{
	CHECK_EQ(fm_atomic_check_addr(0x1001, 1), 0);
	CHECK_EQ(fm_atomic_check_addr(0x1002, 2), 0);
	CHECK_EQ(fm_atomic_check_addr(0x1001, 2), -EINVAL);
	CHECK_EQ(fm_atomic_check_addr(0x1006, 4), -EINVAL);
	CHECK_EQ(fm_atomic_check_addr(0x1004, 8), -EINVAL);
	CHECK_EQ(fm_atomic_check_addr(0x1008, 8), 0);
}

/* A descriptor of @count ops in @buf; returns its header. */
static struct percs_pkt_hdr desc(uint8_t *buf, unsigned int op,
				 unsigned int width, unsigned int count,
				 unsigned int flags)
{
	struct percs_atomic_ext *e = (struct percs_atomic_ext *)buf;
	struct percs_pkt_hdr h;
	unsigned int i;

	memset(&h, 0, sizeof(h));
	memset(buf, 0, PERCS_IMM_PAYLOAD);
	h.kind = PERCS_PKT_ATOMIC;
	h.length = PERCS_ATOMIC_LEN(count) +
		   (op == PERCS_ATOMIC_CSWAP ? 8 : 0);
	e->op = op;
	e->width = width;
	e->count = count;
	e->flags = flags;
	e->handle = 0x10001;
	if (flags & PERCS_ATOMIC_F_FETCH) {
		e->result_handle = 0x20001;
		e->result_addr = 0x5000;
	}
	for (i = 0; i < count && i < PERCS_ATOMIC_MAX_PACKED; i++) {
		struct percs_atomic_op *o = (struct percs_atomic_op *)
			(buf + sizeof(*e) + i * sizeof(*o));

		o->addr = 0x1000 + 8 * i;
		o->operand = i + 1;
	}
	return h;
}

FM_TEST(atomic_parse_accepts_good_descriptors)
{
	uint8_t buf[PERCS_IMM_PAYLOAD];
	struct fm_atomic_desc d;
	struct percs_pkt_hdr h;

	h = desc(buf, PERCS_ATOMIC_ADD, 8, 4, 0);
	CHECK_EQ(h.length, PERCS_IMM_PAYLOAD);
	CHECK_EQ(fm_atomic_parse(&h, buf, &d), 0);
	CHECK_EQ(d.ext.count, 4);
	CHECK_EQ(d.ops[3].addr, 0x1018);
	CHECK_EQ(d.ops[3].operand, 4);

	h = desc(buf, PERCS_ATOMIC_CSWAP, 2, 1, PERCS_ATOMIC_F_FETCH);
	memcpy(buf + PERCS_ATOMIC_LEN(1), &(uint64_t){ 0xbeef }, 8);
	CHECK_EQ(fm_atomic_parse(&h, buf, &d), 0);
	CHECK_EQ(d.compare, 0xbeef);
	CHECK_EQ(d.ext.result_addr, 0x5000);

	h = desc(buf, PERCS_ATOMIC_CSWAP, 4, 1, 0);
	CHECK_EQ(fm_atomic_parse(&h, buf, &d), 0);
	h = desc(buf, PERCS_ATOMIC_XOR, 1, 1, PERCS_ATOMIC_F_FETCH);
	CHECK_EQ(fm_atomic_parse(&h, buf, &d), 0);
}

FM_TEST(atomic_parse_refuses_bad_descriptors)
{
	uint8_t buf[PERCS_IMM_PAYLOAD];
	struct percs_atomic_ext *e = (struct percs_atomic_ext *)buf;
	struct percs_atomic_op *o =
		(struct percs_atomic_op *)(buf + sizeof(*e));
	struct fm_atomic_desc d;
	struct percs_pkt_hdr h;

#define BAD(setup)							\
	do {								\
		h = desc(buf, PERCS_ATOMIC_ADD, 4, 2, 0);		\
		setup;							\
		CHECK_CTX(fm_atomic_parse(&h, buf, &d) == -EINVAL,	\
			  "%s", #setup);				\
	} while (0)
	BAD(e->op = PERCS_ATOMIC_OP_MAX + 1);
	BAD(e->width = 3);
	BAD(e->width = 16);
	BAD(e->width = 0);
	BAD(e->count = 0);
	BAD((e->count = 5, h.length = PERCS_ATOMIC_LEN(5)));
	BAD(e->flags = 2);
	BAD(e->reserved = 1);
	BAD(h.length++);
	BAD(h.length -= 16);
	BAD(h.length = 8);
	BAD(o[1].operand = 0x100000000ULL);
	BAD(e->result_handle = 1);
	BAD(e->result_addr = 8);
	/* Packed mode is for non-fetching ADD/AND/OR/XOR. */
	BAD((e->flags = PERCS_ATOMIC_F_FETCH, e->result_handle = 1));
	BAD((e->op = PERCS_ATOMIC_CSWAP, h.length += 8));
#undef BAD
	/* A CSWAP comparand wider than the width. */
	h = desc(buf, PERCS_ATOMIC_CSWAP, 1, 1, 0);
	memcpy(buf + PERCS_ATOMIC_LEN(1), &(uint64_t){ 0x100 }, 8);
	CHECK_EQ(fm_atomic_parse(&h, buf, &d), -EINVAL);
	/* A CSWAP without its comparand. */
	h = desc(buf, PERCS_ATOMIC_CSWAP, 1, 1, 0);
	h.length -= 8;
	CHECK_EQ(fm_atomic_parse(&h, buf, &d), -EINVAL);
}
