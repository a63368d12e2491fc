// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: exchanges among PEs over the messaging endpoint
 * (linear: every member talks to every other; the jobs this emulation
 * runs have tens of PEs, and the CAU takes the reductions it can).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shmem_internal.h"
#include "xchg.h"

/* Wait for and free @n requests; the first error is returned. */
static int wait_all(struct percs_msg_req **reqs, int n)
{
	int ret = 0;

	for (int i = 0; i < n; i++) {
		struct percs_msg_status st;
		int r;

		if (!reqs[i])
			continue;
		r = percs_msg_wait(reqs[i], &st);
		if (!r && st.error)
			r = st.error;
		if (r && !ret)
			ret = r;
		percs_msg_req_free(reqs[i]);
	}
	return ret;
}

int shmem_xchg_allgatherv(const struct shmem_pes *set, int n, int me,
			  const void *send, const size_t *lens,
			  const size_t *offs, void *recv, uint32_t ctx, int tag)
{
	struct percs_msg_req **reqs = calloc(2 * (size_t)n, sizeof(*reqs));
	int ret = 0;

	if (!reqs)
		return -ENOMEM;
	memmove((char *)recv + offs[me], send, lens[me]);
	for (int i = 0; i < n && !ret; i++) {
		if (i == me)
			continue;
		ret = percs_msg_irecv(shmem_g.m, (char *)recv + offs[i], lens[i],
				      shmem_pes_pe(set, i), tag, ctx, &reqs[2 * i]);
		if (!ret)
			ret = percs_msg_isend(shmem_g.m, send, lens[me],
					      (unsigned int)shmem_pes_pe(set, i),
					      tag, ctx, 0, &reqs[2 * i + 1]);
	}
	if (!ret)
		ret = wait_all(reqs, 2 * n);
	else
		wait_all(reqs, 2 * n);
	free(reqs);
	return ret;
}

int shmem_xchg_allgather(const struct shmem_pes *set, int n, int me,
			 const void *send, size_t len, void *recv,
			 uint32_t ctx, int tag)
{
	size_t *lens = calloc(2 * (size_t)n, sizeof(*lens));
	int ret;

	if (!lens)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		lens[i] = len;
		lens[n + i] = (size_t)i * len;
	}
	ret = shmem_xchg_allgatherv(set, n, me, send, lens, lens + n, recv,
				    ctx, tag);
	free(lens);
	return ret;
}

int shmem_xchg_alltoall(const struct shmem_pes *set, int n, int me,
			const void *send, size_t len, void *recv,
			uint32_t ctx, int tag)
{
	struct percs_msg_req **reqs = calloc(2 * (size_t)n, sizeof(*reqs));
	const char *s = send;
	char *r = recv;
	int ret = 0;

	if (!reqs)
		return -ENOMEM;
	memmove(r + (size_t)me * len, s + (size_t)me * len, len);
	for (int i = 0; i < n && !ret; i++) {
		if (i == me)
			continue;
		ret = percs_msg_irecv(shmem_g.m, r + (size_t)i * len, len,
				      shmem_pes_pe(set, i), tag, ctx, &reqs[2 * i]);
		if (!ret)
			ret = percs_msg_isend(shmem_g.m, s + (size_t)i * len, len,
					      (unsigned int)shmem_pes_pe(set, i),
					      tag, ctx, 0, &reqs[2 * i + 1]);
	}
	if (!ret)
		ret = wait_all(reqs, 2 * n);
	else
		wait_all(reqs, 2 * n);
	free(reqs);
	return ret;
}

int shmem_xchg_gather(const struct shmem_pes *set, int n, int me, int root,
		      const void *send, size_t len, void *recv, uint32_t ctx,
		      int tag)
{
	struct percs_msg_req **reqs;
	int ret = 0;

	if (me != root) {
		struct percs_msg_req *r;

		ret = percs_msg_isend(shmem_g.m, send, len,
				      (unsigned int)shmem_pes_pe(set, root), tag,
				      ctx, 0, &r);
		return ret ? ret : wait_all(&r, 1);
	}
	memmove((char *)recv + (size_t)me * len, send, len);
	reqs = calloc((size_t)n, sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	for (int i = 0; i < n && !ret; i++)
		if (i != me)
			ret = percs_msg_irecv(shmem_g.m, (char *)recv + (size_t)i * len,
					      len, shmem_pes_pe(set, i), tag, ctx,
					      &reqs[i]);
	if (!ret)
		ret = wait_all(reqs, n);
	else
		wait_all(reqs, n);
	free(reqs);
	return ret;
}

int shmem_xchg_bcast(const struct shmem_pes *set, int n, int me, int root,
		     void *buf, size_t len, uint32_t ctx, int tag)
{
	struct percs_msg_req **reqs;
	int ret = 0;

	if (n == 1)
		return 0;
	if (me != root) {
		struct percs_msg_req *r;

		ret = percs_msg_irecv(shmem_g.m, buf, len, shmem_pes_pe(set, root),
				      tag, ctx, &r);
		return ret ? ret : wait_all(&r, 1);
	}
	reqs = calloc((size_t)n, sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	for (int i = 0; i < n && !ret; i++)
		if (i != me)
			ret = percs_msg_isend(shmem_g.m, buf, len,
					      (unsigned int)shmem_pes_pe(set, i),
					      tag, ctx, 0, &reqs[i]);
	if (!ret)
		ret = wait_all(reqs, n);
	else
		wait_all(reqs, n);
	free(reqs);
	return ret;
}

int shmem_xchg_barrier(const struct shmem_pes *set, int n, int me,
		       uint32_t ctx, int tag)
{
	char token = 0, got;

	for (int d = 1; d < n; d *= 2) {
		struct percs_msg_req *r[2] = { NULL, NULL };
		int ret;

		ret = percs_msg_irecv(shmem_g.m, &got, 1,
				      shmem_pes_pe(set, (me - d + n) % n), tag,
				      ctx, &r[0]);
		if (!ret)
			ret = percs_msg_isend(shmem_g.m, &token, 1,
					      (unsigned int)shmem_pes_pe(set, (me + d) % n),
					      tag, ctx, 0, &r[1]);
		if (ret) {
			wait_all(r, 2);
			return ret;
		}
		ret = wait_all(r, 2);
		if (ret)
			return ret;
	}
	return 0;
}
