// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the tables in the order they run, each test in a
 * forked child with a 120 s alarm (tap_unit.c); "--count" prints the
 * number of tests (for results/lib.expected).
 */
#include "unit.h"

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
extern const struct unit_test mr_cache_tests[];
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
	mr_cache_tests,
	threaded_tests,
	clock_tests,
	atomic_tests,
	amo_tests,
	cau_tests,
	sw_tests,
	coll_threaded_tests,
};

#define NSUITES ((int)(sizeof(suites) / sizeof(suites[0])))

int main(int argc, char **argv)
{
	return unit_main(argc, argv, suites, NSUITES, 120);
}
