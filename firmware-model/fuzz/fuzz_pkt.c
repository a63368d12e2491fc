// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: packet headers as the HFI reads them from a send FIFO
 * or an immediate slot (packet.c), then routed as the engine would
 * (route.c) on a system with some links down.
 *
 * Input: a 32-byte struct percs_pkt_hdr, then a source hub and link ids
 * to take down.  Asserts: fm_pkt_check() accepts only what the uapi
 * allows; an accepted header's route is valid or a documented error.
 */
#include "fuzz_check.h"
#include "packet.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

static struct fm_topology fuzz_topo;

static void fuzz_topo_setup(void)
{
	struct fm_topo_spec s;
	char err[128];

	if (fuzz_topo.nr_hubs)
		return;
	if (fm_topo_parse("9x4,dpair=2", &s, err, sizeof(err)) ||
	    fm_topo_init_spec(&fuzz_topo, &s, err, sizeof(err)) ||
	    fm_topo_alloc_tables(&fuzz_topo))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fm_topology *t = &fuzz_topo;
	struct fm_route_cursor cur;
	struct percs_pkt_hdr h;
	unsigned int imm, units;
	struct fm_route r;
	u32 src = 0, id;
	size_t i;
	int ret;

	if (size < sizeof(h))
		return 0;
	fuzz_topo_setup();
	memcpy(&h, data, sizeof(h));
	for (imm = 0; imm < 2; imm++) {
		ret = fm_pkt_check(&h, imm);
		FUZZ_ASSERT(!ret || ret == -EINVAL || ret == -EMSGSIZE ||
			    ret == -EOPNOTSUPP);
		if (ret)
			continue;
		/* The kinds this module executes, where they may be sent. */
		FUZZ_ASSERT(imm ? h.kind == PERCS_PKT_IMM :
				  h.kind == PERCS_PKT_FIFO ||
				  h.kind == PERCS_PKT_RDMA);
		FUZZ_ASSERT(h.length <= (imm ? PERCS_IMM_PAYLOAD :
					 PERCS_MAX_PAYLOAD));
		FUZZ_ASSERT(h.route <= PERCS_ROUTE_MAX && !h.dst.reserved);
		FUZZ_ASSERT(!(h.flags & ~PERCS_PKT_F_ALL));
		units = fm_pkt_units(h.length);
		FUZZ_ASSERT(units >= 1 && units <= PERCS_MAX_PKT_UNITS);
		FUZZ_ASSERT(fm_pkt_pad_length(units) >= (int)h.length);
	}
	FUZZ_ASSERT(fm_pkt_kind_name(h.kind)[0]);
	if (fm_pkt_check(&h, false) && fm_pkt_check(&h, true))
		return 0;
	/* the rest: a source hub, then links that are down */
	for (i = sizeof(h); i < size && i < sizeof(h) + 2; i++)
		src = src << 8 | data[i];
	src %= t->nr_hubs;
	for (id = 0; id < t->nr_links; id++)
		fm_link_set_state(t, id, true);
	for (; i + 1 < size; i += 2)
		fm_link_set_state(t, (data[i] << 8 | data[i + 1]) % t->nr_links,
				  false);
	fm_route_cursor_init(&cur, h.tag);
	ret = fm_route(t, src, h.dst.hub, h.route, h.route_arg, &cur, &r);
	if (h.dst.hub >= t->nr_hubs)
		FUZZ_ASSERT(ret == -EHOSTUNREACH);
	FUZZ_ASSERT(!ret || ret == -EHOSTUNREACH ||
		    (ret == -EINVAL && h.route == PERCS_ROUTE_SW_INDIRECT));
	if (!ret)
		fuzz_check_route(t, src, h.dst.hub, &r);
	return 0;
}
