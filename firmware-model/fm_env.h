/* SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1-or-later */
/*
 * percs firmware model: the one environment header.
 *
 * The firmware model is freestanding C compiled both into the kernel module
 * (PERCS_KERNEL defined) and into userspace programs (unit tests, fuzzers,
 * the topology simulator).  Every other file of the model includes this
 * header instead of kernel or libc headers; it supplies the fixed-width
 * types, bool, size_t, errno values, memset/memcpy and the few helpers the
 * model uses, under fm_/FM_ names that mean the same in both worlds:
 *
 *  fm_calloc(n, size)	zeroed array, NULL on failure (kvcalloc / calloc);
 *			may sleep in the kernel
 *  fm_free(p)		release it (kvfree / free); NULL is a no-op
 *  fm_popcount64(x)	set bits of a u64
 *  fm_ctz64(x)		index of the lowest set bit, x != 0
 */
#ifndef _PERCS_FM_ENV_H
#define _PERCS_FM_ENV_H

#ifdef PERCS_KERNEL

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/mm.h>

#define FM_ARRAY_SIZE(a)	ARRAY_SIZE(a)
#define FM_DIV_ROUND_UP(n, d)	DIV_ROUND_UP(n, d)
#define fm_snprintf		snprintf
#define fm_calloc(n, size)	kvcalloc(n, size, GFP_KERNEL)
#define fm_free(p)		kvfree(p)
#define fm_popcount64(x)	hweight64(x)
#define fm_ctz64(x)		__ffs64(x)

#else /* userspace */

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define FM_ARRAY_SIZE(a)	(sizeof(a) / sizeof(*(a)))
#define FM_DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define fm_snprintf		snprintf
#define fm_calloc(n, size)	calloc(n, size)
#define fm_free(p)		free(p)
#define fm_popcount64(x)	((unsigned int)__builtin_popcountll(x))
#define fm_ctz64(x)		((unsigned int)__builtin_ctzll(x))

#endif /* PERCS_KERNEL */

#include <linux/percs.h>

#endif /* _PERCS_FM_ENV_H */
