// SPDX-License-Identifier: GPL-2.0
/*
 * sweep: a 2-D wavefront sweep in the style of Sweep3D (seed 000).  The
 * I x J x K grid is split over a PX x PY process grid in I and J; K is
 * processed in blocks of KB planes, so a rank passes a block's outgoing
 * faces downstream and goes on with the next block while its neighbours
 * work: the pipeline.  Sweeps start from each of the four corners.  A
 * cell's value depends on its upstream neighbours in I and J (unsigned
 * arithmetic mod 2^32: exact), and every rank checks its block against
 * the whole sweep computed alone; a checksum is reduced at the end.
 */
#include <stdlib.h>
#include "check.h"

#define NX 5	/* cells per rank in I */
#define NY 4	/* and in J */
#define K 12	/* planes */
#define KB 3	/* planes per block */

static int px, py, gi, gj;

static unsigned int src(int i, int j, int k)
{
	return (unsigned int)(i * 131 + j * 31 + k * 7 + 1);
}

static unsigned int cell(unsigned int left, unsigned int below, int i, int j,
			 int k)
{
	return left * 3 + below * 5 + src(i, j, k);
}

/* The whole sweep from corner (di, dj), alone: ref[(i * gj + j) * K + k]. */
static void reference(int di, int dj, unsigned int *ref)
{
	for (int k = 0; k < K; k++)
		for (int a = 0; a < gi; a++)
			for (int b = 0; b < gj; b++) {
				int i = di > 0 ? a : gi - 1 - a;
				int j = dj > 0 ? b : gj - 1 - b;
				unsigned int l = a ? ref[((i - di) * gj + j) * K + k] : 0;
				unsigned int d = b ? ref[(i * gj + j - dj) * K + k] : 0;

				ref[(i * gj + j) * K + k] = cell(l, d, i, j, k);
			}
}

int main(int argc, char **argv)
{
	static const int corner[4][2] = { { 1, 1 }, { -1, 1 }, { 1, -1 }, { -1, -1 } };
	unsigned int *ref, phi[NX][NY][K], face_i[KB][NY], face_j[KB][NX];
	unsigned int sum = 0, total = 0;
	int rank, size, cx, cy;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	for (px = 1; (px + 1) * (px + 1) <= size; px++)
		;
	while (size % px)
		px--;
	py = size / px;
	cx = rank % px;
	cy = rank / px;
	gi = px * NX;
	gj = py * NY;
	ref = malloc(sizeof(*ref) * gi * gj * K);
	CHECK(ref, "out of memory");
	for (int c = 0; c < 4; c++) {
		int di = corner[c][0], dj = corner[c][1];
		int up_i = cx - di >= 0 && cx - di < px ? cy * px + cx - di : MPI_PROC_NULL;
		int up_j = cy - dj >= 0 && cy - dj < py ? (cy - dj) * px + cx : MPI_PROC_NULL;
		int dn_i = cx + di >= 0 && cx + di < px ? cy * px + cx + di : MPI_PROC_NULL;
		int dn_j = cy + dj >= 0 && cy + dj < py ? (cy + dj) * px + cx : MPI_PROC_NULL;

		for (int k0 = 0; k0 < K; k0 += KB) {
			/* Incoming faces (zero at the grid's edge: PROC_NULL). */
			for (int k = 0; k < KB; k++) {
				for (int j = 0; j < NY; j++)
					face_i[k][j] = 0;
				for (int i = 0; i < NX; i++)
					face_j[k][i] = 0;
			}
			CHECK_MPI(MPI_Recv(face_i, KB * NY, MPI_UNSIGNED, up_i, c,
					   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK_MPI(MPI_Recv(face_j, KB * NX, MPI_UNSIGNED, up_j, c,
					   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			for (int k = k0; k < k0 + KB; k++)
				for (int a = 0; a < NX; a++)
					for (int b = 0; b < NY; b++) {
						int i = di > 0 ? a : NX - 1 - a;
						int j = dj > 0 ? b : NY - 1 - b;
						unsigned int l = a ? phi[i - di][j][k] : face_i[k - k0][j];
						unsigned int d = b ? phi[i][j - dj][k] : face_j[k - k0][i];

						phi[i][j][k] = cell(l, d, cx * NX + i, cy * NY + j, k);
					}
			/* Outgoing faces: my last plane in each direction. */
			for (int k = 0; k < KB; k++) {
				for (int j = 0; j < NY; j++)
					face_i[k][j] = phi[di > 0 ? NX - 1 : 0][j][k0 + k];
				for (int i = 0; i < NX; i++)
					face_j[k][i] = phi[i][dj > 0 ? NY - 1 : 0][k0 + k];
			}
			CHECK_MPI(MPI_Send(face_i, KB * NY, MPI_UNSIGNED, dn_i, c,
					   MPI_COMM_WORLD));
			CHECK_MPI(MPI_Send(face_j, KB * NX, MPI_UNSIGNED, dn_j, c,
					   MPI_COMM_WORLD));
		}
		reference(di, dj, ref);
		for (int i = 0; i < NX; i++)
			for (int j = 0; j < NY; j++)
				for (int k = 0; k < K; k++) {
					unsigned int want = ref[((cx * NX + i) * gj + cy * NY + j) * K + k];

					CHECK(phi[i][j][k] == want,
					      "corner %d: cell (%d,%d,%d) is %u, want %u",
					      c, cx * NX + i, cy * NY + j, k, phi[i][j][k], want);
					sum += phi[i][j][k];
				}
	}
	CHECK_MPI(MPI_Reduce(&sum, &total, 1, MPI_UNSIGNED, MPI_SUM, 0, MPI_COMM_WORLD));
	if (rank == 0) {
		unsigned int want = 0;

		for (int c = 0; c < 4; c++) {
			reference(corner[c][0], corner[c][1], ref);
			for (int x = 0; x < gi * gj * K; x++)
				want += ref[x];
		}
		CHECK(total == want, "checksum %u, want %u", total, want);
		printf("sweep: 4 corners, %d x %d x %d cells on a %d x %d grid\n",
		       gi, gj, K, px, py);
	}
	free(ref);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
