/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-mpi: the PLogP model of the collectives (coll_model.c): its
 * measured parameters, the file that keeps them, and the predicted time
 * of each (collective, algorithm, p, m).  Pure computation, no MPI state:
 * the host unit tests and percs-mpi-model use it as the library does.
 */
#ifndef PERCS_MPI_COLL_MODEL_H
#define PERCS_MPI_COLL_MODEL_H

#include <stdbool.h>
#include <stddef.h>

/* The file format this library reads ("percs-mpi-model 1" first line). */
#define MPI_MODEL_VERSION	1
#define MPI_MODEL_MAX_SIZES	24
#define MPI_MODEL_MAX_RANKS	16
/* Where MPI_Init looks unless PERCS_MPI_MODEL names a file. */
#define MPI_MODEL_DEFAULT_PATH	"/var/lib/percs/mpi-model"
/* Bytes one CAU packet carries (PERCS_CAU_PAYLOAD). */
#define MPI_MODEL_CAU_PACKET	64

/* Distance classes of a pair of ranks on the emulated system. */
enum mpi_model_class {
	MPI_MODEL_SAME_HUB,
	MPI_MODEL_SAME_SUPERNODE,
	MPI_MODEL_OTHER_SUPERNODE,
	MPI_MODEL_CLASSES
};

/**
 * struct mpi_model - measured PLogP parameters (times in microseconds)
 * @nsizes: entries of @size
 * @size: message sizes the size-dependent figures were measured at,
 *	ascending
 * @have_l: the class's @l was measured (the topology has that class)
 * @l: L(m) per class: half a ping-pong round trip
 * @g: g(m): time between back-to-back sends of one sender
 * @o: o: the cost of posting one send
 * @gamma: per-byte cost of combining (MPI_SUM on doubles)
 * @nranks: entries of @ranks
 * @ranks: job sizes the per-round figures were measured at, ascending
 * @round: a butterfly round's time at @ranks[i] ranks (every rank
 *	exchanging m bytes with a distinct partner): L(m) plus the
 *	contention term C(m, n) of seed 004, and on this machine the CPU
 *	share of n ranks on the VM's vCPUs
 * @have_cau: @cau and @cau_packet were measured
 * @cau: an 8-byte CAU allreduce at @ranks[i] ranks
 * @cau_packet: each further CAU packet of a longer vector
 */
struct mpi_model {
	int nsizes;
	size_t size[MPI_MODEL_MAX_SIZES];
	bool have_l[MPI_MODEL_CLASSES];
	double l[MPI_MODEL_CLASSES][MPI_MODEL_MAX_SIZES];
	double g[MPI_MODEL_MAX_SIZES];
	double o;
	double gamma;
	int nranks;
	int ranks[MPI_MODEL_MAX_RANKS];
	double round[MPI_MODEL_MAX_RANKS][MPI_MODEL_MAX_SIZES];
	bool have_cau;
	double cau[MPI_MODEL_MAX_RANKS];
	double cau_packet;
};

/* The file's name of a class ("same_hub", ...). */
const char *mpi_model_class_name(enum mpi_model_class cl);

/**
 * mpi_model_parse() - read a parameter file's text
 * @text: the file's contents, NUL-terminated
 * @name: the file's name, for messages
 * @m: filled in on success
 * @err: on failure, "FILE: line N: what is wrong"
 * @errlen: size of @err
 *
 * Return: 0, or -1 with @err set (wrong version, unknown keyword,
 * missing or extra values, a value out of range, a required line missing).
 */
int mpi_model_parse(const char *text, const char *name, struct mpi_model *m,
		    char *err, size_t errlen);

/**
 * mpi_model_load() - read and parse a parameter file
 * @path: the file
 * @m: filled in on success
 * @err: on failure, the message (the file and the problem)
 * @errlen: size of @err
 *
 * Return: 0, or -1 with @err set (also for a file that cannot be read).
 */
int mpi_model_load(const char *path, struct mpi_model *m, char *err,
		   size_t errlen);

/**
 * mpi_model_predict() - the model's time of one collective call
 * @m: the parameters
 * @kind: enum mpi_coll_kind of mpi_internal.h
 * @algo: the algorithm's index (BARRIER_* ... of mpi_internal.h)
 * @p: ranks
 * @bytes: bytes per rank (a block for allgather; the vector otherwise)
 *
 * Return: microseconds, or a negative number when the model has no
 * equation for it (alltoall, reduce_scatter; the CAU without @have_cau).
 */
double mpi_model_predict(const struct mpi_model *m, int kind, int algo, int p,
			 size_t bytes);

/**
 * mpi_model_choose() - the algorithm of least predicted time
 * @m: the parameters
 * @kind: enum mpi_coll_kind
 * @p: ranks
 * @bytes: as mpi_model_predict()
 * @commute: the operation commutes (rabenseifner is recursive doubling
 *	otherwise, so it is not a candidate)
 * @cau: the CAU is a candidate (the operation fits it)
 *
 * Return: the algorithm, or -1 when the model predicts none for @kind.
 */
int mpi_model_choose(const struct mpi_model *m, int kind, int p, size_t bytes,
		     bool commute, bool cau);

#endif /* PERCS_MPI_COLL_MODEL_H */
