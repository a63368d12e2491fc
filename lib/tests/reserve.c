// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: window reserve and map against the fake reserve
 * ioctl.
 */
#include "unit.h"

/*
 * A window that names no job joins the process's default job: the one
 * PERCS_JOB_FD names (checked to be a job), else a private job created
 * once.
 */
static void test_reserve_default_job(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX", num[16];
	struct percs_hfi *hfi = fake_hfi_open(dir);
	struct percs_window_attr attr = {
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
		.window = PERCS_WINDOW_ANY,
	};
	struct percs_window *w;
	int job, status, devnull;
	uint32_t key;
	pid_t pid;

	REQUIRE(hfi);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	REQUIRE(devnull > 0);
	/* A launcher's variable that names no job is an error, not ignored. */
	static const char *const bad[] = { "", "x", "0", "-3", "12x",
					   "99999999999" };
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("PERCS_JOB_FD", bad[i], 1);
		if (!*bad[i])
			continue;	/* empty: as if unset, tested below */
		CHECK_EQ(percs_job_default(hfi), -EINVAL);
	}
	snprintf(num, sizeof(num), "%d", devnull);
	setenv("PERCS_JOB_FD", num, 1);
	CHECK_EQ(percs_job_default(hfi), -EINVAL);
	R.seen.size = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EINVAL);
	CHECK_EQ(R.seen.size, 0);	/* nothing reserved */
	CHECK_EQ(R.job_creates, 0);

	/* A job fd in the variable: used as is, nothing created. */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct percs_job_create jc = { .size = sizeof(jc) };
		int fd = ioctl(percs_hfi_fd(hfi), PERCS_IOC_JOB_CREATE, &jc);

		snprintf(num, sizeof(num), "%d", fd);
		setenv("PERCS_JOB_FD", num, 1);
		R.job_creates = 0;
		_exit(percs_job_default(hfi) == fd && !R.job_creates &&
		      !percs_window_reserve(hfi, &attr, &w) &&
		      R.seen.job_fd == fd && !R.job_creates ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* No variable: one private job, created once, shared by windows. */
	unsetenv("PERCS_JOB_FD");
	job = percs_job_default(hfi);
	CHECK(job > 0);
	CHECK_EQ(job, R.job_fd);
	CHECK_EQ(percs_job_default(hfi), job);
	CHECK_EQ(R.job_creates, 1);
	CHECK_EQ(percs_job_key(job, &key), 0);
	CHECK_EQ(key, JOB_KEY);
	CHECK_EQ(percs_job_key(devnull, &key), -EINVAL);
	CHECK_EQ(percs_job_key(-1, &key), -EBADF);
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.seen.job_fd, job);
	percs_window_release(w);
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.seen.job_fd, job);
	CHECK_EQ(R.job_creates, 1);
	percs_window_release(w);
	close(devnull);
	percs_hfi_close(hfi);
}

/* Reserve maps every region with the right protection; release undoes it. */
static void test_reserve_maps_regions(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX", prot[5];
	struct percs_hfi *hfi = fake_hfi_open(dir);
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.recv_fifo_size = 16384,
	};
	struct percs_window *w;
	struct percs_status *st;
	int fds;

	REQUIRE(hfi);
	fds = count_fds();
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EPROTO);
	CHECK_EQ(R.seen.size, sizeof(struct percs_window_reserve));
	CHECK_EQ(R.seen.send_fifo_size, PERCS_FIFO_DEF_SIZE);
	CHECK_EQ(R.seen.recv_fifo_size, 16384);
	CHECK_EQ(R.seen.job_fd, 9);
	CHECK_EQ(R.seen.window, PERCS_WINDOW_ANY);
	/* No mode asked, none in the environment: auto. */
	CHECK_EQ(R.seen.flags, PERCS_WINDOW_F_AUTO);
	CHECK_EQ(R.mmap_calls, 0);	/* the default send FIFO is too big */
	CHECK_EQ(count_fds(), fds);	/* and the window fd was closed */

	attr.send_fifo_size = 8192;
	/* Kick mode asked for: the library's flag never reaches the kernel. */
	attr.flags = PERCS_WINDOW_ATTR_KICK;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.seen.flags, 0);
	CHECK_EQ(percs_window_mode(w), 0);
	CHECK_EQ(R.mmap_calls, 7);
	CHECK_EQ(percs_window_fd(w), R.win_fd);
	CHECK_EQ(count_fds(), fds + 1);
	CHECK_EQ(percs_window_addr(w).hub, 3);
	CHECK_EQ(percs_window_addr(w).window, 17);
	CHECK_EQ(w->sq.units, 64);
	CHECK_EQ(w->rq.units, 128);
	CHECK(map_prot(w->sq.base, prot) && !strcmp(prot, "rw-s"));
	CHECK(map_prot(w->rq.base, prot) && !strcmp(prot, "r--s"));
	CHECK(map_prot(w->db, prot) && !strcmp(prot, "rw-s"));
	CHECK(map_prot(w->status, prot) && !strcmp(prot, "r--s"));
	CHECK(map_prot(w->imm.base, prot) && !strcmp(prot, "rw-s"));
	CHECK(map_prot(w->cq.ring, prot) && !strcmp(prot, "r--s"));
	CHECK(percs_window_clock(w) != NULL);
	CHECK(map_prot((const void *)percs_window_clock(w), prot) &&
	      !strcmp(prot, "r--s"));

	/* The mappings are shared: what the "HFI" writes, we read. */
	st = __real_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			 R.win_fd, 8192 + 16384 + 4096);
	REQUIRE(st != MAP_FAILED);
	st->flags = PERCS_STATUS_SEND_BLOCKED;
	CHECK_EQ(percs_window_status(w)->flags, PERCS_STATUS_SEND_BLOCKED);
	__real_munmap(st, 4096);

	/* Kicks pass the flags as the argument and return the count. */
	R.kick_ret = 3;
	CHECK_EQ(percs_kick(w, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM), 3);
	CHECK_EQ(R.kick_arg, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
	/* The send doorbell is fdatasync(): the same kick, cheaper. */
	R.kick_ret = -EINVAL;
	CHECK_EQ(percs_send_trigger(w), -EINVAL);
	CHECK_EQ(R.kick_arg, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
	CHECK_EQ(w->db->send_tail, 0);

	/* The clock page as the "kernel" writes it: CLOCK_MONOTONIC mode. */
	{
		struct percs_clock *ck;
		struct timespec t0, t1;
		uint64_t ns, a, b;

		ck = __real_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				 R.win_fd, (off_t)R.clock_offset);
		REQUIRE(ck != MAP_FAILED);
		ck->mono_offset = 1000000;
		ck->seq = 2;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(percs_clock_ns(w, &ns), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		a = (uint64_t)t0.tv_sec * 1000000000u + t0.tv_nsec - 1000000;
		b = (uint64_t)t1.tv_sec * 1000000000u + t1.tv_nsec - 1000000;
		CHECK(ns >= a && ns <= b);
		CHECK_EQ(percs_window_clock(w)->updates, 0);
		ck->updates = 5;
		CHECK_EQ(percs_window_clock(w)->updates, 5);
		__real_munmap(ck, 4096);
	}

	R.munmaps = 0;
	percs_window_release(w);
	CHECK_EQ(R.munmaps, 7);
	CHECK_EQ(count_fds(), fds);
	percs_hfi_close(hfi);
}

/* Any failure after the ioctl undoes every mapping and closes the fd. */
static void test_reserve_unwinds(void)
{
	char dir[] = "/tmp/percs-unit-XXXXXX";
	struct percs_hfi *hfi = fake_hfi_open(dir);
	struct percs_window_attr attr = {
		.job_fd = 9, .window = PERCS_WINDOW_ANY,
		.send_fifo_size = 8192, .recv_fifo_size = 16384,
	};
	struct percs_window *w = NULL;
	int fds;

	REQUIRE(hfi);
	fds = count_fds();
	for (int nth = 1; nth <= 7; nth++) {
		R.mmap_calls = R.munmaps = 0;
		R.mmap_fail_nth = nth;
		CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -ENOMEM);
		CHECK_EQ(R.munmaps, nth - 1);
		CHECK_EQ(count_fds(), fds);
	}
	R.mmap_fail_nth = 0;

	/* A layout without a status page, or with a read-only send FIFO. */
	R.drop_flags[PERCS_REGION_STATUS] = PERCS_REGION_F_VALID;
	R.mmap_calls = R.munmaps = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EPROTO);
	CHECK_EQ(R.mmap_calls, 0);
	R.drop_flags[PERCS_REGION_STATUS] = 0;
	R.drop_flags[PERCS_REGION_SEND_FIFO] = PERCS_REGION_F_WRITABLE;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -EPROTO);
	CHECK_EQ(R.mmap_calls, 0);
	R.drop_flags[PERCS_REGION_SEND_FIFO] = 0;
	CHECK_EQ(count_fds(), fds);

	/* No clock region (an older module), or a page of another version:
	 * the window works, the clock answers -EOPNOTSUPP.
	 */
	R.drop_flags[PERCS_REGION_CLOCK] = PERCS_REGION_F_VALID;
	R.mmap_calls = R.munmaps = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK_EQ(R.mmap_calls, 6);
	CHECK(percs_window_clock(w) == NULL);
	{
		uint64_t ns = 77;

		CHECK_EQ(percs_clock_ns(w, &ns), -EOPNOTSUPP);
		CHECK_EQ(ns, 77);
	}
	percs_window_release(w);
	CHECK_EQ(R.munmaps, 6);
	R.drop_flags[PERCS_REGION_CLOCK] = 0;
	R.clock_version = PERCS_CLOCK_VERSION + 1;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), 0);
	CHECK(percs_window_clock(w) == NULL);
	percs_window_release(w);
	R.clock_version = PERCS_CLOCK_VERSION;
	w = NULL;
	CHECK_EQ(count_fds(), fds);

	/* The ioctl's own errors come back as they are. */
	R.reserve_errno = ENOSPC;
	R.mmap_calls = 0;
	CHECK_EQ(percs_window_reserve(hfi, &attr, &w), -ENOSPC);
	CHECK_EQ(R.mmap_calls, 0);
	R.reserve_errno = 0;
	CHECK_EQ(percs_window_reserve(hfi, NULL, &w), -EINVAL);
	CHECK_EQ(percs_window_reserve(hfi, &attr, NULL), -EINVAL);
	CHECK(w == NULL);
	CHECK_EQ(count_fds(), fds);
	percs_hfi_close(hfi);
}

const struct unit_test reserve_tests[] = {
	{ "reserve: regions mapped with their protection, release undoes", test_reserve_maps_regions },
	{ "reserve: no job named joins PERCS_JOB_FD's job or one private job", test_reserve_default_job },
	{ "reserve: a failing mmap or bad layout unwinds everything", test_reserve_unwinds },
	{ NULL, NULL }
};
