// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench engine: where the time of one send goes, measured in one
 * process on one CPU (no cross-CPU cache traffic, no scheduler hand-off,
 * so it is also the figure least disturbed by a busy host).
 *
 * One process holds a kick-mode window on HFI 0 and one on HFI 1 of hub A.
 * Each round composes a batch of FIFO packets with percs_send_compose()
 * (user-space copy into the send FIFO), triggers with percs_send_trigger()
 * (the 8-byte store and libpercs's doorbell, fdatasync(2) on the window:
 * the engine routes each packet and copies it into the receive FIFO), then
 * peeks and consumes every packet on the other window and returns the
 * credit.  The three phases are timed separately; the medians over the
 * rounds, per packet, are reported.  An immediate send is timed as one
 * percs_icswx() call (slot copy, trigger store and the fdatasync doorbell).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const unsigned int cost_fifo_sizes[] = {
	8, 64, PERCS_IMM_PAYLOAD, 256, 1024, PERCS_MAX_PAYLOAD,
};
static const unsigned int cost_imm_sizes[] = { 8, PERCS_IMM_PAYLOAD };

const struct case_sizes cost_sizes[] = {
	[BK_FIFO] = { cost_fifo_sizes, BENCH_NELEM(cost_fifo_sizes) },
	[BK_IMM] = { cost_imm_sizes, BENCH_NELEM(cost_imm_sizes) },
};

struct cost_ctx {
	struct percs_hfi *ha, *hb;
	struct percs_window *a, *b;
	struct percs_addr dst;
	uint64_t *s_compose, *s_kick, *s_recv;
	unsigned int rounds;
};

static double med(uint64_t *s, unsigned int n, double scale)
{
	struct lat_stats st;

	stats_from_samples(s, n, scale, &st);
	return st.median_ns;
}

/* Drain @n packets from b; Return: 0 or -errno. */
static int drain(struct cost_ctx *c, unsigned int n)
{
	struct spin s;

	spin_init(&s);
	while (n) {
		if (!percs_recv_peek(c->b)) {
			if (spin_tick(&s))
				return -ETIMEDOUT;
			continue;
		}
		percs_recv_consume(c->b);
		n--;
	}
	return percs_recv_credit(c->b);
}

static int cost_fifo(struct cost_ctx *c, struct cost_result *r)
{
	static unsigned char buf[PERCS_MAX_PAYLOAD];
	unsigned int warm = c->rounds / 10 + 1;
	int ret;

	for (unsigned int i = 0; i < warm + c->rounds; i++) {
		uint64_t t0, t1, t2, t3;

		t0 = now_ns();
		for (unsigned int k = 0; k < r->batch; k++) {
			ret = percs_send_compose(c->a, &c->dst, buf, r->size, k, 0);
			if (ret)
				return ret;
		}
		t1 = now_ns();
		ret = percs_send_trigger(c->a);
		if (ret)
			return ret;
		t2 = now_ns();
		ret = drain(c, r->batch);
		if (ret)
			return ret;
		t3 = now_ns();
		if (i < warm)
			continue;
		c->s_compose[i - warm] = t1 - t0;
		c->s_kick[i - warm] = t2 - t1;
		c->s_recv[i - warm] = t3 - t2;
	}
	r->compose_ns = med(c->s_compose, c->rounds, 1.0 / r->batch);
	r->kick_ns = med(c->s_kick, c->rounds, 1.0 / r->batch);
	r->recv_ns = med(c->s_recv, c->rounds, 1.0 / r->batch);
	return 0;
}

static int cost_imm(struct cost_ctx *c, struct cost_result *r)
{
	static unsigned char buf[PERCS_IMM_PAYLOAD];
	unsigned int warm = c->rounds / 10 + 1;
	int ret;

	for (unsigned int i = 0; i < warm + c->rounds; i++) {
		uint64_t t0, t1, t2;

		t0 = now_ns();
		ret = percs_icswx(c->a, &c->dst, buf, r->size, i);
		if (ret)
			return ret;
		t1 = now_ns();
		ret = drain(c, 1);
		if (ret)
			return ret;
		t2 = now_ns();
		if (i < warm)
			continue;
		c->s_kick[i - warm] = t1 - t0;
		c->s_recv[i - warm] = t2 - t1;
	}
	r->compose_ns = 0;
	r->kick_ns = med(c->s_kick, c->rounds, 1.0);
	r->recv_ns = med(c->s_recv, c->rounds, 1.0);
	return 0;
}

static void add(struct results *res, enum bench_kind k, unsigned int size,
		unsigned int batch, struct cost_ctx *c)
{
	struct cost_result *r;

	if (res->ncost >= COST_MAX ||
	    !bench_want(g_cfg, k, BM_KICK, BP_NEAR, size))
		return;
	r = &res->cost[res->ncost++];
	memset(r, 0, sizeof(*r));
	r->kind = k;
	r->size = size;
	r->batch = batch;
	r->err = k == BK_IMM ? cost_imm(c, r) : cost_fifo(c, r);
}

/**
 * run_cost() - per-packet cost of the kick-mode path, one process
 * @cfg: configuration (hub A's two HFIs are used)
 * @res: results appended here
 * Return: 0, or -errno if the windows could not be set up.
 */
int run_cost(const struct bench_cfg *cfg, struct results *res)
{
	const struct pair_def *pd = &cfg->pair[BP_NEAR];
	struct percs_window_attr attr = {
		.flags = PERCS_WINDOW_ATTR_KICK,
		.send_fifo_size = cfg->fifo_size,
		.recv_fifo_size = cfg->fifo_size,
		.job_fd = cfg->job_fd,
		.window = PERCS_WINDOW_ANY,
	};
	unsigned int batch = cfg->bw_batch;
	struct cost_ctx c = { 0 };
	int ret;

	/* A batch must fit in both FIFOs at the largest size. */
	if (batch > cfg->fifo_size / PERCS_MAX_PACKET / 2)
		batch = cfg->fifo_size / PERCS_MAX_PACKET / 2;
	if (!batch)
		batch = 1;
	c.rounds = cfg->quick ? 300 : 3000;
	c.s_compose = calloc(c.rounds, sizeof(uint64_t));
	c.s_kick = calloc(c.rounds, sizeof(uint64_t));
	c.s_recv = calloc(c.rounds, sizeof(uint64_t));
	ret = -ENOMEM;
	if (!c.s_compose || !c.s_kick || !c.s_recv)
		goto out;
	ret = pin_self(0);
	if (ret)
		goto out;
	ret = percs_hfi_open(pd->hub[0], pd->unit[0], &c.ha);
	if (!ret)
		ret = percs_hfi_open(pd->hub[1], pd->unit[1], &c.hb);
	if (!ret)
		ret = percs_window_reserve(c.ha, &attr, &c.a);
	if (!ret)
		ret = percs_window_reserve(c.hb, &attr, &c.b);
	if (ret)
		goto out;
	c.dst = percs_window_addr(c.b);

	progress("engine: per-packet cost");
	for (size_t i = 0; i < cost_sizes[BK_FIFO].n; i++) {
		add(res, BK_FIFO, cost_sizes[BK_FIFO].v[i], 1, &c);
		add(res, BK_FIFO, cost_sizes[BK_FIFO].v[i], batch, &c);
	}
	for (size_t i = 0; i < cost_sizes[BK_IMM].n; i++)
		add(res, BK_IMM, cost_sizes[BK_IMM].v[i], 1, &c);
	progress("engine: done\n");
	ret = 0;
out:
	percs_window_release(c.a);
	percs_window_release(c.b);
	percs_hfi_close(c.ha);
	percs_hfi_close(c.hb);
	free(c.s_compose);
	free(c.s_kick);
	free(c.s_recv);
	return ret;
}
