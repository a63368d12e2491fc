/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem unit tests: the library's pure logic on the host, no
 * HFI and no job - the heap allocator, strided PE sets and team configs,
 * symmetric address translation, the reductions' arithmetic and strided
 * element offsets.  As lib/tests: each test runs in a forked child with a
 * timeout and prints one TAP line (harness.c); each file lists its tests
 * in a table NAME_tests[].  A call that must abort is run by t_dies() in
 * a child of its own, which checks the exit status and the message.
 */
#ifndef PERCS_SHMEM_UNIT_H
#define PERCS_SHMEM_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem_internal.h"

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

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/*
 * Run @fn(@arg) in a child: true when it exits with status 1 and its
 * stderr contains @msg (what shmem_die() does); what it printed goes to
 * the TAP log as comments otherwise.
 */
bool t_dies(void (*fn)(void *), void *arg, const char *msg);
#define CHECK_DIES(fn, arg, msg)					\
	do {								\
		if (!t_dies(fn, arg, msg))				\
			t_fail(__FILE__, __LINE__,			\
			       "%s did not abort with \"%s\"", #fn, msg); \
	} while (0)

#endif /* PERCS_SHMEM_UNIT_H */
