// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: jobs - creating one, reading its key, and the process's
 * default job (a launcher's, named by PERCS_JOB_FD, or a private one).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

int percs_job_create(struct percs_hfi *hfi)
{
	struct percs_job_create req = { .size = sizeof(req) };
	int fd, moved;

	if (!hfi)
		return -EINVAL;
	fd = ioctl(hfi->fd, PERCS_IOC_JOB_CREATE, &req);
	if (fd < 0)
		return -errno;
	if (fd > 0)
		return fd;
	/* 0 means "the default job" in percs_window_attr: never hand it out. */
	moved = fcntl(fd, F_DUPFD_CLOEXEC, 1);
	if (moved < 0)
		moved = -errno;
	close(fd);
	return moved;
}

int percs_job_key(int job_fd, uint32_t *key)
{
	struct percs_job_query q = { .size = sizeof(q) };

	if (!key)
		return -EINVAL;
	if (ioctl(job_fd, PERCS_IOC_JOB_QUERY, &q))
		return errno == ENOTTY ? -EINVAL : -errno;
	*key = q.job_key;
	return 0;
}

/* PERCS_JOB_FD, strictly a decimal fd that is a job: else -EINVAL. */
static int job_from_env(const char *s)
{
	uint32_t key;
	char *end;
	long fd;

	errno = 0;
	fd = strtol(s, &end, 10);
	if (errno || end == s || *end || fd < 1 || fd > INT_MAX)
		return -EINVAL;
	if (percs_job_key((int)fd, &key))
		return -EINVAL;
	return (int)fd;
}

static pthread_mutex_t default_job_lock = PTHREAD_MUTEX_INITIALIZER;
static int default_job = -1;

int percs_job_default(struct percs_hfi *hfi)
{
	const char *env = getenv("PERCS_JOB_FD");
	int fd;

	if (!hfi)
		return -EINVAL;
	pthread_mutex_lock(&default_job_lock);
	fd = default_job;
	if (fd < 0) {
		fd = env && *env ? job_from_env(env) : percs_job_create(hfi);
		if (fd > 0)
			default_job = fd;
	}
	pthread_mutex_unlock(&default_job_lock);
	return fd;
}
