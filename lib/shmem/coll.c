// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: broadcast, collect, fcollect and alltoall(s) on teams and
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

/*
 * Strided: element k of the block for member j is source[(j * nelems + k)
 * * sst], and lands in dest[(i * nelems + k) * dst] on j (i: the sender),
 * as OpenSHMEM 1.5 says.  Packed into contiguous blocks, exchanged as
 * alltoall, unpacked.
 */
static void alltoalls(const char *call, struct shmem_group *g, void *dest,
		      const void *source, ptrdiff_t dst, ptrdiff_t sst,
		      size_t nelems, size_t es)
{
	size_t n = (size_t)g->set.size * nelems;
	char *s, *r;

	if (dst < 1 || sst < 1)
		shmem_die(call, "strides dst %td and sst %td: each must be at least 1",
			  dst, sst);
	s = calloc(1, n * es + 1);
	r = malloc(n * es + 1);
	if (!s || !r)
		shmem_die(call, "out of memory");
	for (size_t e = 0; e < n; e++)
		memcpy(s + e * es, (const char *)source + shmem_elem_off(e, sst, es), es);
	alltoall(call, g, r, s, nelems * es);
	for (size_t e = 0; e < n; e++)
		memcpy((char *)dest + shmem_elem_off(e, dst, es), r + e * es, es);
	free(s);
	free(r);
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

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source,
		       ptrdiff_t dst, ptrdiff_t sst, size_t nelems)
{
	struct shmem_group *g = team_group("shmem_alltoallsmem", team);

	if (!g)
		return -1;
	alltoalls("shmem_alltoallsmem", g, dest, source, dst, sst, nelems, 1);
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
}									\
int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source,	\
			  ptrdiff_t dst, ptrdiff_t sst, size_t nelems)	\
{									\
	struct shmem_group *g = team_group("shmem_" #N "_alltoalls", team); \
	if (!g)								\
		return -1;						\
	alltoalls("shmem_" #N "_alltoalls", g, dest, source, dst, sst,	\
		  nelems, sizeof(T));					\
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
}									\
void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst,	\
			ptrdiff_t sst, size_t nelems, int PE_start,	\
			int logPE_stride, int PE_size, long *pSync)	\
{									\
	struct shmem_group g;						\
	(void)pSync;							\
	shmem_aset_group("shmem_alltoalls" #S, PE_start, logPE_stride,	\
			 PE_size, &g);					\
	alltoalls("shmem_alltoalls" #S, &g, dest, source, dst, sst,	\
		  nelems, S / 8);					\
}
OLD_COLL_DEF(32)
OLD_COLL_DEF(64)
