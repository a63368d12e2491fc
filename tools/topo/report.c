// SPDX-License-Identifier: GPL-2.0
/*
 * percs-topo: what the loads mean (section VII.A's counting argument) and
 * the reports: text, JSON and per-channel CSV.
 *
 * Every flow progresses at the same rate r, limited by the most loaded
 * channel: r = min over link classes of (class bandwidth per direction /
 * max load).  A node that sends f flows gets f * r, at most the injection
 * bandwidth; the bandwidth per node is the mean over the nodes that send.
 */
#include <math.h>
#include <string.h>

#include "topo.h"

/**
 * topo_result() - link class figures, bottleneck and bandwidth per node
 * @sim: a simulation that has run
 * @res: out
 */
void topo_result(const struct topo_sim *sim, struct topo_result *res)
{
	const struct fm_topology *t = sim->t;
	double sum[FM_LINK_NR_CLASSES] = { 0 }, bw = 0, net = 0;
	struct fm_link_info li;
	unsigned int c;
	u32 id, k, hub;

	memset(res, 0, sizeof(*res));
	for (id = 0; id < t->nr_links; id++) {
		fm_link_info(t, id, &li);
		for (k = 0; k < 2; k++) {
			double v = sim->load[2 * id + k];

			res->channels[li.link_class]++;
			sum[li.link_class] += v;
			if (v > res->max[li.link_class])
				res->max[li.link_class] = v;
		}
	}
	res->bottleneck = -1;
	for (c = 0; c < FM_LINK_NR_CLASSES; c++) {
		double r;

		if (res->channels[c])
			res->mean[c] = sum[c] / res->channels[c];
		if (!res->max[c])
			continue;
		r = fm_link_class_bw(c) / res->max[c];
		if (res->bottleneck < 0 || r < res->rate) {
			res->rate = r;
			res->bottleneck = c;
		}
	}
	for (hub = 0; hub < t->nr_hubs; hub++) {
		double f;

		if (!sim->sent[hub])
			continue;
		res->senders++;
		f = res->bottleneck < 0 ? INFINITY : sim->sent[hub] * res->rate;
		net += f;
		if (f > TOPO_INJECTION_BW) {
			f = TOPO_INJECTION_BW;
			res->injection_limited = true;
		}
		bw += f;
	}
	if (res->senders) {
		res->net_bw = net / res->senders;
		res->bw = bw / res->senders;
	}
}

static const char *topo_class(int c)
{
	return c < 0 ? "none" : fm_link_class_name(c);
}

/**
 * topo_print_text() - the report for people
 * @f: where
 * @sim: the simulation
 * @p: its pattern
 * @res: its figures
 */
void topo_print_text(FILE *f, const struct topo_sim *sim,
		     const struct topo_pattern *p, const struct topo_result *res)
{
	const struct fm_topology *t = sim->t;
	char spec[64];
	unsigned int c;

	fm_topo_format(t, spec, sizeof(spec));
	fprintf(f, "topology    %s: %u supernodes x %u hubs = %u hubs, %u D link%s per pair, %u links\n",
		spec, t->nr_supernodes, t->hubs_per_sn, t->nr_hubs,
		t->d_links_per_pair, t->d_links_per_pair == 1 ? "" : "s",
		t->nr_links);
	fprintf(f, "pattern     %s: %.0f flows", p->name, sim->flows);
	if (sim->unroutable)
		fprintf(f, ", %.0f without a route in this mode",
			sim->unroutable);
	fprintf(f, "\n");
	fprintf(f, "route       %s", fm_route_mode_name(sim->mode));
	if (sim->mode == PERCS_ROUTE_SW_INDIRECT)
		fprintf(f, " via supernode %u", sim->arg);
	fprintf(f, " (%s, %llu routes computed)\n", sim->engine, sim->routes);
	fprintf(f, "class   channels      max load     mean load   GiB/s per channel\n");
	for (c = 0; c < FM_LINK_NR_CLASSES; c++)
		fprintf(f, "%-5s %10u %13.6g %13.6g   %u\n",
			fm_link_class_name(c), res->channels[c], res->max[c],
			res->mean[c], fm_link_class_bw(c));
	if (res->bottleneck < 0) {
		fprintf(f, "bottleneck  none: no flow crosses a link\n");
		return;
	}
	fprintf(f, "bottleneck  %s links: %.6g flows on a %u GiB/s channel\n",
		topo_class(res->bottleneck), res->max[res->bottleneck],
		fm_link_class_bw(res->bottleneck));
	fprintf(f, "flow rate   %.6g GiB/s\n", res->rate);
	fprintf(f, "bandwidth   %.6g GiB/s per node (%u nodes send)",
		res->bw, res->senders);
	if (res->injection_limited)
		fprintf(f, ", limited by injection (%.0f GiB/s); the links allow %.6g",
			TOPO_INJECTION_BW, res->net_bw);
	fprintf(f, "\n");
}

/* JSON string of a name we built ourselves or the user gave. */
static void topo_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/**
 * topo_print_json() - the report as one JSON object
 * @f: where
 * @sim: the simulation
 * @p: its pattern
 * @res: its figures
 */
void topo_print_json(FILE *f, const struct topo_sim *sim,
		     const struct topo_pattern *p, const struct topo_result *res)
{
	const struct fm_topology *t = sim->t;
	char spec[64];
	unsigned int c;

	fm_topo_format(t, spec, sizeof(spec));
	fprintf(f, "{\"topology\": {\"spec\": \"%s\", \"supernodes\": %u, \"hubs_per_supernode\": %u, \"hubs\": %u, \"d_links_per_pair\": %u, \"links\": %u},\n",
		spec, t->nr_supernodes, t->hubs_per_sn, t->nr_hubs,
		t->d_links_per_pair, t->nr_links);
	fprintf(f, " \"pattern\": ");
	topo_json_str(f, p->name);
	fprintf(f, ", \"flows\": %.0f, \"unroutable_flows\": %.0f,\n",
		sim->flows, sim->unroutable);
	fprintf(f, " \"route\": \"%s\"", fm_route_mode_name(sim->mode));
	if (sim->mode == PERCS_ROUTE_SW_INDIRECT)
		fprintf(f, ", \"via_supernode\": %u", sim->arg);
	fprintf(f, ", \"engine\": \"%s\", \"routes_computed\": %llu,\n",
		sim->engine, sim->routes);
	fprintf(f, " \"classes\": {");
	for (c = 0; c < FM_LINK_NR_CLASSES; c++)
		fprintf(f, "%s\"%s\": {\"channels\": %u, \"max_load\": %.17g, \"mean_load\": %.17g, \"bandwidth\": %u}",
			c ? ", " : "", fm_link_class_name(c), res->channels[c],
			res->max[c], res->mean[c], fm_link_class_bw(c));
	fprintf(f, "},\n \"bottleneck\": \"%s\", \"flow_rate\": %.17g, \"senders\": %u,\n",
		topo_class(res->bottleneck), res->rate, res->senders);
	fprintf(f, " \"bandwidth_per_node\": %.17g, \"link_bandwidth_per_node\": %.17g, \"injection_bandwidth\": %.17g, \"injection_limited\": %s,\n",
		res->bottleneck < 0 ? 0 : res->bw,
		res->bottleneck < 0 ? 0 : res->net_bw, TOPO_INJECTION_BW,
		res->injection_limited ? "true" : "false");
	fprintf(f, " \"unit\": \"GiB/s\", \"seconds\": %.3f}\n", res->seconds);
}

/**
 * topo_write_csv() - one line per channel
 * @path: the file ("-": stdout)
 * @sim: the simulation
 *
 * Columns: link id, direction (0: from the lower hub number), class,
 * from hub, to hub, ISR port at each end, load in flows.
 *
 * Return: 0, or -errno with a message printed.
 */
int topo_write_csv(const char *path, const struct topo_sim *sim)
{
	const struct fm_topology *t = sim->t;
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	struct fm_link_info li;
	u32 id, k;
	int ret = 0;

	if (!f) {
		ret = -errno;
		fprintf(stderr, "percs-topo: %s: %s\n", path, strerror(errno));
		return ret;
	}
	fprintf(f, "link,direction,class,from_hub,to_hub,from_port,to_port,load\n");
	for (id = 0; id < t->nr_links; id++) {
		fm_link_info(t, id, &li);
		for (k = 0; k < 2; k++)
			fprintf(f, "%u,%u,%s,%u,%u,%u,%u,%.17g\n", id, k,
				fm_link_class_name(li.link_class), li.hub[k],
				li.hub[!k], li.port[k], li.port[!k],
				sim->load[2 * id + k]);
	}
	if (fflush(f) || ferror(f))
		ret = -errno;
	if (f != stdout && fclose(f))
		ret = -errno;
	if (ret)
		fprintf(stderr, "percs-topo: writing %s: %s\n", path,
			strerror(-ret));
	return ret;
}
