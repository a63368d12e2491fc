// SPDX-License-Identifier: GPL-2.0
/* Unit tests of firmware-model/packet.c. */
#include "packet.h"
#include "fm_test.h"

static const unsigned int unsupported_kinds[] = {
	PERCS_PKT_IP,
};

/* A well-formed header of @kind with @length payload bytes. */
static struct percs_pkt_hdr hdr(unsigned int kind, unsigned int length)
{
	struct percs_pkt_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = kind;
	h.length = length;
	h.dst.hub = 1;
	h.dst.hfi = 1;
	h.dst.window = 7;
	return h;
}

static int check_fifo(struct percs_pkt_hdr h)
{
	return fm_pkt_check(&h, false);
}

static int check_imm(struct percs_pkt_hdr h)
{
	return fm_pkt_check(&h, true);
}

FM_TEST(pkt_units_sizes)
{
	unsigned int len, u;

	CHECK_EQ(fm_pkt_units(0), 1);
	CHECK_EQ(fm_pkt_units(1), 1);
	CHECK_EQ(fm_pkt_units(96), 1);
	CHECK_EQ(fm_pkt_units(97), 2);
	CHECK_EQ(fm_pkt_units(224), 2);
	CHECK_EQ(fm_pkt_units(225), 3);
	CHECK_EQ(fm_pkt_units(2016), 16);
	CHECK_EQ(fm_pkt_units(PERCS_MAX_PAYLOAD), PERCS_MAX_PKT_UNITS);
	for (len = 0; len <= PERCS_MAX_PAYLOAD; len++) {
		u = fm_pkt_units(len);
		CHECK_CTX(u * 128 >= 32 + len && (u - 1) * 128 < 32 + len,
			  "length %u -> %u units", len, u);
	}
}

FM_TEST(pkt_check_fifo_accepts_every_length)
{
	unsigned int len;

	for (len = 0; len <= PERCS_MAX_PAYLOAD; len++)
		CHECK_CTX(check_fifo(hdr(PERCS_PKT_FIFO, len)) == 0,
			  "length %u", len);
}

FM_TEST(pkt_check_imm_accepts_every_length)
{
	unsigned int len;

	for (len = 0; len <= PERCS_IMM_PAYLOAD; len++)
		CHECK_CTX(check_imm(hdr(PERCS_PKT_IMM, len)) == 0,
			  "length %u", len);
}

FM_TEST(pkt_check_accepts_flags_and_route_modes)
{
	struct percs_pkt_hdr h = hdr(PERCS_PKT_FIFO, 100);
	unsigned int route;

	h.flags = PERCS_PKT_F_NOTIFY;
	CHECK_EQ(check_fifo(h), 0);
	for (route = 0; route <= PERCS_ROUTE_MAX; route++) {
		h.route = route;
		CHECK_CTX(check_fifo(h) == 0, "route %u", route);
	}
	h.route = PERCS_ROUTE_SW_INDIRECT;
	h.route_arg = 5;
	CHECK_EQ(check_fifo(h), 0);
	h = hdr(PERCS_PKT_IMM, 96);
	h.flags = PERCS_PKT_F_NOTIFY;
	h.route = PERCS_ROUTE_SW_INDIRECT;
	h.route_arg = 0xffff;
	CHECK_EQ(check_imm(h), 0);
}

FM_TEST(pkt_check_ignores_src_and_job_key)
{
	struct percs_pkt_hdr h = hdr(PERCS_PKT_FIFO, 0);

	h.src.hub = 0xffffffff;
	h.src.hfi = 0xff;
	h.src.reserved = 0xff;
	h.src.window = 0xffff;
	h.job_key = 0xdeadbeef;
	h.tag = 0xffffffff;
	CHECK_EQ(check_fifo(h), 0);
	h.kind = PERCS_PKT_IMM;
	CHECK_EQ(check_imm(h), 0);
}

FM_TEST(pkt_check_unknown_kind_einval)
{
	unsigned int kind;

	for (kind = PERCS_PKT_KIND_MAX + 1; kind <= 255; kind++) {
		CHECK_CTX(check_fifo(hdr(kind, 0)) == -EINVAL, "kind %u",
			  kind);
		CHECK_CTX(check_imm(hdr(kind, 0)) == -EINVAL, "kind %u", kind);
	}
}

FM_TEST(pkt_check_pad_einval)
{
	CHECK_EQ(check_fifo(hdr(PERCS_PKT_PAD, 0)), -EINVAL);
	CHECK_EQ(check_fifo(hdr(PERCS_PKT_PAD, fm_pkt_pad_length(3))),
		 -EINVAL);
	CHECK_EQ(check_imm(hdr(PERCS_PKT_PAD, 0)), -EINVAL);
}

FM_TEST(pkt_check_imm_in_fifo_einval)
{
	CHECK_EQ(check_fifo(hdr(PERCS_PKT_IMM, 0)), -EINVAL);
	CHECK_EQ(check_fifo(hdr(PERCS_PKT_IMM, 96)), -EINVAL);
}

FM_TEST(pkt_check_non_imm_in_slot_einval)
{
	unsigned int kind;

	for (kind = 0; kind <= PERCS_PKT_KIND_MAX; kind++) {
		if (kind == PERCS_PKT_IMM)
			continue;
		CHECK_CTX(check_imm(hdr(kind, 0)) == -EINVAL, "kind %u", kind);
	}
}

FM_TEST(pkt_check_unknown_flags_einval)
{
	struct percs_pkt_hdr h = hdr(PERCS_PKT_FIFO, 0);
	unsigned int bit;

	for (bit = 0; bit < 16; bit++) {
		if ((1U << bit) & PERCS_PKT_F_ALL)
			continue;
		h.flags = 1U << bit;
		CHECK_CTX(check_fifo(h) == -EINVAL, "flag bit %u", bit);
		h.kind = PERCS_PKT_IMM;
		CHECK_CTX(check_imm(h) == -EINVAL, "flag bit %u", bit);
		h.kind = PERCS_PKT_FIFO;
	}
	h.flags = 0xffff;
	CHECK_EQ(check_fifo(h), -EINVAL);
}

FM_TEST(pkt_check_unknown_route_einval)
{
	struct percs_pkt_hdr h = hdr(PERCS_PKT_FIFO, 0);
	unsigned int route;

	for (route = PERCS_ROUTE_MAX + 1; route <= 255; route++) {
		h.route = route;
		CHECK_CTX(check_fifo(h) == -EINVAL, "route %u", route);
	}
	h = hdr(PERCS_PKT_IMM, 0);
	h.route = PERCS_ROUTE_MAX + 1;
	CHECK_EQ(check_imm(h), -EINVAL);
}

FM_TEST(pkt_check_route_arg_einval)
{
	struct percs_pkt_hdr h = hdr(PERCS_PKT_FIFO, 0);
	unsigned int route;

	h.route_arg = 1;
	for (route = 0; route <= PERCS_ROUTE_MAX; route++) {
		h.route = route;
		CHECK_CTX(check_fifo(h) ==
			  (route == PERCS_ROUTE_SW_INDIRECT ? 0 : -EINVAL),
			  "route %u", route);
	}
	h = hdr(PERCS_PKT_IMM, 0);
	h.route_arg = 0x8000;
	CHECK_EQ(check_imm(h), -EINVAL);
}

FM_TEST(pkt_check_dst_reserved_einval)
{
	struct percs_pkt_hdr h = hdr(PERCS_PKT_FIFO, 0);
	unsigned int v;

	for (v = 1; v <= 255; v++) {
		h.dst.reserved = v;
		CHECK_CTX(check_fifo(h) == -EINVAL, "reserved %u", v);
	}
	h = hdr(PERCS_PKT_IMM, 0);
	h.dst.reserved = 1;
	CHECK_EQ(check_imm(h), -EINVAL);
}

FM_TEST(pkt_check_fifo_too_long_emsgsize)
{
	unsigned int len;

	for (len = PERCS_MAX_PAYLOAD + 1; len <= 0xffff; len++)
		CHECK_CTX(check_fifo(hdr(PERCS_PKT_FIFO, len)) == -EMSGSIZE,
			  "length %u", len);
}

FM_TEST(pkt_check_imm_too_long_emsgsize)
{
	unsigned int len;

	for (len = PERCS_IMM_PAYLOAD + 1; len <= 0xffff; len++)
		CHECK_CTX(check_imm(hdr(PERCS_PKT_IMM, len)) == -EMSGSIZE,
			  "length %u", len);
}

FM_TEST(pkt_check_unsupported_kinds_eopnotsupp)
{
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(unsupported_kinds); i++) {
		unsigned int kind = unsupported_kinds[i];

		CHECK_CTX(check_fifo(hdr(kind, 0)) == -EOPNOTSUPP,
			  "kind %u", kind);
		CHECK_CTX(check_fifo(hdr(kind, PERCS_MAX_PAYLOAD)) ==
			  -EOPNOTSUPP, "kind %u", kind);
	}
}

/* A malformed header is EINVAL whatever its size; size before support. */
FM_TEST(pkt_check_error_precedence)
{
	struct percs_pkt_hdr h;
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(unsupported_kinds); i++) {
		unsigned int kind = unsupported_kinds[i];

		h = hdr(kind, PERCS_MAX_PAYLOAD + 1);
		CHECK_CTX(check_fifo(h) == -EMSGSIZE, "kind %u", kind);
		h.flags = 0x8000;
		CHECK_CTX(check_fifo(h) == -EINVAL, "kind %u", kind);
		CHECK_CTX(check_imm(h) == -EINVAL, "kind %u", kind);
	}
	h = hdr(PERCS_PKT_FIFO, 0xffff);
	h.dst.reserved = 1;
	CHECK_EQ(check_fifo(h), -EINVAL);
	h = hdr(PERCS_PKT_IMM, 0xffff);
	CHECK_EQ(check_fifo(h), -EINVAL);
	h = hdr(PERCS_PKT_FIFO, 200);
	CHECK_EQ(check_imm(h), -EINVAL);
}

FM_TEST(pkt_pad_length_values)
{
	unsigned int u;

	CHECK_EQ(fm_pkt_pad_length(1), 96);
	CHECK_EQ(fm_pkt_pad_length(2), 224);
	CHECK_EQ(fm_pkt_pad_length(15), 1888);
	CHECK_EQ(fm_pkt_pad_length(PERCS_MAX_PKT_UNITS), PERCS_MAX_PAYLOAD);
	CHECK_EQ(fm_pkt_pad_length(0), -EINVAL);
	CHECK_EQ(fm_pkt_pad_length(PERCS_MAX_PKT_UNITS + 1), -EINVAL);
	CHECK_EQ(fm_pkt_pad_length(0xffffffff), -EINVAL);
	for (u = 1; u <= PERCS_MAX_PKT_UNITS; u++)
		CHECK_CTX(fm_pkt_units(fm_pkt_pad_length(u)) == u,
			  "units %u", u);
}

FM_TEST(pkt_kind_names)
{
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_PAD), "pad");
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_FIFO), "fifo");
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_IMM), "imm");
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_IP), "ip");
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_RDMA), "rdma");
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_ATOMIC), "atomic");
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_COLL), "coll");
	CHECK_STR(fm_pkt_kind_name(PERCS_PKT_KIND_MAX + 1), "?");
	CHECK_STR(fm_pkt_kind_name(0xffffffff), "?");
}
