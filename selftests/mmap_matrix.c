// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_matrix: every way of mapping every region of a window, each with the
 * result Documentation/design.rst and uapi.rst give (or, for what the
 * module leaves to the core mm, the result Linux documents).
 *
 * One variant per region (enum percs_region_id).  The fixture holds two
 * windows of one job key, A (send 16 KiB, receive 32 KiB) and B (send
 * 8 KiB, receive 64 KiB), each with every region mapped, and has sent
 * traffic both ways so that every region of A holds something different
 * from the same region of B:
 *
 *   SEND_FIFO  A: two packets to B (200 and 300 bytes); B: one to A and
 *              one to an invalid address
 *   RECV_FIFO  the packets the other window sent
 *   DOORBELL   send_tail 5 units (A) and 3 units (B)
 *   STATUS     packets_sent 2 (A) and 1 (B), send_errors 0 and 1
 *   IMM        filled with 0x11 (A) and 0x22 (B), never triggered
 *   CQ         A: a NOTIFY success entry; B: an -EADDRNOTAVAIL entry
 *   CLOCK      the one global clock page of the module: the same page in
 *              A and B (the periodic recalibration is stopped meanwhile,
 *              so that it holds still while it is compared)
 *
 * Results (PAGE = the page size):
 *
 *   exact length, key offset, MAP_SHARED, documented prot   ok
 *   length - PAGE, length + PAGE                            EINVAL
 *   key + PAGE, key - PAGE, 0, unused region keys           EINVAL
 *   key + 1 (unaligned)                                     EINVAL (mm)
 *   another region's key with this region's length          ok (maps that
 *                                           region) if the lengths are
 *                                           equal, else EINVAL
 *   MAP_PRIVATE                                             EINVAL
 *   PROT_WRITE on a read-only region                        EPERM
 *   mprotect(PROT_WRITE) of a read-only mapping             EACCES (the
 *                                           module clears VM_MAYWRITE)
 *   mprotect of a writable mapping to read-only and back    ok (VM_MAYWRITE
 *                                           stays)
 *   mprotect of part of a region                            EINVAL (no
 *                                           split)
 *   mremap to grow (with or without MREMAP_MAYMOVE), or
 *   old_len 0 ("duplicate")                                 EFAULT: the
 *                                           mapping is VM_DONTEXPAND
 *                                           (mremap(2): "EFAULT ... or
 *                                           the mapping could not be
 *                                           expanded"; mm/mremap.c
 *                                           vma_to_resize())
 *   mremap with MREMAP_DONTUNMAP                            EINVAL
 *                                           (VM_DONTEXPAND, mremap(2))
 *   mremap to shrink a multi-page region                    EINVAL (split)
 *   mremap moving the whole mapping                         ok, same pages
 *   munmap of part of a region                              EINVAL
 *   MAP_FIXED mapping over part of a region                 ENOMEM (the
 *                                           core mm turns the refused
 *                                           split of the munmap step into
 *                                           ENOMEM; the region stays)
 *   a forked child                                          shares the
 *                                           pages both ways
 *   read(2) into a read-only mapping                        EFAULT
 *   a forced write (/proc/self/mem) into a read-only one    EIO
 *   B's fd with A's key                                     maps B's region
 *                                           (keys are per fd; for CLOCK
 *                                           that is the same page); with
 *                                           A's length when B's differs:
 *                                           EINVAL
 *   the HFI fd                                              ENODEV (no mmap)
 *   madvise(MADV_DONTNEED), then an access                  the region's
 *                                           contents (madvise(2) for shared
 *                                           mappings), or EINVAL from
 *                                           madvise
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define A_SEND	(16 * 1024)
#define A_RECV	(32 * 1024)
#define B_SEND	(8 * 1024)
#define B_RECV	(64 * 1024)
#define NR_REGIONS (PERCS_REGION_CLOCK + 1)
#define RECAL_PARAM "/sys/module/percs/parameters/clock_recal_ms"

static const char *const region_name[NR_REGIONS] = {
	"SEND_FIFO", "RECV_FIFO", "DOORBELL", "STATUS", "IMM", "CQ", "CLOCK",
};

/* One page for the whole module: every window's mapping shows it. */
static bool region_shared(unsigned int r)
{
	return r == PERCS_REGION_CLOCK;
}

static int write_param(const char *path, long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n, ret = 0;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%ld", v);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* mmap() result as 0 / -errno; the mapping (if any) in *out. */
static int try_map(int fd, size_t len, int prot, int flags, uint64_t off,
		   void **out)
{
	void *p = mmap(NULL, len, prot, flags, fd, (off_t)off);

	*out = NULL;
	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

static long live_mappings(void)
{
	struct pt_live l;

	if (pt_read_live(&l))
		return -1;
	return l.mappings;
}

/* Is [p, p + len) mapped at all?  msync() answers ENOMEM for a hole. */
static bool is_mapped(void *p, size_t len)
{
	return msync(p, len, MS_ASYNC) == 0;
}

static uint64_t wait_status(const volatile __u64 *field, uint64_t want,
			    int ms)
{
	uint64_t deadline = pt_now_ms() + ms, v;

	while ((v = __atomic_load_n(field, __ATOMIC_ACQUIRE)) != want &&
	       pt_now_ms() < deadline)
		usleep(1000);
	return v;
}

FIXTURE(mm) {
	int hfd_a, hfd_b;
	uint32_t key;
	struct pt_rawwin a, b;
	unsigned int r;
	size_t len;		/* A's length of the region */
	long page;
	long recal_ms;		/* clock_recal_ms to restore, or -1 */
};

FIXTURE_VARIANT(mm) {
	unsigned int region;
	bool writable;
	bool multi_page;	/* the region spans more than one page */
};

FIXTURE_VARIANT_ADD(mm, send_fifo) {
	.region = PERCS_REGION_SEND_FIFO, .writable = true, .multi_page = true,
};
FIXTURE_VARIANT_ADD(mm, recv_fifo) {
	.region = PERCS_REGION_RECV_FIFO, .writable = false, .multi_page = true,
};
FIXTURE_VARIANT_ADD(mm, doorbell) {
	.region = PERCS_REGION_DOORBELL, .writable = true,
};
FIXTURE_VARIANT_ADD(mm, status) {
	.region = PERCS_REGION_STATUS, .writable = false,
};
FIXTURE_VARIANT_ADD(mm, imm) {
	.region = PERCS_REGION_IMM, .writable = true,
};
FIXTURE_VARIANT_ADD(mm, cq) {
	.region = PERCS_REGION_CQ, .writable = false,
};
FIXTURE_VARIANT_ADD(mm, clock) {
	.region = PERCS_REGION_CLOCK, .writable = false,
};

static struct percs_pkt_hdr fifo_hdr(struct percs_addr dst, uint16_t len,
				     uint32_t tag, uint16_t flags)
{
	struct percs_pkt_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.route = PERCS_ROUTE_DIRECT;
	h.flags = flags;
	h.length = len;
	h.dst = dst;
	h.tag = tag;
	return h;
}

FIXTURE_SETUP(mm)
{
	struct percs_addr bad = { .hub = 0, .hfi = 0, .window = 0xffff };
	struct percs_pkt_hdr h;
	char pay[300];
	uint64_t pos;

	self->hfd_a = self->hfd_b = -1;
	self->a.fd = self->b.fd = -1;
	self->recal_ms = -1;
	PT_REQUIRE_DEVICE();
	/* The clock page holds still while it is compared. */
	self->recal_ms = pt_sysfs_read_long(RECAL_PARAM);
	ASSERT_LE(0, self->recal_ms);
	ASSERT_EQ(0, write_param(RECAL_PARAM, 0));
	self->page = page_size();
	self->r = variant->region;
	self->key = pt_new_key();
	self->hfd_a = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, self->hfd_a);
	self->hfd_b = pt_hfi_open_fd(1, 1);
	ASSERT_LE(0, self->hfd_b);
	ASSERT_EQ(0, pt_rawwin_open(&self->a, self->hfd_a, 0, A_SEND, A_RECV,
				    self->key));
	ASSERT_EQ(0, pt_rawwin_open(&self->b, self->hfd_b, 0, B_SEND, B_RECV,
				    self->key));
	self->len = self->a.req.regions[self->r].length;

	/* A -> B: 200 bytes with NOTIFY, then 300 bytes: 2 + 3 units. */
	memset(pay, 'A', sizeof(pay));
	h = fifo_hdr(self->b.req.addr, 200, 0xa1, PERCS_PKT_F_NOTIFY);
	pos = pt_raw_put(&self->a, 0, &h, pay);
	h = fifo_hdr(self->b.req.addr, 300, 0xa2, 0);
	pos = pt_raw_put(&self->a, pos, &h, pay);
	ASSERT_EQ(5, pos);
	ASSERT_EQ(2, pt_raw_trigger(&self->a, pos, true));
	/* B -> A: 100 bytes, then 8 bytes to a window that cannot exist. */
	memset(pay, 'B', sizeof(pay));
	h = fifo_hdr(self->a.req.addr, 100, 0xb1, 0);
	pos = pt_raw_put(&self->b, 0, &h, pay);
	h = fifo_hdr(bad, 8, 0xb2, 0);
	pos = pt_raw_put(&self->b, pos, &h, pay);
	ASSERT_EQ(3, pos);
	ASSERT_EQ(2, pt_raw_trigger(&self->b, pos, true));
	memset(self->a.map[PERCS_REGION_IMM], 0x11,
	       self->a.req.regions[PERCS_REGION_IMM].length);
	memset(self->b.map[PERCS_REGION_IMM], 0x22,
	       self->b.req.regions[PERCS_REGION_IMM].length);

	ASSERT_EQ(2, wait_status(&pt_rawwin_st(&self->a)->packets_sent, 2,
				 PT_TIMEOUT_MS));
	ASSERT_EQ(1, wait_status(&pt_rawwin_st(&self->b)->packets_sent, 1,
				 PT_TIMEOUT_MS));
	ASSERT_EQ(1, wait_status(&pt_rawwin_st(&self->a)->cq_tail, 1,
				 PT_TIMEOUT_MS));
	ASSERT_EQ(1, wait_status(&pt_rawwin_st(&self->b)->cq_tail, 1,
				 PT_TIMEOUT_MS));
	/* Every region of A differs from B's: the identity checks rely on
	 * it; except the clock, which is one page for both.
	 */
	{
		unsigned int r;

		for (r = 0; r < NR_REGIONS; r++) {
			size_t n = self->a.req.regions[r].length;

			if (n > self->b.req.regions[r].length)
				n = self->b.req.regions[r].length;
			if (region_shared(r)) {
				ASSERT_EQ(0, memcmp(self->a.map[r],
						    self->b.map[r], n))
					TH_LOG("clock pages of A and B differ");
				continue;
			}
			ASSERT_NE(0, memcmp(self->a.map[r], self->b.map[r], n))
				TH_LOG("region %s of A and B alike",
				       region_name[r]);
		}
	}
}

FIXTURE_TEARDOWN(mm)
{
	pt_rawwin_close(&self->a);
	pt_rawwin_close(&self->b);
	if (self->hfd_a >= 0)
		close(self->hfd_a);
	if (self->hfd_b >= 0)
		close(self->hfd_b);
	if (self->recal_ms >= 0)
		write_param(RECAL_PARAM, self->recal_ms);
}

/* Documented layout, then a second mapping of exactly the region works and
 * shows the same pages.
 */
TEST_F(mm, exact_size_ok)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	static const uint32_t fixed[NR_REGIONS] = {
		[PERCS_REGION_DOORBELL] = 4096, [PERCS_REGION_STATUS] = 4096,
		[PERCS_REGION_IMM] = PERCS_IMM_SLOTS * PERCS_FLIT_SIZE,
		[PERCS_REGION_CQ] = PERCS_CQ_ENTRIES * sizeof(struct percs_cqe),
		[PERCS_REGION_CLOCK] = 4096,
	};
	uint32_t want = self->r == PERCS_REGION_SEND_FIFO ? A_SEND :
			self->r == PERCS_REGION_RECV_FIFO ? A_RECV :
			(fixed[self->r] + self->page - 1) / self->page *
			self->page;
	long before = live_mappings();
	int prot = PROT_READ | (variant->writable ? PROT_WRITE : 0);
	uint8_t *p;
	size_t off;

	EXPECT_EQ(want, reg->length);
	EXPECT_EQ(PERCS_REGION_F_VALID |
		  (variant->writable ? PERCS_REGION_F_WRITABLE : 0), reg->flags);
	EXPECT_EQ(0, reg->offset % self->page);
	EXPECT_EQ(0, reg->length % self->page);

	ASSERT_EQ(0, try_map(self->a.fd, self->len, prot, MAP_SHARED,
			     reg->offset, (void **)&p));
	EXPECT_EQ(before + 1, live_mappings());
	EXPECT_EQ(0, memcmp(p, self->a.map[self->r], self->len));
	if (variant->writable) {
		/* Same pages: a store through one shows through the other. */
		for (off = 0; off < self->len; off += self->page)
			p[off + 100] ^= 0x5a;
		for (off = 0; off < self->len; off += self->page) {
			EXPECT_EQ(p[off + 100],
				  ((uint8_t *)self->a.map[self->r])[off + 100]);
			p[off + 100] ^= 0x5a;
		}
	}
	ASSERT_EQ(0, munmap(p, self->len));
	EXPECT_EQ(before, live_mappings());
}

TEST_F(mm, one_page_short_einval)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	void *p;

	/* A one-page region has nothing shorter: length 0 is EINVAL too. */
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len - self->page,
				   PROT_READ, MAP_SHARED, reg->offset, &p));
	EXPECT_EQ(before, live_mappings());
	/* mmap rounds a length up to whole pages: one byte more than a page
	 * short is the exact length again, and maps.
	 */
	ASSERT_EQ(0, try_map(self->a.fd, self->len - self->page + 1,
			     PROT_READ, MAP_SHARED, reg->offset, &p));
	EXPECT_EQ(0, memcmp(p, self->a.map[self->r], self->len));
	ASSERT_EQ(0, munmap(p, self->len));
	EXPECT_EQ(before, live_mappings());
}

TEST_F(mm, one_page_long_einval)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	void *p;

	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len + self->page,
				   PROT_READ, MAP_SHARED, reg->offset, &p));
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len + 1, PROT_READ,
				   MAP_SHARED, reg->offset, &p));
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, 2 * self->len, PROT_READ,
				   MAP_SHARED, reg->offset, &p));
	EXPECT_EQ(before, live_mappings());
}

TEST_F(mm, wrong_offset_einval)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	uint64_t max_key = 0;
	unsigned int r;
	void *p;

	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len, PROT_READ,
				   MAP_SHARED, reg->offset + self->page, &p));
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len, PROT_READ,
				   MAP_SHARED, reg->offset - self->page, &p));
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len, PROT_READ,
				   MAP_SHARED, reg->offset + 1, &p));
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len, PROT_READ,
				   MAP_SHARED, 0, &p));
	/* Beyond every valid key (the unused region slots, far away). */
	for (r = 0; r < NR_REGIONS; r++)
		if (self->a.req.regions[r].offset > max_key)
			max_key = self->a.req.regions[r].offset;
	for (r = NR_REGIONS; r < PERCS_REGION_MAX; r++)
		EXPECT_EQ(0, self->a.req.regions[r].flags);
	for (r = 1; r <= 3; r++)
		EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len, PROT_READ,
					   MAP_SHARED, max_key + r * (1ull << 28),
					   &p));
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len, PROT_READ,
				   MAP_SHARED, 1ull << 40, &p));
	EXPECT_EQ(before, live_mappings());
}

/* Another region's key with this region's length: that region, if the
 * lengths agree; EINVAL otherwise.
 */
TEST_F(mm, other_region_key)
{
	unsigned int r;

	for (r = 0; r < NR_REGIONS; r++) {
		const struct percs_region *other = &self->a.req.regions[r];
		long before = live_mappings();
		uint8_t *p;
		int ret;

		if (r == self->r)
			continue;
		ret = try_map(self->a.fd, self->len, PROT_READ, MAP_SHARED,
			      other->offset, (void **)&p);
		if (other->length != self->len) {
			EXPECT_EQ(-EINVAL, ret)
				TH_LOG("key of %s, length of %s", region_name[r],
				       region_name[self->r]);
			continue;
		}
		ASSERT_EQ(0, ret) TH_LOG("key of %s, same length",
					 region_name[r]);
		EXPECT_EQ(before + 1, live_mappings());
		/* It is the other region: same content, same pages. */
		EXPECT_EQ(0, memcmp(p, self->a.map[r], self->len));
		if (other->flags & PERCS_REGION_F_WRITABLE) {
			uint8_t *q = self->a.map[r];

			q[100] ^= 0xff;
			EXPECT_EQ(q[100], p[100]);
			q[100] ^= 0xff;
		}
		ASSERT_EQ(0, munmap(p, self->len));
	}
}

TEST_F(mm, map_private_einval)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	void *p;

	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len, PROT_READ,
				   MAP_PRIVATE, reg->offset, &p));
	/* A private writable mapping: EINVAL before the EPERM of read-only
	 * regions (the module checks sharing first).
	 */
	EXPECT_EQ(-EINVAL, try_map(self->a.fd, self->len,
				   PROT_READ | PROT_WRITE, MAP_PRIVATE,
				   reg->offset, &p));
	EXPECT_EQ(before, live_mappings());
}

/* PROT_WRITE on a read-only region: EPERM; on a writable one: ok. */
TEST_F(mm, prot_write)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	uint8_t *p;
	int ret;

	ret = try_map(self->a.fd, self->len, PROT_READ | PROT_WRITE,
		      MAP_SHARED, reg->offset, (void **)&p);
	if (!variant->writable) {
		EXPECT_EQ(-EPERM, ret);
		EXPECT_EQ(-EPERM, try_map(self->a.fd, self->len, PROT_WRITE,
					  MAP_SHARED, reg->offset,
					  (void **)&p));
		EXPECT_EQ(before, live_mappings());
		return;
	}
	ASSERT_EQ(0, ret);
	p[self->len - 1] = 0x77;
	EXPECT_EQ(0x77, ((uint8_t *)self->a.map[self->r])[self->len - 1]);
	p[self->len - 1] = 0;
	ASSERT_EQ(0, munmap(p, self->len));
	EXPECT_EQ(before, live_mappings());
}

/*
 * mprotect: any mapping may drop to read-only (or none) and come back to
 * what it was mapped with; a read-only region never gets PROT_WRITE
 * (EACCES: VM_MAYWRITE is cleared at mmap time); a writable one keeps
 * VM_MAYWRITE, so read-only and back succeeds and stores land again.
 * Part of a region: EINVAL (the module refuses VMA splits).
 */
TEST_F(mm, mprotect)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	uint8_t *p, *ref = self->a.map[self->r];

	ASSERT_EQ(0, try_map(self->a.fd, self->len, PROT_READ, MAP_SHARED,
			     reg->offset, (void **)&p));
	if (!variant->writable) {
		EXPECT_EQ(-1, mprotect(p, self->len, PROT_READ | PROT_WRITE));
		EXPECT_EQ(EACCES, errno);
		EXPECT_EQ(-1, mprotect(p, self->len, PROT_WRITE));
		EXPECT_EQ(EACCES, errno);
		EXPECT_EQ(0, mprotect(p, self->len, PROT_NONE));
		EXPECT_EQ(0, mprotect(p, self->len, PROT_READ));
		EXPECT_EQ(0, memcmp(p, ref, self->len));
		/* The fixture's own read-only mapping cannot either. */
		EXPECT_EQ(-1, mprotect(ref, self->len, PROT_READ | PROT_WRITE));
		EXPECT_EQ(EACCES, errno);
	} else {
		/* Mapped read-only, made writable: allowed (VM_MAYWRITE). */
		EXPECT_EQ(0, mprotect(p, self->len, PROT_READ | PROT_WRITE));
		p[8] ^= 0x3c;
		EXPECT_EQ(p[8], ref[8]);
		p[8] ^= 0x3c;
		/* And the writable fixture mapping: down and back up. */
		EXPECT_EQ(0, mprotect(ref, self->len, PROT_READ));
		EXPECT_EQ(0, mprotect(ref, self->len, PROT_READ | PROT_WRITE));
		ref[16] ^= 0xc3;
		EXPECT_EQ(ref[16], p[16]);
		ref[16] ^= 0xc3;
	}
	if (variant->multi_page) {
		int prot = variant->writable ? PROT_READ : PROT_NONE;

		EXPECT_EQ(-1, mprotect(p, self->page, prot));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, mprotect(p + self->page, self->page, prot));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, mprotect(p + self->len - self->page, self->page,
				       prot));
		EXPECT_EQ(EINVAL, errno);
		/* Still whole and readable. */
		EXPECT_EQ(0, memcmp(p, ref, self->len));
	}
	ASSERT_EQ(0, munmap(p, self->len));
}

/* mremap can never make a region bigger or duplicate it. */
TEST_F(mm, mremap_grow_efault)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	uint8_t *p;
	void *q, *hole;

	ASSERT_EQ(0, try_map(self->a.fd, self->len, PROT_READ, MAP_SHARED,
			     reg->offset, (void **)&p));
	q = mremap(p, self->len, self->len + self->page, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EFAULT, errno);
	q = mremap(p, self->len, self->len + self->page, 0);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EFAULT, errno);
	q = mremap(p, self->len, 2 * self->len, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EFAULT, errno);
	/* old_len 0: a second mapping of the same pages ("duplicate"). */
	q = mremap(p, 0, self->len, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EFAULT, errno);
	/* MREMAP_DONTUNMAP would leave the old range behind: refused. */
	/* (raw syscall: the wrapper may not pass new_address on) */
	EXPECT_EQ(-1, syscall(SYS_mremap, p, self->len, self->len,
			      MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL));
	EXPECT_EQ(EINVAL, errno);
	if (variant->multi_page) {
		/* Shrinking unmaps the tail: a split, refused. */
		q = mremap(p, self->len, self->len - self->page, 0);
		EXPECT_EQ(MAP_FAILED, q);
		EXPECT_EQ(EINVAL, errno);
		/* Moving part of it splits too. */
		hole = mmap(NULL, self->page, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, hole);
		q = mremap(p, self->page, self->page,
			   MREMAP_MAYMOVE | MREMAP_FIXED, hole);
		EXPECT_EQ(MAP_FAILED, q);
		EXPECT_EQ(EINVAL, errno);
		munmap(hole, self->page);
	}
	/* Nothing changed. */
	EXPECT_TRUE(is_mapped(p, self->len));
	EXPECT_EQ(0, memcmp(p, self->a.map[self->r], self->len));
	EXPECT_EQ(before + 1, live_mappings());
	ASSERT_EQ(0, munmap(p, self->len));
	EXPECT_EQ(before, live_mappings());
}

/* Moving the whole mapping is allowed: the same pages at the new place. */
TEST_F(mm, mremap_move_ok)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	int prot = PROT_READ | (variant->writable ? PROT_WRITE : 0);
	long before = live_mappings();
	uint8_t *p, *q, *hole, *ref = self->a.map[self->r];

	ASSERT_EQ(0, try_map(self->a.fd, self->len, prot, MAP_SHARED,
			     reg->offset, (void **)&p));
	/* A free range to move to. */
	hole = mmap(NULL, self->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	q = mremap(p, self->len, self->len, MREMAP_MAYMOVE | MREMAP_FIXED,
		   hole);
	ASSERT_EQ(hole, q) TH_LOG("mremap move: %s", strerror(errno));
	EXPECT_FALSE(is_mapped(p, self->len));
	EXPECT_EQ(before + 1, live_mappings());
	EXPECT_EQ(0, memcmp(q, ref, self->len));
	if (variant->writable) {
		q[200] ^= 0x99;
		EXPECT_EQ(q[200], ref[200]);
		q[200] ^= 0x99;
	}
	/* Same size without MREMAP_MAYMOVE: a no-op. */
	EXPECT_EQ(q, mremap(q, self->len, self->len, 0));
	/* Moved without MREMAP_FIXED, anywhere. */
	p = mremap(q, self->len, self->len, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, memcmp(p, ref, self->len));
	ASSERT_EQ(0, munmap(p, self->len));
	EXPECT_EQ(before, live_mappings());
}

/* munmap of part of a region: EINVAL, the mapping stays whole. */
TEST_F(mm, partial_munmap)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	uint8_t *p, *ref = self->a.map[self->r];
	void *q;

	ASSERT_EQ(0, try_map(self->a.fd, self->len, PROT_READ, MAP_SHARED,
			     reg->offset, (void **)&p));
	if (!variant->multi_page) {
		/* One page: any munmap inside it covers the whole region. */
		EXPECT_EQ(-1, munmap(p + 100, 1));	/* unaligned */
		EXPECT_EQ(EINVAL, errno);
		ASSERT_EQ(0, munmap(p, 1));
		EXPECT_FALSE(is_mapped(p, self->len));
		EXPECT_EQ(before, live_mappings());
		return;
	}
	EXPECT_EQ(-1, munmap(p, self->page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, munmap(p + self->len - self->page, self->page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, munmap(p + self->page, self->page));
	EXPECT_EQ(EINVAL, errno);
	/* MAP_FIXED over part of it: the munmap step fails, so does mmap. */
	q = mmap(p + self->page, self->page, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_TRUE(is_mapped(p, self->len));
	EXPECT_EQ(0, memcmp(p, ref, self->len));
	EXPECT_EQ(before + 1, live_mappings());
	/* The whole of it is fine. */
	ASSERT_EQ(0, munmap(p, self->len));
	EXPECT_EQ(before, live_mappings());
}

/*
 * A forked child shares the pages: what it writes into a writable region
 * the parent sees, what the parent writes the child sees; a read-only
 * region reads the same in both.  The child's copy of the mapping holds
 * the window: after the parent has unmapped and closed everything, the
 * window lives until the child exits.
 */
TEST_F(mm, fork_child_shares_pages)
{
	int to_child[2], to_parent[2], status;
	uint8_t *map = self->a.map[self->r];
	uint64_t sum = pt_checksum(map, self->len);
	size_t len = self->len;
	long page = self->page;
	bool writable = variant->writable;
	struct pt_live live;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		size_t off;
		int rc = 0;

		/* Only the mapping: no fd of the window in the child. */
		close(self->a.fd);
		close(self->hfd_a);
		if (pt_checksum(map, len) != sum)
			rc = 1;
		if (writable)
			for (off = 0; off < len; off += page)
				map[off + 32] = 0xc0 + (off / page & 0xf);
		if (write(to_parent[1], "w", 1) != 1)
			rc = 2;
		/* The parent has written and let go of everything. */
		if (read(to_child[0], &c, 1) != 1 || c != 'g')
			rc = 3;
		if (writable)
			for (off = 0; off < len; off += page)
				if (map[off + 48] != 0x5a)
					rc = 4;
		if (!writable && pt_checksum(map, len) != sum)
			rc = 5;
		_exit(rc);
	}
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	if (writable) {
		size_t off;

		for (off = 0; off < len; off += page) {
			ASSERT_EQ(0xc0 + (off / page & 0xf), map[off + 32]);
			map[off + 48] = 0x5a;
		}
	}
	/* The parent lets go of the window; the child still maps it. */
	pt_rawwin_close(&self->a);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(2, live.windows);	/* A (held by the child) and B */
	/* B's regions here; A's and B's in the child. */
	EXPECT_EQ(3 * NR_REGIONS, live.mappings);
	ASSERT_EQ(1, write(to_child[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The child's exit released the last reference: A is gone. */
	pt_rawwin_close(&self->b);
	ASSERT_LIVE_ZERO();
}

/* A read-only mapping cannot be stored to, not even by the kernel on the
 * process's behalf (read(2) into it: EFAULT), nor by a forced write
 * through /proc/self/mem (FOLL_FORCE does not apply to shared mappings:
 * EIO); a writable one can.
 */
TEST_F(mm, read_into_mapping)
{
	uint8_t *map = self->a.map[self->r];
	uint8_t save[64];
	int pfd[2], mfd;
	ssize_t n;

	memcpy(save, map, sizeof(save));
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(8, write(pfd[1], "12345678", 8));
	n = read(pfd[0], map, 8);
	if (variant->writable) {
		EXPECT_EQ(8, n);
		EXPECT_EQ(0, memcmp(map, "12345678", 8));
		memcpy(map, save, sizeof(save));
	} else {
		EXPECT_EQ(-1, n);
		EXPECT_EQ(EFAULT, errno);
		EXPECT_EQ(0, memcmp(map, save, sizeof(save)));
	}
	close(pfd[0]);
	close(pfd[1]);

	mfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mfd);
	n = pwrite(mfd, "abcdefgh", 8, (off_t)(uintptr_t)(map + 8));
	if (variant->writable) {
		EXPECT_EQ(8, n);
		EXPECT_EQ(0, memcmp(map + 8, "abcdefgh", 8));
		memcpy(map, save, sizeof(save));
	} else {
		EXPECT_EQ(-1, n);
		EXPECT_EQ(EIO, errno);
		EXPECT_EQ(0, memcmp(map, save, sizeof(save)));
	}
	/* Reading through it works for every region. */
	EXPECT_EQ(8, pread(mfd, save, 8, (off_t)(uintptr_t)map));
	EXPECT_EQ(0, memcmp(save, map, 8));
	close(mfd);
}

/*
 * mmap keys are per fd: A's key on B's fd maps B's region (never A's).
 * With A's length where B's differs (the FIFOs): EINVAL.
 */
TEST_F(mm, other_window_key_maps_own_region)
{
	const struct percs_region *ra = &self->a.req.regions[self->r];
	const struct percs_region *rb = &self->b.req.regions[self->r];
	long before = live_mappings();
	uint8_t *p;
	int ret;

	ret = try_map(self->b.fd, ra->length, PROT_READ, MAP_SHARED,
		      ra->offset, (void **)&p);
	if (ra->length != rb->length) {
		EXPECT_EQ(-EINVAL, ret);
		/* B's own length with A's key: B's region. */
		ret = try_map(self->b.fd, rb->length, PROT_READ, MAP_SHARED,
			      ra->offset, (void **)&p);
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, memcmp(p, self->b.map[self->r], rb->length));
	/* B's region, not A's (the clock: the one page both map). */
	EXPECT_EQ(region_shared(self->r),
		  !memcmp(p, self->a.map[self->r],
			  ra->length < rb->length ? ra->length : rb->length));
	if (variant->writable) {
		uint8_t *qa = self->a.map[self->r], *qb = self->b.map[self->r];
		uint8_t va = qa[1000];

		qb[1000] ^= 0x42;
		EXPECT_EQ(qb[1000], p[1000]);
		EXPECT_EQ(va, qa[1000]);
		qb[1000] ^= 0x42;
	}
	EXPECT_EQ(before + 1, live_mappings());
	ASSERT_EQ(0, munmap(p, rb->length));
}

static void on_sigbus(int sig)
{
	_exit(3);
}

/*
 * madvise(MADV_DONTNEED) on a shared mapping drops the page table entries;
 * madvise(2): "subsequent accesses of pages in the range will succeed,
 * but will result in ... repopulating the memory contents from the
 * up-to-date contents of the underlying mapped file".  So the region must
 * read the same afterwards (and stores must still reach the window), or
 * madvise must refuse (EINVAL, as for VM_PFNMAP mappings).  The access is
 * made in a child, so that a SIGBUS is reported rather than fatal.
 */
TEST_F(mm, madvise_dontneed_repopulates)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	int prot = PROT_READ | (variant->writable ? PROT_WRITE : 0);
	uint8_t *p, *ref = self->a.map[self->r];
	bool writable = variant->writable;
	size_t len = self->len;
	int ret, status;
	pid_t pid;

	ASSERT_EQ(0, try_map(self->a.fd, len, prot, MAP_SHARED, reg->offset,
			     (void **)&p));
	ret = madvise(p, len, MADV_DONTNEED);
	if (ret) {
		EXPECT_EQ(EINVAL, errno);
		ASSERT_EQ(0, munmap(p, len));
		return;
	}
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigbus;
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
		if (memcmp(p, ref, len))
			_exit(1);
		if (writable) {
			p[300] ^= 0x81;
			if (ref[300] != p[300])
				_exit(2);
			p[300] ^= 0x81;
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("%s: madvise(MADV_DONTNEED) succeeded, then the next access %s (expected: the region's contents again, or madvise failing with EINVAL)",
		       region_name[self->r],
		       !WIFEXITED(status) ? "died by a signal" :
		       WEXITSTATUS(status) == 3 ? "raised SIGBUS: nothing faults the pages back in (no vm_ops->fault)" :
		       WEXITSTATUS(status) == 1 ? "read other contents" :
		       WEXITSTATUS(status) == 2 ? "stored elsewhere" :
		       "failed");
	ASSERT_EQ(0, munmap(p, len));
}

/* The HFI fd maps nothing: the character device has no mmap (ENODEV). */
TEST_F(mm, hfi_fd_enodev)
{
	const struct percs_region *reg = &self->a.req.regions[self->r];
	long before = live_mappings();
	void *p;

	EXPECT_EQ(-ENODEV, try_map(self->hfd_a, self->len, PROT_READ,
				   MAP_SHARED, reg->offset, &p));
	EXPECT_EQ(before, live_mappings());
}

/* After everything: no window, no mapping, no key left. */
TEST(zz_nothing_left)
{
	PT_REQUIRE_DEVICE();
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
