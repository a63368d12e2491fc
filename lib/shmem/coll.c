// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: broadcast, collect, fcollect and alltoall on teams and
 * on 1.0-1.3 active sets, over the messaging endpoint (each member's data
 * goes straight into the others' dest).
 */
#include <stdlib.h>
#include <string.h>

#include "team.h"

static void coll_fail(const char *call, int ret)
{
	shmem_die(call, "%s", percs_strerror(ret));
}

/* @root_too: 1.5 writes the root's dest as well, 1.0-1.3 did not. */
static void bcast(const char *call, struct shmem_group *g, void *dest,
		  const void *source, size_t len, int root, bool root_too)
{
	int ret;

	if (root < 0 || root >= g->set.size)
		shmem_die(call, "PE_root %d is not in the team of %d PEs", root,
			  g->set.size);
	shmem_do_quiet(call);
	if (g->me == root && root_too && dest != source)
		memmove(dest, source, len);
	ret = shmem_xchg_bcast(&g->set, g->set.size, g->me, root,
			       g->me == root ? (void *)(uintptr_t)source : dest,
			       len, g->ctx, shmem_group_tag(g));
	if (ret)
		coll_fail(call, ret);
}

static void fcollect(const char *call, struct shmem_group *g, void *dest,
		     const void *source, size_t len)
{
	int ret;

	shmem_do_quiet(call);
	ret = shmem_xchg_allgather(&g->set, g->set.size, g->me, source, len,
				   dest, g->ctx, shmem_group_tag(g));
	if (ret)
		coll_fail(call, ret);
}

static void collect(const char *call, struct shmem_group *g, void *dest,
		    const void *source, size_t len)
{
	int n = g->set.size, ret;
	size_t *lens = calloc(2 * (size_t)n, sizeof(*lens));

	if (!lens)
		shmem_die(call, "out of memory");
	shmem_do_quiet(call);
	ret = shmem_xchg_allgather(&g->set, n, g->me, &len, sizeof(len), lens,
				   g->ctx, shmem_group_tag(g));
	for (int i = 1; i < n; i++)
		lens[n + i] = lens[n + i - 1] + lens[i - 1];
	if (!ret)
		ret = shmem_xchg_allgatherv(&g->set, n, g->me, source, lens,
					    lens + n, dest, g->ctx,
					    shmem_group_tag(g));
	free(lens);
	if (ret)
		coll_fail(call, ret);
}

static void alltoall(const char *call, struct shmem_group *g, void *dest,
		     const void *source, size_t len)
{
	int ret;

	shmem_do_quiet(call);
	ret = shmem_xchg_alltoall(&g->set, g->set.size, g->me, source, len,
				  dest, g->ctx, shmem_group_tag(g));
	if (ret)
		coll_fail(call, ret);
}

/* The team's group, or NULL for an invalid team (the call returns -1). */
static struct shmem_group *team_group(const char *call, shmem_team_t team)
{
	shmem_need_init(call);
	if (team == SHMEM_TEAM_INVALID)
		return NULL;
	if (team->g.me < 0)
		shmem_die(call, "PE %d is not in the team", shmem_g.me);
	return &team->g;
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source,
		       size_t nelems, int PE_root)
{
	struct shmem_group *g = team_group("shmem_broadcastmem", team);

	if (!g)
		return -1;
	bcast("shmem_broadcastmem", g, dest, source, nelems, PE_root, true);
	return 0;
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source,
		     size_t nelems)
{
	struct shmem_group *g = team_group("shmem_collectmem", team);

	if (!g)
		return -1;
	collect("shmem_collectmem", g, dest, source, nelems);
	return 0;
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source,
		      size_t nelems)
{
	struct shmem_group *g = team_group("shmem_fcollectmem", team);

	if (!g)
		return -1;
	fcollect("shmem_fcollectmem", g, dest, source, nelems);
	return 0;
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source,
		      size_t nelems)
{
	struct shmem_group *g = team_group("shmem_alltoallmem", team);

	if (!g)
		return -1;
	alltoall("shmem_alltoallmem", g, dest, source, nelems);
	return 0;
}

#define COLL_DEF(N, T)							\
int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source,	\
			  size_t nelems, int PE_root)			\
{									\
	struct shmem_group *g = team_group("shmem_" #N "_broadcast", team); \
	if (!g)								\
		return -1;						\
	bcast("shmem_" #N "_broadcast", g, dest, source,		\
	      nelems * sizeof(T), PE_root, true);			\
	return 0;							\
}									\
int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source,	\
			size_t nelems)					\
{									\
	struct shmem_group *g = team_group("shmem_" #N "_collect", team); \
	if (!g)								\
		return -1;						\
	collect("shmem_" #N "_collect", g, dest, source, nelems * sizeof(T)); \
	return 0;							\
}									\
int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source,	\
			 size_t nelems)					\
{									\
	struct shmem_group *g = team_group("shmem_" #N "_fcollect", team); \
	if (!g)								\
		return -1;						\
	fcollect("shmem_" #N "_fcollect", g, dest, source, nelems * sizeof(T)); \
	return 0;							\
}									\
int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source,	\
			 size_t nelems)					\
{									\
	struct shmem_group *g = team_group("shmem_" #N "_alltoall", team); \
	if (!g)								\
		return -1;						\
	alltoall("shmem_" #N "_alltoall", g, dest, source, nelems * sizeof(T)); \
	return 0;							\
}
PERCS_SHMEM_RMA_TYPES(COLL_DEF)

/* ---- the 1.0-1.3 active-set forms ------------------------------------------ */

#define OLD_COLL_DEF(S)							\
void shmem_broadcast##S(void *dest, const void *source, size_t nelems,	\
			int PE_root, int PE_start, int logPE_stride,	\
			int PE_size, long *pSync)			\
{									\
	struct shmem_group g;						\
	(void)pSync;							\
	shmem_aset_group("shmem_broadcast" #S, PE_start, logPE_stride,	\
			 PE_size, &g);					\
	bcast("shmem_broadcast" #S, &g, dest, source, nelems * (S / 8),	\
	      PE_root, false);						\
}									\
void shmem_collect##S(void *dest, const void *source, size_t nelems,	\
		      int PE_start, int logPE_stride, int PE_size,	\
		      long *pSync)					\
{									\
	struct shmem_group g;						\
	(void)pSync;							\
	shmem_aset_group("shmem_collect" #S, PE_start, logPE_stride,	\
			 PE_size, &g);					\
	collect("shmem_collect" #S, &g, dest, source, nelems * (S / 8)); \
}									\
void shmem_fcollect##S(void *dest, const void *source, size_t nelems,	\
		       int PE_start, int logPE_stride, int PE_size,	\
		       long *pSync)					\
{									\
	struct shmem_group g;						\
	(void)pSync;							\
	shmem_aset_group("shmem_fcollect" #S, PE_start, logPE_stride,	\
			 PE_size, &g);					\
	fcollect("shmem_fcollect" #S, &g, dest, source, nelems * (S / 8)); \
}									\
void shmem_alltoall##S(void *dest, const void *source, size_t nelems,	\
		       int PE_start, int logPE_stride, int PE_size,	\
		       long *pSync)					\
{									\
	struct shmem_group g;						\
	(void)pSync;							\
	shmem_aset_group("shmem_alltoall" #S, PE_start, logPE_stride,	\
			 PE_size, &g);					\
	alltoall("shmem_alltoall" #S, &g, dest, source, nelems * (S / 8)); \
}
OLD_COLL_DEF(32)
OLD_COLL_DEF(64)
