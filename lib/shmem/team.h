/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem: teams, and the group a collective runs on (a team, or
 * a 1.0-1.3 active set).
 */
#ifndef LIBPERCS_SHMEM_TEAM_H
#define LIBPERCS_SHMEM_TEAM_H

#include "shmem_internal.h"
#include "xchg.h"

/* Where a collective runs: members, this PE's index, message context. */
struct shmem_group {
	struct shmem_pes set;
	int me;				/* index in set, -1 if not a member */
	uint32_t ctx;
	int tag;			/* collectives so far (message tag) */
	struct percs_cau_tree *cau;	/* NULL: software only */
};

struct percs_shmem_team {
	struct shmem_group g;
	unsigned int splits;		/* teams split from this one */
	bool predefined;
	shmem_team_config_t config;	/* as created (get_config) */
};

struct percs_shmem_team *shmem_team_world_ptr(void);
/* The team behind @team, aborting naming @call when it is invalid. */
struct percs_shmem_team *shmem_team_get(const char *call, shmem_team_t team);
void shmem_team_barrier(const char *call, struct percs_shmem_team *t);
/* Abort naming @call unless @config and @config_mask are valid. */
void shmem_team_check_config(const char *call,
			     const shmem_team_config_t *config,
			     long config_mask);
/* The next message tag of @g's collectives. */
int shmem_group_tag(struct shmem_group *g);

/* The 1.0-1.3 active sets (sync.c). */
uint32_t shmem_aset_ctx(int start, int log, int size);
int shmem_aset_check(const char *call, int start, int log, int size,
		     struct shmem_pes *set);
/* A group for an active set (no CAU tree, context of its own). */
void shmem_aset_group(const char *call, int start, int log, int size,
		      struct shmem_group *g);

#endif /* LIBPERCS_SHMEM_TEAM_H */
