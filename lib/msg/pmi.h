/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conversation between percs-run and its ranks over the stream socket
 * each rank inherits as PERCS_RUN_FD (shared by tools/run and lib/msg):
 *
 *   rank -> launcher  struct pmi_hello (its rank and window address)
 *   launcher -> rank  PERCS_SIZE x struct percs_addr, by rank, once every
 *                     rank has said hello
 *   rank -> launcher  struct pmi_cmd PMI_LEAVE (finalized) or PMI_ABORT
 *   launcher -> rank  struct pmi_cmd PMI_GO once every rank has left
 *                     (or died)
 *   launcher -> rank  struct pmi_cmd PMI_DEAD, code = a rank that died or
 *                     exited without PMI_LEAVE, at any time after the
 *                     table
 *
 * A rank that exits or dies without PMI_LEAVE ends the job: the launcher
 * tells the others (PMI_DEAD), gives them its grace period to notice and
 * end, then kills what is left.
 */
#ifndef PERCS_MSG_PMI_H
#define PERCS_MSG_PMI_H

#include <stdint.h>
#include <linux/percs.h>

#define PMI_MAGIC	0x50524e31U	/* "PRN1" */

/* Environment the launcher gives each rank. */
#define PMI_ENV_FD	"PERCS_RUN_FD"
#define PMI_ENV_RANK	"PERCS_RANK"
#define PMI_ENV_SIZE	"PERCS_SIZE"
#define PMI_ENV_HUB	"PERCS_HUB"
#define PMI_ENV_UNIT	"PERCS_UNIT"
/* The job's fd (libpercs's percs_job_default() reads it). */
#define PMI_ENV_JOB_FD	"PERCS_JOB_FD"

struct pmi_hello {
	uint32_t magic;
	uint32_t rank;
	struct percs_addr addr;
};

enum pmi_op { PMI_LEAVE = 1, PMI_ABORT, PMI_GO, PMI_DEAD };

struct pmi_cmd {
	uint32_t magic;
	uint32_t op;
	int32_t code;
	uint32_t reserved;
};

#endif /* PERCS_MSG_PMI_H */
