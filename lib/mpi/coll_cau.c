// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the "cau" algorithm of barrier, bcast, reduce and
 * allreduce - the hubs' Collective Acceleration Units through libpercs's
 * CAU trees (percs_cau_*), hierarchically.
 *
 * A CAU tree has at most one window per hub, so a communicator's ranks
 * are grouped by the hub of their window: the lowest rank of each hub is
 * its leader.  A collective combines (or gathers) within each hub in
 * software, to the leader; the leaders run it on the tree of their
 * windows; each leader hands the result back down to its hub's ranks.
 * With one rank per hub that is the tree alone; with one hub, no tree
 * at all (software within the hub).
 *
 * The tree is made lazily, at the communicator's first CAU collective:
 * rank 0 creates it (charged to its user's max_cau_trees_per_user), the
 * other leaders join, and every rank learns whether all of that worked.
 * If not - the CAU table is full, the quota reached, a join failed - the
 * communicator never tries again and its collectives run in software
 * (a forced PERCS_MPI_COLL_<COLL>=cau says so once on stderr, from rank
 * 0).  A
 * reduction the CAU cannot combine (not a predefined (type, op) pair of
 * the CAU's ALU) runs in software too, silently: the variable forces the
 * algorithm for the calls that can use it.  MPI_Comm_free destroys the
 * tree after a software barrier, so that no member's result is still on
 * its way when it ends; at MPI_Finalize the window's release ends it,
 * once every rank has left the job.
 *
 * Reduce runs as an allreduce on the tree (the tree's root is fixed at
 * rank 0's leader; the CAU sends every leader the result) and the root's
 * leader passes it on; bcast sends the root's data to its leader, which
 * multicasts it down the tree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/**
 * struct mpi_cau - a communicator's CAU state
 * @ready: the tree (if any) exists on every leader: collectives may run
 * @leader_of: by rank, the rank of its hub's leader
 * @index: by rank, its leader's index in the tree
 * @local: the ranks of this rank's hub, the leader first
 * @nlocal: entries of @local
 * @nleaders: hubs of the communicator (tree members)
 * @tree: this leader's tree handle; NULL elsewhere and with one hub
 */
struct mpi_cau {
	bool ready;
	int *leader_of;
	int *index;
	int *local;
	int nlocal;
	int nleaders;
	struct percs_cau_tree *tree;
};

static void cau_free(struct mpi_cau *u, bool destroy)
{
	if (!u)
		return;
	if (destroy)
		percs_cau_tree_destroy(u->tree);
	free(u->leader_of);
	free(u->index);
	free(u->local);
	free(u);
}

/* The CAU's type for @type, -1 for none. */
static int cau_type(MPI_Datatype type)
{
	switch (type) {
	case MPI_INT: case MPI_INT32_T:
		return PERCS_CAU_T_S32;
	case MPI_UNSIGNED: case MPI_UINT32_T:
		return PERCS_CAU_T_U32;
	case MPI_LONG: case MPI_LONG_LONG_INT: case MPI_INT64_T:
		return sizeof(long) == 8 || type != MPI_LONG ?
		       PERCS_CAU_T_S64 : PERCS_CAU_T_S32;
	case MPI_UNSIGNED_LONG: case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T:
		return sizeof(long) == 8 || type != MPI_UNSIGNED_LONG ?
		       PERCS_CAU_T_U64 : PERCS_CAU_T_U32;
	case MPI_FLOAT:
		return PERCS_CAU_T_F32;
	case MPI_DOUBLE:
		return PERCS_CAU_T_F64;
	default:
		return -1;
	}
}

/* The CAU's op for @op on CAU type @ct, -1 for none (the ALU's rules). */
static int cau_op(MPI_Op op, int ct)
{
	bool fp = ct == PERCS_CAU_T_F32 || ct == PERCS_CAU_T_F64;

	switch (op) {
	case MPI_SUM: return PERCS_CAU_OP_SUM;
	case MPI_MIN: return PERCS_CAU_OP_MIN;
	case MPI_MAX: return PERCS_CAU_OP_MAX;
	case MPI_PROD: return fp ? PERCS_CAU_OP_PROD : -1;
	case MPI_BAND: return fp ? -1 : PERCS_CAU_OP_AND;
	case MPI_BOR: return fp ? -1 : PERCS_CAU_OP_OR;
	case MPI_BXOR: return fp ? -1 : PERCS_CAU_OP_XOR;
	default: return -1;
	}
}

bool mpi_cau_pair(MPI_Datatype type, MPI_Op op)
{
	int ct = cau_type(type);

	return ct >= 0 && cau_op(op, ct) >= 0;
}

/* Who leads which hub: the lowest rank with a window on it. */
static struct mpi_cau *cau_layout(const struct mpi_comm *c)
{
	struct mpi_cau *u = calloc(1, sizeof(*u));
	uint32_t *hub = malloc(sizeof(*hub) * c->size);
	struct percs_addr a;
	int i, j;

	if (!u || !hub)
		goto fail;
	u->leader_of = malloc(sizeof(int) * c->size);
	u->index = malloc(sizeof(int) * c->size);
	u->local = malloc(sizeof(int) * c->size);
	if (!u->leader_of || !u->index || !u->local)
		goto fail;
	for (i = 0; i < c->size; i++) {
		if (percs_msg_peer_addr(mpi_g.m, c->world[i], &a))
			goto fail;
		hub[i] = a.hub;
		for (j = 0; j < i && hub[j] != hub[i]; j++)
			;
		u->leader_of[i] = j;
		u->index[i] = j == i ? u->nleaders++ : u->index[j];
	}
	for (i = 0; i < c->size; i++)
		if (hub[i] == hub[c->rank])
			u->local[u->nlocal++] = i;
	free(hub);
	return u;
fail:
	free(hub);
	cau_free(u, true);
	return NULL;
}

/* The leaders' windows, in tree-index order, shaped as a k-ary tree. */
static int cau_shape(const struct mpi_comm *c, const struct mpi_cau *u,
		     struct percs_cau_member *members)
{
	struct percs_addr *wins = calloc(u->nleaders, sizeof(*wins));
	int i, ret = 0;

	if (!wins)
		return -ENOMEM;
	for (i = 0; i < c->size && !ret; i++)
		if (u->leader_of[i] == i)
			ret = percs_msg_peer_addr(mpi_g.m, c->world[i],
						  &wins[u->index[i]]);
	if (!ret)
		ret = percs_cau_shape_kary(wins, u->nleaders, 0, 0, NULL,
					   members);
	free(wins);
	return ret;
}

/* A blocking software collective of the setup (never the CAU itself). */
static int setup_bcast(MPI_Comm comm, const struct mpi_comm *c, int *v,
		       int n)
{
	struct mpi_sched *s = mpi_sched_new(comm, MPI_SPACE_COLL, 0);

	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_bcast_sched(s, c, v, n, MPI_INT, 0);
	return mpi_sched_go(s, NULL, "MPI (CAU tree setup)");
}

static int setup_min(MPI_Comm comm, const struct mpi_comm *c, int *v)
{
	struct mpi_sched *s = mpi_sched_new(comm, MPI_SPACE_COLL, 0);

	if (!s)
		return MPI_ERR_NO_MEM;
	mpi_allreduce_algo(s, c, MPI_IN_PLACE, v, 1, MPI_INT, MPI_MIN,
			   ALLREDUCE_RECURSIVE_DOUBLING);
	return mpi_sched_go(s, NULL, "MPI (CAU tree setup)");
}

/*
 * Rank 0 creates the tree and tells everyone its id (or its error), the
 * other leaders join, and all agree on the worst outcome.  Returns 0 or
 * the -errno that keeps the tree from being used; *@fatal is set when
 * the software collectives of the setup failed themselves.
 */
static int cau_tree_make(MPI_Comm comm, const struct mpi_comm *c,
			 struct mpi_cau *u, int *fatal)
{
	struct percs_window *w = percs_msg_window(mpi_g.m);
	struct percs_cau_member *members;
	int msg[2] = { 0, 0 }, mine = 0;

	members = calloc(u->nleaders, sizeof(*members));
	if (!members)
		mine = -ENOMEM;
	else
		mine = cau_shape(c, u, members);
	if (!c->rank) {
		if (!mine)
			mine = percs_cau_tree_create(w, members, u->nleaders, 0,
						     &u->tree);
		msg[0] = mine;
		msg[1] = mine ? 0 : (int)percs_cau_tree_id(u->tree);
	}
	*fatal = setup_bcast(comm, c, msg, 2);
	if (*fatal)
		goto out;
	if (!mine)
		mine = msg[0];
	if (!mine && c->rank && u->leader_of[c->rank] == c->rank)
		mine = percs_cau_tree_join(w, (uint32_t)msg[1], members,
					   u->nleaders, 0, &u->tree);
	*fatal = setup_min(comm, c, &mine);
out:
	free(members);
	if (*fatal && !mine)
		mine = -EIO;
	if (mine) {
		percs_cau_tree_destroy(u->tree);
		u->tree = NULL;
	}
	return mine;
}

int mpi_cau_ready(MPI_Comm comm, struct mpi_comm *c, bool forced,
		  bool setup, const char *fn, bool *ok)
{
	int err = 0, fatal = 0;

	*ok = c->cau;
	if (c->cau_tried || !setup)
		return MPI_SUCCESS;
	c->cau_tried = true;
	c->cau = cau_layout(c);
	if (!c->cau)
		err = -ENOMEM;
	else if (c->cau->nleaders > 1)
		err = cau_tree_make(comm, c, c->cau, &fatal);
	if (err) {
		cau_free(c->cau, true);
		c->cau = NULL;
		if (forced && !c->rank)
			fprintf(stderr,
				"percs-mpi: %s: no CAU tree for communicator %d (%s): its collectives run in software\n",
				fn, comm, strerror(-err));
	} else {
		c->cau->ready = true;
	}
	*ok = c->cau;
	return fatal;
}

bool mpi_cau_tree(const struct mpi_comm *c)
{
	return c->cau && c->cau->nleaders > 1;
}

int mpi_cau_fini(MPI_Comm comm, struct mpi_comm *c)
{
	struct mpi_sched *s;
	int ret = MPI_SUCCESS;

	if (c->cau && c->cau->nleaders > 1) {
		/* Every member done with the tree before any ends it. */
		s = mpi_sched_new(comm, MPI_SPACE_COLL, 0);
		if (!s)
			return MPI_ERR_NO_MEM;
		mpi_barrier_algo(s, c, BARRIER_DISSEMINATION);
		ret = mpi_sched_go(s, NULL, "MPI_Comm_free");
	}
	cau_free(c->cau, true);
	c->cau = NULL;
	c->cau_tried = false;
	return ret;
}

void mpi_cau_drop(struct mpi_comm *c)
{
	cau_free(c->cau, false);
	c->cau = NULL;
	c->cau_tried = false;
}

/* Within the hub: everyone's @acc combined into the leader's. */
static void local_reduce(struct mpi_sched *s, const struct mpi_cau *u,
			 unsigned char *acc, int count, MPI_Datatype type,
			 MPI_Op op, int rank, int bytes)
{
	unsigned char *in;
	int i;

	if (u->local[0] != rank) {
		mpi_sched_send(s, acc, bytes, MPI_BYTE, u->local[0]);
		mpi_sched_round(s);
		return;
	}
	/* Every contribution in one round, then combined in rank order. */
	in = mpi_sched_tmp(s, (size_t)bytes * u->nlocal);
	if (!in)
		return;
	for (i = 1; i < u->nlocal; i++)
		mpi_sched_recv(s, in + (size_t)i * bytes, bytes, MPI_BYTE,
			       u->local[i]);
	mpi_sched_round(s);
	for (i = 1; i < u->nlocal; i++)
		mpi_sched_op(s, op, type, count, acc, in + (size_t)i * bytes);
}

/* Within the hub: the leader's @buf to the others (but @skip). */
static void local_bcast(struct mpi_sched *s, const struct mpi_cau *u,
			void *buf, int bytes, int rank, int skip)
{
	int i;

	if (rank == skip)
		return;
	if (u->local[0] != rank) {
		mpi_sched_recv(s, buf, bytes, MPI_BYTE, u->local[0]);
	} else {
		for (i = 1; i < u->nlocal; i++)
			if (u->local[i] != skip)
				mpi_sched_send(s, buf, bytes, MPI_BYTE,
					       u->local[i]);
	}
	mpi_sched_round(s);
}

void mpi_cau_barrier(struct mpi_sched *s, const struct mpi_comm *c)
{
	const struct mpi_cau *u = c->cau;
	int i;

	if (u->local[0] != c->rank) {
		mpi_sched_send(s, NULL, 0, MPI_BYTE, u->local[0]);
	} else {
		for (i = 1; i < u->nlocal; i++)
			mpi_sched_recv(s, NULL, 0, MPI_BYTE, u->local[i]);
	}
	mpi_sched_round(s);
	if (u->tree) {
		struct mpi_cau_op o = { .kind = MPI_CAU_BARRIER,
					.tree = u->tree };

		mpi_sched_cau(s, &o);
		mpi_sched_round(s);
	}
	local_bcast(s, u, NULL, 0, c->rank, -1);
}

void mpi_cau_allreduce(struct mpi_sched *s, const struct mpi_comm *c,
		       const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype type, MPI_Op op, int root)
{
	const struct mpi_cau *u = c->cau;
	int bytes = (int)((size_t)count * mpi_type(type)->size);
	int ct = cau_type(type), rl = root < 0 ? -1 : u->leader_of[root];
	unsigned char *acc = mpi_sched_tmp(s, bytes);

	if (!acc)
		return;
	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;
	mpi_sched_copy(s, sendbuf, count, type, acc, bytes, MPI_BYTE);
	local_reduce(s, u, acc, count, type, op, c->rank, bytes);
	if (u->tree && u->local[0] == c->rank && count) {
		struct mpi_cau_op o = { .kind = MPI_CAU_ALLREDUCE,
					.tree = u->tree, .buf = acc,
					.count = (size_t)count, .type = ct,
					.op = cau_op(op, ct) };

		mpi_sched_cau(s, &o);
		mpi_sched_round(s);
	}
	if (root < 0) {
		local_bcast(s, u, acc, bytes, c->rank, -1);
	} else if (root != rl) {
		/* A reduce: the root's leader hands it the result. */
		if (c->rank == rl)
			mpi_sched_send(s, acc, bytes, MPI_BYTE, root);
		else if (c->rank == root)
			mpi_sched_recv(s, acc, bytes, MPI_BYTE, rl);
		mpi_sched_round(s);
	}
	if (root < 0 || c->rank == root) {
		mpi_sched_copy(s, acc, bytes, MPI_BYTE, recvbuf, count, type);
		mpi_sched_round(s);
	}
}

void mpi_cau_bcast(struct mpi_sched *s, const struct mpi_comm *c, void *buf,
		   int count, MPI_Datatype type, int root)
{
	const struct mpi_cau *u = c->cau;
	int bytes = (int)((size_t)count * mpi_type(type)->size);
	int rl = u->leader_of[root];
	bool contig = mpi_type_contig(mpi_type(type));
	unsigned char *data = buf;

	if (!contig) {
		data = mpi_sched_tmp(s, bytes);
		if (!data)
			return;
		if (c->rank == root) {
			mpi_sched_copy(s, buf, count, type, data, bytes,
				       MPI_BYTE);
			mpi_sched_round(s);
		}
	}
	if (root != rl) {
		if (c->rank == root)
			mpi_sched_send(s, data, bytes, MPI_BYTE, rl);
		else if (c->rank == rl)
			mpi_sched_recv(s, data, bytes, MPI_BYTE, root);
		mpi_sched_round(s);
	}
	if (u->tree && u->local[0] == c->rank && bytes) {
		struct mpi_cau_op o = { .kind = MPI_CAU_BCAST,
					.tree = u->tree, .buf = data,
					.count = (size_t)bytes,
					.root = u->index[root] };

		mpi_sched_cau(s, &o);
		mpi_sched_round(s);
	}
	local_bcast(s, u, data, bytes, c->rank, root);
	if (!contig && c->rank != root) {
		mpi_sched_copy(s, data, bytes, MPI_BYTE, buf, count, type);
		mpi_sched_round(s);
	}
}
