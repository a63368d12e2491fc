// SPDX-License-Identifier: GPL-2.0
/*
 * percs-run: placement policies.
 *
 * spread: rank i on supernode i mod S, taking that supernode's hubs in
 *	turn, so neighbouring ranks talk across D links; past one rank per
 *	hub it wraps round onto HFI 1, then shares HFIs.
 * packed: every rank on hub 0, alternating its two HFIs (the same-hub
 *	case: no ISR link crossed).
 * map: the user's list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "percs.h"
#include "placement.h"

static int read_map(const char *path, unsigned int n, struct run_place *out,
		    const struct percs_hfi_info *info)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned int i = 0, lineno = 0;

	if (!f) {
		fprintf(stderr, "percs-run: cannot open map file '%s': %s\n",
			path, strerror(errno));
		return 2;
	}
	while (i < n && fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		unsigned long hub, unit;

		lineno++;
		p[strcspn(p, "#\n")] = 0;
		p += strspn(p, " \t");
		if (!*p)
			continue;
		errno = 0;
		hub = strtoul(p, &end, 10);
		if (end == p || errno || *p == '-')
			goto bad;
		p = end;
		unit = strtoul(p, &end, 10);
		if (end == p || errno || strspn(end, " \t") != strlen(end) ||
		    strchr(p, '-'))
			goto bad;
		if (hub >= info->nr_hubs || unit >= info->hfis_per_hub) {
			fprintf(stderr,
				"percs-run: %s:%u: no HFI %lu on hub %lu (the system has hubs 0..%u, units 0..%u)\n",
				path, lineno, unit, hub, info->nr_hubs - 1,
				info->hfis_per_hub - 1);
			fclose(f);
			return 2;
		}
		out[i].hub = (unsigned int)hub;
		out[i].unit = (unsigned int)unit;
		i++;
		continue;
bad:
		fprintf(stderr, "percs-run: %s:%u: want \"HUB UNIT\", two numbers\n",
			path, lineno);
		fclose(f);
		return 2;
	}
	fclose(f);
	if (i < n) {
		fprintf(stderr, "percs-run: map file '%s' places %u ranks, -n asks for %u\n",
			path, i, n);
		return 2;
	}
	return 0;
}

int run_place(enum run_policy policy, const char *map, unsigned int n,
	      struct run_place *out)
{
	struct percs_hfi_info info = { .size = sizeof(info) };
	struct percs_hfi *hfi;
	unsigned int i, sn, hps, hubs;
	int ret;

	ret = percs_hfi_open(0, 0, &hfi);
	if (!ret) {
		ret = percs_hfi_info(hfi, &info);
		percs_hfi_close(hfi);
	}
	if (ret) {
		fprintf(stderr, "percs-run: cannot read the HFIs (/dev/percs-hfi0): %s%s\n",
			strerror(-ret),
			ret == -ENOENT ? " (is the percs module loaded?)" : "");
		return 1;
	}
	if (policy == RUN_MAP)
		return read_map(map, n, out, &info);
	sn = info.nr_supernodes ? info.nr_supernodes : 1;
	hps = info.hubs_per_supernode ? info.hubs_per_supernode : 1;
	hubs = sn * hps;
	for (i = 0; i < n; i++) {
		if (policy == RUN_PACKED) {
			out[i].hub = 0;
			out[i].unit = i % info.hfis_per_hub;
		} else {
			unsigned int round = i / sn;

			out[i].hub = (i % sn) * hps + round % hps;
			out[i].unit = (i / hubs) % info.hfis_per_hub;
		}
	}
	return 0;
}
