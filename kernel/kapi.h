/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs: the kernel-internal interface percs.ko exports to the modules
 * built on it (percs_verbs.ko).  Everything a client needs is declared
 * here; the structs are opaque to it.  percs.ko never calls a client: a
 * client holds a module reference on percs.ko (its symbols), so the
 * system and its HFIs outlive every client.
 *
 * What a client gets:
 *  - the system and its HFIs, with their place in the topology;
 *  - a job of its own, which no native window can join (it has no fd);
 *  - kernel windows: HFI window slots owned by the client, in its job,
 *    which native windows see as reserved and can never reach;
 *  - the network: every transfer between two kernel windows is routed by
 *    the ISR, counted on the links and HFI counters and, when the client
 *    says it is unreliable, meets the drop and duplicate knobs;
 *  - memory registrations pinned and charged exactly as native ones
 *    (RLIMIT_MEMLOCK on the user's locked_vm, VmPin, max_mrs_per_user),
 *    with the NMMU's copy and atomic helpers.
 */
#ifndef _PERCS_KAPI_H
#define _PERCS_KAPI_H

#include <linux/types.h>

struct percs_dev;
struct percs_hfi;
struct percs_window;
struct percs_mr;
struct percs_job;

/**
 * struct percs_kapi_hfi_info - where an HFI sits
 * @id: global HFI number (hub * 2 + unit)
 * @hub: its hub
 * @unit: its unit within the hub (0 or 1)
 * @supernode: its hub's supernode
 * @windows: windows of the HFI
 */
struct percs_kapi_hfi_info {
	u32 id;
	u32 hub;
	u32 unit;
	u32 supernode;
	u32 windows;
};

/* percs_kapi_xfer() flags */
#define PERCS_KAPI_XFER_UNRELIABLE	(1U << 0) /* drop/dup knobs apply */

/**
 * percs_kapi_system() - the emulated system
 *
 * Return: the system percs.ko created at load; valid while the caller
 * holds percs.ko (any module that links against these symbols does).
 */
struct percs_dev *percs_kapi_system(void);

/**
 * percs_kapi_nr_hfis() - HFIs of the system
 * @pd: the system
 *
 * Return: their number.
 */
u32 percs_kapi_nr_hfis(struct percs_dev *pd);

/**
 * percs_kapi_hfi() - one HFI
 * @pd: the system
 * @id: 0 .. percs_kapi_nr_hfis() - 1
 * @info: out: its place in the topology
 *
 * Return: the HFI, or NULL for a bad @id.
 */
struct percs_hfi *percs_kapi_hfi(struct percs_dev *pd, u32 id,
				 struct percs_kapi_hfi_info *info);

/**
 * percs_kapi_job_create() - a job of the client's own
 * @pd: the system
 *
 * The job has no file, so no window reservation can name it: native
 * windows never join it, whatever their caller's capabilities.
 * Process context.
 *
 * Return: the job (drop it with percs_kapi_job_put()), or
 * ERR_PTR(-ENOSPC) when no key is free, ERR_PTR(-ENOMEM).
 */
struct percs_job *percs_kapi_job_create(struct percs_dev *pd);

/**
 * percs_kapi_job_put() - drop the reference of percs_kapi_job_create()
 * @job: the job; it goes with the last of its windows
 */
void percs_kapi_job_put(struct percs_job *job);

/**
 * percs_kapi_job_key() - the key the job's packets carry
 * @job: the job
 *
 * Return: the key (for messages and queries only: keys admit nobody).
 */
u32 percs_kapi_job_key(const struct percs_job *job);

/**
 * percs_kapi_window_create() - reserve a kernel window
 * @hfi: the HFI
 * @job: a job from percs_kapi_job_create()
 *
 * The window takes an index of the HFI like a native reservation, is
 * charged to the calling user's max_windows_per_user, shows in window
 * queries (flag %PERCS_WINDOW_F_KERNEL) and receives nothing from native
 * windows (different job).  Process context.
 *
 * Return: the window, or ERR_PTR(-ENOSPC) when the HFI has no free
 * window, ERR_PTR(-EDQUOT) at the user's window quota, ERR_PTR(-ENOMEM).
 */
struct percs_window *percs_kapi_window_create(struct percs_hfi *hfi,
					      struct percs_job *job);

/**
 * percs_kapi_window_destroy() - release a kernel window
 * @w: from percs_kapi_window_create(); no percs_kapi_xfer() on it may
 *	run or start
 *
 * Process context.
 */
void percs_kapi_window_destroy(struct percs_window *w);

/**
 * percs_kapi_window_index() - a window's index within its HFI
 * @w: the window
 *
 * Return: the index.
 */
u32 percs_kapi_window_index(const struct percs_window *w);

/**
 * percs_kapi_xfer() - put one transfer between two windows on the network
 * @src: the sending kernel window; the caller serialises calls on it
 * @hub: destination hub
 * @unit: destination HFI within the hub
 * @window: destination window index
 * @bytes: payload bytes (cut into packets of at most %PERCS_MAX_PAYLOAD)
 * @flags: PERCS_KAPI_XFER_*
 *
 * The ISR routes it (the fault knobs on links, link state), the ownership
 * rule of window.c decides whether the target may receive it, and the
 * packets are counted on the links they cross and on the sending HFI's
 * counters.  The caller moves the bytes itself.  Any context, takes only
 * the sending window's send_lock and the target's recv_lock.
 *
 * Return: the copies that arrive (1; 0 or 2 only with
 * %PERCS_KAPI_XFER_UNRELIABLE, when a knob dropped or duplicated it),
 * -EHOSTUNREACH (no hub, or no route left), -EADDRNOTAVAIL (no window
 * index), -ECONNREFUSED (no window there, or it is being released),
 * -EACCES (a window of another job), -EINVAL (unknown flags).
 */
int percs_kapi_xfer(struct percs_window *src, u32 hub, u32 unit, u32 window,
		    u64 bytes, u32 flags);

/**
 * percs_kapi_mr_pin() - register user memory of the calling process
 * @pd: the system
 * @addr: first byte
 * @length: bytes
 * @access: PERCS_ACCESS_* rights
 *
 * The pages are pinned and charged by the same code as
 * PERCS_IOC_MR_REGISTER.  The registration belongs to no window: only
 * the caller can name it.  Process context.
 *
 * Return: the registration holding one reference, or ERR_PTR() with the
 * errno of PERCS_IOC_MR_REGISTER (-EINVAL, -EFAULT, -ENOMEM, -EDQUOT).
 */
struct percs_mr *percs_kapi_mr_pin(struct percs_dev *pd, u64 addr,
				   u64 length, u32 access);

/**
 * percs_kapi_mr_unpin() - drop the reference of percs_kapi_mr_pin()
 * @mr: the registration
 *
 * The pages are uncharged now and unpinned after an RCU grace period,
 * so a user that found @mr under rcu_read_lock() may finish with it.
 * Any context.
 */
void percs_kapi_mr_unpin(struct percs_mr *mr);

/**
 * percs_kapi_mr_copy() - copy between two registrations
 * @dst: written
 * @daddr: first byte written
 * @src: read
 * @saddr: first byte read
 * @len: bytes
 *
 * Any context, never sleeps.
 *
 * Return: 0 or -ERANGE (nothing copied).
 */
int percs_kapi_mr_copy(struct percs_mr *dst, u64 daddr, struct percs_mr *src,
		       u64 saddr, size_t len);

/**
 * percs_kapi_mr_read() - copy out of a registration
 * @mr: the registration
 * @addr: first byte
 * @buf: kernel buffer
 * @len: bytes
 *
 * Return: 0 or -ERANGE (nothing copied).
 */
int percs_kapi_mr_read(struct percs_mr *mr, u64 addr, void *buf, size_t len);

/**
 * percs_kapi_mr_write() - copy into a registration
 * @mr: the registration
 * @addr: first byte
 * @buf: kernel buffer
 * @len: bytes
 *
 * Return: 0 or -ERANGE (nothing copied).
 */
int percs_kapi_mr_write(struct percs_mr *mr, u64 addr, const void *buf,
			size_t len);

/* percs_kapi_mr_atomic64() operations */
#define PERCS_KAPI_AMO_FETCH_ADD	0
#define PERCS_KAPI_AMO_CMP_SWAP		1

/**
 * percs_kapi_mr_atomic64() - an atomic operation on a 64-bit word
 * @mr: the registration
 * @addr: the word, 8-byte aligned
 * @op: PERCS_KAPI_AMO_*
 * @a: the addend, or the value compared
 * @b: the value swapped in (compare-and-swap)
 * @orig: out: the value found
 *
 * Atomic against every other atomic on the word, by the HFI or the CPU.
 * Any context.
 *
 * Return: 0, -ERANGE (outside @mr), -EINVAL (@op, or @addr misaligned).
 */
int percs_kapi_mr_atomic64(struct percs_mr *mr, u64 addr, u32 op, u64 a,
			   u64 b, u64 *orig);

#endif /* _PERCS_KAPI_H */
