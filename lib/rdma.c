// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: RDMA - descriptors in the send FIFO, completions in the CQ.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/*
 * Build the descriptor of @wr: the header in @h, the extension (and the
 * FIFO_WRITE payload) in @buf.  Return: the bytes at @buf, or -EMSGSIZE.
 */
static int rdma_build(const struct percs_rdma_wr *wr, struct percs_pkt_hdr *h,
		      uint8_t buf[PERCS_MAX_PAYLOAD])
{
	struct percs_rdma_ext *e = (struct percs_rdma_ext *)buf;
	size_t len = sizeof(*e);

	memset(h, 0, sizeof(*h));
	h->kind = PERCS_PKT_RDMA;
	h->route = wr->route;
	h->route_arg = wr->route_arg;
	h->dst = wr->dst;
	h->tag = (uint32_t)wr->user_data;
	memset(e, 0, sizeof(*e));
	e->op = wr->op;
	e->flags = (uint8_t)wr->flags;
	e->handle = wr->remote_handle;
	e->remote_addr = wr->remote_addr;
	e->len = wr->len;
	e->user_data = wr->user_data;
	if (wr->op == PERCS_RDMA_OP_FIFO_WRITE) {
		if (wr->len > PERCS_RDMA_FIFO_MAX)
			return -EMSGSIZE;
		memcpy(buf + len, wr->local_addr, wr->len);
		len += wr->len;
	} else {
		e->local_handle = wr->local_handle;
		e->local_addr = (uint64_t)(uintptr_t)wr->local_addr;
	}
	return (int)len;
}

int percs_rdma_post(struct percs_window *w, const struct percs_rdma_wr *wr)
{
	uint8_t buf[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	int len, ret;

	if (!w || !wr || wr->op > PERCS_RDMA_OP_MAX ||
	    wr->flags & ~PERCS_RDMA_F_ALL || !wr->len ||
	    (wr->op == PERCS_RDMA_OP_FIFO_WRITE && !wr->local_addr))
		return -EINVAL;
	len = rdma_build(wr, &h, buf);
	if (len < 0)
		return len;
	ret = lp_cq_room(w, true);
	if (ret)
		return ret;
	ret = lp_desc_post(w, &h, buf, (size_t)len);
	lp_cq_owe(w, true, ret);
	return ret;
}

static int rdma_rw(struct percs_window *w, uint8_t op,
		   const struct percs_addr *dst, uint32_t remote_handle,
		   uint64_t remote_addr, uint32_t local_handle, void *local_addr,
		   uint64_t len, uint32_t flags, uint64_t user_data)
{
	struct percs_rdma_wr wr;

	if (!dst)
		return -EINVAL;
	memset(&wr, 0, sizeof(wr));
	wr.op = op;
	wr.flags = flags;
	wr.dst = *dst;
	wr.remote_handle = remote_handle;
	wr.remote_addr = remote_addr;
	wr.local_handle = local_handle;
	wr.local_addr = local_addr;
	wr.len = len;
	wr.user_data = user_data;
	return percs_rdma_post(w, &wr);
}

int percs_rdma_write(struct percs_window *w, const struct percs_addr *dst,
		     uint32_t remote_handle, uint64_t remote_addr,
		     uint32_t local_handle, const void *local_addr,
		     uint64_t len, uint32_t flags, uint64_t user_data)
{
	return rdma_rw(w, PERCS_RDMA_OP_WRITE, dst, remote_handle, remote_addr,
		       local_handle, (void *)(uintptr_t)local_addr, len, flags,
		       user_data);
}

int percs_rdma_read(struct percs_window *w, const struct percs_addr *dst,
		    uint32_t remote_handle, uint64_t remote_addr,
		    uint32_t local_handle, void *local_addr, uint64_t len,
		    uint32_t flags, uint64_t user_data)
{
	return rdma_rw(w, PERCS_RDMA_OP_READ, dst, remote_handle, remote_addr,
		       local_handle, local_addr, len, flags, user_data);
}
