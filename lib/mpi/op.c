// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the predefined reduction operations on the basic types.
 * MAX/MIN/SUM/PROD on integers and floats, the logical and bitwise ones on
 * integers (bitwise also on MPI_BYTE, logical on MPI_C_BOOL), as MPI
 * defines them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

#include "mpi_internal.h"

bool mpi_op_valid(MPI_Op op)
{
	return op >= MPI_MAX && op <= MPI_BXOR;
}

#define ARITH(T)							\
	case MPI_MAX: for (i = 0; i < n; i++) if (b[i] > a[i]) a[i] = b[i]; return 0; \
	case MPI_MIN: for (i = 0; i < n; i++) if (b[i] < a[i]) a[i] = b[i]; return 0; \
	case MPI_SUM: for (i = 0; i < n; i++) a[i] = (T)(a[i] + b[i]); return 0; \
	case MPI_PROD: for (i = 0; i < n; i++) a[i] = (T)(a[i] * b[i]); return 0;
#define LOGIC(T)							\
	case MPI_LAND: for (i = 0; i < n; i++) a[i] = (T)(a[i] && b[i]); return 0; \
	case MPI_LOR: for (i = 0; i < n; i++) a[i] = (T)(a[i] || b[i]); return 0; \
	case MPI_LXOR: for (i = 0; i < n; i++) a[i] = (T)(!a[i] != !b[i]); return 0;
#define BITS(T)								\
	case MPI_BAND: for (i = 0; i < n; i++) a[i] = (T)(a[i] & b[i]); return 0; \
	case MPI_BOR: for (i = 0; i < n; i++) a[i] = (T)(a[i] | b[i]); return 0; \
	case MPI_BXOR: for (i = 0; i < n; i++) a[i] = (T)(a[i] ^ b[i]); return 0;

#define INT_FN(name, T)							\
static int name(MPI_Op op, void *inout, const void *in, size_t n)	\
{									\
	T *a = inout;							\
	const T *b = in;						\
	size_t i;							\
	switch (op) { ARITH(T) LOGIC(T) BITS(T) }			\
	return MPI_ERR_OP;						\
}
#define FLOAT_FN(name, T)						\
static int name(MPI_Op op, void *inout, const void *in, size_t n)	\
{									\
	T *a = inout;							\
	const T *b = in;						\
	size_t i;							\
	switch (op) { ARITH(T) LOGIC(T) }				\
	return MPI_ERR_OP;						\
}

INT_FN(op_char, char)
INT_FN(op_schar, signed char)
INT_FN(op_uchar, unsigned char)
INT_FN(op_short, short)
INT_FN(op_ushort, unsigned short)
INT_FN(op_int, int)
INT_FN(op_uint, unsigned int)
INT_FN(op_long, long)
INT_FN(op_ulong, unsigned long)
INT_FN(op_llong, long long)
INT_FN(op_ullong, unsigned long long)
INT_FN(op_i8, int8_t)
INT_FN(op_i16, int16_t)
INT_FN(op_i32, int32_t)
INT_FN(op_i64, int64_t)
INT_FN(op_u8, uint8_t)
INT_FN(op_u16, uint16_t)
INT_FN(op_u32, uint32_t)
INT_FN(op_u64, uint64_t)
FLOAT_FN(op_float, float)
FLOAT_FN(op_double, double)
FLOAT_FN(op_ldouble, long double)

/* MPI_C_BOOL: logical operations only. */
static int op_bool(MPI_Op op, void *inout, const void *in, size_t n)
{
	_Bool *a = inout;
	const _Bool *b = in;
	size_t i;

	switch (op) { LOGIC(_Bool) }
	return MPI_ERR_OP;
}

static int op_byte(MPI_Op op, void *inout, const void *in, size_t n)
{
	unsigned char *a = inout;
	const unsigned char *b = in;
	size_t i;

	switch (op) { BITS(unsigned char) }
	return MPI_ERR_OP;
}

typedef int (*op_fn)(MPI_Op op, void *inout, const void *in, size_t n);

static const op_fn op_table[MPI_PERCS_NR_BASIC_TYPES] = {
	[MPI_CHAR] = op_char, [MPI_SIGNED_CHAR] = op_schar,
	[MPI_UNSIGNED_CHAR] = op_uchar, [MPI_BYTE] = op_byte,
	[MPI_SHORT] = op_short, [MPI_UNSIGNED_SHORT] = op_ushort,
	[MPI_INT] = op_int, [MPI_UNSIGNED] = op_uint, [MPI_LONG] = op_long,
	[MPI_UNSIGNED_LONG] = op_ulong, [MPI_LONG_LONG_INT] = op_llong,
	[MPI_UNSIGNED_LONG_LONG] = op_ullong, [MPI_FLOAT] = op_float,
	[MPI_DOUBLE] = op_double, [MPI_LONG_DOUBLE] = op_ldouble,
	[MPI_INT8_T] = op_i8, [MPI_INT16_T] = op_i16, [MPI_INT32_T] = op_i32,
	[MPI_INT64_T] = op_i64, [MPI_UINT8_T] = op_u8, [MPI_UINT16_T] = op_u16,
	[MPI_UINT32_T] = op_u32, [MPI_UINT64_T] = op_u64, [MPI_C_BOOL] = op_bool,
};

int mpi_op_apply(MPI_Op op, MPI_Datatype basic, void *inout, const void *in,
		 size_t n)
{
	if (basic <= MPI_DATATYPE_NULL || basic >= MPI_PERCS_NR_BASIC_TYPES ||
	    !op_table[basic])
		return MPI_ERR_TYPE;
	return op_table[basic](op, inout, in, n);
}
