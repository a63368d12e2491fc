/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs: every limit of the module in one place.
 */
#ifndef _PERCS_PARAMS_H
#define _PERCS_PARAMS_H

#define PERCS_HFIS_PER_HUB	2
#define PERCS_MAX_WINDOWS	4096	/* windows_per_hfi upper bound */
#define PERCS_MAX_HUBS		1024	/* hubs the module emulates at most */
#define PERCS_DEF_WINDOWS	256
#define PERCS_DEF_SUPERNODES	2
#define PERCS_DEF_HUBS_PER_SN	4
#define PERCS_DEF_POLL_IDLE_US	1000

/* Route classes counted per HFI: same hub, same supernode, other one. */
#define PERCS_NR_ROUTE_CLASSES	3

/*
 * Packets one engine pass moves before it drops the window's send lock
 * and may reschedule: bounds the time spent with preemption disabled.
 */
#define PERCS_ENGINE_BUDGET	256

/*
 * The network stage (net.c): packets held per target at most, and the
 * reorder knobs' defaults and limits.
 */
#define PERCS_FLIGHT_MAX		64
#define PERCS_FLIGHT_DEFAULT_DEPTH	8
#define PERCS_FLIGHT_MAX_DEPTH		PERCS_FLIGHT_MAX
#define PERCS_FLIGHT_DEFAULT_HOLD_US	200
#define PERCS_FLIGHT_MAX_HOLD_US	1000000
/* Fault knobs count chances per million: this value is certainty. */
#define PERCS_PPM_MAX			1000000

/* Injected transient link errors: at most one transmission in two fails. */
#define PERCS_ISR_MAX_ERROR_PPM	500000
#define PERCS_ISR_ALL_LINKS	U32_MAX	/* percs_isr_set_error_ppm(): every link */

/*
 * RDMA (rdma.c): packets of data one engine pass moves for a window's
 * transfers (about 250 KB), and the operations a window may have posted
 * and not completed; a descriptor beyond that waits in the send FIFO.
 */
#define PERCS_RDMA_PASS_SEGS	128
#define PERCS_RDMA_MAX_OPS	PERCS_CQ_ENTRIES

/*
 * Atomics (atomic.c).  A window has at most PERCS_ATOMIC_MAX_OPS
 * descriptors outstanding, and at most PERCS_AMO_SEQ_WINDOW to one target
 * window (the target remembers that many replies per initiator); a
 * descriptor beyond either waits in the send FIFO.  An unanswered request
 * is sent again after PERCS_AMO_RTO_MIN_US, doubling up to
 * PERCS_AMO_RTO_MAX_US (a lost packet costs little; one the network holds
 * long is not copied hundreds of times), until PERCS_AMO_TIMEOUT_MS have
 * passed since the first send: then the operation completes with
 * -ETIMEDOUT.
 */
#define PERCS_ATOMIC_MAX_OPS	128
#define PERCS_AMO_SEQ_WINDOW	64
#define PERCS_AMO_RTO_MIN_US	50
#define PERCS_AMO_RTO_MAX_US	20000
#define PERCS_AMO_TIMEOUT_MS	2000

/* The lossy stage (net.c): injected drops and duplicates, at most 50%. */
#define PERCS_DGRAM_MAX_PPM	500000
/* Datagrams it holds back at once at most (beyond that they go through). */
#define PERCS_DGRAM_MAX_HELD	4096

/* CAU tree entries of each hub (module parameter cau_trees). */
#define PERCS_DEF_CAU_TREES	64	/* as the Power 775 */
#define PERCS_MAX_CAU_TREES	4096

/* Blocked senders one credit kick retries. */
#define PERCS_CREDIT_BATCH	64

/* mmap keys: region r is at offset (r + 1) << PERCS_MMAP_KEY_SHIFT. */
#define PERCS_MMAP_KEY_SHIFT	28

/*
 * Memory registrations (nmmu.c).  A handle is (generation << 16) | slot:
 * slots 1..PERCS_MR_MAX_PER_WINDOW index the window's xarray, the
 * generation (a per-window count of registrations) makes a stale handle
 * miss.  The largest registration is PERCS_MR_MAX_LENGTH (uapi).
 */
#define PERCS_MR_MAX_PER_WINDOW	8192	/* registrations one window holds */
#define PERCS_MR_SLOT_BITS	16
#define PERCS_MR_SLOT_MASK	((1U << PERCS_MR_SLOT_BITS) - 1)
/* Translation cache entries per window, by slot (a power of two). */
#define PERCS_MR_TLB_ENTRIES	8

/*
 * Per-user quotas (quota.c), module parameters writable by root; the
 * defaults let one user take the whole default system (2 x 4 hubs: 4096
 * windows, 512 CAU tree entries) and fill a window's registration table
 * several times over.
 */
#define PERCS_DEF_USER_WINDOWS		4096
#define PERCS_DEF_USER_MRS		65536
#define PERCS_DEF_USER_CAU_TREES	512
#define PERCS_DEF_USER_JOBS		4096
#define PERCS_USERS_HASH_BITS		6

/*
 * A kick (PERCS_IOC_KICK, fsync) runs at most this many engine passes,
 * each at most %PERCS_ENGINE_BUDGET FIFO packets: 65536 packets, twice a
 * full send FIFO of the largest size, whatever another process sharing
 * the mapping writes meanwhile.  What is left waits for the next kick.
 */
#define PERCS_KICK_MAX_PASSES	256

/*
 * Auto mode: after the polling thread stepped aside for another task,
 * kicks of auto windows wake it again at most this often (poll.c), the
 * delay doubling up to the maximum while every wake-up finds every CPU
 * busy.  A wake-up that moves the thread over the CPUs and steps aside
 * costs some tens of microseconds on a TCG VM: at the maximum, well under
 * 1% of the CPUs that are busy with other work.
 */
#define PERCS_AUTO_RETRY_US	1000
#define PERCS_AUTO_RETRY_MAX_US	32000

/*
 * Auto mode: the polling thread steps aside only when another task has
 * wanted its CPU (and no other CPU was free) for this long.  Kernel
 * threads that wake for a moment on the thread's CPU (kworkers, RCU,
 * timers) get it through cond_resched() and are gone within it; a process
 * that spins on the CPU is not.  A TCG VM's kworker runs take some tens
 * of microseconds.
 */
#define PERCS_AUTO_CONTEND_US	200

/* Pages pinned per pin_user_pages() call before a resched check. */
#define PERCS_MR_PIN_BATCH	512

/*
 * The CAU's retransmission timeout: a transfer between two nodes of a
 * tree not acknowledged within it is sent again (coll.c).
 */
#define PERCS_CAU_RTO_NS	(100 * NSEC_PER_USEC)

/* Route look-ups per mode that debugfs isr/route_cost times. */
#define PERCS_ROUTE_COST_LOOKUPS	100000

#endif /* _PERCS_PARAMS_H */
