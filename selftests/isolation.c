// SPDX-License-Identifier: GPL-2.0
/*
 * isolation: which packets reach which windows (jobs, addresses) and who
 * may drive a window (whoever holds its fd: SCM_RIGHTS, fork).  Who may
 * join a job, and what other users see, is jobs.c's.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO_4K PERCS_FIFO_MIN_SIZE

static int info_of(unsigned int hub, unsigned int unit,
		   struct percs_hfi_info *info)
{
	int fd = pt_hfi_open_fd(hub, unit), ret = 0;

	if (fd < 0)
		return fd;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, PERCS_IOC_HFI_INFO, info))
		ret = -errno;
	close(fd);
	return ret;
}

/* Read exactly one byte from @fd within @ms, or -ETIMEDOUT / -EPIPE. */
static int read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	return read(fd, &c, 1) == 1 ? (unsigned char)c : -EPIPE;
}

static void write_byte(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		perror("write");
}

static int wait_child(pid_t pid, int ms)
{
	uint64_t deadline = pt_now_ms() + ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status)
						 : 128 + WTERMSIG(status);
		if (r < 0 || pt_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
}

/*
 * Two windows on different hubs with different job keys (a, b) and a third
 * (c) with a's key, for the routing tests.
 */
FIXTURE(pair) {
	struct percs_hfi *hfi_a, *hfi_b, *hfi_c;
	struct percs_window *a, *b, *c;
	struct percs_hfi_info info;
	uint32_t key_a, key_b;
};

FIXTURE_SETUP(pair)
{
	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, info_of(0, 0, &self->info));
	self->key_a = pt_new_key();
	self->key_b = pt_new_key();
	ASSERT_EQ(0, pt_hfi_open(0, 0, &self->hfi_a));
	ASSERT_EQ(0, pt_hfi_open(1 % self->info.nr_hubs, 1, &self->hfi_b));
	ASSERT_EQ(0, pt_hfi_open(self->info.nr_hubs - 1, 0, &self->hfi_c));
	ASSERT_EQ(0, pt_reserve(self->hfi_a, 0, FIFO_4K, FIFO_4K, self->key_a,
				PERCS_WINDOW_ANY, &self->a));
	ASSERT_EQ(0, pt_reserve(self->hfi_b, 0, FIFO_4K, FIFO_4K, self->key_b,
				PERCS_WINDOW_ANY, &self->b));
	ASSERT_EQ(0, pt_reserve(self->hfi_c, 0, FIFO_4K, FIFO_4K, self->key_a,
				PERCS_WINDOW_ANY, &self->c));
}

FIXTURE_TEARDOWN(pair)
{
	percs_window_release(self->a);
	percs_window_release(self->b);
	percs_window_release(self->c);
	if (self->hfi_a)
		percs_hfi_close(self->hfi_a);
	if (self->hfi_b)
		percs_hfi_close(self->hfi_b);
	if (self->hfi_c)
		percs_hfi_close(self->hfi_c);
}

/* Expect exactly one CQE on @w: the tag, the result, the kind. */
#define EXPECT_ONE_CQE(w, _tag, _res, _kind, _flags) do {		\
	struct percs_cqe __c;						\
	ASSERT_EQ(1, pt_cq_wait((w), &__c, PT_TIMEOUT_MS));		\
	EXPECT_EQ((uint64_t)(_tag), __c.user_data);			\
	EXPECT_EQ((_res), __c.res);					\
	EXPECT_EQ((_kind), __c.kind);					\
	EXPECT_EQ((_flags), __c.flags);					\
	EXPECT_EQ(0, percs_cq_poll((w), &__c, 1));			\
} while (0)

/* Nothing arrived at @w: no packet, recv_tail and counters at zero. */
#define EXPECT_NOTHING_RECEIVED(w) do {					\
	char __buf[PERCS_MAX_PAYLOAD];					\
	EXPECT_EQ(-EAGAIN, percs_recv((w), NULL, __buf, sizeof(__buf)));	\
	EXPECT_EQ(0, percs_window_status(w)->recv_tail);		\
	EXPECT_EQ(0, percs_window_status(w)->packets_received);		\
} while (0)

/* Positive control: same key, other supernode: delivered and stamped. */
TEST_F(pair, same_key_delivered_and_stamped)
{
	struct percs_addr ca = percs_window_addr(self->c);
	struct percs_addr aa = percs_window_addr(self->a);
	struct percs_pkt_hdr hdr, got;
	char msg[200], buf[PERCS_MAX_PAYLOAD];

	pt_fill(msg, sizeof(msg), 1);
	/* A header that tries to forge src and job_key: both overwritten. */
	memset(&hdr, 0, sizeof(hdr));
	hdr.kind = PERCS_PKT_FIFO;
	hdr.dst = ca;
	hdr.tag = 0xabc;
	hdr.job_key = self->key_b;
	hdr.src.hub = 77;
	hdr.src.window = 99;
	ASSERT_EQ(0, percs_send_compose_hdr(self->a, &hdr, msg, sizeof(msg)));
	ASSERT_EQ(0, percs_send_trigger(self->a));
	ASSERT_EQ(sizeof(msg), pt_recv(self->c, &got, buf, sizeof(buf),
				       PT_TIMEOUT_MS));
	EXPECT_EQ(0, memcmp(msg, buf, sizeof(msg)));
	EXPECT_EQ(self->key_a, got.job_key);
	EXPECT_EQ(aa.hub, got.src.hub);
	EXPECT_EQ(aa.hfi, got.src.hfi);
	EXPECT_EQ(aa.window, got.src.window);
	EXPECT_EQ(0xabc, got.tag);
	EXPECT_EQ(1, percs_window_status(self->a)->packets_sent);
	EXPECT_EQ(0, percs_window_status(self->a)->send_errors);
}

/* A forged job_key in the header does not get a packet into key b. */
TEST_F(pair, forged_job_key_refused)
{
	struct percs_pkt_hdr hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.kind = PERCS_PKT_FIFO;
	hdr.dst = percs_window_addr(self->b);
	hdr.tag = 0x5151;
	hdr.job_key = self->key_b;
	ASSERT_EQ(0, percs_send_compose_hdr(self->a, &hdr, "x", 1));
	ASSERT_EQ(0, percs_send_trigger(self->a));
	EXPECT_ONE_CQE(self->a, 0x5151, -EACCES, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	EXPECT_NOTHING_RECEIVED(self->b);
}

/* FIFO packet to another job's window: CQE -EACCES with the tag. */
TEST_F(pair, fifo_other_key_eacces)
{
	struct percs_addr ba = percs_window_addr(self->b);
	char msg[64] = "not for you";

	ASSERT_EQ(0, pt_send(self->a, &ba, msg, sizeof(msg), 0x1234, 0,
			     PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 0x1234, -EACCES, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	EXPECT_NOTHING_RECEIVED(self->b);
	EXPECT_EQ(1, percs_window_status(self->a)->send_errors);
	EXPECT_EQ(0, percs_window_status(self->a)->packets_sent);
	/* The other way round too. */
	ba = percs_window_addr(self->a);
	ASSERT_EQ(0, pt_send(self->b, &ba, msg, sizeof(msg), 0x4321,
			     PERCS_PKT_F_NOTIFY, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->b, 0x4321, -EACCES, PERCS_PKT_FIFO, 0);
	EXPECT_NOTHING_RECEIVED(self->a);
}

/* Immediate send to another job's window: CQE -EACCES with the tag. */
TEST_F(pair, imm_other_key_eacces)
{
	struct percs_addr ba = percs_window_addr(self->b);
	char msg[PERCS_IMM_PAYLOAD] = "immediate";

	ASSERT_EQ(0, pt_icswx(self->a, &ba, msg, sizeof(msg), 0x77,
			      PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 0x77, -EACCES, PERCS_PKT_IMM,
		       PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED);
	EXPECT_NOTHING_RECEIVED(self->b);
	EXPECT_EQ(1, percs_window_status(self->a)->imm_head);
}

/* A packet to an unreserved window: -ECONNREFUSED (FIFO and immediate). */
TEST_F(pair, unreserved_window_econnrefused)
{
	struct percs_addr dst = percs_window_addr(self->b);

	dst.window = self->info.windows_total - 1;	/* free */
	ASSERT_EQ(-ENOENT, pt_window_query(dst.hub, dst.hfi, dst.window));
	ASSERT_EQ(0, pt_send(self->a, &dst, "x", 1, 1, 0, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 1, -ECONNREFUSED, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	ASSERT_EQ(0, pt_icswx(self->a, &dst, "y", 1, 2, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 2, -ECONNREFUSED, PERCS_PKT_IMM,
		       PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED);
}

/* A window released meanwhile refuses too (its index is free again). */
TEST_F(pair, released_window_econnrefused)
{
	struct percs_addr ca = percs_window_addr(self->c);

	percs_window_release(self->c);
	self->c = NULL;
	ASSERT_EQ(0, pt_send(self->a, &ca, "x", 1, 3, 0, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 3, -ECONNREFUSED, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
}

/* Window index beyond the HFI's windows: -EADDRNOTAVAIL. */
TEST_F(pair, window_index_eaddrnotavail)
{
	struct percs_addr dst = percs_window_addr(self->c);

	dst.window = self->info.windows_total;
	ASSERT_EQ(0, pt_send(self->a, &dst, "x", 1, 10, 0, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 10, -EADDRNOTAVAIL, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	dst.window = 0xffff;
	ASSERT_EQ(0, pt_send(self->a, &dst, "x", 1, 11, 0, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 11, -EADDRNOTAVAIL, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	ASSERT_EQ(0, pt_icswx(self->a, &dst, "x", 1, 12, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 12, -EADDRNOTAVAIL, PERCS_PKT_IMM,
		       PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED);
}

/* Hub beyond the system or HFI unit >= 2: -EHOSTUNREACH. */
TEST_F(pair, bad_hub_or_hfi_ehostunreach)
{
	struct percs_addr dst = percs_window_addr(self->c);

	dst.hub = self->info.nr_hubs;
	ASSERT_EQ(0, pt_send(self->a, &dst, "x", 1, 20, 0, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 20, -EHOSTUNREACH, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	dst.hub = 0xffffffff;
	ASSERT_EQ(0, pt_send(self->a, &dst, "x", 1, 21, 0, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 21, -EHOSTUNREACH, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	dst = percs_window_addr(self->c);
	dst.hfi = 2;
	ASSERT_EQ(0, pt_send(self->a, &dst, "x", 1, 22, 0, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 22, -EHOSTUNREACH, PERCS_PKT_FIFO,
		       PERCS_CQE_F_UNASKED);
	dst.hfi = 255;
	ASSERT_EQ(0, pt_icswx(self->a, &dst, "x", 1, 23, PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 23, -EHOSTUNREACH, PERCS_PKT_IMM,
		       PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED);
	/* The window still works afterwards. */
	dst = percs_window_addr(self->c);
	ASSERT_EQ(0, pt_send(self->a, &dst, "ok", 2, 24, PERCS_PKT_F_NOTIFY,
			     PT_TIMEOUT_MS));
	EXPECT_ONE_CQE(self->a, 24, 0, PERCS_PKT_FIFO, 0);
}

/* An error completion and a good packet after it keep their order. */
TEST_F(pair, errors_do_not_block_later_packets)
{
	struct percs_addr ba = percs_window_addr(self->b);
	struct percs_addr ca = percs_window_addr(self->c);
	struct percs_cqe c[3];
	char buf[16];

	ASSERT_EQ(0, percs_send_compose(self->a, &ba, "1", 1, 31, 0));
	ASSERT_EQ(0, percs_send_compose(self->a, &ca, "2", 1, 32, 0));
	ASSERT_EQ(0, percs_send_compose(self->a, &ba, "3", 1, 33, 0));
	ASSERT_EQ(0, percs_send_trigger(self->a));
	ASSERT_EQ(1, pt_recv(self->c, NULL, buf, sizeof(buf), PT_TIMEOUT_MS));
	EXPECT_EQ('2', buf[0]);
	ASSERT_EQ(1, pt_cq_wait(self->a, &c[0], PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(self->a, &c[1], PT_TIMEOUT_MS));
	EXPECT_EQ(31, c[0].user_data);
	EXPECT_EQ(33, c[1].user_data);
	EXPECT_EQ(-EACCES, c[0].res);
	EXPECT_EQ(-EACCES, c[1].res);
	EXPECT_EQ(0, percs_cq_poll(self->a, c, 3));
	EXPECT_NOTHING_RECEIVED(self->b);
}

/*
 * SCM_RIGHTS: the fd is the capability.  Another process that receives it
 * drives the window; the window lives until both have closed it.
 */
TEST(scm_rights_passes_window)
{
	struct percs_window_reserve req;
	struct percs_window *recv_w;
	struct percs_hfi *hfi;
	struct percs_pkt_hdr got;
	uint32_t key = pt_new_key();
	int sv[2], hfd, wfd, ret;
	char buf[PERCS_MAX_PAYLOAD];
	pid_t pid;

	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	/* The child exists before the window: it cannot inherit it. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct percs_pkt_hdr h;
		struct pt_rawwin rw;
		struct cmsghdr *cm;
		int fd;

		close(sv[0]);
		if (recvmsg(sv[1], &mh, MSG_WAITALL) != sizeof(req))
			_exit(10);
		cm = CMSG_FIRSTHDR(&mh);
		if (!cm || cm->cmsg_type != SCM_RIGHTS)
			_exit(11);
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		if (pt_rawwin_map(&rw, fd, &req))
			_exit(12);
		/* One FIFO packet to the parent's receiving window, the next
		 * index on the same HFI.
		 */
		memset(&h, 0, sizeof(h));
		h.kind = PERCS_PKT_FIFO;
		h.dst = req.addr;
		h.dst.window = req.addr.window + 1;
		h.length = 14;
		h.tag = 0xfeed;
		if (pt_raw_trigger(&rw, pt_raw_put(&rw, 0, &h, "from the child"),
				   true) != 1)
			_exit(13);
		/* Tell the parent, wait until it has closed its copy. */
		write_byte(sv[1], 's');
		if (read_byte(sv[1], 10000) != 'c')
			_exit(14);
		/* Still ours: the status page shows our packet. */
		if (pt_rawwin_st(&rw)->packets_sent != 1)
			_exit(15);
		pt_rawwin_close(&rw);
		write_byte(sv[1], 'd');
		_exit(0);
	}
	close(sv[1]);

	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, 40, &req);
	ASSERT_LE(0, wfd);
	ASSERT_EQ(0, pt_hfi_open(0, 0, &hfi));
	ASSERT_EQ(0, pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, key, 41, &recv_w));
	ASSERT_EQ(sizeof(req), pt_send_fd(sv[0], wfd, &req, sizeof(req)));
	ASSERT_EQ('s', read_byte(sv[0], 10000));
	ret = pt_recv(recv_w, &got, buf, sizeof(buf), PT_TIMEOUT_MS);
	ASSERT_EQ(14, ret);
	EXPECT_EQ(0, memcmp(buf, "from the child", 14));
	EXPECT_EQ(40, got.src.window);
	EXPECT_EQ(key, got.job_key);
	EXPECT_EQ(0xfeed, got.tag);

	/* We close our fd: the window stays, the child still holds it. */
	close(wfd);
	EXPECT_EQ(0, pt_window_query(0, 0, 40));
	write_byte(sv[0], 'c');
	ASSERT_EQ('d', read_byte(sv[0], 10000));
	ASSERT_EQ(0, wait_child(pid, 10000));
	EXPECT_EQ(-ENOENT, pt_window_query(0, 0, 40));
	percs_window_release(recv_w);
	percs_hfi_close(hfi);
	close(hfd);
	close(sv[0]);
	ASSERT_LIVE_ZERO();
}

/* fork: the child inherits the window and can drive it. */
TEST(fork_child_inherits_window)
{
	struct percs_window *w, *r;
	struct percs_hfi *hfi;
	struct percs_pkt_hdr got;
	uint32_t key = pt_new_key();
	struct percs_addr ra;
	char buf[64];
	pid_t pid;

	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(1, 0, &hfi));
	ASSERT_EQ(0, pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &w));
	ASSERT_EQ(0, pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &r));
	ra = percs_window_addr(r);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The parent does not touch w until we are gone. */
		_exit(pt_send(w, &ra, "child", 5, 0xc41d, 0, PT_TIMEOUT_MS) ?
		      1 : 0);
	}
	ASSERT_EQ(0, wait_child(pid, 10000));
	ASSERT_EQ(5, pt_recv(r, &got, buf, sizeof(buf), PT_TIMEOUT_MS));
	EXPECT_EQ(0, memcmp(buf, "child", 5));
	EXPECT_EQ(percs_window_addr(w).window, got.src.window);
	/* The child's exit did not free it: the parent still holds it. */
	EXPECT_EQ(0, pt_window_query(1, 0, percs_window_addr(w).window));
	EXPECT_EQ(1, percs_window_status(w)->packets_sent);
	EXPECT_EQ(2, pt_sysfs_windows_in_use(1, 0));
	percs_window_release(w);
	percs_window_release(r);
	percs_hfi_close(hfi);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
