// SPDX-License-Identifier: GPL-2.0
/*
 * collkit: the CAU test programs' shared code (collkit.h says what).
 */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "collkit/collkit.h"

/* The harness has it, but it is not included here (see say()). */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/*
 * A line in the TAP output, as the harness's TH_LOG writes it (the harness
 * is the programs' own: its header defines globals and cannot be included
 * twice in one program).
 */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t z = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) *
		     0xbf58476d1ce4e5b9ULL ^ (c + 1) * 0x94d049bb133111ebULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ */
/* The reference ALU: typed C arithmetic, independent of firmware-model. */

bool type_float(unsigned int type)
{
	return type == PERCS_CAU_T_F32 || type == PERCS_CAU_T_F64;
}

unsigned int esize(unsigned int type)
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

unsigned int maxcount(unsigned int type)
{
	return PAY / esize(type);
}

bool op_valid(unsigned int op, unsigned int type)
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

const char *op_name(unsigned int op)
{
	static const char *const n[] = { "nop", "sum", "min", "max", "or",
					 "and", "xor", "prod" };

	return op < ARRAY_SIZE(n) ? n[op] : "?";
}

const char *type_name(unsigned int type)
{
	static const char *const n[] = { "s32", "u32", "s64", "u64", "f32",
					 "f64" };

	return type < ARRAY_SIZE(n) ? n[type] : "?";
}

const char *coll_name(unsigned int coll)
{
	static const char *const n[] = { "allreduce", "reduce", "barrier",
					 "mcast" };

	return coll < ARRAY_SIZE(n) ? n[coll] : "?";
}

uint64_t ld(const uint8_t *p, unsigned int size)
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

void st(uint8_t *p, unsigned int size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == 4)
		memcpy(p, &v32, 4);
	else
		memcpy(p, &v, 8);
}

float f32_of(uint64_t b)
{
	uint32_t v = (uint32_t)b;
	float f;

	memcpy(&f, &v, 4);
	return f;
}

uint64_t bits_f32(float f)
{
	uint32_t v;

	memcpy(&v, &f, 4);
	return v;
}

double f64_of(uint64_t b)
{
	double d;

	memcpy(&d, &b, 8);
	return d;
}

uint64_t bits_f64(double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	return v;
}

bool fbits_nan(unsigned int type, uint64_t b)
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
uint64_t fminmax(unsigned int type, bool max, uint64_t a, uint64_t b)
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
uint64_t ref_elem(unsigned int op, unsigned int type, uint64_t a,
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

void ref_combine(unsigned int op, unsigned int type, unsigned int count,
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
void ref_subtree(unsigned int n, const uint32_t *parent,
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

unsigned int root_of(unsigned int n, const uint32_t *parent)
{
	for (unsigned int i = 0; i < n; i++)
		if (parent[i] == ROOT)
			return i;
	return 0;
}

/* What every member should get: the data of the result, zero beyond count. */
void ref_result(unsigned int n, const uint32_t *parent,
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
int data_diff(unsigned int op, unsigned int type, unsigned int count,
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


/*
 * Windows this process has open, so that the fixture's teardown can close
 * what a failed ASSERT left behind (the test's own frame is gone then).
 */
struct percs_window *open_w[64];
unsigned int nr_open_w;

void open_w_del(struct percs_window *w)
{
	for (unsigned int i = 0; i < nr_open_w; i++)
		if (open_w[i] == w) {
			open_w[i] = open_w[--nr_open_w];
			return;
		}
}

void open_w_close_all(void)
{
	while (nr_open_w)
		percs_window_release(open_w[--nr_open_w]);
}

int mem_open_flags(struct mem *m, unsigned int hub, unsigned int unit,
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

int mem_open(struct mem *m, unsigned int hub, unsigned int unit,
	     uint32_t key, uint32_t rx)
{
	return mem_open_flags(m, hub, unit, key, rx, 0);
}

void mem_close(struct mem *m)
{
	if (m->w) {
		open_w_del(m->w);
		percs_window_release(m->w);
	}
	m->w = NULL;
	m->fd = -1;
}

int cau_create(int fd, uint32_t flags, const struct percs_addr *a,
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

int cau_tree_op(int fd, unsigned long ioc, uint32_t tree)
{
	struct percs_cau_tree_op op = { .size = sizeof(op), .tree = tree };

	return ioctl(fd, ioc, &op) ? -errno : 0;
}


int tree_setup(struct tree *t)
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


void desc_make(struct desc *d, uint32_t tree, unsigned int coll,
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
int desc_post(struct percs_window *w, const struct desc *d)
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

int post(struct percs_window *w, uint32_t tree, unsigned int coll,
	 unsigned int op, unsigned int type, unsigned int count,
	 const void *data, uint32_t tag)
{
	struct desc d;

	desc_make(&d, tree, coll, op, type, count, data, tag);
	return desc_post(w, &d);
}


int res_recv(struct percs_window *w, struct res *r, int ms)
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
bool res_none(struct percs_window *w, int ms)
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
int cqe_wait(struct percs_window *w, struct percs_cqe *c, int ms)
{
	int r = pt_cq_wait(w, c, ms);

	return r == 1 ? 1 : 0;
}


/* 0, or a description of the first difference in @why. */
int res_check(const struct res *r, const struct want *x, char *why,
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


const struct fconst fc32 = {
	.qnan = 0x7fc0abcdULL, .qnan2 = 0xffc01234ULL, .snan = 0x7f80abcdULL,
	.inf = 0x7f800000ULL, .ninf = 0xff800000ULL, .nzero = 0x80000000ULL,
	.big = 0x7f400000ULL,	/* 1.5 * 2^127: two of them overflow */
};

const struct fconst fc64 = {
	.qnan = 0x7ff800000000abcdULL, .qnan2 = 0xfff8000000001234ULL,
	.snan = 0x7ff000000000abcdULL, .inf = 0x7ff0000000000000ULL,
	.ninf = 0xfff0000000000000ULL, .nzero = 0x8000000000000000ULL,
	.big = 0x7fe8000000000000ULL,
};

/* ±{0.5, 1, 2, 4}: sums and products of these are exact in any order. */
uint64_t small_float(unsigned int type, uint64_t r)
{
	static const double v[] = { 0.5, 1, 2, 4, -0.5, -1, -2, -4 };

	return type == PERCS_CAU_T_F32 ? bits_f32((float)v[r & 7]) :
					 bits_f64(v[r & 7]);
}

/* Any sign, 2^-20 .. 2^20, a full random mantissa: order matters. */
uint64_t rand_float(unsigned int type, uint64_t r, uint64_t r2)
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
void gen_input(unsigned int type, unsigned int count, unsigned int m,
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



/* @poll: a bit per member whose window is in poll mode. */
int pool_open_poll(struct pool *p, unsigned int n, uint32_t rx,
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

int pool_open(struct pool *p, unsigned int n, uint32_t rx)
{
	return pool_open_poll(p, n, rx, 0);
}

void pool_close(struct pool *p)
{
	for (unsigned int i = 0; i < p->n; i++)
		mem_close(&p->m[i]);
	p->n = 0;
}

/*
 * DESTROY by member 0: every other member gets exactly one -ECONNRESET
 * entry naming the tree, the destroyer none.  Return: 0 or -1 (logged).
 */
int tree_end_check(struct tree *t)
{
	struct percs_cqe c;
	int bad = 0;

	if (cau_tree_op(t->m[0]->fd, PERCS_IOC_CAU_DESTROY, t->id)) {
		say("%s: DESTROY: %s", t->name, strerror(errno));
		return -1;
	}
	for (unsigned int i = 1; i < t->n; i++) {
		if (!cqe_wait(t->m[i]->w, &c, WAIT_MS) ||
		    c.res != -ECONNRESET || c.user_data != t->id ||
		    c.kind != PERCS_PKT_COLL) {
			say("%s: member %u: no -ECONNRESET entry for tree %u",
			       t->name, i, t->id);
			bad++;
		}
		if (percs_cq_poll(t->m[i]->w, &c, 1)) {
			say("%s: member %u: an extra entry (res %d)",
			       t->name, i, c.res);
			bad++;
		}
	}
	if (percs_cq_poll(t->m[0]->w, &c, 1)) {
		say("%s: the destroyer got an entry (res %d)", t->name,
		       c.res);
		bad++;
	}
	return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Multi-process jobs: each child opens its own window on its hub. */


int job_barrier(struct job *j, unsigned int k)
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

bool job_failed(struct job *j)
{
	return __atomic_load_n(&j->fail, __ATOMIC_SEQ_CST);
}

int job_child(int idx, void *arg)
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

struct job *job_new(unsigned int n, uint32_t flags,
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
/* Multicast (PERCS_COLL_MCAST): from any member to every other. */

/* Origin @o's @k-th multicast: its type, count and data (zero beyond). */
void mc_make(unsigned int o, uint64_t k, unsigned int *type,
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

uint32_t mc_tag(unsigned int o, uint64_t k)
{
	return (uint32_t)(o << 24 | (k & 0xffffff));
}

void mc_desc(struct desc *d, uint32_t tree, unsigned int o, uint64_t k,
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
int mc_post(struct percs_window *w, uint32_t tree, unsigned int o,
	    uint64_t k)
{
	struct desc d;

	mc_desc(&d, tree, o, k, false);
	return desc_post(w, &d);
}

/* The same without waiting: -EAGAIN when the send FIFO is full. */
int mc_try(struct percs_window *w, uint32_t tree, unsigned int o,
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
int mc_check(const struct res *r, uint32_t tree, uint32_t key,
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


int mc_stats(uint32_t tree, struct mc_stats *s)
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

/* ------------------------------------------------------------------ */
/* The fixture's work, shared by the programs. */

const char *collkit_setup(struct collkit_saved *s)
{
	static char why[64];
	long hubs = pt_nr_hubs();

	if (hubs < NEED_HUBS) {
		snprintf(why, sizeof(why), "needs %d hubs (topology=4x4), have %ld",
			 NEED_HUBS, hubs);
		return why;
	}
	s->hold = pt_isr_read("hold_us");
	s->depth = pt_isr_read("reorder_depth");
	pt_faults_set(0);
	return NULL;
}

int collkit_teardown(const struct collkit_saved *s, struct pt_live *l)
{
	pt_faults_set(0);
	if (s->hold > 0)
		pt_isr_set("hold_us", s->hold);
	if (s->depth > 0)
		pt_isr_set("reorder_depth", s->depth);
	open_w_close_all();
	if (!pt_wait_live_zero(l, PT_TIMEOUT_MS))
		return 0;
	say("live: windows %ld reserved %ld mappings %ld blocked %ld jobs %ld in_flight %ld atomics %ld cau_trees %ld",
	    l->windows, l->windows_reserved, l->mappings, l->blocked_senders,
	    l->jobs, l->packets_in_flight, l->atomics_outstanding,
	    l->cau_trees);
	return -1;
}
