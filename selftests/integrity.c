// SPDX-License-Identifier: GPL-2.0
/*
 * integrity: what the HFI reads through a registration is what the process
 * wrote there, however the memory came to be mapped.
 *
 * The trap: a registration the HFI only reads (access 0, a local RDMA
 * source, or PERCS_ACCESS_REMOTE_READ) of memory the process never wrote.
 * Pinned for reading, untouched anonymous memory is the shared zero page
 * and a private file mapping is the page cache's page; the process's first
 * write then gets a private copy that the HFI never sees, and an RDMA
 * write sends zeros (or the file's old bytes) with status 0.  Each test
 * registers such memory untouched, writes it, moves it out by RDMA write
 * (initiator side) or RDMA read (a peer reads it), and compares the bytes
 * that arrived: untouched anonymous memory, the parent and the child of a
 * fork (each through its own registration), private and shared file
 * mappings (memfd), transparent and hugetlb huge pages.
 *
 * And the one case where the two views part by definition: a registration
 * keeps the pages it pinned, so after MADV_DONTNEED the process gets new
 * pages and the HFI goes on reading the old ones (Documentation/uapi.rst,
 * "Memory registration").
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define REG		(64UL << 10)	/* a registration of 16 pages */
#define HUGE		(2UL << 20)	/* one x86-64 huge page */
#define PEER_BUF	(4UL << 20)	/* what the peer can receive or send */
#define ALL_RIGHTS	(PERCS_ACCESS_LOCAL_WRITE | PERCS_ACCESS_REMOTE_READ | \
			 PERCS_ACCESS_REMOTE_WRITE)

/* Wait for the completion of the RDMA operation tagged @ud: its status. */
static int rdma_done(struct percs_window *w, uint64_t ud)
{
	struct percs_cqe c;
	int ret = pt_cq_wait(w, &c, PT_TIMEOUT_MS);

	if (ret < 0)
		return 1000 + ret;
	if (c.user_data != ud || c.kind != PERCS_PKT_RDMA)
		return 2000;
	return c.res;
}

/*
 * RDMA write @len bytes at @src, registered on @from as @handle, to
 * @to's buffer at @off; wait for the completion.  Return: its status.
 */
static int write_out(const struct pt_side *from, uint32_t handle,
		     const void *src, size_t len, const struct pt_side *to,
		     size_t off)
{
	int ret = percs_rdma_write(from->w, &to->addr, to->mr,
				   (uintptr_t)to->buf + off, handle, src, len,
				   0, 0x1234);

	return ret ? ret : rdma_done(from->w, 0x1234);
}

/*
 * @reader RDMA reads @len bytes at @src, which @owner registered as
 * @handle with REMOTE_READ, into @reader's own buffer; wait for it.
 */
static int read_in(const struct pt_side *reader, const struct pt_side *owner,
		   uint32_t handle, const void *src, size_t len)
{
	int ret = percs_rdma_read(reader->w, &owner->addr, handle,
				  (uintptr_t)src, reader->mr, reader->buf, len,
				  0, 0x5678);

	return ret ? ret : rdma_done(reader->w, 0x5678);
}

/* @len bytes of private anonymous memory that nothing has touched. */
static void *untouched(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Read one byte of every page: map whatever a read fault maps. */
static void read_touch(const void *p, size_t len)
{
	const volatile uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i += 4096)
		(void)b[i];
}

/* @len bytes of @seed's pattern, to compare with. */
static uint8_t *pattern(size_t len, uint64_t seed)
{
	uint8_t *p = malloc(len);

	if (p)
		pt_fill(p, len, seed);
	return p;
}

static bool same(const void *a, uint64_t seed, size_t len)
{
	uint8_t *want = pattern(len, seed);
	bool eq = want && !memcmp(a, want, len);

	free(want);
	return eq;
}

/* A memfd of @len bytes holding @seed's pattern, or -errno. */
static int memfd_with(size_t len, uint64_t seed)
{
	uint8_t *want = pattern(len, seed);
	int fd = memfd_create("percs-integrity", MFD_CLOEXEC);

	if (fd < 0 || !want || pwrite(fd, want, len, 0) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		fd = fd < 0 ? -errno : -EIO;
	}
	free(want);
	return fd;
}

FIXTURE(integ) {
	uint32_t key;
	struct pt_side me;	/* the process whose memory is checked */
	struct pt_side peer;	/* the other end of every transfer */
};

FIXTURE_SETUP(integ)
{
	PT_REQUIRE_DEVICE();
	self->key = pt_new_key();
	ASSERT_EQ(0, pt_side_open(&self->me, 0, 0, self->key, PEER_BUF,
				  ALL_RIGHTS, PT_SIDE_PREFAULT));
	ASSERT_EQ(0, pt_side_open(&self->peer, 1, 1, self->key, PEER_BUF,
				  ALL_RIGHTS, PT_SIDE_PREFAULT));
}

FIXTURE_TEARDOWN(integ)
{
	pt_side_close(&self->me);
	pt_side_close(&self->peer);
	pt_wait_mrs(0, 0, PT_TIMEOUT_MS);
}

FIXTURE_VARIANT(integ) {
	uint32_t access;	/* of the registration under test */
	bool read_first;	/* the process reads it before registering */
};

FIXTURE_VARIANT_ADD(integ, local_source) {
	.access = 0,
};

FIXTURE_VARIANT_ADD(integ, remote_read) {
	.access = PERCS_ACCESS_REMOTE_READ,
};

FIXTURE_VARIANT_ADD(integ, local_source_read_first) {
	.access = 0, .read_first = true,
};

FIXTURE_VARIANT_ADD(integ, remote_read_read_first) {
	.access = PERCS_ACCESS_REMOTE_READ, .read_first = true,
};

/*
 * Move @len bytes at @p, registered on me as @h, out by the variant's
 * path: an RDMA write from me, or a peer's RDMA read.  Return: status.
 */
static int move_out(FIXTURE_DATA(integ) *self, const FIXTURE_VARIANT(integ) *v,
		    uint32_t h, const void *p, size_t len)
{
	memset(self->peer.buf, 0xee, len);
	if (v->access & PERCS_ACCESS_REMOTE_READ)
		return read_in(&self->peer, &self->me, h, p, len);
	return write_out(&self->me, h, p, len, &self->peer, 0);
}

TEST_F(integ, untouched_anonymous_memory_written_after_registration)
{
	uint8_t *p = untouched(REG);
	uint32_t h;

	ASSERT_NE(NULL, p);
	if (variant->read_first)
		read_touch(p, REG);
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, REG, variant->access, &h));
	pt_fill(p, REG, 1);
	ASSERT_EQ(0, move_out(self, variant, h, p, REG));
	EXPECT_TRUE(same(self->peer.buf, 1, REG));
	/* Written again: the HFI still reads the process's own pages. */
	pt_fill(p, REG, 2);
	ASSERT_EQ(0, move_out(self, variant, h, p, REG));
	EXPECT_TRUE(same(self->peer.buf, 2, REG));
	ASSERT_EQ(0, percs_mr_dereg(self->me.w, h));
	munmap(p, REG);
}

/* Register in one process and write in it, RDMA write out; exit code. */
static int child_writes_out(const struct pt_side *peer, uint32_t key,
			    uint8_t *p, uint32_t access, size_t off,
			    uint64_t seed, bool register_first)
{
	struct pt_side c;
	uint32_t h;
	int ret;

	ret = pt_side_open(&c, 2, 0, key, 4096, PERCS_ACCESS_LOCAL_WRITE,
			   PT_SIDE_PREFAULT);
	if (ret)
		return 10;
	if (!register_first)
		pt_fill(p, REG, seed);
	if (percs_mr_reg(c.w, p, REG, access, &h))
		return 11;
	if (register_first)
		pt_fill(p, REG, seed);
	ret = write_out(&c, h, p, REG, peer, off);
	pt_side_close(&c);
	return ret ? 12 : 0;
}

/*
 * The parent registers untouched memory, then forks: the child writes its
 * own copy and moves it through its own registration; the parent's
 * registration keeps showing the parent's writes.
 */
TEST_F(integ, fork_parent_registers_first)
{
	uint8_t *p = untouched(REG);
	uint32_t h;
	pid_t pid;

	ASSERT_NE(NULL, p);
	if (variant->read_first)
		read_touch(p, REG);
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, REG, variant->access, &h));
	memset(self->peer.buf, 0xee, 2 * REG);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_writes_out(&self->peer, self->key, p,
				       variant->access, REG, 7, true));
	ASSERT_EQ(0, pt_reap(pid, 20000));
	EXPECT_TRUE(same(self->peer.buf + REG, 7, REG));
	pt_fill(p, REG, 3);
	ASSERT_EQ(0, write_out(&self->me, h, p, REG, &self->peer, 0));
	EXPECT_TRUE(same(self->peer.buf, 3, REG));
	/* The child's bytes stayed the child's. */
	EXPECT_TRUE(same(self->peer.buf + REG, 7, REG));
	munmap(p, REG);
}

/* Untouched at the fork; each process registers and writes its own. */
TEST_F(integ, fork_both_register_after)
{
	uint8_t *p = untouched(REG);
	uint32_t h;
	pid_t pid;

	ASSERT_NE(NULL, p);
	if (variant->read_first)
		read_touch(p, REG);
	memset(self->peer.buf, 0xee, 2 * REG);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_writes_out(&self->peer, self->key, p,
				       variant->access, REG, 8, true));
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, REG, variant->access, &h));
	pt_fill(p, REG, 4);
	ASSERT_EQ(0, pt_reap(pid, 20000));
	ASSERT_EQ(0, write_out(&self->me, h, p, REG, &self->peer, 0));
	EXPECT_TRUE(same(self->peer.buf, 4, REG));
	EXPECT_TRUE(same(self->peer.buf + REG, 8, REG));
	munmap(p, REG);
}

/*
 * A private file mapping: registered before the process writes it, the
 * HFI reads the process's copy, not the file's page; the file keeps its
 * own bytes.
 */
TEST_F(integ, private_file_mapping)
{
	int fd = memfd_with(REG, 5);
	uint8_t *p, *file;
	uint32_t h;

	ASSERT_LE(0, fd);
	p = mmap(NULL, REG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	if (variant->read_first)
		read_touch(p, REG);
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, REG, variant->access, &h));
	/* Untouched since registration: the file's bytes. */
	ASSERT_EQ(0, move_out(self, variant, h, p, REG));
	EXPECT_TRUE(same(self->peer.buf, 5, REG));
	pt_fill(p, REG, 6);
	ASSERT_EQ(0, move_out(self, variant, h, p, REG));
	EXPECT_TRUE(same(self->peer.buf, 6, REG));
	file = mmap(NULL, REG, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, file);
	EXPECT_TRUE(same(file, 5, REG));
	munmap(file, REG);
	munmap(p, REG);
	close(fd);
}

/*
 * A shared mapping the process cannot write: pinned for reading (a write
 * pin would be refused), and what the file gets, the HFI reads.
 */
TEST_F(integ, read_only_shared_file_mapping)
{
	int fd = memfd_with(REG, 9);
	uint8_t *p, *want;
	uint32_t h;

	ASSERT_LE(0, fd);
	p = mmap(NULL, REG, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	if (variant->read_first)
		read_touch(p, REG);
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, REG, variant->access, &h));
	want = pattern(REG, 10);
	ASSERT_NE(NULL, want);
	ASSERT_EQ(REG, pwrite(fd, want, REG, 0));
	free(want);
	ASSERT_EQ(0, move_out(self, variant, h, p, REG));
	EXPECT_TRUE(same(self->peer.buf, 10, REG));
	/* A write right on a mapping the process cannot write: refused. */
	EXPECT_EQ(-EFAULT, percs_mr_reg(self->me.w, p, REG,
					PERCS_ACCESS_REMOTE_WRITE, &h));
	munmap(p, REG);
	close(fd);
}

/* A read-only registration of memory the process cannot read: refused. */
TEST_F(integ, prot_none_refused)
{
	uint8_t *p = mmap(NULL, REG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	uint32_t h = 0;

	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-EFAULT, percs_mr_reg(self->me.w, p, REG, variant->access,
					&h));
	EXPECT_EQ(0, h);
	munmap(p, REG);
}

/* Is THP possible at all ("[never]" selected: no)? */
static bool thp_possible(void)
{
	char buf[128] = "";
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);

	if (fd < 0)
		return false;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return buf[0] && !strstr(buf, "[never]");
}

/* A transparent huge page, untouched (a read fault maps the huge zero page). */
TEST_F(integ, transparent_huge_page)
{
	uint8_t *raw, *p;
	uint32_t h;

	if (!thp_possible())
		SKIP(return, "transparent huge pages are off in this kernel");
	raw = untouched(2 * HUGE);
	ASSERT_NE(NULL, raw);
	p = (uint8_t *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	ASSERT_EQ(0, madvise(p, HUGE, MADV_HUGEPAGE));
	if (variant->read_first)
		read_touch(p, HUGE);
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, HUGE, variant->access, &h));
	pt_fill(p, HUGE, 11);
	ASSERT_EQ(0, move_out(self, variant, h, p, HUGE));
	EXPECT_TRUE(same(self->peer.buf, 11, HUGE));
	munmap(raw, 2 * HUGE);
}

/* Set vm.nr_hugepages; Return: the old value, or -1. */
static long set_nr_hugepages(long n)
{
	const char *path = "/proc/sys/vm/nr_hugepages";
	long old = pt_sysfs_read_long(path);
	char buf[32];
	int fd, len;

	if (old < 0)
		return -1;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%ld\n", n);
	if (write(fd, buf, len) != len)
		old = -1;
	close(fd);
	return old;
}

/* hugetlb: a read fault allocates a real huge page; a read pin is right. */
TEST_F(integ, hugetlb_page)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB;
	long old = -1;
	uint8_t *p;
	uint32_t h;

	p = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		old = set_nr_hugepages(4);
		p = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, flags, -1, 0);
	}
	if (p == MAP_FAILED) {
		if (old >= 0)
			set_nr_hugepages(old);
		SKIP(return, "no hugetlb page to be had (vm.nr_hugepages)");
	}
	if (variant->read_first)
		read_touch(p, HUGE);
	EXPECT_EQ(0, percs_mr_reg(self->me.w, p, HUGE, variant->access, &h));
	pt_fill(p, HUGE, 12);
	EXPECT_EQ(0, move_out(self, variant, h, p, HUGE));
	EXPECT_TRUE(same(self->peer.buf, 12, HUGE));
	pt_side_close(&self->me);
	munmap(p, HUGE);
	if (old >= 0) {
		/* The page goes back to the pool once it is unpinned. */
		pt_wait_mrs(1, PEER_BUF / 4096, PT_TIMEOUT_MS);
		set_nr_hugepages(old);
	}
}

/*
 * MADV_DONTNEED after registration: the process's next access gets new
 * pages; the registration keeps the pinned ones, so the HFI reads what
 * was there before, and the process never sees what the HFI writes there
 * again.  Register again to make them meet.
 */
TEST_F(integ, madv_dontneed_parts_the_views)
{
	uint8_t *p = untouched(REG);
	uint32_t h, h2;

	ASSERT_NE(NULL, p);
	pt_fill(p, REG, 13);
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, REG, variant->access, &h));
	ASSERT_EQ(0, madvise(p, REG, MADV_DONTNEED));
	/* The process sees fresh zero pages ... */
	EXPECT_TRUE(p[0] == 0 && p[REG - 1] == 0);
	pt_fill(p, REG, 14);
	/* ... and the HFI the pages it pinned. */
	ASSERT_EQ(0, move_out(self, variant, h, p, REG));
	EXPECT_TRUE(same(self->peer.buf, 13, REG));
	/* A new registration pins the process's pages of now. */
	ASSERT_EQ(0, percs_mr_reg(self->me.w, p, REG, variant->access, &h2));
	ASSERT_EQ(0, move_out(self, variant, h2, p, REG));
	EXPECT_TRUE(same(self->peer.buf, 14, REG));
	munmap(p, REG);
}

TEST_HARNESS_MAIN
