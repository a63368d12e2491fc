// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: error classes, strings and handlers.
 *
 * Every call that fails goes through mpi_error(), which applies the
 * communicator's handler: MPI_ERRORS_RETURN returns the code,
 * MPI_ERRORS_ARE_FATAL (the default) prints the call's name and why, and
 * ends the job through the launcher.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

static const char *const class_names[MPI_ERR_LASTCODE] = {
	[MPI_SUCCESS] = "MPI_SUCCESS: no error",
	[MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
	[MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
	[MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
	[MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
	[MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
	[MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
	[MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
	[MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
	[MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
	[MPI_ERR_OP] = "MPI_ERR_OP: invalid reduction operation",
	[11] = "unused error class 11",
	[MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
	[MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
	[MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated",
	[MPI_ERR_OTHER] = "MPI_ERR_OTHER: other error",
	[MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
	[MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
	[MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
	[MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
	[MPI_ERR_PROC_ABORTED] = "MPI_ERR_PROC_ABORTED: a peer process died",
};

int mpi_errno_to_class(int err)
{
	if (err)
		mpi_g.last_errno = err;
	switch (err) {
	case 0:
		return MPI_SUCCESS;
	case -ENOMEM:
		return MPI_ERR_NO_MEM;
	case -EMSGSIZE:
		return MPI_ERR_TRUNCATE;
	case -EINVAL:
		return MPI_ERR_ARG;
	case -EFAULT:	/* a receive buffer the data cannot be written to */
		return MPI_ERR_BUFFER;
	case -ECONNRESET:	/* a peer failed (lib/msg/failure.c) */
		return MPI_ERR_PROC_ABORTED;
	default:
		return MPI_ERR_OTHER;
	}
}

const char *mpi_why(void)
{
	static char why[96];
	int dead = -1;

	if (mpi_g.last_errno == -ECONNRESET && mpi_g.m &&
	    percs_msg_failures(mpi_g.m, &dead)) {
		snprintf(why, sizeof(why),
			 "rank %d of MPI_COMM_WORLD died or ended without MPI_Finalize",
			 dead);
		return why;
	}
	if (mpi_g.last_errno == -EREMOTEIO)
		return "the receiver could not read the message (its RDMA read failed)";
	if (mpi_g.last_errno == -EFAULT)
		return "the buffer cannot be registered for the transfer (unmapped, or not writable for a receive)";
	snprintf(why, sizeof(why), "the messaging layer failed: %s",
		 mpi_g.last_errno ? strerror(-mpi_g.last_errno) : "unknown");
	return why;
}

static void fatal_exit(int code)
{
	if (mpi_g.job)
		percs_msg_job_abort(mpi_g.job, code);
	exit(code);
}

int mpi_error(MPI_Comm comm, int code, const char *fn, const char *fmt, ...)
{
	struct mpi_comm *c;
	MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
	va_list ap;

	if (code == MPI_SUCCESS)
		return code;
	if (mpi_g.initialized && !mpi_g.finalized) {
		c = mpi_comm(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm);
		if (!c)
			c = mpi_comm(MPI_COMM_WORLD);
		if (c)
			eh = c->eh;
	}
	if (eh == MPI_ERRORS_RETURN)
		return code;
	/* Before the job is joined, the launcher's variable names the rank. */
	if (mpi_g.m)
		fprintf(stderr, "percs-mpi: rank %u: %s: ",
			percs_msg_rank(mpi_g.m), fn);
	else
		fprintf(stderr, "percs-mpi: rank %s: %s: ",
			getenv("PERCS_RANK") ? getenv("PERCS_RANK") : "?", fn);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (%s); aborting the job\n",
		code > 0 && code < MPI_ERR_LASTCODE ? class_names[code] :
		"unknown error class");
	fatal_exit(code);
	return code;
}

PERCS_MPI_ALIAS(Error_string)
int PMPI_Error_string(int code, char *string, int *resultlen)
{
	if (!string || !resultlen)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string",
				 "NULL %s", string ? "resultlen" : "string");
	if (code < 0 || code >= MPI_ERR_LASTCODE)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string",
				 "no error code %d", code);
	*resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s",
			      class_names[code]);
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Error_class)
int PMPI_Error_class(int code, int *errorclass)
{
	if (!errorclass)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class",
				 "NULL errorclass");
	if (code < 0 || code >= MPI_ERR_LASTCODE)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class",
				 "no error code %d", code);
	*errorclass = code;	/* the codes are the classes */
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
	struct mpi_comm *c;

	MPI_NEED_INIT("MPI_Comm_set_errhandler");
	c = mpi_comm(comm);
	if (!c)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM,
				 "MPI_Comm_set_errhandler",
				 "no communicator %d", comm);
	if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
				 "no error handler %d", eh);
	c->eh = eh;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
	struct mpi_comm *c;

	MPI_NEED_INIT("MPI_Comm_get_errhandler");
	c = mpi_comm(comm);
	if (!c)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM,
				 "MPI_Comm_get_errhandler",
				 "no communicator %d", comm);
	if (!eh)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler",
				 "NULL errhandler");
	*eh = c->eh;
	return MPI_SUCCESS;
}
