// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: requests (handles, completion, Wait/Test families,
 * Cancel, Request_free).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

static struct mpi_req **reqs;
static int nr_reqs;

/* Freed requests kept for reuse: no malloc per message. */
#define REQ_CACHE	64
static struct mpi_req *req_cache[REQ_CACHE];
static int nr_cached;

struct mpi_req *mpi_req_new(MPI_Comm comm, bool recv)
{
	struct mpi_req *q = nr_cached ? req_cache[--nr_cached] :
			    malloc(sizeof(*q));

	if (q) {
		memset(q, 0, sizeof(*q));
		q->comm = comm;
		q->recv = recv;
	}
	return q;
}

void mpi_req_put(struct mpi_req *q)
{
	if (!q)
		return;
	free(q->tmp);
	percs_msg_req_free(q->r);
	mpi_sched_free(q->sched);
	if (nr_cached < REQ_CACHE)
		req_cache[nr_cached++] = q;
	else
		free(q);
}

MPI_Request mpi_req_handle(struct mpi_req *q)
{
	int i;

	for (i = 0; i < nr_reqs && reqs[i]; i++)
		;
	if (i == nr_reqs) {
		struct mpi_req **n = realloc(reqs, sizeof(*n) * (nr_reqs + 64));

		if (!n)
			return MPI_REQUEST_NULL;
		memset(n + nr_reqs, 0, sizeof(*n) * 64);
		reqs = n;
		nr_reqs += 64;
	}
	reqs[i] = q;
	return i + 1;
}

struct mpi_req *mpi_req(MPI_Request h)
{
	if (h <= MPI_REQUEST_NULL || h > nr_reqs)
		return NULL;
	return reqs[h - 1];
}

static void status_empty(MPI_Status *st)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	memset(st, 0, sizeof(*st));
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
}

void mpi_status_set(MPI_Status *dst, const MPI_Status *src)
{
	if (dst != MPI_STATUS_IGNORE)
		*dst = *src;
}

/* Advance @q once: 1 done, 0 not yet, or an MPI error class. */
int mpi_req_test(struct mpi_req *q)
{
	struct percs_msg_status ms;
	struct mpi_comm *c;
	int ret;

	if (q->done)
		return 1;
	if (q->sched) {
		/* A collective's status says nothing but its error. */
		if (!mpi_sched_advance(q->sched))
			return 0;
		q->st.MPI_SOURCE = MPI_ANY_SOURCE;
		q->st.MPI_TAG = MPI_ANY_TAG;
		q->st.MPI_ERROR = mpi_sched_error(q->sched);
		q->done = true;
		return 1;
	}
	ret = percs_msg_test(q->r, &ms);
	if (ret < 0) {
		/*
		 * The endpoint failed, not an argument or buffer of this
		 * call (and MPI_ERR_BUFFER, 1, would read as "done").
		 */
		ret = mpi_errno_to_class(ret);
		return ret == MPI_ERR_ARG || ret == MPI_ERR_BUFFER ?
		       MPI_ERR_OTHER : ret;
	}
	if (ret == 0)
		return 0;
	if (q->recv) {
		c = mpi_comm(q->comm);
		q->st.MPI_SOURCE = c ? mpi_comm_source(c, ms.source) : ms.source;
		q->st.MPI_TAG = ms.tag;
		q->st.percs_bytes = ms.len;
		q->st.percs_cancelled = ms.error == -ECANCELED;
		q->st.MPI_ERROR = ms.error == -EMSGSIZE ? MPI_ERR_TRUNCATE :
				  ms.error && ms.error != -ECANCELED ?
				  mpi_errno_to_class(ms.error) : MPI_SUCCESS;
		if (q->st.percs_cancelled) {
			q->st.MPI_SOURCE = MPI_ANY_SOURCE;
			q->st.MPI_TAG = MPI_ANY_TAG;
		}
		if (q->tmp && !q->st.percs_cancelled)
			mpi_unpack(mpi_type(q->type), q->tmp, ms.len, q->ubuf);
	} else if (ms.error) {
		/* A rendezvous send whose receiver died. */
		q->st.MPI_ERROR = mpi_errno_to_class(ms.error);
	}
	free(q->tmp);
	q->tmp = NULL;
	percs_msg_req_free(q->r);
	q->r = NULL;
	q->done = true;
	return 1;
}

int mpi_wait(struct mpi_req *q, MPI_Status *st)
{
	int ret;

	while ((ret = mpi_req_test(q)) == 0)
		mpi_idle();
	if (ret != 1)
		return ret;
	mpi_status_set(st, &q->st);
	return q->st.MPI_ERROR;
}

void mpi_req_release(MPI_Request *h)
{
	struct mpi_req *q = mpi_req(*h);

	if (q) {
		reqs[*h - 1] = NULL;
		mpi_req_put(q);
	}
	*h = MPI_REQUEST_NULL;
}

static int req_check(int count, const MPI_Request *h, const char *fn)
{
	int i;

	if (count < 0)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, fn,
				 "negative count %d", count);
	if (count && !h)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
				 "NULL request array");
	for (i = 0; i < count; i++)
		if (h[i] != MPI_REQUEST_NULL && !mpi_req(h[i]))
			return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
					 "request %d (index %d) is not valid",
					 h[i], i);
	return MPI_SUCCESS;
}

/* Report a finished request's error through its communicator's handler. */
static int req_error(struct mpi_req *q, const char *fn)
{
	if (q->st.MPI_ERROR == MPI_SUCCESS)
		return MPI_SUCCESS;
	return mpi_error(q->comm, q->st.MPI_ERROR, fn, "%s",
			 q->st.MPI_ERROR == MPI_ERR_TRUNCATE ?
			 "the message is longer than the receive buffer" :
			 mpi_why());
}

PERCS_MPI_ALIAS(Wait)
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct mpi_req *q;
	int ret;

	MPI_NEED_INIT("MPI_Wait");
	mpi_progress();
	if (!request)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Wait",
				 "NULL request");
	ret = req_check(1, request, "MPI_Wait");
	if (ret)
		return ret;
	q = mpi_req(*request);
	if (!q) {
		status_empty(status);
		return MPI_SUCCESS;
	}
	while ((ret = mpi_req_test(q)) == 0)
		mpi_idle();
	if (ret != 1)
		return mpi_error(q->comm, ret, "MPI_Wait",
				 "%s", mpi_why());
	mpi_status_set(status, &q->st);
	ret = req_error(q, "MPI_Wait");
	mpi_req_release(request);
	return ret;
}

PERCS_MPI_ALIAS(Test)
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct mpi_req *q;
	int ret;

	MPI_NEED_INIT("MPI_Test");
	mpi_progress();
	if (!request || !flag)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Test",
				 "NULL %s", request ? "flag" : "request");
	ret = req_check(1, request, "MPI_Test");
	if (ret)
		return ret;
	q = mpi_req(*request);
	*flag = 1;
	if (!q) {
		status_empty(status);
		return MPI_SUCCESS;
	}
	ret = mpi_req_test(q);
	if (ret == 0) {
		*flag = 0;
		return MPI_SUCCESS;
	}
	if (ret != 1)
		return mpi_error(q->comm, ret, "MPI_Test",
				 "%s", mpi_why());
	mpi_status_set(status, &q->st);
	ret = req_error(q, "MPI_Test");
	mpi_req_release(request);
	return ret;
}

/* Advance all; the number done (null ones count), or -class. */
static int sweep(int count, MPI_Request *h)
{
	int i, done = 0, ret;

	for (i = 0; i < count; i++) {
		struct mpi_req *q = mpi_req(h[i]);

		if (!q) {
			done++;
			continue;
		}
		ret = mpi_req_test(q);
		if (ret < 0 || ret > 1)
			return -ret;
		done += ret;
	}
	return done;
}

/* Hand out every finished request's status; MPI_ERR_IN_STATUS if one failed. */
static int harvest_all(int count, MPI_Request *h, MPI_Status *sts)
{
	int i, err = MPI_SUCCESS;

	for (i = 0; i < count; i++) {
		struct mpi_req *q = mpi_req(h[i]);

		if (!q) {
			if (sts != MPI_STATUSES_IGNORE)
				status_empty(&sts[i]);
			continue;
		}
		if (sts != MPI_STATUSES_IGNORE)
			sts[i] = q->st;
		if (q->st.MPI_ERROR)
			err = q->st.MPI_ERROR;
		mpi_req_release(&h[i]);
	}
	return err;
}

PERCS_MPI_ALIAS(Waitall)
int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status *statuses)
{
	int ret;

	MPI_NEED_INIT("MPI_Waitall");
	mpi_progress();
	ret = req_check(count, requests, "MPI_Waitall");
	if (ret)
		return ret;
	while ((ret = sweep(count, requests)) >= 0 && ret < count)
		mpi_idle();
	if (ret < 0)
		return mpi_error(MPI_COMM_NULL, -ret, "MPI_Waitall",
				 "%s", mpi_why());
	ret = harvest_all(count, requests, statuses);
	if (ret)
		return mpi_error(MPI_COMM_NULL,
				 statuses == MPI_STATUSES_IGNORE ? ret :
				 MPI_ERR_IN_STATUS, "MPI_Waitall",
				 "a request failed");
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Testall)
int PMPI_Testall(int count, MPI_Request requests[], int *flag,
		 MPI_Status *statuses)
{
	int ret;

	MPI_NEED_INIT("MPI_Testall");
	mpi_progress();
	if (!flag)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testall",
				 "NULL flag");
	ret = req_check(count, requests, "MPI_Testall");
	if (ret)
		return ret;
	ret = sweep(count, requests);
	if (ret < 0)
		return mpi_error(MPI_COMM_NULL, -ret, "MPI_Testall",
				 "%s", mpi_why());
	*flag = ret == count;
	if (!*flag)
		return MPI_SUCCESS;
	ret = harvest_all(count, requests, statuses);
	if (ret)
		return mpi_error(MPI_COMM_NULL,
				 statuses == MPI_STATUSES_IGNORE ? ret :
				 MPI_ERR_IN_STATUS, "MPI_Testall",
				 "a request failed");
	return MPI_SUCCESS;
}

/* One pass of Testany: index of a finished active request, or -1/-class-2. */
static int any_pass(int count, MPI_Request *h, int *active)
{
	int i, ret;

	*active = 0;
	for (i = 0; i < count; i++) {
		struct mpi_req *q = mpi_req(h[i]);

		if (!q)
			continue;
		(*active)++;
		ret = mpi_req_test(q);
		if (ret == 1)
			return i;
		if (ret)
			return -2 - ret;
	}
	return -1;
}

static int take_one(MPI_Request *h, int i, MPI_Status *status,
		    const char *fn)
{
	struct mpi_req *q = mpi_req(h[i]);
	int ret;

	mpi_status_set(status, &q->st);
	ret = req_error(q, fn);
	mpi_req_release(&h[i]);
	return ret;
}

PERCS_MPI_ALIAS(Waitany)
int PMPI_Waitany(int count, MPI_Request requests[], int *index,
		 MPI_Status *status)
{
	int i, active, ret;

	MPI_NEED_INIT("MPI_Waitany");
	mpi_progress();
	if (!index)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Waitany",
				 "NULL index");
	ret = req_check(count, requests, "MPI_Waitany");
	if (ret)
		return ret;
	while ((i = any_pass(count, requests, &active)) == -1 && active)
		mpi_idle();
	if (i < -1)
		return mpi_error(MPI_COMM_NULL, -2 - i, "MPI_Waitany",
				 "%s", mpi_why());
	if (i == -1) {
		*index = MPI_UNDEFINED;
		status_empty(status);
		return MPI_SUCCESS;
	}
	*index = i;
	return take_one(requests, i, status, "MPI_Waitany");
}

PERCS_MPI_ALIAS(Testany)
int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
		 MPI_Status *status)
{
	int i, active, ret;

	MPI_NEED_INIT("MPI_Testany");
	mpi_progress();
	if (!index || !flag)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testany",
				 "NULL %s", index ? "flag" : "index");
	ret = req_check(count, requests, "MPI_Testany");
	if (ret)
		return ret;
	i = any_pass(count, requests, &active);
	if (i < -1)
		return mpi_error(MPI_COMM_NULL, -2 - i, "MPI_Testany",
				 "%s", mpi_why());
	*index = MPI_UNDEFINED;
	if (i == -1) {
		*flag = !active;
		if (!active)
			status_empty(status);
		return MPI_SUCCESS;
	}
	*flag = 1;
	*index = i;
	return take_one(requests, i, status, "MPI_Testany");
}

/* Waitsome (@block) and Testsome: collect every finished request. */
static int some(int incount, MPI_Request *requests, int *outcount,
		int *indices, MPI_Status *statuses, bool block, const char *fn)
{
	int i, n, active, ret, err = MPI_SUCCESS;

	MPI_NEED_INIT(fn);
	mpi_progress();
	if (!outcount || (incount && !indices))
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL %s",
				 outcount ? "indices" : "outcount");
	ret = req_check(incount, requests, fn);
	if (ret)
		return ret;
	for (;;) {
		n = 0;
		active = 0;
		for (i = 0; i < incount; i++) {
			struct mpi_req *q = mpi_req(requests[i]);

			if (!q)
				continue;
			active++;
			ret = mpi_req_test(q);
			if (ret != 0 && ret != 1)
				return mpi_error(q->comm, ret, fn, "%s", mpi_why());
			if (!ret)
				continue;
			if (statuses != MPI_STATUSES_IGNORE)
				statuses[n] = q->st;
			if (q->st.MPI_ERROR)
				err = q->st.MPI_ERROR;
			indices[n++] = i;
			mpi_req_release(&requests[i]);
		}
		if (n || !active || !block)
			break;
		mpi_idle();
	}
	*outcount = active ? n : MPI_UNDEFINED;
	if (err)
		return mpi_error(MPI_COMM_NULL, statuses == MPI_STATUSES_IGNORE ?
				 err : MPI_ERR_IN_STATUS, fn, "a request failed");
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Waitsome)
int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount,
		  int indices[], MPI_Status *statuses)
{
	return some(incount, requests, outcount, indices, statuses, true,
		    "MPI_Waitsome");
}

PERCS_MPI_ALIAS(Testsome)
int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount,
		  int indices[], MPI_Status *statuses)
{
	return some(incount, requests, outcount, indices, statuses, false,
		    "MPI_Testsome");
}

PERCS_MPI_ALIAS(Cancel)
int PMPI_Cancel(MPI_Request *request)
{
	struct mpi_req *q;

	MPI_NEED_INIT("MPI_Cancel");
	if (!request || !(q = mpi_req(*request)))
		return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Cancel",
				 "not a valid request");
	if (q->sched)
		return mpi_error(q->comm, MPI_ERR_REQUEST, "MPI_Cancel",
				 "a collective cannot be cancelled");
	/* Posted receives can be cancelled; sends complete normally. */
	if (q->recv && !q->done && q->r)
		percs_msg_cancel(q->r);
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	if (!status || status == MPI_STATUS_IGNORE || !flag)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG,
				 "MPI_Test_cancelled", "NULL %s",
				 flag ? "status" : "flag");
	*flag = status->percs_cancelled;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Request_free)
int PMPI_Request_free(MPI_Request *request)
{
	struct mpi_req *q;

	MPI_NEED_INIT("MPI_Request_free");
	if (!request || !(q = mpi_req(*request)))
		return mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST,
				 "MPI_Request_free", "not a valid request");
	/* MPI: erroneous for a collective, whose buffers are still in use. */
	if (q->sched)
		return mpi_error(q->comm, MPI_ERR_REQUEST, "MPI_Request_free",
				 "a collective's request cannot be freed");
	/*
	 * A packing buffer must outlive the transfer: finish it first (the
	 * messaging layer frees a contiguous one itself when it completes).
	 */
	if (q->tmp && !q->done)
		mpi_wait(q, MPI_STATUS_IGNORE);
	mpi_req_release(request);
	return MPI_SUCCESS;
}
