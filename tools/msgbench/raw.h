/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs-mpi-bench: the raw immediate-send ping-pong it measures beside
 * the MPI one (raw.c).
 */
#ifndef PERCS_MSGBENCH_RAW_H
#define PERCS_MSGBENCH_RAW_H

struct raw_pair;

/**
 * raw_open() - a window of this rank's own on its HFI, paired with the
 *	peer's (ranks 0 and 1 of MPI_COMM_WORLD call it together)
 * @rank: 0 or 1
 * @out: the pair
 *
 * The window is reserved on the HFI percs-run placed the rank on
 * (PERCS_HUB, PERCS_UNIT), in the launcher's job, in the default engine
 * mode (PERCS_WINDOW_MODE, else auto: what the messaging layer's window
 * gets), and the two ranks swap addresses with MPI_Sendrecv.
 * Return: 0, or -errno with a message on stderr.
 */
int raw_open(int rank, struct raw_pair **out);

/**
 * raw_pingpong() - @n round trips of @bytes-byte immediate sends
 * @p: the pair
 * @rank: 0 times, 1 echoes
 * @bytes: 1 .. 96 (PERCS_IMM_PAYLOAD)
 * @n: round trips
 * @samples: rank 0: @n half round trips in seconds (MPI_Wtime), or NULL
 *	for a warm-up
 *
 * Each side busy-polls its receive FIFO and reads the packet in place, as
 * percs-bench lat does; credits go back every quarter FIFO.  Rank 0
 * checks every answer's tag and first byte.
 * Return: 0, or -errno with a message on stderr (a wrong answer, or none
 * within 10 s).
 */
int raw_pingpong(struct raw_pair *p, int rank, int bytes, int n,
		 double *samples);

/**
 * raw_floor_pingpong() - the messaging layer's floor: raw_pingpong() with
 *	the work an eager message needs at the least
 * @p: the pair
 * @rank: 0 times, 1 echoes
 * @bytes: 1 .. 96 less the messaging layer's header (40 bytes)
 * @n: round trips
 * @samples: rank 0: @n half round trips in seconds, or NULL
 *
 * Each message is one immediate send of a header the size of the
 * messaging layer's (sender, sequence number, tag, context, length) and
 * the data; the receiver peeks at it in place, matches every header field
 * against what it expects, copies the data out, consumes the packet and
 * returns the FIFO credit at once.
 * Return: 0, or -errno with a message on stderr.
 */
int raw_floor_pingpong(struct raw_pair *p, int rank, int bytes, int n,
		       double *samples);

/** raw_close() - release the window (NULL is ignored) */
void raw_close(struct raw_pair *p);

#endif /* PERCS_MSGBENCH_RAW_H */
