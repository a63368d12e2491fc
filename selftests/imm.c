// SPDX-License-Identifier: GPL-2.0
/*
 * percs selftests: immediate send (ICSWX).
 *
 * One call, one 128-byte line, an accepted (0) or busy (-EAGAIN) answer:
 * every payload size up to 96 bytes, the size limit, the exact point where
 * a stalled target makes the HFI answer busy, no accepted line lost, error
 * completions flagged PERCS_CQE_F_IMM, and several processes hammering one
 * receiver.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define SMALL_FIFO	PERCS_FIFO_MIN_SIZE		/* 32 units */
#define SMALL_UNITS	(SMALL_FIFO / PERCS_FLIT_SIZE)
#define BIG_FIFO	PERCS_FIFO_DEF_SIZE

FIXTURE(imm) {
	struct percs_hfi *hfi[2];	/* hub 0 unit 0, hub 1 unit 1 */
	uint32_t key;
};

FIXTURE_VARIANT(imm) {
	uint32_t tx_flags;	/* the sending window's engine mode */
};

FIXTURE_VARIANT_ADD(imm, kick) {
	.tx_flags = 0,
};

FIXTURE_VARIANT_ADD(imm, poll) {
	.tx_flags = PERCS_WINDOW_F_POLL,
};

FIXTURE_SETUP(imm)
{
	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(0, 0, &self->hfi[0]));
	ASSERT_EQ(0, pt_hfi_open(1, 1, &self->hfi[1]));
	self->key = pt_new_key();
}

FIXTURE_TEARDOWN(imm)
{
	percs_hfi_close(self->hfi[0]);
	percs_hfi_close(self->hfi[1]);
}

/* Every payload size 0..96 arrives intact, stamped, in order. */
TEST_F(imm, every_payload_size)
{
	uint8_t buf[PERCS_IMM_PAYLOAD + 16], got[PERCS_IMM_PAYLOAD + 16];
	struct percs_window *tx, *rx;
	struct percs_addr dst, src;
	struct percs_pkt_hdr h;
	struct percs_cqe cqe;
	unsigned int len;

	ASSERT_EQ(0, pt_reserve(self->hfi[0], variant->tx_flags, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx));
	dst = percs_window_addr(rx);
	src = percs_window_addr(tx);

	for (len = 0; len <= PERCS_IMM_PAYLOAD; len++) {
		pt_fill(buf, len, len + 77);
		memset(got, 0xa5, sizeof(got));
		ASSERT_EQ(0, pt_icswx(tx, &dst, buf, len, 0x1000 + len,
				      PT_TIMEOUT_MS));
		ASSERT_EQ((int)len, pt_recv(rx, &h, got, sizeof(got),
					    PT_TIMEOUT_MS));
		ASSERT_EQ(PERCS_PKT_IMM, h.kind);
		ASSERT_EQ(len, h.length);
		ASSERT_EQ(0x1000 + len, h.tag);
		ASSERT_TRUE(pt_addr_eq(&src, &h.src));
		ASSERT_TRUE(pt_addr_eq(&dst, &h.dst));
		ASSERT_EQ(self->key, h.job_key);
		ASSERT_EQ(0, memcmp(buf, got, len));
		ASSERT_EQ(0xa5, got[len]);
	}
	ASSERT_EQ(PERCS_IMM_PAYLOAD + 1, percs_window_status(tx)->packets_sent);
	ASSERT_EQ(0, percs_window_status(tx)->send_errors);
	ASSERT_EQ(0, percs_cq_poll(tx, &cqe, 1));
	percs_window_release(tx);
	percs_window_release(rx);
}

/* 97 bytes do not fit a line: the library says so and sends nothing. */
TEST_F(imm, oversize_refused_by_library)
{
	uint8_t buf[PERCS_IMM_PAYLOAD + 1] = { 0 };
	struct percs_pkt_hdr h = { .kind = PERCS_PKT_IMM };
	struct percs_window *tx, *rx;
	struct percs_addr dst;

	ASSERT_EQ(0, pt_reserve(self->hfi[0], variant->tx_flags, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx));
	dst = percs_window_addr(rx);
	h.dst = dst;
	ASSERT_EQ(-EMSGSIZE, percs_icswx(tx, &dst, buf, sizeof(buf), 1));
	ASSERT_EQ(-EMSGSIZE, percs_icswx_hdr(tx, &h, buf, sizeof(buf)));
	ASSERT_EQ(0, pt_icswx(tx, &dst, buf, 5, 2, PT_TIMEOUT_MS));
	ASSERT_EQ(5, pt_recv(rx, &h, buf, sizeof(buf), PT_TIMEOUT_MS));
	ASSERT_EQ(2, h.tag);
	ASSERT_EQ(-EAGAIN, percs_recv(rx, NULL, buf, sizeof(buf)));
	percs_window_release(tx);
	percs_window_release(rx);
}

/*
 * A slot written by hand with length 97: the HFI completes it with
 * -EMSGSIZE, flagged as coming from an immediate slot, and moves on.
 */
TEST_F(imm, oversize_refused_by_hfi)
{
	const volatile struct percs_status *st;
	volatile struct percs_doorbell *db;
	const struct percs_cqe *cq;
	struct percs_pkt_hdr *slot, h;
	struct percs_window *rx;
	struct pt_rawwin tx;
	uint8_t buf[PERCS_IMM_PAYLOAD];
	uint64_t deadline;
	int hfd;

	ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx));
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, pt_rawwin_open(&tx, hfd, variant->tx_flags, BIG_FIFO,
				    BIG_FIFO, self->key));
	db = pt_rawwin_db(&tx);
	st = pt_rawwin_st(&tx);
	cq = tx.map[PERCS_REGION_CQ];

	slot = tx.map[PERCS_REGION_IMM];
	memset(slot, 0, PERCS_FLIT_SIZE);
	slot->kind = PERCS_PKT_IMM;
	slot->length = PERCS_IMM_PAYLOAD + 1;
	slot->dst = percs_window_addr(rx);
	slot->tag = 97;
	slot = (void *)((uint8_t *)slot + PERCS_FLIT_SIZE);
	memset(slot, 0, sizeof(*slot));
	slot->kind = PERCS_PKT_IMM;
	slot->length = PERCS_IMM_PAYLOAD;
	slot->dst = percs_window_addr(rx);
	slot->tag = 96;
	pt_fill(slot + 1, PERCS_IMM_PAYLOAD, 96);
	__atomic_store_n(&db->imm_tail, 2, __ATOMIC_RELEASE);
	ASSERT_LE(0, ioctl(tx.fd, PERCS_IOC_KICK,
			   (unsigned long)PERCS_KICK_F_IMM));

	deadline = pt_now_ms() + PT_TIMEOUT_MS;
	while (__atomic_load_n(&st->imm_head, __ATOMIC_ACQUIRE) != 2)
		ASSERT_GT(deadline, pt_now_ms());
	ASSERT_EQ(1, __atomic_load_n(&st->cq_tail, __ATOMIC_ACQUIRE));
	ASSERT_EQ(-EMSGSIZE, cq[0].res);
	ASSERT_EQ(97, cq[0].user_data);
	ASSERT_EQ(PERCS_PKT_IMM, cq[0].kind);
	ASSERT_EQ(PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED, cq[0].flags);
	ASSERT_EQ(1, st->send_errors);
	ASSERT_EQ(1, st->packets_sent);

	ASSERT_EQ(PERCS_IMM_PAYLOAD, pt_recv(rx, &h, buf, sizeof(buf),
					     PT_TIMEOUT_MS));
	ASSERT_EQ(96, h.tag);
	ASSERT_EQ(0, memcmp(buf, slot + 1, PERCS_IMM_PAYLOAD));
	ASSERT_EQ(-EAGAIN, percs_recv(rx, NULL, buf, sizeof(buf)));
	pt_rawwin_close(&tx);
	close(hfd);
	percs_window_release(rx);
}

/*
 * Every completion of an immediate send carries PERCS_CQE_F_IMM: errors
 * (no such window, another job key, a FIFO packet in a slot) and a
 * successful send that asked for notification.
 */
TEST_F(imm, completions_flagged_imm)
{
	struct percs_window *tx, *rx, *other;
	struct percs_addr dst, nobody;
	struct percs_pkt_hdr h = { .kind = PERCS_PKT_FIFO };
	struct percs_cqe cqe;
	uint8_t buf[16] = { 1 };
	int i;

	ASSERT_EQ(0, pt_reserve(self->hfi[0], variant->tx_flags, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, BIG_FIFO, self->key,
				PERCS_WINDOW_ANY, &rx));
	ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, BIG_FIFO,
				pt_new_key(), PERCS_WINDOW_ANY, &other));
	dst = percs_window_addr(rx);
	/* a window index nobody holds: reserve one and give it back */
	{
		struct percs_window *tmp;

		ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, BIG_FIFO,
					self->key, PERCS_WINDOW_ANY, &tmp));
		nobody = percs_window_addr(tmp);
		percs_window_release(tmp);
	}

	ASSERT_EQ(0, pt_icswx(tx, &nobody, buf, sizeof(buf), 11,
			      PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(-ECONNREFUSED, cqe.res);
	ASSERT_EQ(11, cqe.user_data);
	ASSERT_EQ(PERCS_PKT_IMM, cqe.kind);
	ASSERT_EQ(PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED, cqe.flags);

	dst = percs_window_addr(other);
	ASSERT_EQ(0, pt_icswx(tx, &dst, buf, sizeof(buf), 12, PT_TIMEOUT_MS));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(-EACCES, cqe.res);
	ASSERT_EQ(12, cqe.user_data);
	ASSERT_EQ(PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED, cqe.flags);

	/* A FIFO-kind header has no business in an immediate slot. */
	dst = percs_window_addr(rx);
	h.dst = dst;
	h.tag = 13;
	ASSERT_EQ(0, percs_icswx_hdr(tx, &h, buf, sizeof(buf)));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(-EINVAL, cqe.res);
	ASSERT_EQ(13, cqe.user_data);
	ASSERT_EQ(PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED, cqe.flags);

	/* Success with NOTIFY: res 0, still flagged. */
	h.kind = PERCS_PKT_IMM;
	h.flags = PERCS_PKT_F_NOTIFY;
	h.tag = 14;
	ASSERT_EQ(0, percs_icswx_hdr(tx, &h, buf, sizeof(buf)));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	ASSERT_EQ(0, cqe.res);
	ASSERT_EQ(14, cqe.user_data);
	ASSERT_EQ(PERCS_PKT_IMM, cqe.kind);
	ASSERT_EQ(PERCS_CQE_F_IMM, cqe.flags);
	ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
				       PT_TIMEOUT_MS));
	ASSERT_EQ(14, h.tag);

	/* Nothing else came: the refused lines never reached anyone. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(-EAGAIN, percs_recv(rx, NULL, buf, sizeof(buf)));
	ASSERT_EQ(-EAGAIN, percs_recv(other, NULL, buf, sizeof(buf)));
	ASSERT_EQ(0, percs_cq_poll(tx, &cqe, 1));
	ASSERT_EQ(3, percs_window_status(tx)->send_errors);
	percs_window_release(tx);
	percs_window_release(rx);
	percs_window_release(other);
}

/*
 * A target that does not consume: with kick-mode ICSWX every line is
 * accepted until the target's 4 KiB FIFO holds 32 lines and all 32 slots
 * are held, then the answer is busy.  Once the target consumes and returns
 * credit, all 64 accepted lines arrive in order, and the window accepts
 * again.
 */
TEST_F(imm, busy_when_target_full)
{
	const unsigned int expect_ok = SMALL_UNITS + PERCS_IMM_SLOTS;
	const volatile struct percs_status *tst, *rst;
	uint8_t buf[PERCS_IMM_PAYLOAD], want[PERCS_IMM_PAYLOAD];
	struct percs_window *tx, *rx;
	struct percs_addr dst;
	struct percs_pkt_hdr h;
	struct percs_cqe cqe;
	unsigned int ok = 0, i;
	uint64_t deadline;
	int ret;

	ASSERT_EQ(0, pt_reserve(self->hfi[0], variant->tx_flags, BIG_FIFO,
				BIG_FIFO, self->key, PERCS_WINDOW_ANY, &tx));
	ASSERT_EQ(0, pt_reserve(self->hfi[1], 0, BIG_FIFO, SMALL_FIFO,
				self->key, PERCS_WINDOW_ANY, &rx));
	dst = percs_window_addr(rx);
	tst = percs_window_status(tx);
	rst = percs_window_status(rx);

	/*
	 * Kick mode moves each line inside the call, so the first busy
	 * answer comes exactly after 32 + 32 accepted lines.  A polling
	 * engine moves lines a little later (a kick only wakes it), so there
	 * a busy answer is retried until 64 lines are accepted; never more.
	 */
	deadline = pt_now_ms() + PT_TIMEOUT_MS;
	for (;;) {
		pt_fill(buf, sizeof(buf), ok);
		ret = percs_icswx(tx, &dst, buf, sizeof(buf), ok);
		if (ret == -EAGAIN) {
			if (!variant->tx_flags || ok == expect_ok)
				break;
			ASSERT_GT(deadline, pt_now_ms());
			pt_pause_us(100);
			continue;
		}
		ASSERT_EQ(0, ret);
		ok++;
		ASSERT_GE(expect_ok, ok);
	}
	ASSERT_EQ(expect_ok, ok);
	/* The engine tried the 33rd line and found the target full. */
	while (!(tst->flags & PERCS_STATUS_SEND_BLOCKED))
		ASSERT_GT(deadline, pt_now_ms());
	ASSERT_EQ(SMALL_UNITS, rst->packets_received);
	ASSERT_EQ(SMALL_UNITS, __atomic_load_n(&tst->imm_head,
					       __ATOMIC_ACQUIRE));
	ASSERT_EQ(1, tst->send_blocked);
	/* Busy stays busy while the target sleeps. */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(-EAGAIN, percs_icswx(tx, &dst, buf, sizeof(buf),
					       9999));
	ASSERT_EQ(0, percs_cq_poll(tx, &cqe, 1));

	for (i = 0; i < expect_ok; i++) {
		ASSERT_EQ(sizeof(buf), pt_recv(rx, &h, buf, sizeof(buf),
					       PT_TIMEOUT_MS));
		ASSERT_EQ(PERCS_PKT_IMM, h.kind);
		ASSERT_EQ(i, h.tag);
		pt_fill(want, sizeof(want), i);
		ASSERT_EQ(0, memcmp(want, buf, sizeof(buf)));
	}
	ASSERT_EQ(-EAGAIN, percs_recv(rx, &h, buf, sizeof(buf)));
	ASSERT_EQ(expect_ok, tst->packets_sent);
	ASSERT_EQ(0, tst->send_errors);

	/* Accepting again, and the line arrives. */
	ASSERT_EQ(0, pt_icswx(tx, &dst, buf, 8, 4242, PT_TIMEOUT_MS));
	ASSERT_EQ(8, pt_recv(rx, &h, buf, sizeof(buf), PT_TIMEOUT_MS));
	ASSERT_EQ(4242, h.tag);
	ASSERT_EQ(0, tst->flags & PERCS_STATUS_SEND_BLOCKED);
	percs_window_release(tx);
	percs_window_release(rx);
	ASSERT_LIVE_ZERO();
}

/*
 * Three processes hammer one receiver with 4 KiB of FIFO.  Each retries a
 * busy line until it is accepted; every accepted line must arrive exactly
 * once and intact, and the receiver starts late so that every sender hears
 * busy.
 */
#define HM_SENDERS	3
#define HM_LINES	((unsigned int)pt_scale(20000u)) /* accepted lines per sender */

struct hm_line {
	uint32_t seq;
	uint32_t sender;
	uint64_t sum;
};

struct hm_shared {
	struct percs_addr rx;
	uint32_t key;
	uint32_t flags;
	uint64_t deadline;
	struct {
		struct percs_addr addr;
		int ready;
		uint64_t accepted;
		uint64_t busy;
		uint64_t sent;
		uint64_t errors;
	} s[HM_SENDERS];
};

static void hm_build(uint8_t *buf, unsigned int sender, uint32_t seq)
{
	struct hm_line l = { .seq = seq, .sender = sender };

	pt_fill(buf, PERCS_IMM_PAYLOAD, (uint64_t)sender << 32 | seq);
	memcpy(buf, &l, sizeof(l));
	l.sum = pt_checksum(buf, PERCS_IMM_PAYLOAD);
	memcpy(buf, &l, sizeof(l));
}

static int hm_sender(struct hm_shared *sh, unsigned int id)
{
	const volatile struct percs_status *st;
	uint8_t buf[PERCS_IMM_PAYLOAD];
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_cqe cqe;
	uint32_t seq = 0;

	if (pt_hfi_open(2 + id, id & 1, &hfi) ||
	    pt_reserve(hfi, sh->flags, BIG_FIFO, BIG_FIFO, sh->key,
		       PERCS_WINDOW_ANY, &w))
		return 1;
	st = percs_window_status(w);
	sh->s[id].addr = percs_window_addr(w);
	__atomic_store_n(&sh->s[id].ready, 1, __ATOMIC_RELEASE);

	hm_build(buf, id, seq);
	while (seq < HM_LINES) {
		int ret = percs_icswx(w, &sh->rx, buf, sizeof(buf), seq);

		if (ret == -EAGAIN) {
			sh->s[id].busy++;
			if (pt_now_ms() > sh->deadline)
				return 1;
			if (!(sh->s[id].busy & 7))
				pt_pause_us(50);
			continue;
		}
		if (ret) {
			fprintf(stderr, "# sender %u: icswx %d\n", id, ret);
			return 1;
		}
		sh->s[id].accepted = ++seq;
		hm_build(buf, id, seq);
	}
	/* Wait for the HFI to take every held slot. */
	while (st->packets_sent + st->send_errors < HM_LINES) {
		if (pt_now_ms() > sh->deadline)
			return 1;
		percs_kick(w, PERCS_KICK_F_IMM);
		pt_pause_us(1000);
	}
	sh->s[id].sent = st->packets_sent;
	sh->s[id].errors = st->send_errors;
	while (percs_cq_poll(w, &cqe, 1) == 1)
		fprintf(stderr, "# sender %u: completion tag %llu res %d\n",
			id, (unsigned long long)cqe.user_data, cqe.res);
	percs_window_release(w);
	percs_hfi_close(hfi);
	return 0;
}

TEST_F_TIMEOUT(imm, many_senders_exactly_once, 300)
{
	uint8_t *seen[HM_SENDERS];
	uint8_t buf[PERCS_IMM_PAYLOAD];
	uint64_t got = 0, start, stall_until, busy = 0;
	struct percs_window *rx;
	struct hm_shared *sh;
	struct percs_pkt_hdr h;
	pid_t pid[HM_SENDERS];
	unsigned int i;
	int status, failed = 0;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	for (i = 0; i < HM_SENDERS; i++) {
		seen[i] = calloc(HM_LINES / 8 + 1, 1);
		ASSERT_NE(NULL, seen[i]);
	}
	ASSERT_EQ(0, pt_reserve(self->hfi[0], 0, BIG_FIFO, SMALL_FIFO,
				self->key, PERCS_WINDOW_ANY, &rx));
	sh->rx = percs_window_addr(rx);
	sh->key = self->key;
	sh->flags = variant->tx_flags;
	sh->deadline = pt_now_ms() + 240000;

	start = pt_now_ms();
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < HM_SENDERS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(hm_sender(sh, i));
	}
	/* Stall until every sender has been told busy (or 5 s). */
	stall_until = pt_now_ms() + 5000;
	for (;;) {
		unsigned int busy_all = 0;

		for (i = 0; i < HM_SENDERS; i++)
			busy_all += sh->s[i].busy > 0;
		if (busy_all == HM_SENDERS || pt_now_ms() > stall_until)
			break;
		pt_pause_us(1000);
	}
	while (got < HM_SENDERS * HM_LINES) {
		struct hm_line l;
		uint64_t sum;
		int len = percs_recv(rx, &h, buf, sizeof(buf));

		if (len == -EAGAIN) {
			if (pt_now_ms() > sh->deadline)
				break;
			ASSERT_LE(0, percs_wait(rx, 100));
			continue;
		}
		ASSERT_EQ(PERCS_IMM_PAYLOAD, len);
		ASSERT_EQ(PERCS_PKT_IMM, h.kind);
		ASSERT_EQ(self->key, h.job_key);
		memcpy(&l, buf, sizeof(l));
		ASSERT_GT(HM_SENDERS, l.sender);
		ASSERT_GT(HM_LINES, l.seq);
		ASSERT_EQ(l.seq, h.tag);
		ASSERT_TRUE(pt_addr_eq(&sh->s[l.sender].addr, &h.src));
		sum = l.sum;
		l.sum = 0;
		memcpy(buf, &l, sizeof(l));
		ASSERT_EQ(sum, pt_checksum(buf, sizeof(buf)));
		if (seen[l.sender][l.seq / 8] & (1u << (l.seq % 8)))
			TH_LOG("sender %u line %u arrived twice", l.sender,
			       l.seq);
		ASSERT_EQ(0, seen[l.sender][l.seq / 8] & (1u << (l.seq % 8)));
		seen[l.sender][l.seq / 8] |= 1u << (l.seq % 8);
		got++;
	}
	for (i = 0; i < HM_SENDERS; i++) {
		uint64_t deadline = pt_now_ms() + 10000;
		pid_t r;

		while ((r = waitpid(pid[i], &status, WNOHANG)) == 0 &&
		       pt_now_ms() < deadline)
			pt_pause_us(1000);
		if (r == 0) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], &status, 0);
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	for (i = 0; i < HM_SENDERS; i++) {
		TH_LOG("sender %u: accepted %llu busy %llu sent %llu errors %llu",
		       i, (unsigned long long)sh->s[i].accepted,
		       (unsigned long long)sh->s[i].busy,
		       (unsigned long long)sh->s[i].sent,
		       (unsigned long long)sh->s[i].errors);
		busy += sh->s[i].busy;
	}
	TH_LOG("%llu lines in %llu ms", (unsigned long long)got,
	       (unsigned long long)(pt_now_ms() - start));
	ASSERT_EQ(0, failed);
	ASSERT_EQ(HM_SENDERS * HM_LINES, got);
	for (i = 0; i < HM_SENDERS; i++) {
		uint32_t seq;

		for (seq = 0; seq < HM_LINES; seq++)
			ASSERT_TRUE(seen[i][seq / 8] & (1u << (seq % 8)));
		ASSERT_EQ(HM_LINES, sh->s[i].sent);
		ASSERT_EQ(0, sh->s[i].errors);
		ASSERT_LT(0, sh->s[i].busy);
	}
	ASSERT_LT(0, busy);
	ASSERT_EQ(-EAGAIN, percs_recv(rx, &h, buf, sizeof(buf)));
	percs_window_release(rx);
	for (i = 0; i < HM_SENDERS; i++)
		free(seen[i]);
	munmap(sh, sizeof(*sh));
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
