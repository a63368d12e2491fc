// SPDX-License-Identifier: GPL-2.0
/*
 * atomic: remote atomic updates (PERCS_PKT_ATOMIC) on the default 2x4
 * topology (8 hubs), through the raw descriptor (percs_atomic_post() and
 * percs_cq_poll()) and through the PGAS API of libpercs
 * (percs_atomic_fetch_add64() and friends).
 *
 * Every op x width x fetch against a C reference (wraparound, signed
 * values, CSWAP failure), the rest of the target and of the result
 * location checked untouched; 8- and 16-bit lanes of one word owned by
 * different processes; remote fetch-adds mixed with the target's own CPU
 * atomics; 8 processes on 8 hubs fetch-adding one counter, without and
 * with drop/duplicate/reorder injection (final value exact, every value
 * fetched once); a CAS spinlock guarding a counter updated by RDMA read
 * and write; packed descriptors (all or none); every error status with
 * the target untouched; windows closed and a process killed with atomics
 * outstanding; more descriptors than the 128 a window may have
 * outstanding.  Afterwards the live counters (atomics_outstanding
 * included) drain to zero.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE		4096UL
#define BUF		(16 * PAGE)	/* each side's registered buffer */
#define HALF		(BUF / 2)	/* targets below, result locations above */
#define RIGHTS		(PERCS_ACCESS_LOCAL_WRITE | PERCS_ACCESS_REMOTE_READ | \
			 PERCS_ACCESS_REMOTE_WRITE | PERCS_ACCESS_REMOTE_ATOMIC)
#define NR_HUBS		8	/* the default topology: 2 supernodes x 4 hubs */
#define MAX_OUTSTANDING	128	/* atomic descriptors a window may have out */
#define MAX_PER_TARGET	64	/* of which to one target window */
#define FAULT_MS	20000	/* deadline of one completion, faults on */
#define POISON		0xeeU	/* result locations before a fetch */

/* amo_wait() results that are not a completion's status. */
#define E_POST		10000	/* + errno: percs_atomic_post() refused */
#define E_NOCQE		20000	/* + errno: no completion came */
#define E_FOREIGN	30000	/* a completion of another operation */

/*
 * One side: a window and a registered buffer of BUF bytes, zeroed before
 * registration (a read-only one pins the process's pages).
 */
static int side_open(struct pt_side *s, unsigned int hub, unsigned int unit,
		     uint32_t key, uint32_t access)
{
	return pt_side_open(s, hub, unit, key, BUF, access, PT_SIDE_PREFAULT);
}

static uint64_t wmask(unsigned int width)
{
	return width == 8 ? ~0ULL : (1ULL << (8 * width)) - 1;
}

/* What one operation leaves in memory holding @old: the reference. */
static uint64_t ref_apply(unsigned int op, unsigned int width, uint64_t old,
			  uint64_t v, uint64_t cmp)
{
	uint64_t m = wmask(width), r = old;

	switch (op) {
	case PERCS_ATOMIC_ADD:
		r = old + v;
		break;
	case PERCS_ATOMIC_AND:
		r = old & v;
		break;
	case PERCS_ATOMIC_OR:
		r = old | v;
		break;
	case PERCS_ATOMIC_XOR:
		r = old ^ v;
		break;
	case PERCS_ATOMIC_CSWAP:
		r = (old & m) == (cmp & m) ? v : old;
		break;
	}
	return r & m;
}

/* Host-order loads and stores of one operand. */
static uint64_t load_w(const void *p, unsigned int width)
{
	uint8_t b;
	uint16_t h;
	uint32_t s;
	uint64_t d;

	switch (width) {
	case 1:
		memcpy(&b, p, 1);
		return b;
	case 2:
		memcpy(&h, p, 2);
		return h;
	case 4:
		memcpy(&s, p, 4);
		return s;
	default:
		memcpy(&d, p, 8);
		return d;
	}
}

static void store_w(void *p, unsigned int width, uint64_t v)
{
	uint8_t b = v;
	uint16_t h = v;
	uint32_t s = v;

	switch (width) {
	case 1:
		memcpy(p, &b, 1);
		break;
	case 2:
		memcpy(p, &h, 2);
		break;
	case 4:
		memcpy(p, &s, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A completion of an atomic descriptor: the entry or -ETIMEDOUT. */
static int amo_cqe(struct percs_window *w, struct percs_cqe *c, int ms)
{
	int ret = pt_cq_wait(w, c, ms);

	return ret == 1 ? 0 : ret < 0 ? ret : -EIO;
}

/*
 * Post one raw descriptor and wait for its completion entry.
 * Return: its res, or E_POST/E_NOCQE + errno, E_FOREIGN.
 */
static int amo_wait(struct percs_window *w, const struct percs_atomic_wr *wr,
		    struct percs_cqe *cqe)
{
	struct percs_cqe c;
	int ret = percs_atomic_post(w, wr);

	if (ret)
		return E_POST - ret;
	ret = amo_cqe(w, &c, PT_TIMEOUT_MS);
	if (ret)
		return E_NOCQE - ret;
	if (c.user_data != wr->user_data || c.kind != PERCS_PKT_ATOMIC)
		return E_FOREIGN;
	if (cqe)
		*cqe = c;
	return c.res;
}

/* A one-operation descriptor to @t's buffer at @off. */
static struct percs_atomic_wr wr_of(const struct pt_side *t, unsigned int op,
				    unsigned int width, uint64_t off,
				    uint64_t v, uint64_t ud)
{
	struct percs_atomic_wr wr = {
		.op = op, .width = width, .count = 1, .dst = t->addr,
		.handle = t->mr, .user_data = ud,
		.ops[0] = { .addr = (uintptr_t)t->buf + off, .operand = v },
	};

	return wr;
}

/* Fetch into @a's result location at @res. */
static void wr_fetch(struct percs_atomic_wr *wr, const struct pt_side *a,
		     uint8_t *res)
{
	wr->flags |= PERCS_ATOMIC_F_FETCH;
	wr->result_handle = a->mr;
	wr->result_addr = res;
}

/*
 * A hand-made descriptor (to reach the kernel's checks past the
 * library's): the extension, @n operations, an optional comparand, sent
 * as one PERCS_PKT_ATOMIC packet of @len bytes (0: the natural length).
 */
static int raw_send(struct percs_window *w, const struct percs_addr *dst,
		    const struct percs_atomic_ext *e,
		    const struct percs_atomic_op *ops, unsigned int n,
		    const uint64_t *cmp, size_t len, uint32_t tag)
{
	uint8_t body[PERCS_ATOMIC_LEN(PERCS_ATOMIC_MAX_PACKED + 1) + 8] = { 0 };
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_ATOMIC, .dst = *dst, .tag = tag,
	};
	size_t natural = PERCS_ATOMIC_LEN(n) + (cmp ? 8 : 0);
	int ret;

	memcpy(body, e, sizeof(*e));
	memcpy(body + PERCS_ATOMIC_EXT_SIZE, ops, n * sizeof(*ops));
	if (cmp)
		memcpy(body + PERCS_ATOMIC_LEN(n), cmp, 8);
	ret = percs_send_compose_hdr(w, &h, body, len ? len : natural);
	if (ret)
		return ret;
	return percs_send_trigger(w);
}

/* raw_send() and its completion: res, or E_POST/E_NOCQE/E_FOREIGN. */
static int raw_wait(struct percs_window *w, const struct percs_addr *dst,
		    const struct percs_atomic_ext *e,
		    const struct percs_atomic_op *ops, unsigned int n,
		    const uint64_t *cmp, size_t len, uint64_t want_ud,
		    struct percs_cqe *cqe)
{
	struct percs_cqe c;
	int ret = raw_send(w, dst, e, ops, n, cmp, len, (uint32_t)want_ud);

	if (ret)
		return E_POST - ret;
	ret = amo_cqe(w, &c, PT_TIMEOUT_MS);
	if (ret)
		return E_NOCQE - ret;
	if (c.user_data != want_ud || c.kind != PERCS_PKT_ATOMIC)
		return E_FOREIGN;
	if (cqe)
		*cqe = c;
	return c.res;
}

/*
 * The PGAS level, one function per width over the per-width inline
 * wrappers of lib/percs.h.  @mode: M_NOFETCH (then quiet), M_BLOCK, M_NBI
 * (then quiet).  *@got: the fetched value (a poison pattern if none).
 */
enum { M_NOFETCH, M_BLOCK, M_NBI, M_MODES };

#define PGAS_OP(N, OP, name)						\
	case OP * M_MODES + M_NOFETCH:					\
		ret = percs_atomic_##name##N(w, r, off, x);		\
		break;							\
	case OP * M_MODES + M_BLOCK:					\
		ret = percs_atomic_fetch_##name##N(w, r, off, x, &o);	\
		break;							\
	case OP * M_MODES + M_NBI:					\
		ret = percs_atomic_fetch_##name##N##_nbi(w, r, off, x, &o); \
		break;

#define PGAS_DO(N)							\
static int pgas_do##N(struct percs_window *w, const struct percs_rmr *r, \
		      uint64_t off, unsigned int op, unsigned int mode,	\
		      uint64_t v, uint64_t cond, uint64_t *got)		\
{									\
	uint##N##_t x = (uint##N##_t)v, c = (uint##N##_t)cond;		\
	uint##N##_t o = (uint##N##_t)0x5a5a5a5a5a5a5a5aULL;		\
	int ret = -EINVAL;						\
									\
	switch (op * M_MODES + mode) {					\
	PGAS_OP(N, PERCS_ATOMIC_ADD, add)				\
	PGAS_OP(N, PERCS_ATOMIC_AND, and)				\
	PGAS_OP(N, PERCS_ATOMIC_OR, or)					\
	PGAS_OP(N, PERCS_ATOMIC_XOR, xor)				\
	case PERCS_ATOMIC_CSWAP * M_MODES + M_NOFETCH:			\
		ret = percs_atomic_compare_swap##N##_nbi(w, r, off, c, x, \
							 NULL);		\
		break;							\
	case PERCS_ATOMIC_CSWAP * M_MODES + M_BLOCK:			\
		ret = percs_atomic_compare_swap##N(w, r, off, c, x, &o); \
		break;							\
	case PERCS_ATOMIC_CSWAP * M_MODES + M_NBI:			\
		ret = percs_atomic_compare_swap##N##_nbi(w, r, off, c, x, \
							 &o);		\
		break;							\
	}								\
	if (!ret && mode != M_BLOCK)					\
		ret = percs_atomic_quiet(w);				\
	*got = o;							\
	return ret;							\
}

PGAS_DO(8)
PGAS_DO(16)
PGAS_DO(32)
PGAS_DO(64)

static int pgas_do(struct percs_window *w, const struct percs_rmr *r,
		   uint64_t off, unsigned int op, unsigned int width,
		   unsigned int mode, uint64_t v, uint64_t cond, uint64_t *got)
{
	switch (width) {
	case 1:
		return pgas_do8(w, r, off, op, mode, v, cond, got);
	case 2:
		return pgas_do16(w, r, off, op, mode, v, cond, got);
	case 4:
		return pgas_do32(w, r, off, op, mode, v, cond, got);
	default:
		return pgas_do64(w, r, off, op, mode, v, cond, got);
	}
}

/* The poison pgas_do() leaves in *got when nothing was fetched. */
static uint64_t pgas_poison(unsigned int width)
{
	return 0x5a5a5a5a5a5a5a5aULL & wmask(width);
}

/* percs/atomic's outstanding back to 0 within @ms; its last value. */
static long outstanding_drain(int ms)
{
	uint64_t deadline = pt_now_ms() + ms;
	struct pt_atomic_stats st;

	for (;;) {
		if (pt_read_atomic_stats(&st))
			return -1;
		if (st.outstanding == 0 || pt_now_ms() > deadline)
			return st.outstanding;
		usleep(1000);
	}
}

/*
 * Fixture: a (hub 0 unit 0) and t (hub 5 unit 1, the other supernode),
 * one job key, the fault knobs at 0 before and after (even when a test
 * fails), the reorder depth and hold time restored.
 */
FIXTURE(atomic) {
	uint32_t key;
	struct pt_side a, t;
	long saved_depth, saved_hold;
};

FIXTURE_SETUP(atomic)
{
	PT_REQUIRE_DEVICE();
	self->key = pt_new_key();
	self->saved_depth = pt_isr_read("reorder_depth");
	self->saved_hold = pt_isr_read("hold_us");
	pt_faults_set(0);
	ASSERT_EQ(0, side_open(&self->a, 0, 0, self->key, RIGHTS));
	ASSERT_EQ(0, side_open(&self->t, 5, 1, self->key, RIGHTS));
}

FIXTURE_TEARDOWN(atomic)
{
	pt_faults_set(0);
	if (self->saved_depth > 0)
		pt_isr_set("reorder_depth", self->saved_depth);
	if (self->saved_hold > 0)
		pt_isr_set("hold_us", self->saved_hold);
	pt_side_close(&self->a);
	pt_side_close(&self->t);
	EXPECT_EQ(0, outstanding_drain(PT_TIMEOUT_MS));
	EXPECT_TRUE(pt_wait_mrs(0, 0, PT_TIMEOUT_MS));
	ASSERT_LIVE_ZERO();
}

/* Where the target window of the op x width tests is, from hub 0 unit 0. */
struct place {
	const char *name;
	unsigned int hub, unit;
	bool same_window;
};

static const struct place places[] = {
	{ "same window", 0, 0, true },
	{ "same HFI", 0, 0, false },
	{ "other HFI", 0, 1, false },
	{ "same supernode", 2, 1, false },
	{ "other supernode", 5, 0, false },
};

/*
 * The (old, operand) pairs of one width: wraparound (0xff + 1 at width 1,
 * signed -1 + 1), signed overflow both ways, negative values, patterns.
 */
#define NR_CASES 9
static void cases_of(unsigned int width, uint64_t old[NR_CASES],
		     uint64_t val[NR_CASES])
{
	const uint64_t m = wmask(width), smax = m >> 1;
	const uint64_t c[NR_CASES][2] = {
		{ m, 1 },		/* all ones + 1 = 0 */
		{ 0, m },		/* 0 + -1 = -1 */
		{ smax, 1 },		/* signed max + 1 = signed min */
		{ smax + 1, m },	/* signed min - 1 = signed max */
		{ -5ULL, 3 },		/* -5 + 3 = -2 */
		{ -5ULL, -7ULL },	/* -12 */
		{ 0xa5a5a5a5a5a5a5a5ULL, 0x5a5a5a5a5a5a5a5aULL },
		{ 0x0123456789abcdefULL, 0xfedcba9876543210ULL },
		{ 0xf0f0f0f0f0f0f0f0ULL, 0xff00ff00ff00ff00ULL },
	};

	for (unsigned int i = 0; i < NR_CASES; i++) {
		old[i] = c[i][0] & m;
		val[i] = c[i][1] & m;
	}
}

/* One operation of the matrix: where it goes and what it is. */
struct amo_case {
	unsigned int slot;	/* 16-byte slot of the target half */
	unsigned int op, width;
	unsigned int mode;	/* M_NOFETCH, M_BLOCK (raw: fetch), M_NBI */
	uint64_t old, val, cmp;
};

static uint64_t case_off(const struct amo_case *k)
{
	return k->slot * 16 + k->width * (k->slot % (16 / k->width));
}

/* What the matrix expects, logged on a failure. */
#define CASE_FMT "op %u width %u mode %u old %#llx operand %#llx cmp %#llx"
#define CASE_ARGS(k) (k)->op, (k)->width, (k)->mode,			\
	(unsigned long long)(k)->old, (unsigned long long)(k)->val,	\
	(unsigned long long)(k)->cmp

/*
 * One operation through a raw descriptor from @a to @t: the operand's
 * bytes hold the reference's value and every other byte of the target
 * half is unchanged (@shadow), the fetched value is in the low @width
 * bytes of the result location and the bytes after it are untouched.
 */
static void raw_one(struct __test_metadata *_metadata, struct pt_side *a,
		    struct pt_side *t, uint8_t *shadow,
		    const struct amo_case *k)
{
	uint64_t off = case_off(k);
	uint8_t *res = a->buf + HALF + (k->slot % 256) * 16;
	uint64_t want = ref_apply(k->op, k->width, k->old, k->val, k->cmp);
	struct percs_atomic_wr wr = wr_of(t, k->op, k->width, off, k->val,
					  1000 + k->slot);
	unsigned int i;

	wr.compare = k->cmp;
	if (k->mode != M_NOFETCH)
		wr_fetch(&wr, a, res);
	store_w(t->buf + off, k->width, k->old);
	store_w(shadow + off, k->width, want);
	memset(res, POISON, 16);
	ASSERT_EQ(0, amo_wait(a->w, &wr, NULL)) {
		TH_LOG(CASE_FMT, CASE_ARGS(k));
	}
	ASSERT_EQ(want, load_w(t->buf + off, k->width)) {
		TH_LOG(CASE_FMT ": memory %#llx", CASE_ARGS(k),
		       (unsigned long long)load_w(t->buf + off, k->width));
	}
	ASSERT_EQ(0, memcmp(t->buf, shadow, HALF)) {
		TH_LOG(CASE_FMT ": bytes beside the operand changed",
		       CASE_ARGS(k));
	}
	if (k->mode != M_NOFETCH) {
		ASSERT_EQ(k->old, load_w(res, k->width)) {
			TH_LOG(CASE_FMT ": fetched %#llx", CASE_ARGS(k),
			       (unsigned long long)load_w(res, k->width));
		}
	}
	for (i = k->mode != M_NOFETCH ? k->width : 0; i < 16; i++)
		ASSERT_EQ(POISON, res[i]) {
			TH_LOG(CASE_FMT ": result byte %u written",
			       CASE_ARGS(k), i);
		}
}

/* The same through the PGAS API (a's window, t's registration). */
static void pgas_one(struct __test_metadata *_metadata, struct pt_side *a,
		     struct pt_side *t, uint8_t *shadow,
		     const struct amo_case *k)
{
	uint64_t off = case_off(k), got = 0;
	uint64_t want = ref_apply(k->op, k->width, k->old, k->val, k->cmp);

	store_w(t->buf + off, k->width, k->old);
	store_w(shadow + off, k->width, want);
	ASSERT_EQ(0, pgas_do(a->w, &t->rmr, off, k->op, k->width, k->mode,
			     k->val, k->cmp, &got)) {
		TH_LOG(CASE_FMT, CASE_ARGS(k));
	}
	ASSERT_EQ(want, load_w(t->buf + off, k->width)) {
		TH_LOG(CASE_FMT ": memory %#llx", CASE_ARGS(k),
		       (unsigned long long)load_w(t->buf + off, k->width));
	}
	ASSERT_EQ(0, memcmp(t->buf, shadow, HALF)) {
		TH_LOG(CASE_FMT ": bytes beside the operand changed",
		       CASE_ARGS(k));
	}
	ASSERT_EQ(k->mode == M_NOFETCH ? pgas_poison(k->width) : k->old, got) {
		TH_LOG(CASE_FMT ": fetched %#llx", CASE_ARGS(k),
		       (unsigned long long)got);
	}
}

typedef void (*one_fn)(struct __test_metadata *, struct pt_side *,
		       struct pt_side *, uint8_t *, const struct amo_case *);

/*
 * Every op x width x mode x case (CSWAP twice: comparand equal, then
 * different: memory as is, the current value fetched), each in its own
 * slot of a target half filled with a pattern.
 */
static void matrix(struct __test_metadata *_metadata, struct pt_side *a,
		   struct pt_side *t, const unsigned int *modes,
		   unsigned int nr_modes, one_fn one)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	uint8_t *shadow = malloc(HALF);
	unsigned int slot = 0;

	ASSERT_NE(NULL, shadow);
	pt_fill(t->buf, HALF, t->addr.window);
	memcpy(shadow, t->buf, HALF);
	for (unsigned int op = 0; op <= PERCS_ATOMIC_OP_MAX; op++)
	for (unsigned int wi = 0; wi < ARRAY_SIZE(widths); wi++)
	for (unsigned int mi = 0; mi < nr_modes; mi++) {
		uint64_t old[NR_CASES], val[NR_CASES];

		cases_of(widths[wi], old, val);
		for (unsigned int c = 0; c < NR_CASES; c++)
		for (unsigned int eq = 0;
		     eq < (op == PERCS_ATOMIC_CSWAP ? 2 : 1); eq++) {
			struct amo_case k = {
				.slot = slot++, .op = op, .width = widths[wi],
				.mode = modes[mi], .old = old[c],
				.val = val[c],
				.cmp = eq ? old[c] ^ 1 : old[c],
			};

			ASSERT_GT(HALF / 16, slot);
			one(_metadata, a, t, shadow, &k);
		}
	}
	free(shadow);
}

TEST_F_TIMEOUT(atomic, every_op_width_raw, 120)
{
	static const unsigned int modes[] = { M_NOFETCH, M_BLOCK };

	for (unsigned int i = 0; i < ARRAY_SIZE(places); i++) {
		const struct place *p = &places[i];
		struct pt_side other, *t = &other;

		if (p->same_window) {
			t = &self->a;
		} else {
			ASSERT_EQ(0, side_open(&other, p->hub, p->unit,
					       self->key, RIGHTS));
		}
		TH_LOG("%s", p->name);
		matrix(_metadata, &self->a, t, modes, ARRAY_SIZE(modes),
		       raw_one);
		if (!p->same_window)
			pt_side_close(&other);
	}
	/* Every completion was taken: nothing extra in the CQ. */
	struct percs_cqe c;

	EXPECT_EQ(0, percs_cq_poll(self->a.w, &c, 1));
	EXPECT_EQ(0, percs_window_status(self->a.w)->cq_overflows);
}

TEST_F_TIMEOUT(atomic, every_op_width_pgas, 120)
{
	static const unsigned int modes[] = { M_NOFETCH, M_BLOCK, M_NBI };

	matrix(_metadata, &self->a, &self->t, modes, ARRAY_SIZE(modes),
	       pgas_one);
	/* The library's completions never reach percs_cq_poll(). */
	struct percs_cqe c;

	EXPECT_EQ(0, percs_cq_poll(self->a.w, &c, 1));
}

/* Swap (built on CAS), atomic read and atomic write, every width. */
TEST_F(atomic, pgas_swap_fetch_set)
{
	uint8_t before[HALF];
	uint8_t o8 = 0;
	uint16_t o16 = 0;
	uint32_t o32 = 0;
	uint64_t o64 = 0;

	pt_fill(self->t.buf, HALF, 3);
	memcpy(before, self->t.buf, HALF);
	/* One operand each at 9, 18, 28 and 32; the bytes around kept. */
	ASSERT_EQ(0, percs_atomic_swap8(self->a.w, &self->t.rmr, 9, 0x81,
					&o8));
	EXPECT_EQ(before[9], o8);
	ASSERT_EQ(0, percs_atomic_swap16(self->a.w, &self->t.rmr, 18, 0x8001,
					 &o16));
	EXPECT_EQ(load_w(before + 18, 2), o16);
	ASSERT_EQ(0, percs_atomic_swap32(self->a.w, &self->t.rmr, 28,
					 0x80000001u, &o32));
	EXPECT_EQ(load_w(before + 28, 4), o32);
	ASSERT_EQ(0, percs_atomic_swap64(self->a.w, &self->t.rmr, 32,
					 0x8000000000000001ULL, &o64));
	EXPECT_EQ(load_w(before + 32, 8), o64);
	store_w(before + 9, 1, 0x81);
	store_w(before + 18, 2, 0x8001);
	store_w(before + 28, 4, 0x80000001u);
	store_w(before + 32, 8, 0x8000000000000001ULL);
	EXPECT_EQ(0, memcmp(before, self->t.buf, HALF));
	/* Atomic reads fetch and change nothing. */
	ASSERT_EQ(0, percs_atomic_fetch8(self->a.w, &self->t.rmr, 9, &o8));
	EXPECT_EQ(0x81, o8);
	ASSERT_EQ(0, percs_atomic_fetch16(self->a.w, &self->t.rmr, 18, &o16));
	EXPECT_EQ(0x8001, o16);
	ASSERT_EQ(0, percs_atomic_fetch32(self->a.w, &self->t.rmr, 28, &o32));
	EXPECT_EQ(0x80000001u, o32);
	ASSERT_EQ(0, percs_atomic_fetch64(self->a.w, &self->t.rmr, 32, &o64));
	EXPECT_EQ(0x8000000000000001ULL, o64);
	EXPECT_EQ(0, memcmp(before, self->t.buf, HALF));
	/* Atomic writes. */
	ASSERT_EQ(0, percs_atomic_set8(self->a.w, &self->t.rmr, 9, 0x7e));
	ASSERT_EQ(0, percs_atomic_set16(self->a.w, &self->t.rmr, 18, 0x7ffe));
	ASSERT_EQ(0, percs_atomic_set32(self->a.w, &self->t.rmr, 28, 7));
	ASSERT_EQ(0, percs_atomic_set64(self->a.w, &self->t.rmr, 32, 0));
	store_w(before + 9, 1, 0x7e);
	store_w(before + 18, 2, 0x7ffe);
	store_w(before + 28, 4, 7);
	store_w(before + 32, 8, 0);
	EXPECT_EQ(0, memcmp(before, self->t.buf, HALF));
	/* A swap that returns nothing. */
	ASSERT_EQ(0, percs_atomic_swap64(self->a.w, &self->t.rmr, 32, 42,
					 NULL));
	EXPECT_EQ(42, load_w(self->t.buf + 32, 8));
}

/*
 * Neighbouring lanes: one 64-bit word, bytes 0-3 owned by processes 0-3
 * (8-bit operations), halfwords 2 and 3 by processes 4 and 5 (16-bit).
 * Each process knows its lane's value at every step, so every fetched
 * value is checked; the word at the end is the lanes' final values.
 */
static const struct { unsigned int off, width; } lanes[] = {
	{ 0, 1 }, { 1, 1 }, { 2, 1 }, { 3, 1 }, { 4, 2 }, { 6, 2 },
};

struct lanes_ctx {
	uint32_t key;
	struct percs_rmr rmr;
	uint64_t word_off;	/* the word in rmr */
	uint64_t init;		/* its value before */
	unsigned int iters;
};

/*
 * Lane @idx's sequence of operations (deterministic): applied through @w
 * and checked, or (@w NULL) only computed.  Return: 0, or 1 after a
 * mismatch or an error (told on stderr); *@final: the lane's last value.
 */
static int lane_run(const struct lanes_ctx *c, unsigned int idx,
		    struct percs_window *w, uint64_t *final)
{
	unsigned int width = lanes[idx].width;
	uint64_t off = c->word_off + lanes[idx].off, m = wmask(width);
	uint64_t s = load_w((const uint8_t *)&c->init + lanes[idx].off, width);
	uint64_t x = 0x9e3779b97f4a7c15ULL * (idx + 1);

	for (unsigned int i = 0; i < c->iters; i++) {
		uint64_t r = xorshift(&x), v = (r >> 8) & m, cmp = 0, got = 0;
		unsigned int mode = (r >> 60) & 1 ? M_NBI : M_BLOCK, op;
		int ret;

		switch (r % 8) {
		case 0:
		case 1:
			op = PERCS_ATOMIC_ADD;
			break;
		case 2:
			op = PERCS_ATOMIC_XOR;
			break;
		case 3:
			op = PERCS_ATOMIC_OR;
			break;
		case 4:
			op = PERCS_ATOMIC_AND;
			v |= (r >> 32) & m;	/* clear fewer bits */
			break;
		case 5:
			op = PERCS_ATOMIC_CSWAP;
			cmp = s;		/* succeeds */
			break;
		case 6:
			op = PERCS_ATOMIC_CSWAP;
			cmp = s ^ 1;		/* fails */
			break;
		default:
			op = PERCS_ATOMIC_ADD;
			mode = M_NOFETCH;
			break;
		}
		if (w) {
			ret = pgas_do(w, &c->rmr, off, op, width, mode, v, cmp,
				      &got);
			if (ret || (mode != M_NOFETCH && got != s)) {
				fprintf(stderr,
					"# lane %u step %u op %u width %u: ret %d fetched %#llx, lane held %#llx\n",
					idx, i, op, width, ret,
					(unsigned long long)got,
					(unsigned long long)s);
				return 1;
			}
		}
		s = ref_apply(op, width, s, v, cmp);
	}
	*final = s;
	return 0;
}

static int lane_child(int idx, void *arg)
{
	const struct lanes_ctx *c = arg;
	struct pt_side me;
	uint64_t final;
	int ret;

	/* Hubs 0-5, both HFIs: every route class to the target. */
	if (side_open(&me, idx, idx & 1, c->key, RIGHTS))
		return 1;
	ret = lane_run(c, idx, me.w, &final);
	pt_side_close(&me);
	return ret;
}

TEST_F_TIMEOUT(atomic, neighbouring_lanes_several_processes, 120)
{
	struct lanes_ctx c = {
		.key = self->key, .rmr = self->t.rmr, .word_off = 64,
		.init = 0x0123456789abcdefULL, .iters = pt_scale(2000),
	};
	uint8_t before[HALF];
	uint64_t word = 0;

	pt_fill(self->t.buf, HALF, 11);
	memcpy(self->t.buf + c.word_off, &c.init, 8);
	memcpy(before, self->t.buf, HALF);
	ASSERT_EQ(0, pt_fork_n(ARRAY_SIZE(lanes), lane_child, &c, 100000));
	for (unsigned int i = 0; i < ARRAY_SIZE(lanes); i++) {
		uint64_t final;

		ASSERT_EQ(0, lane_run(&c, i, NULL, &final));
		store_w((uint8_t *)&word + lanes[i].off, lanes[i].width, final);
	}
	memcpy(before + c.word_off, &word, 8);
	EXPECT_EQ(word, load_w(self->t.buf + c.word_off, 8));
	EXPECT_EQ(0, memcmp(before, self->t.buf, HALF));
}

/*
 * Remote fetch-adds from 4 processes mixed with the target's own CPU
 * atomics (__atomic_fetch_add in this process, on the registered word):
 * the final value is exact and every value was fetched once, by one or
 * the other.
 */
struct mix_shared {
	unsigned int ready;
	unsigned int go;
	unsigned int done;
	unsigned int errors;
	uint8_t seen[];		/* how many times each value was fetched */
};

struct mix_ctx {
	uint32_t key;
	struct percs_rmr rmr;
	uint64_t off;
	unsigned int n;		/* remote fetch-adds per child */
	uint64_t cap;		/* size of seen[] */
	struct mix_shared *sh;
};

static bool wait_flag(unsigned int *flag, unsigned int want, int ms)
{
	uint64_t deadline = pt_now_ms() + ms;

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want) {
		if (pt_now_ms() > deadline)
			return false;
		usleep(100);
	}
	return true;
}

static int mix_child(int idx, void *arg)
{
	static const unsigned int hubs[] = { 0, 2, 5, 7 };
	const struct mix_ctx *c = arg;
	struct pt_side me;
	int ret = 0;

	if (side_open(&me, hubs[idx % 4], idx & 1, c->key, RIGHTS))
		return 1;
	__atomic_add_fetch(&c->sh->ready, 1, __ATOMIC_RELEASE);
	if (!wait_flag(&c->sh->go, 1, PT_TIMEOUT_MS))
		ret = 1;
	for (unsigned int i = 0; !ret && i < c->n; i++) {
		uint64_t got;

		ret = percs_atomic_fetch_add64(me.w, &c->rmr, c->off, 1, &got);
		if (ret || got >= c->cap) {
			fprintf(stderr, "# child %d: ret %d fetched %llu\n",
				idx, ret, (unsigned long long)got);
			ret = 1;
			break;
		}
		__atomic_fetch_add(&c->sh->seen[got], 1, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&c->sh->done, 1, __ATOMIC_RELEASE);
	pt_side_close(&me);
	return ret;
}

TEST_F_TIMEOUT(atomic, remote_and_target_cpu_atomics_mixed, 180)
{
	const unsigned int nch = 4, n = pt_scale(5000);
	struct mix_ctx c = {
		.key = self->key, .rmr = self->t.rmr, .off = 256, .n = n,
		.cap = 4ULL * nch * n,
	};
	uint64_t *word = (uint64_t *)(self->t.buf + c.off);
	uint64_t cpu = 0, gaps = 0, last = 0, total, bad = 0;
	pid_t pids[4];

	c.sh = pt_shared_alloc(sizeof(*c.sh) + c.cap);
	ASSERT_NE(NULL, c.sh);
	*word = 0;
	ASSERT_EQ(0, pt_fork_start(nch, mix_child, &c, pids));
	EXPECT_TRUE(wait_flag(&c.sh->ready, nch, PT_TIMEOUT_MS));
	__atomic_store_n(&c.sh->go, 1, __ATOMIC_RELEASE);
	/* CPU adds while the children run (a pause so that they interleave). */
	while (__atomic_load_n(&c.sh->done, __ATOMIC_ACQUIRE) < nch &&
	       cpu + nch * n < c.cap) {
		uint64_t got = __atomic_fetch_add(word, 1, __ATOMIC_SEQ_CST);

		if (got >= c.cap) {
			bad++;
			break;
		}
		__atomic_fetch_add(&c.sh->seen[got], 1, __ATOMIC_RELAXED);
		if (cpu && got != last + 1)
			gaps++;		/* remote adds came in between */
		last = got;
		cpu++;
		usleep(20);
	}
	ASSERT_EQ(0, pt_fork_wait(nch, pids, 150000));
	total = (uint64_t)nch * n + cpu;
	TH_LOG("%u remote fetch-adds, %llu CPU ones, %llu interleavings",
	       nch * n, (unsigned long long)cpu, (unsigned long long)gaps);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(total, __atomic_load_n(word, __ATOMIC_SEQ_CST));
	for (uint64_t v = 0; v < c.cap; v++)
		if (c.sh->seen[v] != (v < total))
			bad++;
	EXPECT_EQ(0, bad);
	/* Mixed, not one after the other. */
	EXPECT_LT(0, gaps);
	munmap(c.sh, sizeof(*c.sh) + c.cap);
}

/*
 * 8 processes, one window each on its own hub, fetch-add one 64-bit
 * counter in t (hub 5 unit 1, this process): batches of blocking calls
 * and of non-blocking ones completed by a quiet, in turn.  The counter
 * ends at 8N and every value 0 .. 8N-1 was fetched exactly once.
 */
#define FA_BATCH	32
struct fa_ctx {
	uint32_t key;
	struct percs_rmr rmr;
	uint64_t off;
	unsigned int n;
	uint8_t *seen;		/* shared, 8n entries */
};

static int fa_child(int idx, void *arg)
{
	const struct fa_ctx *c = arg;
	const uint64_t cap = (uint64_t)NR_HUBS * c->n;
	uint64_t got[FA_BATCH];
	struct pt_side me;
	int ret = 0;

	if (side_open(&me, idx, 0, c->key, RIGHTS))
		return 1;
	for (unsigned int done = 0; !ret && done < c->n;) {
		unsigned int k = c->n - done < FA_BATCH ? c->n - done : FA_BATCH;
		bool nbi = (done / FA_BATCH) & 1;

		for (unsigned int j = 0; !ret && j < k; j++) {
			got[j] = cap;
			ret = nbi ? percs_atomic_fetch_add64_nbi(me.w, &c->rmr,
								 c->off, 1,
								 &got[j]) :
				    percs_atomic_fetch_add64(me.w, &c->rmr,
							     c->off, 1,
							     &got[j]);
		}
		if (!ret && nbi)
			ret = percs_atomic_quiet(me.w);
		for (unsigned int j = 0; !ret && j < k; j++) {
			if (got[j] >= cap) {
				ret = -ERANGE;
				break;
			}
			__atomic_fetch_add(&c->seen[got[j]], 1,
					   __ATOMIC_RELAXED);
		}
		if (ret)
			fprintf(stderr, "# child %d after %u: %d (%s)\n", idx,
				done, ret, percs_strerror(ret));
		done += k;
	}
	pt_side_close(&me);
	return ret ? 1 : 0;
}

static void fetch_add_8_hubs(struct __test_metadata *_metadata,
			     struct pt_side *t, uint32_t key, unsigned int n)
{
	struct fa_ctx c = {
		.key = key, .rmr = t->rmr, .off = 512, .n = n,
	};
	const uint64_t total = (uint64_t)NR_HUBS * n;
	uint64_t t0, bad = 0, first_bad = 0;

	c.seen = pt_shared_alloc(total);
	ASSERT_NE(NULL, c.seen);
	store_w(t->buf + c.off, 8, 0);
	t0 = pt_now_ms();
	ASSERT_EQ(0, pt_fork_n(NR_HUBS, fa_child, &c, 280000));
	TH_LOG("%u processes x %u fetch-adds: %llu ms", NR_HUBS, n,
	       (unsigned long long)(pt_now_ms() - t0));
	EXPECT_EQ(total, load_w(t->buf + c.off, 8));
	for (uint64_t v = 0; v < total; v++)
		if (c.seen[v] != 1 && !bad++)
			first_bad = v;
	EXPECT_EQ(0, bad) {
		TH_LOG("value %llu fetched %u times (and %llu others wrong)",
		       (unsigned long long)first_bad, c.seen[first_bad],
		       (unsigned long long)bad - 1);
	}
	munmap(c.seen, total);
}

TEST_F_TIMEOUT(atomic, fetch_add_8_hubs, 300)
{
	fetch_add_8_hubs(_metadata, &self->t, self->key, pt_scale(100000));
}

/* The injection's counters over one test. */
static struct pt_atomic_stats stats_delta(const struct pt_atomic_stats *a,
					  const struct pt_atomic_stats *b)
{
	struct pt_atomic_stats d = {
		.issued = b->issued - a->issued,
		.completed = b->completed - a->completed,
		.retransmits = b->retransmits - a->retransmits,
		.duplicates = b->duplicates - a->duplicates,
		.stale = b->stale - a->stale,
		.dropped = b->dropped - a->dropped,
		.duplicated = b->duplicated - a->duplicated,
		.delayed = b->delayed - a->delayed,
		.timeouts = b->timeouts - a->timeouts,
		.outstanding = b->outstanding,
	};

	return d;
}

static void faults_on(struct __test_metadata *_metadata, unsigned long ppm)
{
	ASSERT_EQ(0, pt_faults_set(ppm));
}

#define STATS_FMT "issued %ld completed %ld retransmits %ld duplicates %ld " \
	"stale %ld dropped %ld duplicated %ld delayed %ld timeouts %ld "	 \
	"outstanding %ld"
#define STATS_ARGS(d) (d).issued, (d).completed, (d).retransmits,	\
	(d).duplicates, (d).stale, (d).dropped, (d).duplicated,		\
	(d).delayed, (d).timeouts, (d).outstanding

/* The injection happened (and the link counters saw the drops). */
static void expect_injected(struct __test_metadata *_metadata,
			    const struct pt_atomic_stats *d, long link_drops)
{
	TH_LOG(STATS_FMT ", link drops %ld", STATS_ARGS(*d), link_drops);
	EXPECT_LT(0, d->retransmits);
	EXPECT_LT(0, d->duplicates);
	EXPECT_LT(0, d->dropped);
	EXPECT_LT(0, d->duplicated);
	EXPECT_LT(0, d->delayed);
	EXPECT_EQ(0, d->timeouts);
	EXPECT_EQ(d->issued, d->completed);
	/* Drops on a link are injected drops (same-hub ones are on none). */
	EXPECT_LT(0, link_drops);
	EXPECT_GE(d->dropped, link_drops);
}

TEST_F_TIMEOUT(atomic, fetch_add_8_hubs_faults, 300)
{
	struct pt_atomic_stats s0, s1, d;
	long drops0 = pt_isr_links_sum("drops");

	ASSERT_LE(0, drops0);
	ASSERT_EQ(0, pt_read_atomic_stats(&s0));
	faults_on(_metadata, 20000);
	fetch_add_8_hubs(_metadata, &self->t, self->key, pt_scale(100000));
	pt_faults_set(0);
	EXPECT_EQ(0, outstanding_drain(PT_TIMEOUT_MS));
	ASSERT_EQ(0, pt_read_atomic_stats(&s1));
	d = stats_delta(&s0, &s1);
	expect_injected(_metadata, &d, pt_isr_links_sum("drops") - drops0);
}

/*
 * A CAS spinlock (compare_swap64 0 -> 1 to take, set64 0 to release) in
 * t guards a plain counter in t that each process increments by an RDMA
 * read, +1, an RDMA write.  Two holders at once would lose increments;
 * an occupancy count in shared memory catches them in the act.
 */
#define LOCK_OFF	1024
#define COUNTER_OFF	(LOCK_OFF + 128)	/* its own cache line */
#define LOCKERS		5

struct lock_shared {
	unsigned int ready;	/* start together: contention, even short runs */
	unsigned int inside;
	unsigned int violations;
	unsigned long spins;
};

struct lock_ctx {
	uint32_t key;
	struct percs_rmr rmr;
	unsigned int n;
	struct lock_shared *sh;
};

/* One RDMA operation of @me on the counter and its completion. */
static int counter_rdma(struct pt_side *me, const struct percs_rmr *r,
			bool write, uint64_t ud)
{
	struct percs_cqe c;
	int ret;

	if (write)
		ret = percs_rdma_write(me->w, &r->win, r->handle,
				       r->base + COUNTER_OFF, me->mr, me->buf,
				       8, 0, ud);
	else
		ret = percs_rdma_read(me->w, &r->win, r->handle,
				      r->base + COUNTER_OFF, me->mr, me->buf,
				      8, 0, ud);
	if (ret)
		return ret;
	ret = amo_cqe(me->w, &c, FAULT_MS);
	if (ret)
		return ret;
	if (c.kind != PERCS_PKT_RDMA || c.user_data != ud)
		return -EPROTO;	/* an atomic's entry leaked to the caller */
	return c.res;
}

static int lock_child(int idx, void *arg)
{
	const struct lock_ctx *c = arg;
	struct pt_side me;
	int ret = 0;

	if (side_open(&me, (idx + 1) % NR_HUBS, idx & 1, c->key, RIGHTS))
		return 1;
	__atomic_add_fetch(&c->sh->ready, 1, __ATOMIC_RELEASE);
	if (!wait_flag(&c->sh->ready, LOCKERS, PT_TIMEOUT_MS))
		ret = -ETIMEDOUT;
	for (unsigned int i = 0; !ret && i < c->n; i++) {
		uint64_t old = 1, v;

		for (;;) {
			ret = percs_atomic_compare_swap64(me.w, &c->rmr,
							  LOCK_OFF, 0, 1, &old);
			if (ret || old == 0)
				break;
			__atomic_add_fetch(&c->sh->spins, 1, __ATOMIC_RELAXED);
		}
		if (ret)
			break;
		if (__atomic_add_fetch(&c->sh->inside, 1, __ATOMIC_SEQ_CST) != 1)
			__atomic_add_fetch(&c->sh->violations, 1,
					   __ATOMIC_RELAXED);
		ret = counter_rdma(&me, &c->rmr, false, 2 * i);
		if (!ret) {
			memcpy(&v, me.buf, 8);
			v++;
			memcpy(me.buf, &v, 8);
			ret = counter_rdma(&me, &c->rmr, true, 2 * i + 1);
		}
		__atomic_sub_fetch(&c->sh->inside, 1, __ATOMIC_SEQ_CST);
		if (!ret)
			ret = percs_atomic_set64(me.w, &c->rmr, LOCK_OFF, 0);
	}
	if (ret)
		fprintf(stderr, "# locker %d: %d (%s)\n", idx, ret,
			percs_strerror(ret));
	pt_side_close(&me);
	return ret ? 1 : 0;
}

static void spinlock_counter(struct __test_metadata *_metadata,
			     struct pt_side *t, uint32_t key, unsigned int n)
{
	struct lock_ctx c = { .key = key, .rmr = t->rmr, .n = n };
	uint64_t t0 = pt_now_ms();

	c.sh = pt_shared_alloc(sizeof(*c.sh));
	ASSERT_NE(NULL, c.sh);
	store_w(t->buf + LOCK_OFF, 8, 0);
	store_w(t->buf + COUNTER_OFF, 8, 0);
	ASSERT_EQ(0, pt_fork_n(LOCKERS, lock_child, &c, 200000));
	TH_LOG("%u lockers x %u: %llu ms, %lu failed CAS", LOCKERS, n,
	       (unsigned long long)(pt_now_ms() - t0), c.sh->spins);
	EXPECT_EQ(0, c.sh->violations);
	EXPECT_EQ((uint64_t)LOCKERS * n, load_w(t->buf + COUNTER_OFF, 8));
	EXPECT_EQ(0, load_w(t->buf + LOCK_OFF, 8));
	/* Contended: a lock nobody waited for would prove little. */
	EXPECT_LT(0, c.sh->spins);
	munmap(c.sh, sizeof(*c.sh));
}

TEST_F_TIMEOUT(atomic, cas_spinlock_mutual_exclusion, 240)
{
	spinlock_counter(_metadata, &self->t, self->key, pt_scale(400));
}

/* A late duplicate of a release or of a CAS must not reopen the lock. */
TEST_F_TIMEOUT(atomic, cas_spinlock_with_faults, 240)
{
	struct pt_atomic_stats s0, s1, d;

	ASSERT_EQ(0, pt_read_atomic_stats(&s0));
	faults_on(_metadata, 50000);
	spinlock_counter(_metadata, &self->t, self->key, pt_scale(200));
	pt_faults_set(0);
	EXPECT_EQ(0, outstanding_drain(PT_TIMEOUT_MS));
	ASSERT_EQ(0, pt_read_atomic_stats(&s1));
	d = stats_delta(&s0, &s1);
	TH_LOG(STATS_FMT, STATS_ARGS(d));
	EXPECT_LT(0, d.dropped);
	EXPECT_LT(0, d.duplicated);
	EXPECT_EQ(0, d.timeouts);
}

/*
 * Packed descriptors: 2 to 4 operations of one op and width, each
 * applied (all to one address too: they add up); one bad operand makes
 * none apply.
 */
TEST_F(atomic, packed_applies_all)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	uint8_t *shadow = malloc(HALF);
	struct percs_cqe c;
	uint64_t x = 77;

	ASSERT_NE(NULL, shadow);
	pt_fill(self->t.buf, HALF, 5);
	memcpy(shadow, self->t.buf, HALF);
	for (unsigned int op = 0; op < PERCS_ATOMIC_CSWAP; op++)
	for (unsigned int wi = 0; wi < ARRAY_SIZE(widths); wi++)
	for (unsigned int n = 2; n <= PERCS_ATOMIC_MAX_PACKED; n++)
	for (unsigned int same = 0; same < 2; same++) {
		unsigned int w = widths[wi];
		struct percs_atomic_wr wr = {
			.op = op, .width = w, .count = n,
			.dst = self->t.addr, .handle = self->t.mr,
			.user_data = x,
		};
		uint64_t base = 64 * (xorshift(&x) % (HALF / 64 - 1));

		for (unsigned int k = 0; k < n; k++) {
			uint64_t off = base + (same ? 0 : 16 * k) +
				       w * (k % (8 / w));
			uint64_t v = xorshift(&x) & wmask(w);

			wr.ops[k].addr = (uintptr_t)self->t.buf + off;
			wr.ops[k].operand = v;
			store_w(shadow + off, w,
				ref_apply(op, w, load_w(shadow + off, w), v,
					  0));
		}
		ASSERT_EQ(0, amo_wait(self->a.w, &wr, &c)) {
			TH_LOG("op %u width %u count %u same %u", op, w, n,
			       same);
		}
		ASSERT_EQ(0, memcmp(shadow, self->t.buf, HALF)) {
			TH_LOG("op %u width %u count %u same %u: memory", op,
			       w, n, same);
		}
	}
	free(shadow);
}

TEST_F(atomic, packed_all_or_none)
{
	struct percs_atomic_wr wr = {
		.op = PERCS_ATOMIC_ADD, .width = 8, .count = 4,
		.dst = self->t.addr, .handle = self->t.mr, .user_data = 9,
	};
	uint64_t sum;
	struct percs_cqe c;

	pt_fill(self->t.buf, BUF, 6);
	sum = pt_checksum(self->t.buf, BUF);
	for (unsigned int k = 0; k < 4; k++) {
		wr.ops[k].addr = (uintptr_t)self->t.buf + 8 * k;
		wr.ops[k].operand = k + 1;
	}
	/* The last one outside the registration: -ERANGE, none applied. */
	wr.ops[3].addr = (uintptr_t)self->t.buf + BUF;
	ASSERT_EQ(-ERANGE, amo_wait(self->a.w, &wr, &c));
	EXPECT_EQ(0, c.flags);
	EXPECT_EQ(sum, pt_checksum(self->t.buf, BUF));
	/* The first one outside, below. */
	wr.ops[3].addr = (uintptr_t)self->t.buf + 24;
	wr.ops[0].addr = (uintptr_t)self->t.buf - 8;
	ASSERT_EQ(-ERANGE, amo_wait(self->a.w, &wr, &c));
	EXPECT_EQ(sum, pt_checksum(self->t.buf, BUF));
	/* One misaligned: -EINVAL, none applied. */
	wr.ops[0].addr = (uintptr_t)self->t.buf;
	wr.ops[2].addr = (uintptr_t)self->t.buf + 20;
	ASSERT_EQ(-EINVAL, amo_wait(self->a.w, &wr, &c));
	EXPECT_EQ(sum, pt_checksum(self->t.buf, BUF));
	/* Fixed, the same descriptor applies all four. */
	wr.ops[2].addr = (uintptr_t)self->t.buf + 16;
	uint64_t want[4];

	for (unsigned int k = 0; k < 4; k++)
		want[k] = load_w(self->t.buf + 8 * k, 8) + k + 1;
	ASSERT_EQ(0, amo_wait(self->a.w, &wr, &c));
	for (unsigned int k = 0; k < 4; k++)
		EXPECT_EQ(want[k], load_w(self->t.buf + 8 * k, 8));
}

/*
 * Packed with FETCH, packed CSWAP: the library refuses them without
 * sending; sent by hand, the kernel completes them with -EINVAL and
 * applies nothing.
 */
TEST_F(atomic, packed_fetch_or_cswap_einval)
{
	struct percs_atomic_wr wr = {
		.op = PERCS_ATOMIC_ADD, .width = 4, .count = 2,
		.dst = self->t.addr, .handle = self->t.mr, .user_data = 21,
		.ops = { { (uintptr_t)self->t.buf, 1 },
			 { (uintptr_t)self->t.buf + 4, 2 } },
	};
	struct percs_atomic_ext e = {
		.op = PERCS_ATOMIC_ADD, .width = 4, .count = 2,
		.flags = PERCS_ATOMIC_F_FETCH, .handle = self->t.mr,
		.user_data = 22, .result_handle = self->a.mr,
		.result_addr = (uintptr_t)self->a.buf + HALF,
	};
	uint64_t sum, cmp = 0;

	pt_fill(self->t.buf, BUF, 7);
	sum = pt_checksum(self->t.buf, BUF);
	memset(self->a.buf + HALF, POISON, 16);
	wr_fetch(&wr, &self->a, self->a.buf + HALF);
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	wr.flags = 0;
	wr.result_handle = 0;
	wr.result_addr = NULL;
	wr.op = PERCS_ATOMIC_CSWAP;
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	EXPECT_EQ(-EINVAL, raw_wait(self->a.w, &self->t.addr, &e, wr.ops, 2,
				    NULL, 0, 22, NULL));
	e.op = PERCS_ATOMIC_CSWAP;
	e.flags = 0;
	e.result_handle = 0;
	e.result_addr = 0;
	e.user_data = 23;
	EXPECT_EQ(-EINVAL, raw_wait(self->a.w, &self->t.addr, &e, wr.ops, 2,
				    &cmp, 0, 23, NULL));
	EXPECT_EQ(sum, pt_checksum(self->t.buf, BUF));
	for (unsigned int i = 0; i < 16; i++)
		EXPECT_EQ(POISON, self->a.buf[HALF + i]);
}

/*
 * One refused descriptor: its status and flags, the target's memory and
 * the result location untouched.
 */
static void expect_refused(struct __test_metadata *_metadata,
			   struct pt_side *a, const struct percs_atomic_wr *wr,
			   const uint8_t *tgt, int want, uint8_t want_flags)
{
	uint64_t sum = tgt ? pt_checksum(tgt, BUF) : 0;
	struct percs_cqe c = { 0 };
	int ret;

	memset(a->buf + HALF, POISON, 16);
	ret = amo_wait(a->w, wr, &c);
	ASSERT_EQ(want, ret) {
		TH_LOG("user_data %llu", (unsigned long long)wr->user_data);
	}
	EXPECT_EQ(want_flags, c.flags) {
		TH_LOG("user_data %llu", (unsigned long long)wr->user_data);
	}
	if (tgt)
		EXPECT_EQ(sum, pt_checksum(tgt, BUF)) {
			TH_LOG("user_data %llu: target written",
			       (unsigned long long)wr->user_data);
		}
	for (unsigned int i = 0; i < 16; i++)
		EXPECT_EQ(POISON, a->buf[HALF + i]);
}

TEST_F(atomic, error_statuses_target_untouched)
{
	struct pt_side *a = &self->a, *t = &self->t;
	uint8_t *res = a->buf + HALF;
	struct pt_side other, gone, ro;
	struct percs_atomic_wr wr;
	uint32_t h, noatomic, nolw;

	pt_fill(t->buf, BUF, 8);
	/* Misaligned: -EINVAL, at every width above 1. */
	wr = wr_of(t, PERCS_ATOMIC_ADD, 8, 4, 1, 1);
	wr_fetch(&wr, a, res);
	expect_refused(_metadata, a, &wr, t->buf, -EINVAL, 0);
	wr = wr_of(t, PERCS_ATOMIC_XOR, 2, 1, 1, 2);
	expect_refused(_metadata, a, &wr, t->buf, -EINVAL, 0);
	wr = wr_of(t, PERCS_ATOMIC_CSWAP, 4, 6, 1, 3);
	wr_fetch(&wr, a, res);
	expect_refused(_metadata, a, &wr, t->buf, -EINVAL, 0);
	/* Out of range: past the end, below the start, straddling. */
	wr = wr_of(t, PERCS_ATOMIC_ADD, 8, BUF, 1, 4);
	wr_fetch(&wr, a, res);
	expect_refused(_metadata, a, &wr, t->buf, -ERANGE, 0);
	wr.ops[0].addr = (uintptr_t)t->buf - 8;
	expect_refused(_metadata, a, &wr, t->buf, -ERANGE, 0);
	ASSERT_EQ(0, percs_mr_reg(t->w, t->buf + 8, 20, RIGHTS, &h));
	wr = wr_of(t, PERCS_ATOMIC_ADD, 8, 24, 1, 5);
	wr.handle = h;		/* [8, 28): bytes 24..31 are not all in */
	wr_fetch(&wr, a, res);
	expect_refused(_metadata, a, &wr, t->buf, -ERANGE, 0);
	wr.ops[0].addr = (uintptr_t)t->buf;
	expect_refused(_metadata, a, &wr, t->buf, -ERANGE, 0);
	wr.ops[0].addr = (uintptr_t)t->buf + 16;	/* inside: applies */
	wr.user_data = 6;
	ASSERT_EQ(0, amo_wait(a->w, &wr, NULL));
	pt_fill(t->buf, BUF, 8);
	/* No REMOTE_ATOMIC right. */
	ASSERT_EQ(0, percs_mr_reg(t->w, t->buf, BUF,
				  PERCS_ACCESS_REMOTE_READ |
				  PERCS_ACCESS_REMOTE_WRITE |
				  PERCS_ACCESS_LOCAL_WRITE, &noatomic));
	wr = wr_of(t, PERCS_ATOMIC_OR, 1, 0, 0xff, 7);
	wr.handle = noatomic;
	expect_refused(_metadata, a, &wr, t->buf, -EPERM, 0);
	/* Unknown handle, and a deregistered one. */
	wr = wr_of(t, PERCS_ATOMIC_ADD, 8, 0, 1, 8);
	wr.handle ^= 0x10000;
	wr_fetch(&wr, a, res);
	expect_refused(_metadata, a, &wr, t->buf, -ENOENT, 0);
	ASSERT_EQ(0, percs_mr_dereg(t->w, h));
	wr.handle = h;
	expect_refused(_metadata, a, &wr, t->buf, -ENOENT, 0);
	/* A bad result location: the target is not even asked. */
	wr = wr_of(t, PERCS_ATOMIC_ADD, 8, 0, 1, 9);
	wr_fetch(&wr, a, res);
	wr.result_handle ^= 0x10000;
	expect_refused(_metadata, a, &wr, t->buf, -ENOENT, PERCS_CQE_F_LOCAL);
	wr.result_handle = a->mr;
	wr.result_addr = a->buf + BUF;
	expect_refused(_metadata, a, &wr, t->buf, -ERANGE, PERCS_CQE_F_LOCAL);
	wr.result_addr = a->buf + BUF - 4;	/* 8 bytes do not fit */
	expect_refused(_metadata, a, &wr, t->buf, -ERANGE, PERCS_CQE_F_LOCAL);
	ASSERT_EQ(0, percs_mr_reg(a->w, a->buf, BUF, PERCS_ACCESS_REMOTE_READ,
				  &nolw));
	wr.result_handle = nolw;
	wr.result_addr = res;
	expect_refused(_metadata, a, &wr, t->buf, -EPERM, PERCS_CQE_F_LOCAL);
	/* Another job's window, its registration granting everything. */
	ASSERT_EQ(0, side_open(&other, 3, 0, pt_new_key(), RIGHTS));
	pt_fill(other.buf, BUF, 9);
	wr = wr_of(&other, PERCS_ATOMIC_ADD, 8, 0, 1, 10);
	wr_fetch(&wr, a, res);
	expect_refused(_metadata, a, &wr, other.buf, -EACCES, 0);
	pt_side_close(&other);
	/* A closed window. */
	ASSERT_EQ(0, side_open(&gone, 6, 0, self->key, RIGHTS));
	wr = wr_of(&gone, PERCS_ATOMIC_ADD, 8, 0, 1, 11);
	wr_fetch(&wr, a, res);
	percs_window_release(gone.w);
	gone.w = NULL;
	expect_refused(_metadata, a, &wr, NULL, -ECONNREFUSED, 0);
	pt_side_close(&gone);
	/* No such hub, HFI or window index. */
	wr = wr_of(t, PERCS_ATOMIC_ADD, 8, 0, 1, 12);
	wr.dst.hub = 100000;
	expect_refused(_metadata, a, &wr, t->buf, -EHOSTUNREACH, 0);
	wr.dst = t->addr;
	wr.dst.hfi = 2;
	expect_refused(_metadata, a, &wr, t->buf, -EHOSTUNREACH, 0);
	wr.dst = t->addr;
	wr.dst.window = 60000;
	expect_refused(_metadata, a, &wr, t->buf, -EADDRNOTAVAIL, 0);
	/* A registration granting REMOTE_READ only (pinned read-only). */
	ASSERT_EQ(0, side_open(&ro, 4, 1, self->key,
			       PERCS_ACCESS_REMOTE_READ));
	wr = wr_of(&ro, PERCS_ATOMIC_ADD, 8, 0, 1, 13);
	expect_refused(_metadata, a, &wr, ro.buf, -EPERM, 0);
	pt_side_close(&ro);
	/* Everything still works afterwards. */
	wr = wr_of(t, PERCS_ATOMIC_ADD, 8, 0, 1, 14);
	wr_fetch(&wr, a, res);
	uint64_t before = load_w(t->buf, 8);

	ASSERT_EQ(0, amo_wait(a->w, &wr, NULL));
	EXPECT_EQ(before, load_w(res, 8));
	EXPECT_EQ(before + 1, load_w(t->buf, 8));
	ASSERT_EQ(0, percs_mr_dereg(t->w, noatomic));
	ASSERT_EQ(0, percs_mr_dereg(a->w, nolw));
}

/*
 * Malformed descriptors, sent by hand: each -EINVAL with its user_data
 * (the header's tag when the extension is cut short), nothing written.
 */
TEST_F(atomic, malformed_descriptors_einval)
{
	const struct percs_atomic_ext good = {
		.op = PERCS_ATOMIC_ADD, .width = 8, .count = 1,
		.handle = self->t.mr,
	};
	struct percs_atomic_op ops[PERCS_ATOMIC_MAX_PACKED + 1];
	struct {
		const char *what;
		struct percs_atomic_ext e;
		unsigned int n;		/* operations in the body */
		bool cmp;		/* a comparand follows */
		size_t len;		/* 0: the natural length */
		uint64_t operand;	/* of ops[0] */
	} bad[] = {
		{ "op 5", good, 1, false, 0, 1 },
		{ "op 255", good, 1, false, 0, 1 },
		{ "width 0", good, 1, false, 0, 1 },
		{ "width 3", good, 1, false, 0, 1 },
		{ "width 16", good, 1, false, 0, 1 },
		{ "count 0", good, 0, false, 0, 1 },
		{ "count 5", good, 5, false, 0, 1 },
		{ "flags 0x80", good, 1, false, 0, 1 },
		{ "flags 0x2", good, 1, false, 0, 1 },
		{ "reserved", good, 1, false, 0, 1 },
		{ "length + 8", good, 1, false, PERCS_ATOMIC_LEN(1) + 8, 1 },
		{ "length - 8", good, 1, false, PERCS_ATOMIC_LEN(1) - 8, 1 },
		{ "count 1, two ops", good, 2, false, 0, 1 },
		{ "CSWAP without comparand", good, 1, false, 0, 1 },
		{ "operand wider than width 1", good, 1, false, 0, 0x100 },
		{ "operand wider than width 4", good, 1, false, 0,
		  1ULL << 32 },
		{ "comparand wider than width 1", good, 1, true, 0, 1 },
		{ "result_handle without FETCH", good, 1, false, 0, 1 },
		{ "result_addr without FETCH", good, 1, false, 0, 1 },
		{ "packed FETCH", good, 2, false, 0, 1 },
		{ "packed CSWAP", good, 2, true, 0, 1 },
	};
	uint64_t sum, cmp;
	struct percs_cqe c;
	unsigned int i = 0;

	bad[i++].e.op = 5;
	bad[i++].e.op = 255;
	bad[i++].e.width = 0;
	bad[i++].e.width = 3;
	bad[i++].e.width = 16;
	bad[i++].e.count = 0;
	bad[i++].e.count = 5;
	bad[i++].e.flags = 0x80;
	bad[i++].e.flags = 0x2;
	bad[i++].e.reserved = 1;
	i += 3;				/* lengths */
	bad[i++].e.op = PERCS_ATOMIC_CSWAP;
	bad[i++].e.width = 1;
	bad[i++].e.width = 4;
	bad[i].e.op = PERCS_ATOMIC_CSWAP;	/* comparand 0x100 */
	bad[i++].e.width = 1;
	bad[i++].e.result_handle = self->a.mr;
	bad[i++].e.result_addr = (uintptr_t)self->a.buf + HALF;
	bad[i].e.count = 2;
	bad[i].e.flags = PERCS_ATOMIC_F_FETCH;
	bad[i].e.result_handle = self->a.mr;
	bad[i++].e.result_addr = (uintptr_t)self->a.buf + HALF;
	bad[i].e.count = 2;
	bad[i++].e.op = PERCS_ATOMIC_CSWAP;
	ASSERT_EQ(ARRAY_SIZE(bad), i);

	pt_fill(self->t.buf, BUF, 10);
	sum = pt_checksum(self->t.buf, BUF);
	memset(self->a.buf + HALF, POISON, 16);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		ops[i].addr = (uintptr_t)self->t.buf + 8 * i;
		ops[i].operand = 1;
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		bad[i].e.user_data = 100 + i;
		ops[0].operand = bad[i].operand;
		cmp = bad[i].e.width == 1 ? 0x100 : 0;
		ASSERT_EQ(-EINVAL, raw_wait(self->a.w, &self->t.addr,
					    &bad[i].e, ops, bad[i].n,
					    bad[i].cmp ? &cmp : NULL,
					    bad[i].len, 100 + i, &c)) {
			TH_LOG("%s", bad[i].what);
		}
		EXPECT_EQ(0, c.flags);
	}
	/* Shorter than the extension: the header's tag is echoed. */
	ops[0].operand = 1;
	ASSERT_EQ(-EINVAL, raw_wait(self->a.w, &self->t.addr, &good, ops, 1,
				    NULL, 16, 99, NULL));
	EXPECT_EQ(sum, pt_checksum(self->t.buf, BUF));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(POISON, self->a.buf[HALF + i]);
	/* The good one, by hand, applies. */
	struct percs_atomic_ext e = good;

	e.user_data = 98;
	ASSERT_EQ(0, raw_wait(self->a.w, &self->t.addr, &e, ops, 1, NULL, 0,
			      98, NULL));
	EXPECT_NE(sum, pt_checksum(self->t.buf, BUF));
}

/* percs_atomic_post() refuses what the kernel would, without sending. */
TEST_F(atomic, post_refuses_malformed_locally)
{
	struct percs_atomic_wr good = wr_of(&self->t, PERCS_ATOMIC_ADD, 8, 0,
					    1, 1);
	struct percs_atomic_wr wr;
	long issued = pt_stat_field(PT_DEBUGFS_ATOMIC, "issued");
	struct percs_cqe c;

	ASSERT_LE(0, issued);
	wr = good;
	wr.op = PERCS_ATOMIC_OP_MAX + 1;
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	wr = good;
	wr.width = 3;
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	wr = good;
	wr.count = 0;
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	wr.count = PERCS_ATOMIC_MAX_PACKED + 1;
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	wr = good;
	wr.flags = 0x80;
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	wr = good;
	wr.width = 2;
	wr.ops[0].operand = 0x10000;
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, &wr));
	EXPECT_EQ(-EINVAL, percs_atomic_post(self->a.w, NULL));
	EXPECT_EQ(0, percs_cq_poll(self->a.w, &c, 1));
	EXPECT_EQ(issued, pt_stat_field(PT_DEBUGFS_ATOMIC, "issued"));
}

/*
 * The PGAS level's errors: the kernel's statuses from blocking calls, from
 * the quiet after non-blocking ones (and the next quiet is clean); the
 * library's own range and alignment checks, nothing sent.
 */
TEST_F(atomic, pgas_error_statuses)
{
	struct percs_window *w = self->a.w;
	struct percs_rmr r = self->t.rmr;
	struct pt_side other;
	uint64_t got = 7, sum;
	uint32_t noatomic, g32 = 7;
	uint16_t g16 = 7;

	pt_fill(self->t.buf, BUF, 12);
	sum = pt_checksum(self->t.buf, BUF);
	r.handle ^= 0x10000;
	EXPECT_EQ(-ENOENT, percs_atomic_fetch_add64(w, &r, 0, 1, &got));
	EXPECT_EQ(0, percs_atomic_add64(w, &r, 0, 1));
	EXPECT_EQ(0, percs_atomic_fetch_xor32_nbi(w, &r, 0, 1, &g32));
	EXPECT_EQ(-ENOENT, percs_atomic_quiet(w));
	EXPECT_EQ(0, percs_atomic_quiet(w));
	ASSERT_EQ(0, percs_mr_reg(self->t.w, self->t.buf, BUF,
				  PERCS_ACCESS_REMOTE_READ, &noatomic));
	r.handle = noatomic;
	EXPECT_EQ(-EPERM, percs_atomic_fetch_or16(w, &r, 0, 1, &g16));
	EXPECT_EQ(-EPERM, percs_atomic_compare_swap64(w, &r, 0, 0, 1, &got));
	/* The library's own checks: nothing sent, nothing fetched. */
	r = self->t.rmr;
	got = 7;
	g32 = 7;
	EXPECT_EQ(-ERANGE, percs_atomic_fetch_add64(w, &r, BUF, 1, &got));
	EXPECT_EQ(-ERANGE, percs_atomic_fetch_add64(w, &r, 2 * BUF, 1, &got));
	EXPECT_EQ(-EINVAL, percs_atomic_fetch_add32(w, &r, 2, 1, &g32));
	EXPECT_EQ(7, got);
	EXPECT_EQ(7, g32);
	EXPECT_EQ(sum, pt_checksum(self->t.buf, BUF));
	ASSERT_EQ(0, side_open(&other, 2, 0, pt_new_key(), RIGHTS));
	EXPECT_EQ(-EACCES, percs_atomic_fetch_add64(w, &other.rmr, 0, 1,
						    &got));
	r = other.rmr;
	pt_side_close(&other);
	EXPECT_EQ(-ECONNREFUSED, percs_atomic_fetch_add64(w, &r, 0, 1, &got));
	EXPECT_EQ(sum, pt_checksum(self->t.buf, BUF));
	EXPECT_EQ(0, percs_atomic_fetch_add64(w, &self->t.rmr, 0, 1, &got));
	EXPECT_EQ(load_w(self->t.buf, 8) - 1, got);
	ASSERT_EQ(0, percs_mr_dereg(self->t.w, noatomic));
}

/*
 * On the links, an atomic is a request there and an answer back: @n
 * fetch-adds from hub 0 to the target (hub 5) count on the links what @n
 * FIFO packets there and @n back count, and a target on the initiator's
 * own hub counts on none.
 */
TEST_F(atomic, counted_on_the_links_both_ways)
{
	const unsigned int n = 50;
	struct percs_pkt_hdr hdr;
	struct pt_side local;
	long base, fifo, amo;
	uint64_t got, x = 0;

	base = pt_isr_links_sum("packets");
	for (unsigned int i = 0; i < n; i++) {
		ASSERT_EQ(0, pt_send(self->a.w, &self->t.rmr.win, &x, sizeof(x),
				     i, 0, PT_TIMEOUT_MS));
		ASSERT_EQ(sizeof(x), pt_recv(self->t.w, &hdr, &x, sizeof(x),
					     PT_TIMEOUT_MS));
		ASSERT_EQ(0, pt_send(self->t.w, &self->a.rmr.win, &x, sizeof(x),
				     i, 0, PT_TIMEOUT_MS));
		ASSERT_EQ(sizeof(x), pt_recv(self->a.w, &hdr, &x, sizeof(x),
					     PT_TIMEOUT_MS));
	}
	fifo = pt_isr_links_sum("packets") - base;
	EXPECT_LT(0, fifo);
	base = pt_isr_links_sum("packets");
	for (unsigned int i = 0; i < n; i++)
		ASSERT_EQ(0, percs_atomic_fetch_add64(self->a.w, &self->t.rmr,
						      0, 1, &got));
	amo = pt_isr_links_sum("packets") - base;
	EXPECT_EQ(fifo, amo);
	EXPECT_EQ(n, load_w(self->t.buf, 8));

	ASSERT_EQ(0, side_open(&local, 0, 1, self->key, RIGHTS));
	base = pt_isr_links_sum("packets");
	for (unsigned int i = 0; i < n; i++)
		ASSERT_EQ(0, percs_atomic_fetch_add64(self->a.w, &local.rmr,
						      0, 1, &got));
	EXPECT_EQ(0, pt_isr_links_sum("packets") - base);
	pt_side_close(&local);
}

/*
 * Library packing: non-fetching adds to one registration travel four to
 * a packet in AUTO mode and one to a packet with PERCS_PACK_OFF; the sums
 * are the same.
 */
TEST_F(atomic, pgas_packing_auto_and_off)
{
	const unsigned int n = 64;
	struct percs_window *w = self->a.w;
	uint32_t want[4] = { 0 };
	long i0, sent[2];

	EXPECT_EQ(-EINVAL, percs_atomic_set_packing(w, 7));
	for (unsigned int mode = 0; mode < 2; mode++) {
		ASSERT_EQ(0, percs_atomic_set_packing(w, mode ? PERCS_PACK_OFF :
						      PERCS_PACK_AUTO));
		memset(self->t.buf, 0, 16);
		memset(want, 0, sizeof(want));
		i0 = pt_stat_field(PT_DEBUGFS_ATOMIC, "issued");
		for (unsigned int i = 0; i < n; i++) {
			ASSERT_EQ(0, percs_atomic_add32(w, &self->t.rmr,
							4 * (i % 4), i + 1));
			want[i % 4] += i + 1;
		}
		ASSERT_EQ(0, percs_atomic_quiet(w));
		sent[mode] = pt_stat_field(PT_DEBUGFS_ATOMIC, "issued") - i0;
		EXPECT_EQ(0, memcmp(want, self->t.buf, 16));
	}
	TH_LOG("%u adds: %ld descriptors packed, %ld unpacked", n, sent[0],
	       sent[1]);
	EXPECT_EQ(n, sent[1]);
	EXPECT_EQ(n / PERCS_ATOMIC_MAX_PACKED, sent[0]);
}

/*
 * A target window closed while atomics to it are outstanding, with drop
 * injection on so that some wait for a retransmission: every descriptor
 * completes (applied, or an error), nothing hangs, no atomic stays
 * outstanding.  No kick while waiting: the kernel's timer must do it.
 */
TEST_F_TIMEOUT(atomic, target_closed_with_atomics_outstanding, 120)
{
	const unsigned int n = 64;
	unsigned int ok = 0, refused = 0, timedout = 0;
	struct pt_side tgt;
	struct percs_cqe c;
	uint8_t seen[64] = { 0 };

	ASSERT_EQ(0, side_open(&tgt, 6, 1, self->key, RIGHTS));
	/*
	 * Dropped, or held up to half a second: most are still out when it
	 * closes, however slow the kernel (20 ms was not enough under KASAN).
	 */
	ASSERT_EQ(0, pt_isr_set("reorder_depth", 64));
	ASSERT_EQ(0, pt_isr_set("hold_us", 500000));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 1000000));
	ASSERT_EQ(0, pt_isr_set("drop_ppm", 300000));
	/*
	 * All composed, then one trigger: one engine pass sends every
	 * request once, and the target closes before the resend timer runs
	 * (a trigger per descriptor resends the earlier ones each time, and
	 * some copy may then reach the target in time).
	 */
	for (unsigned int i = 0; i < n; i++) {
		struct percs_atomic_ext e = {
			.op = PERCS_ATOMIC_ADD, .width = 8, .count = 1,
			.flags = PERCS_ATOMIC_F_FETCH, .handle = tgt.mr,
			.user_data = i, .result_handle = self->a.mr,
			.result_addr = (uintptr_t)self->a.buf + HALF + 8 * i,
		};
		struct percs_atomic_op op = { (uintptr_t)tgt.buf, 1 };
		struct percs_pkt_hdr h = {
			.kind = PERCS_PKT_ATOMIC, .dst = tgt.addr,
		};
		uint8_t body[PERCS_ATOMIC_LEN(1)];

		memcpy(body, &e, sizeof(e));
		memcpy(body + sizeof(e), &op, sizeof(op));
		ASSERT_EQ(0, percs_send_compose_hdr(self->a.w, &h, body,
						    sizeof(body)));
	}
	ASSERT_EQ(0, percs_send_trigger(self->a.w));
	pt_side_close(&tgt);
	for (unsigned int i = 0; i < n; i++) {
		ASSERT_EQ(0, amo_cqe(self->a.w, &c, FAULT_MS)) {
			TH_LOG("%u of %u completions", i, n);
		}
		ASSERT_EQ(PERCS_PKT_ATOMIC, c.kind);
		ASSERT_GT(n, c.user_data);
		ASSERT_EQ(0, seen[c.user_data]++);
		if (c.res == 0)
			ok++;
		else if (c.res == -ECONNREFUSED)
			refused++;
		else if (c.res == -ETIMEDOUT)
			timedout++;
		else
			ASSERT_EQ(0, c.res);
	}
	TH_LOG("%u applied, %u refused, %u timed out", ok, refused, timedout);
	EXPECT_LT(0, refused + timedout);
	ASSERT_EQ(0, percs_cq_poll(self->a.w, &c, 1));
	EXPECT_EQ(0, outstanding_drain(PT_TIMEOUT_MS));
}

/* The initiator closes with atomics outstanding: nothing is left. */
TEST_F_TIMEOUT(atomic, initiator_closed_with_atomics_outstanding, 60)
{
	struct pt_side src;

	ASSERT_EQ(0, side_open(&src, 3, 1, self->key, RIGHTS));
	store_w(self->t.buf, 8, 0);
	ASSERT_EQ(0, pt_isr_set("drop_ppm", 300000));
	ASSERT_EQ(0, pt_isr_set("dup_ppm", 300000));
	for (unsigned int i = 0; i < 64; i++) {
		struct percs_atomic_wr wr = wr_of(&self->t,
						  PERCS_ATOMIC_ADD, 8, 0, 1, i);

		wr_fetch(&wr, &src, src.buf + HALF + 8 * i);
		ASSERT_EQ(0, percs_atomic_post(src.w, &wr));
	}
	pt_side_close(&src);
	EXPECT_EQ(0, outstanding_drain(PT_TIMEOUT_MS));
	pt_faults_set(0);
	/* Each applied at most once, duplicates and all. */
	EXPECT_GE(64, load_w(self->t.buf, 8));
}

/* A process killed while it streams atomics: nothing is left. */
TEST_F_TIMEOUT(atomic, process_killed_with_atomics_outstanding, 60)
{
	ASSERT_EQ(0, pt_isr_set("drop_ppm", 100000));
	for (unsigned int r = 0; r < pt_scale(3); r++) {
		int status;
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid) {
			struct pt_side me;
			uint64_t got[16];

			if (side_open(&me, 7, r & 1, self->key, RIGHTS))
				_exit(1);
			for (unsigned int i = 0;; i++) {
				percs_atomic_fetch_add64_nbi(me.w, &self->t.rmr,
							     8 * (i % 16), 1,
							     &got[i % 16]);
				if (i % 16 == 15)
					percs_atomic_quiet(me.w);
			}
		}
		usleep(30000 + 40000 * r);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status));
		EXPECT_EQ(0, outstanding_drain(PT_TIMEOUT_MS));
	}
	pt_faults_set(0);
	/* The target still works. */
	uint64_t got;

	ASSERT_EQ(0, percs_atomic_fetch_add64(self->a.w, &self->t.rmr, 0, 1,
					      &got));
}

/*
 * Back-pressure: @n fetch-adds to the targets @tgt in turn, composed in
 * the send FIFO and triggered at once, every atomic datagram held in the
 * network for a while, the CQ polled as the completions come.  The
 * window has at most @want_max outstanding and does reach it (the HFI
 * leaves the rest in the send FIFO), every descriptor completes once, and
 * each target's counter fetched 0 .. n/ntgt - 1 each once.
 */
static void burst(struct __test_metadata *_metadata, struct pt_side *a,
		  struct pt_side **tgt, unsigned int ntgt, unsigned int n,
		  long want_max)
{
	const volatile struct percs_status *st = percs_window_status(a->w);
	uint8_t *seen = calloc(n, 1), *vals = calloc(n, 1);
	unsigned int done = 0;
	uint64_t head0, deadline;
	long max_out = 0;
	struct percs_cqe c[32];

	ASSERT_NE(NULL, seen);
	ASSERT_NE(NULL, vals);
	/*
	 * Every packet held up to 300 ms (uniformly): few come back while
	 * the first engine pass fills the window, even on a slow kernel.
	 */
	ASSERT_EQ(0, pt_isr_set("hold_us", 300000));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 1000000));
	for (unsigned int k = 0; k < ntgt; k++)
		store_w(tgt[k]->buf, 8, 0);
	for (unsigned int i = 0; i < n; i++) {
		const struct pt_side *t = tgt[i % ntgt];
		struct percs_atomic_ext e = {
			.op = PERCS_ATOMIC_ADD, .width = 8, .count = 1,
			.flags = PERCS_ATOMIC_F_FETCH, .handle = t->mr,
			.user_data = i, .result_handle = a->mr,
			.result_addr = (uintptr_t)a->buf + HALF + 8 * i,
		};
		struct percs_atomic_op op = { (uintptr_t)t->buf, 1 };
		struct percs_pkt_hdr h = {
			.kind = PERCS_PKT_ATOMIC, .dst = t->addr,
		};
		uint8_t body[PERCS_ATOMIC_LEN(1)];

		memcpy(body, &e, sizeof(e));
		memcpy(body + sizeof(e), &op, sizeof(op));
		ASSERT_EQ(0, percs_send_compose_hdr(a->w, &h, body,
						    sizeof(body)));
	}
	head0 = st->send_head;
	ASSERT_EQ(0, percs_send_trigger(a->w));
	/* The HFI took what it may and left the rest where it was. */
	EXPECT_GT(head0 + n, st->send_head);
	deadline = pt_now_ms() + 60000;
	while (done < n) {
		long out = pt_stat_field(PT_DEBUGFS_ATOMIC, "outstanding");
		int got;

		if (out > max_out)
			max_out = out;
		ASSERT_GT(deadline, pt_now_ms()) {
			TH_LOG("%u of %u completed", done, n);
		}
		got = percs_cq_poll(a->w, c, ARRAY_SIZE(c));
		ASSERT_LE(0, got);
		for (int i = 0; i < got; i++) {
			ASSERT_EQ(PERCS_PKT_ATOMIC, c[i].kind);
			ASSERT_EQ(0, c[i].res);
			ASSERT_GT(n, c[i].user_data);
			ASSERT_EQ(0, seen[c[i].user_data]++);
		}
		done += got;
		if (!got)
			usleep(200);
	}
	TH_LOG("%u descriptors, at most %ld outstanding", n, max_out);
	/*
	 * Never above the bound, and close to it: answers held for less
	 * than the time the first pass takes may free a few slots before
	 * it ends (the hold time is drawn uniformly), so not always exactly.
	 */
	EXPECT_GE(want_max, max_out);
	EXPECT_LE(want_max * 3 / 4, max_out);
	EXPECT_EQ(head0 + n, st->send_head);
	for (unsigned int k = 0; k < ntgt; k++)
		EXPECT_EQ(n / ntgt, load_w(tgt[k]->buf, 8));
	for (unsigned int i = 0; i < n; i++) {
		uint64_t v = load_w(a->buf + HALF + 8 * i, 8);

		ASSERT_GT(n / ntgt, v);
		ASSERT_EQ(0, vals[(i % ntgt) * (n / ntgt) + v]++);
	}
	EXPECT_EQ(0, st->cq_overflows);
	EXPECT_EQ(0, percs_cq_poll(a->w, c, 1));
	free(seen);
	free(vals);
}

/* Two targets: the window's 128 is the limit. */
TEST_F_TIMEOUT(atomic, backpressure_more_than_128_outstanding, 120)
{
	struct pt_side t2, *tgt[2] = { &self->t, &t2 };

	ASSERT_EQ(0, side_open(&t2, 2, 0, self->key, RIGHTS));
	burst(_metadata, &self->a, tgt, 2, 300, MAX_OUTSTANDING);
	pt_side_close(&t2);
}

/* One target: at most 64 to one target window. */
TEST_F_TIMEOUT(atomic, backpressure_64_per_target, 120)
{
	struct pt_side *tgt[1] = { &self->t };

	burst(_metadata, &self->a, tgt, 1, 200, MAX_PER_TARGET);
}

/*
 * The library's own flow control: 1000 non-blocking fetch-adds with no
 * quiet in between, packets held in the network: no completion is lost
 * (the CQ has 256 entries), every value comes back once.
 */
TEST_F_TIMEOUT(atomic, pgas_nbi_more_than_the_cq, 120)
{
	const unsigned int n = 1000;
	uint64_t *got = calloc(n, sizeof(*got));
	uint8_t *vals = calloc(n, 1);

	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, vals);
	ASSERT_EQ(0, pt_isr_set("reorder_depth", 16));
	ASSERT_EQ(0, pt_isr_set("hold_us", 2000));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 500000));
	store_w(self->t.buf + 8, 8, 0);
	for (unsigned int i = 0; i < n; i++) {
		got[i] = n;
		ASSERT_EQ(0, percs_atomic_fetch_add64_nbi(self->a.w,
							  &self->t.rmr, 8, 1,
							  &got[i]));
	}
	ASSERT_EQ(0, percs_atomic_quiet(self->a.w));
	EXPECT_EQ(n, load_w(self->t.buf + 8, 8));
	for (unsigned int i = 0; i < n; i++) {
		ASSERT_GT(n, got[i]);
		ASSERT_EQ(0, vals[got[i]]++);
	}
	EXPECT_EQ(0, percs_window_status(self->a.w)->cq_overflows);
	free(got);
	free(vals);
}

TEST_HARNESS_MAIN
