// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the Collective Acceleration Units - collective trees, their
 * set-up and their end.
 *
 * Every hub has one CAU with a table of pd->cau.per_hub entries (module
 * parameter cau_trees); a tree takes one entry on each of its hubs.  A
 * tree is one &struct percs_cau_tree: its members (one window per hub,
 * each with its parent), found by id in pd->cau.trees.  Everything here
 * runs in process context under pd->cau.lock, a mutex: creation checks
 * the whole member list before it takes any entry; the end of a tree
 * (PERCS_IOC_CAU_DESTROY, or the release of a member window) gives every
 * other live member a completion entry with -ECONNRESET.
 *
 * Collectives on the trees are coll.c's.
 */
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "cau_tree.h"

/* The member of @t that window @w is, or -1. */
static int percs_cau_member_of(const struct percs_cau_tree *t,
			       const struct percs_window *w)
{
	u32 gid = percs_window_gid(w);
	unsigned int i;

	for (i = 0; i < t->nr; i++)
		if (t->node[i].gid == gid && t->node[i].inst == w->inst)
			return i;
	return -1;
}

/*
 * Check one member's address and find its window: Return 0, or the errno
 * a packet to that address would get.
 */
static int percs_cau_check_window(struct percs_dev *pd,
				  const struct percs_window *caller,
				  const struct percs_cau_member *m,
				  struct percs_cau_node *n)
{
	struct percs_window *t;
	int err;

	if (m->reserved || m->win.reserved)
		return -EINVAL;
	rcu_read_lock();
	t = percs_window_lookup_rcu(pd, &m->win, &err);
	if (t)
		err = percs_window_may_send_to(caller, t);
	if (!err) {
		n->gid = percs_window_gid(t);
		n->inst = t->inst;
		n->hub = t->hfi->hub;
	}
	rcu_read_unlock();
	return err;
}

/*
 * The shape: one root, parents in range, no cycle, at most
 * %PERCS_CAU_MAX_CHILDREN children each, one member per hub.
 */
static int percs_cau_check_shape(struct percs_cau_tree *t,
				 const struct percs_cau_member *m, u32 *kids)
{
	unsigned int i, j, roots = 0, steps;
	s32 p;

	for (i = 0; i < t->nr; i++) {
		if (m[i].parent == PERCS_CAU_ROOT) {
			roots++;
			t->node[i].parent = -1;
			continue;
		}
		if (m[i].parent >= t->nr)
			return -EINVAL;
		if (m[i].parent == i)
			return -ELOOP;
		t->node[i].parent = m[i].parent;
		if (++kids[m[i].parent] > PERCS_CAU_MAX_CHILDREN)
			return -EMLINK;
	}
	if (roots != 1)
		return -EINVAL;
	/* From every member the root is reached in fewer than nr steps. */
	for (i = 0; i < t->nr; i++) {
		for (p = t->node[i].parent, steps = 0; p >= 0 && steps < t->nr;
		     p = t->node[p].parent)
			steps++;
		if (p >= 0)
			return -ELOOP;
	}
	for (i = 0; i < t->nr; i++)
		for (j = i + 1; j < t->nr; j++)
			if (t->node[i].hub == t->node[j].hub)
				return -EEXIST;
	return 0;
}

/*
 * Every member window still there, under the lock: a member released
 * after its check in percs_cau_check_window() but before the tree is
 * published would never end the tree (its release has looked already).
 * A release that comes later finds the tree and ends it.
 */
static int percs_cau_members_live(struct percs_dev *pd,
				  const struct percs_cau_tree *t)
{
	struct percs_window *w;
	unsigned int i;
	int err = 0;

	lockdep_assert_held(&pd->cau.lock);
	rcu_read_lock();
	for (i = 0; !err && i < t->nr; i++) {
		w = percs_window_lookup_gid_rcu(pd, t->node[i].gid);
		if (!w || w->inst != t->node[i].inst)
			err = -ECONNREFUSED;
	}
	rcu_read_unlock();
	return err;
}

/* Take an entry on every member hub's CAU, or none: -ENOSPC. */
static int percs_cau_take_entries(struct percs_dev *pd,
				  const struct percs_cau_tree *t)
{
	unsigned int i;

	lockdep_assert_held(&pd->cau.lock);
	for (i = 0; i < t->nr; i++)
		if (pd->cau.used[t->node[i].hub] >= pd->cau.per_hub)
			return -ENOSPC;
	for (i = 0; i < t->nr; i++)
		pd->cau.used[t->node[i].hub]++;
	return 0;
}

/* Tell member @i of @t, if its window is still there, that @t ended. */
static void percs_cau_notify(struct percs_dev *pd,
			     const struct percs_cau_tree *t, unsigned int i)
{
	struct percs_window *w;

	rcu_read_lock();
	w = percs_window_lookup_gid_rcu(pd, t->node[i].gid);
	if (w && w->inst == t->node[i].inst) {
		spin_lock(&w->send_lock);
		if (!w->dead)
			percs_cq_post(w, t->id, -ECONNRESET, PERCS_PKT_COLL, 0);
		spin_unlock(&w->send_lock);
	}
	rcu_read_unlock();
}

/*
 * End @t: its entries free, every member but @quiet told (with @quiet
 * -2, none: a tree whose creation failed was never known).
 */
static void percs_cau_end(struct percs_dev *pd, struct percs_cau_tree *t,
			  int quiet)
{
	unsigned int i;

	lockdep_assert_held(&pd->cau.lock);
	xa_erase(&pd->cau.trees, t->id);
	/* Told first: a descriptor woken by the end fails after this entry. */
	for (i = 0; i < t->nr; i++) {
		pd->cau.used[t->node[i].hub]--;
		if (quiet != -2 && (int)i != quiet)
			percs_cau_notify(pd, t, i);
	}
	percs_coll_tree_fini(t);
	percs_quota_uncharge(pd, t->quota, PERCS_QUOTA_CAU_TREES);
	t->quota = NULL;
	/* Engine passes may still look it up (RCU): they find it dead. */
	kvfree_rcu(t, rcu);
}

/**
 * percs_cau_create() - PERCS_IOC_CAU_CREATE
 * @w: the calling window, which must be a member
 * @req: the request (kernel copy)
 * @ureq: the caller's copy, for the answer
 *
 * Return: 0 with @req->tree set; -EINVAL for unknown flags, a non-zero
 * @req->tree or reserved field, @nr_members 0 or above
 * %PERCS_CAU_MAX_MEMBERS, no root or several, a parent index out of range;
 * -EFAULT for an unreadable member array or an unwritable answer; the
 * packet errnos for a member address (-EHOSTUNREACH, -EADDRNOTAVAIL,
 * -ECONNREFUSED: no such hub/HFI, window index, window not reserved);
 * -EACCES for a window of another job key; -ELOOP for a cycle; -EMLINK for
 * a member with more than %PERCS_CAU_MAX_CHILDREN children; -EEXIST for two
 * members on one hub; -EPERM when the caller is not a member; -ENOSPC
 * when a member hub's CAU has no free entry; -EDQUOT when the caller's
 * user has created max_cau_trees_per_user trees that still exist; -ENOMEM.
 */
int percs_cau_create(struct percs_window *w, struct percs_cau_create *req,
		     struct percs_cau_create __user *ureq)
{
	struct percs_dev *pd = w->hfi->pd;
	struct percs_cau_member *m;
	struct percs_cau_tree *t;
	unsigned int i;
	u32 id, *kids;
	int err, me;

	if (req->flags & ~PERCS_CAU_F_ALL || req->tree || !req->nr_members ||
	    req->nr_members > PERCS_CAU_MAX_MEMBERS)
		return -EINVAL;
	m = memdup_user(u64_to_user_ptr(req->members),
			array_size(req->nr_members, sizeof(*m)));
	if (IS_ERR(m))
		return PTR_ERR(m);
	t = kvzalloc(struct_size(t, node, req->nr_members),
		     GFP_KERNEL_ACCOUNT);
	kids = kcalloc(req->nr_members, sizeof(*kids), GFP_KERNEL_ACCOUNT);
	err = t && kids ? 0 : -ENOMEM;
	if (err)
		goto out;
	t->quota = percs_quota_charge(pd, PERCS_QUOTA_CAU_TREES);
	if (IS_ERR(t->quota)) {
		err = PTR_ERR(t->quota);
		t->quota = NULL;
		goto out;
	}
	t->flags = req->flags;
	t->job_key = w->job_key;
	t->nr = req->nr_members;
	t->pd = pd;
	for (i = 0; !err && i < t->nr; i++)
		err = percs_cau_check_window(pd, w, &m[i], &t->node[i]);
	if (!err)
		err = percs_cau_check_shape(t, m, kids);
	me = err ? -1 : percs_cau_member_of(t, w);
	if (!err && me < 0)
		err = -EPERM;
	if (!err)
		err = percs_coll_tree_init(t, kids);
	if (err)
		goto out;
	t->node[me].joined = true;

	mutex_lock(&pd->cau.lock);
	err = percs_cau_members_live(pd, t);
	if (!err)
		err = percs_cau_take_entries(pd, t);
	if (!err) {
		err = xa_alloc_cyclic(&pd->cau.trees, &id, t, xa_limit_32b,
				      &pd->cau.next_id, GFP_KERNEL_ACCOUNT);
		if (err < 0) {
			for (i = 0; i < t->nr; i++)
				pd->cau.used[t->node[i].hub]--;
		} else {
			err = 0;
			t->id = id;
			req->tree = id;
		}
	}
	mutex_unlock(&pd->cau.lock);
	if (!err) {
		/* Not under the lock: the copy may fault and wait. */
		if (copy_to_user(&ureq->tree, &req->tree, sizeof(req->tree))) {
			/* Nobody knew the id: end it quietly, if still there. */
			mutex_lock(&pd->cau.lock);
			if (xa_load(&pd->cau.trees, id) == t)
				percs_cau_end(pd, t, -2);
			mutex_unlock(&pd->cau.lock);
			err = -EFAULT;
		}
		t = NULL;
	}
out:
	if (t && t->ring)
		percs_coll_tree_fini(t);
	if (t)
		percs_quota_uncharge(pd, t->quota, PERCS_QUOTA_CAU_TREES);
	kfree(kids);
	kvfree(t);
	kfree(m);
	return err;
}

/* The tree @id with @w as a member (its index in *@me), under the lock. */
static struct percs_cau_tree *percs_cau_find(struct percs_window *w, u32 id,
					     int *me)
{
	struct percs_dev *pd = w->hfi->pd;
	struct percs_cau_tree *t;

	lockdep_assert_held(&pd->cau.lock);
	t = xa_load(&pd->cau.trees, id);
	if (!t)
		return ERR_PTR(-ENOENT);
	*me = percs_cau_member_of(t, w);
	return *me < 0 ? ERR_PTR(-EPERM) : t;
}

/* Engine passes read @joined under the tree's lock. */
static void percs_cau_set_joined(struct percs_cau_tree *t, int me)
{
	spin_lock(&t->lock);
	t->node[me].joined = true;
	spin_unlock(&t->lock);
}

/**
 * percs_cau_join() - PERCS_IOC_CAU_JOIN
 * @w: the calling window
 * @req: the request
 *
 * Return: 0; -EINVAL for non-zero flags or reserved; -ENOENT for no such
 * tree (or one that ended); -EPERM when @w is not its member;
 * -EALREADY when @w joined already.
 */
int percs_cau_join(struct percs_window *w, const struct percs_cau_tree_op *req)
{
	struct percs_dev *pd = w->hfi->pd;
	struct percs_cau_tree *t;
	int me, err = 0;

	if (req->flags || req->reserved)
		return -EINVAL;
	mutex_lock(&pd->cau.lock);
	t = percs_cau_find(w, req->tree, &me);
	if (IS_ERR(t))
		err = PTR_ERR(t);
	else if (t->node[me].joined)
		err = -EALREADY;
	else
		percs_cau_set_joined(t, me);
	mutex_unlock(&pd->cau.lock);
	return err;
}

/**
 * percs_cau_destroy() - PERCS_IOC_CAU_DESTROY
 * @w: the calling window
 * @req: the request
 *
 * Every other member gets its -ECONNRESET completion; the caller none.
 *
 * Return: 0; -EINVAL for non-zero flags or reserved; -ENOENT for no such
 * tree; -EPERM when @w is not its member.
 */
int percs_cau_destroy(struct percs_window *w,
		      const struct percs_cau_tree_op *req)
{
	struct percs_dev *pd = w->hfi->pd;
	struct percs_cau_tree *t;
	int me, err = 0;

	if (req->flags || req->reserved)
		return -EINVAL;
	mutex_lock(&pd->cau.lock);
	t = percs_cau_find(w, req->tree, &me);
	if (IS_ERR(t))
		err = PTR_ERR(t);
	else
		percs_cau_end(pd, t, me);
	mutex_unlock(&pd->cau.lock);
	return err;
}

/**
 * percs_cau_window_fini() - a window is released: end its trees
 * @w: the window, unpublished
 */
void percs_cau_window_fini(struct percs_window *w)
{
	struct percs_dev *pd = w->hfi->pd;
	struct percs_cau_tree *t;
	unsigned long id;
	int me;

	mutex_lock(&pd->cau.lock);
	xa_for_each(&pd->cau.trees, id, t) {
		me = percs_cau_member_of(t, w);
		if (me >= 0)
			percs_cau_end(pd, t, me);
	}
	mutex_unlock(&pd->cau.lock);
}

/**
 * percs_cau_count() - trees in existence
 * @pd: the system
 *
 * Return: their number (debugfs live).
 */
unsigned int percs_cau_count(struct percs_dev *pd)
{
	struct percs_cau_tree *t;
	unsigned int n = 0;
	unsigned long id;

	/* The xarray's own RCU walk: a snapshot, without the set-up mutex. */
	xa_for_each(&pd->cau.trees, id, t)
		n++;
	return n;
}

/**
 * percs_cau_show() - debugfs percs/cau: the CAUs' tables and the trees
 * @m: the seq_file
 * @pd: the system
 *
 * "entries PER_HUB" then "hub N used U" for every hub with an entry
 * taken, then per tree "tree ID flags F job_key K members N mcast posted
 * P delivered D resent R refused F" (its multicasts: posted by members,
 * written into members' FIFOs, transfers sent again, refused by a node
 * with no free buffer) and one line per member: "  INDEX hub H window GID
 * parent P joined 0|1".
 */
void percs_cau_show(struct seq_file *m, struct percs_dev *pd)
{
	struct percs_cau_tree *t;
	unsigned long id;
	unsigned int i;

	mutex_lock(&pd->cau.lock);
	seq_printf(m, "entries %u\n", pd->cau.per_hub);
	for (i = 0; i < pd->topo.nr_hubs; i++)
		if (pd->cau.used[i])
			seq_printf(m, "hub %u used %u\n", i, pd->cau.used[i]);
	xa_for_each(&pd->cau.trees, id, t) {
		seq_printf(m, "tree %u flags %u job_key %u members %u mcast posted %llu delivered %llu resent %llu refused %llu\n",
			   t->id, t->flags, t->job_key, t->nr,
			   READ_ONCE(t->mc_posted), READ_ONCE(t->mc_delivered),
			   READ_ONCE(t->mc_resent), READ_ONCE(t->mc_refused));
		for (i = 0; i < t->nr; i++)
			seq_printf(m, "  %u hub %u window %u parent %d joined %d\n",
				   i, t->node[i].hub, t->node[i].gid,
				   t->node[i].parent, t->node[i].joined);
	}
	mutex_unlock(&pd->cau.lock);
}

/**
 * percs_cau_init() - every hub's CAU, empty
 * @pd: the system
 * @per_hub: tree entries of each CAU
 *
 * Return: 0 or -ENOMEM.
 */
int percs_cau_init(struct percs_dev *pd, unsigned int per_hub)
{
	mutex_init(&pd->cau.lock);
	xa_init_flags(&pd->cau.trees, XA_FLAGS_ALLOC1);
	pd->cau.per_hub = per_hub;
	pd->cau.used = kcalloc(pd->topo.nr_hubs, sizeof(*pd->cau.used),
			       GFP_KERNEL);
	return pd->cau.used ? 0 : -ENOMEM;
}

/**
 * percs_cau_exit() - free the CAUs; every window is gone, so every tree
 * @pd: the system
 */
void percs_cau_exit(struct percs_dev *pd)
{
	WARN_ON(!xa_empty(&pd->cau.trees));
	xa_destroy(&pd->cau.trees);
	kfree(pd->cau.used);
}
