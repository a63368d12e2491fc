// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench coll: collectives on the CAU against software collectives
 * over FIFO packets (issue 7).
 *
 * For each process count N (2, 4, 8, 16; --procs), if the system has N
 * hubs: the parent reserves one window (HFI 0, kick mode) on each of N
 * hubs spread over the system (rank r on hub r x hubs / N), forks N - 1
 * children, and each process keeps its own window.  Rank 0 (the parent)
 * creates a CAU tree of the N windows (percs_cau_shape_kary(), the
 * default fan-out, rank 0 the root) and passes its id to the others
 * through the shared page; they join it.  Every rank makes a software
 * group of the same windows.
 *
 * Then, for each size (8 B .. 64 KiB) and for the barrier, a "set": the
 * methods (CAU, binomial, recursive doubling, Rabenseifner; the barrier:
 * CAU, dissemination, recursive doubling, binomial; and in both the "shm
 * limit", the same collective on the shared page, see shm_op()) are
 * interleaved iteration by iteration, the first method rotating, so that
 * they share the host's conditions.  Each timed collective follows a
 * separator barrier on the shared page (not timed, the same for every
 * method, see separator()); every rank stamps its call and the end of
 * its wait on the shared page, and a collective's latency is the span
 * from the first rank's call to the last rank's return (span_ns()).  A
 * warm-up of a few iterations sizes the set: rank 0 computes the number
 * of iterations that fills the set's time budget and passes it on
 * through the shared page.  The figure is the median span.  The ranks are
 * pinned round-robin to the allowed CPUs (--cpus: the first N of them).
 *
 * Every result is checked at every rank: allreduce is the 64-bit unsigned
 * SUM of values known in advance (different for each rank, element,
 * iteration and method), compared exactly; a barrier must not return
 * before every rank has entered it (each rank counts its entry in the
 * shared page just before the call).  A wrong result is counted and shown
 * as WRONG, and percs-bench exits 1.
 *
 * Targets: for 8 and 16 processes, the 8-byte allreduce and the barrier
 * over the CAU at least 2 x faster than the best software algorithm of
 * the same set (reported, not asserted).  Each is printed with its
 * ceiling, best software / shm limit: the ratio a CAU that cost no more
 * than the limit would reach in this run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define COLL_MAX_N	16
#define COLL_MAX_SETS	(COLL_MAX_SIZES + 1)
#define COLL_NM		5	/* methods per set */
#define COLL_SW_CTX	0x00c0	/* the software group's context */
#define COLL_WAIT_MS	20	/* percs_coll_wait() slices between checks */
#define COLL_TARGET	2.0	/* best software / CAU, at least */
#define COLL_SEP_SPINS_LONG	20000	/* separator: checks before sleeping */
#define COLL_SEP_SPINS_SHORT	200

/*
 * CM_SHM is not a network collective but the VM's limit: the same
 * collective among the same processes on the shared page (see shm_op()).
 */
enum coll_method {
	CM_CAU, CM_BINOMIAL, CM_RECDBL, CM_RABEN, CM_DISSEM, CM_SHM,
};

static const char *const cm_name[] = {
	[CM_CAU] = "CAU", [CM_BINOMIAL] = "binomial", [CM_RECDBL] = "rec-dbl",
	[CM_RABEN] = "Rabenseifner", [CM_DISSEM] = "dissemination",
	[CM_SHM] = "shm limit",
};
static const char *const cm_json[] = {
	[CM_CAU] = "cau", [CM_BINOMIAL] = "binomial",
	[CM_RECDBL] = "recursive_doubling", [CM_RABEN] = "rabenseifner",
	[CM_DISSEM] = "dissemination", [CM_SHM] = "shared_memory",
};
static const unsigned int cm_algo[] = {
	[CM_CAU] = 0, [CM_BINOMIAL] = PERCS_SW_BINOMIAL,
	[CM_RECDBL] = PERCS_SW_RECDBL, [CM_RABEN] = PERCS_SW_RABENSEIFNER,
	[CM_DISSEM] = PERCS_SW_DISSEMINATION,
};
/* The methods of a set, in slot order. */
static const enum coll_method ar_methods[COLL_NM] = {
	CM_CAU, CM_BINOMIAL, CM_RECDBL, CM_RABEN, CM_SHM,
};
static const enum coll_method bar_methods[COLL_NM] = {
	CM_CAU, CM_DISSEM, CM_RECDBL, CM_BINOMIAL, CM_SHM,
};

/* The candidates for "best software": neither the CAU nor the limit. */
static bool is_software(enum coll_method m)
{
	return m != CM_CAU && m != CM_SHM;
}

static const enum coll_method *set_methods(bool barrier)
{
	return barrier ? bar_methods : ar_methods;
}

/* @m's slot in a set of that kind, -1 if it has none. */
static int method_slot(bool barrier, enum coll_method m)
{
	const enum coll_method *ms = set_methods(barrier);

	for (int k = 0; k < COLL_NM; k++)
		if (ms[k] == m)
			return k;
	return -1;
}

static const unsigned int def_procs[] = { 2, 4, 8, 16 };
static const unsigned int def_sizes[] = {
	8, 32, 128, 512, 2048, 8192, 32768, 65536,
};
static const unsigned int quick_sizes[] = { 8, 1024, 8192 };

/* One size (or the barrier) at one N: its methods interleaved. */
struct coll_set {
	bool barrier;
	unsigned int bytes;		/* allreduce payload */
	unsigned int warmup;		/* iterations */
	unsigned int iters;		/* measured iterations */
	bool done;
	bool has[COLL_NM];		/* the method was measured */
	struct lat_stats st[COLL_NM];	/* rank 0's times */
	unsigned int wrong[COLL_NM];	/* wrong results, all ranks */
	double csw[COLL_NM];		/* context switches per rank per op */
	int best;			/* best software slot, -1 none */
	double ratio;			/* best software / CAU, 0 n/a */
	double cau_shm;			/* CAU / shm limit, 0 n/a */
	double ceiling;			/* best software / shm, 0 n/a */
	double secs;			/* the set's wall time */
};

struct coll_run {
	unsigned int n;
	bool skipped;
	char why[160];
	unsigned int hub[COLL_MAX_N];
	bool tree;			/* the CAU tree was created */
	int tree_err;
	uint32_t tree_id;
	int tree_depth;
	int err;
	char errmsg[192];
	unsigned int nsets;
	struct coll_set set[COLL_MAX_SETS];
	uint64_t checked_ar;		/* allreduce results checked, per rank */
	uint64_t checked_bar;		/* barriers checked, per rank */
	char wrong_msg[192];		/* the first wrong result */
	double secs;
};

struct coll_target {
	int id;
	unsigned int n;
	bool barrier;
	bool avail;
	char why[96];
	double cau_ns, sw_ns, ratio;
	double shm_ns, ceiling;		/* 0: no shm limit measured */
	int best;			/* enum coll_method */
	bool pass;
};

static struct {
	bool ran;
	unsigned int nruns;
	struct coll_run run[COLL_MAX_PROCS];
	unsigned int sizes[COLL_MAX_SIZES];
	unsigned int nsizes;
	double budget_s;
	unsigned int warmup, min_iters, max_iters;
	unsigned int wrong;		/* wrong results over all runs */
	unsigned int failed;		/* runs that could not finish */
	struct coll_target tgt[4];
	unsigned int ntgt;
} cr;

/* The counters of a barrier on the shared page (see shm_barrier()). */
struct shm_barrier_ctr {
	_Alignas(64) uint32_t count;	/* ranks arrived */
	_Alignas(64) uint32_t gen;	/* barriers completed (a futex) */
	uint32_t sleepers;		/* ranks asleep on gen */
};

/* The pages the N processes of a run share (MAP_SHARED anonymous). */
struct coll_shm {
	_Alignas(64) int tree_state;	/* 0 not yet, 1 created, -errno */
	uint32_t tree_id;
	int tree_depth;
	_Alignas(64) int setup;		/* ranks ready */
	_Alignas(64) uint32_t plan_seq;	/* set index + 1 */
	uint32_t plan_iters;
	_Alignas(64) int abort;		/* a rank failed: everyone stops */
	int err;
	char errmsg[192];
	struct shm_barrier_ctr sep;	/* the separator */
	struct shm_barrier_ctr lim;	/* the shm limit's barrier */
	_Alignas(64) uint64_t arrivals;	/* timed barrier entries, all ranks */
	_Alignas(64) int done;		/* ranks finished */
	_Alignas(64) uint32_t wrong[COLL_MAX_SETS][COLL_NM];
	uint64_t csw[COLL_MAX_SETS][COLL_NM];	/* measured iterations, all ranks */
	int wrong_claim;
	char wrong_msg[192];
	/*
	 * The shm limit's allreduce sums into lim_acc[op % 2]; the other one
	 * is zeroed in the barrier of op (see shm_op()).
	 */
	_Alignas(64) uint64_t lim_acc[2][COLL_MAX_BYTES / 8];
};

/* When one rank called a timed collective and when it returned. */
struct coll_stamp {
	uint64_t t0, t1;
};

struct rank_ctx {
	const struct bench_cfg *cfg;
	struct coll_run *run;		/* rank 0's results */
	struct coll_shm *shm;
	unsigned int rank, n;
	struct percs_window *w;
	struct percs_addr wins[COLL_MAX_N];
	struct percs_cau_tree *tree;
	struct percs_sw_group *grp;
	uint64_t *sbuf, *rbuf;
	uint64_t barriers;		/* timed barriers this rank made */
	uint64_t shm_ops;		/* shm limit allreduces made */
	size_t shm_prev_count;		/* elements of the last one */
	unsigned int sep_spins;		/* before sleeping in the separator */
	pid_t parent;
	pid_t kids[COLL_MAX_N];		/* rank 0: the children (0: reaped) */
	uint64_t *samples[COLL_NM];	/* rank 0 */
	struct coll_stamp *stamps;	/* shared: every rank's call and return */
	unsigned int max_iters;		/* measured iterations, at most */
};

static void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Record the first failure of the run and make every rank stop. */
static int __attribute__((format(printf, 3, 4)))
rank_fail(struct rank_ctx *c, int err, const char *fmt, ...)
{
	struct coll_shm *s = c->shm;
	int zero = 0;
	va_list ap;
	int n;

	if (!err)
		err = -EPROTO;
	if (__atomic_compare_exchange_n(&s->abort, &zero, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		n = snprintf(s->errmsg, sizeof(s->errmsg), "rank %u: ", c->rank);
		va_start(ap, fmt);
		if (n >= 0 && (size_t)n < sizeof(s->errmsg))
			n += vsnprintf(s->errmsg + n, sizeof(s->errmsg) - n,
				       fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < sizeof(s->errmsg))
			snprintf(s->errmsg + n, sizeof(s->errmsg) - n, ": %s",
				 percs_strerror(err));
		s->err = err;
		__atomic_store_n(&s->abort, 2, __ATOMIC_RELEASE);
	}
	return err;
}

/*
 * Still worth waiting?  Another rank failed (-ECANCELED), the parent is
 * gone (-ESRCH), a child died (rank 0: -ECHILD, recorded).
 */
static int alive(struct rank_ctx *c)
{
	if (__atomic_load_n(&c->shm->abort, __ATOMIC_ACQUIRE))
		return -ECANCELED;
	if (c->rank && getppid() != c->parent)
		return rank_fail(c, -ESRCH, "rank 0 is gone");
	if (!c->rank) {
		for (unsigned int r = 1; r < c->n; r++) {
			int st;

			if (!c->kids[r] ||
			    waitpid(c->kids[r], &st, WNOHANG) != c->kids[r])
				continue;
			c->kids[r] = 0;
			if (WIFEXITED(st) && !WEXITSTATUS(st))
				continue;	/* finished */
			if (__atomic_load_n(&c->shm->abort, __ATOMIC_ACQUIRE))
				return -ECANCELED;
			if (WIFSIGNALED(st))
				return rank_fail(c, -ECHILD, "rank %u was killed by signal %d",
						 r, WTERMSIG(st));
			return rank_fail(c, -ECHILD, "rank %u exited with status %d",
					 r, WEXITSTATUS(st));
		}
	}
	return 0;
}

/* Wait for *@p >= @want on the shared page. */
static int shm_wait(struct rank_ctx *c, const void *p, bool u32, int64_t want,
		    const char *what)
{
	uint64_t start = now_ns();
	unsigned int spins = 0;

	for (;;) {
		int64_t v = u32 ? (int64_t)__atomic_load_n((const uint32_t *)p,
							   __ATOMIC_ACQUIRE) :
				  __atomic_load_n((const int *)p, __ATOMIC_ACQUIRE);
		int ret;

		if (v >= want)
			return 0;
		if (++spins < 256) {
			cpu_pause();
			continue;
		}
		ret = alive(c);
		if (ret)
			return ret;
		if (now_ns() - start > c->cfg->timeout_s * 1e9)
			return rank_fail(c, -ETIMEDOUT, "waiting for %s", what);
		usleep(20);
	}
}

/* Wait for a request; it is freed unless it still runs (an error). */
static int req_wait(struct rank_ctx *c, struct percs_coll_req *req)
{
	uint64_t start = now_ns();
	int ret;

	for (;;) {
		ret = percs_coll_wait(req, COLL_WAIT_MS);
		if (ret != -EINPROGRESS)
			break;
		ret = alive(c);
		if (ret)
			return ret;	/* the request is left running */
		if (now_ns() - start > c->cfg->timeout_s * 1e9)
			return -ETIMEDOUT;
	}
	percs_coll_req_free(req);	/* -EBUSY if it runs on: leaked */
	return ret;
}

static int start_op(struct rank_ctx *c, enum coll_method m, bool barrier,
		    size_t count, struct percs_coll_req **req)
{
	if (barrier)
		return m == CM_CAU ? percs_cau_ibarrier(c->tree, req) :
		       percs_sw_ibarrier(c->grp, cm_algo[m], req);
	if (m == CM_CAU)
		return percs_cau_iallreduce(c->tree, c->sbuf, c->rbuf, count,
					    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					    req);
	return percs_sw_iallreduce(c->grp, cm_algo[m], c->sbuf, c->rbuf, count,
				   PERCS_CAU_T_U64, PERCS_CAU_OP_SUM, req);
}

static long futex(uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * A barrier of the N ranks on the shared page, with the counters @b.  The
 * last rank to arrive zeroes @clear_words words at @clear (every rank is
 * past its previous use of them), bumps the generation and wakes the
 * sleepers; the others spin on it for a while (long when every rank has
 * a CPU, briefly otherwise), then sleep on it (futex), so that the ranks
 * already released do not take CPU time from those still on their way.
 */
static int shm_barrier(struct rank_ctx *c, struct shm_barrier_ctr *b,
		       uint64_t *clear, size_t clear_words, const char *what)
{
	uint32_t gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
	struct timespec slice = { .tv_nsec = COLL_WAIT_MS * 1000000L };
	uint64_t start;

	if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == c->n) {
		if (clear_words)
			memset(clear, 0, clear_words * sizeof(*clear));
		__atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->gen, gen + 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&b->sleepers, __ATOMIC_SEQ_CST))
			futex(&b->gen, FUTEX_WAKE, INT_MAX, NULL);
		return 0;
	}
	for (unsigned int i = 0; i < c->sep_spins; i++) {
		if (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) != gen)
			return 0;
		cpu_pause();
	}
	start = now_ns();
	for (;;) {
		int ret;

		__atomic_add_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&b->gen, __ATOMIC_SEQ_CST) == gen)
			futex(&b->gen, FUTEX_WAIT, gen, &slice);
		__atomic_sub_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) != gen)
			return 0;
		ret = alive(c);
		if (ret)
			return ret;
		if (now_ns() - start > c->cfg->timeout_s * 1e9)
			return rank_fail(c, -ETIMEDOUT, "%s", what);
	}
}

/*
 * The untimed barrier before every timed collective: on the shared page,
 * not through the HFI, so that it is the same for every method and does
 * not leave some ranks asleep in the library's ppoll(2) for the others
 * to time their wake-up.
 */
static int separator(struct rank_ctx *c)
{
	return shm_barrier(c, &c->shm->sep, NULL, 0, "separator barrier");
}

/*
 * The shm limit: the collective among the same processes on the same
 * CPUs, but on the shared page, with no network and no library in the
 * way: what it costs at least for N processes to meet here (with more
 * ranks than CPUs, mostly their hand-offs).  Barrier: shm_barrier() with
 * counters of its own.  Allreduce: every rank adds its elements into a
 * shared accumulator, meets the others and copies the sum out.  The two
 * accumulators alternate, so that the last rank into operation k's
 * barrier can zero the one operation k + 1 sums into: every rank has read
 * operation k - 1's sum from it by then.
 */
static int shm_op(struct rank_ctx *c, bool barrier, size_t count)
{
	struct coll_shm *s = c->shm;
	uint64_t *acc = s->lim_acc[c->shm_ops & 1];
	uint64_t *next = s->lim_acc[(c->shm_ops + 1) & 1];
	int ret;

	if (barrier)
		return shm_barrier(c, &s->lim, NULL, 0, "shm limit barrier");
	for (size_t j = 0; j < count; j++)
		__atomic_fetch_add(&acc[j], c->sbuf[j], __ATOMIC_RELAXED);
	/* the barrier orders the adds before the reads */
	ret = shm_barrier(c, &s->lim, next, c->shm_prev_count,
			  "shm limit allreduce");
	if (ret)
		return ret;
	memcpy(c->rbuf, acc, count * sizeof(*acc));
	c->shm_ops++;
	c->shm_prev_count = count;
	return 0;
}

/*
 * The values: rank r's element j of the collective with seed s is
 * s (r + 1) + 3 j + r; their sum over the N ranks is what allreduce must
 * give.  The seed is different for every set, iteration and method.
 */
static inline uint64_t ar_value(uint64_t s, unsigned int r, size_t j)
{
	return s * (r + 1) + 3 * (uint64_t)j + r;
}

static inline uint64_t ar_expect(uint64_t s, unsigned int n, size_t j)
{
	return s * n * (n + 1) / 2 + 3 * (uint64_t)j * n +
	       (uint64_t)n * (n - 1) / 2;
}

static void wrong_result(struct rank_ctx *c, unsigned int si, unsigned int slot,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void wrong_result(struct rank_ctx *c, unsigned int si, unsigned int slot,
			 const char *fmt, ...)
{
	struct coll_shm *s = c->shm;
	int zero = 0;
	va_list ap;
	int n;

	__atomic_fetch_add(&s->wrong[si][slot], 1, __ATOMIC_ACQ_REL);
	if (!__atomic_compare_exchange_n(&s->wrong_claim, &zero, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	n = snprintf(s->wrong_msg, sizeof(s->wrong_msg), "N=%u rank %u: ",
		     c->n, c->rank);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(s->wrong_msg))
		vsnprintf(s->wrong_msg + n, sizeof(s->wrong_msg) - n, fmt, ap);
	va_end(ap);
}

/* Context switches of this process so far (voluntary and not). */
static uint64_t ctx_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

static size_t stamps_len(const struct rank_ctx *c)
{
	return (size_t)c->max_iters * COLL_NM * COLL_MAX_N *
	       sizeof(struct coll_stamp);
}

static struct coll_stamp *stamp(struct rank_ctx *c, unsigned int i,
				unsigned int slot, unsigned int rank)
{
	return &c->stamps[((size_t)i * COLL_NM + slot) * COLL_MAX_N + rank];
}

/*
 * A collective's latency: from the first rank's call to the last rank's
 * return (one CLOCK_MONOTONIC for all).  Not one rank's view: the CAU's
 * root gets the result first and a binomial tree's root last but one.
 */
static uint64_t span_ns(struct rank_ctx *c, unsigned int i, unsigned int slot)
{
	uint64_t first = UINT64_MAX, last = 0;

	for (unsigned int r = 0; r < c->n; r++) {
		const struct coll_stamp *t = stamp(c, i, slot, r);

		first = t->t0 < first ? t->t0 : first;
		last = t->t1 > last ? t->t1 : last;
	}
	return last > first ? last - first : 0;
}

/*
 * One iteration of a set: every method once, the first one rotating; each
 * measured collective's call and return stamped for span_ns().
 */
static int set_iter(struct rank_ctx *c, unsigned int si,
		    const struct coll_set *set, unsigned int iter)
{
	const enum coll_method *ms = set_methods(set->barrier);
	size_t count = set->bytes / 8;

	for (unsigned int k = 0; k < COLL_NM; k++) {
		unsigned int slot = (k + iter) % COLL_NM;
		enum coll_method m = ms[slot];
		uint64_t seed = ((uint64_t)si << 24 | (uint64_t)iter << 2 | slot) + 1;
		struct percs_coll_req *req = NULL;
		bool measured = iter >= set->warmup;
		uint64_t t0, t1, cs0 = 0;
		int ret;

		if (m == CM_CAU && !c->tree)
			continue;
		if (!set->barrier) {
			for (size_t j = 0; j < count; j++)
				c->sbuf[j] = ar_value(seed, c->rank, j);
			memset(c->rbuf, 0xa5, set->bytes);
		}
		ret = separator(c);
		if (ret)
			return ret;
		if (set->barrier)
			__atomic_fetch_add(&c->shm->arrivals, 1, __ATOMIC_ACQ_REL);
		if (measured)
			cs0 = ctx_switches();
		t0 = now_ns();
		if (m == CM_SHM) {
			ret = shm_op(c, set->barrier, count);
		} else {
			ret = start_op(c, m, set->barrier, count, &req);
			if (!ret)
				ret = req_wait(c, req);
		}
		t1 = now_ns();
		if (measured)
			__atomic_fetch_add(&c->shm->csw[si][slot],
					   ctx_switches() - cs0,
					   __ATOMIC_RELAXED);
		if (ret == -ECANCELED)
			return ret;
		if (ret) {
			if (set->barrier)
				return rank_fail(c, ret, "%s barrier, iteration %u",
						 cm_name[m], iter);
			return rank_fail(c, ret, "%s allreduce %u B, iteration %u",
					 cm_name[m], set->bytes, iter);
		}
		if (measured)
			*stamp(c, iter - set->warmup, slot, c->rank) =
				(struct coll_stamp){ .t0 = t0, .t1 = t1 };
		if (set->barrier) {
			uint64_t a = __atomic_load_n(&c->shm->arrivals,
						     __ATOMIC_ACQUIRE);

			c->barriers++;
			if (a < c->barriers * c->n)
				wrong_result(c, si, slot,
					     "%s barrier, iteration %u, returned after %" PRIu64
					     " entries, expected at least %" PRIu64,
					     cm_name[m], iter, a, c->barriers * c->n);
			if (!c->rank)
				c->run->checked_bar++;
			continue;
		}
		for (size_t j = 0; j < count; j++) {
			uint64_t want = ar_expect(seed, c->n, j);

			if (c->rbuf[j] == want)
				continue;
			wrong_result(c, si, slot,
				     "%s allreduce %u B, iteration %u: element %zu is %#" PRIx64
				     ", expected %#" PRIx64, cm_name[m], set->bytes,
				     iter, j, c->rbuf[j], want);
			break;
		}
		if (!c->rank)
			c->run->checked_ar++;
	}
	return 0;
}

/* The iterations that fill @budget_s, from the warm-up's times. */
static unsigned int plan_iters(const uint64_t *wall, unsigned int n,
			       double budget_s)
{
	double t[64], med;

	if (g_cfg->coll_iters)
		return g_cfg->coll_iters;
	for (unsigned int i = 0; i < n && i < 64; i++)
		t[i] = (double)wall[i];
	med = median_d(t, n < 64 ? n : 64);
	if (!(med > 0))
		return cr.min_iters;
	med = budget_s * 1e9 / med;
	if (med < cr.min_iters)
		return cr.min_iters;
	if (med > cr.max_iters)
		return cr.max_iters;
	return (unsigned int)med;
}

static int run_set(struct rank_ctx *c, unsigned int si, struct coll_set *set)
{
	uint64_t wall[64], t0 = now_ns(), t;
	unsigned int iters;
	int ret;

	for (unsigned int i = 0; i < set->warmup; i++) {
		t = now_ns();
		ret = set_iter(c, si, set, i);
		if (ret)
			return ret;
		if (i < 64)
			wall[i] = now_ns() - t;
	}
	if (!c->rank) {
		/* The targets' rows (8 B, barrier) get three times as long. */
		iters = plan_iters(wall, set->warmup < 64 ? set->warmup : 64,
				   cr.budget_s * (set->barrier || set->bytes == 8 ?
						  3 : 1));
		c->shm->plan_iters = iters;
		__atomic_store_n(&c->shm->plan_seq, si + 1, __ATOMIC_RELEASE);
	} else {
		ret = shm_wait(c, &c->shm->plan_seq, true, si + 1,
			       "rank 0's iteration count");
		if (ret)
			return ret;
		iters = c->shm->plan_iters;
	}
	for (unsigned int i = 0; i < iters; i++) {
		ret = set_iter(c, si, set, set->warmup + i);
		if (ret)
			return ret;
		if (!c->rank && !(i & 7))
			progress("coll N=%u: %s %u/%u", c->n, set->barrier ?
				 "barrier" : "allreduce", i, iters);
	}
	/* Every rank's stamps of the last iteration are in after this. */
	ret = separator(c);
	if (ret)
		return ret;
	if (!c->rank) {
		const enum coll_method *ms = set_methods(set->barrier);

		for (unsigned int i = 0; i < iters; i++)
			for (unsigned int k = 0; k < COLL_NM; k++)
				c->samples[k][i] = span_ns(c, i, k);

		for (unsigned int k = 0; k < COLL_NM; k++) {
			set->has[k] = iters > 0 && (ms[k] != CM_CAU || c->tree);
			stats_from_samples(c->samples[k], set->has[k] ? iters : 0,
					   1.0, &set->st[k]);
		}
		set->iters = iters;
		set->done = true;
		set->secs = (double)(now_ns() - t0) / 1e9;
	}
	return 0;
}

static void *buf_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* What every rank does, the parent as rank 0.  Return: 0 or -errno. */
static int rank_main(struct rank_ctx *c)
{
	struct percs_cau_member members[COLL_MAX_N];
	struct coll_shm *s = c->shm;
	int ret, depth = 0;

	ret = percs_cau_shape_kary(c->wins, c->n, 0, 0, &c->cfg->info, members);
	if (!c->rank) {
		if (!ret)
			depth = percs_cau_shape_check(members, c->n);
		if (!ret)
			ret = percs_cau_tree_create(c->w, members, c->n, 0,
						    &c->tree);
		if (ret) {
			/* No tree: the software methods still run. */
			c->run->tree_err = ret;
			c->tree = NULL;
			__atomic_store_n(&s->tree_state, ret < 0 ? ret : -EPROTO,
					 __ATOMIC_RELEASE);
		} else {
			s->tree_id = percs_cau_tree_id(c->tree);
			s->tree_depth = depth;
			__atomic_store_n(&s->tree_state, 1, __ATOMIC_RELEASE);
		}
	} else {
		struct spin sp;

		/* tree_state leaves 0 for 1 or a negative errno */
		spin_init(&sp);
		while (!__atomic_load_n(&s->tree_state, __ATOMIC_ACQUIRE)) {
			ret = alive(c);
			if (ret)
				return ret;
			if (spin_tick(&sp))
				return rank_fail(c, -ETIMEDOUT,
						 "waiting for the tree id");
			usleep(20);
		}
		if (__atomic_load_n(&s->tree_state, __ATOMIC_ACQUIRE) == 1) {
			ret = percs_cau_tree_join(c->w, s->tree_id, members,
						  c->n, 0, &c->tree);
			if (ret)
				return rank_fail(c, ret, "percs_cau_tree_join(%" PRIu32 ")",
						 s->tree_id);
		}
	}
	ret = percs_sw_group_create(c->w, c->wins, c->n, COLL_SW_CTX, &c->grp);
	if (ret)
		return rank_fail(c, ret, "percs_sw_group_create");
	c->sbuf = buf_alloc(COLL_MAX_BYTES);
	c->rbuf = buf_alloc(COLL_MAX_BYTES);
	if (!c->sbuf || !c->rbuf)
		return rank_fail(c, -ENOMEM, "buffers");
	__atomic_fetch_add(&s->setup, 1, __ATOMIC_ACQ_REL);
	ret = shm_wait(c, &s->setup, false, c->n, "the other ranks' set-up");
	if (ret)
		return ret;

	for (unsigned int si = 0; si < c->run->nsets; si++) {
		struct coll_set *set = &c->run->set[si];

		if (!c->rank && set->barrier)
			progress("coll N=%u: barrier", c->n);
		else if (!c->rank)
			progress("coll N=%u: allreduce %u B", c->n, set->bytes);
		ret = run_set(c, si, set);
		if (ret)
			return ret;
	}
	/* Nobody ends the tree or leaves the group before everyone is done. */
	__atomic_fetch_add(&s->done, 1, __ATOMIC_ACQ_REL);
	return shm_wait(c, &s->done, false, c->n, "the other ranks to finish");
}

static void rank_cleanup(struct rank_ctx *c)
{
	if (c->tree)
		percs_cau_tree_destroy(c->tree);
	c->tree = NULL;
	if (c->grp && percs_sw_group_destroy(c->grp) == 0)
		c->grp = NULL;
	if (c->sbuf)
		munmap(c->sbuf, COLL_MAX_BYTES);
	if (c->rbuf)
		munmap(c->rbuf, COLL_MAX_BYTES);
	c->sbuf = c->rbuf = NULL;
}

/* How many CPUs the ranks are spread over (--cpus limits it). */
static unsigned int rank_cpus(void)
{
	unsigned int pool = pin_pool() > 0 ? (unsigned int)pin_pool() : 1;

	if (g_cfg->coll_cpus && g_cfg->coll_cpus < pool)
		pool = g_cfg->coll_cpus;
	return pool;
}

/* Pin rank @r to the (r mod rank_cpus())-th CPU the program may use. */
static void pin_rank(unsigned int r)
{
	if (pin_pool() > 0)
		pin_self((int)(r % rank_cpus()));
}

static void set_defs(struct coll_run *run)
{
	run->nsets = 0;
	for (unsigned int i = 0; i < cr.nsizes; i++) {
		struct coll_set *s = &run->set[run->nsets++];

		memset(s, 0, sizeof(*s));
		s->bytes = cr.sizes[i];
		s->warmup = cr.warmup;
		s->best = -1;
	}
	run->set[run->nsets].barrier = true;
	run->set[run->nsets].warmup = cr.warmup;
	run->set[run->nsets++].best = -1;
}

/* One process count: windows, fork, measure, collect. */
static void run_n(const struct bench_cfg *cfg, struct coll_run *run)
{
	struct percs_hfi *hfi[COLL_MAX_N] = { 0 };
	struct percs_window *w[COLL_MAX_N] = { 0 };
	struct rank_ctx c = { 0 };
	struct coll_shm *shm;
	unsigned int n = run->n, forked = 1;
	uint64_t start = now_ns();
	int ret = 0;

	set_defs(run);
	for (unsigned int r = 0; r < n; r++)
		run->hub[r] = (unsigned int)((uint64_t)r * cfg->info.nr_hubs / n);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		run->err = -ENOMEM;
		snprintf(run->errmsg, sizeof(run->errmsg), "mmap: %s",
			 strerror(errno));
		return;
	}
	memset(shm, 0, sizeof(*shm));
	c.max_iters = cr.max_iters > cfg->coll_iters ? cr.max_iters :
						      cfg->coll_iters;
	for (unsigned int k = 0; k < COLL_NM; k++) {
		c.samples[k] = calloc(c.max_iters, sizeof(uint64_t));
		if (!c.samples[k])
			ret = -ENOMEM;
	}
	c.stamps = mmap(NULL, stamps_len(&c), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c.stamps == MAP_FAILED) {
		c.stamps = NULL;
		ret = -ENOMEM;
	}
	if (ret) {
		run->err = ret;
		snprintf(run->errmsg, sizeof(run->errmsg), "out of memory");
		goto out;
	}
	/* Every window before the fork: a full hub shows here. */
	for (unsigned int r = 0; r < n; r++) {
		struct percs_window_attr attr = {
			.flags = PERCS_WINDOW_ATTR_KICK,
			.send_fifo_size = cfg->fifo_size,
			.recv_fifo_size = cfg->fifo_size,
			.job_fd = cfg->job_fd,
			.window = PERCS_WINDOW_ANY,
		};

		ret = percs_hfi_open(run->hub[r], 0, &hfi[r]);
		if (ret) {
			snprintf(run->errmsg, sizeof(run->errmsg),
				 "open HFI 0 of hub %u: %s", run->hub[r],
				 strerror(-ret));
			break;
		}
		ret = percs_window_reserve(hfi[r], &attr, &w[r]);
		if (ret) {
			snprintf(run->errmsg, sizeof(run->errmsg),
				 "reserve a window on hub %u HFI 0: %s",
				 run->hub[r], strerror(-ret));
			break;
		}
		c.wins[r] = percs_window_addr(w[r]);
	}
	if (ret) {
		run->err = ret;
		goto out;
	}
	c.cfg = cfg;
	c.run = run;
	c.shm = shm;
	c.n = n;
	c.parent = getpid();
	/* Spin long while every rank has a CPU; else sleep soon. */
	c.sep_spins = n <= rank_cpus() ? COLL_SEP_SPINS_LONG :
		      COLL_SEP_SPINS_SHORT;
	fflush(stdout);
	fflush(stderr);
	for (unsigned int r = 1; r < n; r++) {
		pid_t pid = fork();

		if (pid < 0) {
			ret = -errno;
			rank_fail(&c, ret, "fork rank %u", r);
			break;
		}
		if (pid == 0) {
			c.rank = r;
			for (unsigned int q = 0; q < n; q++) {
				if (q == r)
					continue;
				percs_window_release(w[q]);
				percs_hfi_close(hfi[q]);
			}
			c.w = w[r];
			pin_rank(r);
			ret = rank_main(&c);
			if (ret && ret != -ECANCELED)
				rank_fail(&c, ret, "failed");
			rank_cleanup(&c);
			percs_window_release(w[r]);
			percs_hfi_close(hfi[r]);
			_exit(ret ? 1 : 0);
		}
		c.kids[r] = pid;
		forked++;
	}
	for (unsigned int r = 1; r < n; r++) {
		percs_window_release(w[r]);
		w[r] = NULL;
		percs_hfi_close(hfi[r]);
		hfi[r] = NULL;
	}
	c.rank = 0;
	c.w = w[0];
	if (!ret) {
		pin_rank(0);
		ret = rank_main(&c);
	}
	if (ret && !__atomic_load_n(&shm->abort, __ATOMIC_ACQUIRE))
		rank_fail(&c, ret, "failed");
	rank_cleanup(&c);
	percs_window_release(w[0]);
	w[0] = NULL;
	/* The children: they exit at once once done or aborted. */
	for (unsigned int r = 1; r < forked; r++) {
		uint64_t end = now_ns() + (uint64_t)((cfg->timeout_s + 1) * 1e9);
		int st;

		while (c.kids[r]) {
			pid_t p = waitpid(c.kids[r], &st, WNOHANG);

			if (p == c.kids[r]) {
				c.kids[r] = 0;
				if (!(WIFEXITED(st) && !WEXITSTATUS(st)) && !ret) {
					ret = -ECHILD;
					rank_fail(&c, ret, "rank %u exited abnormally", r);
				}
				break;
			}
			if (now_ns() > end) {
				kill(c.kids[r], SIGKILL);
				waitpid(c.kids[r], &st, 0);
				c.kids[r] = 0;
				if (!ret) {
					ret = -ETIMEDOUT;
					rank_fail(&c, ret, "rank %u did not exit (killed)", r);
				}
				break;
			}
			usleep(1000);
		}
	}
	if (ret || shm->abort) {
		run->err = shm->err ? shm->err : ret;
		snprintf(run->errmsg, sizeof(run->errmsg), "%s", shm->errmsg);
	}
	run->tree = shm->tree_state == 1;
	run->tree_id = shm->tree_id;
	run->tree_depth = shm->tree_depth;
	for (unsigned int si = 0; si < run->nsets; si++)
		for (unsigned int k = 0; k < COLL_NM; k++) {
			struct coll_set *set = &run->set[si];

			set->wrong[k] = shm->wrong[si][k];
			cr.wrong += shm->wrong[si][k];
			set->csw[k] = set->done && set->has[k] && set->iters ?
				(double)shm->csw[si][k] / set->iters / n : NAN;
		}
	if (shm->wrong_claim)
		snprintf(run->wrong_msg, sizeof(run->wrong_msg), "%s",
			 shm->wrong_msg);
out:
	for (unsigned int r = 0; r < n; r++) {
		percs_window_release(w[r]);
		percs_hfi_close(hfi[r]);
	}
	for (unsigned int k = 0; k < COLL_NM; k++)
		free(c.samples[k]);
	if (c.stamps)
		munmap(c.stamps, stamps_len(&c));
	munmap(shm, sizeof(*shm));
	run->secs = (double)(now_ns() - start) / 1e9;
}

/* The median of @m in @s, 0 if it was not measured. */
static double method_median(const struct coll_set *s, enum coll_method m)
{
	int k = method_slot(s->barrier, m);

	return k >= 0 && s->has[k] && s->st[k].iters ? s->st[k].median_ns : 0;
}

/* The best software algorithm, and the ratios of the medians. */
static void set_ratio(struct coll_set *s)
{
	const enum coll_method *ms = set_methods(s->barrier);
	double cau = method_median(s, CM_CAU);
	double shm = method_median(s, CM_SHM);
	double best = 0;

	s->best = -1;
	s->ratio = s->cau_shm = s->ceiling = 0;
	for (int k = 0; k < COLL_NM; k++) {
		double t = method_median(s, ms[k]);

		if (is_software(ms[k]) && t > 0 && (s->best < 0 || t < best)) {
			best = t;
			s->best = k;
		}
	}
	if (best > 0 && cau > 0)
		s->ratio = best / cau;
	if (cau > 0 && shm > 0)
		s->cau_shm = cau / shm;
	/* the best sw/CAU ratio a CAU as fast as the limit could reach */
	if (best > 0 && shm > 0)
		s->ceiling = best / shm;
}

static const struct coll_run *find_run(unsigned int n)
{
	for (unsigned int i = 0; i < cr.nruns; i++)
		if (cr.run[i].n == n)
			return &cr.run[i];
	return NULL;
}

static const struct coll_set *find_set(const struct coll_run *run,
				       bool barrier, unsigned int bytes)
{
	for (unsigned int i = 0; run && i < run->nsets; i++)
		if (run->set[i].barrier == barrier &&
		    (barrier || run->set[i].bytes == bytes))
			return &run->set[i];
	return NULL;
}

static void make_targets(void)
{
	static const unsigned int tn[] = { 8, 16 };

	cr.ntgt = 0;
	for (unsigned int i = 0; i < 2; i++) {
		for (int b = 0; b < 2; b++) {
			struct coll_target *t = &cr.tgt[cr.ntgt++];
			const struct coll_run *run = find_run(tn[i]);
			const struct coll_set *s = find_set(run, b, 8);

			memset(t, 0, sizeof(*t));
			t->id = b ? 7 : 6;
			t->n = tn[i];
			t->barrier = b;
			t->best = -1;
			if (!run)
				snprintf(t->why, sizeof(t->why), "N=%u not selected",
					 tn[i]);
			else if (run->skipped)
				snprintf(t->why, sizeof(t->why), "N=%u skipped",
					 tn[i]);
			else if (!s)
				snprintf(t->why, sizeof(t->why), "%s not selected",
					 b ? "the barrier" : "8 B");
			else if (!s->done || !(s->ratio > 0))
				snprintf(t->why, sizeof(t->why), "%s",
					 run->err ? "the run failed" :
					 !run->tree ? "no CAU tree" : "not measured");
			else {
				const enum coll_method *ms = set_methods(b);

				t->avail = true;
				t->cau_ns = method_median(s, CM_CAU);
				t->sw_ns = s->st[s->best].median_ns;
				t->best = ms[s->best];
				t->ratio = s->ratio;
				t->pass = t->ratio >= COLL_TARGET;
				t->shm_ns = method_median(s, CM_SHM);
				t->ceiling = s->ceiling;
			}
		}
	}
}

/**
 * run_coll() - every process count: measure, check, ratios and targets
 * @cfg: configuration (--procs, --sizes, --quick, --iters)
 *
 * Return: the number of wrong results (0: every result was exact).
 */
int run_coll(const struct bench_cfg *cfg)
{
	unsigned int nprocs = cfg->ncoll_procs;
	const unsigned int *procs = cfg->coll_procs;

	memset(&cr, 0, sizeof(cr));
	cr.ran = true;
	if (!nprocs) {
		procs = def_procs;
		nprocs = sizeof(def_procs) / sizeof(def_procs[0]);
	}
	if (cfg->ncoll_sizes) {
		memcpy(cr.sizes, cfg->coll_sizes, cfg->ncoll_sizes * sizeof(unsigned int));
		cr.nsizes = cfg->ncoll_sizes;
	} else if (cfg->quick) {
		memcpy(cr.sizes, quick_sizes, sizeof(quick_sizes));
		cr.nsizes = sizeof(quick_sizes) / sizeof(quick_sizes[0]);
	} else {
		memcpy(cr.sizes, def_sizes, sizeof(def_sizes));
		cr.nsizes = sizeof(def_sizes) / sizeof(def_sizes[0]);
	}
	cr.budget_s = cfg->quick ? 0.3 : 1.0;
	cr.warmup = cfg->quick ? 2 : 3;
	cr.min_iters = cfg->quick ? 5 : 7;
	cr.max_iters = cfg->quick ? 200 : 1000;
	if (cfg->coll_iters) {
		cr.min_iters = cr.max_iters = cfg->coll_iters;
		cr.warmup = cfg->coll_iters / 10 ? cfg->coll_iters / 10 : 1;
		if (cr.warmup > 10)
			cr.warmup = 10;
	}

	for (unsigned int i = 0; i < nprocs && cr.nruns < COLL_MAX_PROCS; i++) {
		struct coll_run *run = &cr.run[cr.nruns++];

		run->n = procs[i];
		if (run->n > cfg->info.nr_hubs) {
			run->skipped = true;
			snprintf(run->why, sizeof(run->why),
				 "needs %u hubs (one process per hub), the system has %u "
				 "(e.g. percs-vm --modparams topology=4x4)",
				 run->n, cfg->info.nr_hubs);
			progress("coll N=%u: skipped: %s\n", run->n, run->why);
			continue;
		}
		progress("coll N=%u: hubs", run->n);
		run_n(cfg, run);
		for (unsigned int si = 0; si < run->nsets; si++)
			if (run->set[si].done)
				set_ratio(&run->set[si]);
		if (run->err) {
			cr.failed++;
			progress("coll N=%u: FAILED: %s\n", run->n, run->errmsg);
		} else {
			progress("coll N=%u: done in %.1f s\n", run->n, run->secs);
		}
	}
	make_targets();
	return (int)cr.wrong;
}

/** coll_failed() - runs of run_coll() that could not finish */
unsigned int coll_failed(void)
{
	return cr.failed;
}

/* --- output --- */

static const char *fmt_t(char *b, size_t n, double ns)
{
	if (!(ns > 0))
		snprintf(b, n, "-");
	else if (ns < 1e4)
		snprintf(b, n, "%.0f ns", ns);
	else if (ns < 1e7)
		snprintf(b, n, "%.1f us", ns / 1e3);
	else
		snprintf(b, n, "%.2f ms", ns / 1e6);
	return b;
}

static const char *fmt_bytes(char *b, size_t n, unsigned int bytes)
{
	if (bytes >= 1024 && !(bytes % 1024))
		snprintf(b, n, "%u KiB", bytes / 1024);
	else
		snprintf(b, n, "%u B", bytes);
	return b;
}

static void print_hubs(FILE *f, const struct bench_cfg *cfg,
		       const struct coll_run *run)
{
	unsigned int per = cfg->info.hubs_per_supernode ?
			   cfg->info.hubs_per_supernode : 1;
	unsigned int sns = 0, last = ~0u;

	for (unsigned int r = 0; r < run->n; r++)
		if (run->hub[r] / per != last) {
			last = run->hub[r] / per;
			sns++;
		}
	fprintf(f, "  N=%-2u hubs", run->n);
	for (unsigned int r = 0; r < run->n; r++)
		fprintf(f, "%s%u", r ? "," : " ", run->hub[r]);
	fprintf(f, " (%u supernode%s); ", sns, sns == 1 ? "" : "s");
	if (run->tree)
		fprintf(f, "CAU tree %" PRIu32 ", depth %d", run->tree_id,
			run->tree_depth);
	else
		fprintf(f, "no CAU tree: %s", percs_strerror(run->tree_err));
	fprintf(f, "; %.1f s\n", run->secs);
}

/* Two or three significant digits, "-" for 0 (n/a). */
static const char *fmt_ratio(char *b, size_t n, double r)
{
	if (!(r > 0))
		snprintf(b, n, "-");
	else if (r < 10)
		snprintf(b, n, "%.2f", r);
	else if (r < 100)
		snprintf(b, n, "%.1f", r);
	else
		snprintf(b, n, "%.0f", r);
	return b;
}

/*
 * The head of a table with a column per method (13 wide: "dissemination"),
 * and for the latency tables the ratios and iterations.
 */
static void print_table_head(FILE *f, const char *title, bool barrier,
			     bool latency)
{
	const enum coll_method *ms = set_methods(barrier);

	fprintf(f, "%s\n  %3s %9s", title, "N", barrier ? "" : "size");
	for (unsigned int k = 0; k < COLL_NM; k++)
		fprintf(f, " %13s", cm_name[ms[k]]);
	if (latency)
		fprintf(f, "  %-19s %7s %7s %5s", "sw/CAU (best)", "CAU/shm",
			"ceiling", "iters");
	fputc('\n', f);
}

static void print_set_row(FILE *f, const struct coll_run *run,
			  const struct coll_set *s)
{
	const enum coll_method *ms = set_methods(s->barrier);
	char b[32], r[48], cs[16], ce[16];

	if (s->barrier)
		fprintf(f, "  %3u %9s", run->n, "");
	else
		fprintf(f, "  %3u %9s", run->n, fmt_bytes(b, sizeof(b), s->bytes));
	if (!s->done) {
		fprintf(f, "  not measured%s\n", run->err ? " (the run failed)" : "");
		return;
	}
	for (unsigned int k = 0; k < COLL_NM; k++) {
		if (s->wrong[k])
			fprintf(f, " %13s", "WRONG");
		else
			fprintf(f, " %13s", s->has[k] ?
				fmt_t(b, sizeof(b), s->st[k].median_ns) : "-");
	}
	if (s->ratio > 0)
		snprintf(r, sizeof(r), "%.2f %s", s->ratio, cm_name[ms[s->best]]);
	else
		snprintf(r, sizeof(r), "-");
	fprintf(f, "  %-19s %7s %7s %5u\n", r,
		fmt_ratio(cs, sizeof(cs), s->cau_shm),
		fmt_ratio(ce, sizeof(ce), s->ceiling), s->iters);
}

/* A row of context switches per rank per collective. */
static void print_csw_row(FILE *f, const struct coll_run *run,
			  const struct coll_set *s)
{
	char b[32];

	if (!s->done)
		return;
	if (s->barrier)
		fprintf(f, "  %3u %9s", run->n, "barrier");
	else
		fprintf(f, "  %3u %9s", run->n, fmt_bytes(b, sizeof(b), s->bytes));
	for (unsigned int k = 0; k < COLL_NM; k++) {
		if (isfinite(s->csw[k]))
			fprintf(f, " %13.2f", s->csw[k]);
		else
			fprintf(f, " %13s", "-");
	}
	fputc('\n', f);
}

static void print_target_line(FILE *f, const struct coll_target *t)
{
	char a[32], b[32];

	if (!t->avail) {
		fprintf(f, "  [N/A ] (%d) N=%-2u %s: not measured (%s)\n", t->id,
			t->n, t->barrier ? "barrier" : "allreduce 8 B", t->why);
		return;
	}
	fprintf(f, "  [%s] (%d) N=%-2u %s over the CAU >= %.0f x faster than the best software\n"
		"         CAU %s, best software (%s) %s: ratio %.2f, >= %.0f passes\n",
		t->pass ? "PASS" : "FAIL", t->id, t->n,
		t->barrier ? "barrier" : "allreduce 8 B", COLL_TARGET,
		fmt_t(a, sizeof(a), t->cau_ns), cm_name[t->best],
		fmt_t(b, sizeof(b), t->sw_ns), t->ratio, COLL_TARGET);
	if (!(t->ceiling > 0)) {
		fprintf(f, "         shm limit not measured: no ceiling\n");
		return;
	}
	/* what sw/CAU would be if the CAU cost no more than the limit */
	fprintf(f, "         shm limit %s: ceiling (best software / shm limit) %.2f: "
		"the target needs %.0f\n", fmt_t(a, sizeof(a), t->shm_ns),
		t->ceiling, COLL_TARGET);
}

/** coll_print_targets() - the issue-7 targets, as print_summary() does */
void coll_print_targets(FILE *f)
{
	for (unsigned int i = 0; i < cr.ntgt; i++)
		print_target_line(f, &cr.tgt[i]);
}

/**
 * print_coll() - the collectives tables, checks and targets
 * @f: output
 * @cfg: configuration
 */
void print_coll(FILE *f, const struct bench_cfg *cfg)
{
	bool any_bar = false, any_ar = false;
	uint64_t ar = 0, bar = 0;

	if (!cr.ran)
		return;
	fprintf(f, "\nCollectives: N processes, each with one window (HFI 0, kick mode) on its\n"
		"own hub; a CAU tree of the N windows (percs_cau_shape_kary, fan-out %u, root\n"
		"rank 0) and a software group of the same windows.  Latency: from the\n"
		"first rank's call to the last rank's return, median over the iterations;\n"
		"every timed collective follows an untimed separator barrier (shared\n"
		"memory); the methods of a row are interleaved iteration by iteration.\n"
		"Allreduce: 64-bit unsigned SUM, checked exactly\n"
		"at every rank; sw/CAU: the best software algorithm's median / the CAU's.\n"
		"shm limit: the same collective among the same processes on a shared page\n"
		"(atomic adds into a shared sum, a barrier of atomics and a futex): what\n"
		"they cost at least to meet on these CPUs.  CAU/shm: the CAU's median / the\n"
		"limit's; ceiling: best software / shm limit, the highest sw/CAU a CAU that\n"
		"cost exactly the limit could reach.\n"
		"Ranks pinned round-robin to %u CPU%s (%d online).\n",
		PERCS_CAU_DEF_FANOUT, rank_cpus(), rank_cpus() == 1 ? "" : "s",
		cfg->ncpus);
	for (unsigned int i = 0; i < cr.nruns; i++) {
		const struct coll_run *run = &cr.run[i];

		if (run->skipped) {
			fprintf(f, "  N=%-2u skipped: %s\n", run->n, run->why);
			continue;
		}
		print_hubs(f, cfg, run);
		if (run->err)
			fprintf(f, "       FAILED: %s\n", run->errmsg);
		for (unsigned int si = 0; si < run->nsets; si++) {
			any_bar |= run->set[si].barrier;
			any_ar |= !run->set[si].barrier;
		}
		ar += run->checked_ar;
		bar += run->checked_bar;
	}
	if (any_ar) {
		print_table_head(f, "Allreduce", false, true);
		for (unsigned int i = 0; i < cr.nruns; i++)
			for (unsigned int si = 0; si < cr.run[i].nsets; si++)
				if (!cr.run[i].skipped && !cr.run[i].set[si].barrier)
					print_set_row(f, &cr.run[i], &cr.run[i].set[si]);
	}
	if (any_bar) {
		print_table_head(f, "Barrier", true, true);
		for (unsigned int i = 0; i < cr.nruns; i++)
			for (unsigned int si = 0; si < cr.run[i].nsets; si++)
				if (!cr.run[i].skipped && cr.run[i].set[si].barrier)
					print_set_row(f, &cr.run[i], &cr.run[i].set[si]);
	}
	if (any_ar || any_bar) {
		/*
		 * With more ranks than CPUs a collective costs about what its
		 * context switches cost (Documentation/benchmarks.rst).
		 */
		print_table_head(f, "Context switches per rank per collective (getrusage, "
				 "measured iterations;\nbarrier rows: CAU, dissemination, "
				 "rec-dbl, binomial, shm limit)", false, false);
		for (unsigned int i = 0; i < cr.nruns; i++)
			for (unsigned int si = 0; !cr.run[i].skipped &&
			     si < cr.run[i].nsets; si++)
				print_csw_row(f, &cr.run[i], &cr.run[i].set[si]);
	}
	if (cr.wrong) {
		fprintf(f, "  CHECK FAILED: %u wrong result%s (WRONG above); the first: ",
			cr.wrong, cr.wrong == 1 ? "" : "s");
		for (unsigned int i = 0; i < cr.nruns; i++)
			if (cr.run[i].wrong_msg[0]) {
				fprintf(f, "%s\n", cr.run[i].wrong_msg);
				break;
			}
	} else {
		fprintf(f, "  checked: %" PRIu64 " allreduce results exact and %" PRIu64
			" barriers not left early, at\n  every rank (warm-up included)\n",
			ar, bar);
	}
	fprintf(f, "  targets (issue 7; reported, not asserted):\n");
	coll_print_targets(f);
}

/* --- JSON --- */

static void json_set(FILE *f, const struct coll_set *s)
{
	const enum coll_method *ms = set_methods(s->barrier);

	if (!s->barrier)
		fprintf(f, "{\"bytes\": %u, ", s->bytes);
	else
		fputc('{', f);
	fprintf(f, "\"measured\": %s, \"warmup\": %u, \"iterations\": %u",
		s->done ? "true" : "false", s->warmup, s->iters);
	for (unsigned int k = 0; k < COLL_NM; k++) {
		fprintf(f, ", \"%s\": ", cm_json[ms[k]]);
		jlat_obj(f, &s->st[k], s->done && s->has[k]);
	}
	fputs(", \"best_software\": ", f);
	if (s->best >= 0)
		jstr(f, cm_json[ms[s->best]]);
	else
		fputs("null", f);
	fputs(", \"ratio_best_software_cau\": ", f);
	jnum(f, s->ratio > 0 ? s->ratio : NAN);
	fputs(", \"ratio_cau_shared_memory\": ", f);
	jnum(f, s->cau_shm > 0 ? s->cau_shm : NAN);
	fputs(", \"ceiling_ratio\": ", f);
	jnum(f, s->ceiling > 0 ? s->ceiling : NAN);
	fputs(", \"wrong\": {", f);
	for (unsigned int k = 0; k < COLL_NM; k++)
		fprintf(f, "%s\"%s\": %u", k ? ", " : "", cm_json[ms[k]],
			s->wrong[k]);
	fputs("}, \"context_switches_per_rank\": {", f);
	for (unsigned int k = 0; k < COLL_NM; k++) {
		fprintf(f, "%s\"%s\": ", k ? ", " : "", cm_json[ms[k]]);
		jnum(f, s->done && s->has[k] ? s->csw[k] : NAN);
	}
	fputs("}}", f);
}

/**
 * coll_json() - the "coll" member of the JSON document (null if not run)
 * @f: output
 * @cfg: configuration
 */
void coll_json(FILE *f, const struct bench_cfg *cfg)
{
	unsigned int per = cfg->info.hubs_per_supernode ?
			   cfg->info.hubs_per_supernode : 1;

	if (!cr.ran) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\n    \"type\": \"u64\", \"op\": \"sum\", \"mode\": \"kick\", "
		"\"shape\": \"kary\", \"fanout\": %u, \"root\": 0, "
		"\"separator\": \"shared-memory barrier\", "
		"\"interleaved\": true, \"budget_s_per_row\": ", PERCS_CAU_DEF_FANOUT);
	jnum(f, cr.budget_s);
	fprintf(f, ", \"min_iters\": %u, \"max_iters\": %u, \"rank_cpus\": %u, "
		"\"target_ratio\": ", cr.min_iters, cr.max_iters, rank_cpus());
	jnum(f, COLL_TARGET);
	fputs(",\n    \"sizes\": [", f);
	for (unsigned int i = 0; i < cr.nsizes; i++)
		fprintf(f, "%s%u", i ? ", " : "", cr.sizes[i]);
	fputs("],\n    \"runs\": [", f);
	for (unsigned int i = 0; i < cr.nruns; i++) {
		const struct coll_run *run = &cr.run[i];
		bool first = true;

		fprintf(f, "%s\n      {\"procs\": %u, \"skipped\": %s, \"reason\": ",
			i ? "," : "", run->n, run->skipped ? "true" : "false");
		if (run->skipped) {
			jstr(f, run->why);
			fputs("}", f);
			continue;
		}
		fputs("null, \"hubs\": [", f);
		for (unsigned int r = 0; r < run->n; r++)
			fprintf(f, "%s%u", r ? ", " : "", run->hub[r]);
		fputs("], \"supernodes\": [", f);
		for (unsigned int r = 0; r < run->n; r++)
			fprintf(f, "%s%u", r ? ", " : "", run->hub[r] / per);
		fprintf(f, "], \"cau_tree\": %s, \"tree_depth\": ",
			run->tree ? "true" : "false");
		if (run->tree)
			fprintf(f, "%d", run->tree_depth);
		else
			fputs("null", f);
		fputs(", \"tree_error\": ", f);
		if (run->tree)
			fputs("null", f);
		else
			jstr(f, percs_strerror(run->tree_err));
		fputs(", \"seconds\": ", f);
		jnum(f, run->secs);
		fprintf(f, ", \"allreduce_checked\": %" PRIu64 ", \"barriers_checked\": %" PRIu64,
			run->checked_ar, run->checked_bar);
		fputs(", \"error\": ", f);
		if (run->err)
			jstr(f, run->errmsg);
		else
			fputs("null", f);
		fputs(", \"first_wrong\": ", f);
		if (run->wrong_msg[0])
			jstr(f, run->wrong_msg);
		else
			fputs("null", f);
		fputs(",\n       \"allreduce\": [", f);
		for (unsigned int si = 0; si < run->nsets; si++) {
			if (run->set[si].barrier)
				continue;
			fputs(first ? "\n         " : ",\n         ", f);
			json_set(f, &run->set[si]);
			first = false;
		}
		fputs("],\n       \"barrier\": ", f);
		first = true;
		for (unsigned int si = 0; si < run->nsets; si++)
			if (run->set[si].barrier) {
				json_set(f, &run->set[si]);
				first = false;
			}
		if (first)
			fputs("null", f);
		fputs("}", f);
	}
	fprintf(f, "\n    ],\n    \"wrong\": %u, \"verified\": %s, \"failed_runs\": %u,\n"
		"    \"targets\": [", cr.wrong, cr.wrong ? "false" : "true",
		cr.failed);
	for (unsigned int i = 0; i < cr.ntgt; i++) {
		const struct coll_target *t = &cr.tgt[i];

		fprintf(f, "%s\n      {\"id\": %d, \"procs\": %u, \"what\": \"%s\", "
			"\"description\": \"CAU >= %.0f x faster than the best software "
			"algorithm\", \"cau_ns\": ", i ? "," : "", t->id, t->n,
			t->barrier ? "barrier" : "allreduce 8 B", COLL_TARGET);
		jnum(f, t->avail ? t->cau_ns : NAN);
		fputs(", \"best_software\": ", f);
		if (t->avail)
			jstr(f, cm_json[t->best]);
		else
			fputs("null", f);
		fputs(", \"best_software_ns\": ", f);
		jnum(f, t->avail ? t->sw_ns : NAN);
		fputs(", \"ratio\": ", f);
		jnum(f, t->avail ? t->ratio : NAN);
		fputs(", \"shared_memory_ns\": ", f);
		jnum(f, t->avail && t->shm_ns > 0 ? t->shm_ns : NAN);
		fputs(", \"ceiling_ratio\": ", f);
		jnum(f, t->avail && t->ceiling > 0 ? t->ceiling : NAN);
		fprintf(f, ", \"result\": \"%s\", \"reason\": ",
			!t->avail ? "n/a" : t->pass ? "pass" : "fail");
		if (t->avail)
			fputs("null}", f);
		else {
			jstr(f, t->why);
			fputc('}', f);
		}
	}
	fputs("\n    ]\n  }", f);
}

/* --- gnuplot --- */

static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);	/* '' inside a single-quoted string */
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('\'', f);
}

/* A point of the plot: the x value and the set measured there. */
struct plot_pt {
	unsigned int x;
	const struct coll_set *set;
};

/*
 * The "plot" command of a panel: a line per method of the sets at @pts
 * (all of one kind), each a data block of @d; the same line type for a
 * method in every panel, the shm limit dashed.
 */
static void plot_methods(FILE *g, FILE *d, const char *dat, unsigned int *block,
			 bool barrier, const struct plot_pt *pts,
			 unsigned int npts)
{
	const enum coll_method *ms = set_methods(barrier);
	unsigned int plotted = 0;

	for (unsigned int k = 0; k < COLL_NM; k++) {
		unsigned int n = 0;

		for (unsigned int i = 0; i < npts; i++) {
			const struct coll_set *s = pts[i].set;

			if (!s->done || !s->has[k] || !(s->st[k].median_ns > 0))
				continue;
			fprintf(d, "%u %g\n", pts[i].x,
				s->st[k].median_ns / 1e3);
			n++;
		}
		if (!n)
			continue;
		fputs("\n\n", d);
		fprintf(g, "%s'%s' index %u using 1:2 with linespoints linetype %u%s title '%s'",
			plotted ? ", " : "plot ", dat, (*block)++, ms[k] + 1,
			ms[k] == CM_SHM ? " linecolor 'black' dashtype 2" : "",
			cm_name[ms[k]]);
		plotted++;
	}
	fputs(plotted ? "\n" : "plot 1 notitle\n", g);
}

/**
 * coll_plot() - the collectives as a PNG: one panel of allreduce latency
 *	against size per process count, one of barrier latency against N
 * @cfg: configuration
 * @path: the PNG to write
 *
 * Needs gnuplot in PATH; without it, says so and returns 0.
 * Return: 0 or -errno (-EIO: gnuplot failed).
 */
int coll_plot(const struct bench_cfg *cfg, const char *path)
{
	char dir[] = "/tmp/percs-bench-coll.XXXXXX", dat[64], gp[64];
	unsigned int panels = 0, cols, rows, block = 0;
	FILE *d = NULL, *g = NULL;
	bool any_bar = false;
	int ret = 0;

	if (!cr.ran)
		return 0;
	if (!have_gnuplot()) {
		fprintf(stderr, "percs-bench: gnuplot not found in PATH: no plot "
			"(install the Debian package gnuplot-nox)\n");
		return 0;
	}
	for (unsigned int i = 0; i < cr.nruns; i++) {
		if (cr.run[i].skipped)
			continue;
		for (unsigned int si = 0; si < cr.run[i].nsets; si++)
			any_bar |= cr.run[i].set[si].barrier && cr.run[i].set[si].done;
		panels++;
	}
	panels += any_bar;
	if (!panels) {
		fprintf(stderr, "percs-bench: coll: nothing measured: no plot\n");
		return 0;
	}
	if (!mkdtemp(dir))
		return -errno;
	snprintf(dat, sizeof(dat), "%s/coll.dat", dir);
	snprintf(gp, sizeof(gp), "%s/coll.gp", dir);
	d = fopen(dat, "w");
	g = fopen(gp, "w");
	if (!d || !g) {
		ret = -errno;
		goto out;
	}
	cols = panels <= 2 ? panels : panels <= 4 ? 2 : 3;
	rows = (panels + cols - 1) / cols;
	/* cairo where there is one: the gd png terminal draws no dashes */
	fprintf(g, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"  set terminal pngcairo size %u,%u\n} else {\n"
		"  set terminal png size %u,%u\n}\nset output ",
		560 * cols, 420 * rows + 40, 560 * cols, 420 * rows + 40);
	gp_str(g, path);
	fprintf(g, "\nset multiplot layout %u,%u title 'percs-bench coll, %s, %d CPUs, %s'\n",
		rows, cols, cfg->kernel, cfg->ncpus, cfg->date);
	fputs("set logscale x 2\nset logscale y\nset grid\nset key top left font ',8'\n"
	      "set xtics ('8' 8, '32' 32, '128' 128, '512' 512, '2K' 2048, "
	      "'8K' 8192, '32K' 32768, '64K' 65536)\nset xrange [6:90000]\n", g);
	for (unsigned int i = 0; i < cr.nruns; i++) {
		const struct coll_run *r = &cr.run[i];
		struct plot_pt pts[COLL_MAX_SETS];
		unsigned int npts = 0;

		if (r->skipped)
			continue;
		fprintf(g, "set title 'allreduce (u64 SUM), N = %u'\n"
			"set xlabel 'bytes'\nset ylabel 'first call to last return, median (us)'\n",
			r->n);
		for (unsigned int si = 0; si < r->nsets; si++)
			if (!r->set[si].barrier)
				pts[npts++] = (struct plot_pt){
					r->set[si].bytes, &r->set[si] };
		plot_methods(g, d, dat, &block, false, pts, npts);
	}
	if (any_bar) {
		struct plot_pt pts[COLL_MAX_PROCS];
		unsigned int npts = 0;

		fputs("set title 'barrier'\nset xlabel 'processes (N)'\n"
		      "set xtics (2, 4, 8, 16)\nset xrange [1.7:19]\n", g);
		for (unsigned int i = 0; i < cr.nruns; i++) {
			const struct coll_run *r = &cr.run[i];
			const struct coll_set *s = find_set(r, true, 0);

			if (!r->skipped && s)
				pts[npts++] = (struct plot_pt){ r->n, s };
		}
		plot_methods(g, d, dat, &block, true, pts, npts);
	}
	fputs("unset multiplot\n", g);
out:
	if (d)
		fclose(d);
	if (g)
		fclose(g);
	if (!ret) {
		ret = run_gnuplot(gp, dir, path);
		if (ret)
			return ret;	/* its input stays for a look */
	}
	unlink(dat);
	unlink(gp);
	rmdir(dir);
	return ret;
}
