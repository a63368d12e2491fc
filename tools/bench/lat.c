// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench lat: ping-pong latency between two processes.
 *
 * Side A sends a packet to side B, B answers with a packet of the same
 * kind and size, A times the round trip; half of it is the figure.  Both
 * sides busy-poll their receive FIFO with percs_recv_peek() (no poll(2),
 * no futex) and read the packet in place (zero-copy receive); credits go
 * back in batches of a quarter of the receive FIFO.  A FIFO send is
 * percs_send() (compose: copy header and payload into the send FIFO, then
 * trigger), an immediate send is percs_icswx().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const unsigned int lat_fifo[] = {
	8, 16, 32, 64, PERCS_IMM_PAYLOAD, 128, 256, 512, 1024, PERCS_MAX_PAYLOAD,
};
static const unsigned int lat_imm[] = { 8, 16, 32, 64, PERCS_IMM_PAYLOAD };

const struct case_sizes lat_sizes[] = {
	[BK_FIFO] = { lat_fifo, BENCH_NELEM(lat_fifo) },
	[BK_IMM] = { lat_imm, BENCH_NELEM(lat_imm) },
};

struct lat_arg {
	enum bench_kind kind;
	unsigned int size;
	unsigned int iters;
	unsigned int warmup;
	double budget_s;
	uint64_t *samples;
	unsigned int nsamples;
	uint64_t msgs;		/* sent by side A, warm-up included */
	uint64_t kicks;		/* side A's window counters over the run */
	uint64_t sent_polled;
	uint64_t sent_kicked;
};

/* Receive-side bookkeeping: credits in batches of a quarter FIFO. */
struct rx {
	unsigned int uncredited;	/* units */
	unsigned int batch;
};

static void rx_init(struct rx *rx)
{
	rx->uncredited = 0;
	rx->batch = g_cfg->fifo_size / PERCS_FLIT_SIZE / 4;
}

static unsigned int pkt_units(unsigned int len)
{
	return (PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) / PERCS_FLIT_SIZE;
}

static int rx_done(struct percs_window *w, struct rx *rx, unsigned int len)
{
	percs_recv_consume(w);
	rx->uncredited += pkt_units(len);
	if (rx->uncredited >= rx->batch) {
		rx->uncredited = 0;
		return percs_recv_credit(w);
	}
	return 0;
}

static int send_one(struct endpoint *ep, enum bench_kind kind,
		    const void *buf, unsigned int len, uint32_t tag)
{
	struct spin s;
	int ret;

	spin_init(&s);
	for (;;) {
		if (kind == BK_IMM)
			ret = percs_icswx(ep->w, &ep->peer, buf, len, tag);
		else
			ret = percs_send(ep->w, &ep->peer, buf, len, tag, 0);
		if (ret != -EAGAIN)
			return ret;
		if (spin_tick(&s))
			return -ETIMEDOUT;
	}
}

/* Side B: answer every packet with one of the same kind and length. */
static int lat_echo(struct endpoint *ep, void *varg)
{
	static unsigned char buf[PERCS_MAX_PAYLOAD];
	struct pair_ctl *ctl = ep->ctl;
	struct rx rx;
	struct spin s;
	int ret;

	(void)varg;
	memset(buf, 0xb5, sizeof(buf));
	rx_init(&rx);
	pair_set_ready(ctl);
	spin_init(&s);
	for (;;) {
		const struct percs_pkt_hdr *h = percs_recv_peek(ep->w);
		enum bench_kind kind;
		unsigned int len;
		uint32_t tag;

		if (!h) {
			if (__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE)) {
				const volatile struct percs_status *st =
					percs_window_status(ep->w);

				ctl->b_kicks = st->kicks;
				ctl->b_sent_polled = st->sent_polled;
				ctl->b_sent_kicked = st->sent_kicked;
				return 0;
			}
			if (spin_tick(&s))
				return ep_fail(ep, -ETIMEDOUT,
					       "side B: no packet");
			continue;
		}
		kind = h->kind == PERCS_PKT_IMM ? BK_IMM : BK_FIFO;
		len = h->length;
		tag = h->tag;
		ret = rx_done(ep->w, &rx, len);
		if (ret)
			return ep_fail(ep, ret, "side B: credit");
		ret = send_one(ep, kind, buf, len, tag);
		if (ret)
			return ep_fail(ep, ret, "side B: %s send",
				       kind_name(kind));
		spin_init(&s);
	}
}

/* Side A: time warm-up + measured round trips within the time budget. */
static int lat_timer(struct endpoint *ep, void *varg)
{
	static unsigned char buf[PERCS_MAX_PAYLOAD];
	struct lat_arg *a = varg;
	const volatile struct percs_status *st = percs_window_status(ep->w);
	uint64_t kicks0 = st->kicks, polled0 = st->sent_polled;
	uint64_t kicked0 = st->sent_kicked;
	uint64_t start, warm_end, end;
	unsigned int i, n = 0;
	struct rx rx;
	int ret;

	memset(buf, 0xa5, sizeof(buf));
	rx_init(&rx);
	ret = pair_wait_ready(ep->ctl);
	if (ret)
		return ep_fail(ep, ret, "side B did not start");
	start = now_ns();
	warm_end = start + (uint64_t)(a->budget_s * 0.2e9);
	end = start + (uint64_t)(a->budget_s * 1e9);

	for (i = 0; n < a->iters; i++) {
		bool warm = i < a->warmup;
		const struct percs_pkt_hdr *h;
		uint64_t t0, t1;
		struct spin s;

		t0 = now_ns();
		if (warm && t0 > warm_end)
			i = a->warmup;	/* warm-up ran out of time */
		warm = i < a->warmup;
		if (!warm && n && t0 > end)
			break;
		ret = send_one(ep, a->kind, buf, a->size, i);
		if (ret)
			return ep_fail(ep, ret, "side A: %s send",
				       kind_name(a->kind));
		spin_init(&s);
		while (!(h = percs_recv_peek(ep->w))) {
			if (spin_tick(&s))
				return ep_fail(ep, -ETIMEDOUT,
					       "side A: no answer to packet %u",
					       i);
		}
		t1 = now_ns();
		if (h->tag != i || h->length != a->size)
			return ep_fail(ep, 0,
				       "side A: got tag %u length %u, expected %u/%u",
				       h->tag, h->length, i, a->size);
		ret = rx_done(ep->w, &rx, a->size);
		if (ret)
			return ep_fail(ep, ret, "side A: credit");
		if (!warm)
			a->samples[n++] = t1 - t0;
	}
	a->nsamples = n;
	a->msgs = i;
	a->kicks = st->kicks - kicks0;
	a->sent_polled = st->sent_polled - polled0;
	a->sent_kicked = st->sent_kicked - kicked0;
	__atomic_store_n(&ep->ctl->stop, 1, __ATOMIC_RELEASE);
	return 0;
}

/**
 * lat_measure() - one latency case
 * @r: kind, mode, pair and size in; statistics or error out
 * @iters: round trips measured
 * @warmup: round trips before those (at most a fifth of the budget)
 * @budget_s: time limit for the case; fewer round trips are measured when
 *	it runs out (the count is reported)
 * Return: 0 or -errno (also in @r->err, with @r->errmsg).
 */
int lat_measure(struct lat_result *r, unsigned int iters, unsigned int warmup,
		double budget_s)
{
	struct pair_opts o = { .pair = r->pair, .mode = r->mode };
	struct lat_arg a = {
		.kind = r->kind, .size = r->size, .iters = iters,
		.warmup = warmup, .budget_s = budget_s,
	};

	a.samples = calloc(iters ? iters : 1, sizeof(*a.samples));
	if (!a.samples) {
		snprintf(r->errmsg, sizeof(r->errmsg), "out of memory");
		return r->err = -ENOMEM;
	}
	struct pair_ctl ctl;

	r->err = pair_run(&o, lat_timer, lat_echo, &a, r->errmsg,
			  sizeof(r->errmsg), &ctl);
	/* A round trip is two one-way trips: report half. */
	if (!r->err) {
		/*
		 * Counted, not estimated: both windows' kick system calls
		 * (side B's from its fresh window, over its whole run) per
		 * message sent by either side.
		 */
		uint64_t sends = a.sent_polled + a.sent_kicked +
				 ctl.b_sent_polled + ctl.b_sent_kicked;

		r->sys_per_msg = a.msgs ? (double)(a.kicks + ctl.b_kicks) /
					  (2.0 * a.msgs) : 0;
		r->polled_frac = sends ? (double)(a.sent_polled +
						  ctl.b_sent_polled) / sends : 0;
		r->disturbed = 0;
		for (unsigned int i = 0; i < a.nsamples; i++)
			if (a.samples[i] > DISTURBED_NS)
				r->disturbed += 1.0 / a.nsamples;
		stats_from_samples(a.samples, a.nsamples, 0.5, &r->st);
	}
	free(a.samples);
	return r->err;
}

/**
 * run_lat() - every latency case: pairs x engine modes x kinds x sizes
 * @cfg: configuration
 * @res: results appended here
 * Return: 0 (failed cases are recorded in their result).
 */
int run_lat(const struct bench_cfg *cfg, struct results *res)
{
	unsigned int total = 0, done = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (int p = 0; p < BP_COUNT; p++) {
			if (!cfg->pair[p].valid)
				continue;
			for (int m = BM_KICK; m < BM_NR; m++) {
				for (int k = BK_FIFO; k <= BK_IMM; k++) {
					for (size_t i = 0; i < lat_sizes[k].n; i++) {
						unsigned int size = lat_sizes[k].v[i];
						struct lat_result *r;

						if (!bench_want(cfg, k, m, p, size))
							continue;
						if (!pass) {
							total++;
							continue;
						}
						if (res->nlat >= LAT_MAX)
							break;
						r = &res->lat[res->nlat++];
						memset(r, 0, sizeof(*r));
						r->kind = k;
						r->mode = m;
						r->pair = p;
						r->size = size;
						progress("lat %u/%u: %s %s %s %u B",
							 ++done, total,
							 kind_name(k), mode_name(m),
							 cfg->pair[p].name,
							 r->size);
						if (lat_measure(r, cfg->lat_iters,
								cfg->lat_warmup,
								cfg->lat_budget_s))
							progress("lat: %s %s %s %u B failed: %s\n",
								 kind_name(k),
								 mode_name(m),
								 cfg->pair[p].name,
								 r->size, r->errmsg);
					}
				}
			}
		}
	}
	progress("lat: %u cases done\n", done);
	return 0;
}
