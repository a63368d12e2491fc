// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the allgather algorithms, on the receive buffer's slots.
 *
 * ring: p - 1 rounds, each passing to the right the block received from
 * the left: least data per link, for long blocks. recursive_doubling:
 * log2 p rounds exchanging the blocks gathered so far with the rank
 * differing in one bit (a power-of-two p only; the ring otherwise).
 * gather_bcast: a linear gather at rank 0, then a binomial bcast of all.
 */
#include "mpi_internal.h"

static void ring(struct mpi_sched *s, const struct mpi_comm *c,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype)
{
	int n = c->size, k, left = (c->rank - 1 + n) % n;

	for (k = 0; k < n - 1; k++) {
		mpi_sched_send(s, mpi_slot(recvbuf, (c->rank - k + n) % n,
					   recvcount, recvtype),
			       recvcount, recvtype, (c->rank + 1) % n);
		mpi_sched_recv(s, mpi_slot(recvbuf, (left - k + n) % n,
					   recvcount, recvtype),
			       recvcount, recvtype, left);
		mpi_sched_round(s);
	}
}

static void recursive_doubling(struct mpi_sched *s, const struct mpi_comm *c,
			       void *recvbuf, int recvcount,
			       MPI_Datatype recvtype)
{
	int mask, peer, mine, theirs;

	for (mask = 1; mask < c->size; mask <<= 1) {
		peer = c->rank ^ mask;
		mine = c->rank & ~(mask - 1);
		theirs = peer & ~(mask - 1);
		mpi_sched_send(s, mpi_slot(recvbuf, mine, recvcount, recvtype),
			       recvcount * mask, recvtype, peer);
		mpi_sched_recv(s, mpi_slot(recvbuf, theirs, recvcount,
					   recvtype),
			       recvcount * mask, recvtype, peer);
		mpi_sched_round(s);
	}
}

void mpi_allgather_algo(struct mpi_sched *s, const struct mpi_comm *c,
			const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount,
			MPI_Datatype recvtype, int algo)
{
	void *mine = mpi_slot(recvbuf, c->rank, recvcount, recvtype);

	if (algo == ALLGATHER_GATHER_BCAST) {
		mpi_gather_sched(s, c, sendbuf, sendcount, sendtype, recvbuf,
				 recvcount, recvtype, 0);
		mpi_bcast_sched(s, c, recvbuf, recvcount * c->size, recvtype,
				0);
		return;
	}
	if (sendbuf != mine) {
		mpi_sched_copy(s, sendbuf, sendcount, sendtype, mine, recvcount,
			       recvtype);
		mpi_sched_round(s);
	}
	if (algo == ALLGATHER_RECURSIVE_DOUBLING && !(c->size & (c->size - 1)))
		recursive_doubling(s, c, recvbuf, recvcount, recvtype);
	else
		ring(s, c, recvbuf, recvcount, recvtype);
}
