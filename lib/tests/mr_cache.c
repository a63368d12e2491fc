// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the registration cache against the fake NMMU, the
 * kernel's reports of ended registrations written into the fake status
 * page by the test.
 */
#include <sys/mman.h>

#include "unit.h"

#define PG 4096u

static struct percs_window *cache_window(struct percs_hfi **hfi, char *dir,
					 struct percs_status **st)
{
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
	};
	struct percs_window *w;

	memset(R.mr_live, 0, sizeof(R.mr_live));
	R.mr_errno = 0;
	*hfi = fake_hfi_open(dir);
	if (!*hfi || percs_window_reserve(*hfi, &attr, &w))
		return NULL;
	/* The kernel's side of the page: the test writes the reports. */
	*st = (struct percs_status *)percs_window_status(w);
	if (mprotect(*st, PG, PROT_READ | PROT_WRITE))
		return NULL;
	return w;
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
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t *buf = aligned_alloc(PG, 4 * PG);
	struct percs_mr_cache *c = NULL;
	struct percs_status *st;
	struct percs_hfi *hfi;
	struct percs_window *w = cache_window(&hfi, dir, &st);
	uint32_t h1 = 0, h2 = 0, h3 = 0;
	int calls;

	REQUIRE(w && buf);
	REQUIRE(percs_mr_cache_new(w, 0, 0, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, buf + 10, 100, PERCS_ACCESS_REMOTE_READ,
				    &h1), 0);
	CHECK_EQ(R.mr_seen.flags, PERCS_MR_F_INVALIDATE);
	CHECK_EQ(R.mr_seen.addr, (uintptr_t)buf);
	CHECK_EQ(R.mr_seen.length, PG);
	calls = R.mr_calls;
	CHECK_EQ(percs_mr_cache_get(c, buf + 200, 3000,
				    PERCS_ACCESS_REMOTE_READ, &h2), 0);
	CHECK_EQ(h2, h1);
	CHECK_EQ(R.mr_calls, calls);		/* no system call */
	/* Another right: another registration. */
	CHECK_EQ(percs_mr_cache_get(c, buf + 10, 100, PERCS_ACCESS_LOCAL_WRITE,
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
	percs_window_release(w);
	percs_hfi_close(hfi);
	free(buf);
}

/* A reported handle is forgotten: the next lookup registers again. */
static void test_cache_invalidation(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t *buf = aligned_alloc(PG, 4 * PG);
	struct percs_mr_cache *c = NULL;
	struct percs_status *st;
	struct percs_hfi *hfi;
	struct percs_window *w = cache_window(&hfi, dir, &st);
	uint32_t h1 = 0, h2 = 0, h3 = 0;

	REQUIRE(w && buf);
	REQUIRE(percs_mr_cache_new(w, 0, 0, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, buf, PG, 0, &h1), 0);
	CHECK_EQ(percs_mr_cache_put(c, h1), 0);
	report(st, h1);
	CHECK_EQ(percs_mr_cache_get(c, buf, PG, 0, &h2), 0);
	CHECK(h2 != h1);
	CHECK_EQ(stats_of(c).invalidated, 1);
	CHECK_EQ(stats_of(c).entries, 1);
	/* Ended while held: nobody new gets it; its put forgets it. */
	report(st, h2);
	CHECK_EQ(percs_mr_cache_get(c, buf, PG, 0, &h3), 0);
	CHECK(h3 != h2);
	CHECK_EQ(stats_of(c).entries, 2);
	CHECK_EQ(percs_mr_cache_put(c, h2), 0);
	CHECK_EQ(stats_of(c).entries, 1);
	CHECK_EQ(percs_mr_cache_put(c, h3), 0);
	/* More reports than the ring: everything goes, deregistered. */
	st->mr_invalidated += PERCS_MR_INVAL_RING + 1;
	CHECK_EQ(percs_mr_cache_get(c, buf + PG, PG, 0, &h1), 0);
	CHECK_EQ(stats_of(c).overruns, 1);
	CHECK_EQ(stats_of(c).entries, 1);
	CHECK(R.mr_live[h3 & 0xffff] != h3);
	CHECK_EQ(percs_mr_cache_put(c, h1), 0);
	percs_mr_cache_free(c);
	percs_window_release(w);
	percs_hfi_close(hfi);
	free(buf);
}

/* The bound: LRU goes first, held entries stay, the overflow uncached. */
static void test_cache_bound(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t *buf = aligned_alloc(PG, 8 * PG);
	struct percs_mr_cache *c = NULL;
	struct percs_status *st;
	struct percs_hfi *hfi;
	struct percs_window *w = cache_window(&hfi, dir, &st);
	uint32_t h[4] = { 0 };

	REQUIRE(w && buf);
	REQUIRE(percs_mr_cache_new(w, 2, 0, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, buf, PG, 0, &h[0]), 0);
	CHECK_EQ(percs_mr_cache_get(c, buf + PG, PG, 0, &h[1]), 0);
	CHECK_EQ(percs_mr_cache_get(c, buf + 2 * PG, PG, 0, &h[2]), 0);
	CHECK_EQ(stats_of(c).uncached, 1);
	CHECK_EQ(percs_mr_cache_put(c, h[2]), 0);
	CHECK(R.mr_live[h[2] & 0xffff] != h[2]);	/* uncached: deregistered */
	CHECK_EQ(percs_mr_cache_put(c, h[0]), 0);
	CHECK_EQ(percs_mr_cache_put(c, h[1]), 0);
	/* h[0] used last: h[1] is the least recently used. */
	CHECK_EQ(percs_mr_cache_get(c, buf, 8, 0, &h[3]), 0);
	CHECK_EQ(h[3], h[0]);
	CHECK_EQ(percs_mr_cache_put(c, h[3]), 0);
	CHECK_EQ(percs_mr_cache_get(c, buf + 3 * PG, PG, 0, &h[3]), 0);
	CHECK_EQ(stats_of(c).evictions, 1);
	CHECK(R.mr_live[h[1] & 0xffff] != h[1]);
	CHECK(R.mr_live[h[0] & 0xffff] == h[0]);
	CHECK_EQ(percs_mr_cache_put(c, h[3]), 0);
	/* A byte bound of one page: a two-page range is not cached. */
	percs_mr_cache_free(c);
	REQUIRE(percs_mr_cache_new(w, 0, PG, &c) == 0);
	CHECK_EQ(percs_mr_cache_get(c, buf, 2 * PG, 0, &h[0]), 0);
	CHECK_EQ(stats_of(c).uncached, 1);
	CHECK_EQ(percs_mr_cache_put(c, h[0]), 0);
	percs_mr_cache_free(c);
	percs_window_release(w);
	percs_hfi_close(hfi);
	free(buf);
}

/* A kernel that cannot end registrations: nothing cached, nothing reused. */
static void test_cache_no_kernel_help(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t *buf = aligned_alloc(PG, PG);
	struct percs_mr_cache *c = NULL;
	struct percs_status *st;
	struct percs_hfi *hfi;
	struct percs_window *w = cache_window(&hfi, dir, &st);
	uint32_t h1 = 0, h2 = 0;

	REQUIRE(w && buf);
	REQUIRE(percs_mr_cache_new(w, 0, 0, &c) == 0);
	R.mr_no_invalidate = true;
	CHECK_EQ(percs_mr_cache_get(c, buf, PG, 0, &h1), 0);
	CHECK_EQ(R.mr_seen.flags, 0);
	CHECK_EQ(percs_mr_cache_put(c, h1), 0);
	CHECK(R.mr_live[h1 & 0xffff] != h1);	/* deregistered at its put */
	CHECK_EQ(percs_mr_cache_get(c, buf, PG, 0, &h2), 0);
	CHECK(h2 != h1);
	CHECK_EQ(percs_mr_cache_put(c, h2), 0);
	CHECK_EQ(stats_of(c).hits, 0);
	CHECK_EQ(stats_of(c).uncached, 2);
	CHECK_EQ(stats_of(c).entries, 0);
	R.mr_no_invalidate = false;
	percs_mr_cache_free(c);
	percs_window_release(w);
	percs_hfi_close(hfi);
	free(buf);
}

/* Bad arguments never reach the kernel; kernel errors come back. */
static void test_cache_errors(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t buf[64];
	struct percs_mr_cache *c = NULL;
	struct percs_status *st;
	struct percs_hfi *hfi;
	struct percs_window *w = cache_window(&hfi, dir, &st);
	uint32_t h = 0xdeadbeef;
	int calls;

	REQUIRE(w);
	CHECK_EQ(percs_mr_cache_new(NULL, 0, 0, &c), -EINVAL);
	CHECK_EQ(percs_mr_cache_new(w, 0, 0, NULL), -EINVAL);
	REQUIRE(percs_mr_cache_new(w, 0, 0, &c) == 0);
	calls = R.mr_calls;
	CHECK_EQ(percs_mr_cache_get(NULL, buf, 8, 0, &h), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, buf, 8, 0, NULL), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, buf, 0, 0, &h), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, buf, 8, 1u << 30, &h), -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, (void *)UINTPTR_MAX, 8, 0, &h),
		 -EINVAL);
	CHECK_EQ(percs_mr_cache_get(c, buf, PERCS_MR_MAX_LENGTH + 1, 0, &h),
		 -EINVAL);
	CHECK_EQ(percs_mr_cache_put(NULL, 1), -EINVAL);
	CHECK_EQ(percs_mr_cache_stats(NULL, NULL), -EINVAL);
	CHECK_EQ(R.mr_calls, calls);
	CHECK_EQ(h, 0xdeadbeef);
	R.mr_errno = EFAULT;
	CHECK_EQ(percs_mr_cache_get(c, buf, 8, 0, &h), -EFAULT);
	R.mr_errno = 0;
	CHECK_EQ(stats_of(c).entries, 0);
	CHECK_EQ(percs_mr_reg_flags(w, buf, 8, 0, 1u << 7, &h), -EINVAL);
	percs_mr_cache_free(c);
	percs_mr_cache_free(NULL);
	percs_window_release(w);
	percs_hfi_close(hfi);
}

const struct unit_test mr_cache_tests[] = {
	{ "mr cache: hits inside a registration, whole pages, rights respected", test_cache_hits },
	{ "mr cache: reported handles forgotten, held ones at their put, overrun forgets all", test_cache_invalidation },
	{ "mr cache: LRU eviction, held entries stay, the overflow uncached", test_cache_bound },
	{ "mr cache: a kernel without MMU notifiers: nothing cached or reused", test_cache_no_kernel_help },
	{ "mr cache: bad arguments never reach the kernel, its errors come back", test_cache_errors },
	{ NULL, NULL }
};
