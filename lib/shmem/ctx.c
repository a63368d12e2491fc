// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: communication contexts (OpenSHMEM 1.5, section 9.4).
 *
 * A context is an ordering and completion domain for RMA and atomics, and,
 * created on a team, a PE numbering (its operations name team PEs).  Here
 * every context of a PE issues through the PE's one RMA window: the HFI
 * orders and completes a window's operations together, so shmem_ctx_quiet()
 * and shmem_ctx_fence() complete or order every operation of the PE, a
 * superset of the context's, which OpenSHMEM allows.  What a context buys
 * on this emulation is its team's numbering, not independent progress.
 */
#include <stdlib.h>

#include "team.h"

struct percs_shmem_ctx {
	struct percs_shmem_team *team;	/* NULL: the world's numbering */
	long options;
};

static struct percs_shmem_ctx default_ctx;
shmem_ctx_t percs_shmem_ctx_default = &default_ctx;

#define CTX_OPTIONS	(SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE |	\
			 SHMEM_CTX_NOSTORE)

static void ctx_check(const char *call, shmem_ctx_t ctx)
{
	shmem_need_init(call);
	if (ctx == SHMEM_CTX_INVALID)
		shmem_die(call, "SHMEM_CTX_INVALID is not a context");
}

int shmem_ctx_team_pe(const char *call, shmem_ctx_t ctx, int pe)
{
	const struct percs_shmem_team *t;

	ctx_check(call, ctx);
	t = ctx->team;
	if (!t) {
		shmem_check_pe(call, pe);
		return pe;
	}
	if (pe < 0 || pe >= t->g.set.size)
		shmem_die(call, "PE %d is out of the context's team (0 .. %d)",
			  pe, t->g.set.size - 1);
	return shmem_pes_pe(&t->g.set, pe);
}

static int ctx_new(const char *call, struct percs_shmem_team *team,
		   long options, shmem_ctx_t *ctx)
{
	shmem_need_init(call);
	if (!ctx)
		shmem_die(call, "NULL ctx");
	*ctx = SHMEM_CTX_INVALID;
	if (options & ~CTX_OPTIONS)
		return -1;
	*ctx = calloc(1, sizeof(**ctx));
	if (!*ctx)
		return -1;
	(*ctx)->team = team;
	(*ctx)->options = options;
	return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
	return ctx_new("shmem_ctx_create", NULL, options, ctx);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
	const char *call = "shmem_team_create_ctx";

	if (team == SHMEM_TEAM_INVALID) {
		shmem_need_init(call);
		if (ctx)
			*ctx = SHMEM_CTX_INVALID;
		return -1;
	}
	if (team->g.me < 0)
		shmem_die(call, "PE %d is not in the team", shmem_g.me);
	return ctx_new(call, team == SHMEM_TEAM_WORLD ? NULL : team, options,
		       ctx);
}

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
	const char *call = "shmem_ctx_destroy";

	shmem_need_init(call);
	if (ctx == SHMEM_CTX_INVALID)
		return;
	if (ctx == SHMEM_CTX_DEFAULT)
		shmem_die(call, "SHMEM_CTX_DEFAULT cannot be destroyed");
	shmem_do_quiet(call);	/* its operations complete first */
	free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
	shmem_need_init("shmem_ctx_get_team");
	if (!team)
		shmem_die("shmem_ctx_get_team", "NULL team");
	if (ctx == SHMEM_CTX_INVALID) {
		*team = SHMEM_TEAM_INVALID;
		return -1;
	}
	*team = ctx->team ? ctx->team : SHMEM_TEAM_WORLD;
	return 0;
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
	ctx_check("shmem_ctx_quiet", ctx);
	shmem_do_quiet("shmem_ctx_quiet");
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
	ctx_check("shmem_ctx_fence", ctx);
	shmem_fence();
}
