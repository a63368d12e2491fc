// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the schedule engine every collective runs on (in the
 * style of libNBC).
 *
 * A schedule is a list of rounds; a round is a list of steps - a send, a
 * receive, a local copy or a reduction of two local buffers - executed in
 * order when the round starts (sends and receives are only posted then).
 * The next round starts once every transfer of the previous one has
 * completed, so a step may use what an earlier round received.
 *
 * A blocking collective builds its schedule, starts it and waits for it;
 * a non-blocking one returns a request for it.  Started schedules sit on
 * a list that every MPI progress call advances (mpi_progress(): the
 * Test and Wait families, Iprobe and every wait loop of the library, via
 * mpi_idle()), so a non-blocking collective moves on while the program
 * waits for something else.
 *
 * Each schedule carries the message space and tag its transfers use:
 * blocking collectives MPI_SPACE_COLL with tag 0 (one at a time per
 * communicator), non-blocking ones MPI_SPACE_NBC with the communicator's
 * next sequence number, so several may be outstanding and complete in
 * any order; between two ranks their messages never overtake each other,
 * which keeps the transfers of one schedule matched in order.
 *
 * A rank of the communicator that died (the launcher tells the messaging
 * layer, lib/msg/failure.c) fails every schedule on it at its next
 * advance with MPI_ERR_PROC_ABORTED, on every rank and whatever the
 * algorithm: the transfers with the dead rank fail by themselves, but a
 * rank waiting for a live one that stopped because of it would wait
 * forever.  The failed schedule then abandons its transfers (posted
 * receives cancelled, sends let go) instead of waiting for them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

enum step_kind { STEP_SEND, STEP_RECV, STEP_COPY, STEP_OP, STEP_CAU,
		 STEP_END };

/*
 * One step: a transfer (s* or r* and @peer), a copy (s* to r*),
 * r* = r* @op s* on packed elements (STEP_OP, s* is clobbered), or a
 * collective on a CAU tree (STEP_CAU: @cau).
 */
struct step {
	enum step_kind kind;
	int peer;
	const void *sbuf;
	int scount;
	MPI_Datatype stype;
	void *rbuf;
	int rcount;
	MPI_Datatype rtype;
	MPI_Op op;
	struct mpi_cau_op cau;
};

/**
 * struct mpi_sched - a collective in progress
 * @comm: its communicator
 * @space: the message space of its transfers (MPI_SPACE_*)
 * @tag: the tag of its transfers
 * @steps: every round's steps, a STEP_END after each round
 * @nsteps: entries of @steps
 * @cap: room in @steps
 * @pos: the first step not executed yet
 * @reqs: the transfers of the current round not seen complete yet
 * @nreqs: entries of @reqs
 * @creq: the current round's CAU collective, NULL once seen complete
 * @tmp: buffers freed with the schedule
 * @ntmp: entries of @tmp
 * @err: the first error (an MPI class), MPI_SUCCESS so far
 * @failures: the job's failed ranks when it last looked
 * @done: every round completed (or an error stopped it)
 * @next: the next started schedule (mpi_progress()'s list)
 * @linked: on that list
 */
struct mpi_sched {
	MPI_Comm comm;
	unsigned int space;
	int tag;
	struct step *steps;
	int nsteps, cap;
	int pos;
	struct mpi_req **reqs;
	int nreqs;
	struct percs_coll_req *creq;
	void **tmp;
	int ntmp;
	int err;
	unsigned int failures;
	bool done;
	struct mpi_sched *next;
	bool linked;
};

static struct mpi_sched *active;

struct mpi_sched *mpi_coll_sched(MPI_Comm comm, bool nbc)
{
	struct mpi_comm *c = mpi_comm(comm);

	if (!nbc)
		return mpi_sched_new(comm, MPI_SPACE_COLL, 0);
	/* Started in the same order everywhere: the same tag everywhere. */
	c->nbc_seq = (c->nbc_seq + 1) & PERCS_MSG_TAG_MAX;
	return mpi_sched_new(comm, MPI_SPACE_NBC, (int)c->nbc_seq);
}

struct mpi_sched *mpi_sched_new(MPI_Comm comm, unsigned int space, int tag)
{
	struct mpi_sched *s = calloc(1, sizeof(*s));

	if (s) {
		s->comm = comm;
		s->space = space;
		s->tag = tag;
	}
	return s;
}

static struct step *step_add(struct mpi_sched *s, enum step_kind kind)
{
	if (s->nsteps == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		struct step *n = realloc(s->steps, sizeof(*n) * cap);

		if (!n) {
			s->err = MPI_ERR_NO_MEM;
			return NULL;
		}
		s->steps = n;
		s->cap = cap;
	}
	memset(&s->steps[s->nsteps], 0, sizeof(s->steps[0]));
	s->steps[s->nsteps].kind = kind;
	return &s->steps[s->nsteps++];
}

void mpi_sched_send(struct mpi_sched *s, const void *buf, int count,
		    MPI_Datatype type, int peer)
{
	struct step *st = step_add(s, STEP_SEND);

	if (st)
		*st = (struct step){ .kind = STEP_SEND, .peer = peer,
				     .sbuf = buf, .scount = count, .stype = type };
}

void mpi_sched_recv(struct mpi_sched *s, void *buf, int count,
		    MPI_Datatype type, int peer)
{
	struct step *st = step_add(s, STEP_RECV);

	if (st)
		*st = (struct step){ .kind = STEP_RECV, .peer = peer,
				     .rbuf = buf, .rcount = count, .rtype = type };
}

void mpi_sched_copy(struct mpi_sched *s, const void *sbuf, int scount,
		    MPI_Datatype stype, void *rbuf, int rcount,
		    MPI_Datatype rtype)
{
	struct step *st = step_add(s, STEP_COPY);

	if (st)
		*st = (struct step){ .kind = STEP_COPY, .sbuf = sbuf,
				     .scount = scount, .stype = stype,
				     .rbuf = rbuf, .rcount = rcount,
				     .rtype = rtype };
}

void mpi_sched_op(struct mpi_sched *s, MPI_Op op, MPI_Datatype type,
		  int count, void *acc, void *in)
{
	struct step *st = step_add(s, STEP_OP);

	if (st)
		*st = (struct step){ .kind = STEP_OP, .op = op, .sbuf = in,
				     .rbuf = acc, .rcount = count,
				     .rtype = type };
}

void mpi_sched_cau(struct mpi_sched *s, const struct mpi_cau_op *op)
{
	struct step *st = step_add(s, STEP_CAU);

	if (st)
		st->cau = *op;
}

/* Starts a STEP_CAU's collective; 0 or a -errno. */
static int cau_start(struct mpi_sched *s, const struct mpi_cau_op *o)
{
	switch (o->kind) {
	case MPI_CAU_BARRIER:
		return percs_cau_ibarrier(o->tree, &s->creq);
	case MPI_CAU_BCAST:
		return percs_cau_ibcast(o->tree, o->root, o->buf, o->count,
					&s->creq);
	default:
		return percs_cau_iallreduce(o->tree, o->buf, o->buf, o->count,
					    o->type, o->op, &s->creq);
	}
}

void mpi_sched_round(struct mpi_sched *s)
{
	/* An empty round would cost a progress pass for nothing. */
	if (s->nsteps && s->steps[s->nsteps - 1].kind != STEP_END)
		step_add(s, STEP_END);
}

void *mpi_sched_tmp(struct mpi_sched *s, size_t bytes)
{
	void **n = realloc(s->tmp, sizeof(*n) * (s->ntmp + 1));
	void *p;

	if (!n) {
		s->err = MPI_ERR_NO_MEM;
		return NULL;
	}
	s->tmp = n;
	p = malloc(bytes ? bytes : 1);
	if (!p) {
		s->err = MPI_ERR_NO_MEM;
		return NULL;
	}
	s->tmp[s->ntmp++] = p;
	return p;
}

/* Post or execute the steps of the next round. */
static void round_start(struct mpi_sched *s)
{
	int end, last_send = -1, i, ret;

	for (end = s->pos; end < s->nsteps && s->steps[end].kind != STEP_END;
	     end++)
		if (s->steps[end].kind == STEP_SEND)
			last_send = end;
	free(s->reqs);
	s->reqs = calloc(end - s->pos + 1, sizeof(*s->reqs));
	s->nreqs = 0;
	if (!s->reqs) {
		s->err = MPI_ERR_NO_MEM;
		return;
	}
	for (i = s->pos; i < end && !s->err; i++) {
		struct step *st = &s->steps[i];
		struct mpi_req *q = NULL;

		switch (st->kind) {
		case STEP_SEND:
			/* A round's sends cost one trigger, at its last. */
			ret = mpi_isend(st->sbuf, st->scount, st->stype,
					st->peer, s->tag, s->comm, s->space,
					i == last_send ? 0 : PERCS_MSG_F_MORE,
					&q);
			break;
		case STEP_RECV:
			ret = mpi_irecv(st->rbuf, st->rcount, st->rtype,
					st->peer, s->tag, s->comm, s->space, &q);
			break;
		case STEP_COPY:
			ret = mpi_local_copy(st->sbuf, st->scount, st->stype,
					     st->rbuf, st->rcount, st->rtype);
			break;
		case STEP_OP:
			ret = mpi_op_combine(st->op, st->rtype, st->rcount,
					     st->rbuf, (void *)st->sbuf);
			break;
		case STEP_CAU:
			ret = mpi_errno_to_class(cau_start(s, &st->cau));
			break;
		default:
			ret = MPI_ERR_INTERN;
		}
		if (ret)
			s->err = ret;
		if (q)
			s->reqs[s->nreqs++] = q;
	}
	s->pos = end < s->nsteps ? end + 1 : end;
}

/* The current round's transfers: true once all have completed. */
static bool round_done(struct mpi_sched *s)
{
	bool all = true;
	int i, ret;

	if (s->creq) {
		ret = percs_coll_test(s->creq);
		if (ret == -EINPROGRESS) {
			all = false;
		} else {
			if (ret && !s->err)
				s->err = mpi_errno_to_class(ret);
			percs_coll_req_free(s->creq);
			s->creq = NULL;
		}
	}
	for (i = 0; i < s->nreqs; i++) {
		if (!s->reqs[i])
			continue;
		ret = mpi_req_test(s->reqs[i]);
		if (ret == 0) {
			all = false;
			continue;
		}
		if (ret != 1 && !s->err)
			s->err = ret;
		else if (ret == 1 && s->reqs[i]->st.MPI_ERROR && !s->err)
			s->err = s->reqs[i]->st.MPI_ERROR;
		mpi_req_put(s->reqs[i]);
		s->reqs[i] = NULL;
	}
	return all;
}

/* A rank of the communicator died: the schedule cannot complete. */
static void check_failed(struct mpi_sched *s)
{
	unsigned int n = percs_msg_failures(mpi_g.m, NULL);
	struct mpi_comm *c;
	int i;

	if (n == s->failures)
		return;
	s->failures = n;
	c = mpi_comm(s->comm);
	for (i = 0; c && i < c->size; i++) {
		if (percs_msg_peer_failed(mpi_g.m, (unsigned int)c->world[i])) {
			s->err = mpi_errno_to_class(-ECONNRESET);
			return;
		}
	}
}

/*
 * Stop waiting for the transfers of a schedule that failed because a rank
 * died: their peers may never act.  Receives that matched already (a read
 * into our buffer in flight) still end by themselves.
 */
static void abandon(struct mpi_sched *s)
{
	int i;

	for (i = 0; i < s->nreqs; i++) {
		struct mpi_req *q = s->reqs[i];

		if (!q || q->done)
			continue;
		if (q->recv) {
			if (q->r)
				percs_msg_cancel(q->r);
		} else {
			mpi_req_put(q);
			s->reqs[i] = NULL;
		}
	}
}

int mpi_sched_advance(struct mpi_sched *s)
{
	while (!s->done) {
		if (!s->err)
			check_failed(s);
		if (s->err == MPI_ERR_PROC_ABORTED)
			abandon(s);
		if (!round_done(s))
			return 0;
		/* After an error, only the transfers in flight are waited for. */
		if (s->err || s->pos >= s->nsteps)
			s->done = true;
		else
			round_start(s);
	}
	return 1;
}

int mpi_sched_error(const struct mpi_sched *s)
{
	return s->err;
}

static void unlink_sched(struct mpi_sched *s)
{
	struct mpi_sched **p;

	for (p = &active; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			break;
		}
	}
	s->linked = false;
}

void mpi_sched_free(struct mpi_sched *s)
{
	int i;

	if (!s)
		return;
	if (s->linked)
		unlink_sched(s);
	/* Only after completion (MPI forbids freeing a collective early). */
	for (i = 0; i < s->nreqs; i++)
		mpi_req_put(s->reqs[i]);
	percs_coll_req_free(s->creq);
	for (i = 0; i < s->ntmp; i++)
		free(s->tmp[i]);
	free(s->tmp);
	free(s->reqs);
	free(s->steps);
	free(s);
}

void mpi_progress(void)
{
	struct mpi_sched **p = &active;

	while (*p) {
		struct mpi_sched *s = *p;

		if (mpi_sched_advance(s)) {
			*p = s->next;
			s->linked = false;
		} else {
			p = &s->next;
		}
	}
}

bool mpi_sched_none(void)
{
	return !active;
}

void mpi_idle(void)
{
	mpi_progress();
	percs_msg_idle(mpi_g.m);
}

int mpi_sched_go(struct mpi_sched *s, MPI_Request *request, const char *fn)
{
	MPI_Comm comm = s->comm;
	struct mpi_req *q;
	int ret = s->err;

	if (ret) {
		mpi_sched_free(s);
		return mpi_error(comm, ret, fn, "out of memory");
	}
	if (!request) {
		/* Blocking: start and wait, other schedules moving too. */
		while (!mpi_sched_advance(s))
			mpi_idle();
		ret = s->err;
		mpi_sched_free(s);
		return mpi_coll_done(comm, ret, fn);
	}
	q = mpi_req_new(comm, false);
	if (!q) {
		mpi_sched_free(s);
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	q->sched = s;
	if (!mpi_sched_advance(s)) {
		s->next = active;
		active = s;
		s->linked = true;
	}
	*request = mpi_req_handle(q);
	if (*request == MPI_REQUEST_NULL) {
		mpi_wait(q, MPI_STATUS_IGNORE);
		mpi_req_put(q);
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	return MPI_SUCCESS;
}
