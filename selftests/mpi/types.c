// SPDX-License-Identifier: GPL-2.0
/*
 * types: derived datatypes across the wire.  A C struct described with
 * MPI_Type_create_struct (its extent must be sizeof the struct, padding
 * included), an array of them sent and received; a column of a row-major
 * matrix (MPI_Type_vector) sent and received as contiguous doubles and
 * back; size and extent queries.
 */
#include <stddef.h>
#include <string.h>
#include "check.h"

#define N 5
#define ROWS 6
#define COLS 4

struct particle {
	char kind;
	double pos[3];
	int id;
};

int main(int argc, char **argv)
{
	struct particle p[N], q[N];
	double m[ROWS][COLS], col[ROWS];
	int rank, size, i, sz, peer;
	int bl[3] = { 1, 3, 1 };
	MPI_Aint displ[3] = { offsetof(struct particle, kind),
			      offsetof(struct particle, pos),
			      offsetof(struct particle, id) }, lb, ext;
	MPI_Datatype types[3] = { MPI_CHAR, MPI_DOUBLE, MPI_INT }, pt, column;
	MPI_Status st;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size >= 2, "needs 2 ranks");
	peer = rank ^ 1;

	CHECK_MPI(MPI_Type_create_struct(3, bl, displ, types, &pt));
	CHECK_MPI(MPI_Type_commit(&pt));
	CHECK_MPI(MPI_Type_size(pt, &sz));
	CHECK_MPI(MPI_Type_get_extent(pt, &lb, &ext));
	CHECK(sz == 1 + 24 + 4 && lb == 0 && ext == sizeof(struct particle),
	      "struct size %d lb %ld extent %ld (sizeof %zu)", sz, (long)lb, (long)ext,
	      sizeof(struct particle));
	memset(p, 0x5a, sizeof(p));	/* padding differs from q's */
	memset(q, 0, sizeof(q));
	for (i = 0; i < N; i++) {
		p[i].kind = (char)('a' + rank + i);
		p[i].pos[0] = rank + i * 0.5;
		p[i].pos[1] = -i;
		p[i].pos[2] = 1e10 * rank;
		p[i].id = rank * 1000 + i;
	}
	if (peer < size) {
		CHECK_MPI(MPI_Sendrecv(p, N, pt, peer, 1, q, N, pt, peer, 1,
				       MPI_COMM_WORLD, &st));
		CHECK_MPI(MPI_Get_count(&st, pt, &sz));
		CHECK(sz == N, "received %d particles", sz);
		for (i = 0; i < N; i++)
			CHECK(q[i].kind == 'a' + peer + i && q[i].pos[0] == peer + i * 0.5 &&
			      q[i].pos[1] == -i && q[i].pos[2] == 1e10 * peer &&
			      q[i].id == peer * 1000 + i, "particle %d", i);
	}

	/* Column 2 of the matrix: ROWS doubles, COLS apart. */
	CHECK_MPI(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column));
	CHECK_MPI(MPI_Type_commit(&column));
	CHECK_MPI(MPI_Type_get_extent(column, &lb, &ext));
	CHECK(ext == (MPI_Aint)(((ROWS - 1) * COLS + 1) * sizeof(double)), "vector extent %ld",
	      (long)ext);
	for (i = 0; i < ROWS * COLS; i++)
		m[i / COLS][i % COLS] = rank * 100 + i;
	if (peer < size) {
		/* Out as a column, in as contiguous doubles, then back into a column. */
		CHECK_MPI(MPI_Sendrecv(&m[0][2], 1, column, peer, 2, col, ROWS, MPI_DOUBLE,
				       peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (i = 0; i < ROWS; i++)
			CHECK(col[i] == peer * 100 + i * COLS + 2, "column %d", i);
		CHECK_MPI(MPI_Sendrecv(col, ROWS, MPI_DOUBLE, peer, 3, &m[0][1], 1, column,
				       peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (i = 0; i < ROWS * COLS; i++)
			CHECK(m[i / COLS][i % COLS] == (i % COLS == 1 ?
			      rank * 100 + (i / COLS) * COLS + 2 : rank * 100 + i),
			      "matrix element %d", i);
	}
	CHECK_MPI(MPI_Type_free(&pt));
	CHECK_MPI(MPI_Type_free(&column));
	if (rank == 0)
		printf("types: struct and vector datatypes checked\n");
	CHECK_MPI(MPI_Finalize());
	return 0;
}
