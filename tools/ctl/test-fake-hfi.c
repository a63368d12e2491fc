// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for the percs-ctl tests: answers PERCS_IOC_HFI_INFO and
 * PERCS_IOC_WINDOW_QUERY on plain files named percs-hfiN, as a module
 * emulating 2 supernodes x 2 hubs (8 HFIs of 8 windows) would.  In use:
 * HFI 0 windows 1 (kick) and 5 (poll), HFI 3 window 0.  Every other
 * ioctl goes to the C library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/percs.h>

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
		};
		return 0;
	}
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}
