// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: the typed and sized RMA calls, all over put/get of
 * bytes (rma.c); strided ones element by element.
 */
#include <string.h>

#include "shmem_internal.h"

static void iput(const char *call, char *dest, const char *src,
		 ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t size,
		 int pe)
{
	for (size_t i = 0; i < nelems; i++)
		shmem_put_bytes(call, dest + (ptrdiff_t)i * dst * (ptrdiff_t)size,
				src + (ptrdiff_t)i * sst * (ptrdiff_t)size, size,
				pe, true);
	/* Small elements travel in their descriptors: sources are free. */
	if (size > PERCS_RDMA_FIFO_MAX)
		shmem_rma_wait(call, 0);
}

static void iget(const char *call, char *dest, const char *src,
		 ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t size,
		 int pe)
{
	for (size_t i = 0; i < nelems; i++)
		shmem_get_bytes(call, dest + (ptrdiff_t)i * dst * (ptrdiff_t)size,
				src + (ptrdiff_t)i * sst * (ptrdiff_t)size, size,
				pe, true);
	shmem_rma_wait(call, 0);
}

#define RMA_DEF(N, T)							\
void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)	\
{ shmem_put_bytes("shmem_" #N "_put", dest, source, nelems * sizeof(T), pe, false); } \
void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)	\
{ shmem_get_bytes("shmem_" #N "_get", dest, source, nelems * sizeof(T), pe, false); } \
void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe) \
{ shmem_put_bytes("shmem_" #N "_put_nbi", dest, source, nelems * sizeof(T), pe, true); } \
void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe) \
{ shmem_get_bytes("shmem_" #N "_get_nbi", dest, source, nelems * sizeof(T), pe, true); } \
void shmem_##N##_p(T *dest, T value, int pe)				\
{ shmem_put_bytes("shmem_" #N "_p", dest, &value, sizeof(T), pe, true); } \
T shmem_##N##_g(const T *source, int pe)				\
{									\
	T v;								\
	shmem_get_bytes("shmem_" #N "_g", &v, source, sizeof(T), pe, false); \
	return v;							\
}									\
void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst,		\
		      ptrdiff_t sst, size_t nelems, int pe)		\
{ iput("shmem_" #N "_iput", (char *)dest, (const char *)source, dst, sst, \
       nelems, sizeof(T), pe); }					\
void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst,		\
		      ptrdiff_t sst, size_t nelems, int pe)		\
{ iget("shmem_" #N "_iget", (char *)dest, (const char *)source, dst, sst, \
       nelems, sizeof(T), pe); }
PERCS_SHMEM_RMA_TYPES(RMA_DEF)

#define SIZE_DEF(S)							\
void shmem_put##S(void *dest, const void *source, size_t nelems, int pe) \
{ shmem_put_bytes("shmem_put" #S, dest, source, nelems * (S / 8), pe, false); } \
void shmem_get##S(void *dest, const void *source, size_t nelems, int pe) \
{ shmem_get_bytes("shmem_get" #S, dest, source, nelems * (S / 8), pe, false); } \
void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems,	\
			int pe)						\
{ shmem_put_bytes("shmem_put" #S "_nbi", dest, source, nelems * (S / 8), pe, true); } \
void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems,	\
			int pe)						\
{ shmem_get_bytes("shmem_get" #S "_nbi", dest, source, nelems * (S / 8), pe, true); } \
void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst,	\
		   ptrdiff_t sst, size_t nelems, int pe)		\
{ iput("shmem_iput" #S, dest, source, dst, sst, nelems, S / 8, pe); }	\
void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst,	\
		   ptrdiff_t sst, size_t nelems, int pe)		\
{ iget("shmem_iget" #S, dest, source, dst, sst, nelems, S / 8, pe); }
PERCS_SHMEM_SIZES(SIZE_DEF)
