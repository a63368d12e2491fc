/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem: exchanges among a set of PEs over the job's messaging
 * endpoint (startup, barriers, software collectives).  A set is PEs
 * start + i x stride, i < size; NULL is every PE.  Each call returns 0 or
 * the endpoint's -errno.  Messages between two PEs on one context never
 * overtake each other, so the same tag may be used call after call.
 */
#ifndef LIBPERCS_SHMEM_XCHG_H
#define LIBPERCS_SHMEM_XCHG_H

#include <stddef.h>
#include <stdint.h>

#include "pes.h"


/* Member i's @len bytes land at @recv + i x @len (this member's copied). */
int shmem_xchg_allgather(const struct shmem_pes *set, int n, int me,
			 const void *send, size_t len, void *recv,
			 uint32_t ctx, int tag);
/* Member i's @lens[i] bytes land at @recv + @offs[i]. */
int shmem_xchg_allgatherv(const struct shmem_pes *set, int n, int me,
			  const void *send, const size_t *lens,
			  const size_t *offs, void *recv, uint32_t ctx, int tag);
/* Block j of @send (@len bytes) to member j, at @recv + me x @len there. */
int shmem_xchg_alltoall(const struct shmem_pes *set, int n, int me,
			const void *send, size_t len, void *recv,
			uint32_t ctx, int tag);
/* Member i's @len bytes land at @root's @recv + i x @len (@recv: root's). */
int shmem_xchg_gather(const struct shmem_pes *set, int n, int me, int root,
		      const void *send, size_t len, void *recv, uint32_t ctx,
		      int tag);
/* @root's @len bytes at @buf to every member's @buf. */
int shmem_xchg_bcast(const struct shmem_pes *set, int n, int me, int root,
		     void *buf, size_t len, uint32_t ctx, int tag);
/* Return once every member has entered (dissemination, log2 n rounds). */
int shmem_xchg_barrier(const struct shmem_pes *set, int n, int me,
		       uint32_t ctx, int tag);

#endif /* LIBPERCS_SHMEM_XCHG_H */
