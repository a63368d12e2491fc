/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs unit tests: what the test files share - the checks, the fake
 * HFI (fake_hfi.c) and the fakes that extend it: the reserve, registration
 * and job ioctls (fake_ioctl.c), the atomic unit (fake_atomic.c) and the
 * CAU (fake_cau.c).
 *
 * A fake window is a struct percs_window built by lp_window_new() over
 * plain malloc'ed regions (send/receive FIFO, doorbell, status page,
 * immediate slots, CQ) instead of mmaps of the device, with the window's
 * kick hook pointing at the fake HFI.  The fake HFI does what the kernel
 * engine does, in the simplest way: it moves packets from send FIFOs and
 * immediate slots into the destination window's receive FIFO (padding at
 * the ring end, honouring credits), posts completions and maintains the
 * status page, and it records every rule the library breaks (a packet
 * that wraps, a trigger past the ring) as a violation.
 *
 * Each test runs in a forked child with a timeout and prints one TAP line
 * (harness.c); each file lists its tests in a table NAME_tests[].
 */
#ifndef PERCS_LIB_UNIT_H
#define PERCS_LIB_UNIT_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "firmware-model/cau.h"	/* the reference ALU */
#include "tap_unit.h"		/* the checks and the runner */

/* ---- the fake HFI (fake_hfi.c) ------------------------------------------ */

#define NWIN		16
#define JOB_KEY		42

struct fwin {
	struct percs_window *w;
	struct percs_addr addr;
	uint8_t *send;
	uint8_t *recv;
	uint8_t *imm;
	struct percs_doorbell *db;
	struct percs_status *st;
	struct percs_cqe *cq;
	uint32_t send_units;
	uint32_t recv_units;
	unsigned int kicks[3];	/* per PERCS_KICK_F_* bit */
	unsigned int nkicks;
};

/* The fake HFI's state (fake_hfi.c). */
struct fake_hfi {
	struct fwin *win[NWIN];
	bool hubs;		/* window i is on hub i (for CAU trees) */
	bool paused;		/* kicks are counted but do nothing */
	bool threaded;		/* a thread runs the engine; kicks wake it */
	sem_t wake;
	unsigned int violations;
};
extern struct fake_hfi H;

/* ---- the fake ioctls (fake_ioctl.c; the binary is linked with --wrap) --- */

int __real_ioctl(int fd, unsigned long req, ...);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __real_munmap(void *addr, size_t len);
int __wrap_ioctl(int fd, unsigned long req, ...);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __wrap_munmap(void *addr, size_t len);
int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);
void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);

/* The fake ioctls' state and knobs (fake_ioctl.c). */
struct fake_ioctl {
	int hfi_fd;			/* the fake HFI, or -1 */
	int win_fd;			/* the last memfd handed out */
	int reserve_errno;		/* make the reserve fail with this */
	uint32_t drop_flags[PERCS_REGION_MAX];	/* clear in the layout */
	struct percs_window_reserve seen;	/* the last request */
	int kick_ret;
	unsigned long kick_arg;
	int mmap_calls, mmap_fail_nth, munmaps;
	uint32_t clock_version;		/* written into the clock page */
	uint64_t clock_offset;		/* where the clock page is */
	struct percs_mr_register mr_seen;	/* the last MR_REGISTER */
	struct percs_mr_deregister dereg_seen;	/* the last MR_DEREGISTER */
	int mr_errno;			/* make MR_REGISTER fail with this */
	bool mr_no_invalidate;		/* refuse PERCS_MR_F_INVALIDATE */
	int mr_calls;			/* MR_REGISTER and MR_DEREGISTER calls */
	uint32_t mr_live[8];		/* the fake's registrations (0: free) */
	uint64_t mr_addr[8], mr_len[8];	/* their ranges */
	uint32_t mr_access[8];		/* and rights */
	uint32_t mr_gen;
	int job_fd;			/* the fake job handed out, or -1 */
	int job_creates;		/* JOB_CREATE calls */
};
extern struct fake_ioctl R;

/* ---- the fake atomic unit (fake_atomic.c) -------------------------------- */

/* A registration of a target window, as the fake atomic unit sees it. */
struct ftmr {
	uint16_t window;
	uint32_t handle;
	uint8_t *base;
	uint64_t len;
	uint32_t access;
};

/* One descriptor as the fake found it in the send FIFO. */
struct alog {
	struct percs_pkt_hdr h;
	struct percs_atomic_ext e;
	struct percs_atomic_op ops[PERCS_ATOMIC_MAX_PACKED];
	uint64_t compare;
};

#define A_LOG		4096
#define A_HELD		1024

/* The fake atomic unit's state and knobs (fake_atomic.c). */
struct fake_atomic_unit {
	struct ftmr mr[8];
	unsigned int nmr;
	bool hold;		/* completions wait in held[] */
	unsigned int release;	/* held completions posted per kick */
	unsigned int release_after; /* or all of them every Nth kick */
	unsigned int kicks;
	int kick_err;		/* kicks fail with this ... */
	unsigned int kick_err_after; /* ... once kicks passes this */
	struct {
		uint16_t win;
		struct percs_cqe c;
	} held[A_HELD];
	unsigned int nheld;
	int force_res;		/* complete every descriptor with this */
	unsigned int meddle;	/* change the operand before this many CSWAPs */
	unsigned int descs;	/* descriptors executed */
	unsigned int max_inflight; /* of descs minus entries consumed */
	struct alog log[A_LOG];
};
extern struct fake_atomic_unit A;

/*
 * An initiator a (kick mode unless @flags say poll), a target b with 4 KiB
 * registered for atomics, and the fake NMMU behind a's fd for the result
 * area.
 */
struct aenv {
	struct fwin *a, *b;
	uint8_t *mem;
	struct percs_rmr r;
};

/* ---- the fake CAU (fake_cau.c) ------------------------------------------- */

#define FC_TREES	8
#define FC_RING		64
#define FC_MC_BUFS	4	/* an origin's multicasts not yet everywhere */
#define FC_MC		(NWIN * FC_MC_BUFS)

/* A multicast on its way to the members. */
struct fc_mc {
	uint64_t stamp;		/* post order in the tree, 0: free */
	uint64_t seq;		/* the origin's n-th */
	unsigned int origin;
	uint32_t tag;
	uint32_t wants;		/* members still to get it */
	uint8_t type, count;
	uint8_t data[PERCS_CAU_PAYLOAD];
};

struct fc_op {
	uint64_t seq;
	uint32_t have;		/* members whose input is in */
	uint32_t wants;		/* members that get a result packet */
	uint32_t delivered;	/* of those, written */
	uint8_t coll, op, type, count;
	int status;
	bool fired;
	uint32_t tag[NWIN];
	uint8_t in[NWIN][PERCS_CAU_PAYLOAD];
	uint8_t res[PERCS_CAU_PAYLOAD];
};

struct fc_tree {
	uint32_t id;
	bool live;
	uint32_t flags;
	unsigned int nr;
	struct percs_cau_member m[NWIN];
	bool joined[NWIN];
	uint64_t posted[NWIN];	/* descriptors accepted */
	uint64_t done[NWIN];	/* operations finished for the member */
	unsigned int peak[NWIN];	/* most unfinished at once */
	struct fc_op ops[FC_RING];
	uint64_t mc_posted[NWIN];	/* multicasts of each origin */
	unsigned int mc_busy[NWIN];	/* of those, not yet everywhere */
	bool mc_waiting[NWIN];	/* a multicast waits in its send FIFO */
	uint64_t mc_stamp;
	struct fc_mc mc[FC_MC];
};

/* The fake CAU's state and knobs (fake_cau.c). */
struct fake_cau {
	struct fc_tree t[FC_TREES];
	uint32_t next_id;
	bool hold;		/* results are not written */
	bool reverse;		/* written newest first */
	uint64_t fail_seq;	/* this operation gets fail_status */
	int fail_status;
	unsigned int descs;	/* descriptors accepted */
	unsigned int bad;	/* descriptors refused */
	unsigned int busy;	/* times a descriptor waited for its slot */
	unsigned int mc_busy;	/* times a multicast waited for a buffer */
	unsigned int mc_delivered;
	struct percs_coll_ext last;
};
extern struct fake_cau FC;

/* ---- helpers shared between files ---------------------------------------- */

/* clock.c */
uint64_t rnd64(uint64_t *s);

/* fake_atomic.c */
uint64_t a_apply(unsigned int op, unsigned int width, uint64_t old, uint64_t v,
	uint64_t cmp);
const struct alog *a_last(void);
uint64_t a_load(const void *p, unsigned int width);
uint64_t a_mask(unsigned int width);
void a_release(unsigned int n);
void a_store(void *p, unsigned int width, uint64_t v);
void aenv_fini(struct aenv *e);
void aenv_init(struct aenv *e, uint32_t flags);
void fake_atomic(struct fwin *f, const struct percs_pkt_hdr *h);
int fake_atomic_kick(void);
uint32_t ftmr_add(uint16_t window, void *base, uint64_t len, uint32_t access,
	uint32_t handle);

/* fake_cau.c */
struct percs_addr *caddrs(unsigned int n);
void cenv_fini(unsigned int n);
void cenv_init(unsigned int n, uint32_t flags, uint32_t recv_size);
void cfill(void *buf, size_t count, unsigned int type, unsigned int rank,
	uint64_t seed);
bool close_enough(const void *a, const void *b, size_t count,
	unsigned int type);
void cref(void *out, size_t count, unsigned int type, unsigned int op,
	unsigned int n, uint64_t seed);
extern struct percs_cau_tree *ct[NWIN];
int ctrees(unsigned int n, unsigned int flags, unsigned int fanout,
	unsigned int root);
extern struct fwin *cw[NWIN];
int fake_cau_ioctl(int fd, unsigned long req, unsigned long arg);
int fake_coll(struct fwin *f, const struct percs_pkt_hdr *h);
void fc_pump(void);
unsigned int heap_height(unsigned int n, unsigned int k);
bool op_type_next(unsigned int *op, unsigned int *type);
bool run_reqs(struct percs_coll_req **req, unsigned int n, int *st);

/* fake_hfi.c */
int deliver(struct fwin *s, const struct percs_pkt_hdr *h);
int engine_all(void);
int engine_imm(struct fwin *f);
int engine_send(struct fwin *f);
void fill(uint8_t *p, size_t len, uint32_t seed);
void fwin_free(struct fwin *f);
struct fwin *fwin_new(uint16_t idx, uint32_t send_size, uint32_t recv_size,
	uint32_t flags);
size_t max_len(uint32_t units);
bool pattern_ok(const uint8_t *p, size_t len, uint32_t seed);
void post_cqe(struct fwin *f, const struct percs_pkt_hdr *h, int res, bool imm);
void post_raw_cqe(struct fwin *f, const struct percs_cqe *c);
const struct percs_pkt_hdr *send_unit(struct fwin *f, uint64_t pos);
void stream_end(struct fwin *a, struct fwin *b, uint32_t sent, uint32_t total);
uint32_t stream_recv_some(struct fwin *b, uint32_t got, uint32_t rnd);
uint8_t *unit_ptr(uint8_t *base, uint32_t units, uint64_t pos);
void violation(const char *what, const struct fwin *f);
void *zalloc(size_t size);

/* fake_ioctl.c */
int count_fds(void);
struct percs_hfi *fake_hfi_open(char *dir);
bool map_prot(const void *p, char prot[5]);

/* threaded.c */
extern unsigned int lost_wakeups, engine_sleeps;
extern bool engine_stop;
void *engine_thread(void *arg);

#endif /* PERCS_LIB_UNIT_H */
