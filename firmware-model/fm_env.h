/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: the one environment header.
 *
 * The firmware model is freestanding C compiled both into the kernel module
 * (PERCS_KERNEL defined) and into userspace programs (unit tests, fuzzers,
 * the topology simulator).  Every other file of the model includes this
 * header instead of kernel or libc headers; it supplies the fixed-width
 * types, bool, size_t, errno values, memset/memcpy and the few helpers the
 * model uses, under fm_/FM_ names that mean the same in both worlds.
 */
#ifndef _PERCS_FM_ENV_H
#define _PERCS_FM_ENV_H

#ifdef PERCS_KERNEL

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>

#define FM_ARRAY_SIZE(a)	ARRAY_SIZE(a)
#define FM_DIV_ROUND_UP(n, d)	DIV_ROUND_UP(n, d)
#define fm_snprintf		snprintf

#else /* userspace */

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define FM_ARRAY_SIZE(a)	(sizeof(a) / sizeof(*(a)))
#define FM_DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define fm_snprintf		snprintf

#endif /* PERCS_KERNEL */

#include <linux/percs.h>

#endif /* _PERCS_FM_ENV_H */
