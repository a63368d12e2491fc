/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs: userspace driver for the emulated PERCS HFI.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; -EAGAIN means "busy, try again" (ICSWX's rejected condition, a
 * full send FIFO).  No function blocks unless its name says wait, except
 * the blocking atomics (fetching, swap and quiet; see "Remote atomics")
 * and the blocking collectives (see "Collectives").
 * Thread safety: a window is driven by one thread at a time (as a hardware
 * window is); different windows are independent.
 */
#ifndef LIBPERCS_PERCS_H
#define LIBPERCS_PERCS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/percs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct percs_hfi;
struct percs_window;

/**
 * percs_hfi_open() - open the character device of one HFI
 * @hub: hub number
 * @unit: HFI unit within the hub (0 or 1)
 * @out: the opened HFI
 *
 * Opens /dev/percs-hfiN, N = hub * 2 + unit (the directory can be
 * overridden with the PERCS_DEV_DIR environment variable).
 * Return: 0, -ENOENT if the device does not exist, or another -errno.
 */
int percs_hfi_open(unsigned int hub, unsigned int unit, struct percs_hfi **out);

/**
 * percs_hfi_close() - close an HFI opened by percs_hfi_open()
 * @hfi: the HFI; windows reserved through it stay valid
 */
void percs_hfi_close(struct percs_hfi *hfi);

/**
 * percs_hfi_info() - describe the HFI and the emulated system
 * @hfi: the HFI
 * @info: filled in (PERCS_IOC_HFI_INFO)
 * Return: 0 or -errno.
 */
int percs_hfi_info(struct percs_hfi *hfi, struct percs_hfi_info *info);

/**
 * percs_hfi_fd() - the HFI's file descriptor, for ioctls the library lacks
 * @hfi: the HFI
 */
int percs_hfi_fd(const struct percs_hfi *hfi);

/*
 * Jobs.  A window exchanges packets, RDMA and atomics, and builds CAU
 * trees, only with windows of its own job.  A job is a kernel object
 * behind a file descriptor, and holding that fd is the only way to join
 * it: a launcher creates one job and passes the fd to its ranks (by
 * inheritance, naming it in PERCS_JOB_FD, or over a UNIX socket).  The
 * kernel allocates the job's key; nobody chooses it.
 */

/**
 * percs_job_create() - create a job (PERCS_IOC_JOB_CREATE)
 * @hfi: any HFI of the system
 *
 * The job lasts while its fd, or any window reserved with it, is open.
 * Return: the job fd (O_CLOEXEC, never 0), -EDQUOT when the user has
 * max_jobs_per_user jobs, or another -errno.
 */
int percs_job_create(struct percs_hfi *hfi);

/**
 * percs_job_key() - the key of a job, as packets of its windows carry it
 * @job_fd: a job fd
 * @key: filled in
 * Return: 0, -EINVAL if @job_fd is not a job fd, -EBADF if not open.
 */
int percs_job_key(int job_fd, uint32_t *key);

/**
 * percs_job_default() - the job windows join when they name none
 * @hfi: any HFI of the system
 *
 * The fd named by the PERCS_JOB_FD environment variable if it is set (a
 * launcher's job), otherwise a private job created on the first call and
 * kept for the life of the process; children made by fork() share it.
 * Return: the job fd (owned by the library: do not close it), -EINVAL if
 * PERCS_JOB_FD does not name a job fd, or another -errno.
 */
int percs_job_default(struct percs_hfi *hfi);

/*
 * percs_window_attr.flags, beside PERCS_WINDOW_F_POLL and _AUTO: kick mode,
 * asked for explicitly (the library's own flag, never passed to the
 * kernel).  With none of the three the window takes the default mode.
 */
#define PERCS_WINDOW_ATTR_KICK	(1U << 30)

/**
 * struct percs_window_attr - what to reserve
 * @flags: the engine mode, at most one of PERCS_WINDOW_F_POLL (the HFI's
 *	polling thread), PERCS_WINDOW_F_AUTO (the polling thread while it
 *	runs, else the caller: the hybrid) and PERCS_WINDOW_ATTR_KICK (the
 *	caller, on a kick); none: the PERCS_WINDOW_MODE environment variable
 *	("kick", "poll" or "auto") if set, else auto
 * @send_fifo_size: bytes, power of two; 0 means PERCS_FIFO_DEF_SIZE
 * @recv_fifo_size: bytes, power of two; 0 means PERCS_FIFO_DEF_SIZE
 * @job_fd: the job to join: a job fd, or 0 for percs_job_default()
 * @window: PERCS_WINDOW_ANY or a specific index
 */
struct percs_window_attr {
	uint32_t flags;
	uint32_t send_fifo_size;
	uint32_t recv_fifo_size;
	int job_fd;
	uint32_t window;
};

/**
 * percs_window_reserve() - reserve a window and map all its regions
 * @hfi: the HFI to reserve on
 * @attr: what to reserve
 * @out: the window
 * Return: 0, -ENOSPC when every window is taken, -EBUSY when the named
 * window is taken, -EINVAL for bad sizes or flags (two engine modes at
 * once), a bad PERCS_WINDOW_MODE or PERCS_AUTO_STALE_US, or a @job_fd
 * that is not a job, -EBADF for a @job_fd that is not open, -EDQUOT beyond the
 * user's quota, or another -errno.
 */
int percs_window_reserve(struct percs_hfi *hfi,
			 const struct percs_window_attr *attr,
			 struct percs_window **out);

/**
 * percs_window_release() - unmap and close a window (frees the window)
 * @w: the window (may be NULL)
 *
 * Also frees the window's CAU tree handles, software groups and
 * collective requests (pointers to them are invalid afterwards); the
 * kernel ends the window's trees for the other members.
 */
void percs_window_release(struct percs_window *w);

/** percs_window_fd() - the window's file descriptor (poll(), passing it) */
int percs_window_fd(const struct percs_window *w);

/** percs_window_addr() - the window's network address */
struct percs_addr percs_window_addr(const struct percs_window *w);

/** percs_window_status() - the window's mapped status page (read-only) */
const volatile struct percs_status *percs_window_status(const struct percs_window *w);

/**
 * percs_window_mode() - the window's engine mode
 * @w: the window
 * Return: PERCS_WINDOW_F_POLL, PERCS_WINDOW_F_AUTO or 0 (kick mode).
 */
uint32_t percs_window_mode(const struct percs_window *w);

/**
 * percs_kick() - run the engine (kick mode) or wake it (poll mode)
 * @w: the window
 * @flags: PERCS_KICK_F_*
 * Return: packets moved, or -errno (-EINVAL after a bad trigger).
 */
int percs_kick(struct percs_window *w, unsigned int flags);

/*
 * FIFO send.  percs_send() composes one packet and triggers it: in kick
 * mode it kicks, in poll mode it kicks only when the engine sleeps.
 * For streaming, percs_send_compose() several packets and then
 * percs_send_trigger() once.  percs_send_reserve() composes without a
 * copy: the application builds the payload in place in the send FIFO.
 */

/**
 * percs_send_compose() - compose one FIFO packet without triggering it
 * @w: the window
 * @dst: destination window
 * @buf: payload (may be NULL when @len is 0)
 * @len: payload bytes, at most PERCS_MAX_PAYLOAD
 * @tag: carried to the receiver and echoed in completions
 * @flags: PERCS_PKT_F_*
 * Return: 0, -EMSGSIZE if @len is too big, -EAGAIN if the send FIFO has no
 * room (trigger and kick, then retry), -ENOBUFS as percs_send().
 */
int percs_send_compose(struct percs_window *w, const struct percs_addr *dst,
		       const void *buf, size_t len, uint32_t tag,
		       unsigned int flags);

/**
 * percs_send_reserve() - compose one FIFO packet's header, payload in place
 * @w: the window
 * @dst: destination window
 * @len: payload bytes, at most PERCS_MAX_PAYLOAD
 * @tag: carried to the receiver and echoed in completions
 * @flags: PERCS_PKT_F_*
 * @payload: set to the payload area: @len contiguous bytes in the send
 *	FIFO, right after the header (set to NULL on failure)
 *
 * As percs_send_compose(), pad entry included, but nothing is copied: the
 * header is written and the caller fills the @len bytes at *@payload
 * before the next percs_send_trigger() (like io_uring_get_sqe(): the
 * message is built where the HFI reads it).  Bytes not written are sent
 * as the FIFO holds them.  The area belongs to the HFI once triggered.
 * Return: 0, -EMSGSIZE if @len is too big, -EINVAL for a NULL @dst or
 * @payload or unknown @flags, -EAGAIN if the send FIFO has no room
 * (trigger and kick, then retry), -ENOBUFS as percs_send().
 */
int percs_send_reserve(struct percs_window *w, const struct percs_addr *dst,
		       size_t len, uint32_t tag, unsigned int flags,
		       void **payload);

/**
 * percs_send_compose_hdr() - compose one packet with a caller-built header
 * @w: the window
 * @hdr: the header to send: kind, route, route_arg, flags, dst and tag are
 *	taken as given (the HFI validates them); length is set to @len and
 *	src/job_key are overwritten by the HFI
 * @buf: what follows the header (kind extension and payload)
 * @len: bytes at @buf, at most PERCS_MAX_PAYLOAD
 *
 * For route modes other than direct, other packet kinds, and tests of the
 * HFI's validation.  An RDMA or atomic descriptor counts against
 * percs_cq_limit() as an operation that asks for an entry.
 * Return: as percs_send_compose(); -EINVAL for a %PERCS_PKT_PAD kind.
 */
int percs_send_compose_hdr(struct percs_window *w,
			   const struct percs_pkt_hdr *hdr,
			   const void *buf, size_t len);

/**
 * percs_send_trigger() - the 8-byte trigger store, plus a kick if needed
 * @w: the window
 * Return: 0 or -errno from the kick.
 */
int percs_send_trigger(struct percs_window *w);

/**
 * percs_send() - compose and trigger one packet
 * @w: the window
 * @dst: destination window
 * @buf: payload (may be NULL when @len is 0)
 * @len: payload bytes, at most PERCS_MAX_PAYLOAD
 * @tag: carried to the receiver and echoed in completions
 * @flags: PERCS_PKT_F_*: %PERCS_PKT_F_NOTIFY for a completion entry once
 *	the packet has left the window (it may still be in the network),
 *	%PERCS_PKT_F_NOTIFY_REMOTE for one once it is in the target's receive
 *	FIFO; 0 for an entry only if it fails
 *
 * When the send FIFO is full, publishes what is queued, kicks and retries
 * the compose once.
 * Return: as percs_send_compose(); -EAGAIN only after a kick failed to
 * make room (the target's receive FIFO is full), or the kick's -errno;
 * -ENOBUFS when @flags ask for an entry and the window's percs_cq_limit()
 * is reached (poll the CQ).
 */
int percs_send(struct percs_window *w, const struct percs_addr *dst,
	       const void *buf, size_t len, uint32_t tag, unsigned int flags);

/**
 * percs_send_space() - bytes of payload that fit in the send FIFO now
 * @w: the window
 *
 * Return: the largest payload one percs_send_compose() accepts right now
 * (at most PERCS_MAX_PAYLOAD, counting a pad entry it may need), 0 if
 * none fits.
 */
size_t percs_send_space(const struct percs_window *w);

/**
 * percs_icswx() - immediate send of one cache line
 * @w: the window
 * @dst: destination window
 * @buf: payload
 * @len: at most PERCS_IMM_PAYLOAD (96) bytes
 * @tag: as for percs_send()
 *
 * Asks for no completion entry (a failure still posts one, with
 * %PERCS_CQE_F_UNASKED); percs_icswx_hdr() takes the header flags that do.
 * Return: 0 accepted, -EAGAIN busy (every slot still held by the HFI),
 * -EMSGSIZE if @len is too big.
 */
int percs_icswx(struct percs_window *w, const struct percs_addr *dst,
		const void *buf, size_t len, uint32_t tag);

/**
 * percs_icswx_hdr() - immediate send with a caller-built header
 * @w: the window
 * @hdr: header taken as given except length (set to @len); kind is normally
 *	%PERCS_PKT_IMM, flags may carry %PERCS_PKT_F_NOTIFY (an entry when
 *	the line has left) or %PERCS_PKT_F_NOTIFY_REMOTE (when it is in the
 *	target's receive FIFO)
 * @buf: payload
 * @len: at most PERCS_IMM_PAYLOAD (96) bytes
 * Return: as percs_icswx(); -ENOBUFS when @hdr asks for an entry and the
 * window's percs_cq_limit() is reached.
 */
int percs_icswx_hdr(struct percs_window *w, const struct percs_pkt_hdr *hdr,
		    const void *buf, size_t len);

/*
 * Receive.  percs_recv_peek() returns the next packet in place (header, the
 * payload follows it contiguously); percs_recv_consume() releases it
 * locally; percs_recv_credit() makes the 8-byte credit store (and kicks
 * with PERCS_KICK_F_CREDIT if senders wait for us).  percs_recv() does all
 * three with a copy.
 */

/** percs_recv_peek() - next received packet, or NULL if none */
const struct percs_pkt_hdr *percs_recv_peek(struct percs_window *w);

/** percs_recv_consume() - release the packet percs_recv_peek() returned */
void percs_recv_consume(struct percs_window *w);

/** percs_recv_credit() - return consumed space to the HFI */
int percs_recv_credit(struct percs_window *w);

/**
 * percs_recv() - copy out the next packet, consume it and return credit
 * @w: the window
 * @hdr: if not NULL, receives the packet header
 * @buf: payload destination
 * @cap: bytes available at @buf
 *
 * Credits are returned in batches of a quarter of the receive FIFO (never
 * more than half of it is held back), when the FIFO runs empty, and at
 * once when the status page shows %PERCS_STATUS_SENDERS_WAIT.
 * Return: payload length, -EAGAIN if nothing arrived, -EMSGSIZE if the
 * payload is larger than @cap (the packet is left in place), -EIO if the
 * HFI published an invalid index or entry.
 */
int percs_recv(struct percs_window *w, struct percs_pkt_hdr *hdr, void *buf,
	       size_t cap);

/**
 * percs_wait() - block until a packet or completion arrives
 * @w: the window
 * @timeout_ms: as poll(2)
 *
 * Returns at once if a packet or completion is already there; otherwise
 * sends the non-fetching atomics held for packing, returns consumed
 * receive credits and sleeps in poll(2).
 * Return: 1 if something is ready, 0 on timeout, -errno (the window's
 * error, or -EIO, when the HFI reports POLLERR; the error of sending the
 * held atomics).
 */
int percs_wait(struct percs_window *w, int timeout_ms);

/**
 * percs_cq_poll() - take up to @max completion entries
 * @w: the window
 * @cqe: array of at least @max entries
 * @max: entries wanted
 * Entries kept while the library waited for its own atomics come first,
 * in order; the library's own atomic completions are never returned.
 *
 * A full CQ makes the HFI drop entries (it counts them in the status
 * page's cq_overflows, no system call needed to see it).  The first call
 * after the count grew returns -EOVERFLOW and takes nothing; the entries
 * still in the ring come on the next calls.  The dropped entries are of
 * operations that are done: treat every operation whose entry has not
 * come as complete with an unknown status (and percs_cq_limit() to keep
 * it from happening).
 * Return: entries taken (0 if none), -EINVAL for a negative @max or a
 * NULL @cqe with @max > 0, -EOVERFLOW as above.
 */
int percs_cq_poll(struct percs_window *w, struct percs_cqe *cqe, int max);

/**
 * percs_cq_limit() - bound the operations that await their entries
 * @w: the window
 * @max: at most this many operations that ask for a completion entry
 *	(RDMA and atomic descriptors, sends with %PERCS_PKT_F_NOTIFY or
 *	%PERCS_PKT_F_NOTIFY_REMOTE) are posted and not yet returned by
 *	percs_cq_poll(); 0 (the default) for no bound
 *
 * With a bound of at most the CQ's size (PERCS_CQ_ENTRIES) the window's
 * own operations cannot overflow its CQ: a post beyond it fails with
 * -ENOBUFS and posts nothing.  Failed sends that asked for no entry post
 * one too (%PERCS_CQE_F_UNASKED, at most one per packet in the send FIFO)
 * and RDMA target notifications from other windows arrive unasked: leave
 * room for them below PERCS_CQ_ENTRIES.  The library's own PGAS atomics
 * and collectives are bounded apart and do not count.
 * Return: 0, -EINVAL for a NULL @w or @max above PERCS_CQ_ENTRIES.
 */
int percs_cq_limit(struct percs_window *w, unsigned int max);

/*
 * The global clock: nanoseconds since the module was loaded, one clock for
 * every window of every hub (they all map the same read-only page), never
 * going backwards, at the rate of CLOCK_MONOTONIC.  Reading it is a few
 * loads, a TSC read and a multiply: no system call while the kernel keeps
 * the TSC as its clocksource, else a clock_gettime(CLOCK_MONOTONIC).
 */

/**
 * percs_clock_ns() - read the global clock
 * @w: any window (every window reads the same clock)
 * @ns: set to the clock, in nanoseconds
 * Return: 0; -EINVAL for a NULL argument, -EOPNOTSUPP when the module
 * provides no clock page (or one of another version), -EAGAIN if the
 * kernel kept the page in mid-update for a second, -EPROTO for a page
 * with an invalid scale, or clock_gettime()'s -errno (fallback mode).
 */
int percs_clock_ns(const struct percs_window *w, uint64_t *ns);

/**
 * percs_window_clock() - the mapped global clock page (read-only)
 * @w: the window
 *
 * For inspection (mode, scale, update count); read it as
 * percs_clock_ns() does, under its sequence count.
 * Return: the page, or NULL when the module provides none.
 */
const volatile struct percs_clock *percs_window_clock(const struct percs_window *w);

/*
 * Memory registration (the NMMU).  A window registers part of the
 * process's address space with access rights and gets a handle; RDMA and
 * atomic operations name (window, handle, address).  The pages stay pinned
 * until percs_mr_dereg() or the window's release (with PERCS_MR_F_INVALIDATE,
 * percs_mr_reg_flags(): or until the process's mapping of the range
 * changes), and count against RLIMIT_MEMLOCK unless the process has
 * CAP_IPC_LOCK.
 */

/**
 * percs_mr_reg() - register memory with a window
 * @w: the window the registration belongs to
 * @addr: first byte, any alignment (the pages covering the range are
 *	pinned)
 * @len: bytes, 1 .. PERCS_MR_MAX_LENGTH
 * @access: PERCS_ACCESS_* (LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE,
 *	REMOTE_ATOMIC); 0 for a local source only
 * @handle: set to the registration's handle (non-zero) on success
 *
 * Return: 0; -EINVAL for a NULL @w or @handle, unknown @access bits, a
 * zero @len, one above PERCS_MR_MAX_LENGTH or a range that wraps;
 * -EFAULT when the range is not mapped in the process (or not writable
 * and a write right is asked); -ENOMEM above RLIMIT_MEMLOCK or out of
 * memory; -ENOSPC when the window holds its maximum of registrations (see
 * Documentation/admin-guide.rst); or another -errno from the kernel.
 */
int percs_mr_reg(struct percs_window *w, void *addr, size_t len,
		 uint32_t access, uint32_t *handle);

/**
 * percs_mr_dereg() - end a registration
 * @w: the window it was registered with
 * @handle: what percs_mr_reg() returned
 *
 * The handle is invalid at once; the pages are unpinned and uncharged
 * when no transfer in flight uses them any more.
 * Return: 0; -ENOENT when @w has no registration @handle (never had, or
 * it was deregistered); -EINVAL for a NULL @w.
 */
int percs_mr_dereg(struct percs_window *w, uint32_t handle);

/**
 * percs_mr_reg_flags() - percs_mr_reg() with PERCS_MR_F_* flags
 * @w: as percs_mr_reg()
 * @addr: as percs_mr_reg()
 * @len: as percs_mr_reg()
 * @access: as percs_mr_reg()
 * @flags: 0 or PERCS_MR_F_INVALIDATE: the kernel ends the registration
 *	when the process's mapping of the range changes and reports its
 *	handle in the status page (percs_status.mr_invalidated)
 * @handle: as percs_mr_reg()
 *
 * Return: as percs_mr_reg(); -EINVAL for unknown @flags; -EAGAIN when the
 * range's mapping kept changing while it was being pinned.
 */
int percs_mr_reg_flags(struct percs_window *w, void *addr, size_t len,
		       uint32_t access, uint32_t flags, uint32_t *handle);

/*
 * The registration cache.  Registering and deregistering a large buffer
 * for every transfer costs more than moving it; the cache keeps
 * registrations (PERCS_MR_F_INVALIDATE) once their users are done and
 * hands them out again for ranges they cover.  Before every lookup it reads
 * the handles the kernel reported ended in the status page, so a buffer
 * unmapped and mapped anew at the same address (munmap, mremap, free and
 * malloc of a large block, MADV_DONTNEED) is registered again, never
 * reused.  A cache serves one thread at a time (the caller serialises).
 */
struct percs_mr_cache;

/**
 * struct percs_mr_cache_stats - what a registration cache did
 * @hits: lookups served by a cached registration
 * @misses: lookups that registered
 * @uncached: of those, registrations not cached (too large, or every
 *	entry held): the put deregisters them
 * @evictions: cached registrations deregistered to make room (a bound, or
 *	RLIMIT_MEMLOCK)
 * @invalidated: cached registrations the kernel ended (the mapping changed)
 * @overruns: times the cache fell behind the kernel's report and forgot
 *	every entry
 * @entries: cached registrations now
 * @bytes: bytes they register now
 */
struct percs_mr_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t uncached;
	uint64_t evictions;
	uint64_t invalidated;
	uint64_t overruns;
	uint64_t entries;
	uint64_t bytes;
};

/**
 * percs_mr_cache_new() - a registration cache for a window
 * @w: the window the registrations are made with
 * @max_entries: registrations kept at most; 0 means 64
 * @max_bytes: bytes they may register at most (pinned, and charged to
 *	RLIMIT_MEMLOCK like any registration); 0 means 256 MiB
 * @out: the cache
 *
 * Return: 0; -EINVAL for a NULL @w or @out; -ENOMEM.
 */
int percs_mr_cache_new(struct percs_window *w, size_t max_entries,
		       size_t max_bytes, struct percs_mr_cache **out);

/**
 * percs_mr_cache_get() - a registration covering a range, cached or new
 * @c: the cache
 * @addr: first byte
 * @len: bytes, 1 .. PERCS_MR_MAX_LENGTH
 * @access: PERCS_ACCESS_* rights needed (a cached registration granting
 *	more serves too)
 * @handle: set to the registration's handle; give it back with
 *	percs_mr_cache_put() when the transfers using it are done
 *
 * A new registration covers the pages of the range.  When the bounds are
 * reached, the least recently used registration nobody holds is
 * deregistered; when every one is held, the new one is not cached.  Above
 * RLIMIT_MEMLOCK the cache deregisters what nobody holds and tries again.
 * On a kernel that cannot end registrations (PERCS_MR_F_INVALIDATE gives
 * -EOPNOTSUPP: no MMU notifiers) nothing is cached: each get registers,
 * each put deregisters.
 *
 * Return: 0; -EINVAL for a NULL @c or @handle, a zero or too large @len,
 * a range that wraps, unknown @access bits; or an error of
 * percs_mr_reg_flags().
 */
int percs_mr_cache_get(struct percs_mr_cache *c, const void *addr,
		       size_t len, uint32_t access, uint32_t *handle);

/**
 * percs_mr_cache_put() - done with a registration percs_mr_cache_get() gave
 * @c: the cache
 * @handle: the handle it gave
 *
 * The registration stays cached (unless the kernel ended it meanwhile, or
 * it was not cached: then it is deregistered).
 *
 * Return: 0; -EINVAL for a NULL @c; -ENOENT for a handle the cache never
 * gave (or gave back already).
 */
int percs_mr_cache_put(struct percs_mr_cache *c, uint32_t handle);

/**
 * percs_mr_cache_stats() - a cache's counters
 * @c: the cache
 * @st: filled in
 *
 * Return: 0, or -EINVAL for a NULL argument.
 */
int percs_mr_cache_stats(const struct percs_mr_cache *c,
			 struct percs_mr_cache_stats *st);

/**
 * percs_mr_cache_free() - deregister what a cache holds and free it
 * @c: the cache (NULL: nothing); no registration of it may be in use
 */
void percs_mr_cache_free(struct percs_mr_cache *c);

/*
 * RDMA.  An operation is a %PERCS_PKT_RDMA descriptor composed in the send
 * FIFO and triggered; it completes with one entry in the window's CQ
 * (kind %PERCS_PKT_RDMA, user_data echoed, res 0 or -errno) once all its
 * bytes have landed.  Poll it with percs_cq_poll().
 */

/**
 * struct percs_rdma_wr - one RDMA operation to post
 * @op: PERCS_RDMA_OP_WRITE, _READ or _FIFO_WRITE
 * @route: enum percs_route_mode of its packets
 * @route_arg: intermediate supernode for PERCS_ROUTE_SW_INDIRECT, else 0
 * @flags: PERCS_RDMA_F_FENCE, PERCS_RDMA_F_NOTIFY_TARGET
 * @dst: the target window
 * @remote_handle: registration handle in the target window
 * @remote_addr: address in that registration
 * @local_handle: registration handle in this window (0 for FIFO_WRITE)
 * @local_addr: address in that registration; for FIFO_WRITE, the payload
 *	copied into the send FIFO
 * @len: bytes
 * @user_data: echoed in the completion entries
 */
struct percs_rdma_wr {
	uint8_t op;
	uint8_t route;
	uint16_t route_arg;
	uint32_t flags;
	struct percs_addr dst;
	uint32_t remote_handle;
	uint64_t remote_addr;
	uint32_t local_handle;
	const void *local_addr;
	uint64_t len;
	uint64_t user_data;
};

/**
 * percs_rdma_post() - post one RDMA operation and trigger it
 * @w: the initiating window
 * @wr: the operation
 *
 * When the send FIFO is full, publishes what is queued, kicks and retries
 * once, as percs_send().
 * Return: 0 (the status comes in the CQE); -EINVAL for a NULL argument,
 * an unknown @op or @flags, a zero @len or a FIFO_WRITE without payload;
 * -EMSGSIZE for a FIFO_WRITE above PERCS_RDMA_FIFO_MAX; -EAGAIN when the
 * send FIFO stays full; -ENOBUFS when the window's percs_cq_limit() is
 * reached; or the kick's -errno.
 */
int percs_rdma_post(struct percs_window *w, const struct percs_rdma_wr *wr);

/**
 * percs_rdma_write() - RDMA write, local registration to remote one
 * @w: the initiating window
 * @dst: the target window
 * @remote_handle: its registration (needs PERCS_ACCESS_REMOTE_WRITE)
 * @remote_addr: where in it
 * @local_handle: this window's registration holding the data
 * @local_addr: where in it
 * @len: bytes
 * @flags: PERCS_RDMA_F_*
 * @user_data: echoed in the completion entries
 *
 * Direct route mode.  Return: as percs_rdma_post().
 */
int percs_rdma_write(struct percs_window *w, const struct percs_addr *dst,
		     uint32_t remote_handle, uint64_t remote_addr,
		     uint32_t local_handle, const void *local_addr,
		     uint64_t len, uint32_t flags, uint64_t user_data);

/**
 * percs_rdma_read() - RDMA read, remote registration to local one
 * @w: the initiating window
 * @dst: the target window
 * @remote_handle: its registration (needs PERCS_ACCESS_REMOTE_READ)
 * @remote_addr: where in it
 * @local_handle: this window's registration (needs
 *	PERCS_ACCESS_LOCAL_WRITE)
 * @local_addr: where in it
 * @len: bytes
 * @flags: PERCS_RDMA_F_*
 * @user_data: echoed in the completion entries
 *
 * Direct route mode.  Return: as percs_rdma_post().
 */
int percs_rdma_read(struct percs_window *w, const struct percs_addr *dst,
		    uint32_t remote_handle, uint64_t remote_addr,
		    uint32_t local_handle, void *local_addr, uint64_t len,
		    uint32_t flags, uint64_t user_data);

/*
 * Remote atomics.  Two levels:
 *
 * percs_atomic_post() composes one %PERCS_PKT_ATOMIC descriptor (up to
 * %PERCS_ATOMIC_MAX_PACKED packed operations) and triggers it; its one
 * completion entry (kind %PERCS_PKT_ATOMIC, res 0 or -errno) is the
 * caller's, through percs_cq_poll().
 *
 * The PGAS level, for runtimes used to OpenSHMEM: operations on a remote
 * registration (&struct percs_rmr, exchanged once like an rkey) at a byte
 * offset, per width (8, 16, 32, 64 bits; unsigned types, two's complement,
 * so signed values work the same).  Non-fetching operations
 * (percs_atomic_add64() and friends) return once issued; the library
 * packs consecutive ones to the same registration, op and width into one
 * packet (percs_atomic_set_packing()).  Fetching ones block
 * (percs_atomic_fetch_add64()) or not (the _nbi forms: the value is stored
 * at completion).  percs_atomic_quiet() sends what is packed and waits for
 * every operation issued so far.  The library's completion entries never
 * reach percs_cq_poll(); entries of other kinds that it meets while
 * waiting are kept for percs_cq_poll(), in order.  It recognises its own
 * entries by their user_data: kind %PERCS_PKT_ATOMIC with the high 32 bits
 * %PERCS_AMO_USER_DATA_TAG, a range percs_atomic_post() refuses.
 *
 * The PGAS level keeps at most 64 descriptors of a window in flight (an
 * operation issued beyond that first waits for a completion), so its
 * entries take at most 64 of the CQ's 256: other work must leave room
 * for them, or the CQ drops entries (%PERCS_STATUS_CQ_OVERFLOW).  Fetched
 * values land in a result area the library maps and registers with the
 * window (%PERCS_ACCESS_LOCAL_WRITE) on the first fetching operation, and
 * are copied to the caller's pointer when the operation completes; the
 * window's release deregisters it.  While the library waits it kicks the
 * engine (kick mode: the retransmissions run in those kicks too) or wakes
 * a sleeping polling engine (poll mode), and sleeps in ppoll(2) between
 * rounds: 50 us, doubling to 1 ms while nothing comes, as the kernel's
 * resend timeout does.
 */

/* High 32 bits of the user_data of the PGAS level's own descriptors. */
#define PERCS_AMO_USER_DATA_TAG	0x50474153U	/* "PGAS" */

/**
 * struct percs_atomic_wr - one atomic descriptor to post
 * @op: PERCS_ATOMIC_*
 * @width: operand bytes: 1, 2, 4 or 8
 * @count: operations in @ops, 1 .. PERCS_ATOMIC_MAX_PACKED (more than one:
 *	non-fetching ADD/AND/OR/XOR only)
 * @flags: PERCS_ATOMIC_F_*
 * @route: enum percs_route_mode
 * @reserved: zero
 * @route_arg: intermediate supernode for PERCS_ROUTE_SW_INDIRECT, else 0
 * @dst: the target window
 * @handle: its registration (needs PERCS_ACCESS_REMOTE_ATOMIC)
 * @result_handle: with PERCS_ATOMIC_F_FETCH, this window's registration
 *	that receives the old value (needs PERCS_ACCESS_LOCAL_WRITE)
 * @result_addr: where in it
 * @compare: the comparand of a PERCS_ATOMIC_CSWAP (ignored for other ops)
 * @user_data: echoed in the completion entry; its high 32 bits must not be
 *	%PERCS_AMO_USER_DATA_TAG (the PGAS level's)
 * @ops: effective address in the target's registration and operand
 */
struct percs_atomic_wr {
	uint8_t op;
	uint8_t width;
	uint8_t count;
	uint8_t flags;
	uint8_t route;
	uint8_t reserved;
	uint16_t route_arg;
	struct percs_addr dst;
	uint32_t handle;
	uint32_t result_handle;
	void *result_addr;
	uint64_t compare;
	uint64_t user_data;
	struct percs_atomic_op ops[PERCS_ATOMIC_MAX_PACKED];
};

/**
 * percs_atomic_post() - post one atomic descriptor and trigger it
 * @w: the initiating window
 * @wr: the descriptor
 *
 * Composes the header, &struct percs_atomic_ext, @count operations and,
 * for a CSWAP, the comparand (&percs_pkt_hdr.length is
 * PERCS_ATOMIC_LEN(@count), plus 8 for a CSWAP).  When the send FIFO is
 * full, publishes what is queued, kicks and retries once, as
 * percs_rdma_post().  Addresses are judged by the target: a misaligned one
 * completes with -EINVAL, one outside the registration with -ERANGE.
 * Return: 0 (the status comes in the CQE); -EINVAL for a NULL argument or
 * a field the kernel would refuse (op, width, count, flags, route,
 * reserved, operand or comparand wider than @width, packed fetching or
 * CSWAP, result fields without %PERCS_ATOMIC_F_FETCH) or a reserved
 * @user_data; -EAGAIN when the send FIFO stays full after a kick;
 * -ENOBUFS when the window's percs_cq_limit() is reached; or the kick's
 * -errno.
 */
int percs_atomic_post(struct percs_window *w, const struct percs_atomic_wr *wr);

/**
 * struct percs_rmr - a remote registration, as PGAS peers exchange it
 * @win: the window that registered it
 * @handle: its handle (percs_mr_reg() there)
 * @reserved: zero
 * @base: its first byte in the owner's address space
 * @length: its bytes
 */
struct percs_rmr {
	struct percs_addr win;
	uint32_t handle;
	uint32_t reserved;
	uint64_t base;
	uint64_t length;
};

/* percs_amo() flags */
#define PERCS_AMO_F_BLOCK	(1U << 0) /* return when it has completed */

/**
 * percs_amo() - one atomic operation at the PGAS level
 * @w: the initiating window
 * @r: the target registration
 * @off: byte offset of the operand in it; @r->base + @off must be a
 *	multiple of @width
 * @op: PERCS_ATOMIC_*
 * @width: 1, 2, 4 or 8
 * @value: the operand (low @width bytes, the others zero)
 * @cond: the comparand of a PERCS_ATOMIC_CSWAP (low @width bytes), else
 *	ignored
 * @fetched: NULL, or where the old value (@width bytes) is stored when the
 *	operation completes (a CSWAP always fetches: NULL discards it)
 * @flags: PERCS_AMO_F_*
 *
 * The per-width inline functions below are the usual entry points.
 * A non-fetching, non-blocking ADD/AND/OR/XOR may wait in the library to
 * be packed with the next ones (percs_atomic_set_packing()); anything
 * else sends it first.  A call that would exceed the window's 64
 * descriptors in flight first waits for a completion.
 * Return: 0 once issued (or, with %PERCS_AMO_F_BLOCK, completed); a
 * blocking call returns the operation's status, e.g. -ERANGE, -EPERM,
 * -ENOENT, -EINVAL (misaligned), -ETIMEDOUT.  Checked here, nothing sent:
 * -EINVAL for a NULL @w or @r, a bad @op, @width or @flags, @value
 * (or @cond) wider than @width, or an address that is not a multiple of
 * @width; -ERANGE when @off + @width is beyond @r->length.
 * -EAGAIN when the send FIFO stays full (the target's receive FIFO is full:
 * nothing issued, receive and retry); -EOVERFLOW when the CQ dropped
 * entries and the operation's did not come; the -errno of a kick or of
 * registering the result area.  A non-blocking operation's own status is
 * returned by the next percs_atomic_quiet().
 */
int percs_amo(struct percs_window *w, const struct percs_rmr *r, uint64_t off,
	      unsigned int op, unsigned int width, uint64_t value,
	      uint64_t cond, void *fetched, unsigned int flags);

/**
 * percs_amo_swap() - unconditional swap, built on compare-and-swap
 * @w: the initiating window
 * @r: the target registration
 * @off: byte offset, a multiple of @width
 * @width: 1, 2, 4 or 8
 * @value: the new value
 * @old: NULL, or where the value it replaced is stored
 *
 * Blocking: CSWAPs, expecting 0 first and then the value the last one
 * found, until one finds what it expected (one round trip when the old
 * value was 0, two when nobody else changes it meanwhile).
 * Return: as percs_amo() with %PERCS_AMO_F_BLOCK.
 */
int percs_amo_swap(struct percs_window *w, const struct percs_rmr *r,
		   uint64_t off, unsigned int width, uint64_t value, void *old);

/**
 * percs_atomic_quiet() - complete every atomic this window issued
 * @w: the window
 *
 * Sends the operations the library holds packed, then waits (kicking the
 * engine in kick mode) until all have completed; _nbi values are stored.
 * Return: 0, or the first error of a non-blocking operation since the
 * last quiet; -EAGAIN when the packed operations could not be sent (send
 * FIFO full: retry), or the error that stopped the wait (a kick's,
 * -EOVERFLOW, -ENOMEM).
 */
int percs_atomic_quiet(struct percs_window *w);

/* percs_atomic_set_packing() modes */
#define PERCS_PACK_AUTO	0 /* pack consecutive non-fetching ops (default) */
#define PERCS_PACK_OFF	1 /* one operation per packet */

/**
 * percs_atomic_set_packing() - choose how non-fetching operations travel
 * @w: the window
 * @mode: PERCS_PACK_AUTO or PERCS_PACK_OFF
 *
 * Switching to %PERCS_PACK_OFF sends what is packed.
 * Return: 0, -EINVAL for a NULL @w or another mode, or the error of
 * sending the packed operations (the mode is set anyway).
 */
int percs_atomic_set_packing(struct percs_window *w, unsigned int mode);

/*
 * Per width N (8, 16, 32, 64) and type T (uintN_t):
 *   percs_atomic_{add,and,or,xor}N(w, r, off, T v)            non-fetching
 *   percs_atomic_fetch_{add,and,or,xor}N(w, r, off, T v, T *old) blocking
 *   percs_atomic_fetch_{add,and,or,xor}N_nbi(w, r, off, T v, T *old)
 *   percs_atomic_compare_swapN(w, r, off, T cond, T v, T *old)  blocking
 *   percs_atomic_compare_swapN_nbi(w, r, off, T cond, T v, T *old)
 *   percs_atomic_swapN(w, r, off, T v, T *old)                  blocking
 *   percs_atomic_fetchN(w, r, off, T *v)     atomic read (fetch-or 0)
 *   percs_atomic_setN(w, r, off, T v)        atomic write (swap)
 */
#define PERCS_AMO_NOFETCH(name, N, OP)					\
static inline int percs_atomic_##name##N(struct percs_window *w,	\
		const struct percs_rmr *r, uint64_t off, uint##N##_t v)	\
{ return percs_amo(w, r, off, OP, N / 8, v, 0, NULL, 0); }
#define PERCS_AMO_FETCH(name, N, OP)					\
static inline int percs_atomic_fetch_##name##N(struct percs_window *w,	\
		const struct percs_rmr *r, uint64_t off, uint##N##_t v,	\
		uint##N##_t *old)					\
{ return percs_amo(w, r, off, OP, N / 8, v, 0, old, PERCS_AMO_F_BLOCK); } \
static inline int percs_atomic_fetch_##name##N##_nbi(			\
		struct percs_window *w, const struct percs_rmr *r,	\
		uint64_t off, uint##N##_t v, uint##N##_t *old)		\
{ return percs_amo(w, r, off, OP, N / 8, v, 0, old, 0); }
#define PERCS_AMO_WIDTH(N)						\
PERCS_AMO_NOFETCH(add, N, PERCS_ATOMIC_ADD)				\
PERCS_AMO_NOFETCH(and, N, PERCS_ATOMIC_AND)				\
PERCS_AMO_NOFETCH(or, N, PERCS_ATOMIC_OR)				\
PERCS_AMO_NOFETCH(xor, N, PERCS_ATOMIC_XOR)				\
PERCS_AMO_FETCH(add, N, PERCS_ATOMIC_ADD)				\
PERCS_AMO_FETCH(and, N, PERCS_ATOMIC_AND)				\
PERCS_AMO_FETCH(or, N, PERCS_ATOMIC_OR)					\
PERCS_AMO_FETCH(xor, N, PERCS_ATOMIC_XOR)				\
static inline int percs_atomic_compare_swap##N(struct percs_window *w,	\
		const struct percs_rmr *r, uint64_t off, uint##N##_t cond, \
		uint##N##_t v, uint##N##_t *old)			\
{ return percs_amo(w, r, off, PERCS_ATOMIC_CSWAP, N / 8, v, cond, old,	\
		   PERCS_AMO_F_BLOCK); }				\
static inline int percs_atomic_compare_swap##N##_nbi(			\
		struct percs_window *w, const struct percs_rmr *r,	\
		uint64_t off, uint##N##_t cond, uint##N##_t v,		\
		uint##N##_t *old)					\
{ return percs_amo(w, r, off, PERCS_ATOMIC_CSWAP, N / 8, v, cond, old, 0); } \
static inline int percs_atomic_swap##N(struct percs_window *w,		\
		const struct percs_rmr *r, uint64_t off, uint##N##_t v,	\
		uint##N##_t *old)					\
{ return percs_amo_swap(w, r, off, N / 8, v, old); }			\
static inline int percs_atomic_fetch##N(struct percs_window *w,		\
		const struct percs_rmr *r, uint64_t off, uint##N##_t *v) \
{ return percs_amo(w, r, off, PERCS_ATOMIC_OR, N / 8, 0, 0, v,		\
		   PERCS_AMO_F_BLOCK); }				\
static inline int percs_atomic_set##N(struct percs_window *w,		\
		const struct percs_rmr *r, uint64_t off, uint##N##_t v)	\
{ return percs_amo_swap(w, r, off, N / 8, v, NULL); }

PERCS_AMO_WIDTH(8)
PERCS_AMO_WIDTH(16)
PERCS_AMO_WIDTH(32)
PERCS_AMO_WIDTH(64)

/*
 * Collectives.  The same operations two ways, on the same windows, so that
 * they can be compared on one machine:
 *
 * - on a CAU tree (percs_cau_*): the hubs' Collective Acceleration Units
 *   combine the members' contributions up a tree of windows, one per hub,
 *   and send the result back down.  One CAU operation carries
 *   %PERCS_CAU_PAYLOAD (64) bytes: the library splits a longer vector into
 *   64-byte chunks (16 4-byte or 8 8-byte elements) and keeps up to
 *   %PERCS_CAU_MAX_INFLIGHT chunks of a tree in flight;
 * - in software over FIFO packets between the same windows (percs_sw_*):
 *   binomial tree, recursive doubling, Rabenseifner's reduce-scatter +
 *   allgather, dissemination.
 *
 * Both combine elements with the CAU's ALU (the firmware model's, compiled
 * into the library: percs_coll_combine()): the ops PERCS_CAU_OP_* on the
 * types PERCS_CAU_T_* (which op suits which type, NaN and signed-zero rules:
 * the comment above %PERCS_CAU_OP_NOP in <linux/percs.h>).  Integer results
 * are identical both ways; float SUM and PROD results depend on the order
 * of combination, which differs between a CAU tree and a software
 * algorithm.  Every member of one software collective gets bit-identical
 * results (lower ranks' partial results are always the left operand); a
 * CAU tree created with %PERCS_CAU_F_ORDERED gives bit-identical results
 * from run to run.
 *
 * Every member of a tree (a group) must start the same collectives on it
 * in the same order with matching arguments (op, type, count, root).
 * Several may be in flight: each call has a non-blocking form that returns
 * a request (&struct percs_coll_req), completed with percs_coll_test() or
 * percs_coll_wait() and released with percs_coll_req_free().  Blocking
 * calls are the non-blocking ones followed by percs_coll_wait() with no
 * time limit; they and percs_coll_wait() are exceptions to "no function
 * blocks".
 *
 * Progress.  Nothing happens behind the caller's back: collectives advance
 * when the application calls into the library on the window - any
 * collective call, percs_coll_test(), percs_coll_wait(),
 * percs_coll_progress(), and the receive calls.  While it waits the
 * library kicks the engine (kick mode) or wakes a sleeping polling engine
 * (poll mode), spins a little, yields the CPU a while (sched_yield(2):
 * other ranks on the same CPU) and then sleeps in ppoll(2) for 50 us,
 * doubling to 1 ms while nothing comes; it never sleeps without a time
 * limit.
 *
 * Sharing the window.  Results of CAU collectives arrive in the receive
 * FIFO (%PERCS_PKT_COLL packets), software collectives' messages too (FIFO
 * packets tagged %PERCS_SW_TAG_HI << 16 | ctx).  Wherever the library reads
 * the receive FIFO - its own waits, percs_recv(), percs_recv_peek(),
 * percs_wait() - it takes the packets of its trees and groups and keeps
 * every other packet it meets, in order, for percs_recv() and
 * percs_recv_peek(), which return the kept packets first.  The library
 * also takes the completion entries of its trees and groups from the CQ
 * while it waits (a tree's end, an error of one of its descriptors or
 * sends); the others it meets are kept for percs_cq_poll(), in order.  An
 * application that calls percs_cq_poll() itself may be handed such an
 * entry first: the library then still notices a tree's end within about
 * 20 ms of waiting (it asks the kernel), but a software collective whose
 * send failed (a member window released) waits on.  Reserved tags: FIFO
 * packets tagged %PERCS_SW_TAG_HI << 16 | ctx to a window with a group of
 * that ctx are taken by the library; descriptors of kind %PERCS_PKT_COLL
 * tagged with %PERCS_CAU_TAG_HI in the high byte are the library's.
 */

/* FIFO tags of software collectives: PERCS_SW_TAG_HI << 16 | group ctx. */
#define PERCS_SW_TAG_HI		0x5357U		/* "SW" */
/* High byte of the tags of the library's CAU descriptors. */
#define PERCS_CAU_TAG_HI	0xcaU
/* Default fan-out of percs_cau_shape_kary(). */
#define PERCS_CAU_DEF_FANOUT	4
/* Largest fan-out percs_cau_shape_kary() accepts (see there). */
#define PERCS_CAU_MAX_FANOUT	(PERCS_CAU_MAX_CHILDREN / 2)

struct percs_cau_tree;
struct percs_sw_group;
struct percs_coll_req;

/**
 * percs_coll_type_size() - bytes of one element of a CAU type
 * @type: PERCS_CAU_T_*
 * Return: 4 or 8, 0 for an unknown type.
 */
size_t percs_coll_type_size(unsigned int type);

/**
 * percs_coll_combine() - combine two vectors exactly as the CAU does
 * @op: PERCS_CAU_OP_*
 * @type: PERCS_CAU_T_*
 * @count: elements (any number: combined 64 bytes at a time)
 * @acc: in: the left operand; out: @acc[i] @op @in[i]
 * @in: the right operand
 *
 * The firmware model's ALU, the one the kernel's CAU and the software
 * collectives use: for references in tests and benchmarks.  For MIN and
 * MAX of floats the first NaN (@acc's) wins; NOP zeroes @acc.
 * Return: 0, -EINVAL for an op the type does not have (OR/AND/XOR of a
 * float, PROD of an integer), an unknown op or type, or a NULL buffer
 * with @count not 0.
 */
int percs_coll_combine(unsigned int op, unsigned int type, size_t count,
		       void *acc, const void *in);

/* ---- CAU trees ---------------------------------------------------------- */

/**
 * percs_cau_shape_kary() - the default tree shape: k-ary, supernode-aware
 * @wins: the members' windows, one per hub; every member passes the same
 *	array in the same order
 * @nr: members, 1 .. %PERCS_CAU_MAX_MEMBERS
 * @root: index in @wins of the root (where a reduce's result lands)
 * @fanout: children per node within a supernode and between supernodes,
 *	1 .. %PERCS_CAU_MAX_FANOUT; 0 means %PERCS_CAU_DEF_FANOUT
 * @topo: percs_hfi_info() of any HFI of the system (only
 *	@topo->hubs_per_supernode is used), or NULL to ignore supernodes
 * @members: out: @nr entries, ready for percs_cau_tree_create()
 *
 * Members are grouped by supernode (hub / hubs_per_supernode), each group
 * in the order of @wins with the root's group first and the root first in
 * it.  Each group is a @fanout-ary tree (heap order) below its first
 * member; those group heads form a @fanout-ary tree below the root.  So a
 * subtree stays inside one supernode (no D link) except for the group
 * heads' edges, at most one D-link crossing per supernode; a group head
 * has at most 2 x @fanout children (<= %PERCS_CAU_MAX_CHILDREN).  The same
 * arguments give the same shape on every member.
 * Return: 0; -EINVAL for a NULL pointer, @nr 0 or too big, @root >= @nr, a
 * bad @fanout or a non-zero reserved byte in @wins; -EEXIST when two
 * members are on one hub.
 */
int percs_cau_shape_kary(const struct percs_addr *wins, unsigned int nr,
			 unsigned int root, unsigned int fanout,
			 const struct percs_hfi_info *topo,
			 struct percs_cau_member *members);

/**
 * percs_cau_shape_parents() - an explicit tree shape
 * @wins: the members' windows, one per hub
 * @parents: @nr parent indices into @wins, %PERCS_CAU_ROOT for the root
 * @nr: members
 * @members: out: @nr entries
 *
 * Return: as percs_cau_shape_check() (the shape is checked), 0 for a good
 * one; -EINVAL for a NULL pointer.
 */
int percs_cau_shape_parents(const struct percs_addr *wins,
			    const uint32_t *parents, unsigned int nr,
			    struct percs_cau_member *members);

/**
 * percs_cau_shape_check() - check a tree shape as the kernel will
 * @members: @nr members (window, parent index)
 * @nr: members
 *
 * The checks of PERCS_IOC_CAU_CREATE that need no kernel, in its order.
 * Return: the depth (edges from the root to the deepest member: 0 for a
 * single member); -EINVAL for @nr 0 or above %PERCS_CAU_MAX_MEMBERS, a
 * non-zero reserved field, no root or several, a parent out of range;
 * -ELOOP for a cycle; -EMLINK for a member with more than
 * %PERCS_CAU_MAX_CHILDREN children; -EEXIST for two members on one hub.
 */
int percs_cau_shape_check(const struct percs_cau_member *members,
			  unsigned int nr);

/**
 * percs_cau_tree_create() - create a CAU tree and join it
 * @w: this member's window (one of @members)
 * @members: every member and its parent (percs_cau_shape_*())
 * @nr: members
 * @flags: PERCS_CAU_F_ORDERED or 0
 * @out: the tree handle
 *
 * PERCS_IOC_CAU_CREATE.  Pass percs_cau_tree_id() to the other members
 * (like an rkey); each joins with percs_cau_tree_join() and the same
 * @members, @nr and @flags.  Collectives may be started at once: the
 * kernel combines an operation once every member has joined and posted
 * it.
 * Return: 0; -EINVAL for a NULL pointer, unknown @flags or a bad shape
 * (percs_cau_shape_check()'s errors: -ELOOP, -EMLINK, -EEXIST too); -EPERM
 * when @w is not in @members; -ENOSPC when a hub's CAU has no free entry
 * or the window already has 255 library trees; the kernel's -errno
 * (Documentation/uapi.rst, "Collective trees"); -ENOMEM.
 */
int percs_cau_tree_create(struct percs_window *w,
			  const struct percs_cau_member *members,
			  unsigned int nr, unsigned int flags,
			  struct percs_cau_tree **out);

/**
 * percs_cau_tree_join() - join a tree another member created
 * @w: this member's window
 * @id: the tree id the creator passed on
 * @members: the creator's @members
 * @nr: their number
 * @flags: the creator's flags
 * @out: the tree handle
 *
 * PERCS_IOC_CAU_JOIN.  @members gives this member its index, the root and
 * the member count (the kernel checks that @w is a member of @id, not
 * that the arrays are equal).
 * Return: 0; -ENOENT no such tree (or it ended); -EPERM @w is not its
 * member (or not in @members); -EALREADY @w joined it before; -EINVAL,
 * -ELOOP, -EMLINK, -EEXIST for a bad shape; -ENOMEM.
 */
int percs_cau_tree_join(struct percs_window *w, uint32_t id,
			const struct percs_cau_member *members,
			unsigned int nr, unsigned int flags,
			struct percs_cau_tree **out);

/**
 * percs_cau_tree_destroy() - end a tree and free its handle
 * @t: the tree (may be NULL)
 *
 * PERCS_IOC_CAU_DESTROY: the tree ends for every member (the others'
 * running collectives on it end with -ECONNRESET); this member's running
 * requests on it end with -ECONNRESET too (they must still be freed).
 * Every member calls it to free its handle; a tree that already ended is
 * no error.
 * Return: 0, or the kernel's -errno (the handle is freed anyway).
 */
int percs_cau_tree_destroy(struct percs_cau_tree *t);

/**
 * struct percs_cau_tree_info - what percs_cau_tree_query() tells
 * @id: the tree id
 * @nr_members: members
 * @me: this member's index
 * @root: the root's index
 * @flags: PERCS_CAU_F_*
 * @status: 0, or -ECONNRESET once the tree has ended
 * @ops: CAU operations this member has posted on the tree (the last
 *	operation's number: a member's n-th descriptor is operation n)
 * @running: requests on the tree not finished
 * @reserved: zero
 */
struct percs_cau_tree_info {
	uint32_t id;
	uint32_t nr_members;
	uint32_t me;
	uint32_t root;
	uint32_t flags;
	int32_t status;
	uint64_t ops;
	uint32_t running;
	uint32_t reserved;
};

/**
 * percs_cau_tree_query() - describe a tree handle
 * @t: the tree
 * @info: filled in
 * Return: 0, -EINVAL for a NULL pointer.
 */
int percs_cau_tree_query(const struct percs_cau_tree *t,
			 struct percs_cau_tree_info *info);

/** percs_cau_tree_id() - the tree's id, to pass to the other members */
uint32_t percs_cau_tree_id(const struct percs_cau_tree *t);

/*
 * CAU collectives.  @sendbuf and @recvbuf may be the same buffer (in
 * place), not otherwise overlapping; @count elements of @type (any
 * number: 64 bytes per CAU operation).  Each call posts
 * ceil(@count x size / 64) operations on the tree (one for a barrier):
 * every member must make the same calls so that their n-th operations
 * match.
 *
 * Return (blocking forms; the non-blocking ones return 0 and *@req, and
 * the request's status comes from percs_coll_test()/percs_coll_wait()):
 * 0; -EINVAL for a NULL argument, an op the type does not have, an
 * unknown op or type; -ECONNRESET when the tree ended (before or during
 * the call); -EINVAL when the members' operations disagreed (the CAU's
 * status; the other results are still written); the -errno of a kernel
 * completion entry for a descriptor (Documentation/uapi.rst,
 * "Collectives"); -ENOMEM (non-blocking forms); a kick's -errno.
 */

/**
 * percs_cau_allreduce() - every member gets the combination of all
 * @t: the tree
 * @sendbuf: this member's @count elements
 * @recvbuf: the result, @count elements
 * @count: elements
 * @type: PERCS_CAU_T_*
 * @op: PERCS_CAU_OP_*
 */
int percs_cau_allreduce(struct percs_cau_tree *t, const void *sendbuf,
			void *recvbuf, size_t count, unsigned int type,
			unsigned int op);

/**
 * percs_cau_reduce() - the tree's root gets the combination of all
 * @t: the tree
 * @sendbuf: this member's @count elements
 * @recvbuf: the result at the root; ignored (may be NULL) elsewhere
 * @count: elements
 * @type: PERCS_CAU_T_*
 * @op: PERCS_CAU_OP_*
 *
 * The CAU sends the result to the root only, so a non-root member's call
 * completes once its operations are posted (its buffer may be reused).
 * Should the CAU report an error for one of them later (the members
 * disagreed), the next call on this tree that finishes without an error
 * of its own returns it.
 */
int percs_cau_reduce(struct percs_cau_tree *t, const void *sendbuf,
		     void *recvbuf, size_t count, unsigned int type,
		     unsigned int op);

/**
 * percs_cau_bcast() - @root's @len bytes to every member
 * @t: the tree
 * @root: index of the origin member (any member, not only the tree's root)
 * @buf: the data at @root, the result elsewhere
 * @len: bytes (any number; 0 sends nothing)
 *
 * Every member calls it with the same @root and @len, in the same order
 * as its other collectives on @t.  The CAU's own multicast
 * (%PERCS_COLL_MCAST): @root posts one multicast per 64 bytes and
 * returns once all are posted (its buffer may be reused then; it does not
 * wait for the others); every other member returns once it has the
 * bytes.  The kernel delivers one origin's multicasts in order, so a
 * member matches them to its calls by origin; those that come before the
 * call they belong to (the root may be a call ahead) are kept for it.
 * Multicasts take no operation number: they do not count in
 * &percs_cau_tree_info.ops.
 */
int percs_cau_bcast(struct percs_cau_tree *t, unsigned int root, void *buf,
		    size_t len);

/**
 * percs_cau_barrier() - return once every member has entered
 * @t: the tree
 */
int percs_cau_barrier(struct percs_cau_tree *t);

/** percs_cau_iallreduce() - percs_cau_allreduce(), non-blocking */
int percs_cau_iallreduce(struct percs_cau_tree *t, const void *sendbuf,
			 void *recvbuf, size_t count, unsigned int type,
			 unsigned int op, struct percs_coll_req **req);
/** percs_cau_ireduce() - percs_cau_reduce(), non-blocking */
int percs_cau_ireduce(struct percs_cau_tree *t, const void *sendbuf,
		      void *recvbuf, size_t count, unsigned int type,
		      unsigned int op, struct percs_coll_req **req);
/** percs_cau_ibcast() - percs_cau_bcast(), non-blocking */
int percs_cau_ibcast(struct percs_cau_tree *t, unsigned int root, void *buf,
		     size_t len, struct percs_coll_req **req);
/** percs_cau_ibarrier() - percs_cau_barrier(), non-blocking */
int percs_cau_ibarrier(struct percs_cau_tree *t, struct percs_coll_req **req);

/* ---- software collectives ------------------------------------------------ */

/* Algorithms (the @algo arguments) */
#define PERCS_SW_AUTO		0 /* the library's choice */
#define PERCS_SW_BINOMIAL	1 /* binomial tree (allreduce: reduce + bcast) */
#define PERCS_SW_RECDBL		2 /* recursive doubling (extra ranks folded) */
#define PERCS_SW_RABENSEIFNER	3 /* reduce-scatter (halving) + allgather (doubling) */
#define PERCS_SW_DISSEMINATION	4 /* barrier only: ceil(log2 n) rounds */

/**
 * percs_sw_group_create() - a group of windows for software collectives
 * @w: this member's window (one of @members)
 * @members: every member's window; rank = index; the same array, in the
 *	same order, on every member
 * @nr: members, 1 .. %PERCS_CAU_MAX_MEMBERS
 * @ctx: the group's context, the same on every member and different from
 *	the other groups of any member window (messages carry it in their
 *	tag, %PERCS_SW_TAG_HI << 16 | @ctx)
 * @out: the group
 *
 * Nothing is sent: the group exists locally.  Messages of a collective
 * that arrive before this member starts it are kept (the unexpected
 * queue), also those that came before the group was created and that the
 * library kept for percs_recv() meanwhile (they are taken back at
 * creation; those the application received itself are lost to the
 * group: create the group before receiving on the window).
 * Return: 0; -EINVAL for a NULL pointer or a bad @nr; -EPERM when @w is
 * not in @members; -EEXIST when a member is listed twice or @w has a group
 * with @ctx; -ENOMEM.
 */
int percs_sw_group_create(struct percs_window *w,
			  const struct percs_addr *members, unsigned int nr,
			  uint16_t ctx, struct percs_sw_group **out);

/**
 * percs_sw_group_destroy() - free a group
 * @g: the group (may be NULL)
 * Return: 0; -EBUSY while requests on it are running (nothing freed).
 */
int percs_sw_group_destroy(struct percs_sw_group *g);

/** percs_sw_group_rank() - this member's rank (index in @members) */
unsigned int percs_sw_group_rank(const struct percs_sw_group *g);

/*
 * Software collectives: messages of at most 2000 data bytes (larger ones
 * are split), each with a 16-byte header (collective number, round,
 * offset) that matches it to its receive whatever the order of arrival.
 * Buffers as for the CAU calls.  Algorithms:
 *
 * allreduce: %PERCS_SW_BINOMIAL (binomial reduce to rank 0, then binomial
 *	broadcast), %PERCS_SW_RECDBL (recursive doubling; with n not a power
 *	of two the first 2 x (n - 2^k) ranks fold in pairs first and unfold
 *	at the end), %PERCS_SW_RABENSEIFNER (the same fold, reduce-scatter by
 *	recursive halving, allgather by recursive doubling: for long
 *	vectors); %PERCS_SW_AUTO: recursive doubling up to 2 KiB or fewer
 *	elements than ranks, Rabenseifner above.
 * reduce, bcast: %PERCS_SW_BINOMIAL (or %PERCS_SW_AUTO).
 * barrier: %PERCS_SW_DISSEMINATION (%PERCS_SW_AUTO), %PERCS_SW_BINOMIAL,
 *	%PERCS_SW_RECDBL (the allreduce schedules without data).
 *
 * Return (blocking forms; non-blocking ones as for the CAU): 0; -EINVAL
 * for a NULL argument, a bad op/type, @root >= members; -EOPNOTSUPP for an
 * algorithm the collective does not have; -EPROTO for a message that does
 * not fit its receive (members disagreeing on count or root); a send's
 * completion error (e.g. -ECONNREFUSED: a member's window is gone);
 * -ENOMEM; a kick's -errno.
 */

/**
 * percs_sw_allreduce() - every member gets the combination of all
 * @g: the group
 * @algo: PERCS_SW_AUTO, _BINOMIAL, _RECDBL or _RABENSEIFNER
 * @sendbuf: this member's @count elements
 * @recvbuf: the result
 * @count: elements
 * @type: PERCS_CAU_T_*
 * @op: PERCS_CAU_OP_*
 */
int percs_sw_allreduce(struct percs_sw_group *g, unsigned int algo,
		       const void *sendbuf, void *recvbuf, size_t count,
		       unsigned int type, unsigned int op);

/**
 * percs_sw_reduce() - @root gets the combination of all
 * @g: the group
 * @algo: PERCS_SW_AUTO or _BINOMIAL
 * @root: the rank that gets the result
 * @sendbuf: this member's @count elements
 * @recvbuf: the result at @root; ignored (may be NULL) elsewhere
 * @count: elements
 * @type: PERCS_CAU_T_*
 * @op: PERCS_CAU_OP_*
 */
int percs_sw_reduce(struct percs_sw_group *g, unsigned int algo,
		    unsigned int root, const void *sendbuf, void *recvbuf,
		    size_t count, unsigned int type, unsigned int op);

/**
 * percs_sw_bcast() - @root's @len bytes to every member
 * @g: the group
 * @algo: PERCS_SW_AUTO or _BINOMIAL
 * @root: the origin rank
 * @buf: the data at @root, the result elsewhere
 * @len: bytes
 */
int percs_sw_bcast(struct percs_sw_group *g, unsigned int algo,
		   unsigned int root, void *buf, size_t len);

/**
 * percs_sw_barrier() - return once every member has entered
 * @g: the group
 * @algo: PERCS_SW_AUTO, _DISSEMINATION, _BINOMIAL or _RECDBL
 */
int percs_sw_barrier(struct percs_sw_group *g, unsigned int algo);

/** percs_sw_iallreduce() - percs_sw_allreduce(), non-blocking */
int percs_sw_iallreduce(struct percs_sw_group *g, unsigned int algo,
			const void *sendbuf, void *recvbuf, size_t count,
			unsigned int type, unsigned int op,
			struct percs_coll_req **req);
/** percs_sw_ireduce() - percs_sw_reduce(), non-blocking */
int percs_sw_ireduce(struct percs_sw_group *g, unsigned int algo,
		     unsigned int root, const void *sendbuf, void *recvbuf,
		     size_t count, unsigned int type, unsigned int op,
		     struct percs_coll_req **req);
/** percs_sw_ibcast() - percs_sw_bcast(), non-blocking */
int percs_sw_ibcast(struct percs_sw_group *g, unsigned int algo,
		    unsigned int root, void *buf, size_t len,
		    struct percs_coll_req **req);
/** percs_sw_ibarrier() - percs_sw_barrier(), non-blocking */
int percs_sw_ibarrier(struct percs_sw_group *g, unsigned int algo,
		      struct percs_coll_req **req);

/* ---- requests ------------------------------------------------------------ */

/**
 * percs_coll_test() - advance and check a non-blocking collective
 * @req: the request
 *
 * Advances every collective of the request's window once (never sleeps,
 * does not kick: in kick mode the descriptors and packets it composes are
 * triggered with a kick, percs_coll_wait() kicks while it waits).
 * Return: -EINPROGRESS while it runs; then its status, every time: 0 or
 * the error that ended it (see the collective); -EINVAL for a NULL @req;
 * the -errno of advancing (a kick's, -EIO, -ENOMEM: it keeps running).
 */
int percs_coll_test(struct percs_coll_req *req);

/**
 * percs_coll_wait() - wait for a non-blocking collective to finish
 * @req: the request
 * @timeout_ms: at most this long; -1 without limit
 *
 * Advances the window's collectives, kicking and sleeping as described
 * above, until the request finishes or @timeout_ms pass.
 * Return: its status as percs_coll_test(); -EINPROGRESS when the time ran
 * out first (it keeps running); or the -errno that stopped the waiting (a
 * kick's, -ENOMEM; the request keeps running).
 */
int percs_coll_wait(struct percs_coll_req *req, int timeout_ms);

/**
 * percs_coll_req_free() - release a finished request
 * @req: the request (may be NULL)
 *
 * A running collective cannot be cancelled (the other members count on
 * this member's part): wait for it first.
 * Return: 0, -EBUSY while it runs (nothing freed).
 */
int percs_coll_req_free(struct percs_coll_req *req);

/**
 * percs_coll_progress() - advance every collective of a window
 * @w: the window
 *
 * For programs that overlap computation with non-blocking collectives
 * and do not call percs_coll_test() often.  Never sleeps.
 * Return: 0, or the -errno of a kick, of reading the FIFO or CQ (-EIO,
 * -ENOMEM).
 */
int percs_coll_progress(struct percs_window *w);

/**
 * percs_strerror() - describe a libpercs/completion error code
 * @err: a negative errno as returned or found in &percs_cqe.res (a
 *	positive one is accepted too)
 */
const char *percs_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* LIBPERCS_PERCS_H */
