// SPDX-License-Identifier: GPL-2.0
/*
 * verbs-floor DEVICE [CALLS]: the cost of one verbs command on DEVICE and
 * of a bare system call, measured in the same process, for the floor
 * column of tools/bench/verbs-vs-rxe.sh.
 *
 * With uverbs ABI version 1 (the percs verbs device) ibv_poll_cq() on an
 * empty CQ is one uverbs command: a write(2) to the uverbs file, its
 * parsing and object look-up, and the driver's poll.  Prints two lines,
 * "verbs_call_ns N" and "syscall_ns N": CALLS calls of each (default
 * 100000) in 50 short rounds, the best round counting, so that rounds in
 * which the vCPU was preempted (a shared host) do not.
 * Exit 1 (and a message) when the device cannot be opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <infiniband/verbs.h>

#define ROUNDS 50

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	ibv_free_device_list(list);
	return ctx;
}

int main(int argc, char **argv)
{
	uint64_t calls = 100000, best_poll = UINT64_MAX, best_sys = UINT64_MAX;
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	char *end;
	int r;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: verbs-floor DEVICE [CALLS]\n");
		return 2;
	}
	if (argc == 3) {
		errno = 0;
		calls = strtoull(argv[2], &end, 10);
		if (errno || *end || calls < ROUNDS || calls > 100000000) {
			fprintf(stderr, "verbs-floor: CALLS '%s' is not in 50..10^8\n",
				argv[2]);
			return 2;
		}
	}
	ctx = open_device(argv[1]);
	if (!ctx) {
		fprintf(stderr, "verbs-floor: cannot open device %s\n", argv[1]);
		return 1;
	}
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!cq) {
		fprintf(stderr, "verbs-floor: ibv_create_cq: %s\n",
			strerror(errno));
		ibv_close_device(ctx);
		return 1;
	}
	calls /= ROUNDS;
	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0, t1, i;

		t0 = now_ns();
		for (i = 0; i < calls; i++)
			if (ibv_poll_cq(cq, 1, &wc) != 0) {
				fprintf(stderr, "verbs-floor: the CQ is not empty\n");
				return 1;
			}
		t1 = now_ns();
		if (t1 - t0 < best_poll)
			best_poll = t1 - t0;
		t0 = now_ns();
		for (i = 0; i < calls; i++)
			syscall(SYS_getppid);
		t1 = now_ns();
		if (t1 - t0 < best_sys)
			best_sys = t1 - t0;
	}
	printf("verbs_call_ns %llu\nsyscall_ns %llu\n",
	       (unsigned long long)(best_poll / calls),
	       (unsigned long long)(best_sys / calls));
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
	return 0;
}
