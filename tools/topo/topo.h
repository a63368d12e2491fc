/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs-topo: route a traffic pattern over a full-size PERCS topology with
 * the firmware model's routes and report the load of every link.
 */
#ifndef _PERCS_TOPO_H
#define _PERCS_TOPO_H

#include <stdbool.h>
#include <stdio.h>

#include "topology.h"

/*
 * Injection bandwidth of a compute node, per direction (section VII.A:
 * 4 x 24 GiB/s between the hub and the POWER7 chips).
 */
#define TOPO_INJECTION_BW	96.0

/* Exit statuses: bad input (flags, specs, pattern files) and failures. */
#define TOPO_EXIT_USAGE		2
#define TOPO_EXIT_FAIL		1

enum topo_pattern_kind {
	TOPO_ALLTOALL,
	TOPO_PERMUTATION,
	TOPO_SN_TO_SN,
	TOPO_FILE,
};

struct topo_flow {
	u32 src;
	u32 dst;
};

/* A traffic pattern: alltoall is implicit, the others list their flows. */
struct topo_pattern {
	enum topo_pattern_kind kind;
	char name[128];		/* as given, for the report */
	u32 seed;		/* permutation */
	u32 sn_a, sn_b;		/* sn-to-sn */
	const char *path;	/* file */
	struct topo_flow *flows;
	size_t nr_flows;
};

struct topo_progress {
	bool on;		/* print at all */
	bool tty;		/* rewrite one line */
	double last;		/* time of the last print */
	double start;
	const char *what;
};

/* The result of routing a pattern: load of every channel (link direction). */
struct topo_sim {
	struct fm_topology *t;
	unsigned int mode;	/* enum percs_route_mode */
	u32 arg;		/* sw_indirect's supernode */
	bool per_flow;		/* no aggregation */
	double *load;		/* [2 * link + dir], dir 1: from the higher hub */
	double *sent;		/* [hub] routable flows the hub sends */
	double flows;		/* flows routed */
	double unroutable;	/* flows with no route in this mode */
	unsigned long long routes;	/* routes computed */
	const char *engine;	/* how the loads were computed */
	struct topo_progress *progress;
};

/* Per link class figures and the model's verdict (report.c). */
struct topo_result {
	u32 channels[FM_LINK_NR_CLASSES];
	double max[FM_LINK_NR_CLASSES];
	double mean[FM_LINK_NR_CLASSES];
	int bottleneck;		/* enum fm_link_class, -1: no load at all */
	double rate;		/* GiB/s of every flow */
	double net_bw;		/* links' limit, GiB/s per sending node */
	double bw;		/* with the injection limit */
	bool injection_limited;
	u32 senders;
	double seconds;
};

void topo_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void *topo_calloc(size_t n, size_t size);

int topo_pattern_parse(const char *s, const struct fm_topology *t,
		       struct topo_pattern *p, char *err, size_t errlen);
int topo_pattern_flows(struct topo_pattern *p, const struct fm_topology *t,
		       char *err, size_t errlen);

int topo_route_parse(const char *s, const struct fm_topology *t,
		     unsigned int *mode, u32 *arg, char *err, size_t errlen);
void topo_simulate(struct topo_sim *sim, const struct topo_pattern *p);

void topo_result(const struct topo_sim *sim, struct topo_result *res);
void topo_print_text(FILE *f, const struct topo_sim *sim,
		     const struct topo_pattern *p, const struct topo_result *res);
void topo_print_json(FILE *f, const struct topo_sim *sim,
		     const struct topo_pattern *p, const struct topo_result *res);
int topo_write_csv(const char *path, const struct topo_sim *sim);
int topo_plot(const char *path, const struct topo_sim *sim,
	      const struct topo_pattern *p, const struct topo_result *res);

void topo_progress_start(struct topo_progress *pg, const char *what);
void topo_progress(struct topo_progress *pg, double done, double total);
void topo_progress_end(struct topo_progress *pg);
double topo_now(void);
void topo_bench_route(FILE *f, const struct fm_topology *t, u64 lookups);

#endif /* _PERCS_TOPO_H */
