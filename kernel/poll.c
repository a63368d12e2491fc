// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the per-HFI polling engine (the io_uring SQPOLL model) and the
 * hybrid "auto" mode built on it.
 *
 * The thread polls the doorbells of its HFI's poll- and auto-mode windows.
 * After poll_idle_us without work it sets PERCS_STATUS_NEED_WAKEUP in every
 * such window, issues a full barrier, looks once more and sleeps.  User
 * space stores its trigger, issues a full barrier and kicks only if it sees
 * the flag; one side always sees the other's store, so no trigger is
 * missed.  Each awake pass over a window clears the flag again, so a window
 * whose flag is clear has been passed over by a thread that was awake.
 *
 * Auto mode adds two things.  The thread steps aside, as if idle, when
 * another task has waited for its CPU (single_task_running(), as KVM's halt
 * polling does) for %PERCS_AUTO_CONTEND_US and no poll-mode window needs
 * it, after looking for an idle CPU by moving to each other online CPU in
 * turn: on a machine with as many busy processes as CPUs it would only
 * take a CPU from the process it serves.  Kicks of auto windows run the engine in the caller's context
 * and wake the thread again, at most once per %PERCS_AUTO_RETRY_US after it
 * stepped aside (doubling up to %PERCS_AUTO_RETRY_MAX_US while every
 * wake-up finds no CPU), so it comes back when a CPU is free.  And every pass
 * beats (&percs_status.poll_beat): a thread that was preempted or parked
 * without setting the flag shows it by a beat that stops, and the library
 * then kicks (Documentation/design.rst, "Engine modes").
 */
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>

#include "percs.h"

static int percs_poll_pass(struct percs_hfi *hfi, unsigned int extra)
{
	struct percs_window *w;
	int moved = 0, ret;

	rcu_read_lock();
	list_for_each_entry_rcu(w, &hfi->poll_list, poll_node) {
		ret = percs_engine_run(w, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM |
				       PERCS_ENGINE_F_POLLER | extra);
		if (ret > 0)
			moved += ret;
	}
	rcu_read_unlock();
	return moved;
}

static void percs_poll_need_wakeup(struct percs_hfi *hfi)
{
	struct percs_window *w;

	rcu_read_lock();
	list_for_each_entry_rcu(w, &hfi->poll_list, poll_node) {
		spin_lock(&w->send_lock);
		if (!w->dead)
			percs_status_set(w, PERCS_STATUS_NEED_WAKEUP);
		spin_unlock(&w->send_lock);
	}
	rcu_read_unlock();
}

static bool percs_poll_should_wake(struct percs_hfi *hfi)
{
	return atomic_read(&hfi->poll_wake) || kthread_should_stop() ||
	       kthread_should_park();
}

/*
 * Announce NEED_WAKEUP, look once more, sleep until kicked.  @aside: the
 * thread leaves its CPU to another task; it sleeps even if the last look
 * found work (that look did it), so it does not fight for the CPU.
 */
static void percs_poll_sleep(struct percs_hfi *hfi, bool aside)
{
	atomic_set(&hfi->poll_wake, 0);
	WRITE_ONCE(hfi->poll_aside_ns, aside ? ktime_get_ns() : 0);
	percs_poll_need_wakeup(hfi);
	smp_mb();	/* pairs with the barrier after the user's trigger */
	if (!percs_poll_pass(hfi, PERCS_ENGINE_F_SLEEPING) || aside)
		wait_event_interruptible(hfi->poll_wq,
					 percs_poll_should_wake(hfi));
	WRITE_ONCE(hfi->poll_aside_ns, 0);
}

/*
 * Another task wants this CPU: move to the next online CPU, once per CPU
 * in one search (@tries counts them).  A woken thread is placed on the CPU
 * it last ran on, or its waker's: without this it would step aside on the
 * busy CPU of the process it serves while another CPU idles.  The thread
 * is bound to the new CPU only for the move: then it may run anywhere
 * again, so that the scheduler's balancing may move it on.
 * Return: true if the thread moved (look again there).
 */
static bool percs_poll_move(unsigned int *tries)
{
	int cpu, ret;

	if (++*tries >= num_online_cpus())
		return false;
	cpu = cpumask_next_wrap(raw_smp_processor_id(), cpu_online_mask,
				raw_smp_processor_id(), false);
	if (cpu >= nr_cpu_ids)
		return false;
	ret = set_cpus_allowed_ptr(current, cpumask_of(cpu));
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	return !ret;
}

/*
 * Another task wants the CPU and no other CPU was free: true once that has
 * lasted %PERCS_AUTO_CONTEND_US since *@since (0: not contended before).
 */
static bool percs_poll_contended(ktime_t *since)
{
	ktime_t now = ktime_get();

	if (!*since)
		*since = now;
	return ktime_us_delta(now, *since) >= PERCS_AUTO_CONTEND_US;
}

static int percs_poll_thread(void *data)
{
	struct percs_hfi *hfi = data;
	unsigned int tries = 0, retry_us = PERCS_AUTO_RETRY_US;
	ktime_t last_work = ktime_get(), contended = 0;

	while (!kthread_should_stop()) {
		if (kthread_should_park()) {
			kthread_parkme();
			last_work = ktime_get();
			continue;
		}
		if (!READ_ONCE(hfi->nr_poll_strict) &&
		    !single_task_running()) {
			if (percs_poll_move(&tries))
				continue;
			if (percs_poll_contended(&contended)) {
				tries = 0;
				contended = 0;
				/* Each wake-up that finds no CPU waits twice as long. */
				WRITE_ONCE(hfi->poll_retry_us, retry_us);
				retry_us = min(2 * retry_us,
					       PERCS_AUTO_RETRY_MAX_US);
				percs_poll_sleep(hfi, true);
				last_work = ktime_get();
				continue;
			}
			/* serve the window meanwhile; cond_resched() below */
		} else {
			tries = 0;
			contended = 0;
			retry_us = PERCS_AUTO_RETRY_US;
		}
		if (percs_poll_pass(hfi, 0)) {
			last_work = ktime_get();
			cond_resched();
			continue;
		}
		if (ktime_us_delta(ktime_get(), last_work) <
		    READ_ONCE(percs_poll_idle_us)) {
			cond_resched();
			continue;
		}
		percs_poll_sleep(hfi, false);
		last_work = ktime_get();
	}
	return 0;
}

/**
 * percs_poll_start() - start the HFI's polling engine if it is not running
 * @hfi: the HFI; the caller holds hfi->lock
 *
 * A thread started while the poll_park knob is set starts parked.
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
	if (READ_ONCE(hfi->pd->poll_park) && !kthread_park(t))
		hfi->poll_parked = true;
	return 0;
}

/**
 * percs_poll_stop() - stop the HFI's polling engine (module unload)
 * @hfi: the HFI; no window is left
 *
 * A parked thread is stopped too (kthread_stop() unparks it).
 */
void percs_poll_stop(struct percs_hfi *hfi)
{
	if (hfi->poll_thread) {
		kthread_stop(hfi->poll_thread);
		hfi->poll_thread = NULL;
		hfi->poll_parked = false;
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

/**
 * percs_poll_auto_kick() - an auto-mode window was kicked: wake the
 *	polling engine unless it stepped aside less than its retry delay ago
 * @hfi: the HFI
 *
 * The kick itself has run the engine in the caller's context; waking the
 * thread only lets it take the window back if it finds a CPU to itself.
 * The delay (%PERCS_AUTO_RETRY_US, doubled for each wake-up in a row that
 * found no CPU, up to %PERCS_AUTO_RETRY_MAX_US) bounds what a thread that
 * finds none costs the others.
 */
void percs_poll_auto_kick(struct percs_hfi *hfi)
{
	u64 aside = READ_ONCE(hfi->poll_aside_ns);

	if (atomic_read(&hfi->poll_wake))
		return;
	if (aside && ktime_get_ns() - aside <
	    (u64)READ_ONCE(hfi->poll_retry_us) * NSEC_PER_USEC)
		return;
	percs_poll_kick(hfi);
}

/**
 * percs_poll_park_set() - park or unpark every HFI's polling engine
 *	(the debugfs poll_park knob, for the tests)
 * @pd: the system
 * @park: true to park
 *
 * A parked thread neither polls nor beats nor sleeps: to the windows it is
 * a thread that has lost its CPU.  Poll-mode windows stall until it is
 * unparked; auto-mode windows fall back to kicks.  Threads started while
 * the knob is set start parked.
 *
 * Return: 0, or the -errno of kthread_park().
 */
int percs_poll_park_set(struct percs_dev *pd, bool park)
{
	int ret = 0;
	u32 i;

	mutex_lock(&pd->poll_park_lock);
	/* Read under hfi->lock by percs_poll_start(): set before the walk. */
	WRITE_ONCE(pd->poll_park, park);
	for (i = 0; i < pd->nr_hfis; i++) {
		struct percs_hfi *hfi = &pd->hfis[i];

		mutex_lock(&hfi->lock);
		if (hfi->poll_thread && hfi->poll_parked != park) {
			if (park) {
				ret = kthread_park(hfi->poll_thread);
				hfi->poll_parked = !ret;
			} else {
				kthread_unpark(hfi->poll_thread);
				hfi->poll_parked = false;
			}
		}
		mutex_unlock(&hfi->lock);
		if (ret)
			break;
	}
	mutex_unlock(&pd->poll_park_lock);
	return ret;
}
