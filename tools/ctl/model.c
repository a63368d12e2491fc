// SPDX-License-Identifier: GPL-2.0
/*
 * percs-ctl's commands over the firmware model (firmware-model/, compiled
 * in): a topology's links and the routes they leave, with or without the
 * module.
 *
 *   links --topology SPEC
 *	the links of a topology spec as the model numbers and wires them:
 *	what isr/links of a module loaded with topology=SPEC lists
 *   reach [--topology SPEC | --all-up] [--hub N] [LINK...]
 *	which routes every ordered pair of hubs has left with links down,
 *	and which hubs can no longer reach which
 *
 * reach's topology is SPEC, or the running module's: the spec in
 * isr/topology, every line of isr/links checked against the model's
 * wiring, so that a module and a percs-ctl that disagree give an error
 * rather than a wrong answer.  The links down are those named (ids as
 * "percs-ctl links" shows them, ranges "A-B", lists "A,B") and, on the
 * module unless --all-up, those isr/links says are down now.
 *
 * A pair's routes are those fm_route_next() lists for hw_direct_striped:
 * every usable direct route (one per D link between the two supernodes;
 * within a supernode, the hubs' L link) and then every usable indirect
 * route (one per intermediate supernode, by the route the model takes
 * into it).  They are listed on two copies of the topology, one with the
 * links down and one with every link up: a pair with fewer routes on the
 * first has lost routes and is shown, one with none left is unreachable.
 * The cost is O(routes listed); a run that would list more than
 * REACH_MAX_ROUTES is refused unless --hub narrows the pairs down.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "topology.h"

/*
 * Routes listed at most (on both copies of the topology), about 20 s of
 * work natively: every pair of the largest module (1024 hubs) fits.
 */
#define REACH_MAX_ROUTES	(1ULL << 28)

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		fprintf(stderr, "%s: out of memory\n", prog);
	return p;
}

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

/* ---- reach: the links named --------------------------------------------- */

/* One item of the link list: a link, or a range of links. */
struct link_item {
	u32 lo, hi;
};

/* A link id: decimal digits only, at most UINT32_MAX. */
static bool parse_link_id(const char *s, size_t len, u32 *id)
{
	uint64_t v = 0;

	if (!len || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*id = (u32)v;
	return true;
}

/*
 * The words after "reach": each a comma-separated list of link ids and
 * ranges "A-B".  Only their form is checked here (exit status 2); whether
 * the links exist, once the topology is known (link_items_mark()).
 */
static int link_items_parse(char **words, unsigned int nwords,
			    struct link_item **out, size_t *nr)
{
	struct link_item *it;
	size_t n = 0, cap = 0;

	*out = NULL;
	*nr = 0;
	for (unsigned int w = 0; w < nwords; w++) {
		const char *p = words[w];

		if (!*p)
			return usage_error("an empty link name: link ids as 'percs-ctl links' shows them, e.g. 7, 7,9 or 40-47");
		for (;;) {
			size_t len = strcspn(p, ","), dash;
			struct link_item x;

			dash = strcspn(p, "-");
			if (dash == 0)	/* "-1" */
				dash = len;
			if (!len) {
				free(*out);
				*out = NULL;
				return usage_error("bad link list '%s': an empty item",
						   words[w]);
			}
			if (dash < len) {
				if (!parse_link_id(p, dash, &x.lo) ||
				    !parse_link_id(p + dash + 1, len - dash - 1,
						   &x.hi)) {
					free(*out);
					*out = NULL;
					return usage_error("bad link range '%.*s': FIRST-LAST, two link ids as 'percs-ctl links' shows them",
							   (int)len, p);
				}
				if (x.lo > x.hi) {
					free(*out);
					*out = NULL;
					return usage_error("bad link range '%.*s': %u is above %u",
							   (int)len, p, x.lo, x.hi);
				}
			} else if (!parse_link_id(p, len, &x.lo)) {
				free(*out);
				*out = NULL;
				return usage_error("bad link '%.*s': a link id as 'percs-ctl links' shows it (e.g. 7), a range (40-47) or a list (7,9)",
						   (int)len, p);
			} else {
				x.hi = x.lo;
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				it = realloc(*out, cap * sizeof(*it));
				if (!it) {
					free(*out);
					*out = NULL;
					fprintf(stderr, "%s: out of memory\n", prog);
					return 1;
				}
				*out = it;
			}
			(*out)[n++] = x;
			if (!p[len])
				break;
			p += len + 1;
		}
	}
	*nr = n;
	return 0;
}

/*
 * Mark the links named in @named (one byte per link of @t): exit status 2
 * for a link outside the topology or named twice.
 */
static int link_items_mark(const struct link_item *it, size_t n,
			   const struct fm_topology *t, const char *spec,
			   u8 *named)
{
	for (size_t i = 0; i < n; i++) {
		if (it[i].hi >= t->nr_links) {
			u32 bad = it[i].lo >= t->nr_links ? it[i].lo :
							    t->nr_links;

			if (!t->nr_links)
				fprintf(stderr, "%s: link %u: no such link: topology %s has no links\n",
					prog, bad, spec);
			else
				fprintf(stderr, "%s: link %u: no such link: topology %s has links 0..%u\n",
					prog, bad, spec, t->nr_links - 1);
			return EXIT_USAGE;
		}
		for (u32 id = it[i].lo;; id++) {
			if (named[id]) {
				fprintf(stderr, "%s: link %u is named twice\n",
					prog, id);
				return EXIT_USAGE;
			}
			named[id] = 1;
			if (id == it[i].hi)
				break;
		}
	}
	return 0;
}

/* ---- reach: the module's topology and link states ------------------------ */

/*
 * The module's topology from isr/topology into @t, and from isr/links the
 * links down now into @down_now (one byte per link), each line checked
 * against the model's wiring of that topology.  Returns 0, or 1 after a
 * message.
 */
static int module_read(struct fm_topology *t, char *spec, size_t spec_len,
		       u8 **down_now)
{
	char path[PATH_MAX], err[160];
	struct isr_link *l = NULL;
	struct isr_shape sh;
	u8 *seen = NULL;
	size_t n = 0;
	int ret = 1;

	*down_now = NULL;
	if (isr_shape_read(&sh, true))
		return 1;
	if (!sh.spec) {
		fprintf(stderr, "%s: %s: no 'spec' line: a module without topology specs, give --topology\n",
			prog, sh.path);
		isr_shape_free(&sh);
		return 1;
	}
	ret = topo_build(t, sh.spec, spec, spec_len, err, sizeof(err));
	if (ret == -EINVAL)
		fprintf(stderr, "%s: %s: spec '%s': %s (percs-ctl's firmware model does not match the module's)\n",
			prog, sh.path, sh.spec, err);
	if (ret) {
		isr_shape_free(&sh);
		return 1;
	}
	ret = 1;
	if (sh.has_links && sh.links != t->nr_links) {
		fprintf(stderr, "%s: %s: %" PRIu64 " links, topology %s has %u in percs-ctl's firmware model: it does not match the module's\n",
			prog, sh.path, sh.links, spec, t->nr_links);
		goto out;
	}
	if (isr_links_get(&l, &n, path, sizeof(path)))
		goto out;
	seen = xcalloc(t->nr_links, 1);
	*down_now = xcalloc(t->nr_links, 1);
	if (!seen || !*down_now)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct fm_link_info li;

		if (l[i].id >= t->nr_links) {
			fprintf(stderr, "%s: %s:%zu: link %" PRIu64 ": topology %s has %u links in percs-ctl's firmware model: it does not match the module's\n",
				prog, path, l[i].line, l[i].id, spec,
				t->nr_links);
			goto out;
		}
		if (seen[l[i].id]++) {
			fprintf(stderr, "%s: %s:%zu: link %" PRIu64 " listed twice\n",
				prog, path, l[i].line, l[i].id);
			goto out;
		}
		fm_link_info(t, (u32)l[i].id, &li);
		if (strcmp(l[i].class, fm_link_class_name(li.link_class)) ||
		    l[i].hub_a != li.hub[0] || l[i].hub_b != li.hub[1] ||
		    l[i].port_a != li.port[0] || l[i].port_b != li.port[1]) {
			fprintf(stderr, "%s: %s:%zu: link %" PRIu64 " is %s from hub %" PRIu64 " port %" PRIu64 " to hub %" PRIu64 " port %" PRIu64
				", in percs-ctl's firmware model of %s %s from hub %u port %u to hub %u port %u: it does not match the module's\n",
				prog, path, l[i].line, l[i].id, l[i].class,
				l[i].hub_a, l[i].port_a, l[i].hub_b,
				l[i].port_b, spec,
				fm_link_class_name(li.link_class), li.hub[0],
				li.port[0], li.hub[1], li.port[1]);
			goto out;
		}
		(*down_now)[l[i].id] = !l[i].up;
	}
	if (n != t->nr_links) {
		fprintf(stderr, "%s: %s: %zu links, topology %s has %u in percs-ctl's firmware model: it does not match the module's\n",
			prog, path, n, spec, t->nr_links);
		goto out;
	}
	ret = 0;
out:
	if (ret) {
		free(*down_now);
		*down_now = NULL;
		fm_topo_free_tables(t);
	}
	free(seen);
	free(l);
	isr_shape_free(&sh);
	return ret;
}

/* ---- reach: the routes ------------------------------------------------------ */

/* The routes of one pair of hubs: direct ones, and the indirect ones' vias. */
struct routes {
	u32 direct, indirect;
	u32 *via;	/* nr_supernodes entries, the first @indirect used */
};

/* Every route hw_direct_striped may take from @s to @d on @t. */
static int routes_list(const struct fm_topology *t, u32 s, u32 d,
		       struct routes *r)
{
	struct fm_route_iter it = { 0 };
	struct fm_route route;
	int ret;

	r->direct = 0;
	r->indirect = 0;
	while (!(ret = fm_route_next(t, s, d, PERCS_ROUTE_DIRECT_STRIPED, 0,
				     &it, &route))) {
		if (route.via_sn == FM_NO_SN)
			r->direct++;
		else if (r->via)
			r->via[r->indirect++] = route.via_sn;
		else
			r->indirect++;
	}
	if (ret == -ENOENT)
		return 0;
	fprintf(stderr, "%s: the routes from hub %u to hub %u: %s\n", prog, s,
		d, strerror(-ret));
	return 1;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* @v (sorted) as "1-3,5", or "-" when empty. */
static void print_ranges(const u32 *v, u32 n)
{
	if (!n) {
		putchar('-');
		return;
	}
	for (u32 i = 0; i < n;) {
		u32 j = i;

		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		printf("%s%u", i ? "," : "", v[i]);
		if (j > i)
			printf("-%u", v[j]);
		i = j + 1;
	}
}

struct reach {
	const struct isr_args *a;
	struct fm_topology t;		/* the links down */
	struct fm_topology all_up;	/* the same, every link up */
	char spec[FM_SPEC_MAX_LEN + 1];
	u8 *named, *down_now;		/* one byte per link */
	u32 *unreach;			/* pairs (src, dst) with no route */
	uint64_t checked, lost, nr_unreach;
};

/* Is link @id down in the question asked? */
static bool reach_down(const struct reach *r, u32 id)
{
	return r->named[id] || (r->down_now[id] && !r->a->all_up);
}

static void print_topology(const struct reach *r)
{
	const struct fm_topology *t = &r->t;

	if (r->a->json) {
		struct jobj o = { true };

		fputs("{\"topology\":{", stdout);
		jstr(&o, "spec", r->spec);
		ju64(&o, "supernodes", t->nr_supernodes);
		ju64(&o, "hubs_per_supernode", t->hubs_per_sn);
		ju64(&o, "hubs", t->nr_hubs);
		ju64(&o, "links", t->nr_links);
		ju64(&o, "d_links_per_pair", t->d_links_per_pair);
		putchar('}');
		if (r->a->hub >= 0)
			printf(",\"hub\":%ld", r->a->hub);
		return;
	}
	printf("topology %s: %u supernode%s of %u hub%s, %u links (%u L, %u D: %u per pair of supernodes)\n",
	       r->spec, t->nr_supernodes, t->nr_supernodes == 1 ? "" : "s",
	       t->hubs_per_sn, t->hubs_per_sn == 1 ? "" : "s", t->nr_links,
	       t->nr_l_links, t->nr_d_links, t->d_links_per_pair);
}

/* The links down, each with its ends and why it is down. */
static void print_down(const struct reach *r)
{
	const struct fm_topology *t = &r->t;
	u32 n = 0, shown = 0, H = t->hubs_per_sn;

	for (u32 id = 0; id < t->nr_links; id++)
		n += reach_down(r, id);
	if (r->a->json)
		fputs(",\"down\":[", stdout);
	else if (!n)
		puts("links down: none");
	else
		printf("links down: %u\n%7s %-5s %5s %5s %4s %4s %4s  %s\n", n,
		       "ID", "CLASS", "HUB-A", "HUB-B", "SN-A", "SN-B", "COPY",
		       "DOWN");
	for (u32 id = 0; id < t->nr_links; id++) {
		struct fm_link_info li;
		bool now = r->down_now[id], named = r->named[id];

		if (!reach_down(r, id))
			continue;
		fm_link_info(t, id, &li);
		if (r->a->json) {
			struct jobj o = { true };

			printf("%s{", shown++ ? "," : "");
			ju64(&o, "id", id);
			jstr(&o, "class", fm_link_class_name(li.link_class));
			ju64(&o, "hub_a", li.hub[0]);
			ju64(&o, "hub_b", li.hub[1]);
			ju64(&o, "supernode_a", li.hub[0] / H);
			ju64(&o, "supernode_b", li.hub[1] / H);
			if (li.link_class == FM_LINK_D)
				ju64(&o, "copy", li.copy);
			jbool(&o, "down_now", now);
			jbool(&o, "named", named);
			putchar('}');
			continue;
		}
		printf("%7u %-5s %5u %5u %4u %4u ", id,
		       fm_link_class_name(li.link_class), li.hub[0], li.hub[1],
		       li.hub[0] / H, li.hub[1] / H);
		if (li.link_class == FM_LINK_D)
			printf("%4u", li.copy);
		else
			printf("%4s", "-");
		printf("  %s\n", now && named ? "now, named" : now ? "now" :
		       "named");
	}
	if (r->a->json)
		putchar(']');
}

/* One pair that lost routes. */
static void print_pair(const struct reach *r, u32 s, u32 d,
		       const struct routes *left, const struct routes *all)
{
	u32 H = r->t.hubs_per_sn;
	bool reachable = left->direct || left->indirect;
	char direct[24], indirect[24];

	if (r->a->json) {
		struct jobj o = { true };

		printf("%s{", r->lost > 1 ? "," : "");
		ju64(&o, "src", s);
		ju64(&o, "dst", d);
		ju64(&o, "src_supernode", s / H);
		ju64(&o, "dst_supernode", d / H);
		ju64(&o, "direct", left->direct);
		ju64(&o, "direct_total", all->direct);
		ju64(&o, "indirect", left->indirect);
		ju64(&o, "indirect_total", all->indirect);
		jkey(&o, "via");
		putchar('[');
		for (u32 i = 0; i < left->indirect; i++)
			printf("%s%u", i ? "," : "", left->via[i]);
		putchar(']');
		jbool(&o, "reachable", reachable);
		putchar('}');
		return;
	}
	if (r->lost == 1)
		printf("routes lost:\n%7s %7s %9s %9s  %s\n", "FROM", "TO",
		       "DIRECT", "INDIRECT", "VIA");
	snprintf(direct, sizeof(direct), "%u/%u", left->direct, all->direct);
	snprintf(indirect, sizeof(indirect), "%u/%u", left->indirect,
		 all->indirect);
	printf("%7u %7u %9s %9s  ", s, d, direct, indirect);
	print_ranges(left->via, left->indirect);
	puts(reachable ? "" : "  unreachable");
}

/* Every pair of hubs (of --hub's), the lost routes as they are found. */
static int reach_pairs(struct reach *r)
{
	const struct fm_topology *t = &r->t;
	struct routes left = { 0 }, all = { 0 };
	long hub = r->a->hub;
	size_t cap = 0;
	int ret = 1;

	left.via = xcalloc(t->nr_supernodes, sizeof(*left.via));
	if (!left.via)
		return 1;
	if (r->a->json)
		fputs(",\"pairs\":[", stdout);
	for (u32 s = 0; s < t->nr_hubs; s++) {
		for (u32 d = 0; d < t->nr_hubs; d++) {
			if (s == d || (hub >= 0 && s != hub && d != hub))
				continue;
			if (routes_list(&r->all_up, s, d, &all) ||
			    routes_list(t, s, d, &left))
				goto out;
			r->checked++;
			if (left.direct >= all.direct &&
			    left.indirect >= all.indirect)
				continue;
			r->lost++;
			qsort(left.via, left.indirect, sizeof(*left.via),
			      cmp_u32);
			print_pair(r, s, d, &left, &all);
			if (left.direct || left.indirect)
				continue;
			if (r->nr_unreach == cap) {
				u32 *p;

				cap = cap ? 2 * cap : 64;
				p = realloc(r->unreach, cap * 2 * sizeof(*p));
				if (!p) {
					fprintf(stderr, "%s: out of memory\n",
						prog);
					goto out;
				}
				r->unreach = p;
			}
			r->unreach[2 * r->nr_unreach] = s;
			r->unreach[2 * r->nr_unreach + 1] = d;
			r->nr_unreach++;
		}
	}
	ret = 0;
out:
	free(left.via);
	return ret;
}

/* The counts, and who cannot reach whom (text: by source hub). */
static void print_summary(const struct reach *r)
{
	if (r->a->json) {
		printf("],\"checked\":%" PRIu64 ",\"lost\":%" PRIu64
		       ",\"unreachable\":%" PRIu64 "}\n", r->checked, r->lost,
		       r->nr_unreach);
		return;
	}
	printf("hub pairs: %" PRIu64 " checked, %" PRIu64 " lost routes, %"
	       PRIu64 " unreachable\n", r->checked, r->lost, r->nr_unreach);
	if (!r->nr_unreach) {
		puts("unreachable: none");
		return;
	}
	puts("unreachable:");
	for (uint64_t i = 0; i < r->nr_unreach;) {
		u32 s = r->unreach[2 * i];
		uint64_t j = i;

		printf("  from hub %u: hub%s ", s,
		       i + 1 < r->nr_unreach && r->unreach[2 * i + 2] == s ?
		       "s" : "");
		while (j < r->nr_unreach && r->unreach[2 * j] == s)
			j++;
		/* the destinations of one source, in order */
		for (uint64_t k = i; k < j;) {
			uint64_t m = k;

			while (m + 1 < j && r->unreach[2 * m + 3] ==
			       r->unreach[2 * m + 1] + 1)
				m++;
			printf("%s%u", k > i ? "," : "", r->unreach[2 * k + 1]);
			if (m > k)
				printf("-%u", r->unreach[2 * m + 1]);
			k = m + 1;
		}
		putchar('\n');
		i = j;
	}
}

/* How many routes reach_pairs() would list, at most. */
static uint64_t reach_work(const struct fm_topology *t, long hub)
{
	uint64_t n = t->nr_hubs;
	uint64_t pairs = hub >= 0 ? 2 * (n - 1) : n * (n - 1);

	return 2 * pairs * ((uint64_t)t->d_links_per_pair + t->nr_supernodes);
}

int cmd_reach(const struct isr_args *a)
{
	struct reach r = { .a = a };
	struct link_item *items;
	char err[160];
	size_t nitems;
	int ret;

	if (a->topology && a->all_up)
		return usage_error("--all-up goes with the module's topology: with --topology every link but those named is up");
	ret = link_items_parse(a->args, a->nargs, &items, &nitems);
	if (ret)
		return ret;
	if (!nitems && (a->topology || a->all_up)) {
		free(items);
		return usage_error("reach %s needs the links to take down: link ids as 'percs-ctl links%s' shows them",
				   a->topology ? "--topology" : "--all-up",
				   a->topology ? " --topology SPEC" : "");
	}
	if (a->topology) {
		ret = topo_from_option(&r.t, a->topology, r.spec,
				       sizeof(r.spec));
		if (!ret) {
			r.down_now = xcalloc(r.t.nr_links, 1);
			ret = r.down_now ? 0 : 1;
		}
	} else {
		ret = module_read(&r.t, r.spec, sizeof(r.spec), &r.down_now);
	}
	if (ret) {
		free(items);
		free(r.down_now);
		return ret;
	}
	ret = hub_check(a->hub, &r.t, r.spec);
	if (!ret && reach_work(&r.t, a->hub) > REACH_MAX_ROUTES) {
		fprintf(stderr, "%s: topology %s: %u hubs, up to %" PRIu64 " routes to list for every pair of them: too many; name a hub with --hub\n",
			prog, r.spec, r.t.nr_hubs, reach_work(&r.t, a->hub) / 2);
		ret = EXIT_USAGE;
	}
	if (!ret) {
		r.named = xcalloc(r.t.nr_links, 1);
		ret = r.named ? link_items_mark(items, nitems, &r.t, r.spec,
						r.named) : 1;
	}
	free(items);
	if (!ret) {
		char canon[FM_SPEC_MAX_LEN + 1];

		ret = topo_build(&r.all_up, r.spec, canon, sizeof(canon), err,
				 sizeof(err)) ? 1 : 0;
		if (ret)
			fprintf(stderr, "%s: topology %s: %s\n", prog, r.spec,
				err);
	}
	for (u32 id = 0; !ret && id < r.t.nr_links; id++) {
		if (!reach_down(&r, id))
			continue;
		ret = fm_link_set_state(&r.t, id, false);
		if (ret) {
			fprintf(stderr, "%s: link %u down: %s\n", prog, id,
				strerror(-ret));
			ret = 1;
		}
	}
	if (!ret) {
		print_topology(&r);
		print_down(&r);
		ret = reach_pairs(&r);
		if (!ret)
			print_summary(&r);
		else if (a->json)
			putchar('\n');
	}
	fm_topo_free_tables(&r.t);
	fm_topo_free_tables(&r.all_up);
	free(r.named);
	free(r.down_now);
	free(r.unreach);
	return ret;
}
