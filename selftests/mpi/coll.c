// SPDX-License-Identifier: GPL-2.0
/*
 * coll: every collective against a reference computed locally, on
 * MPI_COMM_WORLD with every root, in place where MPI allows it, and on
 * the row and column communicators of a split, a dup and a communicator
 * made from a group; a non-commutative operation of the program's own.
 *
 * "coll sweep": instead, the same checks on the first k ranks (reversed:
 * world rank k - 1 is rank 0) for k = 1 .. size, with one root each (the
 * middle rank, never 0 past one rank): every communicator size in one
 * job, which costs less than a job per size.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define COUNT 37	/* not a power of two, crosses no boundary on purpose */

static int sweep;	/* "coll sweep": one root per communicator */

/* The roots to check on @size ranks: all of them, or the middle one. */
static int first_root(int size)
{
	return sweep ? size / 2 : 0;
}

static int next_root(int root, int size)
{
	return sweep ? size : root + 1;
}

static int val(int rank, int i)
{
	return rank * 1000 + i * 3 - 50;
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
		for (int i = 0; i < 4; i++)
			b[i] = r[i];
	}
}

static void mat_of(int rank, unsigned int m[4])
{
	m[0] = rank + 1;
	m[1] = 2;
	m[2] = rank * 3;
	m[3] = 1;
}

static void check_v_and_scans(MPI_Comm comm, const char *name, int rank, int size)
{
	int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
	int total = 0, r, i, root, mine = rank + 1;
	int *buf, *got, x, pre;
	unsigned int m[4], want[4], tmp[4];
	MPI_Datatype mat;
	MPI_Op op;

	CHECK(counts && displs, "out of memory");
	/* Rank r contributes r + 1 ints, placed in reverse rank order. */
	for (r = size - 1; r >= 0; r--) {
		counts[r] = r + 1;
		displs[r] = total;
		total += r + 1;
	}
	buf = malloc(sizeof(int) * total);
	got = malloc(sizeof(int) * (mine > total ? mine : total));
	CHECK(buf && got, "out of memory");
	for (root = first_root(size); root < size; root = next_root(root, size)) {
		for (i = 0; i < mine; i++)
			got[i] = rank * 100 + i;
		memset(buf, 0xff, sizeof(int) * total);
		CHECK_MPI(MPI_Gatherv(got, mine, MPI_INT, buf, counts, displs, MPI_INT,
				      root, comm));
		if (rank == root)
			for (r = 0; r < size; r++)
				for (i = 0; i < counts[r]; i++)
					CHECK(buf[displs[r] + i] == r * 100 + i,
					      "%s gatherv root %d", name, root);
		for (r = 0; r < size; r++)
			for (i = 0; i < counts[r]; i++)
				buf[displs[r] + i] = r * 7 + i + root;
		memset(got, 0, sizeof(int) * mine);
		CHECK_MPI(MPI_Scatterv(buf, counts, displs, MPI_INT, got, mine, MPI_INT,
				       root, comm));
		for (i = 0; i < mine; i++)
			CHECK(got[i] == rank * 7 + i + root, "%s scatterv root %d", name, root);
	}
	for (i = 0; i < mine; i++)
		got[i] = rank * 100 + i;
	memset(buf, 0, sizeof(int) * total);
	CHECK_MPI(MPI_Allgatherv(got, mine, MPI_INT, buf, counts, displs, MPI_INT, comm));
	for (r = 0; r < size; r++)
		for (i = 0; i < counts[r]; i++)
			CHECK(buf[displs[r] + i] == r * 100 + i, "%s allgatherv", name);

	/* Alltoallv: rank r sends j + 1 ints to rank j, value r * 1000 + j. */
	{
		int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
		int *rc = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
		int *sb, *rb, so = 0, ro = 0;

		CHECK(sc && sd && rc && rd, "out of memory");
		for (r = 0; r < size; r++) {
			sc[r] = r + 1;
			sd[r] = so;
			so += r + 1;
			rc[r] = rank + 1;
			rd[r] = ro;
			ro += rank + 1;
		}
		sb = malloc(sizeof(int) * so);
		rb = malloc(sizeof(int) * ro);
		CHECK(sb && rb, "out of memory");
		for (r = 0; r < size; r++)
			for (i = 0; i < sc[r]; i++)
				sb[sd[r] + i] = rank * 1000 + r;
		CHECK_MPI(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm));
		for (r = 0; r < size; r++)
			for (i = 0; i < rc[r]; i++)
				CHECK(rb[rd[r] + i] == r * 1000 + rank, "%s alltoallv", name);
		free(sb); free(rb); free(sc); free(sd); free(rc); free(rd);
	}

	/* Scan and Exscan (sum of ranks + 1) */
	CHECK_MPI(MPI_Scan(&mine, &x, 1, MPI_INT, MPI_SUM, comm));
	CHECK(x == (rank + 1) * (rank + 2) / 2, "%s scan %d", name, x);
	pre = -12345;
	CHECK_MPI(MPI_Exscan(&mine, &pre, 1, MPI_INT, MPI_SUM, comm));
	CHECK(rank == 0 || pre == rank * (rank + 1) / 2, "%s exscan %d", name, pre);

	/* Reduce_scatter_block: block r of the sum goes to rank r. */
	for (i = 0; i < size; i++)
		buf[i] = rank + i * 10;
	CHECK_MPI(MPI_Reduce_scatter_block(buf, &x, 1, MPI_INT, MPI_SUM, comm));
	CHECK(x == size * (size - 1) / 2 + rank * 10 * size, "%s reduce_scatter_block %d",
	      name, x);

	/* A non-commutative op: the product M0 x M1 x ... in rank order. */
	CHECK_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
	CHECK_MPI(MPI_Type_commit(&mat));
	CHECK_MPI(MPI_Op_create(matmul, 0, &op));
	mat_of(0, want);
	for (r = 1; r < size; r++) {
		int len = 1;

		mat_of(r, tmp);
		matmul(want, tmp, &len, &mat);
		memcpy(want, tmp, sizeof(want));
	}
	mat_of(rank, m);
	CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, m, 1, mat, op, comm));
	CHECK(!memcmp(m, want, sizeof(m)), "%s user op allreduce", name);
	CHECK_MPI(MPI_Op_free(&op));
	CHECK_MPI(MPI_Type_free(&mat));
	free(buf);
	free(got);
	free(counts);
	free(displs);
}

static void check_comm(MPI_Comm comm, const char *name)
{
	int rank, size, root, i, r;
	int *in, *out, *all, *ref;

	CHECK_MPI(MPI_Comm_rank(comm, &rank));
	CHECK_MPI(MPI_Comm_size(comm, &size));
	in = malloc(sizeof(int) * COUNT);
	out = malloc(sizeof(int) * COUNT * size);
	all = malloc(sizeof(int) * COUNT * size);
	ref = malloc(sizeof(int) * COUNT * size);
	CHECK(in && out && all && ref, "out of memory");
	for (i = 0; i < COUNT; i++)
		in[i] = val(rank, i);
	CHECK_MPI(MPI_Barrier(comm));

	for (root = first_root(size); root < size; root = next_root(root, size)) {
		/* bcast */
		for (i = 0; i < COUNT; i++)
			out[i] = rank == root ? val(root, i) : 0;
		CHECK_MPI(MPI_Bcast(out, COUNT, MPI_INT, root, comm));
		for (i = 0; i < COUNT; i++)
			CHECK(out[i] == val(root, i), "%s bcast root %d [%d]", name, root, i);
		/* reduce SUM and MAX, then in place */
		CHECK_MPI(MPI_Reduce(in, out, COUNT, MPI_INT, MPI_SUM, root, comm));
		if (rank == root)
			for (i = 0; i < COUNT; i++) {
				int s = 0;

				for (r = 0; r < size; r++)
					s += val(r, i);
				CHECK(out[i] == s, "%s reduce root %d [%d] %d != %d",
				      name, root, i, out[i], s);
			}
		memcpy(out, in, sizeof(int) * COUNT);
		CHECK_MPI(MPI_Reduce(rank == root ? MPI_IN_PLACE : in, out, COUNT,
				     MPI_INT, MPI_MAX, root, comm));
		if (rank == root)
			for (i = 0; i < COUNT; i++)
				CHECK(out[i] == val(size - 1, i), "%s reduce in place", name);
		/* gather, scatter */
		CHECK_MPI(MPI_Gather(in, COUNT, MPI_INT, all, COUNT, MPI_INT, root, comm));
		if (rank == root)
			for (r = 0; r < size; r++)
				for (i = 0; i < COUNT; i++)
					CHECK(all[r * COUNT + i] == val(r, i),
					      "%s gather root %d from %d", name, root, r);
		for (r = 0; r < size; r++)
			for (i = 0; i < COUNT; i++)
				ref[r * COUNT + i] = val(root, i) + r;
		CHECK_MPI(MPI_Scatter(ref, COUNT, MPI_INT, out, COUNT, MPI_INT, root, comm));
		for (i = 0; i < COUNT; i++)
			CHECK(out[i] == val(root, i) + rank, "%s scatter root %d", name, root);
	}
	/* allreduce (also in place, also doubles), allgather, alltoall */
	CHECK_MPI(MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_MIN, comm));
	for (i = 0; i < COUNT; i++)
		CHECK(out[i] == val(0, i), "%s allreduce min", name);
	{
		double d = rank + 0.5, dsum = 0;

		CHECK_MPI(MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, comm));
		CHECK(dsum == size * size / 2.0, "%s allreduce double %g", name, dsum);
		d = rank;
		CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, comm));
		CHECK(d == size - 1, "%s allreduce in place", name);
	}
	CHECK_MPI(MPI_Allgather(in, COUNT, MPI_INT, all, COUNT, MPI_INT, comm));
	for (r = 0; r < size; r++)
		for (i = 0; i < COUNT; i++)
			CHECK(all[r * COUNT + i] == val(r, i), "%s allgather", name);
	for (r = 0; r < size; r++)
		for (i = 0; i < COUNT; i++)
			ref[r * COUNT + i] = rank * 100 + r;	/* to rank r */
	CHECK_MPI(MPI_Alltoall(ref, COUNT, MPI_INT, all, COUNT, MPI_INT, comm));
	for (r = 0; r < size; r++)
		for (i = 0; i < COUNT; i++)
			CHECK(all[r * COUNT + i] == r * 100 + rank, "%s alltoall", name);
	check_v_and_scans(comm, name, rank, size);
	free(in);
	free(out);
	free(all);
	free(ref);
}

int main(int argc, char **argv)
{
	int rank, size, cols, rrank, rsize, cmp;
	MPI_Comm dup, row, col;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (argc > 1 && !strcmp(argv[1], "sweep")) {
		sweep = 1;
		for (int k = 1; k <= size; k++) {
			MPI_Comm sub;

			CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD,
						 rank < k ? 0 : MPI_UNDEFINED,
						 -rank, &sub));
			if (sub != MPI_COMM_NULL) {
				check_comm(sub, "first k ranks");
				CHECK_MPI(MPI_Comm_free(&sub));
			}
		}
		if (rank == 0)
			printf("coll: every collective checked on 1 .. %d ranks\n",
			       size);
		CHECK_MPI(MPI_Finalize());
		return 0;
	}
	check_comm(MPI_COMM_WORLD, "world");
	check_comm(MPI_COMM_SELF, "self");

	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	CHECK_MPI(MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp));
	CHECK(cmp == MPI_CONGRUENT, "dup compares %d", cmp);
	check_comm(dup, "dup");

	/* A grid of rows of 2 (the last row may be short); reversed keys. */
	cols = 2;
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank / cols, -rank, &row));
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % cols, rank, &col));
	CHECK_MPI(MPI_Comm_rank(row, &rrank));
	CHECK_MPI(MPI_Comm_size(row, &rsize));
	CHECK(rsize == (rank / cols == (size - 1) / cols ? size - rank / cols * cols : cols),
	      "row size %d", rsize);
	CHECK(rrank == rsize - 1 - rank % cols, "row rank %d", rrank);
	check_comm(row, "row");
	check_comm(col, "col");
	CHECK_MPI(MPI_Comm_free(&row));
	CHECK_MPI(MPI_Comm_free(&col));

	/* The even ranks, highest first, through a group. */
	{
		MPI_Group world, evens, odds;
		MPI_Comm ec;
		int n = (size + 1) / 2, *ranks = malloc(sizeof(int) * n), i, gr, t[2], t2[2];

		CHECK(ranks, "out of memory");
		for (i = 0; i < n; i++)
			ranks[i] = (n - 1 - i) * 2;
		CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
		CHECK_MPI(MPI_Group_incl(world, n, ranks, &evens));
		CHECK_MPI(MPI_Group_excl(world, n, ranks, &odds));
		CHECK_MPI(MPI_Group_size(odds, &gr));
		CHECK(gr == size - n, "odd group size %d", gr);
		CHECK_MPI(MPI_Group_rank(evens, &gr));
		CHECK(gr == (rank % 2 ? MPI_UNDEFINED : n - 1 - rank / 2), "group rank %d", gr);
		t[0] = 0;
		t[1] = 1;
		CHECK_MPI(MPI_Group_translate_ranks(evens, size > 2 ? 2 : 1, t, world, t2));
		CHECK(t2[0] == (n - 1) * 2 && (size <= 2 || t2[1] == (n - 2) * 2),
		      "translate %d %d", t2[0], t2[1]);
		CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, evens, &ec));
		CHECK((ec == MPI_COMM_NULL) == (rank % 2 == 1), "comm_create membership");
		if (ec != MPI_COMM_NULL) {
			check_comm(ec, "evens");
			CHECK_MPI(MPI_Comm_free(&ec));
		}
		CHECK_MPI(MPI_Group_free(&evens));
		CHECK_MPI(MPI_Group_free(&odds));
		CHECK_MPI(MPI_Group_free(&world));
		free(ranks);
	}
	CHECK_MPI(MPI_Comm_free(&dup));
	CHECK(row == MPI_COMM_NULL, "freed comm not null");
	if (rank == 0)
		printf("coll: every collective checked on %d ranks\n", size);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
