// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the reduce algorithms, and the reduce-scatter by recursive
 * halving that reduce and allreduce share (Rabenseifner's).
 *
 * linear: every rank to the root, combined there in rank order
 * (mpi_reduce_sched() in coll.c). binomial: a binomial tree, each rank
 * combining its subtree's data, log2 p rounds; rooted at the root for a
 * commutative operation, else at rank 0 (each subtree a run of ranks, so
 * the combination keeps rank order) and then sent to the root.
 * rabenseifner: reduce-scatter by recursive halving, then a binomial
 * gather of the pieces: each rank moves and combines about 2 m instead
 * of m log2 p, for commutative operations only (binomial otherwise).
 *
 * They work on packed copies of the data: a reduction combines packed
 * elements (mpi_sched_op()), and pieces of a vector are byte ranges.
 */
#include "mpi_internal.h"

/* A packed copy of this rank's contribution, or NULL (no memory). */
static unsigned char *packed_input(struct mpi_sched *s, const void *sendbuf,
				   void *recvbuf, int count, MPI_Datatype type)
{
	size_t bytes = (size_t)count * mpi_type(type)->size;
	unsigned char *acc = mpi_sched_tmp(s, bytes);

	if (acc)
		mpi_sched_copy(s, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
			       count, type, acc, (int)bytes, MPI_BYTE);
	return acc;
}

static void binomial(struct mpi_sched *s, const struct mpi_comm *c,
		     const void *sendbuf, void *recvbuf, int count,
		     MPI_Datatype type, MPI_Op op, int root)
{
	int n = c->size, top = mpi_op_commutative(op) ? root : 0;
	int vr = (c->rank - top + n) % n, mask;
	int bytes = (int)((size_t)count * mpi_type(type)->size);
	unsigned char *acc, *in;

	acc = packed_input(s, sendbuf, recvbuf, count, type);
	in = mpi_sched_tmp(s, bytes);
	if (!acc || !in)
		return;
	for (mask = 1; mask < n; mask <<= 1) {
		if (vr & mask) {
			mpi_sched_send(s, acc, bytes, MPI_BYTE,
				       (vr - mask + top) % n);
			mpi_sched_round(s);
			break;
		}
		if (vr + mask < n) {
			/* The child's ranks follow mine: mine on the left. */
			mpi_sched_recv(s, in, bytes, MPI_BYTE,
				       (vr + mask + top) % n);
			mpi_sched_round(s);
			mpi_sched_op(s, op, type, count, acc, in);
		}
	}
	if (c->rank == top && top != root) {
		mpi_sched_send(s, acc, bytes, MPI_BYTE, root);
		mpi_sched_round(s);
	} else if (c->rank == root && top != root) {
		mpi_sched_recv(s, acc, bytes, MPI_BYTE, top);
		mpi_sched_round(s);
	}
	if (c->rank == root) {
		mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count, type);
		mpi_sched_round(s);
	}
}

/* Elements before piece @i of @pof2 pieces of @count. */
static int piece(int count, int pof2, int i)
{
	return i * (count / pof2) + (i < count % pof2 ? i : count % pof2);
}

/* A transfer of packed pieces [@from, @to) with @peer, both ways. */
struct halving {
	struct mpi_sched *s;
	int count, pof2;
	size_t size;
};

static void send_pieces(const struct halving *h, unsigned char *buf,
			int from, int to, int peer)
{
	int lo = piece(h->count, h->pof2, from);
	int n = piece(h->count, h->pof2, to) - lo;

	mpi_sched_send(h->s, buf + lo * h->size, (int)(n * h->size), MPI_BYTE,
		       peer);
}

static void recv_pieces(const struct halving *h, unsigned char *buf,
			int from, int to, int peer)
{
	int lo = piece(h->count, h->pof2, from);
	int n = piece(h->count, h->pof2, to) - lo;

	mpi_sched_recv(h->s, buf + lo * h->size, (int)(n * h->size), MPI_BYTE,
		       peer);
}

void mpi_rabenseifner_sched(struct mpi_sched *s, const struct mpi_comm *c,
			    unsigned char *acc, int count, MPI_Datatype type,
			    MPI_Op op, bool gather)
{
	struct mpi_type *t = mpi_type(type);
	size_t bytes = (size_t)count * t->size;
	struct halving h = { s, count, 0, t->size };
	int mask, send_idx = 0, recv_idx = 0, last_idx, peer, me;
	struct mpi_fold f;
	unsigned char *in = mpi_sched_tmp(s, bytes);

	if (!in)
		return;
	mpi_fold(c, &f);
	h.pof2 = f.pof2;
	me = f.newrank;
	if (me < 0) {
		mpi_sched_send(s, acc, (int)bytes, MPI_BYTE, c->rank + 1);
		mpi_sched_round(s);
		if (!gather) {
			mpi_sched_recv(s, acc, (int)bytes, MPI_BYTE,
				       c->rank + 1);
			mpi_sched_round(s);
		}
		return;
	}
	if (c->rank < 2 * f.rem) {
		mpi_sched_recv(s, in, (int)bytes, MPI_BYTE, c->rank - 1);
		mpi_sched_round(s);
		mpi_sched_op(s, op, type, count, acc, in);
	}
	/* Reduce-scatter: halve the range kept, combine what comes in. */
	last_idx = f.pof2;
	for (mask = 1; mask < f.pof2; mask <<= 1) {
		peer = mpi_fold_rank(&f, me ^ mask);
		if (me < (me ^ mask)) {
			send_idx = recv_idx + f.pof2 / (mask * 2);
			send_pieces(&h, acc, send_idx, last_idx, peer);
			recv_pieces(&h, in, recv_idx, send_idx, peer);
			mpi_sched_round(s);
			mpi_sched_op(s, op, type,
				     piece(count, f.pof2, send_idx) -
				     piece(count, f.pof2, recv_idx),
				     acc + piece(count, f.pof2, recv_idx) * t->size,
				     in + piece(count, f.pof2, recv_idx) * t->size);
		} else {
			recv_idx = send_idx + f.pof2 / (mask * 2);
			send_pieces(&h, acc, send_idx, recv_idx, peer);
			recv_pieces(&h, in, recv_idx, last_idx, peer);
			mpi_sched_round(s);
			mpi_sched_op(s, op, type,
				     piece(count, f.pof2, last_idx) -
				     piece(count, f.pof2, recv_idx),
				     acc + piece(count, f.pof2, recv_idx) * t->size,
				     in + piece(count, f.pof2, recv_idx) * t->size);
		}
		send_idx = recv_idx;
		if (mask * 2 < f.pof2)
			last_idx = recv_idx + f.pof2 / (mask * 2);
	}
	/* Allgather (or gather to newrank 0): the halvings undone. */
	for (mask = f.pof2 >> 1; mask > 0; mask >>= 1) {
		peer = mpi_fold_rank(&f, me ^ mask);
		if (me < (me ^ mask)) {
			if (mask != f.pof2 / 2)
				last_idx += f.pof2 / (mask * 2);
			recv_idx = send_idx + f.pof2 / (mask * 2);
			if (!gather)
				send_pieces(&h, acc, send_idx, recv_idx, peer);
			recv_pieces(&h, acc, recv_idx, last_idx, peer);
			mpi_sched_round(s);
		} else {
			recv_idx = send_idx - f.pof2 / (mask * 2);
			send_pieces(&h, acc, send_idx, last_idx, peer);
			if (gather) {
				mpi_sched_round(s);
				return;
			}
			recv_pieces(&h, acc, recv_idx, send_idx, peer);
			mpi_sched_round(s);
			send_idx = recv_idx;
		}
	}
	if (!gather && c->rank < 2 * f.rem) {
		mpi_sched_send(s, acc, (int)bytes, MPI_BYTE, c->rank - 1);
		mpi_sched_round(s);
	}
}

static void rabenseifner(struct mpi_sched *s, const struct mpi_comm *c,
			 const void *sendbuf, void *recvbuf, int count,
			 MPI_Datatype type, MPI_Op op, int root)
{
	int bytes = (int)((size_t)count * mpi_type(type)->size), top;
	struct mpi_fold f;
	unsigned char *acc = packed_input(s, sendbuf, recvbuf, count, type);

	if (!acc)
		return;
	mpi_sched_round(s);
	mpi_rabenseifner_sched(s, c, acc, count, type, op, true);
	mpi_fold(c, &f);
	top = mpi_fold_rank(&f, 0);
	if (c->rank == top && top != root) {
		mpi_sched_send(s, acc, bytes, MPI_BYTE, root);
		mpi_sched_round(s);
	} else if (c->rank == root && top != root) {
		mpi_sched_recv(s, acc, bytes, MPI_BYTE, top);
		mpi_sched_round(s);
	}
	if (c->rank == root) {
		mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count, type);
		mpi_sched_round(s);
	}
}

void mpi_reduce_algo(struct mpi_sched *s, const struct mpi_comm *c,
		     const void *sendbuf, void *recvbuf, int count,
		     MPI_Datatype type, MPI_Op op, int root, int algo)
{
	if (algo == REDUCE_CAU)
		mpi_cau_allreduce(s, c, sendbuf, recvbuf, count, type, op,
				  root);
	else if (algo == REDUCE_RABENSEIFNER && mpi_op_commutative(op))
		rabenseifner(s, c, sendbuf, recvbuf, count, type, op, root);
	else if (algo == REDUCE_LINEAR)
		mpi_reduce_sched(s, c, sendbuf, recvbuf, count, type, op, root);
	else
		binomial(s, c, sendbuf, recvbuf, count, type, op, root);
}
