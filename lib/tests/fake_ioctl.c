// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the fake reserve, registration and job ioctls (the
 * binary is linked with --wrap for ioctl, mmap, mmap64, munmap and
 * fdatasync).
 */
#include "unit.h"

/*
 * The test binary is linked with --wrap for ioctl, mmap(64) and munmap: on
 * the fake HFI
 * fd, PERCS_IOC_WINDOW_RESERVE returns a memfd laid out like a window and
 * PERCS_IOC_KICK on it answers from fake_kick_ret; mmap can be told to
 * fail its Nth call (the iommufd selftests' fail-nth); munmaps are
 * counted.  Everything else goes to the C library.
 */
struct fake_ioctl R = { .hfi_fd = -1, .win_fd = -1, .clock_version = PERCS_CLOCK_VERSION,
	.job_fd = -1 };

static const uint32_t region_len[PERCS_REGION_MAX] = {
	[PERCS_REGION_SEND_FIFO] = 8192, [PERCS_REGION_RECV_FIFO] = 16384,
	[PERCS_REGION_DOORBELL] = 4096, [PERCS_REGION_STATUS] = 4096,
	[PERCS_REGION_IMM] = 4096, [PERCS_REGION_CQ] = 4096,
	[PERCS_REGION_CLOCK] = 4096,
};

static int fake_reserve(struct percs_window_reserve *r)
{
	uint64_t off = 0;
	int fd;

	R.seen = *r;
	if (R.reserve_errno) {
		errno = R.reserve_errno;
		return -1;
	}
	fd = memfd_create("percs-fake-window", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	for (int i = 0; i < PERCS_REGION_MAX; i++) {
		struct percs_region *reg = &r->regions[i];

		if (!region_len[i])
			continue;
		reg->offset = off;
		reg->length = region_len[i];
		reg->flags = PERCS_REGION_F_VALID;
		if (i == PERCS_REGION_SEND_FIFO || i == PERCS_REGION_DOORBELL ||
		    i == PERCS_REGION_IMM)
			reg->flags |= PERCS_REGION_F_WRITABLE;
		reg->flags &= ~R.drop_flags[i];
		if (i == PERCS_REGION_CLOCK)
			R.clock_offset = off;
		off += region_len[i];
	}
	if (ftruncate(fd, (off_t)off) ||
	    pwrite(fd, &R.clock_version, sizeof(R.clock_version),
		   (off_t)(R.clock_offset +
			   offsetof(struct percs_clock, version))) !=
	    sizeof(R.clock_version)) {
		close(fd);
		return -1;
	}
	r->imm_slots = PERCS_IMM_SLOTS;
	r->cq_entries = PERCS_CQ_ENTRIES;
	r->addr = (struct percs_addr){ .hub = 3, .hfi = 1, .window = 17 };
	r->fd = (uint32_t)fd;
	R.win_fd = fd;
	return fd;
}

/*
 * The fake NMMU: checks the request as the kernel does, keeps up to 8
 * handles (generation << 16 | slot) and answers ENOENT for others.
 */
static int fake_mr_register(struct percs_mr_register *r)
{
	R.mr_calls++;
	R.mr_seen = *r;
	if (R.mr_errno) {
		errno = R.mr_errno;
		return -1;
	}
	if (R.mr_no_invalidate && (r->flags & PERCS_MR_F_INVALIDATE)) {
		errno = EOPNOTSUPP;	/* a kernel without MMU notifiers */
		return -1;
	}
	if (r->size != sizeof(*r) || (r->flags & ~PERCS_MR_F_INVALIDATE) ||
	    r->handle ||
	    r->access & ~PERCS_ACCESS_ALL || !r->length ||
	    r->length > PERCS_MR_MAX_LENGTH) {
		errno = EINVAL;
		return -1;
	}
	for (uint32_t i = 1; i < 8; i++) {
		if (!R.mr_live[i]) {
			R.mr_live[i] = ++R.mr_gen << 16 | i;
			R.mr_addr[i] = r->addr;
			R.mr_len[i] = r->length;
			R.mr_access[i] = r->access;
			r->handle = R.mr_live[i];
			return 0;
		}
	}
	errno = ENOSPC;
	return -1;
}

static int fake_mr_deregister(struct percs_mr_deregister *d)
{
	uint32_t slot = d->handle & 0xffff;

	R.mr_calls++;
	R.dereg_seen = *d;
	if (d->size != sizeof(*d) || d->flags || d->reserved) {
		errno = EINVAL;
		return -1;
	}
	if (slot >= 8 || !R.mr_live[slot] || R.mr_live[slot] != d->handle) {
		errno = ENOENT;
		return -1;
	}
	R.mr_live[slot] = 0;
	return 0;
}


int __wrap_ioctl(int fd, unsigned long req, ...)
{
	unsigned long arg;
	va_list ap;

	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (fd >= 0 && (req == PERCS_IOC_CAU_CREATE ||
			req == PERCS_IOC_CAU_JOIN ||
			req == PERCS_IOC_CAU_DESTROY))
		return fake_cau_ioctl(fd, req, arg);
	if (fd >= 0 && fd == R.hfi_fd && req == PERCS_IOC_WINDOW_RESERVE)
		return fake_reserve((struct percs_window_reserve *)arg);
	if (fd >= 0 && fd == R.hfi_fd && req == PERCS_IOC_JOB_CREATE) {
		struct percs_job_create *jc = (void *)arg;

		R.job_creates++;
		R.job_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		jc->fd = R.job_fd;
		jc->job_key = JOB_KEY;
		return R.job_fd;
	}
	if (fd >= 0 && fd == R.job_fd && req == PERCS_IOC_JOB_QUERY) {
		((struct percs_job_query *)arg)->job_key = JOB_KEY;
		return 0;
	}
	if (fd >= 0 && fd == R.win_fd && req == PERCS_IOC_MR_REGISTER)
		return fake_mr_register((struct percs_mr_register *)arg);
	if (fd >= 0 && fd == R.win_fd && req == PERCS_IOC_MR_DEREGISTER)
		return fake_mr_deregister((struct percs_mr_deregister *)arg);
	if (fd >= 0 && fd == R.win_fd && req == PERCS_IOC_KICK) {
		R.kick_arg = arg;
		if (R.kick_ret < 0) {
			errno = -R.kick_ret;
			return -1;
		}
		return R.kick_ret;
	}
	return __real_ioctl(fd, req, arg);
}

/* The doorbell: fdatasync() on the window is a kick of SEND | IMM. */
int __wrap_fdatasync(int fd)
{
	if (fd >= 0 && fd == R.win_fd) {
		R.kick_arg = PERCS_KICK_F_SEND | PERCS_KICK_F_IMM;
		if (R.kick_ret < 0) {
			errno = -R.kick_ret;
			return -1;
		}
		return 0;
	}
	return __real_fdatasync(fd);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	if (++R.mmap_calls == R.mmap_fail_nth) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap(addr, len, prot, flags, fd, off);
}

/* _FILE_OFFSET_BITS=64 turns the library's mmap() into mmap64(). */
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	if (++R.mmap_calls == R.mmap_fail_nth) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap64(addr, len, prot, flags, fd, off);
}

int __wrap_munmap(void *addr, size_t len)
{
	R.munmaps++;
	return __real_munmap(addr, len);
}

int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The protection /proc/self/maps shows for the mapping at @p ("rw-s"). */
bool map_prot(const void *p, char prot[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, prot) == 3 &&
		    (unsigned long)p >= lo && (unsigned long)p < hi)
			found = true;
	fclose(f);
	return found;
}

struct percs_hfi *fake_hfi_open(char *dir)
{
	struct percs_hfi *hfi = NULL;
	char path[64];
	int fd;

	if (!mkdtemp(dir))
		return NULL;
	setenv("PERCS_DEV_DIR", dir, 1);
	snprintf(path, sizeof(path), "%s/percs-hfi0", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return NULL;
	close(fd);
	if (percs_hfi_open(0, 0, &hfi))
		return NULL;
	R.hfi_fd = percs_hfi_fd(hfi);
	unlink(path);
	rmdir(dir);
	return hfi;
}
