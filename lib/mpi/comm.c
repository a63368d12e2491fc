// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: communicators.
 *
 * A communicator is a list of world ranks and a context id that its
 * messages carry (p2p and collective traffic on different contexts, so
 * they never match each other).  New contexts are agreed on by an
 * allreduce(MAX) of every member's next free id over the parent.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

static struct mpi_comm *comms;
static int nr_comms;

struct mpi_comm *mpi_comm(MPI_Comm c)
{
	if (c <= MPI_COMM_NULL || c > nr_comms || !comms[c - 1].used)
		return NULL;
	return &comms[c - 1];
}

static int comm_new(int size, int rank, int *world, uint32_t ctx,
		    MPI_Errhandler eh, MPI_Comm *out)
{
	int i;

	for (i = 0; i < nr_comms && comms[i].used; i++)
		;
	if (i == nr_comms) {
		struct mpi_comm *n = realloc(comms, sizeof(*n) * (nr_comms + 8));

		if (!n)
			return MPI_ERR_NO_MEM;
		memset(n + nr_comms, 0, sizeof(*n) * 8);
		comms = n;
		nr_comms += 8;
	}
	comms[i] = (struct mpi_comm){ .used = true, .size = size, .rank = rank,
				      .world = world, .ctx = ctx, .eh = eh };
	*out = i + 1;
	return MPI_SUCCESS;
}

int mpi_comm_init(void)
{
	int n = (int)percs_msg_size(mpi_g.m), me = (int)percs_msg_rank(mpi_g.m);
	int *world = malloc(sizeof(int) * n), *self = malloc(sizeof(int));
	MPI_Comm h;
	int i;

	if (!world || !self) {
		free(world);
		free(self);
		return MPI_ERR_NO_MEM;
	}
	for (i = 0; i < n; i++)
		world[i] = i;
	*self = me;
	/* Handles 1 and 2, contexts 0 and 1, in this order. */
	if (comm_new(n, me, world, 0, MPI_ERRORS_ARE_FATAL, &h) ||
	    comm_new(1, 0, self, 1, MPI_ERRORS_ARE_FATAL, &h))
		return MPI_ERR_NO_MEM;
	mpi_g.next_ctx = 2;
	return MPI_SUCCESS;
}

void mpi_comm_fini(void)
{
	int i;

	for (i = 0; i < nr_comms; i++) {
		/* The window's release ended the trees (after every rank left). */
		mpi_cau_drop(&comms[i]);
		free(comms[i].world);
	}
	free(comms);
	comms = NULL;
	nr_comms = 0;
}

int mpi_comm_source(const struct mpi_comm *c, int world)
{
	int i;

	if (world < 0)
		return world;
	for (i = 0; i < c->size; i++)
		if (c->world[i] == world)
			return i;
	return MPI_UNDEFINED;
}

#define COMM_GET(fn, comm, c) do {					\
	MPI_NEED_INIT(fn);						\
	(c) = mpi_comm(comm);						\
	if (!(c))							\
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, fn,	\
				 "no communicator %d", (comm));		\
} while (0)

PERCS_MPI_ALIAS(Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	struct mpi_comm *c;

	COMM_GET("MPI_Comm_size", comm, c);
	if (!size)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_size", "NULL size");
	*size = c->size;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	struct mpi_comm *c;

	COMM_GET("MPI_Comm_rank", comm, c);
	if (!rank)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_rank", "NULL rank");
	*rank = c->rank;
	return MPI_SUCCESS;
}

/* A context id every member of @comm agrees on, collectively. */
static int new_ctx(MPI_Comm comm, uint32_t *ctx)
{
	unsigned int mine = mpi_g.next_ctx, all;
	int ret = PMPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED, MPI_MAX, comm);

	if (ret)
		return ret;
	*ctx = all;
	mpi_g.next_ctx = all + 1;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	struct mpi_comm *c;
	uint32_t ctx;
	int *world, ret;

	COMM_GET("MPI_Comm_dup", comm, c);
	if (!newcomm)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_dup",
				 "NULL newcomm");
	ret = new_ctx(comm, &ctx);
	if (ret)
		return ret;
	c = mpi_comm(comm);	/* the collective may not move it, but be sure */
	world = malloc(sizeof(int) * c->size);
	if (!world)
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Comm_dup",
				 "out of memory");
	memcpy(world, c->world, sizeof(int) * c->size);
	ret = comm_new(c->size, c->rank, world, ctx, c->eh, newcomm);
	if (ret) {
		free(world);
		return mpi_error(comm, ret, "MPI_Comm_dup", "out of memory");
	}
	return MPI_SUCCESS;
}

struct split_entry {
	int color, key, rank;
};

static int split_cmp(const void *a, const void *b)
{
	const struct split_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

PERCS_MPI_ALIAS(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	struct split_entry mine, *all;
	struct mpi_comm *c;
	int i, n = 0, me = -1, *world, ret;
	uint32_t ctx;

	COMM_GET("MPI_Comm_split", comm, c);
	if (!newcomm)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_split",
				 "NULL newcomm");
	if (color < 0 && color != MPI_UNDEFINED)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_split",
				 "negative color %d", color);
	all = malloc(sizeof(*all) * c->size);
	if (!all)
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Comm_split",
				 "out of memory");
	mine = (struct split_entry){ color, key, c->rank };
	ret = PMPI_Allgather(&mine, 3, MPI_INT, all, 3, MPI_INT, comm);
	if (!ret)
		ret = new_ctx(comm, &ctx);
	if (ret) {
		free(all);
		return ret;
	}
	*newcomm = MPI_COMM_NULL;
	if (color == MPI_UNDEFINED) {
		free(all);
		return MPI_SUCCESS;
	}
	for (i = 0; i < c->size; i++)
		if (all[i].color == color)
			all[n++] = all[i];
	qsort(all, n, sizeof(*all), split_cmp);
	world = malloc(sizeof(int) * n);
	if (!world) {
		free(all);
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Comm_split",
				 "out of memory");
	}
	for (i = 0; i < n; i++) {
		world[i] = c->world[all[i].rank];
		if (all[i].rank == c->rank)
			me = i;
	}
	free(all);
	ret = comm_new(n, me, world, ctx, c->eh, newcomm);
	if (ret) {
		free(world);
		return mpi_error(comm, ret, "MPI_Comm_split", "out of memory");
	}
	return MPI_SUCCESS;
}

int mpi_comm_create_from(MPI_Comm comm, const int *world, int n,
			 MPI_Comm *newcomm, const char *fn)
{
	int me = -1, i, ret, *w;
	MPI_Errhandler eh = mpi_comm(comm)->eh;
	uint32_t ctx;

	/* Collective over @comm, members of the group or not. */
	ret = new_ctx(comm, &ctx);
	if (ret)
		return ret;
	*newcomm = MPI_COMM_NULL;
	for (i = 0; i < n; i++)
		if (world[i] == (int)percs_msg_rank(mpi_g.m))
			me = i;
	if (me < 0)
		return MPI_SUCCESS;
	w = malloc(sizeof(int) * n);
	if (!w)
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	memcpy(w, world, sizeof(int) * n);
	ret = comm_new(n, me, w, ctx, eh, newcomm);
	if (ret) {
		free(w);
		return mpi_error(comm, ret, fn, "out of memory");
	}
	return MPI_SUCCESS;
}

int mpi_comm_create_group(MPI_Comm comm, const int *world, int n, int tag,
			  MPI_Comm *newcomm, const char *fn)
{
	struct mpi_comm *c = mpi_comm(comm), *nc;
	unsigned int mine = mpi_g.next_ctx, all = 0;
	struct mpi_sched *s;
	int me = -1, i, ret, *w;
	MPI_Comm h;

	*newcomm = MPI_COMM_NULL;
	for (i = 0; i < n; i++)
		if (world[i] == (int)percs_msg_rank(mpi_g.m))
			me = i;
	if (me < 0)
		return MPI_SUCCESS;	/* not a member: nothing to agree on */
	w = malloc(sizeof(int) * n);
	if (!w)
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	memcpy(w, world, sizeof(int) * n);
	/*
	 * The members agree on a context over the new communicator itself,
	 * its messages on the parent's context in their own space under the
	 * program's tag: nothing the other ranks of the parent send matches.
	 */
	ret = comm_new(n, me, w, c->ctx, c->eh, &h);
	if (ret) {
		free(w);
		return mpi_error(comm, ret, fn, "out of memory");
	}
	nc = mpi_comm(h);
	s = mpi_sched_new(h, MPI_SPACE_GROUP, tag);
	if (!s) {
		PMPI_Comm_free(&h);
		return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	mpi_reduce_sched(s, nc, &mine, &all, 1, MPI_UNSIGNED, MPI_MAX, 0);
	mpi_bcast_sched(s, nc, &all, 1, MPI_UNSIGNED, 0);
	ret = mpi_sched_go(s, NULL, fn);
	if (ret) {
		PMPI_Comm_free(&h);
		return ret;
	}
	nc = mpi_comm(h);
	nc->ctx = all;
	mpi_g.next_ctx = all + 1;
	*newcomm = h;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
	struct mpi_comm *c;
	int ret;

	MPI_NEED_INIT("MPI_Comm_free");
	if (!comm)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_free",
				 "NULL comm");
	c = mpi_comm(*comm);
	if (!c)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_free",
				 "no communicator %d", *comm);
	if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
		return mpi_error(*comm, MPI_ERR_COMM, "MPI_Comm_free",
				 "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
	ret = mpi_cau_fini(*comm, c);
	if (ret)
		return ret;
	free(c->world);
	memset(c, 0, sizeof(*c));
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_compare)
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	struct mpi_comm *a, *b;
	int i, j, same_order = 1;

	MPI_NEED_INIT("MPI_Comm_compare");
	a = mpi_comm(comm1);
	b = mpi_comm(comm2);
	if (!a || !b)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_compare",
				 "no communicator %d", a ? comm2 : comm1);
	if (!result)
		return mpi_error(comm1, MPI_ERR_ARG, "MPI_Comm_compare",
				 "NULL result");
	if (comm1 == comm2) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	*result = MPI_UNEQUAL;
	if (a->size != b->size)
		return MPI_SUCCESS;
	for (i = 0; i < a->size; i++) {
		if (a->world[i] != b->world[i])
			same_order = 0;
		for (j = 0; j < b->size && b->world[j] != a->world[i]; j++)
			;
		if (j == b->size)
			return MPI_SUCCESS;
	}
	*result = same_order ? MPI_CONGRUENT : MPI_SIMILAR;
	return MPI_SUCCESS;
}
