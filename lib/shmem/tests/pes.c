// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Strided PE sets (pes.c) - the arithmetic of shmem_team_split_strided
 * and shmem_team_translate_pe - and the team config checks (team.c).
 */
#include <errno.h>

#include "pes.h"
#include "team.h"
#include "unit.h"

/* Every split of a 16-PE world: the child's members are exactly the
 * parent indices start + i x stride, and index() inverts pe(). */
static void t_split_every(void)
{
	const struct shmem_pes world = { 0, 1, 16 };
	struct shmem_pes c;
	int valid = 0;

	for (int start = -2; start < 18; start++)
		for (int stride = -4; stride <= 5; stride++)
			for (int size = -1; size <= 17; size++) {
				bool ok = size >= 1 && start >= 0 && start < 16 &&
					  start + (size - 1) * stride >= 0 &&
					  start + (size - 1) * stride < 16 &&
					  (stride || size == 1);

				CHECK_EQ(shmem_pes_split(&world, start, stride, size, &c),
					 ok ? 0 : -EINVAL);
				if (!ok)
					continue;
				valid++;
				CHECK_EQ(c.size, size);
				for (int i = 0; i < size; i++) {
					CHECK_EQ(shmem_pes_pe(&c, i), start + i * stride);
					CHECK_EQ(shmem_pes_index(&c, start + i * stride), i);
				}
				/* Non-members have no index. */
				for (int pe = -1; pe <= 16; pe++) {
					bool member = false;

					for (int i = 0; i < size; i++)
						member |= pe == start + i * stride;
					if (!member)
						CHECK_EQ(shmem_pes_index(&c, pe), -1);
				}
			}
	CHECK(valid > 500);
}

/* A split of a split names world PEs: parent start + index x stride. */
static void t_split_nested(void)
{
	const struct shmem_pes world = { 0, 1, 64 };
	struct shmem_pes odd, c;

	CHECK_EQ(shmem_pes_split(&world, 1, 2, 32, &odd), 0);	/* 1, 3 .. 63 */
	CHECK_EQ(shmem_pes_split(&odd, 2, 3, 10, &c), 0);	/* parent 2, 5 .. 29 */
	CHECK_EQ(c.start, 5);
	CHECK_EQ(c.stride, 6);
	CHECK_EQ(shmem_pes_pe(&c, 9), 59);
	CHECK_EQ(shmem_pes_index(&c, 59), 9);
	CHECK_EQ(shmem_pes_index(&c, 58), -1);
	CHECK_EQ(shmem_pes_split(&odd, 2, 3, 11, &c), -EINVAL);	/* parent 32 */
	/* Stride 0 names one member; negative strides walk down. */
	CHECK_EQ(shmem_pes_split(&odd, 7, 0, 1, &c), 0);
	CHECK_EQ(shmem_pes_pe(&c, 0), 15);
	CHECK_EQ(shmem_pes_index(&c, 15), 0);
	CHECK_EQ(shmem_pes_split(&odd, 31, -1, 32, &c), 0);
	CHECK_EQ(shmem_pes_pe(&c, 0), 63);
	CHECK_EQ(shmem_pes_pe(&c, 31), 1);
	CHECK_EQ(shmem_pes_index(&c, 3), 30);
	/* Sizes whose last member would overflow an int are refused. */
	CHECK_EQ(shmem_pes_split(&world, 1, 1 << 30, 4, &c), -EINVAL);
	CHECK_EQ(shmem_pes_split(&world, 0, -(1 << 30), 4, &c), -EINVAL);
}

static void config_bad_bits(void *arg)
{
	shmem_team_config_t c = { 0 };

	(void)arg;
	shmem_team_check_config("shmem_team_split_strided", &c, 0x4);
}

static void config_null(void *arg)
{
	(void)arg;
	shmem_team_check_config("shmem_team_split_2d", NULL,
				SHMEM_TEAM_NUM_CONTEXTS);
}

static void config_negative(void *arg)
{
	shmem_team_config_t c = { .num_contexts = -3 };

	(void)arg;
	shmem_team_check_config("shmem_team_split_strided", &c,
				SHMEM_TEAM_NUM_CONTEXTS);
}

static void t_config(void)
{
	shmem_team_config_t c = { .num_contexts = 4 };

	shmem_g.me = 0;	/* shmem_die() names the PE */
	/* Valid ones return. */
	shmem_team_check_config("x", NULL, 0);
	shmem_team_check_config("x", &c, 0);
	shmem_team_check_config("x", &c, SHMEM_TEAM_NUM_CONTEXTS);
	CHECK_DIES(config_bad_bits, NULL,
		   "PE 0: shmem_team_split_strided: unknown bits 0x4 in config_mask");
	CHECK_DIES(config_null, NULL,
		   "shmem_team_split_2d: config_mask 0x1 with a NULL config");
	CHECK_DIES(config_negative, NULL,
		   "shmem_team_split_strided: num_contexts -3");
}

const struct unit_test pes_tests[] = {
	{ "pes: every split of 16 PEs, members and index both ways", t_split_every },
	{ "pes: nested, stride 0, negative and overflowing splits", t_split_nested },
	{ "team: config masks checked, bad ones abort naming the call", t_config },
	{ NULL, NULL }
};
