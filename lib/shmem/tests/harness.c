// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem unit tests: the runner (as lib/tests/harness.c): each
 * test in a forked child with a 60 s alarm, one TAP line each; "--count"
 * prints the number of tests.
 */
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

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

bool t_dies(void (*fn)(void *), void *arg, const char *msg)
{
	char out[4096];
	size_t len = 0;
	int fds[2], status;
	ssize_t r;
	pid_t pid;

	fflush(stdout);
	if (pipe(fds))
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn(arg);
		_exit(0);	/* it returned: did not abort */
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 &&
	       (r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1 && strstr(out, msg))
		return true;
	printf("#   exit status 0x%x, stderr: %s\n", status, out);
	return false;
}

extern const struct unit_test alloc_tests[];
extern const struct unit_test pes_tests[];
extern const struct unit_test symmetric_tests[];
extern const struct unit_test red_arith_tests[];
extern const struct unit_test strided_tests[];

static const struct unit_test *const suites[] = {
	alloc_tests,
	pes_tests,
	symmetric_tests,
	red_arith_tests,
	strided_tests,
};

#define NSUITES ((int)(sizeof(suites) / sizeof(suites[0])))

static bool run_test(const struct unit_test *t, int n)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("not ok %d - %s # fork failed\n", n, t->name);
		return false;
	}
	if (!pid) {
		alarm(60);
		t->fn();
		fflush(stdout);
		_exit(t_failed ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		printf("ok %d - %s\n", n, t->name);
		return true;
	}
	if (WIFSIGNALED(status))
		printf("not ok %d - %s # signal %d\n", n, t->name, WTERMSIG(status));
	else
		printf("not ok %d - %s\n", n, t->name);
	return false;
}

int main(int argc, char **argv)
{
	int n = 0, failed = 0;

	for (int s = 0; s < NSUITES; s++)
		for (const struct unit_test *t = suites[s]; t->fn; t++)
			n++;
	if (argc > 1 && !strcmp(argv[1], "--count")) {
		printf("%d\n", n);
		return 0;
	}
	printf("TAP version 13\n1..%d\n", n);
	n = 0;
	for (int s = 0; s < NSUITES; s++)
		for (const struct unit_test *t = suites[s]; t->fn; t++)
			if (!run_test(t, ++n))
				failed++;
	return failed ? 1 : 0;
}
