// SPDX-License-Identifier: GPL-2.0
/*
 * percs-topo: PNG plot of the channel loads with gnuplot (Debian package
 * gnuplot-nox): for each link class, its channels' loads from the most
 * loaded to the least (at most 2000 points a class, the maximum kept),
 * against the fraction of the class's channels.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "topo.h"

#define TOPO_PLOT_POINTS	2000

static int topo_cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* A gnuplot double-quoted string. */
static void topo_gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('"', f);
}

/**
 * topo_plot() - write the PNG
 * @path: the PNG file
 * @sim: the simulation
 * @p: its pattern
 * @res: its figures
 *
 * Return: 0, or -1 with a message printed.
 */
int topo_plot(const char *path, const struct topo_sim *sim,
	      const struct topo_pattern *p, const struct topo_result *res)
{
	const struct fm_topology *t = sim->t;
	char data[] = "/tmp/percs-topo-plot.XXXXXX", spec[64], title[256];
	double *v[FM_LINK_NR_CLASSES];
	u32 n[FM_LINK_NR_CLASSES] = { 0 }, id, k, c, plotted = 0;
	struct fm_link_info li;
	FILE *f, *gp;
	int fd, st;

	for (c = 0; c < FM_LINK_NR_CLASSES; c++)
		v[c] = topo_calloc(res->channels[c] + 1, sizeof(double));
	for (id = 0; id < t->nr_links; id++) {
		fm_link_info(t, id, &li);
		for (k = 0; k < 2; k++)
			v[li.link_class][n[li.link_class]++] =
				sim->load[2 * id + k];
	}
	fd = mkstemp(data);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "percs-topo: --plot: temporary file: %s\n",
			strerror(errno));
		return -1;
	}
	for (c = 0; c < FM_LINK_NR_CLASSES; c++) {
		u32 step = n[c] > TOPO_PLOT_POINTS ?
			   FM_DIV_ROUND_UP(n[c], TOPO_PLOT_POINTS) : 1;

		if (!n[c])
			continue;	/* gnuplot numbers only non-empty blocks */
		qsort(v[c], n[c], sizeof(double), topo_cmp_desc);
		fprintf(f, "# %s\n", fm_link_class_name(c));
		for (k = 0; k < n[c]; k += step)
			fprintf(f, "%.9g %.9g\n",
				n[c] > 1 ? (double)k / (n[c] - 1) : 0, v[c][k]);
		if (n[c] > 1 && (n[c] - 1) % step)
			fprintf(f, "1 %.9g\n", v[c][n[c] - 1]);
		fprintf(f, "\n\n");
	}
	fclose(f);

	gp = popen("gnuplot", "w");
	if (!gp) {
		fprintf(stderr, "percs-topo: --plot: cannot run gnuplot: %s\n",
			strerror(errno));
		unlink(data);
		return -1;
	}
	fm_topo_format(t, spec, sizeof(spec));
	snprintf(title, sizeof(title), "%s, %s on %s: bottleneck %s, %.4g GiB/s per node",
		 p->name, fm_route_mode_name(sim->mode), spec,
		 res->bottleneck < 0 ? "none" :
		 fm_link_class_name(res->bottleneck), res->bw);
	fprintf(gp, "set terminal pngcairo noenhanced size 1000,600 font ',10'\nset output ");
	topo_gp_str(gp, path);
	fprintf(gp, "\nset title ");
	topo_gp_str(gp, title);
	fprintf(gp, "\nset xlabel \"channels of the class, most loaded first (fraction)\"\n");
	fprintf(gp, "set ylabel \"load (flows)\"\nset key top right\nset grid\n");
	fprintf(gp, "set yrange [0:*]\nplot ");
	for (c = 0; c < FM_LINK_NR_CLASSES; c++) {
		if (!n[c])
			continue;
		fprintf(gp, "%s\"%s\" index %u using 1:2 with steps lw 2 title \"%s (%u channels, max %.4g, mean %.4g, %u GiB/s)\"",
			plotted ? ", " : "", data, plotted,
			fm_link_class_name(c),
			n[c], res->max[c], res->mean[c], fm_link_class_bw(c));
		plotted++;
	}
	fprintf(gp, "\n");
	st = pclose(gp);
	unlink(data);
	for (c = 0; c < FM_LINK_NR_CLASSES; c++)
		free(v[c]);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "percs-topo: --plot: gnuplot failed%s\n",
			WIFEXITED(st) && WEXITSTATUS(st) == 127 ?
			" to start: install the Debian package gnuplot-nox" : "");
		return -1;
	}
	return 0;
}
