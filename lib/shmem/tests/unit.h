/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem unit tests: the library's pure logic on the host, no
 * HFI and no job - the heap allocator, strided PE sets and team configs,
 * symmetric address translation, the reductions' arithmetic and strided
 * element offsets.  The runner is lib/tests's (tap_unit.c): each test runs
 * in a forked child with a timeout and prints one TAP line; each file
 * lists its tests in a table NAME_tests[] (harness.c runs them).  A call that must abort is run by t_dies() in
 * a child of its own, which checks the exit status and the message.
 */
#ifndef PERCS_SHMEM_UNIT_H
#define PERCS_SHMEM_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem_internal.h"
#include "../../tests/tap_unit.h"	/* the checks and the runner */

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
