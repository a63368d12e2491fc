// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: error texts, opening an HFI, window layout checks.
 */
#include "unit.h"

static void test_strerror(void)
{
	static const int errs[] = {
		EINVAL, EMSGSIZE, EOPNOTSUPP, EHOSTUNREACH, EADDRNOTAVAIL,
		ECONNREFUSED, EACCES, EAGAIN, ENOENT, ERANGE, EPERM, EFAULT,
		ETIMEDOUT,
	};

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *s = percs_strerror(-errs[i]);

		CHECK(s && *s);
		CHECK(!strcmp(s, percs_strerror(errs[i])));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(s, percs_strerror(-errs[j])));
	}
	CHECK(strstr(percs_strerror(-ECONNREFUSED), "not reserved"));
	CHECK(strstr(percs_strerror(-EACCES), "job key"));
	CHECK(strstr(percs_strerror(-ENOENT), "atomic"));
	CHECK(strstr(percs_strerror(-ERANGE), "atomic"));
	CHECK(strstr(percs_strerror(-EPERM), "atomic"));
	CHECK(strstr(percs_strerror(-EINVAL), "multiple of its width"));
	CHECK(strstr(percs_strerror(-EFAULT), "not mapped"));
	CHECK(strstr(percs_strerror(-ETIMEDOUT), "retransmission"));
	CHECK(!strcmp(percs_strerror(-ENOMEM), strerror(ENOMEM)));
	CHECK(!strcmp(percs_strerror(0), "Success"));
}

/* Device paths: PERCS_DEV_DIR, N = hub * 2 + unit, ENOENT, bad unit. */
static void test_hfi_open(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX", path[64];
	struct percs_hfi *hfi = NULL;
	struct percs_hfi_info info;
	int fd;

	REQUIRE(mkdtemp(dir));
	setenv("PERCS_DEV_DIR", dir, 1);
	CHECK_EQ(percs_hfi_open(1, 1, &hfi), -ENOENT);
	CHECK_EQ(percs_hfi_open(0, 2, &hfi), -EINVAL);
	CHECK_EQ(percs_hfi_open(0, 0, NULL), -EINVAL);
	snprintf(path, sizeof(path), "%s/percs-hfi3", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	REQUIRE(fd >= 0);
	close(fd);
	CHECK_EQ(percs_hfi_open(1, 1, &hfi), 0);
	REQUIRE(hfi);
	CHECK(percs_hfi_fd(hfi) >= 0);
	CHECK(fcntl(percs_hfi_fd(hfi), F_GETFD) & FD_CLOEXEC);
	/* A plain file is no HFI: the ioctl fails cleanly. */
	CHECK_EQ(percs_hfi_info(hfi, &info), -ENOTTY);
	percs_hfi_close(hfi);
	percs_hfi_close(NULL);
	percs_window_release(NULL);
	unlink(path);
	rmdir(dir);
}

/* The layout check refuses what the ring code cannot work with. */
static void test_layout_checks(void)
{
	struct fwin *a = fwin_new(1, 4096, 4096, 0);
	struct percs_window *w;
	struct lp_layout l = {
		.send_fifo = a->send, .send_fifo_size = 4096,
		.recv_fifo = a->recv, .recv_fifo_size = 4096,
		.doorbell = a->db, .status = a->st,
		.imm = a->imm, .imm_slots = PERCS_IMM_SLOTS,
		.cq = a->cq, .cq_entries = PERCS_CQ_ENTRIES,
	};

	CHECK_EQ(lp_window_new(&l, -1, &w), 0);
	percs_window_release(w);
	l.send_fifo_size = 6144;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.send_fifo_size = 2048;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.send_fifo_size = 4096;
	l.cq_entries = 100;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.cq_entries = 256;
	l.imm_slots = 0;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	l.imm_slots = 32;
	l.status = NULL;
	CHECK_EQ(lp_window_new(&l, -1, &w), -EPROTO);
	fwin_free(a);
}

const struct unit_test api_tests[] = {
	{ "strerror: texts for the send, RDMA and atomic errors", test_strerror },
	{ "hfi: device path, ENOENT, plain file", test_hfi_open },
	{ "window: layout checks", test_layout_checks },
	{ NULL, NULL }
};
