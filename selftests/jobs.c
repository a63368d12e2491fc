// SPDX-License-Identifier: GPL-2.0
/*
 * jobs: jobs are kernel objects joined only through their fd.
 *
 * - keys_allocated_and_kept: the kernel picks distinct keys, keeps one
 *   while the job's fd or any of its windows lives, and does not hand it
 *   out again at once after;
 * - fd_is_the_capability: a job fd passed to another uid (SCM_RIGHTS) lets
 *   that uid's window into the job, and only that;
 * - other_uid_reaches_nothing: as another uid, with its own job, nothing
 *   of root's job is reachable: FIFO, immediate, a forged header, RDMA
 *   write and read, atomics, CAU create, join and destroy; the query
 *   shows the window as hidden; root's memory and window are untouched;
 * - root_without_fd_cannot_join: root sees a user's job in queries but
 *   has no way to join it without its fd;
 * - no_squatting: a user holding as many jobs as its quota allows neither
 *   blocks nor shares another user's new job.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO_4K		PERCS_FIFO_MIN_SIZE
#define NOBODY		65534
#define PAGE		4096
#define WAIT_MS		20000
#define JOBS_PARAM	"/sys/module/percs/parameters/max_jobs_per_user"

static int become(uid_t uid)
{
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

static int job_query(int job_fd, struct percs_job_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	return ioctl(job_fd, PERCS_IOC_JOB_QUERY, q) ? -errno : 0;
}

static int window_query(struct percs_addr a, struct percs_window_query *q)
{
	int fd = pt_hfi_open_fd(a.hub, a.hfi), ret = 0;

	if (fd < 0)
		return fd;
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->window = a.window;
	if (ioctl(fd, PERCS_IOC_WINDOW_QUERY, q))
		ret = -errno;
	close(fd);
	return ret;
}

/* One completion on @w within the timeout: its result, or 1 for none. */
static int one_cqe_res(struct percs_window *w, uint64_t tag)
{
	struct percs_cqe c;

	if (pt_cq_wait(w, &c, PT_TIMEOUT_MS) != 1 || c.user_data != tag)
		return 1;
	return c.res;
}

TEST(keys_allocated_and_kept)
{
	uint32_t keys[64], key_a;
	struct percs_job_query q;
	struct percs_window *w1, *w2;
	struct percs_hfi *h0, *h1;
	struct percs_pkt_hdr got;
	struct percs_addr dst;
	struct pt_live live;
	char buf[16];
	int job, i, j;

	PT_REQUIRE_DEVICE();
	for (i = 0; i < 64; i++) {
		keys[i] = pt_new_key();
		ASSERT_NE(0, keys[i]);
		ASSERT_EQ(0, job_query(pt_job_fd(keys[i]), &q));
		EXPECT_EQ(keys[i], q.job_key);
		EXPECT_EQ(0, q.windows);
		EXPECT_EQ(geteuid(), q.uid);
		for (j = 0; j < i; j++)
			ASSERT_NE(keys[j], keys[i]);
	}
	pt_jobs_close();

	/* A job with two windows lives on after its fd is closed. */
	key_a = pt_new_key();
	job = pt_job_fd(key_a);
	ASSERT_EQ(0, pt_hfi_open(0, 0, &h0));
	ASSERT_EQ(0, pt_hfi_open(pt_nr_hubs() - 1, 1, &h1));
	ASSERT_EQ(0, pt_reserve(h0, 0, FIFO_4K, FIFO_4K, key_a,
				PERCS_WINDOW_ANY, &w1));
	ASSERT_EQ(0, pt_reserve(h1, 0, FIFO_4K, FIFO_4K, key_a,
				PERCS_WINDOW_ANY, &w2));
	ASSERT_EQ(0, job_query(job, &q));
	EXPECT_EQ(2, q.windows);
	pt_jobs_close();
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(1, live.jobs);
	dst = percs_window_addr(w2);
	ASSERT_EQ(0, pt_send(w1, &dst, "after", 5, 7, 0, PT_TIMEOUT_MS));
	ASSERT_EQ(5, pt_recv(w2, &got, buf, sizeof(buf), PT_TIMEOUT_MS));
	EXPECT_EQ(key_a, got.job_key);
	EXPECT_EQ(7, got.tag);
	percs_window_release(w1);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(1, live.jobs);
	percs_window_release(w2);
	ASSERT_LIVE_ZERO();

	/* The key is not handed out again at once. */
	for (i = 0; i < 64; i++)
		ASSERT_NE(key_a, pt_new_key());
	pt_jobs_close();
	percs_hfi_close(h0);
	percs_hfi_close(h1);
	ASSERT_LIVE_ZERO();
}

/* As nobody: receive a job fd, join it on HFI 1 of hub 0, send to @dst. */
static int member_as_nobody(int sock, struct percs_addr dst)
{
	struct percs_window_query q;
	struct percs_window *w;
	struct percs_hfi *hfi;
	uint32_t key;
	int job;

	if (become(NOBODY))
		return 100;
	job = pt_recv_fd(sock, &key, sizeof(key), WAIT_MS);
	if (job < 0)
		return 1;
	if (pt_hfi_open(0, 1, &hfi))
		return 2;
	{
		struct percs_window_attr attr = {
			.send_fifo_size = FIFO_4K, .recv_fifo_size = FIFO_4K,
			.job_fd = job, .window = PERCS_WINDOW_ANY,
		};

		if (percs_window_reserve(hfi, &attr, &w))
			return 3;
	}
	close(job);
	if (pt_send(w, &dst, "member", 6, 0x3b, PERCS_PKT_F_NOTIFY,
		    PT_TIMEOUT_MS) || one_cqe_res(w, 0x3b))
		return 4;
	/* A member still sees only its own windows, not root's. */
	if (window_query(dst, &q) || q.state != PERCS_WSTATE_HIDDEN)
		return 5;
	if (window_query(percs_window_addr(w), &q) ||
	    q.state != PERCS_WSTATE_ACTIVE || q.job_key != key ||
	    q.uid != NOBODY)
		return 6;
	if (write(sock, "s", 1) != 1)
		return 7;
	percs_window_release(w);
	percs_hfi_close(hfi);
	return 0;
}

TEST(fd_is_the_capability)
{
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_pkt_hdr got;
	uint32_t key;
	char buf[16], c;
	int sv[2];
	pid_t pid;

	PT_REQUIRE_DEVICE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	key = pt_new_key();
	ASSERT_EQ(0, pt_hfi_open(0, 0, &hfi));
	ASSERT_EQ(0, pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &w));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Only what is passed: none of the parent's job fds. */
		pt_jobs_close();
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(member_as_nobody(sv[1], percs_window_addr(w)));
	}
	close(sv[1]);
	ASSERT_EQ(sizeof(key), pt_send_fd(sv[0], pt_job_fd(key), &key,
					  sizeof(key)));
	ASSERT_EQ(1, read(sv[0], &c, 1));
	ASSERT_EQ('s', c);
	ASSERT_EQ(6, pt_recv(w, &got, buf, sizeof(buf), PT_TIMEOUT_MS));
	EXPECT_EQ(key, got.job_key);
	EXPECT_EQ(1, got.src.hfi);
	EXPECT_EQ(0, memcmp(buf, "member", 6));
	EXPECT_EQ(0, pt_reap(pid, WAIT_MS));
	close(sv[0]);
	percs_window_release(w);
	percs_hfi_close(hfi);
	ASSERT_LIVE_ZERO();
}

/* What the attacker is told: root's addresses, key, registration, tree. */
struct target {
	struct percs_addr addr, addr2;
	uint32_t key;
	struct percs_rmr rmr;
	uint32_t tree;
};

/* Exit codes: 0 every attack refused; else the attack that got through. */
static int attack_as_nobody(int in)
{
	struct percs_cau_tree_op op = { .size = sizeof(op) };
	struct percs_window_query q;
	struct percs_pkt_hdr h;
	struct pt_side me;
	struct target t;
	uint64_t got = 7;

	/* A process of another user holds none of root's job fds. */
	pt_jobs_close();
	if (become(NOBODY))
		return 100;
	if (read(in, &t, sizeof(t)) != sizeof(t))
		return 101;
	if (pt_side_open(&me, 1, 0, pt_new_key(), PAGE,
			 PERCS_ACCESS_LOCAL_WRITE | PERCS_ACCESS_REMOTE_READ,
			 PT_SIDE_PREFAULT))
		return 102;
	memset(me.buf, 0xee, PAGE);
	if (pt_any_fd_joins(t.key))
		return 1;
	if (window_query(t.addr, &q) || q.state != PERCS_WSTATE_HIDDEN ||
	    q.job_key || q.pid || q.uid || q.packets_received)
		return 2;
	if (pt_send(me.w, &t.addr, "fifo", 4, 3, 0, PT_TIMEOUT_MS) ||
	    one_cqe_res(me.w, 3) != -EACCES)
		return 3;
	if (pt_icswx(me.w, &t.addr, "imm", 3, 4, PT_TIMEOUT_MS) ||
	    one_cqe_res(me.w, 4) != -EACCES)
		return 4;
	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.dst = t.addr;
	h.job_key = t.key;	/* forged: the HFI stamps the real one */
	h.tag = 5;
	if (percs_send_compose_hdr(me.w, &h, "spoof", 5) ||
	    percs_send_trigger(me.w) || one_cqe_res(me.w, 5) != -EACCES)
		return 5;
	if (percs_rdma_write(me.w, &t.addr, t.rmr.handle, t.rmr.base, me.mr,
			     me.buf, PAGE, 0, 6) || one_cqe_res(me.w, 6) != -EACCES)
		return 6;
	if (percs_rdma_read(me.w, &t.addr, t.rmr.handle, t.rmr.base, me.mr,
			    me.buf, PAGE, 0, 7) || one_cqe_res(me.w, 7) != -EACCES)
		return 7;
	for (int i = 0; i < PAGE; i++)
		if (me.buf[i] != 0xee)
			return 8;
	if (percs_atomic_fetch_add64(me.w, &t.rmr, 0, 1, &got) != -EACCES ||
	    got != 7)
		return 9;
	{
		struct percs_cau_member m[2] = {
			{ .win = me.addr, .parent = PERCS_CAU_ROOT },
			{ .win = t.addr, .parent = 0 },
		};
		struct percs_cau_create c = {
			.size = sizeof(c), .nr_members = 2,
			.members = (uintptr_t)m,
		};

		if (!ioctl(percs_window_fd(me.w), PERCS_IOC_CAU_CREATE, &c) ||
		    errno != EACCES)
			return 10;
	}
	op.tree = t.tree;
	if (!ioctl(percs_window_fd(me.w), PERCS_IOC_CAU_JOIN, &op) ||
	    errno != EPERM)
		return 11;
	if (!ioctl(percs_window_fd(me.w), PERCS_IOC_CAU_DESTROY, &op) ||
	    errno != EPERM)
		return 12;
	pt_side_close(&me);
	return 0;
}

TEST(other_uid_reaches_nothing)
{
	struct percs_cau_member m[2] = { { .parent = PERCS_CAU_ROOT },
					 { .parent = 0 } };
	struct percs_cau_create c = { .size = sizeof(c), .nr_members = 2 };
	struct percs_cau_tree_op op = { .size = sizeof(op) };
	struct percs_window_query q;
	struct pt_side root, second;
	struct target t;
	uint64_t sum;
	int go[2];
	pid_t pid;

	PT_REQUIRE_DEVICE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	/* The attacker exists before root's job: it inherits nothing. */
	ASSERT_EQ(0, pipe(go));
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(attack_as_nobody(go[0]));
	}
	close(go[0]);
	t.key = pt_new_key();
	ASSERT_EQ(0, pt_side_open(&root, 0, 0, t.key, PAGE,
				  PERCS_ACCESS_LOCAL_WRITE |
				  PERCS_ACCESS_REMOTE_READ |
				  PERCS_ACCESS_REMOTE_WRITE |
				  PERCS_ACCESS_REMOTE_ATOMIC, PT_SIDE_PREFAULT));
	ASSERT_EQ(0, pt_side_open(&second, pt_nr_hubs() - 1, 0, t.key, PAGE,
				  0, PT_SIDE_PREFAULT));
	pt_fill(root.buf, PAGE, 0x5eed);
	sum = pt_checksum(root.buf, PAGE);
	t.addr = root.addr;
	t.addr2 = second.addr;
	t.rmr = root.rmr;
	m[0].win = root.addr;
	m[1].win = second.addr;
	c.members = (uintptr_t)m;
	ASSERT_EQ(0, ioctl(percs_window_fd(root.w), PERCS_IOC_CAU_CREATE, &c));
	t.tree = c.tree;
	ASSERT_EQ(sizeof(t), write(go[1], &t, sizeof(t)));
	EXPECT_EQ(0, pt_reap(pid, 60000));
	close(go[1]);
	/* Nothing of root's changed; the tree still stands. */
	EXPECT_EQ(sum, pt_checksum(root.buf, PAGE));
	EXPECT_EQ(0, percs_window_status(root.w)->recv_tail);
	ASSERT_EQ(0, window_query(root.addr, &q));
	EXPECT_EQ(PERCS_WSTATE_ACTIVE, q.state);
	EXPECT_EQ(0, q.packets_received);
	EXPECT_EQ(t.key, q.job_key);
	op.tree = t.tree;
	EXPECT_EQ(0, ioctl(percs_window_fd(second.w), PERCS_IOC_CAU_JOIN, &op));
	EXPECT_EQ(0, ioctl(percs_window_fd(root.w), PERCS_IOC_CAU_DESTROY, &op));
	pt_side_close(&second);
	pt_side_close(&root);
	ASSERT_LIVE_ZERO();
}

/*
 * Run @fn(up, down) in a child that dies with the test; @up carries its
 * reports, @down the test's go-ahead.  Return: its pid, or -errno.
 */
static pid_t start_child(int (*fn)(int up, int down), int up[2], int down[2])
{
	pid_t pid;

	if (pipe(up) || pipe(down))
		return -errno;
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fn(up[1], down[0]));
	}
	return pid < 0 ? -errno : pid;
}

static void close_pipes(int up[2], int down[2])
{
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* As nobody: a job and a window; report them, hold them until told. */
static int user_job(int up, int down)
{
	struct percs_window_reserve req;
	uint32_t key;
	int hfd, wfd;
	char c;

	pt_jobs_close();
	if (become(NOBODY))
		return 100;
	key = pt_new_key();
	hfd = pt_hfi_open_fd(0, 1);
	if (!key || hfd < 0)
		return 1;
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, PERCS_WINDOW_ANY,
			     &req);
	if (wfd < 0)
		return 2;
	if (write(up, &req.addr, sizeof(req.addr)) != sizeof(req.addr) ||
	    write(up, &key, sizeof(key)) != sizeof(key))
		return 3;
	if (read(down, &c, 1) != 1)
		return 4;
	/* Nothing arrived while root tried. */
	{
		struct percs_window_query q;

		if (window_query(req.addr, &q) || q.packets_received)
			return 5;
	}
	close(wfd);
	close(hfd);
	return 0;
}

TEST(root_without_fd_cannot_join)
{
	struct percs_window_query q;
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_addr addr;
	struct percs_pkt_hdr h;
	int up[2], down[2];
	uint32_t key;
	pid_t pid;

	PT_REQUIRE_DEVICE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	pid = start_child(user_job, up, down);
	ASSERT_LT(0, pid);
	ASSERT_EQ(sizeof(addr), read(up[0], &addr, sizeof(addr)));
	ASSERT_EQ(sizeof(key), read(up[0], &key, sizeof(key)));
	/* An administrator sees the job's key... */
	ASSERT_EQ(0, window_query(addr, &q));
	EXPECT_EQ(PERCS_WSTATE_ACTIVE, q.state);
	EXPECT_EQ(key, q.job_key);
	EXPECT_EQ(NOBODY, q.uid);
	/* ...but knowing it, or being root, joins nothing. */
	EXPECT_FALSE(pt_any_fd_joins(key));
	ASSERT_EQ(0, pt_hfi_open(0, 0, &hfi));
	ASSERT_EQ(0, pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, pt_new_key(),
				PERCS_WINDOW_ANY, &w));
	ASSERT_EQ(0, pt_send(w, &addr, "root", 4, 1, 0, PT_TIMEOUT_MS));
	EXPECT_EQ(-EACCES, one_cqe_res(w, 1));
	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.dst = addr;
	h.job_key = key;
	h.tag = 2;
	ASSERT_EQ(0, percs_send_compose_hdr(w, &h, "forged", 6));
	ASSERT_EQ(0, percs_send_trigger(w));
	EXPECT_EQ(-EACCES, one_cqe_res(w, 2));
	ASSERT_EQ(1, write(down[1], "d", 1));
	EXPECT_EQ(0, pt_reap(pid, WAIT_MS));
	percs_window_release(w);
	percs_hfi_close(hfi);
	close_pipes(up, down);
	ASSERT_LIVE_ZERO();
}

static int write_param(const char *val)
{
	int fd = open(JOBS_PARAM, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -EIO;
	close(fd);
	return ret;
}

/* As nobody: create jobs until the quota says no; hold them until told. */
static int hoard_jobs(int up, int down)
{
	struct percs_job_create jc = { .size = sizeof(jc) };
	uint32_t keys[16];
	int hfd, n = 0;
	char c;

	pt_jobs_close();
	if (become(NOBODY))
		return 100;
	hfd = pt_hfi_open_fd(0, 0);
	if (hfd < 0)
		return 1;
	while (n < 16 && ioctl(hfd, PERCS_IOC_JOB_CREATE, &jc) >= 0) {
		keys[n++] = jc.job_key;
		jc = (struct percs_job_create){ .size = sizeof(jc) };
	}
	if (n == 16 || errno != EDQUOT)
		return 2;
	if (write(up, &n, sizeof(n)) != sizeof(n) ||
	    write(up, keys, n * sizeof(keys[0])) != (ssize_t)(n * sizeof(keys[0])))
		return 3;
	if (read(down, &c, 1) != 1)
		return 4;
	return 0;
}

/* max_jobs_per_user at 8 for the test, put back after whatever happens. */
FIXTURE(quota8) {
	char saved[32];
};

FIXTURE_SETUP(quota8)
{
	long v;

	self->saved[0] = '\0';
	PT_REQUIRE_DEVICE();
	if (geteuid() != 0)
		SKIP(return, "needs root to set the quota");
	v = pt_sysfs_read_long(JOBS_PARAM);
	ASSERT_LE(0, v);
	snprintf(self->saved, sizeof(self->saved), "%ld", v);
	ASSERT_EQ(0, write_param("8"));
}

FIXTURE_TEARDOWN(quota8)
{
	if (self->saved[0])
		write_param(self->saved);
}

TEST_F(quota8, no_squatting)
{
	struct percs_window_reserve req;
	uint32_t keys[16], mine;
	int up[2], down[2], n, hfd, wfd, i;
	pid_t pid;

	if (_metadata->skip)
		return;
	pid = start_child(hoard_jobs, up, down);
	ASSERT_LT(0, pid);
	ASSERT_EQ(sizeof(n), read(up[0], &n, sizeof(n)));
	EXPECT_EQ(8, n);
	ASSERT_EQ(n * sizeof(keys[0]), read(up[0], keys, n * sizeof(keys[0])));
	/* The hoarder is at its limit; root's new job is its own. */
	mine = pt_new_key();
	ASSERT_NE(0, mine);
	for (i = 0; i < n; i++)
		EXPECT_NE(keys[i], mine);
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, mine, PERCS_WINDOW_ANY,
			     &req);
	EXPECT_LE(0, wfd);
	EXPECT_EQ(mine, req.job_key);
	ASSERT_EQ(1, write(down[1], "d", 1));
	EXPECT_EQ(0, pt_reap(pid, WAIT_MS));
	close(wfd);
	close(hfd);
	close_pipes(up, down);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
