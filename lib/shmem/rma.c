// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: put, get, fence and quiet over the RMA window's RDMA.
 *
 * A put of at most PERCS_RDMA_FIFO_MAX bytes (256 from symmetric memory)
 * travels inside its descriptor (FIFO write): the source is copied at
 * posting, so even a blocking put returns at once.  Larger ones are RDMA
 * writes from the source when it is
 * symmetric memory (registered), else through the registered bounce
 * buffer; a get is an RDMA read into the destination (or the bounce
 * buffer).  Every descriptor completes with one CQ entry; shmem_g.pending
 * counts those not yet seen.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "shmem_internal.h"

#define RMA_SPINS	200	/* CQ checks between kicks before sleeping */
#define SHMEM_FIFO_PUT_MAX	256	/* FIFO writes from registered memory */

/* user_data: tag, then the op and the target PE for error messages. */
static uint64_t rma_ud(unsigned int op, int pe)
{
	return (uint64_t)SHMEM_UD_TAG << 32 | (uint64_t)op << 24 |
	       ((uint32_t)pe & 0xffffff);
}

static void rma_reap(const char *call)
{
	struct percs_cqe cqe[32];
	int n = percs_cq_poll(shmem_g.w, cqe, 32);

	if (n == -EOVERFLOW)
		shmem_die(call, "the RMA window's completion queue overflowed");
	if (n < 0)
		shmem_die(call, "polling completions: %s", percs_strerror(n));
	for (int i = 0; i < n; i++) {
		if (cqe[i].kind != PERCS_PKT_RDMA ||
		    cqe[i].user_data >> 32 != SHMEM_UD_TAG)
			continue;	/* a CAU tree's, already handled there */
		if (cqe[i].res)
			shmem_die(call, "an RDMA %s to PE %u failed: %s",
				  (cqe[i].user_data >> 24 & 0xff) ==
				  PERCS_RDMA_OP_READ ? "read" : "write",
				  (unsigned int)(cqe[i].user_data & 0xffffff),
				  percs_strerror(cqe[i].res));
		shmem_g.pending--;
	}
}

void shmem_rma_wait(const char *call, unsigned int max_pending)
{
	unsigned int spins = 0;

	while (shmem_g.pending > max_pending) {
		int ret;

		rma_reap(call);
		if (shmem_g.pending <= max_pending)
			break;
		if (++spins < RMA_SPINS) {
			/* Kick mode: the engine runs in our kicks. */
			ret = percs_kick(shmem_g.w, PERCS_KICK_F_SEND);
			if (ret < 0)
				shmem_die(call, "kicking the engine: %s",
					  percs_strerror(ret));
			continue;
		}
		ret = percs_wait(shmem_g.w, 1);
		if (ret < 0)
			shmem_die(call, "waiting for completions: %s",
				  percs_strerror(ret));
		sched_yield();
	}
}

static void rma_post(const char *call, struct percs_rdma_wr *wr, int pe)
{
	int tries = 0, ret;

	/* A fence orders atomics before what follows too. */
	if (shmem_g.fence_amo) {
		ret = percs_atomic_quiet(shmem_g.w);
		if (ret)
			shmem_die(call, "completing atomics for a fence: %s",
				  percs_strerror(ret));
		shmem_g.fence_amo = false;
		shmem_g.amo_inflight = false;
	}
	if (shmem_g.fence_rdma) {
		wr->flags |= PERCS_RDMA_F_FENCE;
		shmem_g.fence_rdma = false;
	}
	if (shmem_g.pending >= SHMEM_MAX_PENDING)
		shmem_rma_wait(call, SHMEM_MAX_PENDING - 1);
	wr->dst = shmem_g.wins[pe];
	wr->route = PERCS_ROUTE_DIRECT;
	wr->user_data = rma_ud(wr->op, pe);
	while ((ret = percs_rdma_post(shmem_g.w, wr)) == -EAGAIN) {
		/* Send FIFO full: let the engine drain it. */
		if (++tries > 1000)
			shmem_die(call, "the send FIFO stays full");
		rma_reap(call);
		percs_kick(shmem_g.w, PERCS_KICK_F_SEND);
		sched_yield();
	}
	if (ret)
		shmem_die(call, "posting an RDMA to PE %d: %s", pe,
			  percs_strerror(ret));
	shmem_g.pending++;
}

void shmem_put_bytes(const char *call, void *dest, const void *src,
		     size_t len, int pe, bool nbi)
{
	struct percs_rdma_wr wr;
	const struct percs_rmr *r;
	uint64_t off;
	uint32_t lh;

	shmem_need_init(call);
	r = shmem_remote(call, dest, len ? len : 1, pe, &off);
	if (!len)
		return;
	if (len && !src)
		shmem_die(call, "NULL source");
	memset(&wr, 0, sizeof(wr));
	wr.remote_handle = r->handle;
	wr.remote_addr = r->base + off;
	lh = shmem_local_handle(src, len);
	/*
	 * Measured (percs-shmem-bench): a 1 KiB FIFO write moves half the
	 * bytes/s of an RDMA write, so registered sources above
	 * SHMEM_FIFO_PUT_MAX go by RDMA write.
	 */
	if (len <= (lh ? SHMEM_FIFO_PUT_MAX : PERCS_RDMA_FIFO_MAX)) {
		wr.op = PERCS_RDMA_OP_FIFO_WRITE;
		wr.local_addr = src;
		wr.len = len;
		rma_post(call, &wr, pe);
		return;
	}
	if (lh) {
		wr.op = PERCS_RDMA_OP_WRITE;
		wr.local_handle = lh;
		wr.local_addr = src;
		wr.len = len;
		rma_post(call, &wr, pe);
		if (!nbi)	/* the HFI reads the source until it completes */
			shmem_rma_wait(call, 0);
		return;
	}
	for (size_t done = 0; done < len;) {
		size_t n = len - done < SHMEM_BOUNCE_SIZE ? len - done :
			   SHMEM_BOUNCE_SIZE;

		shmem_rma_wait(call, 0);	/* the bounce buffer is free */
		memcpy(shmem_g.bounce, (const char *)src + done, n);
		wr.op = PERCS_RDMA_OP_WRITE;
		wr.local_handle = shmem_g.bounce_handle;
		wr.local_addr = shmem_g.bounce;
		wr.len = n;
		wr.remote_addr = r->base + off + done;
		wr.flags = 0;
		rma_post(call, &wr, pe);
		done += n;
	}
	if (!nbi)
		shmem_rma_wait(call, 0);
}

void shmem_get_bytes(const char *call, void *dest, const void *src,
		     size_t len, int pe, bool nbi)
{
	struct percs_rdma_wr wr;
	const struct percs_rmr *r;
	uint64_t off;
	uint32_t lh;

	shmem_need_init(call);
	r = shmem_remote(call, src, len ? len : 1, pe, &off);
	if (!len)
		return;
	if (!dest)
		shmem_die(call, "NULL destination");
	memset(&wr, 0, sizeof(wr));
	wr.op = PERCS_RDMA_OP_READ;
	wr.remote_handle = r->handle;
	lh = shmem_local_handle(dest, len);
	if (lh) {
		wr.remote_addr = r->base + off;
		wr.local_handle = lh;
		wr.local_addr = dest;
		wr.len = len;
		rma_post(call, &wr, pe);
		if (!nbi)
			shmem_rma_wait(call, 0);
		return;
	}
	/* Not registered: through the bounce buffer, completed here. */
	for (size_t done = 0; done < len;) {
		size_t n = len - done < SHMEM_BOUNCE_SIZE ? len - done :
			   SHMEM_BOUNCE_SIZE;

		wr.remote_addr = r->base + off + done;
		wr.local_handle = shmem_g.bounce_handle;
		wr.local_addr = shmem_g.bounce;
		wr.len = n;
		wr.flags = 0;
		rma_post(call, &wr, pe);
		shmem_rma_wait(call, 0);
		memcpy((char *)dest + done, shmem_g.bounce, n);
		done += n;
	}
}

void shmem_do_quiet(const char *call)
{
	int ret;

	ret = percs_atomic_quiet(shmem_g.w);
	if (ret)
		shmem_die(call, "an atomic operation failed: %s",
			  percs_strerror(ret));
	shmem_g.amo_inflight = false;
	shmem_g.fence_amo = false;
	shmem_rma_wait(call, 0);
	shmem_g.fence_rdma = false;
}

void shmem_quiet(void)
{
	shmem_need_init("shmem_quiet");
	shmem_do_quiet("shmem_quiet");
}

void shmem_fence(void)
{
	shmem_need_init("shmem_fence");
	if (shmem_g.pending)
		shmem_g.fence_rdma = true;
	if (shmem_g.amo_inflight)
		shmem_g.fence_amo = true;
}

SHMEM_CTX_DEF(void, putmem,
	{ shmem_put_bytes(call, dest, source, nelems, CTX_PE(pe), false); },
	void *dest, const void *source, size_t nelems, int pe)
SHMEM_CTX_DEF(void, getmem,
	{ shmem_get_bytes(call, dest, source, nelems, CTX_PE(pe), false); },
	void *dest, const void *source, size_t nelems, int pe)
SHMEM_CTX_DEF(void, putmem_nbi,
	{ shmem_put_bytes(call, dest, source, nelems, CTX_PE(pe), true); },
	void *dest, const void *source, size_t nelems, int pe)
SHMEM_CTX_DEF(void, getmem_nbi,
	{ shmem_get_bytes(call, dest, source, nelems, CTX_PE(pe), true); },
	void *dest, const void *source, size_t nelems, int pe)
