// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: reduction operations: the predefined ones on the basic
 * types, and the program's own (MPI_Op_create) on contiguous types.
 * MAX/MIN/SUM/PROD on integers and floats, the logical and bitwise ones on
 * integers (bitwise also on MPI_BYTE, logical on MPI_C_BOOL), as MPI
 * defines them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"


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

static int op_apply(MPI_Op op, MPI_Datatype basic, void *inout,
		    const void *in, size_t n)
{
	if (basic <= MPI_DATATYPE_NULL || basic >= MPI_PERCS_NR_BASIC_TYPES ||
	    !op_table[basic])
		return MPI_ERR_TYPE;
	return op_table[basic](op, inout, in, n);
}

/* The program's own operations: handles from USER_OP_FIRST. */
#define USER_OP_FIRST	32

struct user_op {
	MPI_User_function *fn;
	int commute;
};

static struct user_op *user_ops;
static int nr_user_ops;

static struct user_op *user_op(MPI_Op op)
{
	op -= USER_OP_FIRST;
	if (op < 0 || op >= nr_user_ops || !user_ops[op].fn)
		return NULL;
	return &user_ops[op];
}

int mpi_op_check(MPI_Op op, MPI_Datatype type)
{
	struct mpi_type *t = mpi_type(type);

	if (user_op(op)) {
		/* It sees the elements as they lie in memory: packed = laid out. */
		return t && mpi_type_contig(t) ? MPI_SUCCESS : MPI_ERR_TYPE;
	}
	if (op < MPI_MAX || op > MPI_BXOR)
		return MPI_ERR_OP;
	if (!t)
		return MPI_ERR_TYPE;
	return op_apply(op, t->basic, NULL, NULL, 0);
}

bool mpi_op_commutative(MPI_Op op)
{
	struct user_op *u = user_op(op);

	return !u || u->commute;
}

int mpi_op_combine(MPI_Op op, MPI_Datatype type, int count, void *acc,
		   void *in)
{
	struct user_op *u = user_op(op);
	struct mpi_type *t = mpi_type(type);
	size_t bytes = (size_t)count * t->size;

	if (u) {
		/* MPI's order: in = acc op in, acc the left operand. */
		u->fn(acc, in, &count, &type);
		memcpy(acc, in, bytes);
		return MPI_SUCCESS;
	}
	return op_apply(op, t->basic, acc, in,
			t->size ? bytes / mpi_type(t->basic)->size : 0);
}

void mpi_op_fini(void)
{
	free(user_ops);
	user_ops = NULL;
	nr_user_ops = 0;
}

PERCS_MPI_ALIAS(Op_create)
int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
	int i;

	MPI_NEED_INIT("MPI_Op_create");
	if (!fn || !op)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_create",
				 "NULL %s", fn ? "op" : "function");
	for (i = 0; i < nr_user_ops && user_ops[i].fn; i++)
		;
	if (i == nr_user_ops) {
		struct user_op *n = realloc(user_ops,
					    sizeof(*n) * (nr_user_ops + 8));

		if (!n)
			return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM,
					 "MPI_Op_create", "out of memory");
		memset(n + nr_user_ops, 0, sizeof(*n) * 8);
		user_ops = n;
		nr_user_ops += 8;
	}
	user_ops[i] = (struct user_op){ fn, commute };
	*op = USER_OP_FIRST + i;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
	struct user_op *u;

	MPI_NEED_INIT("MPI_Op_free");
	if (!op)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_free",
				 "NULL op");
	u = user_op(*op);
	if (!u)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free",
				 "%d is not an operation of the program's own",
				 *op);
	u->fn = NULL;
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}
