/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs selftests: shared helpers.
 *
 * How to use them
 * ---------------
 * A test file includes "kselftest_harness.h" and then "common.h", and ends
 * with TEST_HARNESS_MAIN.  selftests/selftests.mk builds every
 * selftests/NAME.c (except common.c) into $(BUILD)/selftests/NAME, linked
 * with common.c and libpercs-san.a; nothing to edit when adding a file.
 *
 * Plain helpers (pt_*) never fail a test by themselves: they return 0 (or a
 * count/fd) on success and a negative errno on failure, so use them inside
 * ASSERT_EQ(0, pt_...(...)).  Every wait has a deadline and returns
 * -ETIMEDOUT when it passes: no helper can hang a test.
 *
 *   PT_REQUIRE_DEVICE();             SKIP the test if the module is absent
 *   pt_hfi_open(hub, unit, &hfi)     libpercs HFI (percs_hfi_close())
 *   pt_hfi_open_fd(hub, unit)        raw fd of /dev/percs-hfiN (close())
 *   pt_reserve(hfi, flags, send_size, recv_size, key, window, &w)
 *                                    libpercs window (percs_window_release())
 *   pt_reserve_raw(hfi_fd, ..., &req) raw ioctl; returns the window fd
 *   pt_rawwin_open()/pt_rawwin_close() raw window with every region mapped
 *   pt_rawwin_map(rw, fd, &req)      map a window fd received from elsewhere
 *   pt_raw_put(rw, pos, hdr, payload) write a packet at send FIFO unit pos
 *   pt_raw_trigger(rw, tail, kick)   store send_tail, optionally KICK
 *   pt_new_key()                     a new job (PERCS_IOC_JOB_CREATE):
 *                                    its key, 0 on failure
 *   pt_job_fd(key)                   the fd of a job pt_new_key() made
 *                                    (-1 for any other key)
 *   pt_jobs_close()                  close them all (pt_wait_live_zero()
 *                                    does, so that no job is left)
 *   pt_any_fd_joins(key)             an fd of this process joins that job
 *   pt_send(w, dst, buf, len, tag, flags, timeout_ms)
 *   pt_icswx(w, dst, buf, len, tag, timeout_ms)
 *                                    retry -EAGAIN (kicking) until deadline
 *   pt_recv(w, &hdr, buf, cap, timeout_ms)  payload length or -ETIMEDOUT
 *   pt_cq_wait(w, &cqe, timeout_ms)  one completion entry or -ETIMEDOUT
 *   pt_read_live(&live)              /sys/kernel/debug/percs/live
 *   pt_wait_live_zero(&live, ms)     0 once every counter is zero
 *   ASSERT_LIVE_ZERO()               fails the test (prints the counters)
 *   pt_live_field(name)              one line of it ("registrations", ...)
 *   pt_wait_live_field(name, want, ms)  that line once it reads @want
 *   pt_wait_mrs(regs, pages, ms)     true once registrations and
 *                                    pinned_pages read @regs and @pages
 *   pt_side_open(&s, hub, unit, key, len, access, flags), pt_side_close(&s)
 *                                    one end of an RDMA or atomic
 *                                    transfer: HFI, window, registered
 *                                    buffer (struct pt_side)
 *   pt_shared_alloc(len)             MAP_SHARED memory for forked children
 *   pt_sysfs_windows_in_use(hub, unit) /sys/class/percs/percs-hfiN/...
 *   pt_fork_n(n, fn, arg, timeout_ms) run fn(i, arg) in n children;
 *                                    returns how many failed (fn != 0,
 *                                    signal, or killed at the deadline)
 *   pt_fork_start(n, fn, arg, pids), pt_fork_wait(n, pids, timeout_ms)
 *                                    the same in two halves, so that the
 *                                    parent works while the children run
 *   pt_read_atomic_stats(&s)         /sys/kernel/debug/percs/atomic
 *   pt_cau_read(buf, cap)            /sys/kernel/debug/percs/cau as text
 *   pt_cau_entries(), pt_cau_hub_used(hub)  its "entries" and "hub N used"
 *   pt_nr_hubs()                     hubs of the system (sysfs)
 *   pt_isr_links_sum(column)         a column of isr/links, summed
 *   pt_faults_set(ppm)               isr/drop_ppm, dup_ppm, reorder_ppm
 *   pt_fill(buf, len, seed), pt_checksum(buf, len)  payload patterns
 *   pt_snap_take(&s), pt_snap_back(&want, &now, ms)
 *                                    open fds + live counters: take a
 *                                    snapshot, wait for it to come back
 *   pt_scale(n)                      n scaled by $PERCS_TEST_SCALE (a
 *                                    fraction, default 1; at least 1): the
 *                                    debug kernels run syscall-heavy loops
 *                                    ~20x slower, so their runs set 0.05
 *
 * Notes on the 6.1 harness: it has no TEST_TIMEOUT (default 30 s per test):
 * use an empty fixture and TEST_F_TIMEOUT(fixture, name, seconds).  An
 * ASSERT/EXPECT is two statements: brace it under an if/for.  Tests are
 * built with -Wno-sign-compare so ASSERT_EQ(0, some_u32) is fine.
 *
 * Tests run in a forked child each (the harness does that), so a window a
 * failed test leaves open is closed when that child exits; check
 * ASSERT_LIVE_ZERO() only where no other window of the test is open.
 */
#ifndef PERCS_SELFTESTS_COMMON_H
#define PERCS_SELFTESTS_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <linux/percs.h>
#include "percs.h"

#define PT_DEV_DIR	"/dev"
#define PT_SYSFS_DIR	"/sys/class/percs"
#define PT_DEBUGFS_LIVE	"/sys/kernel/debug/percs/live"
#define PT_ISR_DIR	"/sys/kernel/debug/percs/isr/"
#define PT_DEBUGFS_ATOMIC "/sys/kernel/debug/percs/atomic"
#define PT_DEBUGFS_CAU	"/sys/kernel/debug/percs/cau"
#define PT_TIMEOUT_MS	5000	/* default deadline of one wait */

/** struct pt_live - /sys/kernel/debug/percs/live (-1: line missing) */
struct pt_live {
	long windows;
	long windows_reserved;
	long mappings;
	long blocked_senders;
	long jobs;
	long packets_in_flight;
	long atomics_outstanding;
	long cau_trees;
};

/**
 * struct pt_rawwin - a window reserved by raw ioctl, regions mapped
 * @fd: the window fd (-1 once closed)
 * @req: the reserve answer (regions, addr, window index)
 * @map: each valid region, mapped with its documented protection
 */
struct pt_rawwin {
	int fd;
	struct percs_window_reserve req;
	void *map[PERCS_REGION_MAX];
};

uint64_t pt_now_ms(void);
/** pt_pause_us() - sleep @us microseconds (nanosleep) */
void pt_pause_us(long us);
/** pt_mix64() - splitmix64's finaliser of @x + the golden ratio: a hash */
uint64_t pt_mix64(uint64_t x);
/** pt_rnd() - the next number of the splitmix64 generator at *@state */
uint64_t pt_rnd(uint64_t *state);
/** pt_rnd_below() - pt_rnd() modulo @n (> 0) */
unsigned int pt_rnd_below(uint64_t *state, unsigned int n);
/** pt_addr_eq() - the same hub, HFI and window */
bool pt_addr_eq(const struct percs_addr *a, const struct percs_addr *b);
/**
 * pt_reap() - wait for child @pid, SIGKILL it after @timeout_ms
 * Return: its exit code, 128 + the signal that ended it, -ETIMEDOUT when
 * it had to be killed, or -errno from waitpid().
 */
int pt_reap(pid_t pid, int timeout_ms);
bool pt_have_device(void);

int pt_hfi_open(unsigned int hub, unsigned int unit, struct percs_hfi **out);
int pt_hfi_open_fd(unsigned int hub, unsigned int unit);
/**
 * pt_window_query() - PERCS_IOC_WINDOW_QUERY of @window on an HFI
 * Return: 0 (the window is reserved), the ioctl's -errno (-ENOENT: free).
 */
int pt_window_query(unsigned int hub, unsigned int unit, uint32_t window);
#define PT_MAX_JOBS	256
uint32_t pt_new_key(void);
/* @len bytes of @data with @fd attached (SCM_RIGHTS): bytes sent or -1. */
ssize_t pt_send_fd(int sock, int fd, const void *data, size_t len);
/* @len bytes and one fd within @ms: the fd, or -ETIMEDOUT, -EPIPE... */
int pt_recv_fd(int sock, void *data, size_t len, int ms);
int pt_job_fd(uint32_t key);
void pt_jobs_close(void);
/* Does any fd below 256, named as a job fd, join the job with @key? */
bool pt_any_fd_joins(uint32_t key);

int pt_reserve(struct percs_hfi *hfi, uint32_t flags, uint32_t send_size,
	       uint32_t recv_size, uint32_t key, uint32_t window,
	       struct percs_window **out);
int pt_reserve_raw(int hfi_fd, uint32_t flags, uint32_t send_size,
		   uint32_t recv_size, uint32_t key, uint32_t window,
		   struct percs_window_reserve *req);

int pt_rawwin_open(struct pt_rawwin *rw, int hfi_fd, uint32_t flags,
		   uint32_t send_size, uint32_t recv_size, uint32_t key);
int pt_rawwin_map(struct pt_rawwin *rw, int fd,
		  const struct percs_window_reserve *req);
void pt_rawwin_close(struct pt_rawwin *rw);
uint64_t pt_raw_put(struct pt_rawwin *rw, uint64_t pos,
		    const struct percs_pkt_hdr *hdr, const void *payload);
int pt_raw_trigger(struct pt_rawwin *rw, uint64_t send_tail, bool kick);
int pt_raw_kick(struct pt_rawwin *rw, unsigned long flags);
#define pt_rawwin_db(rw) \
	((volatile struct percs_doorbell *)(rw)->map[PERCS_REGION_DOORBELL])
#define pt_rawwin_st(rw) \
	((const volatile struct percs_status *)(rw)->map[PERCS_REGION_STATUS])

int pt_send(struct percs_window *w, const struct percs_addr *dst,
	    const void *buf, size_t len, uint32_t tag, unsigned int flags,
	    int timeout_ms);
int pt_icswx(struct percs_window *w, const struct percs_addr *dst,
	     const void *buf, size_t len, uint32_t tag, int timeout_ms);
int pt_recv(struct percs_window *w, struct percs_pkt_hdr *hdr, void *buf,
	    size_t cap, int timeout_ms);
int pt_cq_wait(struct percs_window *w, struct percs_cqe *cqe, int timeout_ms);

int pt_read_live(struct pt_live *live);
bool pt_live_is_zero(const struct pt_live *live);
int pt_wait_live_zero(struct pt_live *live, int timeout_ms);

/**
 * pt_live_field() - one counter of /sys/kernel/debug/percs/live
 * @name: its name, e.g. "registrations" or "pinned_pages" (the NMMU's
 *	  counters, which struct pt_live does not hold)
 *
 * Return: its value, or -1 if the file or the line is missing.
 */
long pt_live_field(const char *name);

/**
 * pt_wait_live_field() - wait for one counter of percs/live to read a value
 * @name: the counter, as for pt_live_field()
 * @want: the value waited for
 * @timeout_ms: how long to wait
 *
 * For counters that settle a moment after the call that changes them:
 * the NMMU unpins a registration's pages from a work queue.
 *
 * Return: @want once read, or the last value read when the time is up
 * (so that ASSERT_EQ(want, ...) prints what was there).
 */
long pt_wait_live_field(const char *name, long want, int timeout_ms);

/**
 * pt_wait_mrs() - wait for the NMMU's live counters to read given values
 * @regs: registrations wanted (percs/live "registrations")
 * @pages: pinned pages wanted (percs/live "pinned_pages")
 * @timeout_ms: how long to wait
 *
 * Registrations are released and their pages unpinned by a deferred
 * release (a transfer in flight, the NMMU's work queue), so after a
 * deregistration or a window close the counters reach their value a
 * moment later.  pt_wait_mrs(0, 0, PT_TIMEOUT_MS): everything drained.
 *
 * Return: true once both read as wanted (in one pass), false when the
 * time is up.
 */
bool pt_wait_mrs(long regs, long pages, int timeout_ms);
long pt_sysfs_read_long(const char *path);
long pt_stat_field(const char *path, const char *field);
int pt_isr_write(const char *file, const char *val);
int pt_isr_set(const char *file, unsigned long val);

/**
 * pt_faults_set() - the lossy stage's fault knobs, all three at once
 * @ppm: chance per million that a datagram of the atomics or the CAU is
 *	dropped, duplicated and held back (isr/drop_ppm, dup_ppm,
 *	reorder_ppm); 0 turns faults off
 *
 * Return: 0, or the first knob's -errno (the others are still written).
 */
int pt_faults_set(unsigned long ppm);
long pt_isr_read(const char *file);
long pt_sysfs_hfi_attr(unsigned int hub, unsigned int unit, const char *attr);
long pt_sysfs_windows_in_use(unsigned int hub, unsigned int unit);

/**
 * struct pt_side - one end of an RDMA or atomic transfer
 * @hfi: the HFI, opened through libpercs
 * @w: a window reserved on it (default FIFO sizes)
 * @addr: the window's network address
 * @buf: anonymous private memory registered on @w (NULL or MAP_FAILED:
 *	 none)
 * @len: the length of @buf
 * @mr: the handle of @buf's registration
 * @rmr: @buf as a PGAS peer names it (percs_atomic_*(), percs_rdma_*())
 */
struct pt_side {
	struct percs_hfi *hfi;
	struct percs_window *w;
	struct percs_addr addr;
	uint8_t *buf;
	size_t len;
	uint32_t mr;
	struct percs_rmr rmr;
};

/*
 * pt_side_open() flag: zero the buffer before registering it, so that
 * every page exists before it is pinned (the registration itself then
 * faults nothing in).
 */
#define PT_SIDE_PREFAULT	(1U << 0)

/**
 * pt_side_open() - open one end of a transfer
 * @s: filled in
 * @hub: the HFI's hub
 * @unit: the HFI on the hub (0 or 1)
 * @key: the window's job key (pt_new_key())
 * @len: bytes of memory to map and register
 * @access: the registration's rights (PERCS_ACCESS_*)
 * @flags: 0 or PT_SIDE_PREFAULT
 *
 * Opens the HFI, reserves a window with the default FIFO sizes on any
 * index, maps @len bytes of anonymous memory and registers them with
 * @access.  On failure @s holds what was set up: pt_side_close() it
 * (a fixture's teardown does) or let the process exit.
 *
 * Return: 0, or the first failure's -errno.
 */
int pt_side_open(struct pt_side *s, unsigned int hub, unsigned int unit,
		 uint32_t key, size_t len, uint32_t access, unsigned int flags);

/**
 * pt_side_close() - release what pt_side_open() set up, and zero @s
 * @s: a side; any field may be NULL already (a window the test released
 *     itself), and closing twice is harmless
 *
 * The window goes first (its registrations with it), then the HFI, then
 * the memory.
 */
void pt_side_close(struct pt_side *s);

/**
 * pt_shared_alloc() - memory shared with forked children (not registered)
 * @len: its length
 *
 * Return: zeroed MAP_SHARED anonymous memory (munmap() it), or NULL.
 */
void *pt_shared_alloc(size_t len);

int pt_fork_n(int n, int (*fn)(int idx, void *arg), void *arg,
	      int timeout_ms);
int pt_fork_start(int n, int (*fn)(int idx, void *arg), void *arg,
		  pid_t *pids);
int pt_fork_wait(int n, pid_t *pids, int timeout_ms);

/**
 * struct pt_atomic_stats - /sys/kernel/debug/percs/atomic (-1: line missing)
 * @issued: atomic descriptors sent
 * @completed: completion entries posted for them
 * @retransmits: requests sent again after their timeout
 * @duplicates: arrivals of an applied sequence number (answered again)
 * @stale: old arrivals ignored
 * @dropped: atomic packets the injection dropped (isr/drop_ppm)
 * @duplicated: atomic packets the injection duplicated (isr/dup_ppm)
 * @delayed: atomic packets the injection held back (isr/reorder_ppm)
 * @timeouts: descriptors that ran out of retransmissions (-ETIMEDOUT)
 * @outstanding: descriptors sent and not completed now
 */
struct pt_atomic_stats {
	long issued;
	long completed;
	long retransmits;
	long duplicates;
	long stale;
	long dropped;
	long duplicated;
	long delayed;
	long timeouts;
	long outstanding;
};

int pt_read_atomic_stats(struct pt_atomic_stats *s);

/*
 * The CAUs (debugfs percs/cau, percs_cau_show()): "entries PER_HUB", a
 * "hub N used U" line per hub with an entry taken, then the trees.
 * pt_cau_read() returns the text's length or -errno (NUL-terminated,
 * truncated to @cap - 1); pt_cau_entries() the entries per hub and
 * pt_cau_hub_used() a hub's entries taken (0: no line), or -errno.
 */
int pt_cau_read(char *buf, size_t cap);
long pt_cau_entries(void);
long pt_cau_hub_used(unsigned int hub);
/** pt_nr_hubs() - hubs of the system (HFI devices / 2), or -errno */
long pt_nr_hubs(void);
long pt_isr_links_sum(const char *column);

void pt_fill(void *buf, size_t len, uint64_t seed);
uint64_t pt_checksum(const void *buf, size_t len);

/* Skip (not fail) when the module is not loaded: e.g. run on the host. */
#define PT_REQUIRE_DEVICE() do {					\
	if (!pt_have_device())						\
		SKIP(return, "percs module not loaded (no "		\
		     PT_DEV_DIR "/percs-hfi0)");				\
} while (0)

/* Fail the test unless the live counters drain to zero within 5 s. */
#define ASSERT_LIVE_ZERO() do {						\
	struct pt_live __l;						\
	int __r = pt_wait_live_zero(&__l, PT_TIMEOUT_MS);		\
	if (__r)							\
		TH_LOG("live: windows %ld reserved %ld mappings %ld "	\
		       "blocked %ld jobs %ld in_flight %ld "	\
		       "atomics %ld cau_trees %ld (%d)",		\
		       __l.windows, __l.windows_reserved, __l.mappings,	\
		       __l.blocked_senders, __l.jobs,		\
		       __l.packets_in_flight, __l.atomics_outstanding,	\
		       __l.cau_trees, __r);				\
	ASSERT_EQ(0, __r);						\
} while (0)

/**
 * struct pt_snap - what a failed call must leave as it found it
 * @live: the debugfs live counters
 * @fds: open file descriptors of this process
 */
struct pt_snap {
	struct pt_live live;
	int fds;
};

/** pt_snap_take() - snapshot fds and live counters; 0 or -errno */
int pt_snap_take(struct pt_snap *s);

/**
 * pt_snap_back() - wait until the state equals a snapshot again
 * @want: the snapshot
 * @now: the last state seen
 * @ms: how long releases may take (they can be deferred)
 */
bool pt_snap_back(const struct pt_snap *want, struct pt_snap *now,
		  unsigned int ms);

/**
 * pt_scale() - an iteration count scaled for the kernel under test
 * @n: the count on the stock kernel
 *
 * Return: n * $PERCS_TEST_SCALE rounded down, at least 1.
 */
unsigned long pt_scale(unsigned long n);

#endif /* PERCS_SELFTESTS_COMMON_H */
