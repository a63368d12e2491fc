// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: reductions.
 *
 * On the team's CAU tree when it has one and the CAU's ALU has the op for
 * the type: SUM/MIN/MAX/AND/OR/XOR of 32- and 64-bit integers (8- and
 * 16-bit ones widened to 32 bits and narrowed back: the low bits of a
 * wide sum are the narrow sum), SUM/MIN/MAX/PROD of float and double.
 * Otherwise (integer PROD, long double, complex, teams without a tree,
 * active sets) in software: member 0 gathers every member's vector,
 * combines them in member order and sends the result to all, so all get
 * bit-identical results.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "red_arith.h"
#include "team.h"

struct red_op {
	size_t size;
	bool is_float;
	bool is_signed;
	int cau_op;	/* PERCS_CAU_OP_*, -1 if the CAU lacks it */
	shmem_comb_fn comb;
};

static bool neg(long double v)
{
	return v < 0;
}

/* The CAU type the elements travel as, -1 if none; *@wide: widened. */
static int cau_type(const struct red_op *o, bool *wide)
{
	*wide = false;
	if (o->cau_op < 0)
		return -1;
	if (o->is_float)
		return o->size == 4 ? PERCS_CAU_T_F32 :
		       o->size == 8 ? PERCS_CAU_T_F64 : -1;
	if (o->size < 4) {
		*wide = true;
		return o->is_signed ? PERCS_CAU_T_S32 : PERCS_CAU_T_U32;
	}
	if (o->size == 4)
		return o->is_signed ? PERCS_CAU_T_S32 : PERCS_CAU_T_U32;
	if (o->size == 8)
		return o->is_signed ? PERCS_CAU_T_S64 : PERCS_CAU_T_U64;
	return -1;
}

static int reduce_cau(struct shmem_group *g, void *dest, const void *src,
		      size_t n, const struct red_op *o, int type, bool wide)
{
	int32_t *w;
	int ret;

	if (!wide)
		return percs_cau_allreduce(g->cau, src, dest, n, (unsigned int)type,
					   (unsigned int)o->cau_op);
	w = malloc(n * 4 + 4);
	if (!w)
		return -ENOMEM;
	shmem_red_widen(w, src, n, o->size, o->is_signed);
	ret = percs_cau_allreduce(g->cau, w, w, n, (unsigned int)type,
				  (unsigned int)o->cau_op);
	if (!ret)
		shmem_red_narrow(dest, w, n, o->size);
	free(w);
	return ret;
}

/*
 * Member 0 gathers every vector, combines them in member order and sends
 * the result to all: 2 (k - 1) messages where an allgather took k (k - 1),
 * and every member still gets the bit-identical result.
 */
static int reduce_sw(struct shmem_group *g, void *dest, const void *src,
		     size_t n, const struct red_op *o)
{
	size_t len = n * o->size;
	int k = g->set.size, ret, tag = shmem_group_tag(g);
	char *all = NULL;

	if (g->me == 0) {
		all = malloc(len * (size_t)k + 1);
		if (!all)
			return -ENOMEM;
	}
	ret = shmem_xchg_gather(&g->set, k, g->me, 0, src, len, all, g->ctx, tag);
	if (!ret && g->me == 0) {
		for (int i = 1; i < k; i++)
			o->comb(all, all + (size_t)i * len, n);
		memcpy(dest, all, len);
	}
	free(all);
	if (!ret)
		ret = shmem_xchg_bcast(&g->set, k, g->me, 0, dest, len, g->ctx,
				       shmem_group_tag(g));
	return ret;
}

static void reduce(const char *call, struct shmem_group *g, void *dest,
		   const void *src, size_t n, const struct red_op *o)
{
	bool wide;
	int type = cau_type(o, &wide), ret;

	if (!n)
		return;
	if (!dest || !src)
		shmem_die(call, "NULL %s", dest ? "source" : "dest");
	shmem_do_quiet(call);
	if (g->cau && type >= 0)
		ret = reduce_cau(g, dest, src, n, o, type, wide);
	else
		ret = reduce_sw(g, dest, src, n, o);
	if (ret)
		shmem_die(call, "%s", percs_strerror(ret));
}

#define RED_API(N, T, OP, CAUOP, FLT, SGN)				\
int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest,		\
			      const T *source, size_t nreduce)		\
{									\
	static const char call[] = "shmem_" #N "_" #OP "_reduce";	\
	struct red_op o = { sizeof(T), FLT, SGN, CAUOP, shmem_comb_##N##_##OP }; \
	shmem_need_init(call);						\
	if (team == SHMEM_TEAM_INVALID)					\
		return -1;						\
	if (team->g.me < 0)						\
		shmem_die(call, "PE %d is not in the team", shmem_g.me); \
	reduce(call, &team->g, dest, source, nreduce, &o);		\
	return 0;							\
}

#define IS_FLT(T)	((long double)(T)0.5 != 0)
#define IS_SGN(T)	neg((long double)(T)-1)
#define RED(N, T, OP, CAUOP)						\
	RED_API(N, T, OP, CAUOP, IS_FLT(T), IS_SGN(T))

#define BIT_RED(N, T)							\
	RED(N, T, and, PERCS_CAU_OP_AND)				\
	RED(N, T, or, PERCS_CAU_OP_OR)					\
	RED(N, T, xor, PERCS_CAU_OP_XOR)
#define CMP_RED(N, T)							\
	RED(N, T, max, PERCS_CAU_OP_MAX)				\
	RED(N, T, min, PERCS_CAU_OP_MIN)
/* The CAU multiplies floats only. */
#define ARITH_RED(N, T)							\
	RED(N, T, sum, PERCS_CAU_OP_SUM)				\
	RED(N, T, prod, IS_FLT(T) ? PERCS_CAU_OP_PROD : -1)
PERCS_SHMEM_BIT_RED_TYPES(BIT_RED)
PERCS_SHMEM_CMP_RED_TYPES(CMP_RED)
PERCS_SHMEM_CMP_RED_TYPES(ARITH_RED)
/* Complex: software only. */
RED_API(complexf, float _Complex, sum, -1, true, true)
RED_API(complexf, float _Complex, prod, -1, true, true)
RED_API(complexd, double _Complex, sum, -1, true, true)
RED_API(complexd, double _Complex, prod, -1, true, true)

/* ---- the 1.0-1.3 active-set reductions (pWrk and pSync unused) ---------- */

#define OLD_RED1(N, T, OP)						\
void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce,	\
			       int PE_start, int logPE_stride,		\
			       int PE_size, T *pWrk, long *pSync)	\
{									\
	static const char call[] = "shmem_" #N "_" #OP "_to_all";	\
	struct red_op o = { sizeof(T), false, false, -1, shmem_comb_##N##_##OP }; \
	struct shmem_group g;						\
	(void)pWrk;							\
	(void)pSync;							\
	shmem_aset_group(call, PE_start, logPE_stride, PE_size, &g);	\
	if (nreduce < 0)						\
		shmem_die(call, "nreduce %d is negative", nreduce);	\
	reduce(call, &g, dest, source, (size_t)nreduce, &o);		\
}
#define OLD_BIT(N, T) OLD_RED1(N, T, and) OLD_RED1(N, T, or) OLD_RED1(N, T, xor)
#define OLD_NUM(N, T)							\
	OLD_RED1(N, T, max) OLD_RED1(N, T, min) OLD_RED1(N, T, sum)	\
	OLD_RED1(N, T, prod)
PERCS_SHMEM_OLD_INT_TYPES(OLD_BIT)
PERCS_SHMEM_OLD_INT_TYPES(OLD_NUM)
PERCS_SHMEM_OLD_FLT_TYPES(OLD_NUM)
OLD_RED1(complexf, float _Complex, sum)
OLD_RED1(complexf, float _Complex, prod)
OLD_RED1(complexd, double _Complex, sum)
OLD_RED1(complexd, double _Complex, prod)
