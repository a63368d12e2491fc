// SPDX-License-Identifier: GPL-2.0
/*
 * percs selftests: shared helpers (see common.h for how to use them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "common.h"

uint64_t pt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pt_pause_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

uint64_t pt_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t pt_rnd(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return pt_mix64(*state);
}

unsigned int pt_rnd_below(uint64_t *state, unsigned int n)
{
	return (unsigned int)(pt_rnd(state) % n);
}

bool pt_addr_eq(const struct percs_addr *a, const struct percs_addr *b)
{
	return a->hub == b->hub && a->hfi == b->hfi && a->window == b->window;
}

int pt_reap(pid_t pid, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0) {
		if (pt_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		pt_pause_us(500);
	}
	if (r < 0)
		return -errno;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				     WEXITSTATUS(status);
}

bool pt_have_device(void)
{
	return access(PT_DEV_DIR "/percs-hfi0", F_OK) == 0;
}

int pt_hfi_open(unsigned int hub, unsigned int unit, struct percs_hfi **out)
{
	return percs_hfi_open(hub, unit, out);
}

int pt_hfi_open_fd(unsigned int hub, unsigned int unit)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), PT_DEV_DIR "/percs-hfi%u", hub * 2 + unit);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pt_window_query(unsigned int hub, unsigned int unit, uint32_t window)
{
	struct percs_window_query q = { .size = sizeof(q), .window = window };
	int fd = pt_hfi_open_fd(hub, unit), ret = 0;

	if (fd < 0)
		return fd;
	if (ioctl(fd, PERCS_IOC_WINDOW_QUERY, &q))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The jobs this process created, by key: tests name a job by the key its
 * packets carry, and reservations find the job fd here.  Children made by
 * fork() inherit the table and the fds, as a launcher's ranks would.
 */
static struct {
	uint32_t key;
	int fd;
} pt_jobs[PT_MAX_JOBS];
static unsigned int pt_nr_jobs;

uint32_t pt_new_key(void)
{
	struct percs_job_create jc = { .size = sizeof(jc) };
	int hfd, fd;

	if (pt_nr_jobs == PT_MAX_JOBS) {
		fprintf(stderr, "pt_new_key: more than %d jobs open\n",
			PT_MAX_JOBS);
		return 0;
	}
	hfd = pt_hfi_open_fd(0, 0);
	if (hfd < 0)
		return 0;
	fd = ioctl(hfd, PERCS_IOC_JOB_CREATE, &jc);
	close(hfd);
	if (fd < 0)
		return 0;
	pt_jobs[pt_nr_jobs].key = jc.job_key;
	pt_jobs[pt_nr_jobs++].fd = fd;
	return jc.job_key;
}

int pt_job_fd(uint32_t key)
{
	for (unsigned int i = 0; i < pt_nr_jobs; i++)
		if (pt_jobs[i].key == key)
			return pt_jobs[i].fd;
	return -1;
}

void pt_jobs_close(void)
{
	while (pt_nr_jobs)
		close(pt_jobs[--pt_nr_jobs].fd);
}

int pt_reserve(struct percs_hfi *hfi, uint32_t flags, uint32_t send_size,
	       uint32_t recv_size, uint32_t key, uint32_t window,
	       struct percs_window **out)
{
	struct percs_window_attr attr = {
		/* 0: kick mode, as the tests mean it (not the default, auto). */
		.flags = flags ? flags : PERCS_WINDOW_ATTR_KICK,
		.send_fifo_size = send_size,
		.recv_fifo_size = recv_size,
		.job_fd = pt_job_fd(key),
		.window = window,
	};

	return percs_window_reserve(hfi, &attr, out);
}

int pt_reserve_raw(int hfi_fd, uint32_t flags, uint32_t send_size,
		   uint32_t recv_size, uint32_t key, uint32_t window,
		   struct percs_window_reserve *req)
{
	int fd;

	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->flags = flags;
	req->send_fifo_size = send_size;
	req->recv_fifo_size = recv_size;
	req->job_fd = pt_job_fd(key);
	req->window = window;
	fd = ioctl(hfi_fd, PERCS_IOC_WINDOW_RESERVE, req);
	return fd < 0 ? -errno : fd;
}

int pt_rawwin_open(struct pt_rawwin *rw, int hfi_fd, uint32_t flags,
		   uint32_t send_size, uint32_t recv_size, uint32_t key)
{
	struct percs_window_reserve req;
	int fd;

	memset(rw, 0, sizeof(*rw));
	rw->fd = -1;
	fd = pt_reserve_raw(hfi_fd, flags, send_size, recv_size, key,
			    PERCS_WINDOW_ANY, &req);
	if (fd < 0)
		return fd;
	return pt_rawwin_map(rw, fd, &req);
}

/* Map every valid region of window @fd (layout @req); owns @fd after. */
int pt_rawwin_map(struct pt_rawwin *rw, int fd,
		  const struct percs_window_reserve *req)
{
	unsigned int r;
	int ret;

	memset(rw, 0, sizeof(*rw));
	rw->fd = fd;
	rw->req = *req;
	for (r = 0; r < PERCS_REGION_MAX; r++) {
		const struct percs_region *reg = &rw->req.regions[r];
		int prot = PROT_READ;
		void *p;

		if (!(reg->flags & PERCS_REGION_F_VALID))
			continue;
		if (reg->flags & PERCS_REGION_F_WRITABLE)
			prot |= PROT_WRITE;
		p = mmap(NULL, reg->length, prot, MAP_SHARED, rw->fd,
			 (off_t)reg->offset);
		if (p == MAP_FAILED) {
			ret = -errno;
			pt_rawwin_close(rw);
			return ret;
		}
		rw->map[r] = p;
	}
	return 0;
}

void pt_rawwin_close(struct pt_rawwin *rw)
{
	unsigned int r;

	for (r = 0; r < PERCS_REGION_MAX; r++) {
		if (rw->map[r])
			munmap(rw->map[r], rw->req.regions[r].length);
		rw->map[r] = NULL;
	}
	if (rw->fd >= 0)
		close(rw->fd);
	rw->fd = -1;
}

/*
 * Write one packet (header + h->length payload bytes) at send FIFO unit
 * @pos (no wrap handling: the caller keeps it inside the ring).
 * Return: the position after it.
 */
uint64_t pt_raw_put(struct pt_rawwin *rw, uint64_t pos,
		    const struct percs_pkt_hdr *hdr, const void *payload)
{
	uint32_t units = rw->req.regions[PERCS_REGION_SEND_FIFO].length /
			 PERCS_FLIT_SIZE;
	uint8_t *p = (uint8_t *)rw->map[PERCS_REGION_SEND_FIFO] +
		     (pos % units) * PERCS_FLIT_SIZE;
	size_t len = hdr->length;

	memcpy(p, hdr, sizeof(*hdr));
	if (len && payload)
		memcpy(p + sizeof(*hdr), payload, len);
	return pos + (sizeof(*hdr) + len + PERCS_FLIT_SIZE - 1) /
		     PERCS_FLIT_SIZE;
}

int pt_raw_kick(struct pt_rawwin *rw, unsigned long flags)
{
	int ret = ioctl(rw->fd, PERCS_IOC_KICK, flags);

	return ret < 0 ? -errno : ret;
}

/* The 8-byte trigger store, then (if @kick) PERCS_IOC_KICK(SEND). */
int pt_raw_trigger(struct pt_rawwin *rw, uint64_t send_tail, bool kick)
{
	__atomic_store_n(&pt_rawwin_db(rw)->send_tail, send_tail,
			 __ATOMIC_RELEASE);
	return kick ? pt_raw_kick(rw, PERCS_KICK_F_SEND) : 0;
}

int pt_send(struct percs_window *w, const struct percs_addr *dst,
	    const void *buf, size_t len, uint32_t tag, unsigned int flags,
	    int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = percs_send(w, dst, buf, len, tag, flags);
		if (ret != -EAGAIN)
			return ret;
		if (pt_now_ms() >= deadline)
			return -ETIMEDOUT;
		percs_kick(w, PERCS_KICK_F_SEND);
		pt_pause_us(100);
	}
}

int pt_icswx(struct percs_window *w, const struct percs_addr *dst,
	     const void *buf, size_t len, uint32_t tag, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = percs_icswx(w, dst, buf, len, tag);
		if (ret != -EAGAIN)
			return ret;
		if (pt_now_ms() >= deadline)
			return -ETIMEDOUT;
		percs_kick(w, PERCS_KICK_F_IMM);
		pt_pause_us(100);
	}
}

int pt_recv(struct percs_window *w, struct percs_pkt_hdr *hdr, void *buf,
	    size_t cap, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		uint64_t now;

		ret = percs_recv(w, hdr, buf, cap);
		if (ret != -EAGAIN)
			return ret;
		now = pt_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		ret = percs_wait(w, (int)(deadline - now));
		if (ret < 0)
			return ret;
		if (ret > 0 && percs_recv_peek(w) == NULL)
			pt_pause_us(100); /* a completion, not a packet */
	}
}

int pt_cq_wait(struct percs_window *w, struct percs_cqe *cqe, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = percs_cq_poll(w, cqe, 1);
		if (ret)
			return ret;
		if (pt_now_ms() >= deadline)
			return -ETIMEDOUT;
		pt_pause_us(100);
	}
}

int pt_read_live(struct pt_live *live)
{
	char name[64];
	long val;
	FILE *f;

	live->windows = live->windows_reserved = live->mappings = -1;
	live->blocked_senders = live->jobs = -1;
	live->packets_in_flight = live->atomics_outstanding = -1;
	live->cau_trees = -1;
	f = fopen(PT_DEBUGFS_LIVE, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %ld", name, &val) == 2) {
		if (!strcmp(name, "windows"))
			live->windows = val;
		else if (!strcmp(name, "windows_reserved"))
			live->windows_reserved = val;
		else if (!strcmp(name, "mappings"))
			live->mappings = val;
		else if (!strcmp(name, "blocked_senders"))
			live->blocked_senders = val;
		else if (!strcmp(name, "jobs"))
			live->jobs = val;
		else if (!strcmp(name, "packets_in_flight"))
			live->packets_in_flight = val;
		else if (!strcmp(name, "atomics_outstanding"))
			live->atomics_outstanding = val;
		else if (!strcmp(name, "cau_trees"))
			live->cau_trees = val;
	}
	fclose(f);
	return 0;
}

bool pt_live_is_zero(const struct pt_live *l)
{
	return !l->windows && !l->windows_reserved && !l->mappings &&
	       !l->blocked_senders && !l->jobs && !l->packets_in_flight &&
	       !l->atomics_outstanding && !l->cau_trees;
}

int pt_wait_live_zero(struct pt_live *live, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	int ret;

	/* A job lives while its fd is open: the test's are done with. */
	pt_jobs_close();
	for (;;) {
		ret = pt_read_live(live);
		if (ret)
			return ret;
		if (pt_live_is_zero(live))
			return 0;
		if (pt_now_ms() >= deadline)
			return -ETIMEDOUT;
		pt_pause_us(1000);
	}
}

/* One "name value" line of a file such as debugfs live, or -1. */
long pt_stat_field(const char *path, const char *field)
{
	char name[64];
	long val, ret = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &val) == 2)
		if (!strcmp(name, field))
			ret = val;
	fclose(f);
	return ret;
}

long pt_live_field(const char *name)
{
	return pt_stat_field(PT_DEBUGFS_LIVE, name);
}

long pt_wait_live_field(const char *name, long want, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	long now;

	while ((now = pt_live_field(name)) != want && pt_now_ms() < deadline)
		pt_pause_us(1000);
	return now;
}

bool pt_wait_mrs(long regs, long pages, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;

	while (pt_live_field("registrations") != regs ||
	       pt_live_field("pinned_pages") != pages) {
		if (pt_now_ms() > deadline)
			return false;
		pt_pause_us(1000);
	}
	return true;
}

int pt_side_open(struct pt_side *s, unsigned int hub, unsigned int unit,
		 uint32_t key, size_t len, uint32_t access, unsigned int flags)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->buf = MAP_FAILED;
	ret = pt_hfi_open(hub, unit, &s->hfi);
	if (ret)
		return ret;
	ret = pt_reserve(s->hfi, 0, PERCS_FIFO_DEF_SIZE, PERCS_FIFO_DEF_SIZE,
			 key, PERCS_WINDOW_ANY, &s->w);
	if (ret)
		return ret;
	s->addr = percs_window_addr(s->w);
	s->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED)
		return -errno;
	s->len = len;
	if (flags & PT_SIDE_PREFAULT)
		memset(s->buf, 0, len);
	ret = percs_mr_reg(s->w, s->buf, len, access, &s->mr);
	if (ret)
		return ret;
	s->rmr.win = s->addr;
	s->rmr.handle = s->mr;
	s->rmr.base = (uintptr_t)s->buf;
	s->rmr.length = len;
	return 0;
}

void pt_side_close(struct pt_side *s)
{
	if (s->w)
		percs_window_release(s->w);
	if (s->hfi)
		percs_hfi_close(s->hfi);
	if (s->buf && s->buf != MAP_FAILED)
		munmap(s->buf, s->len);
	memset(s, 0, sizeof(*s));
}

void *pt_shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Write @val to PT_ISR_DIR/@file (a knob or a command): 0 or -errno. */
int pt_isr_write(const char *file, const char *val)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), PT_ISR_DIR "%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int pt_isr_set(const char *file, unsigned long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", val);
	return pt_isr_write(file, buf);
}

int pt_faults_set(unsigned long ppm)
{
	static const char *const knobs[] = { "drop_ppm", "dup_ppm",
					     "reorder_ppm" };
	int ret = 0, err;

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		err = pt_isr_set(knobs[i], ppm);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/* A number file of PT_ISR_DIR (a knob): its value or -errno. */
long pt_isr_read(const char *file)
{
	char path[128];

	snprintf(path, sizeof(path), PT_ISR_DIR "%s", file);
	return pt_sysfs_read_long(path);
}

long pt_sysfs_read_long(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return strtol(buf, NULL, 0);
}

long pt_sysfs_hfi_attr(unsigned int hub, unsigned int unit, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), PT_SYSFS_DIR "/percs-hfi%u/%s",
		 hub * 2 + unit, attr);
	return pt_sysfs_read_long(path);
}

long pt_sysfs_windows_in_use(unsigned int hub, unsigned int unit)
{
	return pt_sysfs_hfi_attr(hub, unit, "windows_in_use");
}

/*
 * Fork @n children running fn(i, @arg), their pids in @pids (0 where fork
 * failed).  Return: how many could not be forked.
 */
int pt_fork_start(int n, int (*fn)(int idx, void *arg), void *arg,
		  pid_t *pids)
{
	int failed = 0, i;

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(fn(i, arg) ? 1 : 0);
		if (pids[i] < 0) {
			pids[i] = 0;
			failed++;
		}
	}
	return failed;
}

/*
 * Reap the children pt_fork_start() forked; those still running at the
 * deadline are killed.  Return: how many failed (fn != 0, a signal, or
 * killed at the deadline).
 */
int pt_fork_wait(int n, pid_t *pids, int timeout_ms)
{
	uint64_t deadline = pt_now_ms() + timeout_ms;
	int failed = 0, left = 0, i, status;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			left++;
	while (left) {
		for (i = 0; i < n; i++) {
			pid_t r;

			if (pids[i] <= 0)
				continue;
			r = waitpid(pids[i], &status, WNOHANG);
			if (r == 0)
				continue;
			if (r < 0 || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0) {
				if (r > 0 && WIFSIGNALED(status))
					fprintf(stderr,
						"# child %d: signal %d\n", i,
						WTERMSIG(status));
				failed++;
			}
			pids[i] = 0;
			left--;
		}
		if (!left)
			break;
		if (pt_now_ms() >= deadline) {
			for (i = 0; i < n; i++) {
				if (pids[i] <= 0)
					continue;
				fprintf(stderr, "# child %d: timed out\n", i);
				kill(pids[i], SIGKILL);
				waitpid(pids[i], &status, 0);
				pids[i] = 0;
				failed++;
			}
			break;
		}
		pt_pause_us(1000);
	}
	return failed;
}

int pt_fork_n(int n, int (*fn)(int idx, void *arg), void *arg,
	      int timeout_ms)
{
	pid_t pids[n];
	int failed = pt_fork_start(n, fn, arg, pids);

	return failed + pt_fork_wait(n, pids, timeout_ms);
}

int pt_read_atomic_stats(struct pt_atomic_stats *s)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
#define PT_AS(f) { #f, offsetof(struct pt_atomic_stats, f) }
		PT_AS(issued), PT_AS(completed), PT_AS(retransmits),
		PT_AS(duplicates), PT_AS(stale), PT_AS(dropped),
		PT_AS(duplicated), PT_AS(delayed), PT_AS(timeouts),
		PT_AS(outstanding),
#undef PT_AS
	};
	char name[64];
	long val;
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		*(long *)((char *)s + fields[i].off) = -1;
	f = fopen(PT_DEBUGFS_ATOMIC, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %ld", name, &val) == 2)
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(name, fields[i].name))
				*(long *)((char *)s + fields[i].off) = val;
	fclose(f);
	return 0;
}

int pt_cau_read(char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	if (!cap)
		return -EINVAL;
	fd = open(PT_DEBUGFS_CAU, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < cap - 1) {
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			n = -errno;
			close(fd);
			buf[len] = '\0';
			return (int)n;
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

long pt_cau_entries(void)
{
	long val = -ENOENT;
	char line[256];
	FILE *f;

	f = fopen(PT_DEBUGFS_CAU, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "entries %ld", &val) == 1)
			break;
	fclose(f);
	return val;
}

long pt_cau_hub_used(unsigned int hub)
{
	unsigned int h;
	char line[256];
	long val = 0, u;
	FILE *f;

	f = fopen(PT_DEBUGFS_CAU, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "hub %u used %ld", &h, &u) == 2 && h == hub)
			val = u;
	fclose(f);
	return val;
}

long pt_nr_hubs(void)
{
	struct dirent *e;
	long n = 0;
	DIR *d;

	d = opendir(PT_SYSFS_DIR);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "percs-hfi", 9))
			n++;
	closedir(d);
	return n / 2;
}

/*
 * The sum over every link of one column of isr/links, found by its name
 * in the header line.  Return: the sum, or -errno (-ENOENT: no such
 * column).
 */
long pt_isr_links_sum(const char *column)
{
	char line[512], *tok, *save;
	int col = -1, i;
	long sum = 0;
	FILE *f;

	f = fopen(PT_ISR_DIR "links", "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	for (i = 0, tok = strtok_r(line, " \n", &save); tok;
	     i++, tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, column))
			col = i;
	if (col < 0) {
		fclose(f);
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f)) {
		for (i = 0, tok = strtok_r(line, " \n", &save); tok && i < col;
		     i++, tok = strtok_r(NULL, " \n", &save))
			;
		if (tok)
			sum += strtol(tok, NULL, 10);
	}
	fclose(f);
	return sum;
}

void pt_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

uint64_t pt_checksum(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a 64 */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

unsigned long pt_scale(unsigned long n)
{
	static double scale = -1;
	unsigned long v;

	if (scale < 0) {
		const char *e = getenv("PERCS_TEST_SCALE");

		scale = e ? strtod(e, NULL) : 1.0;
		if (!(scale > 0 && scale <= 1))
			scale = 1.0;
	}
	v = (unsigned long)(n * scale);
	return v ? v : 1;
}

static int pt_count_fds(void)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

int pt_snap_take(struct pt_snap *s)
{
	s->fds = pt_count_fds();
	return pt_read_live(&s->live);
}

static bool pt_snap_eq(const struct pt_snap *a, const struct pt_snap *b)
{
	return a->fds == b->fds && a->live.windows == b->live.windows &&
	       a->live.windows_reserved == b->live.windows_reserved &&
	       a->live.mappings == b->live.mappings &&
	       a->live.blocked_senders == b->live.blocked_senders &&
	       a->live.jobs == b->live.jobs &&
	       a->live.atomics_outstanding == b->live.atomics_outstanding &&
	       a->live.cau_trees == b->live.cau_trees;
}

bool pt_snap_back(const struct pt_snap *want, struct pt_snap *now,
		  unsigned int ms)
{
	uint64_t deadline = pt_now_ms() + ms;

	for (;;) {
		if (pt_snap_take(now))
			return false;
		if (pt_snap_eq(want, now))
			return true;
		if (pt_now_ms() > deadline)
			return false;
		usleep(1000);
	}
}

ssize_t pt_send_fd(int sock, int fd, const void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0);
}

int pt_recv_fd(int sock, void *data, size_t len, int ms)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct pollfd pf = { .fd = sock, .events = POLLIN };
	struct cmsghdr *cm;
	int fd;

	if (poll(&pf, 1, ms) != 1)
		return -ETIMEDOUT;
	if (recvmsg(sock, &mh, MSG_WAITALL) != (ssize_t)len)
		return -EPIPE;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

/* Is any fd of this process, named as a job fd, the job with @key? */
bool pt_any_fd_joins(uint32_t key)
{
	int hfd = pt_hfi_open_fd(0, 0);
	bool joined = false;

	for (int n = 0; n < 256 && hfd >= 0; n++) {
		struct percs_window_reserve req = {
			.size = sizeof(req), .send_fifo_size = PERCS_FIFO_MIN_SIZE,
			.recv_fifo_size = PERCS_FIFO_MIN_SIZE, .job_fd = n,
			.window = PERCS_WINDOW_ANY,
		};
		int fd = ioctl(hfd, PERCS_IOC_WINDOW_RESERVE, &req);

		if (fd >= 0) {
			joined |= req.job_key == key;
			close(fd);
		}
	}
	if (hfd >= 0)
		close(hfd);
	return joined;
}
