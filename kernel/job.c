// SPDX-License-Identifier: GPL-2.0
/*
 * percs: jobs, the unit of isolation.
 *
 * On the hub, job keys are set by privileged network management, never by
 * the job itself.  Here a job is a kernel object behind a file: the
 * PERCS_IOC_JOB_CREATE caller gets a job fd, and a window joins the job
 * only by naming that fd when it is reserved.  The fd is the capability:
 * it is passed by inheritance or SCM_RIGHTS (a launcher's way), and
 * neither knowing the key nor CAP_SYS_ADMIN lets anyone in without it.
 *
 * The key is allocated here, cyclically over 32 bits, and stays taken
 * while the job's file or any of its windows lives (each holds a
 * reference), so it is never reused by a job a stale packet could reach.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "percs.h"

/**
 * struct percs_job - one job
 * @ref: the job's file holds one, each of its windows one
 * @pd: the system
 * @key: the key packets of the job carry
 * @owner: effective uid of the creator
 * @quota: the user it is charged to (quota.c)
 * @windows: windows of the job now reserved
 */
struct percs_job {
	refcount_t ref;
	struct percs_dev *pd;
	u32 key;
	kuid_t owner;
	struct percs_user *quota;
	atomic_t windows;
};

static void percs_job_put(struct percs_job *job)
{
	struct percs_dev *pd = job->pd;

	if (!refcount_dec_and_test(&job->ref))
		return;
	xa_erase(&pd->jobs, job->key);
	percs_quota_uncharge(pd, job->quota, PERCS_QUOTA_JOBS);
	kfree(job);
}

/*
 * A job holding one reference, with a key.  @user: charged to the
 * caller's user and owned by it (a job fd's); else owned by the kernel
 * and charged to no one (a kernel client's).
 */
static struct percs_job *percs_job_alloc(struct percs_dev *pd, bool user)
{
	gfp_t gfp = user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	struct percs_job *job;
	int ret;

	job = kzalloc(sizeof(*job), gfp);
	if (!job)
		return ERR_PTR(-ENOMEM);
	if (user) {
		job->quota = percs_quota_charge(pd, PERCS_QUOTA_JOBS);
		if (IS_ERR(job->quota)) {
			ret = PTR_ERR(job->quota);
			kfree(job);
			return ERR_PTR(ret);
		}
	}
	job->pd = pd;
	job->owner = user ? current_euid() : GLOBAL_ROOT_UID;
	refcount_set(&job->ref, 1);
	ret = xa_alloc_cyclic(&pd->jobs, &job->key, job,
			      XA_LIMIT(1, U32_MAX), &pd->next_job_key, gfp);
	if (ret < 0) {
		percs_quota_uncharge(pd, job->quota, PERCS_QUOTA_JOBS);
		kfree(job);
		/* Every key in use: a full table, not a busy object. */
		return ERR_PTR(ret == -EBUSY ? -ENOSPC : ret);
	}
	return job;
}

/**
 * percs_job_create() - PERCS_IOC_JOB_CREATE
 * @pd: the system
 * @req: the request (kernel copy), completed on success
 * @ureq: the caller's copy, for the answer
 * @usize: the caller's struct size
 *
 * The fd is installed only once the answer reached the caller, so a
 * failure leaves nothing behind.
 *
 * Return: the job fd, or -EINVAL (flags), -EDQUOT (the caller's user
 * holds max_jobs_per_user jobs), -ENOSPC (no key free), -ENOMEM, -EFAULT.
 */
int percs_job_create(struct percs_dev *pd, struct percs_job_create *req,
		     struct percs_job_create __user *ureq, u32 usize)
{
	struct percs_job *job;
	struct file *file;
	int fd, ret;

	if (req->flags || req->fd || req->job_key)
		return -EINVAL;
	job = percs_job_alloc(pd, true);
	if (IS_ERR(job))
		return PTR_ERR(job);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_put;
	}
	file = anon_inode_getfile("[percs-job]", &percs_job_fops, job,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto out_fd;
	}
	req->fd = fd;
	req->job_key = job->key;
	if (copy_to_user(ureq, req, min_t(size_t, usize, sizeof(*req)))) {
		fput(file);
		put_unused_fd(fd);
		return -EFAULT;
	}
	fd_install(fd, file);
	return fd;

out_fd:
	put_unused_fd(fd);
out_put:
	percs_job_put(job);
	return ret;
}

/**
 * percs_job_join() - a window being reserved joins the job of a job fd
 * @pd: the system
 * @job_fd: the fd the caller named
 * @w: the window (not yet published)
 *
 * On success the window holds a reference on the job (dropped by
 * percs_job_leave()) and has the job's key.
 *
 * Return: 0, -EBADF if @job_fd is not an open fd, -EINVAL if it is not a
 * job of this system.
 */
int percs_job_join(struct percs_dev *pd, int job_fd, struct percs_window *w)
{
	struct fd f = fdget(job_fd);
	struct percs_job *job;
	int ret = 0;

	if (!f.file)
		return -EBADF;
	job = f.file->private_data;
	if (f.file->f_op != &percs_job_fops || job->pd != pd) {
		ret = -EINVAL;
		goto out;
	}
	refcount_inc(&job->ref);
	atomic_inc(&job->windows);
	w->job = job;
	w->job_key = job->key;
out:
	fdput(f);
	return ret;
}

/**
 * percs_job_leave() - a window of the job is gone
 * @w: the window
 */
void percs_job_leave(struct percs_window *w)
{
	if (!w->job)
		return;
	atomic_dec(&w->job->windows);
	percs_job_put(w->job);
	w->job = NULL;
}

/**
 * percs_job_visible() - may the caller see who a window belongs to
 * @w: the window
 *
 * A window's key, owner and traffic are shown to the user who reserved
 * it, to the job's creator, and to an administrator of the initial user
 * namespace; to no other user.  The capability is asked without audit: a
 * query that shows less is not a denial worth logging.
 */
bool percs_job_visible(const struct percs_window *w)
{
	kuid_t me = current_euid();

	return uid_eq(me, w->uid) || uid_eq(me, w->job->owner) ||
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

/**
 * percs_job_query() - PERCS_IOC_JOB_QUERY
 * @job: the job of the fd
 * @q: the request (kernel copy); the answer on success
 *
 * Return: 0, or -EINVAL for non-zero flags, reserved or answer fields.
 */
int percs_job_query(struct percs_job *job, struct percs_job_query *q)
{
	if (q->flags || q->job_key || q->windows || q->uid || q->reserved)
		return -EINVAL;
	q->job_key = job->key;
	q->windows = atomic_read(&job->windows);
	q->uid = from_kuid_munged(current_user_ns(), job->owner);
	return 0;
}

static int percs_job_release(struct inode *inode, struct file *file)
{
	percs_job_put(file->private_data);
	return 0;
}

const struct file_operations percs_job_fops = {
	.owner = THIS_MODULE,
	.release = percs_job_release,
	.unlocked_ioctl = percs_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/**
 * percs_job_create_kernel() - a job owned by a kernel client
 * @pd: the system
 *
 * For percs_verbs.ko's QPs.  The job has no file, so no reservation can
 * ever name it (percs_job_join() takes only job fds): no native window
 * joins it.  Its windows join with percs_job_join_kernel().  Charged to
 * no user.  Process context.
 *
 * Return: the job, holding one reference (percs_job_put_kernel()), or
 * ERR_PTR(-ENOSPC) (no key free), ERR_PTR(-ENOMEM).
 */
struct percs_job *percs_job_create_kernel(struct percs_dev *pd)
{
	return percs_job_alloc(pd, false);
}

/**
 * percs_job_join_kernel() - a kernel window joins its client's job
 * @job: from percs_job_create_kernel()
 * @w: the window (not yet published); holds a reference on @job until
 *	percs_job_leave()
 */
void percs_job_join_kernel(struct percs_job *job, struct percs_window *w)
{
	refcount_inc(&job->ref);
	atomic_inc(&job->windows);
	w->job = job;
	w->job_key = job->key;
}

/**
 * percs_job_put_kernel() - the client drops the reference of
 *	percs_job_create_kernel()
 * @job: the job; it goes with its last window
 */
void percs_job_put_kernel(struct percs_job *job)
{
	percs_job_put(job);
}

/**
 * percs_job_key() - the key a job's packets carry
 * @job: the job
 *
 * Return: the key.
 */
u32 percs_job_key(const struct percs_job *job)
{
	return job->key;
}

/**
 * percs_job_count() - jobs that exist (debugfs)
 * @pd: the system
 */
unsigned int percs_job_count(struct percs_dev *pd)
{
	struct percs_job *job;
	unsigned long key;
	unsigned int n = 0;

	xa_lock(&pd->jobs);
	xa_for_each(&pd->jobs, key, job)
		n++;
	xa_unlock(&pd->jobs);
	return n;
}

/**
 * percs_job_init() - no job yet
 * @pd: the system
 */
void percs_job_init(struct percs_dev *pd)
{
	xa_init_flags(&pd->jobs, XA_FLAGS_ALLOC1);
	pd->next_job_key = 1;
}

/**
 * percs_job_exit() - the table goes (module unload)
 * @pd: the system
 *
 * Each job's file and window holds a module reference, so none is left.
 */
void percs_job_exit(struct percs_dev *pd)
{
	WARN_ON(!xa_empty(&pd->jobs));
	xa_destroy(&pd->jobs);
}
