// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: atomics at the PGAS level (percs_amo_*).
 */
#include "unit.h"

/* Which non-fetching operations share a packet, and when it leaves. */
static void test_amo_packing(void)
{
	struct aenv v;
	struct percs_rmr r2, r3;
	struct fwin *c;
	uint8_t *mem2;
	uint64_t *m, old;
	unsigned int d;

	aenv_init(&v, 0);
	c = fwin_new(3, 4096, 4096, 0);
	m = (uint64_t *)v.mem;
	mem2 = zalloc(4096);
	r2 = v.r;
	r2.handle = ftmr_add(2, mem2, 4096, PERCS_ACCESS_REMOTE_ATOMIC, 0);
	r2.base = (uintptr_t)mem2;
	/* Same handle number in another window: another target. */
	r3 = r2;
	r3.win = c->addr;
	ftmr_add(3, mem2, 4096, PERCS_ACCESS_REMOTE_ATOMIC, r2.handle);

	/* Four adds to one registration: one full packet, sent at once. */
	d = A.descs;
	for (int i = 0; i < 3; i++)
		CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8 * i, i + 1), 0);
	CHECK_EQ(A.descs, d);
	CHECK_EQ(m[0], 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 24, 4), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(a_last()->e.count, 4);
	CHECK_EQ(a_last()->h.length, PERCS_ATOMIC_LEN(4));
	CHECK_EQ(a_last()->e.op, PERCS_ATOMIC_ADD);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(a_last()->ops[i].addr, (uintptr_t)&m[i]);
		CHECK_EQ(m[i], i + 1);
	}
	/* Three, then quiet: one packet of three.  One: a plain descriptor. */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(percs_atomic_or64(v.a->w, &v.r, 32, 1ULL << i), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(a_last()->e.count, 3);
	CHECK_EQ(m[4], 7);
	CHECK_EQ(percs_atomic_xor64(v.a->w, &v.r, 32, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK_EQ(a_last()->e.count, 1);
	CHECK_EQ(a_last()->h.length, PERCS_ATOMIC_LEN(1));
	CHECK_EQ(m[4], 6);
	/* percs_wait() sends what is packed before it sleeps. */
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 40, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 40, 1), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK(percs_wait(v.a->w, 0) >= 0);
	CHECK_EQ(A.descs, d + 4);
	CHECK_EQ(a_last()->e.count, 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(m[5], 2);

	/* Another handle, op, width or window sends what is packed. */
	d = A.descs;
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &r2, 0, 1), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(a_last()->e.count, 2);
	CHECK_EQ(percs_atomic_and64(v.a->w, &r2, 0, 1), 0);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(a_last()->e.count, 1);
	CHECK_EQ(a_last()->e.handle, r2.handle);
	CHECK_EQ(percs_atomic_and32(v.a->w, &r2, 0, 1), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK_EQ(a_last()->e.width, 8);
	CHECK_EQ(percs_atomic_and32(v.a->w, &r3, 0, 1), 0);
	CHECK_EQ(A.descs, d + 4);
	CHECK_EQ(a_last()->e.width, 4);
	CHECK_EQ(a_last()->h.dst.window, 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 5);
	CHECK_EQ(a_last()->h.dst.window, 3);
	CHECK_EQ(m[0], 3);

	/* A fetching, blocking or CSWAP operation sends what is packed first. */
	d = A.descs;
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 4);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(A.log[d].e.count, 1);
	CHECK_EQ(a_last()->e.flags, PERCS_ATOMIC_F_FETCH);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_amo(v.a->w, &v.r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL,
			   PERCS_AMO_F_BLOCK), 0);
	CHECK_EQ(A.descs, d + 4);
	CHECK_EQ(a_last()->e.flags, 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_amo(v.a->w, &v.r, 0, PERCS_ATOMIC_CSWAP, 8, 0, 0, NULL,
			   0), 0);
	CHECK_EQ(A.descs, d + 6);
	CHECK_EQ(a_last()->e.op, PERCS_ATOMIC_CSWAP);
	CHECK_EQ(a_last()->e.flags, 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(m[0], 8);

	/* PACK_OFF: one packet per operation, sent at once. */
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
	d = A.descs;
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_OFF), 0);
	CHECK_EQ(A.descs, d + 1);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
		CHECK_EQ(A.descs, d + 2 + i);
		CHECK_EQ(a_last()->e.count, 1);
	}
	CHECK_EQ(m[1], 2 + 5);
	CHECK_EQ(percs_atomic_set_packing(v.a->w, 2), -EINVAL);
	CHECK_EQ(percs_atomic_set_packing(NULL, PERCS_PACK_AUTO), -EINVAL);
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_AUTO), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
	CHECK_EQ(A.descs, d + 5);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(A.descs, d + 6);
	CHECK_EQ(H.violations, 0);
	fwin_free(c);
	free(mem2);
	aenv_fini(&v);
}

/*
 * Fetching operations of every width and op against the reference, at
 * random aligned offsets: the memory around the operand is untouched, the
 * fetched value is exactly @width bytes (the rest of the caller's buffer
 * too), signed values wrap as two's complement.
 */
static void test_amo_fetch_widths(void)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	uint8_t shadow[64], buf[8];
	uint64_t seed = 12345, got;
	uint16_t o16 = 0;
	uint8_t o8 = 0;
	int16_t s16;
	struct aenv v;

	aenv_init(&v, 0);
	for (int i = 0; i < 64; i++)
		v.mem[i] = shadow[i] = (uint8_t)(i * 37 + 11);
	for (int k = 0; k < 2000; k++) {
		unsigned int width = widths[rnd64(&seed) % 4];
		unsigned int op = (unsigned int)(rnd64(&seed) % 4);
		uint64_t off = rnd64(&seed) % (64 / width) * width;
		uint64_t val = rnd64(&seed) & a_mask(width), old;
		bool nbi = k % 3 == 0;

		old = a_load(shadow + off, width);
		a_store(shadow + off, width, a_apply(op, width, old, val, 0));
		memset(buf, 0xee, sizeof(buf));
		CHECK_EQ(percs_amo(v.a->w, &v.r, off, op, width, val, 0, buf,
				   nbi ? 0 : PERCS_AMO_F_BLOCK), 0);
		if (nbi)
			CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
		got = a_load(buf, width);
		if (got != old || memcmp(v.mem, shadow, 64))
			CHECK_EQ(got, old);
		for (unsigned int j = width; j < 8; j++)
			if (buf[j] != 0xee)
				CHECK_EQ(buf[j], 0xee);
		if (memcmp(v.mem, shadow, 64)) {
			CHECK(!"memory differs from the reference");
			break;
		}
	}
	/* Wraparound and signed operands through the typed wrappers. */
	v.mem[100] = 0xff;
	CHECK_EQ(percs_atomic_fetch_add8(v.a->w, &v.r, 100, 1, &o8), 0);
	CHECK_EQ(o8, 0xff);
	CHECK_EQ(v.mem[100], 0);
	CHECK_EQ(v.mem[99] | v.mem[101], 0);
	memcpy(v.mem + 102, &(int16_t){ 1 }, 2);
	CHECK_EQ(percs_atomic_fetch_add16(v.a->w, &v.r, 102, (uint16_t)-3,
					  &o16), 0);
	CHECK_EQ(o16, 1);
	memcpy(&s16, v.mem + 102, 2);
	CHECK_EQ(s16, -2);
	CHECK_EQ(percs_atomic_fetch16(v.a->w, &v.r, 102, &o16), 0);
	CHECK_EQ((int16_t)o16, -2);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/* _nbi values are stored when the completion is taken, not before. */
static void test_amo_nbi_values(void)
{
	uint32_t o32 = 0xaaaaaaaa;
	uint64_t o64 = 1;
	struct aenv v;

	aenv_init(&v, 0);
	memcpy(v.mem + 8, &(uint32_t){ 10 }, 4);
	A.hold = true;
	CHECK_EQ(percs_atomic_fetch_add32_nbi(v.a->w, &v.r, 8, 5, &o32), 0);
	CHECK_EQ(percs_atomic_fetch_or64_nbi(v.a->w, &v.r, 16, 3, &o64), 0);
	CHECK_EQ(A.nheld, 2);
	CHECK_EQ(o32, 0xaaaaaaaa);
	a_release(A.nheld);
	CHECK_EQ(o32, 0xaaaaaaaa);	/* in the CQ, not taken yet */
	A.hold = false;
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(o32, 10);
	CHECK_EQ(o64, 0);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	aenv_fini(&v);
}

/* Compare-and-swap: success, failure, narrow widths; swap built on it. */
static void test_amo_cswap(void)
{
	uint64_t *m, old = 0;
	uint8_t o8 = 0;
	uint32_t o32 = 0;
	unsigned int d;
	struct aenv v;

	aenv_init(&v, 0);
	m = (uint64_t *)v.mem;
	m[0] = 5;
	CHECK_EQ(percs_atomic_compare_swap64(v.a->w, &v.r, 0, 5, 9, &old), 0);
	CHECK_EQ(old, 5);
	CHECK_EQ(m[0], 9);
	CHECK_EQ(a_last()->e.op, PERCS_ATOMIC_CSWAP);
	CHECK_EQ(a_last()->h.length, PERCS_ATOMIC_LEN(1) + 8);
	CHECK_EQ(a_last()->compare, 5);
	CHECK_EQ(a_last()->ops[0].operand, 9);
	CHECK_EQ(percs_atomic_compare_swap64(v.a->w, &v.r, 0, 5, 1, &old), 0);
	CHECK_EQ(old, 9);
	CHECK_EQ(m[0], 9);
	/* One byte of a word: its neighbours stay. */
	m[1] = 0x1122334455667788ULL;
	CHECK_EQ(percs_atomic_compare_swap8(v.a->w, &v.r, 11, 0x55, 0xee,
					    &o8), 0);
	CHECK_EQ(o8, 0x55);
	CHECK_EQ(m[1], 0x11223344ee667788ULL);
	CHECK_EQ(percs_atomic_compare_swap32_nbi(v.a->w, &v.r, 12, 0x11223344,
						 7, &o32), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(o32, 0x11223344);
	CHECK_EQ(m[1], 0x00000007ee667788ULL);

	/* Swap: one CSWAP when the old value is 0, two otherwise. */
	m[2] = 0;
	d = A.descs;
	CHECK_EQ(percs_atomic_swap64(v.a->w, &v.r, 16, 42, &old), 0);
	CHECK_EQ(A.descs, d + 1);
	CHECK_EQ(old, 0);
	CHECK_EQ(m[2], 42);
	CHECK_EQ(percs_atomic_swap64(v.a->w, &v.r, 16, 43, &old), 0);
	CHECK_EQ(A.descs, d + 3);
	CHECK_EQ(old, 42);
	CHECK_EQ(m[2], 43);
	/* Another writer between the CSWAPs: it retries with what it saw. */
	A.meddle = 2;
	CHECK_EQ(percs_atomic_swap32(v.a->w, &v.r, 16, 100, &o32), 0);
	CHECK_EQ(A.descs, d + 6);
	CHECK_EQ(o32, 45);
	CHECK_EQ((uint32_t)m[2], 100);
	CHECK_EQ(percs_atomic_set8(v.a->w, &v.r, 24, 0x80), 0);
	CHECK_EQ(percs_atomic_fetch8(v.a->w, &v.r, 24, &o8), 0);
	CHECK_EQ(o8, 0x80);
	CHECK_EQ(percs_atomic_swap16(v.a->w, &v.r, 17, 1, NULL), -EINVAL);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/* quiet: the first error since the last quiet; blocking calls their own. */
static void test_amo_quiet_errors(void)
{
	struct percs_rmr noright, nohandle;
	uint64_t old = 0x5a5a;
	uint64_t *m;
	struct aenv v;

	aenv_init(&v, 0);
	m = (uint64_t *)v.mem;
	noright = v.r;
	noright.handle = ftmr_add(2, v.mem, 4096, PERCS_ACCESS_REMOTE_READ, 0);
	nohandle = v.r;
	nohandle.handle = 0xbad;

	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &noright, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &nohandle, 0, 1), 0);
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), -EPERM);
	CHECK_EQ(m[0], 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &nohandle, 0, 1, &old), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), -ENOENT);
	CHECK_EQ(old, 0x5a5a);

	/* A blocking call returns its own status and leaves quiet's alone. */
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &noright, 0, 1, &old), -EPERM);
	CHECK_EQ(old, 0x5a5a);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	A.force_res = -ETIMEDOUT;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), -ETIMEDOUT);
	CHECK_EQ(percs_atomic_compare_swap64(v.a->w, &v.r, 0, 2, 3, &old),
		 -ETIMEDOUT);
	CHECK_EQ(percs_atomic_swap64(v.a->w, &v.r, 0, 3, &old), -ETIMEDOUT);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(percs_atomic_xor64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), -ETIMEDOUT);
	A.force_res = 0;
	CHECK_EQ(m[0], 2);
	CHECK_EQ(old, 0x5a5a);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(percs_atomic_quiet(NULL), -EINVAL);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/* Bad arguments: refused before anything is sent or packed. */
static void test_amo_arg_errors(void)
{
	struct percs_rmr r;
	uint64_t old, tail;
	unsigned int d;
	struct aenv v;

	aenv_init(&v, 0);
	/* One operation waits packed: a refused call must not send it. */
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	tail = v.a->w->sq.tail;
	d = A.descs;
#define AMO(...) percs_amo(v.a->w, __VA_ARGS__)
	CHECK_EQ(AMO(&v.r, 4096, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -ERANGE);
	CHECK_EQ(AMO(&v.r, 4092, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -ERANGE);
	CHECK_EQ(AMO(&v.r, 4095, PERCS_ATOMIC_ADD, 2, 1, 0, &old, 0), -ERANGE);
	CHECK_EQ(AMO(&v.r, UINT64_MAX - 3, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0),
		 -ERANGE);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 8192, 1, &old), -ERANGE);
	CHECK_EQ(AMO(&v.r, 4, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 1, PERCS_ATOMIC_OR, 2, 1, 0, &old,
		     PERCS_AMO_F_BLOCK), -EINVAL);
	CHECK_EQ(percs_atomic_compare_swap32(v.a->w, &v.r, 6, 0, 1, NULL),
		 -EINVAL);
	r = v.r;		/* a registration starting at an odd address */
	r.base += 1;
	r.length -= 1;
	CHECK_EQ(AMO(&r, 0, PERCS_ATOMIC_ADD, 2, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 1, 0x100, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 4, 1ULL << 32, 0, NULL, 0),
		 -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_CSWAP, 2, 1, 0x10000, &old, 0),
		 -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 3, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 0, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 16, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_OP_MAX + 1, 8, 1, 0, NULL, 0),
		 -EINVAL);
	CHECK_EQ(AMO(&v.r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 2), -EINVAL);
	CHECK_EQ(AMO(NULL, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -EINVAL);
	r = v.r;
	r.reserved = 1;
	CHECK_EQ(AMO(&r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(percs_amo(NULL, &v.r, 0, PERCS_ATOMIC_ADD, 8, 1, 0, NULL, 0),
		 -EINVAL);
	CHECK_EQ(percs_amo_swap(v.a->w, &v.r, 0, 4, 1ULL << 32, NULL), -EINVAL);
#undef AMO
	CHECK_EQ(v.a->w->sq.tail, tail);
	CHECK_EQ(A.descs, d);
	CHECK_EQ(v.a->w->amo.pend.count, 1);
	/* The last operand of the registration is fine. */
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 4088, 1, &old), 0);
	CHECK_EQ(A.descs, d + 2);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

static bool cqe_is_lib(const struct percs_cqe *c)
{
	return (uint32_t)(c->user_data >> 32) == PERCS_AMO_USER_DATA_TAG;
}

/*
 * The CQ is shared: the library's entries never reach percs_cq_poll(),
 * others met while it waits come back later, in order, with those still
 * in the ring after them.
 */
static void test_amo_cq_stash(void)
{
	struct percs_addr nowhere = { .window = 9 };
	struct percs_cqe c[8];
	uint64_t old = 0, nbi = 0, want = 0;
	uint8_t buf[8] = { 0 }, local[8];
	struct percs_atomic_wr wr;
	struct aenv v;
	int n;

	aenv_init(&v, 0);
	CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 8, 101, 0), 0);
	CHECK_EQ(percs_rdma_write(v.a->w, &nowhere, 1, 2, 3, local, 8, 0, 102),
		 0);
	wr = (struct percs_atomic_wr){
		.op = PERCS_ATOMIC_ADD, .width = 8, .count = 1,
		.dst = v.r.win, .handle = v.r.handle, .user_data = 103,
		.ops = { { v.r.base, 1 } },
	};
	CHECK_EQ(percs_atomic_post(v.a->w, &wr), 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 1);
	CHECK_EQ(v.a->w->cq.stash_count, 3);
	CHECK_EQ(v.a->db->cq_head, 4);		/* all four taken from the ring */
	CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 8, 104, 0), 0);
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1, &nbi), 0);
	CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 8, 105, 0), 0);
	CHECK_EQ(percs_wait(v.a->w, 0), 1);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 2), 2);
	CHECK_EQ(c[0].user_data, 101);
	CHECK_EQ(c[0].kind, PERCS_PKT_FIFO);
	CHECK_EQ(c[0].res, -ECONNREFUSED);
	CHECK_EQ(c[1].user_data, 102);
	CHECK_EQ(c[1].kind, PERCS_PKT_RDMA);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 8), 3);
	CHECK_EQ(c[0].user_data, 103);
	CHECK_EQ(c[0].kind, PERCS_PKT_ATOMIC);
	CHECK_EQ(c[0].res, 0);
	CHECK_EQ(c[1].user_data, 104);
	CHECK_EQ(c[2].user_data, 105);
	/* The library's entry between them was taken: value stored. */
	CHECK_EQ(nbi, 2);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(percs_cq_poll(v.a->w, c, 8), 0);
	CHECK_EQ(v.a->w->cq.stash_count, 0);

	/* Many rounds, ring wrapping, odd batches: each entry once, in order. */
	for (unsigned int i = 0; i < 1500; i++) {
		CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 0, 1000 + i, 0), 0);
		if (i % 3 == 0)
			CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1,
							  &old), 0);
		if (i % 4 == 0)
			CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 8,
							      1, &nbi), 0);
		if (i % 7 == 6 || i == 1499) {
			while ((n = percs_cq_poll(v.a->w, c, 3)) > 0) {
				for (int j = 0; j < n; j++, want++) {
					CHECK(!cqe_is_lib(&c[j]));
					CHECK_EQ(c[j].user_data, 1000 + want);
				}
			}
		}
	}
	CHECK_EQ(want, 1500);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 3 + 500);
	CHECK_EQ(((uint64_t *)v.mem)[1], 375);
	CHECK_EQ(v.a->st->cq_overflows, 0);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * A blocking operation with the send FIFO full: nothing is written, the
 * call fails with -EAGAIN once the HFI takes nothing, and the next one,
 * the HFI running again, goes through; then 100 more wrap the ring.
 */
static void test_amo_blocking_fifo_full(void)
{
	static uint8_t buf[8];
	uint64_t old = 7, tail;
	struct aenv v;
	unsigned int i;

	aenv_init(&v, 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 0);
	H.paused = true;
	for (i = 0; i < 32; i++)
		CHECK_EQ(percs_send_compose(v.a->w, &v.b->addr, buf, 8, i, 0),
			 0);
	tail = v.a->w->sq.tail;
	old = 7;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), -EAGAIN);
	CHECK_EQ(v.a->w->sq.tail, tail);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(old, 7);
	H.paused = false;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 1);
	for (i = 0; i < 100; i++) {
		CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
		CHECK_EQ(old, 2 + i);
	}
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 102);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * Completions held back: the library keeps exactly 64 descriptors in
 * flight, never more, and every fetched value arrives once.
 */
static void test_amo_outstanding_limit(void)
{
	static uint64_t vals[300];
	static bool seen[300];
	struct aenv v;

	aenv_init(&v, 0);
	A.hold = true;
	A.release = 1;
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_OFF), 0);
	for (int i = 0; i < 300; i++) {
		CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1,
						      &vals[i]), 0);
		CHECK(v.a->w->amo.outstanding <= LP_AMO_SLOTS);
	}
	CHECK_EQ(A.max_inflight, LP_AMO_SLOTS);
	A.release = 0;
	A.release_after = 3;
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 300);
	for (int i = 0; i < 300; i++) {
		if (vals[i] >= 300 || seen[vals[i]])
			CHECK(!"fetched value out of range or twice");
		else
			seen[vals[i]] = true;
	}
	/* Packed non-fetching ones: descriptors in flight, same bound. */
	CHECK_EQ(percs_atomic_set_packing(v.a->w, PERCS_PACK_AUTO), 0);
	A.max_inflight = 0;
	A.release_after = 0;
	A.release = 1;
	for (int i = 0; i < 1200; i++)
		CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 8, 1), 0);
	CHECK_EQ(A.max_inflight, LP_AMO_SLOTS);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(((uint64_t *)v.mem)[1], 1200);
	CHECK_EQ(v.a->st->cq_overflows, 0);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * The result area: registered with LOCAL_WRITE on the first fetch only,
 * one slot per descriptor in flight, deregistered at release; failures
 * to set it up send nothing.
 */
static void test_amo_result_area(void)
{
	uint64_t o[3], addr[3];
	uint32_t handle;
	unsigned int d;
	struct aenv v;
	int calls;

	aenv_init(&v, 0);
	calls = R.mr_calls;
	CHECK_EQ(percs_atomic_add64(v.a->w, &v.r, 0, 1), 0);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(R.mr_calls, calls);
	A.hold = true;
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1,
						      &o[i]), 0);
		addr[i] = a_last()->e.result_addr;
	}
	CHECK_EQ(R.mr_calls, calls + 1);
	CHECK_EQ(R.mr_seen.access, PERCS_ACCESS_LOCAL_WRITE);
	CHECK_EQ(R.mr_seen.length, LP_AMO_SLOTS * 8);
	handle = a_last()->e.result_handle;
	CHECK(handle != 0);
	CHECK_EQ(R.mr_live[handle & 0xffff], handle);
	CHECK(addr[0] != addr[1] && addr[1] != addr[2] && addr[0] != addr[2]);
	for (int i = 0; i < 3; i++)
		CHECK(addr[i] >= R.mr_seen.addr &&
		      addr[i] + 8 <= R.mr_seen.addr + R.mr_seen.length);
	A.hold = false;
	a_release(A.nheld);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK(o[0] == 1 && o[1] == 2 && o[2] == 3);
	fwin_free(v.a);
	CHECK_EQ(R.dereg_seen.handle, handle);
	CHECK_EQ(R.mr_live[handle & 0xffff], 0);
	fwin_free(v.b);
	free(v.mem);

	/* Registration or mapping fails: the error, nothing sent. */
	aenv_init(&v, 0);
	d = A.descs;
	R.mr_errno = ENOMEM;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, o), -ENOMEM);
	R.mr_errno = EFAULT;
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1, o), -EFAULT);
	R.mr_errno = 0;
	R.mmap_fail_nth = R.mmap_calls + 1;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, o), -ENOMEM);
	CHECK_EQ(A.descs, d);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, o), 0);
	CHECK_EQ(o[0], 0);
	CHECK_EQ(v.mem[0], 1);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * Blocking waits kick the engine (kick mode) until the completion comes:
 * here the fake answers only every fifth kick, as after retransmissions.
 */
static void test_amo_wait_kicks(void)
{
	unsigned int kicks, nkicks;
	uint64_t old = 0;
	struct aenv v;

	aenv_init(&v, 0);
	A.hold = true;
	A.release_after = 5;
	A.kicks = 1;
	kicks = v.a->kicks[0];
	nkicks = v.a->nkicks;
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 7, &old), 0);
	CHECK_EQ(old, 0);
	CHECK(v.a->kicks[0] - kicks >= 4);
	CHECK_EQ(v.a->kicks[0] - kicks, v.a->nkicks - nkicks);
	CHECK_EQ(A.nheld, 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 7);
	/*
	 * A failing kick ends the wait with its error; the operation stays
	 * in flight and its late value is not stored (the caller had an
	 * error).
	 */
	A.release_after = 0;
	A.kick_err = -EIO;
	A.kick_err_after = A.kicks + 1;		/* the trigger's kick works */
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), -EIO);
	CHECK_EQ(v.a->w->amo.outstanding, 1);
	A.kick_err = 0;
	A.hold = false;
	a_release(A.nheld);
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	CHECK_EQ(old, 0);
	CHECK_EQ(((uint64_t *)v.mem)[0], 8);
	CHECK_EQ(H.violations, 0);
	aenv_fini(&v);
}

/*
 * A CQ that overflowed lost a completion of the library's: the wait gives
 * up after lost_ms with -EOVERFLOW instead of hanging, keeps every other
 * entry, and a late entry of the lost slot is ignored.
 */
static void test_amo_cq_overflow_lost(void)
{
	struct percs_addr nowhere = { .window = 9 };
	uint64_t nbi = 0x77, old = 0x77;
	struct percs_cqe c[16], late;
	uint8_t buf[8] = { 0 };
	unsigned int got = 0;
	struct aenv v;
	int n;

	aenv_init(&v, 0);
	v.a->w->amo.lost_ms = 20;
	for (int i = 0; i < PERCS_CQ_ENTRIES; i++)
		CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 0, i, 0), 0);
	CHECK_EQ(percs_atomic_fetch_add64_nbi(v.a->w, &v.r, 0, 1, &nbi), 0);
	CHECK_EQ(v.a->st->cq_overflows, 1);
	late = (struct percs_cqe){
		.user_data = a_last()->e.user_data, .kind = PERCS_PKT_ATOMIC,
	};
	CHECK_EQ(percs_atomic_quiet(v.a->w), -EOVERFLOW);
	CHECK_EQ(nbi, 0x77);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	for (int i = 0; i < PERCS_CQ_ENTRIES; i++)
		CHECK_EQ(percs_send(v.a->w, &nowhere, buf, 0, 1000 + i, 0), 0);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old),
		 -EOVERFLOW);
	CHECK_EQ(old, 0x77);
	/* The late entry of the first: no value stored, nothing freed. */
	post_raw_cqe(v.a, &late);
	CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
	CHECK_EQ(old, 2);
	CHECK_EQ(nbi, 0x77);
	/* The application is told once, then gets the entries that fit. */
	CHECK_EQ(percs_cq_poll(v.a->w, c, 16), -EOVERFLOW);
	while ((n = percs_cq_poll(v.a->w, c, 16)) > 0)
		for (int j = 0; j < n; j++, got++)
			CHECK_EQ(c[j].user_data, got < PERCS_CQ_ENTRIES ? got :
				 1000 + got - PERCS_CQ_ENTRIES);
	CHECK_EQ(got, 2 * PERCS_CQ_ENTRIES);
	CHECK_EQ(v.a->w->amo.outstanding, 0);
	aenv_fini(&v);
}

/* Poll mode: fetch-adds through the polling engine thread. */
static void test_amo_threaded_poll_mode(void)
{
	struct aenv v;
	pthread_t e;
	uint64_t old, sum = 0, nbi[8];

	aenv_init(&v, PERCS_WINDOW_F_POLL);
	H.threaded = true;
	sem_init(&H.wake, 0, 0);
	REQUIRE(!pthread_create(&e, NULL, engine_thread, NULL));
	for (unsigned int i = 0; i < 2000; i++) {
		CHECK_EQ(percs_atomic_fetch_add64(v.a->w, &v.r, 0, 1, &old), 0);
		sum += old;
		CHECK_EQ(percs_atomic_add32(v.a->w, &v.r, 8, 2), 0);
		if (i % 100 == 0) {
			for (int j = 0; j < 8; j++)
				CHECK_EQ(percs_atomic_fetch_add64_nbi(
					v.a->w, &v.r, 16, 1, &nbi[j]), 0);
			CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
			for (int j = 1; j < 8; j++)
				CHECK_EQ(nbi[j], nbi[j - 1] + 1);
		}
	}
	CHECK_EQ(percs_atomic_quiet(v.a->w), 0);
	__atomic_store_n(&engine_stop, true, __ATOMIC_RELEASE);
	sem_post(&H.wake);
	pthread_join(e, NULL);
	CHECK_EQ(sum, 1999ULL * 2000 / 2);
	CHECK_EQ(((uint64_t *)v.mem)[0], 2000);
	CHECK_EQ(((uint32_t *)v.mem)[2], 4000);
	CHECK_EQ(((uint64_t *)v.mem)[2], 160);
	CHECK_EQ(lost_wakeups, 0);
	CHECK_EQ(H.violations, 0);
	printf("#   %u engine sleeps, %u initiator kicks\n", engine_sleeps,
	       v.a->nkicks);
	aenv_fini(&v);
	sem_destroy(&H.wake);
}

/* The collectives' tests and their fake CAU use the fake HFI above. */

const struct unit_test amo_tests[] = {
	{ "amo: packing (4 adds one packet; handle/op/width/window/fetch/block/CSWAP/percs_wait flush; PACK_OFF)", test_amo_packing },
	{ "amo: fetched values per width and op against a reference, neighbours untouched", test_amo_fetch_widths },
	{ "amo: _nbi values stored when the completion is taken", test_amo_nbi_values },
	{ "amo: compare-and-swap success/failure, swap retries, set/fetch", test_amo_cswap },
	{ "amo: quiet returns the first error since the last, blocking calls their own", test_amo_quiet_errors },
	{ "amo: -ERANGE, -EINVAL with nothing sent or flushed", test_amo_arg_errors },
	{ "amo: shared CQ: library entries hidden, others kept in order", test_amo_cq_stash },
	{ "amo: a blocking operation with the send FIFO full: -EAGAIN, nothing written", test_amo_blocking_fifo_full },
	{ "amo: at most 64 descriptors in flight, reached, every value once", test_amo_outstanding_limit },
	{ "amo: result area registered on first fetch, deregistered at release, failures send nothing", test_amo_result_area },
	{ "amo: blocking waits kick until the completion comes; kick errors end them", test_amo_wait_kicks },
	{ "amo: CQ overflow: -EOVERFLOW after lost_ms, no hang, late entry ignored", test_amo_cq_overflow_lost },
	{ "amo: threaded: fetch-adds and quiet through a polling engine", test_amo_threaded_poll_mode },
	{ NULL, NULL }
};
