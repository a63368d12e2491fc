// SPDX-License-Identifier: GPL-2.0
/*
 * pt-helper: small actions for selftests/module.sh that a shell cannot do
 * with an exact errno.
 *
 *   pt-helper hold HUB UNIT       reserve a window, map its doorbell, print
 *                                 "ready WINDOW" and wait for SIGTERM (at
 *                                 most 300 s)
 *   pt-helper hold-map HUB UNIT   same, but close the window fd and keep
 *                                 only the mapping
 *   pt-helper reserve HUB UNIT    reserve a window and exit (prints "ok")
 *   pt-helper delmod NAME         delete_module(NAME, O_NONBLOCK)
 *   pt-helper loadmod PATH [PARAMS]  finit_module(PATH, PARAMS)
 *
 * delmod and loadmod print "ok" or the errno name (EAGAIN, EINVAL, ...)
 * and exit 0 / 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/percs.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

static int report(long ret)
{
	if (ret == 0) {
		puts("ok");
		return 0;
	}
	puts(strerrorname_np(errno) ?: "E?");
	return 1;
}

/* keep_fd: 1 keep the fd, 0 keep only the mapping, -1 reserve and exit */
static int hold(unsigned int hub, unsigned int unit, int keep_fd)
{
	struct percs_window_reserve req;
	const struct percs_region *db;
	struct sigaction sa;
	char path[64];
	struct percs_job_create job = { .size = sizeof(job) };
	int hfd, wfd, jfd;
	void *map;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	snprintf(path, sizeof(path), "/dev/percs-hfi%u", hub * 2 + unit);
	hfd = open(path, O_RDWR | O_CLOEXEC);
	if (hfd < 0) {
		perror(path);
		return 1;
	}
	jfd = ioctl(hfd, PERCS_IOC_JOB_CREATE, &job);
	if (jfd < 0) {
		perror("PERCS_IOC_JOB_CREATE");
		return 1;
	}
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.send_fifo_size = PERCS_FIFO_MIN_SIZE;
	req.recv_fifo_size = PERCS_FIFO_MIN_SIZE;
	req.job_fd = jfd;
	req.window = PERCS_WINDOW_ANY;
	wfd = ioctl(hfd, PERCS_IOC_WINDOW_RESERVE, &req);
	if (wfd < 0) {
		perror("PERCS_IOC_WINDOW_RESERVE");
		return 1;
	}
	/* The window holds the job now. */
	close(jfd);
	db = &req.regions[PERCS_REGION_DOORBELL];
	map = mmap(NULL, db->length, PROT_READ | PROT_WRITE, MAP_SHARED, wfd,
		   (off_t)db->offset);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* Only the window (or its mapping) should hold the module. */
	close(hfd);
	if (keep_fd < 0) {
		puts("ok");
		return 0;
	}
	if (!keep_fd)
		close(wfd);
	printf("ready %u\n", req.window);
	fflush(stdout);
	alarm(300);
	while (!stop)
		pause();
	munmap(map, db->length);
	if (keep_fd)
		close(wfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), atoi(argv[3]), 1);
	if (argc == 4 && !strcmp(argv[1], "hold-map"))
		return hold(atoi(argv[2]), atoi(argv[3]), 0);
	if (argc == 4 && !strcmp(argv[1], "reserve"))
		return hold(atoi(argv[2]), atoi(argv[3]), -1);
	if (argc == 3 && !strcmp(argv[1], "delmod"))
		return report(syscall(SYS_delete_module, argv[2], O_NONBLOCK));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "loadmod")) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return report(-1);
		return report(syscall(SYS_finit_module, fd,
				      argc == 4 ? argv[3] : "", 0));
	}
	fprintf(stderr, "usage: %s hold|hold-map|reserve HUB UNIT | delmod NAME | "
		"loadmod PATH [PARAMS]\n", argv[0]);
	return 2;
}
