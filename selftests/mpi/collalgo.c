// SPDX-License-Identifier: GPL-2.0
/*
 * collalgo [K...]: barrier, bcast, reduce, allreduce, allgather,
 * alltoall and reduce_scatter against references computed locally, on the first k ranks
 * (reversed: world rank k - 1 is rank 0) for each K given (default every
 * k = 1 .. size) in one job, with roots k / 2 and k - 1, in place where
 * MPI allows it, several operations (built-in ones on int, unsigned,
 * double, long and long long, the bitwise ones too: every pair the CAU
 * combines is of a kind it has; a commutative and a non-commutative one of the
 * program's own on a derived type) and counts (1, 37, and long enough to
 * be cut into pieces and segments).  It checks whichever algorithms the
 * PERCS_MPI_COLL_* variables force: selftests/mpi.sh runs it once per set
 * of algorithms.  The cases are few on purpose: 8 ranks on the VM's two
 * CPUs take about 15 ms a collective.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define LONG_COUNT	5000	/* 20000 B of ints: bcast segments, pieces */

static const int counts[] = { 1, 37, LONG_COUNT };
#define NCOUNTS	(int)(sizeof(counts) / sizeof(counts[0]))

static int val(int rank, int i)
{
	return (rank * 7 + i * 3) % 101 - 50;
}

/* 2x2 matrices mod 2^32: associative, not commutative. */
static void matmul(void *invec, void *inoutvec, int *len, MPI_Datatype *type)
{
	unsigned int *a = invec, *b = inoutvec, r[4];

	(void)type;
	for (int k = 0; k < *len; k++, a += 4, b += 4) {
		r[0] = a[0] * b[0] + a[1] * b[2];
		r[1] = a[0] * b[1] + a[1] * b[3];
		r[2] = a[2] * b[0] + a[3] * b[2];
		r[3] = a[2] * b[1] + a[3] * b[3];
		memcpy(b, r, sizeof(r));
	}
}

/* Element-wise sum of 4-tuples: commutative, of the program's own. */
static void vsum(void *invec, void *inoutvec, int *len, MPI_Datatype *type)
{
	unsigned int *a = invec, *b = inoutvec;

	(void)type;
	for (int k = 0; k < *len * 4; k++)
		b[k] += a[k];
}

static void mat_of(int rank, int i, unsigned int m[4])
{
	m[0] = rank + 1 + i;
	m[1] = 2 + i % 3;
	m[2] = rank * 3;
	m[3] = 1;
}

enum kind { K_INT_SUM, K_INT_MAX, K_UNS_BXOR, K_DBL_SUM, K_LL_MIN,
	    K_LONG_BAND, K_INT_BOR, K_DBL_MAX, K_MAT, K_VSUM, K_KINDS };
static const char *const kind_name[K_KINDS] = {
	"int sum", "int max", "unsigned bxor", "double sum", "long long min",
	"long band", "int bor", "double max",
	"matrix product (non-commutative)", "4-tuple sum (own, commutative)",
};
static MPI_Datatype mat;
static MPI_Op matop, vsumop;

static size_t elem_size(enum kind k)
{
	switch (k) {
	case K_DBL_SUM: case K_DBL_MAX: return sizeof(double);
	case K_LL_MIN: return sizeof(long long);
	case K_LONG_BAND: return sizeof(long);
	case K_MAT: case K_VSUM: return 4 * sizeof(unsigned int);
	default: return sizeof(int);
	}
}

static void kind_args(enum kind k, MPI_Datatype *t, MPI_Op *op)
{
	static const MPI_Datatype types[K_KINDS] = {
		MPI_INT, MPI_INT, MPI_UNSIGNED, MPI_DOUBLE, MPI_LONG_LONG_INT,
		MPI_LONG, MPI_INT, MPI_DOUBLE,
	};
	static const MPI_Op ops[K_KINDS] = {
		MPI_SUM, MPI_MAX, MPI_BXOR, MPI_SUM, MPI_MIN, MPI_BAND, MPI_BOR,
		MPI_MAX,
	};

	*t = k >= K_MAT ? mat : types[k];
	*op = k == K_MAT ? matop : k == K_VSUM ? vsumop : ops[k];
}

/* Element i of rank r's contribution. */
static void fill(enum kind k, int r, int i, void *p)
{
	switch (k) {
	case K_INT_SUM: case K_INT_MAX: *(int *)p = val(r, i); break;
	case K_UNS_BXOR: *(unsigned int *)p = (unsigned int)val(r, i) * 2654435761u; break;
	case K_DBL_SUM: *(double *)p = val(r, i) * 0.5; break;
	case K_LL_MIN: *(long long *)p = val(r, i) * 10000000000LL; break;
	/* Mostly ones, each rank clearing a few bits: the AND keeps some. */
	case K_LONG_BAND: *(long *)p = ~((long)(r % 7 + 1) << (i % 60)); break;
	case K_INT_BOR: *(int *)p = 1 << ((r + i) % 31); break;
	case K_DBL_MAX: *(double *)p = val(r, i) * -0.25; break;
	default: mat_of(r, i, p); break;
	}
}

/* @acc = @acc op (element of rank @r), in rank order. */
static void combine(enum kind k, void *acc, const void *in)
{
	int one = 1;
	unsigned int tmp[4];

	switch (k) {
	case K_INT_SUM: *(int *)acc += *(const int *)in; break;
	case K_INT_MAX:
		if (*(const int *)in > *(int *)acc)
			*(int *)acc = *(const int *)in;
		break;
	case K_UNS_BXOR: *(unsigned int *)acc ^= *(const unsigned int *)in; break;
	case K_LONG_BAND: *(long *)acc &= *(const long *)in; break;
	case K_INT_BOR: *(int *)acc |= *(const int *)in; break;
	case K_DBL_SUM: *(double *)acc += *(const double *)in; break;
	case K_DBL_MAX:
		if (*(const double *)in > *(double *)acc)
			*(double *)acc = *(const double *)in;
		break;
	case K_LL_MIN:
		if (*(const long long *)in < *(long long *)acc)
			*(long long *)acc = *(const long long *)in;
		break;
	case K_MAT:
		memcpy(tmp, in, sizeof(tmp));
		matmul(acc, tmp, &one, &mat);
		memcpy(acc, tmp, sizeof(tmp));
		break;
	case K_VSUM:
		vsum((void *)in, acc, &one, &mat);
		break;
	default: break;
	}
}

/* The long count for the commutative and non-commutative cases only. */
static bool wanted(enum kind k, int count)
{
	return count != LONG_COUNT || k == K_INT_SUM || k == K_MAT;
}

static void reference(enum kind k, int size, int count, unsigned char *ref)
{
	size_t es = elem_size(k);
	unsigned char e[32];

	for (int i = 0; i < count; i++) {
		fill(k, 0, i, ref + i * es);
		for (int r = 1; r < size; r++) {
			fill(k, r, i, e);
			combine(k, ref + i * es, e);
		}
	}
}

static void check_reductions(MPI_Comm comm, int rank, int size)
{
	size_t max = LONG_COUNT * 4 * sizeof(unsigned int);
	unsigned char *in = malloc(max), *out = malloc(max), *ref = malloc(max);
	CHECK(in && out && ref, "out of memory");
	for (int k = 0; k < K_KINDS; k++) {
		MPI_Datatype t;
		MPI_Op op;
		size_t es = elem_size(k);

		kind_args(k, &t, &op);
		for (int c = 0; c < NCOUNTS; c++) {
			int n = counts[c], inplace = (k + c) % 2;
			int root = c % 2 ? size / 2 : size - 1;

			if (!wanted(k, n))
				continue;
			for (int i = 0; i < n; i++)
				fill(k, rank, i, in + i * es);
			reference(k, size, n, ref);
			memset(out, 0x5a, n * es);
			if (inplace && rank == root)
				memcpy(out, in, n * es);
			CHECK_MPI(MPI_Reduce(inplace && rank == root ? MPI_IN_PLACE : in,
					     out, n, t, op, root, comm));
			CHECK(rank != root || !memcmp(out, ref, n * es),
			      "reduce %s, %d elements, root %d of %d%s",
			      kind_name[k], n, root, size, inplace ? ", in place" : "");
			memset(out, 0x5a, n * es);
			if (inplace)
				memcpy(out, in, n * es);
			CHECK_MPI(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, t,
						op, comm));
			CHECK(!memcmp(out, ref, n * es), "allreduce %s, %d elements on %d%s",
			      kind_name[k], n, size, inplace ? ", in place" : "");
		}
	}
	/* The non-blocking call runs the same algorithm. */
	{
		MPI_Request req;
		int x = rank + 1, sum = -1;

		CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &req));
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(sum == size * (size + 1) / 2, "iallreduce %d on %d", sum, size);
	}
	free(in);
	free(out);
	free(ref);
}

/*
 * Reduce_scatter with uneven blocks (some empty) and Reduce_scatter_block
 * with long ones, in place every other time, on a commutative operation
 * of each kind and the non-commutative matrix product.
 */
static void check_reduce_scatter(MPI_Comm comm, int rank, int size)
{
	static const enum kind kinds[] = { K_INT_SUM, K_DBL_MAX, K_MAT, K_VSUM };
	int block = LONG_COUNT / 4, *cnt = malloc(sizeof(int) * size);
	size_t max = (size_t)size * block * 4 * sizeof(unsigned int);
	unsigned char *in = malloc(max), *out = malloc(max), *ref = malloc(max);

	CHECK(cnt && in && out && ref, "out of memory");
	for (int v = 0; v < 2; v++) {
		for (unsigned int j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++) {
			enum kind k = kinds[j];
			size_t es = elem_size(k);
			int total = 0, displ = 0, inplace = (j + v) % 2;
			MPI_Datatype t;
			MPI_Op op;

			kind_args(k, &t, &op);
			for (int r = 0; r < size; r++) {
				cnt[r] = v ? (r * 5 + (int)j) % 4 : block;
				if (r < rank)
					displ += cnt[r];
				total += cnt[r];
			}
			for (int i = 0; i < total; i++)
				fill(k, rank, i, in + i * es);
			reference(k, size, total, ref);
			memset(out, 0x5a, max);
			if (inplace)
				memcpy(out, in, total * es);
			if (v)
				CHECK_MPI(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : in,
							     out, cnt, t, op, comm));
			else
				CHECK_MPI(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : in,
								   out, block, t, op, comm));
			CHECK(!memcmp(out, ref + displ * es, cnt[rank] * es),
			      "reduce_scatter%s %s, %d of %d elements on %d%s",
			      v ? "" : "_block", kind_name[k], cnt[rank], total, size,
			      inplace ? ", in place" : "");
		}
	}
	free(cnt);
	free(in);
	free(out);
	free(ref);
}

static void check_bcast(MPI_Comm comm, int rank, int size)
{
	int *buf = malloc(sizeof(int) * 3 * LONG_COUNT);
	int roots[2] = { size / 2, size - 1 };
	MPI_Datatype vec;

	CHECK(buf, "out of memory");
	/* Ints 0 and 2 of every 3: packing, segments cut on elements. */
	CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
	CHECK_MPI(MPI_Type_commit(&vec));
	for (int c = 0; c < NCOUNTS; c++) {
		int n = counts[c], root = roots[c % 2];

		for (int i = 0; i < n; i++)
			buf[i] = rank == root ? val(root, i) : -999;
		CHECK_MPI(MPI_Bcast(buf, n, MPI_INT, root, comm));
		for (int i = 0; i < n; i++)
			CHECK(buf[i] == val(root, i), "bcast %d ints, root %d of %d [%d]",
			      n, root, size, i);
	}
	/* Extent 3 ints, 2 of data: the gaps must stay untouched. */
	for (int i = 0; i < 3 * LONG_COUNT; i++)
		buf[i] = i % 3 == 1 ? -7 : rank == roots[0] ? val(roots[0], i) : -999;
	CHECK_MPI(MPI_Bcast(buf, LONG_COUNT, vec, roots[0], comm));
	for (int i = 0; i < 3 * LONG_COUNT; i++)
		CHECK(buf[i] == (i % 3 == 1 ? -7 : val(roots[0], i)),
		      "bcast vector root %d of %d [%d] %d", roots[0], size, i, buf[i]);
	CHECK_MPI(MPI_Type_free(&vec));
	free(buf);
}

static void check_gathers(MPI_Comm comm, int rank, int size)
{
	int *in = malloc(sizeof(int) * 37 * size), *out = malloc(sizeof(int) * 37 * size);
	static const int n_of[2] = { 1, 37 };

	CHECK(in && out, "out of memory");
	for (int c = 0; c < 2; c++) {
		int n = n_of[c];

		for (int i = 0; i < n; i++)
			in[i] = val(rank, i);
		memset(out, 0, sizeof(int) * n * size);
		CHECK_MPI(MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm));
		for (int r = 0; r < size; r++)
			for (int i = 0; i < n; i++)
				CHECK(out[r * n + i] == val(r, i), "allgather %d on %d from %d",
				      n, size, r);
		for (int r = 0; r < size; r++)
			for (int i = 0; i < n; i++)
				out[r * n + i] = r == rank ? val(r, i) : -1;
		CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, n,
					MPI_INT, comm));
		for (int r = 0; r < size; r++)
			for (int i = 0; i < n; i++)
				CHECK(out[r * n + i] == val(r, i),
				      "allgather in place %d on %d from %d", n, size, r);
		/* Alltoall: block to rank r is rank * 100 + r + i. */
		for (int r = 0; r < size; r++)
			for (int i = 0; i < n; i++)
				in[r * n + i] = rank * 100 + r + i;
		memset(out, 0, sizeof(int) * n * size);
		CHECK_MPI(MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, comm));
		for (int r = 0; r < size; r++)
			for (int i = 0; i < n; i++)
				CHECK(out[r * n + i] == r * 100 + rank + i,
				      "alltoall %d on %d from %d", n, size, r);
		memcpy(out, in, sizeof(int) * n * size);
		CHECK_MPI(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, n,
				       MPI_INT, comm));
		for (int r = 0; r < size; r++)
			for (int i = 0; i < n; i++)
				CHECK(out[r * n + i] == r * 100 + rank + i,
				      "alltoall in place %d on %d from %d", n, size, r);
	}
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	int rank, size;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
	CHECK_MPI(MPI_Type_commit(&mat));
	CHECK_MPI(MPI_Op_create(matmul, 0, &matop));
	CHECK_MPI(MPI_Op_create(vsum, 1, &vsumop));
	/* MPI_COMM_WORLD's CAU tree (cau, auto) lives beside the others. */
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	for (int a = 1, k = 1; argc > 1 ? a < argc : k <= size; a++, k++) {
		MPI_Comm sub;

		if (argc > 1)
			k = atoi(argv[a]);
		CHECK(k >= 1 && k <= size, "no communicator of %d ranks in %d", k, size);
		CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED,
					 -rank, &sub));
		if (sub == MPI_COMM_NULL)
			continue;
		CHECK_MPI(MPI_Comm_rank(sub, &rank));
		CHECK_MPI(MPI_Barrier(sub));
		check_bcast(sub, rank, k);
		check_reductions(sub, rank, k);
		check_gathers(sub, rank, k);
		check_reduce_scatter(sub, rank, k);
		CHECK_MPI(MPI_Barrier(sub));
		CHECK_MPI(MPI_Comm_free(&sub));
		CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	}
	if (rank == 0)
		printf("collalgo: checked on %s ranks: barrier %s, bcast %s, reduce %s, allreduce %s, allgather %s, alltoall %s, reduce_scatter %s\n",
		       argc > 1 ? "the given numbers of" : "1 .. all",
		       getenv("PERCS_MPI_COLL_BARRIER") ?: "auto",
		       getenv("PERCS_MPI_COLL_BCAST") ?: "auto",
		       getenv("PERCS_MPI_COLL_REDUCE") ?: "auto",
		       getenv("PERCS_MPI_COLL_ALLREDUCE") ?: "auto",
		       getenv("PERCS_MPI_COLL_ALLGATHER") ?: "auto",
		       getenv("PERCS_MPI_COLL_ALLTOALL") ?: "auto",
		       getenv("PERCS_MPI_COLL_REDUCE_SCATTER") ?: "auto");
	CHECK_MPI(MPI_Op_free(&matop));
	CHECK_MPI(MPI_Op_free(&vsumop));
	CHECK_MPI(MPI_Type_free(&mat));
	CHECK_MPI(MPI_Finalize());
	return 0;
}
