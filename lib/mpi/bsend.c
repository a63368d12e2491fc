// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: buffered sends (MPI_Bsend, MPI_Buffer_attach/detach).
 *
 * MPI_Bsend completes at once, whatever the receiver does: its data is
 * copied (packed) and sent from the copy.  The attached buffer is the
 * bound: the buffered sends in flight may hold at most its size, each
 * counting its packed bytes plus MPI_BSEND_OVERHEAD; a send beyond it
 * fails with MPI_ERR_BUFFER.  The copies live in the library's memory,
 * not in the attached buffer (only its size is used), so the program may
 * not rely on the buffer's contents, which MPI does not promise anyway.
 * Finished buffered sends are reaped at every MPI_Bsend, at
 * MPI_Buffer_detach (which waits for all of them) and at MPI_Finalize.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

struct bsend {
	struct bsend *next;
	struct mpi_req *q;
	size_t charge;
};

static void *attached;
static size_t attached_size, in_use;
static struct bsend *pending;

/* Free the finished ones; with @wait, wait for all. */
static int reap(bool wait)
{
	struct bsend **pp = &pending;
	int ret = MPI_SUCCESS;

	while (*pp) {
		struct bsend *b = *pp;
		int done = mpi_req_test(b->q);

		while (wait && done == 0) {
			mpi_idle();
			done = mpi_req_test(b->q);
		}
		if (done == 0) {
			pp = &b->next;
			continue;
		}
		if (done != 1 && !ret)
			ret = done;
		*pp = b->next;
		in_use -= b->charge;
		mpi_req_put(b->q);
		free(b);
	}
	return ret;
}

int mpi_bsend_fini(void)
{
	int ret = reap(true);

	attached = NULL;
	attached_size = 0;
	return ret;
}

PERCS_MPI_ALIAS(Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
	MPI_NEED_INIT("MPI_Buffer_attach");
	if (attached)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_BUFFER,
				 "MPI_Buffer_attach",
				 "a buffer is attached already (detach it first)");
	if (size < 0 || (size && !buffer))
		return mpi_error(MPI_COMM_NULL, MPI_ERR_BUFFER,
				 "MPI_Buffer_attach", "%s",
				 size < 0 ? "negative size" : "NULL buffer");
	attached = buffer ? buffer : (void *)&attached;
	attached_size = (size_t)size;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
	int ret;

	MPI_NEED_INIT("MPI_Buffer_detach");
	if (!buffer_addr || !size)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Buffer_detach",
				 "NULL %s", size ? "buffer_addr" : "size");
	ret = reap(true);
	*(void **)buffer_addr = attached == (void *)&attached ? NULL : attached;
	*size = (int)attached_size;
	attached = NULL;
	attached_size = 0;
	if (ret)
		return mpi_error(MPI_COMM_NULL, ret, "MPI_Buffer_detach", "%s",
				 mpi_why());
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest,
	       int tag, MPI_Comm comm)
{
	struct mpi_type *t;
	struct bsend *b;
	size_t bytes, charge;
	void *copy;
	int ret = mpi_check_p2p(comm, buf, count, type, dest, false, tag,
				"MPI_Bsend");

	if (ret)
		return ret;
	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	ret = reap(false);
	if (ret)
		return mpi_error(comm, ret, "MPI_Bsend", "%s", mpi_why());
	t = mpi_type(type);
	bytes = (size_t)count * t->size;
	charge = bytes + MPI_BSEND_OVERHEAD;
	if (in_use + charge > attached_size)
		return mpi_error(comm, MPI_ERR_BUFFER, "MPI_Bsend",
				 "the attached buffer has %zu of %zu bytes free, the message needs %zu",
				 attached_size - in_use, attached_size, charge);
	b = malloc(sizeof(*b));
	copy = malloc(bytes ? bytes : 1);
	if (!b || !copy) {
		free(b);
		free(copy);
		return mpi_error(comm, MPI_ERR_NO_MEM, "MPI_Bsend",
				 "out of memory");
	}
	mpi_pack(t, buf, count, copy);
	ret = mpi_isend(copy, (int)bytes, MPI_BYTE, dest, tag, comm,
			MPI_SPACE_P2P, 0, &b->q);
	if (ret) {
		free(b);
		free(copy);
		return mpi_error(comm, ret, "MPI_Bsend",
				 "cannot start the transfer");
	}
	b->q->tmp = copy;	/* freed with the request */
	b->charge = charge;
	b->next = pending;
	pending = b;
	in_use += charge;
	return MPI_SUCCESS;
}
