// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: distributed locks.
 *
 * A ticket lock in PE 0's copy of the symmetric long: the low 32 bits
 * count tickets served, the high 32 bits tickets taken, each changed by a
 * 4-byte operation of the atomic unit (so one never carries into the
 * other).  Taking is a fetch-add on the taken half; the holder's release
 * adds one to the served half; a waiter polls the served half with atomic
 * fetches, backing off.  Waiters are served in the order they came.
 */
#include <sched.h>
#include <time.h>

#include "shmem_internal.h"

#define LOCK_PE	0

static const struct percs_rmr *lock_rmr(const char *call, long *lock,
					uint64_t *off)
{
	shmem_need_init(call);
	if (!lock)
		shmem_die(call, "NULL lock");
	shmem_amo_before(call);
	return shmem_remote(call, lock, sizeof(*lock), LOCK_PE, off);
}

static void lock_fail(const char *call, int ret)
{
	shmem_die(call, "atomic on the lock at PE %d: %s", LOCK_PE,
		  percs_strerror(ret));
}

void shmem_set_lock(long *lock)
{
	const char *call = "shmem_set_lock";
	uint32_t ticket, served;
	unsigned int us = 1;
	uint64_t off;
	const struct percs_rmr *r = lock_rmr(call, lock, &off);
	int ret;

	ret = percs_atomic_fetch_add32(shmem_g.w, r, off + 4, 1, &ticket);
	if (ret)
		lock_fail(call, ret);
	for (;;) {
		ret = percs_atomic_fetch32(shmem_g.w, r, off, &served);
		if (ret)
			lock_fail(call, ret);
		if (served == ticket)
			break;
		/* Back off in proportion to the queue ahead of us. */
		sched_yield();
		nanosleep(&(struct timespec){ .tv_nsec = 1000L * us *
					      (ticket - served) }, NULL);
		if (us < 64)
			us *= 2;
	}
}

void shmem_clear_lock(long *lock)
{
	const char *call = "shmem_clear_lock";
	uint64_t off;
	const struct percs_rmr *r;
	int ret;

	shmem_need_init(call);
	/* What the holder wrote is complete before the next one enters. */
	shmem_do_quiet(call);
	r = lock_rmr(call, lock, &off);
	ret = percs_amo(shmem_g.w, r, off, PERCS_ATOMIC_ADD, 4, 1, 0, NULL,
			PERCS_AMO_F_BLOCK);
	if (ret)
		lock_fail(call, ret);
}

int shmem_test_lock(long *lock)
{
	const char *call = "shmem_test_lock";
	uint64_t off, v, old;
	const struct percs_rmr *r = lock_rmr(call, lock, &off);
	int ret;

	ret = percs_atomic_fetch64(shmem_g.w, r, off, &v);
	if (ret)
		lock_fail(call, ret);
	if ((uint32_t)v != (uint32_t)(v >> 32))
		return 1;	/* held, or others wait */
	/* Free: take the next ticket only if nobody took it meanwhile. */
	ret = percs_atomic_compare_swap64(shmem_g.w, r, off, v,
					  v + ((uint64_t)1 << 32), &old);
	if (ret)
		lock_fail(call, ret);
	return old == v ? 0 : 1;
}
