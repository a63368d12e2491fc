// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the collectives with per-rank counts (Gatherv, Scatterv,
 * Allgatherv, Alltoallv), the prefix reductions (Scan, Exscan) and
 * Reduce_scatter(_block), blocking and non-blocking, as schedules built
 * from the helpers of coll.c.
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


static void gatherv_sched(struct mpi_sched *s, const struct mpi_comm *c,
			  const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf,
			  const int *recvcounts, const int *displs,
			  MPI_Datatype recvtype, int root)
{
	int i;

	if (c->rank != root) {
		mpi_sched_send(s, sendbuf, sendcount, sendtype, root);
	} else {
		for (i = 0; i < c->size; i++) {
			void *dst = at(recvbuf, displs[i], recvtype);

			if (i != root)
				mpi_sched_recv(s, dst, recvcounts[i], recvtype,
					       i);
			else if (sendbuf != MPI_IN_PLACE)
				mpi_sched_copy(s, sendbuf, sendcount, sendtype,
					       dst, recvcounts[i], recvtype);
		}
	}
	mpi_sched_round(s);
}

/* Blocking when @req is NULL; so are all the calls below. */
static int gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, const int *recvcounts, const int *displs,
		   MPI_Datatype recvtype, int root, MPI_Comm comm,
		   MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, fn);
	if (!ret && sendbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, fn,
				 "MPI_IN_PLACE is for the root only");
	if (!ret && sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype, fn,
				   "send buffer");
	if (!ret && c->rank == root) {
		ret = check_counts(comm, c->size, recvcounts, displs, fn,
				   "receive");
		if (!ret)
			ret = mpi_coll_buf(comm, recvbuf, 0, recvtype, fn,
					   "receive buffer");
	}
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	gatherv_sched(s, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
		      displs, recvtype, root);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, const int recvcounts[], const int displs[],
		 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
		       displs, recvtype, root, comm, NULL, "MPI_Gatherv");
}

PERCS_MPI_ALIAS(Igatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, const int recvcounts[], const int displs[],
		  MPI_Datatype recvtype, int root, MPI_Comm comm,
		  MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Igatherv");

	return ret ? ret : gatherv(sendbuf, sendcount, sendtype, recvbuf,
				   recvcounts, displs, recvtype, root, comm,
				   request, "MPI_Igatherv");
}

void mpi_scatterv_sched(struct mpi_sched *s, const struct mpi_comm *c,
			   const void *sendbuf, const int *counts,
			   const int *displs, MPI_Datatype sendtype,
			   void *recvbuf, int recvcount, MPI_Datatype recvtype,
			   int root)
{
	int i;

	if (c->rank != root)
		mpi_sched_recv(s, recvbuf, recvcount, recvtype, root);
	for (i = 0; i < c->size && c->rank == root; i++) {
		const void *src = at((void *)sendbuf, displs[i], sendtype);

		if (i != root)
			mpi_sched_send(s, src, counts[i], sendtype, i);
		else if (recvbuf != MPI_IN_PLACE)
			mpi_sched_copy(s, src, counts[i], sendtype, recvbuf,
				       recvcount, recvtype);
	}
	mpi_sched_round(s);
}

static int scatterv(const void *sendbuf, const int *sendcounts,
		    const int *displs, MPI_Datatype sendtype, void *recvbuf,
		    int recvcount, MPI_Datatype recvtype, int root,
		    MPI_Comm comm, MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, fn);
	if (!ret && recvbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, fn,
				 "MPI_IN_PLACE is for the root only");
	if (!ret && recvbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, recvbuf, recvcount, recvtype, fn,
				   "receive buffer");
	if (!ret && c->rank == root) {
		ret = check_counts(comm, c->size, sendcounts, displs, fn,
				   "send");
		if (!ret)
			ret = mpi_coll_buf(comm, sendbuf, 0, sendtype, fn,
					   "send buffer");
	}
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_scatterv_sched(s, c, sendbuf, sendcounts, displs, sendtype,
			   recvbuf, recvcount, recvtype, root);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
		  const int displs[], MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int root,
		  MPI_Comm comm)
{
	return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
			recvcount, recvtype, root, comm, NULL, "MPI_Scatterv");
}

PERCS_MPI_ALIAS(Iscatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[],
		   const int displs[], MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, int root,
		   MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Iscatterv");

	return ret ? ret : scatterv(sendbuf, sendcounts, displs, sendtype,
				    recvbuf, recvcount, recvtype, root, comm,
				    request, "MPI_Iscatterv");
}

static int allgatherv(const void *sendbuf, int sendcount,
		      MPI_Datatype sendtype, void *recvbuf,
		      const int *recvcounts, const int *displs,
		      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req,
		      const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int i, ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = check_counts(comm, c->size, recvcounts, displs, fn,
				   "receive");
	if (!ret && sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype, fn,
				   "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, 0, recvtype, fn,
				   "receive buffer");
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE) {
		sendbuf = at(recvbuf, displs[c->rank], recvtype);
		sendcount = recvcounts[c->rank];
		sendtype = recvtype;
	}
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	gatherv_sched(s, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
		      displs, recvtype, 0);
	/* Then every piece from rank 0 down the same tree, side by side. */
	for (i = 0; i < c->size; i++)
		mpi_bcast_recv(s, c, at(recvbuf, displs[i], recvtype),
			       recvcounts[i], recvtype, 0);
	mpi_sched_round(s);
	for (i = 0; i < c->size; i++)
		mpi_bcast_send(s, c, at(recvbuf, displs[i], recvtype),
			       recvcounts[i], recvtype, 0);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount,
		    MPI_Datatype sendtype, void *recvbuf,
		    const int recvcounts[], const int displs[],
		    MPI_Datatype recvtype, MPI_Comm comm)
{
	return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
			  displs, recvtype, comm, NULL, "MPI_Allgatherv");
}

PERCS_MPI_ALIAS(Iallgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount,
		     MPI_Datatype sendtype, void *recvbuf,
		     const int recvcounts[], const int displs[],
		     MPI_Datatype recvtype, MPI_Comm comm,
		     MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Iallgatherv");

	return ret ? ret : allgatherv(sendbuf, sendcount, sendtype, recvbuf,
				      recvcounts, displs, recvtype, comm,
				      request, "MPI_Iallgatherv");
}

static int alltoallv(const void *sendbuf, const int *sendcounts,
		     const int *sdispls, MPI_Datatype sendtype, void *recvbuf,
		     const int *recvcounts, const int *rdispls,
		     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req,
		     const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int i, ret = mpi_coll_comm(comm, fn, &c);

	if (!ret && sendbuf == MPI_IN_PLACE)
		return mpi_error(comm, MPI_ERR_BUFFER, fn,
				 "MPI_IN_PLACE is not supported here");
	if (!ret)
		ret = check_counts(comm, c->size, sendcounts, sdispls, fn,
				   "send");
	if (!ret)
		ret = check_counts(comm, c->size, recvcounts, rdispls, fn,
				   "receive");
	if (!ret)
		ret = mpi_coll_buf(comm, sendbuf, 0, sendtype, fn,
				   "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, 0, recvtype, fn,
				   "receive buffer");
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	/* All pairs at once. */
	for (i = 0; i < c->size; i++) {
		const void *src = at((void *)sendbuf, sdispls[i], sendtype);
		void *dst = at(recvbuf, rdispls[i], recvtype);

		if (i == c->rank) {
			mpi_sched_copy(s, src, sendcounts[i], sendtype, dst,
				       recvcounts[i], recvtype);
			continue;
		}
		mpi_sched_recv(s, dst, recvcounts[i], recvtype, i);
		mpi_sched_send(s, src, sendcounts[i], sendtype, i);
	}
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
		   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
		   const int recvcounts[], const int rdispls[],
		   MPI_Datatype recvtype, MPI_Comm comm)
{
	return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
			 recvcounts, rdispls, recvtype, comm, NULL,
			 "MPI_Alltoallv");
}

PERCS_MPI_ALIAS(Ialltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[],
		    const int sdispls[], MPI_Datatype sendtype,
		    void *recvbuf, const int recvcounts[],
		    const int rdispls[], MPI_Datatype recvtype,
		    MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Ialltoallv");

	return ret ? ret : alltoallv(sendbuf, sendcounts, sdispls, sendtype,
				     recvbuf, recvcounts, rdispls, recvtype,
				     comm, request, "MPI_Ialltoallv");
}

/* Scan (@exclusive 0) and Exscan (1): the prefix passed along in order. */
static int scan(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype type, MPI_Op op, MPI_Comm comm, bool exclusive,
		MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	struct mpi_type *t;
	unsigned char *acc, *mine;
	int bytes, ret = mpi_coll_comm(comm, fn, &c);

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
	bytes = (int)((size_t)count * t->size);
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	acc = mpi_sched_tmp(s, bytes);
	mine = mpi_sched_tmp(s, bytes);
	if (!acc || !mine)
		return mpi_sched_go(s, req, fn);
	if (c->rank == 0) {
		mpi_sched_copy(s, sendbuf, count, type, acc, bytes, MPI_BYTE);
		if (!exclusive)
			mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count,
				       type);
	} else {
		/* acc = ranks 0..r-1; then acc op mine, acc on the left. */
		mpi_sched_copy(s, sendbuf, count, type, mine, bytes, MPI_BYTE);
		mpi_sched_recv(s, acc, bytes, MPI_BYTE, c->rank - 1);
		mpi_sched_round(s);
		if (exclusive)
			mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count,
				       type);
		mpi_sched_op(s, op, type, count, acc, mine);
		if (!exclusive)
			mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count,
				       type);
	}
	if (c->rank + 1 < c->size)
		mpi_sched_send(s, acc, bytes, MPI_BYTE, c->rank + 1);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
	      MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	return scan(sendbuf, recvbuf, count, type, op, comm, false, NULL,
		    "MPI_Scan");
}

PERCS_MPI_ALIAS(Iscan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count,
	       MPI_Datatype type, MPI_Op op, MPI_Comm comm,
	       MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Iscan");

	return ret ? ret : scan(sendbuf, recvbuf, count, type, op, comm,
				false, request, "MPI_Iscan");
}

PERCS_MPI_ALIAS(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	return scan(sendbuf, recvbuf, count, type, op, comm, true, NULL,
		    "MPI_Exscan");
}

PERCS_MPI_ALIAS(Iexscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
		 MPI_Datatype type, MPI_Op op, MPI_Comm comm,
		 MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Iexscan");

	return ret ? ret : scan(sendbuf, recvbuf, count, type, op, comm,
				true, request, "MPI_Iexscan");
}

/*
 * Reduce_scatter (@counts per rank) and Reduce_scatter_block (@block for
 * every rank, @counts NULL): block r of the reduced vector to rank r, by
 * the algorithm coll_select.c picks (coll_reduce_scatter.c).
 */
static int reduce_scatter(const void *sendbuf, void *recvbuf,
			  const int *counts, int block, bool v, MPI_Datatype type,
			  MPI_Op op, MPI_Comm comm, MPI_Request *req,
			  const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	long long total = 0;
	int *cnt, *displs, i, mine, ret = mpi_coll_comm(comm, fn, &c);

	if (ret)
		return ret;
	if (v && !counts)
		return mpi_error(comm, MPI_ERR_ARG, fn, "NULL recvcounts");
	if (!v && (block < 0 || block > 0x7fffffff / c->size))
		return mpi_error(comm, MPI_ERR_COUNT, fn, "bad count %d", block);
	if (v) {
		for (i = 0; i < c->size; i++) {
			if (counts[i] < 0)
				return mpi_error(comm, MPI_ERR_COUNT, fn,
						 "count %d of rank %d is negative",
						 counts[i], i);
			total += counts[i];
		}
		if (total > 0x7fffffff)
			return mpi_error(comm, MPI_ERR_COUNT, fn,
					 "%lld elements in all", total);
	} else {
		total = (long long)block * c->size;
	}
	mine = v ? counts[c->rank] : block;
	if (sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, (int)total, type, fn,
				   "send buffer");
	if (!ret)
		ret = mpi_coll_buf(comm, recvbuf, mine, type, fn,
				   "receive buffer");
	if (!ret)
		ret = mpi_coll_op(comm, op, type, fn);
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;	/* the whole vector, as MPI says */
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	/* Kept with the schedule: a non-blocking call reads them later. */
	cnt = mpi_sched_tmp(s, sizeof(int) * c->size);
	displs = mpi_sched_tmp(s, sizeof(int) * c->size);
	if (!cnt || !displs)
		return mpi_sched_go(s, req, fn);
	for (i = 0, total = 0; i < c->size; i++) {
		cnt[i] = v ? counts[i] : block;
		displs[i] = (int)total;
		total += cnt[i];
	}
	mpi_reduce_scatter_algo(s, c, sendbuf, recvbuf, cnt, displs,
				(int)total, type, op,
				mpi_coll_algo(MPI_COLL_REDUCE_SCATTER, c->size,
					      (size_t)total *
					      mpi_type(type)->size,
					      mpi_op_commutative(op)));
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
			      int recvcount, MPI_Datatype type, MPI_Op op,
			      MPI_Comm comm)
{
	return reduce_scatter(sendbuf, recvbuf, NULL, recvcount, false, type,
			      op, comm, NULL, "MPI_Reduce_scatter_block");
}

PERCS_MPI_ALIAS(Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
			       int recvcount, MPI_Datatype type, MPI_Op op,
			       MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Ireduce_scatter_block");

	return ret ? ret : reduce_scatter(sendbuf, recvbuf, NULL, recvcount,
					  false, type, op, comm, request,
					  "MPI_Ireduce_scatter_block");
}

PERCS_MPI_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
			const int recvcounts[], MPI_Datatype type, MPI_Op op,
			MPI_Comm comm)
{
	return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, true, type, op,
			      comm, NULL, "MPI_Reduce_scatter");
}

PERCS_MPI_ALIAS(Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf,
			 const int recvcounts[], MPI_Datatype type,
			 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Ireduce_scatter");

	return ret ? ret : reduce_scatter(sendbuf, recvbuf, recvcounts, 0,
					  true, type, op, comm, request,
					  "MPI_Ireduce_scatter");
}
