/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs: internal definitions shared by the files of the module.
 *
 * Object model: one &struct percs_dev (the emulated system) owns
 * nr_hubs * 2 &struct percs_hfi; each HFI owns an RCU-protected table of
 * &struct percs_window.  A window lives as long as its file.
 *
 * Locks.  Every lock of percs.ko and percs_verbs.ko, outermost first: a
 * lock is only ever taken while holding locks listed above it (never one
 * below it while holding it), and those marked "leaf" take no other lock
 * of this table inside.  "(xa)" is an xarray's own spinlock.  Context:
 * nothing is taken in hard irq context.  "process" means process context
 * only (syscalls, kthreads, work items; the delayed works are the timers:
 * flight flush, atomic retransmission, CAU tree resends, clock recal,
 * verbs RNR retry).  "any" means also with other spinlocks held and from
 * RCU callbacks (softirq).
 *
 *  lock                    kind      protects                      context
 *  ----------------------  --------  ----------------------------  -------
 *  percs_clock_active_lock mutex     which clock the recal_ms knob process
 *   (clock.c)                        drives; taken before c->lock
 *                                    (it waits for the work that
 *                                    takes c->lock)
 *  clock ctl->lock         mutex     the clock page's rewrites      process
 *   (clock.c)                        (recalibration); leaf
 *  pd->poll_park_lock      mutex     the poll_park debugfs knob's   process
 *   (poll.c)                         writers; hfi->lock inside it
 *  hfi->lock               mutex     reservation and release, the   process
 *                                    window table, the poll list,
 *                                    starting and parking the
 *                                    polling thread; never held
 *                                    with pd->cau.lock
 *  pd->cau.lock            mutex     CAU tree set-up and ending     process
 *                                    (cau.c), pd->cau.used; inside
 *                                    it: pd->cau.trees (xa), a
 *                                    member's send_lock (its
 *                                    -ECONNRESET entry), t->lock
 *  verbs qp->sq_lock       spin      a QP's send queue and state    process
 *   (percs_verbs.ko)                 (verbs.h); inside it: its own
 *                                    and peers' rq_lock, SRQ lock,
 *                                    pv_rnr_lock, CQ locks, and a
 *                                    window's send_lock through
 *                                    percs_kapi_xfer()
 *  verbs qp->rq_lock       spin      a QP's receive queue (taken    process
 *                                    by senders to take a receive,
 *                                    after the QP's own sq_lock when
 *                                    both are held); leaf
 *  verbs srq->lock         spin      an SRQ's receives and limit;   process
 *                                    leaf
 *  verbs pv_rnr_lock       spin      the QPs waiting for a receive  process
 *   (send.c)                         (RNR); leaf
 *  verbs cq->lock          spin      a verbs CQ's ring and arming;  process
 *                                    leaf (the completion handler
 *                                    runs after it is dropped)
 *  w->send_lock            spin      a window's send side:          process
 *                                    immediate slots, send FIFO,
 *                                    RDMA operations, landed
 *                                    tickets, its atomics' channels
 *                                    and slots, its CQ's producer
 *                                    for its own completions; the
 *                                    engine runs a pass under it
 *  t->lock (cau_tree.h)    spin      one CAU tree's slots, held     process
 *                                    transfers, multicasts and
 *                                    member state; taken by a
 *                                    member's engine under its
 *                                    send_lock, under pd->cau.lock,
 *                                    or by the tree's work; inside
 *                                    it: members' recv_lock (results
 *                                    written) and amo.lock (their
 *                                    engines woken)
 *  w->amo.rx_lock          spin      the target side of atomics:    process
 *                                    its initiators' sequence
 *                                    numbers and stored replies
 *                                    (peers (xa)); taken under the
 *                                    initiator's send_lock (a
 *                                    request delivered in its pass)
 *                                    or with none; the reply may be
 *                                    delivered before it is dropped:
 *                                    inside it pd->dgram.lock and
 *                                    the initiator's amo.lock
 *  w->recv_lock            spin      a window's receive FIFO, the   process
 *                                    packets the network holds for
 *                                    it (flight list), its arrival
 *                                    counters; taken under a
 *                                    sender's send_lock, a tree's
 *                                    lock, or with none (flight
 *                                    flush, release); inside it:
 *                                    the window's cq_lock (RDMA
 *                                    target entries), users_lock
 *                                    (a registration released)
 *  w->cq_lock              spin      the window's CQ producer       process
 *                                    (cq_tail); inside send_lock
 *                                    (own completions) or recv_lock
 *                                    (RDMA target entries); leaf
 *  w->amo.lock             spin      an initiator's busy slots and  process
 *                                    the outcome of its operations
 *                                    (set by replies, read by its
 *                                    engine); leaf
 *  pd->blocked_lock        spin      the windows waiting for a      process
 *                                    full target (pd->blocked);
 *                                    inside send_lock or alone; leaf
 *  pd->dgram.lock          spin      datagrams the network holds    process
 *                                    back (net.c); leaf
 *  pd->isr.lock            seqlock   link states; written (a leaf)  process
 *                                    by the debugfs link controls,
 *                                    read with retries, no lock
 *                                    taken, wherever a route is
 *                                    chosen
 *  w->mrs (xa)             spin      a window's registrations       process
 *                                    (nmmu.c); lookups take none
 *                                    (RCU and the registration's
 *                                    refcount); leaf
 *  w->amo.chans (xa),      spin      the atomics' channels (under   process
 *   w->amo.peers (xa)                send_lock) and peers (under
 *                                    rx_lock), GFP_ATOMIC; leaf
 *  pd->jobs (xa),          spin      the job table (job.c), the     process
 *   pd->cau.trees (xa)               tree table (cau.c: under
 *                                    pd->cau.lock); lookups take
 *                                    none (RCU); leaf
 *  pd->users_lock          spin,irq  the per-user quota entries     any
 *                                    (quota.c): a registration's
 *                                    last reference may drop in any
 *                                    context, with any of the locks
 *                                    above held; leaf
 *
 * The order was checked against every place that holds two of them;
 * the notable chains are send_lock -> t->lock -> recv_lock -> cq_lock
 * (a collective result), send_lock -> amo.rx_lock -> amo.lock (a
 * request answered at once), and pd->cau.lock -> t->lock -> amo.lock
 * (a tree ending).  Nothing takes a sender's send_lock under a
 * receiver's lock: remote completions (landed.c) and RDMA initiator
 * entries (rdma.c) go through work items instead.
 * A window's mapped regions are touched only under send_lock (send side)
 * or recv_lock (receive side) after checking w->dead, so release can free
 * them once it has set dead under both locks; the struct itself is freed
 * after an RCU grace period because lookups happen under rcu_read_lock().
 * The clock region is not the window's: it is the one page of clock.c,
 * freed at module unload (a mapping holds the window file, and so the
 * module).
 */
#ifndef _PERCS_H
#define _PERCS_H

#include <linux/types.h>
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/seqlock.h>
#include <linux/wait.h>
#include <linux/rcupdate.h>
#include <linux/list.h>
#include <linux/xarray.h>
#include <linux/uidgid.h>
#include <linux/atomic.h>
#include <linux/workqueue.h>
#include <linux/random.h>
#include <linux/percs.h>

#include "firmware-model/atomic.h"
#include "firmware-model/topology.h"
#include "params.h"

/**
 * percs_chance() - the fault knobs' draw: true @ppm times in a million
 * @ppm: 0 .. %PERCS_PPM_MAX
 */
static inline bool percs_chance(u32 ppm)
{
	return unlikely(ppm) && get_random_u32_below(PERCS_PPM_MAX) < ppm;
}

struct percs_dev;
struct percs_window;
struct percs_mr;
struct percs_clock_ctl;
struct percs_knob_file;
struct percs_user;
struct percs_job;

/**
 * enum percs_quota - the per-user quotas (quota.c)
 * @PERCS_QUOTA_WINDOWS: windows reserved
 * @PERCS_QUOTA_MRS: memory registrations
 * @PERCS_QUOTA_CAU_TREES: CAU trees created
 * @PERCS_QUOTA_JOBS: jobs created
 * @PERCS_QUOTA_NR: how many there are
 */
enum percs_quota {
	PERCS_QUOTA_WINDOWS,
	PERCS_QUOTA_MRS,
	PERCS_QUOTA_CAU_TREES,
	PERCS_QUOTA_JOBS,
	PERCS_QUOTA_NR,
};

/**
 * struct percs_hfi_stats - per-CPU packet counters of one HFI
 * @packets: packets sent, by route class (enum fm_route_class)
 * @amo_issued: atomic descriptors sent by its windows
 * @amo_completed: their completion entries posted
 * @amo_abandoned: outstanding ones freed with their window
 */
struct percs_hfi_stats {
	u64 packets[PERCS_NR_ROUTE_CLASSES];
	u64 amo_issued;
	u64 amo_completed;
	u64 amo_abandoned;
};

/**
 * struct percs_hfi - one emulated Host Fabric Interface
 * @pd: the system it belongs to
 * @id: global HFI number, hub * 2 + unit (the minor number)
 * @hub: hub number
 * @unit: unit within the hub
 * @cdev: the character device
 * @dev: the device in class percs (sysfs attributes)
 * @lock: serialises reservation, release and the poll list
 * @windows: window table, RCU-protected, written under @lock
 * @in_use: windows reserved
 * @claimed: indices taken by a reservation that is answering its caller
 *	and not yet published, under @lock
 * @poll_list: windows in poll and auto mode, RCU list written under @lock
 * @nr_poll_strict: windows in poll mode (not auto) on @poll_list, written
 *	under @lock; while there are any the thread never steps aside
 * @poll_thread: the polling engine, started with the first poll or auto
 *	window
 * @poll_parked: @poll_thread is parked (debugfs poll_park), under @lock
 * @poll_wq: where the polling engine sleeps
 * @poll_wake: set by a kick to wake the polling engine
 * @poll_aside_ns: ktime (ns) at which the engine last stepped aside
 *	because another task wanted its CPU, 0 while it runs or sleeps idle;
 *	auto-mode kicks wake it again only @poll_retry_us later
 * @poll_retry_us: that delay, written by the engine
 * @stats: packets sent from this HFI by route class, per CPU
 */
struct percs_hfi {
	struct percs_dev *pd;
	u32 id;
	u32 hub;
	u32 unit;
	struct cdev cdev;
	struct device *dev;
	struct mutex lock;
	struct percs_window __rcu **windows;
	u32 in_use;
	unsigned long *claimed;
	struct list_head poll_list;
	u32 nr_poll_strict;
	struct task_struct *poll_thread;
	bool poll_parked;
	wait_queue_head_t poll_wq;
	atomic_t poll_wake;
	u64 poll_aside_ns;
	u32 poll_retry_us;
	struct percs_hfi_stats __percpu *stats;
};

/**
 * struct percs_flight - the network stage: packets held in flight
 * @reorder_ppm: chance per million that a packet is held (debugfs knob)
 * @reorder_depth: a held packet is overtaken by 1..@reorder_depth later
 *	packets to its target (debugfs knob)
 * @hold_us: and written after at most this long (debugfs knob)
 * @live: packets held now, all windows
 * @held: packets ever held
 * @discarded: held packets freed because their target went away
 * @flush: writes the packets whose hold time ran out
 */
struct percs_flight {
	u32 reorder_ppm;
	u32 reorder_depth;
	u32 hold_us;
	atomic_t live;
	atomic64_t held;
	atomic64_t discarded;
	struct delayed_work flush;
};

/* The kinds of enum percs_net_kind (net.h) */
#define PERCS_NET_KINDS	4
struct percs_net_handler;

/**
 * struct percs_net - the network layer's delivery table (net.c)
 * @handlers: per packet kind, its receiving end
 * @refused: per packet kind, packets its handler refused
 */
struct percs_net {
	const struct percs_net_handler *handlers[PERCS_NET_KINDS];
	atomic64_t refused[PERCS_NET_KINDS];
};

/**
 * struct percs_dgram_net - the lossy stage of the end-to-end reliable
 *	protocols (net.c): atomic requests and replies
 * @drop_ppm: chance per million that a datagram is lost (debugfs knob)
 * @dup_ppm: chance per million that it arrives twice (debugfs knob)
 * @lock: protects @held
 * @held: datagrams the network delays (reorder knob), due at a deadline
 * @nr_held: entries of @held, read without the lock
 * @dropped: datagrams lost on purpose
 * @duplicated: datagrams delivered twice on purpose
 * @delayed: datagrams held back
 */
struct percs_dgram_net {
	u32 drop_ppm;
	u32 dup_ppm;
	spinlock_t lock;
	struct list_head held;
	atomic_t nr_held;
	atomic64_t dropped;
	atomic64_t duplicated;
	atomic64_t delayed;
};

/**
 * struct percs_amo_stats - atomics over the whole system (atomic.c); the
 *	per-descriptor counts are per HFI and CPU (&struct percs_hfi_stats)
 * @retransmits: requests sent again after a timeout
 * @duplicates: requests that arrived for an applied sequence number and
 *	were answered from the stored reply
 * @stale: requests or replies that arrived too late to matter, ignored
 * @timeouts: operations that ran out of retransmissions
 */
struct percs_amo_stats {
	atomic64_t retransmits;
	atomic64_t duplicates;
	atomic64_t stale;
	atomic64_t timeouts;
};

/**
 * struct percs_cau_sys - the hubs' Collective Acceleration Units (cau.c)
 * @lock: serialises tree set-up and ending
 * @trees: tree id -> &struct percs_cau_tree
 * @next_id: the next id to try (ids are not reused soon)
 * @per_hub: tree entries of each hub's CAU (module parameter cau_trees)
 * @used: per hub, entries taken
 */
struct percs_cau_sys {
	struct mutex lock;
	struct xarray trees;
	u32 next_id;
	u32 per_hub;
	u32 *used;
};

/**
 * struct percs_link_dir_stats - counters of one direction of a link
 * @packets: packets that crossed it
 * @flits: their flits, by virtual channel
 * @replays: transmissions repeated after an injected transient error
 * @drops: datagrams of the reliable protocols lost on it on purpose
 */
struct percs_link_dir_stats {
	u64 packets;
	u64 flits[FM_L_VCS];
	u64 replays;
	u64 drops;
};

/**
 * struct percs_link_stats - counters of one link, per CPU
 * @dir: by direction, 0 from the lower hub number to the higher
 */
struct percs_link_stats {
	struct percs_link_dir_stats dir[2];
};

/**
 * struct percs_route_ctrs - the link counters of one route, found once
 * @nr_hops: the route's hops
 * @hop: per hop: the per-CPU counters of the direction it crosses its
 *	link in, the link, the virtual channel
 */
struct percs_route_ctrs {
	u8 nr_hops;
	struct {
		struct percs_link_dir_stats __percpu *st;
		u32 link;
		u8 vc;
	} hop[FM_MAX_HOPS];
};

/**
 * struct percs_isr - the network's state in the module (isr.c)
 * @lock: link state changes write, routing reads (and retries)
 * @stats: per link, per-CPU counters
 * @error_ppm: per link, injected transient errors per million
 *	transmissions
 */
struct percs_isr {
	seqlock_t lock;
	struct percs_link_stats __percpu **stats;
	u32 *error_ppm;
};

/**
 * struct percs_dev - the emulated system
 * @topo: topology (firmware model)
 * @windows_per_hfi: windows of each HFI
 * @nr_hfis: nr_hubs * 2
 * @hfis: the HFIs
 * @devt: first device number
 * @class: device class "percs"
 * @blocked_lock: protects @blocked
 * @blocked: windows whose send FIFO waits for a full target
 * @retry_gen: generation of the latest retry of blocked senders
 * @jobs: job key -> struct percs_job (job.c)
 * @next_job_key: where the cyclic key allocation goes on
 * @live_windows: windows allocated and not yet freed
 * @live_mappings: VMAs mapping a window region
 * @live_mrs: memory registrations not yet released (nmmu.c)
 * @live_pinned_pages: pages they hold pinned
 * @nmmu_wq: releases registrations whose last user was in atomic context
 * @debugfs: debugfs directory
 * @clock: the global clock (clock.c)
 * @flight: the network stage, packets held in flight (net.c)
 * @dgram: the lossy stage of atomic requests and replies (net.c)
 * @net: the delivery table of the network layer (net.c)
 * @amo: atomics counters (atomic.c)
 * @window_inst: windows ever reserved: each one's instance number
 * @cau: the CAUs and their trees (cau.c)
 * @knobs: the debugfs fault knobs' files (debugfs.c)
 * @isr: routing state, link states and counters (isr.c)
 * @users_lock: protects @users and @nr_users (quota.c)
 * @users: per-user quota entries, hashed by uid
 * @nr_users: entries of @users
 * @poll_park_lock: serialises writers of the poll_park knob
 * @poll_park: the polling threads are to be parked (debugfs poll_park),
 *	written under @poll_park_lock, read under an hfi->lock
 */
struct percs_dev {
	struct fm_topology topo;
	u32 windows_per_hfi;
	u32 nr_hfis;
	struct percs_hfi *hfis;
	dev_t devt;
	struct class *class;
	spinlock_t blocked_lock;
	struct list_head blocked;
	atomic64_t retry_gen;
	struct xarray jobs;
	u32 next_job_key;
	atomic_t live_windows;
	atomic_t live_mappings;
	atomic_t live_mrs;
	atomic_long_t live_pinned_pages;
	struct workqueue_struct *nmmu_wq;
	struct dentry *debugfs;
	struct percs_clock_ctl *clock;
	struct percs_flight flight;
	struct percs_dgram_net dgram;
	struct percs_net net;
	struct percs_amo_stats amo;
	atomic64_t window_inst;
	struct percs_cau_sys cau;
	struct percs_knob_file *knobs;
	struct percs_isr isr;
	spinlock_t users_lock;
	struct hlist_head users[1 << PERCS_USERS_HASH_BITS];
	unsigned int nr_users;
	struct mutex poll_park_lock;
	bool poll_park;
};

/**
 * struct percs_ring - a circular buffer of 128-byte units
 * @base: kernel address (vmalloc_user memory, mapped to user space)
 * @units: size in units, a power of two
 */
struct percs_ring {
	u8 *base;
	u32 units;
};

/**
 * struct percs_route_cache - a window's last direct or sw_indirect route
 * @route: the route
 * @scratch: the last route of a hardware mode (not cached)
 * @hub: its destination hub
 * @mode: its route mode
 * @arg: its route argument (the sw_indirect supernode)
 * @extra_hops: hops beyond the direct route's
 * @generation: the topology's link-state generation it was computed in
 * @valid: the entry holds an answer
 * @pend_packets: packets delivered on @route not yet counted on its links
 * @pend_flits: their flits
 */
struct percs_route_cache {
	struct fm_route route;
	struct fm_route scratch;
	u32 hub;
	u8 mode;
	u8 extra_hops;
	u16 arg;
	u32 generation;
	bool valid;
	u32 pend_packets;
	u64 pend_flits;
};

struct percs_amo_op;
struct percs_amo_chan;

/**
 * struct percs_amo_routes - the direct routes to one hub and back
 * @hub: the other end
 * @gen: the topology's link-state generation they were computed in
 * @valid: computed, and neither was missing
 * @fwd: to @hub
 * @back: from @hub
 */
struct percs_amo_routes {
	u32 hub;
	u32 gen;
	bool valid;
	struct percs_route_ctrs fwd;
	struct percs_route_ctrs back;
};

/**
 * struct percs_amo_win - a window's atomics, as initiator and as target
 * @lock: protects @busy and the outcome of the operations (set by
 *	replies from any context, read by the engine)
 * @dead: set under @lock at release: no work is queued after it
 * @slot: the operations' memory, allocated at a slot's first use and kept
 *	until release (a kmalloc per operation would zero it every time)
 * @busy: the slots holding an outstanding operation; changed under the
 *	window's send_lock and @lock
 * @nr: bits set in @busy (send_lock)
 * @next_slot: where the search for a free slot starts (send_lock)
 * @chans: target window gid -> &struct percs_amo_chan, the sequence
 *	numbers to that target (send_lock)
 * @last_chan: the channel used last (send_lock), or NULL
 * @last_gid: its target's gid
 * @direct: the descriptor the lossless path decodes into (send_lock)
 * @routes: the lossless path's direct routes to the hub it sent to last
 *	and back, as their link counters (send_lock)
 * @work: runs the engine when a reply arrived from elsewhere, and as the
 *	retransmission timer
 * @rx_lock: the target side: @peers and what they remember
 * @rx_dead: set under @rx_lock at release
 * @peers: initiator window gid -> &struct percs_amo_peer, the sequence
 *	numbers applied for it and their replies
 */
struct percs_amo_win {
	spinlock_t lock;
	bool dead;
	struct percs_amo_op *slot[PERCS_ATOMIC_MAX_OPS];
	DECLARE_BITMAP(busy, PERCS_ATOMIC_MAX_OPS);
	u32 nr;
	u32 next_slot;
	struct xarray chans;
	struct percs_amo_chan *last_chan;
	u32 last_gid;
	struct fm_atomic_desc direct;
	struct percs_amo_routes routes;
	struct delayed_work work;
	spinlock_t rx_lock;
	bool rx_dead;
	struct xarray peers;
};

/**
 * struct percs_window - one HFI window
 * @hfi: owning HFI
 * @index: index in @hfi
 * @flags: PERCS_WINDOW_F_* given at reservation
 * @job: the job the window joined at reservation (job.c)
 * @job_key: its key, copied for the packet paths
 * @uid: effective uid of the reserving process
 * @pid: the reserving process (for queries)
 * @quota: the user the window is charged to (quota.c)
 * @regions: kernel addresses of the mapped regions, by percs_region_id
 * @region_len: their sizes in bytes
 * @db: the doorbell page (user-written: read once per use)
 * @st: the status page (kernel-written)
 * @cq: the completion ring
 * @send: the send FIFO
 * @recv: the receive FIFO
 * @imm: the immediate-send slots
 * @send_lock: see the locking rules at the top of this file
 * @dead: set under both send_lock and recv_lock when the window is released
 * @send_head: kernel's send FIFO position (published in @st)
 * @send_tail: last valid trigger value seen
 * @imm_head: kernel's immediate slot position
 * @cq_lock: the CQ producer (see the locking rules)
 * @cq_tail: completion entries posted, under @cq_lock
 * @rdma_ops: RDMA operations posted and not completed, in posting order
 *	(rdma.c), under @send_lock
 * @nr_rdma: entries of @rdma_ops
 * @landed: tickets of this window's packets held in the network with a
 *	remote completion asked (landed.c), under @send_lock
 * @route: the last route the firmware model gave (send side)
 * @cursor: the HFI's round-robin and pseudo-random route choices
 * @recv_lock: serialises deliveries into @recv
 * @recv_dead: @dead as seen under recv_lock
 * @recv_tail: kernel's receive FIFO position (published in @st)
 * @recv_head: last valid credit seen
 * @arrivals: packets the network brought to this window (written or held)
 * @flight: packets held in the network for this target (net.c)
 * @nr_flight: entries of @flight (read without the lock by the flush work)
 * @blocked_node: entry in pd->blocked while @blocked_on is valid
 * @blocked_on: global window id the send FIFO waits for
 * @retry_gen: the last retry that took this window (under blocked_lock)
 * @poll_node: entry in hfi->poll_list
 * @poll_beat: the polling thread's passes over the window (published in
 *	@st), under @send_lock
 * @sent_polled: descriptors the polling thread consumed, under @send_lock
 * @sent_kicked: descriptors consumed in a kick or a work item, same
 * @kicks: kick and fsync system calls on the window, same
 * @wq: poll(2) waiters
 * @mrs: memory registrations by handle slot (nmmu.c); each entry holds a
 *	reference to its &struct percs_mr
 * @mr_gen: registrations made, the generation part of new handles
 * @mr_tlb: the translation cache: registrations looked up last, by handle
 *	slot (nmmu.c)
 * @mr_inval_lock: orders the reports of ended registrations in @st and
 *	their notifiers' state (nmmu_notify.c)
 * @mr_inval_count: registrations reported ended (published in @st)
 * @mr_inval_pending: teardown work items queued and not yet done
 * @inst: this window's instance, unique over the module's life: a
 *	packet meant for an earlier window with the same address is told apart
 * @amo: atomics (atomic.c)
 * @rcu: frees the struct after readers are gone
 *
 * The members are grouped by who writes them, each group from the start
 * of a cache line: what is set at reservation (read by this window's
 * engine and by every sender that delivers here), the send side (this
 * window's engine passes), the receive side (the senders that deliver
 * here, under @recv_lock), then the completions and what the packet paths
 * do not touch.  A line that one CPU writes and another reads moves
 * between their caches at every packet of a ping-pong.
 */
struct percs_window {
	/*
	 * Written at reservation, read by this window's engine and by every
	 * sender that delivers here: no line of it is written per packet.
	 */
	struct percs_hfi *hfi;
	u32 index;
	u32 flags;
	struct percs_job *job;
	u32 job_key;
	kuid_t uid;
	struct pid *pid;
	struct percs_user *quota;

	void *regions[PERCS_REGION_MAX];
	u32 region_len[PERCS_REGION_MAX];
	struct percs_doorbell *db;
	struct percs_status *st;
	struct percs_cqe *cq;
	struct percs_ring send;
	struct percs_ring recv;
	struct percs_ring imm;
	wait_queue_head_t wq;

	/* The send side: written by this window's engine passes only. */
	spinlock_t send_lock ____cacheline_aligned_in_smp;
	bool dead;
	u64 send_head;
	u64 send_tail;
	u64 imm_head;
	u64 poll_beat;
	u64 sent_polled;
	u64 sent_kicked;
	u64 kicks;
	struct list_head blocked_node;
	u32 blocked_on;
	u64 retry_gen;
	struct list_head rdma_ops;
	u32 nr_rdma;
	struct list_head landed;
	struct percs_route_cache route;
	struct fm_route_cursor cursor;

	/* The receive side: written by the senders that deliver here. */
	spinlock_t recv_lock ____cacheline_aligned_in_smp;
	bool recv_dead;
	u64 recv_tail;
	u64 recv_head;
	u64 arrivals;
	struct list_head flight;
	u32 nr_flight;

	/* Both sides (completions), and what the packet paths do not touch. */
	spinlock_t cq_lock ____cacheline_aligned_in_smp;
	u64 cq_tail;
	struct list_head poll_node;
	struct xarray mrs;
	atomic_t mr_gen;
	struct percs_mr __rcu *mr_tlb[PERCS_MR_TLB_ENTRIES];
	spinlock_t mr_inval_lock;
	u64 mr_inval_count;
	atomic_t mr_inval_pending;
	u64 inst;
	struct percs_amo_win amo;
	struct rcu_head rcu;
};

/**
 * percs_window_polled() - does the HFI's polling thread serve the window
 * @w: the window
 *
 * Return: true in poll and auto mode.
 */
static inline bool percs_window_polled(const struct percs_window *w)
{
	return w->flags & (PERCS_WINDOW_F_POLL | PERCS_WINDOW_F_AUTO);
}

/* A window's global id: unique over the system, for the blocked list. */
static inline u32 percs_window_gid(const struct percs_window *w)
{
	return w->hfi->id * w->hfi->pd->windows_per_hfi + w->index;
}

/**
 * percs_window_job_allows() - the isolation rule: what a window accepts
 * @dst: target window (of a packet, an RDMA transfer, an atomic, a tree)
 * @job_key: the job key the request carries
 *
 * The one place the rule is written: every path that lets one window act
 * on another asks here (or through percs_window_may_send_to()).
 *
 * Return: 0, or -EACCES when @dst belongs to another job.
 */
static inline int percs_window_job_allows(const struct percs_window *dst,
					  u32 job_key)
{
	return dst->job_key == job_key ? 0 : -EACCES;
}

/**
 * percs_window_may_send_to() - the isolation rule for packets
 * @src: sending window
 * @dst: target window
 *
 * Return: 0, or -EACCES when the windows belong to different jobs.
 */
static inline int percs_window_may_send_to(const struct percs_window *src,
					   const struct percs_window *dst)
{
	return percs_window_job_allows(dst, src->job_key);
}

/**
 * percs_window_lookup_rcu() - find the target window of a packet
 * @pd: the system
 * @a: the destination address
 * @err: set to the send error when no window is returned
 *
 * Caller holds rcu_read_lock(); the window may be dying: check recv_dead
 * under its recv_lock before touching its regions.
 *
 * Return: the window, or NULL with @err set.
 */
static inline struct percs_window *
percs_window_lookup_rcu(struct percs_dev *pd, const struct percs_addr *a,
			int *err)
{
	struct percs_window *t;

	if (a->hub >= pd->topo.nr_hubs || a->hfi >= PERCS_HFIS_PER_HUB) {
		*err = -EHOSTUNREACH;
		return NULL;
	}
	if (a->window >= pd->windows_per_hfi) {
		*err = -EADDRNOTAVAIL;
		return NULL;
	}
	t = rcu_dereference(pd->hfis[a->hub * PERCS_HFIS_PER_HUB +
				     a->hfi].windows[a->window]);
	if (!t)
		*err = -ECONNREFUSED;
	return t;
}

/**
 * percs_window_lookup_gid_rcu() - find a window by global id
 * @pd: the system
 * @gid: as percs_window_gid()
 *
 * Caller holds rcu_read_lock().  Return: the window or NULL.
 */
static inline struct percs_window *
percs_window_lookup_gid_rcu(struct percs_dev *pd, u32 gid)
{
	u32 hfi = gid / pd->windows_per_hfi;

	if (hfi >= pd->nr_hfis)
		return NULL;
	return rcu_dereference(pd->hfis[hfi].windows[gid % pd->windows_per_hfi]);
}

/**
 * percs_copy() - copy packet bytes between FIFOs and slots
 * @dst: destination, 8-byte aligned
 * @src: source, 8-byte aligned
 * @len: bytes
 *
 * FIFO units and slots are 128-byte aligned, so whole 64-bit words move
 * most of a packet.  The kernel's memcpy() is "rep movsb" on CPUs with
 * ERMS, which emulators such as QEMU TCG execute a byte at a time; plain
 * word moves are as fast as memcpy on hardware and 7x faster there.
 */
static inline void percs_copy(void *dst, const void *src, size_t len)
{
	u64 *d = dst;
	const u64 *s = src;
	size_t words = len / 8;
	u8 *db;
	const u8 *sb;

	for (; words >= 4; words -= 4, d += 4, s += 4) {
		u64 a = s[0], b = s[1], c = s[2], e = s[3];

		d[0] = a;
		d[1] = b;
		d[2] = c;
		d[3] = e;
	}
	for (; words; words--)
		*d++ = *s++;
	db = (u8 *)d;
	sb = (const u8 *)s;
	for (len &= 7; len; len--)
		*db++ = *sb++;
}

static inline void *percs_ring_unit(const struct percs_ring *r, u64 pos)
{
	return r->base + (size_t)(pos & (r->units - 1)) * PERCS_FLIT_SIZE;
}

/* Status flags are set from several contexts; the page is read-only to
 * user space, so atomic read-modify-write on it is safe.
 */
static inline void percs_status_set(struct percs_window *w, u32 bits)
{
	atomic_or(bits, (atomic_t *)&w->st->flags);
}

static inline void percs_status_clear(struct percs_window *w, u32 bits)
{
	atomic_andnot(bits, (atomic_t *)&w->st->flags);
}

void percs_window_error(struct percs_window *w, int err);

extern unsigned int percs_poll_idle_us;

/* ioctl.c: the uAPI's front door, every percs file's unlocked_ioctl */
long percs_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* hfi.c */
extern const struct file_operations percs_hfi_fops;
int percs_hfi_init_all(struct percs_dev *pd);
void percs_hfi_exit_all(struct percs_dev *pd);

/* window.c */
extern const struct file_operations percs_window_fops;
int percs_window_kick(struct percs_window *w, unsigned int flags);
int percs_window_reserve(struct percs_hfi *hfi,
			 struct percs_window_reserve *req,
			 struct percs_window_reserve __user *ureq, u32 usize);
int percs_window_query(struct percs_hfi *hfi, struct percs_window_query *q);
struct percs_window *percs_window_create_kernel(struct percs_hfi *hfi,
						struct percs_job *job);
void percs_window_destroy_kernel(struct percs_window *w);

/* mmap.c */
int percs_window_mmap(struct file *file, struct vm_area_struct *vma);
u64 percs_region_key(unsigned int region);
bool percs_region_writable(unsigned int region);
bool percs_region_shared(unsigned int region);

/* clock.c */
int percs_clock_init(struct percs_dev *pd);
void percs_clock_exit(struct percs_dev *pd);
void *percs_clock_page(struct percs_dev *pd);

/* fifo.c: the receive side */
void percs_fifo_unlock(struct percs_window *t) __releases(&t->recv_lock);
int percs_fifo_put(struct percs_window *t, const struct percs_pkt_hdr *h,
		   const void *payload);

/* net.c: the network layer (the delivery table is in net.h) */
/* percs_net_send(): held, with a ticket for the remote completion */
#define PERCS_FIFO_HELD	1
int percs_net_send(struct percs_window *t, const struct percs_pkt_hdr *h,
		   const void *payload, unsigned int extra_hops,
		   struct percs_window *from, u8 cqe_flags);

/* isr.c: topology, routes, links */
int percs_isr_init(struct percs_dev *pd, const char *spec);
void percs_isr_exit(struct percs_dev *pd);
const struct fm_route *percs_isr_route_ref(struct percs_window *w,
					   const struct percs_pkt_hdr *h,
					   unsigned int *extra_hops,
					   int *route_class);
int percs_isr_route(struct percs_window *w, const struct percs_pkt_hdr *h,
		    struct fm_route *route, unsigned int *extra_hops);
void percs_isr_count(struct percs_dev *pd, const struct fm_route *r,
		     u32 units);
void percs_isr_flush(struct percs_dev *pd, struct percs_route_cache *rc);
void percs_isr_ctrs_init(struct percs_dev *pd, const struct fm_route *r,
			 struct percs_route_ctrs *c);
void percs_isr_count_replays(struct percs_link_dir_stats __percpu *st,
			     u32 ppm);
void percs_isr_count_n(struct percs_dev *pd, const struct fm_route *r,
		       u32 packets, u64 flits);
int percs_isr_set_link(struct percs_dev *pd, u32 id, bool up);
int percs_isr_set_error_ppm(struct percs_dev *pd, u32 id, u32 ppm);
void percs_isr_link_stats(struct percs_dev *pd, u32 id,
			  struct percs_link_stats *sum);
int percs_isr_route_hubs(struct percs_dev *pd, u32 src_hub, u32 dst_hub,
			 struct fm_route *r);
void percs_isr_count_drop(struct percs_dev *pd, const struct fm_route *r);

/* net.c: packets held in flight */
unsigned int percs_flight_should_hold(struct percs_dev *pd);
int percs_flight_hold(struct percs_window *t, const struct percs_pkt_hdr *h,
		      const void *payload, unsigned int overtakers,
		      struct percs_window *from, u8 cqe_flags);

/* landed.c: remote completions of held FIFO and immediate packets */
struct percs_landed;
struct percs_landed *percs_landed_new(struct percs_window *w,
				      const struct percs_pkt_hdr *h,
				      u8 cqe_flags);
void percs_landed_done(struct percs_landed *l, int res);
void percs_landed_progress(struct percs_window *w, int *moved);
void percs_landed_window_fini(struct percs_window *w);
void percs_flight_release(struct percs_window *t, u64 now);
void percs_flight_kick(struct percs_window *t);
void percs_flight_discard(struct percs_window *t);
void percs_flight_arm(struct percs_dev *pd);
void percs_flight_init(struct percs_dev *pd);
void percs_flight_exit(struct percs_dev *pd);

/* net.c: RDMA segments held in flight */
struct percs_rdma_track;
int percs_flight_hold_seg(struct percs_window *t, struct percs_mr *dst,
			  u64 daddr, struct percs_mr *src, u64 saddr,
			  const void *buf, u32 len,
			  struct percs_rdma_track *track,
			  unsigned int overtakers);

/* rdma.c */
int percs_rdma_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		    const u8 *ext_and_payload);
bool percs_rdma_progress(struct percs_window *w, int *moved);
void percs_rdma_track_hold(struct percs_mr *dst,
			   struct percs_rdma_track *track);
void percs_rdma_window_init(struct percs_window *w);
void percs_rdma_window_fini(struct percs_window *w);
void percs_rdma_exit(struct percs_dev *pd);

/* atomic.c */
int percs_amo_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		   const u8 *payload);
bool percs_amo_progress(struct percs_window *w, int *moved);
void percs_amo_window_init(struct percs_window *w);
void percs_amo_window_fini(struct percs_window *w);
void percs_amo_counts(struct percs_dev *pd, u64 *issued, u64 *completed,
		      u64 *outstanding);

/* cau.c: collective trees */
int percs_cau_init(struct percs_dev *pd, unsigned int per_hub);
void percs_cau_exit(struct percs_dev *pd);
int percs_cau_create(struct percs_window *w, struct percs_cau_create *req,
		     struct percs_cau_create __user *ureq);
int percs_cau_join(struct percs_window *w, const struct percs_cau_tree_op *req);
int percs_cau_destroy(struct percs_window *w,
		      const struct percs_cau_tree_op *req);
void percs_cau_window_fini(struct percs_window *w);
unsigned int percs_cau_count(struct percs_dev *pd);
struct seq_file;
void percs_cau_show(struct seq_file *m, struct percs_dev *pd);

/**
 * struct percs_fate - what the lossy stage does with one datagram
 * @copies: how many arrive: 0 (lost), 1, or 2 (duplicated)
 * @hold_ns: per copy, how long the network holds it back (0: not at all)
 */
struct percs_fate {
	unsigned int copies;
	u64 hold_ns[2];
};

/* net.c: the lossy stage of the reliable protocols */
void percs_dgram_fate(struct percs_dev *pd, const struct fm_route *r,
		      struct percs_fate *f);
void percs_dgram_init(struct percs_dev *pd);
void percs_dgram_exit(struct percs_dev *pd);
void percs_dgram_release(struct percs_dev *pd, struct percs_window *self);

/* cq.c */
void percs_cq_post(struct percs_window *w, u64 user_data, int res, u8 kind,
		   u8 flags);

/*
 * engine.c: the send side.  PERCS_ENGINE_F_DRAIN, beside the
 * PERCS_KICK_F_* flags of a pass: read no descriptors, only move on the
 * transfers posted (percs_engine_next_flags()).
 */
#define PERCS_ENGINE_F_DRAIN	(1U << 31)
/*
 * PERCS_ENGINE_F_POLLER: the pass is the polling thread's: beat, count its
 * sends as polled and clear NEED_WAKEUP; with PERCS_ENGINE_F_SLEEPING too
 * it is the last look before the thread sleeps, which leaves the flag set.
 */
#define PERCS_ENGINE_F_POLLER	(1U << 30)
#define PERCS_ENGINE_F_SLEEPING	(1U << 29)
/*
 * PERCS_ENGINE_F_KICK: the first pass of a kick system call, which counts
 * it in &percs_status.kicks under the send lock it takes anyway.
 */
#define PERCS_ENGINE_F_KICK	(1U << 28)
int percs_engine_run(struct percs_window *w, unsigned int kick_flags);
int percs_engine_kick(struct percs_window *w, unsigned int kick_flags);
bool percs_engine_wake_step(struct percs_window *w, unsigned int kick_flags,
			    unsigned int *passes);
void percs_engine_wake(struct percs_dev *pd, u32 gid);
void percs_engine_credit(struct percs_window *w);
void percs_engine_count_kick(struct percs_window *w);
void percs_engine_unblock(struct percs_window *w);

/* poll.c */
int percs_poll_start(struct percs_hfi *hfi);
void percs_poll_stop(struct percs_hfi *hfi);
void percs_poll_kick(struct percs_hfi *hfi);
void percs_poll_auto_kick(struct percs_hfi *hfi);
int percs_poll_park_set(struct percs_dev *pd, bool park);

/* quota.c */
struct percs_user *percs_quota_charge(struct percs_dev *pd,
				      enum percs_quota q);
void percs_quota_uncharge(struct percs_dev *pd, struct percs_user *u,
			  enum percs_quota q);
unsigned int percs_quota_users(struct percs_dev *pd);
void percs_quota_init(struct percs_dev *pd);

/* job.c */
extern const struct file_operations percs_job_fops;
int percs_job_create(struct percs_dev *pd, struct percs_job_create *req,
		     struct percs_job_create __user *ureq, u32 usize);
int percs_job_query(struct percs_job *job, struct percs_job_query *q);
int percs_job_join(struct percs_dev *pd, int job_fd, struct percs_window *w);
void percs_job_leave(struct percs_window *w);
bool percs_job_visible(const struct percs_window *w);
unsigned int percs_job_count(struct percs_dev *pd);
void percs_job_init(struct percs_dev *pd);
void percs_job_exit(struct percs_dev *pd);
struct percs_job *percs_job_create_kernel(struct percs_dev *pd);
void percs_job_join_kernel(struct percs_job *job, struct percs_window *w);
void percs_job_put_kernel(struct percs_job *job);
u32 percs_job_key(const struct percs_job *job);

/* kapi.c: the interface of kernel clients (kapi.h) */
void percs_kapi_init(struct percs_dev *pd);
void percs_kapi_exit(void);

/* debugfs.c */
void percs_debugfs_init(struct percs_dev *pd);
void percs_debugfs_hfi_init(struct percs_dev *pd);
void percs_debugfs_exit(struct percs_dev *pd);

/*
 * selftest.c: test code, built with PERCS_TEST=1 only (Kbuild); without it
 * the module has no load-time self-check and no isr/route_cost.
 */
struct dentry;
#ifdef PERCS_TEST
int percs_test_nmmu_selfcheck(struct percs_dev *pd);
void percs_test_debugfs_init(struct percs_dev *pd, struct dentry *isr);
#else
static inline int percs_test_nmmu_selfcheck(struct percs_dev *pd)
{
	return 0;
}

static inline void percs_test_debugfs_init(struct percs_dev *pd,
					   struct dentry *isr)
{
}
#endif

/**
 * percs_isr_ctrs_count() - percs_isr_count() on counters found beforehand
 * @pd: the system
 * @c: the route's counters (percs_isr_ctrs_init())
 * @units: the packet's flits
 */
static inline void percs_isr_ctrs_count(struct percs_dev *pd,
					const struct percs_route_ctrs *c,
					u32 units)
{
	unsigned int i;

	for (i = 0; i < c->nr_hops; i++) {
		u32 ppm = READ_ONCE(pd->isr.error_ppm[c->hop[i].link]);

		this_cpu_inc(c->hop[i].st->packets);
		this_cpu_add(c->hop[i].st->flits[c->hop[i].vc], units);
		if (unlikely(ppm))
			percs_isr_count_replays(c->hop[i].st, ppm);
	}
}

/**
 * percs_isr_count_later() - count a delivered packet on its route's links
 * @w: the sending window (under its send_lock)
 * @r: the route percs_isr_route_ref() gave
 * @units: the packet's flits
 *
 * A packet on the window's cached route is counted by percs_isr_flush() at
 * the end of the pass, with the others of the pass; any other at once.
 */
static inline void percs_isr_count_later(struct percs_window *w,
					 const struct fm_route *r, u32 units)
{
	struct percs_route_cache *rc = &w->route;

	if (r == &rc->route) {
		rc->pend_packets++;
		rc->pend_flits += units;
	} else {
		percs_isr_count(w->hfi->pd, r, units);
	}
}

#endif /* _PERCS_H */
