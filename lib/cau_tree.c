// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: CAU tree handles - create, join, end and destroy, the window's
 * table of them, and the probe that finds a tree's end when its
 * completion entry was not seen.
 *
 * A window's library trees are in its table (struct lp_coll) at an index
 * 1 .. 255 that the tags of their descriptors carry (lp_cau_tag()).  A
 * tree ends with PERCS_IOC_CAU_DESTROY from any member or a member
 * window's release: the others get a completion entry (user_data the tree
 * id, res -ECONNRESET), which cau.c takes; every running request on the
 * tree then finishes with -ECONNRESET.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

#define LP_CAU_PROBE_NS	(20 * 1000000ULL)

/* ---- handles ------------------------------------------------------------------ */

static bool addr_eq(const struct percs_addr *a, const struct percs_addr *b)
{
	return a->hub == b->hub && a->hfi == b->hfi && a->window == b->window;
}

/* A handle for @w's membership of a tree of @members; not linked yet. */
static int tree_new(struct percs_window *w, const struct percs_cau_member *m,
		    unsigned int nr, unsigned int flags,
		    struct percs_cau_tree **out)
{
	struct percs_cau_tree *t;
	unsigned int i, me = nr, root = 0;
	int ret;

	if (!w || !m || !out || (flags & ~PERCS_CAU_F_ALL))
		return -EINVAL;
	ret = percs_cau_shape_check(m, nr);
	if (ret < 0)
		return ret;
	for (i = 0; i < nr; i++) {
		if (addr_eq(&m[i].win, &w->addr))
			me = i;
		if (m[i].parent == PERCS_CAU_ROOT)
			root = i;
	}
	if (me == nr)
		return -EPERM;
	if (!lp_coll_get(w))
		return -ENOMEM;
	if (w->coll->nr_trees >= LP_CAU_TREES - 1)
		return -ENOSPC;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct percs_cau_tree){
		.w = w, .nr = nr, .me = me, .root = root, .flags = flags,
	};
	if (lp_cau_mc_init(t, m)) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

/* Into the window's table: a free index, which descriptor tags carry. */
static void tree_link(struct percs_cau_tree *t)
{
	struct lp_coll *c = t->w->coll;
	unsigned int i;

	for (i = 1; c->tree[i]; i++)
		;
	t->idx = i;
	c->tree[i] = t;
	c->nr_trees++;
}

static void tree_free(struct percs_cau_tree *t)
{
	struct lp_coll *c = t->w->coll;

	if (t->idx) {
		c->tree[t->idx] = NULL;
		c->nr_trees--;
	}
	lp_cau_mc_free(t);
	free(t);
}

int percs_cau_tree_create(struct percs_window *w,
			  const struct percs_cau_member *members,
			  unsigned int nr, unsigned int flags,
			  struct percs_cau_tree **out)
{
	struct percs_cau_create c;
	struct percs_cau_tree *t;
	int ret = tree_new(w, members, nr, flags, &t);

	if (ret)
		return ret;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = flags;
	c.nr_members = nr;
	c.members = (uint64_t)(uintptr_t)members;
	if (ioctl(w->fd, PERCS_IOC_CAU_CREATE, &c) < 0) {
		ret = -errno;
		tree_free(t);
		return ret;
	}
	t->id = c.tree;
	tree_link(t);
	*out = t;
	return 0;
}

static int tree_op(struct percs_window *w, unsigned long cmd, uint32_t id)
{
	struct percs_cau_tree_op op = { .size = sizeof(op), .tree = id };

	return ioctl(w->fd, cmd, &op) < 0 ? -errno : 0;
}

int percs_cau_tree_join(struct percs_window *w, uint32_t id,
			const struct percs_cau_member *members,
			unsigned int nr, unsigned int flags,
			struct percs_cau_tree **out)
{
	struct percs_cau_tree *t;
	int ret = tree_new(w, members, nr, flags, &t);

	if (ret)
		return ret;
	ret = tree_op(w, PERCS_IOC_CAU_JOIN, id);
	if (ret) {
		tree_free(t);
		return ret;
	}
	t->id = id;
	tree_link(t);
	*out = t;
	return 0;
}

/*
 * The tree ended (or its handle goes): every running request on it
 * finishes - with @err, unless all its chunks were already done - and
 * nothing points to it any more.
 */
void lp_cau_tree_end(struct percs_cau_tree *t, int err)
{
	struct percs_coll_req *r;

	if (!t->err)
		t->err = err;
	for (r = t->w->coll->head; r; r = r->next) {
		struct lp_cau_req *cr = &r->cau;

		if (r->done || r->kind != LP_REQ_CAU || cr->t != t)
			continue;
		lp_req_finish(r, cr->posted == cr->nchunks &&
				 cr->resolved == cr->nchunks ? 0 : err);
	}
	memset(t->slot, 0, sizeof(t->slot));
	t->q_head = t->q_tail = NULL;
}

int percs_cau_tree_destroy(struct percs_cau_tree *t)
{
	int ret;

	if (!t)
		return 0;
	ret = tree_op(t->w, PERCS_IOC_CAU_DESTROY, t->id);
	if (ret == -ENOENT)
		ret = 0;	/* ended already */
	/* Take the end's entry if it came: the application never sees it. */
	lp_coll_cq(t->w, true);
	lp_cau_tree_end(t, -ECONNRESET);
	tree_free(t);
	return ret;
}

int percs_cau_tree_query(const struct percs_cau_tree *t,
			 struct percs_cau_tree_info *info)
{
	if (!t || !info)
		return -EINVAL;
	*info = (struct percs_cau_tree_info){
		.id = t->id, .nr_members = t->nr, .me = t->me,
		.root = t->root, .flags = t->flags, .status = t->err,
		.ops = t->posted, .running = t->running,
	};
	return 0;
}

uint32_t percs_cau_tree_id(const struct percs_cau_tree *t)
{
	return t ? t->id : 0;
}

/* The window's tree of kernel id @id, or NULL. */
struct percs_cau_tree *lp_cau_tree_by_id(struct lp_coll *c, uint32_t id)
{
	for (unsigned int i = 1, seen = 0;
	     i < LP_CAU_TREES && seen < c->nr_trees; i++) {
		if (!c->tree[i])
			continue;
		seen++;
		if (c->tree[i]->id == id)
			return c->tree[i];
	}
	return NULL;
}

/*
 * Every 20 ms of waiting, ask the kernel whether the trees with running
 * requests still exist (JOIN answers -EALREADY while they do).
 */
void lp_cau_probe(struct percs_window *w)
{
	struct lp_coll *c = w->coll;
	uint64_t now = 0;

	if (!c || !c->nr_trees || w->fd < 0)
		return;
	for (unsigned int i = 1; i < LP_CAU_TREES; i++) {
		struct percs_cau_tree *t = c->tree[i];

		if (!t || !t->running || t->err)
			continue;
		if (!now)
			now = lp_now_ns();
		if (!t->probe_ns) {
			t->probe_ns = now;
			continue;
		}
		if (now - t->probe_ns < LP_CAU_PROBE_NS)
			continue;
		t->probe_ns = now;
		if (tree_op(w, PERCS_IOC_CAU_JOIN, t->id) == -ENOENT)
			lp_cau_tree_end(t, -ECONNRESET);
	}
}
