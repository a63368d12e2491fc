// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench bw: one-way streaming bandwidth and message rate.
 *
 * Side A streams packets to side B for a warm-up period, sends a MARK
 * packet, streams for the measured period and sends an END packet.  Side B
 * consumes every packet in place, returns credits in batches of a quarter
 * of its receive FIFO (and whenever its FIFO runs empty), and times MARK to
 * END: bytes/s of payload and packets/s between those two arrivals, both
 * clocks read by the receiver.  It also times chunks of four receive
 * FIFOs' worth of packets; the median of those chunks' rates is the
 * bandwidth without the stalls a busy host causes by descheduling a vCPU
 * (reported beside the overall figure).
 *
 * FIFO sends compose up to --batch packets and trigger once.  By default
 * each packet is composed with percs_send_reserve(): only its header is
 * written and the payload bytes are left as they are in the send FIFO (an
 * application that builds its message in place; the bench writes nothing
 * there).  With --copy, percs_send_compose() copies the payload from a
 * buffer into the FIFO.  Immediate sends are one
 * percs_icswx() per packet: ICSWX has no batch (in kick mode that is one
 * system call per packet, by the contract of the instruction).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define TAG_MARK 0xfffffff0u
#define TAG_END 0xfffffff1u

static const unsigned int bw_fifo[] = {
	64, 128, 256, 512, 1024, PERCS_MAX_PAYLOAD,
};
static const unsigned int bw_imm[] = { PERCS_IMM_PAYLOAD };

const struct case_sizes bw_sizes[] = {
	[BK_FIFO] = { bw_fifo, BENCH_NELEM(bw_fifo) },
	[BK_IMM] = { bw_imm, BENCH_NELEM(bw_imm) },
};

struct bw_arg {
	enum bench_kind kind;
	unsigned int size;
	bool copy;
	double secs;
	double warm_secs;
	/* the sender's diagnostics */
	uint64_t room_waits;	/* times the send FIFO was full */
	uint64_t room_wait_ns;	/* time spent waiting for room */
	uint64_t stream_ns;	/* the measured stream, sender's clock */
	uint64_t send_blocked;	/* status page: waits for the receiver */
};

static unsigned int pkt_units(unsigned int len)
{
	return (PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) / PERCS_FLIT_SIZE;
}

#define MAX_CHUNKS 65536

/*
 * The median of the chunks' rates: the bandwidth the path sustains while
 * both vCPUs run, without the stalls of a host that deschedules one.  A
 * chunk is four receive FIFOs' worth of packets, so that at least three
 * quarters of a chunk's packets were delivered while it was timed (a
 * chunk cannot be a burst the receiver merely drains).
 */
static double chunk_median(const uint64_t *t, unsigned int n, double bytes)
{
	uint64_t *d;
	double m;

	if (n < 2)
		return 0;
	d = malloc((n - 1) * sizeof(*d));
	if (!d)
		return 0;
	for (unsigned int i = 1; i < n; i++)
		d[i - 1] = t[i] - t[i - 1];
	qsort(d, n - 1, sizeof(*d), cmp_u64);
	m = (double)d[(n - 1) / 2];
	free(d);
	return m > 0 ? bytes * 1e9 / m : 0;
}

/* Side B: consume, credit, time MARK..END. */
static int bw_sink(struct endpoint *ep, void *varg)
{
	static uint64_t chunk_t[MAX_CHUNKS];
	struct pair_ctl *ctl = ep->ctl;
	unsigned int batch = g_cfg->fifo_size / PERCS_FLIT_SIZE / 4;
	unsigned int uncredited = 0, nchunks = 0, last_len = 0, chunk = 1;
	uint64_t packets = 0, bytes = 0, t0 = 0;
	bool counting = false;
	struct spin s;
	int ret;

	(void)varg;
	pair_set_ready(ctl);
	spin_init(&s);
	for (;;) {
		const struct percs_pkt_hdr *h = percs_recv_peek(ep->w);
		unsigned int len;
		uint32_t tag;

		if (!h) {
			/* Idle: hand back what we hold so the sender runs on. */
			if (uncredited) {
				uncredited = 0;
				ret = percs_recv_credit(ep->w);
				if (ret)
					return ep_fail(ep, ret, "side B: credit");
			}
			/* The sender gave up: it reports why. */
			if (__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE))
				return 0;
			if (spin_tick(&s))
				return ep_fail(ep, -ETIMEDOUT,
					       "side B: no packet");
			continue;
		}
		len = h->length;
		tag = h->tag;
		percs_recv_consume(ep->w);
		uncredited += pkt_units(len);
		if (uncredited >= batch) {
			uncredited = 0;
			ret = percs_recv_credit(ep->w);
			if (ret)
				return ep_fail(ep, ret, "side B: credit");
		}
		spin_init(&s);
		if (tag == TAG_MARK) {
			t0 = now_ns();
			chunk_t[nchunks++] = t0;
			chunk = 4 * (g_cfg->fifo_size / PERCS_FLIT_SIZE) /
				pkt_units(len);
			counting = true;
		} else if (tag == TAG_END) {
			ctl->rx_t1 = now_ns();
			break;
		} else if (counting) {
			packets++;
			bytes += len;
			last_len = len;
			if (!(packets % chunk) && nchunks < MAX_CHUNKS)
				chunk_t[nchunks++] = now_ns();
		}
	}
	ctl->rx_t0 = t0;
	ctl->rx_packets = packets;
	ctl->rx_bytes = bytes;
	ctl->rx_chunks = nchunks ? nchunks - 1 : 0;
	ctl->rx_median_bps = chunk_median(chunk_t, nchunks,
					  (double)last_len * chunk);
	percs_recv_credit(ep->w);
	return counting ? 0 : ep_fail(ep, 0, "side B: END before MARK");
}

/* Send FIFO full: wait for the engine to consume, kicking now and then. */
static int wait_room(struct endpoint *ep, struct bw_arg *a, unsigned int size)
{
	uint64_t t0 = now_ns();
	struct spin s;
	unsigned int n = 0;
	int ret;

	a->room_waits++;
	spin_init(&s);
	for (;;) {
		if (percs_send_space(ep->w) >= size) {
			a->room_wait_ns += now_ns() - t0;
			return 0;
		}
		/*
		 * In kick mode the receiver's credit kick retries us; in poll
		 * mode the engine does.  A kick of our own is only a fallback.
		 */
		if (!(++n & 4095)) {
			ret = percs_kick(ep->w, PERCS_KICK_F_SEND);
			if (ret < 0)
				return ret;
		}
		if (spin_tick(&s))
			return -ETIMEDOUT;
	}
}

/*
 * In place: the header only, the payload area is left as the FIFO holds
 * it (the message "already built there").  --copy: header and payload.
 */
static inline int compose(struct endpoint *ep, const struct bw_arg *a,
			  const void *buf, uint32_t tag)
{
	void *payload;

	if (!a->copy)
		return percs_send_reserve(ep->w, &ep->peer, a->size, tag, 0,
					  &payload);
	return percs_send_compose(ep->w, &ep->peer, buf, a->size, tag, 0);
}

static inline int trigger(struct endpoint *ep)
{
	return percs_send_trigger(ep->w);
}

/* One FIFO packet with a control tag, composed and triggered. */
static int send_ctl_fifo(struct endpoint *ep, struct bw_arg *a,
			 const void *buf, uint32_t tag)
{
	int ret;

	for (;;) {
		ret = compose(ep, a, buf, tag);
		if (ret != -EAGAIN)
			break;
		ret = trigger(ep);
		if (!ret)
			ret = wait_room(ep, a, a->size);
		if (ret)
			return ret;
	}
	return ret ? ret : trigger(ep);
}

static int send_imm(struct endpoint *ep, const struct bw_arg *a,
		    const void *buf, uint32_t tag)
{
	struct spin s;
	int ret;

	spin_init(&s);
	while ((ret = percs_icswx(ep->w, &ep->peer, buf, a->size, tag)) ==
	       -EAGAIN) {
		if (spin_tick(&s))
			return -ETIMEDOUT;
	}
	return ret;
}

/* Stream until @until (ns), then send one packet tagged @last. */
static int stream(struct endpoint *ep, struct bw_arg *a,
		  const void *buf, uint64_t until, uint32_t last)
{
	unsigned int batch = g_cfg->bw_batch;
	uint32_t tag = 0;
	int ret;

	while (now_ns() < until) {
		if (a->kind == BK_IMM) {
			for (unsigned int k = 0; k < 16; k++) {
				ret = send_imm(ep, a, buf, tag++);
				if (ret)
					return ep_fail(ep, ret, "side A: icswx");
			}
			continue;
		}
		unsigned int k;

		for (k = 0; k < batch; k++) {
			ret = compose(ep, a, buf, tag);
			if (ret == -EAGAIN)
				break;
			if (ret)
				return ep_fail(ep, ret, "side A: compose");
			tag++;
		}
		if (k) {
			ret = trigger(ep);
			if (ret)
				return ep_fail(ep, ret, "side A: trigger");
		} else {
			ret = wait_room(ep, a, a->size);
			if (ret)
				return ep_fail(ep, ret, "side A: send FIFO stays full");
		}
	}
	ret = a->kind == BK_IMM ? send_imm(ep, a, buf, last) :
				  send_ctl_fifo(ep, a, buf, last);
	return ret ? ep_fail(ep, ret, "side A: control packet") : 0;
}

/* Side A: the sender. */
static int bw_source(struct endpoint *ep, void *varg)
{
	static unsigned char buf[PERCS_MAX_PAYLOAD];
	struct bw_arg *a = varg;
	uint64_t t;
	int ret;

	memset(buf, 0x5a, sizeof(buf));
	ret = pair_wait_ready(ep->ctl);
	if (ret)
		return ep_fail(ep, ret, "side B did not start");
	t = now_ns();
	ret = stream(ep, a, buf, t + (uint64_t)(a->warm_secs * 1e9),
		     TAG_MARK);
	if (ret)
		return ret;
	t = now_ns();
	a->room_waits = a->room_wait_ns = 0;
	ret = stream(ep, a, buf, t + (uint64_t)(a->secs * 1e9), TAG_END);
	a->stream_ns = now_ns() - t;
	a->send_blocked = percs_window_status(ep->w)->send_blocked;
	return ret;
}

/**
 * bw_measure() - one bandwidth case
 * @r: kind, mode, pair, size and copy in; figures or error out
 * @secs: measured streaming time
 * @warm_secs: streaming before the measurement starts
 * Return: 0 or -errno (also in @r->err, with @r->errmsg).
 */
int bw_measure(struct bw_result *r, double secs, double warm_secs)
{
	struct pair_opts o = {
		.pair = r->pair,
		.mode = r->mode,
	};
	struct bw_arg a = {
		.kind = r->kind, .size = r->size, .copy = r->copy,
		.secs = secs, .warm_secs = warm_secs,
	};
	struct pair_ctl ctl;
	double t;

	r->err = pair_run(&o, bw_source, bw_sink, &a, r->errmsg,
			  sizeof(r->errmsg), &ctl);
	if (r->err)
		return r->err;
	t = (double)(ctl.rx_t1 - ctl.rx_t0) / 1e9;
	r->packets = ctl.rx_packets;
	r->bytes = ctl.rx_bytes;
	r->secs = t;
	r->bps = t > 0 ? (double)r->bytes / t : 0;
	r->pps = t > 0 ? (double)r->packets / t : 0;
	r->chunks = ctl.rx_chunks;
	/* Too few chunks for a median: the overall figure stands in. */
	r->median_bps = r->chunks >= 5 ? ctl.rx_median_bps : r->bps;
	r->room_waits = a.room_waits;
	r->room_wait_frac = a.stream_ns ?
			    (double)a.room_wait_ns / (double)a.stream_ns : 0;
	r->send_blocked = a.send_blocked;
	return 0;
}

/**
 * run_bw() - every bandwidth case: pairs x engine modes x kinds x sizes
 * @cfg: configuration
 * @res: results appended here
 * Return: 0 (failed cases are recorded in their result).
 */
int run_bw(const struct bench_cfg *cfg, struct results *res)
{
	unsigned int total = 0, done = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (int p = 0; p < BP_COUNT; p++) {
			if (!cfg->pair[p].valid)
				continue;
			for (int m = BM_KICK; m < BM_NR; m++) {
				for (int k = BK_FIFO; k <= BK_IMM; k++) {
					for (size_t i = 0; i < bw_sizes[k].n; i++) {
						unsigned int size = bw_sizes[k].v[i];
						struct bw_result *r;

						if (!bench_want(cfg, k, m, p, size))
							continue;
						if (!pass) {
							total++;
							continue;
						}
						if (res->nbw >= BW_MAX)
							break;
						r = &res->bw[res->nbw++];
						memset(r, 0, sizeof(*r));
						r->kind = k;
						r->mode = m;
						r->pair = p;
						r->size = size;
						r->copy = k == BK_FIFO && cfg->copy;
						progress("bw %u/%u: %s %s %s %u B",
							 ++done, total,
							 kind_name(k), mode_name(m),
							 cfg->pair[p].name, size);
						if (bw_measure(r, cfg->bw_secs,
							       cfg->bw_warm_secs))
							progress("bw: %s %s %s %u B failed: %s\n",
								 kind_name(k),
								 mode_name(m),
								 cfg->pair[p].name,
								 size, r->errmsg);
					}
				}
			}
		}
	}
	progress("bw: %u cases done\n", done);
	return 0;
}
