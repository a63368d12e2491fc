// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the Integrated Switch Routers - the topology, each packet's route
 * through it, link states and per-link counters.
 *
 * The routing logic is the firmware model's (firmware-model/route.c); this
 * file runs it for the module.  Every packet the engine sends is routed by
 * the mode in its header and counted on every link it crosses: packets,
 * flits per virtual channel, and the replays that absorb injected transient
 * errors.  Link state changes go through pd->isr.lock, a seqlock: routing
 * is a read section that retries if a link changed under it.
 *
 * Counters are per CPU and per link direction (direction 0 from the lower
 * hub number to the higher), summed when read.
 */
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched.h>

#include "percs.h"

/**
 * percs_isr_init() - build the topology and its route tables
 * @pd: the system
 * @spec: a topology spec (firmware-model/spec.h)
 *
 * Return: 0, or -EINVAL with the reason in the kernel log, or -ENOMEM.
 */
int percs_isr_init(struct percs_dev *pd, const char *spec)
{
	struct percs_isr *isr = &pd->isr;
	struct fm_topo_spec s;
	char err[160];
	u32 i;
	int ret;

	ret = fm_topo_parse(spec, &s, err, sizeof(err));
	if (!ret)
		ret = fm_topo_init_spec(&pd->topo, &s, err, sizeof(err));
	if (ret) {
		pr_err("percs: bad topology \"%s\": %s\n", spec, err);
		return -EINVAL;
	}
	if (pd->topo.nr_hubs > PERCS_MAX_HUBS) {
		pr_err("percs: bad topology \"%s\": %u hubs, the module emulates at most %u\n",
		       spec, pd->topo.nr_hubs, PERCS_MAX_HUBS);
		return -EINVAL;
	}
	seqlock_init(&isr->lock);
	ret = fm_topo_alloc_tables(&pd->topo);
	if (ret)
		return ret;
	isr->stats = kvcalloc(pd->topo.nr_links, sizeof(*isr->stats),
			      GFP_KERNEL);
	isr->error_ppm = kvcalloc(pd->topo.nr_links, sizeof(*isr->error_ppm),
				  GFP_KERNEL);
	if (!isr->stats || !isr->error_ppm)
		goto nomem;
	for (i = 0; i < pd->topo.nr_links; i++) {
		isr->stats[i] = alloc_percpu(struct percs_link_stats);
		if (!isr->stats[i])
			goto nomem;
	}
	return 0;

nomem:
	percs_isr_exit(pd);
	return -ENOMEM;
}

/**
 * percs_isr_exit() - free what percs_isr_init() built
 * @pd: the system
 */
void percs_isr_exit(struct percs_dev *pd)
{
	struct percs_isr *isr = &pd->isr;
	u32 i;

	if (isr->stats)
		for (i = 0; i < pd->topo.nr_links; i++)
			free_percpu(isr->stats[i]);
	kvfree(isr->stats);
	kvfree(isr->error_ppm);
	isr->stats = NULL;
	isr->error_ppm = NULL;
	fm_topo_free_tables(&pd->topo);
}

/* Replays a transmission needs before it gets through one link. */
static unsigned int percs_isr_replays(u32 ppm)
{
	unsigned int n = 0;

	/* ppm <= PERCS_ISR_MAX_ERROR_PPM (50%): this ends. */
	while (percs_chance(ppm))
		n++;
	return n;
}

/**
 * percs_isr_count_replays() - draw and count a packet's replays on a link
 * @st: the counters of the direction it crosses the link in
 * @ppm: the link's transient error rate, not zero
 */
void percs_isr_count_replays(struct percs_link_dir_stats __percpu *st,
			     u32 ppm)
{
	this_cpu_add(st->replays, percs_isr_replays(ppm));
}

/**
 * percs_isr_ctrs_init() - find the counters a route's packets go to
 * @pd: the system
 * @r: the route
 * @c: out: its counters, for percs_isr_ctrs_count()
 */
void percs_isr_ctrs_init(struct percs_dev *pd, const struct fm_route *r,
			 struct percs_route_ctrs *c)
{
	unsigned int i;

	c->nr_hops = r->nr_hops;
	for (i = 0; i < r->nr_hops; i++) {
		const struct fm_hop *hop = &r->hop[i];

		c->hop[i].st = &pd->isr.stats[hop->link]->dir[hop->from_hub >
							      hop->to_hub];
		c->hop[i].link = hop->link;
		c->hop[i].vc = hop->vc;
	}
}

/**
 * percs_isr_count() - count a delivered packet on every link of its route
 * @pd: the system
 * @r: its route
 * @units: its flits
 *
 * With a transient error rate on a link, each transmission fails with that
 * chance and is replayed until one gets through: counted, nothing lost.
 */
void percs_isr_count(struct percs_dev *pd, const struct fm_route *r,
		     u32 units)
{
	struct percs_isr *isr = &pd->isr;
	unsigned int i;

	for (i = 0; i < r->nr_hops; i++) {
		const struct fm_hop *hop = &r->hop[i];
		unsigned int dir = hop->from_hub > hop->to_hub;
		struct percs_link_stats __percpu *st = isr->stats[hop->link];
		u32 ppm = READ_ONCE(isr->error_ppm[hop->link]);

		this_cpu_inc(st->dir[dir].packets);
		this_cpu_add(st->dir[dir].flits[hop->vc], units);
		if (unlikely(ppm))
			this_cpu_add(st->dir[dir].replays,
				     percs_isr_replays(ppm));
	}
}

/**
 * percs_isr_count_n() - count several packets of one route at once
 * @pd: the system
 * @r: their route
 * @packets: how many
 * @flits: their flits, all together
 *
 * As @packets calls of percs_isr_count() (an RDMA transfer's packets that
 * share a route), in one update per link; replays are drawn per packet.
 */
void percs_isr_count_n(struct percs_dev *pd, const struct fm_route *r,
		       u32 packets, u64 flits)
{
	struct percs_isr *isr = &pd->isr;
	unsigned int i, n;

	for (i = 0; i < r->nr_hops; i++) {
		const struct fm_hop *hop = &r->hop[i];
		unsigned int dir = hop->from_hub > hop->to_hub;
		struct percs_link_stats __percpu *st = isr->stats[hop->link];
		u32 ppm = READ_ONCE(isr->error_ppm[hop->link]);
		u64 replays = 0;

		this_cpu_add(st->dir[dir].packets, packets);
		this_cpu_add(st->dir[dir].flits[hop->vc], flits);
		if (unlikely(ppm)) {
			for (n = 0; n < packets; n++)
				replays += percs_isr_replays(ppm);
			this_cpu_add(st->dir[dir].replays, replays);
		}
	}
}

/**
 * percs_isr_flush() - count the packets a window's cached route carried
 * @pd: the system
 * @rc: the window's route cache (under its send_lock)
 *
 * The engine adds the packets it delivers on the cached route to
 * @rc->pend_packets (percs_isr_count_later()) and counts them on the links
 * here: at the end of each engine pass and before the cached route is
 * replaced, so readers of the link counters see every packet of a pass
 * once the pass is over.
 */
void percs_isr_flush(struct percs_dev *pd, struct percs_route_cache *rc)
{
	if (!rc->pend_packets)
		return;
	percs_isr_count_n(pd, &rc->route, rc->pend_packets, rc->pend_flits);
	rc->pend_packets = 0;
	rc->pend_flits = 0;
}

/*
 * Hops of @r beyond the direct route's.  Out of line: its route on the
 * stack is zeroed at every call (the kernel initialises automatic
 * variables), which the per-packet path should not pay for.
 */
static noinline unsigned int percs_isr_extra_hops(struct percs_dev *pd,
						  u32 src, u32 dst,
						  const struct fm_route *r)
{
	struct fm_route direct;

	if (r->mode == PERCS_ROUTE_DIRECT ||
	    fm_route_direct(&pd->topo, src, dst, &direct) ||
	    r->nr_hops <= direct.nr_hops)
		return 0;
	return r->nr_hops - direct.nr_hops;
}

/**
 * percs_isr_route_ref() - the route of one packet, without copying it
 * @w: the sending window (its route cache, scratch route and cursor,
 *	under send_lock)
 * @h: the validated header
 * @extra_hops: out: hops beyond the direct route's (the packet arrives
 *	after packets that took shorter routes)
 * @route_class: out: enum fm_route_class, or the error
 *
 * The direct and software-indirect routes of a destination are cached per
 * window until a link changes state; the hardware modes choose per packet.
 * The caller counts the packet on the route's links once it is delivered
 * (percs_isr_count()).
 *
 * Return: the route, valid until the window's next routing call; NULL
 * with *@route_class = -EHOSTUNREACH (no route of the mode left, or no
 * such hub) or -EINVAL (a software-named intermediate supernode that
 * cannot be one).
 */
const struct fm_route *percs_isr_route_ref(struct percs_window *w,
					   const struct percs_pkt_hdr *h,
					   unsigned int *extra_hops,
					   int *route_class)
{
	struct percs_dev *pd = w->hfi->pd;
	struct percs_route_cache *rc = &w->route;
	bool cacheable = h->route == PERCS_ROUTE_DIRECT ||
			 h->route == PERCS_ROUTE_SW_INDIRECT;
	struct fm_route *r;
	unsigned int seq;
	int ret;

	do {
		seq = read_seqbegin(&pd->isr.lock);
		if (cacheable && rc->valid && rc->hub == h->dst.hub &&
		    rc->mode == h->route && rc->arg == h->route_arg &&
		    rc->generation == pd->topo.generation) {
			r = &rc->route;
			*extra_hops = rc->extra_hops;
			ret = 0;
			continue;
		}
		if (cacheable) {
			/* The counts still owed to the route replaced. */
			percs_isr_flush(pd, rc);
			rc->valid = false;
			r = &rc->route;
		} else {
			r = &rc->scratch;
		}
		ret = fm_route(&pd->topo, w->hfi->hub, h->dst.hub, h->route,
			       h->route_arg, &w->cursor, r);
		*extra_hops = ret ? 0 : percs_isr_extra_hops(pd, w->hfi->hub,
							     h->dst.hub, r);
		if (!ret && cacheable) {
			rc->hub = h->dst.hub;
			rc->mode = h->route;
			rc->arg = h->route_arg;
			rc->extra_hops = *extra_hops;
			rc->generation = pd->topo.generation;
			rc->valid = true;
		}
	} while (read_seqretry(&pd->isr.lock, seq));
	*route_class = ret ? ret : r->route_class;
	return ret ? NULL : r;
}

/**
 * percs_isr_route() - the route of one packet, copied
 * @w: the sending window, as percs_isr_route_ref()
 * @h: the validated header
 * @route: out: the route
 * @extra_hops: out: as percs_isr_route_ref()
 *
 * Return: the route class (enum fm_route_class), or the error of
 * percs_isr_route_ref().
 */
int percs_isr_route(struct percs_window *w, const struct percs_pkt_hdr *h,
		    struct fm_route *route, unsigned int *extra_hops)
{
	const struct fm_route *r;
	int route_class;

	r = percs_isr_route_ref(w, h, extra_hops, &route_class);
	if (r)
		*route = *r;
	return route_class;
}

/**
 * percs_isr_route_hubs() - the direct route between two hubs
 * @pd: the system
 * @src_hub: where the packet starts
 * @dst_hub: where it goes
 * @r: out: the route
 *
 * For packets that no window's route cache serves (the replies of the
 * target of an atomic).  Any context.
 *
 * Return: the route class, or -EHOSTUNREACH.
 */
int percs_isr_route_hubs(struct percs_dev *pd, u32 src_hub, u32 dst_hub,
			 struct fm_route *r)
{
	unsigned int seq;
	int ret;

	do {
		seq = read_seqbegin(&pd->isr.lock);
		ret = fm_route_direct(&pd->topo, src_hub, dst_hub, r);
	} while (read_seqretry(&pd->isr.lock, seq));
	return ret ? ret : r->route_class;
}

/**
 * percs_isr_count_drop() - count a packet lost on purpose
 * @pd: the system
 * @r: the route it was on; it is lost on its last link, and counted as
 *	having crossed the others
 *
 * A route within a hub has no link: the loss shows in the global
 * counters only.
 */
void percs_isr_count_drop(struct percs_dev *pd, const struct fm_route *r)
{
	const struct fm_hop *hop;
	struct fm_route crossed;

	if (!r->nr_hops)
		return;
	crossed = *r;
	crossed.nr_hops--;
	percs_isr_count(pd, &crossed, 1);
	hop = &r->hop[r->nr_hops - 1];
	this_cpu_inc(pd->isr.stats[hop->link]->dir[hop->from_hub >
						   hop->to_hub].drops);
}

/**
 * percs_isr_set_link() - take a link down or bring it up
 * @pd: the system
 * @id: link id
 * @up: the new state
 *
 * Routes avoid a link that is down from the next packet on; a destination
 * with no route left is refused with -EHOSTUNREACH at the sender.
 *
 * Return: 0, or -ENOENT for an unknown link.
 */
int percs_isr_set_link(struct percs_dev *pd, u32 id, bool up)
{
	int ret;

	if (id >= pd->topo.nr_links)
		return -ENOENT;
	write_seqlock(&pd->isr.lock);
	ret = fm_link_set_state(&pd->topo, id, up);
	write_sequnlock(&pd->isr.lock);
	return ret;
}

/**
 * percs_isr_set_error_ppm() - transient error rate of one link or all
 * @pd: the system
 * @id: link id, or %PERCS_ISR_ALL_LINKS
 * @ppm: errors per million transmissions, 0..%PERCS_ISR_MAX_ERROR_PPM
 *
 * Return: 0, -ENOENT for an unknown link, -EINVAL for a rate out of range.
 */
int percs_isr_set_error_ppm(struct percs_dev *pd, u32 id, u32 ppm)
{
	u32 i;

	if (ppm > PERCS_ISR_MAX_ERROR_PPM)
		return -EINVAL;
	if (id == PERCS_ISR_ALL_LINKS) {
		for (i = 0; i < pd->topo.nr_links; i++)
			WRITE_ONCE(pd->isr.error_ppm[i], ppm);
		return 0;
	}
	if (id >= pd->topo.nr_links)
		return -ENOENT;
	WRITE_ONCE(pd->isr.error_ppm[id], ppm);
	return 0;
}

/**
 * percs_isr_link_stats() - one link's counters, summed over CPUs
 * @pd: the system
 * @id: link id, below pd->topo.nr_links
 * @sum: out: both directions
 */
void percs_isr_link_stats(struct percs_dev *pd, u32 id,
			  struct percs_link_stats *sum)
{
	unsigned int cpu, d, vc;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct percs_link_stats *st =
			per_cpu_ptr(pd->isr.stats[id], cpu);

		for (d = 0; d < 2; d++) {
			sum->dir[d].packets += st->dir[d].packets;
			sum->dir[d].replays += st->dir[d].replays;
			sum->dir[d].drops += st->dir[d].drops;
			for (vc = 0; vc < FM_L_VCS; vc++)
				sum->dir[d].flits[vc] += st->dir[d].flits[vc];
		}
	}
}

