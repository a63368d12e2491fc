// SPDX-License-Identifier: GPL-2.0
/*
 * percs-topo: progress on stderr for long runs.  On a terminal one line
 * is rewritten at most 5 times a second; with --progress and no terminal,
 * a line every 2 seconds.  Nothing for runs shorter than half a second.
 */
#include <time.h>

#include "topo.h"

double topo_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void topo_progress_start(struct topo_progress *pg, const char *what)
{
	pg->what = what;
	pg->start = topo_now();
	pg->last = pg->start;
}

void topo_progress(struct topo_progress *pg, double done, double total)
{
	double now;

	if (!pg->on)
		return;
	now = topo_now();
	if (now - pg->start < 0.5 || now - pg->last < (pg->tty ? 0.2 : 2))
		return;
	pg->last = now;
	fprintf(stderr, "%spercs-topo: %s %3.0f%% (%.1f s)%s", pg->tty ? "\r" : "",
		pg->what, total > 0 ? 100 * done / total : 100, now - pg->start,
		pg->tty ? "" : "\n");
	fflush(stderr);
}

void topo_progress_end(struct topo_progress *pg)
{
	double now = topo_now();

	if (!pg->on || now - pg->start < 0.5)
		return;
	fprintf(stderr, "%spercs-topo: %s done in %.1f s\n",
		pg->tty ? "\r" : "", pg->what, now - pg->start);
}
