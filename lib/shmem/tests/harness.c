// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem unit tests: t_dies() and the tables in the order they
 * run, each test in a forked child with a 60 s alarm (lib/tests's
 * tap_unit.c); "--count" prints the number of tests.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

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

int main(int argc, char **argv)
{
	return unit_main(argc, argv, suites, NSUITES, 60);
}
