// SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1-or-later
/*
 * percs firmware model: the ALU of the Collective Acceleration Unit.
 *
 * A reduction combines the contributions of a tree's inputs element by
 * element with one op (section IV.D of the PERCS paper; the rules are the
 * comment above %PERCS_CAU_OP_NOP in the uapi header):
 *
 *  fixed point (S32, U32, S64, U64): NOP, SUM (two's complement, wraps),
 *	MIN and MAX (signed types compare as signed), OR, AND, XOR;
 *  floating point (F32, F64: IEEE 754 binary32 and binary64): NOP, SUM,
 *	PROD (rounded to nearest even by the FPU: in the kernel
 *	kernel_fpu_begin() loads the default MXCSR), MIN and MAX.
 *
 * Float MIN and MAX never touch the FPU: they pick one of the two inputs
 * bit for bit.  A NaN in the accumulator stays, else a NaN input is taken,
 * so the first NaN in combination order wins with its payload (a
 * signalling NaN stays signalling); otherwise the inputs are ordered by
 * mapping their bits onto unsigned numbers (negative values reversed below
 * the positive ones), which orders -0.0 below +0.0: MIN(-0.0, +0.0) is
 * -0.0 and MAX is +0.0 in either order, as the uapi requires.
 *
 * Float SUM and PROD are one addss/addsd or mulss/mulsd per element.  A NaN
 * input gives a quiet NaN; which one is the FPU's and depends on the
 * compiler's choice of operand order, so its bits are not part of the
 * model (x86-64 today: a NaN operand, quietened with its payload, the
 * accumulator's first; inf - inf and 0 * inf give the "indefinite" NaN,
 * 0xffc00000 as a float).  Overflow gives an infinity; subnormals are kept
 * (no flush to zero).  Float addition is not associative: the result of a
 * reduction depends on the order in which contributions are combined,
 * which is why the CAU can keep that order fixed from run to run.
 *
 * Elements are in host byte order, one after the other from the start of
 * a buffer of %PERCS_CAU_PAYLOAD bytes at most; each is loaded and stored
 * with memcpy(), so the buffers need no alignment and may have any type.
 *
 * In the kernel this file is compiled with SSE enabled (Kbuild).  Every
 * function except the two float SUM/PROD loops is marked general-regs-only
 * so that the compiler cannot use vector registers in it (for a memcpy()
 * or a vectorised loop): only fm_cau_combine() of what fm_cau_needs_fpu()
 * names needs kernel_fpu_begin().
 */
#include "cau.h"

/*
 * FM_CAU_GPR_ONLY functions cannot inline the kernel's always_inline
 * fortified memcpy() and memset() (compiled for this file's SSE target):
 * they call the compiler's builtins, which need no inlining across targets.
 */
#if defined(__x86_64__)
#define FM_CAU_GPR_ONLY	__attribute__((target("general-regs-only")))
#elif defined(PERCS_KERNEL)
#error "cau.c: the kernel build of the CAU's float ALU is x86-64 only"
#else
#define FM_CAU_GPR_ONLY
#endif

#define FM_CAU_F32_INF	0x7f800000ULL
#define FM_CAU_F64_INF	0x7ff0000000000000ULL

static FM_CAU_GPR_ONLY bool fm_cau_fixed(unsigned int type)
{
	return type <= PERCS_CAU_T_U64;
}

/**
 * fm_cau_elem_size() - bytes of one element of a CAU type
 * @type: PERCS_CAU_T_*
 *
 * Return: 4 or 8, or 0 for an unknown type.
 */
FM_CAU_GPR_ONLY unsigned int fm_cau_elem_size(unsigned int type)
{
	switch (type) {
	case PERCS_CAU_T_S32:
	case PERCS_CAU_T_U32:
	case PERCS_CAU_T_F32:
		return 4;
	case PERCS_CAU_T_S64:
	case PERCS_CAU_T_U64:
	case PERCS_CAU_T_F64:
		return 8;
	default:
		return 0;
	}
}

/**
 * fm_cau_check() - may a reduction use this op, type and count?
 * @op: PERCS_CAU_OP_*
 * @type: PERCS_CAU_T_*
 * @count: elements in each contribution
 *
 * NOP, SUM, MIN and MAX are valid for every type, OR, AND and XOR for the
 * fixed-point types only, PROD for the floating-point types only.  @count
 * is at most %PERCS_CAU_PAYLOAD / fm_cau_elem_size(@type) (16 or 8); 0 is
 * valid: a barrier, which combines nothing.
 *
 * Return: 0, or -EINVAL.
 */
FM_CAU_GPR_ONLY int fm_cau_check(unsigned int op, unsigned int type,
				 unsigned int count)
{
	unsigned int size = fm_cau_elem_size(type);

	if (!size || op > PERCS_CAU_OP_LAST ||
	    (u64)count * size > PERCS_CAU_PAYLOAD)
		return -EINVAL;
	switch (op) {
	case PERCS_CAU_OP_OR:
	case PERCS_CAU_OP_AND:
	case PERCS_CAU_OP_XOR:
		return fm_cau_fixed(type) ? 0 : -EINVAL;
	case PERCS_CAU_OP_PROD:
		return fm_cau_fixed(type) ? -EINVAL : 0;
	default:
		return 0;
	}
}

/**
 * fm_cau_needs_fpu() - does fm_cau_combine() use the FPU for this op?
 * @op: PERCS_CAU_OP_*
 * @type: PERCS_CAU_T_*
 *
 * Only floating-point SUM and PROD do arithmetic on floats; float MIN and
 * MAX compare bit patterns.  In the kernel a combine for which this
 * returns true must run between kernel_fpu_begin() and kernel_fpu_end().
 *
 * Return: true for SUM and PROD of %PERCS_CAU_T_F32 and %PERCS_CAU_T_F64.
 */
FM_CAU_GPR_ONLY bool fm_cau_needs_fpu(unsigned int op, unsigned int type)
{
	return (type == PERCS_CAU_T_F32 || type == PERCS_CAU_T_F64) &&
	       (op == PERCS_CAU_OP_SUM || op == PERCS_CAU_OP_PROD);
}

static FM_CAU_GPR_ONLY u64 fm_cau_load(const u8 *p, unsigned int size)
{
	u32 v32;
	u64 v64;

	if (size == 4) {
		__builtin_memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	__builtin_memcpy(&v64, p, sizeof(v64));
	return v64;
}

static FM_CAU_GPR_ONLY void fm_cau_store(u8 *p, unsigned int size, u64 v)
{
	u32 v32 = (u32)v;

	if (size == 4)
		__builtin_memcpy(p, &v32, sizeof(v32));
	else
		__builtin_memcpy(p, &v, sizeof(v));
}

/*
 * An unsigned number that orders the elements of @type (bits @v, sign bit
 * @top, @mask the element's bits) as MIN and MAX do; NaNs are dealt with
 * before.  Floats are sign and magnitude: a negative one's key is its bits
 * inverted (a larger magnitude below), a positive one's is above all of
 * those.  -0.0 gets the key just below +0.0's.
 */
static FM_CAU_GPR_ONLY u64 fm_cau_key(unsigned int type, u64 v, u64 top,
				      u64 mask)
{
	switch (type) {
	case PERCS_CAU_T_S32:
	case PERCS_CAU_T_S64:
		return v ^ top;
	case PERCS_CAU_T_F32:
	case PERCS_CAU_T_F64:
		return v & top ? ~v & mask : v | top;
	default:
		return v;
	}
}

/* One element of a combine that needs no FPU: all but float SUM/PROD. */
static FM_CAU_GPR_ONLY u64 fm_cau_alu(unsigned int op, unsigned int type,
				      unsigned int size, u64 x, u64 y)
{
	u64 mask = size == 4 ? 0xffffffffULL : ~0ULL;
	u64 top = (u64)1 << (size * 8 - 1);
	u64 inf = size == 4 ? FM_CAU_F32_INF : FM_CAU_F64_INF;
	u64 kx, ky;

	switch (op) {
	case PERCS_CAU_OP_SUM:
		return x + y;
	case PERCS_CAU_OP_OR:
		return x | y;
	case PERCS_CAU_OP_AND:
		return x & y;
	case PERCS_CAU_OP_XOR:
		return x ^ y;
	default:
		break;
	}
	/* MIN, MAX: the accumulator's NaN, then the input's, wins. */
	if (!fm_cau_fixed(type)) {
		if ((x & ~top) > inf)
			return x;
		if ((y & ~top) > inf)
			return y;
	}
	kx = fm_cau_key(type, x, top, mask);
	ky = fm_cau_key(type, y, top, mask);
	if (op == PERCS_CAU_OP_MIN)
		return ky < kx ? y : x;
	return ky > kx ? y : x;
}

/* The only code that uses the FPU: float SUM and PROD, one op an element. */
static void fm_cau_fpu_f32(unsigned int op, unsigned int count, u8 *acc,
			   const u8 *in)
{
	unsigned int i;
	float x, y;

	for (i = 0; i < count; i++) {
		memcpy(&x, acc + i * sizeof(x), sizeof(x));
		memcpy(&y, in + i * sizeof(y), sizeof(y));
		x = op == PERCS_CAU_OP_SUM ? x + y : x * y;
		memcpy(acc + i * sizeof(x), &x, sizeof(x));
	}
}

static void fm_cau_fpu_f64(unsigned int op, unsigned int count, u8 *acc,
			   const u8 *in)
{
	unsigned int i;
	double x, y;

	for (i = 0; i < count; i++) {
		memcpy(&x, acc + i * sizeof(x), sizeof(x));
		memcpy(&y, in + i * sizeof(y), sizeof(y));
		x = op == PERCS_CAU_OP_SUM ? x + y : x * y;
		memcpy(acc + i * sizeof(x), &x, sizeof(x));
	}
}

/**
 * fm_cau_combine() - combine a contribution into an accumulator
 * @op: PERCS_CAU_OP_*
 * @type: PERCS_CAU_T_*
 * @count: elements to combine
 * @acc: in: the contribution so far; out: @acc[i] @op @in[i]
 * @in: the contribution to add, in host byte order
 *
 * Combines the first @count elements (of fm_cau_elem_size(@type) bytes)
 * and touches no other byte of @acc: NOP zeroes those @count elements
 * only (a barrier's result carries no data).  Float MIN and MAX keep the
 * first NaN in combination order (@acc's before @in's) and order -0.0
 * below +0.0; float SUM and PROD are the FPU's, rounded to nearest even.
 * @acc and @in may be the same buffer, or overlap exactly.
 *
 * Context: in the kernel, between kernel_fpu_begin() and kernel_fpu_end()
 * if fm_cau_needs_fpu(@op, @type); any context otherwise.
 *
 * An invalid @op, @type or @count (fm_cau_check() fails) leaves @acc
 * unchanged.
 */
FM_CAU_GPR_ONLY void fm_cau_combine(unsigned int op, unsigned int type,
				    unsigned int count, void *acc,
				    const void *in)
{
	unsigned int size = fm_cau_elem_size(type);
	const u8 *b = in;
	u8 *a = acc;
	unsigned int i;

	if (fm_cau_check(op, type, count))
		return;
	if (op == PERCS_CAU_OP_NOP) {
		__builtin_memset(acc, 0, (size_t)count * size);
		return;
	}
	if (fm_cau_needs_fpu(op, type)) {
		if (type == PERCS_CAU_T_F32)
			fm_cau_fpu_f32(op, count, acc, in);
		else
			fm_cau_fpu_f64(op, count, acc, in);
		return;
	}
	for (i = 0; i < count; i++, a += size, b += size)
		fm_cau_store(a, size, fm_cau_alu(op, type, size,
						 fm_cau_load(a, size),
						 fm_cau_load(b, size)));
}

/**
 * fm_cau_op_name() - short name of a CAU op
 * @op: PERCS_CAU_OP_*
 *
 * Return: "nop", "sum", "min", "max", "or", "and", "xor", "prod", or "?".
 */
FM_CAU_GPR_ONLY const char *fm_cau_op_name(unsigned int op)
{
	static const char *const names[] = {
		[PERCS_CAU_OP_NOP] = "nop", [PERCS_CAU_OP_SUM] = "sum",
		[PERCS_CAU_OP_MIN] = "min", [PERCS_CAU_OP_MAX] = "max",
		[PERCS_CAU_OP_OR] = "or", [PERCS_CAU_OP_AND] = "and",
		[PERCS_CAU_OP_XOR] = "xor", [PERCS_CAU_OP_PROD] = "prod",
	};

	return op < FM_ARRAY_SIZE(names) ? names[op] : "?";
}

/**
 * fm_cau_type_name() - short name of a CAU element type
 * @type: PERCS_CAU_T_*
 *
 * Return: "s32", "u32", "s64", "u64", "f32", "f64", or "?".
 */
FM_CAU_GPR_ONLY const char *fm_cau_type_name(unsigned int type)
{
	static const char *const names[] = {
		[PERCS_CAU_T_S32] = "s32", [PERCS_CAU_T_U32] = "u32",
		[PERCS_CAU_T_S64] = "s64", [PERCS_CAU_T_U64] = "u64",
		[PERCS_CAU_T_F32] = "f32", [PERCS_CAU_T_F64] = "f64",
	};

	return type < FM_ARRAY_SIZE(names) ? names[type] : "?";
}
