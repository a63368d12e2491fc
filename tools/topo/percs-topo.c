// SPDX-License-Identifier: GPL-2.0
/*
 * percs-topo: route a traffic pattern over a PERCS topology with the
 * firmware model's routes; report per link class loads, the bottleneck and
 * the effective bandwidth per node (section VII.A); optionally every
 * channel's load as CSV and a PNG plot.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo.h"

static const char usage[] =
"usage: percs-topo --topology SPEC [--pattern PATTERN] [--route ROUTE]\n"
"                  [--csv FILE] [--plot FILE.png] [--json] [--progress]\n"
"                  [--per-flow] [--bench-route[=N]]\n"
"  --topology SPEC   SxH[,dpair=P][,dhub=U] or dN (section VII.A), e.g. 2x4,\n"
"                    d8 (= 257x32,dhub=8), 513x32\n"
"  --pattern P       alltoall (default), permutation[:SEED], sn-to-sn:A:B,\n"
"                    file:PATH (lines 'SRC DST')\n"
"  --route R         direct (default), direct-striped, sw-indirect:N,\n"
"                    hw-indirect (or the hw_direct... names)\n"
"  --csv FILE        every channel's load ('-': stdout)\n"
"  --plot FILE.png   the loads by link class (gnuplot)\n"
"  --json            the report as JSON\n"
"  --progress        progress on stderr even when it is not a terminal\n"
"  --per-flow        route every flow one by one (no aggregation)\n"
"  --bench-route[=N] time N (default 1000000) fm_route() look-ups per route\n"
"                    mode, print ns per look-up, and exit\n";

void topo_die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("percs-topo: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

void *topo_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		topo_die(TOPO_EXIT_FAIL, "out of memory");
	return p;
}

static const struct {
	const char *name, *alias;
	unsigned int mode;
} topo_routes[] = {
	{ "direct", "hw_direct", PERCS_ROUTE_DIRECT },
	{ "direct-striped", "hw_direct_striped", PERCS_ROUTE_DIRECT_STRIPED },
	{ "sw-indirect", "sw_indirect", PERCS_ROUTE_SW_INDIRECT },
	{ "hw-indirect", "hw_indirect", PERCS_ROUTE_HW_INDIRECT },
};

/**
 * topo_route_parse() - read a --route value
 * @s: the value
 * @t: the topology (sw-indirect's supernode is checked against it)
 * @mode: out: enum percs_route_mode
 * @arg: out: sw-indirect's supernode
 * @err: one-line message on error
 * @errlen: size of @err
 *
 * Return: 0 or -EINVAL.
 */
int topo_route_parse(const char *s, const struct fm_topology *t,
		     unsigned int *mode, u32 *arg, char *err, size_t errlen)
{
	size_t len = strcspn(s, ":");
	unsigned int i;

	*arg = 0;
	for (i = 0; i < FM_ARRAY_SIZE(topo_routes); i++) {
		if ((strlen(topo_routes[i].name) != len ||
		     strncmp(s, topo_routes[i].name, len)) &&
		    (strlen(topo_routes[i].alias) != len ||
		     strncmp(s, topo_routes[i].alias, len)))
			continue;
		*mode = topo_routes[i].mode;
		if (*mode != PERCS_ROUTE_SW_INDIRECT) {
			if (s[len]) {
				snprintf(err, errlen,
					 "--route %s: %.*s takes no ':' argument",
					 s, (int)len, s);
				return -EINVAL;
			}
			return 0;
		}
		if (!s[len] || !s[len + 1] ||
		    strspn(s + len + 1, "0123456789") != strlen(s + len + 1) ||
		    strlen(s + len + 1) > 6) {
			snprintf(err, errlen,
				 "--route %s: expected sw-indirect:N, N the intermediate supernode",
				 s);
			return -EINVAL;
		}
		*arg = atoi(s + len + 1);
		if (*arg >= t->nr_supernodes) {
			snprintf(err, errlen,
				 "--route %s: supernode %u outside the topology (0..%u)",
				 s, *arg, t->nr_supernodes - 1);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(err, errlen,
		 "--route %s: unknown route mode (direct, direct-striped, sw-indirect:N, hw-indirect)",
		 s);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "pattern", required_argument, NULL, 'p' },
		{ "route", required_argument, NULL, 'r' },
		{ "csv", required_argument, NULL, 'c' },
		{ "plot", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "progress", no_argument, NULL, 'g' },
		{ "per-flow", no_argument, NULL, 'f' },
		{ "bench-route", optional_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *spec = NULL, *pattern = "alltoall", *route = "direct";
	const char *csv = NULL, *plot = NULL;
	struct topo_progress progress = { 0 };
	struct topo_sim sim = { 0 };
	struct topo_pattern pat;
	struct topo_result res;
	struct fm_topo_spec ts;
	struct fm_topology t;
	bool json = false;
	long long bench = 0;
	char err[256];
	double start = topo_now();
	int c, status = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			spec = optarg;
			break;
		case 'p':
			pattern = optarg;
			break;
		case 'r':
			route = optarg;
			break;
		case 'c':
			csv = optarg;
			break;
		case 'P':
			plot = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'g':
			progress.on = true;
			break;
		case 'f':
			sim.per_flow = true;
			break;
		case 'B':
			bench = optarg ? atoll(optarg) : 1000000;
			if (bench <= 0 || (optarg &&
			    strspn(optarg, "0123456789") != strlen(optarg)))
				topo_die(TOPO_EXIT_USAGE,
					 "--bench-route=%s: expected a positive count",
					 optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			topo_die(TOPO_EXIT_USAGE, "%s needs a value (see --help)",
				 argv[optind - 1]);
		default:
			if (optopt)
				topo_die(TOPO_EXIT_USAGE,
					 "unknown option '-%c' (see --help)",
					 optopt);
			topo_die(TOPO_EXIT_USAGE,
				 "unknown option '%s' (see --help)",
				 argv[optind - 1]);
		}
	}
	if (optind < argc)
		topo_die(TOPO_EXIT_USAGE, "unexpected argument '%s' (see --help)",
			 argv[optind]);
	if (!spec)
		topo_die(TOPO_EXIT_USAGE,
			 "--topology SPEC is required, e.g. --topology d8 (see --help)");
	if (plot && (strlen(plot) < 5 ||
		     strcmp(plot + strlen(plot) - 4, ".png")))
		topo_die(TOPO_EXIT_USAGE, "--plot %s: the file name must end in .png",
			 plot);
	if (fm_topo_parse(spec, &ts, err, sizeof(err)) ||
	    fm_topo_init_spec(&t, &ts, err, sizeof(err)))
		topo_die(TOPO_EXIT_USAGE, "--topology %s: %s", spec, err);
	if (fm_topo_alloc_tables(&t))
		topo_die(TOPO_EXIT_FAIL, "out of memory for the route tables");
	if (bench) {
		topo_bench_route(stdout, &t, bench);
		fm_topo_free_tables(&t);
		return fflush(stdout) ? TOPO_EXIT_FAIL : 0;
	}
	if (topo_route_parse(route, &t, &sim.mode, &sim.arg, err, sizeof(err)))
		topo_die(TOPO_EXIT_USAGE, "%s", err);
	if (topo_pattern_parse(pattern, &t, &pat, err, sizeof(err)) ||
	    topo_pattern_flows(&pat, &t, err, sizeof(err)))
		topo_die(TOPO_EXIT_USAGE, "%s", err);

	progress.on |= isatty(2);
	progress.tty = isatty(2);
	sim.t = &t;
	sim.progress = &progress;
	topo_simulate(&sim, &pat);
	topo_result(&sim, &res);
	res.seconds = topo_now() - start;
	if (json)
		topo_print_json(stdout, &sim, &pat, &res);
	else
		topo_print_text(stdout, &sim, &pat, &res);
	if (csv && topo_write_csv(csv, &sim))
		status = TOPO_EXIT_FAIL;
	if (plot && topo_plot(plot, &sim, &pat, &res))
		status = TOPO_EXIT_FAIL;
	if (fflush(stdout))
		status = TOPO_EXIT_FAIL;
	free(sim.load);
	free(sim.sent);
	free(pat.flows);
	fm_topo_free_tables(&t);
	return status;
}
