// SPDX-License-Identifier: GPL-2.0
/*
 * percs selftests: processes and windows that go away in the middle of
 * traffic.
 *
 * A sender SIGKILLed while its FIFO waits for a full receiver, a receiver
 * SIGKILLed while a sender streams to it, a window released while another
 * process (or the polling engine) delivers into it, many short-lived
 * windows reserved and released while traffic flows, a process with dozens
 * of blocked windows killed.  Nothing may hang or leak (the debugfs live
 * counters come back), senders see -ECONNREFUSED for a window that is
 * gone, and the windows that stay keep working.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define SMALL_FIFO	PERCS_FIFO_MIN_SIZE
#define SMALL_UNITS	(SMALL_FIFO / PERCS_FLIT_SIZE)
#define BIG_FIFO	PERCS_FIFO_DEF_SIZE

static bool live_eq(const struct pt_live *a, const struct pt_live *b)
{
	return a->windows == b->windows &&
	       a->windows_reserved == b->windows_reserved &&
	       a->mappings == b->mappings &&
	       a->blocked_senders == b->blocked_senders &&
	       a->jobs == b->jobs;
}

/* Wait until the live counters equal @want; Return: 0 or -ETIMEDOUT. */
static int wait_live(const struct pt_live *want, struct pt_live *now,
		     int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;

	for (;;) {
		if (pt_read_live(now))
			return -EIO;
		if (live_eq(want, now))
			return 0;
		if (pt_now_ms() > deadline)
			return -ETIMEDOUT;
		pt_pause_us(2000);
	}
}

/* Fork a child that dies with the test (harness timeout kills the group,
 * and a child whose parent vanished exits too).
 */
static pid_t spawn(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fn(arg));
	}
	return pid;
}

/* Read one byte from @fd within @timeout_ms; Return: the byte or -errno. */
static int read_byte(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char c;

	if (poll(&p, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	if (read(fd, &c, 1) != 1)
		return -EIO;
	return c;
}

/* What parent and children share: one anonymous shared page. */
struct shared {
	uint32_t key;
	uint32_t flags;		/* the variant's window flags */
	uint64_t deadline;
	struct percs_addr rx;	/* the parent's receiving window */
	struct percs_addr addr;	/* a child's window */
	int ready;
	int stop;
	uint64_t count;		/* packets a child received */
	uint64_t composed;
	uint64_t sent;
	uint64_t errors;
	uint64_t refused;	/* -ECONNREFUSED entries seen */
	uint64_t first_refused;	/* tag of the first one */
	uint64_t imm_refused;	/* the same, from immediate slots */
	uint64_t cq_entries;
	uint64_t cq_overflows;
	uint64_t other_errors;
	int pipe[2];
	char why[128];
};

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sh == MAP_FAILED)
		return NULL;
	memset(sh, 0, sizeof(*sh));
	if (pipe(sh->pipe)) {
		munmap(sh, sizeof(*sh));
		return NULL;
	}
	return sh;
}

static void shared_free(struct shared *sh)
{
	close(sh->pipe[0]);
	close(sh->pipe[1]);
	munmap(sh, sizeof(*sh));
}

static int fail(struct shared *sh, const char *what, int err)
{
	snprintf(sh->why, sizeof(sh->why), "%s: %d", what, err);
	fprintf(stderr, "# child %d: %s\n", getpid(), sh->why);
	return 1;
}

#define IMM_TAG		0x100000u	/* tags of immediate lines */

/*
 * Poll the CQ: every entry must be a refused FIFO send, tags ascending, or
 * a refused immediate line (tag IMM_TAG and up).
 */
static int drain_refusals(struct percs_window *w, struct shared *sh)
{
	struct percs_cqe cqe[32];
	int n, i;

	/* Overflows are counted in the status page: go on past the news. */
	while ((n = percs_cq_poll(w, cqe, 32)) > 0 || n == -EOVERFLOW) {
		for (i = 0; i < n; i++) {
			sh->cq_entries++;
			if (cqe[i].res == -ECONNREFUSED &&
			    cqe[i].kind == PERCS_PKT_IMM &&
			    cqe[i].flags ==
				(PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED) &&
			    cqe[i].user_data >= IMM_TAG) {
				sh->imm_refused++;
				continue;
			}
			if (cqe[i].res != -ECONNREFUSED ||
			    cqe[i].kind != PERCS_PKT_FIFO) {
				sh->other_errors++;
				fprintf(stderr, "# completion tag %llu res %d\n",
					(unsigned long long)cqe[i].user_data,
					cqe[i].res);
				continue;
			}
			if (!sh->refused++)
				sh->first_refused = cqe[i].user_data;
			else if (cqe[i].user_data !=
				 sh->first_refused + sh->refused - 1 &&
				 !percs_window_status(w)->cq_overflows)
				sh->other_errors++;
		}
	}
	return n;
}

FIXTURE(kill) {
	struct percs_hfi *hfi;
	uint32_t key;
	struct shared *sh;
};

/* The engine mode of the window whose peer dies. */
FIXTURE_VARIANT(kill) {
	uint32_t flags;
};

FIXTURE_VARIANT_ADD(kill, kick) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(kill, poll) {
	.flags = PERCS_WINDOW_F_POLL,
};

FIXTURE_SETUP(kill)
{
	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(0, 0, &self->hfi));
	self->key = pt_new_key();
	self->sh = shared_new();
	ASSERT_NE(NULL, self->sh);
	self->sh->key = self->key;
	self->sh->flags = variant->flags;
	self->sh->deadline = pt_now_ms() + 60000;
}

FIXTURE_TEARDOWN(kill)
{
	if (self->sh)
		shared_free(self->sh);
	percs_hfi_close(self->hfi);
}

/* Child: fill the parent's receiver, hold more in FIFO and slots, wait. */
static int blocked_sender(void *arg)
{
	struct shared *sh = arg;
	const volatile struct percs_status *st;
	struct percs_window *w;
	struct percs_hfi *hfi;
	uint8_t buf[64];
	unsigned int i;
	int ret;

	ret = pt_hfi_open(1, 0, &hfi);
	if (!ret)
		ret = pt_reserve(hfi, sh->flags, BIG_FIFO, BIG_FIFO, sh->key,
				 PERCS_WINDOW_ANY, &w);
	if (ret)
		return fail(sh, "reserve", ret);
	st = percs_window_status(w);
	for (i = 0; i < 200; i++) {
		pt_fill(buf, sizeof(buf), i);
		ret = percs_send_compose(w, &sh->rx, buf, sizeof(buf), i, 0);
		if (ret)
			return fail(sh, "compose", ret);
	}
	ret = percs_send_trigger(w);
	if (ret)
		return fail(sh, "trigger", ret);
	while (!(st->flags & PERCS_STATUS_SEND_BLOCKED)) {
		if (pt_now_ms() > sh->deadline)
			return fail(sh, "never blocked", 0);
		pt_pause_us(500);
	}
	/* Immediate lines are held too (the target is full). */
	for (i = 0; i < 8; i++) {
		ret = percs_icswx(w, &sh->rx, buf, sizeof(buf), 1000 + i);
		if (ret)
			return fail(sh, "icswx", ret);
	}
	sh->sent = st->packets_sent;
	if (write(sh->pipe[1], "R", 1) != 1)
		return fail(sh, "pipe", errno);
	for (;;)
		pause();
}

/*
 * A sender killed while its FIFO waits for a full receiver: the window
 * goes, the blocked list forgets it, the packets that arrived are intact,
 * and the receiver keeps working with a new sender.
 */
TEST_F(kill, sender_killed_while_blocked)
{
	struct percs_window *rx, *tx2;
	struct pt_live base, live;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	uint8_t buf[64], want[64];
	unsigned int i;
	pid_t pid;

	ASSERT_EQ(0, pt_reserve(self->hfi, 0, BIG_FIFO, SMALL_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx));
	dst = percs_window_addr(rx);
	self->sh->rx = dst;
	ASSERT_EQ(0, pt_read_live(&base));

	pid = spawn(blocked_sender, self->sh);
	ASSERT_LT(0, pid);
	ASSERT_EQ('R', read_byte(self->sh->pipe[0], 10000));
	ASSERT_EQ(SMALL_UNITS, self->sh->sent);
	ASSERT_EQ(0, pt_read_live(&live));
	ASSERT_EQ(base.windows + 1, live.windows);
	ASSERT_LE(base.blocked_senders + 1, live.blocked_senders);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(128 + SIGKILL, pt_reap(pid, 10000));
	if (wait_live(&base, &live, PT_TIMEOUT_MS))
		TH_LOG("live: windows %ld reserved %ld mappings %ld blocked %ld keys %ld",
		       live.windows, live.windows_reserved, live.mappings,
		       live.blocked_senders, live.jobs);
	ASSERT_TRUE(live_eq(&base, &live));

	/* What arrived before the kill is all there and intact. */
	for (i = 0; i < SMALL_UNITS; i++) {
		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(i, h.tag);
		pt_fill(want, sizeof(want), i);
		ASSERT_EQ(0, memcmp(want, buf, sizeof(buf)));
	}
	ASSERT_EQ(-ETIMEDOUT, pt_recv(rx, &h, buf, sizeof(buf), 200));
	ASSERT_EQ(SMALL_UNITS, percs_window_status(rx)->packets_received);

	/* A new sender gets through, more than a FIFO's worth. */
	ASSERT_EQ(0, pt_reserve(self->hfi, variant->flags, BIG_FIFO, BIG_FIFO,
				self->key, PERCS_WINDOW_ANY, &tx2));
	for (i = 0; i < 3 * SMALL_UNITS; i++) {
		pt_fill(buf, sizeof(buf), i + 500);
		ASSERT_EQ(0, percs_send_compose(tx2, &dst, buf, sizeof(buf),
						i + 500, 0));
	}
	ASSERT_EQ(0, percs_send_trigger(tx2));
	for (i = 0; i < 3 * SMALL_UNITS; i++) {
		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(i + 500, h.tag);
		pt_fill(want, sizeof(want), i + 500);
		ASSERT_EQ(0, memcmp(want, buf, sizeof(buf)));
	}
	percs_window_release(tx2);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/* Child: a slow receiver that counts what it got until it is killed. */
static int slow_receiver(void *arg)
{
	struct shared *sh = arg;
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_pkt_hdr h;
	uint8_t buf[256], want[256];
	int ret;

	ret = pt_hfi_open(2, 1, &hfi);
	if (!ret)
		ret = pt_reserve(hfi, 0, BIG_FIFO, SMALL_FIFO, sh->key,
				 PERCS_WINDOW_ANY, &w);
	if (ret)
		return fail(sh, "reserve", ret);
	sh->addr = percs_window_addr(w);
	if (write(sh->pipe[1], "R", 1) != 1)
		return fail(sh, "pipe", errno);
	while (pt_now_ms() < sh->deadline) {
		ret = percs_recv(w, &h, buf, sizeof(buf));
		if (ret == -EAGAIN) {
			percs_wait(w, 10);
			continue;
		}
		if (ret < 0)
			return fail(sh, "recv", ret);
		pt_fill(want, ret, h.tag);
		if (memcmp(want, buf, ret))
			return fail(sh, "bad payload", (int)h.tag);
		/* Immediate lines overtake the FIFO packets held behind. */
		if (h.kind == PERCS_PKT_IMM && h.tag >= IMM_TAG)
			continue;
		if (h.kind != PERCS_PKT_FIFO || h.tag != sh->count)
			return fail(sh, "bad packet", (int)h.tag);
		__atomic_store_n(&sh->count, sh->count + 1, __ATOMIC_RELEASE);
		pt_pause_us(300);
	}
	return fail(sh, "never killed", 0);
}

/*
 * A receiver killed while a sender streams to it and waits for credit:
 * the sender's next packets complete with -ECONNREFUSED (every one of
 * them, in order), its FIFO drains, it leaves the blocked list, and it
 * still talks to other windows.
 */
TEST_F(kill, receiver_killed_mid_stream)
{
	const volatile struct percs_status *st;
	struct percs_window *tx, *rx2;
	struct pt_live live;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	uint8_t buf[256];
	uint64_t composed = 0, deadline;
	pid_t pid;
	int ret, i;

	pid = spawn(slow_receiver, self->sh);
	ASSERT_LT(0, pid);
	ASSERT_EQ('R', read_byte(self->sh->pipe[0], 10000));
	dst = self->sh->addr;
	ASSERT_EQ(0, pt_reserve(self->hfi, variant->flags, BIG_FIFO, BIG_FIFO,
				self->key, PERCS_WINDOW_ANY, &tx));
	st = percs_window_status(tx);

	/* Stream until the receiver has 100 and we are blocked on it. */
	deadline = pt_now_ms() + 30000;
	for (;;) {
		for (;;) {
			unsigned int len = 1 + composed % sizeof(buf);

			pt_fill(buf, len, composed);
			ret = percs_send_compose(tx, &dst, buf, len, composed,
						 0);
			if (ret == -EAGAIN)
				break;
			ASSERT_EQ(0, ret);
			composed++;
		}
		ASSERT_EQ(0, percs_send_trigger(tx));
		if (__atomic_load_n(&self->sh->count, __ATOMIC_ACQUIRE) >= 100 &&
		    (st->flags & PERCS_STATUS_SEND_BLOCKED))
			break;
		ASSERT_GT(deadline, pt_now_ms());
		pt_pause_us(1000);
	}
	/*
	 * Immediate lines too.  They do not queue behind the FIFO: each
	 * goes as soon as the receiver has a free unit, or waits in its slot
	 * and is refused with the rest.
	 */
	for (i = 0; i < 8; i++) {
		pt_fill(buf, 40, IMM_TAG + i);
		ASSERT_EQ(0, percs_icswx(tx, &dst, buf, 40, IMM_TAG + i));
	}
	ASSERT_EQ(0, st->send_errors);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(128 + SIGKILL, pt_reap(pid, 10000));

	/*
	 * Its window closed: the senders waiting for it fail fast, with no
	 * call from us (kick mode: retried by the closing side; poll mode:
	 * by the engine it wakes).
	 */
	while (st->flags & PERCS_STATUS_SEND_BLOCKED)
		ASSERT_GT(deadline, pt_now_ms());
	ASSERT_LT(0, st->send_errors);
	/* Kick mode moves at most one budget per retry: kick for the rest. */
	while (st->packets_sent + st->send_errors < composed + 8) {
		ASSERT_EQ(0, drain_refusals(tx, self->sh));
		ASSERT_GT(deadline, pt_now_ms());
		if (!variant->flags)
			ASSERT_LE(0, percs_kick(tx, PERCS_KICK_F_SEND));
		pt_pause_us(1000);
	}
	ASSERT_EQ(0, drain_refusals(tx, self->sh));
	TH_LOG("composed %llu, delivered %llu, refused %llu (%llu completions, %llu overflowed), receiver consumed %llu",
	       (unsigned long long)composed,
	       (unsigned long long)st->packets_sent,
	       (unsigned long long)st->send_errors,
	       (unsigned long long)self->sh->cq_entries,
	       (unsigned long long)st->cq_overflows,
	       (unsigned long long)self->sh->count);
	ASSERT_EQ(0, self->sh->other_errors);
	ASSERT_EQ(composed + 8, st->packets_sent + st->send_errors);
	/*
	 * Every error has its entry unless the CQ was full.  Refusals of
	 * immediate lines come first in a pass, so they all have one.
	 */
	ASSERT_EQ(st->send_errors, self->sh->refused + self->sh->imm_refused +
				   st->cq_overflows);
	ASSERT_GE(8, self->sh->imm_refused);
	/*
	 * FIFO packets go in order: the first refused one follows the last
	 * delivered, and the immediate lines not refused were delivered.
	 */
	ASSERT_EQ(st->packets_sent,
		  self->sh->first_refused + 8 - self->sh->imm_refused);
	ASSERT_LE(self->sh->count, self->sh->first_refused);
	ASSERT_EQ(0, st->flags & PERCS_STATUS_SEND_BLOCKED);
	ASSERT_EQ(0, pt_read_live(&live));
	ASSERT_EQ(0, live.blocked_senders);

	/* The sender still works. */
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx2));
	dst = percs_window_addr(rx2);
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, pt_send(tx, &dst, buf, 10, 7000 + i, 0,
				     PT_TIMEOUT_MS));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(10, pt_recv(rx2, &h, buf, sizeof(buf),
				      PT_TIMEOUT_MS));
		ASSERT_EQ(7000 + i, h.tag);
	}
	percs_window_release(tx);
	percs_window_release(rx2);
	ASSERT_LIVE_ZERO();
}

/* Child: stream to sh->rx until 100 refusals are seen, then report. */
static int streaming_sender(void *arg)
{
	struct shared *sh = arg;
	const volatile struct percs_status *st;
	struct percs_window *w;
	struct percs_hfi *hfi;
	uint8_t buf[512];
	uint64_t seq = 0;
	int ret;

	ret = pt_hfi_open(1, 1, &hfi);
	if (!ret)
		ret = pt_reserve(hfi, sh->flags, BIG_FIFO, BIG_FIFO, sh->key,
				 PERCS_WINDOW_ANY, &w);
	if (ret)
		return fail(sh, "reserve", ret);
	st = percs_window_status(w);
	/* The parent reserves its window after the fork (else we would
	 * inherit its mappings and keep it alive): wait for the address.
	 */
	while (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE))
		if (pt_now_ms() > sh->deadline)
			return fail(sh, "no receiver", 0);
	if (write(sh->pipe[1], "R", 1) != 1)
		return fail(sh, "pipe", errno);
	while (sh->refused < 100) {
		unsigned int n = 0;

		while (n < 32) {
			unsigned int len = pt_mix64(seq) % sizeof(buf);

			pt_fill(buf, len, seq);
			ret = percs_send_compose(w, &sh->rx, buf, len, seq, 0);
			if (ret == -EAGAIN)
				break;
			if (ret)
				return fail(sh, "compose", ret);
			seq++;
			n++;
		}
		ret = percs_send_trigger(w);
		if (ret)
			return fail(sh, "trigger", ret);
		if (drain_refusals(w, sh))
			return fail(sh, "cq", -EIO);
		if (pt_now_ms() > sh->deadline)
			return fail(sh, "no refusal", 0);
		if (!n)
			pt_pause_us(200);
	}
	/* Everything composed is accounted for, one way or the other. */
	while (st->packets_sent + st->send_errors < seq) {
		if (!sh->flags)
			percs_kick(w, PERCS_KICK_F_SEND);
		if (pt_now_ms() > sh->deadline)
			return fail(sh, "not drained", 0);
		pt_pause_us(1000);
	}
	drain_refusals(w, sh);
	sh->composed = seq;
	sh->sent = st->packets_sent;
	sh->errors = st->send_errors;
	sh->cq_overflows = st->cq_overflows;
	percs_window_release(w);
	percs_hfi_close(hfi);
	return 0;
}

/*
 * Release a window while another process (variant kick) or its HFI's
 * polling engine (variant poll) delivers into it continuously: what was
 * delivered is intact and in order, every later packet completes with
 * -ECONNREFUSED, nothing crashes or leaks.
 */
TEST_F(kill, release_while_delivering)
{
	static uint8_t buf[512], want[512];
	struct percs_window *rx;
	struct percs_pkt_hdr h;
	struct shared *sh = self->sh;
	unsigned int got = 0;
	pid_t pid;
	int ret;

	/*
	 * Fork first: a child forked after the reservation would inherit
	 * the window's mappings, and the window lives as long as any.
	 */
	pid = spawn(streaming_sender, sh);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, pt_reserve(self->hfi, 0, BIG_FIFO, 4 * SMALL_FIFO,
				self->key, PERCS_WINDOW_ANY, &rx));
	sh->rx = percs_window_addr(rx);
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	ASSERT_EQ('R', read_byte(sh->pipe[0], 10000));

	while (got < 3000) {
		ret = pt_recv(rx, &h, buf, sizeof(buf), PT_TIMEOUT_MS);
		ASSERT_EQ(pt_mix64(got) % sizeof(buf), ret);
		ASSERT_EQ(got, h.tag);
		pt_fill(want, ret, got);
		ASSERT_EQ(0, memcmp(want, buf, ret));
		got++;
	}
	/* Gone while packets are still coming in. */
	percs_window_release(rx);

	ASSERT_EQ(0, pt_reap(pid, 30000));
	TH_LOG("received %u, sender composed %llu delivered %llu refused %llu (%llu completions, %llu overflowed)",
	       got, (unsigned long long)sh->composed,
	       (unsigned long long)sh->sent, (unsigned long long)sh->errors,
	       (unsigned long long)sh->cq_entries,
	       (unsigned long long)sh->cq_overflows);
	ASSERT_EQ(0, sh->other_errors);
	ASSERT_LE(100, sh->refused);
	ASSERT_EQ(sh->composed, sh->sent + sh->errors);
	ASSERT_EQ(sh->errors, sh->refused + sh->cq_overflows);
	ASSERT_LE(got, sh->sent);
	/* Delivered packets are a prefix, refused ones the rest. */
	ASSERT_EQ(sh->sent, sh->first_refused);
	ASSERT_LIVE_ZERO();
}

FIXTURE(faults) {
	uint32_t key;
};

FIXTURE_SETUP(faults)
{
	PT_REQUIRE_DEVICE();
	self->key = pt_new_key();
}

FIXTURE_TEARDOWN(faults)
{
}

#define CH_STREAM	((unsigned int)pt_scale(20000u)) /* the steady stream */
#define CH_CHURNERS	2
#define CH_MIN_WINDOWS	((unsigned int)pt_scale(2000u)) /* reserved and released */
#define CH_TAG_CHURN	0x80000000u
#define CH_TAG_PROBE	0x40000000u

struct churn {
	uint32_t key;
	uint64_t deadline;
	struct percs_addr rx;
	int stream_done;
	int stop;
	unsigned int hub[CH_CHURNERS];
	uint64_t reserved[CH_CHURNERS];
	uint64_t churn_sent[CH_CHURNERS];
	uint64_t probes, probe_ok, probe_refused, probe_other;
	char why[128];
};

static int churn_fail(struct churn *c, const char *what, int err)
{
	snprintf(c->why, sizeof(c->why), "%s: %d", what, err);
	fprintf(stderr, "# child %d: %s\n", getpid(), c->why);
	return 1;
}

static void stream_payload(uint8_t *buf, unsigned int len, uint32_t seq)
{
	uint64_t sum;

	pt_fill(buf, len, seq);
	memcpy(buf, &seq, sizeof(seq));
	sum = pt_checksum(buf, len - sizeof(sum));
	memcpy(buf + len - sizeof(sum), &sum, sizeof(sum));
}

static bool payload_ok(const uint8_t *buf, unsigned int len)
{
	uint64_t sum;

	if (len < 12)
		return false;
	memcpy(&sum, buf + len - sizeof(sum), sizeof(sum));
	return sum == pt_checksum(buf, len - sizeof(sum));
}

/* The steady stream: CH_STREAM packets from hub 1 to the parent. */
static int churn_stream(void *arg)
{
	struct churn *c = arg;
	struct percs_window *w;
	struct percs_hfi *hfi;
	uint8_t buf[300];
	uint32_t seq = 0;
	int ret;

	ret = pt_hfi_open(1, 0, &hfi);
	if (!ret)
		ret = pt_reserve(hfi, 0, BIG_FIFO, BIG_FIFO, c->key,
				 PERCS_WINDOW_ANY, &w);
	if (ret)
		return churn_fail(c, "stream reserve", ret);
	while (seq < CH_STREAM) {
		unsigned int len = 12 + seq % (sizeof(buf) - 12);

		stream_payload(buf, len, seq);
		ret = pt_send(w, &c->rx, buf, len, seq, 0, 10000);
		if (ret)
			return churn_fail(c, "stream send", ret);
		seq++;
		if (pt_now_ms() > c->deadline)
			return churn_fail(c, "stream deadline", seq);
	}
	while (percs_window_status(w)->packets_sent < CH_STREAM) {
		percs_kick(w, PERCS_KICK_F_SEND);
		if (pt_now_ms() > c->deadline)
			return churn_fail(c, "stream drain", 0);
		pt_pause_us(1000);
	}
	if (percs_window_status(w)->send_errors)
		return churn_fail(c, "stream errors", 0);
	__atomic_store_n(&c->stream_done, 1, __ATOMIC_RELEASE);
	percs_window_release(w);
	percs_hfi_close(hfi);
	return 0;
}

/* A churner: reserve, maybe send one packet to the parent, release. */
static int churn_windows(struct churn *c, unsigned int id)
{
	static const uint32_t sizes[] = { SMALL_FIFO, 2 * SMALL_FIFO,
					  BIG_FIFO };
	struct percs_hfi *hfi[2];
	uint8_t buf[200];
	uint64_t i = 0;
	int ret;

	if (pt_hfi_open(c->hub[id], 0, &hfi[0]) ||
	    pt_hfi_open(c->hub[id], 1, &hfi[1]))
		return churn_fail(c, "churn open", 0);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		uint64_t r = pt_mix64(i * 31 + id);
		struct percs_window *w;
		uint32_t flags = (r & 1) ? PERCS_WINDOW_F_POLL : 0;

		ret = pt_reserve(hfi[(r >> 1) & 1], flags, sizes[(r >> 2) % 3],
				 sizes[(r >> 4) % 3], c->key, PERCS_WINDOW_ANY,
				 &w);
		if (ret)
			return churn_fail(c, "churn reserve", ret);
		c->reserved[id]++;
		if (r & 0x100) {
			unsigned int len = 12 + (r >> 9) % (sizeof(buf) - 12);

			stream_payload(buf, len, (uint32_t)i);
			ret = percs_send(w, &c->rx, buf, len,
					 CH_TAG_CHURN | id << 24 | (i & 0xffffff),
					 0);
			if (ret && ret != -EAGAIN)
				return churn_fail(c, "churn send", ret);
			if (!ret)
				c->churn_sent[id]++;
		}
		if (r & 0x10000)
			sched_yield();
		percs_window_release(w);
		i++;
		if (pt_now_ms() > c->deadline)
			return churn_fail(c, "churn deadline", 0);
	}
	percs_hfi_close(hfi[0]);
	percs_hfi_close(hfi[1]);
	return 0;
}

static int churn0(void *arg) { return churn_windows(arg, 0); }
static int churn1(void *arg) { return churn_windows(arg, 1); }

/* The prober: sends to the low window indices the churners come and go
 * at; each packet lands or is refused, nothing else.
 */
static int churn_probe(void *arg)
{
	struct churn *c = arg;
	const volatile struct percs_status *st;
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_cqe cqe[32];
	uint8_t buf[64] = { 0 };
	uint64_t i = 0;
	int ret, n, k;

	ret = pt_hfi_open(3, 1, &hfi);
	if (!ret)
		ret = pt_reserve(hfi, 0, BIG_FIFO, BIG_FIFO, c->key,
				 PERCS_WINDOW_ANY, &w);
	if (ret)
		return churn_fail(c, "probe reserve", ret);
	st = percs_window_status(w);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		uint64_t r = pt_mix64(i ^ 0xabcdef);
		struct percs_addr dst = {
			.hub = c->hub[r & 1],
			.hfi = (r >> 1) & 1,
			.window = (r >> 2) % 8,
		};

		ret = percs_send_compose(w, &dst, buf, sizeof(buf),
					 CH_TAG_PROBE | (i & 0xffffff), 0);
		if (ret && ret != -EAGAIN)
			return churn_fail(c, "probe compose", ret);
		if (!ret)
			c->probes++;
		if ((i & 7) == 7 || ret == -EAGAIN) {
			bool full = ret == -EAGAIN;

			ret = percs_send_trigger(w);
			if (ret)
				return churn_fail(c, "probe trigger", ret);
			if (full)	/* blocked on a churning window */
				pt_pause_us(500);
		}
		while ((n = percs_cq_poll(w, cqe, 32)) > 0)
			for (k = 0; k < n; k++) {
				if (cqe[k].res == -ECONNREFUSED)
					c->probe_refused++;
				else
					c->probe_other++;
			}
		i++;
		if (pt_now_ms() > c->deadline)
			return churn_fail(c, "probe deadline", 0);
	}
	percs_send_trigger(w);
	c->probe_ok = st->packets_sent;
	percs_window_release(w);
	percs_hfi_close(hfi);
	return 0;
}

/*
 * Windows come and go by the thousand (both engine modes, various FIFO
 * sizes, some sending a packet before they go) while a steady stream
 * flows between two stable windows and a prober fires at the churning
 * window indices.  The stream arrives whole and in order; every probe is
 * delivered or refused; nothing leaks.
 */
TEST_F_TIMEOUT(faults, churn_windows_during_traffic, 120)
{
	static uint8_t buf[PERCS_MAX_PAYLOAD];
	struct percs_window *rx;
	struct percs_hfi *hfi;
	struct percs_pkt_hdr h;
	struct churn *c;
	uint32_t next = 0;
	uint64_t churn_got = 0, reserved = 0;
	pid_t stream, ch[CH_CHURNERS], probe;
	unsigned int i;
	int ret;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0, sizeof(*c));
	c->key = self->key;
	c->deadline = pt_now_ms() + 90000;
	c->hub[0] = 2;
	c->hub[1] = 4;	/* another supernode with the default topology */
	ASSERT_EQ(0, pt_hfi_open(0, 0, &hfi));
	ASSERT_EQ(0, pt_reserve(hfi, 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx));
	c->rx = percs_window_addr(rx);

	stream = spawn(churn_stream, c);
	ch[0] = spawn(churn0, c);
	ch[1] = spawn(churn1, c);
	probe = spawn(churn_probe, c);
	ASSERT_LT(0, stream);
	ASSERT_LT(0, ch[0]);
	ASSERT_LT(0, ch[1]);
	ASSERT_LT(0, probe);

	while (next < CH_STREAM) {
		ret = pt_recv(rx, &h, buf, sizeof(buf), 10000);
		if (ret == -ETIMEDOUT)
			TH_LOG("stream stalled at %u (%s)", next, c->why);
		ASSERT_LE(0, ret);
		ASSERT_TRUE(payload_ok(buf, ret));
		if (h.tag & CH_TAG_CHURN) {
			churn_got++;
			continue;
		}
		ASSERT_EQ(next, h.tag);
		ASSERT_EQ(12 + next % (300 - 12), ret);
		next++;
	}
	/* Keep churning (and draining) until enough windows came and went. */
	for (;;) {
		reserved = 0;
		for (i = 0; i < CH_CHURNERS; i++)
			reserved += __atomic_load_n(&c->reserved[i],
						    __ATOMIC_RELAXED);
		if (reserved >= CH_MIN_WINDOWS || pt_now_ms() > c->deadline)
			break;
		while ((ret = percs_recv(rx, &h, buf, sizeof(buf))) >= 0) {
			ASSERT_TRUE(h.tag & CH_TAG_CHURN);
			ASSERT_TRUE(payload_ok(buf, ret));
			churn_got++;
		}
		percs_wait(rx, 10);
	}
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pt_reap(stream, 10000));
	ASSERT_EQ(0, pt_reap(ch[0], 10000));
	ASSERT_EQ(0, pt_reap(ch[1], 10000));
	ASSERT_EQ(0, pt_reap(probe, 10000));
	/* Late churn packets may still be queued: all intact. */
	while ((ret = percs_recv(rx, &h, buf, sizeof(buf))) >= 0) {
		ASSERT_TRUE(h.tag & CH_TAG_CHURN);
		ASSERT_TRUE(payload_ok(buf, ret));
		churn_got++;
	}
	reserved = 0;
	for (i = 0; i < CH_CHURNERS; i++)
		reserved += c->reserved[i];
	TH_LOG("stream %u packets; %llu windows reserved and released; churn packets sent %llu + %llu, received %llu; probes %llu: delivered %llu, refused %llu, other %llu",
	       next, (unsigned long long)reserved,
	       (unsigned long long)c->churn_sent[0],
	       (unsigned long long)c->churn_sent[1],
	       (unsigned long long)churn_got,
	       (unsigned long long)c->probes,
	       (unsigned long long)c->probe_ok,
	       (unsigned long long)c->probe_refused,
	       (unsigned long long)c->probe_other);
	ASSERT_EQ(0, c->probe_other);
	ASSERT_LE(churn_got, c->churn_sent[0] + c->churn_sent[1]);
	ASSERT_LE(CH_MIN_WINDOWS, reserved);
	ASSERT_LT(0, c->probe_refused);
	percs_window_release(rx);
	percs_hfi_close(hfi);
	munmap(c, sizeof(*c));
	ASSERT_LIVE_ZERO();
}

/* Child: 48 windows on four HFIs, all blocked on each other, then wait. */
static int many_windows(void *arg)
{
	struct shared *sh = arg;
	enum { N = 48 };
	struct percs_window *w[N];
	struct percs_hfi *hfi[4];
	uint8_t buf[100] = { 0 };
	unsigned int i, k, blocked = 0;
	int ret;

	for (i = 0; i < 4; i++)
		if (pt_hfi_open(4 + i / 2, i & 1, &hfi[i]))
			return fail(sh, "open", 0);
	for (i = 0; i < N; i++) {
		ret = pt_reserve(hfi[i % 4], (i & 1) ? PERCS_WINDOW_F_POLL : 0,
				 4 * SMALL_FIFO, SMALL_FIFO, sh->key,
				 PERCS_WINDOW_ANY, &w[i]);
		if (ret)
			return fail(sh, "reserve", ret);
	}
	/* Nobody consumes: each window floods the next one. */
	for (i = 0; i < N; i++) {
		struct percs_addr dst = percs_window_addr(w[(i + 1) % N]);

		for (k = 0; k < 40; k++) {
			ret = percs_send_compose(w[i], &dst, buf, sizeof(buf),
						 k, 0);
			if (ret == -EAGAIN)
				break;
			if (ret)
				return fail(sh, "compose", ret);
		}
		if (percs_send_trigger(w[i]))
			return fail(sh, "trigger", 0);
		for (k = 0; k < 8; k++)
			percs_icswx(w[i], &dst, buf, 50, k);
	}
	while (blocked < N && pt_now_ms() < sh->deadline) {
		blocked = 0;
		for (i = 0; i < N; i++)
			blocked += !!(percs_window_status(w[i])->flags &
				      PERCS_STATUS_SEND_BLOCKED);
		pt_pause_us(1000);
	}
	sh->count = blocked;
	if (write(sh->pipe[1], "R", 1) != 1)
		return fail(sh, "pipe", errno);
	for (;;)
		pause();
}

/*
 * A process holding 48 windows (both modes), each blocked on the next,
 * with immediate lines held, is killed: every window, mapping, job key
 * and blocked-list entry goes, and the HFIs serve new windows.
 */
TEST_F(faults, killed_process_with_many_windows)
{
	struct percs_window *a, *b;
	struct percs_hfi *hfi;
	struct percs_pkt_hdr h;
	struct pt_live live;
	struct shared *sh;
	uint8_t buf[32];
	pid_t pid;

	sh = shared_new();
	ASSERT_NE(NULL, sh);
	sh->key = self->key;
	sh->deadline = pt_now_ms() + 30000;
	pid = spawn(many_windows, sh);
	ASSERT_LT(0, pid);
	ASSERT_EQ('R', read_byte(sh->pipe[0], 30000));
	TH_LOG("%llu of 48 windows blocked", (unsigned long long)sh->count);
	ASSERT_EQ(48, sh->count);
	ASSERT_EQ(0, pt_read_live(&live));
	ASSERT_EQ(48, live.windows);
	ASSERT_EQ(48, live.blocked_senders);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(128 + SIGKILL, pt_reap(pid, 10000));
	ASSERT_LIVE_ZERO();

	/* The same HFIs, both modes, work afterwards (a new job: the
	 * check above closed the test's). */
	self->key = pt_new_key();
	ASSERT_EQ(0, pt_hfi_open(4, 0, &hfi));
	ASSERT_EQ(0, pt_reserve(hfi, PERCS_WINDOW_F_POLL, SMALL_FIFO,
				SMALL_FIFO, self->key, PERCS_WINDOW_ANY, &a));
	ASSERT_EQ(0, pt_reserve(hfi, 0, SMALL_FIFO, SMALL_FIFO, self->key,
				PERCS_WINDOW_ANY, &b));
	{
		struct percs_addr dst = percs_window_addr(b);

		ASSERT_EQ(0, pt_send(a, &dst, buf, sizeof(buf), 2, 0,
				     PT_TIMEOUT_MS));
		ASSERT_EQ(sizeof(buf), pt_recv(b, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(2, h.tag);
		dst = percs_window_addr(a);
		ASSERT_EQ(0, pt_icswx(b, &dst, buf, sizeof(buf), 3,
				      PT_TIMEOUT_MS));
		ASSERT_EQ(sizeof(buf), pt_recv(a, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(3, h.tag);
	}
	percs_window_release(a);
	percs_window_release(b);
	percs_hfi_close(hfi);
	shared_free(sh);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
