// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: groups (ordered lists of world ranks), MPI_Comm_create and
 * MPI_Comm_create_group.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

struct mpi_group {
	bool used;
	int size;
	int *world;
};

/* Handle h is groups[h - 2]; MPI_GROUP_EMPTY (1) is no table entry. */
static struct mpi_group *groups;
static int nr_groups;

static bool group_get(MPI_Group g, int *size, const int **world)
{
	if (g == MPI_GROUP_EMPTY) {
		*size = 0;
		*world = NULL;
		return true;
	}
	if (g < 2 || g - 2 >= nr_groups || !groups[g - 2].used)
		return false;
	*size = groups[g - 2].size;
	*world = groups[g - 2].world;
	return true;
}

/* A new group owning @world (@n ranks); MPI_GROUP_NULL when out of memory. */
static MPI_Group group_new(int *world, int n)
{
	int i;

	for (i = 0; i < nr_groups && groups[i].used; i++)
		;
	if (i == nr_groups) {
		struct mpi_group *g = realloc(groups, sizeof(*g) * (nr_groups + 8));

		if (!g)
			return MPI_GROUP_NULL;
		memset(g + nr_groups, 0, sizeof(*g) * 8);
		groups = g;
		nr_groups += 8;
	}
	groups[i] = (struct mpi_group){ true, n, world };
	return i + 2;
}

void mpi_group_fini(void)
{
	int i;

	for (i = 0; i < nr_groups; i++)
		free(groups[i].world);
	free(groups);
	groups = NULL;
	nr_groups = 0;
}

#define GROUP_GET(fn, g, size, world) do {				\
	MPI_NEED_INIT(fn);						\
	if (!group_get((g), &(size), &(world)))				\
		return mpi_error(MPI_COMM_NULL, MPI_ERR_GROUP, fn,	\
				 "no group %d", (g));			\
} while (0)

static int group_out(int *world, int n, MPI_Group *out, const char *fn)
{
	if (!n) {
		free(world);
		*out = MPI_GROUP_EMPTY;
		return MPI_SUCCESS;
	}
	*out = group_new(world, n);
	if (*out == MPI_GROUP_NULL) {
		free(world);
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn,
				 "out of memory");
	}
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	struct mpi_comm *c;
	int *world;

	MPI_NEED_INIT("MPI_Comm_group");
	c = mpi_comm(comm);
	if (!c)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_group",
				 "no communicator %d", comm);
	if (!group)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_group",
				 "NULL group");
	world = malloc(sizeof(int) * c->size);
	if (!world)
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Comm_group",
				 "out of memory");
	memcpy(world, c->world, sizeof(int) * c->size);
	return group_out(world, c->size, group, "MPI_Comm_group");
}

PERCS_MPI_ALIAS(Group_size)
int PMPI_Group_size(MPI_Group group, int *size)
{
	const int *world;
	int n;

	GROUP_GET("MPI_Group_size", group, n, world);
	if (!size)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_size",
				 "NULL size");
	*size = n;
	return MPI_SUCCESS;
}

static int rank_in(const int *world, int n, int w)
{
	int i;

	for (i = 0; i < n; i++)
		if (world[i] == w)
			return i;
	return MPI_UNDEFINED;
}

PERCS_MPI_ALIAS(Group_rank)
int PMPI_Group_rank(MPI_Group group, int *rank)
{
	const int *world;
	int n;

	GROUP_GET("MPI_Group_rank", group, n, world);
	if (!rank)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_rank",
				 "NULL rank");
	*rank = rank_in(world, n, (int)percs_msg_rank(mpi_g.m));
	return MPI_SUCCESS;
}

/* @ranks valid (in range, each once) for a group of @size. */
static int check_ranks(int size, int n, const int *ranks, const char *fn)
{
	char *seen;
	int i;

	if (n < 0 || n > size)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
				 "%d ranks of a group of %d", n, size);
	if (n && !ranks)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL ranks");
	seen = calloc(size ? size : 1, 1);
	if (!seen)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn,
				 "out of memory");
	for (i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= size || seen[ranks[i]]) {
			int r = ranks[i];

			free(seen);
			return mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, fn,
					 "rank %d (entry %d) is %s", r, i,
					 r < 0 || r >= size ? "not in the group" :
					 "listed twice");
		}
		seen[ranks[i]] = 1;
	}
	free(seen);
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Group_incl)
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
		    MPI_Group *newgroup)
{
	const int *world;
	int size, i, ret, *w;

	GROUP_GET("MPI_Group_incl", group, size, world);
	ret = check_ranks(size, n, ranks, "MPI_Group_incl");
	if (ret)
		return ret;
	if (!newgroup)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_incl",
				 "NULL newgroup");
	w = malloc(sizeof(int) * (n ? n : 1));
	if (!w)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Group_incl",
				 "out of memory");
	for (i = 0; i < n; i++)
		w[i] = world[ranks[i]];
	return group_out(w, n, newgroup, "MPI_Group_incl");
}

PERCS_MPI_ALIAS(Group_excl)
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
		    MPI_Group *newgroup)
{
	const int *world;
	int size, i, j, k = 0, ret, *w;

	GROUP_GET("MPI_Group_excl", group, size, world);
	ret = check_ranks(size, n, ranks, "MPI_Group_excl");
	if (ret)
		return ret;
	if (!newgroup)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_excl",
				 "NULL newgroup");
	w = malloc(sizeof(int) * (size - n ? size - n : 1));
	if (!w)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Group_excl",
				 "out of memory");
	for (i = 0; i < size; i++) {
		for (j = 0; j < n && ranks[j] != i; j++)
			;
		if (j == n)
			w[k++] = world[i];
	}
	return group_out(w, k, newgroup, "MPI_Group_excl");
}

PERCS_MPI_ALIAS(Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
			       MPI_Group group2, int ranks2[])
{
	const int *w1, *w2;
	int s1, s2, i;

	GROUP_GET("MPI_Group_translate_ranks", group1, s1, w1);
	GROUP_GET("MPI_Group_translate_ranks", group2, s2, w2);
	if (n < 0 || (n && (!ranks1 || !ranks2)))
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG,
				 "MPI_Group_translate_ranks",
				 "bad count %d or NULL rank array", n);
	for (i = 0; i < n; i++) {
		if (ranks1[i] == MPI_PROC_NULL) {
			ranks2[i] = MPI_PROC_NULL;
			continue;
		}
		if (ranks1[i] < 0 || ranks1[i] >= s1)
			return mpi_error(MPI_COMM_NULL, MPI_ERR_RANK,
					 "MPI_Group_translate_ranks",
					 "rank %d is not in the first group",
					 ranks1[i]);
		ranks2[i] = rank_in(w2, s2, w1[ranks1[i]]);
	}
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Group_free)
int PMPI_Group_free(MPI_Group *group)
{
	MPI_NEED_INIT("MPI_Group_free");
	if (!group)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_free",
				 "NULL group");
	if (*group == MPI_GROUP_EMPTY) {
		*group = MPI_GROUP_NULL;
		return MPI_SUCCESS;
	}
	if (*group < 2 || *group - 2 >= nr_groups || !groups[*group - 2].used)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_GROUP, "MPI_Group_free",
				 "no group %d", *group);
	free(groups[*group - 2].world);
	memset(&groups[*group - 2], 0, sizeof(groups[0]));
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}

/* The checks of Comm_create(_group): @group's world ranks in *@world. */
static int create_checks(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm,
			 int *n, const int **world, const char *fn)
{
	struct mpi_comm *c;
	int i;

	MPI_NEED_INIT(fn);
	c = mpi_comm(comm);
	if (!c)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM, fn,
				 "no communicator %d", comm);
	if (!group_get(group, n, world))
		return mpi_error(comm, MPI_ERR_GROUP, fn, "no group %d", group);
	if (!newcomm)
		return mpi_error(comm, MPI_ERR_ARG, fn, "NULL newcomm");
	for (i = 0; i < *n; i++)
		if (rank_in(c->world, c->size, (*world)[i]) == MPI_UNDEFINED)
			return mpi_error(comm, MPI_ERR_GROUP, fn,
					 "the group's rank %d is not in the communicator",
					 i);
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	const int *world;
	int n, ret;

	ret = create_checks(comm, group, newcomm, &n, &world,
			    "MPI_Comm_create");
	if (ret)
		return ret;
	return mpi_comm_create_from(comm, world, n, newcomm, "MPI_Comm_create");
}

PERCS_MPI_ALIAS(Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
			   MPI_Comm *newcomm)
{
	const int *world;
	int n, ret;

	ret = create_checks(comm, group, newcomm, &n, &world,
			    "MPI_Comm_create_group");
	if (ret)
		return ret;
	if (tag < 0 || tag > PERCS_MSG_TAG_MAX)
		return mpi_error(comm, MPI_ERR_TAG, "MPI_Comm_create_group",
				 "tag %d is outside 0..MPI_TAG_UB", tag);
	return mpi_comm_create_group(comm, world, n, tag, newcomm,
				     "MPI_Comm_create_group");
}
