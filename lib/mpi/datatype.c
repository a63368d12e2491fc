// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: datatypes.
 *
 * A type is flattened into (offset, length) byte blocks of one element,
 * merged where they touch.  A type with one block at offset 0 covering
 * its extent is contiguous and travels straight from the user's buffer;
 * any other one is packed into a temporary buffer before sending and
 * unpacked after receiving.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define TYPE_FIRST_DERIVED	64

static struct mpi_block basic_block[MPI_PERCS_NR_BASIC_TYPES];
static struct mpi_type basic[MPI_PERCS_NR_BASIC_TYPES];
static struct mpi_type *derived;
static int nr_derived;

static const size_t basic_size[MPI_PERCS_NR_BASIC_TYPES] = {
	[MPI_CHAR] = sizeof(char),
	[MPI_SIGNED_CHAR] = sizeof(signed char),
	[MPI_UNSIGNED_CHAR] = sizeof(unsigned char),
	[MPI_BYTE] = 1,
	[MPI_SHORT] = sizeof(short),
	[MPI_UNSIGNED_SHORT] = sizeof(unsigned short),
	[MPI_INT] = sizeof(int),
	[MPI_UNSIGNED] = sizeof(unsigned int),
	[MPI_LONG] = sizeof(long),
	[MPI_UNSIGNED_LONG] = sizeof(unsigned long),
	[MPI_LONG_LONG_INT] = sizeof(long long),
	[MPI_UNSIGNED_LONG_LONG] = sizeof(unsigned long long),
	[MPI_FLOAT] = sizeof(float),
	[MPI_DOUBLE] = sizeof(double),
	[MPI_LONG_DOUBLE] = sizeof(long double),
	[MPI_INT8_T] = 1,
	[MPI_INT16_T] = 2,
	[MPI_INT32_T] = 4,
	[MPI_INT64_T] = 8,
	[MPI_UINT8_T] = 1,
	[MPI_UINT16_T] = 2,
	[MPI_UINT32_T] = 4,
	[MPI_UINT64_T] = 8,
	[MPI_C_BOOL] = sizeof(_Bool),
	[MPI_WCHAR] = 4,
};

struct mpi_type *mpi_type(MPI_Datatype t)
{
	if (t > MPI_DATATYPE_NULL && t < MPI_PERCS_NR_BASIC_TYPES) {
		struct mpi_type *b = &basic[t];

		if (!b->used) {
			basic_block[t] = (struct mpi_block){ 0, basic_size[t] };
			*b = (struct mpi_type){
				.used = true, .committed = true, .basic = t,
				.size = basic_size[t],
				.extent = (MPI_Aint)basic_size[t],
				.align = basic_size[t],
				.nblocks = 1, .blocks = &basic_block[t],
			};
		}
		return b;
	}
	t -= TYPE_FIRST_DERIVED;
	if (t < 0 || t >= nr_derived || !derived[t].used)
		return NULL;
	return &derived[t];
}

void mpi_type_fini(void)
{
	int i;

	for (i = 0; i < nr_derived; i++)
		free(derived[i].blocks);
	free(derived);
	derived = NULL;
	nr_derived = 0;
}

bool mpi_type_contig(const struct mpi_type *t)
{
	return t->nblocks == 1 && t->blocks[0].off == 0 &&
	       (MPI_Aint)t->blocks[0].len == t->extent;
}

void mpi_pack(const struct mpi_type *t, const void *buf, int count,
	      void *out)
{
	unsigned char *o = out;
	int i;
	size_t b;

	for (i = 0; i < count; i++) {
		const unsigned char *e = (const unsigned char *)buf +
					 (MPI_Aint)i * t->extent;

		for (b = 0; b < t->nblocks; b++) {
			memcpy(o, e + t->blocks[b].off, t->blocks[b].len);
			o += t->blocks[b].len;
		}
	}
}

void mpi_unpack(const struct mpi_type *t, const void *in, size_t bytes,
		void *buf)
{
	const unsigned char *p = in;
	size_t b;
	int i;

	for (i = 0; bytes; i++) {
		unsigned char *e = (unsigned char *)buf + (MPI_Aint)i * t->extent;

		for (b = 0; b < t->nblocks && bytes; b++) {
			size_t n = t->blocks[b].len < bytes ? t->blocks[b].len :
							      bytes;

			memcpy(e + t->blocks[b].off, p, n);
			p += n;
			bytes -= n;
		}
	}
}

int mpi_check_data(const void *buf, int count, MPI_Datatype type,
		   const char **why)
{
	struct mpi_type *t = mpi_type(type);

	if (count < 0) {
		*why = "negative count";
		return MPI_ERR_COUNT;
	}
	if (!t) {
		*why = "no such datatype";
		return MPI_ERR_TYPE;
	}
	if (!t->committed) {
		*why = "datatype not committed";
		return MPI_ERR_TYPE;
	}
	if (count && t->size && !buf) {
		*why = "NULL buffer with a non-zero count";
		return MPI_ERR_BUFFER;
	}
	return MPI_SUCCESS;
}

static int type_new(MPI_Datatype *out, struct mpi_type **t)
{
	int i;

	for (i = 0; i < nr_derived && derived[i].used; i++)
		;
	if (i == nr_derived) {
		struct mpi_type *n = realloc(derived,
					     sizeof(*n) * (nr_derived + 16));

		if (!n)
			return MPI_ERR_NO_MEM;
		memset(n + nr_derived, 0, sizeof(*n) * 16);
		derived = n;
		nr_derived += 16;
	}
	*t = &derived[i];
	memset(*t, 0, sizeof(**t));
	*out = TYPE_FIRST_DERIVED + i;
	return MPI_SUCCESS;
}

/*
 * @count blocks of @blocklen elements of @old, @stride_bytes apart: the
 * shape of both constructors.
 */
static int type_build(int count, int blocklen, MPI_Aint stride_bytes,
		      MPI_Datatype oldtype, MPI_Datatype *newtype,
		      const char *fn)
{
	struct mpi_type *old = mpi_type(oldtype), *t, copy;
	size_t n = 0, i, j, b;
	MPI_Datatype h;
	struct mpi_block *blocks;
	MPI_Aint hi;

	if (!old)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, fn,
				 "no such datatype %d", oldtype);
	if (count < 0 || blocklen < 0)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, fn,
				 "negative count %d", count < 0 ? count : blocklen);
	if (!newtype)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL newtype");
	copy = *old;	/* type_new() may move the table */
	blocks = malloc(sizeof(*blocks) *
			((size_t)count * blocklen * copy.nblocks + 1));
	if (!blocks)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn,
				 "out of memory");
	for (i = 0; i < (size_t)count; i++) {
		for (j = 0; j < (size_t)blocklen; j++) {
			MPI_Aint base = (MPI_Aint)i * stride_bytes +
					(MPI_Aint)j * copy.extent;

			for (b = 0; b < copy.nblocks; b++) {
				MPI_Aint off = base + copy.blocks[b].off;

				if (n && blocks[n - 1].off +
					 (MPI_Aint)blocks[n - 1].len == off) {
					blocks[n - 1].len += copy.blocks[b].len;
					continue;
				}
				blocks[n++] = (struct mpi_block){ off,
							copy.blocks[b].len };
			}
		}
	}
	if (type_new(&h, &t)) {
		free(blocks);
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn,
				 "out of memory");
	}
	t->used = true;
	t->align = copy.align;
	t->basic = copy.basic;
	t->size = (size_t)count * blocklen * copy.size;
	t->blocks = blocks;
	t->nblocks = n;
	t->lb = 0;
	hi = count ? (MPI_Aint)(count - 1) * stride_bytes +
		     (MPI_Aint)blocklen * copy.extent : 0;
	if (stride_bytes < 0 && count) {
		t->lb = (MPI_Aint)(count - 1) * stride_bytes;
		hi = (MPI_Aint)blocklen * copy.extent;
	}
	t->extent = hi - t->lb;
	*newtype = h;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype,
			 MPI_Datatype *newtype)
{
	MPI_NEED_INIT("MPI_Type_contiguous");
	/* One block of @count elements. */
	return type_build(1, count, 0, oldtype, newtype, "MPI_Type_contiguous");
}

PERCS_MPI_ALIAS(Type_vector)
int PMPI_Type_vector(int count, int blocklength, int stride,
		     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct mpi_type *old;

	MPI_NEED_INIT("MPI_Type_vector");
	old = mpi_type(oldtype);
	if (!old)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Type_vector",
				 "no such datatype %d", oldtype);
	return type_build(count, blocklength, (MPI_Aint)stride * old->extent,
			  oldtype, newtype, "MPI_Type_vector");
}

/* Appends @t's blocks at @base to @blocks[*n], merging touching ones. */
static void blocks_add(struct mpi_block *blocks, size_t *n,
		       const struct mpi_type *t, MPI_Aint base)
{
	size_t b;

	for (b = 0; b < t->nblocks; b++) {
		MPI_Aint off = base + t->blocks[b].off;

		if (*n && blocks[*n - 1].off + (MPI_Aint)blocks[*n - 1].len == off) {
			blocks[*n - 1].len += t->blocks[b].len;
			continue;
		}
		blocks[(*n)++] = (struct mpi_block){ off, t->blocks[b].len };
	}
}

PERCS_MPI_ALIAS(Type_create_struct)
int PMPI_Type_create_struct(int count, const int blocklengths[],
			    const MPI_Aint displacements[],
			    const MPI_Datatype types[], MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_struct";
	MPI_Aint lb = 0, ub = 0;
	size_t nb = 0, n = 0, size = 0, align = 1;
	struct mpi_block *blocks;
	MPI_Datatype basic = MPI_DATATYPE_NULL, h;
	struct mpi_type *t;
	bool first = true, mixed = false;
	int i, j;

	MPI_NEED_INIT(fn);
	if (count < 0)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, fn,
				 "negative count %d", count);
	if (count && (!blocklengths || !displacements || !types))
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
				 "NULL array");
	if (!newtype)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL newtype");
	for (i = 0; i < count; i++) {
		t = mpi_type(types[i]);
		if (!t)
			return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, fn,
					 "member %d: no such datatype %d", i,
					 types[i]);
		if (blocklengths[i] < 0)
			return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, fn,
					 "member %d: negative block length %d",
					 i, blocklengths[i]);
		nb += (size_t)blocklengths[i] * t->nblocks;
	}
	blocks = malloc(sizeof(*blocks) * (nb + 1));
	if (!blocks)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn,
				 "out of memory");
	for (i = 0; i < count; i++) {
		MPI_Aint lo, hi;

		t = mpi_type(types[i]);
		if (!blocklengths[i])
			continue;
		for (j = 0; j < blocklengths[i]; j++)
			blocks_add(blocks, &n, t, displacements[i] +
				   (MPI_Aint)j * t->extent);
		lo = displacements[i] + t->lb;
		hi = lo + (MPI_Aint)blocklengths[i] * t->extent;
		lb = first || lo < lb ? lo : lb;
		ub = first || hi > ub ? hi : ub;
		size += (size_t)blocklengths[i] * t->size;
		align = t->align > align ? t->align : align;
		if (first)
			basic = t->basic;
		else if (basic != t->basic)
			mixed = true;
		first = false;
	}
	if (type_new(&h, &t)) {
		free(blocks);
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn,
				 "out of memory");
	}
	t->used = true;
	t->basic = mixed ? MPI_DATATYPE_NULL : basic;
	t->size = size;
	t->blocks = blocks;
	t->nblocks = n;
	t->lb = lb;
	t->align = align;
	/* Padded like a C struct: the extent is a multiple of the alignment. */
	t->extent = (ub - lb + (MPI_Aint)align - 1) / (MPI_Aint)align *
		    (MPI_Aint)align;
	*newtype = h;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Type_commit)
int PMPI_Type_commit(MPI_Datatype *type)
{
	struct mpi_type *t;

	MPI_NEED_INIT("MPI_Type_commit");
	if (!type)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_commit",
				 "NULL type");
	t = mpi_type(*type);
	if (!t)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Type_commit",
				 "no such datatype %d", *type);
	t->committed = true;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Type_free)
int PMPI_Type_free(MPI_Datatype *type)
{
	struct mpi_type *t;

	MPI_NEED_INIT("MPI_Type_free");
	if (!type)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_free",
				 "NULL type");
	t = mpi_type(*type);
	if (!t || *type < TYPE_FIRST_DERIVED)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Type_free",
				 t ? "predefined datatype %d cannot be freed" :
				 "no such datatype %d", *type);
	free(t->blocks);
	memset(t, 0, sizeof(*t));
	*type = MPI_DATATYPE_NULL;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Type_size)
int PMPI_Type_size(MPI_Datatype type, int *size)
{
	struct mpi_type *t;

	MPI_NEED_INIT("MPI_Type_size");
	t = mpi_type(type);
	if (!t)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Type_size",
				 "no such datatype %d", type);
	if (!size)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_size",
				 "NULL size");
	*size = (int)t->size;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
	struct mpi_type *t;

	MPI_NEED_INIT("MPI_Type_get_extent");
	t = mpi_type(type);
	if (!t)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE,
				 "MPI_Type_get_extent", "no such datatype %d",
				 type);
	if (!lb || !extent)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG,
				 "MPI_Type_get_extent", "NULL %s",
				 lb ? "extent" : "lb");
	*lb = t->lb;
	*extent = t->extent;
	return MPI_SUCCESS;
}
