/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: the HFI's atomic unit - descriptor rules and the
 * arithmetic of each operation.
 */
#ifndef _PERCS_FM_ATOMIC_H
#define _PERCS_FM_ATOMIC_H

#include "fm_env.h"

/**
 * struct fm_atomic_desc - an atomic descriptor, checked and decoded
 * @ext: the extension header as posted
 * @compare: the comparand of a CSWAP, else 0
 * @ops: the operations; @ext.count of them are valid
 */
struct fm_atomic_desc {
	struct percs_atomic_ext ext;
	u64 compare;
	struct percs_atomic_op ops[PERCS_ATOMIC_MAX_PACKED];
};

int fm_atomic_parse(const struct percs_pkt_hdr *h, const void *payload,
		    struct fm_atomic_desc *d);
int fm_atomic_check_addr(u64 addr, unsigned int width);
u64 fm_atomic_mask(unsigned int width);
u64 fm_atomic_apply(unsigned int op, unsigned int width, u64 old,
		    u64 operand, u64 compare);
const char *fm_atomic_op_name(unsigned int op);

#endif /* _PERCS_FM_ATOMIC_H */
