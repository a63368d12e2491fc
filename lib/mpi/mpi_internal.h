/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-mpi internals.  Every MPI_ function is defined under its PMPI_
 * name with a weak MPI_ alias (PERCS_MPI_ALIAS); inside the library only
 * PMPI_ names and mpi_ helpers are called, so a profiling layer sees the
 * application's calls only.
 */
#ifndef LIBPERCS_MPI_INTERNAL_H
#define LIBPERCS_MPI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi.h"
#include "percs_msg.h"

#define PERCS_MPI_ALIAS(name)	_Pragma(PERCS_MPI_STR(weak MPI_##name = PMPI_##name))
#define PERCS_MPI_STR(x)	#x

/* A type is this many (offset, length) byte blocks per element. */
struct mpi_block {
	MPI_Aint off;
	size_t len;
};

/**
 * struct mpi_type - a datatype
 * @used: the table slot is taken
 * @committed: usable in communication (predefined types always are)
 * @basic: the predefined type every element is made of (reductions), or
 *	MPI_DATATYPE_NULL for a mix
 * @size: data bytes of one element
 * @lb: lower bound
 * @extent: bytes from one element to the next
 * @align: alignment of its strictest member (a struct's extent is
 *	rounded up to it, as C pads a struct)
 * @nblocks: entries of @blocks
 * @blocks: the data of one element, relative to its start
 */
struct mpi_type {
	bool used;
	bool committed;
	MPI_Datatype basic;
	size_t size;
	MPI_Aint lb;
	MPI_Aint extent;
	size_t align;
	size_t nblocks;
	struct mpi_block *blocks;
};

/**
 * struct mpi_comm - a communicator
 * @used: the table slot is taken
 * @size: members
 * @rank: this process's rank in it
 * @world: @size world ranks, by rank in the communicator
 * @ctx: its context: its messages travel on 4 x @ctx + the MPI_SPACE_
 *	of their kind
 * @eh: its error handler
 * @nbc_seq: tag of the last non-blocking collective started
 * @cau_tried: its CAU tree was set up (or failed to be): @cau is final
 * @cau: its CAU layout and tree (coll_cau.c), NULL without
 */
struct mpi_comm {
	bool used;
	int size;
	int rank;
	int *world;
	uint32_t ctx;
	MPI_Errhandler eh;
	uint32_t nbc_seq;
	bool cau_tried;
	struct mpi_cau *cau;
};

/*
 * Message spaces of a communicator: receives match only messages of their
 * own space, so user messages, blocking collectives, non-blocking ones and
 * MPI_Comm_create_group's agreement never match one another.
 */
#define MPI_SPACE_P2P	0
#define MPI_SPACE_COLL	1
#define MPI_SPACE_NBC	2
#define MPI_SPACE_GROUP	3
#define MPI_SPACES	4

/**
 * struct mpi_req - a request
 * @r: the messaging layer's request (NULL: done already, e.g. PROC_NULL)
 * @comm: the communicator (for the status's source and the error handler)
 * @recv: a receive
 * @tmp: packing buffer of a non-contiguous type (freed at completion)
 * @ubuf: a receive's destination, unpacked from @tmp
 * @count: elements at @ubuf
 * @type: their datatype
 * @done: completed (@st is final)
 * @st: its status
 * @sched: a non-blocking collective's schedule (owned), else NULL
 */
struct mpi_req {
	struct percs_msg_req *r;
	MPI_Comm comm;
	bool recv;
	void *tmp;
	void *ubuf;
	int count;
	MPI_Datatype type;
	bool done;
	MPI_Status st;
	struct mpi_sched *sched;
};

/**
 * struct mpi_state - the library's global state
 * @initialized: MPI_Init ran
 * @finalized: MPI_Finalize ran
 * @job: the job joined at MPI_Init
 * @m: its endpoint
 * @next_ctx: the next communicator context
 * @last_errno: the messaging layer's last -errno (mpi_why())
 * @cau_colls: collectives of the cau algorithm run on the CAU
 * @cau_sw: collectives the cau algorithm left to software (no tree, or
 *	a (type, op) the CAU cannot combine)
 */
struct mpi_state {
	int initialized;
	int finalized;
	struct percs_msg_job *job;
	struct percs_msg *m;
	uint32_t next_ctx;
	int last_errno;
	unsigned long cau_colls;
	unsigned long cau_sw;
};

extern struct mpi_state mpi_g;

/* errors.c */
int mpi_error(MPI_Comm comm, int code, const char *fn, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The class of a -errno of the messaging layer (remembered for mpi_why()). */
int mpi_errno_to_class(int err);
/* "the messaging layer failed: " and the last -errno's text. */
const char *mpi_why(void);
/* Returns from the calling MPI function unless MPI is initialized. */
#define MPI_NEED_INIT(fn) do {						\
	if (!mpi_g.initialized || mpi_g.finalized)			\
		return mpi_error(MPI_COMM_NULL, MPI_ERR_OTHER, fn,	\
				 "called %s MPI_Init",			\
				 mpi_g.finalized ? "after MPI_Finalize" : \
				 "before");				\
} while (0)

/* bsend.c: waits for the buffered sends in flight; 0 or an MPI class */
int mpi_bsend_fini(void);

/* group.c */
void mpi_group_fini(void);

/* comm.c */
int mpi_comm_create_from(MPI_Comm comm, const int *world, int n,
			 MPI_Comm *newcomm, const char *fn);
/* Comm_create_group's work, collective over the members of @world only. */
int mpi_comm_create_group(MPI_Comm comm, const int *world, int n, int tag,
			  MPI_Comm *newcomm, const char *fn);
struct mpi_comm *mpi_comm(MPI_Comm c);
int mpi_comm_init(void);
void mpi_comm_fini(void);
int mpi_comm_source(const struct mpi_comm *c, int world);

/* datatype.c */
struct mpi_type *mpi_type(MPI_Datatype t);
void mpi_type_fini(void);
bool mpi_type_contig(const struct mpi_type *t);
void mpi_pack(const struct mpi_type *t, const void *buf, int count,
	      void *out);
void mpi_unpack(const struct mpi_type *t, const void *in, size_t bytes,
		void *buf);
/* Checks count and type; MPI_SUCCESS or the class to report. */
int mpi_check_data(const void *buf, int count, MPI_Datatype type,
		   const char **why);

/* op.c */
/* MPI_SUCCESS, MPI_ERR_OP (no such op) or MPI_ERR_TYPE (not on that type). */
int mpi_op_check(MPI_Op op, MPI_Datatype type);
/* @acc = @acc op @in, @count packed elements of @type (@in is clobbered). */
int mpi_op_combine(MPI_Op op, MPI_Datatype type, int count, void *acc,
		   void *in);
void mpi_op_fini(void);

/* request.c */
/* A zeroed request for @comm (reusing freed ones), or NULL. */
struct mpi_req *mpi_req_new(MPI_Comm comm, bool recv);
/* Frees @q (its packing buffer and messaging request too). */
void mpi_req_put(struct mpi_req *q);
MPI_Request mpi_req_handle(struct mpi_req *q);
struct mpi_req *mpi_req(MPI_Request h);
int mpi_req_complete(struct mpi_req *q, MPI_Status *st);
void mpi_req_release(MPI_Request *h);
int mpi_req_test(struct mpi_req *q);
void mpi_status_set(MPI_Status *dst, const MPI_Status *src);

/* p2p.c: the engine of sends and receives (no argument checks) */
int mpi_isend(const void *buf, int count, MPI_Datatype type, int dest,
	      int tag, MPI_Comm comm, unsigned int space, unsigned int flags,
	      struct mpi_req **out);
int mpi_irecv(void *buf, int count, MPI_Datatype type, int src, int tag,
	      MPI_Comm comm, unsigned int space, struct mpi_req **out);
int mpi_wait(struct mpi_req *q, MPI_Status *st);
int mpi_check_p2p(MPI_Comm comm, const void *buf, int count,
		  MPI_Datatype type, int peer, bool recv, int tag,
		  const char *fn);

/*
 * nbc.c: the schedule engine of the collectives.  Building calls record
 * an allocation failure in the schedule; mpi_sched_go() reports it.
 */
struct mpi_sched;
/**
 * mpi_coll_sched() - an empty schedule for a collective on @comm
 * @comm: a valid communicator
 * @nbc: non-blocking: the next sequence tag in MPI_SPACE_NBC (so the
 *	collective must then be started), else tag 0 in MPI_SPACE_COLL
 * Return: the schedule, or NULL without memory.
 */
struct mpi_sched *mpi_coll_sched(MPI_Comm comm, bool nbc);
struct mpi_sched *mpi_sched_new(MPI_Comm comm, unsigned int space, int tag);
void mpi_sched_send(struct mpi_sched *s, const void *buf, int count,
		    MPI_Datatype type, int peer);
void mpi_sched_recv(struct mpi_sched *s, void *buf, int count,
		    MPI_Datatype type, int peer);
/* (sbuf, scount, stype) to (rbuf, rcount, rtype), as mpi_local_copy(). */
void mpi_sched_copy(struct mpi_sched *s, const void *sbuf, int scount,
		    MPI_Datatype stype, void *rbuf, int rcount,
		    MPI_Datatype rtype);
/* @acc = @acc @op @in, @count packed elements (@in is clobbered). */
void mpi_sched_op(struct mpi_sched *s, MPI_Op op, MPI_Datatype type,
		  int count, void *acc, void *in);
/**
 * struct mpi_cau_op - a collective on a CAU tree, a step of a schedule
 * @kind: MPI_CAU_*
 * @tree: the tree
 * @buf: allreduce: this member's elements, replaced by the result;
 *	bcast: the data at the origin, the result elsewhere
 * @count: allreduce: elements; bcast: bytes
 * @type: allreduce: PERCS_CAU_T_*
 * @op: allreduce: PERCS_CAU_OP_*
 * @root: bcast: the origin's index in the tree
 */
struct mpi_cau_op {
	enum { MPI_CAU_BARRIER, MPI_CAU_BCAST, MPI_CAU_ALLREDUCE } kind;
	struct percs_cau_tree *tree;
	void *buf;
	size_t count;
	unsigned int type;
	unsigned int op;
	unsigned int root;
};
void mpi_sched_cau(struct mpi_sched *s, const struct mpi_cau_op *op);
/* Ends the round: later steps start once its transfers completed. */
void mpi_sched_round(struct mpi_sched *s);
/* A buffer of @bytes that lives as long as @s (NULL: none). */
void *mpi_sched_tmp(struct mpi_sched *s, size_t bytes);
/* Advances @s: 1 when it is done, else 0. */
int mpi_sched_advance(struct mpi_sched *s);
/* MPI_SUCCESS or the class of its first failure. */
int mpi_sched_error(const struct mpi_sched *s);
void mpi_sched_free(struct mpi_sched *s);
/**
 * mpi_sched_go() - start @s (its ownership passes)
 * @s: the built schedule
 * @request: NULL to wait for it (a blocking collective), else where its
 *	request's handle goes
 * @fn: the MPI call, for errors
 * Return: MPI_SUCCESS or the error handler's answer.
 */
int mpi_sched_go(struct mpi_sched *s, MPI_Request *request, const char *fn);
/* Advances every started schedule once. */
void mpi_progress(void);
/* No schedule is started: a wait need not call mpi_progress(). */
bool mpi_sched_none(void);
/* mpi_progress(), then percs_msg_idle(): the body of every wait loop. */
void mpi_idle(void);

/*
 * coll.c: what the collectives share, and the algorithms as schedule
 * builders (appending their rounds to a schedule).
 */
void *mpi_slot(void *buf, int i, int count, MPI_Datatype type);
int mpi_local_copy(const void *sbuf, int scount, MPI_Datatype stype,
		   void *rbuf, int rcount, MPI_Datatype rtype);
/* The argument checks: MPI_SUCCESS, or the handler's answer. */
int mpi_coll_comm(MPI_Comm comm, const char *fn, struct mpi_comm **c);
int mpi_coll_buf(MPI_Comm comm, const void *buf, int count,
		 MPI_Datatype type, const char *fn, const char *which);
int mpi_coll_root(MPI_Comm comm, const struct mpi_comm *c, int root,
		  const char *fn);
int mpi_coll_op(MPI_Comm comm, MPI_Op op, MPI_Datatype type, const char *fn);
/*
 * The schedule of a collective, non-blocking when @req is not NULL; NULL
 * after the error handler was told.
 */
struct mpi_sched *mpi_coll_new(MPI_Comm comm, const MPI_Request *req,
			       const char *fn);
/* A non-blocking call's request pointer is there. */
int mpi_coll_reqp(MPI_Comm comm, const MPI_Request *request, const char *fn);
/* Binomial tree from @root: the receive, then (next round) the sends. */
void mpi_bcast_recv(struct mpi_sched *s, const struct mpi_comm *c,
		    void *buf, int count, MPI_Datatype type, int root);
void mpi_bcast_send(struct mpi_sched *s, const struct mpi_comm *c,
		    void *buf, int count, MPI_Datatype type, int root);
void mpi_bcast_sched(struct mpi_sched *s, const struct mpi_comm *c,
		     void *buf, int count, MPI_Datatype type, int root);
/* Linear at @root in rank order (the same combination order every run). */
void mpi_reduce_sched(struct mpi_sched *s, const struct mpi_comm *c,
		      const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype type, MPI_Op op, int root);
/* Reports @ret (an MPI class from the transfers) through the handler. */
int mpi_coll_done(MPI_Comm comm, int ret, const char *fn);

/*
 * The algorithms of each collective (coll_barrier.c, coll_bcast.c,
 * coll_reduce.c, coll_allreduce.c, coll_allgather.c, coll_alltoall.c,
 * coll_reduce_scatter.c),
 * chosen by coll_select.c: PERCS_MPI_COLL_<COLL>=<algorithm> forces one,
 * else the choice depends on the size of the communicator and the data.
 */
enum mpi_coll_kind {
	MPI_COLL_BARRIER,
	MPI_COLL_BCAST,
	MPI_COLL_REDUCE,
	MPI_COLL_ALLREDUCE,
	MPI_COLL_ALLGATHER,
	MPI_COLL_ALLTOALL,
	MPI_COLL_REDUCE_SCATTER,
	MPI_COLL_KINDS
};

enum { BARRIER_DISSEMINATION, BARRIER_RECURSIVE_DOUBLING,
       BARRIER_GATHER_BCAST, BARRIER_CAU };
enum { BCAST_BINOMIAL, BCAST_PIPELINED, BCAST_CAU };
enum { REDUCE_LINEAR, REDUCE_BINOMIAL, REDUCE_RABENSEIFNER, REDUCE_CAU };
enum { ALLREDUCE_RECURSIVE_DOUBLING, ALLREDUCE_RABENSEIFNER,
       ALLREDUCE_REDUCE_BCAST, ALLREDUCE_CAU };
enum { ALLGATHER_RING, ALLGATHER_RECURSIVE_DOUBLING, ALLGATHER_GATHER_BCAST };
enum { ALLTOALL_PAIRWISE, ALLTOALL_BRUCK, ALLTOALL_LINEAR };
enum { REDUCE_SCATTER_REDUCE_SCATTERV, REDUCE_SCATTER_PAIRWISE };

/*
 * coll_select.c: reads the PERCS_MPI_COLL_* variables (at MPI_Init);
 * MPI_SUCCESS, or the handler's answer naming the variable, its value and
 * the valid names.
 */
int mpi_coll_select_init(void);
/* The name of algorithm @algo of @kind ("?" for none). */
const char *mpi_coll_algo_name(enum mpi_coll_kind kind, int algo);
/*
 * The algorithm for @kind on @p ranks moving @bytes per rank (a block for
 * allgather and alltoall): the forced one, else the default choice.
 */
int mpi_coll_algo(enum mpi_coll_kind kind, int p, size_t bytes, bool commute);
/* The algorithm the default choice makes among the software ones. */
int mpi_coll_sw_algo(enum mpi_coll_kind kind, int p, size_t bytes,
		     bool commute);
/* @algo was forced by PERCS_MPI_COLL_<@kind>. */
bool mpi_coll_forced(enum mpi_coll_kind kind);
/*
 * Force @algo (-1: the default choice) as PERCS_MPI_COLL_<@kind> does:
 * for percs-mpi-model, which measures every algorithm in one job.
 */
void mpi_coll_force(enum mpi_coll_kind kind, int algo);
struct mpi_model;
/* The model's parameters MPI_Init read, NULL when none (coll_select.c). */
const struct mpi_model *mpi_coll_model(void);

/*
 * coll_cau.c: the "cau" algorithm of barrier, bcast, reduce and
 * allreduce, hierarchical over the hubs of the communicator.
 */
/* The CAU can combine @op on @type (a predefined pair of its ALU). */
bool mpi_cau_pair(MPI_Datatype type, MPI_Op op);
/**
 * mpi_cau_ready() - @c's CAU tree, made at the first call
 * @comm: the communicator (every member calls this collectively)
 * @c: its state
 * @forced: the algorithm was forced (a missing tree is then said once)
 * @setup: make the tree if not tried yet (else only an existing one)
 * @fn: the MPI call, for messages
 * @ok: out: the cau algorithm can run on @comm (else: run software, the
 *	same on every member)
 * Return: MPI_SUCCESS, or the class of a failure of the setup's own
 * software messages (the handler was told).
 */
int mpi_cau_ready(MPI_Comm comm, struct mpi_comm *c, bool forced,
		  bool setup, const char *fn, bool *ok);
/* @c runs its cau collectives on a tree (it spans more than one hub). */
bool mpi_cau_tree(const struct mpi_comm *c);
/* MPI_Comm_free: a barrier on @comm, then @c's tree destroyed. */
int mpi_cau_fini(MPI_Comm comm, struct mpi_comm *c);
/* MPI_Finalize: frees @c's CAU state; the window's release ended its tree. */
void mpi_cau_drop(struct mpi_comm *c);
/* The schedules, on a communicator mpi_cau_ready() accepted. */
void mpi_cau_barrier(struct mpi_sched *s, const struct mpi_comm *c);
void mpi_cau_bcast(struct mpi_sched *s, const struct mpi_comm *c, void *buf,
		   int count, MPI_Datatype type, int root);
/* An allreduce, or a reduce to @root (-1: allreduce). */
void mpi_cau_allreduce(struct mpi_sched *s, const struct mpi_comm *c,
		       const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype type, MPI_Op op, int root);

/* op.c: @op may combine in any order (built-in, or created commutative). */
bool mpi_op_commutative(MPI_Op op);

/*
 * The fold of recursive doubling and halving onto a power of two: of the
 * first 2 x @rem ranks, each even one hands its part to the odd one
 * above it and sits out (@newrank -1); the others take part as @newrank.
 */
struct mpi_fold {
	int pof2;
	int rem;
	int newrank;
};
void mpi_fold(const struct mpi_comm *c, struct mpi_fold *f);
/* The rank in the communicator of @newrank. */
int mpi_fold_rank(const struct mpi_fold *f, int newrank);

void mpi_barrier_algo(struct mpi_sched *s, const struct mpi_comm *c, int algo);
void mpi_bcast_algo(struct mpi_sched *s, const struct mpi_comm *c, void *buf,
		    int count, MPI_Datatype type, int root, int algo);
void mpi_reduce_algo(struct mpi_sched *s, const struct mpi_comm *c,
		     const void *sendbuf, void *recvbuf, int count,
		     MPI_Datatype type, MPI_Op op, int root, int algo);
/*
 * Reduce-scatter by recursive halving on packed @acc (commutative @op),
 * then an allgather by recursive doubling (@gather false: every rank ends
 * with the result in @acc) or a binomial gather (only rank
 * mpi_fold_rank(f, 0) has it).
 */
void mpi_rabenseifner_sched(struct mpi_sched *s, const struct mpi_comm *c,
			    unsigned char *acc, int count, MPI_Datatype type,
			    MPI_Op op, bool gather);
void mpi_allreduce_algo(struct mpi_sched *s, const struct mpi_comm *c,
			const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype type, MPI_Op op, int algo);
void mpi_allgather_algo(struct mpi_sched *s, const struct mpi_comm *c,
			const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount,
			MPI_Datatype recvtype, int algo);
void mpi_alltoall_algo(struct mpi_sched *s, const struct mpi_comm *c,
		       const void *sendbuf, int sendcount,
		       MPI_Datatype sendtype, void *recvbuf, int recvcount,
		       MPI_Datatype recvtype, int algo);
/*
 * Block r of the vector (@cnt[r] elements at @displs[r], @total in all)
 * reduced over the ranks, to rank r's @recvbuf.
 */
void mpi_reduce_scatter_algo(struct mpi_sched *s, const struct mpi_comm *c,
			     const void *sendbuf, void *recvbuf,
			     const int *cnt, const int *displs, int total,
			     MPI_Datatype type, MPI_Op op, int algo);
/* Root: piece i (counts[i] at displs[i]) to rank i; the others receive. */
void mpi_scatterv_sched(struct mpi_sched *s, const struct mpi_comm *c,
			const void *sendbuf, const int *counts,
			const int *displs, MPI_Datatype sendtype,
			void *recvbuf, int recvcount, MPI_Datatype recvtype,
			int root);
void mpi_gather_sched(struct mpi_sched *s, const struct mpi_comm *c,
		      const void *sendbuf, int sendcount,
		      MPI_Datatype sendtype, void *recvbuf, int recvcount,
		      MPI_Datatype recvtype, int root);

#endif /* LIBPERCS_MPI_INTERNAL_H */
