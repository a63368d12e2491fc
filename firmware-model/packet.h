/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: packet formats.
 *
 * Sizes of packets in 128-byte units and the validation of a send header,
 * as the HFI does it when it reads a descriptor from a send FIFO or an
 * immediate-send slot.  The caller reads the header once into its own
 * memory and passes that copy.
 */
#ifndef _PERCS_FM_PACKET_H
#define _PERCS_FM_PACKET_H

#include "fm_env.h"

unsigned int fm_pkt_units(unsigned int length);
int fm_pkt_check(const struct percs_pkt_hdr *h, bool immediate);
int fm_pkt_pad_length(unsigned int units);
const char *fm_pkt_kind_name(unsigned int kind);

#endif /* _PERCS_FM_PACKET_H */
