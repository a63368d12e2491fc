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
		shmem_put_bytes(call, dest + shmem_elem_off(i, dst, size),
				src + shmem_elem_off(i, sst, size), size,
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
		shmem_get_bytes(call, dest + shmem_elem_off(i, dst, size),
				src + shmem_elem_off(i, sst, size), size,
				pe, true);
	shmem_rma_wait(call, 0);
}

#define RMA_DEF(N, T)							\
SHMEM_CTX_DEF(void, N##_put,						\
	{ shmem_put_bytes(call, dest, source, nelems * sizeof(T),	\
			  CTX_PE(pe), false); },			\
	T *dest, const T *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, N##_get,						\
	{ shmem_get_bytes(call, dest, source, nelems * sizeof(T),	\
			  CTX_PE(pe), false); },			\
	T *dest, const T *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, N##_put_nbi,					\
	{ shmem_put_bytes(call, dest, source, nelems * sizeof(T),	\
			  CTX_PE(pe), true); },				\
	T *dest, const T *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, N##_get_nbi,					\
	{ shmem_get_bytes(call, dest, source, nelems * sizeof(T),	\
			  CTX_PE(pe), true); },				\
	T *dest, const T *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, N##_p,						\
	{ shmem_put_bytes(call, dest, &value, sizeof(T), CTX_PE(pe),	\
			  true); },					\
	T *dest, T value, int pe)					\
SHMEM_CTX_DEF(T, N##_g,							\
	{ T v;								\
	  shmem_get_bytes(call, &v, source, sizeof(T), CTX_PE(pe),	\
			  false);					\
	  return v; },							\
	const T *source, int pe)					\
SHMEM_CTX_DEF(void, N##_iput,						\
	{ iput(call, (char *)dest, (const char *)source, dst, sst,	\
	       nelems, sizeof(T), CTX_PE(pe)); },			\
	T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,		\
	size_t nelems, int pe)						\
SHMEM_CTX_DEF(void, N##_iget,						\
	{ iget(call, (char *)dest, (const char *)source, dst, sst,	\
	       nelems, sizeof(T), CTX_PE(pe)); },			\
	T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,		\
	size_t nelems, int pe)
PERCS_SHMEM_RMA_TYPES(RMA_DEF)

#define SIZE_DEF(S)							\
SHMEM_CTX_DEF(void, put##S,						\
	{ shmem_put_bytes(call, dest, source, nelems * (S / 8),	\
			  CTX_PE(pe), false); },			\
	void *dest, const void *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, get##S,						\
	{ shmem_get_bytes(call, dest, source, nelems * (S / 8),	\
			  CTX_PE(pe), false); },			\
	void *dest, const void *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, put##S##_nbi,					\
	{ shmem_put_bytes(call, dest, source, nelems * (S / 8),	\
			  CTX_PE(pe), true); },				\
	void *dest, const void *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, get##S##_nbi,					\
	{ shmem_get_bytes(call, dest, source, nelems * (S / 8),	\
			  CTX_PE(pe), true); },				\
	void *dest, const void *source, size_t nelems, int pe)		\
SHMEM_CTX_DEF(void, iput##S,						\
	{ iput(call, dest, source, dst, sst, nelems, S / 8,		\
	       CTX_PE(pe)); },						\
	void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,	\
	size_t nelems, int pe)						\
SHMEM_CTX_DEF(void, iget##S,						\
	{ iget(call, dest, source, dst, sst, nelems, S / 8,		\
	       CTX_PE(pe)); },						\
	void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,	\
	size_t nelems, int pe)
PERCS_SHMEM_SIZES(SIZE_DEF)
