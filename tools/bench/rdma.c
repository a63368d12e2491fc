// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench rdma: RDMA write and read bandwidth (4 KiB .. 16 MiB) and
 * small-write latency between two windows of one process, and in the same
 * run the VM's single-thread memcpy bandwidth over the same sizes and
 * buffers; the 70% target (issue 5) is judged on RDMA write / memcpy for
 * 1 MiB and larger.  print_rdma() and print_json() (report.c) print it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

#define RDMA_MAX	(16u << 20)

/* Record why the measurement failed; Return: @err, for tail calls. */
static int rdma_fail(struct rdma_result *r, int err, const char *why,
		     const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(r->errmsg))
		snprintf(r->errmsg + n, sizeof(r->errmsg) - n, ": %s", why);
	r->err = err;
	return err;
}

struct rdma_side {
	struct percs_hfi *hfi;
	struct percs_window *w;
	uint8_t *buf;
	uint32_t mr;
};

/* Open, reserve, map and register one side; on failure say which step. */
static int rdma_side_open(struct rdma_side *s, unsigned int hub,
			  unsigned int unit, int job_fd,
			  struct rdma_result *r)
{
	struct percs_window_attr attr = {
		.flags = PERCS_WINDOW_ATTR_KICK,
		.send_fifo_size = PERCS_FIFO_DEF_SIZE,
		.recv_fifo_size = PERCS_FIFO_DEF_SIZE,
		.job_fd = job_fd,
		.window = PERCS_WINDOW_ANY,
	};
	int ret;

	/* not RDMA errors: percs_strerror() would give ENOENT its RDMA meaning */
	ret = percs_hfi_open(hub, unit, &s->hfi);
	if (ret)
		return rdma_fail(r, ret, strerror(-ret), "open HFI %u of hub %u",
				 unit, hub);
	ret = percs_window_reserve(s->hfi, &attr, &s->w);
	if (ret)
		return rdma_fail(r, ret, strerror(-ret),
				 "reserve a window on hub %u HFI %u", hub, unit);
	s->buf = mmap(NULL, RDMA_MAX, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->buf == MAP_FAILED) {
		s->buf = NULL;
		return rdma_fail(r, -errno, strerror(errno), "mmap %u MiB",
				 RDMA_MAX >> 20);
	}
	memset(s->buf, 1, RDMA_MAX);
	ret = percs_mr_reg(s->w, s->buf, RDMA_MAX,
			   PERCS_ACCESS_LOCAL_WRITE | PERCS_ACCESS_REMOTE_READ |
			   PERCS_ACCESS_REMOTE_WRITE, &s->mr);
	if (ret)
		return rdma_fail(r, ret, percs_strerror(ret),
				 "percs_mr_reg on hub %u HFI %u", hub, unit);
	return 0;
}

static void rdma_side_close(struct rdma_side *s)
{
	if (s->w)
		percs_window_release(s->w);
	if (s->hfi)
		percs_hfi_close(s->hfi);
	if (s->buf)
		munmap(s->buf, RDMA_MAX);
}

/* One operation, waited for; 0 or the error. */
static int rdma_one(struct rdma_side *a, struct rdma_side *b, uint8_t op,
		    uint64_t len)
{
	struct percs_rdma_wr wr = {
		.op = op, .dst = percs_window_addr(b->w),
		.remote_handle = b->mr, .remote_addr = (uintptr_t)b->buf,
		.local_handle = a->mr, .local_addr = a->buf, .len = len,
	};
	struct percs_cqe c;
	struct spin sp;
	int ret = percs_rdma_post(a->w, &wr);

	if (ret)
		return ret;
	spin_init(&sp);
	while (percs_cq_poll(a->w, &c, 1) != 1)
		if (spin_tick(&sp))
			return -ETIMEDOUT;
	return c.res;
}

/* Bytes per second of @op at @len, over about @secs. */
static double rdma_bw(struct rdma_side *a, struct rdma_side *b, uint8_t op,
		      uint64_t len, double secs, int *err)
{
	uint64_t t0, t, bytes = 0;

	*err = rdma_one(a, b, op, len);		/* warm */
	t0 = now_ns();
	do {
		if (!*err)
			*err = rdma_one(a, b, op, len);
		bytes += len;
		t = now_ns();
	} while (!*err && (t - t0 < secs * 1e9 || bytes < 4 * len));
	return bytes * 1e9 / (double)(t - t0);
}

static double memcpy_bw(uint8_t *dst, const uint8_t *src, uint64_t len,
			double secs)
{
	uint64_t t0, t, bytes = 0;

	memcpy(dst, src, len);
	t0 = now_ns();
	do {
		memcpy(dst, src, len);
		__asm__ __volatile__("" : : "r"(dst) : "memory");
		bytes += len;
		t = now_ns();
	} while (t - t0 < secs * 1e9 || bytes < 4 * len);
	return bytes * 1e9 / (double)(t - t0);
}

/**
 * run_rdma() - measure the RDMA figures into @res->rdma
 * @cfg: the configuration (quick mode, job key, pairs)
 * @res: the results
 *
 * The 70% target is judged here and reported, not asserted.
 *
 * Return: 0, or -errno if the measurement failed (also in @res->rdma.err,
 * with what failed in @res->rdma.errmsg; the rows measured before are kept).
 */
int run_rdma(const struct bench_cfg *cfg, struct results *res)
{
	struct rdma_result *r = &res->rdma;
	struct rdma_side a = { 0 }, b = { 0 };
	double secs = cfg->quick ? 0.1 : 0.4;
	uint64_t samples[2000];
	unsigned int n;
	int ret, err;

	memset(r, 0, sizeof(*r));
	r->ran = true;
	r->hub[1] = cfg->pair[BP_FAR].valid ? cfg->pair[BP_FAR].hub[1] : 0;
	r->unit[1] = r->hub[1] ? 0 : 1;
	ret = rdma_side_open(&a, r->hub[0], r->unit[0], cfg->job_fd, r);
	if (!ret)
		ret = rdma_side_open(&b, r->hub[1], r->unit[1], cfg->job_fd, r);
	if (ret)
		goto out;

	for (uint64_t len = 4096; len <= RDMA_MAX; len *= 4) {
		struct rdma_row *row = &r->row[r->nrows];

		progress("rdma %llu", (unsigned long long)len);
		row->bytes = len;
		row->write_bps = rdma_bw(&a, &b, PERCS_RDMA_OP_WRITE, len, secs,
					 &err);
		if (err) {
			ret = rdma_fail(r, err, percs_strerror(err),
					"%llu-byte write",
					(unsigned long long)len);
			goto out;
		}
		row->read_bps = rdma_bw(&a, &b, PERCS_RDMA_OP_READ, len, secs,
					&err);
		if (err) {
			ret = rdma_fail(r, err, percs_strerror(err),
					"%llu-byte read",
					(unsigned long long)len);
			goto out;
		}
		row->memcpy_bps = memcpy_bw(b.buf, a.buf, len, secs);
		if (len >= (1u << 20) &&
		    (!r->target_avail || row->write_bps / row->memcpy_bps <
		     r->worst)) {
			r->target_avail = true;
			r->worst_row = r->nrows;
			r->worst = row->write_bps / row->memcpy_bps;
		}
		r->nrows++;
	}
	r->pass = r->worst >= RDMA_TARGET;

	n = cfg->quick ? 200 : 2000;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		ret = rdma_one(&a, &b, PERCS_RDMA_OP_WRITE, 8);
		if (ret) {
			rdma_fail(r, ret, percs_strerror(ret), "8-byte write");
			goto out;
		}
		samples[i] = now_ns() - t0;
	}
	stats_from_samples(samples, n, 1.0, &r->write8);
	r->done = true;
out:
	rdma_side_close(&a);
	rdma_side_close(&b);
	return ret;
}
