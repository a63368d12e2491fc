/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny TAP harness for the firmware-model unit tests.
 *
 * FM_TEST(name) { ... } defines and registers a test; CHECK*() record a
 * failure and carry on.  Each test runs in a forked child with a timeout,
 * so a crash or a sanitizer report fails that test only.
 */
#ifndef _PERCS_FM_TEST_H
#define _PERCS_FM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fm_t_register(const char *name, void (*fn)(void));
void fm_t_fail(const char *file, int line, const char *msg);

#define FM_TEST(name)							\
	static void name(void);						\
	static void __attribute__((constructor)) name##_register(void)	\
	{								\
		fm_t_register(#name, name);				\
	}								\
	static void name(void)

/* Record a failure described by a printf format (checked by the compiler). */
#define FM_T_FAILF(fmt, ...)						\
	do {								\
		char msg_[512];						\
		snprintf(msg_, sizeof(msg_), fmt, __VA_ARGS__);		\
		fm_t_fail(__FILE__, __LINE__, msg_);			\
	} while (0)

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			fm_t_fail(__FILE__, __LINE__, #cond);		\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		long long a_ = (long long)(a), b_ = (long long)(b);	\
		if (a_ != b_)						\
			FM_T_FAILF("%s == %s: %lld != %lld",		\
				   #a, #b, a_, b_);			\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *a_ = (a), *b_ = (b);			\
		if (strcmp(a_, b_))					\
			FM_T_FAILF("%s == %s: \"%s\" != \"%s\"",	\
				   #a, #b, a_, b_);			\
	} while (0)

/* Give context to the failures of a loop body: CHECK_CTX(cond, fmt, ...) */
#define CHECK_CTX(cond, fmt, ...)					\
	do {								\
		if (!(cond))						\
			FM_T_FAILF("%s (" fmt ")", #cond, __VA_ARGS__);	\
	} while (0)

#endif /* _PERCS_FM_TEST_H */
