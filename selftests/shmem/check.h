/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the OpenSHMEM test programs: CHECK() prints what failed, with
 * the PE, and ends the job through shmem_global_exit(3) (percs-run then
 * exits 3 naming the rank).
 */
#ifndef PERCS_SHMEM_TEST_CHECK_H
#define PERCS_SHMEM_TEST_CHECK_H

#include <stdio.h>
#include <shmem.h>

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "PE %d: %s:%d: check failed: %s: ",	\
			shmem_my_pe(), __FILE__, __LINE__, #cond);	\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		shmem_global_exit(3);					\
	}								\
} while (0)

#endif
