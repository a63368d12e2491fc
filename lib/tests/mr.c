// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: memory registration against the fake NMMU.
 */
#include "unit.h"

static struct percs_window *fake_window(struct percs_hfi **hfi, char *dir)
{
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
	};
	struct percs_window *w;

	*hfi = fake_hfi_open(dir);
	if (!*hfi || percs_window_reserve(*hfi, &attr, &w))
		return NULL;
	return w;
}

/* Register sends the range and rights as given; the handle comes back. */
static void test_mr_reg_dereg(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t *buf = malloc(8192);
	struct percs_hfi *hfi;
	struct percs_window *w = fake_window(&hfi, dir);
	uint32_t h1 = 0, h2 = 0, h3 = 0;

	REQUIRE(w && buf);
	CHECK_EQ(percs_mr_reg(w, buf + 3, 8189, PERCS_ACCESS_REMOTE_READ |
			      PERCS_ACCESS_REMOTE_WRITE, &h1), 0);
	CHECK_EQ(R.mr_seen.size, sizeof(struct percs_mr_register));
	CHECK_EQ(R.mr_seen.flags, 0);
	CHECK_EQ(R.mr_seen.handle, 0);
	CHECK_EQ(R.mr_seen.addr, (uintptr_t)(buf + 3));
	CHECK_EQ(R.mr_seen.length, 8189);
	CHECK_EQ(R.mr_seen.access,
		 PERCS_ACCESS_REMOTE_READ | PERCS_ACCESS_REMOTE_WRITE);
	CHECK_EQ(h1, 1u << 16 | 1);

	/* Every right, and none (a local source): passed through. */
	CHECK_EQ(percs_mr_reg(w, buf, 1, PERCS_ACCESS_ALL, &h2), 0);
	CHECK_EQ(R.mr_seen.access, PERCS_ACCESS_ALL);
	CHECK_EQ(R.mr_seen.length, 1);
	CHECK_EQ(percs_mr_reg(w, buf, 4096, 0, &h3), 0);
	CHECK_EQ(R.mr_seen.access, 0);
	CHECK(h2 != h1 && h3 != h1 && h3 != h2);

	CHECK_EQ(percs_mr_dereg(w, h1), 0);
	CHECK_EQ(R.dereg_seen.size, sizeof(struct percs_mr_deregister));
	CHECK_EQ(R.dereg_seen.flags, 0);
	CHECK_EQ(R.dereg_seen.reserved, 0);
	CHECK_EQ(R.dereg_seen.handle, h1);
	/* Gone: a second deregistration and a stale handle are -ENOENT. */
	CHECK_EQ(percs_mr_dereg(w, h1), -ENOENT);
	CHECK_EQ(percs_mr_reg(w, buf, 64, 0, &h1), 0);
	CHECK_EQ(h1 & 0xffff, 1);		/* the slot again ... */
	CHECK_EQ(percs_mr_dereg(w, 1u << 16 | 1), -ENOENT); /* ... not the handle */
	CHECK_EQ(percs_mr_dereg(w, h1), 0);
	CHECK_EQ(percs_mr_dereg(w, h2), 0);
	CHECK_EQ(percs_mr_dereg(w, h3), 0);
	CHECK_EQ(percs_mr_dereg(w, 0), -ENOENT);
	percs_window_release(w);
	percs_hfi_close(hfi);
	free(buf);
}

/* Kernel errors come back as -errno; bad arguments never reach it. */
static void test_mr_errors(void)
{
	static const int errs[] = { ENOMEM, EFAULT, ENOSPC, EINVAL, EPERM };
	char dir[] = "/tmp/percs-unit-XXXXXX";
	uint8_t buf[64];
	struct percs_hfi *hfi;
	struct percs_window *w = fake_window(&hfi, dir);
	uint32_t h = 0xdeadbeef;
	int calls;

	REQUIRE(w);
	for (unsigned int i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		R.mr_errno = errs[i];
		CHECK_EQ(percs_mr_reg(w, buf, sizeof(buf), 0, &h), -errs[i]);
		CHECK_EQ(h, 0xdeadbeef);
	}
	R.mr_errno = 0;
	/* What the library does not check, the kernel does: passed as is. */
	CHECK_EQ(percs_mr_reg(w, buf, 0, 0, &h), -EINVAL);
	CHECK_EQ(R.mr_seen.length, 0);
	CHECK_EQ(percs_mr_reg(w, buf, SIZE_MAX, 0, &h), -EINVAL);
	CHECK_EQ(R.mr_seen.length, (uint64_t)SIZE_MAX);
	CHECK_EQ(percs_mr_reg(w, buf, 8, 1u << 4, &h), -EINVAL);
	CHECK_EQ(R.mr_seen.access, 1u << 4);
	CHECK_EQ(h, 0xdeadbeef);

	calls = R.mr_calls;
	CHECK_EQ(percs_mr_reg(NULL, buf, 8, 0, &h), -EINVAL);
	CHECK_EQ(percs_mr_reg(w, buf, 8, 0, NULL), -EINVAL);
	CHECK_EQ(percs_mr_dereg(NULL, 1), -EINVAL);
	CHECK_EQ(R.mr_calls, calls);
	CHECK_EQ(h, 0xdeadbeef);
	percs_window_release(w);
	percs_hfi_close(hfi);
}

const struct unit_test mr_tests[] = {
	{ "mr: register passes range and rights, returns the handle; deregister", test_mr_reg_dereg },
	{ "mr: kernel errors come back as -errno, bad arguments never reach it", test_mr_errors },
	{ NULL, NULL }
};
