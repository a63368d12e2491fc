// SPDX-License-Identifier: GPL-2.0
/*
 * percs-ctl's commands over the firmware model (firmware-model/, compiled
 * in): what a topology is, with or without the module.
 *
 *   links --topology SPEC
 *	the links of a topology spec as the model numbers and wires them:
 *	what isr/links of a module loaded with topology=SPEC lists
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "topology.h"

/*
 * Build @t (with route tables, every link up) from @spec, in @canon its
 * canonical form.  Returns 0, or -EINVAL with the model's reason in @err,
 * or -ENOMEM after a message.
 */
static int topo_build(struct fm_topology *t, const char *spec, char *canon,
		      size_t canon_len, char *err, size_t errlen)
{
	struct fm_topo_spec s;
	int ret;

	memset(t, 0, sizeof(*t));
	if (fm_topo_parse(spec, &s, err, errlen) ||
	    fm_topo_init_spec(t, &s, err, errlen))
		return -EINVAL;
	ret = fm_topo_alloc_tables(t);
	if (ret) {
		fprintf(stderr, "%s: topology %s: route tables: %s\n", prog,
			spec, strerror(-ret));
		return ret;
	}
	fm_topo_format(t, canon, canon_len);
	return 0;
}

/* --topology SPEC: exit status 2 for a spec the model refuses. */
static int topo_from_option(struct fm_topology *t, const char *spec,
			    char *canon, size_t canon_len)
{
	char err[160];
	int ret = topo_build(t, spec, canon, canon_len, err, sizeof(err));

	if (ret == -EINVAL)
		return usage_error("bad --topology '%s': %s", spec, err);
	return ret ? 1 : 0;
}

/* --hub N against the topology; exit status 2 if outside it. */
static int hub_check(long hub, const struct fm_topology *t, const char *spec)
{
	if (hub >= 0 && (uint64_t)hub >= t->nr_hubs) {
		fprintf(stderr, "%s: --hub %ld: topology %s has hubs 0..%u\n",
			prog, hub, spec, t->nr_hubs - 1);
		return EXIT_USAGE;
	}
	return 0;
}

/* ---- links --topology -------------------------------------------------- */

int links_of_spec(const struct isr_args *a, int class)
{
	char spec[FM_SPEC_MAX_LEN + 1];
	struct fm_topology t;
	unsigned int shown = 0;
	int ret;

	if (a->down)
		return usage_error("--down: the links of --topology %s are all up; --down reads the module's",
				   a->topology);
	ret = topo_from_option(&t, a->topology, spec, sizeof(spec));
	if (ret)
		return ret;
	ret = hub_check(a->hub, &t, spec);
	if (ret) {
		fm_topo_free_tables(&t);
		return ret;
	}
	if (a->json) {
		fputs("{\"spec\":", stdout);
		json_str(spec);
		fputs(",\"links\":[", stdout);
	} else {
		printf("%5s %-5s %5s %5s %6s %6s %4s\n", "ID", "CLASS", "HUB-A",
		       "HUB-B", "PORT-A", "PORT-B", "COPY");
	}
	for (u32 id = 0; id < t.nr_links; id++) {
		struct fm_link_info li;

		fm_link_info(&t, id, &li);
		if (class >= 0 && li.link_class != (unsigned int)class)
			continue;
		if (a->hub >= 0 && li.hub[0] != (u32)a->hub &&
		    li.hub[1] != (u32)a->hub)
			continue;
		if (a->json) {
			struct jobj o = { true };

			printf("%s{", shown ? "," : "");
			ju64(&o, "id", li.id);
			jstr(&o, "class", fm_link_class_name(li.link_class));
			ju64(&o, "hub_a", li.hub[0]);
			ju64(&o, "hub_b", li.hub[1]);
			ju64(&o, "port_a", li.port[0]);
			ju64(&o, "port_b", li.port[1]);
			if (li.link_class == FM_LINK_D)
				ju64(&o, "copy", li.copy);
			putchar('}');
		} else if (li.link_class == FM_LINK_D) {
			printf("%5u %-5s %5u %5u %6u %6u %4u\n", li.id, "D",
			       li.hub[0], li.hub[1], li.port[0], li.port[1],
			       li.copy);
		} else {
			printf("%5u %-5s %5u %5u %6u %6u %4s\n", li.id,
			       fm_link_class_name(li.link_class), li.hub[0],
			       li.hub[1], li.port[0], li.port[1], "-");
		}
		shown++;
	}
	if (a->json)
		puts("]}");
	fm_topo_free_tables(&t);
	return 0;
}
