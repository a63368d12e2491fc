// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz: a seeded, struct-aware random fuzzer of the whole user interface.
 *
 * Four threads (PERCS_FUZZ_THREADS) share a table of the HFI fds, window
 * fds and mappings they created and, for pt_scale(100000) calls in all
 * (PERCS_FUZZ_CALLS overrides), pick one of: open an HFI, HFI_INFO /
 * WINDOW_RESERVE / WINDOW_QUERY with a mostly valid struct that has a few
 * fields, its size, its tail or its pointer mutated, KICK with random
 * flags, fsync/fdatasync, unknown ioctls, mmap of a random region with a
 * random offset/length/prot/flags, munmap/mprotect/mremap of whole and
 * partial mappings, close and dup of random fds (only the fuzzer's own),
 * packets written into mapped send FIFOs and immediate slots (mostly valid
 * headers, some malformed) with random triggers, random credits and CQ
 * heads, poll(2), read/write on a window fd, and fork: the child makes a
 * few calls on what it inherited and _exits.
 *
 * Every call's answer is predicted from Documentation/uapi.rst (a model of
 * the checks and their order: struct size, tail, fields, pointer) as a set
 * of allowed results; anything else is recorded and fails the test with
 * the list.  Nothing may hang: every thread's current call is watched and
 * one that runs for more than FZ_HANG_MS fails the test.  At the end every
 * fd is closed, every mapping unmapped, and the debugfs live counters and
 * the process's fd count must be back where they were.
 *
 * The seed is printed (stdout and the test log); PERCS_FUZZ_SEED=0x...
 * replays it: thread i draws from its own generator seeded from (seed, i),
 * so each thread makes the same sequence of choices (with
 * PERCS_FUZZ_THREADS=1 the whole run is repeated).
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE		4096ul
#define ARENA_RW	(17 * PAGE)
#define FZ_THREADS	4
#define FZ_CALLS	100000
#define FZ_MAX_FDS	40
#define FZ_MAX_HFI_FDS	6
#define FZ_MAX_MAPS	96
#define FZ_MAX_WINS	FZ_MAX_FDS
#define FZ_HANG_MS	30000	/* one call taking longer is a hang */
#define FZ_RUN_MS	200000	/* stop drawing new calls after this */
#define FZ_CHILD_MS	20000	/* a forked child's few calls */
#define FZ_MAX_RECORDS	40
#define TASK_SIZE_47	((1ull << 47) - PAGE)

/* ---- result classes: what a call may answer ---- */

enum res {
	A_OK, A_EINVAL, A_EFAULT, A_E2BIG, A_ENOENT, A_EBUSY, A_ENOSPC,
	A_ENOMEM, A_EMFILE, A_EPERM, A_EACCES, A_ENOTTY, A_EOVERFLOW,
	A_ENODEV, A_EBADF, A_OTHER, NR_RES
};
#define B(r)	(1u << (r))

static const char *const res_name[NR_RES] = {
	"ok", "EINVAL", "EFAULT", "E2BIG", "ENOENT", "EBUSY", "ENOSPC",
	"ENOMEM", "EMFILE", "EPERM", "EACCES", "ENOTTY", "EOVERFLOW",
	"ENODEV", "EBADF", "other",
};

static enum res res_of(long r)
{
	if (r >= 0)
		return A_OK;
	switch (-r) {
	case EINVAL: return A_EINVAL;
	case EFAULT: return A_EFAULT;
	case E2BIG: return A_E2BIG;
	case ENOENT: return A_ENOENT;
	case EBUSY: return A_EBUSY;
	case ENOSPC: return A_ENOSPC;
	case ENOMEM: return A_ENOMEM;
	case EMFILE: return A_EMFILE;
	case EPERM: return A_EPERM;
	case EACCES: return A_EACCES;
	case ENOTTY: return A_ENOTTY;
	case EOVERFLOW: return A_EOVERFLOW;
	case ENODEV: return A_ENODEV;
	case EBADF: return A_EBADF;
	}
	return A_OTHER;
}

static void mask_str(unsigned int mask, char *buf, size_t len)
{
	size_t n = 0;
	unsigned int r;

	buf[0] = '\0';
	for (r = 0; r < NR_RES && n < len; r++)
		if (mask & B(r))
			n += snprintf(buf + n, len - n, "%s%s", n ? "|" : "",
				      res_name[r]);
}

/* ---- the operations ---- */

enum op {
	OP_OPEN, OP_INFO, OP_RESERVE, OP_QUERY, OP_KICK, OP_SYNC,
	OP_BAD_IOCTL, OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MREMAP, OP_CLOSE,
	OP_DUP, OP_SEND, OP_IMM, OP_CREDIT, OP_POLL, OP_RW, OP_FORK, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"open", "hfi_info", "reserve", "query", "kick", "fsync",
	"bad_ioctl", "mmap", "munmap", "mprotect", "mremap", "close", "dup",
	"send", "imm", "credit", "poll", "read/write", "fork",
};

/* Relative weights (per mille of the draws). */
static const unsigned int op_weight[NR_OPS] = {
	[OP_OPEN] = 20, [OP_INFO] = 40, [OP_RESERVE] = 80, [OP_QUERY] = 50,
	[OP_KICK] = 90, [OP_SYNC] = 40, [OP_BAD_IOCTL] = 25, [OP_MMAP] = 110,
	[OP_MUNMAP] = 60, [OP_MPROTECT] = 25, [OP_MREMAP] = 15,
	[OP_CLOSE] = 55, [OP_DUP] = 20, [OP_SEND] = 150, [OP_IMM] = 70,
	[OP_CREDIT] = 90, [OP_POLL] = 25, [OP_RW] = 13, [OP_FORK] = 2,
};

/* ---- the boundary values every mutation draws from ---- */

static const uint64_t bvals[] = {
	0, 1, 2, 3, 8, 55, 2048, PAGE - 1, PAGE, PAGE + 1, 6144, 8192,
	65535, 65536, 65537, 2u << 20, (4u << 20) - 1, 4u << 20,
	(4u << 20) + 1, 8u << 20, 0x7fffffff, 1ull << 31, 0xfffffffeull,
	0xffffffffull, 1ull << 32, (1ull << 32) + 1, 1ull << 63, ~0ull,
	~0ull - 1, 0x5a5a5a5a5a5a5a5aull,
};

/* ---- shared state ---- */

struct fz_win {
	bool used;
	int refs;		/* fds and mappings in the table */
	bool poll;
	uint32_t key;
	struct percs_window_reserve ans;
};

struct fz_fd {
	bool used;
	int fd;
	int win;		/* -1: an HFI fd */
	int busy;		/* threads using it (close waits for 0) */
};

struct fz_map {
	bool used;
	uint8_t *addr;
	size_t len;
	int win;
	int region;
	int prot;
	int busy;
	bool excl;		/* being unmapped/reprotected/moved */
};

static struct fz {
	pthread_mutex_t lock;
	struct fz_win win[FZ_MAX_WINS];
	struct fz_fd fd[FZ_MAX_FDS];
	struct fz_map map[FZ_MAX_MAPS];
	uint32_t keys[3];
	uint32_t nr_hubs, total;
	uint64_t seed;
	unsigned long calls_per_thread;
	uint64_t stop_ms;
	atomic_ulong calls;
	atomic_ulong forks;
	atomic_ulong sends;	/* packets written and triggered */
	atomic_ulong op_count[NR_OPS];
	atomic_ulong res_count[NR_RES];
	pthread_mutex_t rec_lock;
	unsigned int nr_unexpected;
	char rec[FZ_MAX_RECORDS][240];
} fz;

struct fz_thread {
	unsigned int id;
	uint64_t rng;
	uint8_t *arena;		/* ARENA_RW zeroed bytes, then a guard page */
	uint8_t *ro;		/* a read-only page, then a guard page */
	uint8_t *hole;		/* an unmapped page */
	char *child_report;	/* shared with forked children */
	_Atomic(const char *) cur_op;
	atomic_ullong op_start_ms;
	atomic_bool done;
	unsigned long calls;
	pthread_t tid;
	bool in_child;
};

/* ---- the generator ---- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct fz_thread *t, uint64_t n)
{
	return n ? splitmix(&t->rng) % n : 0;
}

static bool chance(struct fz_thread *t, unsigned int pct)
{
	return rnd(t, 100) < pct;
}

static uint64_t pick_value(struct fz_thread *t)
{
	switch (rnd(t, 5)) {
	case 0:
	case 1:
		return bvals[rnd(t, ARRAY_SIZE(bvals))];
	case 2:
		return rnd(t, 1ull << 32);
	case 3:
		return rnd(t, 16);
	default:
		return 1ull << rnd(t, 64);
	}
}

/* ---- recording ---- */

static void fz_record(struct fz_thread *t, const char *fmt, ...)
{
	char line[240];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "[t%u #%lu] ", t->id, t->calls);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (t->in_child) {
		/* a forked child: the parent reads it back */
		if (!t->child_report[0])
			memcpy(t->child_report, line, sizeof(line));
		return;
	}
	pthread_mutex_lock(&fz.rec_lock);
	if (fz.nr_unexpected < FZ_MAX_RECORDS)
		memcpy(fz.rec[fz.nr_unexpected], line, sizeof(line));
	fz.nr_unexpected++;
	pthread_mutex_unlock(&fz.rec_lock);
}

/* Check @got against @allowed; Return: true if it was allowed. */
static bool fz_check(struct fz_thread *t, enum op op, long got,
		     unsigned int allowed, const char *fmt, ...)
{
	enum res r = res_of(got);
	char what[160], want[96];
	va_list ap;

	if (!t->in_child)
		atomic_fetch_add(&fz.res_count[r], 1);
	if (allowed & B(r))
		return true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mask_str(allowed, want, sizeof(want));
	fz_record(t, "%s: got %ld (%s), allowed %s: %s", op_name[op], got,
		  res_name[r], want, what);
	return false;
}

static long sys_ioctl(int fd, unsigned long cmd, unsigned long arg)
{
	long r = syscall(SYS_ioctl, fd, cmd, arg);

	return r < 0 ? -errno : r;
}

/* ---- the table (fz.lock held unless said otherwise) ---- */

static void win_unref(int w)
{
	if (--fz.win[w].refs == 0)
		fz.win[w].used = false;
}

static int win_add(const struct percs_window_reserve *ans, uint32_t key)
{
	int w;

	for (w = 0; w < FZ_MAX_WINS; w++) {
		if (fz.win[w].used)
			continue;
		fz.win[w].used = true;
		fz.win[w].refs = 0;
		fz.win[w].ans = *ans;
		fz.win[w].poll = ans->flags & PERCS_WINDOW_F_POLL;
		fz.win[w].key = key;
		return w;
	}
	return -1;
}

static int fd_add(int fd, int win)
{
	int i;

	for (i = 0; i < FZ_MAX_FDS; i++) {
		if (fz.fd[i].used)
			continue;
		fz.fd[i] = (struct fz_fd){ .used = true, .fd = fd, .win = win };
		if (win >= 0)
			fz.win[win].refs++;
		return i;
	}
	return -1;
}

static int map_add(uint8_t *addr, size_t len, int win, int region, int prot)
{
	int i;

	for (i = 0; i < FZ_MAX_MAPS; i++) {
		if (fz.map[i].used)
			continue;
		fz.map[i] = (struct fz_map){ .used = true, .addr = addr,
					     .len = len, .win = win,
					     .region = region, .prot = prot };
		fz.win[win].refs++;
		return i;
	}
	return -1;
}

static unsigned int count_fds_kind(bool window)
{
	unsigned int i, n = 0;

	for (i = 0; i < FZ_MAX_FDS; i++)
		if (fz.fd[i].used && (fz.fd[i].win >= 0) == window)
			n++;
	return n;
}

static unsigned int count_maps(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < FZ_MAX_MAPS; i++)
		n += fz.map[i].used;
	return n;
}

/* Kinds of fd a pick wants. */
enum fd_kind { FD_ANY, FD_HFI, FD_WIN };

/*
 * Pick a random fd of @kind (of window @win if >= 0), mark it busy.
 * Return: its slot, or -1.
 */
static int fd_pick(struct fz_thread *t, enum fd_kind kind, int win)
{
	int cand[FZ_MAX_FDS], n = 0, i;

	for (i = 0; i < FZ_MAX_FDS; i++) {
		const struct fz_fd *f = &fz.fd[i];

		if (!f->used || (kind == FD_HFI && f->win >= 0) ||
		    (kind == FD_WIN && f->win < 0) ||
		    (win >= 0 && f->win != win))
			continue;
		cand[n++] = i;
	}
	if (!n)
		return -1;
	i = cand[rnd(t, n)];
	fz.fd[i].busy++;
	return i;
}

/* Pick a mapping of @region (-1: any) with @prot bits, of @win if >= 0. */
static int map_pick(struct fz_thread *t, int region, int prot, int win,
		    bool excl)
{
	int cand[FZ_MAX_MAPS], n = 0, i;

	for (i = 0; i < FZ_MAX_MAPS; i++) {
		const struct fz_map *m = &fz.map[i];

		if (!m->used || m->excl || (excl && m->busy) ||
		    (region >= 0 && m->region != region) ||
		    (m->prot & prot) != prot || (win >= 0 && m->win != win))
			continue;
		cand[n++] = i;
	}
	if (!n)
		return -1;
	i = cand[rnd(t, n)];
	if (excl)
		fz.map[i].excl = true;
	else
		fz.map[i].busy++;
	return i;
}

static void lock(void)
{
	pthread_mutex_lock(&fz.lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&fz.lock);
}

static void fd_put(int i)
{
	lock();
	fz.fd[i].busy--;
	unlock();
}

static void map_put(int i)
{
	lock();
	if (fz.map[i].excl)
		fz.map[i].excl = false;
	else
		fz.map[i].busy--;
	unlock();
}

/* ---- HFI ioctl arguments: build, mutate, place, predict ---- */

struct field {
	const char *name;
	unsigned short off;
	unsigned char width;
};

#define FIELD(type, f) { #f, offsetof(type, f), sizeof(((type *)0)->f) }

static const struct field info_fields[] = {
	FIELD(struct percs_hfi_info, size),
	FIELD(struct percs_hfi_info, flags),
	FIELD(struct percs_hfi_info, hub),
	FIELD(struct percs_hfi_info, windows_in_use),
	FIELD(struct percs_hfi_info, flit_size),
	FIELD(struct percs_hfi_info, reserved),
};

static const struct field reserve_fields[] = {
	FIELD(struct percs_window_reserve, size),
	FIELD(struct percs_window_reserve, flags),
	FIELD(struct percs_window_reserve, send_fifo_size),
	FIELD(struct percs_window_reserve, recv_fifo_size),
	FIELD(struct percs_window_reserve, job_fd),
	FIELD(struct percs_window_reserve, window),
	FIELD(struct percs_window_reserve, fd),
	FIELD(struct percs_window_reserve, imm_slots),
	FIELD(struct percs_window_reserve, cq_entries),
	FIELD(struct percs_window_reserve, job_key),
	FIELD(struct percs_window_reserve, addr.hub),
	FIELD(struct percs_window_reserve, addr.window),
	FIELD(struct percs_window_reserve, regions[0].offset),
	FIELD(struct percs_window_reserve, regions[5].length),
	FIELD(struct percs_window_reserve, regions[7].flags),
};

static const struct field query_fields[] = {
	FIELD(struct percs_window_query, size),
	FIELD(struct percs_window_query, flags),
	FIELD(struct percs_window_query, window),
	FIELD(struct percs_window_query, state),
	FIELD(struct percs_window_query, job_key),
	FIELD(struct percs_window_query, send_blocked),
};

struct hfi_cmd {
	unsigned long cmd;
	size_t size;
	size_t min;	/* the first ABI version's size */
	const struct field *fields;
	unsigned int nr_fields;
};

static const struct hfi_cmd hfi_cmds[] = {
	{ PERCS_IOC_HFI_INFO, sizeof(struct percs_hfi_info),
	  sizeof(struct percs_hfi_info), info_fields,
	  ARRAY_SIZE(info_fields) },
	{ PERCS_IOC_WINDOW_RESERVE, sizeof(struct percs_window_reserve),
	  sizeof(struct percs_window_reserve), reserve_fields,
	  ARRAY_SIZE(reserve_fields) },
	{ PERCS_IOC_WINDOW_QUERY, sizeof(struct percs_window_query),
	  PERCS_WINDOW_QUERY_SIZE_VER0, query_fields,
	  ARRAY_SIZE(query_fields) },
};

union fz_struct {
	struct percs_hfi_info info;
	struct percs_window_reserve reserve;
	struct percs_window_query query;
	uint8_t b[256];
};

static uint64_t field_get(const void *s, const struct field *f)
{
	const uint8_t *p = (const uint8_t *)s + f->off;

	switch (f->width) {
	case 1: return *p;
	case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
	case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
	default: { uint64_t x; memcpy(&x, p, 8); return x; }
	}
}

static void field_set(void *s, const struct field *f, uint64_t v)
{
	uint8_t *p = (uint8_t *)s + f->off;

	switch (f->width) {
	case 1: *p = v; break;
	case 2: { uint16_t x = v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

static bool fifo_size_ok(uint32_t v)
{
	return v >= PERCS_FIFO_MIN_SIZE && v <= PERCS_FIFO_MAX_SIZE &&
	       !(v & (v - 1));
}

static uint32_t pick_fifo_size(struct fz_thread *t)
{
	/* mostly small; 4 MiB now and then */
	if (chance(t, 1))
		return PERCS_FIFO_MAX_SIZE;
	return PERCS_FIFO_MIN_SIZE << rnd(t, 5);
}

/* @fd is the fd of one of the fuzzer's jobs. */
static bool job_fd_known(int fd)
{
	for (unsigned int i = 0; i < 3; i++)
		if (fd >= 0 && fd == pt_job_fd(fz.keys[i]))
			return true;
	return false;
}

/*
 * The allowed answers of HFI ioctl @c with struct image @s (the kernel's
 * size), size field @usize, a non-zero tail byte at @tail_nz (or -1),
 * @readable bytes readable from the pointer and the answer @writable.
 * Order as in percs_hfi_ioctl(): size field, minimum size, the tail
 * (copy_struct_from_user checks it before copying), the struct, the
 * command's own checks, then the answer's copy back.
 */
static unsigned int hfi_model(unsigned int c, const union fz_struct *s,
			      uint32_t usize, long tail_nz, size_t readable,
			      bool writable)
{
	const size_t ksize = hfi_cmds[c].size;
	unsigned int ok;

	if (readable < 4)
		return B(A_EFAULT);
	if (usize < hfi_cmds[c].min)
		return B(A_EINVAL);
	if (usize > ksize) {
		if (tail_nz >= (long)ksize && tail_nz < (long)usize &&
		    (size_t)tail_nz < readable)
			return B(A_E2BIG);
		if (usize > readable)
			return B(A_EFAULT);
	}
	/* an older version's size: only that much is read and answered */
	if ((usize < ksize ? usize : ksize) > readable)
		return B(A_EFAULT);

	switch (hfi_cmds[c].cmd) {
	case PERCS_IOC_HFI_INFO:
		if (s->info.flags || s->info.reserved)
			return B(A_EINVAL);
		ok = B(A_OK);
		break;
	case PERCS_IOC_WINDOW_QUERY:
		if (s->query.flags || s->query.window >= fz.total)
			return B(A_EINVAL);
		ok = B(A_OK) | B(A_ENOENT);
		break;
	default: {
		const struct percs_window_reserve *r = &s->reserve;

		if (r->flags & ~PERCS_WINDOW_F_ALL ||
		    (r->flags & PERCS_WINDOW_F_ALL) == PERCS_WINDOW_F_ALL ||
		    r->job_key || r->fd ||
		    r->imm_slots || r->cq_entries)
			return B(A_EINVAL);
		if (!fifo_size_ok(r->send_fifo_size) ||
		    !fifo_size_ok(r->recv_fifo_size))
			return B(A_EINVAL);
		if (r->window != PERCS_WINDOW_ANY && r->window >= fz.total)
			return B(A_EINVAL);
		/* not a job: not open, or (other threads open fds) a file */
		if (!job_fd_known(r->job_fd))
			return B(A_EBADF) | B(A_EINVAL) | B(A_ENOMEM) |
			       (writable ? 0 : B(A_EFAULT));
		/* the index is picked before the answer is written */
		ok = B(A_OK) | B(A_ENOSPC) | B(A_ENOMEM) |
		     (r->window != PERCS_WINDOW_ANY ? B(A_EBUSY) : 0);
		if (!writable)
			return (ok & ~B(A_OK) & ~B(A_ENOMEM)) | B(A_EFAULT);
		return ok;
	}
	}
	if (!writable)
		return B(A_EFAULT);
	return ok;
}

struct hfi_arg {
	unsigned int c;		/* index in hfi_cmds */
	union fz_struct s;	/* the struct as placed (kernel size) */
	uint32_t usize;
	long tail_nz;
	uint8_t *ptr;
	size_t readable;
	bool writable;
	const char *where;
	char desc[120];
	size_t dirty;		/* arena bytes to clear afterwards */
	bool straddle;		/* placed against the guard page */
};

static void hfi_arg_build(struct fz_thread *t, unsigned int c,
			  struct hfi_arg *a)
{
	const struct hfi_cmd *cmd = &hfi_cmds[c];
	unsigned int m, nmut = chance(t, 45) ? 1 + rnd(t, 3) : 0;
	size_t n = 0, align, off;

	memset(a, 0, sizeof(*a));
	a->c = c;
	a->tail_nz = -1;
	switch (cmd->cmd) {
	case PERCS_IOC_WINDOW_RESERVE:
		a->s.reserve.flags = chance(t, 30) ? PERCS_WINDOW_F_POLL : 0;
		a->s.reserve.send_fifo_size = pick_fifo_size(t);
		a->s.reserve.recv_fifo_size = pick_fifo_size(t);
		a->s.reserve.job_fd = pt_job_fd(fz.keys[rnd(t, 3)]);
		a->s.reserve.window = chance(t, 85) ? PERCS_WINDOW_ANY :
				      rnd(t, fz.total);
		break;
	case PERCS_IOC_WINDOW_QUERY:
		a->s.query.window = rnd(t, fz.total);
		break;
	}
	a->usize = cmd->size;
	for (m = 0; m < nmut; m++) {
		switch (rnd(t, 4)) {
		case 0:
		case 1: {
			const struct field *f = &cmd->fields[1 +
					rnd(t, cmd->nr_fields - 1)];

			field_set(&a->s, f, pick_value(t));
			n += snprintf(a->desc + n, sizeof(a->desc) - n,
				      "%s=%#llx ", f->name,
				      (unsigned long long)field_get(&a->s, f));
			break;
		}
		case 2: {
			static const uint32_t sizes[] = {
				0, 1, 3, 4, 8, 56, 72, 176, 4096, 65536,
				ARENA_RW, ARENA_RW + 1, 1u << 31, ~0u,
			};

			a->usize = chance(t, 50) ?
				   sizes[rnd(t, ARRAY_SIZE(sizes))] :
				   cmd->size + rnd(t, 300) - 150;
			break;
		}
		default:
			if (a->usize <= cmd->size)
				a->usize = cmd->size + 1 + rnd(t, 300);
			a->tail_nz = cmd->size + rnd(t, a->usize - cmd->size);
			break;
		}
	}
	a->s.info.size = a->usize;	/* every struct starts with it */
	n += snprintf(a->desc + n, sizeof(a->desc) - n, "size=%u",
		      a->usize);
	if (a->tail_nz >= 0)
		snprintf(a->desc + n, sizeof(a->desc) - n, " tail[%ld]!=0",
			 a->tail_nz);

	/* where the struct goes */
	switch (rnd(t, 40)) {
	case 0:
		a->ptr = NULL;
		a->where = "NULL";
		return;
	case 1:
		a->ptr = t->hole;
		a->where = "unmapped";
		return;
	case 2:
		a->ptr = t->arena + ARENA_RW;
		a->where = "guard page";
		return;
	case 3:
	case 4: {
		/* read-only: the kernel reads it but cannot answer */
		if (mprotect(t->ro, PAGE, PROT_READ | PROT_WRITE))
			break;
		memset(t->ro, 0, PAGE);
		memcpy(t->ro, &a->s, cmd->size);
		if (a->tail_nz >= 0 && (size_t)a->tail_nz < PAGE)
			t->ro[a->tail_nz] = 0x5a;
		mprotect(t->ro, PAGE, PROT_READ);
		a->ptr = t->ro;
		a->readable = PAGE;
		a->writable = false;
		a->where = "read-only";
		return;
	}
	case 5:
		/* running into the guard page */
		off = ARENA_RW - 4 - 4 * rnd(t, cmd->size / 4);
		a->ptr = t->arena + off;
		a->readable = ARENA_RW - off;
		a->writable = true;
		a->straddle = true;
		memcpy(a->ptr, &a->s, a->readable < cmd->size ?
		       a->readable : cmd->size);
		a->where = "straddling the guard";
		return;
	}
	align = chance(t, 10) ? rnd(t, 8) : 0;
	a->ptr = t->arena + align;
	a->readable = ARENA_RW - align;
	a->writable = true;
	a->where = align ? "unaligned" : "arena";
	memcpy(a->ptr, &a->s, cmd->size);
	a->dirty = align + cmd->size;
	if (a->tail_nz >= 0 && (size_t)a->tail_nz < a->readable) {
		a->ptr[a->tail_nz] = 0x5a;
		if (align + a->tail_nz + 1 > a->dirty)
			a->dirty = align + a->tail_nz + 1;
	}
}

static void hfi_arg_clean(struct fz_thread *t, struct hfi_arg *a)
{
	if (a->straddle)
		memset(a->ptr, 0, a->readable);
	else if (a->dirty)
		memset(t->arena, 0, a->dirty);
}

static void op_hfi_ioctl(struct fz_thread *t, unsigned int c)
{
	static const enum op ops[] = { OP_INFO, OP_RESERVE, OP_QUERY };
	struct hfi_arg a;
	unsigned int allowed;
	int slot, hfd;
	long got;

	lock();
	slot = fd_pick(t, FD_HFI, -1);
	hfd = slot >= 0 ? fz.fd[slot].fd : -1;
	unlock();
	if (slot < 0)
		return;
	hfi_arg_build(t, c, &a);
	allowed = hfi_model(c, &a.s, a.usize, a.tail_nz, a.readable,
			    a.writable);
	got = sys_ioctl(hfd, hfi_cmds[c].cmd, (unsigned long)a.ptr);
	fz_check(t, ops[c], got, allowed, "%s %s", a.where, a.desc);

	if (got >= 0 && hfi_cmds[c].cmd == PERCS_IOC_WINDOW_RESERVE) {
		struct percs_window_reserve ans;
		int w = -1;

		memcpy(&ans, a.ptr, sizeof(ans));
		if (ans.fd != got || ans.imm_slots != PERCS_IMM_SLOTS ||
		    ans.cq_entries != PERCS_CQ_ENTRIES ||
		    ans.regions[PERCS_REGION_SEND_FIFO].length !=
		    a.s.reserve.send_fifo_size)
			fz_record(t, "reserve: bad answer fd %u/%ld imm %u cq %u",
				  ans.fd, got, ans.imm_slots, ans.cq_entries);
		ans.flags = a.s.reserve.flags;
		lock();
		if (count_fds_kind(true) < FZ_MAX_FDS - FZ_MAX_HFI_FDS)
			w = win_add(&ans, ans.job_key);
		if (w >= 0 && fd_add(got, w) < 0)
			fz.win[w].used = false, w = -1;
		unlock();
		if (w < 0)
			close(got);
	} else if (got >= 0 && hfi_cmds[c].cmd == PERCS_IOC_WINDOW_QUERY &&
		   a.writable) {
		struct percs_window_query q = { 0 };
		size_t n = a.usize < sizeof(q) ? a.usize : sizeof(q);

		memcpy(&q, a.ptr, n < a.readable ? n : a.readable);
		if (q.state != PERCS_WSTATE_ACTIVE || q.size != a.usize)
			fz_record(t, "query: state %u size %u", q.state,
				  q.size);
	}
	hfi_arg_clean(t, &a);
	fd_put(slot);
}

/* ---- window fds ---- */

static unsigned int kick_allowed(bool poll, unsigned long flags)
{
	if (flags & ~(unsigned long)PERCS_KICK_F_ALL)
		return B(A_EINVAL);
	/* kick mode: packets moved, or EINVAL after a bad index */
	return poll ? B(A_OK) : B(A_OK) | B(A_EINVAL);
}

static unsigned long pick_kick_flags(struct fz_thread *t)
{
	if (chance(t, 80))
		return rnd(t, PERCS_KICK_F_ALL + 1);
	return chance(t, 50) ? 1ul << rnd(t, 64) : pick_value(t);
}

/* Ring the doorbell of window @w through fd @fd in a random way. */
static void ring(struct fz_thread *t, enum op op, int fd, bool poll,
		 unsigned long flags)
{
	long got;

	switch (rnd(t, 4)) {
	case 0:
		got = fdatasync(fd) ? -errno : 0;
		fz_check(t, op, got, poll ? B(A_OK) : B(A_OK) | B(A_EINVAL),
			 "fdatasync");
		break;
	case 1:
		got = fsync(fd) ? -errno : 0;
		fz_check(t, op, got, poll ? B(A_OK) : B(A_OK) | B(A_EINVAL),
			 "fsync");
		break;
	default:
		got = sys_ioctl(fd, PERCS_IOC_KICK, flags);
		fz_check(t, op, got, kick_allowed(poll, flags), "KICK %#lx",
			 flags);
		break;
	}
}

static void op_kick(struct fz_thread *t, bool sync)
{
	unsigned long flags = pick_kick_flags(t);
	int slot, fd;
	bool poll;
	long got;

	lock();
	slot = fd_pick(t, FD_WIN, -1);
	if (slot >= 0) {
		fd = fz.fd[slot].fd;
		poll = fz.win[fz.fd[slot].win].poll;
	}
	unlock();
	if (slot < 0)
		return;
	if (sync) {
		bool data = chance(t, 50);

		got = (data ? fdatasync(fd) : fsync(fd)) ? -errno : 0;
		fz_check(t, OP_SYNC, got,
			 poll ? B(A_OK) : B(A_OK) | B(A_EINVAL), "%s",
			 data ? "fdatasync" : "fsync");
	} else {
		got = sys_ioctl(fd, PERCS_IOC_KICK, flags);
		fz_check(t, OP_KICK, got, kick_allowed(poll, flags),
			 "KICK %#lx %s", flags, poll ? "poll" : "kick");
	}
	fd_put(slot);
}

/* Commands an fd does not know: ENOTTY. */
static void op_bad_ioctl(struct fz_thread *t)
{
	unsigned long cmd;
	int slot, fd;
	bool win;
	long got;

	lock();
	slot = fd_pick(t, FD_ANY, -1);
	if (slot >= 0) {
		fd = fz.fd[slot].fd;
		win = fz.fd[slot].win >= 0;
	}
	unlock();
	if (slot < 0)
		return;
	switch (rnd(t, 4)) {
	case 0:
		/* the other kind of fd's commands */
		cmd = win ? hfi_cmds[rnd(t, 3)].cmd : PERCS_IOC_KICK;
		break;
	case 1:
		/* a known number with a direction or size */
		cmd = _IOC(1 + rnd(t, 3), PERCS_IOCTL_TYPE,
			   win ? 0x10 : rnd(t, 3), 1 + rnd(t, 300));
		break;
	case 2:
		/* numbers of neither kind of fd (0x10.. are the window's) */
		cmd = _IOC(rnd(t, 4), PERCS_IOCTL_TYPE, 3 + rnd(t, 253),
			   rnd(t, 512));
		if (_IOC_NR(cmd) >= _IOC_NR(PERCS_IOC_KICK) &&
		    _IOC_NR(cmd) <= _IOC_NR(PERCS_IOC_MR_DEREGISTER))
			cmd += 3 << _IOC_NRSHIFT;
		break;
	default:
		/* another driver's type (not ones the VFS answers) */
		cmd = _IOC(rnd(t, 4), 0xB0 + rnd(t, 8), rnd(t, 256),
			   rnd(t, 64));
		break;
	}
	memset(t->arena, 0, 512);
	got = sys_ioctl(fd, cmd, (unsigned long)t->arena);
	fz_check(t, OP_BAD_IOCTL, got, B(A_ENOTTY), "cmd %#lx on %s fd", cmd,
		 win ? "window" : "HFI");
	memset(t->arena, 0, 512);
	fd_put(slot);
}

static void op_open(struct fz_thread *t)
{
	unsigned int n = rnd(t, fz.nr_hubs * 2);
	char path[64];
	int fd, ok;

	lock();
	ok = count_fds_kind(false) < FZ_MAX_HFI_FDS;
	unlock();
	if (!ok)
		return;
	snprintf(path, sizeof(path), PT_DEV_DIR "/percs-hfi%u", n);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (!fz_check(t, OP_OPEN, fd < 0 ? -errno : fd, B(A_OK), "%s", path))
		return;
	lock();
	ok = fd_add(fd, -1) >= 0;
	unlock();
	if (!ok)
		close(fd);
}

static void op_close(struct fz_thread *t)
{
	int cand[FZ_MAX_FDS], n = 0, i, fd = -1;
	bool hfi_only = chance(t, 15);

	lock();
	for (i = 0; i < FZ_MAX_FDS; i++)
		if (fz.fd[i].used && !fz.fd[i].busy &&
		    (!hfi_only || fz.fd[i].win < 0))
			cand[n++] = i;
	/* keep one HFI fd open */
	if (n) {
		i = cand[rnd(t, n)];
		if (fz.fd[i].win >= 0 || count_fds_kind(false) > 1) {
			fd = fz.fd[i].fd;
			fz.fd[i].used = false;
			if (fz.fd[i].win >= 0)
				win_unref(fz.fd[i].win);
		}
	}
	unlock();
	if (fd >= 0)
		fz_check(t, OP_CLOSE, close(fd) ? -errno : 0, B(A_OK),
			 "close %d", fd);
}

static void op_dup(struct fz_thread *t)
{
	int slot, fd = -1, w = -1, nfd;
	bool ok;

	lock();
	if (count_fds_kind(true) < FZ_MAX_FDS - FZ_MAX_HFI_FDS) {
		slot = fd_pick(t, FD_WIN, -1);
		if (slot >= 0) {
			fd = fz.fd[slot].fd;
			w = fz.fd[slot].win;
		}
	} else {
		slot = -1;
	}
	unlock();
	if (slot < 0)
		return;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (fz_check(t, OP_DUP, nfd < 0 ? -errno : nfd, B(A_OK), "dup %d",
		     fd)) {
		lock();
		ok = fd_add(nfd, w) >= 0;
		fz.fd[slot].busy--;
		unlock();
		if (!ok)
			close(nfd);
		return;
	}
	fd_put(slot);
}

static void op_poll(struct fz_thread *t)
{
	int slots[3], n = 0, i;
	struct pollfd p[3];
	long got;

	lock();
	for (i = 0; i < 1 + (int)rnd(t, 3); i++) {
		slots[n] = fd_pick(t, FD_WIN, -1);
		if (slots[n] < 0)
			break;
		p[n].fd = fz.fd[slots[n]].fd;
		p[n].events = POLLIN | POLLOUT | POLLERR;
		p[n].revents = 0;
		n++;
	}
	unlock();
	if (!n)
		return;
	got = poll(p, n, 0);
	fz_check(t, OP_POLL, got < 0 ? -errno : 0, B(A_OK), "poll %d fds", n);
	for (i = 0; i < n; i++) {
		if (p[i].revents & POLLNVAL)
			fz_record(t, "poll: POLLNVAL on fd %d", p[i].fd);
		fd_put(slots[i]);
	}
}

/* read(2)/write(2) on a window fd: no such operation (EINVAL). */
static void op_rw(struct fz_thread *t)
{
	char buf[64] = { 0 };
	int slot, fd;
	long got;

	lock();
	slot = fd_pick(t, FD_WIN, -1);
	fd = slot >= 0 ? fz.fd[slot].fd : -1;
	unlock();
	if (slot < 0)
		return;
	if (chance(t, 50)) {
		got = read(fd, buf, sizeof(buf));
		fz_check(t, OP_RW, got < 0 ? -errno : got, B(A_EINVAL), "read");
	} else {
		got = write(fd, buf, sizeof(buf));
		fz_check(t, OP_RW, got < 0 ? -errno : got, B(A_EINVAL),
			 "write");
	}
	fd_put(slot);
}

/* ---- mmap and friends ---- */

static uint64_t region_key(unsigned int r)
{
	return (uint64_t)(r + 1) << 28;
}

static unsigned int mmap_allowed(const struct percs_window_reserve *req,
				 uint64_t off, uint64_t len, int prot,
				 int flags)
{
	uint64_t alen = (len + PAGE - 1) & ~(PAGE - 1);
	uint64_t pgoff = off >> 12;
	unsigned int r;

	if (!len || (off & (PAGE - 1)))
		return B(A_EINVAL);
	if (!alen)
		return B(A_ENOMEM);
	if (alen > TASK_SIZE_47)
		return B(A_ENOMEM);
	if (pgoff > (~0ull - alen) >> 12)
		return B(A_EOVERFLOW);
	/* private writable: charged first, refused when too big */
	if ((flags & MAP_PRIVATE) && (prot & PROT_WRITE) && alen >= (1u << 30))
		return B(A_EINVAL) | B(A_ENOMEM);
	for (r = 0; r < PERCS_REGION_MAX; r++)
		if ((req->regions[r].flags & PERCS_REGION_F_VALID) &&
		    req->regions[r].offset == off)
			break;
	if (r == PERCS_REGION_MAX || alen != req->regions[r].length ||
	    !(flags & MAP_SHARED))
		return B(A_EINVAL);
	if ((prot & PROT_WRITE) &&
	    !(req->regions[r].flags & PERCS_REGION_F_WRITABLE))
		return B(A_EPERM);
	return B(A_OK);
}

static void op_mmap(struct fz_thread *t)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
	};
	struct percs_window_reserve ans;
	unsigned int r = rnd(t, PERCS_REGION_MAX), allowed;
	uint64_t off, len, rlen;
	int slot, fd, w, prot, flags, ok;
	bool hfi = chance(t, 3);
	uint8_t *m;
	long got;

	lock();
	ok = count_maps() < FZ_MAX_MAPS;
	slot = ok ? fd_pick(t, hfi ? FD_HFI : FD_WIN, -1) : -1;
	if (slot >= 0) {
		fd = fz.fd[slot].fd;
		w = fz.fd[slot].win;
		if (w >= 0)
			ans = fz.win[w].ans;
	}
	unlock();
	if (slot < 0)
		return;
	if (r > PERCS_REGION_CQ && chance(t, 70))
		r = rnd(t, PERCS_REGION_CQ + 1);	/* mostly real ones */
	rlen = hfi ? PAGE : ans.regions[r].length;
	off = chance(t, 85) ? region_key(r) :
	      chance(t, 50) ? region_key(r) + PAGE * (rnd(t, 5) - 2) :
	      pick_value(t);
	len = chance(t, 85) ? (rlen ? rlen : PAGE) - rnd(t, 2) * rnd(t, PAGE)
			    : chance(t, 50) ? rlen + PAGE * (rnd(t, 5) - 2)
			    : pick_value(t);
	prot = chance(t, 70) ? PROT_READ | (chance(t, 50) ? PROT_WRITE : 0)
			     : prots[rnd(t, ARRAY_SIZE(prots))];
	flags = chance(t, 92) ? MAP_SHARED : MAP_PRIVATE;
	if (chance(t, 10))
		flags |= MAP_POPULATE;
	if (hfi)
		allowed = !len || (off & (PAGE - 1)) ? B(A_EINVAL) :
			  B(A_ENODEV) | B(A_ENOMEM) | B(A_EOVERFLOW);
	else
		allowed = mmap_allowed(&ans, off, len, prot, flags);
	m = mmap(NULL, len, prot, flags, fd, (off_t)off);
	got = m == MAP_FAILED ? -errno : 0;
	if (fz_check(t, OP_MMAP, got, allowed,
		     "%s fd off %#llx len %#llx prot %d flags %#x (region %u)",
		     hfi ? "HFI" : "window", (unsigned long long)off,
		     (unsigned long long)len, prot, flags, r) && !got) {
		size_t alen = (len + PAGE - 1) & ~(PAGE - 1);
		unsigned int rr;

		for (rr = 0; rr <= PERCS_REGION_CQ; rr++)
			if (ans.regions[rr].offset == off)
				break;
		lock();
		ok = map_add(m, alen, w, rr, prot) >= 0;
		fz.fd[slot].busy--;
		unlock();
		if (!ok)
			munmap(m, alen);
		return;
	}
	if (!got)
		munmap(m, len);		/* mapped against the model */
	fd_put(slot);
}

static void op_munmap(struct fz_thread *t)
{
	int i, w;
	uint8_t *addr;
	size_t len;
	long got;

	lock();
	i = map_pick(t, -1, 0, -1, true);
	if (i >= 0) {
		addr = fz.map[i].addr;
		len = fz.map[i].len;
	}
	unlock();
	if (i < 0)
		return;
	if (chance(t, 70)) {
		/* the whole mapping, maybe with an unaligned length */
		size_t l = len - (chance(t, 30) ? rnd(t, PAGE) : 0);

		lock();
		fz.map[i].used = false;
		w = fz.map[i].win;
		win_unref(w);
		unlock();
		got = munmap(addr, l) ? -errno : 0;
		fz_check(t, OP_MUNMAP, got, B(A_OK), "whole %p len %#zx",
			 addr, l);
		return;
	}
	/* a part: refused, the mapping stays whole */
	if (len > PAGE) {
		size_t start = PAGE * rnd(t, len / PAGE);
		size_t l = PAGE * (1 + rnd(t, (len - start) / PAGE));

		if (start == 0 && l == len)
			l -= PAGE;
		got = munmap(addr + start, l) ? -errno : 0;
		fz_check(t, OP_MUNMAP, got, B(A_EINVAL),
			 "part +%#zx len %#zx of %#zx", start, l, len);
	} else {
		got = munmap(addr + 1 + rnd(t, PAGE - 1), PAGE) ? -errno : 0;
		fz_check(t, OP_MUNMAP, got, B(A_EINVAL), "unaligned");
	}
	map_put(i);
}

static bool region_writable(int r)
{
	return r == PERCS_REGION_SEND_FIFO || r == PERCS_REGION_DOORBELL ||
	       r == PERCS_REGION_IMM;
}

static void op_mprotect(struct fz_thread *t)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
	};
	int i, region, cur, prot = prots[rnd(t, ARRAY_SIZE(prots))];
	uint8_t *addr;
	size_t len;
	long got;

	lock();
	i = map_pick(t, -1, 0, -1, true);
	if (i >= 0) {
		addr = fz.map[i].addr;
		len = fz.map[i].len;
		region = fz.map[i].region;
		cur = fz.map[i].prot;
	}
	unlock();
	if (i < 0)
		return;
	if (len > PAGE && chance(t, 30)) {
		/*
		 * Part of a mapping: refused by the split, except that an
		 * unchanged protection needs no split and write access to a
		 * read-only region is refused before it is tried.
		 */
		unsigned int allowed = (prot & PROT_WRITE) &&
				       !region_writable(region) ? B(A_EACCES) :
				       prot == cur ? B(A_OK) : B(A_EINVAL);

		got = mprotect(addr + PAGE, PAGE, prot) ? -errno : 0;
		fz_check(t, OP_MPROTECT, got, allowed, "part, prot %d -> %d",
			 cur, prot);
	} else {
		unsigned int allowed = (prot & PROT_WRITE) &&
				       !region_writable(region) ?
				       B(A_EACCES) : B(A_OK);

		got = mprotect(addr, len, prot) ? -errno : 0;
		if (fz_check(t, OP_MPROTECT, got, allowed,
			     "region %d prot %d", region, prot) && !got) {
			lock();
			fz.map[i].prot = prot;
			unlock();
		}
	}
	map_put(i);
}

static void op_mremap(struct fz_thread *t)
{
	uint8_t *addr, *hole, *q;
	size_t len;
	long got;
	int i;

	lock();
	i = map_pick(t, -1, 0, -1, true);
	if (i >= 0) {
		addr = fz.map[i].addr;
		len = fz.map[i].len;
	}
	unlock();
	if (i < 0)
		return;
	switch (rnd(t, 3)) {
	case 0:	/* grow: VM_DONTEXPAND */
		q = mremap(addr, len, len + PAGE * (1 + rnd(t, 4)),
			   chance(t, 50) ? MREMAP_MAYMOVE : 0);
		got = q == MAP_FAILED ? -errno : 0;
		fz_check(t, OP_MREMAP, got, B(A_EFAULT), "grow");
		break;
	case 1:	/* shrink: a split */
		if (len > PAGE) {
			q = mremap(addr, len, len - PAGE, 0);
			got = q == MAP_FAILED ? -errno : 0;
			fz_check(t, OP_MREMAP, got, B(A_EINVAL), "shrink");
		}
		break;
	default: /* move the whole mapping */
		hole = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (hole == MAP_FAILED)
			break;
		q = mremap(addr, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
		got = q == MAP_FAILED ? -errno : 0;
		if (fz_check(t, OP_MREMAP, got, B(A_OK), "move") && !got) {
			lock();
			fz.map[i].addr = q;
			unlock();
		} else {
			munmap(hole, len);
		}
		break;
	}
	map_put(i);
}

/* ---- packets: writes into mapped FIFOs, slots and doorbells ---- */

/* What one write-and-ring needs of a window; slots are -1 if absent. */
struct bundle {
	int main, db, st, fd;
	int win;
	bool poll;
	uint32_t key;
	uint8_t *main_addr;
	size_t main_len;
	volatile struct percs_doorbell *dbp;
	const volatile struct percs_status *stp;
	int fdnum;
	uint32_t units;
};

static bool bundle_get(struct fz_thread *t, int region, struct bundle *b)
{
	memset(b, 0, sizeof(*b));
	b->main = b->db = b->st = b->fd = -1;
	lock();
	if (region >= 0) {
		b->main = map_pick(t, region, PROT_WRITE, -1, false);
		if (b->main < 0)
			goto out;
		b->win = fz.map[b->main].win;
		b->db = map_pick(t, PERCS_REGION_DOORBELL, PROT_WRITE, b->win,
				 false);
		if (b->db < 0) {
			fz.map[b->main].busy--;
			b->main = -1;
			goto out;
		}
	} else {
		b->db = map_pick(t, PERCS_REGION_DOORBELL, PROT_WRITE, -1,
				 false);
		if (b->db < 0)
			goto out;
		b->win = fz.map[b->db].win;
	}
	b->st = map_pick(t, PERCS_REGION_STATUS, PROT_READ, b->win, false);
	b->fd = fd_pick(t, FD_WIN, b->win);
	b->poll = fz.win[b->win].poll;
	b->key = fz.win[b->win].key;
	if (b->main >= 0) {
		b->main_addr = fz.map[b->main].addr;
		b->main_len = fz.map[b->main].len;
	}
	b->dbp = (volatile struct percs_doorbell *)fz.map[b->db].addr;
	b->stp = b->st >= 0 ?
		 (const volatile struct percs_status *)fz.map[b->st].addr :
		 NULL;
	b->fdnum = b->fd >= 0 ? fz.fd[b->fd].fd : -1;
	b->units = fz.win[b->win].ans.regions[PERCS_REGION_SEND_FIFO].length /
		   PERCS_FLIT_SIZE;
out:
	unlock();
	return b->db >= 0;
}

static void bundle_put(struct bundle *b)
{
	lock();
	if (b->main >= 0)
		fz.map[b->main].busy--;
	if (b->db >= 0)
		fz.map[b->db].busy--;
	if (b->st >= 0)
		fz.map[b->st].busy--;
	if (b->fd >= 0)
		fz.fd[b->fd].busy--;
	unlock();
}

/*
 * A destination: mostly one of the fuzzer's windows of the sender's job
 * key (@key), sometimes of any key, else anything.
 */
static struct percs_addr pick_dst(struct fz_thread *t, uint32_t key)
{
	struct percs_addr a = { 0 };
	int cand[FZ_MAX_WINS], n = 0, i;
	bool same = chance(t, 80);

	if (chance(t, 90)) {
		lock();
		for (i = 0; i < FZ_MAX_WINS; i++)
			if (fz.win[i].used && (!same || fz.win[i].key == key))
				cand[n++] = i;
		if (n)
			a = fz.win[cand[rnd(t, n)]].ans.addr;
		unlock();
		if (n)
			return a;
	}
	a.hub = chance(t, 80) ? rnd(t, fz.nr_hubs) : pick_value(t);
	a.hfi = chance(t, 80) ? rnd(t, 2) : rnd(t, 256);
	a.reserved = chance(t, 95) ? 0 : 1 + rnd(t, 255);
	a.window = chance(t, 80) ? rnd(t, fz.total) : rnd(t, 65536);
	return a;
}

static void pick_hdr(struct fz_thread *t, struct percs_pkt_hdr *h, bool imm,
		     uint32_t key)
{
	memset(h, 0, sizeof(*h));
	h->kind = chance(t, 85) ? (imm ? PERCS_PKT_IMM : PERCS_PKT_FIFO) :
		  rnd(t, 10);
	h->route = chance(t, 90) ? PERCS_ROUTE_DIRECT : rnd(t, 6);
	h->flags = chance(t, 90) ? (chance(t, 30) ? PERCS_PKT_F_NOTIFY : 0) :
		   rnd(t, 65536);
	if (imm)
		h->length = chance(t, 90) ? rnd(t, PERCS_IMM_PAYLOAD + 1) :
			    rnd(t, 65536);
	else
		h->length = chance(t, 90) ? rnd(t, PERCS_MAX_PAYLOAD + 1) :
			    chance(t, 50) ? PERCS_MAX_PAYLOAD + rnd(t, 64) :
			    rnd(t, 65536);
	h->route_arg = chance(t, 95) ? 0 : rnd(t, 65536);
	h->dst = pick_dst(t, key);
	h->tag = rnd(t, 1ull << 32);
	if (chance(t, 5)) {	/* a forged source and key: overwritten */
		h->src.hub = rnd(t, 1ull << 32);
		h->job_key = rnd(t, 1ull << 32);
	}
}

static void op_send(struct fz_thread *t)
{
	struct percs_pkt_hdr h;
	struct bundle b;
	uint64_t pos, tail;
	unsigned int units;
	uint8_t *p;
	size_t room;

	if (!bundle_get(t, PERCS_REGION_SEND_FIFO, &b))
		return;
	/* mostly at the HFI's head: the packet is the next one it reads */
	pos = b.stp && chance(t, 90) ? b.stp->send_head +
				       (chance(t, 90) ? 0 : rnd(t, 3)) :
	      rnd(t, 1u << 20);
	pick_hdr(t, &h, false, b.key);
	if (chance(t, 5)) {
		/* a pad, right or wrong */
		h.kind = PERCS_PKT_PAD;
		h.length = chance(t, 50) ?
			   (b.units - pos % b.units) * PERCS_FLIT_SIZE -
			   PERCS_PKT_HDR_SIZE : rnd(t, 4096);
	}
	p = b.main_addr + (pos % b.units) * PERCS_FLIT_SIZE;
	memcpy(p, &h, sizeof(h));
	room = b.main_addr + b.main_len - p - sizeof(h);
	if (chance(t, 30))
		memset(p + sizeof(h), (int)rnd(t, 256),
		       h.length < room ? h.length : room);
	units = (PERCS_PKT_HDR_SIZE + h.length + PERCS_FLIT_SIZE - 1) /
		PERCS_FLIT_SIZE;
	switch (rnd(t, 10)) {
	case 0:
		tail = pos + rnd(t, b.units + 2);
		break;
	case 1:
		tail = pick_value(t);
		break;
	default:
		tail = pos + units;
		break;
	}
	__atomic_store_n(&b.dbp->send_tail, tail, __ATOMIC_RELEASE);
	atomic_fetch_add(&fz.sends, 1);
	if (b.fd >= 0 && chance(t, 85))
		ring(t, OP_SEND, b.fdnum, b.poll,
		     chance(t, 80) ? PERCS_KICK_F_SEND : pick_kick_flags(t));
	bundle_put(&b);
}

static void op_imm(struct fz_thread *t)
{
	struct percs_pkt_hdr h;
	struct bundle b;
	uint64_t slot, tail;
	uint8_t *p;

	if (!bundle_get(t, PERCS_REGION_IMM, &b))
		return;
	slot = b.stp && chance(t, 80) ? b.stp->imm_head + rnd(t, 2) :
	       rnd(t, 1u << 16);
	pick_hdr(t, &h, true, b.key);
	p = b.main_addr + (slot % PERCS_IMM_SLOTS) * PERCS_FLIT_SIZE;
	memcpy(p, &h, sizeof(h));
	if (chance(t, 30))
		memset(p + sizeof(h), (int)rnd(t, 256), PERCS_IMM_PAYLOAD);
	tail = chance(t, 85) ? slot + 1 : chance(t, 50) ?
	       slot + rnd(t, 2 * PERCS_IMM_SLOTS) : pick_value(t);
	__atomic_store_n(&b.dbp->imm_tail, tail, __ATOMIC_RELEASE);
	atomic_fetch_add(&fz.sends, 1);
	if (b.fd >= 0 && chance(t, 85))
		ring(t, OP_IMM, b.fdnum, b.poll,
		     chance(t, 80) ? PERCS_KICK_F_IMM : pick_kick_flags(t));
	bundle_put(&b);
}

/* Credits and CQ heads: mostly what the status page says, else noise. */
static void op_credit(struct fz_thread *t)
{
	struct bundle b;
	uint64_t v;

	if (!bundle_get(t, -1, &b))
		return;
	if (chance(t, 80)) {
		v = b.stp && chance(t, 85) ? b.stp->recv_tail -
					     (chance(t, 20) ? rnd(t, 8) : 0) :
		    chance(t, 50) ? pick_value(t) : rnd(t, 4096);
		__atomic_store_n(&b.dbp->recv_head, v, __ATOMIC_RELEASE);
	}
	if (chance(t, 50)) {
		v = b.stp && chance(t, 85) ? b.stp->cq_tail : pick_value(t);
		__atomic_store_n(&b.dbp->cq_head, v, __ATOMIC_RELEASE);
	}
	if (chance(t, 5)) {
		/* any byte of the page: the pads too */
		((volatile uint8_t *)b.dbp)[rnd(t, PAGE)] = rnd(t, 256);
	}
	if (b.fd >= 0 && chance(t, 80)) {
		unsigned long f = chance(t, 80) ? PERCS_KICK_F_CREDIT :
				  pick_kick_flags(t);
		long got = sys_ioctl(b.fdnum, PERCS_IOC_KICK, f);

		fz_check(t, OP_CREDIT, got, kick_allowed(b.poll, f),
			 "KICK %#lx", f);
	}
	bundle_put(&b);
}

/* ---- fork ---- */

struct fz_inherit {
	int nfd, nmap;
	struct { int fd; bool win, poll; } fd[6];
	struct { uint8_t *addr; size_t len; int region, prot; } map[6];
};

/* The child: a few calls on what it inherited, then _exit. */
static int fz_child(struct fz_thread *t, struct fz_inherit *in)
{
	unsigned int i, n = 1 + rnd(t, 6);
	long got;

	t->in_child = true;
	for (i = 0; i < n; i++) {
		unsigned int k = rnd(t, 6);

		if (k == 0 && in->nfd) {
			int j = rnd(t, in->nfd);
			unsigned long f = rnd(t, PERCS_KICK_F_ALL + 1);

			if (in->fd[j].fd < 0)
				continue;
			if (in->fd[j].win) {
				got = sys_ioctl(in->fd[j].fd, PERCS_IOC_KICK, f);
				fz_check(t, OP_FORK, got,
					 kick_allowed(in->fd[j].poll, f),
					 "child KICK");
			} else {
				struct percs_window_query q = {
					.size = sizeof(q),
					.window = rnd(t, fz.total),
				};

				got = sys_ioctl(in->fd[j].fd,
						PERCS_IOC_WINDOW_QUERY,
						(unsigned long)&q);
				fz_check(t, OP_FORK, got,
					 B(A_OK) | B(A_ENOENT), "child QUERY");
			}
		} else if (k == 1 && in->nfd) {
			int j = rnd(t, in->nfd);

			if (in->fd[j].fd < 0 || !in->fd[j].win)
				continue;
			got = fdatasync(in->fd[j].fd) ? -errno : 0;
			fz_check(t, OP_FORK, got, in->fd[j].poll ? B(A_OK) :
				 B(A_OK) | B(A_EINVAL), "child fdatasync");
		} else if (k == 2 && in->nmap) {
			int j = rnd(t, in->nmap);

			if (!in->map[j].addr || !(in->map[j].prot & PROT_WRITE))
				continue;
			/* a trigger or a byte, whatever the region */
			in->map[j].addr[rnd(t, in->map[j].len)] = rnd(t, 256);
		} else if (k == 3 && in->nfd) {
			int j = rnd(t, in->nfd);

			if (in->fd[j].fd < 0)
				continue;
			got = close(in->fd[j].fd) ? -errno : 0;
			fz_check(t, OP_FORK, got, B(A_OK), "child close");
			in->fd[j].fd = -1;
		} else if (k == 4 && in->nmap) {
			int j = rnd(t, in->nmap);

			if (!in->map[j].addr)
				continue;
			got = munmap(in->map[j].addr, in->map[j].len) ?
			      -errno : 0;
			fz_check(t, OP_FORK, got, B(A_OK), "child munmap");
			in->map[j].addr = NULL;
		} else if (k == 5 && in->nfd) {
			/* a window of its own, left for exit to release */
			int j = rnd(t, in->nfd);
			struct percs_window_reserve r = {
				.size = sizeof(r),
				.flags = chance(t, 30) ? PERCS_WINDOW_F_POLL : 0,
				.send_fifo_size = PERCS_FIFO_MIN_SIZE,
				.recv_fifo_size = PERCS_FIFO_MIN_SIZE,
				.job_fd = pt_job_fd(fz.keys[rnd(t, 3)]),
				.window = PERCS_WINDOW_ANY,
			};

			if (in->fd[j].fd < 0 || in->fd[j].win)
				continue;
			got = sys_ioctl(in->fd[j].fd, PERCS_IOC_WINDOW_RESERVE,
					(unsigned long)&r);
			if (fz_check(t, OP_FORK, got, B(A_OK) | B(A_ENOSPC),
				     "child reserve") && got >= 0)
				mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				     MAP_SHARED, got, (off_t)
				     r.regions[PERCS_REGION_DOORBELL].offset);
		}
	}
	return t->child_report[0] ? 1 : 0;
}

static void op_fork(struct fz_thread *t)
{
	struct fz_inherit in;
	uint64_t deadline;
	int i, status;
	pid_t pid, r;

	memset(&in, 0, sizeof(in));
	memset(t->child_report, 0, 256);
	lock();
	for (i = 0; i < FZ_MAX_FDS && in.nfd < 6; i++) {
		if (!fz.fd[i].used || !chance(t, 40))
			continue;
		in.fd[in.nfd].fd = fz.fd[i].fd;
		in.fd[in.nfd].win = fz.fd[i].win >= 0;
		in.fd[in.nfd].poll = fz.fd[i].win >= 0 &&
				     fz.win[fz.fd[i].win].poll;
		in.nfd++;
	}
	for (i = 0; i < FZ_MAX_MAPS && in.nmap < 6; i++) {
		/* mappings being changed by another thread are left out */
		if (!fz.map[i].used || fz.map[i].excl || !chance(t, 30))
			continue;
		in.map[in.nmap].addr = fz.map[i].addr;
		in.map[in.nmap].len = fz.map[i].len;
		in.map[in.nmap].region = fz.map[i].region;
		in.map[in.nmap].prot = fz.map[i].prot;
		in.nmap++;
	}
	/* the table stays still while the address space is copied */
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fz_child(t, &in));
	}
	unlock();
	if (!fz_check(t, OP_FORK, pid < 0 ? -errno : 0, B(A_OK), "fork"))
		return;
	atomic_fetch_add(&fz.forks, 1);
	deadline = pt_now_ms() + FZ_CHILD_MS;
	while ((r = waitpid(pid, &status, WNOHANG)) == 0) {
		if (pt_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fz_record(t, "fork: child hung for %d ms",
				  FZ_CHILD_MS);
			return;
		}
		usleep(500);
	}
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		fz_record(t, "fork: child %s %d: %s",
			  r > 0 && WIFSIGNALED(status) ? "signal" : "exit",
			  r > 0 && WIFSIGNALED(status) ? WTERMSIG(status) :
			  WEXITSTATUS(status), t->child_report);
}

/* ---- the threads ---- */

static enum op pick_op(struct fz_thread *t)
{
	unsigned int total = 0, x, o;

	for (o = 0; o < NR_OPS; o++)
		total += op_weight[o];
	x = rnd(t, total);
	for (o = 0; o < NR_OPS; o++) {
		if (x < op_weight[o])
			return o;
		x -= op_weight[o];
	}
	return OP_KICK;
}

static void *fz_thread_main(void *arg)
{
	struct fz_thread *t = arg;

	while (t->calls < fz.calls_per_thread && pt_now_ms() < fz.stop_ms) {
		enum op op = pick_op(t);

		atomic_store(&t->op_start_ms, pt_now_ms());
		atomic_store(&t->cur_op, op_name[op]);
		t->calls++;
		atomic_fetch_add(&fz.calls, 1);
		atomic_fetch_add(&fz.op_count[op], 1);
		switch (op) {
		case OP_OPEN: op_open(t); break;
		case OP_INFO: op_hfi_ioctl(t, 0); break;
		case OP_RESERVE: op_hfi_ioctl(t, 1); break;
		case OP_QUERY: op_hfi_ioctl(t, 2); break;
		case OP_KICK: op_kick(t, false); break;
		case OP_SYNC: op_kick(t, true); break;
		case OP_BAD_IOCTL: op_bad_ioctl(t); break;
		case OP_MMAP: op_mmap(t); break;
		case OP_MUNMAP: op_munmap(t); break;
		case OP_MPROTECT: op_mprotect(t); break;
		case OP_MREMAP: op_mremap(t); break;
		case OP_CLOSE: op_close(t); break;
		case OP_DUP: op_dup(t); break;
		case OP_SEND: op_send(t); break;
		case OP_IMM: op_imm(t); break;
		case OP_CREDIT: op_credit(t); break;
		case OP_POLL: op_poll(t); break;
		case OP_RW: op_rw(t); break;
		case OP_FORK: op_fork(t); break;
		default: break;
		}
		atomic_store(&t->cur_op, (const char *)NULL);
	}
	atomic_store(&t->done, true);
	return NULL;
}

/* ---- the test ---- */

static int count_fds(void)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

/* Packets the HFIs have routed so far (debugfs "routes", all classes). */
static unsigned long long routed_packets(void)
{
	unsigned long long sum = 0, a, b, c;
	unsigned int hfi;
	char line[256];
	FILE *f;

	f = fopen("/sys/kernel/debug/percs/routes", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %llu %llu %llu", &hfi, &a, &b, &c) == 4)
			sum += a + b + c;
	fclose(f);
	return sum;
}

static unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *e = getenv(name);

	return e && *e ? strtoull(e, NULL, 0) : def;
}

FIXTURE(fuzz) {
	struct fz_thread *th;
	unsigned int nth;
};

FIXTURE_SETUP(fuzz)
{
	PT_REQUIRE_DEVICE();
}

FIXTURE_TEARDOWN(fuzz)
{
	unsigned int i;

	for (i = 0; self->th && i < self->nth; i++) {
		munmap(self->th[i].arena, ARENA_RW + PAGE);
		munmap(self->th[i].ro, 2 * PAGE);
		munmap(self->th[i].child_report, PAGE);
	}
	free(self->th);
}

TEST_F_TIMEOUT(fuzz, random_calls, 300)
{
	unsigned long total_calls;
	struct pt_live live;
	struct percs_hfi_info info = { .size = sizeof(info) };
	unsigned long long routed;
	int fds_before, hfd, i, stuck = 0;
	unsigned int o, r;
	char line[512];
	size_t n;

	if (_metadata->skip)
		return;
	fz.seed = env_ulong("PERCS_FUZZ_SEED", 0);
	if (!fz.seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		fz.seed = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
			  (uint64_t)ts.tv_sec << 20 ^ getpid();
	}
	self->nth = env_ulong("PERCS_FUZZ_THREADS", FZ_THREADS);
	if (self->nth < 1 || self->nth > 16)
		self->nth = FZ_THREADS;
	total_calls = env_ulong("PERCS_FUZZ_CALLS", pt_scale(FZ_CALLS));
	printf("# fuzz seed %#llx: %lu calls, %u threads "
	       "(PERCS_FUZZ_SEED=%#llx PERCS_FUZZ_THREADS=%u replays)\n",
	       (unsigned long long)fz.seed, total_calls, self->nth,
	       (unsigned long long)fz.seed, self->nth);
	fflush(stdout);
	TH_LOG("seed %#llx, %lu calls, %u threads",
	       (unsigned long long)fz.seed, total_calls, self->nth);

	ASSERT_EQ(0, pt_wait_live_zero(&live, PT_TIMEOUT_MS));
	fds_before = count_fds();
	routed = routed_packets();
	pthread_mutex_init(&fz.lock, NULL);
	pthread_mutex_init(&fz.rec_lock, NULL);
	fz.calls_per_thread = (total_calls + self->nth - 1) / self->nth;
	fz.stop_ms = pt_now_ms() + FZ_RUN_MS;
	/* three job keys: most traffic within a key, some across */
	for (i = 0; i < 3; i++)
		fz.keys[i] = pt_new_key();

	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, ioctl(hfd, PERCS_IOC_HFI_INFO, &info));
	fz.nr_hubs = info.nr_hubs;
	fz.total = info.windows_total;
	fd_add(hfd, -1);

	self->th = calloc(self->nth, sizeof(*self->th));
	ASSERT_NE(NULL, self->th);
	for (i = 0; i < (int)self->nth; i++) {
		struct fz_thread *t = &self->th[i];
		uint64_t s = fz.seed ^ (0x5851f42d4c957f2dull * (i + 1));

		t->id = i;
		t->rng = splitmix(&s);
		t->arena = mmap(NULL, ARENA_RW + PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, t->arena);
		ASSERT_EQ(0, mprotect(t->arena + ARENA_RW, PAGE, PROT_NONE));
		t->ro = mmap(NULL, 2 * PAGE, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, t->ro);
		ASSERT_EQ(0, mprotect(t->ro + PAGE, PAGE, PROT_NONE));
		/* below mmap_min_addr: nothing is ever mapped there */
		t->hole = (uint8_t *)PAGE;
		t->child_report = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, t->child_report);
	}
	for (i = 0; i < (int)self->nth; i++)
		ASSERT_EQ(0, pthread_create(&self->th[i].tid, NULL,
					    fz_thread_main, &self->th[i]));

	/* watch: every call finishes within FZ_HANG_MS */
	for (;;) {
		bool all_done = true;

		for (i = 0; i < (int)self->nth; i++) {
			struct fz_thread *t = &self->th[i];
			const char *op = atomic_load(&t->cur_op);
			uint64_t since = atomic_load(&t->op_start_ms);

			if (atomic_load(&t->done))
				continue;
			all_done = false;
			if (op && pt_now_ms() - since > FZ_HANG_MS) {
				TH_LOG("thread %d: %s running for %llu ms (call %lu)",
				       i, op, (unsigned long long)
				       (pt_now_ms() - since), t->calls);
				stuck = 1;
			}
		}
		if (all_done || stuck)
			break;
		usleep(20000);
	}
	ASSERT_EQ(0, stuck) TH_LOG("seed %#llx: a call hung",
				   (unsigned long long)fz.seed);
	for (i = 0; i < (int)self->nth; i++)
		pthread_join(self->th[i].tid, NULL);

	/* the summary */
	n = snprintf(line, sizeof(line), "%lu calls, %lu forks:",
		     (unsigned long)atomic_load(&fz.calls),
		     (unsigned long)atomic_load(&fz.forks));
	for (o = 0; o < NR_OPS && n < sizeof(line); o++)
		n += snprintf(line + n, sizeof(line) - n, " %s %lu",
			      op_name[o],
			      (unsigned long)atomic_load(&fz.op_count[o]));
	TH_LOG("%s", line);
	n = snprintf(line, sizeof(line), "answers:");
	for (r = 0; r < NR_RES && n < sizeof(line); r++)
		if (atomic_load(&fz.res_count[r]))
			n += snprintf(line + n, sizeof(line) - n, " %s %lu",
				      res_name[r], (unsigned long)
				      atomic_load(&fz.res_count[r]));
	TH_LOG("%s", line);
	TH_LOG("packets written and triggered: %lu, delivered: %llu",
	       (unsigned long)atomic_load(&fz.sends),
	       routed_packets() - routed);
	if (atomic_load(&fz.calls) < total_calls)
		TH_LOG("stopped at the %d s limit after %lu of %lu calls",
		       FZ_RUN_MS / 1000, (unsigned long)atomic_load(&fz.calls),
		       total_calls);

	/*
	 * The kernel's live objects are exactly the fuzzer's: its windows
	 * (each reserved, so also in windows_reserved), its mappings and the
	 * job keys of its windows (the forked children's are gone: their
	 * last references may be dropped by a deferred fput, so wait).
	 */
	{
		long want_w = 0, want_m = 0, want_k = 0;
		uint64_t until = pt_now_ms() + PT_TIMEOUT_MS;
		int j;

		for (i = 0; i < FZ_MAX_WINS; i++) {
			if (!fz.win[i].used)
				continue;
			want_w++;
			for (j = 0; j < i; j++)
				if (fz.win[j].used &&
				    fz.win[j].key == fz.win[i].key)
					break;
			want_k += j == i;
		}
		want_m = count_maps();
		for (;;) {
			ASSERT_EQ(0, pt_read_live(&live));
			if ((live.windows == want_w &&
			     live.windows_reserved == want_w &&
			     live.mappings == want_m &&
			     live.jobs == want_k) || pt_now_ms() > until)
				break;
			usleep(2000);
		}
		EXPECT_EQ(want_w, live.windows);
		EXPECT_EQ(want_w, live.windows_reserved);
		EXPECT_EQ(want_m, live.mappings);
		EXPECT_EQ(want_k, live.jobs);
		TH_LOG("at the end: %ld windows, %ld mappings, %ld job keys "
		       "(live: %ld, %ld, %ld; %ld blocked senders)", want_w,
		       want_m, want_k, live.windows, live.mappings,
		       live.jobs, live.blocked_senders);
	}

	/* everything closed: nothing left */
	for (i = 0; i < FZ_MAX_MAPS; i++)
		if (fz.map[i].used)
			EXPECT_EQ(0, munmap(fz.map[i].addr, fz.map[i].len));
	for (i = 0; i < FZ_MAX_FDS; i++)
		if (fz.fd[i].used)
			EXPECT_EQ(0, close(fz.fd[i].fd));
	memset(fz.map, 0, sizeof(fz.map));
	memset(fz.fd, 0, sizeof(fz.fd));
	memset(fz.win, 0, sizeof(fz.win));
	pt_jobs_close();	/* the three jobs, made after the count */
	EXPECT_EQ(fds_before, count_fds());
	ASSERT_LIVE_ZERO();

	for (i = 0; i < (int)fz.nr_unexpected && i < FZ_MAX_RECORDS; i++)
		TH_LOG("unexpected: %s", fz.rec[i]);
	EXPECT_EQ(0, fz.nr_unexpected)
		TH_LOG("seed %#llx: %u unexpected answers (replay with "
		       "PERCS_FUZZ_SEED=%#llx)", (unsigned long long)fz.seed,
		       fz.nr_unexpected, (unsigned long long)fz.seed);
}

TEST_HARNESS_MAIN
