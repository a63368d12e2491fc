// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the collectives Barrier, Bcast, Reduce, Allreduce,
 * Gather, Scatter, Allgather and Alltoall, blocking and non-blocking
 * (I-variants), and what every collective shares.
 *
 * Each algorithm is a schedule builder (nbc.c runs the schedules): the
 * blocking call builds, starts and waits, the non-blocking one builds,
 * starts and returns the request; the argument checks are the same.
 * This file checks the arguments and dispatches: barrier, bcast, reduce,
 * allreduce, allgather and alltoall run the algorithm coll_select.c
 * picks (their builders are in coll_<collective>.c); here are the ones
 * other files share - the binomial bcast tree, the reduce that combines
 * linearly at the root in rank order (so every run combines in the same
 * order, the next rank's data arriving while the previous one is
 * combined), the linear gather - and gather and scatter, linear.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"


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


int mpi_coll_op(MPI_Comm comm, MPI_Op op, MPI_Datatype type, const char *fn)
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

int mpi_coll_reqp(MPI_Comm comm, const MPI_Request *request, const char *fn)
{
	MPI_NEED_INIT(fn);
	if (!request)
		return mpi_error(mpi_comm(comm) ? comm : MPI_COMM_NULL,
				 MPI_ERR_REQUEST, fn, "NULL request");
	return MPI_SUCCESS;
}

void *mpi_slot(void *buf, int i, int count, MPI_Datatype type)
{
	return (unsigned char *)buf + (MPI_Aint)i * count * mpi_type(type)->extent;
}

struct mpi_sched *mpi_coll_new(MPI_Comm comm, const MPI_Request *req,
				const char *fn)
{
	struct mpi_sched *s = mpi_coll_sched(comm, req != NULL);

	if (!s)
		mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	return s;
}

/*
 * The algorithm of a barrier, bcast, reduce or allreduce: "cau" only
 * where it can run (@cau_fits: the CAU combines this (type, op); the
 * communicator got its tree), else the software default.  Every member
 * decides the same.  A non-blocking call (@nbc) never sets the tree up:
 * that takes blocking messages, which could deadlock a program that
 * rightly counts on the call returning at once (MPI orders blocking and
 * non-blocking collectives alike, so whether the tree exists yet is the
 * same on every member).  MPI_SUCCESS or the class of a failed tree setup.
 */
static int pick(MPI_Comm comm, struct mpi_comm *c, enum mpi_coll_kind kind,
		size_t bytes, bool commute, bool cau_fits, bool nbc,
		const char *fn, int *algo)
{
	static const int cau_algo[] = {
		[MPI_COLL_BARRIER] = BARRIER_CAU,
		[MPI_COLL_BCAST] = BCAST_CAU,
		[MPI_COLL_REDUCE] = REDUCE_CAU,
		[MPI_COLL_ALLREDUCE] = ALLREDUCE_CAU,
	};
	bool ok = false;
	int ret;

	*algo = mpi_coll_algo(kind, c->size, bytes, commute);
	if (*algo != cau_algo[kind])
		return MPI_SUCCESS;
	if (cau_fits && c->size > 1) {
		ret = mpi_cau_ready(comm, c, mpi_coll_forced(kind), !nbc, fn,
				    &ok);
		if (ret)
			return ret;
		/* One hub, no tree: the software default is quicker there. */
		if (ok && !mpi_coll_forced(kind) && !mpi_cau_tree(c))
			ok = false;
	}
	if (ok) {
		mpi_g.cau_colls++;
	} else {
		mpi_g.cau_sw++;
		*algo = mpi_coll_sw_algo(kind, c->size, bytes, commute);
	}
	return MPI_SUCCESS;
}

/* Blocking when @req is NULL; so are all the calls below. */
static int barrier(MPI_Comm comm, MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int algo, ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = pick(comm, c, MPI_COLL_BARRIER, 0, true, true, req,
			   fn, &algo);
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_barrier_algo(s, c, algo);
	return mpi_sched_go(s, req, fn);
}

void mpi_fold(const struct mpi_comm *c, struct mpi_fold *f)
{
	for (f->pof2 = 1; f->pof2 * 2 <= c->size; f->pof2 <<= 1)
		;
	f->rem = c->size - f->pof2;
	if (c->rank >= 2 * f->rem)
		f->newrank = c->rank - f->rem;
	else
		f->newrank = c->rank % 2 ? c->rank / 2 : -1;
}

int mpi_fold_rank(const struct mpi_fold *f, int newrank)
{
	return newrank < f->rem ? newrank * 2 + 1 : newrank + f->rem;
}

PERCS_MPI_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
	return barrier(comm, NULL, "MPI_Barrier");
}

PERCS_MPI_ALIAS(Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Ibarrier");

	return ret ? ret : barrier(comm, request, "MPI_Ibarrier");
}

void mpi_bcast_recv(struct mpi_sched *s, const struct mpi_comm *c,
		    void *buf, int count, MPI_Datatype type, int root)
{
	int n = c->size, vr = (c->rank - root + n) % n, mask;

	for (mask = 1; mask < n; mask <<= 1) {
		if (vr & mask) {
			mpi_sched_recv(s, buf, count, type,
				       (vr - mask + root) % n);
			return;
		}
	}
}

void mpi_bcast_send(struct mpi_sched *s, const struct mpi_comm *c,
		    void *buf, int count, MPI_Datatype type, int root)
{
	int n = c->size, vr = (c->rank - root + n) % n, mask = 1;

	/* Below the lowest bit of my relative rank: my subtrees. */
	while (mask < n && !(vr & mask))
		mask <<= 1;
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (vr + mask < n)
			mpi_sched_send(s, buf, count, type,
				       (vr + mask + root) % n);
}

void mpi_bcast_sched(struct mpi_sched *s, const struct mpi_comm *c,
		     void *buf, int count, MPI_Datatype type, int root)
{
	mpi_bcast_recv(s, c, buf, count, type, root);
	mpi_sched_round(s);
	mpi_bcast_send(s, c, buf, count, type, root);
	mpi_sched_round(s);
}

static int bcast(void *buf, int count, MPI_Datatype type, int root,
		 MPI_Comm comm, MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int algo, ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = mpi_coll_buf(comm, buf, count, type, fn, "buffer");
	if (!ret)
		ret = mpi_coll_root(comm, c, root, fn);
	if (!ret)
		ret = pick(comm, c, MPI_COLL_BCAST,
			   (size_t)count * mpi_type(type)->size, true, true,
			   req, fn, &algo);
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_bcast_algo(s, c, buf, count, type, root, algo);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Bcast)
int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
	       MPI_Comm comm)
{
	return bcast(buf, count, type, root, comm, NULL, "MPI_Bcast");
}

PERCS_MPI_ALIAS(Ibcast)
int PMPI_Ibcast(void *buf, int count, MPI_Datatype type, int root,
		MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Ibcast");

	return ret ? ret : bcast(buf, count, type, root, comm, request,
				 "MPI_Ibcast");
}

void mpi_reduce_sched(struct mpi_sched *s, const struct mpi_comm *c,
		      const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype type, MPI_Op op, int root)
{
	struct mpi_type *t = mpi_type(type);
	int bytes = (int)((size_t)count * t->size), i, n = c->size;
	unsigned char *acc, *in[2];

	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;
	if (c->rank != root) {
		mpi_sched_send(s, sendbuf, count, type, root);
		mpi_sched_round(s);
		return;
	}
	acc = mpi_sched_tmp(s, bytes);
	in[0] = mpi_sched_tmp(s, bytes);
	in[1] = mpi_sched_tmp(s, bytes);
	if (!acc || !in[0] || !in[1])
		return;
	/*
	 * Round i brings rank i's data (into acc for rank 0, else into
	 * in[i % 2]) and combines rank i - 1's: rank order, two buffers.
	 */
	for (i = 0; i <= n; i++) {
		unsigned char *dst = i ? in[i % 2] : acc;

		if (i >= 2)
			mpi_sched_op(s, op, type, count, acc, in[(i - 1) % 2]);
		if (i == n)
			break;
		if (i == root)
			mpi_sched_copy(s, sendbuf, count, type, dst, bytes,
				       MPI_BYTE);
		else
			mpi_sched_recv(s, dst, bytes, MPI_BYTE, i);
		mpi_sched_round(s);
	}
	mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count, type);
	mpi_sched_round(s);
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

static int reduce(const void *sendbuf, void *recvbuf, int count,
		  MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
		  MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int algo, ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, fn);
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, fn,
				 "MPI_IN_PLACE is for the root only");
	ret = reduce_checks(sendbuf, recvbuf, count, type, op, comm,
			    c->rank == root, fn);
	if (!ret)
		ret = pick(comm, c, MPI_COLL_REDUCE,
			   (size_t)count * mpi_type(type)->size,
			   mpi_op_commutative(op), mpi_cau_pair(type, op),
			   req, fn, &algo);
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_reduce_algo(s, c, sendbuf, recvbuf, count, type, op, root, algo);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
	return reduce(sendbuf, recvbuf, count, type, op, root, comm, NULL,
		      "MPI_Reduce");
}

PERCS_MPI_ALIAS(Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
		 MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
		 MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Ireduce");

	return ret ? ret : reduce(sendbuf, recvbuf, count, type, op, root,
				  comm, request, "MPI_Ireduce");
}

static int allreduce(const void *sendbuf, void *recvbuf, int count,
		     MPI_Datatype type, MPI_Op op, MPI_Comm comm,
		     MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int algo, ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = reduce_checks(sendbuf, recvbuf, count, type, op, comm,
				    true, fn);
	if (!ret)
		ret = pick(comm, c, MPI_COLL_ALLREDUCE,
			   (size_t)count * mpi_type(type)->size,
			   mpi_op_commutative(op), mpi_cau_pair(type, op),
			   req, fn, &algo);
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_allreduce_algo(s, c, sendbuf, recvbuf, count, type, op, algo);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
		   MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	return allreduce(sendbuf, recvbuf, count, type, op, comm, NULL,
			 "MPI_Allreduce");
}

PERCS_MPI_ALIAS(Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
		    MPI_Datatype type, MPI_Op op, MPI_Comm comm,
		    MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Iallreduce");

	return ret ? ret : allreduce(sendbuf, recvbuf, count, type, op, comm,
				     request, "MPI_Iallreduce");
}

void mpi_gather_sched(struct mpi_sched *s, const struct mpi_comm *c,
		      const void *sendbuf, int sendcount,
		      MPI_Datatype sendtype, void *recvbuf, int recvcount,
		      MPI_Datatype recvtype, int root)
{
	int i;

	if (c->rank != root) {
		mpi_sched_send(s, sendbuf, sendcount, sendtype, root);
	} else {
		for (i = 0; i < c->size; i++) {
			void *dst = mpi_slot(recvbuf, i, recvcount, recvtype);

			if (i != root)
				mpi_sched_recv(s, dst, recvcount, recvtype, i);
			else if (sendbuf != MPI_IN_PLACE)
				mpi_sched_copy(s, sendbuf, sendcount, sendtype,
					       dst, recvcount, recvtype);
		}
	}
	mpi_sched_round(s);
}

static int gather_checks(MPI_Comm comm, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, const void *recvbuf,
			 int recvcount, MPI_Datatype recvtype, bool recv_here,
			 const char *fn)
{
	int ret = MPI_SUCCESS;

	if (sendbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype, fn,
				"send buffer");
	if (!ret && recv_here && recvbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, recvbuf, recvcount, recvtype, fn,
				"receive buffer");
	return ret;
}

static int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  int root, MPI_Comm comm, MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, fn);
	if (!ret)
		ret = gather_checks(comm, sendbuf, sendcount, sendtype,
				    recvbuf, recvcount, recvtype,
				    c->rank == root, fn);
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, fn,
				 "MPI_IN_PLACE is for the root only");
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_gather_sched(s, c, sendbuf, sendcount, sendtype, recvbuf,
			 recvcount, recvtype, root);
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
		MPI_Comm comm)
{
	return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
		      recvtype, root, comm, NULL, "MPI_Gather");
}

PERCS_MPI_ALIAS(Igather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype,
		 int root, MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Igather");

	return ret ? ret : gather(sendbuf, sendcount, sendtype, recvbuf,
				  recvcount, recvtype, root, comm, request,
				  "MPI_Igather");
}

static int scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype,
		   int root, MPI_Comm comm, MPI_Request *req, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int i, ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = mpi_coll_root(comm, c, root, fn);
	if (ret)
		return ret;
	if (c->rank == root)
		ret = mpi_coll_buf(comm, sendbuf, sendcount, sendtype, fn,
				   "send buffer");
	if (!ret && recvbuf != MPI_IN_PLACE)
		ret = mpi_coll_buf(comm, recvbuf, recvcount, recvtype, fn,
				   "receive buffer");
	if (ret)
		return ret;
	if (recvbuf == MPI_IN_PLACE && c->rank != root)
		return mpi_error(comm, MPI_ERR_BUFFER, fn,
				 "MPI_IN_PLACE is for the root only");
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	if (c->rank != root)
		mpi_sched_recv(s, recvbuf, recvcount, recvtype, root);
	for (i = 0; i < c->size && c->rank == root; i++) {
		const void *src = mpi_slot((void *)sendbuf, i, sendcount,
					   sendtype);

		if (i != root)
			mpi_sched_send(s, src, sendcount, sendtype, i);
		else if (recvbuf != MPI_IN_PLACE)
			mpi_sched_copy(s, src, sendcount, sendtype, recvbuf,
				       recvcount, recvtype);
	}
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
		 MPI_Comm comm)
{
	return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
		       recvtype, root, comm, NULL, "MPI_Scatter");
}

PERCS_MPI_ALIAS(Iscatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  int root, MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Iscatter");

	return ret ? ret : scatter(sendbuf, sendcount, sendtype, recvbuf,
				   recvcount, recvtype, root, comm, request,
				   "MPI_Iscatter");
}

static int allgather(const void *sendbuf, int sendcount,
		     MPI_Datatype sendtype, void *recvbuf, int recvcount,
		     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req,
		     const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = gather_checks(comm, sendbuf, sendcount, sendtype,
				    recvbuf, recvcount, recvtype, true, fn);
	if (ret)
		return ret;
	if (sendbuf == MPI_IN_PLACE) {
		/* Every rank's piece is already in its slot. */
		sendbuf = mpi_slot(recvbuf, c->rank, recvcount, recvtype);
		sendcount = recvcount;
		sendtype = recvtype;
	}
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_allgather_algo(s, c, sendbuf, sendcount, sendtype, recvbuf,
			   recvcount, recvtype,
			   mpi_coll_algo(MPI_COLL_ALLGATHER, c->size,
					 (size_t)recvcount *
					 mpi_type(recvtype)->size, true));
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype,
		   MPI_Comm comm)
{
	return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
			 recvtype, comm, NULL, "MPI_Allgather");
}

PERCS_MPI_ALIAS(Iallgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount,
		    MPI_Datatype sendtype, void *recvbuf, int recvcount,
		    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Iallgather");

	return ret ? ret : allgather(sendbuf, sendcount, sendtype, recvbuf,
				     recvcount, recvtype, comm, request,
				     "MPI_Iallgather");
}

static int alltoall(const void *sendbuf, int sendcount,
		    MPI_Datatype sendtype, void *recvbuf, int recvcount,
		    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req,
		    const char *fn)
{
	struct mpi_comm *c;
	struct mpi_sched *s;
	int ret = mpi_coll_comm(comm, fn, &c);

	if (!ret)
		ret = gather_checks(comm, sendbuf, sendcount, sendtype,
				    recvbuf, recvcount, recvtype, true, fn);
	if (ret)
		return ret;
	s = mpi_coll_new(comm, req, fn);
	if (!s)
		return MPI_ERR_NO_MEM;
	if (sendbuf == MPI_IN_PLACE) {
		/* Send from a copy taken now: recvbuf is overwritten. */
		size_t bytes = (size_t)c->size * recvcount *
			       mpi_type(recvtype)->extent;
		void *copy = mpi_sched_tmp(s, bytes);

		if (copy)
			memcpy(copy, recvbuf, bytes);
		sendbuf = copy;
		sendcount = recvcount;
		sendtype = recvtype;
	}
	if (sendbuf)
		mpi_alltoall_algo(s, c, sendbuf, sendcount, sendtype, recvbuf,
				  recvcount, recvtype,
				  mpi_coll_algo(MPI_COLL_ALLTOALL, c->size,
						(size_t)recvcount *
						mpi_type(recvtype)->size,
						true));
	return mpi_sched_go(s, req, fn);
}

PERCS_MPI_ALIAS(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  MPI_Comm comm)
{
	return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
			recvtype, comm, NULL, "MPI_Alltoall");
}

PERCS_MPI_ALIAS(Ialltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount,
		   MPI_Datatype sendtype, void *recvbuf, int recvcount,
		   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	int ret = mpi_coll_reqp(comm, request, "MPI_Ialltoall");

	return ret ? ret : alltoall(sendbuf, sendcount, sendtype, recvbuf,
				    recvcount, recvtype, comm, request,
				    "MPI_Ialltoall");
}
