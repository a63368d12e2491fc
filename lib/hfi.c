// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: opening HFIs, reserving and mapping windows, kick and wait.
 */
#define _GNU_SOURCE	/* ppoll() */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int percs_hfi_open(unsigned int hub, unsigned int unit, struct percs_hfi **out)
{
	const char *dir = getenv("PERCS_DEV_DIR");
	struct percs_hfi *hfi;
	char path[PATH_MAX];
	int n;

	if (!out || unit > 1 || hub > (UINT_MAX - 1) / 2)
		return -EINVAL;
	if (!dir || !*dir)
		dir = "/dev";
	n = snprintf(path, sizeof(path), "%s/percs-hfi%u", dir, hub * 2 + unit);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;

	hfi = calloc(1, sizeof(*hfi));
	if (!hfi)
		return -ENOMEM;
	hfi->fd = open(path, O_RDWR | O_CLOEXEC);
	if (hfi->fd < 0) {
		int err = -errno;

		free(hfi);
		return err;
	}
	hfi->hub = hub;
	hfi->unit = unit;
	*out = hfi;
	return 0;
}

void percs_hfi_close(struct percs_hfi *hfi)
{
	if (!hfi)
		return;
	close(hfi->fd);
	free(hfi);
}

int percs_hfi_fd(const struct percs_hfi *hfi)
{
	return hfi->fd;
}

int percs_hfi_info(struct percs_hfi *hfi, struct percs_hfi_info *info)
{
	if (!hfi || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(hfi->fd, PERCS_IOC_HFI_INFO, info) < 0)
		return -errno;
	return 0;
}

int lp_kick_ioctl(struct percs_window *w, unsigned int flags)
{
	int ret = ioctl(w->fd, PERCS_IOC_KICK, (unsigned long)flags);

	return ret < 0 ? -errno : ret;
}

/*
 * The doorbell for sends and immediate sends: fdatasync() on a window is
 * PERCS_IOC_KICK(SEND | IMM) without the ioctl path's security hooks.
 */
int lp_doorbell_sync(struct percs_window *w, unsigned int flags)
{
	(void)flags;
	return fdatasync(w->fd) < 0 ? -errno : 0;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int lp_window_new(const struct lp_layout *l, int fd, struct percs_window **out)
{
	struct percs_window *w;
	int ret;

	if (!is_pow2(l->send_fifo_size) || !is_pow2(l->recv_fifo_size) ||
	    l->send_fifo_size < PERCS_FIFO_MIN_SIZE ||
	    l->recv_fifo_size < PERCS_FIFO_MIN_SIZE ||
	    !is_pow2(l->cq_entries) || !l->imm_slots ||
	    !l->send_fifo || !l->recv_fifo || !l->doorbell || !l->status ||
	    !l->imm || !l->cq)
		return -EPROTO;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->db = l->doorbell;
	w->status = l->status;
	w->kick = lp_kick_ioctl;
	w->doorbell = lp_doorbell_sync;
	w->wflags = l->flags;
	w->poll = l->flags & (PERCS_WINDOW_F_POLL | PERCS_WINDOW_F_AUTO);
	w->fd = fd;
	w->addr = l->addr;
	/* A page of another layout version is no clock we can read. */
	if (l->clock && lp_load_relaxed(&l->clock->version) == PERCS_CLOCK_VERSION)
		w->clock.page = l->clock;
	ret = lp_auto_init(w);
	if (ret) {
		free(w);
		return ret;
	}

	/* Start wherever the doorbell says (zero for a fresh window). */
	w->sq.base = l->send_fifo;
	w->sq.units = l->send_fifo_size / PERCS_FLIT_SIZE;
	w->sq.mask = w->sq.units - 1;
	w->sq.tail = lp_load_relaxed(&w->db->send_tail);
	w->sq.head = lp_load_acquire(&w->status->send_head);

	w->rq.base = l->recv_fifo;
	w->rq.units = l->recv_fifo_size / PERCS_FLIT_SIZE;
	w->rq.mask = w->rq.units - 1;
	w->rq.head = lp_load_relaxed(&w->db->recv_head);
	w->rq.credited = w->rq.head;
	w->rq.tail = w->rq.head;
	/* Lazy credits, but never more than half the ring held back. */
	w->rq.batch = w->rq.units / 4;

	w->imm.base = l->imm;
	w->imm.slots = l->imm_slots;
	w->imm.end = w->imm.base + (size_t)l->imm_slots * PERCS_FLIT_SIZE;
	w->imm.tail = lp_load_relaxed(&w->db->imm_tail);
	w->imm.head = lp_load_acquire(&w->status->imm_head);
	w->imm.next = w->imm.base +
		(size_t)(w->imm.tail % l->imm_slots) * PERCS_FLIT_SIZE;

	w->cq.ring = l->cq;
	w->cq.entries = l->cq_entries;
	w->cq.mask = l->cq_entries - 1;
	w->cq.head = lp_load_relaxed(&w->db->cq_head);
	w->cq.overflows_seen = lp_load_relaxed(&w->status->cq_overflows);

	*out = w;
	return 0;
}

static void unmap_all(void *addr[PERCS_REGION_MAX], const struct percs_region *r)
{
	for (int i = 0; i < PERCS_REGION_MAX; i++)
		if (addr[i])
			munmap(addr[i], r[i].length);
}

/* A region the library needs: present, big enough, writable if need be. */
static bool region_ok(const struct percs_window_reserve *r, int id, size_t min,
		      bool writable)
{
	const struct percs_region *reg = &r->regions[id];

	return (reg->flags & PERCS_REGION_F_VALID) && reg->length >= min &&
	       (!writable || (reg->flags & PERCS_REGION_F_WRITABLE));
}

/*
 * The engine mode: PERCS_WINDOW_F_POLL or _AUTO as asked, kick mode for
 * PERCS_WINDOW_ATTR_KICK, else PERCS_WINDOW_MODE (kick, poll or auto) if
 * set, else auto.  Return: 0, or -EINVAL for two modes at once or a bad
 * PERCS_WINDOW_MODE.
 */
static int window_mode(uint32_t flags, uint32_t *out)
{
	uint32_t modes = PERCS_WINDOW_F_POLL | PERCS_WINDOW_F_AUTO |
			 PERCS_WINDOW_ATTR_KICK;
	const char *env;

	if (__builtin_popcount(flags & modes) > 1)
		return -EINVAL;
	*out = flags & ~PERCS_WINDOW_ATTR_KICK;
	if (flags & modes)
		return 0;
	env = getenv("PERCS_WINDOW_MODE");
	if (!env || !strcmp(env, "auto"))
		*out |= PERCS_WINDOW_F_AUTO;
	else if (!strcmp(env, "poll"))
		*out |= PERCS_WINDOW_F_POLL;
	else if (strcmp(env, "kick"))
		return -EINVAL;
	return 0;
}

int percs_window_reserve(struct percs_hfi *hfi,
			 const struct percs_window_attr *attr,
			 struct percs_window **out)
{
	struct percs_window_reserve r;
	void *addr[PERCS_REGION_MAX] = { 0 };
	struct percs_window *w;
	struct lp_layout l;
	int fd, err, i;

	if (!hfi || !attr || !out)
		return -EINVAL;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	err = window_mode(attr->flags, &r.flags);
	if (err)
		return err;
	r.send_fifo_size = attr->send_fifo_size ? attr->send_fifo_size :
						  PERCS_FIFO_DEF_SIZE;
	r.recv_fifo_size = attr->recv_fifo_size ? attr->recv_fifo_size :
						  PERCS_FIFO_DEF_SIZE;
	r.job_fd = attr->job_fd ? attr->job_fd : percs_job_default(hfi);
	if (r.job_fd < 0)
		return r.job_fd;
	r.window = attr->window;

	fd = ioctl(hfi->fd, PERCS_IOC_WINDOW_RESERVE, &r);
	if (fd < 0)
		return -errno;

	/* A layout other than this ABI promises: refuse before mapping. */
	err = -EPROTO;
	if (!region_ok(&r, PERCS_REGION_SEND_FIFO, r.send_fifo_size, true) ||
	    !region_ok(&r, PERCS_REGION_RECV_FIFO, r.recv_fifo_size, false) ||
	    !region_ok(&r, PERCS_REGION_DOORBELL,
		       sizeof(struct percs_doorbell), true) ||
	    !region_ok(&r, PERCS_REGION_STATUS,
		       sizeof(struct percs_status), false) ||
	    !region_ok(&r, PERCS_REGION_IMM,
		       (size_t)r.imm_slots * PERCS_FLIT_SIZE, true) ||
	    !region_ok(&r, PERCS_REGION_CQ,
		       (size_t)r.cq_entries * sizeof(struct percs_cqe), false))
		goto fail;
	/* The clock is optional (an older module has none); if there, whole. */
	if ((r.regions[PERCS_REGION_CLOCK].flags & PERCS_REGION_F_VALID) &&
	    !region_ok(&r, PERCS_REGION_CLOCK, sizeof(struct percs_clock),
		       false))
		goto fail;

	for (i = 0; i < PERCS_REGION_MAX; i++) {
		const struct percs_region *reg = &r.regions[i];
		int prot = PROT_READ;
		void *p;

		if (!(reg->flags & PERCS_REGION_F_VALID))
			continue;
		if (reg->flags & PERCS_REGION_F_WRITABLE)
			prot |= PROT_WRITE;
		p = mmap(NULL, reg->length, prot, MAP_SHARED, fd,
			 (off_t)reg->offset);
		if (p == MAP_FAILED) {
			err = -errno;
			goto fail;
		}
		addr[i] = p;
	}

	l = (struct lp_layout) {
		.send_fifo = addr[PERCS_REGION_SEND_FIFO],
		.send_fifo_size = r.send_fifo_size,
		.recv_fifo = addr[PERCS_REGION_RECV_FIFO],
		.recv_fifo_size = r.recv_fifo_size,
		.doorbell = addr[PERCS_REGION_DOORBELL],
		.status = addr[PERCS_REGION_STATUS],
		.imm = addr[PERCS_REGION_IMM],
		.imm_slots = r.imm_slots,
		.cq = addr[PERCS_REGION_CQ],
		.cq_entries = r.cq_entries,
		.flags = r.flags,
		.addr = r.addr,
		.clock = addr[PERCS_REGION_CLOCK],
	};
	err = lp_window_new(&l, fd, &w);
	if (err)
		goto fail;
	for (i = 0; i < PERCS_REGION_MAX; i++) {
		w->map[i].addr = addr[i];
		w->map[i].len = addr[i] ? r.regions[i].length : 0;
	}
	*out = w;
	return 0;

fail:
	unmap_all(addr, r.regions);
	close(fd);
	return err;
}

void percs_window_release(struct percs_window *w)
{
	if (!w)
		return;
	/* Packed atomics not yet sent are dropped (percs_atomic_quiet() first). */
	lp_amo_release(w);
	/* Trees, groups, requests; the kernel ends the trees for the others. */
	lp_coll_release(w);
	lp_rstash_release(w);
	lp_cq_release(w);
	for (int i = 0; i < PERCS_REGION_MAX; i++)
		if (w->map[i].addr)
			munmap(w->map[i].addr, w->map[i].len);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

int percs_window_fd(const struct percs_window *w)
{
	return w->fd;
}

struct percs_addr percs_window_addr(const struct percs_window *w)
{
	return w->addr;
}

const volatile struct percs_status *percs_window_status(const struct percs_window *w)
{
	return w->status;
}

uint32_t percs_window_mode(const struct percs_window *w)
{
	return w->wflags & (PERCS_WINDOW_F_POLL | PERCS_WINDOW_F_AUTO);
}

int percs_kick(struct percs_window *w, unsigned int flags)
{
	return w->kick(w, flags);
}

/*
 * Sleep until something arrives or @us pass: the library's waits (atomics,
 * collectives) between their kicks.  Consumed packets are credited first:
 * POLLIN stays up while the HFI sees them unconsumed.  Return: 0, or the
 * window's error.
 */
int lp_sleep_us(struct percs_window *w, unsigned int us)
{
	struct pollfd p = { .fd = w->fd, .events = POLLIN };
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (long)(us % 1000000) * 1000 };
	int n;

	if (w->rq.head != w->rq.credited) {
		n = percs_recv_credit(w);
		if (n < 0)
			return n;
	}
	n = ppoll(&p, 1, &ts, NULL);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n && (p.revents & POLLNVAL))
		return -EBADF;
	if (n && (p.revents & POLLERR)) {
		uint32_t e = lp_load_relaxed(&w->status->error);

		return e ? -(int)e : -EIO;
	}
	return 0;
}

int percs_wait(struct percs_window *w, int timeout_ms)
{
	struct pollfd p = { .fd = w->fd, .events = POLLIN };
	int n;

	if (lp_recv_pending(w) || lp_cq_pending(w))
		return 1;
	/* Non-fetching atomics the library holds to pack go before we sleep. */
	n = lp_amo_flush(w);
	if (n && n != -EAGAIN)
		return n;
	/* Auto mode: what we sent moves before we sleep on its answer. */
	n = lp_auto_progress(w);
	if (n)
		return n;
	/*
	 * The HFI reports POLLIN while its view of our receive FIFO is not
	 * empty: hand back everything consumed so far before sleeping.
	 */
	if (w->rq.head != w->rq.credited) {
		n = percs_recv_credit(w);
		if (n < 0)
			return n;
	}
	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (p.revents & POLLNVAL)
		return -EBADF;
	if (p.revents & POLLERR) {
		uint32_t e = lp_load_relaxed(&w->status->error);

		return e ? -(int)e : -EIO;
	}
	return 1;
}
