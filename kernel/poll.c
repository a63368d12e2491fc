// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the per-HFI polling engine (the io_uring SQPOLL model).
 *
 * The thread polls the doorbells of its HFI's poll-mode windows.  After
 * poll_idle_us without work it sets PERCS_STATUS_NEED_WAKEUP in every such
 * window, issues a full barrier, looks once more and sleeps.  User space
 * stores its trigger, issues a full barrier and kicks only if it sees the
 * flag; one side always sees the other's store, so no trigger is missed.
 */
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>

#include "percs.h"

static int percs_poll_pass(struct percs_hfi *hfi)
{
	struct percs_window *w;
	int moved = 0, ret;

	rcu_read_lock();
	list_for_each_entry_rcu(w, &hfi->poll_list, poll_node) {
		ret = percs_engine_run(w, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
		if (ret > 0)
			moved += ret;
	}
	rcu_read_unlock();
	return moved;
}

static void percs_poll_need_wakeup(struct percs_hfi *hfi, bool set)
{
	struct percs_window *w;

	rcu_read_lock();
	list_for_each_entry_rcu(w, &hfi->poll_list, poll_node) {
		spin_lock(&w->send_lock);
		if (!w->dead) {
			if (set)
				percs_status_set(w, PERCS_STATUS_NEED_WAKEUP);
			else
				percs_status_clear(w, PERCS_STATUS_NEED_WAKEUP);
		}
		spin_unlock(&w->send_lock);
	}
	rcu_read_unlock();
}

static int percs_poll_thread(void *data)
{
	struct percs_hfi *hfi = data;
	ktime_t last_work = ktime_get();

	while (!kthread_should_stop()) {
		if (percs_poll_pass(hfi)) {
			last_work = ktime_get();
			cond_resched();
			continue;
		}
		if (ktime_us_delta(ktime_get(), last_work) <
		    READ_ONCE(percs_poll_idle_us)) {
			cond_resched();
			continue;
		}

		atomic_set(&hfi->poll_wake, 0);
		percs_poll_need_wakeup(hfi, true);
		smp_mb();	/* pairs with the barrier after the user's trigger */
		if (!percs_poll_pass(hfi))
			wait_event_interruptible(hfi->poll_wq,
						 atomic_read(&hfi->poll_wake) ||
						 kthread_should_stop());
		percs_poll_need_wakeup(hfi, false);
		last_work = ktime_get();
	}
	return 0;
}

/**
 * percs_poll_start() - start the HFI's polling engine if it is not running
 * @hfi: the HFI; the caller holds hfi->lock
 *
 * Return: 0 or -errno.
 */
int percs_poll_start(struct percs_hfi *hfi)
{
	struct task_struct *t;

	lockdep_assert_held(&hfi->lock);
	if (hfi->poll_thread)
		return 0;
	t = kthread_run(percs_poll_thread, hfi, "percs-poll/%u", hfi->id);
	if (IS_ERR(t))
		return PTR_ERR(t);
	hfi->poll_thread = t;
	return 0;
}

/**
 * percs_poll_stop() - stop the HFI's polling engine (module unload)
 * @hfi: the HFI; no window is left
 */
void percs_poll_stop(struct percs_hfi *hfi)
{
	if (hfi->poll_thread) {
		kthread_stop(hfi->poll_thread);
		hfi->poll_thread = NULL;
	}
}

/**
 * percs_poll_kick() - wake the HFI's polling engine
 * @hfi: the HFI
 */
void percs_poll_kick(struct percs_hfi *hfi)
{
	atomic_set(&hfi->poll_wake, 1);
	wake_up(&hfi->poll_wq);
}
