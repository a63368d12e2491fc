/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unit-test runner the libraries' host tests share (lib/tests,
 * lib/shmem/tests): CHECK()s that count failures in the test's process,
 * and unit_main(), which runs each test of a list of tables in a forked
 * child with an alarm and prints one TAP line for it.
 */
#ifndef PERCS_TAP_UNIT_H
#define PERCS_TAP_UNIT_H

extern int t_failed;
void t_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CHECK(c) do {							\
	if (!(c))							\
		t_fail(__FILE__, __LINE__, "check failed: %s", #c);	\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b)							\
		t_fail(__FILE__, __LINE__, "%s is %lld, expected %s = %lld", \
		       #a, _a, #b, _b);					\
} while (0)

#define REQUIRE(c) do {							\
	if (!(c)) {							\
		t_fail(__FILE__, __LINE__, "required: %s", #c);	\
		return;							\
	}								\
} while (0)

/* One test: its TAP description and the function its child runs. */
struct unit_test {
	const char *name;
	void (*fn)(void);
};

/*
 * unit_main() - run every test of @suites (@n tables, each ended by an
 * entry without a function) in order, each in a child killed after
 * @timeout_s seconds; "--count" as the only argument prints the number of
 * tests instead.  Return: main()'s exit status (1 when a test failed).
 */
int unit_main(int argc, char **argv, const struct unit_test *const *suites,
	      int n, unsigned int timeout_s);

#endif /* PERCS_TAP_UNIT_H */
