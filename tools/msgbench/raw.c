// SPDX-License-Identifier: GPL-2.0
/*
 * percs-mpi-bench: the raw immediate-send ping-pong, measured by the MPI
 * ranks themselves on windows of their own on their HFIs.
 *
 * Why here and not with percs-bench lat: the ratio of the MPI latency to
 * the raw one only means something when both are measured the same way -
 * same processes, same placement and CPU binding (percs-run's), same
 * engine mode, same clock, same statistic, the same moments of host load.
 * percs-bench lat pins its pair and forces kick mode; the ranks run
 * unpinned in auto mode.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <percs.h>
#include <percs_msg.h>

#include "raw.h"

#define RAW_TIMEOUT_S	10.0

/*
 * The floor's packet starts with a header the size of the messaging
 * layer's (what an eager packet carries beside its data).
 */
#define FLOOR_HDR	(PERCS_MAX_PAYLOAD - PERCS_MSG_DEF_EAGER)

/** struct floor_hdr - the fields the floor's receiver matches */
struct floor_hdr {
	uint32_t src;
	uint32_t seq;
	int32_t tag;
	uint32_t ctx;
	uint64_t len;
	unsigned char rest[FLOOR_HDR - 24];
};

_Static_assert(sizeof(struct floor_hdr) == FLOOR_HDR, "floor header size");

struct raw_pair {
	struct percs_hfi *hfi;
	struct percs_window *w;
	struct percs_addr peer;
	unsigned int uncredited;	/* packets consumed, not credited */
};

static int env_num(const char *name, unsigned long *v)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

int raw_open(int rank, struct raw_pair **out)
{
	struct percs_window_attr wa = { .window = PERCS_WINDOW_ANY };
	unsigned long hub, unit;
	struct percs_addr me;
	struct raw_pair *p;
	int ret;

	if (env_num("PERCS_HUB", &hub) || env_num("PERCS_UNIT", &unit)) {
		fprintf(stderr, "percs-mpi-bench: no PERCS_HUB/PERCS_UNIT (run it with percs-run)\n");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = percs_hfi_open((unsigned int)hub, (unsigned int)unit, &p->hfi);
	if (!ret)
		ret = percs_window_reserve(p->hfi, &wa, &p->w);
	if (ret) {
		fprintf(stderr, "percs-mpi-bench: rank %d: raw window on hub %lu unit %lu: %s\n",
			rank, hub, unit, strerror(-ret));
		raw_close(p);
		return ret;
	}
	me = percs_window_addr(p->w);
	MPI_Sendrecv(&me, sizeof(me), MPI_BYTE, !rank, 4, &p->peer,
		     sizeof(p->peer), MPI_BYTE, !rank, 4, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	*out = p;
	return 0;
}

void raw_close(struct raw_pair *p)
{
	if (!p)
		return;
	if (p->w)
		percs_window_release(p->w);
	if (p->hfi)
		percs_hfi_close(p->hfi);
	free(p);
}

static int raw_send(struct raw_pair *p, const void *buf, int bytes,
		    uint32_t tag)
{
	double t0 = MPI_Wtime();
	int ret;

	while ((ret = percs_icswx(p->w, &p->peer, buf, (size_t)bytes, tag)) ==
	       -EAGAIN)
		if (MPI_Wtime() - t0 > RAW_TIMEOUT_S)
			return -ETIMEDOUT;
	return ret;
}

/* The next packet, in place, or NULL after RAW_TIMEOUT_S. */
static const struct percs_pkt_hdr *raw_next(struct raw_pair *p)
{
	const struct percs_pkt_hdr *h;
	double t0 = 0;
	unsigned int spins = 0;

	while (!(h = percs_recv_peek(p->w))) {
		/* The clock only now and then: it is not free under TCG. */
		if (++spins % 1024)
			continue;
		if (!t0)
			t0 = MPI_Wtime();
		else if (MPI_Wtime() - t0 > RAW_TIMEOUT_S)
			return NULL;
	}
	return h;
}

static int raw_done(struct raw_pair *p)
{
	percs_recv_consume(p->w);
	/* One flit each: a quarter FIFO's worth at a time, as percs-bench. */
	if (++p->uncredited < PERCS_FIFO_DEF_SIZE / PERCS_FLIT_SIZE / 4)
		return 0;
	p->uncredited = 0;
	return percs_recv_credit(p->w);
}

/*
 * The floor's message: @bytes of @data behind a header naming the
 * sender, its sequence number, tag and context; its receiver matches all
 * of them and copies the data out, as a matched eager message costs.
 */
static int floor_send(struct raw_pair *p, int rank, uint32_t seq,
		      const unsigned char *data, int bytes)
{
	unsigned char line[PERCS_IMM_PAYLOAD];
	struct floor_hdr h = {
		.src = (uint32_t)rank, .seq = seq, .tag = 1, .ctx = 2,
		.len = (uint64_t)bytes,
	};

	memcpy(line, &h, sizeof(h));
	memcpy(line + sizeof(h), data, (size_t)bytes);
	return raw_send(p, line, (int)sizeof(h) + bytes, seq);
}

static int floor_match(const struct percs_pkt_hdr *ph, int peer, uint32_t seq,
		       unsigned char *data, int bytes)
{
	struct floor_hdr h;

	if (ph->length != sizeof(h) + (size_t)bytes)
		return -EPROTO;
	memcpy(&h, ph + 1, sizeof(h));
	if (h.src != (uint32_t)peer || h.seq != seq || h.tag != 1 ||
	    h.ctx != 2 || h.len != (uint64_t)bytes)
		return -EPROTO;
	memcpy(data, (const unsigned char *)(ph + 1) + sizeof(h), (size_t)bytes);
	return 0;
}

/* The floor's receive: consumed and credited at once, as the layer does. */
static int floor_done(struct raw_pair *p)
{
	percs_recv_consume(p->w);
	return percs_recv_credit(p->w);
}

int raw_floor_pingpong(struct raw_pair *p, int rank, int bytes, int n,
		       double *samples)
{
	unsigned char buf[PERCS_IMM_PAYLOAD];
	const struct percs_pkt_hdr *h;
	int i, ret;

	if (bytes < 1 || bytes > PERCS_IMM_PAYLOAD - FLOOR_HDR)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		double t = MPI_Wtime();

		if (rank == 0) {
			memset(buf, i & 0xff, (size_t)bytes);
			ret = floor_send(p, rank, (uint32_t)i, buf, bytes);
			if (ret)
				goto fail;
		}
		h = raw_next(p);
		if (!h) {
			ret = -ETIMEDOUT;
			goto fail;
		}
		ret = floor_match(h, !rank, (uint32_t)i, buf, bytes);
		if (!ret && buf[0] != (unsigned char)(i & 0xff))
			ret = -EPROTO;
		if (!ret)
			ret = floor_done(p);
		if (!ret && rank == 1)
			ret = floor_send(p, rank, (uint32_t)i, buf, bytes);
		if (ret)
			goto fail;
		if (samples)
			samples[i] = (MPI_Wtime() - t) / 2;
	}
	return 0;
fail:
	fprintf(stderr, "percs-mpi-bench: rank %d: floor ping-pong %d: %s\n", rank, i,
		strerror(-ret));
	return ret;
}

int raw_pingpong(struct raw_pair *p, int rank, int bytes, int n,
		 double *samples)
{
	unsigned char buf[PERCS_IMM_PAYLOAD];
	const struct percs_pkt_hdr *h;
	int i, ret;

	if (bytes < 1 || bytes > PERCS_IMM_PAYLOAD)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		double t = MPI_Wtime();

		if (rank == 0) {
			memset(buf, i & 0xff, (size_t)bytes);
			ret = raw_send(p, buf, bytes, (uint32_t)i);
			if (ret)
				goto fail;
		}
		h = raw_next(p);
		if (!h) {
			ret = -ETIMEDOUT;
			goto fail;
		}
		if (h->tag != (uint32_t)i || h->length != bytes ||
		    ((const unsigned char *)(h + 1))[0] != (unsigned char)(i & 0xff)) {
			fprintf(stderr, "percs-mpi-bench: raw ping-pong %d: tag %u length %u, expected %d/%d\n",
				i, h->tag, h->length, i, bytes);
			return -EPROTO;
		}
		if (rank == 1)
			memcpy(buf, h + 1, (size_t)bytes);
		ret = raw_done(p);
		if (!ret && rank == 1)
			ret = raw_send(p, buf, bytes, (uint32_t)i);
		if (ret)
			goto fail;
		if (samples)
			samples[i] = (MPI_Wtime() - t) / 2;
	}
	return 0;
fail:
	fprintf(stderr, "percs-mpi-bench: rank %d: raw ping-pong %d: %s\n", rank, i,
		strerror(-ret));
	return ret;
}
