// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Strided element offsets (shmem_elem_off), as iput/iget and alltoalls
 * walk their arrays: element i of stride s and size z is i x s x z bytes
 * away, for positive and negative strides and every element size.
 */
#include "unit.h"

static void t_offsets(void)
{
	static const size_t sizes[] = { 1, 2, 4, 8, 16 };
	long long a[64];

	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
		for (ptrdiff_t s = -5; s <= 7; s++)
			for (size_t i = 0; i < 40; i++)
				CHECK_EQ(shmem_elem_off(i, s, sizes[z]),
					 (long long)i * s * (long long)sizes[z]);
	/* Walking an array by element offsets visits the strided elements. */
	for (int i = 0; i < 64; i++)
		a[i] = i;
	for (size_t i = 0; i < 21; i++)
		CHECK_EQ(*(long long *)((char *)a + shmem_elem_off(i, 3, sizeof(a[0]))),
			 3 * (long long)i);
	for (size_t i = 0; i < 16; i++)
		CHECK_EQ(*(long long *)((char *)&a[63] + shmem_elem_off(i, -4, sizeof(a[0]))),
			 63 - 4 * (long long)i);
	/* Large arrays: no 32-bit truncation. */
	CHECK_EQ(shmem_elem_off((size_t)3 << 30, 2, 8), (long long)3 << 34);
}

const struct unit_test strided_tests[] = {
	{ "strided: element offsets for every stride sign and size", t_offsets },
	{ NULL, NULL }
};
