// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: topology spec strings (spec.c), and the topology, link
 * states and routes built from the ones that parse.
 *
 * Input: the spec up to the first NUL byte; the bytes after it, if any,
 * name links to take down and pairs of hubs to route in every mode.
 * Asserts: a refused spec has a one-line message; an accepted one builds
 * a topology whose canonical spec parses to the same wiring; every route
 * is valid and avoids the links that are down.
 */
#include "fuzz_check.h"

#define FUZZ_MAX_HUBS	2048	/* build tables for systems up to this */

static u32 fuzz_u32(const u8 **p, const u8 *end)
{
	u32 v = 0;
	unsigned int i;

	for (i = 0; i < 4 && *p < end; i++)
		v = v << 8 | *(*p)++;
	return v;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	char spec[FM_SPEC_MAX_LEN + 8], err[256], canon[64];
	const u8 *p, *end = data + size;
	struct fm_topo_spec s, s2;
	struct fm_topology t, t2;
	size_t n = 0;
	unsigned int i, mode;

	while (n < size && n < sizeof(spec) - 1 && data[n])
		n++;
	memcpy(spec, data, n);
	spec[n] = '\0';
	err[0] = '\0';
	if (fm_topo_parse(spec, &s, err, sizeof(err))) {
		FUZZ_ASSERT(err[0] && !memchr(err, '\n', strlen(err)));
		return 0;
	}
	FUZZ_ASSERT(!err[0]);
	FUZZ_ASSERT(!fm_topo_init_spec(&t, &s, err, sizeof(err)));
	fm_topo_format(&t, canon, sizeof(canon));
	FUZZ_ASSERT(!fm_topo_parse(canon, &s2, err, sizeof(err)));
	FUZZ_ASSERT(!fm_topo_init_spec(&t2, &s2, err, sizeof(err)));
	FUZZ_ASSERT(t2.nr_supernodes == t.nr_supernodes &&
		    t2.hubs_per_sn == t.hubs_per_sn &&
		    t2.d_links_per_pair == t.d_links_per_pair);
	if (t.nr_hubs > FUZZ_MAX_HUBS || fm_topo_alloc_tables(&t))
		return 0;
	p = data + n + (n < size);
	/* first byte: how many links go down */
	for (i = p < end ? *p++ : 0; i && p < end && t.nr_links; i--)
		fm_link_set_state(&t, fuzz_u32(&p, end) % t.nr_links, false);
	while (p < end) {
		u32 src = fuzz_u32(&p, end) % t.nr_hubs;
		u32 dst = fuzz_u32(&p, end) % t.nr_hubs;
		struct fm_route_cursor cur;

		fm_route_cursor_init(&cur, src);
		for (mode = 0; mode <= PERCS_ROUTE_MAX; mode++) {
			u32 arg = (src + dst) % t.nr_supernodes;
			struct fm_route_iter it = { 0 };
			struct fm_route r;
			int ret, cnt = 0;

			ret = fm_route(&t, src, dst, mode, arg, &cur, &r);
			FUZZ_ASSERT(!ret || ret == -EHOSTUNREACH ||
				    (ret == -EINVAL &&
				     mode == PERCS_ROUTE_SW_INDIRECT));
			if (!ret)
				fuzz_check_route(&t, src, dst, &r);
			while (!fm_route_next(&t, src, dst, mode, arg, &it,
					      &r)) {
				fuzz_check_route(&t, src, dst, &r);
				cnt++;
			}
			FUZZ_ASSERT(ret || cnt > 0);
			FUZZ_ASSERT(ret != -EHOSTUNREACH || cnt == 0);
		}
	}
	fm_topo_free_tables(&t);
	return 0;
}
