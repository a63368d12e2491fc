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
 * are replayed without loss, and the counters add up.
 */
#include <errno.h>
#include <fcntl.h>
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
