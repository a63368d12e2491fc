// SPDX-License-Identifier: GPL-2.0
/*
 * nbc: every non-blocking collective against its blocking twin (all
 * started at once on one communicator and waited for in reverse order,
 * then with Waitany, Testall and Waitsome), the order MPI allows between
 * a non-blocking collective and point-to-point (no deadlock), progress
 * made while a rank waits in MPI_Recv, MPI_Request_free and MPI_Cancel
 * refused, and MPI_Comm_create_group.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define COUNT 29
#define NCOLL 16

static int rank, size;

static int val(int r, int i)
{
	return r * 1000 + i * 7 - 30;
}

/* Buffers of one collective: the blocking result and the non-blocking one. */
struct pair {
	int *send, *want, *got;
};

static void pair_init(struct pair *p, int n)
{
	p->send = malloc(sizeof(int) * n);
	p->want = calloc(n, sizeof(int));
	p->got = calloc(n, sizeof(int));
	CHECK(p->send && p->want && p->got, "out of memory");
	for (int i = 0; i < n; i++)
		p->send[i] = val(rank, i);
}

static void pair_check(const struct pair *p, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		CHECK(p->got[i] == p->want[i], "%s: element %d is %d, want %d",
		      name, i, p->got[i], p->want[i]);
}

static void pair_free(struct pair *p)
{
	free(p->send);
	free(p->want);
	free(p->got);
}

/* Every collective: blocking into .want, then all non-blocking at once. */
static void all_against_blocking(MPI_Comm comm, int order)
{
	int n = size * COUNT, root = size > 1 ? size - 2 : 0, i;
	int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
	struct pair p[NCOLL];
	MPI_Request req[NCOLL];
	MPI_Status st[NCOLL];
	int inplace_want[COUNT], inplace_got[COUNT];

	CHECK(counts && displs, "out of memory");
	for (i = 0; i < size; i++) {
		counts[i] = COUNT;
		displs[i] = i * COUNT;
	}
	for (i = 0; i < NCOLL; i++)
		pair_init(&p[i], n);
	CHECK_MPI(MPI_Barrier(comm));
	CHECK_MPI(MPI_Reduce(p[1].send, p[1].want, COUNT, MPI_INT, MPI_SUM, root, comm));
	CHECK_MPI(MPI_Allreduce(p[2].send, p[2].want, COUNT, MPI_INT, MPI_MAX, comm));
	CHECK_MPI(MPI_Gather(p[3].send, COUNT, MPI_INT, p[3].want, COUNT, MPI_INT, root, comm));
	CHECK_MPI(MPI_Gatherv(p[4].send, COUNT, MPI_INT, p[4].want, counts, displs, MPI_INT, root, comm));
	CHECK_MPI(MPI_Scatter(p[5].send, COUNT, MPI_INT, p[5].want, COUNT, MPI_INT, root, comm));
	CHECK_MPI(MPI_Scatterv(p[6].send, counts, displs, MPI_INT, p[6].want, COUNT, MPI_INT, root, comm));
	CHECK_MPI(MPI_Allgather(p[7].send, COUNT, MPI_INT, p[7].want, COUNT, MPI_INT, comm));
	CHECK_MPI(MPI_Allgatherv(p[8].send, COUNT, MPI_INT, p[8].want, counts, displs, MPI_INT, comm));
	CHECK_MPI(MPI_Alltoall(p[9].send, COUNT, MPI_INT, p[9].want, COUNT, MPI_INT, comm));
	CHECK_MPI(MPI_Alltoallv(p[10].send, counts, displs, MPI_INT, p[10].want, counts, displs, MPI_INT, comm));
	CHECK_MPI(MPI_Reduce_scatter(p[11].send, p[11].want, counts, MPI_INT, MPI_SUM, comm));
	CHECK_MPI(MPI_Reduce_scatter_block(p[12].send, p[12].want, COUNT, MPI_INT, MPI_MIN, comm));
	CHECK_MPI(MPI_Scan(p[13].send, p[13].want, COUNT, MPI_INT, MPI_SUM, comm));
	CHECK_MPI(MPI_Exscan(p[14].send, p[14].want, COUNT, MPI_INT, MPI_SUM, comm));
	for (i = 0; i < COUNT; i++)
		inplace_want[i] = inplace_got[i] = val(rank, i);
	CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, inplace_want, COUNT, MPI_INT, MPI_SUM, comm));

	/* The root broadcasts the same data twice. */
	if (rank == root)
		for (i = 0; i < COUNT; i++)
			p[0].got[i] = p[0].want[i] = val(root, i);
	CHECK_MPI(MPI_Bcast(p[0].want, COUNT, MPI_INT, root, comm));

	CHECK_MPI(MPI_Ibarrier(comm, &req[15]));
	CHECK_MPI(MPI_Ibcast(p[0].got, COUNT, MPI_INT, root, comm, &req[0]));
	CHECK_MPI(MPI_Ireduce(p[1].send, p[1].got, COUNT, MPI_INT, MPI_SUM, root, comm, &req[1]));
	CHECK_MPI(MPI_Iallreduce(p[2].send, p[2].got, COUNT, MPI_INT, MPI_MAX, comm, &req[2]));
	CHECK_MPI(MPI_Igather(p[3].send, COUNT, MPI_INT, p[3].got, COUNT, MPI_INT, root, comm, &req[3]));
	CHECK_MPI(MPI_Igatherv(p[4].send, COUNT, MPI_INT, p[4].got, counts, displs, MPI_INT, root, comm, &req[4]));
	CHECK_MPI(MPI_Iscatter(p[5].send, COUNT, MPI_INT, p[5].got, COUNT, MPI_INT, root, comm, &req[5]));
	CHECK_MPI(MPI_Iscatterv(p[6].send, counts, displs, MPI_INT, p[6].got, COUNT, MPI_INT, root, comm, &req[6]));
	CHECK_MPI(MPI_Iallgather(p[7].send, COUNT, MPI_INT, p[7].got, COUNT, MPI_INT, comm, &req[7]));
	CHECK_MPI(MPI_Iallgatherv(p[8].send, COUNT, MPI_INT, p[8].got, counts, displs, MPI_INT, comm, &req[8]));
	CHECK_MPI(MPI_Ialltoall(p[9].send, COUNT, MPI_INT, p[9].got, COUNT, MPI_INT, comm, &req[9]));
	CHECK_MPI(MPI_Ialltoallv(p[10].send, counts, displs, MPI_INT, p[10].got, counts, displs, MPI_INT, comm, &req[10]));
	CHECK_MPI(MPI_Ireduce_scatter(p[11].send, p[11].got, counts, MPI_INT, MPI_SUM, comm, &req[11]));
	CHECK_MPI(MPI_Ireduce_scatter_block(p[12].send, p[12].got, COUNT, MPI_INT, MPI_MIN, comm, &req[12]));
	CHECK_MPI(MPI_Iscan(p[13].send, p[13].got, COUNT, MPI_INT, MPI_SUM, comm, &req[13]));
	CHECK_MPI(MPI_Iexscan(p[14].send, p[14].got, COUNT, MPI_INT, MPI_SUM, comm, &req[14]));
	if (order == 0) {
		/* Reverse order of starting. */
		for (i = NCOLL - 1; i >= 0; i--)
			CHECK_MPI(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
	} else if (order == 1) {
		int done = 0, idx;

		while (done < NCOLL) {
			CHECK_MPI(MPI_Waitany(NCOLL, req, &idx, MPI_STATUS_IGNORE));
			CHECK(idx >= 0 && idx < NCOLL && req[idx] == MPI_REQUEST_NULL,
			      "Waitany index %d", idx);
			done++;
		}
	} else if (order == 2) {
		int flag = 0;

		while (!flag)
			CHECK_MPI(MPI_Testall(NCOLL, req, &flag, st));
	} else {
		int done = 0, out, idx[NCOLL];

		while (done < NCOLL) {
			CHECK_MPI(MPI_Waitsome(NCOLL, req, &out, idx, st));
			done += out;
		}
	}
	for (i = 0; i < NCOLL; i++)
		CHECK(req[i] == MPI_REQUEST_NULL, "request %d still active", i);
	CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, inplace_got, COUNT, MPI_INT, MPI_SUM, comm, &req[0]));
	CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
	for (i = 0; i < COUNT; i++)
		CHECK(inplace_got[i] == inplace_want[i], "in-place Iallreduce %d", i);

	pair_check(&p[0], COUNT, "Ibcast");
	if (rank == root) {
		pair_check(&p[1], COUNT, "Ireduce");
		pair_check(&p[3], n, "Igather");
		pair_check(&p[4], n, "Igatherv");
	}
	pair_check(&p[2], COUNT, "Iallreduce");
	pair_check(&p[5], COUNT, "Iscatter");
	pair_check(&p[6], COUNT, "Iscatterv");
	pair_check(&p[7], n, "Iallgather");
	pair_check(&p[8], n, "Iallgatherv");
	pair_check(&p[9], n, "Ialltoall");
	pair_check(&p[10], n, "Ialltoallv");
	pair_check(&p[11], COUNT, "Ireduce_scatter");
	pair_check(&p[12], COUNT, "Ireduce_scatter_block");
	pair_check(&p[13], COUNT, "Iscan");
	if (rank)
		pair_check(&p[14], COUNT, "Iexscan");
	for (i = 0; i < NCOLL; i++)
		pair_free(&p[i]);
	free(counts);
	free(displs);
}

/*
 * Rank 0 starts a barrier, then sends to rank 1, which receives before it
 * joins the barrier: correct MPI, so it must end.
 */
static void no_deadlock(void)
{
	MPI_Request r;
	int x = 42;

	if (size < 2)
		return;
	if (rank == 0) {
		CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r));
		CHECK_MPI(MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	} else if (rank == 1) {
		x = 0;
		CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(x == 42, "got %d", x);
		CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	} else {
		CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	}
}

/*
 * A broadcast from rank 0 reaches rank 3 through rank 2 (binomial tree);
 * rank 2 sits in MPI_Recv for a message rank 3 sends only once its
 * broadcast is done: rank 2 must forward while it waits.
 */
static void progress_in_recv(void)
{
	int data[4] = { 0 }, x = 0;
	MPI_Request r;

	if (size < 4)
		return;
	if (rank == 0)
		for (int i = 0; i < 4; i++)
			data[i] = 100 + i;
	CHECK_MPI(MPI_Ibcast(data, 4, MPI_INT, 0, MPI_COMM_WORLD, &r));
	if (rank == 2) {
		CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, 3, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(x == 103, "rank 3 sent %d", x);
	}
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	if (rank == 3)
		CHECK_MPI(MPI_Send(&data[3], 1, MPI_INT, 2, 9, MPI_COMM_WORLD));
	for (int i = 0; i < 4; i++)
		CHECK(data[i] == 100 + i, "Ibcast element %d is %d", i, data[i]);
}

static void refused(void)
{
	MPI_Comm comm;
	MPI_Request r, keep;
	int cls;

	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
	CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
	CHECK_MPI(MPI_Ibarrier(comm, &r));
	keep = r;
	CHECK_MPI(MPI_Error_class(MPI_Request_free(&r), &cls));
	CHECK(cls == MPI_ERR_REQUEST && r == keep, "Request_free gave class %d", cls);
	CHECK_MPI(MPI_Error_class(MPI_Cancel(&r), &cls));
	CHECK(cls == MPI_ERR_REQUEST, "Cancel gave class %d", cls);
	CHECK_MPI(MPI_Error_class(MPI_Ibarrier(comm, NULL), &cls));
	CHECK(cls == MPI_ERR_REQUEST, "NULL request gave class %d", cls);
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Comm_free(&comm));
}

/* The even ranks make a communicator among themselves; the odd ones don't call. */
static void create_group(void)
{
	MPI_Group world, even;
	MPI_Comm comm;
	int *ranks = malloc(sizeof(int) * size), n = 0, r, s, sum;

	CHECK(ranks, "out of memory");
	for (int i = 0; i < size; i += 2)
		ranks[n++] = i;
	CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
	CHECK_MPI(MPI_Group_incl(world, n, ranks, &even));
	if (rank % 2 == 0) {
		CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, even, 77, &comm));
		CHECK(comm != MPI_COMM_NULL, "no communicator");
		CHECK_MPI(MPI_Comm_rank(comm, &r));
		CHECK_MPI(MPI_Comm_size(comm, &s));
		CHECK(r == rank / 2 && s == n, "rank %d of %d", r, s);
		CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
		CHECK(sum == (n - 1) * n, "sum of the even ranks %d", sum);
		CHECK_MPI(MPI_Comm_free(&comm));
	}
	CHECK_MPI(MPI_Group_free(&even));
	CHECK_MPI(MPI_Group_free(&world));
	free(ranks);
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
	MPI_Comm comm;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	no_deadlock();
	progress_in_recv();
	for (int order = 0; order < 4; order++)
		all_against_blocking(MPI_COMM_WORLD, order);
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &comm));
	CHECK_MPI(MPI_Comm_rank(comm, &rank));
	CHECK_MPI(MPI_Comm_size(comm, &size));
	all_against_blocking(comm, 0);
	CHECK_MPI(MPI_Comm_free(&comm));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	refused();
	create_group();
	if (rank == 0)
		printf("nbc: every non-blocking collective on %d ranks\n", size);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
