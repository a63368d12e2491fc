// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: RDMA descriptors and their bad arguments.
 */
#include "unit.h"

/* The descriptors percs_rdma_*() compose, field by field; bad arguments. */
static void test_rdma_descriptors(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct fwin *b = fwin_new(2, 4096, 4096, 0);
	uint8_t data[PERCS_RDMA_FIFO_MAX + 1], local[64];
	const struct percs_rdma_ext *e;
	struct percs_rdma_wr wr = {
		.op = PERCS_RDMA_OP_FIFO_WRITE, .route = PERCS_ROUTE_SW_INDIRECT,
		.route_arg = 2, .flags = PERCS_RDMA_F_NOTIFY_TARGET,
		.dst = b->addr, .remote_handle = 0x10005,
		.remote_addr = 0x7000, .local_addr = data, .len = 100,
		.user_data = 0x1122334455667788ULL,
	};

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	H.paused = true;
	CHECK_EQ(percs_rdma_write(a->w, &b->addr, 0x20003, 0x9000, 0x30001,
				  local, 12345, PERCS_RDMA_F_FENCE, 42), 0);
	CHECK_EQ(send_unit(a, 0)->kind, PERCS_PKT_RDMA);
	CHECK_EQ(send_unit(a, 0)->length, sizeof(*e));
	CHECK_EQ(send_unit(a, 0)->dst.window, 2);
	e = (const void *)(send_unit(a, 0) + 1);
	CHECK_EQ(e->op, PERCS_RDMA_OP_WRITE);
	CHECK_EQ(e->flags, PERCS_RDMA_F_FENCE);
	CHECK_EQ(e->handle, 0x20003);
	CHECK_EQ(e->local_handle, 0x30001);
	CHECK_EQ(e->remote_addr, 0x9000);
	CHECK_EQ(e->local_addr, (uintptr_t)local);
	CHECK_EQ(e->len, 12345);
	CHECK_EQ(e->user_data, 42);
	CHECK_EQ(e->reserved | e->reserved2, 0);
	CHECK_EQ(percs_rdma_read(a->w, &b->addr, 5, 6, 7, local, 8, 0, 9), 0);
	e = (const void *)(send_unit(a, 1) + 1);
	CHECK_EQ(e->op, PERCS_RDMA_OP_READ);
	CHECK_EQ(e->local_handle, 7);
	CHECK_EQ(percs_rdma_post(a->w, &wr), 0);
	CHECK_EQ(send_unit(a, 2)->length, sizeof(*e) + 100);
	CHECK_EQ(send_unit(a, 2)->route, PERCS_ROUTE_SW_INDIRECT);
	CHECK_EQ(send_unit(a, 2)->route_arg, 2);
	e = (const void *)(send_unit(a, 2) + 1);
	CHECK_EQ(e->op, PERCS_RDMA_OP_FIFO_WRITE);
	CHECK_EQ(e->local_handle, 0);
	CHECK_EQ(e->local_addr, 0);
	CHECK_EQ(e->user_data, 0x1122334455667788ULL);
	CHECK_EQ(memcmp(e + 1, data, 100), 0);
	wr.len = PERCS_RDMA_FIFO_MAX + 1;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EMSGSIZE);
	wr.len = 0;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	wr.len = 1;
	wr.local_addr = NULL;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	wr.local_addr = data;
	wr.op = PERCS_RDMA_OP_MAX + 1;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	wr.op = PERCS_RDMA_OP_WRITE;
	wr.flags = 0x80;
	CHECK_EQ(percs_rdma_post(a->w, &wr), -EINVAL);
	CHECK_EQ(percs_rdma_post(NULL, &wr), -EINVAL);
	CHECK_EQ(percs_rdma_post(a->w, NULL), -EINVAL);
	CHECK_EQ(percs_rdma_write(a->w, NULL, 1, 2, 3, local, 4, 0, 0),
		 -EINVAL);
	H.paused = false;
	fwin_free(a);
	fwin_free(b);
}

const struct unit_test rdma_tests[] = {
	{ "rdma: descriptors and bad arguments", test_rdma_descriptors },
	{ NULL, NULL }
};
