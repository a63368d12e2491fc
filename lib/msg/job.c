// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-msg: joining the job percs-run started (lib/msg/pmi.h).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg_internal.h"
#include "pmi.h"

struct percs_msg_job {
	int fd;
	struct percs_hfi *hfi;
	struct percs_window *w;
	struct percs_msg *m;
};

/* An unsigned decimal variable no larger than @max; -ENOENT if unset. */
static int env_uint(const char *name, unsigned long max, unsigned long *out)
{
	const char *s = getenv(name);
	char *end;

	if (!s)
		return -ENOENT;
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *out > max || *s == '-')
		return -EINVAL;
	return 0;
}

static int full_io(int fd, void *buf, size_t len, bool wr)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A launcher message other than GO: a peer died.  Returns 0 or -errno. */
static int job_note(struct percs_msg_job *j, const struct pmi_cmd *c)
{
	if (c->magic != PMI_MAGIC || c->op != PMI_DEAD || c->code < 0)
		return -EPROTO;
	return percs_msg_fail_peer(j->m, (unsigned int)c->code);
}

/*
 * The endpoint's watch: read what the launcher said, if anything, waiting
 * up to @timeout_ms for a first message.  A launcher that is gone says
 * nothing.
 */
static int job_watch(void *arg, int timeout_ms)
{
	struct percs_msg_job *j = arg;
	struct pollfd pf = { .fd = j->fd, .events = POLLIN };
	struct pmi_cmd c;
	int ret;

	for (; poll(&pf, 1, timeout_ms) == 1 && (pf.revents & POLLIN);
	     timeout_ms = 0) {
		ret = full_io(j->fd, &c, sizeof(c), false);
		if (ret)
			return 0;
		ret = job_note(j, &c);
		if (ret)
			return ret;
	}
	return 0;
}

static int job_exchange(struct percs_msg_job *j, unsigned int rank,
			unsigned int size, struct percs_addr *addrs)
{
	struct pmi_hello hello = {
		.magic = PMI_MAGIC,
		.rank = rank,
		.addr = percs_window_addr(j->w),
	};
	int ret = full_io(j->fd, &hello, sizeof(hello), true);

	if (!ret)
		ret = full_io(j->fd, addrs, sizeof(*addrs) * size, false);
	if (!ret && memcmp(&addrs[rank], &hello.addr, sizeof(hello.addr)))
		ret = -EPROTO;
	return ret;
}

static int job_attr(struct percs_msg_attr *a)
{
	unsigned long v;
	int ret;

	memset(a, 0, sizeof(*a));
	ret = env_uint("PERCS_MSG_EAGER", percs_msg_eager_limit(), &v);
	if (ret == -EINVAL)
		return ret;
	if (!ret)
		a->eager_max = v;
	ret = env_uint("PERCS_MSG_UNEXPECTED", 1UL << 40, &v);
	if (ret == -EINVAL)
		return ret;
	if (!ret)
		a->unexpected_max = v;
	return 0;
}

int percs_msg_job_join(struct percs_msg_job **out)
{
	/* Job 0: libpercs's default job, the launcher's PERCS_JOB_FD. */
	struct percs_window_attr wa = {
		.job_fd = 0,
		.window = PERCS_WINDOW_ANY,
	};
	unsigned long fd, rank, size, hub, unit, job;
	struct percs_addr *addrs = NULL;
	struct percs_msg_attr ma;
	struct percs_msg_job *j;
	int ret;

	if (!out)
		return -EINVAL;
	ret = env_uint(PMI_ENV_FD, INT_MAX, &fd);
	if (ret)
		return ret;
	if (env_uint(PMI_ENV_SIZE, 1U << 20, &size) || !size ||
	    env_uint(PMI_ENV_RANK, size - 1, &rank) ||
	    env_uint(PMI_ENV_HUB, UINT_MAX, &hub) ||
	    env_uint(PMI_ENV_UNIT, 1, &unit) ||
	    env_uint(PMI_ENV_JOB_FD, INT_MAX, &job) || !job ||
	    job_attr(&ma))
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	addrs = calloc(size, sizeof(*addrs));
	if (!j || !addrs) {
		ret = -ENOMEM;
		goto fail;
	}
	j->fd = (int)fd;
	ret = percs_hfi_open((unsigned int)hub, (unsigned int)unit, &j->hfi);
	if (!ret)
		ret = percs_window_reserve(j->hfi, &wa, &j->w);
	if (!ret)
		ret = job_exchange(j, (unsigned int)rank, (unsigned int)size,
				   addrs);
	if (!ret)
		ret = percs_msg_open(j->w, (unsigned int)rank,
				     (unsigned int)size, addrs, &ma, &j->m);
	if (ret)
		goto fail;
	pm_watch_set(j->m, job_watch, j);
	free(addrs);
	*out = j;
	return 0;
fail:
	free(addrs);
	if (j) {
		percs_window_release(j->w);
		if (j->hfi)
			percs_hfi_close(j->hfi);
		free(j);
	}
	return ret;
}

struct percs_msg *percs_msg_job_endpoint(const struct percs_msg_job *j)
{
	return j->m;
}

/* PERCS_MSG_STATS: what the protocol did, one line on stderr per rank. */
static void job_stats(const struct percs_msg_job *j)
{
	struct percs_msg_counters c;

	percs_msg_counters(j->m, &c);
	fprintf(stderr,
		"percs-msg: rank %u: eager %llu imm %llu rndv %llu no_credit %llu unexpected_peak %llu/%zu out_of_order %llu backlog_peak %llu\n",
		percs_msg_rank(j->m), (unsigned long long)c.eager_sent,
		(unsigned long long)c.imm_sent, (unsigned long long)c.rndv_sent,
		(unsigned long long)c.no_credit,
		(unsigned long long)c.unexpected_peak, j->m->unexpected_max,
		(unsigned long long)c.out_of_order,
		(unsigned long long)c.backlog_peak);
}

int percs_msg_job_leave(struct percs_msg_job *j)
{
	struct pmi_cmd c = { .magic = PMI_MAGIC, .op = PMI_LEAVE };
	int ret, ret2;

	if (!j)
		return 0;
	if (getenv("PERCS_MSG_STATS"))
		job_stats(j);
	/* Flush what we owe the others before saying we are done. */
	ret = percs_msg_close(j->m);
	if (ret == -EBUSY)
		return ret;
	ret2 = full_io(j->fd, &c, sizeof(c), true);
	/* Deaths may still be announced before the GO. */
	while (!ret2 && !(ret2 = full_io(j->fd, &c, sizeof(c), false)) &&
	       (c.magic != PMI_MAGIC || c.op != PMI_GO))
		ret2 = c.magic == PMI_MAGIC && c.op == PMI_DEAD ? 0 : -EPROTO;
	percs_window_release(j->w);
	percs_hfi_close(j->hfi);
	close(j->fd);
	free(j);
	return ret ? ret : ret2;
}

void percs_msg_job_abort(struct percs_msg_job *j, int code)
{
	struct pmi_cmd c = { .magic = PMI_MAGIC, .op = PMI_ABORT, .code = code };

	if (!j || full_io(j->fd, &c, sizeof(c), true))
		return;
	/* The launcher kills us; wait for it. */
	for (;;)
		pause();
}
