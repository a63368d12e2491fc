// SPDX-License-Identifier: GPL-2.0
/*
 * percs-topo --bench-route: time fm_route() per route mode, as the kernel's
 * debugfs isr/route_cost does (same pairs of hubs, same sw_indirect
 * supernode, one cursor), without the seqlock.
 */
#include "topo.h"

/* The kernel's pair walk: i-th look-up, over every pair of hubs. */
static void topo_bench_pair(const struct fm_topology *t, u64 i, u32 *src,
			    u32 *dst, u32 *via)
{
	u32 a, b;

	*src = i % t->nr_hubs;
	*dst = (i / t->nr_hubs * 7 + i) % t->nr_hubs;
	a = fm_hub_supernode(t, *src);
	b = fm_hub_supernode(t, *dst);
	for (*via = 0; *via == a || *via == b; ++*via)
		;
}

/*
 * One mode: @lookups look-ups (those that fail are not counted, as in the
 * kernel); return ns per successful look-up, or -1 if none succeeded.
 * The pair computation is timed apart and subtracted.
 */
static double topo_bench_mode(const struct fm_topology *t, unsigned int mode,
			      u64 lookups)
{
	struct fm_route_cursor cur;
	u64 i, done = 0, sink = 0;
	double t0, t1, t2;
	struct fm_route r;
	u32 src, dst, via;

	fm_route_cursor_init(&cur, 1);
	t0 = topo_now();
	for (i = 0; i < lookups; i++) {
		topo_bench_pair(t, i, &src, &dst, &via);
		done += !fm_route(t, src, dst, mode, via, &cur, &r);
		sink += r.nr_hops;
	}
	t1 = topo_now();
	for (i = 0; i < lookups; i++) {
		topo_bench_pair(t, i, &src, &dst, &via);
		sink += src ^ dst ^ via;
		__asm__ volatile("" : : "r"(sink) : "memory");
	}
	t2 = topo_now();
	if (!done)
		return -1;
	return ((t1 - t0) - (t2 - t1)) * 1e9 / done;
}

/**
 * topo_bench_route() - print ns per fm_route() look-up for every mode
 * @f: where to print
 * @t: the topology, with tables
 * @lookups: look-ups per mode
 */
void topo_bench_route(FILE *f, const struct fm_topology *t, u64 lookups)
{
	unsigned int mode;

	fprintf(f, "mode lookups ns_per_lookup\n");
	for (mode = 0; mode <= PERCS_ROUTE_MAX; mode++) {
		double ns = topo_bench_mode(t, mode, lookups);

		if (ns < 0)
			fprintf(f, "%s %llu unreachable\n",
				fm_route_mode_name(mode),
				(unsigned long long)lookups);
		else
			fprintf(f, "%s %llu %.1f\n", fm_route_mode_name(mode),
				(unsigned long long)lookups, ns);
	}
}
