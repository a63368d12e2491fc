// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the allreduce algorithms.
 *
 * recursive_doubling: log2 p rounds of exchanging the whole vector with
 * the rank differing in one bit and combining (ranks beyond the power of
 * two folded in before and sent the result after): fewest rounds, for
 * short vectors. The lower partner's data goes on the left, so rank order
 * holds for any operation. rabenseifner: reduce-scatter by recursive
 * halving then allgather by recursive doubling (coll_reduce.c), about
 * 2 m per rank moved and m combined: for long vectors, commutative
 * operations only (recursive doubling otherwise). reduce_bcast: a binomial
 * reduce to rank 0 then a binomial bcast, rank order kept.
 */
#include "mpi_internal.h"

static void recursive_doubling(struct mpi_sched *s, const struct mpi_comm *c,
			       unsigned char *acc, int count,
			       MPI_Datatype type, MPI_Op op)
{
	int bytes = (int)((size_t)count * mpi_type(type)->size), mask, peer;
	unsigned char *in = mpi_sched_tmp(s, bytes);
	struct mpi_fold f;

	if (!in)
		return;
	mpi_fold(c, &f);
	if (f.newrank < 0) {
		mpi_sched_send(s, acc, bytes, MPI_BYTE, c->rank + 1);
		mpi_sched_round(s);
		mpi_sched_recv(s, acc, bytes, MPI_BYTE, c->rank + 1);
		mpi_sched_round(s);
		return;
	}
	if (c->rank < 2 * f.rem) {
		/* in = in op acc, the lower rank's on the left, kept in acc. */
		mpi_sched_recv(s, in, bytes, MPI_BYTE, c->rank - 1);
		mpi_sched_round(s);
		mpi_sched_op(s, op, type, count, in, acc);
		mpi_sched_copy(s, in, bytes, MPI_BYTE, acc, bytes, MPI_BYTE);
	}
	for (mask = 1; mask < f.pof2; mask <<= 1) {
		peer = mpi_fold_rank(&f, f.newrank ^ mask);
		mpi_sched_send(s, acc, bytes, MPI_BYTE, peer);
		mpi_sched_recv(s, in, bytes, MPI_BYTE, peer);
		mpi_sched_round(s);
		if (peer > c->rank) {
			mpi_sched_op(s, op, type, count, acc, in);
		} else {
			mpi_sched_op(s, op, type, count, in, acc);
			mpi_sched_copy(s, in, bytes, MPI_BYTE, acc, bytes,
				       MPI_BYTE);
		}
	}
	if (c->rank < 2 * f.rem) {
		mpi_sched_send(s, acc, bytes, MPI_BYTE, c->rank - 1);
		mpi_sched_round(s);
	}
}

void mpi_allreduce_algo(struct mpi_sched *s, const struct mpi_comm *c,
			const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype type, MPI_Op op, int algo)
{
	int bytes = (int)((size_t)count * mpi_type(type)->size);
	unsigned char *acc;

	if (algo == ALLREDUCE_CAU) {
		mpi_cau_allreduce(s, c, sendbuf, recvbuf, count, type, op, -1);
		return;
	}
	if (algo == ALLREDUCE_REDUCE_BCAST) {
		mpi_reduce_algo(s, c, sendbuf, recvbuf, count, type, op, 0,
				REDUCE_BINOMIAL);
		mpi_bcast_sched(s, c, recvbuf, count, type, 0);
		return;
	}
	acc = mpi_sched_tmp(s, bytes);
	if (!acc)
		return;
	mpi_sched_copy(s, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count,
		       type, acc, bytes, MPI_BYTE);
	mpi_sched_round(s);
	if (algo == ALLREDUCE_RABENSEIFNER && mpi_op_commutative(op))
		mpi_rabenseifner_sched(s, c, acc, count, type, op, false);
	else
		recursive_doubling(s, c, acc, count, type, op);
	mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count, type);
	mpi_sched_round(s);
}
