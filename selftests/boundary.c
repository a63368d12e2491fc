// SPDX-License-Identifier: GPL-2.0
/*
 * boundary: table-driven boundary values for every size, count and index
 * field of every ioctl, the doorbell indices read by KICK and fdatasync(2),
 * and the mmap offset/length path.
 *
 * Each field is tried with the same set of values (0, 1, page +- 1, 2^31,
 * 2^32 or its truncation, 2^63, all ones, unaligned values, powers of two
 * at and around the FIFO bounds 4 KiB and 4 MiB) while every other field is
 * valid; the expected answer is computed from Documentation/uapi.rst and
 * checked exactly.  After every failing call the test checks that nothing
 * was left behind: the debugfs live counters and the number of open fds are
 * what they were before.
 *
 * badinput.c has the first examples of each rule; this file sweeps them.
 * Argument structs live at the start of an "arena": 17 zeroed read/write
 * pages followed by an inaccessible guard page, so that a size field up to
 * 69632 describes zero-filled memory and a larger one runs into the guard
 * (EFAULT) - never into random bytes.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE		4096ul
#define FIFO_4K		PERCS_FIFO_MIN_SIZE
#define ARENA_RW	(17 * PAGE)	/* zeroed, writable */
#define ARENA_LEN	(ARENA_RW + PAGE)	/* + the guard page */
#define MIB		(1ull << 20)

/* ---- what the boundary values are ---- */

struct bval {
	uint64_t v;
	const char *name;
};

static const struct bval bvals[] = {
	{ 0, "0" },
	{ 1, "1" },
	{ 2, "2" },
	{ 3, "3 (unaligned)" },
	{ 8, "8" },
	{ 55, "55 (unaligned)" },
	{ 2048, "2048 (pow2 below 4K)" },
	{ PAGE - 1, "PAGE-1" },
	{ PAGE, "PAGE (4K)" },
	{ PAGE + 1, "PAGE+1" },
	{ PAGE + 4, "PAGE+4 (unaligned)" },
	{ 6144, "1.5 PAGE" },
	{ 2 * PAGE, "8K" },
	{ 65535, "64K-1" },
	{ 65536, "64K" },
	{ 65537, "64K+1" },
	{ 2 * MIB, "2M" },
	{ 4 * MIB - 1, "4M-1" },
	{ 4 * MIB - PAGE, "4M-PAGE" },
	{ 4 * MIB, "4M" },
	{ 4 * MIB + 1, "4M+1" },
	{ 4 * MIB + PAGE, "4M+PAGE" },
	{ 8 * MIB, "8M (pow2 above 4M)" },
	{ 0x7fffffffull, "2^31-1" },
	{ 1ull << 31, "2^31" },
	{ (1ull << 31) + 1, "2^31+1" },
	{ 0xfffffffeull, "2^32-2" },
	{ 0xffffffffull, "2^32-1" },
	{ 1ull << 32, "2^32" },
	{ (1ull << 32) + 1, "2^32+1" },
	{ (1ull << 32) + PAGE, "2^32+PAGE" },
	{ 1ull << 63, "2^63" },
	{ (1ull << 63) - 1, "2^63-1" },
	{ ~0ull - 1, "all ones - 1" },
	{ ~0ull, "all ones" },
	{ 0x5a5a5a5a5a5a5a5aull, "0x5a.." },
};

static bool fifo_size_ok(uint64_t v)
{
	return v >= PERCS_FIFO_MIN_SIZE && v <= PERCS_FIFO_MAX_SIZE &&
	       !(v & (v - 1));
}


#define EXPECT_NOTHING_LEFT(_base, _fmt, ...) do {			\
	struct pt_snap __now;						\
	if (!pt_snap_back((_base), &__now, 2000)) {			\
		TH_LOG("left behind after " _fmt ": fds %d->%d "	\
		       "windows %ld->%ld reserved %ld->%ld "		\
		       "mappings %ld->%ld jobs %ld->%ld",		\
		       ##__VA_ARGS__, (_base)->fds, __now.fds,		\
		       (_base)->live.windows, __now.live.windows,	\
		       (_base)->live.windows_reserved,			\
		       __now.live.windows_reserved,			\
		       (_base)->live.mappings, __now.live.mappings,	\
		       (_base)->live.jobs, __now.live.jobs);	\
		_metadata->passed = 0;					\
	}								\
} while (0)

static long sys_ioctl(int fd, unsigned long cmd, unsigned long arg)
{
	long r = syscall(SYS_ioctl, fd, cmd, arg);

	return r < 0 ? -errno : r;
}

static const char *errname(long r)
{
	static char buf[32];

	switch (r) {
	case 0: return "0";
	case -EINVAL: return "EINVAL";
	case -EFAULT: return "EFAULT";
	case -E2BIG: return "E2BIG";
	case -ENOTTY: return "ENOTTY";
	case -EBUSY: return "EBUSY";
	case -ENOSPC: return "ENOSPC";
	case -ENOENT: return "ENOENT";
	case -EPERM: return "EPERM";
	case -EACCES: return "EACCES";
	case -ENOMEM: return "ENOMEM";
	case -EOVERFLOW: return "EOVERFLOW";
	case -ENODEV: return "ENODEV";
	}
	snprintf(buf, sizeof(buf), "%ld", r);
	return buf;
}

/* ---- the fixture: an HFI, one busy window, the arena ---- */

FIXTURE(bnd) {
	int hfd;
	int busy_fd;
	uint32_t busy;		/* index of the reserved window */
	uint32_t total;		/* windows of the HFI */
	uint32_t key;		/* the job of every window reserved */
	struct percs_hfi_info info;
	uint8_t *arena;		/* ARENA_RW zeroed bytes, then a guard page */
	struct pt_snap base;	/* state with the busy window reserved */
};

FIXTURE_SETUP(bnd)
{
	struct percs_window_reserve req;

	self->hfd = self->busy_fd = -1;
	self->arena = MAP_FAILED;
	PT_REQUIRE_DEVICE();
	self->hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, self->hfd);
	self->info.size = sizeof(self->info);
	ASSERT_EQ(0, ioctl(self->hfd, PERCS_IOC_HFI_INFO, &self->info));
	self->total = self->info.windows_total;
	ASSERT_LE(4, self->total);
	/* a named window in the middle, so that index 0 and 1 stay free */
	self->busy = self->total / 2;
	self->key = pt_new_key();
	self->busy_fd = pt_reserve_raw(self->hfd, 0, FIFO_4K, FIFO_4K,
				       self->key, self->busy, &req);
	ASSERT_LE(0, self->busy_fd);
	self->arena = mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->arena);
	ASSERT_EQ(0, mprotect(self->arena + ARENA_RW, PAGE, PROT_NONE));
	ASSERT_EQ(0, pt_snap_take(&self->base));
}

FIXTURE_TEARDOWN(bnd)
{
	if (self->arena != MAP_FAILED)
		munmap(self->arena, ARENA_LEN);
	if (self->busy_fd >= 0)
		close(self->busy_fd);
	if (self->hfd >= 0)
		close(self->hfd);
}

/* A clean arena with @len bytes of @src at its start. */
static void *arena_put(FIXTURE_DATA(bnd) *self, const void *src, size_t len)
{
	memset(self->arena, 0, ARENA_RW);
	memcpy(self->arena, src, len);
	return self->arena;
}

/* Expected answer for the size field of an ioctl struct (zero tail). */
static long size_expect(uint64_t v32, size_t min)
{
	if (v32 < min)
		return -EINVAL;
	if (v32 > ARENA_RW)
		return -EFAULT;		/* the tail runs into the guard page */
	return 0;
}

/* Put a value into a struct field of @width bytes; Return: what is stored. */
static uint64_t field_set(void *s, size_t off, size_t width, uint64_t v)
{
	uint8_t *p = (uint8_t *)s + off;

	switch (width) {
	case 2: { uint16_t x = v; memcpy(p, &x, 2); return x; }
	case 4: { uint32_t x = v; memcpy(p, &x, 4); return x; }
	default: memcpy(p, &v, 8); return v;
	}
}

/* ---- PERCS_IOC_HFI_INFO ---- */

struct field {
	const char *name;
	size_t off;
	size_t width;
};

#define FIELD(type, f) { #f, offsetof(type, f), sizeof(((type *)0)->f) }

static const struct field info_fields[] = {
	FIELD(struct percs_hfi_info, size),
	FIELD(struct percs_hfi_info, flags),
	FIELD(struct percs_hfi_info, reserved),
};

static long info_expect(const char *field, uint64_t v)
{
	if (!strcmp(field, "size"))
		return size_expect(v, sizeof(struct percs_hfi_info));
	return v ? -EINVAL : 0;	/* flags, reserved: must be zero */
}

TEST_F(bnd, hfi_info_fields)
{
	struct percs_hfi_info clean = { .size = sizeof(clean) };
	unsigned int f, i;

	if (_metadata->skip)
		return;

	for (f = 0; f < ARRAY_SIZE(info_fields); f++) {
		for (i = 0; i < ARRAY_SIZE(bvals); i++) {
			struct percs_hfi_info *a = arena_put(self, &clean,
							     sizeof(clean));
			uint64_t stored = field_set(a, info_fields[f].off,
						    info_fields[f].width,
						    bvals[i].v);
			long want = info_expect(info_fields[f].name, stored);
			long got = sys_ioctl(self->hfd, PERCS_IOC_HFI_INFO,
					     (unsigned long)a);

			EXPECT_EQ(want, got)
				TH_LOG("HFI_INFO %s = %s (%#llx): want %s got %s",
				       info_fields[f].name, bvals[i].name,
				       (unsigned long long)stored,
				       errname(want), errname(got));
			if (got == 0) {
				/* answered, size kept, tail untouched */
				EXPECT_EQ(strcmp(info_fields[f].name, "size") ?
					  sizeof(*a) : (uint32_t)stored,
					  a->size);
				EXPECT_EQ(self->info.hub, a->hub);
				EXPECT_EQ(self->info.unit, a->unit);
				EXPECT_EQ(self->info.nr_hubs, a->nr_hubs);
				EXPECT_EQ(PERCS_MAX_PACKET, a->max_packet);
				EXPECT_EQ(PERCS_FLIT_SIZE, a->flit_size);
				EXPECT_EQ(0, a->reserved);
				EXPECT_EQ(0, self->arena[sizeof(*a)]);
			}
			EXPECT_NOTHING_LEFT(&self->base, "HFI_INFO %s = %s",
					    info_fields[f].name, bvals[i].name);
		}
	}
}

/* ---- PERCS_IOC_WINDOW_RESERVE ---- */

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
};

static long reserve_expect(FIXTURE_DATA(bnd) *self, const char *field,
			   uint64_t v)
{
	if (!strcmp(field, "size"))
		return size_expect(v, sizeof(struct percs_window_reserve));
	if (!strcmp(field, "flags"))
		return (v & ~(uint64_t)PERCS_WINDOW_F_ALL) ||
		       (v & PERCS_WINDOW_F_ALL) == PERCS_WINDOW_F_ALL ?
		       -EINVAL : 0;	/* one engine mode at most */
	if (!strcmp(field, "send_fifo_size") ||
	    !strcmp(field, "recv_fifo_size"))
		return fifo_size_ok(v) ? 0 : -EINVAL;
	if (!strcmp(field, "job_fd")) {
		/* the job's fd; another open file; no file at all */
		if ((int)v == pt_job_fd(self->key))
			return 0;
		return fcntl((int)v, F_GETFD) < 0 ? -EBADF : -EINVAL;
	}
	if (!strcmp(field, "window")) {
		if (v == PERCS_WINDOW_ANY)
			return 0;
		if (v >= self->total)
			return -EINVAL;
		return v == self->busy ? -EBUSY : 0;
	}
	/* fd, imm_slots, cq_entries, job_key (output only) */
	return v ? -EINVAL : 0;
}

static struct percs_window_reserve reserve_clean(FIXTURE_DATA(bnd) *self)
{
	struct percs_window_reserve r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.send_fifo_size = FIFO_4K;
	r.recv_fifo_size = FIFO_4K;
	r.job_fd = pt_job_fd(self->key);
	r.window = PERCS_WINDOW_ANY;
	return r;
}

/* Check a successful reserve answer at @a (returned fd @ret), close it. */
static void reserve_check_answer(struct __test_metadata *_metadata,
				 FIXTURE_DATA(bnd) *self,
				 const struct percs_window_reserve *in,
				 const struct percs_window_reserve *a,
				 long ret)
{
	unsigned int r;

	EXPECT_EQ(ret, a->fd);
	EXPECT_EQ(in->size, a->size);
	EXPECT_EQ(PERCS_IMM_SLOTS, a->imm_slots);
	EXPECT_EQ(PERCS_CQ_ENTRIES, a->cq_entries);
	EXPECT_EQ(self->info.hub, a->addr.hub);
	EXPECT_EQ(self->info.unit, a->addr.hfi);
	EXPECT_EQ(0, a->addr.reserved);
	EXPECT_EQ(a->window, a->addr.window);
	if (in->window != PERCS_WINDOW_ANY)
		EXPECT_EQ(in->window, a->window);
	EXPECT_GT(self->total, a->window);
	EXPECT_EQ(in->send_fifo_size,
		  a->regions[PERCS_REGION_SEND_FIFO].length);
	EXPECT_EQ(in->recv_fifo_size,
		  a->regions[PERCS_REGION_RECV_FIFO].length);
	for (r = 0; r <= PERCS_REGION_CLOCK; r++)
		EXPECT_TRUE(a->regions[r].flags & PERCS_REGION_F_VALID);
	for (r = PERCS_REGION_CLOCK + 1; r < PERCS_REGION_MAX; r++) {
		EXPECT_EQ(0, a->regions[r].flags);
		EXPECT_EQ(0, a->regions[r].length);
		EXPECT_EQ(0, a->regions[r].offset);
	}
	/* the answer stays inside the kernel's struct */
	EXPECT_EQ(0, self->arena[sizeof(*a)]);
	EXPECT_EQ(0, close(ret));
}

TEST_F(bnd, window_reserve_fields)
{
	unsigned int f, i;

	if (_metadata->skip)
		return;

	for (f = 0; f < ARRAY_SIZE(reserve_fields); f++) {
		for (i = 0; i < ARRAY_SIZE(bvals) + 5; i++) {
			struct percs_window_reserve in = reserve_clean(self);
			struct percs_window_reserve *a;
			const char *vname;
			uint64_t v, stored;
			long want, got;

			if (i < ARRAY_SIZE(bvals)) {
				v = bvals[i].v;
				vname = bvals[i].name;
			} else {
				/* indices at the HFI's own bounds */
				static const char *const n[] = {
					"total-1", "total", "total+1",
					"busy", "ANY",
				};
				const uint64_t x[] = {
					self->total - 1, self->total,
					self->total + 1, self->busy,
					PERCS_WINDOW_ANY,
				};

				v = x[i - ARRAY_SIZE(bvals)];
				vname = n[i - ARRAY_SIZE(bvals)];
			}
			stored = field_set(&in, reserve_fields[f].off,
					   reserve_fields[f].width, v);
			want = reserve_expect(self, reserve_fields[f].name,
					      stored);
			a = arena_put(self, &in, sizeof(in));
			got = sys_ioctl(self->hfd, PERCS_IOC_WINDOW_RESERVE,
					(unsigned long)a);
			if (got >= 0 && want == 0) {
				reserve_check_answer(_metadata, self, &in, a,
						     got);
			} else {
				EXPECT_EQ(want, got)
					TH_LOG("RESERVE %s = %s (%#llx): want %s got %s",
					       reserve_fields[f].name, vname,
					       (unsigned long long)stored,
					       errname(want), errname(got));
				if (got >= 0)
					close(got);
			}
			EXPECT_NOTHING_LEFT(&self->base, "RESERVE %s = %s",
					    reserve_fields[f].name, vname);
		}
	}
}

/*
 * Output fields other than fd, imm_slots, cq_entries and job_key (addr,
 * regions[]; every output of QUERY and HFI_INFO) are not checked on input:
 * the answer overwrites them, whatever the caller left there (so a struct
 * can be reused for the next query), addr's reserved byte too.
 */
TEST_F(bnd, output_fields_overwritten)
{
	struct percs_window_reserve in = reserve_clean(self), *a;
	struct percs_window_query q, *qa;
	struct percs_hfi_info *ia;
	long got;

	if (_metadata->skip)
		return;

	memset(&in.addr, 0xff, sizeof(in.addr));
	memset(in.regions, 0xa5, sizeof(in.regions));
	a = arena_put(self, &in, sizeof(in));
	got = sys_ioctl(self->hfd, PERCS_IOC_WINDOW_RESERVE, (unsigned long)a);
	ASSERT_LE(0, got);
	reserve_check_answer(_metadata, self, &in, a, got);

	memset(&q, 0xa5, sizeof(q));
	q.size = sizeof(q);
	q.flags = 0;
	q.window = self->busy;
	qa = arena_put(self, &q, sizeof(q));
	EXPECT_EQ(0, sys_ioctl(self->hfd, PERCS_IOC_WINDOW_QUERY,
			       (unsigned long)qa));
	EXPECT_EQ(PERCS_WSTATE_ACTIVE, qa->state);
	EXPECT_EQ(FIFO_4K, qa->send_fifo_size);
	EXPECT_EQ(0, qa->wflags);
	EXPECT_EQ(0, qa->packets_sent);
	q.window = 0;
	qa = arena_put(self, &q, sizeof(q));
	EXPECT_EQ(-ENOENT, sys_ioctl(self->hfd, PERCS_IOC_WINDOW_QUERY,
				     (unsigned long)qa));
	EXPECT_EQ(PERCS_WSTATE_FREE, qa->state);
	EXPECT_EQ(0, qa->job_key);
	EXPECT_EQ(0, qa->packets_received);

	ia = (struct percs_hfi_info *)self->arena;
	memset(self->arena, 0, ARENA_RW);
	memset(ia, 0xa5, sizeof(*ia));
	ia->size = sizeof(*ia);
	ia->flags = 0;
	ia->reserved = 0;
	EXPECT_EQ(0, sys_ioctl(self->hfd, PERCS_IOC_HFI_INFO,
			       (unsigned long)ia));
	EXPECT_EQ(self->info.hub, ia->hub);
	EXPECT_EQ(self->info.windows_total, ia->windows_total);
	EXPECT_EQ(PERCS_FLIT_SIZE, ia->flit_size);
	EXPECT_NOTHING_LEFT(&self->base, "output fields");
}

/* ---- PERCS_IOC_WINDOW_QUERY ---- */

static const struct field query_fields[] = {
	FIELD(struct percs_window_query, size),
	FIELD(struct percs_window_query, flags),
	FIELD(struct percs_window_query, window),
};

TEST_F(bnd, window_query_fields)
{
	unsigned int f, i;

	if (_metadata->skip)
		return;

	for (f = 0; f < ARRAY_SIZE(query_fields); f++) {
		for (i = 0; i < ARRAY_SIZE(bvals) + 4; i++) {
			struct percs_window_query in, *a;
			const char *name = query_fields[f].name;
			const char *vname;
			uint64_t v, stored;
			long want, got;

			if (i < ARRAY_SIZE(bvals)) {
				v = bvals[i].v;
				vname = bvals[i].name;
			} else {
				static const char *const n[] = {
					"total-1", "total", "total+1", "busy",
				};
				const uint64_t x[] = {
					self->total - 1, self->total,
					self->total + 1, self->busy,
				};

				v = x[i - ARRAY_SIZE(bvals)];
				vname = n[i - ARRAY_SIZE(bvals)];
			}
			memset(&in, 0, sizeof(in));
			in.size = sizeof(in);
			in.window = self->busy;
			stored = field_set(&in, query_fields[f].off,
					   query_fields[f].width, v);
			if (!strcmp(name, "size"))
				want = size_expect(stored, sizeof(in));
			else if (!strcmp(name, "flags"))
				want = stored ? -EINVAL : 0;
			else if (stored >= self->total)
				want = -EINVAL;
			else
				want = stored == self->busy ? 0 : -ENOENT;
			a = arena_put(self, &in, sizeof(in));
			got = sys_ioctl(self->hfd, PERCS_IOC_WINDOW_QUERY,
					(unsigned long)a);
			EXPECT_EQ(want, got)
				TH_LOG("QUERY %s = %s (%#llx): want %s got %s",
				       name, vname, (unsigned long long)stored,
				       errname(want), errname(got));
			if (got == 0 || got == -ENOENT) {
				/* answered (ENOENT too), size kept */
				EXPECT_EQ(in.size, a->size);
				EXPECT_EQ(in.window, a->window);
				EXPECT_EQ(got ? PERCS_WSTATE_FREE :
						PERCS_WSTATE_ACTIVE, a->state);
				if (got == 0) {
					EXPECT_EQ((uint32_t)getpid(), a->pid);
					EXPECT_EQ(FIFO_4K, a->recv_fifo_size);
				} else {
					EXPECT_EQ(0, a->job_key);
					EXPECT_EQ(0, a->pid);
				}
				EXPECT_EQ(0, self->arena[sizeof(*a)]);
			}
			EXPECT_NOTHING_LEFT(&self->base, "QUERY %s = %s", name,
					    vname);
		}
	}
}

/* ---- struct sizes ---- */

struct hfi_cmd {
	const char *name;
	unsigned long cmd;
	size_t size;
	size_t min;	/* the first ABI version's size */
};

static const struct hfi_cmd hfi_cmds[] = {
	{ "HFI_INFO", PERCS_IOC_HFI_INFO, sizeof(struct percs_hfi_info),
	  sizeof(struct percs_hfi_info) },
	{ "WINDOW_RESERVE", PERCS_IOC_WINDOW_RESERVE,
	  sizeof(struct percs_window_reserve),
	  sizeof(struct percs_window_reserve) },
	{ "WINDOW_QUERY", PERCS_IOC_WINDOW_QUERY,
	  sizeof(struct percs_window_query), PERCS_WINDOW_QUERY_SIZE_VER0 },
};

/* A valid argument of hfi_cmds[c] in the arena, size field @size. */
static void *valid_arg(FIXTURE_DATA(bnd) *self, unsigned int c, uint32_t size)
{
	memset(self->arena, 0, ARENA_RW);
	if (hfi_cmds[c].cmd == PERCS_IOC_WINDOW_RESERVE) {
		struct percs_window_reserve r = reserve_clean(self);

		memcpy(self->arena, &r, sizeof(r));
	} else if (hfi_cmds[c].cmd == PERCS_IOC_WINDOW_QUERY) {
		((struct percs_window_query *)self->arena)->window = self->busy;
	}
	*(uint32_t *)self->arena = size;
	return self->arena;
}

/* Run one HFI ioctl; a window it reserved is closed. */
static long run_cmd(FIXTURE_DATA(bnd) *self, unsigned int c, void *arg)
{
	long r = sys_ioctl(self->hfd, hfi_cmds[c].cmd, (unsigned long)arg);

	if (r >= 0 && hfi_cmds[c].cmd == PERCS_IOC_WINDOW_RESERVE) {
		close(r);
		r = 0;
	}
	return r;
}

TEST_F(bnd, struct_sizes)
{
	unsigned int c, s;

	if (_metadata->skip)
		return;

	for (c = 0; c < ARRAY_SIZE(hfi_cmds); c++) {
		const uint32_t sz = hfi_cmds[c].size;
		const uint32_t min = hfi_cmds[c].min;
		const struct {
			uint32_t size;
			long tail_at;	/* a non-zero byte here, or -1 */
			long want;
			const char *name;
		} t[] = {
			{ 0, -1, -EINVAL, "0" },
			{ 1, -1, -EINVAL, "1" },
			{ 3, -1, -EINVAL, "3" },
			{ 4, -1, -EINVAL, "4 (just the size field)" },
			{ min - 1, -1, -EINVAL, "min-1" },
			{ min, -1, 0, "min (the first version's size)" },
			{ sz, -1, 0, "sizeof" },
			{ sz + 1, -1, 0, "sizeof+1, zero tail" },
			{ sz + 8, -1, 0, "sizeof+8, zero tail" },
			{ sz + 8, sz, -E2BIG, "sizeof+8, first tail byte set" },
			{ sz + 8, sz + 7, -E2BIG,
			  "sizeof+8, last tail byte set" },
			{ sz + 8, sz + 8, 0, "sizeof+8, byte after it set" },
			{ PAGE, -1, 0, "4096, zero tail" },
			{ PAGE, PAGE - 1, -E2BIG, "4096, last byte set" },
			{ 65536, -1, 0, "65536, zero tail" },
			{ 65536, 65535, -E2BIG, "65536, last byte set" },
			{ ARENA_RW, -1, 0, "the whole arena" },
			{ ARENA_RW + 1, -1, -EFAULT, "one byte into the guard" },
			{ 1u << 31, -1, -EFAULT, "2^31" },
			{ 1u << 31, sz + 100, -E2BIG,
			  "2^31, a non-zero byte before the guard" },
			{ 0xffffffffu, -1, -EFAULT, "2^32-1" },
		};

		for (s = 0; s < ARRAY_SIZE(t); s++) {
			uint8_t *a = valid_arg(self, c, t[s].size);
			long got;

			if (t[s].tail_at >= 0)
				a[t[s].tail_at] = 0x5a;
			got = run_cmd(self, c, a);
			EXPECT_EQ(t[s].want, got)
				TH_LOG("%s size %s (%u): want %s got %s",
				       hfi_cmds[c].name, t[s].name, t[s].size,
				       errname(t[s].want), errname(got));
			/* the kernel never changes size */
			EXPECT_EQ(t[s].size, *(uint32_t *)a);
			if (got == 0)
				EXPECT_EQ(t[s].tail_at == (long)sz + 8 ?
					  0x5a : 0, a[sz + 8]);
			EXPECT_NOTHING_LEFT(&self->base, "%s size %s",
					    hfi_cmds[c].name, t[s].name);
		}
	}
}

/* ---- unknown ioctl numbers and types ---- */

/*
 * Every command number of type 0xB9 with every direction, on an HFI fd
 * and on a window fd: ENOTTY but for the real commands.  Then other
 * types with the numbers the module uses.  Types the VFS answers itself
 * (0x00 FIGETBSZ/FIBMAP, 'T' FIO*, 'X' and 'f' inode flags, 0x94 clone
 * and label) are left out: they never reach the driver.
 */
TEST_F(bnd, unknown_ioctls_enotty)
{
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	static const unsigned int sizes[] = { 0, 4, 56, 176, 72, 0x3fff };
	struct percs_hfi_info info = { .size = sizeof(info) };
	unsigned int type, nr, d, s, bad = 0, calls = 0;

	if (_metadata->skip)
		return;

	for (nr = 0; nr < 256; nr++) {
		for (d = 0; d < ARRAY_SIZE(dirs); d++) {
			for (s = 0; s < ARRAY_SIZE(sizes); s++) {
				unsigned long cmd = _IOC(dirs[d],
							 PERCS_IOCTL_TYPE, nr,
							 sizes[s]);
				long want, got;

				/* HFI fd */
				want = -ENOTTY;
				if (cmd == PERCS_IOC_HFI_INFO ||
				    cmd == PERCS_IOC_WINDOW_QUERY ||
				    cmd == PERCS_IOC_WINDOW_RESERVE ||
				    cmd == PERCS_IOC_JOB_CREATE)
					want = 0;
				memset(self->arena, 0, ARENA_RW);
				if (cmd == PERCS_IOC_WINDOW_QUERY) {
					((struct percs_window_query *)
					 self->arena)->size =
						sizeof(struct percs_window_query);
					((struct percs_window_query *)
					 self->arena)->window = self->busy;
				} else if (cmd == PERCS_IOC_WINDOW_RESERVE) {
					valid_arg(self, 1,
						  sizeof(struct percs_window_reserve));
				} else if (cmd == PERCS_IOC_JOB_CREATE) {
					*(uint32_t *)self->arena =
						sizeof(struct percs_job_create);
				} else {
					memcpy(self->arena, &info,
					       sizeof(info));
				}
				got = sys_ioctl(self->hfd, cmd,
						(unsigned long)self->arena);
				calls++;
				if (got >= 0 &&
				    (cmd == PERCS_IOC_WINDOW_RESERVE ||
				     cmd == PERCS_IOC_JOB_CREATE)) {
					close(got);
					got = 0;
				}
				if (got != want && bad++ < 10)
					TH_LOG("HFI fd cmd %#lx: want %s got %s",
					       cmd, errname(want),
					       errname(got));
				/*
				 * window fd: KICK (arg 0 = all); the
				 * registration commands see the arena
				 * (size 56): length 0, handle 0
				 */
				want = -ENOTTY;
				if (cmd == PERCS_IOC_KICK)
					want = 0;
				else if (cmd == PERCS_IOC_MR_REGISTER)
					want = -EINVAL;
				else if (cmd == PERCS_IOC_MR_DEREGISTER)
					want = -ENOENT;
				/*
				 * The CAU commands see HFI_INFO's answer:
				 * a member array of nothing, tree 0.
				 */
				else if (cmd == PERCS_IOC_CAU_CREATE)
					want = -EINVAL;
				else if (cmd == PERCS_IOC_CAU_JOIN ||
					 cmd == PERCS_IOC_CAU_DESTROY)
					want = -ENOENT;
				got = sys_ioctl(self->busy_fd, cmd,
						cmd == PERCS_IOC_KICK ? 0 :
						(unsigned long)self->arena);
				calls++;
				if (got != want && bad++ < 10)
					TH_LOG("window fd cmd %#lx: want %s got %s",
					       cmd, errname(want),
					       errname(got));
			}
		}
	}
	for (type = 1; type < 256; type++) {
		static const unsigned int nrs[] = { 0, 1, 2, 0x10, 0xff };

		if (type == PERCS_IOCTL_TYPE || type == 'T' || type == 'X' ||
		    type == 'f' || type == 0x94)
			continue;
		for (nr = 0; nr < ARRAY_SIZE(nrs); nr++) {
			for (d = 0; d < ARRAY_SIZE(dirs); d++) {
				unsigned long cmd = _IOC(dirs[d], type,
							 nrs[nr],
							 dirs[d] ? 56 : 0);
				long got;

				memcpy(self->arena, &info, sizeof(info));
				got = sys_ioctl(self->hfd, cmd,
						(unsigned long)self->arena);
				if (got != -ENOTTY && bad++ < 10)
					TH_LOG("HFI fd cmd %#lx: got %s", cmd,
					       errname(got));
				got = sys_ioctl(self->busy_fd, cmd, 0);
				if (got != -ENOTTY && bad++ < 10)
					TH_LOG("window fd cmd %#lx: got %s",
					       cmd, errname(got));
				calls += 2;
			}
		}
	}
	TH_LOG("%u ioctl calls, %u unexpected answers", calls, bad);
	EXPECT_EQ(0, bad);
	EXPECT_NOTHING_LEFT(&self->base, "the unknown ioctls");
}

/* ---- bad pointers ---- */

static long query_window(int hfd, uint32_t window)
{
	struct percs_window_query q;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.window = window;
	return sys_ioctl(hfd, PERCS_IOC_WINDOW_QUERY, (unsigned long)&q);
}

/*
 * NULL, an unmapped page, a PROT_NONE page, a kernel address, a struct
 * running off the end of readable memory at every 4-byte split, and a
 * struct in read-only memory (whole, and straddling a read/write and a
 * read-only page at every 8-byte split) for the answer the kernel writes
 * back: EFAULT each time, and nothing left behind (no fd, no window, no
 * job key).
 */
TEST_F(bnd, bad_pointers_efault)
{
	uint8_t *pages, *hole;
	unsigned int c, b, split;

	if (_metadata->skip)
		return;

	/* [rw][rw][ro][none] and a hole where a page was */
	pages = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	hole = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, PAGE));
	ASSERT_EQ(0, mprotect(pages + 3 * PAGE, PAGE, PROT_NONE));

	for (c = 0; c < ARRAY_SIZE(hfi_cmds); c++) {
		const size_t sz = hfi_cmds[c].size;
		void *const bad[] = {
			NULL, hole, hole + PAGE - 4, pages + 3 * PAGE,
			(void *)0xffff888000000000ull, (void *)-4096l,
			(void *)(1ul << 47),
		};
		long got;

		for (b = 0; b < ARRAY_SIZE(bad); b++) {
			got = run_cmd(self, c, bad[b]);
			EXPECT_EQ(-EFAULT, got)
				TH_LOG("%s at %p: got %s", hfi_cmds[c].name,
				       bad[b], errname(got));
			EXPECT_NOTHING_LEFT(&self->base, "%s at %p",
					    hfi_cmds[c].name, bad[b]);
		}

		/* readable, then PROT_NONE: split at every 4 bytes */
		for (split = 4; split < sz; split += 4) {
			uint8_t *a = pages + 3 * PAGE - split;

			ASSERT_EQ(0, mprotect(pages + 2 * PAGE, PAGE,
					      PROT_READ | PROT_WRITE));
			memcpy(a, valid_arg(self, c, sz), split);
			got = run_cmd(self, c, a);
			EXPECT_EQ(-EFAULT, got)
				TH_LOG("%s, %u bytes readable: got %s",
				       hfi_cmds[c].name, split, errname(got));
			EXPECT_NOTHING_LEFT(&self->base, "%s split %u",
					    hfi_cmds[c].name, split);
		}

		/* whole struct read-only: the answer cannot be written */
		ASSERT_EQ(0, mprotect(pages + 2 * PAGE, PAGE,
				      PROT_READ | PROT_WRITE));
		memcpy(pages + 2 * PAGE, valid_arg(self, c, sz), sz);
		ASSERT_EQ(0, mprotect(pages + 2 * PAGE, PAGE, PROT_READ));
		got = run_cmd(self, c, pages + 2 * PAGE);
		EXPECT_EQ(-EFAULT, got)
			TH_LOG("%s read-only: got %s", hfi_cmds[c].name,
			       errname(got));
		EXPECT_NOTHING_LEFT(&self->base, "%s read-only",
				    hfi_cmds[c].name);

		/* writable head, read-only tail, every 8-byte split */
		for (split = 8; split < sz; split += 8) {
			uint8_t *a = pages + 2 * PAGE - split;

			ASSERT_EQ(0, mprotect(pages + 2 * PAGE, PAGE,
					      PROT_READ | PROT_WRITE));
			memcpy(a, valid_arg(self, c, sz), sz);
			ASSERT_EQ(0, mprotect(pages + 2 * PAGE, PAGE,
					      PROT_READ));
			got = run_cmd(self, c, a);
			EXPECT_EQ(-EFAULT, got)
				TH_LOG("%s, %u bytes writable: got %s",
				       hfi_cmds[c].name, split, errname(got));
			EXPECT_NOTHING_LEFT(&self->base, "%s ro split %u",
					    hfi_cmds[c].name, split);
		}
	}

	/* poll-mode and named-window reservations into read-only memory */
	for (b = 0; b < 2; b++) {
		struct percs_window_reserve in = reserve_clean(self);
		long got;

		in.flags = b ? PERCS_WINDOW_F_POLL : 0;
		in.window = b ? 1 : 0;
		ASSERT_EQ(0, mprotect(pages + 2 * PAGE, PAGE,
				      PROT_READ | PROT_WRITE));
		memcpy(pages + 2 * PAGE, &in, sizeof(in));
		ASSERT_EQ(0, mprotect(pages + 2 * PAGE, PAGE, PROT_READ));
		got = sys_ioctl(self->hfd, PERCS_IOC_WINDOW_RESERVE,
				(unsigned long)(pages + 2 * PAGE));
		EXPECT_EQ(-EFAULT, got);
		if (got >= 0)
			close(got);
		EXPECT_NOTHING_LEFT(&self->base, "read-only reserve %u", b);
		/* the window index is free again */
		EXPECT_EQ(-ENOENT, query_window(self->hfd, in.window));
	}
	munmap(pages, 4 * PAGE);
}

/* ---- KICK flags, triggers through KICK / fsync / fdatasync ---- */

TEST_F(bnd, kick_flags)
{
	struct percs_window_reserve req;
	unsigned int mode, i, bit;
	int fd;

	if (_metadata->skip)
		return;

	for (mode = 0; mode < 2; mode++) {
		fd = pt_reserve_raw(self->hfd, mode ? PERCS_WINDOW_F_POLL : 0,
				    FIFO_4K, FIFO_4K, self->key,
				    PERCS_WINDOW_ANY, &req);
		ASSERT_LE(0, fd);
		for (i = 0; i < ARRAY_SIZE(bvals); i++) {
			unsigned long v = bvals[i].v;
			long want = v & ~(unsigned long)PERCS_KICK_F_ALL ?
				    -EINVAL : 0;
			long got = sys_ioctl(fd, PERCS_IOC_KICK, v);

			EXPECT_EQ(want, got)
				TH_LOG("%s-mode KICK %s: want %s got %s",
				       mode ? "poll" : "kick", bvals[i].name,
				       errname(want), errname(got));
		}
		for (bit = 0; bit < 64; bit++) {
			unsigned long v = 1ul << bit;
			long want = v & ~(unsigned long)PERCS_KICK_F_ALL ?
				    -EINVAL : 0;

			EXPECT_EQ(want, sys_ioctl(fd, PERCS_IOC_KICK, v))
				TH_LOG("KICK bit %u", bit);
		}
		for (i = 0; i <= PERCS_KICK_F_ALL; i++)
			EXPECT_EQ(0, sys_ioctl(fd, PERCS_IOC_KICK, i));
		/* nothing pending: the flags alone raise no error */
		close(fd);
	}
	EXPECT_NOTHING_LEFT(&self->base, "kick flags");
}

/* How a doorbell index reaches the engine. */
enum entry { BY_KICK, BY_FSYNC, BY_FDATASYNC, NR_ENTRIES };
static const char *const entry_name[] = { "KICK", "fsync", "fdatasync" };

static long ring_doorbell(int fd, enum entry e, unsigned long kick_flags)
{
	switch (e) {
	case BY_KICK:
		return sys_ioctl(fd, PERCS_IOC_KICK, kick_flags);
	case BY_FSYNC:
		return fsync(fd) ? -errno : 0;
	default:
		return fdatasync(fd) ? -errno : 0;
	}
}

/*
 * send_tail and imm_tail of a fresh window (zero-filled FIFO and slots,
 * 32 units and 32 slots) set to every boundary value, then the doorbell
 * rung by KICK, fsync and fdatasync, in kick and poll mode.  A value the
 * ring can hold (0..32 past the head) is consumed: the zeroed entries are
 * malformed and complete with -EINVAL in the CQ; anything else is ignored
 * with PERCS_STATUS_ERROR / error EINVAL and the rung call answers EINVAL
 * (kick mode; a poll-mode kick just wakes the engine and answers 0).
 */
TEST_F_TIMEOUT(bnd, doorbell_indices, 120)
{
	const uint64_t units = FIFO_4K / PERCS_FLIT_SIZE;
	const uint64_t extra[] = {
		units - 1, units, units + 1, 2 * units, PERCS_IMM_SLOTS + 1,
		(uint64_t)-1 - units, (uint64_t)-(int64_t)units,
	};
	unsigned int mode, e, which, i, n = ARRAY_SIZE(bvals) +
					       ARRAY_SIZE(extra);

	if (_metadata->skip)
		return;

	for (mode = 0; mode < 2; mode++)
	for (which = 0; which < 2; which++)	/* send_tail, imm_tail */
	for (e = 0; e < NR_ENTRIES; e++)
	for (i = 0; i < n; i++) {
		const bool poll = mode;
		const uint64_t v = i < ARRAY_SIZE(bvals) ? bvals[i].v :
				   extra[i - ARRAY_SIZE(bvals)];
		const bool ok = v <= (which ? PERCS_IMM_SLOTS : units);
		const volatile struct percs_status *st;
		volatile struct percs_doorbell *db;
		struct pt_rawwin rw;
		uint64_t deadline;
		long got, want;

		ASSERT_EQ(0, pt_rawwin_open(&rw, self->hfd,
					    poll ? PERCS_WINDOW_F_POLL : 0,
					    FIFO_4K, FIFO_4K, self->key));
		db = pt_rawwin_db(&rw);
		st = pt_rawwin_st(&rw);
		if (which)
			db->imm_tail = v;
		else
			db->send_tail = v;
		got = ring_doorbell(rw.fd, e, which ? PERCS_KICK_F_IMM :
						       PERCS_KICK_F_SEND);
		if (poll || e != BY_KICK)
			want = ok || poll ? 0 : -EINVAL;
		else
			want = ok ? (long)(v ? (which ? v : 1) : 0) : -EINVAL;
		EXPECT_EQ(want, got)
			TH_LOG("%s-mode %s = %#llx by %s: want %s got %s",
			       poll ? "poll" : "kick",
			       which ? "imm_tail" : "send_tail",
			       (unsigned long long)v, entry_name[e],
			       errname(want), errname(got));
		/* the engine's view, once it has run (poll mode: soon) */
		deadline = pt_now_ms() + PT_TIMEOUT_MS;
		for (;;) {
			uint64_t head = which ? st->imm_head : st->send_head;
			bool done = ok ? head == v :
				    !!(st->flags & PERCS_STATUS_ERROR);

			if (done || pt_now_ms() > deadline)
				break;
			usleep(200);
		}
		if (ok) {
			EXPECT_EQ(v, which ? st->imm_head : st->send_head);
			EXPECT_FALSE(st->flags & PERCS_STATUS_ERROR);
			/* every zeroed entry completed with -EINVAL */
			EXPECT_EQ(which ? v : !!v, st->send_errors);
		} else {
			EXPECT_TRUE(st->flags & PERCS_STATUS_ERROR)
				TH_LOG("%s = %#llx: no error flag",
				       which ? "imm_tail" : "send_tail",
				       (unsigned long long)v);
			EXPECT_EQ(EINVAL, st->error);
			EXPECT_EQ(0, which ? st->imm_head : st->send_head);
			EXPECT_EQ(0, st->send_errors);
		}
		pt_rawwin_close(&rw);
		EXPECT_NOTHING_LEFT(&self->base, "index %#llx",
				    (unsigned long long)v);
		if (!_metadata->passed)
			return;
	}
}

/*
 * cq_head is read only to find room for a completion: a value beyond the
 * tail (or behind it by more than the ring) makes the queue look full:
 * entries are dropped and counted, never written out of the ring.
 */
TEST_F(bnd, cq_head_values)
{
	unsigned int i;

	if (_metadata->skip)
		return;

	for (i = 0; i < ARRAY_SIZE(bvals); i++) {
		const uint64_t v = bvals[i].v;
		const volatile struct percs_status *st;
		volatile struct percs_doorbell *db;
		struct pt_rawwin rw;
		long got;

		ASSERT_EQ(0, pt_rawwin_open(&rw, self->hfd, 0, FIFO_4K,
					    FIFO_4K, self->key));
		db = pt_rawwin_db(&rw);
		st = pt_rawwin_st(&rw);
		db->cq_head = v;
		/* one malformed (zeroed) slot: a completion with -EINVAL */
		db->imm_tail = 1;
		got = sys_ioctl(rw.fd, PERCS_IOC_KICK, PERCS_KICK_F_IMM);
		EXPECT_EQ(1, got);
		EXPECT_EQ(1, st->send_errors);
		/* cq_tail 0: room iff 0 - v < 256 (mod 2^64), i.e. v == 0 */
		if (v == 0) {
			EXPECT_EQ(1, st->cq_tail);
			EXPECT_EQ(0, st->cq_overflows);
		} else if ((uint64_t)(0 - v) < PERCS_CQ_ENTRIES) {
			EXPECT_EQ(1, st->cq_tail);
		} else {
			EXPECT_EQ(0, st->cq_tail)
				TH_LOG("cq_head %s", bvals[i].name);
			EXPECT_EQ(1, st->cq_overflows);
			EXPECT_TRUE(st->flags & PERCS_STATUS_CQ_OVERFLOW);
		}
		pt_rawwin_close(&rw);
	}
	EXPECT_NOTHING_LEFT(&self->base, "cq_head values");
}

/* ---- mmap offsets and lengths ---- */

#define TASK_SIZE_47	((1ull << 47) - PAGE)

/*
 * mmap(2) of the window fd with @len at @off: the VFS checks come first
 * (len 0, unaligned offset, a length that wraps when rounded up, an offset
 * + length beyond what the file's offsets can address, a length beyond the
 * address space), then the module's (the offset must be a region key, the
 * length the region's once rounded up to pages, MAP_SHARED, no write
 * access to a read-only region).
 */
static long mmap_expect(const struct percs_window_reserve *req, uint64_t off,
			uint64_t len, int prot, int flags)
{
	uint64_t alen = (len + PAGE - 1) & ~(PAGE - 1);
	uint64_t pgoff = off >> 12;
	unsigned int r;

	if (!len)
		return -EINVAL;
	if (off & (PAGE - 1))
		return -EINVAL;
	if (!alen)
		return -ENOMEM;		/* rounding wrapped */
	if (pgoff + (alen >> 12) < pgoff)
		return -EOVERFLOW;
	if (alen > TASK_SIZE_47)
		return -ENOMEM;		/* no room in the address space */
	if (pgoff > (~0ull - alen) >> 12)
		return -EOVERFLOW;	/* file_mmap_ok() */
	for (r = 0; r < PERCS_REGION_MAX; r++)
		if ((req->regions[r].flags & PERCS_REGION_F_VALID) &&
		    req->regions[r].offset == off)
			break;
	if (r == PERCS_REGION_MAX)
		return -EINVAL;
	if (alen != req->regions[r].length)
		return -EINVAL;
	if (!(flags & MAP_SHARED))
		return -EINVAL;
	if ((prot & PROT_WRITE) &&
	    !(req->regions[r].flags & PERCS_REGION_F_WRITABLE))
		return -EPERM;
	return 0;
}

TEST_F_TIMEOUT(bnd, mmap_offsets_lengths, 120)
{
	struct percs_window_reserve req;
	uint64_t offs[ARRAY_SIZE(bvals) + 6 * PERCS_REGION_MAX];
	uint64_t lens[ARRAY_SIZE(bvals) + 4];
	unsigned int no = 0, nl, o, l, c, bad = 0, calls = 0, ok = 0;
	unsigned int n_inval = 0, n_nomem = 0, n_overflow = 0, n_perm = 0;
	/* prot and flags combinations tried at the region keys */
	static const struct { int prot, flags; const char *name; } pf[] = {
		{ PROT_READ, MAP_SHARED, "R shared" },
		{ PROT_READ | PROT_WRITE, MAP_SHARED, "RW shared" },
		{ PROT_WRITE, MAP_SHARED, "W shared" },
		{ PROT_NONE, MAP_SHARED, "NONE shared" },
		{ PROT_READ, MAP_PRIVATE, "R private" },
		{ PROT_READ | PROT_WRITE, MAP_PRIVATE, "RW private" },
	};
	struct pt_live base, now;
	int wfd;

	if (_metadata->skip)
		return;
	/* 8 KiB FIFOs: two-page regions next to one-page ones */
	wfd = pt_reserve_raw(self->hfd, 0, 2 * PAGE, 2 * PAGE, self->key,
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	ASSERT_EQ(0, pt_snap_take(&self->base));
	ASSERT_EQ(0, pt_read_live(&base));
	for (o = 0; o < ARRAY_SIZE(bvals); o++)
		offs[no++] = bvals[o].v;
	for (c = 0; c < PERCS_REGION_MAX; c++) {
		/* region 7 is invalid: its would-be key too */
		uint64_t key = (uint64_t)(c + 1) << 28;

		offs[no++] = key;
		offs[no++] = key + PAGE;
		offs[no++] = key - PAGE;
		offs[no++] = key + 1;
		offs[no++] = key | (1ull << 40);
		offs[no++] = -key;
	}
	for (nl = 0; nl < ARRAY_SIZE(bvals); nl++)
		lens[nl] = bvals[nl].v;
	lens[nl++] = 3 * PAGE - 1;
	lens[nl++] = 3 * PAGE;
	lens[nl++] = 2 * PAGE - 4;
	lens[nl++] = TASK_SIZE_47 + PAGE;

	for (o = 0; o < no; o++) {
		bool key = !(offs[o] & ((1ull << 28) - 1)) &&
			   offs[o] <= (uint64_t)PERCS_REGION_MAX << 28;

		for (l = 0; l < nl; l++)
		for (c = 0; c < (key ? ARRAY_SIZE(pf) : 2); c++) {
			long want = mmap_expect(&req, offs[o], lens[l],
						pf[c].prot, pf[c].flags);
			void *m = mmap(NULL, lens[l], pf[c].prot, pf[c].flags,
				       wfd, (off_t)offs[o]);
			long got = m == MAP_FAILED ? -errno : 0;

			calls++;
			n_inval += want == -EINVAL;
			n_nomem += want == -ENOMEM;
			n_overflow += want == -EOVERFLOW;
			n_perm += want == -EPERM;
			/*
			 * A private writable mapping is charged against the
			 * commit limit before the driver sees it: a few GiB
			 * are refused with ENOMEM on a small VM.
			 */
			if (want == -EINVAL && got == -ENOMEM &&
			    (pf[c].flags & MAP_PRIVATE) &&
			    (pf[c].prot & PROT_WRITE) && lens[l] >= (1ull << 30))
				want = -ENOMEM;
			if (got != want && bad++ < 20)
				TH_LOG("mmap off %#llx len %#llx %s: want %s got %s",
				       (unsigned long long)offs[o],
				       (unsigned long long)lens[l], pf[c].name,
				       errname(want), errname(got));
			if (got == 0) {
				ok++;
				/* an unaligned length unmaps as it mapped */
				if (munmap(m, lens[l]) && bad++ < 20)
					TH_LOG("munmap len %#llx: %s",
					       (unsigned long long)lens[l],
					       strerror(errno));
			}
		}
		/* no mapping, window or fd left by the refused ones */
		ASSERT_EQ(0, pt_read_live(&now));
		EXPECT_EQ(base.mappings, now.mappings)
			TH_LOG("after offset %#llx", (unsigned long long)offs[o]);
		EXPECT_EQ(base.windows, now.windows);
	}
	TH_LOG("%u mmap calls, %u mapped, %u unexpected; expected EINVAL %u, "
	       "ENOMEM %u, EOVERFLOW %u, EPERM %u", calls, ok, bad, n_inval,
	       n_nomem, n_overflow, n_perm);
	EXPECT_EQ(0, bad);
	/* every kind of answer was tried */
	EXPECT_LT(0, ok);
	EXPECT_LT(0, n_inval);
	EXPECT_LT(0, n_nomem);
	EXPECT_LT(0, n_overflow);
	EXPECT_LT(0, n_perm);
	EXPECT_NOTHING_LEFT(&self->base, "the mmap matrix");
	close(wfd);
}

/*
 * munmap of part of a region (any page-aligned sub-range) is refused,
 * whatever the length's alignment; the whole region with an unaligned
 * length (rounded up) is fine.
 */
TEST_F(bnd, munmap_ranges)
{
	struct percs_window_reserve req;
	const struct percs_region *reg;
	uint8_t *m;
	int wfd;

	if (_metadata->skip)
		return;

	/* a 16 KiB send FIFO: four pages */
	wfd = pt_reserve_raw(self->hfd, 0, 4 * PAGE, FIFO_4K, self->key,
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	reg = &req.regions[PERCS_REGION_SEND_FIFO];
	m = mmap(NULL, reg->length, PROT_READ | PROT_WRITE, MAP_SHARED, wfd,
		 (off_t)reg->offset);
	ASSERT_NE(MAP_FAILED, m);
	if (m) {
		/* the last one takes the whole region */
		const struct { size_t start, len; int want; } t[] = {
			{ 0, PAGE, EINVAL }, { 0, 1, EINVAL },
			{ 0, 3 * PAGE, EINVAL }, { PAGE, PAGE, EINVAL },
			{ PAGE, 3 * PAGE, EINVAL }, { 3 * PAGE, PAGE, EINVAL },
			{ 3 * PAGE, 1, EINVAL }, { 1, PAGE, EINVAL },
			{ 0, 0, EINVAL }, { 0, 3 * PAGE + 1, 0 },
		};
		unsigned int i;

		for (i = 0; i < ARRAY_SIZE(t); i++) {
			int ret = munmap(m + t[i].start, t[i].len);
			int err = ret ? errno : 0;

			EXPECT_EQ(t[i].want, err)
				TH_LOG("munmap +%zu len %zu: got %s",
				       t[i].start, t[i].len, strerror(err));
			if (!ret)
				break;	/* the whole region went */
			m[t[i].start] = 1;	/* still mapped */
		}
	}
	close(wfd);
	EXPECT_NOTHING_LEFT(&self->base, "munmap ranges");
}

TEST_HARNESS_MAIN
