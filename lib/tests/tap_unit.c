// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The unit-test runner the libraries' host tests share (tap_unit.h).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap_unit.h"

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

/* Run @t in a child; its TAP line as test number @nr. */
static bool run_test(const struct unit_test *t, int nr, unsigned int timeout_s)
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
		alarm(timeout_s);
		t->fn();
		fflush(stdout);
		_exit(t_failed ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		exit(1);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok %d - %s\n", nr, t->name);
		return true;
	}
	if (WIFSIGNALED(status))
		printf("#   killed by signal %d%s\n", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	printf("not ok %d - %s\n", nr, t->name);
	return false;
}

int unit_main(int argc, char **argv, const struct unit_test *const *suites,
	      int n, unsigned int timeout_s)
{
	int total = 0, nr = 0, failed = 0;

	for (int s = 0; s < n; s++)
		for (const struct unit_test *t = suites[s]; t->fn; t++)
			total++;
	if (argc > 1 && !strcmp(argv[1], "--count")) {
		printf("%d\n", total);
		return 0;
	}
	printf("TAP version 13\n1..%d\n", total);
	for (int s = 0; s < n; s++)
		for (const struct unit_test *t = suites[s]; t->fn; t++)
			if (!run_test(t, ++nr, timeout_s))
				failed++;
	printf("# %d passed, %d failed\n", total - failed, failed);
	return failed ? 1 : 0;
}
