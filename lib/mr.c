// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: memory registration (the NMMU).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

int percs_mr_reg(struct percs_window *w, void *addr, size_t len,
		 uint32_t access, uint32_t *handle)
{
	return percs_mr_reg_flags(w, addr, len, access, 0, handle);
}

int percs_mr_reg_flags(struct percs_window *w, void *addr, size_t len,
		       uint32_t access, uint32_t flags, uint32_t *handle)
{
	struct percs_mr_register r;

	if (!w || !handle)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = flags;
	r.access = access;
	r.addr = (uint64_t)(uintptr_t)addr;
	r.length = len;
	if (ioctl(w->fd, PERCS_IOC_MR_REGISTER, &r) < 0)
		return -errno;
	*handle = r.handle;
	return 0;
}

int percs_mr_dereg(struct percs_window *w, uint32_t handle)
{
	struct percs_mr_deregister d;

	if (!w)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.handle = handle;
	if (ioctl(w->fd, PERCS_IOC_MR_DEREGISTER, &d) < 0)
		return -errno;
	return 0;
}
