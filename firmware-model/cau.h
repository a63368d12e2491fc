/* SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1-or-later */
/*
 * percs firmware model: the ALU of the Collective Acceleration Unit - which
 * op and type combinations a reduction may use, and how two contributions
 * combine.
 *
 * In the kernel, fm_cau_combine() of a floating-point SUM or PROD runs SSE
 * instructions: call it between kernel_fpu_begin() and kernel_fpu_end()
 * whenever fm_cau_needs_fpu() says so.  Every other function here uses
 * general-purpose registers only and may be called from any context.
 */
#ifndef _PERCS_FM_CAU_H
#define _PERCS_FM_CAU_H

#include "fm_env.h"

int fm_cau_check(unsigned int op, unsigned int type, unsigned int count);
unsigned int fm_cau_elem_size(unsigned int type);
bool fm_cau_needs_fpu(unsigned int op, unsigned int type);
void fm_cau_combine(unsigned int op, unsigned int type, unsigned int count,
		    void *acc, const void *in);
const char *fm_cau_op_name(unsigned int op);
const char *fm_cau_type_name(unsigned int type);

#endif /* _PERCS_FM_CAU_H */
