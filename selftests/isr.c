// SPDX-License-Identifier: GPL-2.0
/*
 * percs selftests: the ISR - route modes, link counters, link faults.
 *
 * Runs on a 3x4 system (selftests/isr.modparams): three supernodes, so
 * that indirect routes exist.  Traffic from hub 0 (supernode 0) to hub 4
 * (supernode 1) in each route mode is checked on the links it crosses: a
 * direct route crosses one D link, an indirect one two (the second on
 * virtual channel 1).  Links go down and up with traffic continuing, the
 * last route going gives the sender -EHOSTUNREACH, transient link errors
 * are replayed without loss, and the counters add up.  "percs-ctl reach"
 * ($PERCS_BUILD/tools/percs-ctl) says, with links down, which routes each
 * pair of hubs has left: sends in every mode get through or fail as it
 * says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO		PERCS_FIFO_DEF_SIZE
#define MAX_LINKS	4096
#define SRC_HUB		0	/* supernode 0 */
#define DST_HUB		4	/* supernode 1 */
#define SAME_SN_HUB	1	/* supernode 0 */

struct link {
	unsigned int id, hub_a, hub_b;
	char cls[4];
	bool up;
	unsigned long long packets, flits, vc[3], replays;
};

struct links {
	struct link l[MAX_LINKS];
	unsigned int n;
};

static int link_set(unsigned int id, bool up)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", id);
	return pt_isr_write(up ? "link_up" : "link_down", buf);
}

/* isr/links, its columns found by the header's names. */
static int read_links(struct links *ls)
{
	static const char *const want[] = {
		"id", "class", "hub_a", "hub_b", "state", "packets", "flits",
		"flits_vc0", "flits_vc1", "flits_vc2", "replays",
	};
	int col[11], ncol = 0, i, c;
	char line[512], *tok, *save;
	FILE *f = fopen(PT_ISR_DIR "links", "re");

	if (!f)
		return -errno;
	ls->n = 0;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	for (i = 0; i < 11; i++)
		col[i] = -1;
	for (tok = strtok_r(line, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), ncol++)
		for (i = 0; i < 11; i++)
			if (!strcmp(tok, want[i]))
				col[i] = ncol;
	for (i = 0; i < 11; i++)
		if (col[i] < 0) {
			fclose(f);
			return -EPROTO;
		}
	while (ls->n < MAX_LINKS && fgets(line, sizeof(line), f)) {
		struct link *l = &ls->l[ls->n++];

		for (c = 0, tok = strtok_r(line, " \n", &save); tok;
		     c++, tok = strtok_r(NULL, " \n", &save)) {
			unsigned long long v = strtoull(tok, NULL, 10);

			if (c == col[0])
				l->id = v;
			else if (c == col[1])
				snprintf(l->cls, sizeof(l->cls), "%s", tok);
			else if (c == col[2])
				l->hub_a = v;
			else if (c == col[3])
				l->hub_b = v;
			else if (c == col[4])
				l->up = !strcmp(tok, "up");
			else if (c == col[5])
				l->packets = v;
			else if (c == col[6])
				l->flits = v;
			else if (c == col[7])
				l->vc[0] = v;
			else if (c == col[8])
				l->vc[1] = v;
			else if (c == col[9])
				l->vc[2] = v;
			else if (c == col[10])
				l->replays = v;
		}
	}
	fclose(f);
	return 0;
}

static bool is_d(const struct link *l)
{
	return !strcmp(l->cls, "D");
}

/* D links between supernode 0 (hubs 0-3) and supernode 1 (hubs 4-7). */
static bool d_sn0_sn1(const struct link *l)
{
	unsigned int a = l->hub_a / 4, b = l->hub_b / 4;

	return is_d(l) && ((a == 0 && b == 1) || (a == 1 && b == 0));
}

/* What crossed the links between two snapshots. */
struct delta {
	unsigned long long packets, flits, d_packets, d_vc1, replays;
	unsigned long long on_down;	/* packets on links that are down */
	unsigned long long max_link;	/* most packets on one link */
};

static void links_delta(const struct links *a, const struct links *b,
			struct delta *d)
{
	unsigned int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < a->n && i < b->n; i++) {
		unsigned long long p = b->l[i].packets - a->l[i].packets;

		d->packets += p;
		d->flits += b->l[i].flits - a->l[i].flits;
		d->replays += b->l[i].replays - a->l[i].replays;
		if (is_d(&b->l[i])) {
			d->d_packets += p;
			d->d_vc1 += b->l[i].vc[1] - a->l[i].vc[1];
		}
		if (!b->l[i].up)
			d->on_down += p;
		if (p > d->max_link)
			d->max_link = p;
	}
}

/* What every test here starts with. */
struct isr_env {
	struct percs_hfi *hfi[3];	/* hub 0, hub 4, hub 1 */
	struct percs_window *tx, *rx, *rx_same;
	struct links *before, *after;
	uint32_t key;
};

static void env_setup(struct __test_metadata *_metadata, struct isr_env *e)
{
	struct percs_hfi_info info = { 0 };

	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(SRC_HUB, 0, &e->hfi[0]));
	ASSERT_EQ(0, percs_hfi_info(e->hfi[0], &info));
	if (info.nr_supernodes < 3 || info.hubs_per_supernode != 4)
		SKIP(return, "needs the 3x4 topology of isr.modparams");
	ASSERT_EQ(0, pt_hfi_open(DST_HUB, 0, &e->hfi[1]));
	ASSERT_EQ(0, pt_hfi_open(SAME_SN_HUB, 0, &e->hfi[2]));
	e->key = pt_new_key();
	ASSERT_EQ(0, pt_reserve(e->hfi[0], 0, FIFO, FIFO, e->key,
				PERCS_WINDOW_ANY, &e->tx));
	ASSERT_EQ(0, pt_reserve(e->hfi[1], 0, FIFO, FIFO, e->key,
				PERCS_WINDOW_ANY, &e->rx));
	ASSERT_EQ(0, pt_reserve(e->hfi[2], 0, FIFO, FIFO, e->key,
				PERCS_WINDOW_ANY, &e->rx_same));
	e->before = calloc(1, sizeof(struct links));
	e->after = calloc(1, sizeof(struct links));
	ASSERT_NE(NULL, e->before);
	ASSERT_NE(NULL, e->after);
}

static void env_teardown(struct isr_env *e)
{
	struct links *ls = e->after;
	unsigned int i;

	/* Leave every link up and error-free for the next test. */
	if (ls && !read_links(ls))
		for (i = 0; i < ls->n; i++)
			if (!ls->l[i].up)
				link_set(ls->l[i].id, true);
	pt_isr_write("link_error", "all 0");
	if (e->tx)
		percs_window_release(e->tx);
	if (e->rx)
		percs_window_release(e->rx);
	if (e->rx_same)
		percs_window_release(e->rx_same);
	for (i = 0; i < 3; i++)
		if (e->hfi[i])
			percs_hfi_close(e->hfi[i]);
	free(e->before);
	free(e->after);
}

/* Tests of the links, on the default route mode. */
FIXTURE(isr) {
	struct isr_env e;
};

FIXTURE_SETUP(isr)
{
	env_setup(_metadata, &self->e);
}

FIXTURE_TEARDOWN(isr)
{
	env_teardown(&self->e);
}

/* Tests run once per route mode. */
FIXTURE(mode) {
	struct isr_env e;
};

FIXTURE_SETUP(mode)
{
	env_setup(_metadata, &self->e);
}

FIXTURE_TEARDOWN(mode)
{
	env_teardown(&self->e);
}

/*
 * Send @n FIFO packets (tag = sequence) from tx to @rx in @mode and take
 * them: each must arrive once, intact.  Returns the number of packets
 * that arrived after a later one; -1 on a failure (already reported).
 */
static long stream(struct __test_metadata *_metadata, struct percs_window *tx,
		   struct percs_window *rx, uint8_t mode, uint16_t arg,
		   unsigned int n)
{
	unsigned char buf[256], got[256];
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_FIFO, .route = mode, .route_arg = arg,
		.dst = percs_window_addr(rx),
	};
	unsigned char *seen = calloc(n, 1);
	unsigned int sent = 0, recvd = 0, inversions = 0;
	long max_seq = -1;
	uint64_t deadline = pt_now_ms() + 4 * PT_TIMEOUT_MS;

	if (!seen)
		return -1;
	while (recvd < n && pt_now_ms() < deadline) {
		struct percs_pkt_hdr rh;
		int ret;

		if (sent < n) {
			h.tag = sent;
			pt_fill(buf, sizeof(buf), sent);
			ret = percs_send_compose_hdr(tx, &h, buf, sizeof(buf));
			if (!ret)
				sent++;
			else if (ret != -EAGAIN)
				break;
			if (ret || sent % 16 == 0 || sent == n)
				percs_send_trigger(tx);
		}
		while ((ret = percs_recv(rx, &rh, got, sizeof(got))) >= 0) {
			pt_fill(buf, sizeof(buf), rh.tag);
			if (rh.tag >= n || seen[rh.tag]++ ||
			    ret != sizeof(got) || memcmp(buf, got, ret)) {
				TH_LOG("bad or repeated packet, tag %u", rh.tag);
				free(seen);
				return -1;
			}
			if ((long)rh.tag < max_seq)
				inversions++;
			else
				max_seq = rh.tag;
			recvd++;
		}
	}
	free(seen);
	if (recvd != n) {
		TH_LOG("%u of %u packets arrived (%u sent)", recvd, n, sent);
		return -1;
	}
	return inversions;
}

/* The send of one packet fails: its completion carries @want. */
static void expect_send_error(struct __test_metadata *_metadata,
			      struct percs_window *tx, struct percs_window *rx,
			      uint8_t mode, uint16_t arg, int want)
{
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_FIFO, .route = mode, .route_arg = arg,
		.dst = percs_window_addr(rx), .tag = 0xe0e0,
	};
	struct percs_cqe cqe;

	ASSERT_EQ(0, percs_send_compose_hdr(tx, &h, NULL, 0));
	ASSERT_EQ(0, percs_send_trigger(tx));
	ASSERT_EQ(1, pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS));
	EXPECT_EQ(want, cqe.res);
	EXPECT_EQ(0xe0e0, cqe.user_data);
}

TEST_F(isr, topology_and_links_listed)
{
	struct links *ls = self->e.before;
	unsigned int i, ll = 0, lr = 0, d = 0;
	long nlinks = -1;
	char name[32], line[128];
	long val;
	FILE *f;

	f = fopen(PT_ISR_DIR "topology", "re");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %ld", name, &val) == 2 &&
		    !strcmp(name, "links"))
			nlinks = val;
		if (!strncmp(line, "spec ", 5))
			EXPECT_STREQ("spec 3x4\n", line);
	}
	fclose(f);
	ASSERT_EQ(0, read_links(ls));
	EXPECT_EQ(nlinks, ls->n);
	for (i = 0; i < ls->n; i++) {
		EXPECT_EQ(i, ls->l[i].id);
		EXPECT_TRUE(ls->l[i].up);
		ll += !strcmp(ls->l[i].cls, "LL");
		lr += !strcmp(ls->l[i].cls, "LR");
		d += is_d(&ls->l[i]);
	}
	/* 3 supernodes of 4 hubs: one drawer each, 6 LL links each. */
	EXPECT_EQ(18, ll);
	EXPECT_EQ(0, lr);
	EXPECT_EQ(ls->n - 18, d);
	EXPECT_LT(0, d);
}

FIXTURE_VARIANT(mode) {
	uint8_t mode;
	int arg;		/* sw_indirect: the intermediate supernode */
	unsigned int d_hops_min, d_hops_max;	/* per packet */
};

FIXTURE_VARIANT_ADD(mode, direct) {
	.mode = PERCS_ROUTE_DIRECT, .d_hops_min = 1, .d_hops_max = 1,
};

FIXTURE_VARIANT_ADD(mode, direct_striped) {
	.mode = PERCS_ROUTE_DIRECT_STRIPED, .d_hops_min = 1, .d_hops_max = 2,
};

FIXTURE_VARIANT_ADD(mode, sw_indirect) {
	.mode = PERCS_ROUTE_SW_INDIRECT, .arg = 2, .d_hops_min = 2,
	.d_hops_max = 2,
};

FIXTURE_VARIANT_ADD(mode, hw_indirect) {
	.mode = PERCS_ROUTE_HW_INDIRECT, .d_hops_min = 2, .d_hops_max = 2,
};

/* Every packet arrives once; the D links carry what the mode says. */
TEST_F(mode, routes_and_counts)
{
	unsigned int n = pt_scale(2000) + 16;
	struct delta d;
	long inv;

	ASSERT_EQ(0, read_links(self->e.before));
	inv = stream(_metadata, self->e.tx, self->e.rx, variant->mode,
		     variant->arg, n);
	ASSERT_LE(0, inv);
	ASSERT_EQ(0, read_links(self->e.after));
	links_delta(self->e.before, self->e.after, &d);
	TH_LOG("%u packets: %llu link crossings, %llu on D links (%llu flits on D vc 1), %ld out of order",
	       n, d.packets, d.d_packets, d.d_vc1, inv);
	EXPECT_LE(variant->d_hops_min * n, d.d_packets);
	EXPECT_GE(variant->d_hops_max * n, d.d_packets);
	/* Counters add up: 256 B + header is 3 flits on every crossing. */
	EXPECT_EQ(3 * d.packets, d.flits);
	/* At most L-D-L direct, L-D-L-D-L indirect. */
	EXPECT_LE(d.packets, (variant->d_hops_max == 1 ? 3 : 5) * n);
	EXPECT_LE(n, d.packets);
	if (variant->d_hops_min == 2)
		/* The second D hop of an indirect route is on VC 1. */
		EXPECT_EQ(3 * n, d.d_vc1);
	if (variant->d_hops_max == 1)
		EXPECT_EQ(0, d.d_vc1);
	if (variant->mode == PERCS_ROUTE_DIRECT_STRIPED) {
		/* Round robin over direct and indirect routes. */
		EXPECT_LT(n, d.d_packets);
		EXPECT_GT(2 * n, d.d_packets);
		/* Longer routes arrive later: the stream is reordered. */
		EXPECT_LT(0, inv);
	}
	if (variant->mode == PERCS_ROUTE_DIRECT)
		EXPECT_EQ(0, inv);
}

/* A software-named intermediate supernode must be a third one. */
TEST_F(isr, sw_indirect_bad_supernode_refused)
{
	expect_send_error(_metadata, self->e.tx, self->e.rx,
			  PERCS_ROUTE_SW_INDIRECT, 0, -EINVAL);
	expect_send_error(_metadata, self->e.tx, self->e.rx,
			  PERCS_ROUTE_SW_INDIRECT, 1, -EINVAL);
	expect_send_error(_metadata, self->e.tx, self->e.rx,
			  PERCS_ROUTE_SW_INDIRECT, 3, -EINVAL);
	EXPECT_LE(0, stream(_metadata, self->e.tx, self->e.rx,
			    PERCS_ROUTE_SW_INDIRECT, 2, 8));
}

/*
 * D links between supernodes 0 and 1 go down one by one: traffic goes on
 * over the others; with the last one down, direct sends fail with
 * -EHOSTUNREACH while striped and indirect ones go through supernode 2;
 * links back up, direct works again.
 */
TEST_F(isr, d_links_down_traffic_continues)
{
	unsigned int ids[MAX_LINKS], nd = 0, i;
	struct links *ls = self->e.before;
	struct delta d;

	ASSERT_EQ(0, read_links(ls));
	for (i = 0; i < ls->n; i++)
		if (d_sn0_sn1(&ls->l[i]))
			ids[nd++] = ls->l[i].id;
	ASSERT_LT(1, nd);
	for (i = 0; i + 1 < nd; i++)
		ASSERT_EQ(0, link_set(ids[i], false));
	ASSERT_EQ(0, read_links(self->e.before));
	ASSERT_LE(0, stream(_metadata, self->e.tx, self->e.rx, PERCS_ROUTE_DIRECT,
			    0, 200));
	ASSERT_EQ(0, read_links(self->e.after));
	links_delta(self->e.before, self->e.after, &d);
	EXPECT_EQ(0, d.on_down);
	EXPECT_EQ(200, d.d_packets);

	ASSERT_EQ(0, link_set(ids[nd - 1], false));
	expect_send_error(_metadata, self->e.tx, self->e.rx, PERCS_ROUTE_DIRECT, 0,
			  -EHOSTUNREACH);
	ASSERT_EQ(0, read_links(self->e.before));
	EXPECT_LE(0, stream(_metadata, self->e.tx, self->e.rx,
			    PERCS_ROUTE_DIRECT_STRIPED, 0, 200));
	EXPECT_LE(0, stream(_metadata, self->e.tx, self->e.rx,
			    PERCS_ROUTE_HW_INDIRECT, 0, 200));
	ASSERT_EQ(0, read_links(self->e.after));
	links_delta(self->e.before, self->e.after, &d);
	EXPECT_EQ(0, d.on_down);
	EXPECT_EQ(2 * 400, d.d_packets);

	for (i = 0; i < nd; i++)
		ASSERT_EQ(0, link_set(ids[i], true));
	EXPECT_LE(0, stream(_metadata, self->e.tx, self->e.rx, PERCS_ROUTE_DIRECT,
			    0, 50));
}

/* The L link between two hubs down: only routes via another supernode. */
TEST_F(isr, l_link_down_indirect_only)
{
	struct links *ls = self->e.before;
	unsigned int i, id = MAX_LINKS;

	ASSERT_EQ(0, read_links(ls));
	for (i = 0; i < ls->n; i++)
		if (!is_d(&ls->l[i]) &&
		    ((ls->l[i].hub_a == SRC_HUB && ls->l[i].hub_b == SAME_SN_HUB) ||
		     (ls->l[i].hub_b == SRC_HUB && ls->l[i].hub_a == SAME_SN_HUB)))
			id = ls->l[i].id;
	ASSERT_GT(MAX_LINKS, id);
	ASSERT_EQ(0, link_set(id, false));
	expect_send_error(_metadata, self->e.tx, self->e.rx_same,
			  PERCS_ROUTE_DIRECT, 0, -EHOSTUNREACH);
	EXPECT_LE(0, stream(_metadata, self->e.tx, self->e.rx_same,
			    PERCS_ROUTE_HW_INDIRECT, 0, 100));
	ASSERT_EQ(0, link_set(id, true));
	EXPECT_LE(0, stream(_metadata, self->e.tx, self->e.rx_same,
			    PERCS_ROUTE_DIRECT, 0, 100));
}

/* ---- percs-ctl reach against the module's routing ---- */

#define NHUBS		12	/* 3x4 */
#define NSN		3

/* What reach says of one ordered pair of hubs. */
struct reach_pair {
	bool listed;		/* lost a route */
	unsigned int direct, direct_total, indirect, indirect_total;
	bool via[NSN];
};

struct reach {
	struct reach_pair p[NHUBS][NHUBS];
	unsigned int checked, lost, unreachable;
	unsigned int down_now;	/* links it lists as down now */
};

/* "1-2,4" or "-" into @via; false if malformed. */
static bool parse_vias(const char *s, bool *via)
{
	unsigned int a, b;
	int n;

	if (!strcmp(s, "-"))
		return true;
	while (*s) {
		if (sscanf(s, "%u-%u%n", &a, &b, &n) == 2) {
			s += n;
		} else if (sscanf(s, "%u%n", &a, &n) == 1) {
			b = a;
			s += n;
		} else {
			return false;
		}
		if (a > b || b >= NSN)
			return false;
		while (a <= b)
			via[a++] = true;
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	}
	return true;
}

/* Run "percs-ctl reach" on the module and read its text; 0 or -errno. */
static int run_reach(struct __test_metadata *_metadata, struct reach *r)
{
	const char *build = getenv("PERCS_BUILD");
	char cmd[4200], line[512], via[128];
	bool table = false, summary = false;
	unsigned int s, d, dl, dt, il, it;
	FILE *f;

	memset(r, 0, sizeof(*r));
	snprintf(cmd, sizeof(cmd), "%s/tools/percs-ctl", build ? build : "build");
	if (access(cmd, X_OK))
		return -ENOENT;
	strncat(cmd, " reach", sizeof(cmd) - strlen(cmd) - 1);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "hub pairs: %u checked, %u lost routes, %u unreachable",
			   &r->checked, &r->lost, &r->unreachable) == 3) {
			table = false;
			summary = true;
		} else if (strstr(line, " FROM ") && strstr(line, " VIA")) {
			table = true;
		} else if (table) {
			struct reach_pair *p;

			if (sscanf(line, "%u %u %u/%u %u/%u %127s", &s, &d, &dl,
				   &dt, &il, &it, via) != 7 || s >= NHUBS ||
			    d >= NHUBS || s == d) {
				TH_LOG("reach: bad line '%s'", line);
				pclose(f);
				return -EPROTO;
			}
			p = &r->p[s][d];
			*p = (struct reach_pair) {
				.listed = true, .direct = dl,
				.direct_total = dt, .indirect = il,
				.indirect_total = it,
			};
			if (!parse_vias(via, p->via)) {
				TH_LOG("reach: bad vias '%s'", via);
				pclose(f);
				return -EPROTO;
			}
		} else if (strstr(line, " now\n") || strstr(line, " now, named\n")) {
			r->down_now++;
		}
	}
	if (pclose(f)) {
		TH_LOG("'%s' failed", cmd);
		return -EIO;
	}
	return summary ? 0 : -EPROTO;
}

/*
 * One packet from @tx to @rx in @mode (@arg: sw_indirect's supernode),
 * with a completion: its status.
 */
static int send_one(struct percs_window *tx, struct percs_window *rx,
		    uint8_t mode, uint16_t arg)
{
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_FIFO, .route = mode, .route_arg = arg,
		.flags = PERCS_PKT_F_NOTIFY, .dst = percs_window_addr(rx),
		.tag = 0x5eac,
	};
	struct percs_pkt_hdr rh;
	struct percs_cqe cqe;
	unsigned char buf[64];
	int ret;

	ret = percs_send_compose_hdr(tx, &h, NULL, 0);
	if (ret)
		return ret;
	ret = percs_send_trigger(tx);
	if (ret)
		return ret;
	if (pt_cq_wait(tx, &cqe, PT_TIMEOUT_MS) != 1)
		return -ETIMEDOUT;
	while (percs_recv(rx, &rh, buf, sizeof(buf)) >= 0)
		;
	return cqe.res;
}

/* One send in @mode should get through (@ok) or find no route. */
static unsigned int check_send(struct __test_metadata *_metadata,
			       struct percs_window *const *w, unsigned int s,
			       unsigned int d, uint8_t mode, uint16_t arg,
			       bool ok)
{
	int want = ok ? 0 : -EHOSTUNREACH;
	int got = send_one(w[s], w[d], mode, arg);

	if (got == want)
		return 0;
	TH_LOG("hub %u -> %u, route %s (arg %u): %d, reach says %d", s, d,
	       mode == PERCS_ROUTE_DIRECT ? "hw_direct" :
	       mode == PERCS_ROUTE_HW_INDIRECT ? "hw_indirect" :
	       mode == PERCS_ROUTE_DIRECT_STRIPED ? "hw_direct_striped" :
	       "sw_indirect", arg, got, want);
	return 1;
}

/*
 * Every ordered pair of hubs, in every mode (sw_indirect through each
 * supernode it may name): the send gets through exactly when reach says
 * a route of that mode is left; a pair it does not list has all its
 * routes.  Returns the sends that disagreed.
 */
static unsigned int check_reach(struct __test_metadata *_metadata,
				const struct reach *r,
				struct percs_window *const *w)
{
	unsigned int s, d, m, bad = 0;

	for (s = 0; s < NHUBS; s++) {
		for (d = 0; d < NHUBS; d++) {
			const struct reach_pair *p = &r->p[s][d];
			bool direct = !p->listed || p->direct;
			bool indirect = !p->listed || p->indirect;

			if (s == d)
				continue;
			bad += check_send(_metadata, w, s, d, PERCS_ROUTE_DIRECT,
					  0, direct);
			bad += check_send(_metadata, w, s, d,
					  PERCS_ROUTE_HW_INDIRECT, 0, indirect);
			bad += check_send(_metadata, w, s, d,
					  PERCS_ROUTE_DIRECT_STRIPED, 0,
					  direct || indirect);
			for (m = 0; m < NSN; m++)
				if (m != s / 4 && m != d / 4)
					bad += check_send(_metadata, w, s, d,
							  PERCS_ROUTE_SW_INDIRECT,
							  m, !p->listed || p->via[m]);
		}
	}
	return bad;
}

/*
 * The D links between supernodes 0 and 1, the L links of hubs 0-1 and
 * 8-9 and the D links of hub 4 to supernode 2 down: every send agrees
 * with reach; then every D link of supernode 0 too, which cuts it off
 * (and hubs 0 and 1 from each other, with no way out for an indirect
 * route): reach says so, and every mode fails between them.
 */
TEST_F(isr, reach_agrees_with_routing)
{
	struct links *ls = self->e.before;
	struct percs_window *w[NHUBS] = { 0 };
	struct percs_hfi *hfi[NHUBS] = { 0 };
	unsigned int i, h, ndown = 0, bad;
	struct reach *r = calloc(1, sizeof(*r));
	int ret;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, read_links(ls));
	for (i = 0, h = 0; i < ls->n; i++)
		if (ls->l[i].hub_b >= h)
			h = ls->l[i].hub_b + 1;
	ASSERT_EQ(NHUBS, h);
	for (i = 0; i < ls->n; i++) {
		const struct link *l = &ls->l[i];
		bool l01 = !is_d(l) && l->hub_a == 0 && l->hub_b == 1;
		bool l89 = !is_d(l) && l->hub_a == 8 && l->hub_b == 9;
		bool d4 = is_d(l) && l->hub_a == 4 && l->hub_b / 4 == 2;

		if (d_sn0_sn1(l) || l01 || l89 || d4) {
			ASSERT_EQ(0, link_set(l->id, false));
			ndown++;
		}
	}
	ret = run_reach(_metadata, r);
	if (ret == -ENOENT) {
		free(r);
		SKIP(return, "no percs-ctl in $PERCS_BUILD/tools (make ctl)");
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(ndown, r->down_now);
	EXPECT_EQ(NHUBS * (NHUBS - 1), r->checked);
	EXPECT_LT(0, r->lost);
	EXPECT_EQ(0, r->unreachable);
	/* what the links taken down must have cost */
	EXPECT_TRUE(r->p[0][4].listed && !r->p[0][4].direct);
	EXPECT_TRUE(r->p[0][1].listed && !r->p[0][1].direct);

	for (h = 0; h < NHUBS; h++) {
		ASSERT_EQ(0, pt_hfi_open(h, 0, &hfi[h]));
		ASSERT_EQ(0, pt_reserve(hfi[h], 0, FIFO, FIFO, self->e.key,
					PERCS_WINDOW_ANY, &w[h]));
	}
	bad = check_reach(_metadata, r, w);
	EXPECT_EQ(0, bad);

	/* Supernode 0 cut off: its D links to supernode 2 as well. */
	for (i = 0; i < ls->n; i++)
		if (is_d(&ls->l[i]) && ls->l[i].hub_a / 4 == 0)
			ASSERT_EQ(0, link_set(ls->l[i].id, false));
	ASSERT_EQ(0, run_reach(_metadata, r));
	/* both ways between its 4 hubs and the 8 others, and hubs 0-1 */
	EXPECT_EQ(2 * 4 * 8 + 2, r->unreachable);
	for (h = 1; h < NHUBS; h++)
		EXPECT_EQ(h == 1 || h >= 4, r->p[0][h].listed &&
			  !r->p[0][h].direct && !r->p[0][h].indirect);
	bad = check_reach(_metadata, r, w);
	EXPECT_EQ(0, bad);

	for (h = 0; h < NHUBS; h++) {
		if (w[h])
			percs_window_release(w[h]);
		if (hfi[h])
			percs_hfi_close(hfi[h]);
	}
	free(r);
}

/* Transient errors on every link: replayed, counted, nothing lost. */
TEST_F(isr, transient_errors_replayed_without_loss)
{
	unsigned int n = pt_scale(2000) + 16;
	struct delta d;

	ASSERT_EQ(0, pt_isr_write("link_error", "all 200000"));
	ASSERT_EQ(0, read_links(self->e.before));
	ASSERT_LE(0, stream(_metadata, self->e.tx, self->e.rx,
			    PERCS_ROUTE_DIRECT_STRIPED, 0, n));
	ASSERT_EQ(0, read_links(self->e.after));
	links_delta(self->e.before, self->e.after, &d);
	TH_LOG("%llu link crossings, %llu replays", d.packets, d.replays);
	/* 20% errors: about a quarter of a replay per crossing. */
	EXPECT_LT(d.packets / 10, d.replays);
	EXPECT_GT(d.packets, d.replays);
	ASSERT_EQ(0, pt_isr_write("link_error", "all 0"));
}

/* Malformed and out-of-range link commands are refused. */
TEST_F(isr, link_commands_refuse_bad_input)
{
	EXPECT_EQ(-EINVAL, pt_isr_write("link_down", "abc"));
	EXPECT_EQ(-EINVAL, pt_isr_write("link_down", "-1"));
	EXPECT_EQ(-EINVAL, pt_isr_write("link_down", ""));
	EXPECT_EQ(-ENOENT, pt_isr_write("link_down", "99999"));
	EXPECT_EQ(-ENOENT, pt_isr_write("link_up", "4000000000"));
	EXPECT_EQ(-EINVAL, pt_isr_write("link_error", "1"));
	EXPECT_EQ(-EINVAL, pt_isr_write("link_error", "1 500001"));
	EXPECT_EQ(-EINVAL, pt_isr_write("link_error", "one 5"));
	EXPECT_EQ(-EINVAL, pt_isr_write("link_error", "1 five"));
	EXPECT_EQ(-ENOENT, pt_isr_write("link_error", "99999 5"));
	EXPECT_EQ(0, pt_isr_write("link_error", "all 5"));
	EXPECT_EQ(0, pt_isr_write("link_error", "3 0"));
	EXPECT_EQ(0, pt_isr_write("link_error", "all 0"));
}

TEST_HARNESS_MAIN
