// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: point-to-point calls over libpercs-msg.
 *
 * MPI_Send is eager or rendezvous as the messaging layer decides (it
 * returns once the buffer may be reused); MPI_Ssend and MPI_Issend ask
 * for a synchronous send (it completes once a receive matched it);
 * MPI_Rsend is MPI_Send (a ready send is a valid standard send).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* The checks one by one, each failure reported through the handler. */
static int p2p_report(MPI_Comm comm, const void *buf, int count,
		   MPI_Datatype type, int peer, bool recv, int tag,
		   const char *fn)
{
	struct mpi_comm *c;
	const char *why;
	int ret;

	MPI_NEED_INIT(fn);
	c = mpi_comm(comm);
	if (!c)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, fn,
				 "no communicator %d", comm);
	ret = mpi_check_data(buf, count, type, &why);
	if (ret)
		return mpi_error(comm, ret, fn, "%s (count %d, datatype %d)",
				 why, count, type);
	if (peer != MPI_PROC_NULL && !(recv && peer == MPI_ANY_SOURCE) &&
	    (peer < 0 || peer >= c->size))
		return mpi_error(comm, MPI_ERR_RANK, fn,
				 "rank %d is not in the communicator (size %d)",
				 peer, c->size);
	if (tag > PERCS_MSG_TAG_MAX || (tag < 0 && !(recv && tag == MPI_ANY_TAG)))
		return mpi_error(comm, MPI_ERR_TAG, fn,
				 "tag %d is outside 0..MPI_TAG_UB%s", tag,
				 recv ? " (or MPI_ANY_TAG)" : "");
	return MPI_SUCCESS;
}

/*
 * The checks of every point-to-point call, the usual case in one test:
 * the communicator and the datatype are looked up once, for the caller
 * too (*@cp, *@tp, set when it returns MPI_SUCCESS).
 */
static int p2p_check(MPI_Comm comm, const void *buf, int count,
		     MPI_Datatype type, int peer, bool recv, int tag,
		     const char *fn, struct mpi_comm **cp, struct mpi_type **tp)
{
	struct mpi_comm *c;
	struct mpi_type *t;
	int ret;

	if (mpi_g.initialized && !mpi_g.finalized &&
	    (c = mpi_comm(comm)) && (t = mpi_type(type)) && t->committed &&
	    count >= 0 && (buf || !count || !t->size) &&
	    ((unsigned int)peer < (unsigned int)c->size ||
	     peer == MPI_PROC_NULL || (recv && peer == MPI_ANY_SOURCE)) &&
	    ((tag >= 0 && tag <= PERCS_MSG_TAG_MAX) ||
	     (recv && tag == MPI_ANY_TAG))) {
		*cp = c;
		*tp = t;
		return MPI_SUCCESS;
	}
	ret = p2p_report(comm, buf, count, type, peer, recv, tag, fn);
	*cp = ret ? NULL : mpi_comm(comm);
	*tp = ret ? NULL : mpi_type(type);
	return ret;
}

int mpi_check_p2p(MPI_Comm comm, const void *buf, int count,
		  MPI_Datatype type, int peer, bool recv, int tag,
		  const char *fn)
{
	struct mpi_comm *c;
	struct mpi_type *t;

	return p2p_check(comm, buf, count, type, peer, recv, tag, fn, &c, &t);
}

static void proc_null_done(struct mpi_req *q)
{
	q->done = true;
	q->st.MPI_SOURCE = MPI_PROC_NULL;
	q->st.MPI_TAG = MPI_ANY_TAG;
}

/*
 * A new request for a transfer of @bytes with @peer.  It is done at once
 * for MPI_PROC_NULL; a @staged one (a type that is not contiguous) gets
 * its bounce buffer q->tmp.  Return: MPI_SUCCESS with the request in
 * *@out, or an error class.
 */
static int p2p_begin(MPI_Comm comm, bool recv, int peer, size_t bytes,
		     bool staged, struct mpi_req **out)
{
	struct mpi_req *q = mpi_req_new(comm, recv);

	if (!q)
		return MPI_ERR_NO_MEM;
	if (peer == MPI_PROC_NULL) {
		proc_null_done(q);
	} else if (staged) {
		q->tmp = malloc(bytes);
		if (!q->tmp) {
			mpi_req_put(q);
			return MPI_ERR_NO_MEM;
		}
	}
	*out = q;
	return MPI_SUCCESS;
}

/* The messaging layer's answer to posting *@out: kept, or freed. */
static int p2p_posted(int ret, struct mpi_req **out)
{
	if (!ret)
		return MPI_SUCCESS;
	mpi_req_put(*out);
	*out = NULL;
	return mpi_errno_to_class(ret);
}

int mpi_isend(const void *buf, int count, MPI_Datatype type, int dest,
	      int tag, MPI_Comm comm, unsigned int space, unsigned int flags,
	      struct mpi_req **out)
{
	struct mpi_comm *c = mpi_comm(comm);
	struct mpi_type *t = mpi_type(type);
	size_t bytes = (size_t)count * t->size;
	bool staged = bytes && !mpi_type_contig(t);
	const void *data = buf;
	struct mpi_req *q;
	int ret;

	ret = p2p_begin(comm, false, dest, bytes, staged, out);
	if (ret != MPI_SUCCESS || (*out)->done)
		return ret;
	q = *out;
	if (staged) {
		mpi_pack(t, buf, count, q->tmp);
		data = q->tmp;
	}
	ret = percs_msg_isend(mpi_g.m, data, bytes, (unsigned int)c->world[dest],
			      tag, c->ctx * MPI_SPACES + space, flags, &q->r);
	return p2p_posted(ret, out);
}

int mpi_irecv(void *buf, int count, MPI_Datatype type, int src, int tag,
	      MPI_Comm comm, unsigned int space, struct mpi_req **out)
{
	struct mpi_comm *c = mpi_comm(comm);
	struct mpi_type *t = mpi_type(type);
	size_t bytes = (size_t)count * t->size;
	bool staged = bytes && !mpi_type_contig(t);
	void *data = buf;
	struct mpi_req *q;
	int ret;

	ret = p2p_begin(comm, true, src, bytes, staged, out);
	if (ret != MPI_SUCCESS || (*out)->done)
		return ret;
	q = *out;
	if (staged) {
		/* Unpacked into the user's buffer when it completes. */
		q->ubuf = buf;
		q->count = count;
		q->type = type;
		data = q->tmp;
	}
	ret = percs_msg_irecv(mpi_g.m, data, bytes,
			      src == MPI_ANY_SOURCE ? PERCS_MSG_ANY_SOURCE :
			      c->world[src], tag, c->ctx * MPI_SPACES + space, &q->r);
	return p2p_posted(ret, out);
}

/* A started request as a handle, or the error through the handler. */
static int req_out(MPI_Comm comm, int ret, struct mpi_req *q,
		   MPI_Request *request, const char *fn)
{
	if (ret)
		return mpi_error(comm, ret, fn, "cannot start the transfer");
	*request = mpi_req_handle(q);
	if (*request == MPI_REQUEST_NULL) {
		mpi_wait(q, MPI_STATUS_IGNORE);
		mpi_req_put(q);
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	return MPI_SUCCESS;
}

/* Blocking forms: start, wait, free, report. */
static int blocking(MPI_Comm comm, int ret, struct mpi_req *q,
		    MPI_Status *status, const char *fn)
{
	if (ret)
		return mpi_error(comm, ret, fn, "cannot start the transfer");
	ret = mpi_wait(q, status);
	mpi_req_put(q);
	if (ret)
		return mpi_error(comm, ret, fn, "%s",
				 ret == MPI_ERR_TRUNCATE ?
				 "the message is longer than the receive buffer" :
				 mpi_why());
	return MPI_SUCCESS;
}

/*
 * The blocking calls' fast paths: a contiguous message with a real peer
 * goes straight through the messaging layer, without a request, when it
 * can complete at once (percs_msg_send_now(), percs_msg_recv_spin()).
 * @c and @t: the checked communicator and datatype.
 * Return: 1 done (*@err: MPI_SUCCESS or the error class), 0 take the
 * request path.
 */
static int send_now(const void *buf, int count, const struct mpi_type *t,
		    int dest, int tag, const struct mpi_comm *c, int *err)
{
	size_t bytes = (size_t)count * t->size;
	int ret;

	if (dest == MPI_PROC_NULL || (bytes && !mpi_type_contig(t)))
		return 0;
	ret = percs_msg_send_now(mpi_g.m, buf, bytes,
				 (unsigned int)c->world[dest], tag,
				 c->ctx * MPI_SPACES + MPI_SPACE_P2P);
	if (ret == 0)
		return 0;
	*err = ret < 0 ? mpi_errno_to_class(ret) : MPI_SUCCESS;
	return 1;
}

/* Not while a non-blocking collective needs this rank's progress. */
static int recv_now(void *buf, int count, const struct mpi_type *t, int src,
		    int tag, const struct mpi_comm *c, MPI_Status *status)
{
	size_t bytes = (size_t)count * t->size;
	struct percs_msg_status ms;

	if (src == MPI_PROC_NULL || (bytes && !mpi_type_contig(t)) ||
	    !mpi_sched_none())
		return 0;
	if (percs_msg_recv_spin(mpi_g.m, buf, bytes,
				src == MPI_ANY_SOURCE ? PERCS_MSG_ANY_SOURCE :
				c->world[src], tag,
				c->ctx * MPI_SPACES + MPI_SPACE_P2P, &ms) != 1)
		return 0;
	if (status != MPI_STATUS_IGNORE) {
		MPI_Status st = { 0 };

		st.MPI_SOURCE = mpi_comm_source(c, ms.source);
		st.MPI_TAG = ms.tag;
		st.percs_bytes = ms.len;
		*status = st;
	}
	return 1;
}

static int send_common(const void *buf, int count, MPI_Datatype type,
		       int dest, int tag, MPI_Comm comm, unsigned int flags,
		       const char *fn)
{
	struct mpi_req *q = NULL;
	struct mpi_comm *c;
	struct mpi_type *t;
	int ret = p2p_check(comm, buf, count, type, dest, false, tag, fn,
			    &c, &t);

	if (ret)
		return ret;
	if (!flags && send_now(buf, count, t, dest, tag, c, &ret))
		return ret ? mpi_error(comm, ret, fn, "%s", mpi_why()) :
		       MPI_SUCCESS;
	ret = mpi_isend(buf, count, type, dest, tag, comm, MPI_SPACE_P2P, flags, &q);
	return blocking(comm, ret, q, MPI_STATUS_IGNORE, fn);
}

PERCS_MPI_ALIAS(Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dest,
	      int tag, MPI_Comm comm)
{
	return send_common(buf, count, type, dest, tag, comm, 0, "MPI_Send");
}

PERCS_MPI_ALIAS(Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest,
	       int tag, MPI_Comm comm)
{
	return send_common(buf, count, type, dest, tag, comm, 0, "MPI_Rsend");
}

PERCS_MPI_ALIAS(Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest,
	       int tag, MPI_Comm comm)
{
	return send_common(buf, count, type, dest, tag, comm, PERCS_MSG_F_SYNC,
			   "MPI_Ssend");
}

static int isend_common(const void *buf, int count, MPI_Datatype type,
			int dest, int tag, MPI_Comm comm, unsigned int flags,
			MPI_Request *request, const char *fn)
{
	struct mpi_req *q = NULL;
	int ret = mpi_check_p2p(comm, buf, count, type, dest, false, tag, fn);

	if (ret)
		return ret;
	if (!request)
		return mpi_error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	ret = mpi_isend(buf, count, type, dest, tag, comm, MPI_SPACE_P2P, flags, &q);
	return req_out(comm, ret, q, request, fn);
}

/*
 * A non-blocking send's packets wait for the next call that makes
 * progress to be triggered: a burst of MPI_Isend costs one trigger.
 */
PERCS_MPI_ALIAS(Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dest,
	       int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_common(buf, count, type, dest, tag, comm,
			    PERCS_MSG_F_MORE, request, "MPI_Isend");
}

PERCS_MPI_ALIAS(Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest,
		int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_common(buf, count, type, dest, tag, comm,
			    PERCS_MSG_F_MORE, request, "MPI_Irsend");
}

PERCS_MPI_ALIAS(Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype type, int dest,
		int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_common(buf, count, type, dest, tag, comm,
			    PERCS_MSG_F_SYNC | PERCS_MSG_F_MORE, request,
			    "MPI_Issend");
}

PERCS_MPI_ALIAS(Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
	      MPI_Comm comm, MPI_Status *status)
{
	struct mpi_req *q = NULL;
	struct mpi_comm *c;
	struct mpi_type *t;
	int ret = p2p_check(comm, buf, count, type, source, true, tag,
			    "MPI_Recv", &c, &t);

	if (ret)
		return ret;
	if (recv_now(buf, count, t, source, tag, c, status))
		return MPI_SUCCESS;
	ret = mpi_irecv(buf, count, type, source, tag, comm, MPI_SPACE_P2P, &q);
	return blocking(comm, ret, q, status, "MPI_Recv");
}

PERCS_MPI_ALIAS(Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
	       MPI_Comm comm, MPI_Request *request)
{
	struct mpi_req *q = NULL;
	int ret = mpi_check_p2p(comm, buf, count, type, source, true, tag,
				"MPI_Irecv");

	if (ret)
		return ret;
	if (!request)
		return mpi_error(comm, MPI_ERR_REQUEST, "MPI_Irecv",
				 "NULL request");
	ret = mpi_irecv(buf, count, type, source, tag, comm, MPI_SPACE_P2P, &q);
	return req_out(comm, ret, q, request, "MPI_Irecv");
}

PERCS_MPI_ALIAS(Sendrecv)
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  int dest, int sendtag, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, int source, int recvtag,
		  MPI_Comm comm, MPI_Status *status)
{
	struct mpi_req *s = NULL, *r = NULL;
	int ret, ret2;

	ret = mpi_check_p2p(comm, sendbuf, sendcount, sendtype, dest, false,
			    sendtag, "MPI_Sendrecv");
	if (!ret)
		ret = mpi_check_p2p(comm, recvbuf, recvcount, recvtype, source,
				    true, recvtag, "MPI_Sendrecv");
	if (ret)
		return ret;
	ret = mpi_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm,
			MPI_SPACE_P2P, &r);
	if (ret)
		return mpi_error(comm, ret, "MPI_Sendrecv",
				 "cannot post the receive");
	ret = mpi_isend(sendbuf, sendcount, sendtype, dest, sendtag, comm,
			MPI_SPACE_P2P, 0, &s);
	if (ret) {
		percs_msg_cancel(r->r);
		mpi_wait(r, MPI_STATUS_IGNORE);
		mpi_req_put(r);
		return mpi_error(comm, ret, "MPI_Sendrecv",
				 "cannot start the send");
	}
	ret = mpi_wait(s, MPI_STATUS_IGNORE);
	ret2 = mpi_wait(r, status);
	mpi_req_put(s);
	mpi_req_put(r);
	if (ret || ret2)
		return mpi_error(comm, ret ? ret : ret2, "MPI_Sendrecv", "%s",
				 ret2 == MPI_ERR_TRUNCATE ?
				 "the message is longer than the receive buffer" :
				 mpi_why());
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest,
			  int sendtag, int source, int recvtag, MPI_Comm comm,
			  MPI_Status *status)
{
	struct mpi_type *t;
	void *copy;
	size_t bytes;
	int ret;

	ret = mpi_check_p2p(comm, buf, count, type, dest, false, sendtag,
			    "MPI_Sendrecv_replace");
	if (!ret)
		ret = mpi_check_p2p(comm, buf, count, type, source, true,
				    recvtag, "MPI_Sendrecv_replace");
	if (ret)
		return ret;
	t = mpi_type(type);
	bytes = (size_t)count * t->size;
	copy = malloc(bytes ? bytes : 1);
	if (!copy)
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace",
				 "out of memory");
	/* Send a packed copy, receive into the buffer itself. */
	mpi_pack(t, buf, count, copy);
	ret = PMPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dest, sendtag, buf,
			    count, type, source, recvtag, comm, status);
	free(copy);
	return ret;
}

static int probe_status(MPI_Comm comm, const struct percs_msg_status *ms,
			MPI_Status *status)
{
	MPI_Status st = { 0 };

	st.MPI_SOURCE = mpi_comm_source(mpi_comm(comm), ms->source);
	st.MPI_TAG = ms->tag;
	st.percs_bytes = ms->msg_len;
	mpi_status_set(status, &st);
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
		MPI_Status *status)
{
	struct percs_msg_status ms;
	struct mpi_comm *c;
	int ret = mpi_check_p2p(comm, NULL, 0, MPI_BYTE, source, true, tag,
				"MPI_Iprobe");

	if (ret)
		return ret;
	if (!flag)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Iprobe", "NULL flag");
	c = mpi_comm(comm);
	mpi_progress();
	if (source == MPI_PROC_NULL) {
		MPI_Status st = { .MPI_SOURCE = MPI_PROC_NULL,
				  .MPI_TAG = MPI_ANY_TAG };

		*flag = 1;
		mpi_status_set(status, &st);
		return MPI_SUCCESS;
	}
	ret = percs_msg_iprobe(mpi_g.m, source == MPI_ANY_SOURCE ?
			       PERCS_MSG_ANY_SOURCE : c->world[source], tag,
			       c->ctx * MPI_SPACES + MPI_SPACE_P2P, &ms);
	if (ret < 0)
		return mpi_error(comm, mpi_errno_to_class(ret), "MPI_Iprobe",
				 "%s", mpi_why());
	*flag = ret;
	if (ret)
		probe_status(comm, &ms, status);
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Probe)
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	int flag = 0, ret;

	ret = mpi_check_p2p(comm, NULL, 0, MPI_BYTE, source, true, tag,
			    "MPI_Probe");
	if (ret)
		return ret;
	while (!(ret = PMPI_Iprobe(source, tag, comm, &flag, status)) && !flag)
		mpi_idle();
	return ret;
}

PERCS_MPI_ALIAS(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype type, int *count)
{
	struct mpi_type *t;

	MPI_NEED_INIT("MPI_Get_count");
	if (!status || status == MPI_STATUS_IGNORE || !count)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_count",
				 "NULL %s", count ? "status" : "count");
	t = mpi_type(type);
	if (!t)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Get_count",
				 "no such datatype %d", type);
	if (!t->size)
		*count = status->percs_bytes ? MPI_UNDEFINED : 0;
	else if (status->percs_bytes % t->size)
		*count = MPI_UNDEFINED;
	else
		*count = (int)(status->percs_bytes / t->size);
	return MPI_SUCCESS;
}
