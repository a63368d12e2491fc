// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: blocking collectives over point-to-point, on the
 * communicator's collective context (never matched by its p2p receives).
 *
 * Simple correct algorithms (the CAU and algorithm choice come later):
 * barrier by dissemination, bcast by binomial tree, reduce linearly at
 * the root in rank order (so every run combines in the same order),
 * allreduce = reduce + bcast, gather/scatter linear, allgather = gather +
 * bcast, alltoall by all pairs at once.  One collective at a time per
 * communicator, as MPI's blocking collectives are called, so one tag does:
 * messages between two ranks on one context never overtake each other.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"


int mpi_csend(const void *buf, int count, MPI_Datatype t, int dst,
		 MPI_Comm comm)
{
	struct mpi_req *q;
	int ret = mpi_isend(buf, count, t, dst, MPI_COLL_TAG, comm, true, 0, &q);

	if (ret)
		return ret;
	ret = mpi_wait(q, MPI_STATUS_IGNORE);
	mpi_req_put(q);
	return ret;
}

int mpi_crecv(void *buf, int count, MPI_Datatype t, int src,
		 MPI_Comm comm)
{
	struct mpi_req *q;
	int ret = mpi_irecv(buf, count, t, src, MPI_COLL_TAG, comm, true, &q);

	if (ret)
		return ret;
	ret = mpi_wait(q, MPI_STATUS_IGNORE);
	mpi_req_put(q);
	return ret;
}

/* (sbuf, scount, stype) to (rbuf, rcount, rtype) within this process. */
int mpi_local_copy(const void *sbuf, int scount, MPI_Datatype stype,
		      void *rbuf, int rcount, MPI_Datatype rtype)
{
	struct mpi_type *s = mpi_type(stype), *r = mpi_type(rtype);
	size_t bytes = (size_t)scount * s->size;
	void *tmp;

	if (bytes > (size_t)rcount * r->size)
		return MPI_ERR_TRUNCATE;
	if (sbuf == rbuf && stype == rtype)
		return MPI_SUCCESS;
	tmp = malloc(bytes ? bytes : 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	mpi_pack(s, sbuf, scount, tmp);
	mpi_unpack(r, tmp, bytes, rbuf);
	free(tmp);
	return MPI_SUCCESS;
}

int mpi_coll_comm(MPI_Comm comm, const char *fn, struct mpi_comm **c)
{
	MPI_NEED_INIT(fn);
	*c = mpi_comm(comm);
	if (!*c)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, fn,
				 "no communicator %d", comm);
	return MPI_SUCCESS;
}

int mpi_coll_buf(MPI_Comm comm, const void *buf, int count,
		     MPI_Datatype type, const char *fn, const char *which)
{
	const char *why;
	int ret = mpi_check_data(buf, count, type, &why);

	if (ret)
		return mpi_error(comm, ret, fn, "%s: %s (count %d, datatype %d)",
				 which, why, count, type);
	return MPI_SUCCESS;
}

int mpi_coll_root(MPI_Comm comm, const struct mpi_comm *c, int root,
		      const char *fn)
{
	if (root < 0 || root >= c->size)
		return mpi_error(comm, MPI_ERR_ROOT, fn,
				 "root %d is not in the communicator (size %d)",
				 root, c->size);
	return MPI_SUCCESS;
}

int mpi_coll_done(MPI_Comm comm, int ret, const char *fn)
{
	if (ret)
		return mpi_error(comm, ret, fn, "%s",
				 ret == MPI_ERR_TRUNCATE ?
				 "a message is longer than its receive buffer" :
				 mpi_why());
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
	struct mpi_comm *c;
	struct mpi_req *q;
	int k, ret = mpi_coll_comm(comm, "MPI_Barrier", &c);

	if (ret)
		return ret;
	for (k = 1; k < c->size && !ret; k <<= 1) {
		int to = (c->rank + k) % c->size;
		int from = (c->rank - k + c->size) % c->size;

		ret = mpi_isend(NULL, 0, MPI_BYTE, to, MPI_COLL_TAG, comm, true, 0,
				&q);
		if (ret)
			break;
		ret = mpi_crecv(NULL, 0, MPI_BYTE, from, comm);
		if (!ret)
			ret = mpi_wait(q, MPI_STATUS_IGNORE);
		mpi_req_put(q);
	}
	return mpi_coll_done(comm, ret, "MPI_Barrier");
}

int mpi_bcast(void *buf, int count, MPI_Datatype type, int root,
		 MPI_Comm comm, const struct mpi_comm *c)
{
	int n = c->size, vr = (c->rank - root + n) % n, mask = 1, ret;

	while (mask < n) {
		if (vr & mask) {
			ret = mpi_crecv(buf, count, type, (vr - mask + root) % n,
				    comm);
			if (ret)
				return ret;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (vr + mask < n) {
			ret = mpi_csend(buf, count, type, (vr + mask + root) % n,
				    comm);
			if (ret)
				return ret;
		}
	}
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Bcast)
int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
	       MPI_Comm comm)
{
	struct mpi_comm *c;
	int ret = mpi_coll_comm(comm, "MPI_Bcast", &c);

	if (!ret)
		ret = mpi_coll_buf(comm, buf, count, type, "MPI_Bcast", "buffer");
	if (!ret)
		ret = mpi_coll_root(comm, c, root, "MPI_Bcast");
	if (ret)
		return ret;
	return mpi_coll_done(comm, mpi_bcast(buf, count, type, root, comm, c), "MPI_Bcast");
}

int mpi_coll_op(MPI_Comm comm, MPI_Op op, MPI_Datatype type,
		    const char *fn)
{
	int ret = mpi_op_check(op, type);

	if (ret == MPI_ERR_OP)
		return mpi_error(comm, ret, fn, "no operation %d", op);
	if (ret)
		return mpi_error(comm, MPI_ERR_OP, fn,
				 "operation %d is not defined on datatype %d",
				 op, type);
	return MPI_SUCCESS;
}

int mpi_reduce(const void *sendbuf, void *recvbuf, int count,
		  MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
		  const struct mpi_comm *c)
{
	struct mpi_type *t = mpi_type(type);
	size_t bytes = (size_t)count * t->size;
	unsigned char *acc, *in;
	int i, ret = MPI_SUCCESS;

	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;
	if (c->rank != root)
		return mpi_csend(sendbuf, count, type, root, comm);
	acc = malloc(bytes ? bytes : 1);
	in = malloc(bytes ? bytes : 1);
	if (!acc || !in) {
		free(acc);
		free(in);
		return MPI_ERR_NO_MEM;
	}
	/* Rank order: the same combination order on every run. */
	for (i = 0; i < c->size && !ret; i++) {
		unsigned char *dst = i ? in : acc;

		if (i == root)
			mpi_pack(t, sendbuf, count, dst);
		else
			ret = mpi_crecv(dst, (int)bytes, MPI_BYTE, i, comm);
		if (!ret && i)
			ret = mpi_op_combine(op, type, count, acc, in);
	}
	if (!ret)
		mpi_unpack(t, acc, bytes, recvbuf);
	free(acc);
	free(in);
	return ret;
}

static int reduce_checks(const void *sendbuf, void *recvbuf, int count,
			 MPI_Datatype type, MPI_Op op, MPI_Comm comm,
			 bool recv_here, const char *fn)
{
	int ret = MPI_SUCCESS;

	if (sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, count, type, fn, "send buffer");
	if (!ret && recv_here)
		ret = mpi_coll_buf(comm, recvbuf, count, type, fn,
				"receive buffer");
	if (!ret && !mpi_type(type))
		ret = MPI_ERR_TYPE;
	if (!ret)
		ret = mpi_coll_op(comm, op, type, fn);
	return ret;
}

PERCS_MPI_ALIAS(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
	struct mpi_comm *c;
	int ret = mpi_coll_comm(comm, "MPI_Reduce", &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, "MPI_Reduce");
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, "MPI_Reduce",
				 "MPI_IN_PLACE is for the root only");
	ret = reduce_checks(sendbuf, recvbuf, count, type, op, comm,
			    c->rank == root, "MPI_Reduce");
	if (ret)
		return ret;
	return mpi_coll_done(comm, mpi_reduce(sendbuf, recvbuf, count, type, op, root,
				 comm, c), "MPI_Reduce");
}

PERCS_MPI_ALIAS(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
		   MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	struct mpi_comm *c;
	int ret = mpi_coll_comm(comm, "MPI_Allreduce", &c);

	if (!ret)
		ret = reduce_checks(sendbuf, recvbuf, count, type, op, comm,
				    true, "MPI_Allreduce");
	if (ret)
		return ret;
	ret = mpi_reduce(sendbuf, recvbuf, count, type, op, 0, comm, c);
	if (!ret)
		ret = mpi_bcast(recvbuf, count, type, 0, comm, c);
	return mpi_coll_done(comm, ret, "MPI_Allreduce");
}

void *mpi_slot(void *buf, int i, int count, MPI_Datatype type)
{
	return (unsigned char *)buf + (MPI_Aint)i * count * mpi_type(type)->extent;
}

static int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  int root, MPI_Comm comm, const struct mpi_comm *c)
{
	int i, ret = MPI_SUCCESS;

	if (c->rank != root)
		return mpi_csend(sendbuf, sendcount, sendtype, root, comm);
	for (i = 0; i < c->size && !ret; i++) {
		if (i != root)
			ret = mpi_crecv(mpi_slot(recvbuf, i, recvcount, recvtype),
				    recvcount, recvtype, i, comm);
		else if (sendbuf != MPI_IN_PLACE)
			ret = mpi_local_copy(sendbuf, sendcount, sendtype,
					 mpi_slot(recvbuf, i, recvcount, recvtype),
					 recvcount, recvtype);
	}
	return ret;
}

static int gather_checks(const struct mpi_comm *c, MPI_Comm comm,
			 const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, const void *recvbuf,
			 int recvcount, MPI_Datatype recvtype, bool recv_here,
			 const char *fn)
{
	int ret = MPI_SUCCESS;

	(void)c;
	if (sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype, fn,
				"send buffer");
	if (!ret && recv_here && recvbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, recvbuf, recvcount, recvtype, fn,
				"receive buffer");
	return ret;
}

PERCS_MPI_ALIAS(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
		MPI_Comm comm)
{
	struct mpi_comm *c;
	int ret = mpi_coll_comm(comm, "MPI_Gather", &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, "MPI_Gather");
	if (!ret)
		ret = gather_checks(c, comm, sendbuf, sendcount, sendtype,
				    recvbuf, recvcount, recvtype,
				    c->rank == root, "MPI_Gather");
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, "MPI_Gather",
				 "MPI_IN_PLACE is for the root only");
	return mpi_coll_done(comm, gather(sendbuf, sendcount, sendtype, recvbuf,
				 recvcount, recvtype, root, comm, c),
		    "MPI_Gather");
}

PERCS_MPI_ALIAS(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
		 MPI_Comm comm)
{
	struct mpi_comm *c;
	int i, ret = mpi_coll_comm(comm, "MPI_Scatter", &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, "MPI_Scatter");
	if (ret)
		return ret;
	if (c->rank == root)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype,
				"MPI_Scatter", "send buffer");
	if (!ret && recvbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, recvbuf, recvcount, recvtype,
				"MPI_Scatter", "receive buffer");
	if (ret)
		return ret;
	if (recvbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, "MPI_Scatter",
				 "MPI_IN_PLACE is for the root only");
	if (c->rank != root)
		return mpi_coll_done(comm, mpi_crecv(recvbuf, recvcount, recvtype, root,
					comm), "MPI_Scatter");
	for (i = 0; i < c->size && !ret; i++) {
		const void *s = mpi_slot((void *)sendbuf, i, sendcount, sendtype);

		if (i != root)
			ret = mpi_csend(s, sendcount, sendtype, i, comm);
		else if (recvbuf != MPI_IN_PLACE)
			ret = mpi_local_copy(s, sendcount, sendtype, recvbuf,
					 recvcount, recvtype);
	}
	return mpi_coll_done(comm, ret, "MPI_Scatter");
}

PERCS_MPI_ALIAS(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype,
		   MPI_Comm comm)
{
	struct mpi_comm *c;
	int ret = mpi_coll_comm(comm, "MPI_Allgather", &c);

	if (!ret)
		ret = gather_checks(c, comm, sendbuf, sendcount, sendtype,
				    recvbuf, recvcount, recvtype, true,
				    "MPI_Allgather");
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE) {
		/* Every rank's piece is already in its slot. */
		sendbuf = mpi_slot(recvbuf, c->rank, recvcount, recvtype);
		sendcount = recvcount;
		sendtype = recvtype;
	}
	ret = gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
		     recvtype, 0, comm, c);
	if (!ret)
		ret = mpi_bcast(recvbuf, recvcount * c->size, recvtype, 0, comm, c);
	return mpi_coll_done(comm, ret, "MPI_Allgather");
}

PERCS_MPI_ALIAS(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  MPI_Comm comm)
{
	struct mpi_comm *c;
	struct mpi_req **q;
	void *copy = NULL;
	int i, n, ret = mpi_coll_comm(comm, "MPI_Alltoall", &c), ret2;

	if (!ret)
		ret = gather_checks(c, comm, sendbuf, sendcount, sendtype,
				    recvbuf, recvcount, recvtype, true,
				    "MPI_Alltoall");
	if (ret)
		return ret;
	n = c->size;
	if (sendbuf == MPI_IN_PLACE) {
		size_t bytes = (size_t)n * recvcount * mpi_type(recvtype)->extent;

		copy = malloc(bytes ? bytes : 1);
		if (!copy)
			return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Alltoall",
					 "out of memory");
		memcpy(copy, recvbuf, bytes);
		sendbuf = copy;
		sendcount = recvcount;
		sendtype = recvtype;
	}
	q = calloc((size_t)2 * n, sizeof(*q));
	if (!q) {
		free(copy);
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Alltoall",
				 "out of memory");
	}
	for (i = 0; i < n && !ret; i++) {
		if (i == c->rank)
			continue;
		ret = mpi_irecv(mpi_slot(recvbuf, i, recvcount, recvtype),
				recvcount, recvtype, i, MPI_COLL_TAG, comm, true,
				&q[2 * i]);
		if (!ret)
			ret = mpi_isend(mpi_slot((void *)sendbuf, i, sendcount,
					     sendtype), sendcount, sendtype, i,
					MPI_COLL_TAG, comm, true, 0, &q[2 * i + 1]);
	}
	if (!ret)
		ret = mpi_local_copy(mpi_slot((void *)sendbuf, c->rank, sendcount,
				      sendtype), sendcount, sendtype,
				 mpi_slot(recvbuf, c->rank, recvcount, recvtype),
				 recvcount, recvtype);
	for (i = 0; i < 2 * n; i++) {
		if (!q[i])
			continue;
		ret2 = mpi_wait(q[i], MPI_STATUS_IGNORE);
		if (!ret)
			ret = ret2;
		mpi_req_put(q[i]);
	}
	free(q);
	free(copy);
	return mpi_coll_done(comm, ret, "MPI_Alltoall");
}
