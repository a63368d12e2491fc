// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: packet formats.
 *
 * Which kinds of packet exist, where each may be posted and whether this
 * module executes it is one table, fm_pkt_kinds[]: a later packet kind is
 * enabled by filling in its row.
 */
#include "packet.h"

/* fm_pkt_kind_info.flags */
#define FM_KIND_IN_FIFO		(1U << 0)	/* valid in a send FIFO */
#define FM_KIND_IN_IMM		(1U << 1)	/* valid in an immediate slot */
#define FM_KIND_EXEC		(1U << 2)	/* executed by this module */

/**
 * struct fm_pkt_kind_info - what the HFI knows about one packet kind
 * @name: short name for logs and tools
 * @flags: FM_KIND_*
 */
struct fm_pkt_kind_info {
	const char *name;
	u8 flags;
};

static const struct fm_pkt_kind_info fm_pkt_kinds[PERCS_PKT_KIND_MAX + 1] = {
	/* PAD entries are consumed by the FIFO reader, never checked here. */
	[PERCS_PKT_PAD]		= { "pad",	0 },
	[PERCS_PKT_FIFO]	= { "fifo",	FM_KIND_IN_FIFO | FM_KIND_EXEC },
	[PERCS_PKT_IMM]		= { "imm",	FM_KIND_IN_IMM | FM_KIND_EXEC },
	[PERCS_PKT_IP]		= { "ip",	FM_KIND_IN_FIFO },
	[PERCS_PKT_RDMA]	= { "rdma",	FM_KIND_IN_FIFO | FM_KIND_EXEC },
	[PERCS_PKT_ATOMIC]	= { "atomic",	FM_KIND_IN_FIFO | FM_KIND_EXEC },
	[PERCS_PKT_COLL]	= { "coll",	FM_KIND_IN_FIFO | FM_KIND_EXEC },
};

/**
 * fm_pkt_units() - FIFO units a packet occupies
 * @length: payload bytes after the header (&percs_pkt_hdr.length)
 *
 * Return: the number of 128-byte units (%PERCS_FLIT_SIZE) taken by the
 * header and @length payload bytes, padded up to a whole unit.  This is
 * also the packet's size in ISR flits.
 */
unsigned int fm_pkt_units(unsigned int length)
{
	return FM_DIV_ROUND_UP(PERCS_PKT_HDR_SIZE + length, PERCS_FLIT_SIZE);
}

/**
 * fm_pkt_check() - validate a send header
 * @h: the header, already copied out of user-writable memory
 * @immediate: false for a send FIFO entry, true for an immediate slot
 *
 * Checks every field the sender controls except the destination, which
 * only the device model can judge.  @h->src and @h->job_key are ignored:
 * the HFI overwrites them.  Route modes other than %PERCS_ROUTE_DIRECT are
 * accepted here; the route function decides whether it can follow them.
 *
 * Return: 0 if the packet may be sent;
 * -EINVAL for an unknown kind, a kind not allowed on this path (a PAD,
 * which the FIFO reader handles itself, an IMM in a FIFO, anything but
 * IMM in an immediate slot), unknown flags, an unknown route mode, a
 * non-zero @h->dst.reserved, or a non-zero @h->route_arg with a route mode
 * other than %PERCS_ROUTE_SW_INDIRECT;
 * -EMSGSIZE for a length above %PERCS_MAX_PAYLOAD (FIFO) or
 * %PERCS_IMM_PAYLOAD (immediate);
 * -EOPNOTSUPP for a valid packet of a kind this module does not execute.
 */
int fm_pkt_check(const struct percs_pkt_hdr *h, bool immediate)
{
	unsigned int where = immediate ? FM_KIND_IN_IMM : FM_KIND_IN_FIFO;
	unsigned int max_len = immediate ? PERCS_IMM_PAYLOAD
					 : PERCS_MAX_PAYLOAD;
	const struct fm_pkt_kind_info *k;

	if (h->kind >= FM_ARRAY_SIZE(fm_pkt_kinds))
		return -EINVAL;
	k = &fm_pkt_kinds[h->kind];
	if (!(k->flags & where))
		return -EINVAL;
	if (h->flags & ~PERCS_PKT_F_ALL)
		return -EINVAL;
	if (h->route > PERCS_ROUTE_MAX)
		return -EINVAL;
	if (h->route_arg && h->route != PERCS_ROUTE_SW_INDIRECT)
		return -EINVAL;
	if (h->dst.reserved)
		return -EINVAL;
	if (h->length > max_len)
		return -EMSGSIZE;
	if (!(k->flags & FM_KIND_EXEC))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * fm_pkt_pad_length() - &percs_pkt_hdr.length of a PAD entry
 * @units: units the pad fills, header included: 1..%PERCS_MAX_PKT_UNITS
 *
 * A pad fills the tail of a FIFO that the next packet does not fit in, so
 * it is never larger than a packet.
 *
 * Return: @units * 128 - 32, or -EINVAL if @units is out of range.
 */
int fm_pkt_pad_length(unsigned int units)
{
	if (units < 1 || units > PERCS_MAX_PKT_UNITS)
		return -EINVAL;
	return units * PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE;
}

/**
 * fm_pkt_kind_name() - short name of a packet kind
 * @kind: enum percs_pkt_kind
 *
 * Return: "pad", "fifo", "imm", "ip", "rdma", "atomic", "coll", or "?"
 * for a value outside the enum.
 */
const char *fm_pkt_kind_name(unsigned int kind)
{
	if (kind >= FM_ARRAY_SIZE(fm_pkt_kinds))
		return "?";
	return fm_pkt_kinds[kind].name;
}
