// SPDX-License-Identifier: GPL-2.0
/*
 * Runner of the firmware-model unit tests: prints TAP version 13.
 *
 *   fm-tests            run every test
 *   fm-tests NAME...    run the named tests only
 *   fm-tests --count    print the number of tests
 *   fm-tests --list     print their names
 *
 * Exit status: 0 if every test passed, 1 otherwise.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#include "fm_test.h"

#define FM_T_MAX_TESTS		256
#define FM_T_MAX_MESSAGES	20	/* failure lines printed per test */
#define FM_T_TIMEOUT		60	/* seconds per test */
#define FM_T_EXIT_FAILED	3	/* child status: checks failed */

static struct {
	const char *name;
	void (*fn)(void);
} fm_t_tests[FM_T_MAX_TESTS];
static unsigned int fm_t_nr_tests;
static unsigned int fm_t_failures;	/* in the running test (child) */

void fm_t_register(const char *name, void (*fn)(void))
{
	if (fm_t_nr_tests == FM_T_MAX_TESTS) {
		fprintf(stderr, "fm-tests: more than %d tests\n",
			FM_T_MAX_TESTS);
		exit(2);
	}
	fm_t_tests[fm_t_nr_tests].name = name;
	fm_t_tests[fm_t_nr_tests].fn = fn;
	fm_t_nr_tests++;
}

void fm_t_fail(const char *file, int line, const char *msg)
{
	if (fm_t_failures++ >= FM_T_MAX_MESSAGES)
		return;
	printf("# %s:%d: %s\n", file, line, msg);
	fflush(stdout);
}

/* Run one test in a child; return true if it passed. */
static int fm_t_run(unsigned int i)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("# fork: %s\n", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		alarm(FM_T_TIMEOUT);
		fm_t_tests[i].fn();
		if (fm_t_failures > FM_T_MAX_MESSAGES)
			printf("# ... %u failed checks in all\n",
			       fm_t_failures);
		fflush(stdout);
		_exit(fm_t_failures ? FM_T_EXIT_FAILED : 0);
	}
	if (waitpid(pid, &status, 0) < 0) {
		printf("# waitpid: %s\n", strerror(errno));
		return 0;
	}
	if (WIFSIGNALED(status)) {
		printf("# killed by signal %d%s\n", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
		return 0;
	}
	if (WEXITSTATUS(status) == 0)
		return 1;
	if (WEXITSTATUS(status) != FM_T_EXIT_FAILED)
		printf("# crashed: exit status %d (sanitizer report on stderr?)\n",
		       WEXITSTATUS(status));
	return 0;
}

static int fm_t_selected(unsigned int i, int argc, char **argv)
{
	int a;

	if (argc < 2)
		return 1;
	for (a = 1; a < argc; a++)
		if (!strcmp(argv[a], fm_t_tests[i].name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int i, n = 0, k = 0, failed = 0;

	if (argc == 2 && !strcmp(argv[1], "--count")) {
		printf("%u\n", fm_t_nr_tests);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < fm_t_nr_tests; i++)
			printf("%s\n", fm_t_tests[i].name);
		return 0;
	}
	for (i = 0; i < fm_t_nr_tests; i++)
		n += fm_t_selected(i, argc, argv);
	if (!n) {
		fprintf(stderr, "fm-tests: no such test\n");
		return 2;
	}

	printf("TAP version 13\n1..%u\n", n);
	for (i = 0; i < fm_t_nr_tests; i++) {
		if (!fm_t_selected(i, argc, argv))
			continue;
		k++;
		if (fm_t_run(i)) {
			printf("ok %u - fm: %s\n", k, fm_t_tests[i].name);
		} else {
			printf("not ok %u - fm: %s\n", k, fm_t_tests[i].name);
			failed++;
		}
		fflush(stdout);
	}
	printf("# fm: %u passed, %u failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
