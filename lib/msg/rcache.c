// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-msg: the registrations of the rendezvous.
 *
 * A rendezvous registers the sender's buffer for remote reads and the
 * receiver's for its own read to land in.  Pinning and unpinning a
 * buffer's pages for every message cost more than moving a MiB, so the
 * endpoint keeps them in a registration cache (percs_mr_cache_*(), which
 * the kernel keeps honest when the application unmaps or remaps a buffer).
 * PERCS_MSG_RCACHE sets the number of registrations it keeps (0: no
 * cache, register for each message), PERCS_MSG_RCACHE_MB the MiB they may
 * pin together.
 */
#include <errno.h>
#include <stdlib.h>

#include "msg_internal.h"

/* An unsigned environment value, or @def when unset; -1 when malformed. */
static long long env_count(const char *name, long long def)
{
	const char *s = getenv(name);
	char *end;
	long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0)
		return -1;
	return v;
}

int pm_rcache_open(struct percs_msg *m)
{
	long long entries = env_count("PERCS_MSG_RCACHE", 0);
	long long mb = env_count("PERCS_MSG_RCACHE_MB", 0);

	if (entries < 0 || mb < 0 || mb > (long long)(SIZE_MAX >> 20))
		return -EINVAL;
	if (getenv("PERCS_MSG_RCACHE") && !entries)
		return 0;	/* asked for no cache */
	return percs_mr_cache_new(m->w, (size_t)entries, (size_t)mb << 20,
				  &m->rcache);
}

int pm_mr_get(struct percs_msg *m, void *buf, size_t len, uint32_t access,
	      uint32_t *handle)
{
	if (!m->rcache)
		return percs_mr_reg(m->w, buf, len, access, handle);
	return percs_mr_cache_get(m->rcache, buf, len, access, handle);
}

void pm_mr_put(struct percs_msg *m, uint32_t handle)
{
	if (!m->rcache)
		percs_mr_dereg(m->w, handle);
	else
		percs_mr_cache_put(m->rcache, handle);
}
