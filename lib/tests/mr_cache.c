// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the registration cache against the fake NMMU, the
 * kernel's reports of ended registrations written into the fake status
 * page by the test.
 */
#include <sys/mman.h>

#include "unit.h"

#define PG 4096u

/* One test's window, status page (writable: the kernel's side) and buffer. */
struct cache_fix {
	char dir[sizeof("/tmp/percs-unit-XXXXXX")];
	struct percs_hfi *hfi;
	struct percs_window *w;
	struct percs_status *st;
	uint8_t *buf;
};

/* Reserve a window on a fresh fake HFI and allocate @pages of buffer. */
static bool fix_setup(struct cache_fix *f, unsigned int pages)
{
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
	};

	memset(f, 0, sizeof(*f));
	strcpy(f->dir, "/tmp/percs-unit-XXXXXX");
	memset(R.mr_live, 0, sizeof(R.mr_live));
	R.mr_errno = 0;
	f->buf = aligned_alloc(PG, pages * PG);
	f->hfi = fake_hfi_open(f->dir);
	if (!f->buf || !f->hfi || percs_window_reserve(f->hfi, &attr, &f->w))
		return false;
	/* The kernel's side of the page: the test writes the reports. */
	f->st = (struct percs_status *)percs_window_status(f->w);
	return !mprotect(f->st, PG, PROT_READ | PROT_WRITE);
}

static void fix_teardown(struct cache_fix *f)
{
	if (f->w)
		percs_window_release(f->w);
	if (f->hfi)
		percs_hfi_close(f->hfi);
	free(f->buf);
}

/* The kernel ended @handle: report it as nmmu_notify.c does. */
static void report(struct percs_status *st, uint32_t handle)
{
	uint32_t slot = handle & 0xffff;

	st->mr_inval_ring[st->mr_invalidated % PERCS_MR_INVAL_RING] = handle;
	__atomic_store_n(&st->mr_invalidated, st->mr_invalidated + 1,
			 __ATOMIC_RELEASE);
	if (slot < 8 && R.mr_live[slot] == handle)
		R.mr_live[slot] = 0;
}

static struct percs_mr_cache_stats stats_of(struct percs_mr_cache *c)
{
	struct percs_mr_cache_stats s;

	memset(&s, 0xff, sizeof(s));
	CHECK_EQ(percs_mr_cache_stats(c, &s), 0);
	return s;
}

/* Hits inside a registration, whole pages registered, rights respected. */
static void test_cache_hits(void)
{
	struct cache_fix f;
	struct percs_mr_cache *c = NULL;
	uint32_t h1 = 0, h2 = 0, h3 = 0;
	int calls;

	REQUIRE(fix_setup(&f, 4));
	REQUIRE(percs_mr_cache_new(f.w, 0, 0, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, f.buf + 10, 100, PERCS_ACCESS_REMOTE_READ,
				    &h1), 0);
	CHECK_EQ(R.mr_seen.flags, PERCS_MR_F_INVALIDATE);
	CHECK_EQ(R.mr_seen.addr, (uintptr_t)f.buf);
	CHECK_EQ(R.mr_seen.length, PG);
	calls = R.mr_calls;
	CHECK_EQ(percs_mr_cache_get(c, f.buf + 200, 3000,
				    PERCS_ACCESS_REMOTE_READ, &h2), 0);
	CHECK_EQ(h2, h1);
	CHECK_EQ(R.mr_calls, calls);		/* no system call */
	/* Another right: another registration. */
	CHECK_EQ(percs_mr_cache_get(c, f.buf + 10, 100, PERCS_ACCESS_LOCAL_WRITE,
				    &h3), 0);
	CHECK(h3 != h1);
	CHECK_EQ(stats_of(c).hits, 1);
	CHECK_EQ(stats_of(c).misses, 2);
	CHECK_EQ(stats_of(c).entries, 2);
	CHECK_EQ(stats_of(c).bytes, 2 * PG);
	CHECK_EQ(percs_mr_cache_put(c, h1), 0);
	CHECK_EQ(percs_mr_cache_put(c, h2), 0);
	CHECK_EQ(percs_mr_cache_put(c, h3), 0);
	CHECK_EQ(R.mr_calls, calls + 1);	/* puts keep them */
	CHECK(R.mr_live[h1 & 0xffff] == h1);
	percs_mr_cache_free(c);
	CHECK(R.mr_live[h1 & 0xffff] != h1);	/* free deregisters */
	CHECK(R.mr_live[h3 & 0xffff] != h3);
	fix_teardown(&f);
}

/* A reported handle is forgotten: the next lookup registers again. */
static void test_cache_invalidation(void)
{
	struct cache_fix f;
	struct percs_mr_cache *c = NULL;
	uint32_t h1 = 0, h2 = 0, h3 = 0;

	REQUIRE(fix_setup(&f, 4));
	REQUIRE(percs_mr_cache_new(f.w, 0, 0, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, PG, 0, &h1), 0);
	CHECK_EQ(percs_mr_cache_put(c, h1), 0);
	report(f.st, h1);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, PG, 0, &h2), 0);
	CHECK(h2 != h1);
	CHECK_EQ(stats_of(c).invalidated, 1);
	CHECK_EQ(stats_of(c).entries, 1);
	/* Ended while held: nobody new gets it; its put forgets it. */
	report(f.st, h2);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, PG, 0, &h3), 0);
	CHECK(h3 != h2);
	CHECK_EQ(stats_of(c).entries, 2);
	CHECK_EQ(percs_mr_cache_put(c, h2), 0);
	CHECK_EQ(stats_of(c).entries, 1);
	CHECK_EQ(percs_mr_cache_put(c, h3), 0);
	/* More reports than the ring: everything goes, deregistered. */
	f.st->mr_invalidated += PERCS_MR_INVAL_RING + 1;
	CHECK_EQ(percs_mr_cache_get(c, f.buf + PG, PG, 0, &h1), 0);
	CHECK_EQ(stats_of(c).overruns, 1);
	CHECK_EQ(stats_of(c).entries, 1);
	CHECK(R.mr_live[h3 & 0xffff] != h3);
	CHECK_EQ(percs_mr_cache_put(c, h1), 0);
	percs_mr_cache_free(c);
	fix_teardown(&f);
}

/* The bound: LRU goes first, held entries stay, the overflow uncached. */
static void test_cache_bound(void)
{
	struct cache_fix f;
	struct percs_mr_cache *c = NULL;
	uint32_t h[4] = { 0 };

	REQUIRE(fix_setup(&f, 8));
	REQUIRE(percs_mr_cache_new(f.w, 2, 0, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, PG, 0, &h[0]), 0);
	CHECK_EQ(percs_mr_cache_get(c, f.buf + PG, PG, 0, &h[1]), 0);
	CHECK_EQ(percs_mr_cache_get(c, f.buf + 2 * PG, PG, 0, &h[2]), 0);
	CHECK_EQ(stats_of(c).uncached, 1);
	CHECK_EQ(percs_mr_cache_put(c, h[2]), 0);
	CHECK(R.mr_live[h[2] & 0xffff] != h[2]);	/* uncached: deregistered */
	CHECK_EQ(percs_mr_cache_put(c, h[0]), 0);
	CHECK_EQ(percs_mr_cache_put(c, h[1]), 0);
	/* h[0] used last: h[1] is the least recently used. */
	CHECK_EQ(percs_mr_cache_get(c, f.buf, 8, 0, &h[3]), 0);
	CHECK_EQ(h[3], h[0]);
	CHECK_EQ(percs_mr_cache_put(c, h[3]), 0);
	CHECK_EQ(percs_mr_cache_get(c, f.buf + 3 * PG, PG, 0, &h[3]), 0);
	CHECK_EQ(stats_of(c).evictions, 1);
	CHECK(R.mr_live[h[1] & 0xffff] != h[1]);
	CHECK(R.mr_live[h[0] & 0xffff] == h[0]);
	CHECK_EQ(percs_mr_cache_put(c, h[3]), 0);
	/* A byte bound of one page: a two-page range is not cached. */
	percs_mr_cache_free(c);
	REQUIRE(percs_mr_cache_new(f.w, 0, PG, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, 2 * PG, 0, &h[0]), 0);
	CHECK_EQ(stats_of(c).uncached, 1);
	CHECK_EQ(percs_mr_cache_put(c, h[0]), 0);
	percs_mr_cache_free(c);
	fix_teardown(&f);
}

/* A kernel that cannot end registrations: nothing cached, nothing reused. */
static void test_cache_no_kernel_help(void)
{
	struct cache_fix f;
	struct percs_mr_cache *c = NULL;
	uint32_t h1 = 0, h2 = 0;

	REQUIRE(fix_setup(&f, 1));
	REQUIRE(percs_mr_cache_new(f.w, 0, 0, &c) == 0);
	R.mr_no_invalidate = true;
	CHECK_EQ(percs_mr_cache_get(c, f.buf, PG, 0, &h1), 0);
	CHECK_EQ(R.mr_seen.flags, 0);
	CHECK_EQ(percs_mr_cache_put(c, h1), 0);
	CHECK(R.mr_live[h1 & 0xffff] != h1);	/* deregistered at its put */
	CHECK_EQ(percs_mr_cache_get(c, f.buf, PG, 0, &h2), 0);
	CHECK(h2 != h1);
	CHECK_EQ(percs_mr_cache_put(c, h2), 0);
	CHECK_EQ(stats_of(c).hits, 0);
	CHECK_EQ(stats_of(c).uncached, 2);
	CHECK_EQ(stats_of(c).entries, 0);
	R.mr_no_invalidate = false;
	percs_mr_cache_free(c);
	fix_teardown(&f);
}

/* Bad arguments never reach the kernel; kernel errors come back. */
static void test_cache_errors(void)
{
	struct cache_fix f;
	struct percs_mr_cache *c = NULL;
	uint32_t h = 0xdeadbeef;
	int calls;

	REQUIRE(fix_setup(&f, 1));
	CHECK_EQ(percs_mr_cache_new(NULL, 0, 0, &c), -EINVAL);
	CHECK_EQ(percs_mr_cache_new(f.w, 0, 0, NULL), -EINVAL);
	REQUIRE(percs_mr_cache_new(f.w, 0, 0, &c) == 0);
	calls = R.mr_calls;
	CHECK_EQ(percs_mr_cache_get(NULL, f.buf, 8, 0, &h), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, 8, 0, NULL), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, 0, 0, &h), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, 8, 1u << 30, &h), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, (void *)UINTPTR_MAX, 8, 0, &h),
		 -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, f.buf, PERCS_MR_MAX_LENGTH + 1, 0, &h),
		 -EINVAL);
	CHECK_EQ(percs_mr_cache_put(NULL, 1), -EINVAL);
	CHECK_EQ(percs_mr_cache_stats(NULL, NULL), -EINVAL);
	CHECK_EQ(R.mr_calls, calls);
	CHECK_EQ(h, 0xdeadbeef);
	R.mr_errno = EFAULT;
	CHECK_EQ(percs_mr_cache_get(c, f.buf, 8, 0, &h), -EFAULT);
	R.mr_errno = 0;
	CHECK_EQ(stats_of(c).entries, 0);
	CHECK_EQ(percs_mr_reg_flags(f.w, f.buf, 8, 0, 1u << 7, &h), -EINVAL);
	percs_mr_cache_free(c);
	percs_mr_cache_free(NULL);
	fix_teardown(&f);
}

const struct unit_test mr_cache_tests[] = {
	{ "mr cache: hits inside a registration, whole pages, rights respected", test_cache_hits },
	{ "mr cache: reported handles forgotten, held ones at their put, overrun forgets all", test_cache_invalidation },
	{ "mr cache: LRU eviction, held entries stay, the overflow uncached", test_cache_bound },
	{ "mr cache: a kernel without MMU notifiers: nothing cached or reused", test_cache_no_kernel_help },
	{ "mr cache: bad arguments never reach the kernel, its errors come back", test_cache_errors },
	{ NULL, NULL }
};
