// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench: a send FIFO driven straight through the uAPI.
 *
 * The in-place bandwidth mode models an application that builds its
 * message directly in the send FIFO and only writes the 32-byte header of
 * each packet before the trigger.  libpercs has no call that composes a
 * header without copying a payload, so this file reserves the window with
 * PERCS_IOC_WINDOW_RESERVE on the HFI's fd and maps only what a sender
 * needs: the send FIFO, the doorbell and the status page.  The ring rules
 * are the ones in Documentation/design.rst (free-running unit counts, a pad
 * entry instead of a wrap).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

struct raw_window {
	int fd;
	bool poll;
	uint8_t *sq;
	uint32_t units;
	uint32_t mask;
	uint64_t tail;		/* units composed */
	uint64_t head;		/* last send_head read */
	struct percs_doorbell *db;
	const struct percs_status *st;
	struct percs_addr addr;
	void *map[PERCS_REGION_MAX];
	size_t len[PERCS_REGION_MAX];
};

static const int raw_regions[] = {
	PERCS_REGION_SEND_FIFO, PERCS_REGION_DOORBELL, PERCS_REGION_STATUS,
};

void raw_release(struct raw_window *rw)
{
	if (!rw)
		return;
	for (int i = 0; i < PERCS_REGION_MAX; i++)
		if (rw->map[i])
			munmap(rw->map[i], rw->len[i]);
	if (rw->fd >= 0)
		close(rw->fd);
	free(rw);
}

/**
 * raw_reserve() - reserve a window and map its send side
 * @hfi: an HFI opened with libpercs (only its fd is used)
 * @flags: PERCS_WINDOW_F_*
 * @fifo_size: bytes for both FIFOs
 * @job_key: the job key
 * @out: the window
 * Return: 0 or -errno.
 */
int raw_reserve(struct percs_hfi *hfi, uint32_t flags, uint32_t fifo_size,
		uint32_t job_key, struct raw_window **out)
{
	struct percs_window_reserve r = {
		.size = sizeof(r),
		.flags = flags,
		.send_fifo_size = fifo_size,
		.recv_fifo_size = fifo_size,
		.job_key = job_key,
		.window = PERCS_WINDOW_ANY,
	};
	struct raw_window *rw;
	int ret;

	rw = calloc(1, sizeof(*rw));
	if (!rw)
		return -ENOMEM;
	rw->fd = ioctl(percs_hfi_fd(hfi), PERCS_IOC_WINDOW_RESERVE, &r);
	if (rw->fd < 0) {
		ret = -errno;
		free(rw);
		return ret;
	}
	for (size_t i = 0; i < sizeof(raw_regions) / sizeof(raw_regions[0]); i++) {
		int id = raw_regions[i];
		const struct percs_region *reg = &r.regions[id];
		int prot = PROT_READ;
		void *p;

		if (!(reg->flags & PERCS_REGION_F_VALID)) {
			ret = -EPROTO;
			goto fail;
		}
		if (reg->flags & PERCS_REGION_F_WRITABLE)
			prot |= PROT_WRITE;
		p = mmap(NULL, reg->length, prot, MAP_SHARED, rw->fd,
			 (off_t)reg->offset);
		if (p == MAP_FAILED) {
			ret = -errno;
			goto fail;
		}
		rw->map[id] = p;
		rw->len[id] = reg->length;
	}
	if (rw->len[PERCS_REGION_SEND_FIFO] < fifo_size ||
	    !(r.regions[PERCS_REGION_SEND_FIFO].flags & PERCS_REGION_F_WRITABLE)) {
		ret = -EPROTO;
		goto fail;
	}
	rw->poll = flags & PERCS_WINDOW_F_POLL;
	rw->sq = rw->map[PERCS_REGION_SEND_FIFO];
	rw->units = fifo_size / PERCS_FLIT_SIZE;
	rw->mask = rw->units - 1;
	rw->db = rw->map[PERCS_REGION_DOORBELL];
	rw->st = rw->map[PERCS_REGION_STATUS];
	rw->tail = __atomic_load_n(&rw->db->send_tail, __ATOMIC_RELAXED);
	rw->head = __atomic_load_n(&rw->st->send_head, __ATOMIC_ACQUIRE);
	rw->addr = r.addr;
	*out = rw;
	return 0;
fail:
	raw_release(rw);
	return ret;
}

struct percs_addr raw_addr(const struct raw_window *rw)
{
	return rw->addr;
}

/*
 * Put the payload in place once: every unit of the FIFO holds the pattern,
 * so whatever follows a header composed later is a "message already
 * built in the FIFO".  Return: 0.
 */
int raw_fill_payload(struct raw_window *rw, unsigned char byte)
{
	memset(rw->sq, byte, (size_t)rw->units * PERCS_FLIT_SIZE);
	return 0;
}

static inline uint32_t raw_units(size_t len)
{
	return (uint32_t)((PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) /
			  PERCS_FLIT_SIZE);
}

/* Units needed at the tail for a packet of @len (a pad included). */
static inline uint32_t raw_need(const struct raw_window *rw, size_t len)
{
	uint32_t n = raw_units(len);
	uint32_t to_end = rw->units - (uint32_t)(rw->tail & rw->mask);

	return n > to_end ? n + to_end : n;
}

/** raw_has_room() - would raw_compose_hdr() of @len succeed now? */
bool raw_has_room(struct raw_window *rw, size_t len)
{
	rw->head = __atomic_load_n(&rw->st->send_head, __ATOMIC_ACQUIRE);
	return rw->units - (rw->tail - rw->head) >= raw_need(rw, len);
}

/**
 * raw_compose_hdr() - write one packet header at the tail, payload in place
 * @rw: the window
 * @dst: destination
 * @len: payload bytes already in the FIFO after the header's slot
 * @tag: the packet's tag
 * Return: 0, -EMSGSIZE, or -EAGAIN when the FIFO has no room.
 */
int raw_compose_hdr(struct raw_window *rw, const struct percs_addr *dst,
		    size_t len, uint32_t tag)
{
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_FIFO,
		.route = PERCS_ROUTE_DIRECT,
		.length = (uint16_t)len,
		.dst = *dst,
		.tag = tag,
	};
	uint32_t n = raw_units(len);
	uint32_t pos = (uint32_t)(rw->tail & rw->mask);
	uint32_t pad = n > rw->units - pos ? rw->units - pos : 0;

	if (len > PERCS_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (rw->units - (rw->tail - rw->head) < pad + n) {
		rw->head = __atomic_load_n(&rw->st->send_head, __ATOMIC_ACQUIRE);
		if (rw->units - (rw->tail - rw->head) < pad + n)
			return -EAGAIN;
	}
	if (pad) {
		struct percs_pkt_hdr ph = {
			.kind = PERCS_PKT_PAD,
			.length = (uint16_t)(pad * PERCS_FLIT_SIZE -
					     PERCS_PKT_HDR_SIZE),
		};

		memcpy(rw->sq + (size_t)pos * PERCS_FLIT_SIZE, &ph, sizeof(ph));
		rw->tail += pad;
		pos = 0;
	}
	memcpy(rw->sq + (size_t)pos * PERCS_FLIT_SIZE, &h, sizeof(h));
	rw->tail += n;
	return 0;
}

/**
 * raw_trigger() - the 8-byte trigger store, then the doorbell handshake
 * @rw: the window
 *
 * Kick mode: always PERCS_IOC_KICK.  Poll mode: a full barrier, then a
 * kick only when the status page says the engine sleeps.
 * Return: 0 or -errno from the kick.
 */
int raw_trigger(struct raw_window *rw)
{
	__atomic_store_n(&rw->db->send_tail, rw->tail, __ATOMIC_RELEASE);
	if (rw->poll) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!(__atomic_load_n(&rw->st->flags, __ATOMIC_RELAXED) &
		      PERCS_STATUS_NEED_WAKEUP))
			return 0;
	}
	if (ioctl(rw->fd, PERCS_IOC_KICK, (unsigned long)PERCS_KICK_F_SEND) < 0)
		return -errno;
	return 0;
}

/** raw_send_blocked() - the status page's send_blocked counter */
uint64_t raw_send_blocked(const struct raw_window *rw)
{
	return __atomic_load_n(&rw->st->send_blocked, __ATOMIC_RELAXED);
}
