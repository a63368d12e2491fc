// SPDX-License-Identifier: GPL-2.0
/*
 * percs selftests: the two engine modes.
 *
 * Kick mode runs the engine inside PERCS_IOC_KICK; poll mode has a kernel
 * thread per HFI that spins, then sleeps with PERCS_STATUS_NEED_WAKEUP set
 * (the io_uring SQPOLL handshake).  Both must move packets, alone and
 * mixed; a sleeping engine must ignore a bare trigger until kicked; an
 * awake one must need no system call at all; and a credit returned by a
 * receiver must wake a polling sender that gave up.
 *
 * This binary counts PERCS_IOC_KICK calls by defining ioctl() itself (the
 * library's call binds to it at link time; everything else is forwarded
 * to the system call unchanged).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "common.h"

#define SMALL_FIFO	PERCS_FIFO_MIN_SIZE
#define SMALL_UNITS	(SMALL_FIFO / PERCS_FLIT_SIZE)
#define BIG_FIFO	PERCS_FIFO_DEF_SIZE
#define IDLE_PARAM	"/sys/module/percs/parameters/poll_idle_us"

/* PERCS_IOC_KICK calls made on kick_watch_fd (any fd if -1). */
static unsigned long kick_count;
static int kick_watch_fd = -1;

int ioctl(int fd, unsigned long req, ...)
{
	unsigned long arg;
	va_list ap;

	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (req == PERCS_IOC_KICK) {
		int watch = __atomic_load_n(&kick_watch_fd, __ATOMIC_RELAXED);

		if (watch < 0 || watch == fd)
			__atomic_add_fetch(&kick_count, 1, __ATOMIC_RELAXED);
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

static unsigned int units_of(size_t len)
{
	return (PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) /
	       PERCS_FLIT_SIZE;
}

static long read_idle_us(void)
{
	return pt_sysfs_read_long(IDLE_PARAM);
}

static int write_idle_us(long us)
{
	char buf[32];
	int fd, n, ret = 0;

	fd = open(IDLE_PARAM, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%ld\n", us);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/* Wait until (flags & mask) == want; Return: 0 or -ETIMEDOUT. */
static int wait_flags(const volatile struct percs_status *st, uint32_t mask,
		      uint32_t want, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;

	while ((__atomic_load_n(&st->flags, __ATOMIC_ACQUIRE) & mask) != want) {
		if (pt_now_ms() > deadline)
			return -ETIMEDOUT;
		pt_pause_us(200);
	}
	return 0;
}

FIXTURE(engine) {
	struct percs_hfi *tx_hfi, *rx_hfi;
	uint32_t key;
	long saved_idle_us;
};

/* Which engine serves the sender and the receiver. */
FIXTURE_VARIANT(engine) {
	uint32_t tx_flags;
	uint32_t rx_flags;
};

FIXTURE_VARIANT_ADD(engine, kick_to_kick) {
	.tx_flags = 0,
	.rx_flags = 0,
};

FIXTURE_VARIANT_ADD(engine, poll_to_poll) {
	.tx_flags = PERCS_WINDOW_F_POLL,
	.rx_flags = PERCS_WINDOW_F_POLL,
};

FIXTURE_VARIANT_ADD(engine, kick_to_poll) {
	.tx_flags = 0,
	.rx_flags = PERCS_WINDOW_F_POLL,
};

FIXTURE_VARIANT_ADD(engine, poll_to_kick) {
	.tx_flags = PERCS_WINDOW_F_POLL,
	.rx_flags = 0,
};

FIXTURE_SETUP(engine)
{
	PT_REQUIRE_DEVICE();
	/* Two HFIs of two hubs: each polling engine serves one side. */
	ASSERT_EQ(0, pt_hfi_open(3, 1, &self->tx_hfi));
	ASSERT_EQ(0, pt_hfi_open(2, 1, &self->rx_hfi));
	self->key = pt_new_key();
	self->saved_idle_us = read_idle_us();
	ASSERT_LT(0, self->saved_idle_us);
	kick_watch_fd = -1;
}

FIXTURE_TEARDOWN(engine)
{
	if (self->saved_idle_us > 0 && read_idle_us() != self->saved_idle_us)
		write_idle_us(self->saved_idle_us);
	percs_hfi_close(self->tx_hfi);
	percs_hfi_close(self->rx_hfi);
}

/* Polling-engine behaviour: a poll-mode sender, a kick-mode receiver. */
FIXTURE(poll) {
	struct percs_hfi *tx_hfi, *rx_hfi;
	uint32_t key;
	long saved_idle_us;
};

FIXTURE_SETUP(poll)
{
	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(3, 1, &self->tx_hfi));
	ASSERT_EQ(0, pt_hfi_open(2, 1, &self->rx_hfi));
	self->key = pt_new_key();
	self->saved_idle_us = read_idle_us();
	ASSERT_LT(0, self->saved_idle_us);
	kick_watch_fd = -1;
}

FIXTURE_TEARDOWN(poll)
{
	if (self->saved_idle_us > 0 && read_idle_us() != self->saved_idle_us)
		write_idle_us(self->saved_idle_us);
	percs_hfi_close(self->tx_hfi);
	percs_hfi_close(self->rx_hfi);
}

/*
 * Streams of packets of random sizes, composed in batches, arrive intact
 * and in order in every pairing of engine modes.
 */
TEST_F(engine, moves_packets)
{
	const unsigned int total = 3000;
	static uint8_t buf[PERCS_MAX_PAYLOAD], want[PERCS_MAX_PAYLOAD];
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	unsigned int sent = 0, got = 0;
	uint64_t deadline = pt_now_ms() + 60000;

	ASSERT_EQ(0, pt_reserve(self->tx_hfi, variant->tx_flags, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->rx_hfi, variant->rx_flags, BIG_FIFO,
				SMALL_FIFO * 4, self->key, PERCS_WINDOW_ANY,
				&rx));
	dst = percs_window_addr(rx);

	while (got < total) {
		int ret;

		while (sent < total) {
			unsigned int len = (sent * 2654435761u) %
					   (PERCS_MAX_PAYLOAD + 1);

			pt_fill(buf, len, sent);
			ret = percs_send_compose(tx, &dst, buf, len, sent, 0);
			if (ret == -EAGAIN)
				break;
			ASSERT_EQ(0, ret);
			sent++;
		}
		ASSERT_EQ(0, percs_send_trigger(tx));
		for (;;) {
			ret = percs_recv(rx, &h, buf, sizeof(buf));
			if (ret == -EAGAIN)
				break;
			ASSERT_EQ((got * 2654435761u) % (PERCS_MAX_PAYLOAD + 1),
				  ret);
			ASSERT_EQ(got, h.tag);
			pt_fill(want, ret, got);
			ASSERT_EQ(0, memcmp(want, buf, ret));
			got++;
		}
		if (got < total)
			ASSERT_LE(0, percs_wait(rx, 10));
		ASSERT_GT(deadline, pt_now_ms());
	}
	ASSERT_EQ(total, percs_window_status(tx)->packets_sent);
	ASSERT_EQ(0, percs_window_status(tx)->send_errors);
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/*
 * The sender fills a 4 KiB receive FIFO and blocks; after its trigger it
 * makes no further call.  The receiver's consumption and credits alone
 * must bring every packet over: in kick mode the credit kick runs the
 * sender's engine, in poll mode it wakes the sender's polling thread.
 */
TEST_F(engine, blocked_sender_resumes_on_credit)
{
	const unsigned int total = 200;
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	uint8_t buf[64], want[64];
	unsigned int i;

	ASSERT_EQ(0, pt_reserve(self->tx_hfi, variant->tx_flags, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->rx_hfi, variant->rx_flags, BIG_FIFO,
				SMALL_FIFO, self->key, PERCS_WINDOW_ANY, &rx));
	dst = percs_window_addr(rx);
	for (i = 0; i < total; i++) {
		pt_fill(buf, sizeof(buf), i);
		ASSERT_EQ(0, percs_send_compose(tx, &dst, buf, sizeof(buf), i,
						0));
	}
	ASSERT_EQ(0, percs_send_trigger(tx));
	ASSERT_EQ(0, wait_flags(percs_window_status(tx),
				PERCS_STATUS_SEND_BLOCKED,
				PERCS_STATUS_SEND_BLOCKED, PT_TIMEOUT_MS));
	ASSERT_EQ(SMALL_UNITS, percs_window_status(rx)->packets_received);

	for (i = 0; i < total; i++) {
		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(i, h.tag);
		pt_fill(want, sizeof(want), i);
		ASSERT_EQ(0, memcmp(want, buf, sizeof(buf)));
	}
	ASSERT_EQ(total, percs_window_status(tx)->packets_sent);
	ASSERT_EQ(0, wait_flags(percs_window_status(tx),
				PERCS_STATUS_SEND_BLOCKED, 0, PT_TIMEOUT_MS));
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/* After poll_idle_us without work the engine announces it sleeps. */
TEST_F(poll, poll_idle_sets_need_wakeup)
{
	const volatile struct percs_status *st;
	struct percs_window *w;
	uint64_t t0;

	ASSERT_EQ(0, write_idle_us(20000));
	ASSERT_EQ(20000, read_idle_us());
	ASSERT_EQ(0, pt_reserve(self->tx_hfi, PERCS_WINDOW_F_POLL, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &w));
	st = percs_window_status(w);
	/* The reservation woke the engine: it clears the flag first. */
	t0 = pt_now_ms();
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_NEED_WAKEUP,
				PERCS_STATUS_NEED_WAKEUP, PT_TIMEOUT_MS));
	TH_LOG("NEED_WAKEUP after %llu ms (poll_idle_us 20000)",
	       (unsigned long long)(pt_now_ms() - t0));
	/* A kick wakes it: the flag goes, and comes back when idle again. */
	ASSERT_EQ(0, percs_kick(w, PERCS_KICK_F_SEND));
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_NEED_WAKEUP, 0,
				PT_TIMEOUT_MS));
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_NEED_WAKEUP,
				PERCS_STATUS_NEED_WAKEUP, PT_TIMEOUT_MS));
	ASSERT_EQ(0, st->flags & PERCS_STATUS_ERROR);
	percs_window_release(w);
}

/*
 * A sleeping engine does not look at doorbells: a trigger stored without a
 * kick stays unprocessed (send_head does not move, nothing arrives) until
 * the kick, and then the packet goes.
 */
TEST_F(poll, sleeping_engine_needs_kick)
{
	const volatile struct percs_status *st;
	volatile struct percs_doorbell *db;
	struct percs_pkt_hdr *p, h;
	struct percs_window *rx;
	struct pt_rawwin tx;
	uint8_t buf[200];
	uint64_t deadline;
	int hfd, i;

	ASSERT_EQ(0, write_idle_us(1000));
	ASSERT_EQ(0, pt_reserve(self->rx_hfi, 0, BIG_FIFO, BIG_FIFO,
				self->key, PERCS_WINDOW_ANY, &rx));
	hfd = pt_hfi_open_fd(3, 1);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, pt_rawwin_open(&tx, hfd, PERCS_WINDOW_F_POLL, BIG_FIFO,
				    BIG_FIFO, self->key));
	db = pt_rawwin_db(&tx);
	st = pt_rawwin_st(&tx);
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_NEED_WAKEUP,
				PERCS_STATUS_NEED_WAKEUP, PT_TIMEOUT_MS));

	p = tx.map[PERCS_REGION_SEND_FIFO];
	memset(p, 0, sizeof(*p));
	p->kind = PERCS_PKT_FIFO;
	p->length = sizeof(buf);
	p->dst = percs_window_addr(rx);
	p->tag = 0x51ee9;
	pt_fill(p + 1, sizeof(buf), 9);
	__atomic_store_n(&db->send_tail, units_of(sizeof(buf)),
			 __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);

	/* 300 ms, far beyond any polling interval: nothing happens. */
	for (i = 0; i < 30; i++) {
		pt_pause_us(10000);
		ASSERT_EQ(0, __atomic_load_n(&st->send_head, __ATOMIC_ACQUIRE));
		ASSERT_TRUE(st->flags & PERCS_STATUS_NEED_WAKEUP);
	}
	ASSERT_EQ(0, st->packets_sent);
	ASSERT_EQ(0, percs_window_status(rx)->packets_received);
	ASSERT_EQ(-EAGAIN, percs_recv(rx, &h, buf, sizeof(buf)));

	/* The kick: poll mode answers 0 at once and the engine sends. */
	ASSERT_EQ(0, ioctl(tx.fd, PERCS_IOC_KICK,
			   (unsigned long)PERCS_KICK_F_SEND));
	deadline = pt_now_ms() + PT_TIMEOUT_MS;
	while (__atomic_load_n(&st->send_head, __ATOMIC_ACQUIRE) !=
	       units_of(sizeof(buf)))
		ASSERT_GT(deadline, pt_now_ms());
	ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
				       PT_TIMEOUT_MS));
	ASSERT_EQ(0x51ee9, h.tag);
	ASSERT_EQ(0, memcmp(buf, p + 1, sizeof(buf)));
	ASSERT_EQ(1, st->packets_sent);
	pt_rawwin_close(&tx);
	close(hfd);
	percs_window_release(rx);
}

/*
 * While the engine polls (NEED_WAKEUP clear), libpercs sends with no
 * system call: 1000 packets, each checked to arrive before the next, and
 * not one PERCS_IOC_KICK on the sending window.
 */
TEST_F(poll, polling_engine_needs_no_syscall)
{
	const unsigned int total = 1000;
	const volatile struct percs_status *st;
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	uint8_t buf[128], want[128];
	unsigned int i, flag_seen = 0;
	unsigned long kicks;

	/* Spin for up to 10 s without work: no sleep during the test. */
	ASSERT_EQ(0, write_idle_us(10000000));
	ASSERT_EQ(0, pt_reserve(self->rx_hfi, 0, BIG_FIFO, BIG_FIFO,
				self->key, PERCS_WINDOW_ANY, &rx));
	ASSERT_EQ(0, pt_reserve(self->tx_hfi, PERCS_WINDOW_F_POLL, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	st = percs_window_status(tx);
	dst = percs_window_addr(rx);
	/* The reservation woke the engine; make sure it is up. */
	ASSERT_EQ(0, percs_kick(tx, PERCS_KICK_F_SEND));
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_NEED_WAKEUP, 0,
				PT_TIMEOUT_MS));

	/* The counter sees the library's kicks (the check is not vacuous). */
	kick_watch_fd = percs_window_fd(tx);
	kick_count = 0;
	ASSERT_EQ(0, percs_kick(tx, PERCS_KICK_F_SEND));
	ASSERT_EQ(1, kick_count);
	kick_count = 0;
	for (i = 0; i < total; i++) {
		flag_seen += !!(st->flags & PERCS_STATUS_NEED_WAKEUP);
		pt_fill(buf, sizeof(buf), i);
		ASSERT_EQ(0, percs_send(tx, &dst, buf, sizeof(buf), i, 0));
		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(i, h.tag);
		pt_fill(want, sizeof(want), i);
		ASSERT_EQ(0, memcmp(want, buf, sizeof(buf)));
	}
	kicks = __atomic_load_n(&kick_count, __ATOMIC_RELAXED);
	kick_watch_fd = -1;
	TH_LOG("%u packets, %lu kicks on the sender, NEED_WAKEUP seen %u times",
	       total, kicks, flag_seen);
	ASSERT_EQ(0, flag_seen);
	ASSERT_EQ(0, kicks);
	ASSERT_EQ(total, st->packets_sent);

	/* Let the engine sleep again before the windows go. */
	ASSERT_EQ(0, write_idle_us(self->saved_idle_us));
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_NEED_WAKEUP,
				PERCS_STATUS_NEED_WAKEUP, PT_TIMEOUT_MS));
	percs_window_release(tx);
	percs_window_release(rx);
}

/*
 * The credit kick path on its own: a polling sender blocked on a full
 * kick-mode receiver gives up and sleeps (NEED_WAKEUP); only the
 * receiver's credit kick can wake it, and everything then arrives.
 */
TEST_F(poll, credit_wakes_sleeping_poll_sender)
{
	const unsigned int total = 150;
	const volatile struct percs_status *st;
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	uint8_t buf[300], want[300];
	unsigned int i, n = units_of(sizeof(buf));

	ASSERT_EQ(0, write_idle_us(2000));
	ASSERT_EQ(0, pt_reserve(self->tx_hfi, PERCS_WINDOW_F_POLL, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->rx_hfi, 0, BIG_FIFO, SMALL_FIFO,
				self->key, PERCS_WINDOW_ANY, &rx));
	st = percs_window_status(tx);
	dst = percs_window_addr(rx);
	for (i = 0; i < total; i++) {
		pt_fill(buf, sizeof(buf), i * 3);
		ASSERT_EQ(0, percs_send_compose(tx, &dst, buf, sizeof(buf), i,
						0));
	}
	ASSERT_EQ(0, percs_send_trigger(tx));
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_SEND_BLOCKED |
				PERCS_STATUS_NEED_WAKEUP,
				PERCS_STATUS_SEND_BLOCKED |
				PERCS_STATUS_NEED_WAKEUP, PT_TIMEOUT_MS));
	ASSERT_EQ(SMALL_UNITS / n, percs_window_status(rx)->packets_received);
	ASSERT_TRUE(percs_window_status(rx)->flags &
		    PERCS_STATUS_SENDERS_WAIT);

	for (i = 0; i < total; i++) {
		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(i, h.tag);
		pt_fill(want, sizeof(want), i * 3);
		ASSERT_EQ(0, memcmp(want, buf, sizeof(buf)));
	}
	ASSERT_EQ(total, st->packets_sent);
	ASSERT_EQ(0, st->send_errors);
	ASSERT_EQ(0, wait_flags(st, PERCS_STATUS_SEND_BLOCKED, 0,
				PT_TIMEOUT_MS));
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
