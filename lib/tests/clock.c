// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the global clock page.
 */
#include "unit.h"

/*
 * A window over static regions with a clock page the test writes, and a
 * fake time source: the TSC and CLOCK_MONOTONIC reads return what the test
 * says, and may call back (a writer striking in the middle of a read).
 */
struct fclock {
	struct percs_clock *page;
	struct percs_window *w;
	struct lp_clock_hooks hooks;
	uint64_t tsc, mono;
	int mono_err;
	unsigned int tsc_reads, mono_reads;
	void (*strike)(struct fclock *c, unsigned int nth_read);
};

static uint64_t fclock_tsc(void *ctx)
{
	struct fclock *c = ctx;

	c->tsc_reads++;
	if (c->strike)
		c->strike(c, c->tsc_reads + c->mono_reads);
	return c->tsc;
}

static int fclock_mono(void *ctx, uint64_t *ns)
{
	struct fclock *c = ctx;

	c->mono_reads++;
	if (c->strike)
		c->strike(c, c->tsc_reads + c->mono_reads);
	if (c->mono_err)
		return c->mono_err;
	*ns = c->mono;
	return 0;
}

/* The kernel's writer: odd count, full barrier, fields, release even. */
static void clock_write(struct percs_clock *p, uint32_t flags,
			uint64_t tsc_base, uint64_t ns_base, uint32_t mult,
			uint32_t shift, uint64_t mono_offset)
{
	uint32_t seq = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&p->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&p->flags, flags, __ATOMIC_RELAXED);
	__atomic_store_n(&p->ns_base, ns_base, __ATOMIC_RELAXED);
	__atomic_store_n(&p->mult, mult, __ATOMIC_RELAXED);
	__atomic_store_n(&p->shift, shift, __ATOMIC_RELAXED);
	__atomic_store_n(&p->mono_offset, mono_offset, __ATOMIC_RELAXED);
	__atomic_store_n(&p->tsc_base, tsc_base, __ATOMIC_RELAXED);
	__atomic_store_n(&p->seq, seq + 2, __ATOMIC_RELEASE);
}

static struct fwin *fclock_win;

static void fclock_init(struct fclock *c, uint32_t version)
{
	struct fwin *f = fwin_new(1, 4096, 4096, 0);
	struct lp_layout l = {
		.send_fifo = f->send, .send_fifo_size = 4096,
		.recv_fifo = f->recv, .recv_fifo_size = 4096,
		.doorbell = f->db, .status = f->st,
		.imm = f->imm, .imm_slots = PERCS_IMM_SLOTS,
		.cq = f->cq, .cq_entries = PERCS_CQ_ENTRIES,
	};

	memset(c, 0, sizeof(*c));
	c->page = zalloc(4096);
	c->page->version = version;
	l.clock = c->page;
	if (lp_window_new(&l, -1, &c->w))
		abort();
	c->hooks = (struct lp_clock_hooks){
		.tsc = fclock_tsc, .mono = fclock_mono, .ctx = c,
	};
	c->w->clock.hooks = &c->hooks;
	fclock_win = f;
}

static void fclock_fini(struct fclock *c)
{
	percs_window_release(c->w);
	free(c->page);
	fwin_free(fclock_win);
}

/* The exact (delta * mult) >> shift, mod 2^64 as the library's. */
static uint64_t ref_scale(uint64_t delta, uint32_t mult, uint32_t shift)
{
	return (uint64_t)(((unsigned __int128)delta * mult) >> shift);
}

uint64_t rnd64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * TSC mode: ns_base + ((tsc - tsc_base) * mult >> shift) with the whole
 * 96-bit product, for deltas across the 32-bit boundary and huge ones, at
 * every scale the kernel can choose; a TSC below the base reads the base;
 * one TSC read per call, no CLOCK_MONOTONIC read.
 */
static void test_clock_conversion(void)
{
	static const struct { uint32_t mult, shift; } sc[] = {
		{ 1651921299u, 32 },	/* 2.6 GHz */
		{ 4294967295u, 32 },	/* just over 1 GHz */
		{ 2147483648u, 31 },	/* 1 GHz */
		{ 2863311530u, 30 },	/* 375 MHz */
		{ 3000000000u, 1 },
		{ 7, 0 },
	};
	static const uint64_t deltas[] = {
		0, 1, 2, 0xffffffffull, 0x100000000ull, 0x100000001ull,
		1000000000000ull, (1ull << 40) + 12345, 1ull << 62,
		1ull << 63, ~0ull - 1,
	};
	uint64_t seed = 0x9e3779b97f4a7c15ull, ns;
	struct fclock c;

	fclock_init(&c, PERCS_CLOCK_VERSION);
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		uint64_t tsc_base = 123456789, ns_base = 1000;

		clock_write(c.page, PERCS_CLOCK_F_TSC, tsc_base, ns_base,
			    sc[i].mult, sc[i].shift, 0);
		for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
			c.tsc = tsc_base + deltas[j];
			if (c.tsc < tsc_base)
				continue;
			CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
			CHECK_EQ(ns, ns_base + ref_scale(deltas[j], sc[i].mult,
							 sc[i].shift));
		}
		for (int j = 0; j < 2000; j++) {
			uint64_t d = rnd64(&seed) >> (j % 64);

			c.tsc = tsc_base + d;
			if (c.tsc < tsc_base)
				continue;
			CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
			CHECK_EQ(ns, ns_base + ref_scale(d, sc[i].mult,
							 sc[i].shift));
		}
		/* Before the base (another CPU's TSC a hair behind): the base. */
		c.tsc = tsc_base - 1;
		CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
		CHECK_EQ(ns, ns_base);
		c.tsc = 0;
		CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
		CHECK_EQ(ns, ns_base);
	}
	/* One second of a 2.6 GHz TSC is one second. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1651921299u, 32, 0);
	c.tsc = 2599983000ull;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK(ns >= 999999999 && ns <= 1000000000);
	c.tsc_reads = c.mono_reads = 0;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(c.tsc_reads, 1);
	CHECK_EQ(c.mono_reads, 0);
	/* A scale no kernel writes. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1, 33, 0);
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EPROTO);
	fclock_fini(&c);
}

/*
 * Without PERCS_CLOCK_F_TSC: CLOCK_MONOTONIC minus mono_offset, no TSC
 * read; its errors come back; no page, another version or NULL arguments.
 */
static void test_clock_fallback_and_args(void)
{
	struct fclock c;
	uint64_t ns = 0;

	fclock_init(&c, PERCS_CLOCK_VERSION);
	clock_write(c.page, 0, 999, 999, 1651921299u, 32, 1000);
	c.mono = 5000;
	c.tsc = 1ull << 40;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(ns, 4000);
	CHECK_EQ(c.tsc_reads, 0);
	CHECK_EQ(c.mono_reads, 1);
	c.mono_err = -EINVAL;
	ns = 1;
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EINVAL);
	CHECK_EQ(ns, 1);
	CHECK_EQ(percs_clock_ns(c.w, NULL), -EINVAL);
	CHECK_EQ(percs_clock_ns(NULL, &ns), -EINVAL);
	CHECK(percs_window_clock(c.w) == c.page);
	fclock_fini(&c);

	/* A page of a layout this library does not know: no clock. */
	fclock_init(&c, PERCS_CLOCK_VERSION + 1);
	clock_write(c.page, 0, 0, 0, 1, 0, 0);
	CHECK(percs_window_clock(c.w) == NULL);
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EOPNOTSUPP);
	fclock_fini(&c);

	/* The real CLOCK_MONOTONIC, no hooks. */
	fclock_init(&c, PERCS_CLOCK_VERSION);
	c.w->clock.hooks = NULL;
	clock_write(c.page, 0, 0, 0, 0, 0, 0);
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK(ns >= (uint64_t)t0.tv_sec * 1000000000u + t0.tv_nsec);
		CHECK(ns <= (uint64_t)t1.tv_sec * 1000000000u + t1.tv_nsec);
	}
	fclock_fini(&c);
}

/* Writers that strike in the middle of a read (from the time read hook). */
static void strike_rebase_once(struct fclock *c, unsigned int n)
{
	if (n == 1)	/* a whole rewrite: new scale and base */
		clock_write(c->page, PERCS_CLOCK_F_TSC, 1000, 5000000, 1u << 31,
			    32, 0);
}

static void strike_to_tsc(struct fclock *c, unsigned int n)
{
	if (n == 1)	/* fallback -> TSC mode while we read CLOCK_MONOTONIC */
		clock_write(c->page, PERCS_CLOCK_F_TSC, 1000, 7000, 1u << 31,
			    32, 0);
}

static void strike_begin(struct fclock *c, unsigned int n)
{
	if (n == 1) {	/* a rewrite begins: odd count, half the fields */
		__atomic_store_n(&c->page->seq, c->page->seq + 1,
				 __ATOMIC_SEQ_CST);
		c->page->ns_base = 1ull << 50;
	}
}

struct finisher {
	struct fclock *c;
	bool done;
};

/* Ends strike_begin's rewrite 20 ms later, from another thread. */
static void *finish_rewrite(void *p)
{
	struct finisher *f = p;
	struct percs_clock *k = f->c->page;

	usleep(20000);
	k->ns_base = 9000;
	k->tsc_base = 1000;
	k->mult = 1u << 31;
	k->shift = 32;
	__atomic_store_n(&f->done, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&k->seq, k->seq + 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The sequence count: a rewrite during a read makes the reader start over
 * and answer from the new page; an odd count makes it wait for the writer
 * (not answer from a half-written page); a count that stays odd gives up
 * with -EAGAIN instead of hanging.
 */
static void test_clock_seqcount_retry(void)
{
	struct finisher fin;
	struct fclock c;
	pthread_t th;
	uint64_t ns;

	fclock_init(&c, PERCS_CLOCK_VERSION);

	/* Complete rewrite between the first count load and the recheck. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1651921299u, 32, 0);
	c.tsc = 3000;
	c.strike = strike_rebase_once;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(ns, 5000000 + 1000);		/* (3000 - 1000) / 2 */
	CHECK_EQ(c.tsc_reads, 2);

	/* Mode switch during a CLOCK_MONOTONIC read. */
	clock_write(c.page, 0, 0, 0, 0, 0, 100);
	c.tsc_reads = c.mono_reads = 0;
	c.mono = 1ull << 40;
	c.strike = strike_to_tsc;
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK_EQ(ns, 7000 + 1000);
	CHECK_EQ(c.mono_reads, 1);
	CHECK_EQ(c.tsc_reads, 1);

	/* A rewrite that begins during the read and ends 20 ms later. */
	clock_write(c.page, PERCS_CLOCK_F_TSC, 0, 0, 1651921299u, 32, 0);
	c.tsc_reads = c.mono_reads = 0;
	c.strike = strike_begin;
	fin = (struct finisher){ .c = &c };
	REQUIRE(!pthread_create(&th, NULL, finish_rewrite, &fin));
	CHECK_EQ(percs_clock_ns(c.w, &ns), 0);
	CHECK(__atomic_load_n(&fin.done, __ATOMIC_SEQ_CST));
	CHECK_EQ(ns, 9000 + 1000);
	CHECK_EQ(c.tsc_reads, 2);
	pthread_join(th, NULL);

	/* Odd for good: -EAGAIN after a second, no time read from a torn
	 * page.
	 */
	c.strike = NULL;
	c.tsc_reads = 0;
	c.page->seq |= 1;
	ns = 5;
	CHECK_EQ(percs_clock_ns(c.w, &ns), -EAGAIN);
	CHECK_EQ(ns, 5);
	CHECK_EQ(c.tsc_reads, 0);
	fclock_fini(&c);
}

/* ---- threaded: readers against a writer rewriting the page --------------- */

#define CLK_MULT	1651921299u
#define CLK_SHIFT	32

static struct {
	struct percs_clock *page;
	uint64_t tsc;		/* the fake TSC: every read advances it */
	bool stop;
	unsigned long rewrites;
} CK;

static __thread unsigned long ck_tsc_reads;

static uint64_t ck_tsc(void *ctx)
{
	(void)ctx;
	ck_tsc_reads++;
	return __atomic_add_fetch(&CK.tsc, 977, __ATOMIC_SEQ_CST);
}

static int ck_mono(void *ctx, uint64_t *ns)
{
	(void)ctx;
	*ns = 0;
	return -ENOSYS;
}

/*
 * Rebase the page again and again on one line, F(t) = t * mult >> shift,
 * at random earlier points: any two rewrites pair a tsc_base with an
 * ns_base far from it, so a reader mixing fields of two rewrites is off by
 * up to seconds, while a consistent read is F(t) or F(t) - 1.
 */
static void *ck_writer(void *arg)
{
	uint64_t seed = 12345;

	(void)arg;
	while (!__atomic_load_n(&CK.stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = __atomic_load_n(&CK.tsc, __ATOMIC_SEQ_CST);
		uint64_t b = now ? rnd64(&seed) % now : 0;

		clock_write(CK.page, PERCS_CLOCK_F_TSC, b,
			    ref_scale(b, CLK_MULT, CLK_SHIFT), CLK_MULT,
			    CLK_SHIFT, 0);
		CK.rewrites++;
	}
	return NULL;
}

struct ck_reader {
	struct percs_window *w;
	unsigned long reads, bad, retries;
};

static void *ck_reader(void *arg)
{
	struct ck_reader *r = arg;
	uint64_t t0 = (uint64_t)time(NULL);

	/* Until plenty of reads raced a rewrite, at most 5 s. */
	while (r->retries < 500 && (uint64_t)time(NULL) < t0 + 5) {
		uint64_t before = __atomic_load_n(&CK.tsc, __ATOMIC_SEQ_CST);
		unsigned long calls = ck_tsc_reads;
		uint64_t ns, t, f;

		if (percs_clock_ns(r->w, &ns)) {
			r->bad++;
			continue;
		}
		/* The TSC value this read used is not returned: bound it. */
		t = __atomic_load_n(&CK.tsc, __ATOMIC_SEQ_CST);
		f = ref_scale(t, CLK_MULT, CLK_SHIFT);
		if (ns > f || ns + 1 < ref_scale(before, CLK_MULT, CLK_SHIFT))
			r->bad++;
		/* More than one TSC read for this call: it started over. */
		if (ck_tsc_reads - calls > 1)
			r->retries++;
		r->reads++;
	}
	return NULL;
}

static void test_clock_threaded_rewrites(void)
{
	static const struct lp_clock_hooks hooks = {
		.tsc = ck_tsc, .mono = ck_mono,
	};
	struct ck_reader rd[2];
	pthread_t wr, th[2];
	struct fclock c;

	fclock_init(&c, PERCS_CLOCK_VERSION);
	CK.page = c.page;
	CK.tsc = 1ull << 32;
	clock_write(CK.page, PERCS_CLOCK_F_TSC, 0, 0, CLK_MULT, CLK_SHIFT, 0);
	c.w->clock.hooks = &hooks;
	REQUIRE(!pthread_create(&wr, NULL, ck_writer, NULL));
	for (int i = 0; i < 2; i++) {
		rd[i] = (struct ck_reader){ .w = c.w };
		REQUIRE(!pthread_create(&th[i], NULL, ck_reader, &rd[i]));
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&CK.stop, true, __ATOMIC_RELEASE);
	pthread_join(wr, NULL);
	printf("#   %lu + %lu reads, %lu + %lu raced a rewrite, %lu rewrites\n",
	       rd[0].reads, rd[1].reads, rd[0].retries, rd[1].retries,
	       CK.rewrites);
	CHECK_EQ(rd[0].bad + rd[1].bad, 0);
	CHECK(rd[0].retries + rd[1].retries > 0);
	fclock_fini(&c);
}

const struct unit_test clock_tests[] = {
	{ "clock: TSC to ns with the 96-bit product, every scale, below the base", test_clock_conversion },
	{ "clock: CLOCK_MONOTONIC fallback, errors, no page, other version", test_clock_fallback_and_args },
	{ "clock: seqcount: rewrite mid-read retries, odd count waits, stuck gives -EAGAIN", test_clock_seqcount_retry },
	{ "clock: threaded readers against a writer rewriting the page", test_clock_threaded_rewrites },
	{ NULL, NULL }
};
