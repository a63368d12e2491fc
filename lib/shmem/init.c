// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: setup, exit, queries and the fatal-error path.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shmem_internal.h"
#include "xchg.h"

struct shmem_state shmem_g = { .me = -1, .npes = -1 };

noreturn void shmem_die(const char *call, const char *fmt, ...)
{
	const char *rank = getenv("PERCS_RANK");
	char pe[24], msg[512];
	va_list ap;

	/* Before init the launcher's variable still says which PE we are. */
	if (shmem_g.me >= 0)
		snprintf(pe, sizeof(pe), "%d", shmem_g.me);
	else
		snprintf(pe, sizeof(pe), "%.16s", rank ? rank : "?");
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One write, so that PEs dying together do not interleave. */
	fflush(stdout);
	fprintf(stderr, "percs-shmem: PE %s: %s: %s\n", pe, call, msg);
	if (shmem_g.job)
		percs_msg_job_abort(shmem_g.job, 1);
	_exit(1);
}

void shmem_check_pe(const char *call, int pe)
{
	if (pe < 0 || pe >= shmem_g.npes)
		shmem_die(call, "PE %d is out of range (0 .. %d)", pe,
			  shmem_g.npes - 1);
}

/* What each PE tells every other at startup. */
struct shmem_hello {
	struct percs_addr win;
	struct shmem_peer regs;
};

static void init_exchange(void)
{
	struct shmem_hello mine, *all;
	int ret;

	all = calloc((size_t)shmem_g.npes, sizeof(*all));
	shmem_g.peers = calloc((size_t)shmem_g.npes, sizeof(*shmem_g.peers));
	shmem_g.wins = calloc((size_t)shmem_g.npes, sizeof(*shmem_g.wins));
	if (!all || !shmem_g.peers || !shmem_g.wins)
		shmem_die("shmem_init", "out of memory");
	memset(&mine, 0, sizeof(mine));
	mine.win = percs_window_addr(shmem_g.w);
	mine.regs.heap.win = mine.win;
	mine.regs.heap.handle = shmem_g.heap_handle;
	mine.regs.heap.base = (uint64_t)(uintptr_t)shmem_g.heap;
	mine.regs.heap.length = shmem_g.heap_size;
	mine.regs.data.win = mine.win;
	mine.regs.data.handle = shmem_g.data_handle;
	mine.regs.data.base = (uint64_t)(uintptr_t)shmem_g.data;
	mine.regs.data.length = shmem_g.data_len;
	ret = shmem_xchg_allgather(NULL, shmem_g.npes, shmem_g.me, &mine,
				   sizeof(mine), all, SHMEM_CTX_BOOT, 0);
	if (ret)
		shmem_die("shmem_init", "exchanging registrations: %s",
			  strerror(-ret));
	for (int i = 0; i < shmem_g.npes; i++) {
		shmem_g.wins[i] = all[i].win;
		shmem_g.peers[i] = all[i].regs;
	}
	free(all);
}

void shmem_init(void)
{
	struct percs_window_attr wa = { .window = PERCS_WINDOW_ANY };
	unsigned long hub, unit;
	const char *s;
	int ret;

	if (shmem_g.initialized)
		return;	/* 1.5: further calls have no effect */
	if (shmem_g.finalized)
		shmem_die("shmem_init", "called again after shmem_finalize()");
	ret = percs_msg_job_join(&shmem_g.job);
	if (ret)
		shmem_die("shmem_init", "cannot join the job: %s%s",
			  strerror(-ret), ret == -ENOENT ?
			  " (start the program with percs-run)" : "");
	shmem_g.m = percs_msg_job_endpoint(shmem_g.job);
	shmem_g.me = (int)percs_msg_rank(shmem_g.m);
	shmem_g.npes = (int)percs_msg_size(shmem_g.m);
	/* The RMA window goes on the HFI the launcher placed us on. */
	s = getenv("PERCS_HUB");
	hub = s ? strtoul(s, NULL, 10) : 0;
	s = getenv("PERCS_UNIT");
	unit = s ? strtoul(s, NULL, 10) : 0;
	ret = percs_hfi_open((unsigned int)hub, (unsigned int)unit,
			     &shmem_g.hfi);
	if (!ret)
		ret = percs_window_reserve(shmem_g.hfi, &wa, &shmem_g.w);
	if (ret)
		shmem_die("shmem_init", "cannot reserve the RMA window: %s",
			  strerror(-ret));
	/*
	 * SHMEM programs signal with a non-fetching atomic and then wait on
	 * local memory: one held back for packing would never leave.
	 */
	ret = percs_atomic_set_packing(shmem_g.w, PERCS_PACK_OFF);
	if (!ret)
		ret = shmem_heap_init();
	if (ret)
		shmem_die("shmem_init", "%s", strerror(-ret));
	init_exchange();
	shmem_g.thread_level = SHMEM_THREAD_SINGLE;
	shmem_g.initialized = true;
	ret = shmem_team_init();
	if (ret)
		shmem_die("shmem_init", "setting up SHMEM_TEAM_WORLD: %s",
			  strerror(-ret));
	shmem_barrier_all();
}

/*
 * Up to SERIALIZED: the library keeps no per-thread state, so calls made
 * one at a time from any thread (ordered by the program's own locking)
 * are all it needs.  Not MULTIPLE: libpercs drives a window from one
 * thread at a time, and the blocking CAU collectives hold the RMA window
 * for their whole wait, so a lock around it would stall another thread's
 * put that a peer waits for before it enters the collective - a deadlock
 * (shmem.rst, "Threads").
 */
int shmem_init_thread(int requested, int *provided)
{
	if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE)
		shmem_die("shmem_init_thread", "no thread level %d", requested);
	shmem_init();
	shmem_g.thread_level = requested < SHMEM_THREAD_SERIALIZED ?
			       requested : SHMEM_THREAD_SERIALIZED;
	if (provided)
		*provided = shmem_g.thread_level;
	return 0;
}

void shmem_query_thread(int *provided)
{
	shmem_need_init("shmem_query_thread");
	if (provided)
		*provided = shmem_g.thread_level;
}

void shmem_finalize(void)
{
	int ret;

	if (!shmem_g.initialized)
		return;	/* 1.5: only the first call has an effect */
	shmem_do_quiet("shmem_finalize");
	/*
	 * In software, not on the CAU: a tree ended while a member still
	 * waits for its barrier's result would fail that member.
	 */
	ret = shmem_xchg_barrier(NULL, shmem_g.npes, shmem_g.me,
				 SHMEM_CTX_BOOT, 1);
	if (ret)
		shmem_die("shmem_finalize", "barrier: %s", percs_strerror(ret));
	shmem_team_fini();
	shmem_heap_fini();
	percs_window_release(shmem_g.w);
	percs_hfi_close(shmem_g.hfi);
	shmem_g.w = NULL;
	shmem_g.hfi = NULL;
	/* Waits for every PE: no window goes while another may use it. */
	ret = percs_msg_job_leave(shmem_g.job);
	shmem_g.job = NULL;
	shmem_g.m = NULL;
	free(shmem_g.peers);
	free(shmem_g.wins);
	shmem_g.peers = NULL;
	shmem_g.wins = NULL;
	shmem_g.initialized = false;
	shmem_g.finalized = true;
	if (ret)
		fprintf(stderr, "percs-shmem: PE %d: shmem_finalize: leaving the job: %s\n",
			shmem_g.me, strerror(-ret));
}

void shmem_global_exit(int status)
{
	fflush(stdout);
	fprintf(stderr, "percs-shmem: PE %d: shmem_global_exit(%d)\n",
		shmem_g.me, status);
	if (shmem_g.job)
		percs_msg_job_abort(shmem_g.job, status);
	exit(status);
}

int shmem_my_pe(void)
{
	return shmem_g.me;
}

int shmem_n_pes(void)
{
	return shmem_g.npes;
}

int shmem_pe_accessible(int pe)
{
	return shmem_g.initialized && pe >= 0 && pe < shmem_g.npes;
}

int shmem_addr_accessible(const void *addr, int pe)
{
	return shmem_pe_accessible(pe) && shmem_is_symmetric(addr, 1);
}

void *shmem_ptr(const void *dest, int pe)
{
	shmem_need_init("shmem_ptr");
	shmem_check_pe("shmem_ptr", pe);
	if (!shmem_is_symmetric(dest, 1))
		shmem_die("shmem_ptr", "address %p is not symmetric", dest);
	/* Other PEs are other processes: no load/store path to them. */
	return pe == shmem_g.me ? (void *)(uintptr_t)dest : NULL;
}

void shmem_info_get_version(int *major, int *minor)
{
	if (major)
		*major = SHMEM_MAJOR_VERSION;
	if (minor)
		*minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
	if (name)
		snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

/* ---- the 1.0-1.3 names ---------------------------------------------------- */

void start_pes(int npes)
{
	(void)npes;	/* 1.2: the launcher decides */
	shmem_init();
}

int _my_pe(void)
{
	return shmem_my_pe();
}

int _num_pes(void)
{
	return shmem_n_pes();
}
