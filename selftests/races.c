// SPDX-License-Identifier: GPL-2.0
/*
 * races: a window's lifetime against the engine delivering into it.
 *
 * A sender process (kick-mode or poll-mode engine: the two variants)
 * streams packets without pause to whichever window is the current
 * "victim" and drains what the victims send back.  Meanwhile the victim
 * windows are reserved and destroyed round after round by several threads
 * at once: one closes the window fd (and a dup() of it), one maps and
 * unmaps regions through the fd and moves mappings with mremap, one
 * consumes the receive FIFO and returns credits, one sends to the sender
 * and kicks; some rounds fork a child that keeps the mappings while the
 * parent closes everything, some rounds run in a child process that exits
 * (or is SIGKILLed) with all those threads in flight.
 *
 * What must hold: the sender only ever sees successes or -ECONNREFUSED
 * completions and never stalls (every wait has a deadline); every packet
 * a victim or the sender reads is intact and from its job; the sender's
 * packets_sent + send_errors equals what it composed; afterwards nothing
 * is left (debugfs live counters) and the kernel log is clean (the runner
 * checks it after the program).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define RC_ROUNDS	120	/* victim windows per test (scaled) */
#define RC_STALL_MS	10000	/* the sender must progress within this */
#define RC_DEADLINE_MS	(100 * 1000)
#define NR_REGIONS	(PERCS_REGION_CLOCK + 1)
#define TARGET_VALID	(1ull << 63)
#define FIFO_4K_RC	PERCS_FIFO_MIN_SIZE

static uint64_t pack_addr(struct percs_addr a)
{
	return TARGET_VALID | (uint64_t)a.hub << 24 | (uint64_t)a.hfi << 16 |
	       a.window;
}

static struct percs_addr unpack_addr(uint64_t v)
{
	struct percs_addr a = {
		.hub = (uint32_t)(v >> 24) & 0xffffff,
		.hfi = (uint8_t)(v >> 16),
		.window = (uint16_t)v,
	};

	return a;
}

/* What the test, the sender and the victims share (anonymous, shared). */
struct rc_shared {
	uint32_t key;
	uint32_t sender_flags;
	unsigned int sender_hub, nr_hubs;
	uint64_t deadline;
	uint64_t target;	/* TARGET_VALID | packed address, or 0 */
	uint64_t sender_addr;	/* packed, once ready */
	int sender_ready;
	int stop;
	/* the sender's account */
	uint64_t composed, cqe_ok, cqe_refused, cqe_other, received;
	uint64_t cq_overflows, packets_sent, send_errors, max_gap_ms;
	int64_t other_res;
	int sender_failed;
	char sender_why[160];
	/* the victims' account (any process, any thread) */
	uint64_t v_rounds, v_child_rounds, v_killed, v_holders, v_dups;
	uint64_t v_maps, v_map_ebadf, v_mremaps, v_consumed, v_sent;
	int victim_failed;
	char victim_why[160];
};

static void note_fail(int *flag, char *why, size_t n, const char *what,
		      long err)
{
	if (!__atomic_exchange_n(flag, 1, __ATOMIC_SEQ_CST)) {
		snprintf(why, n, "%s: %ld", what, err);
		fprintf(stderr, "# pid %d: %s\n", getpid(), why);
	}
}

#define SENDER_FAIL(sh, what, err) \
	note_fail(&(sh)->sender_failed, (sh)->sender_why, \
		  sizeof((sh)->sender_why), what, err)
#define VICTIM_FAIL(sh, what, err) \
	note_fail(&(sh)->victim_failed, (sh)->victim_why, \
		  sizeof((sh)->victim_why), what, err)

/* ---- the sender --------------------------------------------------------- */

static void sender_drain(struct rc_shared *sh, struct percs_window *w,
			 uint64_t *progress_ms)
{
	struct percs_cqe c[64];
	struct percs_pkt_hdr h;
	char buf[PERCS_MAX_PAYLOAD];
	int n, i, ret;

	while ((n = percs_cq_poll(w, c, 64)) > 0) {
		for (i = 0; i < n; i++) {
			if (c[i].res == 0)
				sh->cqe_ok++;
			else if (c[i].res == -ECONNREFUSED)
				sh->cqe_refused++;
			else {
				sh->cqe_other++;
				sh->other_res = c[i].res;
			}
		}
		*progress_ms = pt_now_ms();
	}
	for (i = 0; i < 64; i++) {
		ret = percs_recv(w, &h, buf, sizeof(buf));
		if (ret == -EAGAIN)
			break;
		if (ret < 0) {
			SENDER_FAIL(sh, "sender recv", ret);
			return;
		}
		if (h.job_key != sh->key || h.kind != PERCS_PKT_FIFO ||
		    ret != 64 || (uint8_t)buf[0] != (uint8_t)h.tag) {
			SENDER_FAIL(sh, "sender got a bad packet, tag", h.tag);
			return;
		}
		sh->received++;
		*progress_ms = pt_now_ms();
	}
}

static int sender_main(struct rc_shared *sh)
{
	const volatile struct percs_status *st;
	struct percs_window *w = NULL;
	struct percs_hfi *hfi = NULL;
	uint64_t s = sh->key, progress, last_head = 0, now;
	char buf[1024];
	uint32_t tag = 0;
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	ret = pt_hfi_open(sh->sender_hub, 0, &hfi);
	if (!ret)
		ret = pt_reserve(hfi, sh->sender_flags, 16384, 65536, sh->key,
				 PERCS_WINDOW_ANY, &w);
	if (ret) {
		SENDER_FAIL(sh, "sender reserve", ret);
		return 1;
	}
	st = percs_window_status(w);
	__atomic_store_n(&sh->sender_addr, pack_addr(percs_window_addr(w)),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&sh->sender_ready, 1, __ATOMIC_RELEASE);
	progress = pt_now_ms();

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		uint64_t t = __atomic_load_n(&sh->target, __ATOMIC_ACQUIRE);

		now = pt_now_ms();
		if (now > sh->deadline) {
			SENDER_FAIL(sh, "sender: test deadline", 0);
			break;
		}
		if (st->send_head != last_head) {
			last_head = st->send_head;
			progress = now;
		}
		if (now - progress > sh->max_gap_ms)
			sh->max_gap_ms = now - progress;
		if (now - progress > RC_STALL_MS) {
			SENDER_FAIL(sh, "sender stalled, send_head",
				    (long)last_head);
			break;
		}
		sender_drain(sh, w, &progress);
		if (!(t & TARGET_VALID)) {
			pt_pause_us(200);
			continue;
		}
		{
			struct percs_addr dst = unpack_addr(t);
			size_t len = 16 + pt_rnd_below(&s, 1000);

			memset(buf, (uint8_t)tag, len);
			ret = percs_send(w, &dst, buf, len, tag,
					 tag % 4 ? 0 : PERCS_PKT_F_NOTIFY);
		}
		if (ret == 0) {
			sh->composed++;
			tag++;
			progress = pt_now_ms();
		} else if (ret == -EAGAIN) {
			/* The victim's FIFO is full: retry, never wait long. */
			percs_kick(w, PERCS_KICK_F_SEND);
			pt_pause_us(100);
		} else {
			SENDER_FAIL(sh, "sender send", ret);
			break;
		}
	}

	/* Everything composed completes (the last target is gone). */
	progress = pt_now_ms();
	while (st->packets_sent + st->send_errors < sh->composed) {
		if (pt_now_ms() - progress > RC_STALL_MS) {
			SENDER_FAIL(sh, "sender: packets never completed",
				    (long)(sh->composed - st->packets_sent -
					   st->send_errors));
			break;
		}
		percs_kick(w, PERCS_KICK_F_SEND);
		sender_drain(sh, w, &last_head);
		pt_pause_us(500);
	}
	sender_drain(sh, w, &last_head);
	sh->cq_overflows = st->cq_overflows;
	sh->packets_sent = st->packets_sent;
	sh->send_errors = st->send_errors;
	percs_window_release(w);
	percs_hfi_close(hfi);
	return sh->sender_failed;
}

/* ---- the victims -------------------------------------------------------- */

struct victim {
	struct rc_shared *sh;
	struct pt_rawwin rw;	/* the round's window, every region mapped */
	int fd, dupfd;
	int fd_open;		/* cleared (atomically) once fd is closed */
	int round_stop;
	uint64_t seed;
	struct percs_addr sender;
};

/* Closes the fd (and the dup) at random moments. */
static void *closer(void *arg)
{
	struct victim *v = arg;
	uint64_t s = v->seed ^ 1;

	pt_pause_us(pt_rnd_below(&s, 15000));
	if (v->dupfd >= 0 && pt_rnd_below(&s, 2)) {
		close(v->dupfd);
		v->dupfd = -1;
	}
	__atomic_store_n(&v->fd_open, 0, __ATOMIC_SEQ_CST);
	close(v->fd);
	pt_pause_us(pt_rnd_below(&s, 5000));
	if (v->dupfd >= 0)
		close(v->dupfd);
	return NULL;
}

/* Maps and unmaps regions through the fd until the round ends; moves a
 * mapping with mremap now and then.  After the close: EBADF.
 */
static void *mapper(void *arg)
{
	struct victim *v = arg;
	struct rc_shared *sh = v->sh;
	uint64_t s = v->seed ^ 2;

	while (!__atomic_load_n(&v->round_stop, __ATOMIC_ACQUIRE)) {
		unsigned int r = pt_rnd_below(&s, NR_REGIONS);
		const struct percs_region *reg = &v->rw.req.regions[r];
		int prot = PROT_READ |
			   (reg->flags & PERCS_REGION_F_WRITABLE ? PROT_WRITE : 0);
		int dfd = v->dupfd;
		int fd = pt_rnd_below(&s, 2) && dfd >= 0 ? dfd : v->fd;
		volatile uint8_t *p;
		void *q, *hole;

		p = mmap(NULL, reg->length, prot, MAP_SHARED, fd,
			 (off_t)reg->offset);
		if (p == MAP_FAILED) {
			/* Only a closed (or closing) fd may fail. */
			if (errno != EBADF)
				VICTIM_FAIL(sh, "mapper mmap", -errno);
			__atomic_fetch_add(&sh->v_map_ebadf, 1,
					   __ATOMIC_RELAXED);
			pt_pause_us(200);
			continue;
		}
		(void)p[reg->length - 1];
		if (pt_rnd_below(&s, 4) == 0) {
			/* Move it into a hole of our own. */
			hole = mmap(NULL, reg->length, PROT_NONE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (hole == MAP_FAILED) {
				VICTIM_FAIL(sh, "mapper hole", -errno);
			} else {
				q = mremap((void *)p, reg->length, reg->length,
					   MREMAP_MAYMOVE | MREMAP_FIXED, hole);
				if (q == MAP_FAILED) {
					VICTIM_FAIL(sh, "mapper mremap", -errno);
					munmap(hole, reg->length);
				} else {
					p = q;
					__atomic_fetch_add(&sh->v_mremaps, 1,
							   __ATOMIC_RELAXED);
				}
			}
			(void)p[0];
		}
		if (munmap((void *)p, reg->length))
			VICTIM_FAIL(sh, "mapper munmap", -errno);
		__atomic_fetch_add(&sh->v_maps, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Reads what arrived (every packet must be the sender's) and credits. */
static void *consumer(void *arg)
{
	struct victim *v = arg;
	struct rc_shared *sh = v->sh;
	const volatile struct percs_status *st = pt_rawwin_st(&v->rw);
	volatile struct percs_doorbell *db = pt_rawwin_db(&v->rw);
	const uint8_t *ring = v->rw.map[PERCS_REGION_RECV_FIFO];
	uint32_t units = v->rw.req.regions[PERCS_REGION_RECV_FIFO].length /
			 PERCS_FLIT_SIZE;
	uint64_t head = 0, s = v->seed ^ 3;

	while (!__atomic_load_n(&v->round_stop, __ATOMIC_ACQUIRE)) {
		uint64_t tail = __atomic_load_n(&st->recv_tail,
						__ATOMIC_ACQUIRE);

		if (tail - head > units) {
			VICTIM_FAIL(sh, "victim: recv_tail beyond the ring",
				    (long)(tail - head));
			return NULL;
		}
		while (head != tail) {
			const struct percs_pkt_hdr *h = (const void *)
				(ring + (head % units) * PERCS_FLIT_SIZE);
			uint32_t contig = units - head % units, n;

			if (h->kind == PERCS_PKT_PAD) {
				head += contig;
				continue;
			}
			n = (PERCS_PKT_HDR_SIZE + h->length +
			     PERCS_FLIT_SIZE - 1) / PERCS_FLIT_SIZE;
			if (h->kind != PERCS_PKT_FIFO ||
			    h->job_key != sh->key ||
			    !pt_addr_eq(&h->src, &v->sender) || n > contig ||
			    (h->length &&
			     ((const uint8_t *)(h + 1))[h->length - 1] !=
			     (uint8_t)h->tag)) {
				VICTIM_FAIL(sh, "victim: bad packet, kind",
					    h->kind);
				return NULL;
			}
			head += n;
			__atomic_fetch_add(&sh->v_consumed, 1,
					   __ATOMIC_RELAXED);
		}
		/* The credit; sometimes held back to let the FIFO fill. */
		if (pt_rnd_below(&s, 4)) {
			__atomic_store_n(&db->recv_head, head,
					 __ATOMIC_RELEASE);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (st->flags & PERCS_STATUS_SENDERS_WAIT &&
			    __atomic_load_n(&v->fd_open, __ATOMIC_SEQ_CST))
				ioctl(v->fd, PERCS_IOC_KICK,
				      PERCS_KICK_F_CREDIT);	/* may be EBADF */
		}
		pt_pause_us(100 + pt_rnd_below(&s, 400));
	}
	return NULL;
}

/* Sends one-unit packets back to the sender and kicks through the fd. */
static void *kicker(void *arg)
{
	struct victim *v = arg;
	struct rc_shared *sh = v->sh;
	const volatile struct percs_status *st = pt_rawwin_st(&v->rw);
	uint32_t units = v->rw.req.regions[PERCS_REGION_SEND_FIFO].length /
			 PERCS_FLIT_SIZE;
	bool poll_mode = v->rw.req.flags & PERCS_WINDOW_F_POLL;
	uint64_t tail = 0, s = v->seed ^ 4;
	struct percs_pkt_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.length = 64;
	h.dst = v->sender;
	while (!__atomic_load_n(&v->round_stop, __ATOMIC_ACQUIRE)) {
		uint64_t head = __atomic_load_n(&st->send_head,
						__ATOMIC_ACQUIRE);
		uint8_t *slot;

		if (tail + 1 - head <= units) {
			slot = (uint8_t *)v->rw.map[PERCS_REGION_SEND_FIFO] +
			       (tail % units) * PERCS_FLIT_SIZE;
			h.tag = (uint32_t)pt_rnd(&s);
			memcpy(slot, &h, sizeof(h));
			memset(slot + sizeof(h), (uint8_t)h.tag, h.length);
			tail++;
			__atomic_store_n(&pt_rawwin_db(&v->rw)->send_tail, tail,
					 __ATOMIC_RELEASE);
			__atomic_fetch_add(&sh->v_sent, 1, __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if ((!poll_mode || st->flags & PERCS_STATUS_NEED_WAKEUP) &&
		    __atomic_load_n(&v->fd_open, __ATOMIC_SEQ_CST))
			ioctl(v->fd, PERCS_IOC_KICK, PERCS_KICK_F_SEND);
		pt_pause_us(300 + pt_rnd_below(&s, 700));
	}
	return NULL;
}

/*
 * A child that holds the window's mappings (fds closed) for a while,
 * reading them, after the parent has let go.
 */
static void holder(struct victim *v, uint64_t s)
{
	const volatile struct percs_status *st = pt_rawwin_st(&v->rw);
	uint64_t until = pt_now_ms() + 5 + pt_rnd_below(&s, 30);

	close(v->fd);
	if (v->dupfd >= 0)
		close(v->dupfd);
	while (pt_now_ms() < until) {
		(void)st->recv_tail;
		(void)*(volatile uint8_t *)v->rw.map[PERCS_REGION_RECV_FIFO];
		pt_pause_us(500);
	}
	_exit(0);
}

/*
 * One round: reserve a victim, publish it, let the threads race, clean
 * up.  In a child round the process exits (or is killed) in the middle.
 * Return: a holder child's pid (to reap), 0 or -errno.
 */
static pid_t victim_round(struct rc_shared *sh, uint64_t seed, int in_child)
{
	struct percs_window_reserve req;
	pthread_t th[4];
	struct victim v;
	unsigned int hub, i, r;
	pid_t holder_pid = 0;
	uint64_t s = seed;
	int hfd, fd, ret;

	memset(&v, 0, sizeof(v));
	v.sh = sh;
	v.seed = seed;
	v.sender = unpack_addr(sh->sender_addr);
	hub = pt_rnd_below(&s, sh->nr_hubs);
	hfd = pt_hfi_open_fd(hub, pt_rnd_below(&s, 2));
	if (hfd < 0) {
		VICTIM_FAIL(sh, "victim open", hfd);
		return hfd;
	}
	fd = pt_reserve_raw(hfd, pt_rnd_below(&s, 2) ? PERCS_WINDOW_F_POLL : 0,
			    PERCS_FIFO_MIN_SIZE << pt_rnd_below(&s, 2),
			    PERCS_FIFO_MIN_SIZE << pt_rnd_below(&s, 3), sh->key,
			    PERCS_WINDOW_ANY, &req);
	close(hfd);
	if (fd < 0) {
		VICTIM_FAIL(sh, "victim reserve", fd);
		return fd;
	}
	ret = pt_rawwin_map(&v.rw, fd, &req);
	if (ret) {
		VICTIM_FAIL(sh, "victim map", ret);
		return ret;
	}
	v.fd = fd;
	v.fd_open = 1;
	v.dupfd = -1;
	if (pt_rnd_below(&s, 2)) {
		v.dupfd = dup(fd);
		__atomic_fetch_add(&sh->v_dups, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&sh->target, pack_addr(req.addr), __ATOMIC_RELEASE);

	/* Fork before any thread: the child keeps the mappings. */
	if (!in_child && pt_rnd_below(&s, 3) == 0) {
		uint64_t hs = pt_rnd(&s);

		fflush(stderr);
		holder_pid = fork();
		if (holder_pid == 0)
			holder(&v, hs);
		if (holder_pid > 0)
			__atomic_fetch_add(&sh->v_holders, 1, __ATOMIC_RELAXED);
	}

	if (pthread_create(&th[0], NULL, closer, &v) ||
	    pthread_create(&th[1], NULL, mapper, &v) ||
	    pthread_create(&th[2], NULL, consumer, &v) ||
	    pthread_create(&th[3], NULL, kicker, &v)) {
		VICTIM_FAIL(sh, "pthread_create", 0);
		_exit(1);	/* threads may be running: nothing to undo */
	}

	if (in_child == 1) {
		/* Exit with everything in flight. */
		pt_pause_us(2000 + pt_rnd_below(&s, 15000));
		_exit(0);
	}
	if (in_child == 2) {
		/* The parent SIGKILLs us in the middle (10 s at most). */
		pt_pause_us(10 * 1000 * 1000);
		_exit(0);
	}
	pt_pause_us(5000 + pt_rnd_below(&s, 20000));
	__atomic_store_n(&v.round_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* The remaining mappings, in a random order. */
	for (i = 0; i < NR_REGIONS; i++) {
		r = (i + pt_rnd_below(&s, NR_REGIONS)) % NR_REGIONS;
		if (v.rw.map[r]) {
			munmap(v.rw.map[r], req.regions[r].length);
			v.rw.map[r] = NULL;
		}
	}
	for (r = 0; r < NR_REGIONS; r++)
		if (v.rw.map[r])
			munmap(v.rw.map[r], req.regions[r].length);
	return holder_pid;
}

FIXTURE(races) {
	struct rc_shared *sh;
	pid_t sender;
};

FIXTURE_VARIANT(races) {
	uint32_t sender_flags;
};

FIXTURE_VARIANT_ADD(races, kick_sender) {
	.sender_flags = 0,
};

FIXTURE_VARIANT_ADD(races, poll_sender) {
	.sender_flags = PERCS_WINDOW_F_POLL,
};

FIXTURE_SETUP(races)
{
	struct percs_hfi_info info = { .size = sizeof(info) };
	uint64_t deadline;
	int hfd;

	self->sh = MAP_FAILED;
	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, ioctl(hfd, PERCS_IOC_HFI_INFO, &info));
	close(hfd);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
	self->sh->key = pt_new_key();
	self->sh->sender_flags = variant->sender_flags;
	self->sh->nr_hubs = info.nr_hubs;
	self->sh->sender_hub = info.nr_hubs - 1;
	self->sh->deadline = pt_now_ms() + RC_DEADLINE_MS;
	fflush(stdout);
	fflush(stderr);
	self->sender = fork();
	ASSERT_LE(0, self->sender);
	if (self->sender == 0)
		_exit(sender_main(self->sh));
	deadline = pt_now_ms() + 20000;
	while (!__atomic_load_n(&self->sh->sender_ready, __ATOMIC_ACQUIRE)) {
		ASSERT_GT(deadline, pt_now_ms()) TH_LOG("sender not ready: %s",
							self->sh->sender_why);
		pt_pause_us(1000);
	}
}

FIXTURE_TEARDOWN(races)
{
	if (self->sh == MAP_FAILED)
		return;
	__atomic_store_n(&self->sh->stop, 1, __ATOMIC_RELEASE);
	if (self->sender > 0)
		pt_reap(self->sender, 30000);
	munmap(self->sh, sizeof(*self->sh));
}

/* Stop the sender and check its account. */
static int finish_sender(struct __test_metadata *_metadata,
			 FIXTURE_DATA(races) *self)
{
	struct rc_shared *sh = self->sh;
	int rc;

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	rc = pt_reap(self->sender, 30000);
	self->sender = 0;
	TH_LOG("sender: %llu composed, %llu sent, %llu errors; CQEs %llu ok, %llu refused, %llu other (%lld), %llu overflowed; %llu received; longest gap %llu ms",
	       (unsigned long long)sh->composed,
	       (unsigned long long)sh->packets_sent,
	       (unsigned long long)sh->send_errors,
	       (unsigned long long)sh->cqe_ok,
	       (unsigned long long)sh->cqe_refused,
	       (unsigned long long)sh->cqe_other, (long long)sh->other_res,
	       (unsigned long long)sh->cq_overflows,
	       (unsigned long long)sh->received,
	       (unsigned long long)sh->max_gap_ms);
	if (sh->sender_failed)
		TH_LOG("sender failed: %s", sh->sender_why);
	return rc;
}

TEST_F_TIMEOUT(races, close_map_exit_while_delivering, 150)
{
	struct rc_shared *sh = self->sh;
	unsigned int rounds = pt_scale(RC_ROUNDS), i;
	uint64_t s, t0 = pt_now_ms();
	const char *env = getenv("PERCS_SEED");
	pid_t holders[64];
	unsigned int nh = 0;

	s = env ? strtoull(env, NULL, 0) : pt_mix64(pt_now_ms() ^ getpid());
	TH_LOG("seed %llu (PERCS_SEED repeats it), %u rounds",
	       (unsigned long long)s, rounds);
	for (i = 0; i < rounds && !sh->victim_failed && !sh->sender_failed;
	     i++) {
		uint64_t rs = pt_rnd(&s);

		if (pt_rnd_below(&s, 4) == 0) {
			/* The whole round in a process that dies mid-way. */
			int mode = 1 + pt_rnd_below(&s, 2), rc;
			pid_t pid;

			fflush(stderr);
			pid = fork();
			ASSERT_LE(0, pid);
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				victim_round(sh, rs, mode);
				_exit(1);
			}
			if (mode == 2) {
				pt_pause_us(3000 + pt_rnd_below(&s, 20000));
				kill(pid, SIGKILL);
				sh->v_killed++;
			}
			rc = pt_reap(pid, 20000);
			ASSERT_EQ(mode == 2 ? 128 + SIGKILL : 0, rc)
				TH_LOG("victim child: %d %s", rc, sh->victim_why);
			sh->v_child_rounds++;
		} else {
			pid_t h = victim_round(sh, rs, 0);

			ASSERT_LE(0, h) TH_LOG("round %u: %s", i,
					       sh->victim_why);
			if (h > 0)
				holders[nh++] = h;
			if (nh == 64) {
				while (nh)
					ASSERT_EQ(0, pt_reap(holders[--nh], 20000));
			}
		}
		sh->v_rounds++;
	}
	while (nh)
		EXPECT_EQ(0, pt_reap(holders[--nh], 20000));
	/* Let the sender hit the last, dead, address for a moment. */
	pt_pause_us(20000);
	TH_LOG("victims: %llu rounds (%llu in children, %llu killed), %llu holders, %llu dups; %llu maps (%llu refused after close), %llu mremaps; %llu packets consumed, %llu sent back; %llu ms",
	       (unsigned long long)sh->v_rounds,
	       (unsigned long long)sh->v_child_rounds,
	       (unsigned long long)sh->v_killed,
	       (unsigned long long)sh->v_holders,
	       (unsigned long long)sh->v_dups,
	       (unsigned long long)sh->v_maps,
	       (unsigned long long)sh->v_map_ebadf,
	       (unsigned long long)sh->v_mremaps,
	       (unsigned long long)sh->v_consumed,
	       (unsigned long long)sh->v_sent,
	       (unsigned long long)(pt_now_ms() - t0));
	EXPECT_EQ(0, sh->victim_failed) TH_LOG("victim: %s", sh->victim_why);
	EXPECT_EQ(0, finish_sender(_metadata, self));
	EXPECT_EQ(0, sh->sender_failed);
	EXPECT_EQ(0, sh->cqe_other);
	EXPECT_EQ(sh->composed, sh->packets_sent + sh->send_errors);
	EXPECT_LT(0, sh->composed);
	EXPECT_LT(0, sh->cqe_refused);
	EXPECT_LT(0, sh->packets_sent);
	ASSERT_LIVE_ZERO();
}

/*
 * The exact lifetime under traffic: a window held by a dup, then by a
 * forked child's mapping only, keeps receiving; the moment the last
 * reference goes, the sender's packets complete with -ECONNREFUSED.
 */
TEST_F_TIMEOUT(races, last_reference_ends_delivery, 60)
{
	struct rc_shared *sh = self->sh;
	struct percs_window_reserve req;
	struct pt_rawwin rw;
	int hfd, fd, dfd, pipe_go[2], status;
	const volatile struct percs_status *st;
	uint64_t got, deadline, refused;
	pid_t pid;

	hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, hfd);
	fd = pt_reserve_raw(hfd, 0, 65536, 65536, sh->key, PERCS_WINDOW_ANY,
			    &req);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pt_rawwin_map(&rw, fd, &req));
	st = pt_rawwin_st(&rw);
	ASSERT_EQ(0, pipe(pipe_go));
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Only the mappings; credit everything until told to go. */
		volatile struct percs_doorbell *db = pt_rawwin_db(&rw);
		struct pollfd p = { .fd = pipe_go[0], .events = POLLIN };

		close(fd);
		close(hfd);
		while (poll(&p, 1, 1) == 0)
			__atomic_store_n(&db->recv_head,
					 __atomic_load_n(&st->recv_tail,
							 __ATOMIC_ACQUIRE),
					 __ATOMIC_RELEASE);
		_exit(0);
	}
	dfd = dup(fd);
	ASSERT_LE(0, dfd);
	__atomic_store_n(&sh->target, pack_addr(req.addr), __ATOMIC_RELEASE);

	/* Held by fd, dup and two sets of mappings: packets arrive. */
	deadline = pt_now_ms() + 10000;
	while (st->packets_received < 50) {
		ASSERT_GT(deadline, pt_now_ms());
		pt_pause_us(500);
	}
	close(fd);
	rw.fd = -1;
	got = st->packets_received;
	deadline = pt_now_ms() + 10000;
	while (st->packets_received < got + 50) {
		ASSERT_GT(deadline, pt_now_ms())
			TH_LOG("no delivery after close(fd)");
		pt_pause_us(500);
	}
	/* Only the child's mappings now. */
	close(dfd);
	pt_rawwin_close(&rw);
	close(hfd);
	EXPECT_EQ(0, pt_window_query(req.addr.hub, req.addr.hfi, req.addr.window));
	refused = sh->cqe_refused;
	pt_pause_us(50000);
	EXPECT_EQ(refused, sh->cqe_refused)
		TH_LOG("refused while the child still maps the window");
	/* The child goes: the window with it; the sender is refused. */
	ASSERT_EQ(1, write(pipe_go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(-ENOENT, pt_window_query(req.addr.hub, req.addr.hfi, req.addr.window));
	deadline = pt_now_ms() + 10000;
	while (sh->cqe_refused == refused && pt_now_ms() < deadline)
		pt_pause_us(1000);
	EXPECT_LT(refused, sh->cqe_refused);
	close(pipe_go[0]);
	close(pipe_go[1]);
	EXPECT_EQ(0, finish_sender(_metadata, self));
	EXPECT_EQ(0, sh->cqe_other);
	EXPECT_EQ(sh->composed, sh->packets_sent + sh->send_errors);
	ASSERT_LIVE_ZERO();
}

/*
 * Many senders blocked on one window.  Kick-mode senders do not run their
 * engine by themselves: design.rst says a blocked packet "is retried on
 * the sender's next kick, by the polling thread, and when the receiver
 * kicks with PERCS_KICK_F_CREDIT", and a window that goes lets "the
 * senders waiting for it fail fast".  With more blocked senders than one
 * retry batch, every one of them must still be retried: none of these
 * senders kicks again, so one that is left out waits forever (a process
 * in poll(2) for its completion hangs).
 */
#define MB_SENDERS	100
#define MB_UNITS	16	/* one packet of PERCS_MAX_PACKET bytes */

FIXTURE(many_blocked) {
	int hfd[4];
	uint32_t key;
	struct pt_rawwin t;		/* the target */
	struct pt_rawwin s[MB_SENDERS];
	int nr_s;
};

FIXTURE_SETUP(many_blocked)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		self->hfd[i] = -1;
	self->t.fd = -1;
	PT_REQUIRE_DEVICE();
	self->key = pt_new_key();
	for (i = 0; i < 4; i++) {
		self->hfd[i] = pt_hfi_open_fd(i / 2, i % 2);
		ASSERT_LE(0, self->hfd[i]);
	}
	for (i = 0; i < MB_SENDERS; i++) {
		ASSERT_EQ(0, pt_rawwin_open(&self->s[i], self->hfd[i % 4], 0,
					    FIFO_4K_RC, FIFO_4K_RC, self->key));
		self->nr_s++;
	}
}

FIXTURE_TEARDOWN(many_blocked)
{
	int i;

	for (i = 0; i < self->nr_s; i++)
		pt_rawwin_close(&self->s[i]);
	pt_rawwin_close(&self->t);
	for (i = 0; i < 4; i++)
		if (self->hfd[i] >= 0)
			close(self->hfd[i]);
}

/* Sender @i sends one full-size packet (tag @i) to @dst and kicks once;
 * Return: packets the kick moved (0: blocked).
 */
static int mb_send_one(struct pt_rawwin *rw, struct percs_addr dst,
		       uint32_t tag)
{
	struct percs_pkt_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.length = PERCS_MAX_PAYLOAD;
	h.dst = dst;
	h.tag = tag;
	return pt_raw_trigger(rw, pt_raw_put(rw, 0, &h, NULL), true);
}

static long live_blocked(void)
{
	struct pt_live l;

	return pt_read_live(&l) ? -1 : l.blocked_senders;
}

/* The target goes: every blocked sender completes with -ECONNREFUSED. */
TEST_F_TIMEOUT(many_blocked, target_closes_all_fail_fast, 60)
{
	int blocked = 0, resolved = 0, i, ret;
	uint64_t deadline;

	ASSERT_EQ(0, pt_rawwin_open(&self->t, self->hfd[0], 0, FIFO_4K_RC,
				    FIFO_4K_RC, self->key));
	/* Room for two packets: the other senders block. */
	for (i = 0; i < MB_SENDERS; i++) {
		ret = mb_send_one(&self->s[i], self->t.req.addr, i);
		ASSERT_LE(0, ret);
		blocked += ret == 0;
	}
	ASSERT_EQ(MB_SENDERS - 2, blocked);
	EXPECT_EQ(blocked, live_blocked());

	pt_rawwin_close(&self->t);
	deadline = pt_now_ms() + 5000;
	do {
		resolved = 0;
		for (i = 0; i < MB_SENDERS; i++) {
			const volatile struct percs_status *st =
				pt_rawwin_st(&self->s[i]);

			resolved += st->send_head == MB_UNITS &&
				    st->send_errors == 1;
		}
		if (resolved == blocked)
			break;
		pt_pause_us(2000);
	} while (pt_now_ms() < deadline);
	EXPECT_EQ(blocked, resolved)
		TH_LOG("%d of %d senders blocked on the closed window were never retried (no -ECONNREFUSED, SEND_BLOCKED still set): the release retries only one batch",
		       blocked - resolved, blocked);
	EXPECT_EQ(0, live_blocked());
	for (i = 0; i < MB_SENDERS; i++) {
		const struct percs_cqe *c = self->s[i].map[PERCS_REGION_CQ];

		if (pt_rawwin_st(&self->s[i])->cq_tail != 1)
			continue;
		EXPECT_EQ(i, c->user_data);
		EXPECT_EQ(-ECONNREFUSED, c->res);
	}
}

/* One credit kick with room for all: every blocked sender delivers. */
TEST_F_TIMEOUT(many_blocked, one_credit_kick_retries_all, 60)
{
	const uint32_t recv_size = 128 * MB_UNITS * PERCS_FLIT_SIZE;
	const volatile struct percs_status *st;
	struct pt_rawwin filler;
	uint64_t pos = 0, deadline, base, want;
	int blocked = 0, i, ret;

	ASSERT_EQ(0, pt_rawwin_open(&self->t, self->hfd[0], 0, FIFO_4K_RC,
				    recv_size, self->key));
	st = pt_rawwin_st(&self->t);
	/* Fill the target exactly: 128 packets from one window. */
	ASSERT_EQ(0, pt_rawwin_open(&filler, self->hfd[1], 0, recv_size,
				    FIFO_4K_RC, self->key));
	for (i = 0; i < 128; i++) {
		struct percs_pkt_hdr h;

		memset(&h, 0, sizeof(h));
		h.kind = PERCS_PKT_FIFO;
		h.length = PERCS_MAX_PAYLOAD;
		h.dst = self->t.req.addr;
		h.tag = 1000 + i;
		pos = pt_raw_put(&filler, pos, &h, NULL);
	}
	ASSERT_EQ(128, pt_raw_trigger(&filler, pos, true));
	pt_rawwin_close(&filler);
	ASSERT_EQ(recv_size / PERCS_FLIT_SIZE, st->recv_tail);
	/* Every sender blocks. */
	for (i = 0; i < MB_SENDERS; i++) {
		ret = mb_send_one(&self->s[i], self->t.req.addr, i);
		ASSERT_LE(0, ret);
		blocked += ret == 0;
	}
	ASSERT_EQ(MB_SENDERS, blocked);
	EXPECT_EQ(MB_SENDERS, live_blocked());
	EXPECT_TRUE(st->flags & PERCS_STATUS_SENDERS_WAIT);

	/* Consume everything, one credit store, one credit kick. */
	base = st->recv_tail;
	want = base + MB_SENDERS * MB_UNITS;
	__atomic_store_n(&pt_rawwin_db(&self->t)->recv_head, base,
			 __ATOMIC_RELEASE);
	ASSERT_EQ(0, pt_raw_kick(&self->t, PERCS_KICK_F_CREDIT));
	deadline = pt_now_ms() + 5000;
	while (st->recv_tail != want && pt_now_ms() < deadline)
		pt_pause_us(2000);
	EXPECT_EQ(want, st->recv_tail)
		TH_LOG("the target received %llu of %d packets after one PERCS_KICK_F_CREDIT with room for all; SENDERS_WAIT %s: the other senders are never retried",
		       (unsigned long long)(st->recv_tail - base) / MB_UNITS,
		       MB_SENDERS,
		       st->flags & PERCS_STATUS_SENDERS_WAIT ? "set" : "clear");
	EXPECT_EQ(0, live_blocked());
}

TEST_HARNESS_MAIN
