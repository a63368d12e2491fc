// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the fake atomic unit: executes atomic descriptors
 * on the process's memory.
 */
#include "unit.h"

struct fake_atomic_unit A;

uint32_t ftmr_add(uint16_t window, void *base, uint64_t len,
		  uint32_t access, uint32_t handle)
{
	struct ftmr *m = &A.mr[A.nmr++];

	*m = (struct ftmr){
		.window = window, .handle = handle ? handle : 0x700 + A.nmr,
		.base = base, .len = len, .access = access,
	};
	return m->handle;
}

static const struct ftmr *ftmr_find(uint16_t window, uint32_t handle)
{
	for (unsigned int i = 0; i < A.nmr; i++)
		if (A.mr[i].window == window && A.mr[i].handle == handle)
			return &A.mr[i];
	return NULL;
}

uint64_t a_mask(unsigned int width)
{
	return width == 8 ? ~0ULL : (1ULL << (width * 8)) - 1;
}

uint64_t a_load(const void *p, unsigned int width)
{
	switch (width) {
	case 1: return *(const uint8_t *)p;
	case 2: return *(const uint16_t *)p;
	case 4: return *(const uint32_t *)p;
	default: return *(const uint64_t *)p;
	}
}

void a_store(void *p, unsigned int width, uint64_t v)
{
	switch (width) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 2: *(uint16_t *)p = (uint16_t)v; break;
	case 4: *(uint32_t *)p = (uint32_t)v; break;
	default: *(uint64_t *)p = v; break;
	}
}

/* The reference arithmetic (independent of the library and the kernel). */
uint64_t a_apply(unsigned int op, unsigned int width, uint64_t old,
		 uint64_t v, uint64_t cmp)
{
	switch (op) {
	case PERCS_ATOMIC_ADD: return (old + v) & a_mask(width);
	case PERCS_ATOMIC_AND: return old & v;
	case PERCS_ATOMIC_OR: return old | v;
	case PERCS_ATOMIC_XOR: return old ^ v;
	default: return old == cmp ? v : old;
	}
}

/* Every rule of the uAPI header: the library must never break one. */
static bool a_desc_ok(const struct percs_pkt_hdr *h, const struct alog *l)
{
	const struct percs_atomic_ext *e = &l->e;
	bool fetch = e->flags & PERCS_ATOMIC_F_FETCH;
	bool cswap = e->op == PERCS_ATOMIC_CSWAP;
	uint64_t m;

	if (h->length < sizeof(*e) || e->op > PERCS_ATOMIC_OP_MAX ||
	    (e->width != 1 && e->width != 2 && e->width != 4 && e->width != 8) ||
	    !e->count || e->count > PERCS_ATOMIC_MAX_PACKED ||
	    (e->flags & ~PERCS_ATOMIC_F_ALL) || e->reserved || h->flags ||
	    h->route > PERCS_ROUTE_MAX)
		return false;
	if (h->length != PERCS_ATOMIC_LEN(e->count) + (cswap ? 8 : 0))
		return false;
	if (e->count > 1 && (fetch || cswap))
		return false;
	if (!fetch && (e->result_addr || e->result_handle))
		return false;
	m = a_mask(e->width);
	if (l->compare & ~m)
		return false;
	for (unsigned int i = 0; i < e->count; i++)
		if (l->ops[i].operand & ~m)
			return false;
	return true;
}

/* The initiator's result location, checked against the fake NMMU. */
static int a_result_ok(const struct percs_atomic_ext *e)
{
	uint32_t slot = e->result_handle & 0xffff;

	if (slot >= 8 || !R.mr_live[slot] || R.mr_live[slot] != e->result_handle)
		return -ENOENT;
	if (!(R.mr_access[slot] & PERCS_ACCESS_LOCAL_WRITE))
		return -EPERM;
	if (e->result_addr < R.mr_addr[slot] ||
	    e->result_addr - R.mr_addr[slot] > R.mr_len[slot] - e->width)
		return -ERANGE;
	return 0;
}

/* Check, apply all operations or none, store the old value, complete. */
void fake_atomic(struct fwin *f, const struct percs_pkt_hdr *h)
{
	struct alog l = { .h = *h };
	struct percs_cqe c = { .kind = PERCS_PKT_ATOMIC };
	const struct ftmr *t;
	uint64_t old = 0, inflight;
	int res = 0;

	memcpy(&l.e, h + 1, sizeof(l.e));
	memcpy(l.ops, (const uint8_t *)(h + 1) + sizeof(l.e),
	       (l.e.count <= PERCS_ATOMIC_MAX_PACKED ? l.e.count : 0) *
	       sizeof(l.ops[0]));
	if (l.e.op == PERCS_ATOMIC_CSWAP && h->length >= PERCS_ATOMIC_LEN(1) + 8)
		memcpy(&l.compare, (const uint8_t *)(h + 1) + PERCS_ATOMIC_LEN(1),
		       sizeof(l.compare));
	if (A.descs < A_LOG)
		A.log[A.descs] = l;
	c.user_data = l.e.user_data;
	if (!a_desc_ok(h, &l)) {
		violation("malformed atomic descriptor", f);
		res = -EINVAL;
		goto done;
	}
	if (A.force_res) {
		res = A.force_res;
		goto done;
	}
	if (h->dst.window >= NWIN || !H.win[h->dst.window]) {
		res = -ECONNREFUSED;
		goto done;
	}
	t = ftmr_find(h->dst.window, l.e.handle);
	if (!t) {
		res = -ENOENT;
		goto done;
	}
	if (!(t->access & PERCS_ACCESS_REMOTE_ATOMIC)) {
		res = -EPERM;
		goto done;
	}
	for (unsigned int i = 0; i < l.e.count; i++) {
		uint64_t a = l.ops[i].addr, base = (uintptr_t)t->base;

		if (a & (l.e.width - 1)) {
			res = -EINVAL;
			goto done;
		}
		if (a < base || a - base > t->len - l.e.width) {
			res = -ERANGE;
			goto done;
		}
	}
	if (l.e.flags & PERCS_ATOMIC_F_FETCH) {
		res = a_result_ok(&l.e);
		if (res) {
			c.flags = PERCS_CQE_F_LOCAL;
			goto done;
		}
	}
	for (unsigned int i = 0; i < l.e.count; i++) {
		void *p = (void *)(uintptr_t)l.ops[i].addr;
		uint64_t v;

		if (l.e.op == PERCS_ATOMIC_CSWAP && A.meddle) {
			A.meddle--;
			a_store(p, l.e.width, a_load(p, l.e.width) + 1);
		}
		v = a_load(p, l.e.width);
		if (!i)
			old = v;
		a_store(p, l.e.width, a_apply(l.e.op, l.e.width, v,
					      l.ops[i].operand, l.compare));
	}
	if (l.e.flags & PERCS_ATOMIC_F_FETCH)
		a_store((void *)(uintptr_t)l.e.result_addr, l.e.width, old);
done:
	c.res = res;
	A.descs++;
	inflight = A.descs - __atomic_load_n(&f->db->cq_head, __ATOMIC_ACQUIRE);
	if (inflight > A.max_inflight)
		A.max_inflight = (unsigned int)inflight;
	if (A.hold && A.nheld < A_HELD) {
		A.held[A.nheld].win = f->addr.window;
		A.held[A.nheld].c = c;
		A.nheld++;
		return;
	}
	post_raw_cqe(f, &c);
}

/* Post up to @n held completions, oldest first. */
void a_release(unsigned int n)
{
	unsigned int i;

	if (n > A.nheld)
		n = A.nheld;
	for (i = 0; i < n; i++)
		post_raw_cqe(H.win[A.held[i].win], &A.held[i].c);
	memmove(A.held, A.held + n, (A.nheld - n) * sizeof(A.held[0]));
	A.nheld -= n;
}

/* Held completions come back on kicks, like replies to retransmissions. */
int fake_atomic_kick(void)
{
	A.kicks++;
	if (A.kick_err && A.kicks > A.kick_err_after)
		return A.kick_err;
	if (A.release)
		a_release(A.release);
	if (A.release_after && A.kicks % A.release_after == 0)
		a_release(A.nheld);
	return 0;
}

const struct alog *a_last(void)
{
	return A.descs ? &A.log[(A.descs - 1) % A_LOG] : NULL;
}


void aenv_init(struct aenv *e, uint32_t flags)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	e->a = fwin_new(1, 4096, 4096, flags);
	e->b = fwin_new(2, 4096, 4096, flags);
	e->mem = zalloc(4096);
	e->r = (struct percs_rmr){
		.win = e->b->addr,
		.handle = ftmr_add(2, e->mem, 4096, PERCS_ACCESS_REMOTE_ATOMIC, 0),
		.base = (uintptr_t)e->mem,
		.length = 4096,
	};
	e->a->w->fd = fd;
	R.win_fd = fd;
}

void aenv_fini(struct aenv *e)
{
	fwin_free(e->a);
	fwin_free(e->b);
	free(e->mem);
}
