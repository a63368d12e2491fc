// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the barrier algorithms, zero-byte messages only.
 *
 * dissemination: ceil(log2 p) rounds, round k to rank + 2^k and from
 * rank - 2^k, any p. recursive_doubling: log2 of the power of two below
 * p rounds of pairwise exchange, the ranks beyond it folded in before and
 * released after (two rounds more). gather_bcast: everyone to rank 0, then
 * a binomial tree back (2 log2 p deep, p - 1 messages at rank 0).
 */
#include "mpi_internal.h"

static void dissemination(struct mpi_sched *s, const struct mpi_comm *c)
{
	int k;

	for (k = 1; k < c->size; k <<= 1) {
		mpi_sched_send(s, NULL, 0, MPI_BYTE, (c->rank + k) % c->size);
		mpi_sched_recv(s, NULL, 0, MPI_BYTE,
			       (c->rank - k + c->size) % c->size);
		mpi_sched_round(s);
	}
}

static void recursive_doubling(struct mpi_sched *s, const struct mpi_comm *c)
{
	struct mpi_fold f;
	int mask, peer;

	mpi_fold(c, &f);
	if (f.newrank < 0) {
		/* Arrived (to the odd rank above), then wait to be released. */
		mpi_sched_send(s, NULL, 0, MPI_BYTE, c->rank + 1);
		mpi_sched_round(s);
		mpi_sched_recv(s, NULL, 0, MPI_BYTE, c->rank + 1);
		mpi_sched_round(s);
		return;
	}
	if (c->rank < 2 * f.rem) {
		mpi_sched_recv(s, NULL, 0, MPI_BYTE, c->rank - 1);
		mpi_sched_round(s);
	}
	for (mask = 1; mask < f.pof2; mask <<= 1) {
		peer = mpi_fold_rank(&f, f.newrank ^ mask);
		mpi_sched_send(s, NULL, 0, MPI_BYTE, peer);
		mpi_sched_recv(s, NULL, 0, MPI_BYTE, peer);
		mpi_sched_round(s);
	}
	if (c->rank < 2 * f.rem) {
		mpi_sched_send(s, NULL, 0, MPI_BYTE, c->rank - 1);
		mpi_sched_round(s);
	}
}

static void gather_bcast(struct mpi_sched *s, const struct mpi_comm *c)
{
	int i;

	if (c->rank)
		mpi_sched_send(s, NULL, 0, MPI_BYTE, 0);
	for (i = 1; i < c->size && !c->rank; i++)
		mpi_sched_recv(s, NULL, 0, MPI_BYTE, i);
	mpi_sched_round(s);
	mpi_bcast_sched(s, c, NULL, 0, MPI_BYTE, 0);
}

void mpi_barrier_algo(struct mpi_sched *s, const struct mpi_comm *c, int algo)
{
	switch (algo) {
	case BARRIER_RECURSIVE_DOUBLING:
		recursive_doubling(s, c);
		break;
	case BARRIER_GATHER_BCAST:
		gather_bcast(s, c);
		break;
	case BARRIER_CAU:
		mpi_cau_barrier(s, c);
		break;
	default:
		dissemination(s, c);
	}
}
