// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the alltoall algorithms.
 *
 * pairwise: p - 1 rounds, round k to rank + k and from rank - k, one
 * block each way: one transfer in flight per rank, for long blocks.
 * bruck: ceil(log2 p) rounds, round k sending to rank + 2^k every block
 * whose distance has bit k set (about p / 2 blocks, packed into one
 * message): fewest messages, for short blocks. linear: every transfer
 * posted at once, in one round.
 */
#include "mpi_internal.h"

static void pairwise(struct mpi_sched *s, const struct mpi_comm *c,
		     const void *sendbuf, int sendcount,
		     MPI_Datatype sendtype, void *recvbuf, int recvcount,
		     MPI_Datatype recvtype)
{
	int n = c->size, k, to, from;

	for (k = 0; k < n; k++) {
		to = (c->rank + k) % n;
		from = (c->rank - k + n) % n;
		if (!k) {
			mpi_sched_copy(s, mpi_slot((void *)sendbuf, to,
						   sendcount, sendtype),
				       sendcount, sendtype,
				       mpi_slot(recvbuf, to, recvcount,
						recvtype),
				       recvcount, recvtype);
			continue;
		}
		mpi_sched_send(s, mpi_slot((void *)sendbuf, to, sendcount,
					   sendtype),
			       sendcount, sendtype, to);
		mpi_sched_recv(s, mpi_slot(recvbuf, from, recvcount, recvtype),
			       recvcount, recvtype, from);
		mpi_sched_round(s);
	}
}

static void linear(struct mpi_sched *s, const struct mpi_comm *c,
		   const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype)
{
	int i;

	for (i = 0; i < c->size; i++) {
		const void *src = mpi_slot((void *)sendbuf, i, sendcount,
					   sendtype);
		void *dst = mpi_slot(recvbuf, i, recvcount, recvtype);

		if (i == c->rank) {
			mpi_sched_copy(s, src, sendcount, sendtype, dst,
				       recvcount, recvtype);
			continue;
		}
		mpi_sched_recv(s, dst, recvcount, recvtype, i);
		mpi_sched_send(s, src, sendcount, sendtype, i);
	}
	mpi_sched_round(s);
}

/*
 * Packed blocks, block i of @a being (first) the data for rank + i; a
 * block at index i travels i ranks in all, so at the end index i holds
 * the data from rank - i.
 */
static void bruck(struct mpi_sched *s, const struct mpi_comm *c,
		  const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype)
{
	int n = c->size, i, k, nb;
	int b = (int)((size_t)sendcount * mpi_type(sendtype)->size);
	unsigned char *a = mpi_sched_tmp(s, (size_t)n * b);
	unsigned char *out = mpi_sched_tmp(s, (size_t)(n / 2 + 1) * b);
	unsigned char *in = mpi_sched_tmp(s, (size_t)(n / 2 + 1) * b);

	if (!a || !out || !in)
		return;
	for (i = 0; i < n; i++)
		mpi_sched_copy(s, mpi_slot((void *)sendbuf, (c->rank + i) % n,
					   sendcount, sendtype),
			       sendcount, sendtype, a + (size_t)i * b, b,
			       MPI_BYTE);
	for (k = 1; k < n; k <<= 1) {
		for (i = 1, nb = 0; i < n; i++)
			if (i & k)
				mpi_sched_copy(s, a + (size_t)i * b, b, MPI_BYTE,
					       out + (size_t)nb++ * b, b,
					       MPI_BYTE);
		mpi_sched_send(s, out, nb * b, MPI_BYTE, (c->rank + k) % n);
		mpi_sched_recv(s, in, nb * b, MPI_BYTE, (c->rank - k + n) % n);
		mpi_sched_round(s);
		for (i = 1, nb = 0; i < n; i++)
			if (i & k)
				mpi_sched_copy(s, in + (size_t)nb++ * b, b,
					       MPI_BYTE, a + (size_t)i * b, b,
					       MPI_BYTE);
	}
	for (i = 0; i < n; i++)
		mpi_sched_copy(s, a + (size_t)i * b, b, MPI_BYTE,
			       mpi_slot(recvbuf, (c->rank - i + n) % n,
					recvcount, recvtype),
			       recvcount, recvtype);
	mpi_sched_round(s);
}

void mpi_alltoall_algo(struct mpi_sched *s, const struct mpi_comm *c,
		       const void *sendbuf, int sendcount,
		       MPI_Datatype sendtype, void *recvbuf, int recvcount,
		       MPI_Datatype recvtype, int algo)
{
	if (algo == ALLTOALL_BRUCK)
		bruck(s, c, sendbuf, sendcount, sendtype, recvbuf, recvcount,
		      recvtype);
	else if (algo == ALLTOALL_LINEAR)
		linear(s, c, sendbuf, sendcount, sendtype, recvbuf, recvcount,
		       recvtype);
	else
		pairwise(s, c, sendbuf, sendcount, sendtype, recvbuf,
			 recvcount, recvtype);
}
