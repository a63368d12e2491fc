// SPDX-License-Identifier: GPL-2.0
/*
 * percs: windows - reservation, lifetime, lookup and the ownership rules.
 *
 * This file is the one place that decides who may do what with a window:
 * who reserves it (whoever holds a job fd, see job.c), who drives it
 * (whoever holds its file), which windows may exchange packets (those of
 * one job) and who may see whose windows.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/cred.h>
#include <linux/mm.h>

#include "nmmu.h"

/**
 * percs_window_error() - record a window error visible in its status page
 * @w: the window
 * @err: negative errno
 */
void percs_window_error(struct percs_window *w, int err)
{
	WRITE_ONCE(w->st->error, -err);
	percs_status_set(w, PERCS_STATUS_ERROR);
}

static bool percs_fifo_size_ok(u32 size)
{
	return size >= PERCS_FIFO_MIN_SIZE && size <= PERCS_FIFO_MAX_SIZE &&
	       is_power_of_2(size);
}

static int percs_window_check_request(struct percs_dev *pd,
				      const struct percs_window_reserve *req)
{
	if (req->flags & ~PERCS_WINDOW_F_ALL || req->job_key ||
	    req->fd || req->imm_slots || req->cq_entries)
		return -EINVAL;
	/* One engine mode: poll and auto exclude each other. */
	if ((req->flags & PERCS_WINDOW_F_POLL) &&
	    (req->flags & PERCS_WINDOW_F_AUTO))
		return -EINVAL;
	if (!percs_fifo_size_ok(req->send_fifo_size) ||
	    !percs_fifo_size_ok(req->recv_fifo_size))
		return -EINVAL;
	if (req->window != PERCS_WINDOW_ANY &&
	    req->window >= pd->windows_per_hfi)
		return -EINVAL;
	return 0;
}

static void percs_window_free_regions(struct percs_window *w)
{
	unsigned int r;

	for (r = 0; r < PERCS_REGION_MAX; r++) {
		if (!percs_region_shared(r))
			vfree(w->regions[r]);
		w->regions[r] = NULL;
	}
}

static int percs_window_alloc_regions(struct percs_window *w,
				      const struct percs_window_reserve *req)
{
	static const u32 fixed[PERCS_REGION_MAX] = {
		[PERCS_REGION_DOORBELL] = PAGE_SIZE,
		[PERCS_REGION_STATUS] = PAGE_SIZE,
		[PERCS_REGION_IMM] = PERCS_IMM_SLOTS * PERCS_FLIT_SIZE,
		[PERCS_REGION_CQ] = PERCS_CQ_ENTRIES * sizeof(struct percs_cqe),
	};
	unsigned int r;

	BUILD_BUG_ON(sizeof(struct percs_doorbell) > PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct percs_status) > PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct percs_pkt_hdr) != PERCS_PKT_HDR_SIZE);

	for (r = 0; r < PERCS_REGION_MAX; r++)
		w->region_len[r] = PAGE_ALIGN(fixed[r]);
	w->region_len[PERCS_REGION_SEND_FIFO] = req->send_fifo_size;
	w->region_len[PERCS_REGION_RECV_FIFO] = req->recv_fifo_size;

	for (r = 0; r < PERCS_REGION_MAX; r++) {
		if (!w->region_len[r])
			continue;
		/*
		 * Charged to the caller's memory cgroup: a mapping keeps the
		 * window after its fd is closed, so neither the fd limit nor
		 * anything else bounds it.  RETRY_MAYFAIL: at the cgroup's
		 * limit the reservation fails with -ENOMEM instead of
		 * OOM-killing a member of the cgroup.  Zeroed, as
		 * vmalloc_user() does; mmap.c inserts the pages one by one.
		 */
		w->regions[r] = __vmalloc(w->region_len[r],
					  GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					  __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		if (!w->regions[r]) {
			percs_window_free_regions(w);
			return -ENOMEM;
		}
	}
	w->regions[PERCS_REGION_CLOCK] = percs_clock_page(w->hfi->pd);
	w->region_len[PERCS_REGION_CLOCK] = PAGE_SIZE;
	w->db = w->regions[PERCS_REGION_DOORBELL];
	w->st = w->regions[PERCS_REGION_STATUS];
	w->cq = w->regions[PERCS_REGION_CQ];
	w->send.base = w->regions[PERCS_REGION_SEND_FIFO];
	w->send.units = req->send_fifo_size / PERCS_FLIT_SIZE;
	w->recv.base = w->regions[PERCS_REGION_RECV_FIFO];
	w->recv.units = req->recv_fifo_size / PERCS_FLIT_SIZE;
	w->imm.base = w->regions[PERCS_REGION_IMM];
	w->imm.units = PERCS_IMM_SLOTS;
	return 0;
}

static void percs_window_describe(const struct percs_window *w,
				  struct percs_window_reserve *req)
{
	unsigned int r;

	req->window = w->index;
	req->imm_slots = PERCS_IMM_SLOTS;
	req->cq_entries = PERCS_CQ_ENTRIES;
	/* Every byte of the answer is written: addr.reserved too. */
	memset(&req->addr, 0, sizeof(req->addr));
	req->addr.hub = w->hfi->hub;
	req->addr.hfi = w->hfi->unit;
	req->addr.window = w->index;
	for (r = 0; r < PERCS_REGION_MAX; r++) {
		struct percs_region *reg = &req->regions[r];

		memset(reg, 0, sizeof(*reg));
		if (!w->regions[r])
			continue;
		reg->offset = percs_region_key(r);
		reg->length = w->region_len[r];
		reg->flags = PERCS_REGION_F_VALID;
		if (percs_region_writable(r))
			reg->flags |= PERCS_REGION_F_WRITABLE;
	}
}

static bool percs_window_index_free(struct percs_hfi *hfi, u32 i)
{
	return !rcu_access_pointer(hfi->windows[i]) &&
	       !test_bit(i, hfi->claimed);
}

/* Pick a free index and claim it, under hfi->lock. */
static int percs_window_claim_index(struct percs_hfi *hfi, u32 wanted)
{
	u32 i;

	lockdep_assert_held(&hfi->lock);
	if (wanted != PERCS_WINDOW_ANY) {
		if (!percs_window_index_free(hfi, wanted))
			return -EBUSY;
		i = wanted;
	} else {
		for (i = 0; i < hfi->pd->windows_per_hfi; i++)
			if (percs_window_index_free(hfi, i))
				break;
		if (i == hfi->pd->windows_per_hfi)
			return -ENOSPC;
	}
	__set_bit(i, hfi->claimed);
	return i;
}

/* The fields every window starts with, native or kernel. */
static void percs_window_init(struct percs_window *w, struct percs_hfi *hfi,
			      struct percs_user *quota, u32 flags)
{
	w->quota = quota;
	w->hfi = hfi;
	w->flags = flags;
	w->uid = current_euid();
	spin_lock_init(&w->send_lock);
	spin_lock_init(&w->recv_lock);
	spin_lock_init(&w->cq_lock);
	percs_rdma_window_init(w);
	INIT_LIST_HEAD(&w->landed);
	INIT_LIST_HEAD(&w->blocked_node);
	INIT_LIST_HEAD(&w->poll_node);
	INIT_LIST_HEAD(&w->flight);
	init_waitqueue_head(&w->wq);
	percs_mr_window_init(w);
	percs_amo_window_init(w);
}

static void percs_window_destroy(struct percs_window *w)
{
	struct percs_dev *pd = w->hfi->pd;

	percs_window_free_regions(w);
	put_pid(w->pid);
	percs_job_leave(w);
	percs_quota_uncharge(pd, w->quota, PERCS_QUOTA_WINDOWS);
	atomic_dec(&pd->live_windows);
	kfree_rcu(w, rcu);
}

/**
 * percs_window_reserve() - PERCS_IOC_WINDOW_RESERVE
 * @hfi: the HFI
 * @req: the request (kernel copy); completed on success
 * @ureq: the caller's copy, for the answer
 * @usize: the caller's struct size
 *
 * The window is published and its fd installed only after the answer
 * reached user space, so a failure leaves nothing behind.  The answer is
 * copied with no lock held: its index is claimed under hfi->lock
 * meanwhile, so a caller whose buffer faults slowly (userfaultfd, FUSE)
 * keeps no other reservation, query or release of the HFI waiting.
 *
 * Return: the new fd, or -errno (-EDQUOT: the caller's user holds
 * max_windows_per_user windows already).
 */
int percs_window_reserve(struct percs_hfi *hfi,
			 struct percs_window_reserve *req,
			 struct percs_window_reserve __user *ureq, u32 usize)
{
	struct percs_dev *pd = hfi->pd;
	struct percs_user *quota;
	struct percs_window *w;
	struct file *file;
	int fd, idx, ret;

	ret = percs_window_check_request(pd, req);
	if (ret)
		return ret;

	quota = percs_quota_charge(pd, PERCS_QUOTA_WINDOWS);
	if (IS_ERR(quota))
		return PTR_ERR(quota);
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w) {
		percs_quota_uncharge(pd, quota, PERCS_QUOTA_WINDOWS);
		return -ENOMEM;
	}
	percs_window_init(w, hfi, quota, req->flags);

	ret = percs_window_alloc_regions(w, req);
	if (ret)
		goto out_free;
	/*
	 * Kick until the polling thread's first awake pass over the window
	 * clears the flag: until then nothing shows that it runs.
	 */
	if (percs_window_polled(w))
		percs_status_set(w, PERCS_STATUS_NEED_WAKEUP);
	ret = percs_job_join(pd, req->job_fd, w);
	if (ret)
		goto out_regions;
	w->pid = get_task_pid(current, PIDTYPE_TGID);
	atomic_inc(&pd->live_windows);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_destroy;
	}

	mutex_lock(&hfi->lock);
	idx = percs_window_claim_index(hfi, req->window);
	if (idx >= 0 && percs_window_polled(w)) {
		ret = percs_poll_start(hfi);
		if (ret) {
			__clear_bit(idx, hfi->claimed);
			idx = ret;
		}
	}
	mutex_unlock(&hfi->lock);
	if (idx < 0) {
		ret = idx;
		goto out_fd;
	}
	w->index = idx;
	/* Each HFI window draws its own pseudo-random route choices. */
	fm_route_cursor_init(&w->cursor, percs_window_gid(w) + 1);
	file = anon_inode_getfile("[percs-window]", &percs_window_fops, w,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto out_unclaim;
	}
	/* The file owns w now: its release undoes the rest. */
	req->fd = fd;
	req->job_key = w->job_key;
	percs_window_describe(w, req);
	if (copy_to_user(ureq, req, min_t(size_t, usize, sizeof(*req)))) {
		ret = -EFAULT;
		goto out_fput;
	}

	mutex_lock(&hfi->lock);
	__clear_bit(idx, hfi->claimed);
	rcu_assign_pointer(hfi->windows[idx], w);
	WRITE_ONCE(hfi->in_use, hfi->in_use + 1);
	if (percs_window_polled(w))
		list_add_tail_rcu(&w->poll_node, &hfi->poll_list);
	if (w->flags & PERCS_WINDOW_F_POLL)
		WRITE_ONCE(hfi->nr_poll_strict, hfi->nr_poll_strict + 1);
	mutex_unlock(&hfi->lock);
	/* A sleeping engine would not see the new window: wake it. */
	if (percs_window_polled(w))
		percs_poll_kick(hfi);
	fd_install(fd, file);
	return fd;

out_fput:
	/* The release gives the claimed index back, once it is done. */
	fput(file);
	put_unused_fd(fd);
	return ret;
out_unclaim:
	mutex_lock(&hfi->lock);
	__clear_bit(idx, hfi->claimed);
	mutex_unlock(&hfi->lock);
out_fd:
	put_unused_fd(fd);
out_destroy:
	percs_window_destroy(w);
	return ret;
out_regions:
	percs_window_free_regions(w);
out_free:
	percs_quota_uncharge(pd, w->quota, PERCS_QUOTA_WINDOWS);
	kfree(w);
	return ret;
}

/* Unpublish, fence off and tear down a window, then free it. */
static void percs_window_teardown(struct percs_window *w)
{
	struct percs_hfi *hfi = w->hfi;

	/* Unpublish: no new lookup finds the window. */
	mutex_lock(&hfi->lock);
	if (rcu_access_pointer(hfi->windows[w->index]) == w) {
		RCU_INIT_POINTER(hfi->windows[w->index], NULL);
		WRITE_ONCE(hfi->in_use, hfi->in_use - 1);
		if (percs_window_polled(w))
			list_del_rcu(&w->poll_node);
		if (w->flags & PERCS_WINDOW_F_POLL)
			WRITE_ONCE(hfi->nr_poll_strict,
				   hfi->nr_poll_strict - 1);
	} else {
		/*
		 * Never published (its reservation failed in its answer):
		 * the index stayed claimed until now, so no other window
		 * took it while this one was torn down.
		 */
		__clear_bit(w->index, hfi->claimed);
	}
	mutex_unlock(&hfi->lock);

	/* Fence off every user of the regions still holding a pointer. */
	spin_lock(&w->send_lock);
	w->dead = true;
	spin_unlock(&w->send_lock);
	spin_lock(&w->recv_lock);
	w->recv_dead = true;
	spin_unlock(&w->recv_lock);
	percs_flight_discard(w);
	percs_engine_unblock(w);
	/* Abort its RDMA operations; their segments in flight land or go. */
	percs_rdma_window_fini(w);
	/* Its remote completions still to come: nobody can read them. */
	percs_landed_window_fini(w);
	/* Its atomics: outstanding ones dropped, what it remembers as target. */
	percs_amo_window_fini(w);
	/* Its trees end; the other members are told. */
	percs_cau_window_fini(w);
	/* Unpin what the window registered (transfers in flight keep theirs). */
	percs_mr_window_fini(w);

	percs_window_destroy(w);
}

static int percs_window_release(struct inode *inode, struct file *file)
{
	percs_window_teardown(file->private_data);
	return 0;
}

/**
 * percs_window_create_kernel() - reserve a window for a kernel client
 * @hfi: the HFI
 * @job: the client's job (percs_job_create_kernel()); the window holds
 *	a reference on it until it is released
 *
 * As a reservation with the smallest FIFOs, published at once, with no
 * file: percs_window_destroy_kernel() releases it.  Its rings are never
 * mapped; packets of other jobs never reach it (percs_window_may_send_to()).
 *
 * Return: the window, or ERR_PTR(-ENOSPC, -EDQUOT, -ENOMEM).
 */
struct percs_window *percs_window_create_kernel(struct percs_hfi *hfi,
						struct percs_job *job)
{
	struct percs_window_reserve req = {
		.send_fifo_size = PERCS_FIFO_MIN_SIZE,
		.recv_fifo_size = PERCS_FIFO_MIN_SIZE,
	};
	struct percs_dev *pd = hfi->pd;
	struct percs_user *quota;
	struct percs_window *w;
	int idx, ret;

	quota = percs_quota_charge(pd, PERCS_QUOTA_WINDOWS);
	if (IS_ERR(quota))
		return ERR_CAST(quota);
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w) {
		percs_quota_uncharge(pd, quota, PERCS_QUOTA_WINDOWS);
		return ERR_PTR(-ENOMEM);
	}
	percs_window_init(w, hfi, quota, PERCS_WINDOW_F_KERNEL);
	ret = percs_window_alloc_regions(w, &req);
	if (ret) {
		percs_quota_uncharge(pd, quota, PERCS_QUOTA_WINDOWS);
		kfree(w);
		return ERR_PTR(ret);
	}
	percs_job_join_kernel(job, w);
	w->pid = get_task_pid(current, PIDTYPE_TGID);
	atomic_inc(&pd->live_windows);

	mutex_lock(&hfi->lock);
	idx = percs_window_claim_index(hfi, PERCS_WINDOW_ANY);
	if (idx >= 0) {
		w->index = idx;
		fm_route_cursor_init(&w->cursor, percs_window_gid(w) + 1);
		__clear_bit(idx, hfi->claimed);
		rcu_assign_pointer(hfi->windows[idx], w);
		WRITE_ONCE(hfi->in_use, hfi->in_use + 1);
	}
	mutex_unlock(&hfi->lock);
	if (idx < 0) {
		percs_window_destroy(w);
		return ERR_PTR(idx);
	}
	return w;
}

/**
 * percs_window_destroy_kernel() - release a window of
 *	percs_window_create_kernel()
 * @w: the window; its client sends nothing on it any more
 */
void percs_window_destroy_kernel(struct percs_window *w)
{
	percs_window_teardown(w);
}

/**
 * percs_window_kick() - the doorbell: PERCS_IOC_KICK, fsync(2)
 * @w: the window
 * @flags: PERCS_KICK_F_*, at least one
 *
 * Kick mode runs the engine for @w in the caller's context; poll mode
 * wakes the HFI's polling engine; auto mode runs it here and then lets the
 * polling engine take the window back (percs_poll_auto_kick()).  Every
 * call counts in the window's &percs_status.kicks.
 *
 * Return: packets moved (0 in poll mode or without SEND and IMM), or
 * -EINVAL (a trigger beyond what the FIFO holds), -EINTR (a fatal signal
 * before anything moved).
 */
int percs_window_kick(struct percs_window *w, unsigned int flags)
{
	int ret;

	if (flags & PERCS_KICK_F_CREDIT)
		percs_engine_credit(w);
	/* A kick that runs the engine counts itself in its first pass. */
	if (w->flags & PERCS_WINDOW_F_POLL) {
		percs_engine_count_kick(w);
		percs_poll_kick(w->hfi);
		return 0;
	}
	if (!(flags & (PERCS_KICK_F_SEND | PERCS_KICK_F_IMM))) {
		percs_engine_count_kick(w);
		return 0;
	}
	ret = percs_engine_kick(w, flags);
	/* Auto: the work is done here; the thread may take over again. */
	if (w->flags & PERCS_WINDOW_F_AUTO)
		percs_poll_auto_kick(w->hfi);
	return ret;
}

/*
 * The indices are read under the locks their producers hold, so a waiter
 * queued by poll_wait() is either seen by the producer's waitqueue check
 * or sees the new index (see percs_fifo_unlock()).
 */
static __poll_t percs_window_poll(struct file *file, poll_table *wait)
{
	struct percs_window *w = file->private_data;
	u64 recv_tail, cq_tail, send_head;
	__poll_t mask = 0;

	poll_wait(file, &w->wq, wait);
	spin_lock(&w->recv_lock);
	recv_tail = w->recv_tail;
	spin_unlock(&w->recv_lock);
	spin_lock(&w->cq_lock);
	cq_tail = w->cq_tail;
	spin_unlock(&w->cq_lock);
	spin_lock(&w->send_lock);
	send_head = w->send_head;
	spin_unlock(&w->send_lock);

	if (recv_tail != READ_ONCE(w->db->recv_head) ||
	    cq_tail != READ_ONCE(w->db->cq_head))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(w->db->send_tail) - send_head < w->send.units)
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (READ_ONCE(w->st->flags) & PERCS_STATUS_ERROR)
		mask |= EPOLLERR;
	return mask;
}

/*
 * fsync(2)/fdatasync(2): the cheap doorbell, an entry point of the uAPI
 * (PERCS_KICK_FSYNC in the uAPI header).  "Flush what I composed to the
 * device" is what a kick means, and this entry point skips the LSM ioctl
 * hooks that make PERCS_IOC_KICK twice as expensive as a bare system call.
 * Same as PERCS_IOC_KICK with PERCS_KICK_FSYNC; returns 0 or -errno.
 */
static int percs_window_fsync(struct file *file, loff_t start, loff_t end,
			      int datasync)
{
	int ret;

	ret = percs_window_kick(file->private_data, PERCS_KICK_FSYNC);
	return ret < 0 ? ret : 0;
}

const struct file_operations percs_window_fops = {
	.owner = THIS_MODULE,
	.release = percs_window_release,
	.unlocked_ioctl = percs_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = percs_window_mmap,
	.poll = percs_window_poll,
	.fsync = percs_window_fsync,
	.llseek = noop_llseek,
};

/**
 * percs_window_query() - PERCS_IOC_WINDOW_QUERY
 * @hfi: the HFI
 * @q: in: the window index; out: its state
 *
 * Another user's window is %PERCS_WSTATE_HIDDEN: its key, owner and
 * traffic are not shown (percs_job_visible()).
 *
 * Return: 0, -ENOENT for a free window, -EINVAL for a bad request.
 */
int percs_window_query(struct percs_hfi *hfi, struct percs_window_query *q)
{
	u32 window = q->window, size = q->size;
	struct percs_window *w;

	if (q->flags)
		return -EINVAL;
	if (window >= hfi->pd->windows_per_hfi)
		return -EINVAL;
	/* Answer from a clean slate; size stays as the caller gave it. */
	memset(q, 0, sizeof(*q));
	q->size = size;
	q->window = window;

	mutex_lock(&hfi->lock);
	w = rcu_dereference_protected(hfi->windows[window],
				      lockdep_is_held(&hfi->lock));
	if (!w) {
		mutex_unlock(&hfi->lock);
		q->state = PERCS_WSTATE_FREE;
		return -ENOENT;
	}
	q->wflags = w->flags;
	q->send_fifo_size = w->region_len[PERCS_REGION_SEND_FIFO];
	q->recv_fifo_size = w->region_len[PERCS_REGION_RECV_FIFO];
	if (!percs_job_visible(w)) {
		mutex_unlock(&hfi->lock);
		q->state = PERCS_WSTATE_HIDDEN;
		return 0;
	}
	q->state = PERCS_WSTATE_ACTIVE;
	q->job_key = w->job_key;
	q->pid = pid_vnr(w->pid);
	q->uid = from_kuid_munged(current_user_ns(), w->uid);
	q->packets_sent = READ_ONCE(w->st->packets_sent);
	q->packets_received = READ_ONCE(w->st->packets_received);
	q->send_errors = READ_ONCE(w->st->send_errors);
	q->send_blocked = READ_ONCE(w->st->send_blocked);
	q->sent_polled = READ_ONCE(w->st->sent_polled);
	q->sent_kicked = READ_ONCE(w->st->sent_kicked);
	q->kicks = READ_ONCE(w->st->kicks);
	mutex_unlock(&hfi->lock);
	return 0;
}
