// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: the software collectives' algorithms, as schedules - the steps
 * one member takes, each in a round numbered the same on every member -
 * and the calls that build and start them (coll_sw.c runs them).
 *
 * Combination order: a member that receives a partial result combines it
 * with its own so that the lower ranks' part is the left operand
 * (LP_SW_COMB_L when the peer ranks lower, LP_SW_COMB_R when it ranks
 * higher; binomial trees count ranks relative to the root).  Every
 * combination of the partial results of two blocks of ranks is then the
 * same on every member that makes it, so all members end with the same
 * bits even for floats (float addition is commutative, and MIN/MAX keep
 * the left operand's NaN).
 *
 * n ranks, p2 the largest power of two <= n, rem = n - p2.  Recursive
 * doubling and Rabenseifner fold the extra ranks first (round 0): each
 * even rank below 2 x rem gives its vector to the odd rank above it and
 * sits out; the others are renumbered 0 .. p2 - 1; at the end (the last
 * round) the odd ranks give the result back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "firmware-model/cau.h"	/* fm_cau_check(), fm_cau_elem_size() */

static unsigned int log2_ceil(uint32_t n)
{
	unsigned int k = 0;

	while ((1U << k) < n)
		k++;
	return k;
}

static uint32_t pow2_floor(uint32_t n)
{
	uint32_t p = 1;

	while (p * 2 <= n)
		p *= 2;
	return p;
}

/* Room for every step of any schedule for @s's group. */
static int steps_alloc(struct lp_sw_req *s)
{
	unsigned int cap = 2 * log2_ceil(s->g->nr) + 4;

	s->nsteps = 0;
	s->steps = calloc(cap, sizeof(*s->steps));
	return s->steps ? 0 : -ENOMEM;
}

static struct lp_sw_step *step_add(struct lp_sw_req *s, unsigned int round)
{
	struct lp_sw_step *st = &s->steps[s->nsteps++];

	st->round = (uint16_t)round;
	st->send.peer = LP_SW_NONE;
	st->recv.peer = LP_SW_NONE;
	return st;
}

static void xfer_set(struct lp_sw_xfer *x, uint32_t peer, uint8_t *buf,
		     size_t len, enum lp_sw_action action)
{
	*x = (struct lp_sw_xfer){
		.buf = buf, .len = len, .peer = peer, .action = (uint8_t)action,
	};
}

/* A receive that combines data from @peer into mine, lower rank left. */
static enum lp_sw_action comb(uint32_t peer, uint32_t me)
{
	return peer < me ? LP_SW_COMB_L : LP_SW_COMB_R;
}

/* ---- binomial trees ------------------------------------------------------- */

/* Rounds 0 .. log2_ceil(n) - 1: to @root, partial results combined up. */
static void binomial_reduce(struct lp_sw_req *s, unsigned int root,
			    uint8_t *acc, size_t bytes)
{
	uint32_t n = s->g->nr, rel = (s->g->me + n - root) % n;
	unsigned int round = 0;

	for (uint32_t mask = 1; mask < n; mask <<= 1, round++) {
		if (rel & mask) {
			xfer_set(&step_add(s, round)->send,
				 (rel - mask + root) % n, acc, bytes,
				 LP_SW_COPY);
			return;
		}
		if (rel + mask < n)
			xfer_set(&step_add(s, round)->recv,
				 (rel + mask + root) % n, acc, bytes,
				 LP_SW_COMB_R);
	}
}

/* Rounds @base .. @base + log2_ceil(n) - 1: from @root down. */
static void binomial_bcast(struct lp_sw_req *s, unsigned int base,
			   unsigned int root, uint8_t *buf, size_t bytes)
{
	uint32_t n = s->g->nr, rel = (s->g->me + n - root) % n, mask = 1;

	if (rel) {
		uint32_t hb = pow2_floor(rel);

		xfer_set(&step_add(s, base + log2_ceil(hb))->recv,
			 (rel - hb + root) % n, buf, bytes, LP_SW_COPY);
		mask = hb << 1;
	}
	for (; mask < n; mask <<= 1)
		if (rel + mask < n)
			xfer_set(&step_add(s, base + log2_ceil(mask))->send,
				 (rel + mask + root) % n, buf, bytes,
				 LP_SW_COPY);
}

/* ---- the fold of recursive doubling and Rabenseifner ------------------------ */

struct fold {
	uint32_t p2;
	uint32_t rem;
	uint32_t newrank;	/* LP_SW_NONE: sits out */
};

/* Round 0: the even ranks below 2 x rem give their vectors away. */
static struct fold fold_in(struct lp_sw_req *s, uint8_t *acc, size_t bytes)
{
	uint32_t n = s->g->nr, me = s->g->me;
	struct fold f = { .p2 = pow2_floor(n) };

	f.rem = n - f.p2;
	if (me >= 2 * f.rem) {
		f.newrank = me - f.rem;
	} else if (me % 2) {
		xfer_set(&step_add(s, 0)->recv, me - 1, acc, bytes,
			 LP_SW_COMB_L);
		f.newrank = me / 2;
	} else {
		xfer_set(&step_add(s, 0)->send, me + 1, acc, bytes,
			 LP_SW_COPY);
		f.newrank = LP_SW_NONE;
	}
	return f;
}

/* The real rank of participant @nr after the fold. */
static uint32_t fold_real(const struct fold *f, uint32_t nr)
{
	return nr < f->rem ? nr * 2 + 1 : nr + f->rem;
}

/* Round @round: the odd ranks below 2 x rem give the result back. */
static void fold_out(struct lp_sw_req *s, const struct fold *f,
		     unsigned int round, uint8_t *acc, size_t bytes)
{
	uint32_t me = s->g->me;

	if (me >= 2 * f->rem)
		return;
	if (me % 2)
		xfer_set(&step_add(s, round)->send, me - 1, acc, bytes,
			 LP_SW_COPY);
	else
		xfer_set(&step_add(s, round)->recv, me + 1, acc, bytes,
			 LP_SW_COPY);
}

/* ---- allreduce -------------------------------------------------------------- */

/* Rounds 1 .. log2(p2): exchange whole vectors with newrank ^ mask. */
static void recdbl(struct lp_sw_req *s, uint8_t *acc, size_t bytes)
{
	struct fold f = fold_in(s, acc, bytes);
	unsigned int round = 1;

	for (uint32_t mask = 1; mask < f.p2; mask <<= 1, round++) {
		struct lp_sw_step *st;
		uint32_t peer;

		if (f.newrank == LP_SW_NONE)
			continue;
		peer = fold_real(&f, f.newrank ^ mask);
		st = step_add(s, round);
		xfer_set(&st->send, peer, acc, bytes, LP_SW_COPY);
		xfer_set(&st->recv, peer, acc, bytes, comb(peer, s->g->me));
	}
	fold_out(s, &f, round, acc, bytes);
}

/*
 * Reduce-scatter by recursive halving (rounds 1 .. log2(p2), the range
 * each participant keeps halving), allgather by recursive doubling (the
 * next log2(p2) rounds, the halvings undone in reverse).
 */
static int rabenseifner(struct lp_sw_req *s, uint8_t *acc, size_t count,
			size_t esize)
{
	struct fold f = fold_in(s, acc, count * esize);
	unsigned int round = 1, depth = 0, k = log2_ceil(f.p2);
	size_t lo = 0, hi = count, (*stack)[2];
	uint32_t me = s->g->me, mask;

	if (f.newrank == LP_SW_NONE) {
		fold_out(s, &f, 1 + 2 * k, acc, count * esize);
		return 0;
	}
	stack = calloc(k ? k : 1, sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (mask = f.p2 >> 1; mask; mask >>= 1, round++) {
		uint32_t pn = f.newrank ^ mask, peer = fold_real(&f, pn);
		size_t mid = lo + (hi - lo) / 2, klo, khi, slo, shi;
		struct lp_sw_step *st = step_add(s, round);

		stack[depth][0] = lo;
		stack[depth++][1] = hi;
		if (f.newrank < pn) {
			klo = lo, khi = mid, slo = mid, shi = hi;
		} else {
			klo = mid, khi = hi, slo = lo, shi = mid;
		}
		xfer_set(&st->send, peer, acc + slo * esize,
			 (shi - slo) * esize, LP_SW_COPY);
		xfer_set(&st->recv, peer, acc + klo * esize,
			 (khi - klo) * esize, comb(peer, me));
		lo = klo;
		hi = khi;
	}
	for (mask = 1; mask < f.p2; mask <<= 1, round++) {
		uint32_t peer = fold_real(&f, f.newrank ^ mask);
		struct lp_sw_step *st = step_add(s, round);
		size_t plo = stack[--depth][0], phi = stack[depth][1];
		size_t olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo;

		xfer_set(&st->send, peer, acc + lo * esize, (hi - lo) * esize,
			 LP_SW_COPY);
		xfer_set(&st->recv, peer, acc + olo * esize,
			 (ohi - olo) * esize, LP_SW_COPY);
		lo = plo;
		hi = phi;
	}
	free(stack);
	fold_out(s, &f, round, acc, count * esize);
	return 0;
}

int lp_sched_allreduce(struct lp_sw_req *s, unsigned int algo, uint8_t *acc,
		       size_t count, size_t esize)
{
	size_t bytes = count * esize;
	unsigned int p;
	int ret;

	if (algo == PERCS_SW_AUTO)
		algo = bytes <= 2048 || count < pow2_floor(s->g->nr) ?
		       PERCS_SW_RECDBL : PERCS_SW_RABENSEIFNER;
	if (algo != PERCS_SW_BINOMIAL && algo != PERCS_SW_RECDBL &&
	    algo != PERCS_SW_RABENSEIFNER)
		return -EOPNOTSUPP;
	ret = steps_alloc(s);
	if (ret)
		return ret;
	switch (algo) {
	case PERCS_SW_BINOMIAL:
		p = log2_ceil(s->g->nr);
		binomial_reduce(s, 0, acc, bytes);
		binomial_bcast(s, p, 0, acc, bytes);
		return 0;
	case PERCS_SW_RECDBL:
		recdbl(s, acc, bytes);
		return 0;
	default:
		return rabenseifner(s, acc, count, esize);
	}
}

int lp_sched_reduce(struct lp_sw_req *s, unsigned int root, uint8_t *acc,
		    size_t count, size_t esize)
{
	int ret = steps_alloc(s);

	if (!ret)
		binomial_reduce(s, root, acc, count * esize);
	return ret;
}

int lp_sched_bcast(struct lp_sw_req *s, unsigned int root, uint8_t *buf,
		   size_t len)
{
	int ret = steps_alloc(s);

	if (!ret)
		binomial_bcast(s, 0, root, buf, len);
	return ret;
}

/*
 * Dissemination: in round k send to rank + 2^k and receive from rank - 2^k
 * (mod n), ceil(log2 n) rounds.  The others are the allreduce schedules
 * without data.
 */
int lp_sched_barrier(struct lp_sw_req *s, unsigned int algo)
{
	uint32_t n = s->g->nr, me = s->g->me;
	unsigned int round = 0;
	int ret;

	if (algo == PERCS_SW_BINOMIAL || algo == PERCS_SW_RECDBL)
		return lp_sched_allreduce(s, algo, NULL, 0, 4);
	if (algo != PERCS_SW_AUTO && algo != PERCS_SW_DISSEMINATION)
		return -EOPNOTSUPP;
	ret = steps_alloc(s);
	if (ret)
		return ret;
	for (uint32_t d = 1; d < n; d <<= 1, round++) {
		struct lp_sw_step *st = step_add(s, round);

		xfer_set(&st->send, (me + d) % n, NULL, 0, LP_SW_COPY);
		xfer_set(&st->recv, (me + n - d) % n, NULL, 0, LP_SW_COPY);
	}
	return 0;
}

/* ---- the calls -------------------------------------------------------- */

enum sw_kind { SW_ALLREDUCE, SW_REDUCE, SW_BCAST, SW_BARRIER };

struct sw_args {
	uint8_t kind;
	uint8_t op;
	uint8_t type;
	unsigned int algo;
	unsigned int root;
	const void *src;
	void *dst;
	size_t count;		/* elements; bytes for a bcast */
};

/* Check, build the schedule (into @s), set up the buffers. */
static int sw_build(struct percs_sw_group *g, const struct sw_args *a,
		    struct lp_sw_req *s)
{
	size_t esize = a->kind == SW_BCAST ? 1 : fm_cau_elem_size(a->type);
	size_t bytes = a->count * esize;
	bool root = g->me == a->root;
	uint8_t *acc = a->dst;
	int ret;

	if (a->kind == SW_ALLREDUCE || a->kind == SW_REDUCE) {
		if (fm_cau_check(a->op, a->type, 0) || a->count > SIZE_MAX / 8 ||
		    (a->count && (!a->src ||
				  ((a->kind == SW_ALLREDUCE || root) &&
				   !a->dst))))
			return -EINVAL;
	}
	if ((a->kind == SW_REDUCE || a->kind == SW_BCAST) &&
	    a->root >= g->nr)
		return -EINVAL;
	if (a->kind == SW_BCAST && a->count && !a->dst)
		return -EINVAL;
	if (bytes > UINT32_MAX)
		return -EMSGSIZE;	/* the header's offset and total */
	*s = (struct lp_sw_req){
		.g = g, .opseq = g->opseq, .op = a->op, .type = a->type,
	};
	switch (a->kind) {
	case SW_ALLREDUCE:
		ret = lp_sched_allreduce(s, a->algo, acc, a->count, esize);
		break;
	case SW_REDUCE:
		if (a->algo != PERCS_SW_AUTO && a->algo != PERCS_SW_BINOMIAL)
			return -EOPNOTSUPP;
		if (!root) {
			/* The partial result needs a buffer of its own. */
			s->tmp = malloc(bytes ? bytes : 1);
			if (!s->tmp)
				return -ENOMEM;
			acc = s->tmp;
		}
		ret = lp_sched_reduce(s, a->root, acc, a->count, esize);
		break;
	case SW_BCAST:
		if (a->algo != PERCS_SW_AUTO && a->algo != PERCS_SW_BINOMIAL)
			return -EOPNOTSUPP;
		ret = lp_sched_bcast(s, a->root, acc, a->count);
		break;
	default:
		ret = lp_sched_barrier(s, a->algo);
		break;
	}
	if (ret) {
		free(s->tmp);
		free(s->steps);
		return ret;
	}
	if (acc && bytes && acc != a->src && a->kind != SW_BCAST)
		memcpy(acc, a->src, bytes);
	return 0;
}

static int sw_run(struct percs_sw_group *g, const struct sw_args *a,
		  struct percs_coll_req **out)
{
	struct percs_coll_req stack, *r = &stack;
	struct lp_sw_req s;
	int ret;

	if (!g)
		return -EINVAL;
	ret = sw_build(g, a, &s);
	if (ret)
		return ret;
	if (out) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			free(s.tmp);
			free(s.steps);
			return -ENOMEM;
		}
	} else {
		memset(r, 0, sizeof(*r));
	}
	lp_req_start(g->w, r, LP_REQ_SW);
	r->sw = s;
	g->opseq++;
	g->running++;
	/* The first round's message leaves at once. */
	lp_sw_advance(r);
	return lp_req_run(r, out);
}

int percs_sw_iallreduce(struct percs_sw_group *g, unsigned int algo,
			const void *sendbuf, void *recvbuf, size_t count,
			unsigned int type, unsigned int op,
			struct percs_coll_req **req)
{
	struct sw_args a = {
		.kind = SW_ALLREDUCE, .op = (uint8_t)op, .type = (uint8_t)type,
		.algo = algo, .src = sendbuf, .dst = recvbuf, .count = count,
	};

	if (!req || op > UINT8_MAX || type > UINT8_MAX)
		return -EINVAL;
	return sw_run(g, &a, req);
}

int percs_sw_allreduce(struct percs_sw_group *g, unsigned int algo,
		       const void *sendbuf, void *recvbuf, size_t count,
		       unsigned int type, unsigned int op)
{
	struct sw_args a = {
		.kind = SW_ALLREDUCE, .op = (uint8_t)op, .type = (uint8_t)type,
		.algo = algo, .src = sendbuf, .dst = recvbuf, .count = count,
	};

	if (op > UINT8_MAX || type > UINT8_MAX)
		return -EINVAL;
	return sw_run(g, &a, NULL);
}

int percs_sw_ireduce(struct percs_sw_group *g, unsigned int algo,
		     unsigned int root, const void *sendbuf, void *recvbuf,
		     size_t count, unsigned int type, unsigned int op,
		     struct percs_coll_req **req)
{
	struct sw_args a = {
		.kind = SW_REDUCE, .op = (uint8_t)op, .type = (uint8_t)type,
		.algo = algo, .root = root, .src = sendbuf, .dst = recvbuf,
		.count = count,
	};

	if (!req || op > UINT8_MAX || type > UINT8_MAX)
		return -EINVAL;
	return sw_run(g, &a, req);
}

int percs_sw_reduce(struct percs_sw_group *g, unsigned int algo,
		    unsigned int root, const void *sendbuf, void *recvbuf,
		    size_t count, unsigned int type, unsigned int op)
{
	struct sw_args a = {
		.kind = SW_REDUCE, .op = (uint8_t)op, .type = (uint8_t)type,
		.algo = algo, .root = root, .src = sendbuf, .dst = recvbuf,
		.count = count,
	};

	if (op > UINT8_MAX || type > UINT8_MAX)
		return -EINVAL;
	return sw_run(g, &a, NULL);
}

int percs_sw_ibcast(struct percs_sw_group *g, unsigned int algo,
		    unsigned int root, void *buf, size_t len,
		    struct percs_coll_req **req)
{
	struct sw_args a = {
		.kind = SW_BCAST, .algo = algo, .root = root, .dst = buf,
		.count = len,
	};

	if (!req)
		return -EINVAL;
	return sw_run(g, &a, req);
}

int percs_sw_bcast(struct percs_sw_group *g, unsigned int algo,
		   unsigned int root, void *buf, size_t len)
{
	struct sw_args a = {
		.kind = SW_BCAST, .algo = algo, .root = root, .dst = buf,
		.count = len,
	};

	return sw_run(g, &a, NULL);
}

int percs_sw_ibarrier(struct percs_sw_group *g, unsigned int algo,
		      struct percs_coll_req **req)
{
	struct sw_args a = { .kind = SW_BARRIER, .algo = algo };

	if (!req)
		return -EINVAL;
	return sw_run(g, &a, req);
}

int percs_sw_barrier(struct percs_sw_group *g, unsigned int algo)
{
	struct sw_args a = { .kind = SW_BARRIER, .algo = algo };

	return sw_run(g, &a, NULL);
}
