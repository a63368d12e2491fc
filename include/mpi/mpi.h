/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MPI for programs run with percs-run(1), over libpercs-msg.
 *
 * The subset this library implements is declared here and nothing else:
 * a call outside it does not compile or link.  Every MPI_ function has
 * its PMPI_ twin (MPI_ names are weak aliases of the PMPI_ ones, so a
 * profiling library can define MPI_ names and call PMPI_).  Compile with
 * percs-cc(1), which adds this directory and the libraries.
 *
 * Handles are ints (tables inside the library).  MPI_THREAD_SINGLE is the
 * thread level provided.
 */
#ifndef PERCS_MPI_H
#define PERCS_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION	3
#define MPI_SUBVERSION	1

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Group;
typedef intptr_t MPI_Aint;
typedef long long MPI_Count;

/**
 * struct MPI_Status - what a receive found (typedef MPI_Status)
 * @MPI_SOURCE: the sender's rank
 * @MPI_TAG: the message's tag
 * @MPI_ERROR: its error class (set by the multiple-completion calls)
 * @percs_cancelled: the request was cancelled
 * @percs_bytes: bytes received (MPI_Get_count() divides by the type size)
 */
typedef struct MPI_Status {
	int MPI_SOURCE;
	int MPI_TAG;
	int MPI_ERROR;
	int percs_cancelled;
	size_t percs_bytes;
} MPI_Status;

#define MPI_STATUS_IGNORE	((MPI_Status *)1)
#define MPI_STATUSES_IGNORE	((MPI_Status *)1)
#define MPI_IN_PLACE		((void *)1)
#define MPI_BOTTOM		((void *)0)

/* Groups */
#define MPI_GROUP_NULL		0
#define MPI_GROUP_EMPTY		1

/* Communicators */
#define MPI_COMM_NULL		0
#define MPI_COMM_WORLD		1
#define MPI_COMM_SELF		2

/* Comm_compare results */
#define MPI_IDENT		0
#define MPI_CONGRUENT		1
#define MPI_SIMILAR		2
#define MPI_UNEQUAL		3

/* Special ranks, tags and values */
#define MPI_ANY_SOURCE		(-1)
#define MPI_ANY_TAG		(-1)
#define MPI_PROC_NULL		(-2)
#define MPI_ROOT		(-3)
#define MPI_UNDEFINED		(-32766)
#define MPI_REQUEST_NULL	0
#define MPI_MAX_PROCESSOR_NAME	256
#define MPI_MAX_ERROR_STRING	256
/* Bytes of the attached buffer a buffered send uses beyond its data. */
#define MPI_BSEND_OVERHEAD	64

/* Thread levels */
#define MPI_THREAD_SINGLE	0
#define MPI_THREAD_FUNNELED	1
#define MPI_THREAD_SERIALIZED	2
#define MPI_THREAD_MULTIPLE	3

/* Attributes (MPI_Comm_get_attr on MPI_COMM_WORLD) */
#define MPI_TAG_UB		1
#define MPI_HOST		2
#define MPI_IO			3
#define MPI_WTIME_IS_GLOBAL	4

/* Error handlers */
#define MPI_ERRHANDLER_NULL	0
#define MPI_ERRORS_ARE_FATAL	1
#define MPI_ERRORS_RETURN	2

/* Error classes (the codes are the classes) */
#define MPI_SUCCESS		0
#define MPI_ERR_BUFFER		1
#define MPI_ERR_COUNT		2
#define MPI_ERR_TYPE		3
#define MPI_ERR_TAG		4
#define MPI_ERR_COMM		5
#define MPI_ERR_RANK		6
#define MPI_ERR_REQUEST		7
#define MPI_ERR_ROOT		8
#define MPI_ERR_GROUP		9
#define MPI_ERR_OP		10
#define MPI_ERR_ARG		12
#define MPI_ERR_UNKNOWN		13
#define MPI_ERR_TRUNCATE	14
#define MPI_ERR_OTHER		15
#define MPI_ERR_INTERN		16
#define MPI_ERR_IN_STATUS	17
#define MPI_ERR_PENDING		18
#define MPI_ERR_NO_MEM		19
/* MPI 4.0: a peer process died (or ended without MPI_Finalize) */
#define MPI_ERR_PROC_ABORTED	20
#define MPI_ERR_LASTCODE	21

/* Datatypes (predefined handles 1..MPI_PERCS_NR_BASIC_TYPES - 1) */
#define MPI_DATATYPE_NULL	0
#define MPI_CHAR		1
#define MPI_SIGNED_CHAR		2
#define MPI_UNSIGNED_CHAR	3
#define MPI_BYTE		4
#define MPI_SHORT		5
#define MPI_UNSIGNED_SHORT	6
#define MPI_INT			7
#define MPI_UNSIGNED		8
#define MPI_LONG		9
#define MPI_UNSIGNED_LONG	10
#define MPI_LONG_LONG_INT	11
#define MPI_LONG_LONG		MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG	12
#define MPI_FLOAT		13
#define MPI_DOUBLE		14
#define MPI_LONG_DOUBLE		15
#define MPI_INT8_T		16
#define MPI_INT16_T		17
#define MPI_INT32_T		18
#define MPI_INT64_T		19
#define MPI_UINT8_T		20
#define MPI_UINT16_T		21
#define MPI_UINT32_T		22
#define MPI_UINT64_T		23
#define MPI_C_BOOL		24
#define MPI_WCHAR		25
#define MPI_PERCS_NR_BASIC_TYPES 26

/* Reduction operations */
#define MPI_OP_NULL		0
#define MPI_MAX			1
#define MPI_MIN			2
#define MPI_SUM			3
#define MPI_PROD		4
#define MPI_LAND		5
#define MPI_BAND		6
#define MPI_LOR			7
#define MPI_BOR			8
#define MPI_LXOR		9
#define MPI_BXOR		10

/*
 * A user reduction: @inoutvec[i] = @invec[i] op @inoutvec[i] for @len
 * elements of @datatype (MPI_Op_create).
 */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len,
			       MPI_Datatype *datatype);

/* Each function: the MPI_ name and its PMPI_ twin. */
#define PERCS_MPI_API(name, args)	int MPI_##name args; int PMPI_##name args

/* Environment */
PERCS_MPI_API(Init, (int *argc, char ***argv));
PERCS_MPI_API(Init_thread, (int *argc, char ***argv, int required,
			    int *provided));
PERCS_MPI_API(Query_thread, (int *provided));
PERCS_MPI_API(Initialized, (int *flag));
PERCS_MPI_API(Finalize, (void));
PERCS_MPI_API(Finalized, (int *flag));
PERCS_MPI_API(Abort, (MPI_Comm comm, int errorcode));
PERCS_MPI_API(Get_processor_name, (char *name, int *resultlen));
PERCS_MPI_API(Get_version, (int *version, int *subversion));
PERCS_MPI_API(Comm_get_attr, (MPI_Comm comm, int keyval, void *value,
			      int *flag));
double MPI_Wtime(void);
double PMPI_Wtime(void);
double MPI_Wtick(void);
double PMPI_Wtick(void);

/* Errors */
PERCS_MPI_API(Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler eh));
PERCS_MPI_API(Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *eh));
PERCS_MPI_API(Error_string, (int errorcode, char *string, int *resultlen));
PERCS_MPI_API(Error_class, (int errorcode, int *errorclass));

/* Communicators */
PERCS_MPI_API(Comm_size, (MPI_Comm comm, int *size));
PERCS_MPI_API(Comm_rank, (MPI_Comm comm, int *rank));
PERCS_MPI_API(Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm));
PERCS_MPI_API(Comm_split, (MPI_Comm comm, int color, int key,
			   MPI_Comm *newcomm));
PERCS_MPI_API(Comm_free, (MPI_Comm *comm));
PERCS_MPI_API(Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result));

/* Point-to-point */
PERCS_MPI_API(Send, (const void *buf, int count, MPI_Datatype type, int dest,
		     int tag, MPI_Comm comm));
PERCS_MPI_API(Ssend, (const void *buf, int count, MPI_Datatype type, int dest,
		      int tag, MPI_Comm comm));
PERCS_MPI_API(Rsend, (const void *buf, int count, MPI_Datatype type, int dest,
		      int tag, MPI_Comm comm));
PERCS_MPI_API(Recv, (void *buf, int count, MPI_Datatype type, int source,
		     int tag, MPI_Comm comm, MPI_Status *status));
PERCS_MPI_API(Isend, (const void *buf, int count, MPI_Datatype type, int dest,
		      int tag, MPI_Comm comm, MPI_Request *request));
PERCS_MPI_API(Issend, (const void *buf, int count, MPI_Datatype type,
		       int dest, int tag, MPI_Comm comm,
		       MPI_Request *request));
PERCS_MPI_API(Irsend, (const void *buf, int count, MPI_Datatype type,
		       int dest, int tag, MPI_Comm comm,
		       MPI_Request *request));
PERCS_MPI_API(Bsend, (const void *buf, int count, MPI_Datatype type, int dest,
		      int tag, MPI_Comm comm));
PERCS_MPI_API(Buffer_attach, (void *buffer, int size));
PERCS_MPI_API(Buffer_detach, (void *buffer_addr, int *size));
PERCS_MPI_API(Irecv, (void *buf, int count, MPI_Datatype type, int source,
		      int tag, MPI_Comm comm, MPI_Request *request));
PERCS_MPI_API(Sendrecv, (const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, int dest, int sendtag,
			 void *recvbuf, int recvcount, MPI_Datatype recvtype,
			 int source, int recvtag, MPI_Comm comm,
			 MPI_Status *status));
PERCS_MPI_API(Sendrecv_replace, (void *buf, int count, MPI_Datatype type,
				 int dest, int sendtag, int source,
				 int recvtag, MPI_Comm comm,
				 MPI_Status *status));
PERCS_MPI_API(Probe, (int source, int tag, MPI_Comm comm,
		      MPI_Status *status));
PERCS_MPI_API(Iprobe, (int source, int tag, MPI_Comm comm, int *flag,
		       MPI_Status *status));
PERCS_MPI_API(Get_count, (const MPI_Status *status, MPI_Datatype type,
			  int *count));

/* Requests */
PERCS_MPI_API(Wait, (MPI_Request *request, MPI_Status *status));
PERCS_MPI_API(Waitall, (int count, MPI_Request requests[],
			MPI_Status *statuses));
PERCS_MPI_API(Waitany, (int count, MPI_Request requests[], int *index,
			MPI_Status *status));
PERCS_MPI_API(Waitsome, (int incount, MPI_Request requests[], int *outcount,
			 int indices[], MPI_Status *statuses));
PERCS_MPI_API(Test, (MPI_Request *request, int *flag, MPI_Status *status));
PERCS_MPI_API(Testall, (int count, MPI_Request requests[], int *flag,
			MPI_Status *statuses));
PERCS_MPI_API(Testsome, (int incount, MPI_Request requests[], int *outcount,
			 int indices[], MPI_Status *statuses));
PERCS_MPI_API(Testany, (int count, MPI_Request requests[], int *index,
			int *flag, MPI_Status *status));
PERCS_MPI_API(Cancel, (MPI_Request *request));
PERCS_MPI_API(Test_cancelled, (const MPI_Status *status, int *flag));
PERCS_MPI_API(Request_free, (MPI_Request *request));

/* Datatypes */
PERCS_MPI_API(Type_contiguous, (int count, MPI_Datatype oldtype,
				MPI_Datatype *newtype));
PERCS_MPI_API(Type_vector, (int count, int blocklength, int stride,
			    MPI_Datatype oldtype, MPI_Datatype *newtype));
PERCS_MPI_API(Type_commit, (MPI_Datatype *type));
PERCS_MPI_API(Type_free, (MPI_Datatype *type));
PERCS_MPI_API(Type_size, (MPI_Datatype type, int *size));
PERCS_MPI_API(Type_get_extent, (MPI_Datatype type, MPI_Aint *lb,
				MPI_Aint *extent));

PERCS_MPI_API(Type_create_struct, (int count, const int blocklengths[],
				   const MPI_Aint displacements[],
				   const MPI_Datatype types[],
				   MPI_Datatype *newtype));

/* Groups */
PERCS_MPI_API(Comm_group, (MPI_Comm comm, MPI_Group *group));
PERCS_MPI_API(Group_size, (MPI_Group group, int *size));
PERCS_MPI_API(Group_rank, (MPI_Group group, int *rank));
PERCS_MPI_API(Group_incl, (MPI_Group group, int n, const int ranks[],
			   MPI_Group *newgroup));
PERCS_MPI_API(Group_excl, (MPI_Group group, int n, const int ranks[],
			   MPI_Group *newgroup));
PERCS_MPI_API(Group_translate_ranks, (MPI_Group group1, int n,
				      const int ranks1[], MPI_Group group2,
				      int ranks2[]));
PERCS_MPI_API(Group_free, (MPI_Group *group));
PERCS_MPI_API(Comm_create, (MPI_Comm comm, MPI_Group group,
			    MPI_Comm *newcomm));
/* Collective over the members of @group only; @tag tells concurrent ones apart. */
PERCS_MPI_API(Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag,
				  MPI_Comm *newcomm));

/* Reduction operations of the program's own */
PERCS_MPI_API(Op_create, (MPI_User_function *fn, int commute, MPI_Op *op));
PERCS_MPI_API(Op_free, (MPI_Op *op));

/* Collectives (blocking) */
PERCS_MPI_API(Barrier, (MPI_Comm comm));
PERCS_MPI_API(Bcast, (void *buf, int count, MPI_Datatype type, int root,
		      MPI_Comm comm));
PERCS_MPI_API(Reduce, (const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype type, MPI_Op op, int root,
		       MPI_Comm comm));
PERCS_MPI_API(Allreduce, (const void *sendbuf, void *recvbuf, int count,
			  MPI_Datatype type, MPI_Op op, MPI_Comm comm));
PERCS_MPI_API(Gather, (const void *sendbuf, int sendcount,
		       MPI_Datatype sendtype, void *recvbuf, int recvcount,
		       MPI_Datatype recvtype, int root, MPI_Comm comm));
PERCS_MPI_API(Scatter, (const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount,
			MPI_Datatype recvtype, int root, MPI_Comm comm));
PERCS_MPI_API(Allgather, (const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, MPI_Comm comm));
PERCS_MPI_API(Alltoall, (const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount,
			 MPI_Datatype recvtype, MPI_Comm comm));

PERCS_MPI_API(Gatherv, (const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf,
			const int recvcounts[], const int displs[],
			MPI_Datatype recvtype, int root, MPI_Comm comm));
PERCS_MPI_API(Scatterv, (const void *sendbuf, const int sendcounts[],
			 const int displs[], MPI_Datatype sendtype,
			 void *recvbuf, int recvcount, MPI_Datatype recvtype,
			 int root, MPI_Comm comm));
PERCS_MPI_API(Allgatherv, (const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf,
			   const int recvcounts[], const int displs[],
			   MPI_Datatype recvtype, MPI_Comm comm));
PERCS_MPI_API(Alltoallv, (const void *sendbuf, const int sendcounts[],
			  const int sdispls[], MPI_Datatype sendtype,
			  void *recvbuf, const int recvcounts[],
			  const int rdispls[], MPI_Datatype recvtype,
			  MPI_Comm comm));
PERCS_MPI_API(Scan, (const void *sendbuf, void *recvbuf, int count,
		     MPI_Datatype type, MPI_Op op, MPI_Comm comm));
PERCS_MPI_API(Exscan, (const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype type, MPI_Op op, MPI_Comm comm));
PERCS_MPI_API(Reduce_scatter, (const void *sendbuf, void *recvbuf,
			       const int recvcounts[], MPI_Datatype type,
			       MPI_Op op, MPI_Comm comm));
PERCS_MPI_API(Reduce_scatter_block, (const void *sendbuf, void *recvbuf,
				     int recvcount, MPI_Datatype type,
				     MPI_Op op, MPI_Comm comm));

/*
 * Collectives (non-blocking): the same algorithms, completed by the Wait
 * and Test calls.  Every call that waits or tests moves all of them on.
 * MPI_Request_free and MPI_Cancel refuse their requests.
 */
PERCS_MPI_API(Ibarrier, (MPI_Comm comm, MPI_Request *request));
PERCS_MPI_API(Ibcast, (void *buf, int count, MPI_Datatype type, int root,
		       MPI_Comm comm, MPI_Request *request));
PERCS_MPI_API(Ireduce, (const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
			MPI_Request *request));
PERCS_MPI_API(Iallreduce, (const void *sendbuf, void *recvbuf, int count,
			   MPI_Datatype type, MPI_Op op, MPI_Comm comm,
			   MPI_Request *request));
PERCS_MPI_API(Igather, (const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount,
			MPI_Datatype recvtype, int root, MPI_Comm comm,
			MPI_Request *request));
PERCS_MPI_API(Igatherv, (const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf,
			 const int recvcounts[], const int displs[],
			 MPI_Datatype recvtype, int root, MPI_Comm comm,
			 MPI_Request *request));
PERCS_MPI_API(Iscatter, (const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount,
			 MPI_Datatype recvtype, int root, MPI_Comm comm,
			 MPI_Request *request));
PERCS_MPI_API(Iscatterv, (const void *sendbuf, const int sendcounts[],
			  const int displs[], MPI_Datatype sendtype,
			  void *recvbuf, int recvcount, MPI_Datatype recvtype,
			  int root, MPI_Comm comm, MPI_Request *request));
PERCS_MPI_API(Iallgather, (const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype,
			   MPI_Comm comm, MPI_Request *request));
PERCS_MPI_API(Iallgatherv, (const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf,
			    const int recvcounts[], const int displs[],
			    MPI_Datatype recvtype, MPI_Comm comm,
			    MPI_Request *request));
PERCS_MPI_API(Ialltoall, (const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, MPI_Comm comm,
			  MPI_Request *request));
PERCS_MPI_API(Ialltoallv, (const void *sendbuf, const int sendcounts[],
			   const int sdispls[], MPI_Datatype sendtype,
			   void *recvbuf, const int recvcounts[],
			   const int rdispls[], MPI_Datatype recvtype,
			   MPI_Comm comm, MPI_Request *request));
PERCS_MPI_API(Ireduce_scatter, (const void *sendbuf, void *recvbuf,
				const int recvcounts[], MPI_Datatype type,
				MPI_Op op, MPI_Comm comm,
				MPI_Request *request));
PERCS_MPI_API(Ireduce_scatter_block, (const void *sendbuf, void *recvbuf,
				      int recvcount, MPI_Datatype type,
				      MPI_Op op, MPI_Comm comm,
				      MPI_Request *request));
PERCS_MPI_API(Iscan, (const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype type, MPI_Op op, MPI_Comm comm,
		      MPI_Request *request));
PERCS_MPI_API(Iexscan, (const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype type, MPI_Op op, MPI_Comm comm,
			MPI_Request *request));

#undef PERCS_MPI_API

#ifdef __cplusplus
}
#endif

#endif /* PERCS_MPI_H */
