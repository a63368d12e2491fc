// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench: the target checks, measured side by side.
 *
 * The host these VMs run on is shared and its load moves within seconds
 * (a vCPU that the host deschedules turns a 100 ns cache-line hand-off
 * into milliseconds).  A ratio of two figures taken a minute apart can
 * therefore say more about the host than about percs.  So each target is
 * checked in rounds: one round measures, back to back, the limits and the
 * percs figures a target compares, and computes the round's ratio; the
 * verdict is on the median ratio over the rounds, and the spread of the
 * per-round ratios is reported with it.  A round whose cache-line or
 * latency figures show a descheduled vCPU (a quarter of the round trips
 * above 200 us) is not used, and another round is run instead (at most
 * three times the number wanted).
 *
 *  (1) kick mode, immediate send, 8 B: half RTT <= getppid() + 2 x the
 *      cache-line half RTT; beside it the floor, what an engine that cost
 *      nothing would give: the empty doorbell (fdatasync(), the cheapest
 *      system call that reaches the driver) + one cache-line half RTT
 *  (2) kick mode, FIFO send, 8 B: half RTT <= 1.2 x the immediate figure
 *  (3) kick mode FIFO streaming of 2016-B payloads >= 50% of memcpy
 *      (2 KiB chunks through 64 KiB, cache-resident); the streaming figure
 *      is the median of its chunks' rates (bw.c), which leaves
 *      out the stalls of a descheduled vCPU as the latency medians do
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct round_vals {
	double value[MAX_ROUNDS];
	double bound[MAX_ROUNDS];
	double ratio[MAX_ROUNDS];
	unsigned int n;
};


static void push(struct round_vals *rv, double value, double bound)
{
	if (rv->n >= MAX_ROUNDS || !(bound > 0) || !(value > 0))
		return;
	rv->value[rv->n] = value;
	rv->bound[rv->n] = bound;
	rv->ratio[rv->n] = value / bound;
	rv->n++;
}

static void finish(struct target *t, struct round_vals *rv)
{
	t->rounds = rv->n;
	t->avail = rv->n > 0;
	if (!t->avail)
		return;
	t->value = median_d(rv->value, rv->n);
	t->bound = median_d(rv->bound, rv->n);
	t->ratio = median_d(rv->ratio, rv->n);
	t->ratio_min = t->ratio_max = rv->ratio[0];
	for (unsigned int i = 1; i < rv->n; i++) {
		if (rv->ratio[i] < t->ratio_min)
			t->ratio_min = rv->ratio[i];
		if (rv->ratio[i] > t->ratio_max)
			t->ratio_max = rv->ratio[i];
	}
	t->pass = t->higher_better ? t->ratio >= 1 : t->ratio <= 1;
}

static struct target *new_target(struct results *res, int id,
				 enum bench_pair p)
{
	struct target *t = &res->tgt[res->ntgt++];
	const struct bench_cfg *cfg = g_cfg;

	memset(t, 0, sizeof(*t));
	t->id = id;
	t->pair = p;
	switch (id) {
	case 1:
		snprintf(t->desc, sizeof(t->desc),
			 "kick imm 8 B half RTT <= getppid + 2 x cache-line half RTT");
		strcpy(t->unit, "ns");
		break;
	case 2:
		snprintf(t->desc, sizeof(t->desc),
			 "kick FIFO 8 B half RTT <= 1.2 x kick imm 8 B");
		strcpy(t->unit, "ns");
		break;
	default:
		snprintf(t->desc, sizeof(t->desc),
			 "kick FIFO 2016 B stream (%s) >= 50%% memcpy 64 KiB",
			 cfg->copy ? "copy" : "in-place");
		strcpy(t->unit, "B/s");
		t->higher_better = true;
		break;
	}
	return t;
}

/**
 * run_targets() - the three targets, for each pair, in interleaved rounds
 * @cfg: configuration
 * @res: res->tgt filled in
 *
 * Quick runs use three rounds of 300 round trips and 0.1 s streams, full
 * runs five rounds of 2000 round trips and 0.3 s streams.
 * Return: 0.
 */
int run_targets(const struct bench_cfg *cfg, struct results *res)
{
	unsigned int rounds = cfg->quick ? 3 : 5;
	unsigned int iters = cfg->quick ? 300 : 2000;
	double budget = cfg->quick ? 0.3 : 1.0;
	double bw_secs = cfg->quick ? 0.1 : 0.3;
	double mc_secs = cfg->quick ? 0.05 : 0.2;
	struct round_vals rv[BP_COUNT][3], floor[BP_COUNT];
	unsigned int attempts = 0;
	struct lat_stats cl;

	memset(rv, 0, sizeof(rv));
	memset(floor, 0, sizeof(floor));
	res->ntgt = 0;
	res->tgt_rounds = rounds;
	/* Disturbed rounds do not count; give up after three times as many. */
	while (attempts < 3 * rounds) {
		bool need = false;
		double gp, db, mc, dist;

		for (int p = 0; p < BP_COUNT; p++)
			if (cfg->pair[p].valid && (cfg->pairs & (1u << p)) &&
			    rv[p][0].n < rounds)
				need = true;
		if (!need)
			break;
		attempts++;
		progress("targets: round %u (%u wanted)", attempts, rounds);
		if (limit_cacheline(iters, iters / 10, budget, &cl, &dist) ||
		    dist >= 0.25)
			continue;
		gp = limit_getppid(2048);
		db = limit_doorbell(cfg->pair[BP_NEAR].hub[0], cfg->job_fd, 2048);
		for (int p = 0; p < BP_COUNT; p++) {
			struct lat_result imm = {
				.kind = BK_IMM, .mode = BM_KICK, .pair = p, .size = 8,
			};
			struct lat_result fifo = imm;
			struct bw_result bw = {
				.kind = BK_FIFO, .mode = BM_KICK, .pair = p,
				.size = PERCS_MAX_PAYLOAD, .copy = cfg->copy,
			};

			if (!cfg->pair[p].valid || !(cfg->pairs & (1u << p)) ||
			    rv[p][0].n >= rounds)
				continue;
			fifo.kind = BK_FIFO;
			if (lat_measure(&imm, iters, iters / 10, budget) ||
			    lat_measure(&fifo, iters, iters / 10, budget) ||
			    imm.disturbed >= 0.25 || fifo.disturbed >= 0.25)
				continue;
			push(&rv[p][0], imm.st.median_ns, gp + 2 * cl.median_ns);
			push(&floor[p], db + cl.median_ns, gp + 2 * cl.median_ns);
			push(&rv[p][1], fifo.st.median_ns, 1.2 * imm.st.median_ns);
			if (!bw_measure(&bw, bw_secs, bw_secs / 3)) {
				mc = limit_memcpy_cache(mc_secs);
				push(&rv[p][2], bw.median_bps, 0.5 * mc);
			}
		}
	}
	for (int p = 0; p < BP_COUNT; p++) {
		if (!cfg->pair[p].valid || !(cfg->pairs & (1u << p)))
			continue;
		for (int id = 1; id <= 3; id++) {
			struct target *t = new_target(res, id, p);

			finish(t, &rv[p][id - 1]);
			t->attempts = attempts;
			if (id == 1 && floor[p].n) {
				t->floor = median_d(floor[p].value, floor[p].n);
				t->floor_ratio = median_d(floor[p].ratio,
							  floor[p].n);
			}
		}
	}
	progress("targets: %u rounds run\n", attempts);
	return 0;
}
