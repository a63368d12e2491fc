// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the environment (init, finalize, abort, clocks, names).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_internal.h"

struct mpi_state mpi_g;

PERCS_MPI_ALIAS(Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int ret;

	(void)argc;
	(void)argv;
	if (mpi_g.initialized || mpi_g.finalized)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_OTHER, "MPI_Init",
				 "MPI is already %s",
				 mpi_g.finalized ? "finalized" : "initialized");
	if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Init_thread",
				 "no thread level %d", required);
	ret = percs_msg_job_join(&mpi_g.job);
	if (ret == -EINVAL)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_OTHER, "MPI_Init",
				 "cannot join the job: a malformed variable (PERCS_RANK, PERCS_SIZE, PERCS_HUB, PERCS_UNIT, PERCS_RUN_FD, PERCS_JOB_FD; PERCS_MSG_EAGER at most %zu, PERCS_MSG_UNEXPECTED in bytes)",
				 percs_msg_eager_limit());
	if (ret)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_OTHER, "MPI_Init",
				 "cannot join the job: %s%s", strerror(-ret),
				 ret == -ENOENT ?
				 " (start the program with percs-run)" : "");
	mpi_g.m = percs_msg_job_endpoint(mpi_g.job);
	ret = mpi_comm_init();
	if (ret)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Init",
				 "out of memory");
	/* A bad PERCS_MPI_COLL_* is fatal: the job is joined, so it ends. */
	ret = mpi_coll_select_init();
	if (ret)
		return ret;
	mpi_g.initialized = 1;
	if (provided)
		*provided = MPI_THREAD_SINGLE;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Init)
int PMPI_Init(int *argc, char ***argv)
{
	return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, NULL);
}

PERCS_MPI_ALIAS(Query_thread)
int PMPI_Query_thread(int *provided)
{
	MPI_NEED_INIT("MPI_Query_thread");
	if (!provided)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Query_thread",
				 "NULL provided");
	*provided = MPI_THREAD_SINGLE;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Initialized)
int PMPI_Initialized(int *flag)
{
	if (!flag)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Initialized",
				 "NULL flag");
	*flag = mpi_g.initialized;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Finalized)
int PMPI_Finalized(int *flag)
{
	if (!flag)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Finalized",
				 "NULL flag");
	*flag = mpi_g.finalized;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Finalize)
int PMPI_Finalize(void)
{
	int ret;

	MPI_NEED_INIT("MPI_Finalize");
	ret = mpi_bsend_fini();
	if (ret)
		return mpi_error(MPI_COMM_NULL, ret, "MPI_Finalize",
				 "a buffered send failed: %s", mpi_why());
	if (getenv("PERCS_MPI_STATS"))
		fprintf(stderr, "percs-mpi: rank %u: cau algorithm: %lu collectives on the CAU, %lu in software\n",
			percs_msg_rank(mpi_g.m), mpi_g.cau_colls, mpi_g.cau_sw);
	ret = percs_msg_job_leave(mpi_g.job);
	if (ret == -EBUSY)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_PENDING, "MPI_Finalize",
				 "requests are still pending");
	mpi_g.job = NULL;
	mpi_g.m = NULL;
	mpi_comm_fini();
	mpi_group_fini();
	mpi_op_fini();
	mpi_type_fini();
	mpi_g.finalized = 1;
	if (ret)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_OTHER, "MPI_Finalize",
				 "leaving the job: %s", strerror(-ret));
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Abort)
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
	(void)comm;	/* the whole job ends, whatever the communicator */
	fprintf(stderr, "percs-mpi: rank %d: MPI_Abort with code %d\n",
		mpi_g.m ? (int)percs_msg_rank(mpi_g.m) : -1, errorcode);
	if (mpi_g.job)
		percs_msg_job_abort(mpi_g.job, errorcode);
	exit(errorcode & 0xff ? errorcode & 0xff : 1);
}

PERCS_MPI_ALIAS(Wtime)
double PMPI_Wtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

PERCS_MPI_ALIAS(Wtick)
double PMPI_Wtick(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC, &ts))
		return 1e-9;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

PERCS_MPI_ALIAS(Get_processor_name)
int PMPI_Get_processor_name(char *name, int *resultlen)
{
	struct percs_addr a;
	char host[128] = "localhost";

	MPI_NEED_INIT("MPI_Get_processor_name");
	if (!name || !resultlen)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG,
				 "MPI_Get_processor_name", "NULL %s",
				 name ? "resultlen" : "name");
	gethostname(host, sizeof(host) - 1);
	a = percs_window_addr(percs_msg_window(mpi_g.m));
	/* The emulated node: the hub and HFI the rank's window is on. */
	*resultlen = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s-hub%u-hfi%u",
			      host, a.hub, a.hfi);
	if (*resultlen >= MPI_MAX_PROCESSOR_NAME)
		*resultlen = MPI_MAX_PROCESSOR_NAME - 1;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
	if (!version || !subversion)
		return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_version",
				 "NULL %s", version ? "subversion" : "version");
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

PERCS_MPI_ALIAS(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
	static int tag_ub = PERCS_MSG_TAG_MAX, wtime_global = 0;
	static int host = MPI_PROC_NULL, io = MPI_ANY_SOURCE;

	MPI_NEED_INIT("MPI_Comm_get_attr");
	if (!mpi_comm(comm))
		return mpi_error(MPI_COMM_NULL, MPI_ERR_COMM,
				 "MPI_Comm_get_attr", "no communicator %d",
				 comm);
	if (!value || !flag)
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_get_attr",
				 "NULL %s", value ? "flag" : "value");
	*flag = 1;
	switch (keyval) {
	case MPI_TAG_UB:
		*(int **)value = &tag_ub;
		break;
	case MPI_HOST:
		*(int **)value = &host;
		break;
	case MPI_IO:
		*(int **)value = &io;
		break;
	case MPI_WTIME_IS_GLOBAL:
		*(int **)value = &wtime_global;
		break;
	default:
		*flag = 0;
		return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_get_attr",
				 "no attribute key %d", keyval);
	}
	return MPI_SUCCESS;
}
