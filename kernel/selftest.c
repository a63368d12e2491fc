// SPDX-License-Identifier: GPL-2.0
/*
 * percs: test code, built only with PERCS_TEST=1 (Kbuild), as iommufd keeps
 * its test code behind CONFIG_IOMMUFD_TEST: the NMMU self-check that runs
 * at module load, and the route look-up benchmark debugfs isr/route_cost
 * runs when read, and a FIFO handler that refuses every packet
 * (debugfs isr/net_refuse) for the delivery table's test.  make module, make check and the VM tests build with it;
 * an install build (make module PERCS_TEST=0, or Kbuild without the
 * variable) leaves it out, and percs.h gives the module stubs instead.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "nmmu.h"
#include "net.h"

/*
 * Self-check at load of the translation and copy helpers that the RDMA
 * and atomic engines rest on, over kernel pages posing as a registration
 * at a made-up effective address (nothing is pinned or charged).
 */
#define PERCS_SC_PAGES	3
#define PERCS_SC_ADDR	(0x10000ULL + 0x123)	/* crosses pages unaligned */
#define PERCS_SC_LEN	(2 * PAGE_SIZE)

static u8 __init percs_sc_byte(u64 addr)
{
	return (u8)(addr * 131 + (addr >> 8));
}

static int __init percs_sc_lookups(struct percs_window *w, struct percs_mr *mr)
{
	static const struct {
		s64 addr_off;	/* from PERCS_SC_ADDR */
		u64 len;
		u32 access;
		bool bad_handle;
		int err;
	} cases[] = {
		{ 0, PERCS_SC_LEN, PERCS_ACCESS_REMOTE_READ, false, 0 },
		{ 5, 8, PERCS_ACCESS_REMOTE_WRITE | PERCS_ACCESS_REMOTE_READ,
		  false, 0 },
		{ PERCS_SC_LEN, 0, 0, false, 0 },
		{ 0, 8, 0, true, -ENOENT },
		{ -1, 8, 0, false, -ERANGE },
		{ PERCS_SC_LEN - 7, 8, 0, false, -ERANGE },
		{ 1, U64_MAX, 0, false, -ERANGE },
		{ 0, 8, PERCS_ACCESS_REMOTE_ATOMIC, false, -EPERM },
		{ 0, 8, PERCS_ACCESS_LOCAL_WRITE, false, -EPERM },
		{ 0, 8, 1U << 7, false, -EINVAL },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 h = mr->handle;
		struct percs_mr *got;
		int err;

		if (cases[i].bad_handle)
			h += 1U << PERCS_MR_SLOT_BITS;	/* stale generation */
		got = percs_mr_get(w, h, PERCS_SC_ADDR + cases[i].addr_off,
				   cases[i].len, cases[i].access);
		err = IS_ERR(got) ? PTR_ERR(got) : 0;
		if (!IS_ERR(got) && got != mr)
			err = -EFAULT;
		if (!IS_ERR(got))
			percs_mr_put(got);
		if (err != cases[i].err) {
			pr_err("nmmu self-check: lookup case %u: %d, want %d\n",
			       i, err, cases[i].err);
			return -EINVAL;
		}
	}
	if (!IS_ERR(percs_mr_get(w, 0, PERCS_SC_ADDR, 8, 0)) ||
	    refcount_read(&mr->ref) != 1) {
		pr_err("nmmu self-check: handle 0 or reference count\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * The lookups left @mr in the translation cache; erased from the table
 * (the caller did) and unpublished, it is found neither there nor in a
 * cache entry that a lookup racing with the deregistration put back.
 */
static int __init percs_sc_cache(struct percs_window *w, struct percs_mr *mr)
{
	struct percs_mr __rcu **e = percs_mr_tlb_entry(w, mr->handle);
	struct percs_mr *got;

	if (rcu_access_pointer(*e) != mr) {
		pr_err("nmmu self-check: lookups left no cache entry\n");
		return -EINVAL;
	}
	percs_mr_unpublish(w, mr);
	got = percs_mr_get(w, mr->handle, PERCS_SC_ADDR, 8, 0);
	if (rcu_access_pointer(*e) || PTR_ERR_OR_ZERO(got) != -ENOENT)
		goto bad;
	rcu_assign_pointer(*e, mr);
	got = percs_mr_get(w, mr->handle, PERCS_SC_ADDR, 8, 0);
	RCU_INIT_POINTER(*e, NULL);
	if (PTR_ERR_OR_ZERO(got) != -ENOENT)
		goto bad;
	return 0;
bad:
	if (!IS_ERR(got))
		percs_mr_put(got);
	pr_err("nmmu self-check: a deregistered handle still translates\n");
	return -EINVAL;
}

static int __init percs_sc_copies(struct percs_mr *mr, u8 *buf, u8 *out)
{
	static const u32 offs[] = { 0, 1, 7, 8, 13, PAGE_SIZE - 0x123 - 3,
				    PAGE_SIZE - 0x123, PAGE_SIZE + 5 };
	static const u32 lens[] = { 1, 3, 8, 13, 64, PAGE_SIZE + 5 };
	const u64 end = PERCS_SC_ADDR + PERCS_SC_LEN;
	const u64 words[] = {
		ALIGN(PERCS_SC_ADDR, 8),
		ALIGN(PERCS_SC_ADDR, PAGE_SIZE) - 8,
		ALIGN(PERCS_SC_ADDR, PAGE_SIZE),
		ALIGN_DOWN(end - 8, 8),
	};
	unsigned int i, j;
	u64 a, *word;

	for (a = 0; a < PERCS_SC_LEN; a++)
		buf[a] = percs_sc_byte(PERCS_SC_ADDR + a);
	if (percs_mr_copy_to(mr, PERCS_SC_ADDR, buf, PERCS_SC_LEN))
		return -EINVAL;
	/* Byte a of the range is at page (0x123 + a) / PAGE_SIZE. */
	for (a = 0; a < PERCS_SC_LEN; a++) {
		u64 o = (PERCS_SC_ADDR & ~PAGE_MASK) + a;
		u8 *p = page_address(mr->pages[o >> PAGE_SHIFT]);

		if (p[o & ~PAGE_MASK] != buf[a])
			return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		for (j = 0; j < ARRAY_SIZE(lens); j++) {
			u64 at = PERCS_SC_ADDR + offs[i];

			if (offs[i] + lens[j] > PERCS_SC_LEN)
				continue;
			memset(out, 0, lens[j] + 1);
			if (percs_mr_copy_from(mr, at, out + 1, lens[j]) ||
			    memcmp(out + 1, buf + offs[i], lens[j]) || out[0])
				return -EINVAL;
		}
	}
	if (percs_mr_copy_to(mr, PERCS_SC_ADDR + 1, buf, PERCS_SC_LEN) !=
	    -ERANGE ||
	    percs_mr_copy_from(mr, PERCS_SC_ADDR - 1, out, 2) != -ERANGE)
		return -EINVAL;

	/* Words: the first, the two around a page boundary, the last. */
	for (i = 0; i < ARRAY_SIZE(words); i++) {
		u64 v;

		word = percs_mr_map_operand(mr, words[i], sizeof(*word));
		if (IS_ERR(word))
			return -EINVAL;
		*word = words[i] ^ 0x5a5a5a5a5a5a5a5aULL;
		percs_mr_unmap_operand(word);
		if (percs_mr_copy_from(mr, words[i], &v, sizeof(v)) ||
		    v != (words[i] ^ 0x5a5a5a5a5a5a5a5aULL))
			return -EINVAL;
	}
	if (PTR_ERR(percs_mr_map_operand(mr, words[0] + 4, 8)) != -EINVAL ||
	    PTR_ERR(percs_mr_map_operand(mr, words[0] - 8, 8)) != -ERANGE ||
	    PTR_ERR(percs_mr_map_operand(mr, words[3] + 8, 8)) != -ERANGE ||
	    PTR_ERR(percs_mr_map_operand(mr, words[0] + 1, 2)) != -EINVAL)
		return -EINVAL;
	return 0;
}

/**
 * percs_test_nmmu_selfcheck() - the NMMU self-check at module load
 * @pd: the system
 *
 * Return: 0, -ENOMEM, or -EINVAL when a check fails (logged).
 */
int __init percs_test_nmmu_selfcheck(struct percs_dev *pd)
{
	struct page *pages[PERCS_SC_PAGES] = { NULL };
	struct percs_window *w;
	struct percs_mr *mr;
	u8 *buf = NULL, *out = NULL;
	unsigned int i;
	u32 slot;
	int ret = -ENOMEM;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	buf = kvmalloc(PERCS_SC_LEN, GFP_KERNEL);
	out = kvmalloc(PERCS_SC_LEN + 1, GFP_KERNEL);
	if (!w || !mr || !buf || !out)
		goto out;
	for (i = 0; i < PERCS_SC_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pages[i])
			goto out;
	}
	percs_mr_window_init(w);
	refcount_set(&mr->ref, 1);
	mr->access = PERCS_ACCESS_REMOTE_READ | PERCS_ACCESS_REMOTE_WRITE;
	mr->addr = PERCS_SC_ADDR;
	mr->length = PERCS_SC_LEN;
	mr->npages = PERCS_SC_PAGES;
	mr->pages = pages;
	mr->pd = pd;
	ret = xa_alloc(&w->mrs, &slot, mr, XA_LIMIT(1, PERCS_MR_MAX_PER_WINDOW),
		       GFP_KERNEL);
	if (ret)
		goto out;
	mr->handle = 7U << PERCS_MR_SLOT_BITS | slot;

	ret = percs_sc_lookups(w, mr);
	if (!ret) {
		ret = percs_sc_copies(mr, buf, out);
		if (ret)
			pr_err("nmmu self-check: copies or words\n");
	}
	/* The table's reference is the only one left: no release path. */
	xa_erase(&w->mrs, slot);
	if (!ret)
		ret = percs_sc_cache(w, mr);
	xa_destroy(&w->mrs);
out:
	for (i = 0; i < PERCS_SC_PAGES; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(out);
	kvfree(buf);
	kfree(mr);
	kfree(w);
	return ret;
}

/*
 * percs_isr_route_cost() - time the route look-up of one mode
 * @pd: the system
 * @mode: enum percs_route_mode
 * @lookups: look-ups to time, spread over every pair of hubs
 *
 * What the engine pays per packet when its window's route cache does not
 * answer (always, for the hardware modes): the seqlock read section and
 * fm_route().  Process context; reschedules between batches, which are not
 * timed.  sw_indirect names the first supernode that is neither end.
 *
 * Return: nanoseconds per look-up, times 100; -EHOSTUNREACH if no pair has
 * a route in this mode.
 */
static long percs_isr_route_cost(struct percs_dev *pd, unsigned int mode,
			  unsigned int lookups)
{
	const struct fm_topology *t = &pd->topo;
	struct fm_route_cursor cur;
	u64 ns = 0, done = 0, i = 0;
	struct fm_route r;

	fm_route_cursor_init(&cur, 1);
	while (done < lookups && i < 4ULL * lookups) {
		unsigned int n = 0, seq;
		u64 t0 = ktime_get_ns();

		for (; n < 256 && i < 4ULL * lookups; i++) {
			u32 src = i % t->nr_hubs;
			u32 dst = (i / t->nr_hubs * 7 + i) % t->nr_hubs;
			u32 a = fm_hub_supernode(t, src);
			u32 b = fm_hub_supernode(t, dst);
			u32 via = 0;
			int ret;

			while (via == a || via == b)
				via++;
			do {
				seq = read_seqbegin(&pd->isr.lock);
				ret = fm_route(t, src, dst, mode, via, &cur, &r);
			} while (read_seqretry(&pd->isr.lock, seq));
			n += !ret;
		}
		ns += ktime_get_ns() - t0;
		done += n;
		cond_resched();
	}
	if (!done)
		return -EHOSTUNREACH;
	return div64_u64(ns * 100, done);
}

/*
 * Reading it times %PERCS_ROUTE_COST_LOOKUPS route look-ups per mode (a
 * benchmark: it takes a moment under emulation).
 */
static int percs_route_cost_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	unsigned int mode;

	seq_puts(m, "mode lookups ns_per_lookup\n");
	for (mode = 0; mode <= PERCS_ROUTE_MAX; mode++) {
		long c = percs_isr_route_cost(pd, mode,
					      PERCS_ROUTE_COST_LOOKUPS);

		if (c < 0)
			seq_printf(m, "%s 0 -\n", fm_route_mode_name(mode));
		else
			seq_printf(m, "%s %u %ld.%02ld\n",
				   fm_route_mode_name(mode),
				   PERCS_ROUTE_COST_LOOKUPS, c / 100, c % 100);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_route_cost);

/*
 * A receiving end that refuses every packet, in place of the FIFO's: the
 * delivery table must count each one and the sender see -EPROTO (the
 * receiver refused it; a test-build errno only).  FIFO packets hold no
 * reference, so refusing them leaks nothing.
 */
static int percs_test_refuse_deliver(struct percs_dev *pd,
				     const struct percs_net_pkt *pkt)
{
	return -EPROTO;
}

static const struct percs_net_handler percs_test_refuse_handler = {
	.name = "refuse",
	.deliver = percs_test_refuse_deliver,
};

static int percs_net_refuse_get(void *data, u64 *val)
{
	struct percs_dev *pd = data;

	*val = READ_ONCE(pd->net.handlers[PERCS_NET_FIFO]) ==
	       &percs_test_refuse_handler;
	return 0;
}

/* 1: FIFO packets are refused from now on; 0: delivered again. */
static int percs_net_refuse_set(void *data, u64 val)
{
	struct percs_dev *pd = data;

	if (val > 1)
		return -EINVAL;
	percs_net_register(pd, PERCS_NET_FIFO, val ?
			   &percs_test_refuse_handler :
			   &percs_fifo_net_handler);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(percs_net_refuse_fops, percs_net_refuse_get,
			 percs_net_refuse_set, "%llu\n");

/**
 * percs_test_debugfs_init() - the test files: isr/route_cost (the
 *	benchmark) and isr/net_refuse (the refusing FIFO handler)
 * @pd: the system
 * @isr: its debugfs directory isr/
 */
void percs_test_debugfs_init(struct percs_dev *pd, struct dentry *isr)
{
	debugfs_create_file("route_cost", 0444, isr, pd,
			    &percs_route_cost_fops);
	debugfs_create_file_unsafe("net_refuse", 0600, isr, pd,
				   &percs_net_refuse_fops);
}
