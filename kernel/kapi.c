// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the interface exported to kernel clients (kapi.h says what it
 * offers and why).  Each function is a thin door onto the file that owns
 * the rule: windows and jobs (window.c, job.c), routes and counters
 * (isr.c), the lossy stage (net.c), registrations (nmmu.c).
 */
#include <linux/export.h>
#include <linux/math64.h>

#include "nmmu.h"
#include "firmware-model/packet.h"
#include "kapi.h"

static struct percs_dev *percs_kapi_pd;

/**
 * percs_kapi_init() - publish the system to clients (module init, last)
 * @pd: the system
 */
void percs_kapi_init(struct percs_dev *pd)
{
	percs_kapi_pd = pd;
}

/* No client can be loaded at unload: each holds the module. */
void percs_kapi_exit(void)
{
	percs_kapi_pd = NULL;
}

struct percs_dev *percs_kapi_system(void)
{
	return percs_kapi_pd;
}
EXPORT_SYMBOL_GPL(percs_kapi_system);

u32 percs_kapi_nr_hfis(struct percs_dev *pd)
{
	return pd->nr_hfis;
}
EXPORT_SYMBOL_GPL(percs_kapi_nr_hfis);

struct percs_hfi *percs_kapi_hfi(struct percs_dev *pd, u32 id,
				 struct percs_kapi_hfi_info *info)
{
	struct percs_hfi *hfi;

	if (id >= pd->nr_hfis)
		return NULL;
	hfi = &pd->hfis[id];
	info->id = hfi->id;
	info->hub = hfi->hub;
	info->unit = hfi->unit;
	info->supernode = fm_hub_supernode(&pd->topo, hfi->hub);
	info->windows = pd->windows_per_hfi;
	return hfi;
}
EXPORT_SYMBOL_GPL(percs_kapi_hfi);

struct percs_job *percs_kapi_job_create(struct percs_dev *pd)
{
	return percs_job_create_kernel(pd);
}
EXPORT_SYMBOL_GPL(percs_kapi_job_create);

void percs_kapi_job_put(struct percs_job *job)
{
	percs_job_put_kernel(job);
}
EXPORT_SYMBOL_GPL(percs_kapi_job_put);

u32 percs_kapi_job_key(const struct percs_job *job)
{
	return percs_job_key(job);
}
EXPORT_SYMBOL_GPL(percs_kapi_job_key);

struct percs_window *percs_kapi_window_create(struct percs_hfi *hfi,
					      struct percs_job *job)
{
	return percs_window_create_kernel(hfi, job);
}
EXPORT_SYMBOL_GPL(percs_kapi_window_create);

void percs_kapi_window_destroy(struct percs_window *w)
{
	percs_window_destroy_kernel(w);
}
EXPORT_SYMBOL_GPL(percs_kapi_window_destroy);

u32 percs_kapi_window_index(const struct percs_window *w)
{
	return w->index;
}
EXPORT_SYMBOL_GPL(percs_kapi_window_index);

/* Is @t there and may @src reach it?  Counts the arrival on @t. */
static int percs_kapi_reach(struct percs_window *src,
			    const struct percs_addr *a, u64 packets)
{
	struct percs_window *t;
	int ret;

	rcu_read_lock();
	t = percs_window_lookup_rcu(src->hfi->pd, a, &ret);
	if (t)
		ret = percs_window_may_send_to(src, t);
	if (!ret) {
		spin_lock(&t->recv_lock);
		if (t->recv_dead) {
			ret = -ECONNREFUSED;
		} else {
			t->arrivals += packets;
			WRITE_ONCE(t->st->packets_received,
				   t->st->packets_received + packets);
		}
		spin_unlock(&t->recv_lock);
	}
	rcu_read_unlock();
	return ret;
}

int percs_kapi_xfer(struct percs_window *src, u32 hub, u32 unit, u32 window,
		    u64 bytes, u32 flags)
{
	struct percs_dev *pd = src->hfi->pd;
	struct percs_pkt_hdr h = { .route = PERCS_ROUTE_DIRECT };
	const struct fm_route *r;
	unsigned int extra_hops;
	u64 packets, flits;
	u32 rem;
	int cls, ret;

	if (flags & ~PERCS_KAPI_XFER_UNRELIABLE)
		return -EINVAL;
	if (hub > U16_MAX || unit > U8_MAX || window > U16_MAX)
		return -EHOSTUNREACH;
	h.dst.hub = hub;
	h.dst.hfi = unit;
	h.dst.window = window;
	packets = div_u64_rem(bytes, PERCS_MAX_PAYLOAD, &rem);
	flits = packets * fm_pkt_units(PERCS_MAX_PAYLOAD);
	if (rem || !bytes) {
		packets++;
		flits += fm_pkt_units(rem);
	}

	spin_lock(&src->send_lock);
	if (src->dead) {
		ret = -ECONNREFUSED;
		goto out;
	}
	r = percs_isr_route_ref(src, &h, &extra_hops, &cls);
	if (!r) {
		ret = cls;
		goto out;
	}
	ret = 1;
	if (flags & PERCS_KAPI_XFER_UNRELIABLE) {
		struct percs_fate f;

		/* One datagram: lost, once, or twice (counted there). */
		percs_dgram_fate(pd, r, &f);
		ret = f.copies;
		if (f.copies && flits > 1)
			percs_isr_count_n(pd, r, 0, (flits - 1) * f.copies);
	} else {
		/* Link-level retry: never lost, replays counted. */
		percs_isr_count_n(pd, r, packets, flits);
	}
	this_cpu_add(src->hfi->stats->packets[cls], packets);
	WRITE_ONCE(src->st->packets_sent, src->st->packets_sent + packets);
	if (ret) {
		int err = percs_kapi_reach(src, &h.dst, packets);

		if (err)
			ret = err;
	}
out:
	spin_unlock(&src->send_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(percs_kapi_xfer);

struct percs_mr *percs_kapi_mr_pin(struct percs_dev *pd, u64 addr,
				   u64 length, u32 access)
{
	return percs_mr_create_checked(pd, addr, length, access);
}
EXPORT_SYMBOL_GPL(percs_kapi_mr_pin);

void percs_kapi_mr_unpin(struct percs_mr *mr)
{
	WRITE_ONCE(mr->dead, true);
	percs_mr_put(mr);
}
EXPORT_SYMBOL_GPL(percs_kapi_mr_unpin);

int percs_kapi_mr_copy(struct percs_mr *dst, u64 daddr, struct percs_mr *src,
		       u64 saddr, size_t len)
{
	return percs_mr_copy_mr(dst, daddr, src, saddr, len);
}
EXPORT_SYMBOL_GPL(percs_kapi_mr_copy);

int percs_kapi_mr_read(struct percs_mr *mr, u64 addr, void *buf, size_t len)
{
	return percs_mr_copy_from(mr, addr, buf, len);
}
EXPORT_SYMBOL_GPL(percs_kapi_mr_read);

int percs_kapi_mr_write(struct percs_mr *mr, u64 addr, const void *buf,
			size_t len)
{
	return percs_mr_copy_to(mr, addr, buf, len);
}
EXPORT_SYMBOL_GPL(percs_kapi_mr_write);

int percs_kapi_mr_atomic64(struct percs_mr *mr, u64 addr, u32 op, u64 a,
			   u64 b, u64 *orig)
{
	if (op != PERCS_KAPI_AMO_FETCH_ADD && op != PERCS_KAPI_AMO_CMP_SWAP)
		return -EINVAL;
	return percs_mr_atomic64(mr, addr, op == PERCS_KAPI_AMO_CMP_SWAP, a, b,
				 orig);
}
EXPORT_SYMBOL_GPL(percs_kapi_mr_atomic64);
