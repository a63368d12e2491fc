// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of firmware-model/cau.c, the CAU's ALU: every op x type
 * against a reference written here with C's typed arithmetic and
 * comparisons, over edge values (integer limits, signed zeros, infinities,
 * NaNs with payloads, subnormals, overflow); the op/type/count rules; that
 * only the first count elements are touched; the float results the uapi
 * fixes bit for bit; and the order dependence of a float sum.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "cau.h"
#include "fm_test.h"

union cau_buf {
	uint8_t b[PERCS_CAU_PAYLOAD];
	int32_t s32[PERCS_CAU_PAYLOAD / 4];
	uint32_t u32[PERCS_CAU_PAYLOAD / 4];
	int64_t s64[PERCS_CAU_PAYLOAD / 8];
	uint64_t u64[PERCS_CAU_PAYLOAD / 8];
	float f32[PERCS_CAU_PAYLOAD / 4];
	double f64[PERCS_CAU_PAYLOAD / 8];
};

#define NOP	PERCS_CAU_OP_NOP
#define SUM	PERCS_CAU_OP_SUM
#define MIN	PERCS_CAU_OP_MIN
#define MAX	PERCS_CAU_OP_MAX
#define OR	PERCS_CAU_OP_OR
#define AND	PERCS_CAU_OP_AND
#define XOR	PERCS_CAU_OP_XOR
#define PROD	PERCS_CAU_OP_PROD
#define S32	PERCS_CAU_T_S32
#define U32	PERCS_CAU_T_U32
#define S64	PERCS_CAU_T_S64
#define U64	PERCS_CAU_T_U64
#define F32	PERCS_CAU_T_F32
#define F64	PERCS_CAU_T_F64

/* The paper's list, written out: valid[op][type]. */
static const char valid[PERCS_CAU_OP_LAST + 1][PERCS_CAU_T_LAST + 1] = {
	/*	   S32 U32 S64 U64 F32 F64 */
	[NOP]	= { 1,  1,  1,  1,  1,  1 },
	[SUM]	= { 1,  1,  1,  1,  1,  1 },
	[MIN]	= { 1,  1,  1,  1,  1,  1 },
	[MAX]	= { 1,  1,  1,  1,  1,  1 },
	[OR]	= { 1,  1,  1,  1,  0,  0 },
	[AND]	= { 1,  1,  1,  1,  0,  0 },
	[XOR]	= { 1,  1,  1,  1,  0,  0 },
	[PROD]	= { 0,  0,  0,  0,  1,  1 },
};
static const unsigned int max_count[] = { 16, 16, 8, 8, 16, 8 };

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float f32_of(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint64_t f64_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double f64_of(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

FM_TEST(cau_check_rules)
{
	unsigned int op, type, count, checked = 0;

	for (op = 0; op <= PERCS_CAU_OP_LAST + 3; op++)
	for (type = 0; type <= PERCS_CAU_T_LAST + 3; type++)
	for (count = 0; count <= 20; count++) {
		bool ok = op <= PERCS_CAU_OP_LAST &&
			  type <= PERCS_CAU_T_LAST && valid[op][type] &&
			  count <= max_count[type];

		checked++;
		CHECK_CTX(fm_cau_check(op, type, count) == (ok ? 0 : -EINVAL),
			  "op %u type %u count %u", op, type, count);
	}
	CHECK(checked > 1000);
	CHECK_EQ(fm_cau_check(SUM, F64, ~0U), -EINVAL);
	CHECK_EQ(fm_cau_check(~0U, S32, 1), -EINVAL);
	CHECK_EQ(fm_cau_check(SUM, ~0U, 1), -EINVAL);
	/* A barrier: NOP with no data, and count 0 of any valid op. */
	CHECK_EQ(fm_cau_check(NOP, S32, 0), 0);
	CHECK_EQ(fm_cau_check(PROD, F32, 0), 0);
	CHECK_EQ(fm_cau_check(PROD, U64, 0), -EINVAL);
}

FM_TEST(cau_sizes_names_fpu)
{
	unsigned int op, type;

	CHECK_EQ(fm_cau_elem_size(S32), 4);
	CHECK_EQ(fm_cau_elem_size(U32), 4);
	CHECK_EQ(fm_cau_elem_size(F32), 4);
	CHECK_EQ(fm_cau_elem_size(S64), 8);
	CHECK_EQ(fm_cau_elem_size(U64), 8);
	CHECK_EQ(fm_cau_elem_size(F64), 8);
	CHECK_EQ(fm_cau_elem_size(PERCS_CAU_T_LAST + 1), 0);
	CHECK_EQ(fm_cau_elem_size(~0U), 0);
	for (type = 0; type <= PERCS_CAU_T_LAST; type++)
		CHECK_EQ(fm_cau_elem_size(type) * max_count[type],
			 PERCS_CAU_PAYLOAD);

	CHECK_STR(fm_cau_op_name(NOP), "nop");
	CHECK_STR(fm_cau_op_name(SUM), "sum");
	CHECK_STR(fm_cau_op_name(MIN), "min");
	CHECK_STR(fm_cau_op_name(MAX), "max");
	CHECK_STR(fm_cau_op_name(OR), "or");
	CHECK_STR(fm_cau_op_name(AND), "and");
	CHECK_STR(fm_cau_op_name(XOR), "xor");
	CHECK_STR(fm_cau_op_name(PROD), "prod");
	CHECK_STR(fm_cau_op_name(PERCS_CAU_OP_LAST + 1), "?");
	CHECK_STR(fm_cau_type_name(S32), "s32");
	CHECK_STR(fm_cau_type_name(U32), "u32");
	CHECK_STR(fm_cau_type_name(S64), "s64");
	CHECK_STR(fm_cau_type_name(U64), "u64");
	CHECK_STR(fm_cau_type_name(F32), "f32");
	CHECK_STR(fm_cau_type_name(F64), "f64");
	CHECK_STR(fm_cau_type_name(PERCS_CAU_T_LAST + 1), "?");

	for (op = 0; op <= PERCS_CAU_OP_LAST + 1; op++)
		for (type = 0; type <= PERCS_CAU_T_LAST + 1; type++)
			CHECK_CTX(fm_cau_needs_fpu(op, type) ==
				  ((type == F32 || type == F64) &&
				   (op == SUM || op == PROD)),
				  "op %u type %u", op, type);
}

/* Integer edge values as signed 64-bit numbers; each type casts them. */
static const int64_t ivalues[] = {
	0, 1, 2, -1, -2, 3, 0x7f, 0x80, 0xff, 0x7fff, 0xffff,
	0x7fffffff, (int64_t)0x80000000, -(int64_t)0x80000000,
	(int64_t)0xffffffff, -(int64_t)0x7fffffff, 0x100000000,
	INT64_MAX, INT64_MIN, INT64_MIN + 1, 0x0123456789abcdef,
	-0x0123456789abcdef, (int64_t)0xfedcba9876543210,
};

/*
 * The reference: the op in C's own type T (unsigned UT for wrapping); the
 * result converted to uint64_t.
 */
#define FIXED_REF(T, UT)						\
	static uint64_t ref_##T(unsigned int op, T a, T b)		\
	{								\
		T r;							\
									\
		switch (op) {						\
		case SUM:						\
			r = (T)((UT)a + (UT)b);				\
			break;						\
		case MIN:						\
			r = a < b ? a : b;				\
			break;						\
		case MAX:						\
			r = a > b ? a : b;				\
			break;						\
		case OR:						\
			r = a | b;					\
			break;						\
		case AND:						\
			r = a & b;					\
			break;						\
		case XOR:						\
			r = a ^ b;					\
			break;						\
		default: /* NOP */					\
			r = 0;						\
		}							\
		return (uint64_t)r;					\
	}
FIXED_REF(int32_t, uint32_t) FIXED_REF(uint32_t, uint32_t)
FIXED_REF(int64_t, uint64_t) FIXED_REF(uint64_t, uint64_t)

/*
 * Every pair of ivalues, as T, through op: in chunks of as many elements as
 * a payload holds (the last one shorter), the accumulator's bytes beyond
 * the count filled with a pattern that must survive.  Returns the pairs
 * checked.
 */
#define FIXED_RUN(T, F, TYPE)						\
	static unsigned int run_##T(unsigned int op)			\
	{								\
		const unsigned int n = PERCS_CAU_PAYLOAD / sizeof(T);	\
		const unsigned int nv = FM_ARRAY_SIZE(ivalues);		\
		unsigned int p = 0, k, cnt, done = 0;			\
		union cau_buf acc, in, want;				\
									\
		while (p < nv * nv) {					\
			cnt = nv * nv - p < n ? nv * nv - p : n;	\
			memset(&acc, 0xa5, sizeof(acc));		\
			memset(&in, 0x3c, sizeof(in));			\
			for (k = 0; k < cnt; k++) {			\
				acc.F[k] = (T)ivalues[(p + k) / nv];	\
				in.F[k] = (T)ivalues[(p + k) % nv];	\
			}						\
			want = acc;					\
			for (k = 0; k < cnt; k++)			\
				want.F[k] = (T)ref_##T(op, acc.F[k],	\
						       in.F[k]);	\
			fm_cau_combine(op, TYPE, cnt, &acc, &in);	\
			for (k = 0; k < cnt; k++)			\
				CHECK_CTX(acc.F[k] == want.F[k],	\
					  "%s %s: %llx op %llx = %llx, want %llx", \
					  fm_cau_op_name(op),		\
					  fm_cau_type_name(TYPE),	\
					  (unsigned long long)(T)ivalues[(p + k) / nv], \
					  (unsigned long long)in.F[k],	\
					  (unsigned long long)acc.F[k],	\
					  (unsigned long long)want.F[k]); \
			CHECK_CTX(!memcmp(acc.b + cnt * sizeof(T),	\
					  want.b + cnt * sizeof(T),	\
					  sizeof(acc) - cnt * sizeof(T)), \
				  "%s %s: bytes beyond count %u",	\
				  fm_cau_op_name(op),			\
				  fm_cau_type_name(TYPE), cnt);		\
			p += cnt;					\
			done += cnt;					\
		}							\
		return done;						\
	}
FIXED_RUN(int32_t, s32, S32) FIXED_RUN(uint32_t, u32, U32)
FIXED_RUN(int64_t, s64, S64) FIXED_RUN(uint64_t, u64, U64)

FM_TEST(cau_fixed_ops_match_reference)
{
	static const unsigned int ops[] = { NOP, SUM, MIN, MAX, OR, AND, XOR };
	unsigned int i, checked = 0;

	for (i = 0; i < FM_ARRAY_SIZE(ops); i++) {
		checked += run_int32_t(ops[i]);
		checked += run_uint32_t(ops[i]);
		checked += run_int64_t(ops[i]);
		checked += run_uint64_t(ops[i]);
	}
	CHECK_EQ(checked, 4 * 7 * FM_ARRAY_SIZE(ivalues) *
		 FM_ARRAY_SIZE(ivalues));
}

FM_TEST(cau_fixed_wraparound_and_signedness)
{
	union cau_buf a, b;

	a.s32[0] = INT32_MAX;
	b.s32[0] = 1;
	a.s32[1] = INT32_MIN;
	b.s32[1] = -1;
	fm_cau_combine(SUM, S32, 2, &a, &b);
	CHECK_EQ(a.s32[0], INT32_MIN);
	CHECK_EQ(a.s32[1], INT32_MAX);

	a.u32[0] = UINT32_MAX;
	b.u32[0] = 1;
	fm_cau_combine(SUM, U32, 1, &a, &b);
	CHECK_EQ(a.u32[0], 0);

	a.u64[0] = UINT64_MAX;
	b.u64[0] = 2;
	a.s64[1] = INT64_MAX;
	b.s64[1] = 1;
	fm_cau_combine(SUM, U64, 1, &a, &b);
	fm_cau_combine(SUM, S64, 2, &a, &b); /* [0] += 2 again */
	CHECK_EQ(a.u64[0], 3);
	CHECK(a.s64[1] == INT64_MIN);

	/* -1 is the smaller as a signed number, the larger as unsigned. */
	a.s32[0] = -1;
	b.s32[0] = 1;
	fm_cau_combine(MIN, S32, 1, &a, &b);
	CHECK_EQ(a.s32[0], -1);
	a.u32[0] = (uint32_t)-1;
	b.u32[0] = 1;
	fm_cau_combine(MIN, U32, 1, &a, &b);
	CHECK_EQ(a.u32[0], 1);
	a.s64[0] = INT64_MIN;
	b.s64[0] = INT64_MAX;
	fm_cau_combine(MAX, S64, 1, &a, &b);
	CHECK(a.s64[0] == INT64_MAX);
	a.u64[0] = (uint64_t)INT64_MIN;
	b.u64[0] = (uint64_t)INT64_MAX;
	fm_cau_combine(MAX, U64, 1, &a, &b);
	CHECK(a.u64[0] == (uint64_t)INT64_MIN);
}

/* Float edge values, as bits so that NaN payloads and -0.0 are exact. */
static const uint32_t f32_values[] = {
	0x00000000, 0x80000000,		/* +0.0, -0.0 */
	0x3f800000, 0xbf800000,		/* 1.0, -1.0 */
	0x3fc00000, 0x40490fdb,		/* 1.5, pi */
	0x4b800000, 0x33800000,		/* 2^24, 2^-24 */
	0x3f800001,			/* 1 + 2^-23 */
	0x7f7fffff, 0xff7fffff,		/* +-FLT_MAX */
	0x00800000, 0x80800000,		/* +-FLT_MIN */
	0x00400000, 0x00000001,		/* subnormals */
	0x80000001, 0x807fffff,
	0x7f800000, 0xff800000,		/* +-inf */
	0x7fc00000, 0x7fc01234,		/* quiet NaNs, one with a payload */
	0xffc00001, 0x7f800001,		/* negative quiet, signalling */
};

static const uint64_t f64_values[] = {
	0x0000000000000000, 0x8000000000000000,
	0x3ff0000000000000, 0xbff0000000000000,
	0x3ff8000000000000, 0x400921fb54442d18,
	0x4340000000000000, 0x3ca0000000000000,	/* 2^53, 2^-53 */
	0x3ff0000000000001, 0x4341c37937e08000,	/* 1 + 2^-52, 1e16 */
	0x7fefffffffffffff, 0xffefffffffffffff,
	0x0010000000000000, 0x8010000000000000,
	0x0008000000000000, 0x0000000000000001,
	0x8000000000000001, 0x800fffffffffffff,
	0x7ff0000000000000, 0xfff0000000000000,
	0x7ff8000000000000, 0x7ff8000000001234,
	0xfff8000000000001, 0x7ff0000000000001,
};

/*
 * The reference, in C's float and double: the bits of the result.  MIN and
 * MAX return one of the inputs' bits; SUM and PROD the compiler's +, *.
 */
#define FLOAT_REF(T, B, OF, BITS)					\
	static uint64_t ref_##T(unsigned int op, B ab, B bb)		\
	{								\
		T a = OF(ab), b = OF(bb);				\
									\
		switch (op) {						\
		case SUM:						\
			return BITS(a + b);				\
		case PROD:						\
			return BITS(a * b);				\
		case MIN:						\
			if (isnan(a))					\
				return ab;				\
			if (isnan(b))					\
				return bb;				\
			if (a == b)					\
				return signbit(a) ? ab : bb;		\
			return a < b ? ab : bb;				\
		case MAX:						\
			if (isnan(a))					\
				return ab;				\
			if (isnan(b))					\
				return bb;				\
			if (a == b)					\
				return signbit(a) ? bb : ab;		\
			return a > b ? ab : bb;				\
		default: /* NOP */					\
			return 0;					\
		}							\
	}
FLOAT_REF(float, uint32_t, f32_of, f32_bits)
FLOAT_REF(double, uint64_t, f64_of, f64_bits)

/*
 * As FIXED_RUN, for floats: bits compared exactly, except that a SUM or
 * PROD whose reference is a NaN only needs to be a NaN.
 */
#define FLOAT_RUN(T, B, F, TYPE, VALUES, OF)				\
	static unsigned int run_##T(unsigned int op)			\
	{								\
		const unsigned int n = PERCS_CAU_PAYLOAD / sizeof(T);	\
		const unsigned int nv = FM_ARRAY_SIZE(VALUES);		\
		unsigned int p = 0, k, cnt, done = 0;			\
		union cau_buf acc, in, want;				\
		uint64_t ref;						\
		B got, x;						\
									\
		while (p < nv * nv) {					\
			cnt = nv * nv - p < n ? nv * nv - p : n;	\
			memset(&acc, 0xa5, sizeof(acc));		\
			memset(&in, 0x3c, sizeof(in));			\
			for (k = 0; k < cnt; k++) {			\
				x = VALUES[(p + k) / nv];		\
				memcpy(&acc.F[k], &x, sizeof(x));	\
				x = VALUES[(p + k) % nv];		\
				memcpy(&in.F[k], &x, sizeof(x));	\
			}						\
			want = acc;					\
			fm_cau_combine(op, TYPE, cnt, &acc, &in);	\
			for (k = 0; k < cnt; k++) {			\
				memcpy(&got, &acc.F[k], sizeof(got));	\
				ref = ref_##T(op, VALUES[(p + k) / nv],	\
					      VALUES[(p + k) % nv]);	\
				if ((op == SUM || op == PROD) &&	\
				    isnan(OF((B)ref))) {		\
					CHECK_CTX(isnan(OF(got)),	\
						  "%s %s: %llx op %llx = %llx, want a NaN", \
						  fm_cau_op_name(op),	\
						  fm_cau_type_name(TYPE), \
						  (unsigned long long)VALUES[(p + k) / nv], \
						  (unsigned long long)VALUES[(p + k) % nv], \
						  (unsigned long long)got); \
					continue;			\
				}					\
				CHECK_CTX(got == ref,			\
					  "%s %s: %llx op %llx = %llx, want %llx", \
					  fm_cau_op_name(op),		\
					  fm_cau_type_name(TYPE),	\
					  (unsigned long long)VALUES[(p + k) / nv], \
					  (unsigned long long)VALUES[(p + k) % nv], \
					  (unsigned long long)got,	\
					  (unsigned long long)ref);	\
			}						\
			CHECK_CTX(!memcmp(acc.b + cnt * sizeof(T),	\
					  want.b + cnt * sizeof(T),	\
					  sizeof(acc) - cnt * sizeof(T)), \
				  "%s %s: bytes beyond count %u",	\
				  fm_cau_op_name(op),			\
				  fm_cau_type_name(TYPE), cnt);		\
			p += cnt;					\
			done += cnt;					\
		}							\
		return done;						\
	}
FLOAT_RUN(float, uint32_t, f32, F32, f32_values, f32_of)
FLOAT_RUN(double, uint64_t, f64, F64, f64_values, f64_of)

FM_TEST(cau_float_ops_match_reference)
{
	static const unsigned int ops[] = { NOP, SUM, MIN, MAX, PROD };
	unsigned int i, checked = 0;

	for (i = 0; i < FM_ARRAY_SIZE(ops); i++) {
		checked += run_float(ops[i]);
		checked += run_double(ops[i]);
	}
	CHECK_EQ(checked, FM_ARRAY_SIZE(ops) *
		 (FM_ARRAY_SIZE(f32_values) * FM_ARRAY_SIZE(f32_values) +
		  FM_ARRAY_SIZE(f64_values) * FM_ARRAY_SIZE(f64_values)));
}

/* One element: @a op @b, as bits. */
static uint32_t f32_op(unsigned int op, uint32_t a, uint32_t b)
{
	fm_cau_combine(op, F32, 1, &a, &b);
	return a;
}

static uint64_t f64_op(unsigned int op, uint64_t a, uint64_t b)
{
	fm_cau_combine(op, F64, 1, &a, &b);
	return a;
}

/* The results the uapi fixes bit for bit, written out. */
FM_TEST(cau_float_fixed_bits)
{
	const uint32_t fmax = 0x7f7fffff, finf = 0x7f800000;
	const uint64_t dmax = 0x7fefffffffffffff, dinf = 0x7ff0000000000000;
	const uint32_t fone = 0x3f800000;
	const uint64_t done = 0x3ff0000000000000;

	/* Overflow to infinity in SUM and PROD, with the sign. */
	CHECK_EQ(f32_op(SUM, fmax, fmax), finf);
	CHECK_EQ(f32_op(SUM, fmax | 1u << 31, fmax | 1u << 31),
		 finf | 1u << 31);
	CHECK_EQ(f32_op(PROD, fmax, 0x40000000), finf);	/* * 2.0 */
	CHECK_EQ(f32_op(PROD, fmax, fmax | 1u << 31), finf | 1u << 31);
	CHECK(f64_op(SUM, dmax, dmax) == dinf);
	CHECK(f64_op(PROD, dmax, dmax) == dinf);
	CHECK(f64_op(PROD, dmax | 1ull << 63, dmax) == (dinf | 1ull << 63));
	CHECK(f64_op(SUM, dinf, dmax) == dinf);

	/* Invalid operations give a NaN. */
	CHECK(isnan(f32_of(f32_op(SUM, finf, finf | 1u << 31))));
	CHECK(isnan(f32_of(f32_op(PROD, 0, finf))));
	CHECK(isnan(f64_of(f64_op(SUM, dinf | 1ull << 63, dinf))));
	CHECK(isnan(f64_of(f64_op(PROD, dinf, 1ull << 63))));
	/* A NaN in gives a NaN out (which NaN is the FPU's). */
	CHECK(isnan(f32_of(f32_op(SUM, 0x7fc01234, fone))));
	CHECK(isnan(f32_of(f32_op(PROD, fone, 0x7f800001))));
	CHECK(isnan(f64_of(f64_op(SUM, done, 0x7ff8000000001234))));
	CHECK(isnan(f64_of(f64_op(PROD, 0x7ff0000000000001, done))));

	/* Subnormals are neither flushed nor treated as zero. */
	CHECK_EQ(f32_op(SUM, 0x00000001, 0x00000001), 0x00000002);
	CHECK_EQ(f32_op(PROD, 0x00800000, 0x3f000000), 0x00400000);
	CHECK_EQ(f32_op(PROD, 0x00400000, fone), 0x00400000);
	CHECK(f64_op(SUM, 1, 1) == 2);
	CHECK(f64_op(PROD, 0x0010000000000000, 0x3fe0000000000000) ==
	      0x0008000000000000);
	CHECK(f64_op(SUM, 0x8000000000000001, 0) == 0x8000000000000001);

	/* Round to nearest, ties to even. */
	CHECK_EQ(f32_op(SUM, fone, 0x33800000), fone);	/* 1 + 2^-24 */
	CHECK_EQ(f32_op(SUM, fone + 1, 0x33800000), fone + 2);
	CHECK_EQ(f32_op(SUM, fone, 0x33800001), fone + 1);
	CHECK(f64_op(SUM, done, 0x3ca0000000000000) == done);
	CHECK(f64_op(SUM, done + 1, 0x3ca0000000000000) == done + 2);

	/* Signed zeros in SUM: -0 + -0 = -0, -0 + +0 = +0. */
	CHECK_EQ(f32_op(SUM, 1u << 31, 1u << 31), 1u << 31);
	CHECK_EQ(f32_op(SUM, 1u << 31, 0), 0);
	CHECK(f64_op(SUM, 0, 1ull << 63) == 0);
	CHECK(f64_op(PROD, 1ull << 63, done) == 1ull << 63);
}

FM_TEST(cau_float_min_max_zeros_and_nans)
{
	const uint32_t fneg0 = 1u << 31, fnan1 = 0x7fc01234,
		       fnan2 = 0xffc00042, fsnan = 0x7f800001, fone = 0x3f800000;
	const uint64_t dneg0 = 1ull << 63, dnan1 = 0x7ff8000000001234,
		       dnan2 = 0xfff8000000000042, done = 0x3ff0000000000000;

	/* MIN(-0, +0) = -0 and MAX(-0, +0) = +0 in either order. */
	CHECK_EQ(f32_op(MIN, fneg0, 0), fneg0);
	CHECK_EQ(f32_op(MIN, 0, fneg0), fneg0);
	CHECK_EQ(f32_op(MAX, fneg0, 0), 0);
	CHECK_EQ(f32_op(MAX, 0, fneg0), 0);
	CHECK(f64_op(MIN, dneg0, 0) == dneg0);
	CHECK(f64_op(MIN, 0, dneg0) == dneg0);
	CHECK(f64_op(MAX, dneg0, 0) == 0);
	CHECK(f64_op(MAX, 0, dneg0) == 0);
	CHECK(f64_op(MIN, dneg0, dneg0) == dneg0);

	/* The first NaN in combination order wins, payload and all. */
	CHECK_EQ(f32_op(MIN, fnan1, fnan2), fnan1);
	CHECK_EQ(f32_op(MIN, fnan2, fnan1), fnan2);
	CHECK_EQ(f32_op(MAX, fnan1, fone), fnan1);
	CHECK_EQ(f32_op(MAX, fone, fnan1), fnan1);
	CHECK_EQ(f32_op(MIN, fone, fnan2), fnan2);
	CHECK_EQ(f32_op(MIN, fone, fsnan), fsnan);	/* not quietened */
	CHECK_EQ(f32_op(MAX, 0xff800000, fnan1), fnan1);
	CHECK(f64_op(MAX, dnan1, dnan2) == dnan1);
	CHECK(f64_op(MAX, dnan2, dnan1) == dnan2);
	CHECK(f64_op(MIN, done, dnan2) == dnan2);
	CHECK(f64_op(MIN, dnan1, 0xfff0000000000000) == dnan1);

	/* Infinities and subnormals order as numbers. */
	CHECK_EQ(f32_op(MIN, 0xff800000, 0xff7fffff), 0xff800000);
	CHECK_EQ(f32_op(MAX, 0x7f800000, 0x7f7fffff), 0x7f800000);
	CHECK_EQ(f32_op(MIN, 0x00000001, fneg0), fneg0);
	CHECK_EQ(f32_op(MAX, 0x80000001, fneg0), fneg0);
	CHECK_EQ(f32_op(MIN, 0x80000001, fneg0), 0x80000001);
	CHECK_EQ(f32_op(MIN, 0xbf800000, 0xc0000000), 0xc0000000);
	CHECK(f64_op(MAX, 0x8000000000000001, 1) == 1);
	CHECK(f64_op(MIN, 0xbff0000000000000, 0xc000000000000000) ==
	      0xc000000000000000);
}

/* NOP and count 0: what is zeroed, and that nothing else is touched. */
FM_TEST(cau_count_elements_only)
{
	unsigned int op, type, count, size, checked = 0;
	union cau_buf acc, in, before, zero;

	memset(&zero, 0, sizeof(zero));
	for (op = 0; op <= PERCS_CAU_OP_LAST; op++)
	for (type = 0; type <= PERCS_CAU_T_LAST; type++)
	for (count = 0; count <= max_count[type]; count++) {
		if (!valid[op][type])
			continue;
		size = fm_cau_elem_size(type);
		memset(&acc, 0x47, sizeof(acc));
		memset(&in, 0x41, sizeof(in));
		before = acc;
		fm_cau_combine(op, type, count, &acc, &in);
		checked++;
		CHECK_CTX(!memcmp(acc.b + count * size,
				  before.b + count * size,
				  sizeof(acc) - count * size),
			  "%s %s count %u: bytes beyond count",
			  fm_cau_op_name(op), fm_cau_type_name(type), count);
		if (op == NOP)
			CHECK_CTX(!memcmp(acc.b, zero.b, count * size),
				  "nop %s count %u", fm_cau_type_name(type),
				  count);
		memset(&before, 0x41, sizeof(before));
		CHECK(!memcmp(&in, &before, sizeof(in)));
	}
	CHECK(checked > 300);
}

/* Invalid combinations are refused and leave the accumulator alone. */
FM_TEST(cau_invalid_leaves_acc)
{
	unsigned int op, type, count, bad = 0;
	union cau_buf acc, in, before;

	for (op = 0; op <= PERCS_CAU_OP_LAST + 2; op++)
	for (type = 0; type <= PERCS_CAU_T_LAST + 2; type++)
	for (count = 0; count <= 18; count++) {
		if (!fm_cau_check(op, type, count))
			continue;
		memset(&acc, 0x47, sizeof(acc));
		memset(&in, 0x41, sizeof(in));
		before = acc;
		/* Only PERCS_CAU_PAYLOAD bytes: ASan sees any overrun. */
		fm_cau_combine(op, type, count, &acc, &in);
		bad++;
		CHECK_CTX(!memcmp(&acc, &before, sizeof(acc)),
			  "op %u type %u count %u", op, type, count);
	}
	/* 8 unknown op/type combinations x 19 counts at least. */
	CHECK(bad > 200);
}

/*
 * Buffers need no alignment (loads and stores are memcpy: UBSan would
 * flag a misaligned typed access), and acc may be the input.
 */
FM_TEST(cau_unaligned_and_same_buffer)
{
	uint8_t buf[PERCS_CAU_PAYLOAD + 16];
	int64_t a = -5, b = 7, r;
	double d = 1.5, e = -0.25, s;
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	memcpy(buf + 1, &a, sizeof(a));
	memcpy(buf + 1 + PERCS_CAU_PAYLOAD, &b, sizeof(b));
	fm_cau_combine(MAX, S64, 1, buf + 1, buf + 1 + PERCS_CAU_PAYLOAD);
	memcpy(&r, buf + 1, sizeof(r));
	CHECK_EQ(r, 7);

	memcpy(buf + 3, &d, sizeof(d));
	memcpy(buf + 3 + 8, &e, sizeof(e));
	fm_cau_combine(PROD, F64, 1, buf + 3, buf + 3 + 8);
	memcpy(&s, buf + 3, sizeof(s));
	CHECK(s == -0.375);

	fm_cau_combine(SUM, F64, 1, buf + 3, buf + 3);
	memcpy(&s, buf + 3, sizeof(s));
	CHECK(s == -0.75);
	memset(buf, 0x5a, sizeof(buf));
	fm_cau_combine(XOR, U32, 2, buf + 5, buf + 5);
	for (i = 5; i < 13; i++)
		CHECK_CTX(!buf[i], "byte %u", i);
	CHECK(buf[4] == 0x5a && buf[13] == 0x5a);
}

/*
 * Float addition is not associative: the same three contributions,
 * combined in another order, give another sum.  The CAU's ordered mode
 * (a tree that combines its inputs in the same order on every run, section
 * IV.D) is what makes a float reduction reproducible; integer SUM (modular
 * arithmetic) and MIN/MAX give the same result in any order.
 */
FM_TEST(cau_float_sum_depends_on_order)
{
	const double d[3] = { 1e16, 1.0, -1e16 };
	const float f[3] = { 1e8f, 1.0f, -1e8f };
	const int64_t i[3] = { INT64_MAX, 1, -1 };
	double d1, d2;
	float f1, f2;
	int64_t i1, i2;

	/* (1e16 + 1) - 1e16: 1e16 + 1 is a tie, rounded to 1e16 (even). */
	d1 = d[0];
	fm_cau_combine(SUM, F64, 1, &d1, &d[1]);
	fm_cau_combine(SUM, F64, 1, &d1, &d[2]);
	/* (1e16 - 1e16) + 1 */
	d2 = d[0];
	fm_cau_combine(SUM, F64, 1, &d2, &d[2]);
	fm_cau_combine(SUM, F64, 1, &d2, &d[1]);
	CHECK(d1 == 0.0);
	CHECK(d2 == 1.0);
	CHECK(d1 != d2);

	f1 = f[0];
	fm_cau_combine(SUM, F32, 1, &f1, &f[1]);
	fm_cau_combine(SUM, F32, 1, &f1, &f[2]);
	f2 = f[0];
	fm_cau_combine(SUM, F32, 1, &f2, &f[2]);
	fm_cau_combine(SUM, F32, 1, &f2, &f[1]);
	CHECK(f1 == 0.0f);
	CHECK(f2 == 1.0f);

	/* Wrapping integer SUM: the same in both orders. */
	i1 = i[0];
	fm_cau_combine(SUM, S64, 1, &i1, &i[1]);
	fm_cau_combine(SUM, S64, 1, &i1, &i[2]);
	i2 = i[0];
	fm_cau_combine(SUM, S64, 1, &i2, &i[2]);
	fm_cau_combine(SUM, S64, 1, &i2, &i[1]);
	CHECK(i1 == INT64_MAX);
	CHECK(i1 == i2);
}
