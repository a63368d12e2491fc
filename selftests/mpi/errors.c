// SPDX-License-Identifier: GPL-2.0
/*
 * errors: bad arguments get MPI error codes under MPI_ERRORS_RETURN,
 * the non-blocking collectives' and Comm_create_group's too.  With
 * argument "fatal" ("fatal-nbc"), rank 0 makes one bad MPI_Send
 * (MPI_Ibcast) under the default MPI_ERRORS_ARE_FATAL: the job must end
 * with a message naming the call.
 */
#include <string.h>
#include "check.h"

#define EXPECT_CLASS(call, cls) do {					\
	int __e = (call), __c = -1;					\
	MPI_Error_class(__e, &__c);					\
	CHECK(__c == (cls), "%s gave class %d, want %s", #call, __c, #cls); \
} while (0)

/* Every non-blocking collective and Comm_create_group, badly called. */
static void nonblocking(int rank, int size)
{
	int x[4] = { 0 }, y[4], counts[64] = { 0 }, displs[64] = { 0 }, bad[64];
	int other = size > 1 ? (rank + 1) % size : -1;
	MPI_Comm w = MPI_COMM_WORLD, c;
	MPI_Group g;
	MPI_Request rq;

	CHECK(size <= 64, "at most 64 ranks");
	for (int i = 0; i < size; i++) {
		counts[i] = 1;
		displs[i] = i;
		bad[i] = i == size - 1 ? -1 : 1;
	}
	EXPECT_CLASS(MPI_Ibarrier(77, &rq), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Ibarrier(w, NULL), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Ibcast(x, 1, MPI_INT, size, w, &rq), MPI_ERR_ROOT);
	EXPECT_CLASS(MPI_Ibcast(x, -1, MPI_INT, 0, w, &rq), MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Ireduce(x, y, 1, MPI_INT, 42, 0, w, &rq), MPI_ERR_OP);
	if (other >= 0 && other != rank)
		EXPECT_CLASS(MPI_Ireduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, other,
					 w, &rq), MPI_ERR_BUFFER);
	EXPECT_CLASS(MPI_Iallreduce(x, y, 1, MPI_DOUBLE, MPI_BAND, w, &rq), MPI_ERR_OP);
	EXPECT_CLASS(MPI_Igather(x, 1, 999, y, 1, MPI_INT, 0, w, &rq), MPI_ERR_TYPE);
	EXPECT_CLASS(MPI_Igatherv(x, 1, MPI_INT, y, NULL, displs, MPI_INT, rank, w, &rq),
		     MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, -1, w, &rq), MPI_ERR_ROOT);
	EXPECT_CLASS(MPI_Iscatterv(x, counts, NULL, MPI_INT, y, 1, MPI_INT, rank, w, &rq),
		     MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Iallgather(NULL, 4, MPI_INT, y, 4, MPI_INT, w, &rq), MPI_ERR_BUFFER);
	EXPECT_CLASS(MPI_Iallgatherv(x, 1, MPI_INT, y, bad, displs, MPI_INT, w, &rq),
		     MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Ialltoall(x, 1, MPI_INT, y, 1, MPI_INT, 77, &rq), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Ialltoallv(MPI_IN_PLACE, counts, displs, MPI_INT, y, counts,
				    displs, MPI_INT, w, &rq), MPI_ERR_BUFFER);
	EXPECT_CLASS(MPI_Ireduce_scatter(x, y, NULL, MPI_INT, MPI_SUM, w, &rq), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Ireduce_scatter_block(x, y, -1, MPI_INT, MPI_SUM, w, &rq),
		     MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Iscan(x, y, 1, MPI_INT, 42, w, &rq), MPI_ERR_OP);
	EXPECT_CLASS(MPI_Iexscan(x, y, 1, 999, MPI_SUM, w, &rq), MPI_ERR_TYPE);
	CHECK_MPI(MPI_Comm_group(w, &g));
	EXPECT_CLASS(MPI_Comm_create_group(w, g, -1, &c), MPI_ERR_TAG);
	EXPECT_CLASS(MPI_Comm_create_group(w, 999, 0, &c), MPI_ERR_GROUP);
	EXPECT_CLASS(MPI_Comm_create_group(w, g, 0, NULL), MPI_ERR_ARG);
	CHECK_MPI(MPI_Group_free(&g));
	/* None of them started anything: a good one still works. */
	x[0] = 1;
	CHECK_MPI(MPI_Iallreduce(x, y, 1, MPI_INT, MPI_SUM, w, &rq));
	CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(y[0] == size, "Iallreduce after the bad calls gave %d", y[0]);
}

static void dummy_op(void *in, void *inout, int *len, MPI_Datatype *t)
{
	(void)in;
	(void)inout;
	(void)len;
	(void)t;
}

/* The other calls, one bad argument each. */
static void the_rest(int size)
{
	int x = 0, flag, idx, out, one = 1, big = size, indices[1];
	MPI_Comm w = MPI_COMM_WORLD, c;
	MPI_Request rq = MPI_REQUEST_NULL, bogus = 4242;
	MPI_Datatype t, types[1] = { MPI_INT };
	MPI_Aint disp[1] = { 0 }, lb, ext;
	MPI_Status st;
	MPI_Group g, ng;
	MPI_Op op = MPI_SUM;
	void *attr;
	char name[MPI_MAX_PROCESSOR_NAME];

	EXPECT_CLASS(MPI_Init(NULL, NULL), MPI_ERR_OTHER);
	EXPECT_CLASS(MPI_Init_thread(NULL, NULL, 9, &x), MPI_ERR_OTHER);
	EXPECT_CLASS(MPI_Query_thread(NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Initialized(NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Finalized(NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Get_processor_name(name, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Get_version(NULL, &x), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_get_attr(77, MPI_TAG_UB, &attr, &flag), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Comm_get_attr(w, 999, &attr, &flag), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_set_errhandler(w, 99), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_get_errhandler(w, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Error_class(-1, &x), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_size(w, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_rank(77, &x), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Comm_dup(w, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_split(w, -3, 0, &c), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_compare(w, 77, &x), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Comm_compare(w, w, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Comm_free(NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Ssend(&x, 1, MPI_INT, big, 0, w), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Rsend(&x, 1, MPI_INT, 0, -2, w), MPI_ERR_TAG);
	EXPECT_CLASS(MPI_Bsend(&x, 1, MPI_INT, big, 0, w), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, 0, 0, w, NULL), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Issend(&x, 1, MPI_INT, 0, 0, 77, &rq), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Irsend(&x, -1, MPI_INT, 0, 0, w, &rq), MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, 0, 0, w, NULL), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Buffer_attach(NULL, 10), MPI_ERR_BUFFER);
	EXPECT_CLASS(MPI_Buffer_detach(NULL, &x), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Sendrecv(&x, 1, MPI_INT, 0, 0, &one, 1, MPI_INT, big, 0, w, &st),
		     MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Sendrecv_replace(&x, 1, MPI_INT, big, 0, 0, 0, w, &st),
		     MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Probe(big, 0, w, &st), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Iprobe(0, 0, w, NULL, &st), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Get_count(NULL, MPI_INT, &x), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Get_count(&st, 999, &x), MPI_ERR_TYPE);
	EXPECT_CLASS(MPI_Waitall(-1, &rq, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Waitany(1, &rq, NULL, &st), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Waitsome(1, &rq, NULL, indices, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Test(&rq, NULL, &st), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Testall(1, &rq, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Testsome(1, &rq, NULL, indices, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Testany(1, &rq, NULL, &flag, &st), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Testall(1, &bogus, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Waitsome(1, &bogus, &out, indices, MPI_STATUSES_IGNORE),
		     MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Waitany(1, &bogus, &idx, &st), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Cancel(&bogus), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Request_free(&bogus), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Type_vector(2, 1, 1, 999, &t), MPI_ERR_TYPE);
	EXPECT_CLASS(MPI_Type_create_struct(-1, &one, disp, types, &t), MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Type_create_struct(1, &one, disp, types, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Type_commit(NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Type_size(999, &x), MPI_ERR_TYPE);
	EXPECT_CLASS(MPI_Type_get_extent(MPI_INT, NULL, &ext), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Type_get_extent(999, &lb, &ext), MPI_ERR_TYPE);
	CHECK_MPI(MPI_Comm_group(w, &g));
	EXPECT_CLASS(MPI_Group_size(g, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Group_rank(g, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Group_incl(g, 1, &big, &ng), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Group_excl(g, 1, NULL, &ng), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Group_translate_ranks(999, 1, &one, g, &x), MPI_ERR_GROUP);
	EXPECT_CLASS(MPI_Comm_group(77, &ng), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Comm_create(w, 999, &c), MPI_ERR_GROUP);
	CHECK_MPI(MPI_Group_free(&g));
	EXPECT_CLASS(MPI_Group_free(&g), MPI_ERR_GROUP);
	EXPECT_CLASS(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Op_create(dummy_op, 1, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Op_free(&op), MPI_ERR_OP);
}

int main(int argc, char **argv)
{
	int rank, size, x = 0, len, flag;
	char s[MPI_MAX_ERROR_STRING];
	MPI_Request rq = 12345;
	MPI_Datatype t;
	MPI_Comm c;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (argc > 1 && !strcmp(argv[1], "fatal")) {
		if (rank == 0)
			MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);	/* rank 0 never comes */
		MPI_Finalize();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "fatal-nbc")) {
		if (rank == 0)
			MPI_Ibcast(&x, 1, MPI_INT, size + 5, MPI_COMM_WORLD, &rq);
		MPI_Barrier(MPI_COMM_WORLD);	/* rank 0 never comes */
		MPI_Finalize();
		return 0;
	}
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
	EXPECT_CLASS(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Send(&x, 1, 999, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
	EXPECT_CLASS(MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
	EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, 77), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Recv(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
		     MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
	EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
	EXPECT_CLASS(MPI_Allreduce(&x, &len, 1, MPI_INT, 42, MPI_COMM_WORLD), MPI_ERR_OP);
	EXPECT_CLASS(MPI_Allreduce(&x, &len, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD),
		     MPI_ERR_OP);
	c = MPI_COMM_WORLD;
	EXPECT_CLASS(MPI_Comm_free(&c), MPI_ERR_COMM);
	CHECK_MPI(MPI_Type_contiguous(4, MPI_INT, &t));
	EXPECT_CLASS(MPI_Send(&x, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
	CHECK_MPI(MPI_Type_free(&t));
	t = MPI_INT;
	EXPECT_CLASS(MPI_Type_free(&t), MPI_ERR_TYPE);
	/* Truncation: the receive is smaller than the message. */
	{
		int two[2] = { 1, 2 }, one = 0;
		MPI_Status st;

		CHECK_MPI(MPI_Isend(two, 2, MPI_INT, rank, 9, MPI_COMM_WORLD, &rq));
		EXPECT_CLASS(MPI_Recv(&one, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &st),
			     MPI_ERR_TRUNCATE);
		CHECK(one == 1, "truncated receive got %d", one);
		CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	}
	CHECK_MPI(MPI_Error_string(MPI_ERR_RANK, s, &len));
	CHECK(len > 0 && strstr(s, "rank"), "error string '%s'", s);
	EXPECT_CLASS(MPI_Error_string(-3, s, &len), MPI_ERR_ARG);
	CHECK_MPI(MPI_Initialized(&flag));
	nonblocking(rank, size);
	the_rest(size);
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("errors: every bad argument got its class\n");
	CHECK_MPI(MPI_Finalize());
	return 0;
}
