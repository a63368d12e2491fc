// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for the percs-ctl tests: answers PERCS_IOC_HFI_INFO and
 * PERCS_IOC_WINDOW_QUERY on plain files named percs-hfiN, as a module
 * emulating 2 supernodes x 2 hubs (8 HFIs of 8 windows) would.  In use:
 * HFI 0 windows 1 (kick) and 5 (poll), HFI 3 window 0 (another user's:
 * hidden).  PERCS_IOC_JOB_CREATE gives a memfd standing for a job, which
 * PERCS_IOC_JOB_QUERY answers (key 42).  Every other ioctl goes to the C
 * library.
 *
 * It also plays the kernel's part for writes to the ISR's debugfs control
 * files (plain files in a directory named isr: link_up, link_down,
 * link_error and the knobs reorder_ppm, reorder_depth, hold_us, drop_ppm,
 * dup_ppm): a write
 * the kernel would refuse fails with its errno (EINVAL: not a number or
 * out of range; ENOENT: a link id that is not in the first column of the
 * sibling file "links"), any other is stored.  PERCS_FAKE_WRITE_ERRNO=N
 * makes every write to those files fail with errno N instead.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/percs.h>

#define FAKE_JOB_NAME	"percs-fake-job"
#define FAKE_JOB_KEY	42

static int fake_hfi(int fd)
{
	char link[64], path[4096];
	const char *base;
	unsigned int n;
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len < 0)
		return -1;
	path[len] = 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (sscanf(base, "percs-hfi%u", &n) != 1 || n >= 8)
		return -1;
	return (int)n;
}

/* Is @fd a job the shim handed out? */
static bool fake_job(int fd)
{
	char link[64], path[256];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len < 0)
		return false;
	path[len] = 0;
	return strstr(path, FAKE_JOB_NAME) != NULL;
}

static int in_use(int hfi, uint32_t win)
{
	return (hfi == 0 && (win == 1 || win == 5)) || (hfi == 3 && win == 0);
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	void *arg;
	va_list ap;
	int n;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	n = fake_hfi(fd);
	if (n >= 0 && req == PERCS_IOC_HFI_INFO) {
		struct percs_hfi_info *i = arg;

		if (i->size != sizeof(*i)) {
			errno = EINVAL;
			return -1;
		}
		*i = (struct percs_hfi_info) {
			.size = sizeof(*i), .hub = n / 2, .supernode = n / 4,
			.unit = n % 2, .windows_total = 8,
			.windows_in_use = n == 0 ? 2 : n == 3 ? 1 : 0,
			.nr_supernodes = 2, .hubs_per_supernode = 2,
			.nr_hubs = 4, .hfis_per_hub = 2,
			.max_packet = PERCS_MAX_PACKET,
			.flit_size = PERCS_FLIT_SIZE,
		};
		return 0;
	}
	if (n >= 0 && req == PERCS_IOC_WINDOW_QUERY) {
		struct percs_window_query *q = arg;
		uint32_t w = q->window;

		if (q->size != sizeof(*q) || w >= 8) {
			errno = EINVAL;
			return -1;
		}
		if (!in_use(n, w)) {
			q->state = PERCS_WSTATE_FREE;
			errno = ENOENT;
			return -1;
		}
		*q = (struct percs_window_query) {
			.size = sizeof(*q), .window = w,
			.state = PERCS_WSTATE_ACTIVE, .job_key = 42 + w,
			.pid = 1000 + w, .uid = 7,
			.wflags = w == 5 ? PERCS_WINDOW_F_POLL : 0,
			.send_fifo_size = 65536, .recv_fifo_size = 4096,
			.packets_sent = 10 * w + 1, .packets_received = 20,
			.send_errors = 3, .send_blocked = 4,
			.sent_polled = 5, .sent_kicked = 6, .kicks = 7,
		};
		/*
		 * HFI 3's window: another user's verbs QP, as the module
		 * shows it.
		 */
		if (n == 3)
			*q = (struct percs_window_query) {
				.size = sizeof(*q), .window = w,
				.state = PERCS_WSTATE_HIDDEN,
				.wflags = PERCS_WINDOW_F_KERNEL,
				.send_fifo_size = 65536, .recv_fifo_size = 4096,
			};
		return 0;
	}
	if (n >= 0 && req == PERCS_IOC_JOB_CREATE) {
		struct percs_job_create *jc = arg;
		int job = memfd_create(FAKE_JOB_NAME, MFD_CLOEXEC);

		if (job < 0)
			return -1;
		jc->fd = job;
		jc->job_key = FAKE_JOB_KEY;
		return job;
	}
	if (req == PERCS_IOC_JOB_QUERY && fake_job(fd)) {
		struct percs_job_query *q = arg;

		*q = (struct percs_job_query) {
			.size = sizeof(*q), .job_key = FAKE_JOB_KEY,
			.uid = getuid(),
		};
		return 0;
	}
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}

/* The path of @fd in @path; false if it has none. */
static bool fd_path(int fd, char *path, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, len - 1);
	if (n < 0)
		return false;
	path[n] = 0;
	return true;
}

/* kstrtou32(s, base, ...) as the kernel does it: one trailing newline. */
static bool kstrtou32(const char *s, int base, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, base);
	if (*end == '\n')
		end++;
	if (errno || *end || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* Is @id in the first column of @dir/links (after its header)? */
static bool link_exists(const char *dir, uint32_t id)
{
	char path[4200], line[512];
	bool found = false;
	unsigned long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/links", dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		while (!found && fgets(line, sizeof(line), f))
			found = sscanf(line, "%lu", &v) == 1 && v == id;
	fclose(f);
	return found;
}

/* The errno the kernel would answer @text written to isr/@name with. */
static int isr_refusal(const char *dir, const char *name, const char *text)
{
	static const struct {
		const char *name;
		uint32_t min, max;
	} knobs[] = {
		{ "reorder_ppm", 0, 1000000 },
		{ "reorder_depth", 1, 64 },
		{ "hold_us", 1, 1000000 },
		{ "drop_ppm", 0, 500000 },
		{ "dup_ppm", 0, 500000 },
	};
	char id[32], ppm[32];
	uint32_t n, rate;

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (!strcmp(name, knobs[i].name))
			return kstrtou32(text, 0, &n) && n >= knobs[i].min &&
			       n <= knobs[i].max ? 0 : EINVAL;
	if (!strcmp(name, "link_up") || !strcmp(name, "link_down")) {
		if (!kstrtou32(text, 10, &n))
			return EINVAL;
		return link_exists(dir, n) ? 0 : ENOENT;
	}
	/* link_error: "ID PPM" or "all PPM" */
	if (sscanf(text, "%31s %31s", id, ppm) != 2 ||
	    !kstrtou32(ppm, 10, &rate) || rate > 500000)
		return EINVAL;
	if (!strcmp(id, "all"))
		return 0;
	if (!kstrtou32(id, 10, &n))
		return EINVAL;
	return link_exists(dir, n) ? 0 : ENOENT;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real)(int, const void *, size_t);
	static const char *const files[] = {
		"link_up", "link_down", "link_error", "reorder_ppm",
		"reorder_depth", "hold_us", "drop_ppm", "dup_ppm",
	};
	char path[4096], text[128];
	const char *force;
	char *base;
	int err;

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT,
								     "write");
	if (!fd_path(fd, path, sizeof(path)))
		return real(fd, buf, len);
	base = strrchr(path, '/');
	if (!base || base - path < 4 || strncmp(base - 4, "/isr", 4))
		return real(fd, buf, len);
	*base++ = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (strcmp(base, files[i]))
			continue;
		force = getenv("PERCS_FAKE_WRITE_ERRNO");
		if (force && *force) {
			errno = atoi(force);
			return -1;
		}
		if (len >= sizeof(text)) {
			errno = EINVAL;
			return -1;
		}
		memcpy(text, buf, len);
		text[len] = 0;
		err = isr_refusal(path, base, text);
		if (err) {
			errno = err;
			return -1;
		}
		break;
	}
	return real(fd, buf, len);
}
