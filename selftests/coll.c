// SPDX-License-Identifier: GPL-2.0
/*
 * coll: collectives on CAU trees (PERCS_PKT_COLL descriptors) against the
 * real module: ALLREDUCE, REDUCE, BARRIER and MCAST.  Descriptors are composed
 * raw in the send FIFO (percs_send_compose_hdr()) and results read raw
 * from the receive FIFO, so this tests the kernel, not a library.
 *
 * Every op x type x count through trees of several shapes (binary, root in
 * the middle of the member array, star of 16, chain, a single member),
 * ordered and not, against a reference computed here in the tree's
 * combination order with C arithmetic (edge values, wraparound, NaN
 * payloads, infinities, signed zeros, overflow); who gets a result (every
 * member, the root of a reduce), its header, sequence number, tag and
 * zero bytes beyond count.  Ordered mode: float sums over 16 processes on
 * 16 hubs with random delays are bit-identical over 100 runs (an
 * unordered tree's spread is reported).  Pipelining: 16 operations in
 * flight, the 17th waits in the send FIFO and still completes.  Four trees
 * of two jobs at once, and a window of another job refused.  A tree ended
 * (DESTROY, a member's window closed) while members wait: -ECONNRESET,
 * nothing hangs, and a descriptor waiting for a slot then completes by
 * itself.  Drop/duplicate/reorder injection: 10,000 pipelined operations
 * over 8 processes, and 3,000 on an ordered tree whose random float sums
 * stay bit-exact, each result exactly once (matched by seq: they may
 * arrive out of order) and nothing after the last.  Every
 * malformed descriptor field and each status; members that disagree.  A
 * full 4 KiB receive FIFO holds results back without losing any.  CAU
 * transfers counted on the links of a tree spanning four supernodes.
 *
 * Multicast: from every member of 16-member trees (binary, chain, star)
 * to every other exactly once, never to itself, with the origin's src,
 * tag, seq and data, counts 0 to the most; every malformed field; each
 * origin's order at every member with several origins at once; 10,000
 * under drop/duplicate/delay; every member of a chain and of a star
 * multicasting into slowly read 4 KiB FIFOs (the nodes' buffers full,
 * crossing both ways on every edge) with no deadlock; multicasts and
 * allreduces interleaved on one tree; a tree destroyed or a member's
 * window closed with multicasts in flight.  libpercs's percs_cau_bcast()
 * from every root of 8 processes, 0 to 65536 bytes.
 *
 * coll.modparams runs this on topology=4x4 (16 hubs); tests skip on fewer.
 * Afterwards the live counters (cau_trees included) drain to zero.
 */
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define NEED_HUBS	16		/* coll.modparams: topology=4x4 */
#define MAXM		16		/* members of one tree here */
#define PAY		PERCS_CAU_PAYLOAD
#define EXT		PERCS_COLL_EXT_SIZE
#define RES_LEN		(EXT + PAY)	/* a delivered result's length */
#define INFL		PERCS_CAU_MAX_INFLIGHT
#define ROOT		PERCS_CAU_ROOT
#define WAIT_MS		10000		/* deadline of one result, no faults */
#define FAULT_MS	30000		/* ... with drop/dup/reorder */
#define QUIET_MS	30		/* "nothing more arrives" */

/* A well-mixed 64-bit value of a few numbers (splitmix64 finaliser). */
static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t z = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) *
		     0xbf58476d1ce4e5b9ULL ^ (c + 1) * 0x94d049bb133111ebULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ */
/* The reference ALU: typed C arithmetic, independent of firmware-model. */

static bool type_float(unsigned int type)
{
	return type == PERCS_CAU_T_F32 || type == PERCS_CAU_T_F64;
}

static unsigned int esize(unsigned int type)
{
	switch (type) {
	case PERCS_CAU_T_S32:
	case PERCS_CAU_T_U32:
	case PERCS_CAU_T_F32:
		return 4;
	case PERCS_CAU_T_S64:
	case PERCS_CAU_T_U64:
	case PERCS_CAU_T_F64:
		return 8;
	}
	return 0;
}

static unsigned int maxcount(unsigned int type)
{
	return PAY / esize(type);
}

static bool op_valid(unsigned int op, unsigned int type)
{
	switch (op) {
	case PERCS_CAU_OP_OR:
	case PERCS_CAU_OP_AND:
	case PERCS_CAU_OP_XOR:
		return !type_float(type);
	case PERCS_CAU_OP_PROD:
		return type_float(type);
	}
	return op <= PERCS_CAU_OP_LAST;
}

static const char *op_name(unsigned int op)
{
	static const char *const n[] = { "nop", "sum", "min", "max", "or",
					 "and", "xor", "prod" };

	return op < ARRAY_SIZE(n) ? n[op] : "?";
}

static const char *type_name(unsigned int type)
{
	static const char *const n[] = { "s32", "u32", "s64", "u64", "f32",
					 "f64" };

	return type < ARRAY_SIZE(n) ? n[type] : "?";
}

static const char *coll_name(unsigned int coll)
{
	static const char *const n[] = { "allreduce", "reduce", "barrier",
					 "mcast" };

	return coll < ARRAY_SIZE(n) ? n[coll] : "?";
}

static uint64_t ld(const uint8_t *p, unsigned int size)
{
	uint32_t v32;
	uint64_t v64;

	if (size == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

static void st(uint8_t *p, unsigned int size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == 4)
		memcpy(p, &v32, 4);
	else
		memcpy(p, &v, 8);
}

static float f32_of(uint64_t b)
{
	uint32_t v = (uint32_t)b;
	float f;

	memcpy(&f, &v, 4);
	return f;
}

static uint64_t bits_f32(float f)
{
	uint32_t v;

	memcpy(&v, &f, 4);
	return v;
}

static double f64_of(uint64_t b)
{
	double d;

	memcpy(&d, &b, 8);
	return d;
}

static uint64_t bits_f64(double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	return v;
}

static bool fbits_nan(unsigned int type, uint64_t b)
{
	if (type == PERCS_CAU_T_F32)
		return (b & 0x7fffffffULL) > 0x7f800000ULL;
	return (b & ~(1ULL << 63)) > 0x7ff0000000000000ULL;
}

/*
 * Float MIN/MAX on bit patterns: the accumulator's NaN stays, else the
 * input's NaN is taken (exact bits, a signalling NaN stays signalling);
 * -0.0 is below +0.0.
 */
static uint64_t fminmax(unsigned int type, bool max, uint64_t a, uint64_t b)
{
	bool f32 = type == PERCS_CAU_T_F32;
	double x, y;

	if (fbits_nan(type, a))
		return a;
	if (fbits_nan(type, b))
		return b;
	x = f32 ? f32_of(a) : f64_of(a);
	y = f32 ? f32_of(b) : f64_of(b);
	if (x == y) {
		if (x != 0 || signbit(x) == signbit(y))
			return a;
		/* +0.0 and -0.0 */
		return (max == !signbit(x)) ? a : b;
	}
	if (max)
		return y > x ? b : a;
	return y < x ? b : a;
}

/* One element: a @op b. */
static uint64_t ref_elem(unsigned int op, unsigned int type, uint64_t a,
			 uint64_t b)
{
	unsigned int size = esize(type);
	uint64_t mask = size == 4 ? 0xffffffffULL : ~0ULL;
	uint64_t top = 1ULL << (size * 8 - 1);
	bool sgn = type == PERCS_CAU_T_S32 || type == PERCS_CAU_T_S64;
	bool less;

	if (op == PERCS_CAU_OP_NOP)
		return 0;
	if (type == PERCS_CAU_T_F32) {
		if (op == PERCS_CAU_OP_SUM)
			return bits_f32(f32_of(a) + f32_of(b));
		if (op == PERCS_CAU_OP_PROD)
			return bits_f32(f32_of(a) * f32_of(b));
		return fminmax(type, op == PERCS_CAU_OP_MAX, a, b);
	}
	if (type == PERCS_CAU_T_F64) {
		if (op == PERCS_CAU_OP_SUM)
			return bits_f64(f64_of(a) + f64_of(b));
		if (op == PERCS_CAU_OP_PROD)
			return bits_f64(f64_of(a) * f64_of(b));
		return fminmax(type, op == PERCS_CAU_OP_MAX, a, b);
	}
	switch (op) {
	case PERCS_CAU_OP_SUM:
		return (a + b) & mask;
	case PERCS_CAU_OP_OR:
		return a | b;
	case PERCS_CAU_OP_AND:
		return a & b;
	case PERCS_CAU_OP_XOR:
		return a ^ b;
	}
	/* MIN, MAX: signed types compare with the sign bit flipped. */
	less = sgn ? (b ^ top) < (a ^ top) : b < a;
	if (op == PERCS_CAU_OP_MIN)
		return less ? b : a;
	return (!less && a != b) ? b : a;
}

static void ref_combine(unsigned int op, unsigned int type, unsigned int count,
			uint8_t *acc, const uint8_t *in)
{
	unsigned int size = esize(type);

	for (unsigned int i = 0; i < count; i++)
		st(acc + i * size, size, ref_elem(op, type, ld(acc + i * size, size),
						  ld(in + i * size, size)));
}

/*
 * The reduction of the subtree at @node in the CAU's order: the member's
 * own input, then each child's subtree in member-array order.
 */
static void ref_subtree(unsigned int n, const uint32_t *parent,
			unsigned int node, unsigned int op, unsigned int type,
			unsigned int count, uint8_t (*in)[PAY], uint8_t *acc)
{
	uint8_t sub[PAY];

	memcpy(acc, in[node], PAY);
	for (unsigned int c = 0; c < n; c++) {
		if (parent[c] != node)
			continue;
		ref_subtree(n, parent, c, op, type, count, in, sub);
		ref_combine(op, type, count, acc, sub);
	}
}

static unsigned int root_of(unsigned int n, const uint32_t *parent)
{
	for (unsigned int i = 0; i < n; i++)
		if (parent[i] == ROOT)
			return i;
	return 0;
}

/* What every member should get: the data of the result, zero beyond count. */
static void ref_result(unsigned int n, const uint32_t *parent,
		       unsigned int coll, unsigned int op, unsigned int type,
		       unsigned int count, uint8_t (*in)[PAY], uint8_t *want)
{
	memset(want, 0, PAY);
	if (coll == PERCS_COLL_BARRIER || op == PERCS_CAU_OP_NOP)
		return;	/* "NOP combines nothing: its result is all zero" */
	ref_subtree(n, parent, root_of(n, parent), op, type, count, in, want);
	memset(want + count * esize(type), 0, PAY - count * esize(type));
}

/* Does @got match @want?  A float SUM/PROD NaN matches any NaN. */
static int data_diff(unsigned int op, unsigned int type, unsigned int count,
		     const uint8_t *got, const uint8_t *want)
{
	unsigned int size = esize(type) ? esize(type) : 4;

	for (unsigned int i = 0; i < PAY / size; i++) {
		uint64_t g = ld(got + i * size, size);
		uint64_t w = ld(want + i * size, size);

		if (g == w)
			continue;
		if (i < count && type_float(type) &&
		    (op == PERCS_CAU_OP_SUM || op == PERCS_CAU_OP_PROD) &&
		    fbits_nan(type, g) && fbits_nan(type, w))
			continue;
		return (int)i;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* Windows, trees, descriptors and results. */

struct mem {
	struct percs_window *w;
	struct percs_addr a;
	int fd;
	unsigned int hub;
};

/*
 * Windows this process has open, so that the fixture's teardown can close
 * what a failed ASSERT left behind (the test's own frame is gone then).
 */
static struct percs_window *open_w[64];
static unsigned int nr_open_w;

static void open_w_del(struct percs_window *w)
{
	for (unsigned int i = 0; i < nr_open_w; i++)
		if (open_w[i] == w) {
			open_w[i] = open_w[--nr_open_w];
			return;
		}
}

static void open_w_close_all(void)
{
	while (nr_open_w)
		percs_window_release(open_w[--nr_open_w]);
}

static int mem_open_flags(struct mem *m, unsigned int hub, unsigned int unit,
			  uint32_t key, uint32_t rx, uint32_t wflags)
{
	struct percs_hfi *hfi;
	int ret;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	ret = pt_hfi_open(hub, unit, &hfi);
	if (ret)
		return ret;
	ret = pt_reserve(hfi, wflags, PERCS_FIFO_DEF_SIZE, rx, key,
			 PERCS_WINDOW_ANY, &m->w);
	percs_hfi_close(hfi);	/* the window stays */
	if (ret) {
		m->w = NULL;
		return ret;
	}
	m->fd = percs_window_fd(m->w);
	m->a = percs_window_addr(m->w);
	m->hub = hub;
	if (nr_open_w < ARRAY_SIZE(open_w))
		open_w[nr_open_w++] = m->w;
	return 0;
}

static int mem_open(struct mem *m, unsigned int hub, unsigned int unit,
		    uint32_t key, uint32_t rx)
{
	return mem_open_flags(m, hub, unit, key, rx, 0);
}

static void mem_close(struct mem *m)
{
	if (m->w) {
		open_w_del(m->w);
		percs_window_release(m->w);
	}
	m->w = NULL;
	m->fd = -1;
}

static int cau_create(int fd, uint32_t flags, const struct percs_addr *a,
		      const uint32_t *parent, unsigned int n, uint32_t *tree)
{
	struct percs_cau_member mem[MAXM];
	struct percs_cau_create c = {
		.size = sizeof(c), .flags = flags, .nr_members = n,
		.members = (uintptr_t)mem,
	};

	memset(mem, 0, sizeof(mem));
	for (unsigned int i = 0; i < n; i++) {
		mem[i].win = a[i];
		mem[i].parent = parent[i];
	}
	if (ioctl(fd, PERCS_IOC_CAU_CREATE, &c))
		return -errno;
	*tree = c.tree;
	return 0;
}

static int cau_tree_op(int fd, unsigned long ioc, uint32_t tree)
{
	struct percs_cau_tree_op op = { .size = sizeof(op), .tree = tree };

	return ioctl(fd, ioc, &op) ? -errno : 0;
}

/* A tree driven by this process: its members are windows of a pool. */
struct tree {
	const char *name;
	unsigned int n;
	uint32_t parent[MAXM];
	uint32_t flags;
	struct mem *m[MAXM];
	uint32_t id;
	unsigned int root;
	uint64_t seq;		/* operations started on it so far */
	uint32_t key;
};

static int tree_setup(struct tree *t)
{
	struct percs_addr a[MAXM];
	int ret;

	for (unsigned int i = 0; i < t->n; i++)
		a[i] = t->m[i]->a;
	t->root = root_of(t->n, t->parent);
	t->seq = 0;
	ret = cau_create(t->m[0]->fd, t->flags, a, t->parent, t->n, &t->id);
	for (unsigned int i = 1; !ret && i < t->n; i++)
		ret = cau_tree_op(t->m[i]->fd, PERCS_IOC_CAU_JOIN, t->id);
	return ret;
}

/*
 * A descriptor as composed in the send FIFO: the header, then @len bytes
 * of body (the extension and the elements).
 */
struct desc {
	struct percs_pkt_hdr h;
	union {
		struct percs_coll_ext e;
		uint8_t body[EXT + 2 * PAY];
	};
	size_t len;
};

static void desc_make(struct desc *d, uint32_t tree, unsigned int coll,
		      unsigned int op, unsigned int type, unsigned int count,
		      const void *data, uint32_t tag)
{
	size_t n = (size_t)count * (esize(type) ? esize(type) : 4);

	memset(d, 0, sizeof(*d));
	d->h.kind = PERCS_PKT_COLL;
	d->h.route = PERCS_ROUTE_DIRECT;
	d->h.tag = tag;
	d->e.tree = tree;
	d->e.coll = coll;
	d->e.op = op;
	d->e.type = type;
	d->e.count = count;
	if (n > 2 * PAY)
		n = 2 * PAY;
	if (data)
		memcpy(d->body + EXT, data, n < PAY ? n : PAY);
	d->len = EXT + n;
}

/* Compose and trigger one descriptor (retrying while the FIFO is full). */
static int desc_post(struct percs_window *w, const struct desc *d)
{
	uint64_t deadline = pt_now_ms() + WAIT_MS;
	int ret;

	while ((ret = percs_send_compose_hdr(w, &d->h, d->body, d->len)) ==
	       -EAGAIN) {
		percs_kick(w, PERCS_KICK_F_SEND);
		if (pt_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(200);
	}
	if (ret)
		return ret;
	return percs_send_trigger(w);
}

static int post(struct percs_window *w, uint32_t tree, unsigned int coll,
		unsigned int op, unsigned int type, unsigned int count,
		const void *data, uint32_t tag)
{
	struct desc d;

	desc_make(&d, tree, coll, op, type, count, data, tag);
	return desc_post(w, &d);
}

struct res {
	struct percs_pkt_hdr h;
	struct percs_coll_ext e;
	uint8_t data[PAY];
	int len;
};

static int res_recv(struct percs_window *w, struct res *r, int ms)
{
	uint8_t buf[PERCS_MAX_PAYLOAD];
	int n;

	memset(r, 0, sizeof(*r));
	n = pt_recv(w, &r->h, buf, sizeof(buf), ms);
	if (n < 0)
		return n;
	r->len = n;
	memcpy(&r->e, buf, n < EXT ? (size_t)n : EXT);
	if (n > EXT)
		memcpy(r->data, buf + EXT, n - EXT < PAY ? (size_t)(n - EXT) : PAY);
	return 0;
}

/* True when no packet arrives at @w within @ms. */
static bool res_none(struct percs_window *w, int ms)
{
	uint64_t deadline = pt_now_ms() + ms;

	do {
		if (percs_recv_peek(w))
			return false;
		usleep(1000);
	} while (pt_now_ms() < deadline);
	return !percs_recv_peek(w);
}

/* Completion entries at @w within @ms (0 if none). */
static int cqe_wait(struct percs_window *w, struct percs_cqe *c, int ms)
{
	int r = pt_cq_wait(w, c, ms);

	return r == 1 ? 1 : 0;
}

/* What one member should receive. */
struct want {
	uint32_t tree;
	unsigned int coll, op, type, count;
	uint64_t seq;
	int status;
	uint32_t tag;
	struct percs_addr src;
	uint32_t key;
	const uint8_t *data;	/* PAY bytes */
	bool fields;		/* check coll/op/type/count */
};

/* 0, or a description of the first difference in @why. */
static int res_check(const struct res *r, const struct want *x, char *why,
		     size_t cap)
{
	static const uint8_t zero[PAY];
	const uint8_t *want = x->data ? x->data : zero;
	int i;

	if (r->h.kind != PERCS_PKT_COLL || r->h.length != RES_LEN ||
	    r->len != RES_LEN) {
		snprintf(why, cap, "kind %u length %u (read %d), want %u/%u",
			 r->h.kind, r->h.length, r->len, PERCS_PKT_COLL,
			 RES_LEN);
		return -1;
	}
	if (r->e.tree != x->tree || r->e.seq != x->seq ||
	    r->e.status != x->status || r->e.reserved) {
		snprintf(why, cap,
			 "tree %u seq %llu status %d reserved %u, want tree %u seq %llu status %d",
			 r->e.tree, (unsigned long long)r->e.seq, r->e.status,
			 r->e.reserved, x->tree, (unsigned long long)x->seq,
			 x->status);
		return -1;
	}
	if (r->h.tag != x->tag || r->h.job_key != x->key ||
	    !pt_addr_eq(&r->h.src, &x->src)) {
		snprintf(why, cap,
			 "tag %u key %u src %u.%u.%u, want tag %u key %u src %u.%u.%u",
			 r->h.tag, r->h.job_key, r->h.src.hub, r->h.src.hfi,
			 r->h.src.window, x->tag, x->key, x->src.hub,
			 x->src.hfi, x->src.window);
		return -1;
	}
	if (x->fields && (r->e.coll != x->coll || r->e.op != x->op ||
			  r->e.type != x->type || r->e.count != x->count)) {
		snprintf(why, cap, "coll %u op %u type %u count %u, want %u %u %u %u",
			 r->e.coll, r->e.op, r->e.type, r->e.count, x->coll,
			 x->op, x->type, x->count);
		return -1;
	}
	i = data_diff(x->op, x->type, x->count, r->data, want);
	if (i >= 0) {
		unsigned int size = esize(x->type) ? esize(x->type) : 4;

		snprintf(why, cap, "element %d: 0x%llx, want 0x%llx%s", i,
			 (unsigned long long)ld(r->data + i * size, size),
			 (unsigned long long)ld(want + i * size, size),
			 (unsigned int)i >= x->count ? " (beyond count)" : "");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Inputs with edge values. */

struct fconst {
	uint64_t qnan, qnan2, snan, inf, ninf, nzero, big;
};

static const struct fconst fc32 = {
	.qnan = 0x7fc0abcdULL, .qnan2 = 0xffc01234ULL, .snan = 0x7f80abcdULL,
	.inf = 0x7f800000ULL, .ninf = 0xff800000ULL, .nzero = 0x80000000ULL,
	.big = 0x7f400000ULL,	/* 1.5 * 2^127: two of them overflow */
};

static const struct fconst fc64 = {
	.qnan = 0x7ff800000000abcdULL, .qnan2 = 0xfff8000000001234ULL,
	.snan = 0x7ff000000000abcdULL, .inf = 0x7ff0000000000000ULL,
	.ninf = 0xfff0000000000000ULL, .nzero = 0x8000000000000000ULL,
	.big = 0x7fe8000000000000ULL,
};

/* ±{0.5, 1, 2, 4}: sums and products of these are exact in any order. */
static uint64_t small_float(unsigned int type, uint64_t r)
{
	static const double v[] = { 0.5, 1, 2, 4, -0.5, -1, -2, -4 };

	return type == PERCS_CAU_T_F32 ? bits_f32((float)v[r & 7]) :
					 bits_f64(v[r & 7]);
}

/* Any sign, 2^-20 .. 2^20, a full random mantissa: order matters. */
static uint64_t rand_float(unsigned int type, uint64_t r, uint64_t r2)
{
	uint64_t sign = r >> 63, e = (r2 >> 32) % 41;

	if (type == PERCS_CAU_T_F32)
		return sign << 31 | (127 - 20 + e) << 23 | (r & 0x7fffff);
	return sign << 63 | (1023 - 20 + e) << 52 | (r & ((1ULL << 52) - 1));
}

/*
 * Member @m's (of @n) input of @type, all lanes (zero beyond @count).
 * Fixed point: all ones, the largest signed value (sums wrap), the
 * smallest and largest signed by member, 0, small and negative numbers,
 * random.  Floats (exact lanes unless @ordered): one NaN with a payload;
 * +inf; +inf and -inf; all -0.0; -0.0 and +0.0; 0 and inf; values whose
 * sum and product overflow; with @ordered two NaNs (the first in
 * combination order wins MIN/MAX, one signalling) and random values.
 */
static void gen_input(unsigned int type, unsigned int count, unsigned int m,
		      unsigned int n, bool ordered, uint64_t seed, uint8_t *out)
{
	unsigned int size = esize(type);
	uint64_t mask = size == 4 ? 0xffffffffULL : ~0ULL;
	uint64_t top = 1ULL << (size * 8 - 1);
	const struct fconst *f = type == PERCS_CAU_T_F32 ? &fc32 : &fc64;

	memset(out, 0, PAY);
	for (unsigned int l = 0; l < count; l++) {
		uint64_t r = mix(seed, m, l), r2 = mix(seed ^ 0x55, l, m), v;
		uint64_t sm = small_float(type, r);

		if (!type_float(type)) {
			switch (l) {
			case 0: v = mask; break;
			case 1: v = top - 1; break;
			case 2: v = m & 1 ? top - 1 : top; break;
			case 3: v = m ? r : 0; break;
			case 4: v = m; break;
			case 5: v = -(uint64_t)(m + 1); break;
			default: v = r; break;
			}
			st(out + l * size, size, v & mask);
			continue;
		}
		switch (l) {
		case 0: v = m == (n > 1) ? f->qnan : sm; break;
		case 1: v = m == 0 ? f->inf : sm; break;
		case 2: v = m == 0 ? f->inf : m == n - 1 ? f->ninf : sm; break;
		case 3: v = f->nzero; break;
		case 4: v = m & 1 ? 0 : f->nzero; break;
		case 5: v = m == 0 ? 0 : m == n - 1 ? f->inf : sm; break;
		case 6: v = f->big; break;
		case 7:
			v = !ordered ? sm : m == 1 ? f->qnan2 :
			    m == n - 1 ? f->snan : rand_float(type, r, r2);
			break;
		default:
			v = ordered ? rand_float(type, r, r2) : sm;
			break;
		}
		st(out + l * size, size, v);
	}
}

/* ------------------------------------------------------------------ */
/* The fixture. */

FIXTURE(coll) {
	long saved_hold, saved_depth;
};

/* The 6.1 harness runs the test after a SKIP in the setup. */
#define SKIPPED() do {							\
	if (_metadata->skip)						\
		return;							\
} while (0)

FIXTURE_SETUP(coll)
{
	long hubs;

	PT_REQUIRE_DEVICE();
	hubs = pt_nr_hubs();
	if (hubs < NEED_HUBS)
		SKIP(return, "needs %d hubs (topology=4x4), have %ld",
		     NEED_HUBS, hubs);
	self->saved_hold = pt_isr_read("hold_us");
	self->saved_depth = pt_isr_read("reorder_depth");
	pt_faults_set(0);
}

FIXTURE_TEARDOWN(coll)
{
	struct pt_live l;

	if (_metadata->skip)
		return;
	pt_faults_set(0);
	if (self->saved_hold > 0)
		pt_isr_set("hold_us", self->saved_hold);
	if (self->saved_depth > 0)
		pt_isr_set("reorder_depth", self->saved_depth);
	open_w_close_all();
	/* Not an ASSERT: a failed one here would run the teardown again. */
	EXPECT_EQ(0, pt_wait_live_zero(&l, PT_TIMEOUT_MS)) {
		TH_LOG("live: windows %ld reserved %ld mappings %ld blocked %ld jobs %ld in_flight %ld atomics %ld cau_trees %ld",
		       l.windows, l.windows_reserved, l.mappings,
		       l.blocked_senders, l.jobs, l.packets_in_flight,
		       l.atomics_outstanding, l.cau_trees);
	}
}

/* A pool of windows, one per hub, member i on hub (5 i) mod 16. */
struct pool {
	struct mem m[NEED_HUBS];
	unsigned int n;
	uint32_t key;
};

/* @poll: a bit per member whose window is in poll mode. */
static int pool_open_poll(struct pool *p, unsigned int n, uint32_t rx,
			  uint32_t poll)
{
	int ret = 0;

	memset(p, 0, sizeof(*p));
	p->key = pt_new_key();
	for (unsigned int i = 0; !ret && i < n; i++, p->n++)
		ret = mem_open_flags(&p->m[i], (5 * i) % NEED_HUBS, i & 1,
				     p->key, rx, poll & (1U << i) ?
				     PERCS_WINDOW_F_POLL : 0);
	return ret;
}

static int pool_open(struct pool *p, unsigned int n, uint32_t rx)
{
	return pool_open_poll(p, n, rx, 0);
}

static void pool_close(struct pool *p)
{
	for (unsigned int i = 0; i < p->n; i++)
		mem_close(&p->m[i]);
	p->n = 0;
}

/*
 * DESTROY by member 0: every other member gets exactly one -ECONNRESET
 * entry naming the tree, the destroyer none.  Return: 0 or -1 (logged).
 */
static int tree_end_check(struct __test_metadata *_metadata, struct tree *t)
{
	struct percs_cqe c;
	int bad = 0;

	if (cau_tree_op(t->m[0]->fd, PERCS_IOC_CAU_DESTROY, t->id)) {
		TH_LOG("%s: DESTROY: %s", t->name, strerror(errno));
		return -1;
	}
	for (unsigned int i = 1; i < t->n; i++) {
		if (!cqe_wait(t->m[i]->w, &c, WAIT_MS) ||
		    c.res != -ECONNRESET || c.user_data != t->id ||
		    c.kind != PERCS_PKT_COLL) {
			TH_LOG("%s: member %u: no -ECONNRESET entry for tree %u",
			       t->name, i, t->id);
			bad++;
		}
		if (percs_cq_poll(t->m[i]->w, &c, 1)) {
			TH_LOG("%s: member %u: an extra entry (res %d)",
			       t->name, i, c.res);
			bad++;
		}
	}
	if (percs_cq_poll(t->m[0]->w, &c, 1)) {
		TH_LOG("%s: the destroyer got an entry (res %d)", t->name,
		       c.res);
		bad++;
	}
	return bad ? -1 : 0;
}

static unsigned int log_budget = 30;	/* failed operations logged */

/*
 * One operation on @t: every member posts (coll, op, type, count) with its
 * input @in[i]; each member that should get the result (all, or the root
 * of a reduce) is checked against the reference.  Return: 0 or -1.
 */
static int run_op(struct __test_metadata *_metadata, struct tree *t,
		  unsigned int coll, unsigned int op, unsigned int type,
		  unsigned int count, uint8_t (*in)[PAY])
{
	uint8_t want[PAY];
	uint64_t seq = ++t->seq;
	struct want x = {
		.tree = t->id, .coll = coll, .op = op, .type = type,
		.count = count, .seq = seq, .src = t->m[t->root]->a,
		.key = t->key, .data = want, .fields = true,
	};
	struct res r;
	char why[256];
	int bad = 0, ret;

	ref_result(t->n, t->parent, coll, op, type, count, in, want);
	for (unsigned int i = 0; i < t->n; i++) {
		ret = post(t->m[i]->w, t->id, coll, op, type, count, in[i],
			   (uint32_t)(seq << 5 | i));
		if (ret) {
			TH_LOG("%s: post %s: %d", t->name, coll_name(coll), ret);
			return -1;
		}
	}
	for (unsigned int i = 0; i < t->n; i++) {
		if (coll == PERCS_COLL_REDUCE && i != t->root)
			continue;
		x.tag = (uint32_t)(seq << 5 | i);
		ret = res_recv(t->m[i]->w, &r, WAIT_MS);
		if (ret) {
			TH_LOG("%s: %s %s %s count %u seq %llu: member %u: no result (%d)",
			       t->name, coll_name(coll), op_name(op),
			       type_name(type), count,
			       (unsigned long long)seq, i, ret);
			return -1;
		}
		if (res_check(&r, &x, why, sizeof(why))) {
			if (!bad++ && log_budget && log_budget--)
				TH_LOG("%s: %s %s %s count %u seq %llu: member %u: %s",
				       t->name, coll_name(coll), op_name(op),
				       type_name(type), count,
				       (unsigned long long)seq, i, why);
		}
	}
	return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ */

/*
 * Every op x type (x every count with @all_counts, else 0, 1, 3 and the
 * two largest), allreduce and reduce, then a barrier, on @t.  Return: the
 * operations that failed (the sweep stops after 40).
 */
static unsigned int sweep(struct __test_metadata *_metadata, struct tree *t,
			  unsigned int seed, bool all_counts,
			  unsigned int *ops)
{
	bool ordered = t->flags & PERCS_CAU_F_ORDERED;
	uint8_t in[MAXM][PAY];
	unsigned int failed = 0;

	for (unsigned int type = 0; type <= PERCS_CAU_T_LAST; type++) {
		for (unsigned int op = 0; op <= PERCS_CAU_OP_LAST; op++) {
			unsigned int mc = maxcount(type);

			if (!op_valid(op, type))
				continue;
			for (unsigned int c = 0; c <= mc; c++) {
				if (!all_counts && c != 0 && c != 1 && c != 3 &&
				    c != mc && c != mc - 1)
					continue;
				for (unsigned int coll = 0; coll < 2; coll++) {
					for (unsigned int i = 0; i < t->n; i++)
						gen_input(type, c, i, t->n, ordered,
							  mix(seed, type * 8 + op,
							      c * 2 + coll),
							  in[i]);
					(*ops)++;
					if (run_op(_metadata, t, coll, op, type,
						   c, in) && ++failed >= 40)
						return failed;
				}
			}
			(*ops)++;
			if (run_op(_metadata, t, PERCS_COLL_BARRIER,
				   PERCS_CAU_OP_NOP, PERCS_CAU_T_S32, 0, in) &&
			    ++failed >= 40)
				return failed;
		}
	}
	/* Non-roots got nothing for their reduces: no stray packet. */
	for (unsigned int i = 0; i < t->n; i++) {
		EXPECT_TRUE(res_none(t->m[i]->w, 1)) {
			TH_LOG("%s: member %u has a packet left", t->name, i);
		}
	}
	return failed;
}

/*
 * Every op x type x count on four trees: unordered binary of 7 (every
 * count), ordered with the root in the middle of the member array,
 * ordered star of 16, unordered chain of 16 rooted at its last member.  Ordered trees get random
 * floats (the reference follows the CAU's fixed order bit for bit).
 */
TEST_F_TIMEOUT(coll, every_op_type_count, 180)
{
	struct pool p;
	struct tree trees[] = {
		{ .name = "binary7", .n = 7,
		  .parent = { ROOT, 0, 0, 1, 1, 2, 2 } },
		{ .name = "ordered6-root-in-middle", .n = 6,
		  .parent = { 3, 0, 0, ROOT, 3, 4 },
		  .flags = PERCS_CAU_F_ORDERED },
		{ .name = "ordered-star16", .n = 16,
		  .parent = { ROOT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			      0, 0 },
		  .flags = PERCS_CAU_F_ORDERED },
		{ .name = "chain16", .n = 16,
		  .parent = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
			      15, ROOT } },
	};
	const bool full = pt_scale(100) == 100;
	unsigned int ops = 0, failed = 0;
	uint64_t t0 = pt_now_ms();

	SKIPPED();
	ASSERT_EQ(0, pool_open(&p, NEED_HUBS, PERCS_FIFO_DEF_SIZE));
	for (unsigned int ti = 0; ti < ARRAY_SIZE(trees); ti++) {
		struct tree *t = &trees[ti];

		/* Different windows for different trees where possible. */
		for (unsigned int i = 0; i < t->n; i++)
			t->m[i] = &p.m[(i + 3 * ti) % NEED_HUBS];
		t->key = p.key;
		ASSERT_EQ(0, tree_setup(t));
		failed += sweep(_metadata, t, ti, full && !ti, &ops);
		EXPECT_EQ(0, tree_end_check(_metadata, t));
	}
	TH_LOG("%u operations on %zu trees: %llu ms", ops, ARRAY_SIZE(trees),
	       (unsigned long long)(pt_now_ms() - t0));
	EXPECT_EQ(0, failed);
	pool_close(&p);
}

/*
 * A tree of one member (1 .. 1024 members are valid): its own input is the
 * reduction, every count; NOP too gives all zero bytes ("NOP combines
 * nothing: its result is all zero bytes"), ordered or not.
 */
TEST_F_TIMEOUT(coll, single_member_tree, 60)
{
	struct pool p;
	struct tree t = { .name = "single", .n = 1, .parent = { ROOT } };
	unsigned int ops = 0, failed;

	SKIPPED();
	ASSERT_EQ(0, pool_open(&p, 1, PERCS_FIFO_DEF_SIZE));
	t.m[0] = &p.m[0];
	t.key = p.key;
	ASSERT_EQ(0, tree_setup(&t));
	failed = sweep(_metadata, &t, 77, pt_scale(100) == 100, &ops);
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	t.flags = PERCS_CAU_F_ORDERED;
	t.name = "single-ordered";
	ASSERT_EQ(0, tree_setup(&t));
	failed += sweep(_metadata, &t, 78, false, &ops);
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	TH_LOG("%u operations, %u failed", ops, failed);
	EXPECT_EQ(0, failed);
	pool_close(&p);
}

/* ------------------------------------------------------------------ */
/* Multi-process jobs: each child opens its own window on its hub. */

struct job {
	unsigned int n;
	uint32_t key, flags, rx;
	uint32_t poll;		/* a bit per member: poll-mode window */
	uint32_t parent[MAXM];
	unsigned int hub[MAXM];
	int (*body)(struct job *j, unsigned int idx, struct mem *m);
	void *arg;
	/* filled by the children */
	long stat;		/* a figure a member reports to the test */
	struct percs_addr addr[MAXM];
	uint32_t tree;
	int bar[8];
	int fail;
};

static int job_barrier(struct job *j, unsigned int k)
{
	uint64_t deadline = pt_now_ms() + 60000;

	__atomic_add_fetch(&j->bar[k], 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&j->bar[k], __ATOMIC_SEQ_CST) < (int)j->n) {
		if (__atomic_load_n(&j->fail, __ATOMIC_SEQ_CST))
			return -ECANCELED;
		if (pt_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(200);
	}
	return 0;
}

static bool job_failed(struct job *j)
{
	return __atomic_load_n(&j->fail, __ATOMIC_SEQ_CST);
}

static int job_child(int idx, void *arg)
{
	struct job *j = arg;
	const char *what = "open";
	struct mem m;
	uint32_t tree;
	int ret;

	ret = mem_open_flags(&m, j->hub[idx], 0, j->key, j->rx,
			     j->poll & (1U << idx) ? PERCS_WINDOW_F_POLL : 0);
	if (ret)
		goto fail;
	j->addr[idx] = m.a;
	what = "barrier";
	ret = job_barrier(j, 0);
	if (ret)
		goto fail;
	if (idx == 0) {
		what = "create";
		ret = cau_create(m.fd, j->flags, j->addr, j->parent, j->n,
				 &tree);
		if (ret)
			goto fail;
		__atomic_store_n(&j->tree, tree, __ATOMIC_SEQ_CST);
	}
	what = "barrier";
	ret = job_barrier(j, 1);
	if (ret)
		goto fail;
	if (idx) {
		what = "join";
		ret = cau_tree_op(m.fd, PERCS_IOC_CAU_JOIN, j->tree);
		if (ret)
			goto fail;
	}
	ret = job_barrier(j, 2);
	if (ret)
		goto fail;
	what = "body";
	ret = j->body(j, idx, &m);
	if (ret)
		goto fail;
	/* Nobody's release may end the tree before everyone is done. */
	what = "final barrier";
	ret = job_barrier(j, 3);
	if (ret)
		goto fail;
	mem_close(&m);
	return 0;
fail:
	fprintf(stderr, "# member %d (hub %u): %s: %d (%s)\n", idx,
		j->hub[idx], what, ret, percs_strerror(ret));
	__atomic_store_n(&j->fail, 1, __ATOMIC_SEQ_CST);
	mem_close(&m);
	return 1;
}

static struct job *job_new(unsigned int n, uint32_t flags,
			   const uint32_t *parent, const unsigned int *hub,
			   int (*body)(struct job *, unsigned int, struct mem *),
			   void *arg)
{
	struct job *j = pt_shared_alloc(sizeof(*j));

	if (!j)
		return NULL;
	j->n = n;
	j->key = pt_new_key();
	j->flags = flags;
	j->rx = PERCS_FIFO_DEF_SIZE;
	memcpy(j->parent, parent, n * sizeof(*parent));
	memcpy(j->hub, hub, n * sizeof(*hub));
	j->body = body;
	j->arg = arg;
	return j;
}

/* ------------------------------------------------------------------ */
/* Ordered mode: 16 processes, random delays, bit-identical float sums. */

#define ORD_RUNS_MAX	100
#define ORD_OPS		2	/* per run: an F64 sum of 8, an F32 sum of 16 */

struct ord_arg {
	unsigned int runs;
	uint8_t in[ORD_OPS][MAXM][PAY];
	uint8_t out[MAXM][ORD_RUNS_MAX][ORD_OPS][PAY];
};

static const unsigned int ord_type[ORD_OPS] = { PERCS_CAU_T_F64,
						PERCS_CAU_T_F32 };

static int ord_body(struct job *j, unsigned int idx, struct mem *m)
{
	struct ord_arg *a = j->arg;
	unsigned int seed = (unsigned int)mix(getpid(), idx, pt_now_ms());
	struct res r;
	int ret;

	for (unsigned int run = 0; run < a->runs; run++) {
		for (unsigned int k = 0; k < ORD_OPS; k++) {
			unsigned int type = ord_type[k];
			uint64_t seq = (uint64_t)run * ORD_OPS + k + 1;

			usleep(rand_r(&seed) % 500);
			ret = post(m->w, j->tree, PERCS_COLL_ALLREDUCE,
				   PERCS_CAU_OP_SUM, type, maxcount(type),
				   a->in[k][idx], (uint32_t)seq);
			if (ret)
				return ret;
		}
		for (unsigned int k = 0; k < ORD_OPS; k++) {
			uint64_t seq = (uint64_t)run * ORD_OPS + k + 1;

			ret = res_recv(m->w, &r, WAIT_MS);
			if (ret)
				return ret;
			if (r.e.seq != seq || r.e.status || r.h.tag != seq) {
				fprintf(stderr,
					"# member %u: seq %llu status %d tag %u, want seq %llu\n",
					idx, (unsigned long long)r.e.seq,
					r.e.status, r.h.tag,
					(unsigned long long)seq);
				return -EPROTO;
			}
			memcpy(a->out[idx][run][k], r.data, PAY);
		}
	}
	return 0;
}

/*
 * Run the 16-process job on a tree of @flags; return the number of
 * distinct results per op over every run and member (*@distinct) and
 * whether every member of one run got the same result.
 */
static void ord_job(struct __test_metadata *_metadata, struct ord_arg *a,
		    uint32_t flags, const uint32_t *parent,
		    const unsigned int *hub, unsigned int *distinct,
		    const uint8_t (*ref)[PAY])
{
	struct job *j = job_new(MAXM, flags, parent, hub, ord_body, a);
	unsigned int run, i, k, d;
	uint64_t t0 = pt_now_ms();

	ASSERT_NE(NULL, j);
	ASSERT_EQ(0, pt_fork_n(MAXM, job_child, j, 100000));
	TH_LOG("%s tree: %u runs x 16 processes: %llu ms",
	       flags ? "ordered" : "unordered", a->runs,
	       (unsigned long long)(pt_now_ms() - t0));
	for (k = 0; k < ORD_OPS; k++) {
		distinct[k] = 0;
		for (run = 0; run < a->runs; run++) {
			/* An allreduce gives every member the same bits. */
			for (i = 1; i < MAXM; i++) {
				EXPECT_EQ(0, memcmp(a->out[i][run][k],
						    a->out[0][run][k], PAY)) {
					TH_LOG("run %u op %u: member %u differs from member 0",
					       run, k, i);
				}
			}
			for (d = 0; d < run; d++)
				if (!memcmp(a->out[0][d][k], a->out[0][run][k],
					    PAY))
					break;
			if (d == run)
				distinct[k]++;
			if (ref) {
				EXPECT_EQ(0, memcmp(a->out[0][run][k], ref[k],
						    PAY)) {
					TH_LOG("run %u op %u (%s): not the reference in member order (element 0: 0x%llx, want 0x%llx)",
					       run, k, type_name(ord_type[k]),
					       (unsigned long long)ld(a->out[0][run][k], esize(ord_type[k])),
					       (unsigned long long)ld(ref[k], esize(ord_type[k])));
				}
			}
		}
	}
	munmap(j, sizeof(*j));
}

TEST_F_TIMEOUT(coll, ordered_float_sum_bit_identical, 240)
{
	static const uint32_t parent[MAXM] = {
		ROOT, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7,
	};
	unsigned int hub[MAXM], distinct[ORD_OPS];
	uint8_t ref[ORD_OPS][PAY];
	struct ord_arg *a = pt_shared_alloc(sizeof(*a));

	SKIPPED();
	ASSERT_NE(NULL, a);
	a->runs = pt_scale(ORD_RUNS_MAX);
	for (unsigned int i = 0; i < MAXM; i++)
		hub[i] = (i * 7) % NEED_HUBS;	/* across the 4 supernodes */
	/* Values from 2^-20 to 2^20 of both signs: the sum's order matters. */
	for (unsigned int k = 0; k < ORD_OPS; k++) {
		unsigned int type = ord_type[k], size = esize(type);

		for (unsigned int i = 0; i < MAXM; i++) {
			memset(a->in[k][i], 0, PAY);
			for (unsigned int l = 0; l < maxcount(type); l++)
				st(a->in[k][i] + l * size, size,
				   rand_float(type, mix(k, i, l), mix(l, k, i)));
		}
		ref_result(MAXM, parent, PERCS_COLL_ALLREDUCE,
			   PERCS_CAU_OP_SUM, type, maxcount(type), a->in[k],
			   ref[k]);
	}
	ord_job(_metadata, a, PERCS_CAU_F_ORDERED, parent, hub, distinct,
		(const uint8_t (*)[PAY])ref);
	for (unsigned int k = 0; k < ORD_OPS; k++) {
		EXPECT_EQ(1, distinct[k]);
	}
	/* Unordered: reported, not asserted (it may happen to agree). */
	memset(a->out, 0, sizeof(a->out));
	ord_job(_metadata, a, 0, parent, hub, distinct, NULL);
	TH_LOG("unordered tree: %u distinct f64 sums and %u distinct f32 sums in %u runs",
	       distinct[0], distinct[1], a->runs);
	munmap(a, sizeof(*a));
}

/* ------------------------------------------------------------------ */

/*
 * Pipelining: four members post 16 allreduces each (NOTIFY: an entry as
 * each input is taken) while the fifth posts nothing, so no operation can
 * finish; member 0's 17th stays in its send FIFO (no entry, send_head
 * still) until the fifth member's posts let operation 1 finish; then it
 * is taken without a kick.  Every member gets results 1..17, matched by
 * seq.  @poll: members 0 and 3 have poll-mode windows.
 */
static void pipeline(struct __test_metadata *_metadata, bool poll)
{
	struct pool p;
	struct tree t = { .name = "pipeline", .n = 5,
			  .parent = { ROOT, 0, 0, 1, 2 } };
	const volatile struct percs_status *st0;
	struct percs_cqe c;
	uint64_t head, v;
	uint8_t got[MAXM][INFL + 2];
	struct res r;
	struct desc d;
	unsigned int i, k;

	ASSERT_EQ(0, pool_open_poll(&p, 5, PERCS_FIFO_DEF_SIZE,
				    poll ? 1U << 0 | 1U << 3 : 0));
	for (i = 0; i < t.n; i++)
		t.m[i] = &p.m[i];
	t.key = p.key;
	ASSERT_EQ(0, tree_setup(&t));
	for (i = 0; i < 4; i++)
		for (k = 1; k <= INFL; k++) {
			v = k * 100 + i;
			desc_make(&d, t.id, PERCS_COLL_ALLREDUCE,
				  PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1, &v, k);
			d.h.flags = PERCS_PKT_F_NOTIFY;
			ASSERT_EQ(0, desc_post(t.m[i]->w, &d));
		}
	for (i = 0; i < 4; i++)
		for (k = 1; k <= INFL; k++) {
			ASSERT_EQ(1, cqe_wait(t.m[i]->w, &c, WAIT_MS));
			ASSERT_EQ(0, c.res);
			ASSERT_EQ(k, c.user_data);
		}
	/* The 17th: no slot. */
	st0 = percs_window_status(t.m[0]->w);
	head = st0->send_head;
	v = (INFL + 1) * 100;
	desc_make(&d, t.id, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM,
		  PERCS_CAU_T_U64, 1, &v, INFL + 1);
	d.h.flags = PERCS_PKT_F_NOTIFY;
	ASSERT_EQ(0, desc_post(t.m[0]->w, &d));
	usleep(50000);
	ASSERT_LE(0, percs_kick(t.m[0]->w, PERCS_KICK_F_SEND));
	usleep(50000);
	EXPECT_EQ(0, percs_cq_poll(t.m[0]->w, &c, 1));
	EXPECT_EQ(head, st0->send_head);
	for (i = 0; i < t.n; i++) {
		EXPECT_TRUE(res_none(t.m[i]->w, 1));
	}
	/* The fifth member: 1..17; operation 1 finishes, the 17th goes in. */
	for (k = 1; k <= INFL + 1; k++) {
		v = k * 100 + 4;
		ASSERT_EQ(0, post(t.m[4]->w, t.id, PERCS_COLL_ALLREDUCE,
				  PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1, &v, k));
	}
	ASSERT_EQ(1, cqe_wait(t.m[0]->w, &c, WAIT_MS)) {
		TH_LOG("the 17th descriptor was not taken once a slot freed");
	}
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(INFL + 1, c.user_data);
	EXPECT_LT(head, st0->send_head);
	for (i = 1; i < 4; i++) {
		v = (INFL + 1) * 100 + i;
		ASSERT_EQ(0, post(t.m[i]->w, t.id, PERCS_COLL_ALLREDUCE,
				  PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1, &v,
				  INFL + 1));
	}
	memset(got, 0, sizeof(got));
	for (i = 0; i < t.n; i++) {
		for (k = 1; k <= INFL + 1; k++) {
			uint64_t sum;

			ASSERT_EQ(0, res_recv(t.m[i]->w, &r, WAIT_MS)) {
				TH_LOG("member %u: result %u of 17 missing", i, k);
			}
			ASSERT_EQ(0, r.e.status);
			ASSERT_LE(1, r.e.seq);
			ASSERT_GE(INFL + 1, r.e.seq);
			got[i][r.e.seq]++;
			memcpy(&sum, r.data, 8);
			EXPECT_EQ(r.e.seq * 500 + 10, sum);
			EXPECT_EQ(r.e.seq, r.h.tag);
		}
		for (k = 1; k <= INFL + 1; k++) {
			EXPECT_EQ(1, got[i][k]);
		}
		EXPECT_TRUE(res_none(t.m[i]->w, QUIET_MS));
	}
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	pool_close(&p);
}

TEST_F_TIMEOUT(coll, sixteen_in_flight_seventeenth_waits, 60)
{
	SKIPPED();
	pipeline(_metadata, false);
}

TEST_F_TIMEOUT(coll, sixteen_in_flight_seventeenth_waits_poll, 60)
{
	SKIPPED();
	pipeline(_metadata, true);
}

/*
 * A barrier completes for nobody until the last member enters; then for
 * everyone (root on another HFI, members in poll mode too).
 */
TEST_F(coll, barrier_waits_for_the_last_member)
{
	struct pool p;
	struct tree t = { .name = "barrier", .n = 6,
			  .parent = { 1, ROOT, 1, 0, 0, 2 } };
	struct want x = { .coll = PERCS_COLL_BARRIER, .fields = true };
	struct res r;
	char why[256];

	SKIPPED();
	ASSERT_EQ(0, pool_open_poll(&p, 6, PERCS_FIFO_DEF_SIZE, 1U << 4));
	for (unsigned int i = 0; i < t.n; i++)
		t.m[i] = &p.m[i];
	t.key = p.key;
	ASSERT_EQ(0, tree_setup(&t));
	x.tree = t.id;
	x.key = t.key;
	x.src = p.m[1].a;
	for (unsigned int last = 0; last < t.n; last++) {
		x.seq = ++t.seq;
		for (unsigned int i = 0; i < t.n; i++) {
			if (i == last)
				continue;
			ASSERT_EQ(0, post(t.m[i]->w, t.id, PERCS_COLL_BARRIER, 0,
					  0, 0, NULL, (uint32_t)(x.seq << 5 | i)));
		}
		usleep(20000);
		for (unsigned int i = 0; i < t.n; i++) {
			EXPECT_TRUE(res_none(t.m[i]->w, 1)) {
				TH_LOG("barrier %llu: member %u got a result before member %u entered",
				       (unsigned long long)x.seq, i, last);
			}
		}
		ASSERT_EQ(0, post(t.m[last]->w, t.id, PERCS_COLL_BARRIER, 0, 0,
				  0, NULL, (uint32_t)(x.seq << 5 | last)));
		for (unsigned int i = 0; i < t.n; i++) {
			x.tag = (uint32_t)(x.seq << 5 | i);
			ASSERT_EQ(0, res_recv(t.m[i]->w, &r, WAIT_MS));
			EXPECT_EQ(0, res_check(&r, &x, why, sizeof(why))) {
				TH_LOG("barrier %llu member %u: %s",
				       (unsigned long long)x.seq, i, why);
			}
		}
	}
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	pool_close(&p);
}

/* ------------------------------------------------------------------ */
/* Four trees of two jobs at once. */

#define JOB_WIN		8

struct twojob {
	uint32_t key[2];
	uint32_t tree[2][2];
	unsigned int rounds;
	int ready;
	int eperm_done;
	long checked[2];	/* results checked per job */
	int fail;
};

/* Each job: 8 windows on hubs 0..7, tree 0 over all, tree 1 over five. */
static const uint32_t tj_parent[2][2][JOB_WIN] = {
	{ { ROOT, 0, 0, 1, 1, 2, 2, 3 }, { ROOT, 0, 1, 2, 3 } },
	{ { ROOT, 0, 0, 0, 0, 0, 0, 0 }, { 1, ROOT, 1, 0, 0 } },
};
static const unsigned int tj_n[2] = { JOB_WIN, 5 };
static const unsigned int tj_first[2][2] = { { 0, 2 }, { 0, 0 } };
static const uint32_t tj_flags[2][2] = { { 0, PERCS_CAU_F_ORDERED },
					 { PERCS_CAU_F_ORDERED, 0 } };

static uint64_t tj_val(unsigned int job, unsigned int tr, uint64_t k,
		       unsigned int m)
{
	return mix(job * 2 + tr, k, m) & 0xffffffffffffULL;
}

static int tj_child(int job, void *arg)
{
	struct twojob *s = arg;
	struct mem w[JOB_WIN], x;
	struct percs_addr a[JOB_WIN];
	struct percs_cqe c;
	struct res r;
	unsigned int i, tr, k;
	int ret = 0;
	uint32_t key = s->key[job];
	const char *what = "open";
	uint64_t deadline;

	memset(w, 0, sizeof(w));
	memset(&x, 0, sizeof(x));
	for (i = 0; !ret && i < JOB_WIN; i++)
		ret = mem_open(&w[i], i, job, key, PERCS_FIFO_DEF_SIZE);
	if (!ret)	/* a window of this job in none of its trees */
		ret = mem_open(&x, 12, job, key, PERCS_FIFO_DEF_SIZE);
	what = "create";
	for (tr = 0; !ret && tr < 2; tr++) {
		unsigned int f = tj_first[job][tr];

		for (i = 0; i < tj_n[tr]; i++)
			a[i] = w[f + i].a;
		ret = cau_create(w[f].fd, tj_flags[job][tr], a,
				 tj_parent[job][tr], tj_n[tr], &s->tree[job][tr]);
		for (i = 1; !ret && i < tj_n[tr]; i++)
			ret = cau_tree_op(w[f + i].fd, PERCS_IOC_CAU_JOIN,
					  s->tree[job][tr]);
	}
	if (ret)
		goto out;
	/* Both jobs' trees exist: go. */
	__atomic_add_fetch(&s->ready, 1, __ATOMIC_SEQ_CST);
	deadline = pt_now_ms() + 30000;
	while (__atomic_load_n(&s->ready, __ATOMIC_SEQ_CST) < 2 && !s->fail) {
		if (pt_now_ms() > deadline) {
			ret = -ETIMEDOUT;
			goto out;
		}
		usleep(200);
	}
	for (k = 1; !ret && k <= s->rounds; k++) {
		/* Half way, post to the other job's tree: -EPERM. */
		if (k == s->rounds / 2 + 1) {
			what = "other job's tree";
			uint64_t v = 1;

			ret = post(w[0].w, s->tree[!job][0], PERCS_COLL_ALLREDUCE,
				   PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1, &v,
				   0xe1);
			if (!ret && (!cqe_wait(w[0].w, &c, WAIT_MS) ||
				     c.res != -EPERM || c.user_data != 0xe1)) {
				fprintf(stderr, "# job %d: other job's tree: res %d\n",
					job, c.res);
				ret = -EPROTO;
			}
			what = "non-member of own tree";
			if (!ret)
				ret = post(x.w, s->tree[job][1],
					   PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM,
					   PERCS_CAU_T_U64, 1, &v, 0xe2);
			if (!ret && (!cqe_wait(x.w, &c, WAIT_MS) ||
				     c.res != -EPERM || c.user_data != 0xe2)) {
				fprintf(stderr, "# job %d: non-member: res %d\n",
					job, c.res);
				ret = -EPROTO;
			}
			__atomic_add_fetch(&s->eperm_done, 1, __ATOMIC_SEQ_CST);
		}
		what = "post";
		for (tr = 0; !ret && tr < 2; tr++)
			for (i = 0; !ret && i < tj_n[tr]; i++) {
				uint64_t v = tj_val(job, tr, k, i);

				ret = post(w[tj_first[job][tr] + i].w,
					   s->tree[job][tr],
					   tr ? PERCS_COLL_ALLREDUCE :
					   (k % 3 ? PERCS_COLL_ALLREDUCE :
						    PERCS_COLL_BARRIER),
					   tr || k % 3 ? PERCS_CAU_OP_SUM : 0,
					   PERCS_CAU_T_U64, tr || k % 3 ? 1 : 0,
					   &v, (uint32_t)(k << 8 | tr << 4 | i));
			}
		what = "result";
		for (i = 0; !ret && i < JOB_WIN; i++) {
			unsigned int want = 1 + (i >= tj_first[job][1] &&
						 i < tj_first[job][1] + tj_n[1]);
			bool seen[2] = { false, false };

			for (unsigned int g = 0; !ret && g < want; g++) {
				uint64_t sum = 0, got;
				unsigned int m;

				ret = res_recv(w[i].w, &r, WAIT_MS);
				if (ret)
					break;
				tr = r.e.tree == s->tree[job][1];
				if ((!tr && r.e.tree != s->tree[job][0]) ||
				    seen[tr] || r.e.seq != k || r.e.status ||
				    r.h.job_key != key) {
					fprintf(stderr,
						"# job %d window %u round %u: tree %u seq %llu status %d key %u\n",
						job, i, k, r.e.tree,
						(unsigned long long)r.e.seq,
						r.e.status, r.h.job_key);
					ret = -EPROTO;
					break;
				}
				seen[tr] = true;
				m = i - tj_first[job][tr];
				if (r.h.tag != (uint32_t)(k << 8 | tr << 4 | m)) {
					ret = -EPROTO;
					break;
				}
				if (!tr && k % 3 == 0) {
					sum = 0;	/* a barrier */
				} else {
					for (m = 0; m < tj_n[tr]; m++)
						sum += tj_val(job, tr, k, m);
				}
				memcpy(&got, r.data, 8);
				s->checked[job]++;
				if (got != sum) {
					fprintf(stderr,
						"# job %d tree %u round %u: sum 0x%llx, want 0x%llx\n",
						job, tr, k,
						(unsigned long long)got,
						(unsigned long long)sum);
					ret = -EPROTO;
				}
			}
		}
	}
	what = "end";
	for (i = 0; !ret && i < JOB_WIN; i++)
		if (!res_none(w[i].w, 1))
			ret = -EPROTO;
	/* Wait for the other job before a release ends anything. */
	__atomic_add_fetch(&s->ready, 1, __ATOMIC_SEQ_CST);
	deadline = pt_now_ms() + 60000;
	while (!ret && __atomic_load_n(&s->ready, __ATOMIC_SEQ_CST) < 4 &&
	       !s->fail && pt_now_ms() < deadline)
		usleep(200);
out:
	if (ret) {
		fprintf(stderr, "# job %d: %s: %d (%s)\n", job, what, ret,
			percs_strerror(ret));
		__atomic_store_n(&s->fail, 1, __ATOMIC_SEQ_CST);
	}
	for (i = 0; i < JOB_WIN; i++)
		mem_close(&w[i]);
	mem_close(&x);
	return ret ? 1 : 0;
}

TEST_F_TIMEOUT(coll, four_trees_two_jobs, 120)
{
	struct twojob *s = pt_shared_alloc(sizeof(*s));
	uint64_t t0 = pt_now_ms();

	SKIPPED();
	ASSERT_NE(NULL, s);
	s->key[0] = pt_new_key();
	s->key[1] = pt_new_key();
	s->rounds = pt_scale(2000);
	ASSERT_EQ(0, pt_fork_n(2, tj_child, s, 110000));
	EXPECT_EQ(2, s->eperm_done);
	EXPECT_EQ((long)s->rounds * (JOB_WIN + 5), s->checked[0]);
	EXPECT_EQ((long)s->rounds * (JOB_WIN + 5), s->checked[1]);
	TH_LOG("2 jobs x 2 trees x %u rounds: %llu ms", s->rounds,
	       (unsigned long long)(pt_now_ms() - t0));
	munmap(s, sizeof(*s));
}

/* ------------------------------------------------------------------ */
/* A tree ended while its members wait for a result. */

struct td {
	uint32_t key;
	struct percs_addr a;
	uint32_t tree;
	int stage;
	bool destroy;
	int res;
};

static int td_wait(struct td *s, int stage)
{
	uint64_t deadline = pt_now_ms() + 30000;

	while (__atomic_load_n(&s->stage, __ATOMIC_SEQ_CST) < stage) {
		if (pt_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(200);
	}
	return 0;
}

/* The member that never posts: joins, then destroys or closes. */
static int td_child(int idx, void *arg)
{
	struct td *s = arg;
	struct mem m;
	int ret;

	ret = mem_open(&m, 13, 1, s->key, PERCS_FIFO_DEF_SIZE);
	if (ret)
		return 1;
	s->a = m.a;
	__atomic_store_n(&s->stage, 1, __ATOMIC_SEQ_CST);
	if (td_wait(s, 2))
		return 1;
	ret = cau_tree_op(m.fd, PERCS_IOC_CAU_JOIN, s->tree);
	__atomic_store_n(&s->stage, 3, __ATOMIC_SEQ_CST);
	if (ret || td_wait(s, 4))
		return 1;
	if (s->destroy)
		s->res = cau_tree_op(m.fd, PERCS_IOC_CAU_DESTROY, s->tree);
	else
		s->res = 0;
	/* The process ends: its window closes (which ends the tree). */
	return 0;
}

#define TD_DESTROY	1	/* DESTROY, else the member's process exits */
#define TD_FAULTS	2	/* drop/dup/reorder: transfers held */
#define TD_STRICT	4	/* the waiting 17th completes with no kick */
#define TD_POLL		8	/* member 1's window in poll mode */

/*
 * A tree of five members over two processes; members 0..3 (this process)
 * have 16 operations in flight, member 1 a 17th waiting in its send FIFO,
 * member 4 (a child) never posts and ends the tree (@mode).  Every waiting
 * member gets one -ECONNRESET entry naming the tree, no result; the 17th
 * completes with -ENOENT (with TD_STRICT, by itself: a program waiting in
 * percs_wait() would hang otherwise); the tree is gone (cau_trees 0, a
 * new post -ENOENT).
 */
static void teardown_while_waiting(struct __test_metadata *_metadata,
				   unsigned int mode)
{
	const bool destroy = mode & TD_DESTROY, faults = mode & TD_FAULTS;
	struct td *s = pt_shared_alloc(sizeof(*s));
	struct mem m[4];
	struct percs_addr a[5];
	static const uint32_t parent[5] = { ROOT, 0, 0, 1, 2 };
	static const unsigned int hub[4] = { 0, 6, 9, 15 };
	struct percs_cqe c;
	struct pt_live live;
	struct desc d;
	uint32_t key = pt_new_key();
	uint64_t v = 1, t0;
	pid_t pid;
	bool kicked = false;
	unsigned int i, k;

	ASSERT_NE(NULL, s);
	s->key = key;
	s->destroy = destroy;
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, mem_open_flags(&m[i], hub[i], 0, key,
					    PERCS_FIFO_DEF_SIZE,
					    i == 1 && (mode & TD_POLL) ?
					    PERCS_WINDOW_F_POLL : 0));
	}
	ASSERT_EQ(0, pt_fork_start(1, td_child, s, &pid));
	ASSERT_EQ(0, td_wait(s, 1));
	for (i = 0; i < 4; i++)
		a[i] = m[i].a;
	a[4] = s->a;
	ASSERT_EQ(0, cau_create(m[0].fd, faults ? PERCS_CAU_F_ORDERED : 0, a,
				parent, 5, &s->tree));
	for (i = 1; i < 4; i++) {
		ASSERT_EQ(0, cau_tree_op(m[i].fd, PERCS_IOC_CAU_JOIN, s->tree));
	}
	__atomic_store_n(&s->stage, 2, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, td_wait(s, 3));
	if (faults) {
		ASSERT_EQ(0, pt_isr_set("hold_us", 20000));
		ASSERT_EQ(0, pt_isr_set("reorder_ppm", 500000));
		ASSERT_EQ(0, pt_isr_set("dup_ppm", 200000));
		ASSERT_EQ(0, pt_isr_set("drop_ppm", 200000));
	}
	/* 16 operations in flight at every posting member, a 17th waiting. */
	for (i = 0; i < 4; i++)
		for (k = 1; k <= INFL + (i == 1); k++) {
			ASSERT_EQ(0, post(m[i].w, s->tree, PERCS_COLL_ALLREDUCE,
					  PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1,
					  &v, k));
		}
	usleep(50000);
	for (i = 0; i < 4; i++) {
		EXPECT_TRUE(res_none(m[i].w, 1));
	}
	__atomic_store_n(&s->stage, 4, __ATOMIC_SEQ_CST);
	t0 = pt_now_ms();
	ASSERT_EQ(0, pt_fork_wait(1, &pid, 30000));
	EXPECT_EQ(0, s->res);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, cqe_wait(m[i].w, &c, WAIT_MS)) {
			TH_LOG("member %u: no completion after the tree ended", i);
		}
		EXPECT_EQ(-ECONNRESET, c.res);
		EXPECT_EQ(s->tree, c.user_data);
		EXPECT_EQ(PERCS_PKT_COLL, c.kind);
	}
	TH_LOG("-ECONNRESET at all 4 waiting members %llu ms after the %s",
	       (unsigned long long)(pt_now_ms() - t0),
	       destroy ? "DESTROY" : "close");
	/*
	 * Member 1's 17th descriptor, which waited in its send FIFO for a
	 * slot: it completes too (the tree is gone: -ENOENT), nothing hangs.
	 */
	if (!(mode & TD_STRICT))
		percs_kick(m[1].w, PERCS_KICK_F_SEND);
	if (!cqe_wait(m[1].w, &c, 2000)) {
		kicked = true;
		percs_kick(m[1].w, PERCS_KICK_F_SEND);
		ASSERT_EQ(1, cqe_wait(m[1].w, &c, WAIT_MS)) {
			TH_LOG("the waiting 17th descriptor never completed");
		}
	}
	EXPECT_EQ(-ENOENT, c.res);
	EXPECT_EQ(INFL + 1, c.user_data);
	EXPECT_FALSE(kicked) {
		TH_LOG("the 17th descriptor (%s window), waiting in the send FIFO for a slot, was still there 2 s after the tree ended: it completed only after another kick",
		       mode & TD_POLL ? "poll-mode" : "kick-mode");
	}
	if (faults)
		pt_faults_set(0);
	/* No results after the end, no other entries. */
	for (i = 0; i < 4; i++) {
		EXPECT_TRUE(res_none(m[i].w, 50));
		EXPECT_EQ(0, percs_cq_poll(m[i].w, &c, 1)) {
			TH_LOG("member %u: extra entry res %d user_data %llu", i,
			       c.res, (unsigned long long)c.user_data);
		}
	}
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(0, live.cau_trees);
	/* Gone for everyone: a post now is -ENOENT. */
	desc_make(&d, s->tree, PERCS_COLL_BARRIER, 0, 0, 0, NULL, 77);
	ASSERT_EQ(0, desc_post(m[2].w, &d));
	ASSERT_EQ(1, cqe_wait(m[2].w, &c, WAIT_MS));
	EXPECT_EQ(-ENOENT, c.res);
	for (i = 0; i < 4; i++)
		mem_close(&m[i]);
	munmap(s, sizeof(*s));
}

TEST_F_TIMEOUT(coll, destroyed_while_members_wait, 60)
{
	SKIPPED();
	teardown_while_waiting(_metadata, TD_DESTROY);
}

TEST_F_TIMEOUT(coll, member_closed_while_members_wait, 60)
{
	SKIPPED();
	teardown_while_waiting(_metadata, 0);
}

TEST_F_TIMEOUT(coll, member_closed_while_transfers_held_by_faults, 60)
{
	SKIPPED();
	teardown_while_waiting(_metadata, TD_FAULTS);
}

/*
 * The descriptor that waits in the send FIFO for a slot when the tree
 * ends: it must complete (-ENOENT) without the program kicking again, as
 * the tree's slot-free wake-up would have taken it.
 */
TEST_F_TIMEOUT(coll, waiting_descriptor_completes_when_tree_ends, 60)
{
	SKIPPED();
	teardown_while_waiting(_metadata, TD_DESTROY | TD_STRICT);
}

TEST_F_TIMEOUT(coll, waiting_descriptor_completes_when_tree_ends_poll, 60)
{
	SKIPPED();
	teardown_while_waiting(_metadata, TD_STRICT | TD_POLL);
}

/* ------------------------------------------------------------------ */
/* Drop, duplicate and reorder injection. */

#define FLT_N		8

struct flt_arg {
	unsigned int nops;
	long ooo[FLT_N];		/* results that came out of order */
	long ms[FLT_N];
};

/* Operation k's kind, and member m's input; the expected result. */
static void flt_op(uint64_t k, unsigned int *coll, unsigned int *op,
		   unsigned int *type, unsigned int *count)
{
	static const struct {
		unsigned int coll, op, type, count;
	} kinds[] = {
		{ PERCS_COLL_BARRIER, PERCS_CAU_OP_NOP, PERCS_CAU_T_S32, 0 },
		{ PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 8 },
		{ PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_MAX, PERCS_CAU_T_S32, 16 },
		{ PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_XOR, PERCS_CAU_T_U32, 16 },
		{ PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_F64, 8 },
		{ PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_MIN, PERCS_CAU_T_S64, 3 },
	};
	unsigned int i = k % ARRAY_SIZE(kinds);

	*coll = kinds[i].coll;
	*op = kinds[i].op;
	*type = kinds[i].type;
	*count = kinds[i].count;
}

/*
 * Member @m's input of operation @k.  Float sums: exact in any order, or
 * (@ordered tree) random values whose sum depends on the order.
 */
static void flt_input(uint64_t k, unsigned int m, bool ordered, uint8_t *out)
{
	unsigned int coll, op, type, count, size;

	flt_op(k, &coll, &op, &type, &count);
	size = esize(type);
	memset(out, 0, PAY);
	for (unsigned int l = 0; l < count; l++) {
		uint64_t r = mix(k, m, l);

		if (type == PERCS_CAU_T_F64 && ordered)
			st(out + l * size, size, rand_float(type, r, mix(l, k, m)));
		else if (type == PERCS_CAU_T_F64)
			st(out + l * size, size,
			   bits_f64((double)(int)(r % 2001) - 1000.0));
		else
			st(out + l * size, size, r);
	}
}

static int flt_body(struct job *j, unsigned int idx, struct mem *m)
{
	struct flt_arg *a = j->arg;
	const uint64_t n = a->nops;
	uint8_t *seen = calloc(n + 1, 1);
	uint8_t in[FLT_N][PAY], want[PAY];
	uint64_t posted = 0, got = 0, last = 0, t0 = pt_now_ms();
	unsigned int coll, op, type, count;
	struct want x = { .tree = j->tree, .key = j->key, .fields = true };
	struct res r;
	char why[256];
	int ret = 0;

	if (!seen)
		return -ENOMEM;
	x.src = j->addr[root_of(j->n, j->parent)];
	while (!ret && got < n) {
		while (!ret && posted < n && posted - got < INFL) {
			posted++;
			flt_op(posted, &coll, &op, &type, &count);
			flt_input(posted, idx, j->flags, in[idx]);
			ret = post(m->w, j->tree, coll, op, type, count,
				   in[idx], (uint32_t)posted);
		}
		if (ret)
			break;
		ret = res_recv(m->w, &r, FAULT_MS);
		if (ret) {
			fprintf(stderr, "# member %u: posted %llu, received %llu: %d\n",
				idx, (unsigned long long)posted,
				(unsigned long long)got, ret);
			break;
		}
		if (r.e.seq < 1 || r.e.seq > posted || seen[r.e.seq]) {
			fprintf(stderr, "# member %u: seq %llu (posted %llu, seen %u)\n",
				idx, (unsigned long long)r.e.seq,
				(unsigned long long)posted,
				r.e.seq <= n ? seen[r.e.seq] : 0);
			ret = -EPROTO;
			break;
		}
		seen[r.e.seq] = 1;
		if (r.e.seq != last + 1)
			a->ooo[idx]++;
		last = r.e.seq;
		got++;
		flt_op(r.e.seq, &coll, &op, &type, &count);
		for (unsigned int i = 0; i < j->n; i++)
			flt_input(r.e.seq, i, j->flags, in[i]);
		ref_result(j->n, j->parent, coll, op, type, count, in, want);
		x.coll = coll;
		x.op = op;
		x.type = type;
		x.count = count;
		x.seq = r.e.seq;
		x.tag = (uint32_t)r.e.seq;
		x.data = want;
		if (res_check(&r, &x, why, sizeof(why))) {
			fprintf(stderr, "# member %u seq %llu: %s\n", idx,
				(unsigned long long)r.e.seq, why);
			ret = -EPROTO;
		}
		if (job_failed(j))
			ret = -ECANCELED;
	}
	a->ms[idx] = pt_now_ms() - t0;
	/* Everyone done: nothing more may arrive (no extra copy). */
	if (!ret)
		ret = job_barrier(j, 4);
	if (!ret && !res_none(m->w, 200)) {
		ret = res_recv(m->w, &r, 1);
		fprintf(stderr, "# member %u: an extra result seq %llu after all %llu\n",
			idx, (unsigned long long)r.e.seq, (unsigned long long)n);
		ret = -EPROTO;
	}
	free(seen);
	return ret;
}

/*
 * @nops operations (allreduces of four kinds and barriers, 16 in flight per
 * member) over 8 processes on a tree of @flags, 2% of the transfers
 * dropped, 2% duplicated and 2% delayed: every member gets every result
 * exactly once, right (an ordered tree's random float sums bit for bit in
 * member order), nothing after the last; the injection's counters grew.
 */
static void faulty_job(struct __test_metadata *_metadata, uint32_t flags,
		       uint32_t poll, unsigned int nops)
{
	static const uint32_t parent[FLT_N] = { ROOT, 0, 0, 1, 1, 2, 2, 3 };
	static const unsigned int hub[FLT_N] = { 0, 3, 5, 6, 9, 10, 12, 15 };
	struct flt_arg *a = pt_shared_alloc(sizeof(*a));
	struct pt_atomic_stats s0, s1;
	long drops0, ooo = 0, ms = 0;
	struct job *j;
	uint64_t t0;

	ASSERT_NE(NULL, a);
	a->nops = nops;
	j = job_new(FLT_N, flags, parent, hub, flt_body, a);
	ASSERT_NE(NULL, j);
	j->poll = poll;
	ASSERT_EQ(0, pt_read_atomic_stats(&s0));
	drops0 = pt_isr_links_sum("drops");
	ASSERT_EQ(0, pt_faults_set(20000));
	t0 = pt_now_ms();
	EXPECT_EQ(0, pt_fork_n(FLT_N, job_child, j, 200000));
	pt_faults_set(0);
	ASSERT_EQ(0, pt_read_atomic_stats(&s1));
	for (unsigned int i = 0; i < FLT_N; i++) {
		ooo += a->ooo[i];
		ms = a->ms[i] > ms ? a->ms[i] : ms;
	}
	TH_LOG("%s tree: %u operations x %d processes, 2%% drop+dup+reorder: %llu ms (slowest member %ld ms); dropped %ld duplicated %ld delayed %ld; link drops %ld; %ld results arrived out of seq order",
	       flags ? "ordered" : "unordered", a->nops, FLT_N,
	       (unsigned long long)(pt_now_ms() - t0), ms,
	       s1.dropped - s0.dropped, s1.duplicated - s0.duplicated,
	       s1.delayed - s0.delayed, pt_isr_links_sum("drops") - drops0,
	       ooo);
	EXPECT_LT(0, s1.dropped - s0.dropped);
	EXPECT_LT(0, s1.duplicated - s0.duplicated);
	EXPECT_LT(0, s1.delayed - s0.delayed);
	munmap(j, sizeof(*j));
	munmap(a, sizeof(*a));
}

TEST_F_TIMEOUT(coll, allreduce_under_drop_dup_reorder, 240)
{
	SKIPPED();
	faulty_job(_metadata, 0, 0, pt_scale(10000));
}

TEST_F_TIMEOUT(coll, ordered_allreduce_under_drop_dup_reorder, 120)
{
	SKIPPED();
	/* Two members' windows in poll mode (the HFI's thread posts). */
	faulty_job(_metadata, PERCS_CAU_F_ORDERED, 1U << 2 | 1U << 7,
		   pt_scale(3000));
}

/* ------------------------------------------------------------------ */
/* Multicast (PERCS_COLL_MCAST): from any member to every other. */

/* Origin @o's @k-th multicast: its type, count and data (zero beyond). */
static void mc_make(unsigned int o, uint64_t k, unsigned int *type,
		    unsigned int *count, uint8_t *data)
{
	uint64_t r = mix(o, k, 0x6d63);
	unsigned int size;

	*type = r % (PERCS_CAU_T_LAST + 1);
	size = esize(*type);
	*count = (r >> 8) % (maxcount(*type) + 1);
	if ((o + k) % 7 == 0)
		*count = 0;	/* a multicast may carry no data */
	else if ((o + k) % 7 == 1)
		*count = maxcount(*type);
	memset(data, 0, PAY);
	for (unsigned int l = 0; l < *count; l++)
		st(data + l * size, size, mix(o, k, l + 1));
}

static uint32_t mc_tag(unsigned int o, uint64_t k)
{
	return (uint32_t)(o << 24 | (k & 0xffffff));
}

static void mc_desc(struct desc *d, uint32_t tree, unsigned int o, uint64_t k,
		    bool notify)
{
	unsigned int type, count;
	uint8_t data[PAY];

	mc_make(o, k, &type, &count, data);
	desc_make(d, tree, PERCS_COLL_MCAST, PERCS_CAU_OP_NOP, type, count,
		  data, mc_tag(o, k));
	if (notify)
		d->h.flags |= PERCS_PKT_F_NOTIFY;
}

/* Post member @o's @k-th multicast, waiting for room in the send FIFO. */
static int mc_post(struct percs_window *w, uint32_t tree, unsigned int o,
		   uint64_t k)
{
	struct desc d;

	mc_desc(&d, tree, o, k, false);
	return desc_post(w, &d);
}

/* The same without waiting: -EAGAIN when the send FIFO is full. */
static int mc_try(struct percs_window *w, uint32_t tree, unsigned int o,
		  uint64_t k)
{
	struct desc d;
	int ret;

	mc_desc(&d, tree, o, k, false);
	ret = percs_send_compose_hdr(w, &d.h, d.body, d.len);
	return ret ? ret : percs_send_trigger(w);
}

/*
 * What a member (@me of @n, windows @a) receives: a multicast of some
 * other member, the next one of that origin (next[origin], from 1), with
 * the origin's tag, type, count and data.  Return: the origin, or -1 with
 * the reason in @why.
 */
static int mc_check(const struct res *r, uint32_t tree, uint32_t key,
		    const struct percs_addr *a, unsigned int n, unsigned int me,
		    uint64_t *next, char *why, size_t cap)
{
	unsigned int o, type, count;
	uint8_t want[PAY];

	for (o = 0; o < n; o++)
		if (pt_addr_eq(&r->h.src, &a[o]))
			break;
	if (r->h.kind != PERCS_PKT_COLL || r->len != RES_LEN ||
	    r->h.length != RES_LEN || r->e.coll != PERCS_COLL_MCAST) {
		snprintf(why, cap, "kind %u length %u coll %u: not a multicast",
			 r->h.kind, r->h.length, r->e.coll);
		return -1;
	}
	if (o == n || o == me) {
		snprintf(why, cap, "from %u.%u.%u (%s)", r->h.src.hub,
			 r->h.src.hfi, r->h.src.window,
			 o == me ? "itself" : "not a member");
		return -1;
	}
	if (r->e.seq != next[o]) {
		snprintf(why, cap, "from member %u: seq %llu, want %llu%s", o,
			 (unsigned long long)r->e.seq,
			 (unsigned long long)next[o],
			 r->e.seq < next[o] ? " (again)" : " (out of order)");
		return -1;
	}
	mc_make(o, r->e.seq, &type, &count, want);
	if (r->e.tree != tree || r->e.op != PERCS_CAU_OP_NOP ||
	    r->e.type != type || r->e.count != count || r->e.status ||
	    r->e.reserved || r->h.tag != mc_tag(o, r->e.seq) ||
	    r->h.job_key != key) {
		snprintf(why, cap,
			 "from member %u seq %llu: tree %u op %u type %u count %u status %d tag 0x%x key %u, want tree %u op 0 type %u count %u tag 0x%x key %u",
			 o, (unsigned long long)r->e.seq, r->e.tree, r->e.op,
			 r->e.type, r->e.count, r->e.status, r->h.tag, r->h.job_key,
			 tree, type, count, mc_tag(o, r->e.seq), key);
		return -1;
	}
	if (memcmp(r->data, want, PAY)) {
		snprintf(why, cap, "from member %u seq %llu: data differs",
			 o, (unsigned long long)r->e.seq);
		return -1;
	}
	next[o]++;
	return (int)o;
}

/** struct mc_stats - a tree's multicast counters in percs/cau */
struct mc_stats {
	unsigned long long posted, delivered, resent, refused;
};

static int mc_stats(uint32_t tree, struct mc_stats *s)
{
	static char text[64 * 1024];
	char *line, *save;

	if (pt_cau_read(text, sizeof(text)) < 0)
		return -EIO;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int id, fl, key, nr;

		if (sscanf(line, "tree %u flags %u job_key %u members %u mcast posted %llu delivered %llu resent %llu refused %llu",
			   &id, &fl, &key, &nr, &s->posted, &s->delivered,
			   &s->resent, &s->refused) == 8 && id == tree)
			return 0;
	}
	return -ENOENT;
}

/*
 * Every member of a 16-member tree multicasts (every type, counts 0 to
 * the most): every other member gets each exactly once, with the origin's
 * window as src, its tag, its n-th as seq and its data; the origin never
 * gets its own.  Binary, chain rooted in the middle, star rooted at a
 * leaf's index; then a single-member tree, where a multicast reaches
 * nobody.  percs/cau counts them.
 */
TEST_F_TIMEOUT(coll, mcast_every_member_to_every_other, 120)
{
	const unsigned int K = 3;
	struct pool p;
	struct tree trees[] = {
		{ .name = "binary16", .n = 16,
		  .parent = { ROOT, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
			      6, 7 } },
		{ .name = "chain16-root-7", .n = 16,
		  .parent = { 1, 2, 3, 4, 5, 6, 7, ROOT, 7, 8, 9, 10, 11, 12,
			      13, 14 } },
		{ .name = "star16-root-5", .n = 16,
		  .parent = { 5, 5, 5, 5, 5, ROOT, 5, 5, 5, 5, 5, 5, 5, 5,
			      5, 5 } },
	};
	struct percs_addr a[MAXM];
	struct mc_stats s;
	struct percs_cqe c;
	struct res r;
	char why[256];

	SKIPPED();
	ASSERT_EQ(0, pool_open(&p, 16, PERCS_FIFO_DEF_SIZE));
	for (unsigned int ti = 0; ti < ARRAY_SIZE(trees); ti++) {
		struct tree *t = &trees[ti];
		uint64_t next[MAXM][MAXM];
		unsigned int got = 0, bad = 0;

		for (unsigned int i = 0; i < t->n; i++) {
			t->m[i] = &p.m[i];
			a[i] = p.m[i].a;
			for (unsigned int o = 0; o < t->n; o++)
				next[i][o] = 1;
		}
		t->key = p.key;
		ASSERT_EQ(0, tree_setup(t));
		for (uint64_t k = 1; k <= K; k++)
			for (unsigned int i = 0; i < t->n; i++)
				ASSERT_EQ(0, mc_post(t->m[i]->w, t->id, i, k));
		for (unsigned int i = 0; i < t->n; i++) {
			for (unsigned int j = 0; j < (t->n - 1) * K; j++) {
				ASSERT_EQ(0, res_recv(t->m[i]->w, &r, WAIT_MS)) {
					TH_LOG("%s: member %u: %u of %u multicasts",
					       t->name, i, j, (t->n - 1) * K);
				}
				if (mc_check(&r, t->id, t->key, a, t->n, i,
					     next[i], why, sizeof(why)) < 0) {
					if (!bad++)
						TH_LOG("%s: member %u: %s",
						       t->name, i, why);
				} else {
					got++;
				}
			}
		}
		EXPECT_EQ(0, bad);
		EXPECT_EQ(t->n * (t->n - 1) * K, got);
		for (unsigned int i = 0; i < t->n; i++) {
			EXPECT_TRUE(res_none(t->m[i]->w, QUIET_MS)) {
				TH_LOG("%s: member %u: a packet more", t->name, i);
			}
			EXPECT_EQ(0, percs_cq_poll(t->m[i]->w, &c, 1));
		}
		ASSERT_EQ(0, mc_stats(t->id, &s));
		EXPECT_EQ(t->n * K, s.posted);
		EXPECT_EQ(t->n * (t->n - 1) * K, s.delivered);
		TH_LOG("%s: %u multicasts, %llu deliveries, %llu resent, %llu refused",
		       t->name, t->n * K, s.delivered, s.resent, s.refused);
		EXPECT_EQ(0, tree_end_check(_metadata, t));
	}
	/* A lone member: accepted (NOTIFY: res 0), delivered to nobody. */
	{
		struct tree t1 = { .name = "single", .n = 1,
				   .parent = { ROOT } };
		struct desc d;

		t1.m[0] = &p.m[3];
		t1.key = p.key;
		ASSERT_EQ(0, tree_setup(&t1));
		for (uint64_t k = 1; k <= 2 * INFL; k++) {
			mc_desc(&d, t1.id, 0, k, true);
			ASSERT_EQ(0, desc_post(p.m[3].w, &d));
			ASSERT_EQ(1, cqe_wait(p.m[3].w, &c, WAIT_MS));
			EXPECT_EQ(0, c.res);
			EXPECT_EQ(mc_tag(0, k), c.user_data);
		}
		EXPECT_TRUE(res_none(p.m[3].w, QUIET_MS));
		ASSERT_EQ(0, mc_stats(t1.id, &s));
		EXPECT_EQ(2 * INFL, s.posted);
		EXPECT_EQ(0, s.delivered);
		EXPECT_EQ(0, cau_tree_op(p.m[3].fd, PERCS_IOC_CAU_DESTROY,
					 t1.id));
	}
	pool_close(&p);
}

/*
 * A multicast job: members of @origins send @per multicasts each while
 * every member reads what comes, checking each (mc_check(): exactly once,
 * in its origin's order, right data), until it has all the others';
 * then nothing more may come.  @slow_us: a reader pauses up to this long
 * after each packet; @hold_ms: nobody reads at first, so the FIFOs and
 * then the nodes' buffers fill.  Sends never wait for the send FIFO (a
 * member that stopped reading while its sends wait could stall the tree).
 */
struct mc_arg {
	uint32_t origins;	/* a bit per member */
	uint32_t poll;		/* a bit per member: poll-mode window */
	unsigned int per;	/* multicasts of each origin */
	unsigned int slow_us;
	unsigned int hold_ms;	/* nobody reads for this long at first */
	long got[MAXM];
	long ms[MAXM];
	struct mc_stats st;	/* the tree's counters at the end */
	int st_err;
};

static int mc_body(struct job *j, unsigned int idx, struct mem *m)
{
	struct mc_arg *a = j->arg;
	uint64_t next[MAXM], sent = 0, t0 = pt_now_ms();
	uint64_t deadline = t0 + 4 * FAULT_MS;
	unsigned int seed = (unsigned int)mix(getpid(), idx, t0);
	bool origin = a->origins & (1U << idx);
	long want = 0, got = 0;
	struct res r;
	char why[256];
	int ret = 0;

	for (unsigned int o = 0; o < j->n; o++) {
		next[o] = 1;
		if (o != idx && (a->origins & (1U << o)))
			want += a->per;
	}
	while (!ret && (got < want || (origin && sent < a->per))) {
		if (origin && sent < a->per) {
			ret = mc_try(m->w, j->tree, idx, sent + 1);
			if (!ret)
				sent++;
			else if (ret == -EAGAIN)
				ret = percs_kick(m->w, PERCS_KICK_F_SEND) < 0 ?
				      -EIO : 0;
			if (ret)
				break;
		}
		while (!ret && pt_now_ms() - t0 >= a->hold_ms &&
		       !res_recv(m->w, &r, 0)) {
			if (mc_check(&r, j->tree, j->key, j->addr, j->n, idx,
				     next, why, sizeof(why)) < 0) {
				fprintf(stderr, "# member %u: %s\n", idx, why);
				ret = -EPROTO;
			}
			got++;
			if (a->slow_us)
				usleep(rand_r(&seed) % a->slow_us);
		}
		if (job_failed(j))
			ret = -ECANCELED;
		if (!ret && pt_now_ms() > deadline) {
			fprintf(stderr, "# member %u: sent %llu of %u, received %ld of %ld\n",
				idx, (unsigned long long)sent, a->per, got,
				want);
			ret = -ETIMEDOUT;
		}
		if (!ret && (!origin || sent == a->per) && got < want &&
		    !percs_recv_peek(m->w))
			usleep(100);
	}
	a->got[idx] = got;
	a->ms[idx] = pt_now_ms() - t0;
	if (!ret)
		ret = job_barrier(j, 4);
	if (!ret && idx == 0)
		a->st_err = mc_stats(j->tree, &a->st);
	if (!ret && !res_none(m->w, 100)) {
		res_recv(m->w, &r, 1);
		fprintf(stderr, "# member %u: a packet more (coll %u seq %llu)\n",
			idx, r.e.coll, (unsigned long long)r.e.seq);
		ret = -EPROTO;
	}
	return ret;
}

/*
 * Run a multicast job of @n processes on a tree of @parent over @hub;
 * with @faults, 2% of the CAU's transfers dropped, duplicated and
 * delayed.  The tree's percs/cau counters in *@s (read by the last
 * member before the tree ends: a job's tree ends with its processes).
 */
static void mc_job(struct __test_metadata *_metadata, const char *name,
		   unsigned int n, const uint32_t *parent,
		   const unsigned int *hub, uint32_t rx, struct mc_arg *a,
		   bool faults)
{
	struct pt_atomic_stats s0, s1;
	long got = 0, want = 0, ms = 0;
	struct job *j;
	uint64_t t0;

	j = job_new(n, 0, parent, hub, mc_body, a);
	ASSERT_NE(NULL, j);
	j->rx = rx;
	j->poll = a->poll;
	ASSERT_EQ(0, pt_read_atomic_stats(&s0));
	if (faults)
		ASSERT_EQ(0, pt_faults_set(20000));
	t0 = pt_now_ms();
	EXPECT_EQ(0, pt_fork_n(n, job_child, j, 400000));
	pt_faults_set(0);
	ASSERT_EQ(0, pt_read_atomic_stats(&s1));
	for (unsigned int i = 0; i < n; i++) {
		unsigned int others = __builtin_popcount(a->origins &
							 ~(1U << i));

		got += a->got[i];
		want += (long)others * a->per;
		ms = a->ms[i] > ms ? a->ms[i] : ms;
	}
	TH_LOG("%s: %u origins x %u multicasts, %u members: %ld of %ld deliveries in %llu ms (slowest member %ld ms)%s",
	       name, __builtin_popcount(a->origins), a->per, n, got, want,
	       (unsigned long long)(pt_now_ms() - t0), ms,
	       faults ? "; 2% drop+dup+reorder" : "");
	EXPECT_EQ(want, got);
	ASSERT_EQ(0, a->st_err);
	TH_LOG("percs/cau: posted %llu delivered %llu resent %llu refused %llu",
	       a->st.posted, a->st.delivered, a->st.resent, a->st.refused);
	EXPECT_EQ(__builtin_popcount(a->origins) * a->per, a->st.posted);
	EXPECT_EQ(want, a->st.delivered);
	if (faults) {
		TH_LOG("dropped %lld duplicated %lld delayed %lld",
		       (long long)(s1.dropped - s0.dropped),
		       (long long)(s1.duplicated - s0.duplicated),
		       (long long)(s1.delayed - s0.delayed));
		EXPECT_LT(0, s1.dropped - s0.dropped);
		EXPECT_LT(0, s1.duplicated - s0.duplicated);
		EXPECT_LT(0, s1.delayed - s0.delayed);
	}
	munmap(j, sizeof(*j));
}

/*
 * Four origins of 16 members multicast at once: every member gets each
 * origin's multicasts in that origin's order (no order between origins
 * is promised, none is checked).  Two origins and two other members have
 * poll-mode windows (the HFI's thread posts, and is woken for a buffer).
 */
TEST_F_TIMEOUT(coll, mcast_per_origin_order_several_origins, 180)
{
	static const uint32_t parent[MAXM] = {
		ROOT, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7,
	};
	struct mc_arg *a = pt_shared_alloc(sizeof(*a));
	unsigned int hub[MAXM];

	SKIPPED();
	ASSERT_NE(NULL, a);
	for (unsigned int i = 0; i < MAXM; i++)
		hub[i] = (i * 7) % NEED_HUBS;
	a->origins = 1U << 0 | 1U << 5 | 1U << 10 | 1U << 15;
	a->poll = 1U << 5 | 1U << 15 | 1U << 3 | 1U << 8;
	a->per = pt_scale(300);
	mc_job(_metadata, "binary16", MAXM, parent, hub, PERCS_FIFO_DEF_SIZE,
	       a, false);
	munmap(a, sizeof(*a));
}

/*
 * 10,000 multicasts (1,250 from each of 8 members) under 2% drop,
 * duplicate and delay of the CAU's transfers: each delivered exactly once
 * at every other member, in its origin's order; the tree resent.
 */
TEST_F_TIMEOUT(coll, mcast_under_drop_dup_reorder, 400)
{
	static const uint32_t parent[FLT_N] = { ROOT, 0, 0, 1, 1, 2, 2, 3 };
	static const unsigned int hub[FLT_N] = { 0, 3, 5, 6, 9, 10, 12, 15 };
	struct mc_arg *a = pt_shared_alloc(sizeof(*a));

	SKIPPED();
	ASSERT_NE(NULL, a);
	a->origins = (1U << FLT_N) - 1;
	a->per = pt_scale(10000) / FLT_N + 1;
	mc_job(_metadata, "binary8", FLT_N, parent, hub, PERCS_FIFO_DEF_SIZE,
	       a, true);
	EXPECT_LT(0, a->st.resent);
	munmap(a, sizeof(*a));
}

/*
 * Every member of a 16-chain (rooted in the middle) and of a 16-star
 * multicasts at once into 4 KiB receive FIFOs that nobody reads for the
 * first 200 ms and that are read slowly then: multicasts cross every edge
 * both ways with the nodes' buffers full (percs/cau counts refusals), and
 * still all arrive, in order, without a deadlock.
 */
TEST_F_TIMEOUT(coll, mcast_crossing_with_full_buffers_no_deadlock, 400)
{
	static const uint32_t chain[MAXM] = {
		1, 2, 3, 4, 5, 6, 7, ROOT, 7, 8, 9, 10, 11, 12, 13, 14,
	};
	static const uint32_t star[MAXM] = {
		ROOT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct mc_arg *a = pt_shared_alloc(sizeof(*a));
	unsigned int hub[MAXM];

	SKIPPED();
	ASSERT_NE(NULL, a);
	for (unsigned int i = 0; i < MAXM; i++)
		hub[i] = (i * 5) % NEED_HUBS;
	a->origins = (1U << MAXM) - 1;
	/* At least 15 x 16 for each 4 KiB FIFO of 31 packets. */
	a->per = pt_scale(150) < 16 ? 16 : pt_scale(150);
	a->slow_us = 400;
	a->hold_ms = 200;
	mc_job(_metadata, "chain16", MAXM, chain, hub, PERCS_FIFO_MIN_SIZE, a,
	       false);
	EXPECT_LT(0, a->st.refused);
	memset(a->got, 0, sizeof(a->got));
	mc_job(_metadata, "star16", MAXM, star, hub, PERCS_FIFO_MIN_SIZE, a,
	       false);
	EXPECT_LT(0, a->st.refused);
	munmap(a, sizeof(*a));
}

/*
 * Multicasts and allreduces interleaved on one tree of 8 (every member
 * posts an allreduce, then a multicast, each round), without and then
 * with drop/dup/reorder: the allreduces are numbered among themselves
 * (seq = round) and right, the multicasts among each origin's, each
 * exactly once and in order.
 */
TEST_F_TIMEOUT(coll, mcast_and_allreduce_interleaved, 240)
{
	const unsigned int rounds = pt_scale(200) < 10 ? 10 : pt_scale(200);
	struct pool p;
	struct tree t = { .name = "mixed8", .n = 8,
			  .parent = { 2, 2, ROOT, 2, 0, 0, 1, 3 } };
	struct percs_addr a[MAXM];
	uint64_t next[MAXM][MAXM], sum, v;
	struct mc_stats s;
	struct res r;
	char why[256];
	unsigned int bad = 0;

	SKIPPED();
	ASSERT_EQ(0, pool_open(&p, 8, PERCS_FIFO_DEF_SIZE));
	for (unsigned int i = 0; i < t.n; i++) {
		t.m[i] = &p.m[i];
		a[i] = p.m[i].a;
		for (unsigned int o = 0; o < t.n; o++)
			next[i][o] = 1;
	}
	t.key = p.key;
	ASSERT_EQ(0, tree_setup(&t));
	for (uint64_t k = 1; k <= rounds; k++) {
		if (k == rounds / 2 + 1)
			ASSERT_EQ(0, pt_faults_set(20000));
		sum = 0;
		for (unsigned int i = 0; i < t.n; i++) {
			v = mix(k, i, 3);
			sum += v;
			ASSERT_EQ(0, post(t.m[i]->w, t.id, PERCS_COLL_ALLREDUCE,
					  PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1,
					  &v, (uint32_t)k));
			ASSERT_EQ(0, mc_post(t.m[i]->w, t.id, i, k));
		}
		for (unsigned int i = 0; i < t.n; i++) {
			bool reduced = false;

			for (unsigned int j = 0; j < t.n; j++) {
				ASSERT_EQ(0, res_recv(t.m[i]->w, &r, FAULT_MS)) {
					TH_LOG("round %llu member %u: %u of %u packets",
					       (unsigned long long)k, i, j, t.n);
				}
				if (r.e.coll == PERCS_COLL_MCAST) {
					if (mc_check(&r, t.id, t.key, a, t.n, i,
						     next[i], why,
						     sizeof(why)) < 0 && !bad++)
						TH_LOG("round %llu member %u: %s",
						       (unsigned long long)k, i,
						       why);
					continue;
				}
				memcpy(&v, r.data, 8);
				if (reduced || r.e.coll != PERCS_COLL_ALLREDUCE ||
				    r.e.seq != k || r.h.tag != k || v != sum ||
				    r.e.status) {
					if (!bad++)
						TH_LOG("round %llu member %u: coll %u seq %llu tag %u status %d sum %s",
						       (unsigned long long)k, i,
						       r.e.coll,
						       (unsigned long long)r.e.seq,
						       r.h.tag, r.e.status,
						       v == sum ? "right" : "wrong");
				}
				reduced = true;
			}
		}
	}
	pt_faults_set(0);
	EXPECT_EQ(0, bad);
	for (unsigned int i = 0; i < t.n; i++) {
		EXPECT_TRUE(res_none(t.m[i]->w, QUIET_MS));
	}
	ASSERT_EQ(0, mc_stats(t.id, &s));
	EXPECT_EQ(t.n * rounds, s.posted);
	EXPECT_EQ(t.n * (t.n - 1) * rounds, s.delivered);
	TH_LOG("%u rounds x 8 members (the second half under 2%% faults): resent %llu",
	       rounds, s.resent);
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	pool_close(&p);
}

/*
 * A tree of five ends while multicasts are in flight (transfers held by
 * delay, drop and duplication; every member has more posted, with NOTIFY,
 * than its node takes at once, so some wait in the send FIFOs): by
 * member 0's DESTROY, or by the release of member 2's window.  Every
 * other member gets exactly one -ECONNRESET entry, and one entry per
 * descriptor (0: taken, or -ENOENT: after the end) without another kick;
 * what it received is in order and never twice; nothing comes after; the
 * tree is gone.
 */
static void mc_end_in_flight(struct __test_metadata *_metadata, bool destroy)
{
	const unsigned int n = 5, per = 24, ender = destroy ? 0 : 2;
	static const uint32_t parent[5] = { ROOT, 0, 0, 1, 2 };
	struct mem m[5];
	struct percs_addr a[5];
	struct pt_live live;
	struct percs_cqe c;
	struct desc d;
	uint32_t key = pt_new_key(), tree;
	uint64_t next[5][5];
	unsigned int i, k, taken = 0, late = 0;
	struct res r;
	char why[256];

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, mem_open(&m[i], (i * 3 + 1) % NEED_HUBS, i & 1, key,
				      PERCS_FIFO_DEF_SIZE));
		a[i] = m[i].a;
		for (k = 0; k < n; k++)
			next[i][k] = 1;
	}
	ASSERT_EQ(0, cau_create(m[0].fd, 0, a, parent, n, &tree));
	for (i = 1; i < n; i++)
		ASSERT_EQ(0, cau_tree_op(m[i].fd, PERCS_IOC_CAU_JOIN, tree));
	ASSERT_EQ(0, pt_isr_set("hold_us", 20000));
	ASSERT_EQ(0, pt_isr_set("reorder_ppm", 500000));
	ASSERT_EQ(0, pt_isr_set("dup_ppm", 200000));
	ASSERT_EQ(0, pt_isr_set("drop_ppm", 200000));
	for (k = 1; k <= per; k++)
		for (i = 0; i < n; i++) {
			mc_desc(&d, tree, i, k, true);
			ASSERT_EQ(0, desc_post(m[i].w, &d));
		}
	usleep(20000);
	if (destroy) {
		ASSERT_EQ(0, cau_tree_op(m[0].fd, PERCS_IOC_CAU_DESTROY, tree));
	} else {
		mem_close(&m[ender]);
	}
	for (i = 0; i < n; i++) {
		unsigned int ok = 0, gone = 0, resets = 0, other = 0;
		uint64_t deadline = pt_now_ms() + WAIT_MS;

		if (i == ender && !destroy)
			continue;
		while (ok + gone < per || (i != ender && !resets)) {
			if (pt_cq_wait(m[i].w, &c, 50) != 1) {
				if (pt_now_ms() > deadline)
					break;
				continue;
			}
			if (c.res == -ECONNRESET && c.user_data == tree)
				resets++;
			else if (c.res == 0)
				ok++;
			else if (c.res == -ENOENT)
				gone++;
			else
				other++;
		}
		EXPECT_EQ(per, ok + gone) {
			TH_LOG("member %u: %u taken, %u -ENOENT of %u descriptors",
			       i, ok, gone, per);
		}
		EXPECT_EQ(i == ender ? 0 : 1, resets);
		EXPECT_EQ(0, other);
		EXPECT_EQ(0, percs_cq_poll(m[i].w, &c, 1));
		taken += ok;
		late += gone;
		/* What came before the end: in order, once. */
		while (!res_recv(m[i].w, &r, 0)) {
			EXPECT_LE(0, mc_check(&r, tree, key, a, n, i, next[i],
					      why, sizeof(why))) {
				TH_LOG("member %u: %s", i, why);
			}
		}
	}
	pt_faults_set(0);
	TH_LOG("%s: %u descriptors taken before the end, %u completed -ENOENT after it",
	       destroy ? "DESTROY" : "close", taken, late);
	EXPECT_LT(0, late);
	for (i = 0; i < n; i++) {
		if (i == ender && !destroy)
			continue;
		EXPECT_TRUE(res_none(m[i].w, 50));
	}
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(0, live.cau_trees);
	for (i = 0; i < n; i++)
		mem_close(&m[i]);
}

TEST_F_TIMEOUT(coll, mcast_tree_destroyed_in_flight, 60)
{
	SKIPPED();
	mc_end_in_flight(_metadata, true);
}

TEST_F_TIMEOUT(coll, mcast_member_closed_in_flight, 60)
{
	SKIPPED();
	mc_end_in_flight(_metadata, false);
}

/* ------------------------------------------------------------------ */
/* libpercs: percs_cau_bcast() on the kernel's multicast. */

#define LB_N	8

static const size_t lb_lens[] = { 0, 1, 63, 64, 65, 4096, 65536 };

static uint64_t lb_seed(unsigned int root, unsigned int li)
{
	return mix(root, li, 0x6c62);
}

/*
 * One member's part: a bcast of every length from every root (blocking),
 * each checked at every member (the bytes beyond untouched); then two
 * non-blocking bcasts of two roots and an allreduce at once.
 */
static int lb_body(struct job *j, unsigned int idx, struct percs_cau_tree *t)
{
	const size_t max = 65536;
	uint8_t *buf = malloc(max + 64), *ref = malloc(max + 64);
	uint8_t *b2 = malloc(1000), *r2 = malloc(1000);
	struct percs_coll_req *req[3];
	uint64_t v = idx + 1, sum = 0;
	int ret = 0;

	if (!buf || !ref || !b2 || !r2) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned int root = 0; !ret && root < j->n; root++) {
		for (unsigned int li = 0; li < ARRAY_SIZE(lb_lens); li++) {
			size_t len = lb_lens[li];

			pt_fill(ref, len, lb_seed(root, li));
			memset(buf, 0x5a, max + 64);
			if (idx == root)
				memcpy(buf, ref, len);
			ret = percs_cau_bcast(t, root, buf, len);
			if (ret) {
				fprintf(stderr, "# member %u: bcast from %u of %zu: %d\n",
					idx, root, len, ret);
				break;
			}
			if (memcmp(buf, ref, len) ||
			    (len < max && buf[len] != 0x5a) ||
			    buf[len + 63] != 0x5a) {
				fprintf(stderr, "# member %u: bcast from %u of %zu: wrong bytes\n",
					idx, root, len);
				ret = -EPROTO;
				break;
			}
		}
	}
	if (ret)
		goto out;
	/* Two roots at once, an allreduce between them. */
	pt_fill(ref, 1000, 11);
	pt_fill(r2, 1000, 12);
	memcpy(buf, ref, 1000);
	memcpy(b2, r2, 1000);
	if (idx != 1)
		memset(buf, 0, 1000);
	if (idx != j->n - 1)
		memset(b2, 0, 1000);
	ret = percs_cau_ibcast(t, 1, buf, 1000, &req[0]);
	if (!ret)
		ret = percs_cau_iallreduce(t, &v, &sum, 1, PERCS_CAU_T_U64,
					   PERCS_CAU_OP_SUM, &req[1]);
	if (!ret)
		ret = percs_cau_ibcast(t, j->n - 1, b2, 1000, &req[2]);
	for (unsigned int i = 0; !ret && i < 3; i++) {
		ret = percs_coll_wait(req[i], 30000);
		percs_coll_req_free(req[i]);
	}
	if (!ret && (memcmp(buf, ref, 1000) || memcmp(b2, r2, 1000) ||
		     sum != j->n * (j->n + 1) / 2)) {
		fprintf(stderr, "# member %u: ibcast/iallreduce: wrong result\n",
			idx);
		ret = -EPROTO;
	}
out:
	free(buf);
	free(ref);
	free(b2);
	free(r2);
	return ret;
}

/* A member's part in a test of libpercs's trees (struct job's arg). */
struct lib_part {
	int (*body)(struct job *j, unsigned int idx, struct percs_cau_tree *t);
};

/*
 * Every member: open its window, make or join a tree of all (fan-out 2),
 * run the lib_part's body, end the tree.
 */
static int lib_child(int idx, void *arg)
{
	struct job *j = arg;
	const struct lib_part *part = j->arg;
	struct percs_cau_member mem[MAXM];
	struct percs_cau_tree *t = NULL;
	const char *what = "open";
	struct mem m;
	int ret;

	ret = mem_open(&m, j->hub[idx], 0, j->key, j->rx);
	if (ret)
		goto fail;
	j->addr[idx] = m.a;
	what = "barrier";
	ret = job_barrier(j, 0);
	if (!ret)
		ret = percs_cau_shape_kary(j->addr, j->n, 0, 2, NULL, mem);
	if (!ret && idx == 0) {
		what = "create";
		ret = percs_cau_tree_create(m.w, mem, j->n, 0, &t);
		if (!ret)
			__atomic_store_n(&j->tree, percs_cau_tree_id(t),
					 __ATOMIC_SEQ_CST);
	}
	if (!ret)
		ret = job_barrier(j, 1);
	if (!ret && idx) {
		what = "join";
		ret = percs_cau_tree_join(m.w, j->tree, mem, j->n, 0, &t);
	}
	if (!ret)
		ret = job_barrier(j, 2);
	if (ret)
		goto fail;
	what = "body";
	ret = part->body(j, idx, t);
	if (ret)
		goto fail;
	what = "final barrier";
	ret = job_barrier(j, 3);
	if (ret)
		goto fail;
	ret = percs_cau_tree_destroy(t);
	mem_close(&m);
	return ret ? 1 : 0;
fail:
	fprintf(stderr, "# member %d (hub %u): %s: %d (%s)\n", idx,
		j->hub[idx], what, ret, percs_strerror(ret));
	__atomic_store_n(&j->fail, 1, __ATOMIC_SEQ_CST);
	if (t)
		percs_cau_tree_destroy(t);
	mem_close(&m);
	return 1;
}

/*
 * libpercs's bcast on the CAU's multicast, 8 processes: from every root,
 * 0, 1, 63, 64, 65, 4096 and 65536 bytes; roots return once posted, so
 * members meet the next bcast's multicasts while still in this one (the
 * library keeps them for the call they belong to).
 */
TEST_F_TIMEOUT(coll, lib_bcast_every_root_and_length, 300)
{
	static const unsigned int hub[LB_N] = { 0, 3, 5, 6, 9, 10, 12, 15 };
	static const uint32_t unused[LB_N];
	static const struct lib_part part = { .body = lb_body };
	struct job *j = job_new(LB_N, 0, unused, hub, NULL, (void *)&part);
	uint64_t t0 = pt_now_ms();

	SKIPPED();
	ASSERT_NE(NULL, j);
	EXPECT_EQ(0, pt_fork_n(LB_N, lib_child, j, 280000));
	TH_LOG("%u processes: bcasts of %zu lengths from every root: %llu ms",
	       LB_N, ARRAY_SIZE(lb_lens),
	       (unsigned long long)(pt_now_ms() - t0));
	munmap(j, sizeof(*j));
}

/*
 * A member that waits sleeps until its result comes, it does not wake
 * to find nothing: member 1 enters a barrier 300 ms after member 0, and
 * member 0's voluntary context switches meanwhile stay near 300 / 20 (the
 * library's idle timeout) - waking every 50 us to 1 ms, as it once did,
 * made about 300, each a process switch (26 us in the TCG VM).
 */
#define IDLE_WAIT_MS	300
#define IDLE_MAX_SWITCHES	60

static long nvcsw_now(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_nvcsw;
}

static int idle_body(struct job *j, unsigned int idx, struct percs_cau_tree *t)
{
	long before;
	int ret;

	if (idx) {
		usleep(IDLE_WAIT_MS * 1000);
		return percs_cau_barrier(t);
	}
	before = nvcsw_now();
	ret = percs_cau_barrier(t);
	j->stat = nvcsw_now() - before;
	return ret;
}

TEST_F_TIMEOUT(coll, lib_waiter_sleeps_until_its_result, 60)
{
	static const unsigned int hub[2] = { 0, 9 };
	static const uint32_t unused[2];
	static const struct lib_part part = { .body = idle_body };
	struct job *j = job_new(2, 0, unused, hub, NULL, (void *)&part);

	SKIPPED();
	ASSERT_NE(NULL, j);
	EXPECT_EQ(0, pt_fork_n(2, lib_child, j, 50000));
	TH_LOG("member 0 waited %u ms with %ld voluntary context switches",
	       IDLE_WAIT_MS, j->stat);
	EXPECT_LE(0, j->stat);
	EXPECT_GT(IDLE_MAX_SWITCHES, j->stat);
	munmap(j, sizeof(*j));
}

/* ------------------------------------------------------------------ */
/* Malformed descriptors and their statuses. */

struct bad {
	const char *name;
	int res;
	unsigned int coll, op, type, count;
	int len;		/* -1: the right one */
	void (*fix)(struct desc *d);
};

static void fix_dst_hub(struct desc *d) { d->h.dst.hub = 1; }
static void fix_dst_hfi(struct desc *d) { d->h.dst.hfi = 1; }
static void fix_dst_window(struct desc *d) { d->h.dst.window = 1; }
static void fix_dst_reserved(struct desc *d) { d->h.dst.reserved = 1; }
static void fix_seq(struct desc *d) { d->e.seq = 1; }
static void fix_status(struct desc *d) { d->e.status = -1; }
static void fix_reserved(struct desc *d) { d->e.reserved = 1; }
static void fix_striped(struct desc *d) { d->h.route = PERCS_ROUTE_DIRECT_STRIPED; }
static void fix_hw_ind(struct desc *d) { d->h.route = PERCS_ROUTE_HW_INDIRECT; }
static void fix_sw_ind(struct desc *d)
{
	d->h.route = PERCS_ROUTE_SW_INDIRECT;
	d->h.route_arg = 1;
}
static void fix_route_bad(struct desc *d) { d->h.route = PERCS_ROUTE_MAX + 1; }
static void fix_flags(struct desc *d) { d->h.flags = 0x100; }
static void fix_tree0(struct desc *d) { d->e.tree = 0; }
static void fix_tree_big(struct desc *d) { d->e.tree = 0xfffffff0U; }

#define A	PERCS_COLL_ALLREDUCE
#define M	PERCS_COLL_MCAST
#define T_	PERCS_CAU_T_
static const struct bad bads[] = {
	{ "collective 4", -EINVAL, 4, 1, PERCS_CAU_T_U32, 1, -1, NULL },
	{ "collective 255", -EINVAL, 255, 1, PERCS_CAU_T_U32, 1, -1, NULL },
	{ "op 8", -EINVAL, A, 8, PERCS_CAU_T_U32, 1, -1, NULL },
	{ "op 255", -EINVAL, A, 255, PERCS_CAU_T_U64, 1, -1, NULL },
	{ "type 6", -EINVAL, A, 1, 6, 1, -1, NULL },
	{ "type 255", -EINVAL, A, 1, 255, 1, -1, NULL },
	{ "or on f32", -EINVAL, A, PERCS_CAU_OP_OR, PERCS_CAU_T_F32, 1, -1, NULL },
	{ "and on f64", -EINVAL, A, PERCS_CAU_OP_AND, PERCS_CAU_T_F64, 1, -1, NULL },
	{ "xor on f64", -EINVAL, A, PERCS_CAU_OP_XOR, PERCS_CAU_T_F64, 2, -1, NULL },
	{ "or on f64 (reduce)", -EINVAL, PERCS_COLL_REDUCE, PERCS_CAU_OP_OR, PERCS_CAU_T_F64, 1, -1, NULL },
	{ "prod on s32", -EINVAL, A, PERCS_CAU_OP_PROD, PERCS_CAU_T_S32, 1, -1, NULL },
	{ "prod on u32", -EINVAL, A, PERCS_CAU_OP_PROD, PERCS_CAU_T_U32, 1, -1, NULL },
	{ "prod on s64", -EINVAL, A, PERCS_CAU_OP_PROD, PERCS_CAU_T_S64, 1, -1, NULL },
	{ "prod on u64", -EINVAL, A, PERCS_CAU_OP_PROD, PERCS_CAU_T_U64, 1, -1, NULL },
	{ "count 17 of u32", -EINVAL, A, 1, PERCS_CAU_T_U32, 17, -1, NULL },
	{ "count 9 of f64", -EINVAL, A, 1, PERCS_CAU_T_F64, 9, -1, NULL },
	{ "count 17 of f32", -EINVAL, A, 1, PERCS_CAU_T_F32, 17, -1, NULL },
	{ "count 255 of s64", -EINVAL, A, 1, PERCS_CAU_T_S64, 255, EXT + PAY, NULL },
	{ "length 4 short", -EINVAL, A, 1, PERCS_CAU_T_U32, 4, EXT + 12, NULL },
	{ "length 4 long", -EINVAL, A, 1, PERCS_CAU_T_U32, 4, EXT + 20, NULL },
	{ "length of u32 for u64", -EINVAL, A, 1, PERCS_CAU_T_U64, 2, EXT + 8, NULL },
	{ "length full for count 1", -EINVAL, A, 1, PERCS_CAU_T_F32, 1, EXT + PAY, NULL },
	{ "length 0", -EINVAL, A, 1, PERCS_CAU_T_U32, 0, 0, NULL },
	{ "length 8 (short extension)", -EINVAL, A, 1, PERCS_CAU_T_U32, 0, 8, NULL },
	{ "length 23", -EINVAL, A, 1, PERCS_CAU_T_U32, 0, EXT - 1, NULL },
	{ "dst hub", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_dst_hub },
	{ "dst hfi", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_dst_hfi },
	{ "dst window", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_dst_window },
	{ "dst reserved", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_dst_reserved },
	{ "seq 1", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_seq },
	{ "status -1", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_status },
	{ "reserved 1", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_reserved },
	{ "route direct striped", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_striped },
	{ "route hw indirect", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_hw_ind },
	{ "route sw indirect", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_sw_ind },
	{ "route 4", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_route_bad },
	{ "unknown header flag", -EINVAL, A, 1, PERCS_CAU_T_U32, 1, -1, fix_flags },
	{ "barrier with data", -EINVAL, PERCS_COLL_BARRIER, 0, PERCS_CAU_T_U32, 1, -1, NULL },
	{ "barrier with sum", -EINVAL, PERCS_COLL_BARRIER, 1, PERCS_CAU_T_U32, 0, -1, NULL },
	{ "barrier of type 6", -EINVAL, PERCS_COLL_BARRIER, 0, 6, 0, -1, NULL },
	{ "mcast with sum", -EINVAL, M, PERCS_CAU_OP_SUM, PERCS_CAU_T_U32, 1, -1, NULL },
	{ "mcast with max, no data", -EINVAL, M, PERCS_CAU_OP_MAX, PERCS_CAU_T_S64, 0, -1, NULL },
	{ "mcast with prod", -EINVAL, M, PERCS_CAU_OP_PROD, PERCS_CAU_T_F64, 1, -1, NULL },
	{ "mcast op 8", -EINVAL, M, 8, PERCS_CAU_T_U32, 1, -1, NULL },
	{ "mcast type 6", -EINVAL, M, 0, 6, 1, -1, NULL },
	{ "mcast type 255, no data", -EINVAL, M, 0, 255, 0, -1, NULL },
	{ "mcast count 17 of u32", -EINVAL, M, 0, PERCS_CAU_T_U32, 17, -1, NULL },
	{ "mcast count 9 of s64", -EINVAL, M, 0, PERCS_CAU_T_S64, 9, -1, NULL },
	{ "mcast count 9 of f64", -EINVAL, M, 0, PERCS_CAU_T_F64, 9, -1, NULL },
	{ "mcast count 255 of u32", -EINVAL, M, 0, PERCS_CAU_T_U32, 255, EXT + PAY, NULL },
	{ "mcast length 4 short", -EINVAL, M, 0, PERCS_CAU_T_U32, 4, EXT + 12, NULL },
	{ "mcast length 4 long", -EINVAL, M, 0, PERCS_CAU_T_U32, 4, EXT + 20, NULL },
	{ "mcast length of u32 for u64", -EINVAL, M, 0, PERCS_CAU_T_U64, 2, EXT + 8, NULL },
	{ "mcast count 0 with data", -EINVAL, M, 0, PERCS_CAU_T_U64, 0, EXT + 8, NULL },
	{ "mcast length full for count 1", -EINVAL, M, 0, PERCS_CAU_T_F32, 1, EXT + PAY, NULL },
	{ "mcast short extension", -EINVAL, M, 0, PERCS_CAU_T_U32, 0, EXT - 1, NULL },
	{ "mcast dst hub", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_dst_hub },
	{ "mcast dst hfi", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_dst_hfi },
	{ "mcast dst window", -EINVAL, M, 0, PERCS_CAU_T_U64, 8, -1, fix_dst_window },
	{ "mcast dst reserved", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_dst_reserved },
	{ "mcast seq 1", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_seq },
	{ "mcast status -1", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_status },
	{ "mcast reserved 1", -EINVAL, M, 0, PERCS_CAU_T_U32, 0, -1, fix_reserved },
	{ "mcast route direct striped", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_striped },
	{ "mcast route hw indirect", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_hw_ind },
	{ "mcast route sw indirect", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_sw_ind },
	{ "mcast unknown header flag", -EINVAL, M, 0, PERCS_CAU_T_U32, 1, -1, fix_flags },
	{ "mcast tree 0", -ENOENT, M, 0, PERCS_CAU_T_U32, 1, -1, fix_tree0 },
	{ "tree 0", -ENOENT, A, 1, PERCS_CAU_T_U32, 1, -1, fix_tree0 },
	{ "tree 0xfffffff0", -ENOENT, A, 1, PERCS_CAU_T_U32, 1, -1, fix_tree_big },
};
#undef A
#undef M
#undef T_

/* Post @d at @w and expect one entry with @res and nothing else. */
static int expect_status(struct __test_metadata *_metadata,
			 struct percs_window *w, const struct desc *d, int res,
			 const char *name)
{
	struct percs_cqe c;
	int ret = desc_post(w, d);

	if (ret < 0) {
		TH_LOG("%s: post: %d", name, ret);
		return -1;
	}
	if (!cqe_wait(w, &c, WAIT_MS)) {
		TH_LOG("%s: no completion entry (want %d)", name, res);
		return -1;
	}
	if (c.res != res || c.user_data != d->h.tag || c.kind != PERCS_PKT_COLL) {
		TH_LOG("%s: res %d user_data %llu kind %u, want res %d user_data %u kind %u",
		       name, c.res, (unsigned long long)c.user_data, c.kind, res,
		       d->h.tag, PERCS_PKT_COLL);
		return -1;
	}
	return 0;
}

TEST_F_TIMEOUT(coll, malformed_descriptors_and_statuses, 60)
{
	struct pool p;
	struct tree t = { .name = "t", .n = 3, .parent = { ROOT, 0, 0 } };
	struct mem other, notjoined;
	struct percs_addr a[2];
	static const uint32_t par2[2] = { ROOT, 0 };
	uint32_t tree_u, tree_gone;
	uint8_t in[MAXM][PAY];
	struct percs_cqe c;
	struct desc d;
	unsigned int i, bad = 0, tag = 1000;
	uint64_t v = 5;

	SKIPPED();
	/* m0..m2 the tree, m3 same key not a member, m4 not joined to U. */
	ASSERT_EQ(0, pool_open(&p, 5, PERCS_FIFO_DEF_SIZE));
	ASSERT_EQ(0, mem_open(&other, 7, 1, pt_new_key(), PERCS_FIFO_DEF_SIZE));
	for (i = 0; i < 3; i++)
		t.m[i] = &p.m[i];
	t.key = p.key;
	ASSERT_EQ(0, tree_setup(&t));
	a[0] = p.m[0].a;
	a[1] = p.m[4].a;
	ASSERT_EQ(0, cau_create(p.m[0].fd, 0, a, par2, 2, &tree_u));
	a[1] = p.m[3].a;
	ASSERT_EQ(0, cau_create(p.m[0].fd, 0, a, par2, 2, &tree_gone));
	ASSERT_EQ(0, cau_tree_op(p.m[0].fd, PERCS_IOC_CAU_DESTROY, tree_gone));
	ASSERT_EQ(1, cqe_wait(p.m[3].w, &c, WAIT_MS));
	ASSERT_EQ(-ECONNRESET, c.res);
	ASSERT_EQ(tree_gone, c.user_data);
	notjoined = p.m[4];

	for (i = 0; i < ARRAY_SIZE(bads); i++) {
		const struct bad *b = &bads[i];

		desc_make(&d, t.id, b->coll, b->op, b->type, b->count, NULL,
			  ++tag);
		pt_fill(d.body + EXT, 2 * PAY, i);
		if (b->len >= 0)
			d.len = b->len;
		if (b->fix)
			b->fix(&d);
		/* From a member; also with NOTIFY (still one entry). */
		if (expect_status(_metadata, t.m[i % 3]->w, &d, b->res, b->name))
			bad++;
		d.h.flags |= PERCS_PKT_F_NOTIFY;
		d.h.tag = ++tag;
		if (!(d.h.flags & ~PERCS_PKT_F_ALL) &&
		    expect_status(_metadata, t.m[0]->w, &d, b->res, b->name))
			bad++;
	}
	/* Trees and members. */
	desc_make(&d, tree_gone, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM,
		  PERCS_CAU_T_U64, 1, &v, ++tag);
	if (expect_status(_metadata, p.m[0].w, &d, -ENOENT, "destroyed tree"))
		bad++;
	desc_make(&d, t.id, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM,
		  PERCS_CAU_T_U64, 1, &v, ++tag);
	if (expect_status(_metadata, p.m[3].w, &d, -EPERM, "same key, not a member"))
		bad++;
	d.h.tag = ++tag;
	if (expect_status(_metadata, other.w, &d, -EPERM, "another job's window"))
		bad++;
	desc_make(&d, tree_u, PERCS_COLL_BARRIER, 0, 0, 0, NULL, ++tag);
	if (expect_status(_metadata, notjoined.w, &d, -EPERM, "member not joined"))
		bad++;
	/* The same for a multicast. */
	mc_desc(&d, tree_gone, 0, 1, false);
	if (expect_status(_metadata, p.m[0].w, &d, -ENOENT, "mcast, destroyed tree"))
		bad++;
	mc_desc(&d, t.id, 3, 1, false);
	if (expect_status(_metadata, p.m[3].w, &d, -EPERM, "mcast, not a member"))
		bad++;
	if (expect_status(_metadata, other.w, &d, -EPERM, "mcast, another job"))
		bad++;
	mc_desc(&d, tree_u, 1, 1, false);
	if (expect_status(_metadata, notjoined.w, &d, -EPERM, "mcast, not joined"))
		bad++;
	EXPECT_EQ(0, bad);
	/* None of them started an operation: the next is operation 1. */
	for (i = 0; i < 3; i++)
		gen_input(PERCS_CAU_T_S64, 8, i, 3, false, 9, in[i]);
	EXPECT_EQ(0, run_op(_metadata, &t, PERCS_COLL_ALLREDUCE,
			    PERCS_CAU_OP_MAX, PERCS_CAU_T_S64, 8, in));
	/* Nor a multicast: member 1's first is its multicast 1. */
	{
		struct percs_addr ta[3] = { p.m[0].a, p.m[1].a, p.m[2].a };
		uint64_t next[3] = { 1, 1, 1 };
		struct res r;
		char why[256];

		ASSERT_EQ(0, mc_post(p.m[1].w, t.id, 1, 1));
		for (i = 0; i < 3; i += 2) {
			next[1] = 1;
			ASSERT_EQ(0, res_recv(p.m[i].w, &r, WAIT_MS));
			EXPECT_EQ(1, mc_check(&r, t.id, t.key, ta, 3, i, next,
					      why, sizeof(why))) {
				TH_LOG("member %u: %s", i, why);
			}
		}
	}
	for (i = 0; i < p.n; i++) {
		EXPECT_TRUE(res_none(p.m[i].w, QUIET_MS));
		EXPECT_EQ(0, percs_cq_poll(p.m[i].w, &c, 1));
	}
	EXPECT_TRUE(res_none(other.w, 1));
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	mem_close(&other);
	pool_close(&p);
}

/*
 * Members that disagree on op, type, count or barrier-ness: every member
 * (the non-roots of a reduce too) gets its result with status -EINVAL
 * and zero data; the tree goes on with the next operation.
 */
TEST_F(coll, mismatched_members_einval)
{
	static const struct {
		const char *name;
		unsigned int coll, op, type, count;
		unsigned int who, coll2, op2, type2, count2;
	} cases[] = {
		{ "op", PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_U32, 4,
		  0, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_MAX, PERCS_CAU_T_U32, 4 },
		{ "type", PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_U32, 4,
		  2, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_S32, 4 },
		{ "count", PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_U32, 4,
		  3, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_U32, 3 },
		{ "float width", PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_F64, 2,
		  1, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_SUM, PERCS_CAU_T_F32, 2 },
		{ "barrier with an allreduce", PERCS_COLL_BARRIER, 0, PERCS_CAU_T_S32, 0,
		  1, PERCS_COLL_ALLREDUCE, 0, PERCS_CAU_T_S32, 0 },
		{ "reduce op", PERCS_COLL_REDUCE, PERCS_CAU_OP_AND, PERCS_CAU_T_U64, 8,
		  3, PERCS_COLL_REDUCE, PERCS_CAU_OP_OR, PERCS_CAU_T_U64, 8 },
		{ "leaf's count", PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_MIN, PERCS_CAU_T_F32, 16,
		  3, PERCS_COLL_ALLREDUCE, PERCS_CAU_OP_MIN, PERCS_CAU_T_F32, 15 },
	};
	struct pool p;
	struct tree t = { .name = "mismatch", .n = 4,
			  .parent = { ROOT, 0, 0, 1 } };
	uint8_t in[MAXM][PAY];
	struct want x = { .status = -EINVAL };
	struct res r;
	char why[256];

	SKIPPED();
	ASSERT_EQ(0, pool_open(&p, 4, PERCS_FIFO_DEF_SIZE));
	for (unsigned int i = 0; i < t.n; i++)
		t.m[i] = &p.m[i];
	t.key = p.key;
	ASSERT_EQ(0, tree_setup(&t));
	x.tree = t.id;
	x.key = t.key;
	x.src = t.m[0]->a;
	for (unsigned int c = 0; c < ARRAY_SIZE(cases); c++) {
		uint64_t seq = ++t.seq;

		for (unsigned int i = 0; i < t.n; i++) {
			bool odd = i == cases[c].who;

			gen_input(PERCS_CAU_T_U32, 16, i, 4, false, c, in[i]);
			ASSERT_EQ(0, post(t.m[i]->w, t.id,
					  odd ? cases[c].coll2 : cases[c].coll,
					  odd ? cases[c].op2 : cases[c].op,
					  odd ? cases[c].type2 : cases[c].type,
					  odd ? cases[c].count2 : cases[c].count,
					  in[i], (uint32_t)(seq << 5 | i)));
		}
		x.seq = seq;
		for (unsigned int i = 0; i < t.n; i++) {
			x.tag = (uint32_t)(seq << 5 | i);
			ASSERT_EQ(0, res_recv(t.m[i]->w, &r, WAIT_MS)) {
				TH_LOG("%s: member %u got no result", cases[c].name, i);
			}
			EXPECT_EQ(0, res_check(&r, &x, why, sizeof(why))) {
				TH_LOG("%s: member %u: %s", cases[c].name, i, why);
			}
		}
		/* And the tree goes on. */
		for (unsigned int i = 0; i < t.n; i++)
			gen_input(PERCS_CAU_T_U32, 16, i, 4, false, c + 100, in[i]);
		EXPECT_EQ(0, run_op(_metadata, &t, PERCS_COLL_ALLREDUCE,
				    PERCS_CAU_OP_SUM, PERCS_CAU_T_U32, 16, in));
	}
	for (unsigned int i = 0; i < t.n; i++) {
		EXPECT_TRUE(res_none(t.m[i]->w, QUIET_MS));
	}
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	pool_close(&p);
}

/* ------------------------------------------------------------------ */

/*
 * A member with a 4 KiB receive FIFO that does not read: its results are
 * held at its node, the tree stops after at most 16 operations more than
 * it holds, nothing is lost; once it reads, all complete, each result
 * exactly once.
 */
TEST_F_TIMEOUT(coll, full_receive_fifo_holds_results, 90)
{
	const unsigned int N = 200, S = 2;
	struct tree t = { .name = "fullfifo", .n = 4,
			  .parent = { ROOT, 0, 0, 1 } };
	struct mem m[4];
	uint8_t got[4][N + 1];
	unsigned int have[4] = { 0 }, i, k, held;
	uint32_t key = pt_new_key();
	uint64_t quiet, v;
	struct res r;

	SKIPPED();
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, mem_open(&m[i], 4 * i + 1, 0, key,
				      i == S ? PERCS_FIFO_MIN_SIZE :
					       PERCS_FIFO_DEF_SIZE));
		t.m[i] = &m[i];
	}
	t.key = key;
	ASSERT_EQ(0, tree_setup(&t));
	memset(got, 0, sizeof(got));
	/* Every member posts all N (beyond 16 they wait in the send FIFO). */
	for (k = 1; k <= N; k++)
		for (i = 0; i < 4; i++) {
			v = k * 10 + i;
			ASSERT_EQ(0, post(m[i].w, t.id, PERCS_COLL_ALLREDUCE,
					  PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 1,
					  &v, k));
		}
	/* The others read until nothing comes for 300 ms. */
	quiet = pt_now_ms() + 300;
	while (pt_now_ms() < quiet) {
		for (i = 0; i < 4; i++) {
			if (i == S)
				continue;
			while (!res_recv(m[i].w, &r, 0)) {
				ASSERT_EQ(0, r.e.status);
				ASSERT_GE(N, r.e.seq);
				ASSERT_EQ(0, got[i][r.e.seq]++);
				have[i]++;
				quiet = pt_now_ms() + 300;
			}
		}
		usleep(1000);
	}
	/* Stalled: S's FIFO is full and its node keeps the rest. */
	held = 0;
	EXPECT_NE(NULL, percs_recv_peek(m[S].w));
	TH_LOG("with member %u not reading: the others got %u, %u, %u of %u",
	       S, have[0], have[1], have[3], N);
	EXPECT_EQ(have[0], have[1]);
	EXPECT_EQ(have[0], have[3]);
	EXPECT_GT(N, have[0]);
	EXPECT_LT(PERCS_FIFO_MIN_SIZE / 128 - 1, have[0]);
	/* Now S reads: everything arrives, in full, exactly once. */
	quiet = pt_now_ms() + 30000;
	while ((have[0] < N || have[1] < N || have[2] < N || have[3] < N) &&
	       pt_now_ms() < quiet) {
		for (i = 0; i < 4; i++) {
			while (!res_recv(m[i].w, &r, 0)) {
				uint64_t sum;

				ASSERT_EQ(0, r.e.status);
				ASSERT_LE(1, r.e.seq);
				ASSERT_GE(N, r.e.seq);
				ASSERT_EQ(0, got[i][r.e.seq]++) {
					TH_LOG("member %u: seq %llu twice", i,
					       (unsigned long long)r.e.seq);
				}
				memcpy(&sum, r.data, 8);
				ASSERT_EQ(r.e.seq * 40 + 6, sum);
				ASSERT_EQ(r.e.seq, r.h.tag);
				have[i]++;
				if (i == S)
					held++;
			}
		}
		usleep(500);
	}
	TH_LOG("then member %u read %u", S, held);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(N, have[i]) {
			TH_LOG("member %u: %u of %u results", i, have[i], N);
		}
		EXPECT_TRUE(res_none(m[i].w, QUIET_MS));
	}
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	for (i = 0; i < 4; i++)
		mem_close(&m[i]);
}

/*
 * The CAU's transfers cross the links: a tree over four supernodes (hubs
 * 0, 5, 10, 15) adds at least 4 packets (up, its ack, down, its ack) per
 * edge per operation to isr/links, and at most 3 links' worth each.
 */
TEST_F_TIMEOUT(coll, transfers_counted_on_links, 60)
{
	const unsigned int N = pt_scale(200) < 20 ? 20 : pt_scale(200);
	struct tree t = { .name = "links", .n = 4,
			  .parent = { ROOT, 0, 0, 0 } };
	struct mem m[4];
	uint32_t key = pt_new_key();
	long p0, p1, f0, f1;
	uint8_t in[MAXM][PAY];
	unsigned int i, k;

	SKIPPED();
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, mem_open(&m[i], 5 * i, 0, key,
				      PERCS_FIFO_DEF_SIZE));
		t.m[i] = &m[i];
	}
	t.key = key;
	ASSERT_EQ(0, tree_setup(&t));
	p0 = pt_isr_links_sum("packets");
	f0 = pt_isr_links_sum("flits");
	ASSERT_LE(0, p0);
	for (k = 0; k < N; k++) {
		for (i = 0; i < 4; i++)
			gen_input(PERCS_CAU_T_U64, 8, i, 4, false, k, in[i]);
		ASSERT_EQ(0, run_op(_metadata, &t, PERCS_COLL_ALLREDUCE,
				    PERCS_CAU_OP_SUM, PERCS_CAU_T_U64, 8, in));
	}
	usleep(20000);	/* the last acknowledgements */
	p1 = pt_isr_links_sum("packets");
	f1 = pt_isr_links_sum("flits");
	TH_LOG("%u allreduces over 3 cross-supernode edges: %ld link packets, %ld flits",
	       N, p1 - p0, f1 - f0);
	EXPECT_LE(4L * 3 * N, p1 - p0);
	EXPECT_GE(4L * 3 * 3 * N, p1 - p0);
	EXPECT_LE(p1 - p0, f1 - f0);
	EXPECT_EQ(0, tree_end_check(_metadata, &t));
	for (i = 0; i < 4; i++)
		mem_close(&m[i]);
}

TEST_HARNESS_MAIN
