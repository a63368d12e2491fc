// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: a registration cache.
 *
 * Registering a buffer pins its pages, deregistering unpins them; for a
 * large message both cost more than moving the data.  The cache keeps
 * registrations made with PERCS_MR_F_INVALIDATE after their user is done
 * with them and hands them out again for a range they cover.  Reuse is
 * safe because the kernel ends such a registration when the process's
 * mapping of its range changes and reports the handle in the window's
 * status page (percs_status.mr_invalidated and mr_inval_ring): every
 * lookup reads that report first and forgets the handles it names, so a
 * buffer freed and mapped anew at the same address gets a new
 * registration of its new pages.
 *
 * Bounded by entries and bytes; the least recently used registration
 * nobody holds goes first.  A lookup scans the entries (a few dozen).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Defaults of percs_mr_cache_new() for a 0 bound. */
#define LP_MRC_DEF_ENTRIES	64
#define LP_MRC_DEF_BYTES	((size_t)256 << 20)

#define LP_PAGE			4096u

/**
 * struct lp_mrc_entry - one cached registration
 * @addr: first registered byte (page-aligned)
 * @len: registered bytes (whole pages)
 * @access: PERCS_ACCESS_* it grants
 * @handle: the kernel's handle
 * @refs: users holding it (percs_mr_cache_get() not yet put)
 * @used: the cache's clock at its last use (LRU)
 * @ended: the kernel ended it (or may have): no new user gets it, and the
 *	last put forgets it
 */
struct lp_mrc_entry {
	uintptr_t addr;
	size_t len;
	uint32_t access;
	uint32_t handle;
	unsigned int refs;
	uint64_t used;
	bool ended;
};

/**
 * struct percs_mr_cache - a window's registration cache
 * @w: the window the registrations belong to
 * @e: the entries, @n of them used, at most @max
 * @n: entries in use
 * @max: bound on entries
 * @bytes: bytes the entries register
 * @max_bytes: bound on @bytes
 * @clock: uses so far (the LRU's clock)
 * @seen: percs_status.mr_invalidated as last read
 * @off: the kernel cannot end registrations (EOPNOTSUPP: no MMU
 *	notifiers): nothing is cached, each get registers and its put
 *	deregisters
 * @st: the counters percs_mr_cache_stats() reports
 */
struct percs_mr_cache {
	struct percs_window *w;
	struct lp_mrc_entry *e;
	size_t n;
	size_t max;
	size_t bytes;
	size_t max_bytes;
	uint64_t clock;
	uint64_t seen;
	bool off;
	struct percs_mr_cache_stats st;
};

int percs_mr_cache_new(struct percs_window *w, size_t max_entries,
		       size_t max_bytes, struct percs_mr_cache **out)
{
	struct percs_mr_cache *c;

	if (!w || !out)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->w = w;
	c->max = max_entries ? max_entries : LP_MRC_DEF_ENTRIES;
	c->max_bytes = max_bytes ? max_bytes : LP_MRC_DEF_BYTES;
	c->e = calloc(c->max, sizeof(*c->e));
	if (!c->e) {
		free(c);
		return -ENOMEM;
	}
	/* Reports older than the cache name none of its handles. */
	c->seen = lp_load_acquire(&w->status->mr_invalidated);
	*out = c;
	return 0;
}

/* Forget entry @i; deregister it unless the kernel already ended it. */
static void entry_drop(struct percs_mr_cache *c, size_t i, bool dereg)
{
	if (dereg)
		percs_mr_dereg(c->w, c->e[i].handle);	/* -ENOENT: ended */
	c->bytes -= c->e[i].len;
	c->e[i] = c->e[--c->n];
}

/* The kernel ended @handle (or, with @all, maybe any): forget it. */
static void entry_ended(struct percs_mr_cache *c, uint32_t handle, bool all)
{
	size_t i = 0;

	while (i < c->n) {
		struct lp_mrc_entry *e = &c->e[i];

		if (!all && e->handle != handle) {
			i++;
			continue;
		}
		c->st.invalidated++;
		if (e->refs) {
			e->ended = true;
			i++;
		} else {
			entry_drop(c, i, all);
		}
	}
}

/*
 * Read what the kernel reported since the last look.  A reader that fell
 * more than the ring behind (or was overtaken while reading it) lost
 * handles: every entry is then treated as ended.
 */
static void cache_sync(struct percs_mr_cache *c)
{
	const struct percs_status *st = c->w->status;
	uint64_t n = lp_load_acquire(&st->mr_invalidated), i;
	uint32_t h[PERCS_MR_INVAL_RING];

	if (n == c->seen)
		return;
	if (n - c->seen <= PERCS_MR_INVAL_RING) {
		for (i = c->seen; i != n; i++)
			h[i - c->seen] = lp_load_relaxed(
				&st->mr_inval_ring[i % PERCS_MR_INVAL_RING]);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (lp_load_relaxed(&st->mr_invalidated) - c->seen <=
		    PERCS_MR_INVAL_RING) {
			for (i = c->seen; i != n; i++)
				entry_ended(c, h[i - c->seen], false);
			c->seen = n;
			return;
		}
	}
	c->st.overruns++;
	entry_ended(c, 0, true);
	c->seen = lp_load_acquire(&st->mr_invalidated);
}

/* The least recently used entry nobody holds, or -1. */
static long lru_victim(const struct percs_mr_cache *c)
{
	long v = -1;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!c->e[i].refs &&
		    (v < 0 || c->e[i].used < c->e[(size_t)v].used))
			v = (long)i;
	return v;
}

/* Evict until @len more bytes and one more entry fit; false if they can't. */
static bool make_room(struct percs_mr_cache *c, size_t len)
{
	while (c->n == c->max || c->bytes + len > c->max_bytes) {
		long v = lru_victim(c);

		if (v < 0)
			return false;
		entry_drop(c, (size_t)v, true);
		c->st.evictions++;
	}
	return true;
}

/* Register [addr, addr + len) to be cached; -ENOMEM evicts and retries. */
static int cache_register(struct percs_mr_cache *c, uintptr_t addr,
			  size_t len, uint32_t access, uint32_t *handle)
{
	int ret = percs_mr_reg_flags(c->w, (void *)addr, len, access,
				     PERCS_MR_F_INVALIDATE, handle);
	long v;

	/* RLIMIT_MEMLOCK: what nobody holds goes first. */
	while (ret == -ENOMEM && (v = lru_victim(c)) >= 0) {
		entry_drop(c, (size_t)v, true);
		c->st.evictions++;
		ret = percs_mr_reg_flags(c->w, (void *)addr, len, access,
					 PERCS_MR_F_INVALIDATE, handle);
	}
	return ret;
}

int percs_mr_cache_get(struct percs_mr_cache *c, const void *addr,
		       size_t len, uint32_t access, uint32_t *handle)
{
	uintptr_t a = (uintptr_t)addr, start, end;
	struct lp_mrc_entry *e;
	size_t i;
	int ret;

	if (!c || !handle || !len || (access & ~PERCS_ACCESS_ALL))
		return -EINVAL;
	if (len > PERCS_MR_MAX_LENGTH || a + len < a)
		return -EINVAL;
	cache_sync(c);
	c->clock++;
	for (i = 0; i < c->n; i++) {
		e = &c->e[i];
		if (!e->ended && a >= e->addr && a + len <= e->addr + e->len &&
		    (e->access & access) == access) {
			e->refs++;
			e->used = c->clock;
			c->st.hits++;
			*handle = e->handle;
			return 0;
		}
	}
	c->st.misses++;
	/* Whole pages: the pins are the same, and neighbours hit too. */
	start = a & ~(uintptr_t)(LP_PAGE - 1);
	end = (a + len + LP_PAGE - 1) & ~(uintptr_t)(LP_PAGE - 1);
	if (c->off || end - start > PERCS_MR_MAX_LENGTH ||
	    !make_room(c, end - start)) {
uncached:
		/* Too big, every entry held, or no kernel help: not cached. */
		c->st.uncached++;
		return percs_mr_reg(c->w, (void *)addr, len, access, handle);
	}
	ret = cache_register(c, start, end - start, access, handle);
	if (ret == -EOPNOTSUPP) {
		/* Reuse would be unsafe without the kernel's reports. */
		c->off = true;
		goto uncached;
	}
	if (ret)
		return ret;
	e = &c->e[c->n++];
	*e = (struct lp_mrc_entry){
		.addr = start, .len = end - start, .access = access,
		.handle = *handle, .refs = 1, .used = c->clock,
	};
	c->bytes += e->len;
	return 0;
}

int percs_mr_cache_put(struct percs_mr_cache *c, uint32_t handle)
{
	size_t i;

	if (!c)
		return -EINVAL;
	for (i = 0; i < c->n; i++) {
		struct lp_mrc_entry *e = &c->e[i];

		if (e->handle != handle || !e->refs)
			continue;
		if (--e->refs == 0 && e->ended)
			entry_drop(c, i, true);
		return 0;
	}
	/* Not cached (see percs_mr_cache_get()): its user's alone. */
	return percs_mr_dereg(c->w, handle);
}

int percs_mr_cache_stats(const struct percs_mr_cache *c,
			 struct percs_mr_cache_stats *st)
{
	if (!c || !st)
		return -EINVAL;
	*st = c->st;
	st->entries = c->n;
	st->bytes = c->bytes;
	return 0;
}

void percs_mr_cache_free(struct percs_mr_cache *c)
{
	if (!c)
		return;
	while (c->n)
		entry_drop(c, c->n - 1, true);
	free(c->e);
	free(c);
}
