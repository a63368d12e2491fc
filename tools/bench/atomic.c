// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench atomic: remote atomics between two processes (issue 6).
 *
 * Side B registers a page with PERCS_ACCESS_REMOTE_ATOMIC and publishes
 * its &struct percs_rmr on the pair's shared page; side A, the initiator,
 * works on it through libpercs's PGAS level.  For each pair and engine
 * mode:
 *
 *  - latency: the blocking 64-bit fetch-add (percs_atomic_fetch_add64(),
 *    call to return: a full round trip) against the FIFO 8-byte half round
 *    trip (lat.c), measured back to back in each round; the figure is the
 *    median over the rounds of fetch-add / FIFO (target: <= 1.5);
 *  - rate: 64-bit adds without fetch, issued back to back in chunks each
 *    closed by percs_atomic_quiet(), chunks with PERCS_PACK_OFF and
 *    PERCS_PACK_AUTO alternating so that both see the same host; the
 *    figure is the median over chunk pairs of packed / unpacked (target:
 *    >= 3).
 *
 * Every run checks what it did: each fetched value is the one expected
 * (one initiator: the fetch-adds see 0, 1, 2, ...), and at the end every
 * word of the target page, read through the network by A and in memory
 * by B, holds exactly what the operations add up to (the rate's adds go
 * round-robin over eight words, adding 1 to word 0, 2 to word 1, ...: an
 * operation applied twice, lost or applied to its neighbour's word shows).
 * A wrong value fails the case as WRONG, apart from measurement failures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

#define AMO_REG_BYTES	4096
#define AMO_COUNTERS	8	/* the rate's adds go round-robin over these */
#if AMO_COUNTERS + 1 > AMO_WORDS
#error the counters must be among the words checked
#endif
#define AMO_FETCH_WORD	8	/* the latency's fetch-add counter */
#define AMO_MAX_CHUNKS	MEDIAN_MAX	/* chunk pairs per rate run */
#define AMO_CAL_ADDS	256	/* calibration chunk */

struct amo_arg {
	bool rate;		/* the rate run, else the latency run */
	/* latency */
	unsigned int iters;
	unsigned int warmup;
	double budget_s;
	uint64_t *samples;
	unsigned int nsamples;
	/* rate */
	double secs;		/* per packing mode */
	unsigned int chunk;	/* adds per chunk, from the calibration */
	double chunk_rate[2][AMO_MAX_CHUNKS];	/* [0] unpacked, [1] packed */
	unsigned int nchunks;
	/* both: what the target's words must hold, what was issued */
	uint64_t expect[AMO_WORDS];
	uint64_t adds;
	uint64_t fetches;
	bool wrong;
};

static const char *pack_name(unsigned int pack)
{
	return pack == PERCS_PACK_OFF ? "unpacked" : "packed";
}

/* A value that is not what the operations add up to. */
static int __attribute__((format(printf, 3, 4)))
amo_wrong(struct endpoint *ep, struct amo_arg *a, const char *fmt, ...)
{
	va_list ap;

	a->wrong = true;
	va_start(ap, fmt);
	vsnprintf(ep->msg, sizeof(ep->msg), fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* Side B: the target page, alive until A is done, then its contents. */
static int amo_target(struct endpoint *ep, void *varg)
{
	struct pair_ctl *ctl = ep->ctl;
	pid_t parent = getppid();
	uint64_t *buf;
	uint32_t h;
	int ret = 0;

	(void)varg;
	buf = mmap(NULL, AMO_REG_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return ep_fail(ep, -errno, "side B: mmap");
	ret = percs_mr_reg(ep->w, buf, AMO_REG_BYTES,
			   PERCS_ACCESS_REMOTE_ATOMIC, &h);
	if (ret) {
		munmap(buf, AMO_REG_BYTES);
		return ep_fail(ep, ret, "side B: percs_mr_reg(REMOTE_ATOMIC)");
	}
	ctl->amo_rmr = (struct percs_rmr){
		.win = ep->addr, .handle = h, .base = (uintptr_t)buf,
		.length = AMO_REG_BYTES,
	};
	pair_set_ready(ctl);
	/* Nothing to do here: the HFI applies the operations. */
	while (!__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE)) {
		if (getppid() != parent) {
			ret = ep_fail(ep, -ESRCH, "side B: side A is gone");
			break;
		}
		usleep(1000);
	}
	for (int i = 0; i < AMO_WORDS; i++)
		ctl->amo_words[i] = __atomic_load_n(&buf[i], __ATOMIC_ACQUIRE);
	percs_mr_dereg(ep->w, h);
	munmap(buf, AMO_REG_BYTES);
	return ret;
}

/* Side A, latency: blocking fetch-adds, timed, each value checked. */
static int amo_lat(struct endpoint *ep, struct amo_arg *a,
		   const struct percs_rmr *r)
{
	uint64_t start = now_ns();
	uint64_t warm_end = start + (uint64_t)(a->budget_s * 0.2e9);
	uint64_t end = start + (uint64_t)(a->budget_s * 1e9);
	uint64_t *want = &a->expect[AMO_FETCH_WORD];
	unsigned int i, n = 0;

	for (i = 0; n < a->iters; i++) {
		bool warm = i < a->warmup;
		uint64_t old = ~0ull, t0, t1;
		int ret;

		t0 = now_ns();
		if (warm && t0 > warm_end)
			i = a->warmup;	/* warm-up ran out of time */
		warm = i < a->warmup;
		if (!warm && n && t0 > end)
			break;
		ret = percs_atomic_fetch_add64(ep->w, r, AMO_FETCH_WORD * 8, 1,
					       &old);
		t1 = now_ns();
		if (ret)
			return ep_fail(ep, ret, "side A: fetch-add %" PRIu64,
				       a->fetches);
		a->fetches++;
		if (old != *want)
			return amo_wrong(ep, a,
					 "fetch-add %" PRIu64 " fetched %" PRIu64
					 ", expected %" PRIu64, a->fetches - 1,
					 old, *want);
		(*want)++;
		if (!warm)
			a->samples[n++] = t1 - t0;
	}
	a->nsamples = n;
	return 0;
}

/* Side A, rate: @n adds with packing @pack, then quiet; *@ns the time. */
static int amo_adds(struct endpoint *ep, struct amo_arg *a,
		    const struct percs_rmr *r, unsigned int pack,
		    unsigned int n, uint64_t *ns)
{
	uint64_t t0;
	int ret;

	ret = percs_atomic_set_packing(ep->w, pack);
	if (ret)
		return ep_fail(ep, ret, "side A: set packing %s",
			       pack_name(pack));
	t0 = now_ns();
	for (unsigned int i = 0; i < n; i++) {
		unsigned int j = (unsigned int)(a->adds % AMO_COUNTERS);
		struct spin s;

		spin_init(&s);
		while ((ret = percs_atomic_add64(ep->w, r, j * 8, j + 1)) ==
		       -EAGAIN)
			if (spin_tick(&s))
				return ep_fail(ep, -ETIMEDOUT,
					       "side A: add %" PRIu64 " (%s)",
					       a->adds, pack_name(pack));
		if (ret)
			return ep_fail(ep, ret, "side A: add %" PRIu64 " (%s)",
				       a->adds, pack_name(pack));
		a->expect[j] += j + 1;
		a->adds++;
	}
	ret = percs_atomic_quiet(ep->w);
	*ns = now_ns() - t0;
	if (ret)
		return ep_fail(ep, ret, "side A: quiet after %u %s adds", n,
			       pack_name(pack));
	return 0;
}

static int amo_rate(struct endpoint *ep, struct amo_arg *a,
		    const struct percs_rmr *r)
{
	uint64_t ns, start, chunk;
	int ret;

	/*
	 * Warm both modes up; size the chunks from the unpacked rate so that
	 * an unpacked chunk takes about an eighth of the measured time.
	 */
	ret = amo_adds(ep, a, r, PERCS_PACK_AUTO, AMO_CAL_ADDS, &ns);
	if (!ret)
		ret = amo_adds(ep, a, r, PERCS_PACK_OFF, AMO_CAL_ADDS, &ns);
	if (ret)
		return ret;
	chunk = (uint64_t)(a->secs * 1e9 / 8 / ((double)ns / AMO_CAL_ADDS));
	if (chunk < AMO_CAL_ADDS)
		chunk = AMO_CAL_ADDS;
	if (chunk > 65536)
		chunk = 65536;
	a->chunk = (unsigned int)chunk & ~(PERCS_ATOMIC_MAX_PACKED - 1u);

	start = now_ns();
	for (unsigned int k = 0; k < AMO_MAX_CHUNKS; k++) {
		for (int m = 0; m < 2; m++) {
			ret = amo_adds(ep, a, r, m ? PERCS_PACK_AUTO :
				       PERCS_PACK_OFF, a->chunk, &ns);
			if (ret)
				return ret;
			a->chunk_rate[m][k] = a->chunk * 1e9 / (double)(ns ? ns : 1);
		}
		a->nchunks = k + 1;
		if (a->nchunks >= 3 && now_ns() - start >= 2 * a->secs * 1e9)
			break;
	}
	return 0;
}

/* Side A: every word of the target, read through the network. */
static int amo_check_remote(struct endpoint *ep, struct amo_arg *a,
			    const struct percs_rmr *r)
{
	for (unsigned int i = 0; i < AMO_WORDS; i++) {
		uint64_t v = ~0ull;
		int ret = percs_atomic_fetch64(ep->w, r, i * 8, &v);

		if (ret)
			return ep_fail(ep, ret, "side A: atomic read of word %u",
				       i);
		if (v != a->expect[i])
			return amo_wrong(ep, a,
					 "word %u reads %" PRIu64 " through the network, expected %" PRIu64,
					 i, v, a->expect[i]);
	}
	return 0;
}

static int amo_initiator(struct endpoint *ep, void *varg)
{
	struct amo_arg *a = varg;
	struct percs_rmr r;
	int ret;

	ret = pair_wait_ready(ep->ctl);
	if (ret)
		return ep_fail(ep, ret, "side B did not start");
	r = ep->ctl->amo_rmr;
	ret = a->rate ? amo_rate(ep, a, &r) : amo_lat(ep, a, &r);
	if (!ret)
		ret = amo_check_remote(ep, a, &r);
	__atomic_store_n(&ep->ctl->stop, 1, __ATOMIC_RELEASE);
	return ret;
}

/* One pair run; the target's own view of its words checked after it. */
static int amo_run(struct atomic_result *res, struct amo_arg *a)
{
	struct pair_opts o = { .pair = res->pair, .mode = res->mode };
	struct pair_ctl ctl;
	int ret;

	ret = pair_run(&o, amo_initiator, amo_target, a, res->errmsg,
		       sizeof(res->errmsg), &ctl);
	res->adds += a->adds;
	res->fetches += a->fetches;
	if (ret) {
		res->wrong |= a->wrong;
		return res->err = ret;
	}
	for (unsigned int i = 0; i < AMO_WORDS; i++)
		if (ctl.amo_words[i] != a->expect[i]) {
			res->wrong = true;
			snprintf(res->errmsg, sizeof(res->errmsg),
				 "word %u holds %" PRIu64 " in the target's memory, expected %" PRIu64,
				 i, ctl.amo_words[i], a->expect[i]);
			return res->err = -EPROTO;
		}
	return 0;
}

/* The statistics of several rounds: medians of their figures. */
static void lat_merge(const struct lat_stats *s, unsigned int n,
		      struct lat_stats *out)
{
	double med[MAX_ROUNDS], p99[MAX_ROUNDS], sum = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	out->min_ns = s[0].min_ns;
	for (unsigned int i = 0; i < n; i++) {
		med[i] = s[i].median_ns;
		p99[i] = s[i].p99_ns;
		sum += s[i].mean_ns * s[i].iters;
		out->iters += s[i].iters;
		if (s[i].min_ns < out->min_ns)
			out->min_ns = s[i].min_ns;
	}
	out->median_ns = median_d(med, n);
	out->p99_ns = median_d(p99, n);
	out->mean_ns = out->iters ? sum / out->iters : 0;
}

static void spread(const double *v, unsigned int n, double *med, double *min,
		   double *max)
{
	*med = median_d(v, n);
	*min = *max = n ? v[0] : 0;
	for (unsigned int i = 1; i < n; i++) {
		if (v[i] < *min)
			*min = v[i];
		if (v[i] > *max)
			*max = v[i];
	}
}

/*
 * Latency rounds: FIFO 8 B ping-pong, then fetch-adds.  A round in which
 * a quarter of either's round trips took over 200 us (a vCPU the host did
 * not run) is not used while clean ones can still be had.
 */
static int amo_lat_case(const struct bench_cfg *cfg, struct atomic_result *res)
{
	unsigned int want = cfg->quick ? 1 : 3, used = 0, clean = 0;
	struct lat_stats fetch[MAX_ROUNDS], fifo[MAX_ROUNDS];
	double ratio[MAX_ROUNDS];
	bool dirty[MAX_ROUNDS];
	struct amo_arg *a;
	int ret = 0;

	a = calloc(1, sizeof(*a));
	if (a)
		a->samples = calloc(cfg->lat_iters, sizeof(*a->samples));
	if (!a || !a->samples) {
		free(a);
		snprintf(res->errmsg, sizeof(res->errmsg), "out of memory");
		return res->err = -ENOMEM;
	}
	while (clean < want && used < 3 * want && used < MAX_ROUNDS) {
		struct lat_result f = {
			.kind = BK_FIFO, .mode = res->mode, .pair = res->pair,
			.size = 8,
		};
		double disturbed = 0;

		res->attempts++;
		if (lat_measure(&f, cfg->lat_iters, cfg->lat_warmup,
				cfg->lat_budget_s)) {
			snprintf(res->errmsg, sizeof(res->errmsg),
				 "FIFO ping-pong: %s", f.errmsg);
			ret = res->err = f.err;
			break;
		}
		memset(a->expect, 0, sizeof(a->expect));
		a->iters = cfg->lat_iters;
		a->warmup = cfg->lat_warmup;
		a->budget_s = cfg->lat_budget_s;
		a->nsamples = 0;
		a->adds = a->fetches = 0;
		ret = amo_run(res, a);
		if (ret)
			break;
		for (unsigned int i = 0; i < a->nsamples; i++)
			if (a->samples[i] > DISTURBED_NS)
				disturbed += 1.0 / a->nsamples;
		stats_from_samples(a->samples, a->nsamples, 1.0, &fetch[used]);
		fifo[used] = f.st;
		ratio[used] = f.st.median_ns > 0 ?
			      fetch[used].median_ns / f.st.median_ns : 0;
		dirty[used] = disturbed >= 0.25 || f.disturbed >= 0.25;
		clean += !dirty[used];
		used++;
	}
	if (used) {
		struct lat_stats fs[MAX_ROUNDS], ff[MAX_ROUNDS];
		double rr[MAX_ROUNDS];
		unsigned int n = 0;

		/* Clean rounds only, unless there are none. */
		for (unsigned int i = 0; i < used; i++)
			if (!clean || !dirty[i]) {
				fs[n] = fetch[i];
				ff[n] = fifo[i];
				rr[n++] = ratio[i];
			}
		lat_merge(fs, n, &res->fetch);
		lat_merge(ff, n, &res->fifo);
		spread(rr, n, &res->ratio, &res->ratio_min, &res->ratio_max);
		res->rounds = n;
		res->lat_disturbed = !clean;
		res->lat_done = !ret;
	}
	free(a->samples);
	free(a);
	return ret;
}

static int amo_rate_case(const struct bench_cfg *cfg, struct atomic_result *res)
{
	double ratio[AMO_MAX_CHUNKS];
	struct amo_arg *a;
	int ret;

	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(res->errmsg, sizeof(res->errmsg), "out of memory");
		return res->err = -ENOMEM;
	}
	a->rate = true;
	a->secs = cfg->bw_secs;
	ret = amo_run(res, a);
	if (!ret && a->nchunks) {
		double dummy;

		for (unsigned int k = 0; k < a->nchunks; k++)
			ratio[k] = a->chunk_rate[1][k] / a->chunk_rate[0][k];
		spread(a->chunk_rate[0], a->nchunks, &res->rate_off, &dummy,
		       &dummy);
		spread(a->chunk_rate[1], a->nchunks, &res->rate_auto, &dummy,
		       &dummy);
		spread(ratio, a->nchunks, &res->rate_ratio,
		       &res->rate_ratio_min, &res->rate_ratio_max);
		res->chunks = a->nchunks;
		res->chunk = a->chunk;
		res->rate_done = true;
	}
	free(a);
	return ret;
}

/**
 * run_atomic() - every atomic case: pairs x engine modes
 * @cfg: configuration (--pair and --mode select)
 * @res: res->amo filled in
 *
 * Return: the number of cases whose results were wrong (a failure of the
 * operations, not of the measurement); failed cases are recorded in their
 * result.
 */
int run_atomic(const struct bench_cfg *cfg, struct results *res)
{
	unsigned int total = 0, done = 0;
	int wrong = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (int p = 0; p < BP_COUNT; p++) {
			for (int m = BM_KICK; m < BM_NR; m++) {
				struct atomic_result *r;

				if (!cfg->pair[p].valid ||
				    !(cfg->pairs & (1u << p)) ||
				    !(cfg->modes & (1u << m)))
					continue;
				if (!pass) {
					total++;
					continue;
				}
				if (res->namo >= AMO_MAX)
					break;
				r = &res->amo[res->namo++];
				memset(r, 0, sizeof(*r));
				r->pair = p;
				r->mode = m;
				progress("atomic %u/%u: %s %s latency", ++done,
					 total, mode_name(m), cfg->pair[p].name);
				if (!amo_lat_case(cfg, r)) {
					progress("atomic %u/%u: %s %s rate", done,
						 total, mode_name(m),
						 cfg->pair[p].name);
					amo_rate_case(cfg, r);
				}
				if (r->err)
					progress("atomic: %s %s %s: %s\n",
						 mode_name(m), cfg->pair[p].name,
						 r->wrong ? "WRONG RESULT" :
						 "failed", r->errmsg);
				wrong += r->wrong;
			}
		}
	}
	progress("atomic: %u cases done\n", done);
	return wrong;
}

/**
 * atomic_targets() - the two targets, kick mode, from res->amo
 * @res: targets appended to res->tgt
 *
 * (4) blocking fetch-add <= 1.5 x the FIFO 8 B half round trip;
 * (5) packed non-fetching adds >= 3 x the unpacked rate.
 */
void atomic_targets(struct results *res)
{
	for (unsigned int i = 0; i < res->namo; i++) {
		const struct atomic_result *r = &res->amo[i];
		struct target *t;

		if (r->mode != BM_KICK || res->ntgt + 2 > NTARGETS)
			continue;
		t = &res->tgt[res->ntgt++];
		memset(t, 0, sizeof(*t));
		t->id = 4;
		t->pair = r->pair;
		snprintf(t->desc, sizeof(t->desc),
			 "kick fetch-add 64 (blocking) <= %.1f x kick FIFO 8 B half RTT",
			 AMO_LAT_TARGET);
		strcpy(t->unit, "ns");
		/* As targets.c: no verdict from disturbed rounds only. */
		t->avail = r->lat_done && !r->lat_disturbed &&
			   r->fifo.median_ns > 0;
		if (t->avail) {
			t->value = r->fetch.median_ns;
			t->bound = AMO_LAT_TARGET * r->fifo.median_ns;
			t->ratio = r->ratio / AMO_LAT_TARGET;
			t->ratio_min = r->ratio_min / AMO_LAT_TARGET;
			t->ratio_max = r->ratio_max / AMO_LAT_TARGET;
			t->rounds = r->rounds;
			t->attempts = r->attempts;
			t->pass = t->ratio <= 1;
		}

		t = &res->tgt[res->ntgt++];
		memset(t, 0, sizeof(*t));
		t->id = 5;
		t->pair = r->pair;
		snprintf(t->desc, sizeof(t->desc),
			 "kick adds packed (PERCS_PACK_AUTO) >= %.0f x unpacked",
			 AMO_PACK_TARGET);
		strcpy(t->unit, "op/s");
		t->higher_better = true;
		t->avail = r->rate_done && r->rate_off > 0;
		if (t->avail) {
			t->value = r->rate_auto;
			t->bound = AMO_PACK_TARGET * r->rate_off;
			t->ratio = r->rate_ratio / AMO_PACK_TARGET;
			t->ratio_min = r->rate_ratio_min / AMO_PACK_TARGET;
			t->ratio_max = r->rate_ratio_max / AMO_PACK_TARGET;
			t->rounds = r->chunks;
			t->attempts = r->chunks;
			t->pass = t->ratio >= 1;
		}
	}
}
