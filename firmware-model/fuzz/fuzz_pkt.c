// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: packet headers as the HFI reads them from a send FIFO
 * or an immediate slot (packet.c), then routed as the engine would
 * (route.c) on a system with some links down.
 *
 * Input: a 32-byte struct percs_pkt_hdr, then a source hub and link ids
 * to take down (the same bytes are an atomic descriptor's payload).
 * Asserts: fm_pkt_check() accepts only what the uapi allows; an accepted
 * header's route is valid or a documented error; fm_atomic_parse()
 * accepts only descriptors the uapi allows.
 */
#include "fuzz_check.h"
#include "packet.h"
#include "atomic.h"

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

/* An accepted atomic descriptor is one the uapi allows. */
static void fuzz_check_atomic(const struct percs_pkt_hdr *h, const u8 *payload)
{
	struct fm_atomic_desc d;
	unsigned int i;
	u64 mask;
	int ret;

	ret = fm_atomic_parse(h, payload, &d);
	FUZZ_ASSERT(!ret || ret == -EINVAL);
	if (ret)
		return;
	FUZZ_ASSERT(d.ext.op <= PERCS_ATOMIC_OP_MAX && !d.ext.reserved);
	FUZZ_ASSERT(d.ext.count >= 1 &&
		    d.ext.count <= PERCS_ATOMIC_MAX_PACKED);
	FUZZ_ASSERT(d.ext.count == 1 ||
		    (!(d.ext.flags & PERCS_ATOMIC_F_FETCH) &&
		     d.ext.op != PERCS_ATOMIC_CSWAP));
	FUZZ_ASSERT(h->length == PERCS_ATOMIC_LEN(d.ext.count) +
		    (d.ext.op == PERCS_ATOMIC_CSWAP ? 8 : 0));
	FUZZ_ASSERT(h->length <= PERCS_IMM_PAYLOAD);
	mask = fm_atomic_mask(d.ext.width);
	FUZZ_ASSERT(mask && (mask & (mask + 1)) == 0 &&
		    fm_popcount64(mask) == 8U * d.ext.width);
	for (i = 0; i < d.ext.count; i++)
		FUZZ_ASSERT(!(d.ops[i].operand & ~mask));
	FUZZ_ASSERT(!(d.compare & ~mask));
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
				  h.kind == PERCS_PKT_RDMA ||
				  h.kind == PERCS_PKT_ATOMIC ||
				  h.kind == PERCS_PKT_COLL);
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
	if (h.kind == PERCS_PKT_ATOMIC && size - sizeof(h) >= h.length)
		fuzz_check_atomic(&h, data + sizeof(h));
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
