// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench: latency, bandwidth and the VM's physical limits, measured
 * side by side in one run (Documentation/benchmarks.rst).
 *
 *   percs-bench [OPTIONS] [all|limits|engine|lat|bw|rdma|atomic|coll]
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

const struct bench_cfg *g_cfg;
static bool progress_on = true;
static bool progress_tty;
static bool progress_dirty;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Progress on stderr.  A message ending in a newline is kept; one without
 * is transient: on a terminal it is overwritten by the next, elsewhere it
 * is not printed at all (one line per group of cases is enough in a log).
 */
void progress(const char *fmt, ...)
{
	size_t len = strlen(fmt);
	bool keep = len && fmt[len - 1] == '\n';
	va_list ap;

	if (!progress_on || (!keep && !progress_tty))
		return;
	if (progress_tty && progress_dirty)
		fputs("\r\033[K", stderr);
	fputs("percs-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	progress_dirty = !keep;
	fflush(stderr);
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/**
 * median_d() - the median of @n values (at most MEDIAN_MAX; 0 if none)
 * @v: the values, left as they are
 * @n: how many
 */
double median_d(const double *v, unsigned int n)
{
	double t[MEDIAN_MAX];

	if (n > MEDIAN_MAX)
		n = MEDIAN_MAX;
	if (!n)
		return 0;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_double);
	return n & 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/*
 * Sorts @s; the statistics are of the samples times @scale (0.5: half
 * round trips).  p99 is the nearest-rank percentile.
 */
void stats_from_samples(uint64_t *s, unsigned int n, double scale,
			struct lat_stats *out)
{
	double sum = 0;
	unsigned int r;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	qsort(s, n, sizeof(*s), cmp_u64);
	for (unsigned int i = 0; i < n; i++)
		sum += (double)s[i];
	out->iters = n;
	out->min_ns = (double)s[0] * scale;
	out->mean_ns = sum / n * scale;
	out->median_ns = (n & 1 ? (double)s[n / 2] :
			  ((double)s[n / 2 - 1] + (double)s[n / 2]) / 2) * scale;
	r = (unsigned int)((99ull * n + 99) / 100);	/* ceil(0.99 n) */
	out->p99_ns = (double)s[(r ? r : 1) - 1] * scale;
}

const char *kind_name(enum bench_kind k)
{
	return k == BK_IMM ? "imm" : "fifo";
}

const char *mode_name(enum bench_mode m)
{
	return m == BM_POLL ? "poll" : m == BM_AUTO ? "auto" : "kick";
}

/**
 * bench_want() - is this case selected by --kind/--mode/--pair/--sizes?
 */
bool bench_want(const struct bench_cfg *cfg, enum bench_kind k,
		enum bench_mode m, enum bench_pair p, unsigned int size)
{
	bool size_ok = !cfg->nsizes;

	for (unsigned int i = 0; i < cfg->nsizes; i++)
		size_ok |= cfg->sizes[i] == size;
	return size_ok && (cfg->kinds & (1u << k)) &&
	       (cfg->modes & (1u << m)) && (cfg->pairs & (1u << p));
}

/* Free on the fast path: the clock is first read after 256 spins. */
void spin_init(struct spin *s)
{
	s->n = 0;
	s->deadline = 0;
}

bool spin_slow(struct spin *s)
{
	uint64_t now;

	if (g_cfg->yield)
		sched_yield();
	if (s->n & 255)
		return false;
	now = now_ns();
	if (!s->deadline)
		s->deadline = now + (uint64_t)(g_cfg->timeout_s * 1e9);
	return now > s->deadline;
}

static void usage(FILE *f)
{
	fputs(
"Usage: percs-bench [OPTIONS] [all|limits|engine|lat|bw|rdma|atomic|coll]\n"
"\n"
"Measure the percs emulated HFI against this machine's own limits, side by\n"
"side in one run (Documentation/benchmarks.rst).\n"
"\n"
"  all      limits + engine + lat + bw + rdma + atomic + coll, a summary with\n"
"           ratios and target checks (the default)\n"
"  rdma     RDMA write/read bandwidth 4 KiB..16 MiB, 8-byte write latency,\n"
"           memcpy in the same run and the write/memcpy ratio (target 70%)\n"
"  limits   cache-line ping-pong, getppid(), percs ioctls, fdatasync doorbell,\n"
"           memcpy bandwidth\n"
"  engine   where one send's time goes: compose, kick, receive, one process\n"
"  lat      ping-pong half round trip, FIFO and immediate sends, kick and poll\n"
"  bw       one-way streaming bandwidth and message rate\n"
"  atomic   remote atomics: blocking 64-bit fetch-add latency against the FIFO\n"
"           8 B half round trip (target 1.5x), rate of non-fetching adds\n"
"           unpacked and packed (target 3x); every result checked\n"
"  coll     collectives for 2, 4, 8, 16 processes on different hubs (those the\n"
"           system has): allreduce 8 B..64 KiB and barrier over the CAU against\n"
"           each software algorithm (target: CAU 2x faster at 8 and 16\n"
"           processes); every result checked\n"
"\n"
"Options:\n"
"  --quick           fewer iterations and shorter runs (make run, CI)\n"
"  --iters N         latency round trips per case (default 10000; warm-up N/10);\n"
"                    coll: iterations per row (default: sized to the row's time)\n"
"  --bw-time SECS    measured streaming time per bandwidth case (default 1)\n"
"  --batch N         FIFO packets composed per trigger (default 16)\n"
"  --fifo-size BYTES send and receive FIFO size of every window (default 65536)\n"
"  --copy            bw: memcpy the payload into the FIFO (percs_send_compose)\n"
"                    instead of leaving it in place (percs_send_reserve: only\n"
"                    headers written)\n"
"  --hub-a N         hub of side A (default 0)\n"
"  --hub-b M         hub of side B in the far pair (default: the last hub)\n"
"  --kind fifo|imm   only this kind of send (lat, bw, engine)\n"
"  --mode kick|poll  only this engine mode (lat, bw, atomic)\n"
"  --pair near|far   only the same-hub (near) or the hub A/hub B (far) pair\n"
"  --sizes N,N,...   only these payload sizes, each one the subcommand has a\n"
"                    case of (coll: allreduce bytes, multiples of 8 up to\n"
"                    65536); at most 16, each once\n"
"  --procs N,N,...   coll: only these process counts, 2..16, at most 8, each\n"
"                    once (default 2,4,8,16)\n"
"  --cpus N          coll: spread the ranks over the first N allowed CPUs\n"
"                    (default: all; 1 puts every rank on one CPU)\n"
"  --yield           sched_yield() while busy-polling (lets a polling engine\n"
"                    run when it has no CPU of its own)\n"
"  --timeout SECS    a wait without progress this long fails the case (default 10)\n"
"  --json            one JSON document on stdout instead of tables\n"
"  --plot FILE.png   plot latency and bandwidth (coll: the collectives; all:\n"
"                    those in FILE-coll.png) with gnuplot, if installed\n"
"  -q, --quiet       no progress on stderr\n"
"  -h, --help        this text\n"
"\n"
"Exit status: 0 (targets are reported, not asserted), 1 the measurement\n"
"could not run (module not loaded, ...; rdma: the measurement failed; lat,\n"
"bw, atomic: a case failed; coll: a process count failed) or an atomic or\n"
"collective result was wrong, 2 bad usage (unknown option or subcommand, a\n"
"bad number, a list with an empty item, an item twice or too many, a --sizes\n"
"value the subcommand has no case of, no such hub).\n", f);
}

static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("percs-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'percs-bench --help'.\n", stderr);
	exit(2);
}

static unsigned long parse_ulong(const char *opt, const char *s,
				 unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	/* strtoul() skips blanks and negates: " -18446744073709551615" is 1 */
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || !isdigit((unsigned char)*s) ||
	    v < min || v > max)
		bad_usage("%s: '%s' is not a number in [%lu, %lu]", opt, s, min,
			  max);
	return v;
}

static double parse_secs(const char *opt, const char *s, double min, double max)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end ||
	    !(isdigit((unsigned char)*s) || *s == '.') || !(v >= min && v <= max))
		bad_usage("%s: '%s' is not a number of seconds in [%g, %g]", opt,
			  s, min, max);
	return v;
}

enum {
	OPT_QUICK = 256, OPT_ITERS, OPT_BWTIME, OPT_BATCH, OPT_FIFO, OPT_COPY,
	OPT_HUBA, OPT_HUBB, OPT_YIELD, OPT_TIMEOUT, OPT_JSON, OPT_PLOT,
	OPT_KIND, OPT_MODE, OPT_PAIR, OPT_SIZES, OPT_PROCS, OPT_CPUS,
};

static const struct option long_opts[] = {
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "bw-time", required_argument, NULL, OPT_BWTIME },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "fifo-size", required_argument, NULL, OPT_FIFO },
	{ "copy", no_argument, NULL, OPT_COPY },
	{ "hub-a", required_argument, NULL, OPT_HUBA },
	{ "hub-b", required_argument, NULL, OPT_HUBB },
	{ "yield", no_argument, NULL, OPT_YIELD },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "pair", required_argument, NULL, OPT_PAIR },
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "procs", required_argument, NULL, OPT_PROCS },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * A comma-separated list of @max_items distinct numbers in [@min, @max]
 * into @v; @noun names an item in the messages.  Return: how many.
 */
static unsigned int parse_list(const char *opt, const char *noun,
			       const char *arg, unsigned int *v,
			       unsigned int max_items, unsigned long min,
			       unsigned long max)
{
	const char *p = arg;
	unsigned int n = 0;

	if (!*arg)
		bad_usage("%s: no %s given", opt, noun);
	for (;;) {
		size_t len = strcspn(p, ",");
		char *tok;

		/* "8,,16" and "8," are typing errors, not a list of one */
		if (!len)
			bad_usage("%s: empty item in '%s'", opt, arg);
		if (n >= max_items)
			bad_usage("%s: at most %u %ss", opt, max_items, noun);
		tok = strndup(p, len);
		if (!tok)
			bad_usage("out of memory");
		v[n] = (unsigned int)parse_ulong(opt, tok, min, max);
		free(tok);
		/* a size or count twice would be measured twice */
		for (unsigned int i = 0; i < n; i++)
			if (v[i] == v[n])
				bad_usage("%s: %u given twice", opt, v[n]);
		n++;
		p += len;
		if (!*p)
			return n;
		p++;
	}
}

static void parse_sizes(struct bench_cfg *cfg, const char *arg)
{
	cfg->nsizes = parse_list("--sizes", "size", arg, cfg->sizes,
				 sizeof(cfg->sizes) / sizeof(cfg->sizes[0]), 0,
				 COLL_MAX_BYTES);
}

static void parse_procs(struct bench_cfg *cfg, const char *arg)
{
	cfg->ncoll_procs = parse_list("--procs", "count", arg, cfg->coll_procs,
				      COLL_MAX_PROCS, 2, 16);
}

/* What lat.c, bw.c and cost.c measure (bench.h): --sizes may select only that. */
static const struct {
	const char *what;
	const struct case_sizes *sizes;	/* by enum bench_kind */
} case_sizes[] = {
	{ "lat", lat_sizes },
	{ "bw", bw_sizes },
	{ "engine", cost_sizes },
};

/* Does @what (all: any part) have a case of @size among @kinds? */
static bool has_case(const char *what, unsigned int kinds, unsigned int size)
{
	for (size_t i = 0; i < BENCH_NELEM(case_sizes); i++) {
		if (strcmp(what, "all") && strcmp(what, case_sizes[i].what))
			continue;
		for (int k = BK_FIFO; k <= BK_IMM; k++) {
			const struct case_sizes *cs = &case_sizes[i].sizes[k];

			if (!(kinds & (1u << k)))
				continue;
			for (size_t j = 0; j < cs->n; j++)
				if (cs->v[j] == size)
					return true;
		}
	}
	return false;
}

/* --sizes means payloads for lat/bw/engine and allreduce bytes for coll. */
static void check_sizes(struct bench_cfg *cfg, const char *what)
{
	bool cases = !strcmp(what, "all") || !strcmp(what, "lat") ||
		     !strcmp(what, "bw") || !strcmp(what, "engine");

	for (unsigned int i = 0; i < cfg->nsizes; i++) {
		unsigned int v = cfg->sizes[i];
		char list[160];
		size_t off = 0;

		if (!strcmp(what, "coll")) {
			if (!v || v % 8)
				bad_usage("--sizes: %u is not a multiple of 8 in [8, %u] "
					  "(coll: 64-bit elements)", v, COLL_MAX_BYTES);
			cfg->coll_sizes[cfg->ncoll_sizes++] = v;
		} else if (cases && !has_case(what, cfg->kinds, v)) {
			for (unsigned int s = 1; s <= PERCS_MAX_PAYLOAD; s++)
				if (has_case(what, cfg->kinds, s) &&
				    off < sizeof(list))
					off += (size_t)snprintf(list + off,
						sizeof(list) - off, "%s%u",
						off ? ", " : "", s);
			bad_usage("--sizes: %s has no %u-byte %scase (sizes: %s)",
				  what, v, cfg->kinds == 1u << BK_FIFO ? "fifo " :
				  cfg->kinds == 1u << BK_IMM ? "imm " : "", list);
		} else if (v > PERCS_MAX_PAYLOAD) {
			bad_usage("--sizes: '%u' is not a number in [0, %u]", v,
				  PERCS_MAX_PAYLOAD);
		}
	}
}

static void record_cmdline(struct bench_cfg *cfg, int argc, char **argv)
{
	size_t off = 0;

	for (int i = 0; i < argc && off < sizeof(cfg->cmdline) - 1; i++) {
		int n = snprintf(cfg->cmdline + off, sizeof(cfg->cmdline) - off,
				 "%s%s", i ? " " : "", argv[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

static void describe_pair(struct bench_cfg *cfg, enum bench_pair p,
			  unsigned int hub_a, unsigned int unit_a,
			  unsigned int hub_b, unsigned int unit_b)
{
	struct pair_def *d = &cfg->pair[p];
	unsigned int per = cfg->info.hubs_per_supernode ?
			   cfg->info.hubs_per_supernode : 1;

	d->valid = true;
	d->hub[0] = hub_a;
	d->unit[0] = unit_a;
	d->hub[1] = hub_b;
	d->unit[1] = unit_b;
	d->sn[0] = hub_a / per;
	d->sn[1] = hub_b / per;
	if (hub_a == hub_b)
		snprintf(d->name, sizeof(d->name), "%s",
			 unit_a == unit_b ? "same-HFI" : "same-hub");
	else if (d->sn[0] == d->sn[1])
		snprintf(d->name, sizeof(d->name), "same-SN");
	else
		snprintf(d->name, sizeof(d->name), "cross-SN");
}

/*
 * Find the system through HFI 0 of hub A; Return: 0 or exit status.  The
 * devices are where libpercs opens them: $PERCS_DEV_DIR, else /dev.
 */
static int probe(struct bench_cfg *cfg)
{
	unsigned int hub_a = cfg->hub_a < 0 ? 0 : (unsigned int)cfg->hub_a;
	const char *dir = getenv("PERCS_DEV_DIR");
	char hfi0[PATH_MAX];
	struct percs_hfi *hfi;
	struct stat st;
	int ret;

	if (!dir || !*dir)
		dir = "/dev";
	snprintf(hfi0, sizeof(hfi0), "%s/percs-hfi0", dir);
	ret = percs_hfi_open(hub_a, 0, &hfi);
	if (ret == -ENOENT && cfg->hub_a > 0 && !stat(hfi0, &st)) {
		bad_usage("--hub-a %u: no such hub (%s/percs-hfi%u is missing)",
			  hub_a, dir, hub_a * 2);
	}
	/* No HFI 0: no module, whichever hub was asked for. */
	if (ret == -ENOENT) {
		fprintf(stderr, "percs-bench: %s: %s not found\n"
			"percs-bench: load the module first (insmod percs.ko, or "
			"tools/vm/percs-vm --module percs.ko -- percs-bench)\n",
			stat("/sys/module/percs", &st) ?
			"the percs module is not loaded" :
			"the percs module is loaded but its device is missing",
			hfi0);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "percs-bench: open %s/percs-hfi%u: %s\n",
			dir, hub_a * 2, strerror(-ret));
		return 1;
	}
	ret = percs_hfi_info(hfi, &cfg->info);
	if (ret) {
		percs_hfi_close(hfi);
		fprintf(stderr, "percs-bench: PERCS_IOC_HFI_INFO: %s\n",
			strerror(-ret));
		return 1;
	}
	/* One job for every window, made before the measuring processes fork. */
	cfg->job_fd = percs_job_default(hfi);
	percs_hfi_close(hfi);
	if (cfg->job_fd < 0 || percs_job_key(cfg->job_fd, &cfg->job_key)) {
		fprintf(stderr, "percs-bench: creating the job: %s\n",
			strerror(cfg->job_fd < 0 ? -cfg->job_fd : EINVAL));
		return 1;
	}
	if (hub_a >= cfg->info.nr_hubs)
		bad_usage("--hub-a %u: the system has %u hubs", hub_a,
			  cfg->info.nr_hubs);
	if (cfg->hub_b >= 0 && (unsigned int)cfg->hub_b >= cfg->info.nr_hubs)
		bad_usage("--hub-b %d: the system has %u hubs", cfg->hub_b,
			  cfg->info.nr_hubs);
	describe_pair(cfg, BP_NEAR, hub_a, 0, hub_a, 1);
	if (cfg->hub_b >= 0)
		describe_pair(cfg, BP_FAR, hub_a, 0, (unsigned int)cfg->hub_b, 0);
	else if (cfg->info.nr_hubs > 1)
		describe_pair(cfg, BP_FAR, hub_a, 0,
			      hub_a == cfg->info.nr_hubs - 1 ? 0 :
			      cfg->info.nr_hubs - 1, 0);
	return 0;
}

/* all --plot FILE.png: the collectives go to FILE-coll.png. */
static void all_coll_plot(const struct bench_cfg *cfg, const char *path)
{
	size_t len = strlen(path);
	char *p = malloc(len + 16);

	if (!p)
		return;
	if (len > 4 && !strcmp(path + len - 4, ".png"))
		snprintf(p, len + 16, "%.*s-coll.png", (int)(len - 4), path);
	else
		snprintf(p, len + 16, "%s-coll.png", path);
	if (coll_plot(cfg, p))
		fprintf(stderr, "percs-bench: no collectives plot written\n");
	free(p);
}

static void header(FILE *f, const struct bench_cfg *cfg)
{
	fprintf(f, "percs-bench: %s, kernel %s, %d online CPU%s%s\n", cfg->date,
		cfg->kernel, cfg->ncpus, cfg->ncpus == 1 ? "" : "s",
		cfg->pin ? " (sides pinned to two CPUs)" : " (not pinned)");
	fprintf(f, "system: %u supernodes x %u hubs = %u hubs, %u HFIs per hub\n",
		cfg->info.nr_supernodes, cfg->info.hubs_per_supernode,
		cfg->info.nr_hubs, cfg->info.hfis_per_hub);
	for (int p = 0; p < BP_COUNT; p++) {
		const struct pair_def *d = &cfg->pair[p];

		if (d->valid)
			fprintf(f, "pair %-9s hub %u HFI %u (SN %u) <-> hub %u HFI %u (SN %u)\n",
				d->name, d->hub[0], d->unit[0], d->sn[0],
				d->hub[1], d->unit[1], d->sn[1]);
	}
	fprintf(f, "command: %s\n", cfg->cmdline);
}

/*
 * "percs-bench model ..." and "percs-bench project ...": the collectives'
 * model is measured by an MPI program under percs-run, and projected to
 * full scale by a calculator; their scripts (tools/model) run from beside
 * this binary: in the build tree (make install leaves them out, as it
 * does percs-msg-bench).
 */
static int exec_script(int argc, char **argv)
{
	char self[PATH_MAX], script[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0) {
		perror("percs-bench: /proc/self/exe");
		return 1;
	}
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(script, sizeof(script), "%s/percs-bench-%s", self, argv[1]);
	argv[1] = script;
	execv(script, argv + 1);
	fprintf(stderr, "percs-bench: cannot run %s: %s%s\n", script,
		strerror(errno), errno == ENOENT ?
		" (model and project run from the build tree, after make model; they are not installed)" : "");
	(void)argc;
	return 1;
}

int main(int argc, char **argv)
{
	static struct bench_cfg cfg;
	static struct results res;
	const char *what = "all";
	bool iters_set = false, bw_set = false;
	unsigned int failed = 0;
	int wrong = 0, coll_wrong = 0;
	struct utsname u;
	time_t now;
	int c, ret;

	if (argc > 1 && (!strcmp(argv[1], "model") ||
			 !strcmp(argv[1], "project")))
		return exec_script(argc, argv);
	cfg.hub_a = cfg.hub_b = -1;
	cfg.lat_iters = 10000;
	cfg.bw_secs = 1.0;
	cfg.bw_batch = 16;
	cfg.fifo_size = PERCS_FIFO_DEF_SIZE;
	cfg.timeout_s = 10;
	cfg.kinds = cfg.modes = cfg.pairs = ~0u;
	record_cmdline(&cfg, argc, argv);

	while ((c = getopt_long(argc, argv, "qh", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_QUICK:
			cfg.quick = true;
			break;
		case OPT_ITERS:
			cfg.lat_iters = parse_ulong("--iters", optarg, 1, 10000000);
			iters_set = true;
			break;
		case OPT_BWTIME:
			cfg.bw_secs = parse_secs("--bw-time", optarg, 0.01, 3600);
			bw_set = true;
			break;
		case OPT_BATCH:
			cfg.bw_batch = parse_ulong("--batch", optarg, 1, 65536);
			break;
		case OPT_FIFO:
			cfg.fifo_size = parse_ulong("--fifo-size", optarg,
						    PERCS_FIFO_MIN_SIZE,
						    PERCS_FIFO_MAX_SIZE);
			if (cfg.fifo_size & (cfg.fifo_size - 1))
				bad_usage("--fifo-size: %u is not a power of two",
					  cfg.fifo_size);
			break;
		case OPT_COPY:
			cfg.copy = true;
			break;
		case OPT_HUBA:
			cfg.hub_a = (int)parse_ulong("--hub-a", optarg, 0, INT_MAX);
			break;
		case OPT_HUBB:
			cfg.hub_b = (int)parse_ulong("--hub-b", optarg, 0, INT_MAX);
			break;
		case OPT_YIELD:
			cfg.yield = true;
			break;
		case OPT_TIMEOUT:
			cfg.timeout_s = parse_secs("--timeout", optarg, 0.1, 3600);
			break;
		case OPT_JSON:
			cfg.json = true;
			break;
		case OPT_PLOT:
			if (!*optarg)
				bad_usage("--plot: no file name");
			cfg.plot = optarg;
			break;
		case OPT_KIND:
			if (!strcmp(optarg, "fifo"))
				cfg.kinds = 1u << BK_FIFO;
			else if (!strcmp(optarg, "imm"))
				cfg.kinds = 1u << BK_IMM;
			else
				bad_usage("--kind: '%s' is not fifo or imm", optarg);
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "kick"))
				cfg.modes = 1u << BM_KICK;
			else if (!strcmp(optarg, "poll"))
				cfg.modes = 1u << BM_POLL;
			else if (!strcmp(optarg, "auto"))
				cfg.modes = 1u << BM_AUTO;
			else
				bad_usage("--mode: '%s' is not kick, poll or auto",
					  optarg);
			break;
		case OPT_PAIR:
			if (!strcmp(optarg, "near") || !strcmp(optarg, "same-hub"))
				cfg.pairs = 1u << BP_NEAR;
			else if (!strcmp(optarg, "far"))
				cfg.pairs = 1u << BP_FAR;
			else
				bad_usage("--pair: '%s' is not near or far", optarg);
			break;
		case OPT_SIZES:
			parse_sizes(&cfg, optarg);
			break;
		case OPT_PROCS:
			parse_procs(&cfg, optarg);
			break;
		case OPT_CPUS:
			cfg.coll_cpus = parse_ulong("--cpus", optarg, 1, CPU_SETSIZE);
			break;
		case 'q':
			progress_on = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fputs("Try 'percs-bench --help'.\n", stderr);
			return 2;
		}
	}
	if (optind < argc)
		what = argv[optind++];
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (strcmp(what, "all") && strcmp(what, "limits") &&
	    strcmp(what, "engine") && strcmp(what, "lat") && strcmp(what, "bw") &&
	    strcmp(what, "rdma") && strcmp(what, "atomic") &&
	    strcmp(what, "coll"))
		bad_usage("unknown subcommand '%s'", what);
	if (cfg.coll_cpus && cfg.coll_cpus > (unsigned int)allowed_cpus())
		bad_usage("--cpus %u: this process may run on %d CPU%s", cfg.coll_cpus,
			  allowed_cpus(), allowed_cpus() == 1 ? "" : "s");
	check_sizes(&cfg, what);
	if (iters_set)
		cfg.coll_iters = cfg.lat_iters;

	if (cfg.quick) {
		if (!iters_set)
			cfg.lat_iters = 1000;
		if (!bw_set)
			cfg.bw_secs = 0.15;
		cfg.lat_budget_s = 0.3;
	} else {
		cfg.lat_budget_s = 3.0;
	}
	cfg.lat_warmup = cfg.lat_iters / 10;
	cfg.bw_warm_secs = cfg.bw_secs / 4;
	cfg.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cfg.pin = cfg.ncpus >= 2 && allowed_cpus() >= 2;
	progress_tty = isatty(STDERR_FILENO);
	g_cfg = &cfg;
	if (uname(&u) == 0)
		snprintf(cfg.kernel, sizeof(cfg.kernel), "%s", u.release);
	now = time(NULL);
	strftime(cfg.date, sizeof(cfg.date), "%Y-%m-%d %H:%M:%S %Z",
		 localtime(&now));

	ret = probe(&cfg);
	if (ret)
		return ret;
	/* Remember the allowed CPUs before the first pinning. */
	ret = pin_self(-1);
	if (ret) {
		fprintf(stderr, "percs-bench: sched_getaffinity: %s\n",
			strerror(-ret));
		return 1;
	}

	if (!cfg.json)
		header(stdout, &cfg);
	if (!strcmp(what, "all") || !strcmp(what, "limits")) {
		ret = run_limits(&cfg, &res.lim);
		if (ret) {
			/* opening, reserving, mapping: no RDMA meanings */
			fprintf(stderr, "percs-bench: limits: %s\n",
				strerror(-ret));
			return 1;
		}
		if (!cfg.json)
			print_limits(stdout, &res.lim);
	}
	if (!strcmp(what, "all") || !strcmp(what, "engine")) {
		ret = run_cost(&cfg, &res);
		if (ret) {
			fprintf(stderr, "percs-bench: engine: %s\n",
				strerror(-ret));
			return 1;
		}
		if (!cfg.json)
			print_cost(stdout, &cfg, &res);
	}
	if (!strcmp(what, "all") || !strcmp(what, "lat")) {
		if (run_lat(&cfg, &res)) {
			fprintf(stderr, "percs-bench: out of memory\n");
			return 1;
		}
		if (!cfg.json)
			print_lat(stdout, &cfg, &res);
	}
	if (!strcmp(what, "all") || !strcmp(what, "bw")) {
		run_bw(&cfg, &res);
		if (!cfg.json)
			print_bw(stdout, &cfg, &res);
	}
	if (!strcmp(what, "all") || !strcmp(what, "rdma")) {
		/* a failure is in res.rdma, reported at the end */
		run_rdma(&cfg, &res);
		if (!cfg.json)
			print_rdma(stdout, &res);
	}
	if (!strcmp(what, "all") || !strcmp(what, "atomic")) {
		wrong = run_atomic(&cfg, &res);
		if (!strcmp(what, "all"))
			run_targets(&cfg, &res);
		atomic_targets(&res);
		if (!cfg.json)
			print_atomic(stdout, &cfg, &res);
		for (unsigned int i = 0; i < res.namo; i++)
			failed += res.amo[i].err != 0;
	}
	if (!strcmp(what, "all") || !strcmp(what, "coll")) {
		coll_wrong = run_coll(&cfg);
		if (!cfg.json)
			print_coll(stdout, &cfg);
	}
	if (!strcmp(what, "all"))
		run_limits_end(&cfg, &res.lim);
	if (cfg.json)
		print_json(stdout, &cfg, &res, what);
	else
		print_summary(stdout, &cfg, &res, what);
	if (cfg.plot && (!strcmp(what, "coll") ? coll_plot(&cfg, cfg.plot) :
			 write_plot(&cfg, &res, cfg.plot)))
		fprintf(stderr, "percs-bench: no plot written\n");
	if (cfg.plot && !strcmp(what, "all"))
		all_coll_plot(&cfg, cfg.plot);
	fflush(stdout);
	if (coll_wrong) {
		fprintf(stderr, "percs-bench: coll: %d WRONG result%s\n",
			coll_wrong, coll_wrong == 1 ? "" : "s");
		return 1;
	}
	if (!strcmp(what, "coll") && coll_failed()) {
		fprintf(stderr, "percs-bench: coll: %u process count%s failed\n",
			coll_failed(), coll_failed() == 1 ? "" : "s");
		return 1;
	}
	if (res.rdma.err) {
		fprintf(stderr, "percs-bench: rdma: %s\n", res.rdma.errmsg);
		return 1;
	}
	if (wrong) {
		fprintf(stderr, "percs-bench: atomic: %d case%s with WRONG results\n",
			wrong, wrong == 1 ? "" : "s");
		return 1;
	}
	/* like atomic and coll: by itself a subcommand fails with its cases */
	if (!strcmp(what, "lat") || !strcmp(what, "bw")) {
		for (unsigned int i = 0; i < res.nlat; i++)
			failed += res.lat[i].err != 0;
		for (unsigned int i = 0; i < res.nbw; i++)
			failed += res.bw[i].err != 0;
		if (failed) {
			fprintf(stderr, "percs-bench: %s: %u case%s failed\n",
				what, failed, failed == 1 ? "" : "s");
			return 1;
		}
	}
	if (!strcmp(what, "atomic") && (failed || !res.namo)) {
		fprintf(stderr, "percs-bench: atomic: %s\n", failed ?
			"a case failed" : "no case selected (--pair, --mode)");
		return 1;
	}
	return 0;
}
