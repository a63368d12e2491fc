// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the bcast algorithms.
 *
 * binomial: the tree from the root (mpi_bcast_sched() in coll.c), every
 * rank receiving the whole buffer before forwarding it: log2 p times the
 * time of the whole message. pipelined: the same tree, the buffer cut into
 * segments of BCAST_SEGMENT bytes; round j receives segment j while it
 * forwards segment j - 1, so a long message costs about its own time
 * once, plus a segment per level.
 */
#include "mpi_internal.h"

/* Long enough for the rendezvous protocol, short enough to pipeline. */
#define BCAST_SEGMENT	16384

static void pipelined(struct mpi_sched *s, const struct mpi_comm *c,
		      void *buf, int count, MPI_Datatype type, int root)
{
	struct mpi_type *t = mpi_type(type);
	int seg, nseg, j;

	seg = t->size ? (int)(BCAST_SEGMENT / t->size) : count;
	if (seg < 1)
		seg = 1;
	nseg = count ? (count + seg - 1) / seg : 1;
	if (nseg == 1) {
		mpi_bcast_sched(s, c, buf, count, type, root);
		return;
	}
	for (j = 0; j <= nseg; j++) {
		if (j < nseg)
			mpi_bcast_recv(s, c, mpi_slot(buf, j, seg, type),
				       j == nseg - 1 ? count - j * seg : seg,
				       type, root);
		if (j > 0)
			mpi_bcast_send(s, c, mpi_slot(buf, j - 1, seg, type),
				       j == nseg ? count - (j - 1) * seg : seg,
				       type, root);
		mpi_sched_round(s);
	}
}

void mpi_bcast_algo(struct mpi_sched *s, const struct mpi_comm *c, void *buf,
		    int count, MPI_Datatype type, int root, int algo)
{
	if (algo == BCAST_CAU)
		mpi_cau_bcast(s, c, buf, count, type, root);
	else if (algo == BCAST_PIPELINED)
		pipelined(s, c, buf, count, type, root);
	else
		mpi_bcast_sched(s, c, buf, count, type, root);
}
