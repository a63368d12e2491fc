// SPDX-License-Identifier: GPL-2.0
/*
 * stencil: a 2-D 5-point stencil on a grid split into row blocks, one per
 * PE.  Each step a PE puts its edge rows into its neighbours' halo rows,
 * then (after a fence) bumps their step counters with an atomic add; a
 * PE waits with shmem_wait_until for both neighbours' counters before it
 * computes.  Every PE also runs the whole grid alone and checks its block
 * against that.  Integer arithmetic, so the answers are exact.
 * Arguments: rows per PE, columns, steps (default 6 40 20).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static long from_up, from_down;	/* steps whose halo has arrived */

static uint32_t init_val(int r, int c)
{
	return (uint32_t)(r * 2654435761u + c * 40503u) % 1000;
}

/* One step of rows 1 .. rows of @g (halo rows 0 and rows + 1) into @o. */
static void step(const uint32_t *g, uint32_t *o, int rows, int cols)
{
	for (int r = 1; r <= rows; r++)
		for (int c = 0; c < cols; c++) {
			uint32_t l = c ? g[r * cols + c - 1] : 0;
			uint32_t rt = c < cols - 1 ? g[r * cols + c + 1] : 0;

			o[r * cols + c] = (g[r * cols + c] * 4 + g[(r - 1) * cols + c] +
					   g[(r + 1) * cols + c] + l + rt) % 1000003;
		}
}

int main(int argc, char **argv)
{
	int rows = argc > 1 ? atoi(argv[1]) : 6, cols = argc > 2 ? atoi(argv[2]) : 40;
	int steps = argc > 3 ? atoi(argv[3]) : 20, me, n, total;
	uint32_t *g, *o, *ref, *refo;

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	total = rows * n;
	/* Two symmetric grids with halos: this step's and the next's. */
	g = shmem_calloc((size_t)(rows + 2) * cols, sizeof(*g));
	o = shmem_calloc((size_t)(rows + 2) * cols, sizeof(*o));
	ref = calloc((size_t)(total + 2) * cols, sizeof(*ref));
	refo = calloc((size_t)(total + 2) * cols, sizeof(*ref));
	CHECK(g && o && ref && refo, "allocation");
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			g[(r + 1) * cols + c] = init_val(me * rows + r, c);
	for (int r = 0; r < total; r++)
		for (int c = 0; c < cols; c++)
			ref[(r + 1) * cols + c] = init_val(r, c);
	shmem_barrier_all();
	for (int s = 1; s <= steps; s++) {
		uint32_t *t;

		/* My top row to the PE above's bottom halo, and vice versa. */
		if (me > 0) {
			shmem_uint32_put(&g[(rows + 1) * cols], &g[1 * cols], (size_t)cols, me - 1);
			shmem_fence();
			shmem_long_atomic_add(&from_down, 1, me - 1);
		}
		if (me < n - 1) {
			shmem_uint32_put(&g[0], &g[rows * cols], (size_t)cols, me + 1);
			shmem_fence();
			shmem_long_atomic_add(&from_up, 1, me + 1);
		}
		if (me > 0)
			shmem_long_wait_until(&from_up, SHMEM_CMP_GE, s);
		if (me < n - 1)
			shmem_long_wait_until(&from_down, SHMEM_CMP_GE, s);
		step(g, o, rows, cols);
		/* Nobody may overwrite my halo until I have used it. */
		shmem_barrier_all();
		t = g;
		g = o;
		o = t;
		step(ref, refo, total, cols);
		t = ref;
		ref = refo;
		refo = t;
	}
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			CHECK(g[(r + 1) * cols + c] == ref[(me * rows + r + 1) * cols + c],
			      "row %d col %d: %u want %u", me * rows + r, c,
			      g[(r + 1) * cols + c], ref[(me * rows + r + 1) * cols + c]);
	if (me == 0)
		printf("stencil: %d PEs, %dx%d grid, %d steps match the serial run\n",
		       n, total, cols, steps);
	free(ref);
	free(refo);
	shmem_free(g);
	shmem_free(o);
	shmem_finalize();
	return 0;
}
