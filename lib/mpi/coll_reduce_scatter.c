// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the reduce_scatter algorithms (Reduce_scatter and
 * Reduce_scatter_block; coll_v.c checks the arguments).
 *
 * reduce_scatterv: the whole vector reduced at rank 0 (linear, in rank
 * order), then block r to rank r as Scatterv does: fewest rounds at the
 * root's cost, for short vectors.  pairwise: p - 1 rounds, round k sending
 * rank + k its block and receiving from rank - k its contribution to this
 * rank's: every rank moves only the blocks of others (total - mine), for
 * long vectors.  The contributions are kept apart and combined at the end
 * from the right, c0 op (c1 op (... op c(p-1))), so an operation that does
 * not commute gets the rank order MPI requires.
 */
#include "mpi_internal.h"

static void reduce_scatterv(struct mpi_sched *s, const struct mpi_comm *c,
			    const void *sendbuf, void *recvbuf,
			    const int *cnt, const int *displs, int total,
			    MPI_Datatype type, MPI_Op op)
{
	void *all = NULL;

	if (c->rank == 0) {
		all = mpi_sched_tmp(s, (size_t)total * mpi_type(type)->extent);
		if (!all)
			return;
	}
	mpi_reduce_sched(s, c, sendbuf, all, total, type, op, 0);
	mpi_scatterv_sched(s, c, all, cnt, displs, type, recvbuf,
			   cnt[c->rank], type, 0);
}

static void pairwise(struct mpi_sched *s, const struct mpi_comm *c,
		     const void *sendbuf, void *recvbuf, const int *cnt,
		     const int *displs, int total, MPI_Datatype type,
		     MPI_Op op)
{
	size_t size = mpi_type(type)->size, mine = (size_t)cnt[c->rank] * size;
	int n = c->size, k, to, from, j;
	unsigned char *packed, *slots, **slot;

	/* The vector packed (in place: recvbuf is both), then the peers'. */
	packed = mpi_sched_tmp(s, (size_t)total * size);
	slots = mpi_sched_tmp(s, mine * (size_t)(n - 1));
	slot = mpi_sched_tmp(s, sizeof(*slot) * (size_t)n);
	if (!packed || !slots || !slot)
		return;
	mpi_sched_copy(s, sendbuf, total, type, packed,
		       (int)((size_t)total * size), MPI_BYTE);
	mpi_sched_round(s);
	for (j = 0; j < n; j++)
		slot[j] = j == c->rank ? packed + (size_t)displs[j] * size :
			  slots + mine * (size_t)(j < c->rank ? j : j - 1);
	for (k = 1; k < n; k++) {
		to = (c->rank + k) % n;
		from = (c->rank - k + n) % n;
		mpi_sched_send(s, packed + (size_t)displs[to] * size,
			       (int)((size_t)cnt[to] * size), MPI_BYTE, to);
		mpi_sched_recv(s, slot[from], (int)mine, MPI_BYTE, from);
		mpi_sched_round(s);
	}
	if (mine) {
		for (j = n - 2; j >= 0; j--)
			mpi_sched_op(s, op, type, cnt[c->rank], slot[j],
				     slot[j + 1]);
	}
	mpi_sched_copy(s, slot[0], (int)mine, MPI_BYTE, recvbuf, cnt[c->rank],
		       type);
	mpi_sched_round(s);
}

void mpi_reduce_scatter_algo(struct mpi_sched *s, const struct mpi_comm *c,
			     const void *sendbuf, void *recvbuf,
			     const int *cnt, const int *displs, int total,
			     MPI_Datatype type, MPI_Op op, int algo)
{
	/* Pairwise moves packed bytes, counted in an int. */
	if (algo == REDUCE_SCATTER_PAIRWISE &&
	    (size_t)total * mpi_type(type)->size <= 0x7fffffff)
		pairwise(s, c, sendbuf, recvbuf, cnt, displs, total, type, op);
	else
		reduce_scatterv(s, c, sendbuf, recvbuf, cnt, displs, total,
				type, op);
}
