// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench: tables, targets, JSON and the optional gnuplot PNG.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* --- formatting --- */

static const char *fmt_ns(char *b, size_t n, double ns)
{
	if (ns < 1e4)
		snprintf(b, n, "%.0f ns", ns);
	else if (ns < 1e7)
		snprintf(b, n, "%.2f us", ns / 1e3);
	else
		snprintf(b, n, "%.2f ms", ns / 1e6);
	return b;
}

static const char *fmt_bps(char *b, size_t n, double bps)
{
	if (bps >= 1e9)
		snprintf(b, n, "%.2f GB/s", bps / 1e9);
	else
		snprintf(b, n, "%.1f MB/s", bps / 1e6);
	return b;
}

static const char *fmt_pps(char *b, size_t n, double pps)
{
	if (pps >= 1e6)
		snprintf(b, n, "%.2f Mpkt/s", pps / 1e6);
	else
		snprintf(b, n, "%.1f kpkt/s", pps / 1e3);
	return b;
}

static const char *fmt_ops(char *b, size_t n, double ops)
{
	if (ops >= 1e6)
		snprintf(b, n, "%.2f Mop/s", ops / 1e6);
	else
		snprintf(b, n, "%.1f kop/s", ops / 1e3);
	return b;
}

static const char *size_label(unsigned int size)
{
	if (size == PERCS_MAX_PAYLOAD)
		return "max packet";
	if (size == PERCS_IMM_PAYLOAD)
		return "max immediate";
	return "";
}

static const char *payload_mode(const struct bw_result *b)
{
	if (b->kind == BK_IMM)
		return "icswx";
	return b->copy ? "copy" : "in-place";
}

/* --- lookups and targets --- */

static const struct lat_result *find_lat(const struct results *r,
					 enum bench_kind k, enum bench_mode m,
					 enum bench_pair p, unsigned int size)
{
	for (unsigned int i = 0; i < r->nlat; i++) {
		const struct lat_result *l = &r->lat[i];

		if (l->kind == k && l->mode == m && l->pair == p &&
		    l->size == size && !l->err && l->st.iters)
			return l;
	}
	return NULL;
}

static const struct bw_result *find_bw(const struct results *r,
				       enum bench_kind k, enum bench_mode m,
				       enum bench_pair p, unsigned int size)
{
	for (unsigned int i = 0; i < r->nbw; i++) {
		const struct bw_result *b = &r->bw[i];

		if (b->kind == k && b->mode == m && b->pair == p &&
		    b->size == size && !b->err && b->packets)
			return b;
	}
	return NULL;
}

/* --- text tables --- */

static void noise_note(FILE *f, const struct limits *lim);

void print_limits(FILE *f, const struct limits *lim)
{
	char a[32], b[32];

	if (!lim->done)
		return;
	fprintf(f, "\nLimits (this VM, this run)\n");
	fprintf(f, "  %-44s %12s  (p99 %s, %u iterations)\n",
		"cache-line ping-pong, half round trip",
		fmt_ns(a, sizeof(a), lim->cacheline.median_ns),
		fmt_ns(b, sizeof(b), lim->cacheline.p99_ns),
		lim->cacheline.iters);
	fprintf(f, "  %-44s %12s\n", "getppid() round trip (system call)",
		fmt_ns(a, sizeof(a), lim->getppid_ns));
	fprintf(f, "  %-44s %12s\n", "ioctl PERCS_IOC_HFI_INFO",
		fmt_ns(a, sizeof(a), lim->ioctl_info_ns));
	fprintf(f, "  %-44s %12s\n", "ioctl PERCS_IOC_KICK, nothing to send",
		fmt_ns(a, sizeof(a), lim->ioctl_kick_ns));
	if (lim->fdatasync_ns > 0)
		fprintf(f, "  %-44s %12s  (the send doorbell's fixed cost)\n",
			"fdatasync() on a window, nothing to send",
			fmt_ns(a, sizeof(a), lim->fdatasync_ns));
	if (lim->ioctl_null_ns > 0)
		fprintf(f, "  %-44s %12s  (VFS ioctl path alone; diagnostic)\n",
			"ioctl refused by /dev/null (ENOTTY)",
			fmt_ns(a, sizeof(a), lim->ioctl_null_ns));
	fprintf(f, "  %-44s %12s\n", "clock_gettime(CLOCK_MONOTONIC)",
		fmt_ns(a, sizeof(a), lim->clock_ns));
	fprintf(f, "  %-44s %12s  <- bandwidth limit\n",
		"memcpy 2 KiB chunks, 64 KiB (cache-resident)",
		fmt_bps(a, sizeof(a), lim->memcpy_cache_bps));
	fprintf(f, "  %-44s %12s\n", "memcpy 2 KiB chunks, 8 MiB (memory)",
		fmt_bps(a, sizeof(a), lim->memcpy_stream_bps));
	if (lim->movsb_cache_bps > 0)
		fprintf(f, "  %-44s %12s  (the kernel's memcpy; diagnostic)\n",
			"rep movsb 2 KiB chunks, 64 KiB",
			fmt_bps(a, sizeof(a), lim->movsb_cache_bps));
	if (lim->handoff_proc_ns > 0)
		fprintf(f, "  %-44s %12s  (wake-up + switch: per rank, ranks > CPUs)\n",
			"hand-off to a process on the same CPU",
			fmt_ns(a, sizeof(a), lim->handoff_proc_ns));
	if (lim->handoff_thread_ns > 0)
		fprintf(f, "  %-44s %12s  (no page-table switch; diagnostic)\n",
			"hand-off to a thread on the same CPU",
			fmt_ns(a, sizeof(a), lim->handoff_thread_ns));
	noise_note(f, lim);
}

/* Cross-CPU figures are meaningless while the host deschedules vCPUs. */
static void noise_note(FILE *f, const struct limits *lim)
{
	double d = lim->cl_disturbed;

	if (lim->end_done && lim->cl_end_disturbed > d)
		d = lim->cl_end_disturbed;
	if (d < 0.01)
		return;
	fprintf(f, "  WARNING: %.0f%% of the cache-line round trips took over 200 us: a vCPU\n"
		"  was not running (the host is busy).  Two-process figures of this run\n"
		"  are disturbed; the single-process engine table is the least affected.\n",
		d * 100);
}

static void poll_note(FILE *f, const struct bench_cfg *cfg)
{
	fprintf(f, "  poll mode measured on %d online CPU%s", cfg->ncpus,
		cfg->ncpus == 1 ? "" : "s");
	if (cfg->ncpus < 4)
		fprintf(f, ": each pair has two busy-polling processes and two\n"
			"  HFI polling threads (one per HFI), so a polling thread has no core\n"
			"  of its own and poll-mode figures include scheduler time slices\n");
	else
		fprintf(f, "\n");
}

void print_lat(FILE *f, const struct bench_cfg *cfg, const struct results *r)
{
	const struct limits *lim = &r->lim;
	char a[32], b[32];

	if (!r->nlat)
		return;
	fprintf(f, "\nLatency: half round trip, ping-pong between two processes%s\n",
		cfg->pin ? " pinned to two CPUs" : " (not pinned: 1 CPU)");
	fprintf(f, "  %-4s %-4s %-9s %5s %-13s %11s %11s %8s %7s %6s %7s %6s\n",
		"kind", "mode", "pair", "bytes", "", "median", "p99",
		lim->done ? "x cl" : "", "iters", ">200us", "sys/msg", "polled");
	for (unsigned int i = 0; i < r->nlat; i++) {
		const struct lat_result *l = &r->lat[i];

		fprintf(f, "  %-4s %-4s %-9s %5u %-13s ", kind_name(l->kind),
			mode_name(l->mode), cfg->pair[l->pair].name, l->size,
			size_label(l->size));
		if (l->err || !l->st.iters) {
			fprintf(f, "FAILED: %s\n", l->errmsg);
			continue;
		}
		fprintf(f, "%11s %11s ", fmt_ns(a, sizeof(a), l->st.median_ns),
			fmt_ns(b, sizeof(b), l->st.p99_ns));
		if (lim->done && lim->cacheline.median_ns > 0)
			fprintf(f, "%7.1fx", l->st.median_ns /
				lim->cacheline.median_ns);
		else
			fprintf(f, "%8s", "");
		fprintf(f, " %7u %5.0f%% %7.3f %5.0f%%\n", l->st.iters,
			l->disturbed * 100, l->sys_per_msg, l->polled_frac * 100);
	}
	fprintf(f, "  sys/msg: kick system calls of both sides per message, as the kernel\n"
		"    counted them (percs_status.kicks); polled: the share of the sends\n"
		"    the polling thread consumed\n");
	if (lim->done)
		fprintf(f, "  x cl: median / cache-line half round trip (%s)\n",
			fmt_ns(a, sizeof(a), lim->cacheline.median_ns));
	fprintf(f, "  >200us: round trips over 200 us; in kick mode these are a vCPU the\n"
		"  host did not run (a busy host), not percs\n");
	poll_note(f, cfg);
}

void print_bw(FILE *f, const struct bench_cfg *cfg, const struct results *r)
{
	const struct limits *lim = &r->lim;
	char a[32], b[32], c[32];

	if (!r->nbw)
		return;
	fprintf(f, "\nBandwidth: one-way streaming, payload bytes/s; FIFO payload %s\n",
		cfg->copy ? "copied into the FIFO by percs_send_compose() (--copy)" :
		"left in place in the send FIFO by percs_send_reserve()\n"
		"  (only the headers are written; the payload bytes are whatever the FIFO holds)");
	fprintf(f, "  %-4s %-4s %-9s %5s %-8s %11s %13s %11s %8s %9s\n", "kind",
		"mode", "pair", "bytes", "payload", "bandwidth", "rate",
		"median", lim->done ? "x memcpy" : "", "full/blk");
	for (unsigned int i = 0; i < r->nbw; i++) {
		const struct bw_result *w = &r->bw[i];

		fprintf(f, "  %-4s %-4s %-9s %5u %-8s ", kind_name(w->kind),
			mode_name(w->mode), cfg->pair[w->pair].name, w->size,
			payload_mode(w));
		if (w->err || !w->packets) {
			fprintf(f, "FAILED: %s\n",
				w->err ? w->errmsg : "no packets counted");
			continue;
		}
		fprintf(f, "%11s %13s %11s", fmt_bps(a, sizeof(a), w->bps),
			fmt_pps(b, sizeof(b), w->pps),
			fmt_bps(c, sizeof(c), w->median_bps));
		if (lim->done && lim->memcpy_cache_bps > 0)
			fprintf(f, " %7.3fx", w->median_bps / lim->memcpy_cache_bps);
		else
			fprintf(f, " %8s", "");
		if (w->kind == BK_FIFO)
			fprintf(f, " %3.0f%%/%llu", w->room_wait_frac * 100,
				(unsigned long long)w->send_blocked);
		fprintf(f, "\n");
	}
	fprintf(f, "  bandwidth, rate: over the whole measured stream; median: median rate of\n"
		"  its chunks of 4 receive FIFOs (leaves out stalls of a descheduled vCPU)\n"
		"  full/blk: time the sender found its send FIFO full / times the engine\n"
		"  held its FIFO because the receiver's was full (status page send_blocked)\n");
	if (lim->done)
		fprintf(f, "  x memcpy: median / memcpy 64 KiB cache-resident (%s); memcpy 8 MiB: %s\n",
			fmt_bps(a, sizeof(a), lim->memcpy_cache_bps),
			fmt_bps(b, sizeof(b), lim->memcpy_stream_bps));
	poll_note(f, cfg);
}

static const struct cost_result *find_cost(const struct results *r,
					   enum bench_kind k, unsigned int size,
					   bool batched)
{
	for (unsigned int i = 0; i < r->ncost; i++) {
		const struct cost_result *c = &r->cost[i];

		if (c->kind == k && c->size == size && !c->err &&
		    (c->batch > 1) == batched)
			return c;
	}
	return NULL;
}

/*
 * Per-byte cost from the batched rows: the slope between the smallest and
 * the largest FIFO payload.  Return: ns per byte, or 0 if not measured.
 */
static double cost_slope(const struct results *r, bool kick)
{
	const struct cost_result *lo = find_cost(r, BK_FIFO, 64, true);
	const struct cost_result *hi = find_cost(r, BK_FIFO, PERCS_MAX_PAYLOAD, true);
	double d;

	if (!lo || !hi)
		return 0;
	d = kick ? hi->kick_ns - lo->kick_ns : hi->compose_ns - lo->compose_ns;
	return d > 0 ? d / (PERCS_MAX_PAYLOAD - 64) : 0;
}

void print_cost(FILE *f, const struct bench_cfg *cfg, const struct results *r)
{
	const struct pair_def *d = &cfg->pair[BP_NEAR];
	char a[32], b[32], c[32], e[32];
	double slope;

	if (!r->ncost)
		return;
	fprintf(f, "\nEngine cost: one process, kick mode, hub %u HFI %u -> HFI %u, per packet\n",
		d->hub[0], d->unit[0], d->unit[1]);
	fprintf(f, "  (medians; no cross-CPU traffic: the least host-sensitive figures)\n");
	fprintf(f, "  %-4s %5s %5s %11s %11s %11s %12s\n", "kind", "bytes", "batch",
		"compose", "kick(sync)", "receive", "kick B/s");
	for (unsigned int i = 0; i < r->ncost; i++) {
		const struct cost_result *x = &r->cost[i];

		fprintf(f, "  %-4s %5u %5u ", kind_name(x->kind), x->size, x->batch);
		if (x->err) {
			fprintf(f, "FAILED: %s\n", percs_strerror(x->err));
			continue;
		}
		fprintf(f, "%11s %11s %11s %12s\n",
			x->kind == BK_IMM ? "-" : fmt_ns(a, sizeof(a), x->compose_ns),
			fmt_ns(b, sizeof(b), x->kick_ns),
			fmt_ns(c, sizeof(c), x->recv_ns),
			fmt_bps(e, sizeof(e), x->size * 1e9 / x->kick_ns));
	}
	fprintf(f, "  compose: percs_send_compose() (user copy into the send FIFO);\n"
		"  kick(sync): percs_send_trigger() = trigger store + the fdatasync(2)\n"
		"  doorbell on the window, in which the engine routes and copies into the\n"
		"  receive FIFO (imm: one percs_icswx() call, slot copy + fdatasync);\n"
		"  receive: peek + consume + credit\n");
	slope = cost_slope(r, true);
	if (slope > 0) {
		fprintf(f, "  engine per-byte cost %.3f ns/B = %s", slope,
			fmt_bps(a, sizeof(a), 1e9 / slope));
		if (r->lim.done)
			fprintf(f, " (memcpy %s, rep movsb %s)",
				fmt_bps(b, sizeof(b), r->lim.memcpy_cache_bps),
				fmt_bps(c, sizeof(c), r->lim.movsb_cache_bps));
		fprintf(f, "\n");
	}
	slope = cost_slope(r, false);
	if (slope > 0)
		fprintf(f, "  compose per-byte cost %.3f ns/B = %s\n", slope,
			fmt_bps(a, sizeof(a), 1e9 / slope));
}

static void sum_lat(FILE *f, const struct bench_cfg *cfg, const struct results *r,
		    enum bench_kind k, enum bench_mode m, enum bench_pair p,
		    unsigned int size)
{
	const struct lat_result *l = find_lat(r, k, m, p, size);
	char name[64], a[32], b[32];

	if (!l)
		return;
	snprintf(name, sizeof(name), "lat %s %s %s %u B", kind_name(k),
		 mode_name(m), cfg->pair[p].name, size);
	fprintf(f, "  %-36s %12s  %-22s %12s %8.1fx\n", name,
		fmt_ns(a, sizeof(a), l->st.median_ns), "cache-line half RTT",
		fmt_ns(b, sizeof(b), r->lim.cacheline.median_ns),
		l->st.median_ns / r->lim.cacheline.median_ns);
}

static void sum_bw(FILE *f, const struct bench_cfg *cfg, const struct results *r,
		   enum bench_kind k, enum bench_mode m, enum bench_pair p,
		   unsigned int size)
{
	const struct bw_result *w = find_bw(r, k, m, p, size);
	char name[64], a[32], b[32];

	if (!w)
		return;
	snprintf(name, sizeof(name), "bw %s %s %s %u B (median)", kind_name(k),
		 mode_name(m), cfg->pair[p].name, size);
	fprintf(f, "  %-36s %12s  %-22s %12s %8.3fx\n", name,
		fmt_bps(a, sizeof(a), w->median_bps), "memcpy 64 KiB",
		fmt_bps(b, sizeof(b), r->lim.memcpy_cache_bps),
		w->median_bps / r->lim.memcpy_cache_bps);
}

/* The single-process engine rows that bound the two-process figures. */
static void sum_cost(FILE *f, const struct results *r)
{
	const struct cost_result *imm = find_cost(r, BK_IMM, 8, false);
	const struct cost_result *big = find_cost(r, BK_FIFO, PERCS_MAX_PAYLOAD, true);
	char a[32], b[32];

	if (imm)
		fprintf(f, "  %-36s %12s  %-22s %12s %8.1fx\n",
			"engine: icswx 8 B + fdatasync kick",
			fmt_ns(a, sizeof(a), imm->kick_ns), "getppid",
			fmt_ns(b, sizeof(b), r->lim.getppid_ns),
			imm->kick_ns / r->lim.getppid_ns);
	if (big)
		fprintf(f, "  %-36s %12s  %-22s %12s %8.3fx\n",
			"engine: FIFO 2016 B batched, 1 proc",
			fmt_bps(a, sizeof(a), PERCS_MAX_PAYLOAD * 1e9 / big->kick_ns),
			"memcpy 64 KiB",
			fmt_bps(b, sizeof(b), r->lim.memcpy_cache_bps),
			PERCS_MAX_PAYLOAD * 1e9 / big->kick_ns / r->lim.memcpy_cache_bps);
}

static const char *fmt_val(char *b, size_t n, const struct target *t, double v)
{
	if (!strcmp(t->unit, "op/s"))
		return fmt_ops(b, n, v);
	return strcmp(t->unit, "ns") ? fmt_bps(b, n, v) : fmt_ns(b, n, v);
}

static void print_target(FILE *f, const struct bench_cfg *cfg,
			 const struct target *t)
{
	char a[32], b[32];

	if (!t->avail) {
		fprintf(f, "  [N/A ] (%d) %-9s %s: not measured\n", t->id,
			cfg->pair[t->pair].name, t->desc);
		return;
	}
	fprintf(f, "  [%s] (%d) %-9s %s\n         %s vs bound %s: ratio %.2f "
		"(%u of %u rounds: %.2f..%.2f)%s\n",
		t->pass ? "PASS" : "FAIL", t->id, cfg->pair[t->pair].name,
		t->desc, fmt_val(a, sizeof(a), t, t->value),
		fmt_val(b, sizeof(b), t, t->bound), t->ratio, t->rounds,
		t->attempts, t->ratio_min, t->ratio_max,
		t->higher_better ? ", >= 1 passes" : ", <= 1 passes");
	if (t->floor > 0)
		fprintf(f, "         floor (an engine that cost nothing: empty doorbell + cache line) %s: ratio %.2f\n",
			fmt_val(a, sizeof(a), t, t->floor), t->floor_ratio);
}

/**
 * print_atomic() - the atomic table: latency, rate, checks, targets
 * @f: output
 * @cfg: configuration
 * @r: results (res->amo, and the atomic targets in res->tgt)
 */
void print_atomic(FILE *f, const struct bench_cfg *cfg, const struct results *r)
{
	char a[32], b[32], c[32], d[32];
	uint64_t adds = 0, fetches = 0;
	bool any_wrong = false;

	if (!r->namo)
		return;
	fprintf(f, "\nAtomics: 64-bit, side A on a page side B registered with\n"
		"PERCS_ACCESS_REMOTE_ATOMIC (libpercs PGAS level)\n");
	fprintf(f, "  Latency: blocking fetch-add (percs_atomic_fetch_add64, call to return)\n"
		"  and the FIFO 8 B half round trip, back to back in each round; medians\n"
		"  over the rounds\n");
	fprintf(f, "  %-4s %-9s %11s %11s %11s %11s %10s %14s %7s\n", "mode",
		"pair", "fetch-add", "p99", "FIFO 8 B", "p99", "fetch/FIFO",
		"(min..max)", "rounds");
	for (unsigned int i = 0; i < r->namo; i++) {
		const struct atomic_result *x = &r->amo[i];
		char mm[32], rr[24];

		fprintf(f, "  %-4s %-9s ", mode_name(x->mode),
			cfg->pair[x->pair].name);
		if (!x->lat_done) {
			fprintf(f, "%s: %s\n", x->wrong ? "WRONG" : "FAILED",
				x->errmsg);
			continue;
		}
		snprintf(mm, sizeof(mm), "(%.2f..%.2f)", x->ratio_min,
			 x->ratio_max);
		snprintf(rr, sizeof(rr), "%u/%u", x->rounds, x->attempts);
		fprintf(f, "%11s %11s %11s %11s %10.2f %14s %7s%s\n",
			fmt_ns(a, sizeof(a), x->fetch.median_ns),
			fmt_ns(b, sizeof(b), x->fetch.p99_ns),
			fmt_ns(c, sizeof(c), x->fifo.median_ns),
			fmt_ns(d, sizeof(d), x->fifo.p99_ns), x->ratio, mm, rr,
			x->lat_disturbed ? " (all disturbed)" : "");
	}
	fprintf(f, "  Rate: adds without fetch (percs_atomic_add64 x a chunk, then\n"
		"  percs_atomic_quiet), unpacked (PERCS_PACK_OFF) and packed (PERCS_PACK_AUTO)\n"
		"  chunks alternating; median chunk rate, ratio over chunk pairs\n");
	fprintf(f, "  %-4s %-9s %12s %12s %9s %14s %7s %6s\n", "mode", "pair",
		"unpacked", "packed", "pk/unpk", "(min..max)", "chunks",
		"adds");
	for (unsigned int i = 0; i < r->namo; i++) {
		const struct atomic_result *x = &r->amo[i];
		char mm[32];

		adds += x->adds;
		fetches += x->fetches;
		any_wrong |= x->wrong;
		fprintf(f, "  %-4s %-9s ", mode_name(x->mode),
			cfg->pair[x->pair].name);
		if (!x->rate_done) {
			fprintf(f, "%s: %s\n", x->wrong ? "WRONG" :
				x->lat_done ? "FAILED" : "not run", x->errmsg);
			continue;
		}
		snprintf(mm, sizeof(mm), "(%.2f..%.2f)", x->rate_ratio_min,
			 x->rate_ratio_max);
		fprintf(f, "%12s %12s %8.2fx %14s %7u %6u\n",
			fmt_ops(a, sizeof(a), x->rate_off),
			fmt_ops(b, sizeof(b), x->rate_auto), x->rate_ratio, mm,
			x->chunks, x->chunk);
	}
	fprintf(f, "  rounds: used/run (a round with a quarter of its round trips over 200 us\n"
		"  is not used while clean ones can be had); adds: per chunk; packed: the\n"
		"  library packs 4 consecutive adds to the same registration in one packet\n");
	if (any_wrong)
		fprintf(f, "  CHECK FAILED: a fetched value or a target word was wrong (WRONG above)\n");
	else if (!fetches && !adds)
		fprintf(f, "  checked: nothing - no case ran its operations (FAILED above)\n");
	else
		fprintf(f, "  checked: %llu fetch-adds fetched 0, 1, 2, ... in turn; after %llu adds\n"
			"  every target word was exact, read by side A through the network and\n"
			"  by side B in its memory\n", (unsigned long long)fetches,
			(unsigned long long)adds);
	fprintf(f, "  targets (issue 6; reported, not asserted):\n");
	for (unsigned int i = 0; i < r->ntgt; i++)
		if (r->tgt[i].id >= 4)
			print_target(f, cfg, &r->tgt[i]);
}

/**
 * print_rdma() - the RDMA table, the 8-byte write latency and the target
 * @f: output
 * @r: results (res->rdma)
 */
void print_rdma(FILE *f, const struct results *r)
{
	const struct rdma_result *x = &r->rdma;

	if (!x->ran)
		return;
	fprintf(f, "\nRDMA (hub %u -> hub %u), memcpy in the same run\n",
		x->hub[0], x->hub[1]);
	fprintf(f, "%10s %14s %14s %14s %8s\n", "bytes", "write MB/s",
		"read MB/s", "memcpy MB/s", "w/memcpy");
	for (unsigned int i = 0; i < x->nrows; i++) {
		const struct rdma_row *w = &x->row[i];

		fprintf(f, "%10llu %14.1f %14.1f %14.1f %7.0f%%\n",
			(unsigned long long)w->bytes, w->write_bps / 1e6,
			w->read_bps / 1e6, w->memcpy_bps / 1e6,
			100 * w->write_bps / w->memcpy_bps);
	}
	if (!x->done) {
		fprintf(f, "FAILED: %s\n", x->errmsg);
		return;
	}
	fprintf(f, "8-byte RDMA write, post to completion: median %.2f us, p99 %.2f us\n",
		x->write8.median_ns / 1e3, x->write8.p99_ns / 1e3);
	fprintf(f, "target: RDMA write >= %.0f%% of memcpy at 1 MiB and larger: worst %.0f%% %s\n",
		100 * RDMA_TARGET, 100 * x->worst, x->pass ? "MET" : "MISSED");
}

/**
 * print_summary() - headline figures with their limits, and the targets
 * @f: output
 * @cfg: configuration
 * @r: results (limits, lat and bw must all have run)
 * @what: the subcommand
 */
void print_summary(FILE *f, const struct bench_cfg *cfg,
		   const struct results *r, const char *what)
{
	char a[32], b[32];

	if (strcmp(what, "all") || !r->lim.done)
		return;
	fprintf(f, "\nSummary (figure, relevant limit, ratio figure/limit)\n");
	sum_cost(f, r);
	for (int p = 0; p < BP_COUNT; p++) {
		if (!cfg->pair[p].valid)
			continue;
		for (int m = BM_KICK; m < BM_NR; m++) {
			sum_lat(f, cfg, r, BK_IMM, m, p, 8);
			sum_lat(f, cfg, r, BK_FIFO, m, p, 8);
			sum_lat(f, cfg, r, BK_IMM, m, p, PERCS_IMM_PAYLOAD);
			sum_lat(f, cfg, r, BK_FIFO, m, p, PERCS_MAX_PAYLOAD);
			sum_bw(f, cfg, r, BK_FIFO, m, p, PERCS_MAX_PAYLOAD);
			sum_bw(f, cfg, r, BK_IMM, m, p, PERCS_IMM_PAYLOAD);
		}
	}

	fprintf(f, "\nTargets (reported, not asserted): median over up to %u interleaved\n"
		"rounds, each measuring the figure and its bound back to back\n",
		r->tgt_rounds);
	for (unsigned int i = 0; i < r->ntgt; i++)
		print_target(f, cfg, &r->tgt[i]);
	coll_print_targets(f);
	fprintf(f, "  bounds from: getppid %s, cache-line half RTT %s, ",
		fmt_ns(a, sizeof(a), r->lim.getppid_ns),
		fmt_ns(b, sizeof(b), r->lim.cacheline.median_ns));
	fprintf(f, "memcpy 64 KiB %s\n",
		fmt_bps(a, sizeof(a), r->lim.memcpy_cache_bps));
	if (r->lim.end_done) {
		double x = r->lim.cacheline_end.median_ns /
			   r->lim.cacheline.median_ns;

		fprintf(f, "  cache-line half RTT at the end of the run: %s (%.2fx the start)%s\n",
			fmt_ns(a, sizeof(a), r->lim.cacheline_end.median_ns), x,
			x > 2 || x < 0.5 ? ": the host's load changed during the run" : "");
	}
	noise_note(f, &r->lim);
}

/* --- JSON --- */

void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void jnum(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void jkey(FILE *f, const char *k)
{
	jstr(f, k);
	fputs(": ", f);
}

static void jlat_stats(FILE *f, const struct lat_stats *s)
{
	fputs("\"median_ns\": ", f);
	jnum(f, s->median_ns);
	fputs(", \"p99_ns\": ", f);
	jnum(f, s->p99_ns);
	fputs(", \"min_ns\": ", f);
	jnum(f, s->min_ns);
	fputs(", \"mean_ns\": ", f);
	jnum(f, s->mean_ns);
	fprintf(f, ", \"iters\": %u", s->iters);
}

void jlat_obj(FILE *f, const struct lat_stats *s, bool have)
{
	if (!have) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	jlat_stats(f, s);
	fputc('}', f);
}

static void jerr(FILE *f, int err, const char *msg)
{
	fputs(", \"error\": ", f);
	if (err) {
		jstr(f, msg);
		fprintf(f, ", \"errno\": %d", -err);
	} else {
		fputs("null", f);
	}
}

/* The "rdma" member: null unless rdma ran. */
static void jrdma(FILE *f, const struct rdma_result *x)
{
	const struct rdma_row *w = &x->row[x->worst_row];

	if (!x->ran) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"hub_a\": %u, \"hfi_a\": %u, \"hub_b\": %u, \"hfi_b\": %u, "
		"\"sizes\": [", x->hub[0], x->unit[0], x->hub[1], x->unit[1]);
	for (unsigned int i = 0; i < x->nrows; i++) {
		const struct rdma_row *row = &x->row[i];

		fprintf(f, "%s\n    {\"bytes\": %llu, \"write_bytes_per_s\": ",
			i ? "," : "", (unsigned long long)row->bytes);
		jnum(f, row->write_bps);
		fputs(", \"read_bytes_per_s\": ", f);
		jnum(f, row->read_bps);
		fputs(", \"memcpy_bytes_per_s\": ", f);
		jnum(f, row->memcpy_bps);
		fputs(", \"ratio_write_memcpy\": ", f);
		jnum(f, row->write_bps / row->memcpy_bps);
		fputc('}', f);
	}
	fputs("],\n    \"write_8b_latency\": ", f);
	jlat_obj(f, &x->write8, x->done);
	/*
	 * Like the other targets: value / bound >= 1 passes, the bound being
	 * 70% of memcpy at the size where write / memcpy is worst.
	 */
	fputs(",\n    \"target\": {\"description\": ", f);
	jstr(f, "RDMA write >= 70% of memcpy at 1 MiB and larger (the worst size)");
	fprintf(f, ", \"unit\": \"B/s\", \"min_ratio_write_memcpy\": %.2f, \"bytes\": ",
		RDMA_TARGET);
	if (x->target_avail)
		fprintf(f, "%llu", (unsigned long long)w->bytes);
	else
		fputs("null", f);
	fputs(", \"value\": ", f);
	jnum(f, x->target_avail ? w->write_bps : NAN);
	fputs(", \"bound\": ", f);
	jnum(f, x->target_avail ? RDMA_TARGET * w->memcpy_bps : NAN);
	fputs(", \"ratio\": ", f);
	jnum(f, x->target_avail ? x->worst / RDMA_TARGET : NAN);
	fputs(", \"ratio_write_memcpy\": ", f);
	jnum(f, x->target_avail ? x->worst : NAN);
	fprintf(f, ", \"result\": \"%s\"}", !x->target_avail ? "n/a" :
		x->pass ? "pass" : "fail");
	jerr(f, x->err, x->errmsg);
	fputc('}', f);
}

/**
 * print_json() - everything as one JSON document
 * @f: output
 * @cfg: configuration
 * @r: results
 * @what: the subcommand
 */
void print_json(FILE *f, const struct bench_cfg *cfg, const struct results *r,
		const char *what)
{
	const struct limits *lim = &r->lim;
	bool first;

	fputs("{\n  \"tool\": \"percs-bench\",\n  \"format\": 1,\n  ", f);
	jkey(f, "subcommand");
	jstr(f, what);
	fputs(",\n  ", f);
	jkey(f, "date");
	jstr(f, cfg->date);
	fputs(",\n  ", f);
	jkey(f, "kernel");
	jstr(f, cfg->kernel);
	fputs(",\n  ", f);
	jkey(f, "command");
	jstr(f, cfg->cmdline);
	fprintf(f, ",\n  \"online_cpus\": %d,\n  \"pinned\": %s,\n", cfg->ncpus,
		cfg->pin ? "true" : "false");
	fprintf(f, "  \"config\": {\"quick\": %s, \"lat_iters\": %u, \"lat_warmup\": %u, "
		"\"lat_budget_s\": ", cfg->quick ? "true" : "false",
		cfg->lat_iters, cfg->lat_warmup);
	jnum(f, cfg->lat_budget_s);
	fputs(", \"bw_secs\": ", f);
	jnum(f, cfg->bw_secs);
	fputs(", \"bw_warm_secs\": ", f);
	jnum(f, cfg->bw_warm_secs);
	fprintf(f, ", \"bw_batch\": %u, \"fifo_size\": %u, \"fifo_payload\": \"%s\", "
		"\"yield\": %s, \"job_key\": %u},\n", cfg->bw_batch,
		cfg->fifo_size, cfg->copy ? "copy" : "in-place",
		cfg->yield ? "true" : "false", cfg->job_key);
	fprintf(f, "  \"topology\": {\"supernodes\": %u, \"hubs_per_supernode\": %u, "
		"\"hubs\": %u, \"hfis_per_hub\": %u},\n", cfg->info.nr_supernodes,
		cfg->info.hubs_per_supernode, cfg->info.nr_hubs,
		cfg->info.hfis_per_hub);
	fputs("  \"pairs\": [", f);
	first = true;
	for (int p = 0; p < BP_COUNT; p++) {
		const struct pair_def *d = &cfg->pair[p];

		if (!d->valid)
			continue;
		fprintf(f, "%s\n    {\"name\": \"%s\", \"a\": {\"hub\": %u, \"hfi\": %u, "
			"\"supernode\": %u}, \"b\": {\"hub\": %u, \"hfi\": %u, "
			"\"supernode\": %u}}", first ? "" : ",", d->name, d->hub[0],
			d->unit[0], d->sn[0], d->hub[1], d->unit[1], d->sn[1]);
		first = false;
	}
	fputs("\n  ],\n  \"limits\": ", f);
	if (lim->done) {
		fputs("{\n    \"cacheline_half_rtt\": {", f);
		jlat_stats(f, &lim->cacheline);
		fputs("},\n    \"getppid_ns\": ", f);
		jnum(f, lim->getppid_ns);
		fputs(",\n    \"ioctl_hfi_info_ns\": ", f);
		jnum(f, lim->ioctl_info_ns);
		fputs(",\n    \"ioctl_kick_empty_ns\": ", f);
		jnum(f, lim->ioctl_kick_ns);
		fputs(",\n    \"fdatasync_empty_ns\": ", f);
		jnum(f, lim->fdatasync_ns > 0 ? lim->fdatasync_ns : NAN);
		fputs(",\n    \"ioctl_enotty_dev_null_ns\": ", f);
		jnum(f, lim->ioctl_null_ns > 0 ? lim->ioctl_null_ns : NAN);
		fputs(",\n    \"clock_gettime_ns\": ", f);
		jnum(f, lim->clock_ns);
		fputs(",\n    \"memcpy_cache_bytes_per_s\": ", f);
		jnum(f, lim->memcpy_cache_bps);
		fputs(",\n    \"memcpy_stream_bytes_per_s\": ", f);
		jnum(f, lim->memcpy_stream_bps);
		fputs(",\n    \"movsb_cache_bytes_per_s\": ", f);
		if (lim->movsb_cache_bps > 0)
			jnum(f, lim->movsb_cache_bps);
		else
			fputs("null", f);
		fputs(",\n    \"handoff_process_ns\": ", f);
		jnum(f, lim->handoff_proc_ns > 0 ? lim->handoff_proc_ns : NAN);
		fputs(",\n    \"handoff_thread_ns\": ", f);
		jnum(f, lim->handoff_thread_ns > 0 ? lim->handoff_thread_ns : NAN);
		fputs(",\n    \"cacheline_disturbed_fraction\": ", f);
		jnum(f, lim->cl_disturbed);
		fputs(",\n    \"cacheline_half_rtt_end\": ", f);
		if (lim->end_done) {
			fputc('{', f);
			jlat_stats(f, &lim->cacheline_end);
			fputs(", \"disturbed_fraction\": ", f);
			jnum(f, lim->cl_end_disturbed);
			fputc('}', f);
		} else {
			fputs("null", f);
		}
		fputs(",\n    \"bandwidth_limit\": \"memcpy_cache_bytes_per_s\"\n  }", f);
	} else {
		fputs("null", f);
	}

	fputs(",\n  \"engine\": [", f);
	for (unsigned int i = 0; i < r->ncost; i++) {
		const struct cost_result *x = &r->cost[i];

		fprintf(f, "%s\n    {\"kind\": \"%s\", \"payload\": %u, \"batch\": %u, "
			"\"compose_ns\": ", i ? "," : "", kind_name(x->kind),
			x->size, x->batch);
		jnum(f, x->err || x->kind == BK_IMM ? NAN : x->compose_ns);
		fputs(", \"kick_ns\": ", f);
		jnum(f, x->err ? NAN : x->kick_ns);
		fputs(", \"receive_ns\": ", f);
		jnum(f, x->err ? NAN : x->recv_ns);
		jerr(f, x->err, x->err ? percs_strerror(x->err) : "");
		fputc('}', f);
	}
	fputs("\n  ],\n  \"engine_ns_per_byte\": ", f);
	jnum(f, cost_slope(r, true) > 0 ? cost_slope(r, true) : NAN);
	fputs(",\n  \"latency\": [", f);
	for (unsigned int i = 0; i < r->nlat; i++) {
		const struct lat_result *l = &r->lat[i];

		fprintf(f, "%s\n    {\"kind\": \"%s\", \"mode\": \"%s\", \"pair\": \"%s\", "
			"\"payload\": %u, \"label\": \"%s\", ", i ? "," : "",
			kind_name(l->kind), mode_name(l->mode),
			cfg->pair[l->pair].name, l->size, size_label(l->size));
		jlat_stats(f, &l->st);
		fputs(", \"disturbed_fraction\": ", f);
		jnum(f, l->disturbed);
		fputs(", \"syscalls_per_msg\": ", f);
		jnum(f, l->sys_per_msg);
		fputs(", \"polled_fraction\": ", f);
		jnum(f, l->polled_frac);
		fputs(", \"ratio_cacheline\": ", f);
		if (lim->done && !l->err && l->st.iters)
			jnum(f, l->st.median_ns / lim->cacheline.median_ns);
		else
			fputs("null", f);
		jerr(f, l->err, l->errmsg);
		fputc('}', f);
	}
	fputs("\n  ],\n  \"bandwidth\": [", f);
	for (unsigned int i = 0; i < r->nbw; i++) {
		const struct bw_result *w = &r->bw[i];
		bool ok = !w->err && w->packets;

		fprintf(f, "%s\n    {\"kind\": \"%s\", \"mode\": \"%s\", \"pair\": \"%s\", "
			"\"payload\": %u, \"label\": \"%s\", \"payload_mode\": \"%s\", "
			"\"bytes\": %llu, \"packets\": %llu, \"seconds\": ",
			i ? "," : "", kind_name(w->kind), mode_name(w->mode),
			cfg->pair[w->pair].name, w->size, size_label(w->size),
			payload_mode(w), (unsigned long long)w->bytes,
			(unsigned long long)w->packets);
		jnum(f, w->secs);
		fputs(", \"bytes_per_s\": ", f);
		jnum(f, ok ? w->bps : NAN);
		fputs(", \"median_chunk_bytes_per_s\": ", f);
		jnum(f, ok ? w->median_bps : NAN);
		fprintf(f, ", \"chunks\": %u", w->chunks);
		fputs(", \"packets_per_s\": ", f);
		jnum(f, ok ? w->pps : NAN);
		fprintf(f, ", \"sender_fifo_full_waits\": %llu, \"sender_fifo_full_fraction\": ",
			(unsigned long long)w->room_waits);
		jnum(f, w->room_wait_frac);
		fprintf(f, ", \"send_blocked\": %llu", (unsigned long long)w->send_blocked);
		fputs(", \"ratio_memcpy_cache\": ", f);
		jnum(f, ok && lim->done ? w->median_bps / lim->memcpy_cache_bps : NAN);
		fputs(", \"ratio_memcpy_stream\": ", f);
		jnum(f, ok && lim->done ? w->median_bps / lim->memcpy_stream_bps : NAN);
		jerr(f, w->err, w->errmsg);
		fputc('}', f);
	}
	fputs("\n  ],\n  \"rdma\": ", f);
	jrdma(f, &r->rdma);
	fputs(",\n  \"atomic\": [", f);
	for (unsigned int i = 0; i < r->namo; i++) {
		const struct atomic_result *x = &r->amo[i];

		fprintf(f, "%s\n    {\"mode\": \"%s\", \"pair\": \"%s\", \"fetch_add\": ",
			i ? "," : "", mode_name(x->mode), cfg->pair[x->pair].name);
		jlat_obj(f, &x->fetch, x->lat_done);
		fputs(", \"fifo_8b_half_rtt\": ", f);
		jlat_obj(f, &x->fifo, x->lat_done);
		fputs(", \"ratio_fetch_add_fifo\": ", f);
		jnum(f, x->lat_done ? x->ratio : NAN);
		fputs(", \"ratio_fetch_add_fifo_min\": ", f);
		jnum(f, x->lat_done ? x->ratio_min : NAN);
		fputs(", \"ratio_fetch_add_fifo_max\": ", f);
		jnum(f, x->lat_done ? x->ratio_max : NAN);
		fprintf(f, ", \"rounds\": %u, \"attempts\": %u, \"rounds_disturbed\": %s",
			x->rounds, x->attempts, x->lat_disturbed ? "true" : "false");
		fputs(", \"adds_per_s_unpacked\": ", f);
		jnum(f, x->rate_done ? x->rate_off : NAN);
		fputs(", \"adds_per_s_packed\": ", f);
		jnum(f, x->rate_done ? x->rate_auto : NAN);
		fputs(", \"ratio_packed_unpacked\": ", f);
		jnum(f, x->rate_done ? x->rate_ratio : NAN);
		fputs(", \"ratio_packed_unpacked_min\": ", f);
		jnum(f, x->rate_done ? x->rate_ratio_min : NAN);
		fputs(", \"ratio_packed_unpacked_max\": ", f);
		jnum(f, x->rate_done ? x->rate_ratio_max : NAN);
		fprintf(f, ", \"chunk_pairs\": %u, \"adds_per_chunk\": %u, "
			"\"adds\": %llu, \"fetch_adds\": %llu, \"verified\": %s",
			x->chunks, x->chunk, (unsigned long long)x->adds,
			(unsigned long long)x->fetches,
			x->wrong ? "false" : x->lat_done && x->rate_done ? "true" : "null");
		jerr(f, x->err, x->errmsg);
		fputc('}', f);
	}
	fputs("\n  ],\n  \"coll\": ", f);
	coll_json(f, cfg);
	fprintf(f, ",\n  \"target_rounds\": %u,\n  \"targets\": [", r->tgt_rounds);
	for (unsigned int i = 0; i < r->ntgt; i++) {
		const struct target *t = &r->tgt[i];

		fprintf(f, "%s\n    {\"id\": %d, \"pair\": \"%s\", \"description\": ",
			i ? "," : "", t->id, cfg->pair[t->pair].name);
		jstr(f, t->desc);
		fprintf(f, ", \"unit\": \"%s\", \"value\": ", t->unit);
		jnum(f, t->avail ? t->value : NAN);
		fputs(", \"bound\": ", f);
		jnum(f, t->avail ? t->bound : NAN);
		fputs(", \"ratio\": ", f);
		jnum(f, t->avail ? t->ratio : NAN);
		fputs(", \"ratio_min\": ", f);
		jnum(f, t->avail ? t->ratio_min : NAN);
		fputs(", \"ratio_max\": ", f);
		jnum(f, t->avail ? t->ratio_max : NAN);
		fputs(", \"floor\": ", f);
		jnum(f, t->floor > 0 ? t->floor : NAN);
		fputs(", \"floor_ratio\": ", f);
		jnum(f, t->floor > 0 ? t->floor_ratio : NAN);
		fprintf(f, ", \"rounds\": %u, \"attempts\": %u, \"result\": \"%s\"}",
			t->rounds, t->attempts,
			!t->avail ? "n/a" : t->pass ? "pass" : "fail");
	}
	fputs("\n  ],\n  \"notes\": [", f);
	fprintf(f, "\n    \"latency is half of the median/p99 round trip; bandwidth counts "
		"payload bytes between the receiver's MARK and END arrivals; the memcpy "
		"ratios and target 3 use the median chunk rate (chunks of 4 receive FIFOs)\",");
	fprintf(f, "\n    \"poll mode on %d online CPUs%s\"", cfg->ncpus,
		cfg->ncpus < 4 ? ": the HFI polling threads share the CPUs with the "
		"two busy-polling processes" : "");
	fputs("\n  ]\n}\n", f);
}

/* --- gnuplot --- */

/**
 * run_gnuplot() - draw a plot from a gnuplot script
 * @script: the script (it sets the terminal and the output)
 * @dir: the directory holding it and its data, named if gnuplot fails
 * @path: the PNG it writes, named when it succeeded
 *
 * Return: 0, or -EIO when gnuplot failed (its input is left in @dir).
 */
int run_gnuplot(const char *script, const char *dir, const char *path)
{
	char run[256];
	int status;

	snprintf(run, sizeof(run), "gnuplot %s", script);
	status = system(run);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "percs-bench: gnuplot failed; its input is in %s\n",
			dir);
		return -EIO;
	}
	fprintf(stderr, "percs-bench: plot written to %s\n", path);
	return 0;
}

bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);

		if (len && len < sizeof(buf) - 10) {
			memcpy(buf, path, len);
			strcpy(buf + len, "/gnuplot");
			if (!access(buf, X_OK))
				return true;
		}
		if (!end)
			break;
		path = end + 1;
	}
	return false;
}

/*
 * One data block per series, separated by two blank lines (gnuplot's
 * "index"); Return: the number of blocks written.
 */
static int write_series(FILE *d, FILE *cmd, const struct bench_cfg *cfg,
			const struct results *r, bool bw, const char *datafile,
			const char *extra)
{
	int idx = 0;

	for (int p = 0; p < BP_COUNT; p++) {
		for (int m = BM_KICK; m < BM_NR; m++) {
			for (int k = BK_FIFO; k <= BK_IMM; k++) {
				int pts = 0;

				for (unsigned int i = 0; i < (bw ? r->nbw : r->nlat); i++) {
					double x, y;

					if (bw) {
						const struct bw_result *w = &r->bw[i];

						if ((int)w->pair != p || (int)w->mode != m ||
						    (int)w->kind != k || w->err || !w->packets)
							continue;
						x = w->size;
						y = w->median_bps / 1e6;
					} else {
						const struct lat_result *l = &r->lat[i];

						if ((int)l->pair != p || (int)l->mode != m ||
						    (int)l->kind != k || l->err || !l->st.iters)
							continue;
						x = l->size;
						y = l->st.median_ns / 1e3;
					}
					fprintf(d, "%g %g\n", x, y);
					pts++;
				}
				if (!pts)
					continue;
				fprintf(d, "\n\n");
				fprintf(cmd, "%s'%s' index %d using 1:2 with linespoints title '%s %s %s'",
					idx ? ", " : "plot ", datafile, idx,
					kind_name(k), mode_name(m), cfg->pair[p].name);
				idx++;
			}
		}
	}
	if (idx)
		fprintf(cmd, "%s\n", extra);
	return idx;
}

/**
 * write_plot() - latency and bandwidth against payload size, as a PNG
 * @cfg: configuration
 * @r: results
 * @path: the PNG to write
 *
 * Needs gnuplot in PATH; without it, says so on stderr and returns 0.
 * Return: 0 or -errno.
 */
int write_plot(const struct bench_cfg *cfg, const struct results *r,
	       const char *path)
{
	char dir[] = "/tmp/percs-bench.XXXXXX";
	char latf[64], bwf[64], cmdf[64], extra[96] = "";
	FILE *lat = NULL, *bw = NULL, *cmd = NULL;
	int ret = 0;

	if (!have_gnuplot()) {
		fprintf(stderr, "percs-bench: gnuplot not found in PATH: no plot "
			"(install gnuplot-nox)\n");
		return 0;
	}
	if (!mkdtemp(dir))
		return -errno;
	snprintf(latf, sizeof(latf), "%s/lat.dat", dir);
	snprintf(bwf, sizeof(bwf), "%s/bw.dat", dir);
	snprintf(cmdf, sizeof(cmdf), "%s/plot.gp", dir);
	lat = fopen(latf, "w");
	bw = fopen(bwf, "w");
	cmd = fopen(cmdf, "w");
	if (!lat || !bw || !cmd) {
		ret = -errno;
		goto out;
	}
	fputs("set terminal png size 1400,600\n", cmd);
	fputs("set output '", cmd);
	for (const char *s = path; *s; s++) {
		if (*s == '\'')
			fputc('\'', cmd);	/* '' inside a single-quoted string */
		fputc(*s, cmd);
	}
	fputs("'\n", cmd);
	fprintf(cmd, "set multiplot layout 1,2 title 'percs-bench, %s, %d CPUs, %s'\n",
		cfg->kernel, cfg->ncpus, cfg->date);
	fputs("set logscale xy\nset grid\nset key top left font ',8'\n"
	      "set xlabel 'payload (bytes)'\nset ylabel 'half round trip, median (us)'\n"
	      "set title 'latency'\n", cmd);
	if (!write_series(lat, cmd, cfg, r, false, latf, ""))
		fputs("plot 1 notitle\n", cmd);
	fputs("set ylabel 'payload MB/s (median chunk rate)'\nset title 'one-way streaming'\n", cmd);
	fputs("set key bottom right\n", cmd);
	if (r->lim.done)
		snprintf(extra, sizeof(extra),
			 ", %.1f with lines dashtype 2 title 'memcpy 64 KiB (limit)'",
			 r->lim.memcpy_cache_bps / 1e6);
	if (!write_series(bw, cmd, cfg, r, true, bwf, extra))
		fputs("plot 1 notitle\n", cmd);
	fputs("unset multiplot\n", cmd);
out:
	if (lat)
		fclose(lat);
	if (bw)
		fclose(bw);
	if (cmd)
		fclose(cmd);
	if (!ret) {
		ret = run_gnuplot(cmdf, dir, path);
		if (ret)
			return ret;	/* its input stays for a look */
	}
	unlink(latf);
	unlink(bwf);
	unlink(cmdf);
	rmdir(dir);
	return ret;
}
