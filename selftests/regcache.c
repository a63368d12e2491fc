// SPDX-License-Identifier: GPL-2.0
/*
 * regcache: registrations that follow the address space
 * (PERCS_MR_F_INVALIDATE) and the registration cache on top of them
 * (percs_mr_cache_*()).
 *
 * The attack a cache invites: register a buffer through it, free the
 * buffer, map new memory at the same address and send again.  A cached
 * registration of the old pages would send the old bytes.  Each test here
 * changes the mapping one way (munmap + mmap, mremap, MADV_DONTNEED),
 * then has another window RDMA-read the range through the cache: it must
 * read the new bytes, the old handle must be refused (ENOENT) and the old
 * pages unpinned (the debugfs live counters).  fork must not end a
 * registration (the parent keeps its pages); a bad flag is refused; the
 * cache keeps to its bound.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE		4096UL
#define BUF_LEN		(16 * PAGE)
#define READER_LEN	(16 * PAGE)

/* Map anonymous memory at @at exactly (NULL: anywhere), filled from @seed. */
static uint8_t *map_filled(void *at, size_t len, uint64_t seed)
{
	uint8_t *p = mmap(at, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS |
			  (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED || (at && p != at))
		return NULL;
	pt_fill(p, len, seed);
	return p;
}

static uint64_t invalidated(struct percs_window *w)
{
	return __atomic_load_n(&percs_window_status(w)->mr_invalidated,
			       __ATOMIC_ACQUIRE);
}

/* Is @handle among the reports of @w since the count read @from? */
static bool reported(struct percs_window *w, uint64_t from, uint32_t handle)
{
	const volatile struct percs_status *st = percs_window_status(w);
	uint64_t n = invalidated(w), i;

	for (i = from; i < n; i++)
		if (st->mr_inval_ring[i % PERCS_MR_INVAL_RING] == handle)
			return true;
	return false;
}

FIXTURE(regcache) {
	uint32_t key;
	struct pt_side rd;	/* the reader: RDMA-reads into rd.buf */
	struct pt_side src;	/* the source window; its memory is ours */
	struct percs_mr_cache *c;
	long regs0, pages0;	/* the fixture's own registrations */
	bool no_notify;		/* EOPNOTSUPP: the kernel cannot */
};

/* The harness runs the test after a SKIP in the setup: skip it here. */
#define REQUIRE_NOTIFY()						\
	do {								\
		if (self->no_notify)					\
			SKIP(return, "kernel without MMU notifiers");	\
	} while (0)

FIXTURE_SETUP(regcache)
{
	uint32_t h;
	int ret;

	PT_REQUIRE_DEVICE();
	self->key = pt_new_key();
	ASSERT_EQ(0, pt_side_open(&self->rd, 0, 0, self->key, READER_LEN,
				  PERCS_ACCESS_LOCAL_WRITE, PT_SIDE_PREFAULT));
	ASSERT_EQ(0, pt_side_open(&self->src, 1, 1, self->key, PAGE,
				  PERCS_ACCESS_REMOTE_READ, PT_SIDE_PREFAULT));
	ASSERT_EQ(0, percs_mr_cache_new(self->src.w, 0, 0, &self->c));
	/* A kernel without MMU notifiers (the debug kernels) cannot. */
	ret = percs_mr_reg_flags(self->src.w, self->src.buf, PAGE, 0,
				 PERCS_MR_F_INVALIDATE, &h);
	if (ret == -EOPNOTSUPP) {
		self->no_notify = true;
		SKIP(return, "kernel without MMU notifiers: EOPNOTSUPP");
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, percs_mr_dereg(self->src.w, h));
	/* The probe's pages go after a grace period: only the sides' left. */
	ASSERT_TRUE(pt_wait_mrs(2, READER_LEN / PAGE + 1, PT_TIMEOUT_MS));
	self->regs0 = pt_live_field("registrations");
	self->pages0 = pt_live_field("pinned_pages");
}

FIXTURE_TEARDOWN(regcache)
{
	percs_mr_cache_free(self->c);
	pt_side_close(&self->rd);
	pt_side_close(&self->src);
	EXPECT_TRUE(pt_wait_mrs(0, 0, PT_TIMEOUT_MS));
	ASSERT_LIVE_ZERO();
}

/*
 * The reader reads @len bytes at @p through @handle of the source window.
 * Return: the completion's result (0, or -errno).
 */
static int read_from(struct __test_metadata *_metadata,
		     FIXTURE_DATA(regcache) *self, uint32_t handle,
		     const void *p, size_t len)
{
	struct percs_cqe c;

	memset(self->rd.buf, 0xee, len);
	if (percs_rdma_read(self->rd.w, &self->src.addr, handle,
			    (uintptr_t)p, self->rd.mr, self->rd.buf, len, 0,
			    7))
		return -EIO;
	if (pt_cq_wait(self->rd.w, &c, PT_TIMEOUT_MS) != 1)
		return -ETIMEDOUT;
	EXPECT_EQ(7, c.user_data);
	return c.res;
}

/* Send @p through the cache; the reader must see exactly @seed's bytes. */
static uint32_t send_checked(struct __test_metadata *_metadata,
			     FIXTURE_DATA(regcache) *self, const uint8_t *p,
			     size_t len, uint64_t seed)
{
	uint8_t *want = malloc(len);
	uint32_t h = 0;

	if (!want)
		return 0;
	pt_fill(want, len, seed);
	EXPECT_EQ(0, percs_mr_cache_get(self->c, p, len,
					PERCS_ACCESS_REMOTE_READ, &h));
	EXPECT_EQ(0, read_from(_metadata, self, h, p, len));
	EXPECT_EQ(0, memcmp(self->rd.buf, want, len));
	EXPECT_EQ(0, percs_mr_cache_put(self->c, h));
	free(want);
	return h;
}

static struct percs_mr_cache_stats stats(FIXTURE_DATA(regcache) *self)
{
	struct percs_mr_cache_stats st;

	memset(&st, 0, sizeof(st));
	percs_mr_cache_stats(self->c, &st);
	return st;
}

/* A second send of the same buffer reuses the registration. */
TEST_F(regcache, reuse_hits)
{
	REQUIRE_NOTIFY();
	uint8_t *p = map_filled(NULL, BUF_LEN, 1);
	uint32_t h1, h2;

	ASSERT_NE(NULL, p);
	h1 = send_checked(_metadata, self, p, BUF_LEN, 1);
	pt_fill(p, BUF_LEN, 2);	/* same pages, new bytes */
	h2 = send_checked(_metadata, self, p, BUF_LEN, 2);
	EXPECT_EQ(h1, h2);
	EXPECT_EQ(1, stats(self).hits);
	EXPECT_EQ(1, stats(self).misses);
	/* A part of it hits too. */
	ASSERT_EQ(0, percs_mr_cache_get(self->c, p + 100, 5000,
					PERCS_ACCESS_REMOTE_READ, &h2));
	EXPECT_EQ(h1, h2);
	EXPECT_EQ(0, percs_mr_cache_put(self->c, h2));
	EXPECT_EQ(self->regs0 + 1, pt_live_field("registrations"));
	munmap(p, BUF_LEN);
}

/*
 * munmap, then new memory at the same address: the new bytes go.  This is
 * also what free() then malloc() of a large block does in glibc (mmap'd
 * chunks); the selftests run under ASan, whose allocator never hands an
 * address back so soon, so it is not tried through malloc here.
 */
TEST_F(regcache, munmap_mmap_same_address)
{
	REQUIRE_NOTIFY();
	uint8_t *p = map_filled(NULL, BUF_LEN, 1);
	uint64_t inv0;
	uint32_t h1, h2;

	ASSERT_NE(NULL, p);
	h1 = send_checked(_metadata, self, p, BUF_LEN, 1);
	EXPECT_EQ(self->pages0 + BUF_LEN / PAGE,
		  pt_live_field("pinned_pages"));
	inv0 = invalidated(self->src.w);
	ASSERT_EQ(0, munmap(p, BUF_LEN));
	/* Reported before munmap returned. */
	EXPECT_EQ(inv0 + 1, invalidated(self->src.w));
	EXPECT_TRUE(reported(self->src.w, inv0, h1));
	/* The old pages go, and the old handle is refused. */
	EXPECT_TRUE(pt_wait_mrs(self->regs0, self->pages0, PT_TIMEOUT_MS));
	ASSERT_EQ(p, map_filled(p, BUF_LEN, 2));
	EXPECT_EQ(-ENOENT, read_from(_metadata, self, h1, p, BUF_LEN));
	h2 = send_checked(_metadata, self, p, BUF_LEN, 2);
	EXPECT_NE(h1, h2);
	EXPECT_EQ(1, stats(self).invalidated);
	EXPECT_EQ(0, stats(self).hits);
	/* Deregistering an ended handle: ENOENT. */
	EXPECT_EQ(-ENOENT, percs_mr_dereg(self->src.w, h1));
	munmap(p, BUF_LEN);
}

/* mremap moves the pages away; new memory at the old address. */
TEST_F(regcache, mremap_then_mmap)
{
	REQUIRE_NOTIFY();
	uint8_t *p = map_filled(NULL, BUF_LEN, 1), *far, *moved;
	uint64_t inv0;
	uint32_t h1;

	ASSERT_NE(NULL, p);
	far = mmap(NULL, BUF_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	ASSERT_NE(MAP_FAILED, far);
	h1 = send_checked(_metadata, self, p, BUF_LEN, 1);
	inv0 = invalidated(self->src.w);
	moved = mremap(p, BUF_LEN, BUF_LEN, MREMAP_MAYMOVE | MREMAP_FIXED,
		       far);
	ASSERT_EQ(far, moved);
	EXPECT_TRUE(reported(self->src.w, inv0, h1));
	ASSERT_EQ(p, map_filled(p, BUF_LEN, 2));
	EXPECT_NE(h1, send_checked(_metadata, self, p, BUF_LEN, 2));
	/* The moved pages kept the old bytes: a new registration finds them. */
	EXPECT_NE(0, send_checked(_metadata, self, moved, BUF_LEN, 1));
	munmap(p, BUF_LEN);
	munmap(moved, BUF_LEN);
}

/* MADV_DONTNEED drops the pages: the next touch maps new ones. */
TEST_F(regcache, madvise_dontneed)
{
	REQUIRE_NOTIFY();
	uint8_t *p = map_filled(NULL, BUF_LEN, 1);
	uint64_t inv0;
	uint32_t h1;

	ASSERT_NE(NULL, p);
	h1 = send_checked(_metadata, self, p, BUF_LEN, 1);
	inv0 = invalidated(self->src.w);
	ASSERT_EQ(0, madvise(p, BUF_LEN, MADV_DONTNEED));
	EXPECT_TRUE(reported(self->src.w, inv0, h1));
	pt_fill(p, BUF_LEN, 2);
	EXPECT_NE(h1, send_checked(_metadata, self, p, BUF_LEN, 2));
	EXPECT_TRUE(pt_wait_mrs(self->regs0 + 1, self->pages0 + BUF_LEN / PAGE,
				PT_TIMEOUT_MS));
	munmap(p, BUF_LEN);
}

/*
 * fork write-protects the parent's private pages; pinned ones are copied
 * for the child instead, so the parent keeps its pages: no report, the
 * registration stays, and the parent's new bytes are what is read.
 */
TEST_F(regcache, fork_keeps_registration)
{
	REQUIRE_NOTIFY();
	uint8_t *p = map_filled(NULL, BUF_LEN, 1);
	uint64_t inv0;
	uint32_t h1;
	pid_t pid;
	int status;

	ASSERT_NE(NULL, p);
	h1 = send_checked(_metadata, self, p, BUF_LEN, 1);
	inv0 = invalidated(self->src.w);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pt_fill(p, BUF_LEN, 3);	/* the child's copy only */
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(inv0, invalidated(self->src.w));
	pt_fill(p, BUF_LEN, 2);
	EXPECT_EQ(h1, send_checked(_metadata, self, p, BUF_LEN, 2));
	EXPECT_EQ(1, stats(self).hits);
	munmap(p, BUF_LEN);
}

/* Unknown flags are refused; the flag's registration is otherwise normal. */
TEST_F(regcache, bad_flags)
{
	REQUIRE_NOTIFY();
	uint8_t *p = map_filled(NULL, PAGE, 1);
	uint32_t h = 0;

	ASSERT_NE(NULL, p);
	EXPECT_EQ(-EINVAL, percs_mr_reg_flags(self->src.w, p, PAGE, 0,
					      PERCS_MR_F_INVALIDATE << 1, &h));
	EXPECT_EQ(-EINVAL, percs_mr_reg_flags(self->src.w, p, PAGE, 0,
					      ~0u, &h));
	EXPECT_EQ(self->regs0, pt_live_field("registrations"));
	EXPECT_EQ(0, percs_mr_reg_flags(self->src.w, p, PAGE,
					PERCS_ACCESS_REMOTE_READ,
					PERCS_MR_F_INVALIDATE, &h));
	EXPECT_EQ(0, percs_mr_dereg(self->src.w, h));
	/* Deregistered, then unmapped: nothing reported. */
	EXPECT_EQ(0, invalidated(self->src.w));
	EXPECT_EQ(-EINVAL, percs_mr_cache_get(self->c, p, 0, 0, &h));
	EXPECT_EQ(-EINVAL, percs_mr_cache_get(self->c, p, PAGE, 1u << 31,
					      &h));
	EXPECT_EQ(-EINVAL, percs_mr_cache_get(NULL, p, PAGE, 0, &h));
	EXPECT_EQ(-ENOENT, percs_mr_cache_put(self->c, 0x12345));
	munmap(p, PAGE);
}

/* The bound: the least recently used goes; held ones are never evicted. */
TEST_F(regcache, bound_and_eviction)
{
	REQUIRE_NOTIFY();
	struct percs_mr_cache *small;
	uint8_t *p = map_filled(NULL, 6 * PAGE, 1);
	uint32_t h[6];
	int i;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, percs_mr_cache_new(self->src.w, 4, 0, &small));
	/* All held: the fifth and sixth cannot evict, they go uncached. */
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, percs_mr_cache_get(small, p + i * PAGE, PAGE,
						PERCS_ACCESS_REMOTE_READ,
						&h[i]));
	{
		struct percs_mr_cache_stats st;

		percs_mr_cache_stats(small, &st);
		EXPECT_EQ(4, st.entries);
		EXPECT_EQ(2, st.uncached);
		EXPECT_EQ(0, st.evictions);
	}
	EXPECT_EQ(self->regs0 + 6, pt_live_field("registrations"));
	for (i = 0; i < 6; i++)
		EXPECT_EQ(0, percs_mr_cache_put(small, h[i]));
	/* Uncached ones went at their put; four stay cached. */
	EXPECT_TRUE(pt_wait_mrs(self->regs0 + 4, self->pages0 + 4,
				PT_TIMEOUT_MS));
	/* Page 1 used again, then a new page evicts the oldest (page 0). */
	ASSERT_EQ(0, percs_mr_cache_get(small, p + PAGE, 8,
					PERCS_ACCESS_REMOTE_READ, &h[1]));
	ASSERT_EQ(0, percs_mr_cache_put(small, h[1]));
	ASSERT_EQ(0, percs_mr_cache_get(small, p + 4 * PAGE, 8,
					PERCS_ACCESS_REMOTE_READ, &h[4]));
	ASSERT_EQ(0, percs_mr_cache_put(small, h[4]));
	EXPECT_EQ(-ENOENT, percs_mr_dereg(self->src.w, h[0]));
	EXPECT_TRUE(pt_wait_mrs(self->regs0 + 4, self->pages0 + 4,
				PT_TIMEOUT_MS));
	percs_mr_cache_free(small);
	EXPECT_TRUE(pt_wait_mrs(self->regs0, self->pages0, PT_TIMEOUT_MS));
	munmap(p, 6 * PAGE);
}

/* More reports than the ring holds: the cache forgets everything. */
TEST_F(regcache, ring_overrun_forgets_all)
{
	REQUIRE_NOTIFY();
	const int n = PERCS_MR_INVAL_RING + 8;
	uint8_t *keep = map_filled(NULL, PAGE, 1);
	uint8_t *p = map_filled(NULL, n * PAGE, 2);
	uint32_t h, h2;
	int i;

	ASSERT_NE(NULL, keep);
	ASSERT_NE(NULL, p);
	h = send_checked(_metadata, self, keep, PAGE, 1);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, percs_mr_reg_flags(self->src.w, p + i * PAGE,
						PAGE, PERCS_ACCESS_REMOTE_READ,
						PERCS_MR_F_INVALIDATE, &h2));
	}
	ASSERT_EQ(0, munmap(p, n * PAGE));
	EXPECT_EQ((uint64_t)n, invalidated(self->src.w));
	/* keep's registration is live, but the cache cannot know: it re-registers. */
	EXPECT_NE(h, send_checked(_metadata, self, keep, PAGE, 1));
	EXPECT_EQ(1, stats(self).overruns);
	EXPECT_TRUE(pt_wait_mrs(self->regs0 + 1, self->pages0 + 1,
				PT_TIMEOUT_MS));
	munmap(keep, PAGE);
}

/* The window closed with registrations ended and live: nothing left. */
TEST_F(regcache, window_release_with_ended)
{
	REQUIRE_NOTIFY();
	uint8_t *p = map_filled(NULL, BUF_LEN, 1);
	uint32_t h;

	ASSERT_NE(NULL, p);
	send_checked(_metadata, self, p, BUF_LEN, 1);
	ASSERT_EQ(0, percs_mr_cache_get(self->c, p + PAGE, PAGE,
					PERCS_ACCESS_REMOTE_READ, &h));
	ASSERT_EQ(0, percs_mr_cache_put(self->c, h));
	ASSERT_EQ(0, percs_mr_reg_flags(self->src.w, p, BUF_LEN, 0,
					PERCS_MR_F_INVALIDATE, &h));
	ASSERT_EQ(0, munmap(p, BUF_LEN));
	percs_mr_cache_free(self->c);
	self->c = NULL;
	percs_window_release(self->src.w);
	self->src.w = NULL;
	EXPECT_TRUE(pt_wait_mrs(1, READER_LEN / PAGE, PT_TIMEOUT_MS));
}

TEST_HARNESS_MAIN
