// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: barriers and point-to-point synchronization.
 *
 * wait_until spins on local memory: other PEs' puts and atomics land in it
 * through the HFI without this PE's help.  With more PEs than CPUs the
 * writer may need ours, so the spin yields the CPU.
 */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "shmem_internal.h"
#include "team.h"
#include "xchg.h"

void shmem_barrier_all(void)
{
	shmem_need_init("shmem_barrier_all");
	shmem_do_quiet("shmem_barrier_all");
	shmem_team_barrier("shmem_barrier_all", shmem_team_world_ptr());
}

void shmem_sync_all(void)
{
	shmem_need_init("shmem_sync_all");
	shmem_team_barrier("shmem_sync_all", shmem_team_world_ptr());
}

/* An active set's context: start, log2 stride and size fit in 29 bits. */
uint32_t shmem_aset_ctx(int start, int log, int size)
{
	return 0xe0000000U | (uint32_t)start << 17 | (uint32_t)log << 13 |
	       (uint32_t)size;
}

/* This PE's index in an active set; aborts naming @call if not in it. */
int shmem_aset_check(const char *call, int start, int log, int size,
		     struct shmem_pes *set)
{
	int me = shmem_g.me, stride;

	shmem_need_init(call);
	if (start < 0 || log < 0 || log > 12 || size < 1 ||
	    start >= shmem_g.npes || size > shmem_g.npes ||
	    start + ((long)(size - 1) << log) >= shmem_g.npes)
		shmem_die(call, "active set PE_start %d, logPE_stride %d, PE_size %d leaves the %d PEs",
			  start, log, size, shmem_g.npes);
	stride = 1 << log;
	if (me < start || (me - start) % stride || (me - start) / stride >= size)
		shmem_die(call, "PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)",
			  me, start, log, size);
	set->start = start;
	set->stride = stride;
	set->size = size;
	return (me - start) / stride;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
	struct shmem_pes set;
	int idx, ret;

	(void)pSync;
	idx = shmem_aset_check("shmem_barrier", PE_start, logPE_stride,
			       PE_size, &set);
	shmem_do_quiet("shmem_barrier");
	ret = shmem_xchg_barrier(&set, PE_size, idx,
				 shmem_aset_ctx(PE_start, logPE_stride, PE_size),
				 0);
	if (ret)
		shmem_die("shmem_barrier", "%s", percs_strerror(ret));
}

/* ---- wait and test -------------------------------------------------------- */

/* Let the others run: spin briefly, then yield, then nap. */
static void relax(unsigned long *n)
{
	if (++*n < 64)
		return;
	if (*n < 4096) {
		sched_yield();
		return;
	}
	nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
}

static void check_cmp(const char *call, int cmp)
{
	shmem_need_init(call);
	if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE)
		shmem_die(call, "no comparison %d (SHMEM_CMP_EQ .. SHMEM_CMP_LE)",
			  cmp);
}

static void check_vec(const char *call, int cmp, const void *values,
		      size_t nelems)
{
	check_cmp(call, cmp);
	if (nelems && !values)
		shmem_die(call, "NULL cmp_values");
}

/* Elements not left out by @status (NULL: none is). */
static size_t live(size_t nelems, const int *status)
{
	size_t n = 0;

	for (size_t i = 0; i < nelems; i++)
		n += !(status && status[i]);
	return n;
}

#define CMP(v, cmp, c)							\
	((cmp) == SHMEM_CMP_EQ ? (v) == (c) : (cmp) == SHMEM_CMP_NE ? (v) != (c) : \
	 (cmp) == SHMEM_CMP_GT ? (v) > (c) : (cmp) == SHMEM_CMP_GE ? (v) >= (c) : \
	 (cmp) == SHMEM_CMP_LT ? (v) < (c) : (v) <= (c))

/*
 * The set forms share one loop each: element i compares with
 * vals[i * step] (step 0: one value for all, 1: the _vector forms).
 */
#define P2P_DEF(N, T)							\
static int N##_ok(T *p, int cmp, T c)					\
{									\
	T v = __atomic_load_n(p, __ATOMIC_ACQUIRE);			\
	return CMP(v, cmp, c);						\
}									\
static int N##_all(T *ivars, size_t nelems, const int *status, int cmp,	\
		   const T *vals, size_t step)				\
{									\
	for (size_t i = 0; i < nelems; i++)				\
		if (!(status && status[i]) &&				\
		    !N##_ok(&ivars[i], cmp, vals[i * step]))		\
			return 0;					\
	return 1;							\
}									\
static size_t N##_any(T *ivars, size_t nelems, const int *status,	\
		      int cmp, const T *vals, size_t step)		\
{									\
	for (size_t i = 0; i < nelems; i++)				\
		if (!(status && status[i]) &&				\
		    N##_ok(&ivars[i], cmp, vals[i * step]))		\
			return i;					\
	return SIZE_MAX;						\
}									\
static size_t N##_some(T *ivars, size_t nelems, size_t *indices,	\
		       const int *status, int cmp, const T *vals,	\
		       size_t step)					\
{									\
	size_t k = 0;							\
	for (size_t i = 0; i < nelems; i++)				\
		if (!(status && status[i]) &&				\
		    N##_ok(&ivars[i], cmp, vals[i * step]))		\
			indices[k++] = i;				\
	return k;							\
}									\
static size_t N##_wait_any(T *ivars, size_t nelems, const int *status,	\
			   int cmp, const T *vals, size_t step)		\
{									\
	unsigned long n = 0;						\
	size_t i;							\
	if (!live(nelems, status))					\
		return SIZE_MAX;					\
	while ((i = N##_any(ivars, nelems, status, cmp, vals, step)) ==	\
	       SIZE_MAX)						\
		relax(&n);						\
	return i;							\
}									\
static size_t N##_wait_some(T *ivars, size_t nelems, size_t *indices,	\
			    const int *status, int cmp, const T *vals,	\
			    size_t step)				\
{									\
	unsigned long n = 0;						\
	size_t k;							\
	if (!live(nelems, status))					\
		return 0;						\
	while (!(k = N##_some(ivars, nelems, indices, status, cmp, vals, \
			      step)))					\
		relax(&n);						\
	return k;							\
}									\
static void N##_wait_all(T *ivars, size_t nelems, const int *status,	\
			 int cmp, const T *vals, size_t step)		\
{									\
	unsigned long n = 0;						\
	while (!N##_all(ivars, nelems, status, cmp, vals, step))	\
		relax(&n);						\
}									\
int shmem_##N##_test(T *ivar, int cmp, T cmp_value)			\
{									\
	check_cmp("shmem_" #N "_test", cmp);				\
	return N##_ok(ivar, cmp, cmp_value);				\
}									\
void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)		\
{									\
	unsigned long n = 0;						\
	check_cmp("shmem_" #N "_wait_until", cmp);			\
	while (!N##_ok(ivar, cmp, cmp_value))				\
		relax(&n);						\
}									\
int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status,	\
			 int cmp, T cmp_value)				\
{									\
	check_cmp("shmem_" #N "_test_all", cmp);			\
	return N##_all(ivars, nelems, status, cmp, &cmp_value, 0);	\
}									\
size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status,	\
			    int cmp, T cmp_value)			\
{									\
	check_cmp("shmem_" #N "_test_any", cmp);			\
	return N##_any(ivars, nelems, status, cmp, &cmp_value, 0);	\
}									\
size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,	\
			     const int *status, int cmp, T cmp_value)	\
{									\
	check_cmp("shmem_" #N "_test_some", cmp);			\
	return N##_some(ivars, nelems, indices, status, cmp, &cmp_value, 0); \
}									\
size_t shmem_##N##_wait_until_all(T *ivars, size_t nelems,		\
				  const int *status, int cmp, T cmp_value) \
{									\
	check_cmp("shmem_" #N "_wait_until_all", cmp);			\
	N##_wait_all(ivars, nelems, status, cmp, &cmp_value, 0);	\
	return 0;							\
}									\
size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems,		\
				  const int *status, int cmp, T cmp_value) \
{									\
	check_cmp("shmem_" #N "_wait_until_any", cmp);			\
	return N##_wait_any(ivars, nelems, status, cmp, &cmp_value, 0);	\
}									\
size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems,		\
				   size_t *indices, const int *status,	\
				   int cmp, T cmp_value)		\
{									\
	check_cmp("shmem_" #N "_wait_until_some", cmp);			\
	return N##_wait_some(ivars, nelems, indices, status, cmp,	\
			     &cmp_value, 0);				\
}									\
int shmem_##N##_test_all_vector(T *ivars, size_t nelems,		\
				const int *status, int cmp,		\
				T *cmp_values)				\
{									\
	check_vec("shmem_" #N "_test_all_vector", cmp, cmp_values, nelems); \
	return N##_all(ivars, nelems, status, cmp, cmp_values, 1);	\
}									\
size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems,		\
				   const int *status, int cmp,		\
				   T *cmp_values)			\
{									\
	check_vec("shmem_" #N "_test_any_vector", cmp, cmp_values, nelems); \
	return N##_any(ivars, nelems, status, cmp, cmp_values, 1);	\
}									\
size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems,		\
				    size_t *indices, const int *status,	\
				    int cmp, T *cmp_values)		\
{									\
	check_vec("shmem_" #N "_test_some_vector", cmp, cmp_values,	\
		  nelems);						\
	return N##_some(ivars, nelems, indices, status, cmp, cmp_values, 1); \
}									\
void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems,		\
				       const int *status, int cmp,	\
				       T *cmp_values)			\
{									\
	check_vec("shmem_" #N "_wait_until_all_vector", cmp, cmp_values, \
		  nelems);						\
	N##_wait_all(ivars, nelems, status, cmp, cmp_values, 1);	\
}									\
size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems,	\
					 const int *status, int cmp,	\
					 T *cmp_values)			\
{									\
	check_vec("shmem_" #N "_wait_until_any_vector", cmp, cmp_values, \
		  nelems);						\
	return N##_wait_any(ivars, nelems, status, cmp, cmp_values, 1);	\
}									\
size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems,	\
					  size_t *indices,		\
					  const int *status, int cmp,	\
					  T *cmp_values)		\
{									\
	check_vec("shmem_" #N "_wait_until_some_vector", cmp, cmp_values, \
		  nelems);						\
	return N##_wait_some(ivars, nelems, indices, status, cmp,	\
			     cmp_values, 1);				\
}
PERCS_SHMEM_P2P_TYPES(P2P_DEF)
