// SPDX-License-Identifier: GPL-2.0
/*
 * percs-topo: traffic patterns.
 *
 *   alltoall		every hub sends to every other hub
 *   permutation[:SEED]	every hub sends to one other, a random cyclic
 *			permutation (Sattolo's shuffle, xorshift32 seeded with
 *			SEED, default 1): no hub sends to itself
 *   sn-to-sn:A:B	hub index i of supernode A sends to hub index i of
 *			supernode B (A != B): the paper's 32-to-1 D-link case
 *   file:PATH		one flow a line, "SRC DST" hub numbers; '#' starts a
 *			comment; blank lines are skipped
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

/* A decimal u32 spanning all of [s, end); false if it is not one. */
static bool topo_number(const char *s, const char *end, u32 *v)
{
	unsigned long long x = 0;

	if (s == end)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (*s - '0');
		if (x > 0xffffffffULL)
			return false;
	}
	*v = x;
	return true;
}

/**
 * topo_pattern_parse() - read a --pattern value
 * @s: the value
 * @t: the topology (supernode numbers are checked against it)
 * @p: out: the pattern, without its flows yet
 * @err: one-line message on error
 * @errlen: size of @err
 *
 * Return: 0 or -EINVAL.
 */
int topo_pattern_parse(const char *s, const struct fm_topology *t,
		       struct topo_pattern *p, char *err, size_t errlen)
{
	const char *colon;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", s);
	if (!strcmp(s, "alltoall")) {
		p->kind = TOPO_ALLTOALL;
		return 0;
	}
	if (!strncmp(s, "permutation", 11) && (!s[11] || s[11] == ':')) {
		p->kind = TOPO_PERMUTATION;
		p->seed = 1;
		if (s[11] && !topo_number(s + 12, s + strlen(s), &p->seed)) {
			snprintf(err, errlen,
				 "--pattern %s: the seed after 'permutation:' is a decimal number below 2^32",
				 s);
			return -EINVAL;
		}
		return 0;
	}
	if (!strncmp(s, "sn-to-sn:", 9)) {
		colon = strchr(s + 9, ':');
		p->kind = TOPO_SN_TO_SN;
		if (!colon || !topo_number(s + 9, colon, &p->sn_a) ||
		    !topo_number(colon + 1, s + strlen(s), &p->sn_b)) {
			snprintf(err, errlen,
				 "--pattern %s: expected sn-to-sn:A:B with supernode numbers A and B",
				 s);
			return -EINVAL;
		}
		if (p->sn_a >= t->nr_supernodes ||
		    p->sn_b >= t->nr_supernodes) {
			snprintf(err, errlen,
				 "--pattern %s: supernode %u outside the topology (0..%u)",
				 s, p->sn_a >= t->nr_supernodes ? p->sn_a :
				 p->sn_b, t->nr_supernodes - 1);
			return -EINVAL;
		}
		if (p->sn_a == p->sn_b) {
			snprintf(err, errlen,
				 "--pattern %s: A and B must be different supernodes",
				 s);
			return -EINVAL;
		}
		return 0;
	}
	if (!strncmp(s, "file:", 5)) {
		p->kind = TOPO_FILE;
		p->path = s + 5;
		if (!*p->path) {
			snprintf(err, errlen, "--pattern file: needs a path, file:PATH");
			return -EINVAL;
		}
		return 0;
	}
	snprintf(err, errlen,
		 "--pattern %s: unknown pattern (alltoall, permutation[:SEED], sn-to-sn:A:B, file:PATH)",
		 s);
	return -EINVAL;
}

static u32 topo_xorshift(u32 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static int topo_read_file(struct topo_pattern *p, const struct fm_topology *t,
			  char *err, size_t errlen)
{
	size_t cap = 0, lineno = 0;
	char *line = NULL;
	size_t linecap = 0;
	FILE *f = fopen(p->path, "r");

	if (!f) {
		snprintf(err, errlen, "%s: %s", p->path, strerror(errno));
		return -EINVAL;
	}
	while (getline(&line, &linecap, f) >= 0) {
		char *hash = strchr(line, '#'), *a, *b, *extra, *save;
		u32 src, dst;

		lineno++;
		if (hash)
			*hash = '\0';
		a = strtok_r(line, " \t\r\n", &save);
		if (!a)
			continue;
		b = strtok_r(NULL, " \t\r\n", &save);
		extra = b ? strtok_r(NULL, " \t\r\n", &save) : NULL;
		if (!b || extra || !topo_number(a, a + strlen(a), &src) ||
		    !topo_number(b, b + strlen(b), &dst)) {
			snprintf(err, errlen,
				 "%s:%zu: expected two hub numbers, 'SRC DST'",
				 p->path, lineno);
			goto fail;
		}
		if (src >= t->nr_hubs || dst >= t->nr_hubs) {
			snprintf(err, errlen,
				 "%s:%zu: hub %u outside the topology (0..%u)",
				 p->path, lineno, src >= t->nr_hubs ? src : dst,
				 t->nr_hubs - 1);
			goto fail;
		}
		if (src == dst) {
			snprintf(err, errlen,
				 "%s:%zu: hub %u sends to itself (a flow crosses the network)",
				 p->path, lineno, src);
			goto fail;
		}
		if (p->nr_flows == cap) {
			struct topo_flow *n;

			cap = cap ? 2 * cap : 1024;
			n = realloc(p->flows, cap * sizeof(*n));
			if (!n)
				topo_die(TOPO_EXIT_FAIL, "out of memory");
			p->flows = n;
		}
		p->flows[p->nr_flows].src = src;
		p->flows[p->nr_flows].dst = dst;
		p->nr_flows++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", p->path, strerror(errno));
		goto fail;
	}
	if (!p->nr_flows) {
		snprintf(err, errlen, "%s: no flows (lines 'SRC DST')",
			 p->path);
		goto fail;
	}
	free(line);
	fclose(f);
	return 0;
fail:
	free(line);
	fclose(f);
	return -EINVAL;
}

/**
 * topo_pattern_flows() - list the flows of a pattern (not alltoall's)
 * @p: the pattern
 * @t: the topology
 * @err: one-line message on error
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL for a pattern file that cannot be read or is bad.
 */
int topo_pattern_flows(struct topo_pattern *p, const struct fm_topology *t,
		       char *err, size_t errlen)
{
	u32 i, H = t->hubs_per_sn, x;

	switch (p->kind) {
	case TOPO_ALLTOALL:
		return 0;
	case TOPO_PERMUTATION:
		if (t->nr_hubs < 2) {
			snprintf(err, errlen,
				 "--pattern permutation: needs at least 2 hubs");
			return -EINVAL;
		}
		p->nr_flows = t->nr_hubs;
		p->flows = topo_calloc(p->nr_flows, sizeof(*p->flows));
		for (i = 0; i < t->nr_hubs; i++)
			p->flows[i].dst = i;
		/* Sattolo: a single cycle, so no hub sends to itself */
		x = p->seed ? p->seed : 1;
		for (i = t->nr_hubs - 1; i > 0; i--) {
			u32 j = topo_xorshift(&x) % i, k = p->flows[i].dst;

			p->flows[i].dst = p->flows[j].dst;
			p->flows[j].dst = k;
		}
		for (i = 0; i < t->nr_hubs; i++)
			p->flows[i].src = i;
		return 0;
	case TOPO_SN_TO_SN:
		p->nr_flows = H;
		p->flows = topo_calloc(H, sizeof(*p->flows));
		for (i = 0; i < H; i++) {
			p->flows[i].src = p->sn_a * H + i;
			p->flows[i].dst = p->sn_b * H + i;
		}
		return 0;
	case TOPO_FILE:
		return topo_read_file(p, t, err, errlen);
	}
	return -EINVAL;
}
