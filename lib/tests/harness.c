// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the runner.  Each test runs in a forked child with
 * a 120 s alarm and prints one TAP line; "--count" prints the number of
 * tests (for results/lib.expected).
 */
#include "unit.h"

int t_failed;

void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	t_failed++;
	if (t_failed > 20)
		return;
	printf("#   %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

extern const struct unit_test fifo_tests[];
extern const struct unit_test rdma_tests[];
extern const struct unit_test send_reserve_tests[];
extern const struct unit_test recv_tests[];
extern const struct unit_test icswx_tests[];
extern const struct unit_test doorbell_tests[];
extern const struct unit_test cq_tests[];
extern const struct unit_test api_tests[];
extern const struct unit_test reserve_tests[];
extern const struct unit_test mr_tests[];
extern const struct unit_test threaded_tests[];
extern const struct unit_test clock_tests[];
extern const struct unit_test atomic_tests[];
extern const struct unit_test amo_tests[];
extern const struct unit_test cau_tests[];
extern const struct unit_test sw_tests[];
extern const struct unit_test coll_threaded_tests[];

/* In the order they run. */
static const struct unit_test *const suites[] = {
	fifo_tests,
	rdma_tests,
	send_reserve_tests,
	recv_tests,
	icswx_tests,
	doorbell_tests,
	cq_tests,
	api_tests,
	reserve_tests,
	mr_tests,
	threaded_tests,
	clock_tests,
	atomic_tests,
	amo_tests,
	cau_tests,
	sw_tests,
	coll_threaded_tests,
};

#define NSUITES ((int)(sizeof(suites) / sizeof(suites[0])))

static int count_tests(void)
{
	int n = 0;

	for (int s = 0; s < NSUITES; s++)
		for (const struct unit_test *t = suites[s]; t->fn; t++)
			n++;
	return n;
}

/* Run @t in a child; its TAP line as test number @n. */
static bool run_test(const struct unit_test *t, int n)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		alarm(120);
		t->fn();
		fflush(stdout);
		_exit(t_failed ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		exit(1);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok %d - %s\n", n, t->name);
		return true;
	}
	if (WIFSIGNALED(status))
		printf("#   killed by signal %d%s\n", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	printf("not ok %d - %s\n", n, t->name);
	return false;
}

int main(int argc, char **argv)
{
	int total = count_tests(), n = 0, failed = 0;

	if (argc > 1 && !strcmp(argv[1], "--count")) {
		printf("%d\n", total);
		return 0;
	}
	printf("TAP version 13\n1..%d\n", total);
	for (int s = 0; s < NSUITES; s++)
		for (const struct unit_test *t = suites[s]; t->fn; t++)
			if (!run_test(t, ++n))
				failed++;
	printf("# %d passed, %d failed\n", total - failed, failed);
	return failed ? 1 : 0;
}
