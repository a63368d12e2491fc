// SPDX-License-Identifier: GPL-2.0
/*
 * xproc: another process, another job, another uid against a window.
 *
 * The rules under test (Documentation/design.rst, "Windows" and "Job
 * keys"): packets pass only between windows of one job key (else the send
 * completes with -EACCES and the target sees nothing); a job key is bound
 * to the uid of its first window while any window of it exists (other
 * uids: EACCES, unless CAP_SYS_ADMIN); a named window index that is taken
 * is EBUSY; whoever holds the window fd (SCM_RIGHTS, fork) drives the
 * window and the window lives until the last fd and mapping are gone; the
 * fd is O_CLOEXEC; mmap keys select a region of the fd they are used on;
 * a packet to a window whose owner is gone completes with -ECONNREFUSED,
 * and a new window of another job at the same index refuses the old job's
 * packets with -EACCES.  /dev/percs-hfiN is 0666.
 *
 * Windows of other processes run in "owner" children that reserve a
 * window, report its reserve answer and then obey one-byte commands.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO_4K		PERCS_FIFO_MIN_SIZE
#define NOBODY		65534
#define NR_REGIONS	(PERCS_REGION_CQ + 1)
#define WAIT_MS		20000

/* Write all of @n bytes; Return: 0 or -errno. */
static int put(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EPIPE;
		p += r;
		n -= r;
	}
	return 0;
}

/* Read exactly @n bytes within @ms; Return: 0, -ETIMEDOUT or -EPIPE. */
static int get(int fd, void *buf, size_t n, int ms)
{
	uint64_t deadline = pt_now_ms() + ms;
	char *p = buf;

	while (n) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)(deadline - pt_now_ms());
		ssize_t r;

		if (left <= 0 || poll(&pf, 1, (int)left) != 1)
			return -ETIMEDOUT;
		r = read(fd, p, n);
		if (r <= 0)
			return -EPIPE;
		p += r;
		n -= r;
	}
	return 0;
}

static int become(uid_t uid)
{
	if (uid == geteuid())
		return 0;
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

static int query(unsigned int hub, unsigned int unit, uint32_t window,
		 struct percs_window_query *q)
{
	int fd = pt_hfi_open_fd(hub, unit), ret = 0;

	if (fd < 0)
		return fd;
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->window = window;
	if (ioctl(fd, PERCS_IOC_WINDOW_QUERY, q))
		ret = -errno;
	close(fd);
	return ret;
}

static int hfi_info(struct percs_hfi_info *info)
{
	int fd = pt_hfi_open_fd(0, 0), ret = 0;

	if (fd < 0)
		return fd;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, PERCS_IOC_HFI_INFO, info))
		ret = -errno;
	close(fd);
	return ret;
}

/* ---- owner children ----------------------------------------------------- */

/* What an owner reports after reserving. */
struct owner_hello {
	int32_t err;
	struct percs_window_reserve req;
};

/* Its answer to 'q'. */
struct owner_snap {
	uint64_t recv_tail, packets_received, packets_sent, send_errors;
	uint32_t flags;
	uint32_t first_tag;	/* tag of the first packet received */
};

struct owner {
	pid_t pid;
	int up, down;		/* child -> parent, parent -> child */
	struct percs_window_reserve req;
};

/*
 * The owner child: become @uid, reserve a window (@key, @window) on HFI
 * (@hub, @unit), map it, fill its send FIFO and immediate slots with 0xAA
 * (the doorbell stays zero: valid triggers and credits), report, then
 * serve commands: 'q' snapshot of the status page; 'x' exit.
 */
static void owner_main(int up, int down, uid_t uid, unsigned int hub,
		       unsigned int unit, uint32_t key, uint32_t window)
{
	struct owner_hello hello = { 0 };
	struct pt_rawwin rw;
	int hfd, fd, r;
	char cmd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	hello.err = become(uid);
	hfd = hello.err ? -1 : pt_hfi_open_fd(hub, unit);
	if (!hello.err && hfd < 0)
		hello.err = hfd;
	fd = hello.err ? -1 : pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key,
					     window, &hello.req);
	if (!hello.err && fd < 0)
		hello.err = fd;
	if (!hello.err)
		hello.err = pt_rawwin_map(&rw, fd, &hello.req);
	if (!hello.err)
		for (r = 0; r < NR_REGIONS; r++)
			if (r == PERCS_REGION_SEND_FIFO || r == PERCS_REGION_IMM)
				memset(rw.map[r], 0xaa,
				       hello.req.regions[r].length);
	if (put(up, &hello, sizeof(hello)) || hello.err)
		_exit(1);
	while (get(down, &cmd, 1, 60000) == 0) {
		const volatile struct percs_status *st = pt_rawwin_st(&rw);
		const struct percs_pkt_hdr *first =
			rw.map[PERCS_REGION_RECV_FIFO];
		struct owner_snap snap = {
			.recv_tail = st->recv_tail,
			.packets_received = st->packets_received,
			.packets_sent = st->packets_sent,
			.send_errors = st->send_errors,
			.flags = st->flags,
			.first_tag = first->tag,
		};

		if (cmd == 'x')
			break;
		if (cmd == 'q' && put(up, &snap, sizeof(snap)))
			_exit(2);
	}
	pt_rawwin_close(&rw);
	close(hfd);
	_exit(0);
}

/* Start an owner; Return: 0 or its reserve error (-errno). */
static int owner_start(struct owner *o, uid_t uid, unsigned int hub,
		       unsigned int unit, uint32_t key, uint32_t window)
{
	struct owner_hello hello;
	int up[2], down[2], ret;

	memset(o, 0, sizeof(*o));
	if (pipe(up) || pipe(down))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	o->pid = fork();
	if (o->pid < 0)
		return -errno;
	if (o->pid == 0) {
		close(up[0]);
		close(down[1]);
		owner_main(up[1], down[0], uid, hub, unit, key, window);
	}
	close(up[1]);
	close(down[0]);
	o->up = up[0];
	o->down = down[1];
	ret = get(o->up, &hello, sizeof(hello), WAIT_MS);
	if (!ret)
		ret = hello.err;
	o->req = hello.req;
	return ret;
}

static int owner_snap(struct owner *o, struct owner_snap *snap)
{
	int ret = put(o->down, "q", 1);

	return ret ? ret : get(o->up, snap, sizeof(*snap), WAIT_MS);
}

/* Tell the owner to exit; Return: its exit code. */
static int owner_stop(struct owner *o)
{
	int ret;

	if (o->pid <= 0)
		return 0;
	put(o->down, "x", 1);
	ret = pt_reap(o->pid, WAIT_MS);
	close(o->up);
	close(o->down);
	o->pid = 0;
	return ret;
}

/* Expect exactly one completion on @w: @tag, @res. */
#define EXPECT_CQE(w, _tag, _res) do {					\
	struct percs_cqe __c;						\
	ASSERT_EQ(1, pt_cq_wait((w), &__c, PT_TIMEOUT_MS));		\
	EXPECT_EQ((uint64_t)(_tag), __c.user_data);			\
	EXPECT_EQ((_res), __c.res);					\
	EXPECT_EQ(0, percs_cq_poll((w), &__c, 1));			\
} while (0)

FIXTURE(xp) {
	struct percs_hfi_info info;
	struct percs_hfi *hfi;
	struct percs_window *s;	/* the test's own window */
	struct owner o[3];
};

FIXTURE_SETUP(xp)
{
	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, hfi_info(&self->info));
	ASSERT_EQ(0, pt_hfi_open(self->info.nr_hubs - 1, 0, &self->hfi));
}

FIXTURE_TEARDOWN(xp)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		owner_stop(&self->o[i]);
	percs_window_release(self->s);
	if (self->hfi)
		percs_hfi_close(self->hfi);
}

/*
 * Another process of another job, same uid, no fd: its packets to the
 * window complete with -EACCES (FIFO, immediate, a forged job key) and
 * the window sees nothing.  Its user may query the window: key, pid, uid.
 */
TEST_F(xp, other_job_cannot_touch_window)
{
	uint32_t key_a = pt_new_key(), key_s = pt_new_key();
	struct owner *a = &self->o[0];
	struct percs_window_query q;
	struct percs_pkt_hdr h;
	struct owner_snap snap;

	ASSERT_EQ(0, owner_start(a, geteuid(), 0, 0, key_a, PERCS_WINDOW_ANY));
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO_4K, FIFO_4K, key_s,
				PERCS_WINDOW_ANY, &self->s));
	ASSERT_EQ(0, pt_send(self->s, &a->req.addr, "fifo", 4, 1, 0,
			     PT_TIMEOUT_MS));
	EXPECT_CQE(self->s, 1, -EACCES);
	ASSERT_EQ(0, pt_icswx(self->s, &a->req.addr, "imm", 3, 2,
			      PT_TIMEOUT_MS));
	EXPECT_CQE(self->s, 2, -EACCES);
	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.dst = a->req.addr;
	h.job_key = key_a;	/* forged: the HFI stamps the real one */
	h.tag = 3;
	ASSERT_EQ(0, percs_send_compose_hdr(self->s, &h, "forged", 6));
	ASSERT_EQ(0, percs_send_trigger(self->s));
	EXPECT_CQE(self->s, 3, -EACCES);
	EXPECT_EQ(3, percs_window_status(self->s)->send_errors);

	ASSERT_EQ(0, query(a->req.addr.hub, a->req.addr.hfi,
			   a->req.addr.window, &q));
	EXPECT_EQ(PERCS_WSTATE_ACTIVE, q.state);
	EXPECT_EQ(key_a, q.job_key);
	EXPECT_EQ(a->pid, q.pid);
	EXPECT_EQ(geteuid(), q.uid);
	EXPECT_EQ(0, q.packets_received);
	ASSERT_EQ(0, owner_snap(a, &snap));
	EXPECT_EQ(0, snap.recv_tail);
	EXPECT_EQ(0, snap.packets_received);
	EXPECT_EQ(0, snap.flags & PERCS_STATUS_ERROR);
	EXPECT_EQ(0, owner_stop(a));
}

/* exit codes of the nobody checks: 0 all as expected, else which failed */
struct nobody_args {
	uint32_t root_key;
	uint32_t root_window;
	struct percs_addr root_addr;
};

static int nobody_checks(const struct nobody_args *na)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_cqe c;
	uint32_t mine;
	int hfd, fd, n;

	/* Another user's process: it has none of root's job fds fork gave. */
	pt_jobs_close();
	mine = pt_new_key();
	hfd = pt_hfi_open_fd(na->root_addr.hub, na->root_addr.hfi);
	if (hfd < 0 || !mine)
		return 1;
	/* No fd this process has joins root's job: it holds none. */
	for (n = 0; n < 64; n++) {
		memset(&req, 0, sizeof(req));
		req.size = sizeof(req);
		req.send_fifo_size = req.recv_fifo_size = FIFO_4K;
		req.job_fd = n;
		req.window = PERCS_WINDOW_ANY;
		fd = ioctl(hfd, PERCS_IOC_WINDOW_RESERVE, &req);
		if (fd >= 0 && req.job_key == na->root_key)
			return 2;
		if (fd >= 0)
			close(fd);
	}
	/* Its own job, but root's index: taken. */
	if (pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, mine, na->root_window,
			   &req) != -EBUSY)
		return 4;
	/* Its own job anywhere: fine (the device is 0666). */
	fd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, mine, PERCS_WINDOW_ANY,
			    &req);
	if (fd < 0 || req.window == na->root_window || mine == na->root_key)
		return 5;
	close(fd);
	close(hfd);
	/* Root's window is in use, and that is all it learns. */
	if (query(na->root_addr.hub, na->root_addr.hfi, na->root_window, &q) ||
	    q.state != PERCS_WSTATE_HIDDEN || q.uid || q.pid || q.job_key ||
	    q.packets_sent || q.packets_received || q.send_fifo_size != FIFO_4K)
		return 6;
	/* Packets from nobody's job to root's window: EACCES. */
	if (pt_hfi_open(0, 0, &hfi))
		return 7;
	if (pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, mine, PERCS_WINDOW_ANY, &w))
		return 8;
	if (pt_send(w, &na->root_addr, "x", 1, 9, 0, PT_TIMEOUT_MS) ||
	    pt_cq_wait(w, &c, PT_TIMEOUT_MS) != 1 || c.res != -EACCES ||
	    c.user_data != 9)
		return 9;
	percs_window_release(w);
	percs_hfi_close(hfi);
	return 0;
}

/*
 * Another uid cannot join root's job (no fd it holds names it), nor take
 * a reserved index with its own job (EBUSY), nor learn root's key, pid or
 * traffic (the query says "hidden"); its packets do not reach root's
 * window.
 */
TEST_F(xp, other_uid_key_eacces_index_ebusy)
{
	struct nobody_args na;
	struct percs_window_query q;
	struct pt_live live;
	uint32_t idx = self->info.windows_total / 2 + 3;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	na.root_key = pt_new_key();
	na.root_window = idx;
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO_4K, FIFO_4K, na.root_key,
				idx, &self->s));
	na.root_addr = percs_window_addr(self->s);
	ASSERT_EQ(idx, na.root_addr.window);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(become(NOBODY) ? 100 : nobody_checks(&na));
	EXPECT_EQ(0, pt_reap(pid, WAIT_MS));
	/* Root's window is untouched and alone. */
	ASSERT_EQ(0, query(na.root_addr.hub, na.root_addr.hfi, idx, &q));
	EXPECT_EQ(0, q.packets_received);
	EXPECT_EQ(0, percs_window_status(self->s)->recv_tail);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(1, live.windows);
	EXPECT_EQ(1, live.jobs);	/* nobody's job went with it */
}

/*
 * mmap keys are not global: another process's keys used on our window's
 * fd map our regions, never theirs.
 */
TEST_F(xp, mmap_keys_not_global)
{
	uint32_t key_a = pt_new_key(), key_b = pt_new_key();
	struct owner *a = &self->o[0];
	struct pt_rawwin b;
	struct percs_pkt_hdr h;
	unsigned int r;
	int hfd;

	ASSERT_EQ(0, owner_start(a, geteuid(), 0, 0, key_a, PERCS_WINDOW_ANY));
	hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, pt_rawwin_open(&b, hfd, 0, FIFO_4K, FIFO_4K, key_b));
	/* B: writable regions 0x55, one packet to itself with NOTIFY. */
	for (r = 0; r < NR_REGIONS; r++)
		if (b.req.regions[r].flags & PERCS_REGION_F_WRITABLE)
			memset(b.map[r], 0x55, b.req.regions[r].length);
	pt_rawwin_db(&b)->recv_head = 0;
	pt_rawwin_db(&b)->cq_head = 0;
	pt_rawwin_db(&b)->imm_tail = 0;
	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.flags = PERCS_PKT_F_NOTIFY;
	h.length = 100;
	h.dst = b.req.addr;
	h.tag = 0xb0b;
	ASSERT_EQ(1, pt_raw_trigger(&b, pt_raw_put(&b, 0, &h, NULL), true));

	for (r = 0; r < NR_REGIONS; r++) {
		const struct percs_region *ra = &a->req.regions[r];
		const uint8_t *p;
		size_t i;
		bool all_a = true;

		ASSERT_EQ(b.req.regions[r].length, ra->length);
		p = mmap(NULL, ra->length, PROT_READ, MAP_SHARED, b.fd,
			 (off_t)ra->offset);
		ASSERT_NE(MAP_FAILED, p) TH_LOG("region %u: %s", r,
						strerror(errno));
		EXPECT_EQ(0, memcmp(p, b.map[r], ra->length))
			TH_LOG("region %u is not B's", r);
		/* A's: send FIFO and slots all 0xAA, the others all zero. */
		for (i = 0; i < ra->length && all_a; i++)
			all_a = p[i] == (r == PERCS_REGION_SEND_FIFO ||
					 r == PERCS_REGION_IMM ? 0xaa : 0);
		EXPECT_FALSE(all_a) TH_LOG("region %u looks like A's", r);
		munmap((void *)p, ra->length);
	}
	/* The HFI fd maps nothing at all. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, a->req.regions[0].length, PROT_READ,
				   MAP_SHARED, hfd,
				   (off_t)a->req.regions[0].offset));
	EXPECT_EQ(ENODEV, errno);
	pt_rawwin_close(&b);
	close(hfd);
	EXPECT_EQ(0, owner_stop(a));
	ASSERT_LIVE_ZERO();
}

/* One FIFO packet from a raw window; Return: the kick's answer. */
static int raw_send(struct pt_rawwin *rw, uint64_t *pos,
		    struct percs_addr dst, uint32_t tag)
{
	struct percs_pkt_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.length = 8;
	h.dst = dst;
	h.tag = tag;
	*pos = pt_raw_put(rw, *pos, &h, "fd-user!");
	return pt_raw_trigger(rw, *pos, true);
}

/* As nobody: drive root's window through a passed fd. */
static int fd_user(int sock, uint32_t key, struct percs_addr dst)
{
	struct percs_window_reserve req, tmp;
	struct pt_rawwin rw;
	uint64_t pos = 0;
	int fd, hfd;
	char c;

	fd = pt_recv_fd(sock, &req, sizeof(req), WAIT_MS);
	if (fd < 0)
		return 10;
	if (pt_rawwin_map(&rw, fd, &req))
		return 11;
	if (raw_send(&rw, &pos, dst, 0xf1) != 1)
		return 12;
	/* A window's fd is not its job's: joining with it is refused. */
	hfd = pt_hfi_open_fd(0, 0);
	memset(&tmp, 0, sizeof(tmp));
	tmp.size = sizeof(tmp);
	tmp.send_fifo_size = tmp.recv_fifo_size = FIFO_4K;
	tmp.job_fd = fd;
	tmp.window = PERCS_WINDOW_ANY;
	if (hfd < 0 || ioctl(hfd, PERCS_IOC_WINDOW_RESERVE, &tmp) >= 0 ||
	    errno != EINVAL || pt_any_fd_joins(key))
		return 13;
	close(hfd);
	if (put(sock, "s", 1) || get(sock, &c, 1, WAIT_MS) || c != 'c')
		return 14;
	/* The owner has closed its copy: still ours to drive. */
	if (raw_send(&rw, &pos, dst, 0xf2) != 1 ||
	    pt_rawwin_st(&rw)->packets_sent != 2)
		return 15;
	pt_rawwin_close(&rw);
	return put(sock, "d", 1) ? 16 : 0;
}

/*
 * SCM_RIGHTS to a process of another uid: the window fd is the capability
 * to drive the window, not to join its job (no window of its own gets
 * in); the window lives until both have closed it.
 */
TEST_F(xp, scm_rights_to_other_uid)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	struct percs_pkt_hdr got;
	uint32_t key = pt_new_key();
	char buf[64], c;
	int sv[2], hfd, wfd, ret;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &self->s));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	fflush(stderr);
	pid = fork();	/* before the window: it cannot inherit it */
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Only the window fd passed below: none of root's jobs. */
		pt_jobs_close();
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(become(NOBODY) ? 100 :
		      fd_user(sv[1], key, percs_window_addr(self->s)));
	}
	close(sv[1]);
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, PERCS_WINDOW_ANY,
			     &req);
	ASSERT_LE(0, wfd);
	ASSERT_EQ(sizeof(req), pt_send_fd(sv[0], wfd, &req, sizeof(req)));
	ASSERT_EQ(0, get(sv[0], &c, 1, WAIT_MS));
	ASSERT_EQ('s', c);
	ret = pt_recv(self->s, &got, buf, sizeof(buf), PT_TIMEOUT_MS);
	ASSERT_EQ(8, ret);
	EXPECT_EQ(0xf1, got.tag);
	EXPECT_EQ(req.addr.window, got.src.window);
	EXPECT_EQ(key, got.job_key);
	/* Root lets go; the window is still there (nobody holds it). */
	close(wfd);
	ASSERT_EQ(0, query(0, 0, req.window, &q));
	EXPECT_EQ(0, q.uid);	/* the reserver's, not the holder's */
	ASSERT_EQ(0, put(sv[0], "c", 1));
	ASSERT_EQ(8, pt_recv(self->s, &got, buf, sizeof(buf), PT_TIMEOUT_MS));
	EXPECT_EQ(0xf2, got.tag);
	ASSERT_EQ(0, get(sv[0], &c, 1, WAIT_MS));
	ASSERT_EQ('d', c);
	ASSERT_EQ(0, pt_reap(pid, WAIT_MS));
	EXPECT_EQ(-ENOENT, query(0, 0, req.window, &q));
	close(sv[0]);
	close(hfd);
	percs_window_release(self->s);
	self->s = NULL;
	ASSERT_LIVE_ZERO();
}

/* Does process @pid have a percs window fd open? */
static bool has_window_fd(pid_t pid)
{
	char path[64], link[128];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		char p[320];
		ssize_t n;

		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strstr(link, "percs-window"))
			found = true;
	}
	closedir(d);
	return found;
}

/*
 * fork: the child inherits the window (fd and mappings) and drives it
 * after the parent has let go; the fd is O_CLOEXEC, so a child that execs
 * holds nothing and does not keep the window alive.
 */
TEST_F(xp, fork_inherits_exec_drops)
{
	uint32_t key = pt_new_key();
	struct percs_window_query q;
	struct percs_pkt_hdr got;
	struct pt_rawwin w;
	int hfd, go[2], flags;
	pid_t execd, child;
	uint64_t deadline;
	char buf[64], comm[32] = "";

	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &self->s));
	hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, pt_rawwin_open(&w, hfd, 0, FIFO_4K, FIFO_4K, key));
	flags = fcntl(w.fd, F_GETFD);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	ASSERT_EQ(0, pipe(go));
	fflush(stderr);
	execd = fork();
	ASSERT_LE(0, execd);
	if (execd == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		uint64_t pos = 0;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (get(go[0], &c, 1, WAIT_MS))
			_exit(1);
		_exit(raw_send(&w, &pos, percs_window_addr(self->s), 0xc1) == 1 ?
		      0 : 2);
	}
	close(go[0]);
	/* Wait until the first child runs sleep: then it has no fd. */
	deadline = pt_now_ms() + WAIT_MS;
	do {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", execd);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		if (!strncmp(comm, "sleep", 5))
			break;
		pt_pause_us(1000);
	} while (pt_now_ms() < deadline);
	ASSERT_EQ(0, strncmp(comm, "sleep", 5));
	EXPECT_FALSE(has_window_fd(execd));
	EXPECT_TRUE(has_window_fd(child));

	/* The parent lets go: the forked child still holds the window. */
	pt_rawwin_close(&w);
	ASSERT_EQ(0, query(w.req.addr.hub, w.req.addr.hfi, w.req.window, &q));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(0, pt_reap(child, WAIT_MS));
	ASSERT_EQ(8, pt_recv(self->s, &got, buf, sizeof(buf), PT_TIMEOUT_MS));
	EXPECT_EQ(0xc1, got.tag);
	EXPECT_EQ(w.req.addr.window, got.src.window);
	/* The exec'd child is alive and the window gone all the same. */
	EXPECT_EQ(0, kill(execd, 0));
	EXPECT_EQ(-ENOENT, query(w.req.addr.hub, w.req.addr.hfi, w.req.window,
				 &q));
	kill(execd, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, pt_reap(execd, WAIT_MS));
	close(go[1]);
	close(hfd);
	percs_window_release(self->s);
	self->s = NULL;
	ASSERT_LIVE_ZERO();
}

/*
 * Reuse of a stale address: the owner of (hub 0, HFI 0, window W) exits;
 * packets to it complete with -ECONNREFUSED.  A window of another job (and
 * another uid) takes index W: the old job's packets complete with -EACCES
 * and never reach it.  A window of the old job at W again: delivered.
 */
TEST_F(xp, stale_address_after_owner_exits)
{
	uint32_t key = pt_new_key(), other = pt_new_key();
	uint32_t idx = self->info.windows_total - 3;
	struct percs_addr dst = { .hub = 0, .hfi = 0, .window = idx };
	struct percs_window_query q;
	struct owner_snap snap;
	uid_t uid2 = geteuid() == 0 ? NOBODY : geteuid();
	uint64_t deadline;

	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &self->s));
	/* 1: the owner comes and goes. */
	ASSERT_EQ(0, owner_start(&self->o[0], geteuid(), 0, 0, key, idx));
	ASSERT_EQ(0, pt_send(self->s, &dst, "one", 3, 1, PERCS_PKT_F_NOTIFY,
			     PT_TIMEOUT_MS));
	EXPECT_CQE(self->s, 1, 0);
	EXPECT_EQ(0, owner_stop(&self->o[0]));
	EXPECT_EQ(-ENOENT, query(0, 0, idx, &q));
	/* 2: the stale address refuses. */
	ASSERT_EQ(0, pt_send(self->s, &dst, "two", 3, 2, 0, PT_TIMEOUT_MS));
	EXPECT_CQE(self->s, 2, -ECONNREFUSED);
	ASSERT_EQ(0, pt_icswx(self->s, &dst, "imm", 3, 3, PT_TIMEOUT_MS));
	EXPECT_CQE(self->s, 3, -ECONNREFUSED);
	/* 3: another job (and uid) at the same index. */
	ASSERT_EQ(0, owner_start(&self->o[1], uid2, 0, 0, other, idx));
	ASSERT_EQ(0, query(0, 0, idx, &q));
	EXPECT_EQ(other, q.job_key);
	EXPECT_EQ(self->o[1].pid, q.pid);
	EXPECT_EQ(uid2, q.uid);
	ASSERT_EQ(0, pt_send(self->s, &dst, "three", 5, 4, 0, PT_TIMEOUT_MS));
	EXPECT_CQE(self->s, 4, -EACCES);
	ASSERT_EQ(0, pt_icswx(self->s, &dst, "imm", 3, 5, PT_TIMEOUT_MS));
	EXPECT_CQE(self->s, 5, -EACCES);
	ASSERT_EQ(0, owner_snap(&self->o[1], &snap));
	EXPECT_EQ(0, snap.recv_tail);
	EXPECT_EQ(0, snap.packets_received);
	EXPECT_EQ(0, owner_stop(&self->o[1]));
	/* 4: the old job at that index again: delivered. */
	ASSERT_EQ(0, owner_start(&self->o[2], geteuid(), 0, 0, key, idx));
	ASSERT_EQ(0, pt_send(self->s, &dst, "four", 4, 6, 0, PT_TIMEOUT_MS));
	deadline = pt_now_ms() + PT_TIMEOUT_MS;
	do {
		ASSERT_EQ(0, owner_snap(&self->o[2], &snap));
		if (snap.packets_received)
			break;
		pt_pause_us(1000);
	} while (pt_now_ms() < deadline);
	EXPECT_EQ(1, snap.packets_received);
	EXPECT_EQ(6, snap.first_tag);
	EXPECT_EQ(0, owner_stop(&self->o[2]));
	EXPECT_EQ(4, percs_window_status(self->s)->send_errors);
	percs_window_release(self->s);
	self->s = NULL;
	ASSERT_LIVE_ZERO();
}

static int unprivileged_use(unsigned int nr_hfis)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	struct percs_hfi_info info;
	unsigned int i;
	int hfd, fd;

	for (i = 0; i < nr_hfis; i++) {
		hfd = pt_hfi_open_fd(i / 2, i % 2);
		if (hfd < 0)
			return 1;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (ioctl(hfd, PERCS_IOC_HFI_INFO, &info) || info.hub != i / 2 ||
		    info.unit != i % 2)
			return 2;
		close(hfd);
	}
	hfd = pt_hfi_open_fd(0, 0);
	fd = pt_reserve_raw(hfd, PERCS_WINDOW_F_POLL, FIFO_4K, FIFO_4K,
			    pt_new_key(), PERCS_WINDOW_ANY, &req);
	if (fd < 0)
		return 3;
	if (query(0, 0, req.window, &q) || q.uid != NOBODY ||
	    q.pid != (uint32_t)getpid())
		return 4;
	close(fd);
	if (query(0, 0, req.window, &q) != -ENOENT)
		return 5;
	close(hfd);
	return 0;
}

/* /dev/percs-hfiN is 0666: an unprivileged uid opens every HFI and
 * reserves a window with a fresh key of its own.
 */
TEST_F(xp, devices_0666_unprivileged_reserve)
{
	unsigned int n = self->info.nr_hubs * 2, i;
	pid_t pid;

	for (i = 0; i < n; i++) {
		char path[64];
		struct stat sb;

		snprintf(path, sizeof(path), "/dev/percs-hfi%u", i);
		ASSERT_EQ(0, stat(path, &sb)) TH_LOG("%s", path);
		EXPECT_TRUE(S_ISCHR(sb.st_mode));
		EXPECT_EQ(0666, sb.st_mode & 07777) TH_LOG("%s", path);
	}
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(become(NOBODY) ? 100 : unprivileged_use(n));
	EXPECT_EQ(0, pt_reap(pid, WAIT_MS));
	ASSERT_LIVE_ZERO();
}

/* The only ways to another process's fd, as another uid: all refused. */
static int steal_as_nobody(pid_t owner, int wfd)
{
	char path[64];
	int pidfd, fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", owner, wfd);
	fd = open(path, O_RDWR);
	if (fd >= 0 || errno != EACCES)
		return 1;
	pidfd = syscall(SYS_pidfd_open, owner, 0);
	if (pidfd < 0)
		return 2;
	fd = syscall(SYS_pidfd_getfd, pidfd, wfd, 0);
	if (fd >= 0 || errno != EPERM)
		return 3;
	close(pidfd);
	return 0;
}

/*
 * No way around the fd: reopening a window or a job through /proc/PID/fd
 * gives nothing even to its owner (an anonymous inode: ENXIO); another
 * uid can neither open the link (EACCES) nor take the fd with
 * pidfd_getfd (EPERM).
 */
TEST_F(xp, no_reopen_no_steal)
{
	struct percs_window_reserve req;
	uint32_t key = pt_new_key();
	int hfd, wfd, fd, jfd = pt_job_fd(key);
	char path[64];
	pid_t pid;

	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key,
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", i ? jfd : wfd);
		fd = open(path, O_RDWR);
		EXPECT_EQ(-1, fd);
		EXPECT_EQ(ENXIO, errno);
		if (fd >= 0)
			close(fd);
	}
	if (geteuid() == 0) {
		pid_t me = getpid();
		int r;

		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (become(NOBODY))
				_exit(100);
			r = steal_as_nobody(me, wfd);
			_exit(r ? r : 10 * steal_as_nobody(me, jfd));
		}
		EXPECT_EQ(0, pt_reap(pid, WAIT_MS));
	}
	close(wfd);
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* In a new user namespace as nobody: full capabilities there, none here. */
static int userns_checks(uint32_t root_key, struct percs_addr root_addr)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	int hfd, fd, map;

	if (unshare(CLONE_NEWUSER))
		return errno == EPERM || errno == EINVAL || errno == ENOSPC ?
		       50 : 1;
	/* "root" inside: map uid 0 to ourselves (nobody). */
	map = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
	if (map < 0 || write(map, "0 65534 1", 9) != 9)
		return 2;
	close(map);
	if (geteuid() != 0)
		return 3;
	hfd = pt_hfi_open_fd(root_addr.hub, root_addr.hfi);
	if (hfd < 0)
		return 4;
	/*
	 * CAP_SYS_ADMIN of a user namespace is not an administrator's:
	 * root's window stays hidden, its key unknown.
	 */
	if (query(root_addr.hub, root_addr.hfi, root_addr.window, &q) ||
	    q.state != PERCS_WSTATE_HIDDEN || q.job_key || q.uid || q.pid)
		return 6;
	if (root_key == 0)
		return 5;
	/* Our own window: our uid as the namespace sees it (0). */
	fd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K,
			    pt_new_key(), PERCS_WINDOW_ANY, &req);
	if (fd < 0)
		return 7;
	if (query(root_addr.hub, root_addr.hfi, req.window, &q) || q.uid != 0)
		return 8;
	close(fd);
	close(hfd);
	return 0;
}

/*
 * In a user namespace, where an unprivileged user has CAP_SYS_ADMIN,
 * root's windows stay hidden (only the initial namespace's administrator
 * sees keys); queries translate uids into the caller's namespace.
 */
TEST_F(xp, user_namespace_sees_no_root_key)
{
	uint32_t key = pt_new_key();
	struct percs_addr addr;
	pid_t pid;
	int rc;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &self->s));
	addr = percs_window_addr(self->s);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(become(NOBODY) ? 100 : userns_checks(key, addr));
	rc = pt_reap(pid, WAIT_MS);
	if (rc == 50)
		SKIP(return, "no user namespace for nobody here (EPERM: e.g. a chrooted root, as in percs-vm)");
	EXPECT_EQ(0, rc);
	percs_window_release(self->s);
	self->s = NULL;
	ASSERT_LIVE_ZERO();
}

/* In a new pid namespace: pids read as that namespace sees them. */
static int pidns_checks(struct percs_addr root_addr)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	pid_t pid;
	int hfd, fd;

	if (unshare(CLONE_NEWPID))	/* EINVAL: no CONFIG_PID_NS */
		return errno == EINVAL || errno == EPERM ? 50 : 1;
	pid = fork();	/* the first child is pid 1 of the namespace */
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (getpid() != 1)
			_exit(3);
		/* The reserver of root's window is not visible here: 0. */
		if (query(root_addr.hub, root_addr.hfi, root_addr.window, &q) ||
		    q.pid != 0)
			_exit(4);
		hfd = pt_hfi_open_fd(root_addr.hub, root_addr.hfi);
		fd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K,
				    pt_new_key(),
				    PERCS_WINDOW_ANY, &req);
		if (fd < 0)
			_exit(5);
		if (query(root_addr.hub, root_addr.hfi, req.window, &q) ||
		    q.pid != 1)
			_exit(6);
		close(fd);
		close(hfd);
		_exit(0);
	}
	return pt_reap(pid, WAIT_MS);
}

/* WINDOW_QUERY gives the reserver's pid in the caller's pid namespace,
 * 0 where it is not visible.
 */
TEST_F(xp, pid_namespace_query)
{
	struct percs_window_query q;
	struct percs_addr addr;
	pid_t pid;
	int rc;

	if (geteuid() != 0)
		SKIP(return, "needs root for a pid namespace");
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, FIFO_4K, FIFO_4K, pt_new_key(),
				PERCS_WINDOW_ANY, &self->s));
	addr = percs_window_addr(self->s);
	ASSERT_EQ(0, query(addr.hub, addr.hfi, addr.window, &q));
	EXPECT_EQ(getpid(), q.pid);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(pidns_checks(addr));
	rc = pt_reap(pid, WAIT_MS);
	if (rc == 50)
		SKIP(return, "no pid namespaces in this kernel");
	EXPECT_EQ(0, rc);
	percs_window_release(self->s);
	self->s = NULL;
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
