// SPDX-License-Identifier: GPL-2.0
/*
 * cau: CAU tree set-up and teardown (PERCS_IOC_CAU_CREATE, _JOIN and
 * _DESTROY on window fds), against the module's own bookkeeping: debugfs
 * percs/cau (the entries each hub's CAU has taken, every tree and its
 * members) and the cau_trees line of percs/live.
 *
 * A good tree over windows on distinct hubs, created by one member and
 * joined by the others; JOIN twice, JOIN and DESTROY by non-members and
 * of unknown ids; every bad field of the set-up request with its errno and
 * nothing left behind (the whole of percs/cau and the live count
 * unchanged, no completion entry anywhere); the children limit (65
 * children refused, 64 taken) and deep chains; a full CAU table (ENOSPC,
 * nothing taken on the other hubs); the end of a tree - DESTROY, the
 * release of a member window, a process killed - with one -ECONNRESET
 * completion at every other member and none at the destroyer; thousands
 * of trees created and destroyed; concurrent DESTROYs; a member window
 * released while a tree naming it is being created.
 *
 * cau.modparams runs this on topology=3x32 (96 hubs, for a member with
 * 65 children) with cau_trees=2 (a small table to fill); the tests read
 * the table size from percs/cau, so they also run on other parameters.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO_4K		PERCS_FIFO_MIN_SIZE
#define PAGE		4096UL
#define ROOT		PERCS_CAU_ROOT
#define MAX_KIDS	PERCS_CAU_MAX_CHILDREN
#define MAXW		128		/* windows one test holds at most */
#define TEXT		(256 * 1024)	/* percs/cau as text */

/* One window that can be a member: libpercs (for its completion queue). */
struct mwin {
	struct percs_window *w;
	int fd;
	struct percs_addr a;
};

static int mwin_open(struct mwin *m, unsigned int hub, unsigned int unit,
		     uint32_t key)
{
	struct percs_hfi *hfi;
	int ret;

	m->w = NULL;
	m->fd = -1;
	ret = pt_hfi_open(hub, unit, &hfi);
	if (ret)
		return ret;
	ret = pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, key, PERCS_WINDOW_ANY,
			 &m->w);
	percs_hfi_close(hfi);	/* the window stays */
	if (ret)
		return ret;
	m->fd = percs_window_fd(m->w);
	m->a = percs_window_addr(m->w);
	return 0;
}

static void mwin_close(struct mwin *m)
{
	percs_window_release(m->w);
	m->w = NULL;
	m->fd = -1;
}

static void set_member(struct percs_cau_member *mem, const struct mwin *m,
		       uint32_t parent)
{
	memset(mem, 0, sizeof(*mem));
	mem->win = m->a;
	mem->parent = parent;
}

static int create_raw(int fd, void *req)
{
	return ioctl(fd, PERCS_IOC_CAU_CREATE, req) ? -errno : 0;
}

static int cau_create(int fd, uint32_t flags,
		      const struct percs_cau_member *mem, uint32_t n,
		      uint32_t *tree)
{
	struct percs_cau_create c = {
		.size = sizeof(c), .flags = flags, .nr_members = n,
		.members = (uintptr_t)mem,
	};
	int ret = create_raw(fd, &c);

	if (!ret && tree)
		*tree = c.tree;
	return ret;
}

static int tree_op(int fd, unsigned long ioc, uint32_t tree)
{
	struct percs_cau_tree_op op = { .size = sizeof(op), .tree = tree };

	return ioctl(fd, ioc, &op) ? -errno : 0;
}

static int cau_join(int fd, uint32_t tree)
{
	return tree_op(fd, PERCS_IOC_CAU_JOIN, tree);
}

static int cau_destroy(int fd, uint32_t tree)
{
	return tree_op(fd, PERCS_IOC_CAU_DESTROY, tree);
}

static long live_trees(void)
{
	return pt_stat_field(PT_DEBUGFS_LIVE, "cau_trees");
}

/* The global id percs/cau names a window by (percs_window_gid()). */
static unsigned int gid_of(const struct percs_addr *a, long wph)
{
	return (a->hub * 2 + a->hfi) * (unsigned int)wph + a->window;
}

/** struct tinfo - one tree as percs/cau shows it */
struct tinfo {
	unsigned int flags, key, nr;
	struct {
		unsigned int hub, gid;
		int parent, joined;
	} m[MAXW];
};

/* Tree @id from percs/cau: 0, -ENOENT (not listed), -EBADMSG. */
static int tree_info(uint32_t id, struct tinfo *ti)
{
	static char text[TEXT];
	unsigned int got = 0;
	char *line, *save;
	bool in = false;

	if (pt_cau_read(text, sizeof(text)) < 0)
		return -EIO;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int tid, fl, key, nr, idx, hub, gid;
		int par, j;

		if (sscanf(line, "tree %u flags %u job_key %u members %u",
			   &tid, &fl, &key, &nr) == 4) {
			if (in)
				break;
			if (tid != id)
				continue;
			if (nr > MAXW)
				return -EBADMSG;
			in = true;
			ti->flags = fl;
			ti->key = key;
			ti->nr = nr;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, " %u hub %u window %u parent %d joined %d",
			   &idx, &hub, &gid, &par, &j) != 5 ||
		    idx != got || got >= ti->nr)
			return -EBADMSG;
		ti->m[got].hub = hub;
		ti->m[got].gid = gid;
		ti->m[got].parent = par;
		ti->m[got].joined = j;
		got++;
	}
	if (!in)
		return -ENOENT;
	return got == ti->nr ? 0 : -EBADMSG;
}

/*
 * What a failed call must leave as it was: the whole of percs/cau (the
 * used entries of every hub and every tree) and the live count.
 */
static int cau_snap(char *buf, size_t cap)
{
	int len = pt_cau_read(buf, cap - 32);

	if (len < 0)
		return len;
	snprintf(buf + len, cap - len, "live %ld\n", live_trees());
	return 0;
}

/* percs/cau shows no entry taken and no tree, and live says 0 (5 s). */
static bool cau_clean(long entries, char *text, size_t cap)
{
	uint64_t deadline = pt_now_ms() + PT_TIMEOUT_MS;
	char want[64];

	snprintf(want, sizeof(want), "entries %ld\nlive 0\n", entries);
	for (;;) {
		if (!cau_snap(text, cap) && !strcmp(text, want))
			return true;
		if (pt_now_ms() > deadline)
			return false;
		usleep(1000);
	}
}

/*
 * @m has exactly @n completion entries, each the end of one tree of @ids
 * (any order): kind PERCS_PKT_COLL, user_data the tree id, res
 * -ECONNRESET.  Entries are posted by the ending call itself; callers
 * that expect none wait a little first.  Return: 0 or -1 (reason on
 * stderr).
 */
static int expect_resets(struct mwin *m, const uint32_t *ids, int n)
{
	bool seen[MAXW] = { false };
	struct percs_cqe c;
	int k, i, r;

	for (k = 0; k < n; k++) {
		r = pt_cq_wait(m->w, &c, PT_TIMEOUT_MS);
		if (r != 1) {
			fprintf(stderr, "# window %u.%u.%u: entry %d of %d: %d\n",
				m->a.hub, m->a.hfi, m->a.window, k + 1, n, r);
			return -1;
		}
		for (i = 0; i < n; i++)
			if (!seen[i] && ids[i] == c.user_data)
				break;
		if (c.kind != PERCS_PKT_COLL || c.res != -ECONNRESET ||
		    c.reserved || i == n) {
			fprintf(stderr, "# window %u.%u.%u: entry kind %u res %d user_data %llu: not an expected tree end\n",
				m->a.hub, m->a.hfi, m->a.window, c.kind, c.res,
				(unsigned long long)c.user_data);
			return -1;
		}
		seen[i] = true;
	}
	r = percs_cq_poll(m->w, &c, 1);
	if (r) {
		fprintf(stderr, "# window %u.%u.%u: unexpected entry (%d): kind %u res %d user_data %llu\n",
			m->a.hub, m->a.hfi, m->a.window, r, c.kind, c.res,
			(unsigned long long)c.user_data);
		return -1;
	}
	return 0;
}

static int expect_none(struct mwin *m)
{
	return expect_resets(m, NULL, 0);
}

FIXTURE(cau) {
	struct mwin m[MAXW];
	int n;		/* windows opened in m[] */
	long hubs;	/* of the system */
	long wph;	/* windows per HFI */
	long entries;	/* tree entries of each hub's CAU */
	char *before;	/* cau_snap() buffers */
	char *now;
};

FIXTURE_SETUP(cau)
{
	PT_REQUIRE_DEVICE();
	self->before = malloc(TEXT);
	self->now = malloc(TEXT);
	ASSERT_NE(NULL, self->before);
	ASSERT_NE(NULL, self->now);
	self->hubs = pt_nr_hubs();
	ASSERT_LE(8, self->hubs);
	self->wph = pt_sysfs_hfi_attr(0, 0, "windows_total");
	ASSERT_LT(0, self->wph);
	self->entries = pt_cau_entries();
	ASSERT_LE(1, self->entries);
	/* Whatever an earlier test left has ended with its process. */
	if (!cau_clean(self->entries, self->now, TEXT))
		TH_LOG("percs/cau at the start:\n%s", self->now);
	ASSERT_TRUE(cau_clean(self->entries, self->now, TEXT));
}

FIXTURE_TEARDOWN(cau)
{
	int i;

	for (i = 0; i < self->n; i++)
		if (self->m[i].w)
			mwin_close(&self->m[i]);
	free(self->before);
	free(self->now);
}

/* Open self->m[self->n] on @hub/@unit with @key. */
#define OPEN(hub, unit, key)						\
	ASSERT_EQ(0, mwin_open(&self->m[self->n++], (hub), (unit), (key)))

/* The state now is the snapshot taken before. */
#define ASSERT_UNCHANGED(what) do {					\
	ASSERT_EQ(0, cau_snap(self->now, TEXT));			\
	if (strcmp(self->before, self->now))				\
		TH_LOG("%s: percs/cau was\n%s\nis\n%s", (what),		\
		       self->before, self->now);			\
	ASSERT_STREQ(self->before, self->now);				\
} while (0)

#define ASSERT_CLEAN() do {						\
	bool __c = cau_clean(self->entries, self->now, TEXT);		\
	if (!__c)							\
		TH_LOG("percs/cau not empty:\n%s", self->now);		\
	ASSERT_TRUE(__c);						\
} while (0)

/*
 * Four members on hubs 0-3 (both HFI units), created by a non-root
 * member; debugfs shows the tree; the others join; non-members and
 * unknown ids are refused; DESTROY by a member tells every other member.
 */
TEST_F(cau, good_tree_create_join_destroy)
{
	static const uint32_t par[4] = { ROOT, 0, 0, 1 };
	struct percs_cau_member mem[4], copy[4];
	uint32_t key = pt_new_key(), tree, bad[4];
	struct mwin *m = self->m;
	struct percs_cau_create c;
	struct tinfo ti;
	int i, j;

	for (i = 0; i < 4; i++) {
		OPEN(i, i & 1, key);
	}
	OPEN(4, 0, key);	/* m[4]: same key, hub 4, not a member */
	OPEN(0, 1, key);	/* m[5]: same key, a member's hub, not a member */
	for (i = 0; i < 4; i++)
		set_member(&mem[i], &m[i], par[i]);
	memcpy(copy, mem, sizeof(mem));

	c = (struct percs_cau_create){
		.size = sizeof(c), .nr_members = 4,
		.members = (uintptr_t)mem,
	};
	ASSERT_EQ(0, create_raw(m[2].fd, &c));
	tree = c.tree;
	ASSERT_NE(0, tree);
	/* The answer is the id alone: the rest as given. */
	ASSERT_EQ(sizeof(c), c.size);
	ASSERT_EQ(0, c.flags);
	ASSERT_EQ(4, c.nr_members);
	ASSERT_EQ((uintptr_t)mem, c.members);
	ASSERT_EQ(0, memcmp(copy, mem, sizeof(mem)));

	/* debugfs: the live count, the hubs' entries, the tree. */
	ASSERT_EQ(1, live_trees());
	for (i = 0; i < self->hubs; i++) {
		ASSERT_EQ(i < 4 ? 1 : 0, pt_cau_hub_used(i));
	}
	ASSERT_EQ(0, tree_info(tree, &ti));
	ASSERT_EQ(0, ti.flags);
	ASSERT_EQ(key, ti.key);
	ASSERT_EQ(4, ti.nr);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(i, ti.m[i].hub);
		ASSERT_EQ(gid_of(&m[i].a, self->wph), ti.m[i].gid);
		ASSERT_EQ(par[i] == ROOT ? -1 : (int)par[i], ti.m[i].parent);
		/* The creator is joined at once, nobody else yet. */
		ASSERT_EQ(i == 2, ti.m[i].joined);
	}

	ASSERT_EQ(-EALREADY, cau_join(m[2].fd, tree));
	ASSERT_EQ(0, cau_join(m[0].fd, tree));
	ASSERT_EQ(-EALREADY, cau_join(m[0].fd, tree));
	ASSERT_EQ(0, tree_info(tree, &ti));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(i == 0 || i == 2, ti.m[i].joined);
	}
	ASSERT_EQ(0, cau_join(m[1].fd, tree));
	ASSERT_EQ(0, cau_join(m[3].fd, tree));
	ASSERT_EQ(-EALREADY, cau_join(m[3].fd, tree));
	ASSERT_EQ(0, tree_info(tree, &ti));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, ti.m[i].joined);
	}

	/* Not members: another hub, and a member's hub with the same key. */
	ASSERT_EQ(-EPERM, cau_join(m[4].fd, tree));
	ASSERT_EQ(-EPERM, cau_destroy(m[4].fd, tree));
	ASSERT_EQ(-EPERM, cau_join(m[5].fd, tree));
	ASSERT_EQ(-EPERM, cau_destroy(m[5].fd, tree));

	/* Unknown ids, from a member and from a non-member. */
	bad[0] = 0;
	bad[1] = tree + 1;
	bad[2] = tree + 100000;
	bad[3] = 0xffffffffu;
	for (j = 0; j < 4; j++) {
		if (bad[j] == tree)
			continue;
		ASSERT_EQ(-ENOENT, cau_join(m[0].fd, bad[j]));
		ASSERT_EQ(-ENOENT, cau_destroy(m[0].fd, bad[j]));
		ASSERT_EQ(-ENOENT, cau_join(m[4].fd, bad[j]));
		ASSERT_EQ(-ENOENT, cau_destroy(m[4].fd, bad[j]));
	}
	ASSERT_EQ(1, live_trees());
	ASSERT_EQ(0, tree_info(tree, &ti));

	/* Nothing so far ended anything: no completion anywhere. */
	usleep(10000);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, expect_none(&m[i]));
	}

	/* DESTROY by a leaf: the three others are told, the destroyer not. */
	ASSERT_EQ(0, cau_destroy(m[3].fd, tree));
	ASSERT_EQ(0, live_trees());
	ASSERT_EQ(-ENOENT, tree_info(tree, &ti));
	ASSERT_CLEAN();
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, expect_resets(&m[i], &tree, 1));
	}
	usleep(10000);
	for (i = 3; i < 6; i++) {
		ASSERT_EQ(0, expect_none(&m[i]));
	}

	/* The id is gone for everybody. */
	ASSERT_EQ(-ENOENT, cau_join(m[0].fd, tree));
	ASSERT_EQ(-ENOENT, cau_destroy(m[3].fd, tree));
	ASSERT_EQ(-ENOENT, cau_destroy(m[0].fd, tree));
	ASSERT_EQ(-ENOENT, cau_join(m[4].fd, tree));

	for (i = 0; i < self->n; i++)
		mwin_close(&m[i]);
	ASSERT_LIVE_ZERO();
}

/*
 * A tree of one member (the root, the creator) with PERCS_CAU_F_ORDERED;
 * several trees over one window; ids distinct, an ended one not handed
 * out again at once; a DESTROY tells nobody when the destroyer is alone.
 */
TEST_F(cau, single_member_ordered_ids)
{
	uint32_t key = pt_new_key(), t1, t2, t3;
	struct percs_cau_member mem;
	struct mwin *m = self->m;
	struct tinfo ti;

	if (self->entries < 2)
		SKIP(return, "needs 2 CAU entries per hub");
	OPEN(self->hubs - 1, 1, key);
	set_member(&mem, &m[0], ROOT);
	ASSERT_EQ(0, cau_create(m[0].fd, PERCS_CAU_F_ORDERED, &mem, 1, &t1));
	ASSERT_NE(0, t1);
	ASSERT_EQ(0, tree_info(t1, &ti));
	ASSERT_EQ(PERCS_CAU_F_ORDERED, ti.flags);
	ASSERT_EQ(1, ti.nr);
	ASSERT_EQ(self->hubs - 1, ti.m[0].hub);
	ASSERT_EQ(gid_of(&m[0].a, self->wph), ti.m[0].gid);
	ASSERT_EQ(-1, ti.m[0].parent);
	ASSERT_EQ(1, ti.m[0].joined);
	ASSERT_EQ(-EALREADY, cau_join(m[0].fd, t1));

	ASSERT_EQ(0, cau_create(m[0].fd, 0, &mem, 1, &t2));
	ASSERT_NE(0, t2);
	ASSERT_NE(t1, t2);
	ASSERT_EQ(0, tree_info(t2, &ti));
	ASSERT_EQ(0, ti.flags);
	ASSERT_EQ(2, live_trees());
	ASSERT_EQ(2, pt_cau_hub_used(self->hubs - 1));

	ASSERT_EQ(0, cau_destroy(m[0].fd, t1));
	ASSERT_EQ(-ENOENT, cau_join(m[0].fd, t1));
	ASSERT_EQ(0, tree_info(t2, &ti));
	ASSERT_EQ(1, pt_cau_hub_used(self->hubs - 1));
	/* A new tree does not take the id that just ended. */
	ASSERT_EQ(0, cau_create(m[0].fd, 0, &mem, 1, &t3));
	ASSERT_NE(0, t3);
	ASSERT_NE(t1, t3);
	ASSERT_NE(t2, t3);
	ASSERT_EQ(-ENOENT, cau_destroy(m[0].fd, t1));
	ASSERT_EQ(0, cau_destroy(m[0].fd, t2));
	ASSERT_EQ(0, cau_destroy(m[0].fd, t3));
	ASSERT_CLEAN();
	usleep(10000);
	ASSERT_EQ(0, expect_none(&m[0]));
}

/* JOIN and DESTROY refuse bad requests and leave the tree as it is. */
TEST_F(cau, tree_op_bad_requests)
{
	static const unsigned long iocs[2] = {
		PERCS_IOC_CAU_JOIN, PERCS_IOC_CAU_DESTROY,
	};
	struct percs_cau_tree_op *op;
	struct percs_cau_member mem[2];
	uint32_t key = pt_new_key(), tree;
	struct mwin *m = self->m;
	uint8_t *pg;
	int k;

	OPEN(0, 0, key);
	OPEN(1, 1, key);
	set_member(&mem[0], &m[0], ROOT);
	set_member(&mem[1], &m[1], 0);
	ASSERT_EQ(0, cau_create(m[0].fd, 0, mem, 2, &tree));
	pg = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pg);
	ASSERT_EQ(0, mprotect(pg + PAGE, PAGE, PROT_NONE));
	op = (struct percs_cau_tree_op *)pg;
	ASSERT_EQ(0, cau_snap(self->before, TEXT));

	for (k = 0; k < 2; k++) {
		unsigned long ioc = iocs[k];
		const char *what = k ? "DESTROY" : "JOIN";

		memset(pg, 0, PAGE);
		*op = (struct percs_cau_tree_op){
			.size = sizeof(*op), .flags = 1, .tree = tree,
		};
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, op));
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s flags 1", what);
		op->flags = 0x80000000u;
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, op));
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s flags bit 31", what);
		op->flags = 0;
		op->reserved = 1;
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, op));
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s reserved", what);
		op->reserved = 0;
		op->size = 0;
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, op));
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s size 0", what);
		op->size = sizeof(*op) - 1;
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, op));
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s size 15", what);
		op->size = sizeof(*op) + 8;
		pg[sizeof(*op) + 7] = 1;
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, op));
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s non-zero tail", what);
		pg[sizeof(*op) + 7] = 0;
		/* A size reaching past the mapping: the tail cannot be read. */
		op->size = 2 * PAGE;
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, op));
		EXPECT_EQ(EFAULT, errno) TH_LOG("%s size past the mapping", what);
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, NULL));
		EXPECT_EQ(EFAULT, errno) TH_LOG("%s NULL", what);
		EXPECT_EQ(-1, ioctl(m[1].fd, ioc, pg + PAGE));
		EXPECT_EQ(EFAULT, errno) TH_LOG("%s unreadable", what);
		ASSERT_UNCHANGED(what);
	}
	/* A larger struct with a zero tail is fine. */
	memset(pg, 0, PAGE);
	*op = (struct percs_cau_tree_op){ .size = PAGE, .tree = tree };
	ASSERT_EQ(0, ioctl(m[1].fd, PERCS_IOC_CAU_JOIN, op));
	ASSERT_EQ(-EALREADY, cau_join(m[1].fd, tree));
	usleep(10000);
	ASSERT_EQ(0, expect_none(&m[0]));
	ASSERT_EQ(0, expect_none(&m[1]));
	ASSERT_EQ(0, ioctl(m[1].fd, PERCS_IOC_CAU_DESTROY, op));
	ASSERT_CLEAN();
	ASSERT_EQ(0, expect_resets(&m[0], &tree, 1));
	ASSERT_EQ(0, expect_none(&m[1]));
	munmap(pg, 2 * PAGE);
}

/* What bad_case() works on. */
struct bad_env {
	struct mwin *m;		/* m[0..3] good members on hubs 0-3, key K;
				 * m[4] hub 0 unit 1, key K; m[5] hub 4,
				 * another key; m[6] hub 5, key K */
	struct percs_addr freea; /* a window address nobody has */
	long hubs, wph;
	uint8_t *pg;		/* a RW page, then a PROT_NONE page */
	void *unmapped;		/* an address with nothing mapped */
};

/*
 * Turn the good request (@c over @mem, called on *@fd with *@size) into
 * bad case @i.  Return: its -errno, 0 past the last case.
 */
static int bad_case(int i, const struct bad_env *e,
		    struct percs_cau_create *c, struct percs_cau_member *mem,
		    int *fd, uint32_t *size, bool *ro, const char **name)
{
#define PAR(a, b, cc, d) do {						\
	mem[0].parent = (a); mem[1].parent = (b);			\
	mem[2].parent = (cc); mem[3].parent = (d);			\
} while (0)
	switch (i) {
	case 0: *name = "unknown flag bit 1";
		c->flags = 2; return -EINVAL;
	case 1: *name = "unknown flag bit 31";
		c->flags = 0x80000000u; return -EINVAL;
	case 2: *name = "tree 1 on input";
		c->tree = 1; return -EINVAL;
	case 3: *name = "tree ~0 on input";
		c->tree = 0xffffffffu; return -EINVAL;
	case 4: *name = "nr_members 0";
		c->nr_members = 0; return -EINVAL;
	case 5: *name = "nr_members PERCS_CAU_MAX_MEMBERS + 1";
		c->nr_members = PERCS_CAU_MAX_MEMBERS + 1; return -EINVAL;
	case 6: *name = "nr_members ~0";
		c->nr_members = 0xffffffffu; return -EINVAL;
	case 7: *name = "members NULL";
		c->members = 0; return -EFAULT;
	case 8: *name = "members unmapped";
		c->members = (uintptr_t)e->unmapped; return -EFAULT;
	case 9: *name = "last member on a PROT_NONE page";
		memcpy(e->pg + PAGE - 3 * sizeof(*mem), mem, 3 * sizeof(*mem));
		c->members = (uintptr_t)(e->pg + PAGE - 3 * sizeof(*mem));
		return -EFAULT;
	case 10: *name = "member reserved";
		mem[3].reserved = 1; return -EINVAL;
	case 11: *name = "member win.reserved";
		mem[1].win.reserved = 1; return -EINVAL;
	case 12: *name = "hub = number of hubs";
		mem[1].win.hub = e->hubs; return -EHOSTUNREACH;
	case 13: *name = "hub ~0";
		mem[2].win.hub = 0xffffffffu; return -EHOSTUNREACH;
	case 14: *name = "hfi 2";
		mem[1].win.hfi = 2; return -EHOSTUNREACH;
	case 15: *name = "hfi 255";
		mem[3].win.hfi = 255; return -EHOSTUNREACH;
	case 16: *name = "window = windows_per_hfi";
		mem[1].win.window = e->wph; return -EADDRNOTAVAIL;
	case 17: *name = "window 0xffff";
		mem[2].win.window = 0xffff; return -EADDRNOTAVAIL;
	case 18: *name = "a free window";
		mem[2].win = e->freea; return -ECONNREFUSED;
	case 19: *name = "a window of another job key";
		mem[2].win = e->m[5].a; return -EACCES;
	case 20: *name = "no root";
		PAR(1, 0, 0, 1); return -EINVAL;
	case 21: *name = "two roots";
		PAR(ROOT, 0, ROOT, 1); return -EINVAL;
	case 22: *name = "every member a root";
		PAR(ROOT, ROOT, ROOT, ROOT); return -EINVAL;
	case 23: *name = "parent index = nr_members";
		PAR(ROOT, 0, 4, 1); return -EINVAL;
	case 24: *name = "parent index 0xfffffffe";
		PAR(ROOT, 0, 0xfffffffeu, 1); return -EINVAL;
	case 25: *name = "a member its own parent";
		PAR(ROOT, 1, 0, 1); return -ELOOP;
	case 26: *name = "a cycle of three beside the root";
		PAR(ROOT, 2, 3, 1); return -ELOOP;
	case 27: *name = "a cycle of two beside the root";
		PAR(ROOT, 0, 3, 2); return -ELOOP;
	case 28: *name = "two members on one hub";
		mem[3].win = e->m[4].a; return -EEXIST;
	case 29: *name = "one window twice";
		mem[3].win = e->m[0].a; return -EEXIST;
	case 30: *name = "caller not a member";
		*fd = e->m[6].fd; return -EPERM;
	case 31: *name = "caller on a member's hub, not a member";
		*fd = e->m[4].fd; return -EPERM;
	case 32: *name = "size 0";
		*size = 0; return -EINVAL;
	case 33: *name = "size 4";
		*size = 4; return -EINVAL;
	case 34: *name = "size sizeof - 1";
		*size = sizeof(*c) - 1; return -EINVAL;
	case 35: *name = "size sizeof + 8, non-zero tail";
		*size = sizeof(*c) + 8;
		e->pg[sizeof(*c) + 7] = 0x80;
		return -E2BIG;
	case 36: *name = "size a page, last byte non-zero";
		*size = PAGE;
		e->pg[PAGE - 1] = 1;
		return -E2BIG;
	case 37: *name = "size past the mapping (zero tail, then no page)";
		*size = 2 * PAGE; return -EFAULT;
	case 38: *name = "answer in read-only memory";
		*ro = true; return -EFAULT;
	}
	return 0;
#undef PAR
}

/*
 * Every bad field of the set-up request, each with its errno; after each
 * the whole of percs/cau and the live count are as before, and no member
 * is told anything.  The good request of the same windows works after.
 */
TEST_F(cau, bad_setup_fields_leave_nothing)
{
	static const uint32_t par[4] = { ROOT, 0, 0, 1 };
	struct percs_cau_member good[4], mem[4];
	uint32_t key = pt_new_key(), tree, size;
	struct percs_cau_create c, *req;
	struct mwin *m = self->m;
	struct mwin gone;
	struct bad_env e;
	const char *name;
	int i, fd, want, got;
	bool ro;

	for (i = 0; i < 4; i++) {
		OPEN(i, i & 1, key);
	}
	OPEN(0, 1, key);		/* m[4] */
	OPEN(4, 0, pt_new_key());	/* m[5] */
	OPEN(5, 1, key);		/* m[6] */
	ASSERT_EQ(0, mwin_open(&gone, 6, 1, key));
	e.freea = gone.a;
	mwin_close(&gone);
	ASSERT_EQ(0, pt_sysfs_windows_in_use(6, 1));
	e.m = m;
	e.hubs = self->hubs;
	e.wph = self->wph;
	e.pg = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, e.pg);
	ASSERT_EQ(0, mprotect(e.pg + PAGE, PAGE, PROT_NONE));
	e.unmapped = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	ASSERT_NE(MAP_FAILED, e.unmapped);
	ASSERT_EQ(0, munmap(e.unmapped, PAGE));
	for (i = 0; i < 4; i++)
		set_member(&good[i], &m[i], par[i]);
	req = (struct percs_cau_create *)e.pg;
	ASSERT_EQ(0, cau_snap(self->before, TEXT));

	for (i = 0;; i++) {
		memcpy(mem, good, sizeof(mem));
		c = (struct percs_cau_create){
			.size = sizeof(c), .nr_members = 4,
			.members = (uintptr_t)mem,
		};
		fd = m[0].fd;
		ro = false;
		memset(e.pg, 0, PAGE);
		size = sizeof(c);
		want = bad_case(i, &e, &c, mem, &fd, &size, &ro, &name);
		if (!want)
			break;
		c.size = size;
		memcpy(req, &c, sizeof(c));
		if (ro) {
			ASSERT_EQ(0, mprotect(e.pg, PAGE, PROT_READ));
		}
		got = create_raw(fd, req);
		if (ro) {
			ASSERT_EQ(0, mprotect(e.pg, PAGE, PROT_READ | PROT_WRITE));
		}
		EXPECT_EQ(want, got) TH_LOG("case %d, %s: %d (%s), want %d (%s)",
					    i, name, got, strerror(-got), want,
					    strerror(-want));
		/* No answer written on failure. */
		EXPECT_EQ(c.tree, req->tree) TH_LOG("case %s", name);
		ASSERT_UNCHANGED(name);
	}
	ASSERT_EQ(39, i);
	/* Failed set-ups tell nobody. */
	usleep(10000);
	for (i = 0; i < 7; i++) {
		ASSERT_EQ(0, expect_none(&m[i]));
	}

	/* Also a NULL and an unreadable request. */
	ASSERT_EQ(-EFAULT, create_raw(m[0].fd, NULL));
	ASSERT_EQ(-EFAULT, create_raw(m[0].fd, e.pg + PAGE));
	ASSERT_EQ(-EFAULT, create_raw(m[0].fd, e.unmapped));
	ASSERT_UNCHANGED("NULL or unreadable request");

	/* The same windows make a good tree; its end reaches m[1..3] only. */
	ASSERT_EQ(0, cau_create(m[0].fd, 0, good, 4, &tree));
	ASSERT_EQ(1, live_trees());
	ASSERT_EQ(0, cau_destroy(m[0].fd, tree));
	ASSERT_CLEAN();
	for (i = 1; i < 4; i++) {
		ASSERT_EQ(0, expect_resets(&m[i], &tree, 1));
	}
	usleep(10000);
	ASSERT_EQ(0, expect_none(&m[0]));
	for (i = 4; i < 7; i++) {
		ASSERT_EQ(0, expect_none(&m[i]));
	}
	munmap(e.pg, 2 * PAGE);
}

/*
 * At most PERCS_CAU_MAX_CHILDREN children per member (root or not); deep
 * chains are fine.  Needs 67 hubs (cau.modparams: topology=3x32).
 */
TEST_F_TIMEOUT(cau, children_limit_and_chains, 60)
{
	struct percs_cau_member *mem;
	uint32_t key = pt_new_key(), tree, ids[1] = { 0 };
	struct mwin *m = self->m;
	int n, i, k;

	if (self->hubs < MAX_KIDS + 3)
		SKIP(return, "needs %d hubs, the system has %ld (topology=3x32)",
		     MAX_KIDS + 3, self->hubs);
	n = self->hubs < MAXW ? self->hubs : MAXW;
	for (i = 0; i < n; i++) {
		OPEN(i, i & 1, key);
	}
	mem = calloc(n, sizeof(*mem));
	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, cau_snap(self->before, TEXT));

	/* The root with 65 children. */
	for (i = 0; i < MAX_KIDS + 2; i++)
		set_member(&mem[i], &m[i], i ? 0 : ROOT);
	ASSERT_EQ(-EMLINK, cau_create(m[5].fd, 0, mem, MAX_KIDS + 2, &tree));
	ASSERT_UNCHANGED("root with 65 children");
	/* The same, the root last in the array. */
	for (i = 0; i < MAX_KIDS + 2; i++)
		set_member(&mem[i], &m[i], i == MAX_KIDS + 1 ? ROOT :
					    MAX_KIDS + 1);
	ASSERT_EQ(-EMLINK, cau_create(m[0].fd, 0, mem, MAX_KIDS + 2, &tree));
	ASSERT_UNCHANGED("root (last) with 65 children");
	/* A member below the root with 65 children. */
	for (i = 0; i < MAX_KIDS + 3; i++)
		set_member(&mem[i], &m[i], i == 0 ? ROOT : i == 1 ? 0 : 1);
	ASSERT_EQ(-EMLINK, cau_create(m[1].fd, 0, mem, MAX_KIDS + 3, &tree));
	ASSERT_UNCHANGED("inner member with 65 children");

	/*
	 * 64 children of the root and a grandchild; 64 children of an
	 * inner member; a chain over every hub, root first and root last.
	 */
	for (k = 0; k < 4; k++) {
		struct tinfo *ti = malloc(sizeof(*ti));
		int nr, destroyer;

		ASSERT_NE(NULL, ti);
		switch (k) {
		case 0:
			nr = MAX_KIDS + 2;
			for (i = 0; i < nr; i++)
				set_member(&mem[i], &m[i], i == 0 ? ROOT :
					   i == nr - 1 ? 1 : 0);
			break;
		case 1:
			nr = MAX_KIDS + 2;
			for (i = 0; i < nr; i++)
				set_member(&mem[i], &m[i], i == 0 ? ROOT :
					   i == 1 ? 0 : 1);
			break;
		case 2:
			nr = n;
			for (i = 0; i < nr; i++)
				set_member(&mem[i], &m[i], i ? i - 1 : ROOT);
			break;
		default:
			nr = n;
			for (i = 0; i < nr; i++)
				set_member(&mem[i], &m[i],
					   i == nr - 1 ? ROOT : i + 1);
			break;
		}
		ASSERT_EQ(0, cau_create(m[nr - 1].fd, 0, mem, nr, &tree))
			TH_LOG("shape %d", k);
		ASSERT_EQ(0, tree_info(tree, ti));
		ASSERT_EQ(nr, ti->nr);
		for (i = 0; i < nr; i++) {
			ASSERT_EQ(mem[i].parent == ROOT ? -1 :
				  (int)mem[i].parent, ti->m[i].parent);
			ASSERT_EQ(i == nr - 1, ti->m[i].joined);
			ASSERT_EQ(1, pt_cau_hub_used(i));
		}
		free(ti);
		destroyer = nr / 2;
		ASSERT_EQ(0, cau_destroy(m[destroyer].fd, tree));
		ASSERT_CLEAN();
		ids[0] = tree;
		for (i = 0; i < nr; i++) {
			ASSERT_EQ(0, expect_resets(&m[i], ids,
						   i == destroyer ? 0 : 1));
		}
	}
	free(mem);
}

/*
 * A full CAU table: a tree through that hub gets ENOSPC and takes nothing
 * on its other hubs; an entry is free again once a tree through it ends.
 */
TEST_F(cau, table_full_enospc)
{
	struct percs_cau_member mem[3];
	uint32_t key = pt_new_key(), *trees, cd, t;
	struct mwin *m = self->m;	/* a b c d: hubs 0-3 */
	long E = self->entries, i;

	if (E > 256)
		SKIP(return, "cau_trees=%ld: too many trees to fill", E);
	ASSERT_EQ(E, pt_sysfs_read_long("/sys/module/percs/parameters/cau_trees"));
	for (i = 0; i < 4; i++) {
		OPEN(i, 0, key);
	}
	trees = calloc(E, sizeof(*trees));
	ASSERT_NE(NULL, trees);

	/* E trees over b (root) and a. */
	set_member(&mem[0], &m[1], ROOT);
	set_member(&mem[1], &m[0], 0);
	for (i = 0; i < E; i++) {
		ASSERT_EQ(0, cau_create(m[0].fd, 0, mem, 2, &trees[i]));
	}
	ASSERT_EQ(E, live_trees());
	ASSERT_EQ(E, pt_cau_hub_used(0));
	ASSERT_EQ(E, pt_cau_hub_used(1));
	ASSERT_EQ(0, cau_snap(self->before, TEXT));

	/* c d a, a's hub full and last: nothing taken on c's and d's. */
	set_member(&mem[0], &m[2], ROOT);
	set_member(&mem[1], &m[3], 0);
	set_member(&mem[2], &m[0], 0);
	ASSERT_EQ(-ENOSPC, cau_create(m[2].fd, 0, mem, 3, &t));
	ASSERT_UNCHANGED("c d a, a full");
	ASSERT_EQ(-ENOSPC, cau_create(m[0].fd, 0, mem, 3, &t));
	ASSERT_UNCHANGED("c d a from a, a full");
	set_member(&mem[0], &m[0], ROOT);
	ASSERT_EQ(-ENOSPC, cau_create(m[0].fd, 0, mem, 1, &t));
	ASSERT_UNCHANGED("a alone");
	set_member(&mem[0], &m[3], ROOT);
	set_member(&mem[1], &m[1], 0);
	ASSERT_EQ(-ENOSPC, cau_create(m[3].fd, 0, mem, 2, &t));
	ASSERT_UNCHANGED("d b, b full");

	/* c and d have room. */
	set_member(&mem[0], &m[2], ROOT);
	set_member(&mem[1], &m[3], 0);
	ASSERT_EQ(0, cau_create(m[2].fd, 0, mem, 2, &cd));
	ASSERT_EQ(1, pt_cau_hub_used(2));
	ASSERT_EQ(1, pt_cau_hub_used(3));
	ASSERT_EQ(0, cau_destroy(m[3].fd, cd));
	ASSERT_UNCHANGED("c d made and ended");
	ASSERT_EQ(0, expect_resets(&m[2], &cd, 1));

	/* One tree through a and b ends: a has one entry again. */
	ASSERT_EQ(0, cau_destroy(m[1].fd, trees[0]));
	ASSERT_EQ(0, expect_resets(&m[0], &trees[0], 1));
	ASSERT_EQ(E - 1, pt_cau_hub_used(0));
	ASSERT_EQ(E - 1, pt_cau_hub_used(1));
	set_member(&mem[0], &m[2], ROOT);
	set_member(&mem[1], &m[3], 0);
	set_member(&mem[2], &m[0], 0);
	ASSERT_EQ(0, cau_create(m[0].fd, 0, mem, 3, &trees[0]));
	ASSERT_EQ(E, pt_cau_hub_used(0));
	ASSERT_EQ(1, pt_cau_hub_used(2));
	ASSERT_EQ(1, pt_cau_hub_used(3));
	ASSERT_EQ(-ENOSPC, cau_create(m[0].fd, 0, mem, 3, &t));
	ASSERT_EQ(E, live_trees());

	/* The first is now a c-d-a tree, the others a-b trees. */
	ASSERT_EQ(0, cau_destroy(m[0].fd, trees[0]));
	ASSERT_EQ(0, expect_resets(&m[2], &trees[0], 1));
	ASSERT_EQ(0, expect_resets(&m[3], &trees[0], 1));
	for (i = 1; i < E; i++) {
		ASSERT_EQ(0, cau_destroy(m[0].fd, trees[i]));
		ASSERT_EQ(0, expect_resets(&m[1], &trees[i], 1));
	}
	ASSERT_CLEAN();
	usleep(10000);
	ASSERT_EQ(0, expect_none(&m[0]));
	free(trees);
}

/*
 * A member DESTROYs before it joined: allowed; the others are told,
 * joined or not.
 */
TEST_F(cau, destroy_before_join)
{
	struct percs_cau_member mem[3];
	uint32_t key = pt_new_key(), tree;
	struct mwin *m = self->m;
	int i;

	for (i = 0; i < 3; i++) {
		OPEN(i + 2, 1, key);
	}
	set_member(&mem[0], &m[0], ROOT);
	set_member(&mem[1], &m[1], 0);
	set_member(&mem[2], &m[2], 1);
	ASSERT_EQ(0, cau_create(m[0].fd, 0, mem, 3, &tree));
	ASSERT_EQ(0, cau_destroy(m[2].fd, tree));
	ASSERT_CLEAN();
	ASSERT_EQ(0, expect_resets(&m[0], &tree, 1));
	ASSERT_EQ(0, expect_resets(&m[1], &tree, 1));
	usleep(10000);
	ASSERT_EQ(0, expect_none(&m[2]));
	ASSERT_EQ(-ENOENT, cau_join(m[1].fd, tree));
}

/*
 * Releasing a member window ends every tree it is in (and no other):
 * each other member of those trees gets one -ECONNRESET per tree.
 */
TEST_F(cau, closing_a_member_ends_its_trees)
{
	struct percs_cau_member mem[3];
	uint32_t key = pt_new_key(), t1, t2, t3, ids[2];
	struct mwin *m = self->m;	/* a b c d: hubs 0-3 */
	struct percs_window_reserve req;
	struct tinfo ti;
	int i, hfd, fd;

	if (self->entries < 2)
		SKIP(return, "needs 2 CAU entries per hub");
	for (i = 0; i < 4; i++) {
		OPEN(i, (i + 1) & 1, key);
	}
	/* t1 = a b c by b; t2 = c a by c; t3 = b d by d. */
	set_member(&mem[0], &m[0], ROOT);
	set_member(&mem[1], &m[1], 0);
	set_member(&mem[2], &m[2], 0);
	ASSERT_EQ(0, cau_create(m[1].fd, 0, mem, 3, &t1));
	set_member(&mem[0], &m[2], ROOT);
	set_member(&mem[1], &m[0], 0);
	ASSERT_EQ(0, cau_create(m[2].fd, 0, mem, 2, &t2));
	set_member(&mem[0], &m[1], ROOT);
	set_member(&mem[1], &m[3], 0);
	ASSERT_EQ(0, cau_create(m[3].fd, 0, mem, 2, &t3));
	ASSERT_EQ(0, cau_join(m[0].fd, t1));
	ASSERT_EQ(0, cau_join(m[2].fd, t1));
	ASSERT_EQ(0, cau_join(m[0].fd, t2));
	ASSERT_EQ(3, live_trees());

	mwin_close(&m[0]);
	ASSERT_EQ(1, live_trees());
	ASSERT_EQ(-ENOENT, tree_info(t1, &ti));
	ASSERT_EQ(-ENOENT, tree_info(t2, &ti));
	ASSERT_EQ(0, tree_info(t3, &ti));
	ASSERT_EQ(0, pt_cau_hub_used(0));
	ASSERT_EQ(1, pt_cau_hub_used(1));
	ASSERT_EQ(0, pt_cau_hub_used(2));
	ASSERT_EQ(1, pt_cau_hub_used(3));
	ASSERT_EQ(0, expect_resets(&m[1], &t1, 1));
	ids[0] = t1;
	ids[1] = t2;
	ASSERT_EQ(0, expect_resets(&m[2], ids, 2));
	usleep(10000);
	ASSERT_EQ(0, expect_none(&m[3]));
	ASSERT_EQ(-ENOENT, cau_join(m[1].fd, t1));
	ASSERT_EQ(-ENOENT, cau_destroy(m[2].fd, t2));
	ASSERT_EQ(0, cau_join(m[1].fd, t3));

	/* The last tree ends with its creator's window. */
	mwin_close(&m[3]);
	ASSERT_CLEAN();
	ASSERT_EQ(0, expect_resets(&m[1], &t3, 1));
	usleep(10000);
	ASSERT_EQ(0, expect_none(&m[2]));

	/* A window never mapped, released by close(2) of its fd. */
	hfd = pt_hfi_open_fd(5, 0);
	ASSERT_LE(0, hfd);
	fd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, PERCS_WINDOW_ANY,
			    &req);
	ASSERT_LE(0, fd);
	close(hfd);
	mem[0].win = req.addr;
	mem[0].parent = ROOT;
	set_member(&mem[1], &m[1], 0);
	set_member(&mem[2], &m[2], 0);
	ASSERT_EQ(0, cau_create(fd, 0, mem, 3, &t1));
	ASSERT_EQ(0, cau_join(m[1].fd, t1));
	ASSERT_EQ(1, pt_cau_hub_used(5));
	ASSERT_EQ(0, close(fd));
	ASSERT_CLEAN();
	ASSERT_EQ(0, expect_resets(&m[1], &t1, 1));
	ASSERT_EQ(0, expect_resets(&m[2], &t1, 1));
	mwin_close(&m[1]);
	mwin_close(&m[2]);
	ASSERT_LIVE_ZERO();
}

/*
 * A process holding members is killed: its trees end, the members in
 * other processes are told, nothing is left.
 */
TEST_F(cau, killed_process_ends_its_trees)
{
	struct mwin *m = self->m;	/* ours: hubs 2 and 3 */
	uint32_t key = pt_new_key(), ids[3], both[2];
	int pfd[2], status, i;
	size_t got = 0;
	pid_t pid;

	if (self->entries < 2)
		SKIP(return, "needs 2 CAU entries per hub");
	OPEN(2, 0, key);
	OPEN(3, 1, key);
	ASSERT_EQ(0, pipe(pfd));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct percs_cau_member mem[4];
		struct mwin c0, c1;

		close(pfd[0]);
		/* t1 = c0 c1 p2 p3; t2 = c1 p2; t3 = c0 alone. */
		if (mwin_open(&c0, 0, 0, key) || mwin_open(&c1, 1, 1, key))
			_exit(1);
		set_member(&mem[0], &c0, ROOT);
		set_member(&mem[1], &c1, 0);
		set_member(&mem[2], &m[0], 0);
		set_member(&mem[3], &m[1], 1);
		if (cau_create(c0.fd, 0, mem, 4, &ids[0]))
			_exit(2);
		set_member(&mem[0], &c1, ROOT);
		set_member(&mem[1], &m[0], 0);
		if (cau_create(c1.fd, 0, mem, 2, &ids[1]))
			_exit(3);
		set_member(&mem[0], &c0, ROOT);
		if (cau_create(c0.fd, 0, mem, 1, &ids[2]))
			_exit(4);
		if (write(pfd[1], ids, sizeof(ids)) != sizeof(ids))
			_exit(5);
		for (;;)
			pause();
	}
	close(pfd[1]);
	while (got < sizeof(ids)) {
		ssize_t r = read(pfd[0], (char *)ids + got, sizeof(ids) - got);

		if (r <= 0)
			break;
		got += r;
	}
	close(pfd[0]);
	if (got != sizeof(ids)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		TH_LOG("child: status 0x%x", status);
	}
	ASSERT_EQ(sizeof(ids), got);
	ASSERT_EQ(3, live_trees());
	ASSERT_EQ(0, cau_join(m[0].fd, ids[0]));
	ASSERT_EQ(0, cau_join(m[1].fd, ids[0]));
	ASSERT_EQ(0, cau_join(m[0].fd, ids[1]));
	ASSERT_EQ(-EPERM, cau_join(m[1].fd, ids[2]));

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_CLEAN();
	both[0] = ids[0];
	both[1] = ids[1];
	ASSERT_EQ(0, expect_resets(&m[0], both, 2));
	ASSERT_EQ(0, expect_resets(&m[1], &ids[0], 1));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(-ENOENT, cau_destroy(m[0].fd, ids[i]));
	}
	mwin_close(&m[0]);
	mwin_close(&m[1]);
	ASSERT_LIVE_ZERO();
}

/*
 * Thousands of trees made and ended in turn, by every member, some two
 * at a time: every end told to the right members, an ended id never
 * valid again, no completion lost, nothing left.
 */
TEST_F_TIMEOUT(cau, create_destroy_loop, 120)
{
	static const uint32_t par[4] = { ROOT, 0, 1, 1 };
	unsigned long n = pt_scale(2000), it;
	struct percs_cau_member mem[4];
	uint32_t key = pt_new_key(), prev = 0, t[2];
	struct mwin *m = self->m;
	int i, k, two, cr, de;

	for (i = 0; i < 4; i++) {
		OPEN(i * 2, i & 1, key);	/* hubs 0 2 4 6 */
	}
	for (i = 0; i < 4; i++)
		set_member(&mem[i], &m[i], par[i]);
	for (it = 0; it < n; it++) {
		two = self->entries >= 2 && it % 3 == 0;
		cr = it % 4;
		de = (it / 4 + cr + 1) % 4;
		for (k = 0; k <= two; k++) {
			ASSERT_EQ(0, cau_create(m[cr].fd, k ? PERCS_CAU_F_ORDERED : 0,
						mem, 4, &t[k]))
				TH_LOG("iteration %lu", it);
			/* Ids are not reused until the 32-bit space wraps. */
			ASSERT_TRUE(t[k] > prev || prev > 0xffff0000u)
				TH_LOG("id %u after %u", t[k], prev);
			prev = t[k];
			for (i = 0; i < 4; i++) {
				ASSERT_EQ(i == cr ? -EALREADY : 0,
					  cau_join(m[i].fd, t[k]));
			}
		}
		for (k = two; k >= 0; k--) {
			ASSERT_EQ(0, cau_destroy(m[de].fd, t[k]))
				TH_LOG("iteration %lu", it);
			ASSERT_EQ(-ENOENT, cau_destroy(m[cr].fd, t[k]));
			ASSERT_EQ(-ENOENT, cau_join(m[de].fd, t[k]));
			for (i = 0; i < 4; i++) {
				ASSERT_EQ(0, expect_resets(&m[i], &t[k],
							   i == de ? 0 : 1))
					TH_LOG("iteration %lu", it);
			}
		}
	}
	ASSERT_CLEAN();
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, percs_window_status(m[i].w)->cq_overflows);
		mwin_close(&m[i]);
	}
	ASSERT_LIVE_ZERO();
}

/* Concurrent DESTROYs of one tree by all its members. */
struct destroyers {
	pthread_barrier_t go, done;
	int fd[4];
	_Atomic uint32_t tree;
	int res[4];
	bool stop;
};

struct destroyer_arg {
	struct destroyers *d;
	int idx;
};

static void *destroyer(void *p)
{
	struct destroyer_arg *a = p;
	struct destroyers *d = a->d;

	for (;;) {
		pthread_barrier_wait(&d->go);
		if (d->stop)
			return NULL;
		d->res[a->idx] = cau_destroy(d->fd[a->idx], d->tree);
		pthread_barrier_wait(&d->done);
	}
}

TEST_F_TIMEOUT(cau, concurrent_destroys_one_wins, 60)
{
	unsigned long n = pt_scale(400), it;
	struct destroyer_arg args[4];
	struct percs_cau_member mem[4];
	uint32_t key = pt_new_key(), tree;
	struct mwin *m = self->m;
	struct destroyers d;
	pthread_t th[4];
	int i, wins;

	for (i = 0; i < 4; i++) {
		OPEN(7 - i, i & 1, key);
	}
	for (i = 0; i < 4; i++) {
		set_member(&mem[i], &m[i], i ? 0 : ROOT);
		d.fd[i] = m[i].fd;
	}
	d.stop = false;
	ASSERT_EQ(0, pthread_barrier_init(&d.go, NULL, 5));
	ASSERT_EQ(0, pthread_barrier_init(&d.done, NULL, 5));
	for (i = 0; i < 4; i++) {
		args[i].d = &d;
		args[i].idx = i;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, destroyer, &args[i]));
	}
	for (it = 0; it < n; it++) {
		int winner = -1;

		ASSERT_EQ(0, cau_create(m[it % 4].fd, 0, mem, 4, &tree));
		d.tree = tree;
		pthread_barrier_wait(&d.go);
		pthread_barrier_wait(&d.done);
		for (i = 0, wins = 0; i < 4; i++) {
			if (!d.res[i]) {
				wins++;
				winner = i;
			} else {
				EXPECT_EQ(-ENOENT, d.res[i]);
			}
		}
		EXPECT_EQ(1, wins) TH_LOG("iteration %lu", it);
		if (wins != 1)
			break;
		for (i = 0; i < 4; i++) {
			EXPECT_EQ(0, expect_resets(&m[i], &tree,
						   i == winner ? 0 : 1))
				TH_LOG("iteration %lu", it);
		}
		if (_metadata->passed != 1)
			break;
	}
	d.stop = true;
	pthread_barrier_wait(&d.go);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&d.go);
	pthread_barrier_destroy(&d.done);
	ASSERT_CLEAN();
}

/*
 * A member window released while a tree naming it is being created: the
 * tree must not outlive the window (PERCS_IOC_CAU_CREATE checks the
 * member windows and the release ends the trees of a window; whichever
 * comes second must see the other).  The releaser reserves a victim
 * window and publishes its address; the creator announces each create
 * just before the ioctl and the releaser closes the victim a random time
 * later, within twice the time a create takes, so the release lands all
 * over the create.  The victim is first in the member array, before many
 * other members, so that its check comes early.  At the end every tree
 * created must have ended, and the other members must have been told.
 */
struct race {
	int hfd[2];			/* the victim hub's HFIs */
	uint32_t key;
	_Atomic uint64_t pub;		/* seq << 32 | unit << 16 | window */
	_Atomic uint64_t go;		/* the seq whose create starts now */
	_Atomic uint64_t attempted;	/* the last seq the creator tried */
	_Atomic unsigned int create_us;	/* how long a create takes */
	_Atomic bool stop;
	int cpu;			/* the releaser's CPU, or -1 */
	int iters;			/* victims released */
	int errors;			/* releaser failures */
};

static void spin_us(unsigned int us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000L +
		 (b.tv_nsec - a.tv_nsec) / 1000 < (long)us);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Wait (spinning, 2 s at most) until *@v reaches @seq or stop. */
static bool wait_seq(struct race *r, _Atomic uint64_t *v, uint64_t seq)
{
	uint64_t deadline = pt_now_ms() + 2000;

	while (*v < seq) {
		if (r->stop || pt_now_ms() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

static void *releaser(void *p)
{
	struct race *r = p;
	struct percs_window_reserve req;
	unsigned int seed = 12345;
	uint64_t seq;
	int fd;

	pin_to(r->cpu);
	for (seq = 1; !r->stop; seq++) {
		unsigned int unit = seq & 1;

		fd = pt_reserve_raw(r->hfd[unit], 0, FIFO_4K, FIFO_4K, r->key,
				    PERCS_WINDOW_ANY, &req);
		if (fd < 0) {
			r->errors++;
			break;
		}
		r->pub = seq << 32 | unit << 16 | req.addr.window;
		if (wait_seq(r, &r->go, seq))
			spin_us(rand_r(&seed) % (2 * r->create_us + 1));
		close(fd);	/* no mapping: the window is released here */
		r->iters++;
		wait_seq(r, &r->attempted, seq);
	}
	return NULL;
}

TEST_F_TIMEOUT(cau, member_released_during_create, 90)
{
	uint32_t key = pt_new_key(), *ok_ids;
	unsigned long max_ok = 100000, nok = 0, refused = 0, other = 0;
	struct percs_cau_member *mem;
	struct mwin *m = self->m;
	uint64_t last = 0, end, t0, total_us = 0;
	int i, n, survivors = 0, resets = 0, last_err = 0;
	struct race r = { .key = key, .create_us = 100, .cpu = -1 };
	struct percs_cqe c;
	pthread_t th;

	/* Members: the victim first, then m[0..n-1] in a chain to the root. */
	n = (self->hubs < 64 ? self->hubs : 64) - 1;
	for (i = 0; i < n; i++) {
		OPEN(i, i & 1, key);
	}
	mem = calloc(n + 1, sizeof(*mem));
	ok_ids = calloc(max_ok, sizeof(*ok_ids));
	ASSERT_NE(NULL, mem);
	ASSERT_NE(NULL, ok_ids);
	for (i = 0; i < n; i++)
		set_member(&mem[i + 1], &m[i], i + 1 < n ? i + 2 : ROOT);
	mem[0].parent = 1;
	mem[0].win.hub = n;
	for (i = 0; i < 2; i++) {
		r.hfd[i] = pt_hfi_open_fd(n, i);
		ASSERT_LE(0, r.hfd[i]);
	}
	/* The two sides on two CPUs, where there are two. */
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		pin_to(0);
		r.cpu = 1;
	}
	ASSERT_EQ(0, pthread_create(&th, NULL, releaser, &r));

	end = pt_now_ms() + 3000;
	while (pt_now_ms() < end && nok < max_ok) {
		uint64_t pub = r.pub;
		uint32_t tree;
		int ret;

		if (pub >> 32 == last) {
			sched_yield();
			continue;
		}
		last = pub >> 32;
		mem[0].win.hfi = (pub >> 16) & 1;
		mem[0].win.window = pub & 0xffff;
		t0 = now_us();
		r.go = last;
		ret = cau_create(m[0].fd, 0, mem, n + 1, &tree);
		total_us += now_us() - t0;
		r.create_us = total_us / last + 1;
		r.attempted = last;
		if (!ret) {
			ok_ids[nok++] = tree;
		} else if (ret == -ECONNREFUSED) {
			refused++;
		} else {
			/* ENOSPC: entries of trees that outlived a victim. */
			other++;
			last_err = ret;
			break;
		}
		/* m[0] is told of every tree the victim's release ended. */
		while (percs_cq_poll(m[0].w, &c, 1) == 1) {
			if (c.kind == PERCS_PKT_COLL && c.res == -ECONNRESET)
				resets++;
		}
	}
	r.stop = true;
	pthread_join(th, NULL);
	close(r.hfd[0]);
	close(r.hfd[1]);
	usleep(10000);
	while (percs_cq_poll(m[0].w, &c, 1) == 1)
		if (c.kind == PERCS_PKT_COLL && c.res == -ECONNRESET)
			resets++;
	/* Every victim is closed: every tree naming one must be gone. */
	for (i = 0; i < (int)nok; i++) {
		int ret = cau_destroy(m[0].fd, ok_ids[i]);

		if (ret != -ENOENT) {
			if (survivors < 5)
				TH_LOG("tree %u outlived its released member (DESTROY: %d)",
				       ok_ids[i], ret);
			survivors++;
		}
	}
	TH_LOG("%d victims, a create %u us, %lu trees made, %lu refused, %lu other errors (last %d), %d survivors, %d resets",
	       r.iters, r.create_us, nok, refused, other, last_err, survivors,
	       resets);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(0, survivors);
	EXPECT_EQ(0, other);
	EXPECT_EQ(nok - survivors, resets);
	ASSERT_CLEAN();
	free(mem);
	free(ok_ids);
}

TEST_HARNESS_MAIN
