// SPDX-License-Identifier: GPL-2.0
/*
 * percs-project-calc: the full-scale projection's figures as JSON, for
 * percs-bench project (tools/model/percs-bench-project), which prints,
 * plots and validates them.  The arithmetic is projection.c's.
 *
 *   percs-project-calc --model FILE --ranks LIST|sweep [--topology SPEC]
 *       [--placement spread|block] [--fanout K] [--shape mpi|supernode]
 *       [--calib-topology SPEC] [--fit-ranks LIST]
 *
 * --ranks sweep: the powers of two and the supernode boundaries (2^k and
 * 2^k + 1 whole supernodes: section VII.A's systems are 2^k + 1 of them)
 * up to every hub of the topology.  --cau-fixed US: the CAU's cost at the
 * members, instead of what the fit takes (design.rst).
 * Exit 0, 1 when the model file cannot be used, 2 for bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "percs.h"
#include "projection.h"

#define MAX_LIST	256
#define MAX_RANKS	(FM_MAX_SUPERNODES * FM_MAX_HUBS_PER_SN * 2)

static void die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("percs-bench project: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* A comma-separated list of whole numbers in [@lo, @hi]. */
static int parse_list(const char *name, const char *s, int lo, int hi, int *v)
{
	int n = 0;

	while (*s) {
		char *end;
		long x;

		errno = 0;
		x = strtol(s, &end, 10);
		if (end == s || errno || (*end && *end != ',') || *s == '-' ||
		    *s == '+')
			die(2, "%s '%s': want comma-separated whole numbers", name, s);
		if (x < lo || x > hi)
			die(2, "%s: %ld is out of range (%d .. %d)", name, x, lo, hi);
		if (n == MAX_LIST)
			die(2, "%s: more than %d values", name, MAX_LIST);
		v[n++] = (int)x;
		s = *end ? end + 1 : end;
	}
	if (!n)
		die(2, "%s: empty", name);
	return n;
}

/* Powers of two and 2^k, 2^k + 1 whole supernodes, up to all hubs. */
static int sweep(const struct fm_topology *t, int *v)
{
	int n = 0, total = (int)t->nr_hubs, hps = (int)t->hubs_per_sn;

	for (int p = 2; p <= total; p++) {
		bool pow2 = !(p & (p - 1));
		int k = p / hps;
		bool sn = p % hps == 0 &&
			  (!(k & (k - 1)) || (k > 2 && !((k - 1) & (k - 2))));

		if ((pow2 || sn || p == total) && n < MAX_LIST)
			v[n++] = p;
	}
	return n;
}

static void print_row(const struct proj_row *r, bool last)
{
	static const char *const coll[2] = { "barrier", "allreduce" };

	printf("  {\"p\": %d, \"supernodes\": %d, \"hubs\": %d, \"ranks_per_hub\": %d, \"depth\": %d,",
	       r->p, r->supernodes, r->hubs, r->per_hub, r->depth);
	printf(" \"level_hops\": [");
	for (int d = 1; d <= r->depth && d <= PROJ_MAX_DEPTH; d++)
		printf("%s%d", d > 1 ? ", " : "", r->level_hops[d]);
	printf("], \"level_crosses_supernodes\": [");
	for (int d = 1; d <= r->depth && d <= PROJ_MAX_DEPTH; d++)
		printf("%s%s", d > 1 ? ", " : "", r->level_d[d] ? "true" : "false");
	printf("], \"round_us\": %.4f,", r->round_us);
	if (r->cau_us < 0)
		printf(" \"cau_us\": null,");
	else
		printf(" \"cau_us\": %.4f,", r->cau_us);
	for (int k = 0; k < 2; k++) {
		printf(" \"%s\": {", coll[k]);
		for (int a = 0; a < PROJ_SW_ALGOS; a++)
			printf("\"%s\": %.4f, ", proj_algo_name(k, a),
			       r->sw_us[k][a]);
		printf("\"best\": \"%s\"}%s", proj_algo_name(k, r->best[k]),
		       k ? "" : ",");
	}
	printf("}%s\n", last ? "" : ",");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "topology", required_argument, NULL, 't' },
		{ "placement", required_argument, NULL, 'p' },
		{ "fanout", required_argument, NULL, 'f' },
		{ "shape", required_argument, NULL, 's' },
		{ "calib-topology", required_argument, NULL, 'c' },
		{ "fit-ranks", required_argument, NULL, 'F' },
		{ "cau-fixed", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	const char *model = NULL, *topo = "513x32", *calib_topo = "2x4";
	const char *rank_list = NULL;
	bool spread = true, sn_aware = false;
	int ranks[MAX_LIST], fit[MAX_LIST], nranks = 0, nfit = 1, fanout = 0;
	struct proj_system sys, calib;
	static struct mpi_model m;
	struct proj_costs c;
	char err[512];
	double cau_fixed = -1;
	int o, i;

	fit[0] = 2;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'm': model = optarg; break;
		case 'r': rank_list = optarg; break;
		case 't': topo = optarg; break;
		case 'c': calib_topo = optarg; break;
		case 'F': nfit = parse_list("--fit-ranks", optarg, 2, MPI_MODEL_MAX_RANKS * 256, fit); break;
		case 'f': parse_list("--fanout", optarg, 0, PERCS_CAU_MAX_FANOUT, &fanout); break;
		case 'C': {
			char *end;

			errno = 0;
			cau_fixed = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(cau_fixed >= 0) ||
			    cau_fixed > 1e6)
				die(2, "--cau-fixed '%s': want microseconds, 0 .. 1e6",
				    optarg);
			break;
		}
		case 'p':
			if (strcmp(optarg, "spread") && strcmp(optarg, "block"))
				die(2, "--placement '%s': spread or block", optarg);
			spread = !strcmp(optarg, "spread");
			break;
		case 's':
			if (strcmp(optarg, "mpi") && strcmp(optarg, "supernode"))
				die(2, "--shape '%s': mpi or supernode", optarg);
			sn_aware = !strcmp(optarg, "supernode");
			break;
		default:
			die(2, "bad usage (see percs-bench project --help)");
		}
	}
	if (optind < argc)
		die(2, "unknown argument '%s'", argv[optind]);
	if (!model || !rank_list)
		die(2, "--model and --ranks are required");
	if (proj_system_init(&sys, topo, spread, (unsigned int)fanout, sn_aware,
			     err, sizeof(err)))
		die(2, "--topology %s: %s", topo, err);
	if (!strcmp(rank_list, "sweep"))
		nranks = sweep(&sys.topo, ranks);
	else
		nranks = parse_list("--ranks", rank_list, 2, MAX_RANKS, ranks);
	if (proj_system_init(&calib, calib_topo, true, 0, false, err,
			     sizeof(err)))
		die(2, "--calib-topology %s: %s", calib_topo, err);
	if (mpi_model_load(model, &m, err, sizeof(err)))
		die(1, "%s", err);
	if (proj_costs(&m, &calib, fit, nfit, cau_fixed, &c, err, sizeof(err)))
		die(1, "%s: %s", model, err);

	printf("{\"model\": \"%s\", \"topology\": \"%s\", \"placement\": \"%s\", \"shape\": \"%s\", \"fanout\": %u,\n",
	       model, topo, spread ? "spread" : "block",
	       sn_aware ? "supernode" : "mpi",
	       fanout ? (unsigned int)fanout : PERCS_CAU_DEF_FANOUT);
	printf(" \"max_tree_members\": %d, \"calib_topology\": \"%s\",\n",
	       PERCS_CAU_MAX_MEMBERS, calib_topo);
	printf(" \"costs\": {\"sizes\": [");
	for (i = 0; i < m.nsizes; i++)
		printf("%s%zu", i ? ", " : "", m.size[i]);
	printf("],\n");
	static const char *const names[] = { "base", "hop_l", "hop_d", "extra" };
	const double *rows[] = { c.base, c.hop_l, c.hop_d, c.extra };
	for (int r = 0; r < 4; r++) {
		printf("  \"%s\": [", names[r]);
		for (i = 0; i < m.nsizes; i++)
			printf("%s%.4f", i ? ", " : "", rows[r][i]);
		printf("],\n");
	}
	printf("  \"cau_fixed\": %.4f, \"cau_level\": %.4f, \"cau_fitted\": %s, \"fit_ranks\": [",
	       c.cau_fixed, c.cau_level, c.fitted ? "true" : "false");
	for (i = 0; i < nfit; i++)
		printf("%s%d", i ? ", " : "", fit[i]);
	printf("]},\n \"rows\": [\n");
	for (i = 0; i < nranks; i++) {
		struct proj_row row;
		int ret = proj_row(&m, &c, &sys, ranks[i], &row);

		if (ret)
			die(1, "%d ranks: %s", ranks[i], strerror(-ret));
		print_row(&row, i == nranks - 1);
	}
	printf(" ]}\n");
	return 0;
}
