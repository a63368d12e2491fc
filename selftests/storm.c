// SPDX-License-Identifier: GPL-2.0
/*
 * storm: many processes reserving, mapping, touching and dropping windows
 * at once, in a random order, some of them exiting (or being killed) with
 * their windows still open.
 *
 * 16 processes x 200 iterations (x $PERCS_TEST_SCALE): open an HFI (random
 * hub and unit), reserve a window (random FIFO sizes, random kick or poll
 * engine), map every region, touch every page (read all, write the
 * writable ones), sometimes send a packet to itself and check it arrived,
 * then munmap / close the window fd / close the HFI fd in a random order.
 * One iteration in four runs in a fresh child that does only a random part
 * of the clean-up and then exits or SIGKILLs itself.  Afterwards every
 * debugfs live counter is zero.
 *
 * The run is seeded: the seed is printed (TH_LOG) and PERCS_SEED=N runs
 * the same decisions again.
 *
 * Also a traffic mode for selftests/cycles.sh, run before the harness:
 *   PERCS_STORM_TRAFFIC=N storm   N packets each way (and N/8 immediate
 *                                 lines) between two windows on different
 *                                 supernodes, one kick-mode and one
 *                                 poll-mode; every packet checked; prints
 *                                 one line and exits 0 (all good) or 1.
 *   PERCS_STORM_SERVE=1 storm     the same as a server, one command per
 *                                 line on stdin, one answer line each
 *                                 (an exec costs ~0.2 s in the TCG VM):
 *     load PATH [PARAMS...]       finit_module(), as insmod: "ok" or
 *                                 "err ENAME"
 *     traffic N                   as PERCS_STORM_TRAFFIC=N: "traffic: ok
 *                                 ..." or "traffic: FAIL ..."
 *     unload                      delete_module("percs", O_NONBLOCK), as
 *                                 rmmod: "ok" or "err ENAME"
 *   Between commands it holds nothing of the module.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define ST_PROCS	16
#define ST_ITERS	200
#define ST_DEADLINE_MS	(170 * 1000)
#define NR_REGIONS	(PERCS_REGION_CQ + 1)

static int hfi_info(unsigned int hub, unsigned int unit,
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

/* ---- the storm ---------------------------------------------------------- */

struct st_proc {
	uint64_t iters, children, killed, poll, self_sends, bytes_touched;
	int failed;
	char why[160];
};

struct st_shared {
	uint64_t seed;
	uint64_t deadline;
	unsigned int nr_hubs;
	unsigned int iters;
	struct st_proc p[ST_PROCS];
};

static struct st_shared *sh;

static int st_fail(struct st_proc *p, const char *what, long err)
{
	if (!p->failed) {
		snprintf(p->why, sizeof(p->why), "%s: %ld (%s)", what, err,
			 err < 0 ? strerror((int)-err) : "-");
		fprintf(stderr, "# storm pid %d: %s\n", getpid(), p->why);
	}
	p->failed = 1;
	return 1;
}

/* Power of two in [4 KiB, 1 MiB]; small ones more often. */
static uint32_t rnd_fifo(uint64_t *s)
{
	return PERCS_FIFO_MIN_SIZE << pt_rnd_below(s, pt_rnd_below(s, 9) + 1);
}

/* Send one packet to the window itself and check it arrived intact. */
static int self_send(struct st_proc *p, uint64_t *s, int fd,
		     const struct percs_window_reserve *req, void **map)
{
	volatile uint64_t *send_tail = map[PERCS_REGION_DOORBELL];
	const volatile struct percs_status *st = map[PERCS_REGION_STATUS];
	uint16_t len = 1 + pt_rnd_below(s, PERCS_MAX_PAYLOAD);
	uint32_t units = (PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) /
			 PERCS_FLIT_SIZE;
	uint8_t *slot = map[PERCS_REGION_SEND_FIFO];
	const uint8_t *rx = map[PERCS_REGION_RECV_FIFO];
	const struct percs_pkt_hdr *got = (const void *)rx;
	uint32_t tag = (uint32_t)pt_rnd(s);
	struct percs_pkt_hdr h;
	uint64_t deadline;
	int ret;

	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.length = len;
	h.dst = req->addr;
	h.tag = tag;
	memcpy(slot, &h, sizeof(h));
	pt_fill(slot + sizeof(h), len, tag);
	__atomic_store_n(send_tail, units, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Poll mode: half the time the documented handshake (kick only if
	 * the engine sleeps), half the time an unconditional kick.
	 */
	if ((req->flags & PERCS_WINDOW_F_POLL) && pt_rnd_below(s, 2) &&
	    !(__atomic_load_n(&st->flags, __ATOMIC_ACQUIRE) &
	      PERCS_STATUS_NEED_WAKEUP)) {
		ret = 0;
	} else {
		ret = ioctl(fd, PERCS_IOC_KICK, PERCS_KICK_F_SEND);
		if (ret < 0)
			return st_fail(p, "self-send kick", -errno);
	}
	if (!(req->flags & PERCS_WINDOW_F_POLL) && ret != 1)
		return st_fail(p, "self-send kick moved", ret);
	deadline = pt_now_ms() + PT_TIMEOUT_MS;
	while (__atomic_load_n(&st->recv_tail, __ATOMIC_ACQUIRE) != units) {
		if (pt_now_ms() > deadline)
			return st_fail(p, "self-send: recv_tail",
				       (long)st->recv_tail);
		usleep(200);
	}
	if (got->kind != PERCS_PKT_FIFO || got->length != len ||
	    got->tag != tag || got->src.hub != req->addr.hub ||
	    got->src.hfi != req->addr.hfi ||
	    got->src.window != req->addr.window ||
	    pt_checksum(rx + sizeof(h), len) !=
	    pt_checksum(slot + sizeof(h), len))
		return st_fail(p, "self-send: packet differs", len);
	/* The sender's count follows delivery (the engine counts a packet
	 * once it has landed), so a poll-mode engine may not have bumped it
	 * yet when the packet is seen.
	 */
	while (__atomic_load_n(&st->packets_sent, __ATOMIC_ACQUIRE) != 1 &&
	       pt_now_ms() <= deadline)
		usleep(200);
	if (st->packets_sent != 1 || st->packets_received != 1 ||
	    st->send_errors != 0) {
		char what[96];

		snprintf(what, sizeof(what),
			 "self-send: sent %llu received %llu, send errors",
			 (unsigned long long)st->packets_sent,
			 (unsigned long long)st->packets_received);
		return st_fail(p, what, (long)st->send_errors);
	}
	p->self_sends++;
	return 0;
}

/*
 * One iteration.  @partial >= 0: run in a throw-away child, do only the
 * first @partial clean-up steps and then exit (@kill: by SIGKILL).
 * Return: 0 or 1 (failure recorded in @p).
 */
static int st_iteration(struct st_proc *p, uint64_t *s, int partial,
			bool kill_self)
{
	struct percs_window_reserve req;
	unsigned int hub = pt_rnd_below(s, sh->nr_hubs), unit = pt_rnd_below(s, 2);
	uint32_t flags = pt_rnd_below(s, 2) ? PERCS_WINDOW_F_POLL : 0;
	uint32_t send = rnd_fifo(s), recv = rnd_fifo(s);
	void *map[NR_REGIONS] = { 0 };
	unsigned int order[NR_REGIONS + 2], i, r, n;
	long page = sysconf(_SC_PAGESIZE);
	int hfd, fd;

	hfd = pt_hfi_open_fd(hub, unit);
	if (hfd < 0)
		return st_fail(p, "open HFI", hfd);
	fd = pt_reserve_raw(hfd, flags, send, recv, pt_new_key(),
			    PERCS_WINDOW_ANY, &req);
	/* The window holds its job from here: a job per window, let go. */
	pt_jobs_close();
	if (fd < 0)
		return st_fail(p, "reserve", fd);
	if (req.addr.hub != hub || req.addr.hfi != unit ||
	    req.regions[PERCS_REGION_SEND_FIFO].length != send ||
	    req.regions[PERCS_REGION_RECV_FIFO].length != recv)
		return st_fail(p, "reserve answer", req.addr.hub);
	if (flags)
		p->poll++;

	for (r = 0; r < NR_REGIONS; r++) {
		const struct percs_region *reg = &req.regions[r];
		bool w = reg->flags & PERCS_REGION_F_WRITABLE;
		volatile uint8_t *b;
		size_t off;

		map[r] = mmap(NULL, reg->length,
			      PROT_READ | (w ? PROT_WRITE : 0), MAP_SHARED,
			      fd, (off_t)reg->offset);
		if (map[r] == MAP_FAILED)
			return st_fail(p, "mmap", -errno);
		/* Touch every page: read it all, write the writable ones
		 * (never the doorbell's trigger and credit words).
		 */
		b = map[r];
		for (off = 0; off < reg->length; off += sizeof(uint64_t))
			(void)*(volatile uint64_t *)(b + off);
		if (w)
			for (off = 0; off < reg->length; off += page)
				b[off + (r == PERCS_REGION_DOORBELL ? 8 : 0) +
				  pt_rnd_below(s, 56)] = (uint8_t)pt_rnd(s);
		p->bytes_touched += reg->length;
	}
	if (pt_rnd_below(s, 4) == 0 && self_send(p, s, fd, &req, map))
		return 1;

	/* Clean up in a random order: NR_REGIONS munmaps, two closes. */
	n = NR_REGIONS + 2;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		unsigned int j = pt_rnd_below(s, i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++) {
		if (partial >= 0 && (int)i == partial) {
			if (kill_self)
				kill(getpid(), SIGKILL);
			_exit(0);
		}
		if (order[i] < NR_REGIONS) {
			r = order[i];
			if (munmap(map[r], req.regions[r].length))
				return st_fail(p, "munmap", -errno);
		} else if (order[i] == NR_REGIONS) {
			if (close(fd))
				return st_fail(p, "close window", -errno);
		} else {
			if (close(hfd))
				return st_fail(p, "close HFI", -errno);
		}
	}
	return 0;
}

static int st_worker(int idx, void *arg)
{
	struct st_proc *p = &sh->p[idx];
	uint64_t s = pt_mix64(sh->seed ^ (0x1000193ull * (idx + 1)));
	unsigned int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 0; i < sh->iters; i++) {
		unsigned int what = pt_rnd_below(&s, 8);

		if (pt_now_ms() > sh->deadline)
			return st_fail(p, "deadline at iteration", i);
		if (what < 2) {
			/* A fresh child that exits with things still open. */
			int partial = pt_rnd_below(&s, NR_REGIONS + 2);
			bool kill_self = what == 1;
			uint64_t cs = pt_rnd(&s);
			int status;
			pid_t pid;

			pid = fork();
			if (pid < 0)
				return st_fail(p, "fork", -errno);
			if (pid == 0) {
				if (st_iteration(p, &cs, partial, kill_self))
					_exit(1);
				_exit(2);	/* never gets here */
			}
			status = pt_reap(pid, 30000);
			if (status < 0)
				return st_fail(p, "child timed out", i);
			if (status != (kill_self ? 128 + SIGKILL : 0))
				return st_fail(p, "child status", status);
			p->children++;
			p->killed += kill_self;
		} else if (st_iteration(p, &s, -1, false)) {
			return 1;
		}
		p->iters++;
	}
	return 0;
}

FIXTURE(storm) {
};

FIXTURE_SETUP(storm)
{
	PT_REQUIRE_DEVICE();
}

FIXTURE_TEARDOWN(storm)
{
}

TEST_F_TIMEOUT(storm, open_reserve_map_touch_drop, 200)
{
	struct percs_hfi_info info;
	const char *env = getenv("PERCS_SEED");
	uint64_t totals[5] = { 0 };
	uint64_t t0 = pt_now_ms();
	int failed, i;

	ASSERT_EQ(0, hfi_info(0, 0, &info));
	ASSERT_LIVE_ZERO();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	sh->seed = env ? strtoull(env, NULL, 0) :
			 pt_mix64(pt_now_ms() ^ (uint64_t)getpid() << 32);
	sh->nr_hubs = info.nr_hubs;
	sh->iters = pt_scale(ST_ITERS);
	sh->deadline = pt_now_ms() + ST_DEADLINE_MS;
	TH_LOG("seed %llu (PERCS_SEED=%llu repeats it): %d processes x %u iterations",
	       (unsigned long long)sh->seed, (unsigned long long)sh->seed,
	       ST_PROCS, sh->iters);

	failed = pt_fork_n(ST_PROCS, st_worker, NULL, ST_DEADLINE_MS + 10000);
	for (i = 0; i < ST_PROCS; i++) {
		struct st_proc *p = &sh->p[i];

		if (p->failed)
			TH_LOG("process %d: %s", i, p->why);
		totals[0] += p->iters;
		totals[1] += p->children;
		totals[2] += p->killed;
		totals[3] += p->poll;
		totals[4] += p->self_sends;
	}
	TH_LOG("%llu iterations (%llu in children, %llu of them killed), %llu poll-mode windows, %llu self-sends, %llu ms",
	       (unsigned long long)totals[0], (unsigned long long)totals[1],
	       (unsigned long long)totals[2], (unsigned long long)totals[3],
	       (unsigned long long)totals[4],
	       (unsigned long long)(pt_now_ms() - t0));
	EXPECT_EQ(0, failed);
	EXPECT_EQ((uint64_t)ST_PROCS * sh->iters, totals[0]);
	/* Every window, mapping and job key of the storm is gone. */
	ASSERT_LIVE_ZERO();
	for (i = 0; i < (int)info.nr_hubs * 2; i++)
		EXPECT_EQ(0, pt_sysfs_windows_in_use(i / 2, i % 2));
	munmap(sh, sizeof(*sh));
}

/* ---- traffic mode for cycles.sh ----------------------------------------- */

static int tr_fail(const char *what, int err)
{
	printf("traffic: FAIL %s: %d (%s)\n", what, err,
	       err < 0 ? strerror(-err) : "-");
	return 1;
}

/* Check one packet received on @w: from @src, tag @tag, payload seeded. */
static int tr_recv(struct percs_window *w, const struct percs_addr *src,
		   uint32_t tag, size_t len, uint8_t *buf, uint8_t *want)
{
	struct percs_pkt_hdr h;
	int ret = pt_recv(w, &h, buf, PERCS_MAX_PAYLOAD, PT_TIMEOUT_MS);

	if (ret < 0)
		return tr_fail("receive", ret);
	pt_fill(want, len, tag);
	if ((size_t)ret != len || h.tag != tag || h.src.hub != src->hub ||
	    h.src.hfi != src->hfi || h.src.window != src->window ||
	    memcmp(buf, want, len))
		return tr_fail("packet differs, tag", (int)tag);
	return 0;
}

static int traffic(unsigned int n)
{
	struct percs_hfi *h[2] = { NULL, NULL };
	struct percs_window *w[2] = { NULL, NULL };
	struct percs_addr a[2];
	struct percs_hfi_info info;
	uint8_t *buf = malloc(PERCS_MAX_PAYLOAD), *want = malloc(PERCS_MAX_PAYLOAD);
	uint32_t key = pt_new_key();
	unsigned int i, side, hub[2];
	int ret = 1, err;

	if (!buf || !want)
		goto out;
	err = hfi_info(0, 0, &info);
	if (err) {
		tr_fail("HFI_INFO", err);
		goto out;
	}
	hub[0] = 0;
	hub[1] = info.nr_hubs - 1;	/* the last supernode */
	for (side = 0; side < 2; side++) {
		err = pt_hfi_open(hub[side], side, &h[side]);
		if (!err)
			err = pt_reserve(h[side], side ? PERCS_WINDOW_F_POLL : 0,
					 PERCS_FIFO_MIN_SIZE << side,
					 PERCS_FIFO_MIN_SIZE << (1 - side), key,
					 PERCS_WINDOW_ANY, &w[side]);
		if (err) {
			tr_fail("open/reserve", err);
			goto out;
		}
		a[side] = percs_window_addr(w[side]);
	}
	for (i = 0; i < n; i++) {
		for (side = 0; side < 2; side++) {
			uint32_t tag = i << 1 | side;
			size_t len = 1 + pt_mix64(tag) % PERCS_MAX_PAYLOAD;

			pt_fill(want, len, tag);
			err = pt_send(w[side], &a[1 - side], want, len, tag, 0,
				      PT_TIMEOUT_MS);
			if (err) {
				tr_fail("send", err);
				goto out;
			}
		}
		for (side = 0; side < 2; side++) {
			uint32_t tag = i << 1 | (1 - side);

			if (tr_recv(w[side], &a[1 - side], tag,
				    1 + pt_mix64(tag) % PERCS_MAX_PAYLOAD, buf,
				    want))
				goto out;
		}
		if (i % 8)
			continue;
		/* An immediate line each way now and then. */
		for (side = 0; side < 2; side++) {
			uint32_t tag = 0x80000000u | i << 1 | side;

			pt_fill(want, PERCS_IMM_PAYLOAD, tag);
			err = pt_icswx(w[side], &a[1 - side], want,
				       PERCS_IMM_PAYLOAD, tag, PT_TIMEOUT_MS);
			if (err) {
				tr_fail("icswx", err);
				goto out;
			}
		}
		for (side = 0; side < 2; side++)
			if (tr_recv(w[side], &a[1 - side],
				    0x80000000u | i << 1 | (1 - side),
				    PERCS_IMM_PAYLOAD, buf, want))
				goto out;
	}
	for (side = 0; side < 2; side++) {
		const volatile struct percs_status *st =
			percs_window_status(w[side]);
		struct percs_cqe c;

		if (st->send_errors || percs_cq_poll(w[side], &c, 1)) {
			tr_fail("send errors", (int)st->send_errors);
			goto out;
		}
		if (st->packets_received != n + (n + 7) / 8) {
			tr_fail("packets received", (int)st->packets_received);
			goto out;
		}
	}
	printf("traffic: ok: %u packets and %u immediate lines each way, hub %u (kick) <-> hub %u (poll)\n",
	       n, (n + 7) / 8, hub[0], hub[1]);
	ret = 0;
out:
	for (side = 0; side < 2; side++) {
		percs_window_release(w[side]);
		if (h[side])
			percs_hfi_close(h[side]);
	}
	/* A server between commands holds nothing: rmmod may come next. */
	pt_jobs_close();
	free(buf);
	free(want);
	return ret;
}

static void answer(long ret)
{
	if (ret == 0)
		printf("ok\n");
	else
		printf("err %s\n", strerrorname_np(errno) ?: "E?");
	fflush(stdout);
}

/* The command loop of PERCS_STORM_SERVE (see the top of the file). */
static int serve(void)
{
	char line[512];

	while (fgets(line, sizeof(line), stdin)) {
		char *nl = strchr(line, '\n'), *arg;

		if (nl)
			*nl = '\0';
		if (!strncmp(line, "load ", 5)) {
			char *params;
			int fd;

			arg = line + 5;
			params = strchr(arg, ' ');
			if (params)
				*params++ = '\0';
			fd = open(arg, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				answer(-1);
				continue;
			}
			answer(syscall(SYS_finit_module, fd, params ? params : "",
				       0));
			close(fd);
		} else if (!strncmp(line, "traffic ", 8)) {
			traffic((unsigned int)strtoul(line + 8, NULL, 0));
			fflush(stdout);
		} else if (!strcmp(line, "unload")) {
			answer(syscall(SYS_delete_module, "percs", O_NONBLOCK));
		} else {
			printf("err unknown command '%s'\n", line);
			fflush(stdout);
		}
	}
	return 0;
}

static void __attribute__((constructor)) traffic_mode(void)
{
	const char *n = getenv("PERCS_STORM_TRAFFIC");

	if (getenv("PERCS_STORM_SERVE")) {
		fflush(stdout);
		exit(serve());
	}
	if (!n)
		return;
	fflush(stdout);
	exit(traffic((unsigned int)strtoul(n, NULL, 0)));
}

TEST_HARNESS_MAIN
