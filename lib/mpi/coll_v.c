// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the collectives with per-rank counts (Gatherv, Scatterv,
 * Allgatherv, Alltoallv), the prefix reductions (Scan, Exscan) and
 * Reduce_scatter(_block), over the helpers of coll.c.
 *
 * Scan and Exscan pass the running prefix along the ranks in order (rank
 * r receives the combination of ranks 0..r-1 from r-1): N-1 steps, but
 * every rank combines in rank order, which a non-commutative operation
 * of the program's own needs.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

static void *at(void *buf, int displ, MPI_Datatype type)
{
	return (unsigned char *)buf + (MPI_Aint)displ * mpi_type(type)->extent;
}

/* Counts and displacements of @n ranks: non-negative, arrays present. */
static int check_counts(MPI_Comm comm, int n, const int *counts,
			const int *displs, const char *fn, const char *which)
{
	int i;

	if (!counts || !displs)
		return mpi_error(comm, MPI_ERR_ARG, fn, "NULL %s %s", which,
				 counts ? "displacements" : "counts");
	for (i = 0; i < n; i++)
		if (counts[i] < 0)
			return mpi_error(comm, MPI_ERR_COUNT, fn,
					 "%s count %d of rank %d is negative",
					 which, counts[i], i);
	return MPI_SUCCESS;
}

static int gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, const int *recvcounts, const int *displs,
		   MPI_Datatype recvtype, int root, MPI_Comm comm,
		   const struct mpi_comm *c)
{
	int i, ret = MPI_SUCCESS;

	if (c->rank != root)
		return mpi_csend(sendbuf, sendcount, sendtype, root, comm);
	for (i = 0; i < c->size && !ret; i++) {
		void *dst = at(recvbuf, displs[i], recvtype);

		if (i != root)
			ret = mpi_crecv(dst, recvcounts[i], recvtype, i, comm);
		else if (sendbuf != MPI_IN_PLACE)
			ret = mpi_local_copy(sendbuf, sendcount, sendtype, dst,
					     recvcounts[i], recvtype);
	}
	return ret;
}

PERCS_MPI_ALIAS(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, const int recvcounts[], const int displs[],
		 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct mpi_comm *c;
	int ret = mpi_coll_comm(comm, "MPI_Gatherv", &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, "MPI_Gatherv");
	if (!ret && sendbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, "MPI_Gatherv",
				 "MPI_IN_PLACE is for the root only");
	if (!ret && sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype,
				   "MPI_Gatherv", "send buffer");
	if (!ret && c->rank == root) {
		ret = check_counts(comm, c->size, recvcounts, displs,
				   "MPI_Gatherv", "receive");
		if (!ret)
			ret = mpi_coll_buf(comm, recvbuf, 0, recvtype,
					   "MPI_Gatherv", "receive buffer");
	}
	if (ret)
		return ret;
	return mpi_coll_done(comm, gatherv(sendbuf, sendcount, sendtype,
					   recvbuf, recvcounts, displs,
					   recvtype, root, comm, c),
			     "MPI_Gatherv");
}

PERCS_MPI_ALIAS(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
		  const int displs[], MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int root,
		  MPI_Comm comm)
{
	struct mpi_comm *c;
	int i, ret = mpi_coll_comm(comm, "MPI_Scatterv", &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, "MPI_Scatterv");
	if (!ret && recvbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, "MPI_Scatterv",
				 "MPI_IN_PLACE is for the root only");
	if (!ret && recvbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, recvbuf, recvcount, recvtype,
				   "MPI_Scatterv", "receive buffer");
	if (!ret && c->rank == root) {
		ret = check_counts(comm, c->size, sendcounts, displs,
				   "MPI_Scatterv", "send");
		if (!ret)
			ret = mpi_coll_buf(comm, sendbuf, 0, sendtype,
					   "MPI_Scatterv", "send buffer");
	}
	if (ret)
		return ret;
	if (c->rank != root)
		return mpi_coll_done(comm, mpi_crecv(recvbuf, recvcount,
						     recvtype, root, comm),
				     "MPI_Scatterv");
	for (i = 0; i < c->size && !ret; i++) {
		const void *s = at((void *)sendbuf, displs[i], sendtype);

		if (i != root)
			ret = mpi_csend(s, sendcounts[i], sendtype, i, comm);
		else if (recvbuf != MPI_IN_PLACE)
			ret = mpi_local_copy(s, sendcounts[i], sendtype, recvbuf,
					     recvcount, recvtype);
	}
	return mpi_coll_done(comm, ret, "MPI_Scatterv");
}

PERCS_MPI_ALIAS(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount,
		    MPI_Datatype sendtype, void *recvbuf,
		    const int recvcounts[], const int displs[],
		    MPI_Datatype recvtype, MPI_Comm comm)
{
	struct mpi_comm *c;
	int i, ret = mpi_coll_comm(comm, "MPI_Allgatherv", &c);

	if (!ret)
		ret = check_counts(comm, c->size, recvcounts, displs,
				   "MPI_Allgatherv", "receive");
	if (!ret && sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype,
				   "MPI_Allgatherv", "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, 0, recvtype,
				   "MPI_Allgatherv", "receive buffer");
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE) {
		sendbuf = at(recvbuf, displs[c->rank], recvtype);
		sendcount = recvcounts[c->rank];
		sendtype = recvtype;
	}
	ret = gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
		      displs, recvtype, 0, comm, c);
	/* Then every rank's piece from rank 0, one broadcast each. */
	for (i = 0; i < c->size && !ret; i++)
		ret = mpi_bcast(at(recvbuf, displs[i], recvtype), recvcounts[i],
				recvtype, 0, comm, c);
	return mpi_coll_done(comm, ret, "MPI_Allgatherv");
}

PERCS_MPI_ALIAS(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
		   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
		   const int recvcounts[], const int rdispls[],
		   MPI_Datatype recvtype, MPI_Comm comm)
{
	struct mpi_comm *c;
	struct mpi_req **q;
	int i, n, ret = mpi_coll_comm(comm, "MPI_Alltoallv", &c), ret2;

	if (!ret && sendbuf == MPI_IN_PLACE)
		return mpi_error(comm, MPI_ERR_BUFFER, "MPI_Alltoallv",
				 "MPI_IN_PLACE is not supported here");
	if (!ret)
		ret = check_counts(comm, c->size, sendcounts, sdispls,
				   "MPI_Alltoallv", "send");
	if (!ret)
		ret = check_counts(comm, c->size, recvcounts, rdispls,
				   "MPI_Alltoallv", "receive");
	if (!ret)
		ret = mpi_coll_buf(comm, sendbuf, 0, sendtype, "MPI_Alltoallv",
				   "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, 0, recvtype, "MPI_Alltoallv",
				   "receive buffer");
	if (ret)
		return ret;
	n = c->size;
	q = calloc((size_t)2 * n, sizeof(*q));
	if (!q)
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Alltoallv",
				 "out of memory");
	for (i = 0; i < n && !ret; i++) {
		if (i == c->rank)
			continue;
		ret = mpi_irecv(at(recvbuf, rdispls[i], recvtype), recvcounts[i],
				recvtype, i, MPI_COLL_TAG, comm, true, &q[2 * i]);
		if (!ret)
			ret = mpi_isend(at((void *)sendbuf, sdispls[i], sendtype),
					sendcounts[i], sendtype, i, MPI_COLL_TAG,
					comm, true, 0, &q[2 * i + 1]);
	}
	if (!ret)
		ret = mpi_local_copy(at((void *)sendbuf, sdispls[c->rank], sendtype),
				     sendcounts[c->rank], sendtype,
				     at(recvbuf, rdispls[c->rank], recvtype),
				     recvcounts[c->rank], recvtype);
	for (i = 0; i < 2 * n; i++) {
		if (!q[i])
			continue;
		ret2 = mpi_wait(q[i], MPI_STATUS_IGNORE);
		if (!ret)
			ret = ret2;
		mpi_req_put(q[i]);
	}
	free(q);
	return mpi_coll_done(comm, ret, "MPI_Alltoallv");
}

/* Scan (@exclusive 0) and Exscan (1): the prefix passed along in order. */
static int scan(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype type, MPI_Op op, MPI_Comm comm, bool exclusive,
		const char *fn)
{
	struct mpi_comm *c;
	struct mpi_type *t;
	unsigned char *acc = NULL, *mine = NULL;
	size_t bytes;
	int ret = mpi_coll_comm(comm, fn, &c);

	if (!ret && sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, count, type, fn, "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, count, type, fn,
				   "receive buffer");
	if (!ret)
		ret = mpi_coll_op(comm, op, type, fn);
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;
	t = mpi_type(type);
	bytes = (size_t)count * t->size;
	acc = malloc(bytes ? bytes : 1);
	mine = malloc(bytes ? bytes : 1);
	if (!acc || !mine) {
		free(acc);
		free(mine);
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	mpi_pack(t, sendbuf, count, mine);
	if (c->rank == 0) {
		memcpy(acc, mine, bytes);
		if (!exclusive)
			mpi_unpack(t, acc, bytes, recvbuf);
	} else {
		/* acc = ranks 0..r-1; then acc op mine, acc on the left. */
		ret = mpi_crecv(acc, (int)bytes, MPI_BYTE, c->rank - 1, comm);
		if (!ret && exclusive)
			mpi_unpack(t, acc, bytes, recvbuf);
		if (!ret)
			ret = mpi_op_combine(op, type, count, acc, mine);
		if (!ret && !exclusive)
			mpi_unpack(t, acc, bytes, recvbuf);
	}
	if (!ret && c->rank + 1 < c->size)
		ret = mpi_csend(acc, (int)bytes, MPI_BYTE, c->rank + 1, comm);
	free(acc);
	free(mine);
	return mpi_coll_done(comm, ret, fn);
}

PERCS_MPI_ALIAS(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
	      MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	return scan(sendbuf, recvbuf, count, type, op, comm, false,
		    "MPI_Scan");
}

PERCS_MPI_ALIAS(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	return scan(sendbuf, recvbuf, count, type, op, comm, true,
		    "MPI_Exscan");
}

PERCS_MPI_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
			      int recvcount, MPI_Datatype type, MPI_Op op,
			      MPI_Comm comm)
{
	struct mpi_comm *c;
	struct mpi_type *t;
	void *all = NULL;
	int ret = mpi_coll_comm(comm, "MPI_Reduce_scatter_block", &c), total;

	if (ret)
		return ret;
	if (recvcount < 0 || recvcount > 0x7fffffff / c->size)
		return mpi_error(comm, MPI_ERR_COUNT, "MPI_Reduce_scatter_block",
				 "bad count %d", recvcount);
	total = recvcount * c->size;
	if (sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, total, type,
				   "MPI_Reduce_scatter_block", "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, recvcount, type,
				   "MPI_Reduce_scatter_block", "receive buffer");
	if (!ret)
		ret = mpi_coll_op(comm, op, type, "MPI_Reduce_scatter_block");
	if (ret)
		return ret;
	t = mpi_type(type);
	/* In place: the input is the whole vector in recvbuf. */
	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;
	if (c->rank == 0) {
		all = malloc((size_t)total * t->extent + 1);
		if (!all)
			return mpi_error(comm, MPI_ERR_NO_MEM,
					 "MPI_Reduce_scatter_block",
					 "out of memory");
	}
	ret = mpi_reduce(sendbuf, all, total, type, op, 0, comm, c);
	if (!ret && c->rank == 0) {
		int i;

		for (i = 1; i < c->size && !ret; i++)
			ret = mpi_csend(mpi_slot(all, i, recvcount, type),
					recvcount, type, i, comm);
		if (!ret)
			ret = mpi_local_copy(all, recvcount, type, recvbuf,
					     recvcount, type);
	} else if (!ret) {
		ret = mpi_crecv(recvbuf, recvcount, type, 0, comm);
	}
	free(all);
	return mpi_coll_done(comm, ret, "MPI_Reduce_scatter_block");
}

PERCS_MPI_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
			const int recvcounts[], MPI_Datatype type, MPI_Op op,
			MPI_Comm comm)
{
	static const char fn[] = "MPI_Reduce_scatter";
	struct mpi_comm *c;
	struct mpi_type *t;
	long long total = 0;
	void *all = NULL;
	int *displs, i, ret = mpi_coll_comm(comm, fn, &c);

	if (ret)
		return ret;
	if (!recvcounts)
		return mpi_error(comm, MPI_ERR_ARG, fn, "NULL recvcounts");
	for (i = 0; i < c->size; i++) {
		if (recvcounts[i] < 0)
			return mpi_error(comm, MPI_ERR_COUNT, fn,
					 "count %d of rank %d is negative",
					 recvcounts[i], i);
		total += recvcounts[i];
	}
	if (total > 0x7fffffff)
		return mpi_error(comm, MPI_ERR_COUNT, fn, "%lld elements in all",
				 total);
	if (sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, (int)total, type, fn,
				   "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, recvcounts[c->rank], type, fn,
				   "receive buffer");
	if (!ret)
		ret = mpi_coll_op(comm, op, type, fn);
	if (ret)
		return ret;
	t = mpi_type(type);
	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;	/* the whole vector, as MPI says */
	displs = malloc(sizeof(int) * c->size);
	if (c->rank == 0)
		all = malloc((size_t)total * t->extent + 1);
	if (!displs || (c->rank == 0 && !all)) {
		free(displs);
		free(all);
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	for (i = 0, total = 0; i < c->size; i++) {
		displs[i] = (int)total;
		total += recvcounts[i];
	}
	ret = mpi_reduce(sendbuf, all, (int)total, type, op, 0, comm, c);
	/* Then block r of the result to rank r, as Scatterv would. */
	if (!ret && c->rank == 0) {
		for (i = 1; i < c->size && !ret; i++)
			ret = mpi_csend(at(all, displs[i], type), recvcounts[i],
					type, i, comm);
		if (!ret)
			ret = mpi_local_copy(all, recvcounts[0], type, recvbuf,
					     recvcounts[0], type);
	} else if (!ret) {
		ret = mpi_crecv(recvbuf, recvcounts[c->rank], type, 0, comm);
	}
	free(displs);
	free(all);
	return mpi_coll_done(comm, ret, fn);
}
