/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs-bench: shared declarations.
 *
 * The benchmark is split by what it measures: limits.c (the VM's physical
 * limits), lat.c (ping-pong latency), bw.c (streaming bandwidth), cost.c
 * (the single-process cost breakdown of one send), rdma.c (RDMA),
 * atomic.c (remote atomics), coll.c (CAU and software collectives), with the process pair harness in pair.c and
 * the output (table, JSON, plot) in report.c.
 */
#ifndef PERCS_BENCH_H
#define PERCS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "percs.h"


/* coll: process counts, allreduce sizes (bytes, multiples of 8) */
#define COLL_MAX_PROCS	8
#define COLL_MAX_SIZES	16
#define COLL_MAX_BYTES	65536

enum bench_kind { BK_FIFO, BK_IMM };
enum bench_mode { BM_KICK, BM_POLL, BM_AUTO, BM_NR };
enum bench_pair { BP_NEAR, BP_FAR, BP_COUNT };

/* Where the two windows of a pair are. */
struct pair_def {
	bool valid;
	char name[16];		/* "same-hub", "cross-SN", "same-SN" */
	unsigned int hub[2];
	unsigned int unit[2];
	unsigned int sn[2];
};

struct bench_cfg {
	/* what to run */
	unsigned int lat_iters;
	unsigned int lat_warmup;
	double lat_budget_s;	/* per latency case, warm-up included */
	double bw_secs;		/* measured streaming time per case */
	double bw_warm_secs;
	unsigned int bw_batch;	/* packets composed per trigger */
	unsigned int fifo_size;	/* bytes, both FIFOs of every window */
	double timeout_s;	/* no progress for this long: the case fails */
	bool copy;		/* bw: payload memcpy'd by percs_send_compose;
				 * otherwise percs_send_reserve(), in place */
	bool yield;		/* sched_yield() while spinning */
	bool json;
	bool quick;
	const char *plot;
	int hub_a, hub_b;	/* -1: default */

	/* which cases: bit (1 << enum value) set = wanted */
	unsigned int kinds, modes, pairs;
	unsigned int sizes[16];	/* payload sizes wanted; none: all */
	unsigned int nsizes;

	/* coll (coll.c): none given: the defaults */
	unsigned int coll_procs[COLL_MAX_PROCS];	/* --procs */
	unsigned int ncoll_procs;
	unsigned int coll_sizes[COLL_MAX_SIZES];	/* --sizes, for coll */
	unsigned int ncoll_sizes;
	unsigned int coll_iters;	/* --iters: fixed, else calibrated */
	unsigned int coll_cpus;		/* --cpus: ranks on the first N; 0 all */

	/* what we found */
	int ncpus;
	bool pin;
	int job_fd;		/* the job of every window (percs_job_default) */
	uint32_t job_key;	/* its key, for the report */
	struct percs_hfi_info info;
	struct pair_def pair[BP_COUNT];
	char kernel[128];
	char date[64];
	char cmdline[512];
};

struct lat_stats {
	double median_ns;
	double p99_ns;
	double min_ns;
	double mean_ns;
	unsigned int iters;
};

struct limits {
	struct lat_stats cacheline;	/* half round trip */
	double getppid_ns;
	double ioctl_info_ns;		/* PERCS_IOC_HFI_INFO */
	double ioctl_kick_ns;		/* PERCS_IOC_KICK, nothing to do */
	double fdatasync_ns;		/* fdatasync() on a kick-mode window,
					 * nothing to do: the doorbell */
	double ioctl_null_ns;		/* unknown ioctl on /dev/null: the
					 * VFS ioctl path alone (diagnostic) */
	double clock_ns;		/* one clock_gettime() */
	double memcpy_stream_bps;	/* 2 KiB chunks through 8 MiB */
	double memcpy_cache_bps;	/* 2 KiB chunks through 64 KiB */
	double movsb_cache_bps;		/* the same with rep movsb */
	double handoff_proc_ns;		/* wake a process on this CPU and
					 * switch to it (pipe); -1 failed */
	double handoff_thread_ns;	/* the same between threads */
	double cl_disturbed;		/* fraction of cache-line half round
					 * trips above 100 us: a vCPU was not
					 * running (busy host) */
	struct lat_stats cacheline_end;	/* measured again after lat and bw */
	double cl_end_disturbed;
	bool done;
	bool end_done;
};

struct lat_result {
	enum bench_kind kind;
	enum bench_mode mode;
	enum bench_pair pair;
	unsigned int size;
	struct lat_stats st;
	double disturbed;	/* fraction of round trips above 200 us */
	double sys_per_msg;	/* kick system calls of both sides per
				 * message, counted by the kernel
				 * (percs_status.kicks) */
	double polled_frac;	/* sends the polling thread consumed */
	int err;
	char errmsg[96];
};

struct bw_result {
	enum bench_kind kind;
	enum bench_mode mode;
	enum bench_pair pair;
	unsigned int size;
	bool copy;
	uint64_t packets;
	uint64_t bytes;
	double secs;
	double bps;
	double pps;
	double median_bps;	/* median of the chunks' rates (4 FIFOs each):
				 * host stalls filtered out */
	unsigned int chunks;
	uint64_t room_waits;	/* sender found its send FIFO full */
	double room_wait_frac;	/* fraction of the time spent so */
	uint64_t send_blocked;	/* sender's status page: waits on the
				 * receiver's full FIFO (whole run) */
	int err;
	char errmsg[96];
};

/* One row of the single-process engine cost table (cost.c). */
struct cost_result {
	enum bench_kind kind;
	unsigned int size;
	unsigned int batch;	/* packets per trigger */
	double compose_ns;	/* per packet: percs_send_compose() */
	double kick_ns;		/* per packet: trigger + fdatasync doorbell
				 * (or one icswx) */
	double recv_ns;		/* per packet: peek + consume (+ credit) */
	int err;
};

/* One target check, judged on the median of per-round ratios (targets.c). */
struct target {
	int id;
	enum bench_pair pair;
	char desc[128];
	char unit[8];		/* "ns" or "B/s" */
	bool avail;
	bool higher_better;
	double value;		/* median over the rounds */
	double bound;		/* median over the rounds */
	double ratio;		/* median of the rounds' value / bound */
	double ratio_min, ratio_max;
	unsigned int rounds;	/* rounds that produced a ratio */
	unsigned int attempts;	/* rounds run (disturbed ones are not used) */
	bool pass;
	/*
	 * Target 1: what an engine that cost nothing would give - the empty
	 * doorbell plus the cache-line hand-off - median over the rounds,
	 * and its ratio to the bound; 0 when not measured.
	 */
	double floor;
	double floor_ratio;
};

/*
 * One atomic case (atomic.c): a pair and an engine mode.  Latencies are
 * medians over the rounds used (rounds of which a quarter of the round
 * trips took over 200 us are left out while clean ones exist); rates are
 * medians over chunks, the packed/unpacked ratio over chunk pairs.
 */
struct atomic_result {
	enum bench_mode mode;
	enum bench_pair pair;
	struct lat_stats fetch;	/* blocking fetch-add 64, call to return */
	struct lat_stats fifo;	/* FIFO 8 B half round trip, same rounds */
	double ratio;		/* fetch-add / FIFO, median over rounds */
	double ratio_min, ratio_max;
	unsigned int rounds;	/* rounds used */
	unsigned int attempts;	/* rounds run */
	bool lat_disturbed;	/* every round was disturbed: all used */
	double rate_off;	/* adds/s, PERCS_PACK_OFF, median chunk */
	double rate_auto;	/* adds/s, PERCS_PACK_AUTO, median chunk */
	double rate_ratio;	/* packed / unpacked, median over chunk pairs */
	double rate_ratio_min, rate_ratio_max;
	unsigned int chunks;	/* chunk pairs */
	unsigned int chunk;	/* adds per chunk */
	uint64_t adds;		/* non-fetching adds issued, all checked */
	uint64_t fetches;	/* fetch-adds issued, every value checked */
	bool lat_done, rate_done;
	bool wrong;		/* a value was wrong: the operations failed */
	int err;
	char errmsg[128];
};

/* RDMA (rdma.c): 4 KiB, 16 KiB, ... 16 MiB */
#define RDMA_NSIZES	7
#define RDMA_TARGET	0.70	/* write bandwidth / memcpy, >= 1 MiB */

struct rdma_row {
	uint64_t bytes;
	double write_bps;
	double read_bps;
	double memcpy_bps;	/* same buffers, same run */
};

/*
 * RDMA between two windows of one process: HFI 0 of hub 0 and HFI 0 of
 * the far pair's hub B (HFI 1 of hub 0 on a one-hub system).
 */
struct rdma_result {
	bool ran;		/* rdma was asked for */
	bool done;		/* every figure measured */
	unsigned int hub[2], unit[2];
	struct rdma_row row[RDMA_NSIZES];
	unsigned int nrows;
	struct lat_stats write8;	/* 8-byte write, post to completion */
	/* the target: the worst write / memcpy at 1 MiB and larger */
	bool target_avail;
	unsigned int worst_row;
	double worst;
	bool pass;
	int err;
	char errmsg[128];
};

#define AMO_LAT_TARGET	1.5	/* fetch-add <= 1.5 x FIFO half RTT */
#define AMO_PACK_TARGET	3.0	/* packed add rate >= 3 x unpacked */

/* targets.c's three per pair, then atomic.c's two per pair (kick mode) */
#define NTARGETS (5 * BP_COUNT)
#define MAX_ROUNDS 16
#define MEDIAN_MAX 256		/* values median_d() takes */

/* A round trip this long means a vCPU was not running (a busy host). */
#define DISTURBED_NS 200000
#define LAT_MAX 96
#define BW_MAX 96
#define COST_MAX 32
#define AMO_MAX (BM_NR * BP_COUNT)

struct results {
	struct limits lim;
	struct lat_result lat[LAT_MAX];
	unsigned int nlat;
	struct bw_result bw[BW_MAX];
	unsigned int nbw;
	struct cost_result cost[COST_MAX];
	unsigned int ncost;
	struct atomic_result amo[AMO_MAX];
	unsigned int namo;
	struct rdma_result rdma;
	struct target tgt[NTARGETS];
	unsigned int ntgt;
	unsigned int tgt_rounds;
};

/* common helpers (percs-bench.c) */
extern const struct bench_cfg *g_cfg;
uint64_t now_ns(void);
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cmp_u64(const void *a, const void *b);
double median_d(const double *v, unsigned int n);
void stats_from_samples(uint64_t *s, unsigned int n, double scale,
			struct lat_stats *out);
const char *kind_name(enum bench_kind k);
const char *mode_name(enum bench_mode m);
bool bench_want(const struct bench_cfg *cfg, enum bench_kind k,
		enum bench_mode m, enum bench_pair p, unsigned int size);

/*
 * Spinning with a deadline: spin_tick() returns true once the wait has
 * lasted longer than the configured timeout (counted from the 256th call:
 * spin_init() reads no clock).  It reads the clock only every 256 calls
 * and, with --yield, yields the CPU every 64 calls.
 */
struct spin {
	uint64_t deadline;
	unsigned int n;
};
void spin_init(struct spin *s);
bool spin_slow(struct spin *s);
static inline bool spin_tick(struct spin *s)
{
	if (++s->n & 63)
		return false;
	return spin_slow(s);
}

/* pair.c: two processes, two windows */
struct pair_ctl;
#define AMO_WORDS	16	/* target words checked after an atomic run */
struct endpoint {
	struct percs_hfi *hfi;
	struct percs_window *w;	/* libpercs window, or NULL */
	struct percs_addr addr;	/* this endpoint's address */
	struct percs_addr peer;	/* the other endpoint's address */
	struct pair_ctl *ctl;
	int side;		/* 0 parent (A), 1 child (B) */
	char msg[96];		/* why this side failed */
};

/* Shared between the two processes of a case (MAP_SHARED anonymous). */
struct pair_ctl {
	_Alignas(64) int ready;
	_Alignas(64) int stop;
	_Alignas(64) int child_err;
	char child_msg[96];
	/* bandwidth receiver's results */
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t rx_t0, rx_t1;
	double rx_median_bps;	/* median over chunks of 4 FIFOs */
	uint32_t rx_chunks;
	/* atomic target: its registration, then its first words at the end */
	struct percs_rmr amo_rmr;
	uint64_t amo_words[AMO_WORDS];
	/* side B's window counters at its end (percs_status) */
	uint64_t b_kicks;
	uint64_t b_sent_polled;
	uint64_t b_sent_kicked;
};

struct pair_opts {
	enum bench_pair pair;
	enum bench_mode mode;
	bool no_windows;	/* plain shared memory only (limits) */
};

typedef int (*side_fn)(struct endpoint *ep, void *arg);

int pair_run(const struct pair_opts *o, side_fn fa, side_fn fb, void *arg,
	     char *errmsg, size_t errlen, struct pair_ctl *ctl_out);
int pin_self(int side);
int pair_wait_ready(struct pair_ctl *ctl);
void pair_set_ready(struct pair_ctl *ctl);
int ep_fail(struct endpoint *ep, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int allowed_cpus(void);
int pin_pool(void);

#define BENCH_NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The payload sizes lat.c, bw.c and cost.c (engine) measure, indexed by
 * enum bench_kind: their run loops and the --sizes check (percs-bench.c)
 * both read these, so a size is accepted exactly when it is measured.
 */
struct case_sizes {
	const unsigned int *v;
	size_t n;
};
extern const struct case_sizes lat_sizes[2], bw_sizes[2], cost_sizes[2];

/* limits.c, lat.c, bw.c, cost.c, targets.c */
int limit_cacheline(unsigned int iters, unsigned int warmup, double budget_s,
		    struct lat_stats *st, double *disturbed);
double limit_getppid(unsigned int calls);
double limit_doorbell(unsigned int hub, int job_fd, unsigned int calls);
double limit_memcpy_cache(double secs);
int lat_measure(struct lat_result *r, unsigned int iters, unsigned int warmup,
		double budget_s);
int bw_measure(struct bw_result *r, double secs, double warm_secs);
int run_limits(const struct bench_cfg *cfg, struct limits *lim);
int run_limits_end(const struct bench_cfg *cfg, struct limits *lim);
int run_lat(const struct bench_cfg *cfg, struct results *res);
int run_bw(const struct bench_cfg *cfg, struct results *res);
int run_cost(const struct bench_cfg *cfg, struct results *res);
int run_targets(const struct bench_cfg *cfg, struct results *res);
int run_rdma(const struct bench_cfg *cfg, struct results *res);
int run_atomic(const struct bench_cfg *cfg, struct results *res);
void atomic_targets(struct results *res);

/* coll.c: CAU against software collectives (issue 7) */
int run_coll(const struct bench_cfg *cfg);
unsigned int coll_failed(void);
void print_coll(FILE *f, const struct bench_cfg *cfg);
void coll_print_targets(FILE *f);
void coll_json(FILE *f, const struct bench_cfg *cfg);
/* report.c's JSON writers: a string, a number (null unless finite), a
 * lat_stats object (null when @have is false). */
void jstr(FILE *f, const char *s);
void jnum(FILE *f, double v);
void jlat_obj(FILE *f, const struct lat_stats *s, bool have);
int coll_plot(const struct bench_cfg *cfg, const char *path);

/* report.c */
void print_limits(FILE *f, const struct limits *lim);
void print_lat(FILE *f, const struct bench_cfg *cfg, const struct results *r);
void print_bw(FILE *f, const struct bench_cfg *cfg, const struct results *r);
void print_cost(FILE *f, const struct bench_cfg *cfg, const struct results *r);
void print_atomic(FILE *f, const struct bench_cfg *cfg, const struct results *r);
void print_rdma(FILE *f, const struct results *r);
void print_summary(FILE *f, const struct bench_cfg *cfg,
		   const struct results *r, const char *what);
void print_json(FILE *f, const struct bench_cfg *cfg, const struct results *r,
		const char *what);
int write_plot(const struct bench_cfg *cfg, const struct results *r,
	       const char *path);
bool have_gnuplot(void);
int run_gnuplot(const char *script, const char *dir, const char *path);

#endif /* PERCS_BENCH_H */
