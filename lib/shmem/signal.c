// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: put-with-signal (OpenSHMEM 1.5, section 9.8).
 *
 * The data goes as any put (rma.c).  Once it has completed - its CQ entry
 * says the bytes are in the target's memory - the signal word is updated
 * by the HFI's atomic unit, so that the update is atomic with other PEs'
 * updates of the same word, and a PE that sees the signal finds the data.
 * The _nbi forms return without waiting for the signal's atomic; the data
 * has still landed first.
 */
#include "shmem_internal.h"

static void put_signal(const char *call, void *dest, const void *source,
		       size_t len, uint64_t *sig_addr, uint64_t signal,
		       int sig_op, int pe, bool nbi)
{
	shmem_need_init(call);
	if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
		shmem_die(call, "no signal operation %d (SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD)",
			  sig_op);
	if (!sig_addr)
		shmem_die(call, "NULL sig_addr");
	/* Refuse a non-symmetric signal before any byte moves. */
	if (!shmem_is_symmetric(sig_addr, sizeof(*sig_addr)))
		shmem_die(call, "sig_addr %p is not symmetric memory",
			  (void *)sig_addr);
	shmem_put_bytes(call, dest, source, len, pe, nbi);
	shmem_rma_wait(call, 0);
	shmem_amo_signal(call, sig_addr, pe, sig_op == SHMEM_SIGNAL_ADD,
			 signal, nbi);
}

SHMEM_CTX_DEF(void, putmem_signal,
	{ put_signal(call, dest, source, nelems, sig_addr, signal, sig_op,
		     CTX_PE(pe), false); },
	void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
	uint64_t signal, int sig_op, int pe)
SHMEM_CTX_DEF(void, putmem_signal_nbi,
	{ put_signal(call, dest, source, nelems, sig_addr, signal, sig_op,
		     CTX_PE(pe), true); },
	void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
	uint64_t signal, int sig_op, int pe)

#define SIGNAL_DEF(N, T)						\
SHMEM_CTX_DEF(void, N##_put_signal,					\
	{ put_signal(call, dest, source, nelems * sizeof(T), sig_addr,	\
		     signal, sig_op, CTX_PE(pe), false); },		\
	T *dest, const T *source, size_t nelems, uint64_t *sig_addr,	\
	uint64_t signal, int sig_op, int pe)				\
SHMEM_CTX_DEF(void, N##_put_signal_nbi,					\
	{ put_signal(call, dest, source, nelems * sizeof(T), sig_addr,	\
		     signal, sig_op, CTX_PE(pe), true); },		\
	T *dest, const T *source, size_t nelems, uint64_t *sig_addr,	\
	uint64_t signal, int sig_op, int pe)
PERCS_SHMEM_RMA_TYPES(SIGNAL_DEF)

#define SIGNAL_SIZE_DEF(S)						\
SHMEM_CTX_DEF(void, put##S##_signal,					\
	{ put_signal(call, dest, source, nelems * (S / 8), sig_addr,	\
		     signal, sig_op, CTX_PE(pe), false); },		\
	void *dest, const void *source, size_t nelems,			\
	uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)	\
SHMEM_CTX_DEF(void, put##S##_signal_nbi,				\
	{ put_signal(call, dest, source, nelems * (S / 8), sig_addr,	\
		     signal, sig_op, CTX_PE(pe), true); },		\
	void *dest, const void *source, size_t nelems,			\
	uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
PERCS_SHMEM_SIZES(SIGNAL_SIZE_DEF)

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
	shmem_need_init("shmem_signal_fetch");
	if (!sig_addr)
		shmem_die("shmem_signal_fetch", "NULL sig_addr");
	return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp,
				 uint64_t cmp_value)
{
	shmem_uint64_wait_until(sig_addr, cmp, cmp_value);
	return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}
