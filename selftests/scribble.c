// SPDX-License-Identifier: GPL-2.0
/*
 * scribble: a thread flips random bytes in every user-writable page of a
 * victim window (its doorbell indices and pads, its send FIFO headers,
 * lengths and payloads, its immediate slots) and writes garbage triggers,
 * credits and CQ heads while traffic flows between other windows.
 *
 * victim_sender: four good pairs (kick and poll mode senders and
 * receivers, one job key) stream sequenced, checksummed packets while the
 * victim (another key, so that its garbage can only reach its own
 * receiver) keeps sending under the scribbler.  The victim must see errors
 * (EINVAL kicks, PERCS_STATUS_ERROR, error completions); every good packet
 * must arrive exactly once, in order, intact, with no error on the good
 * windows; nothing may hang.  Variants: the victim in kick mode, and in
 * poll mode on the HFI whose polling engine also serves a good sender.
 *
 * victim_receiver: three senders (kick and poll mode) stream to a victim
 * receiver whose credits are scribbled; they block.  A good pair of
 * another key streams meanwhile and must complete exactly.  Then the
 * victim closes: every blocked sender must drain within the deadline,
 * what it could not deliver completing with -ECONNREFUSED.
 *
 * Both end with every window closed and the debugfs live counters zero;
 * the runner checks the kernel log for warnings.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE		4096u
#define GOOD_PAIRS	4
#define GOOD_PACKETS	20000	/* per good pair, scaled */
#define MIN_SCRIBBLE_MS	2000
#define SEND_FIFO	65536
#define RECV_FIFO	16384

/* ---- raw windows: compose, trigger, receive, credit, completions ---- */

struct rwin {
	struct pt_rawwin rw;
	bool poll;
	uint64_t pos;		/* send FIFO units composed */
	uint64_t imm;		/* immediate slots filled */
	uint64_t rhead;		/* receive FIFO units consumed */
	uint64_t cq_head;
	uint32_t sunits, runits;
};

static int rwin_open(struct rwin *w, unsigned int hub, unsigned int unit,
		     bool poll, uint32_t send, uint32_t recv, uint32_t key)
{
	int hfd = pt_hfi_open_fd(hub, unit), ret;

	memset(w, 0, sizeof(*w));
	w->rw.fd = -1;
	if (hfd < 0)
		return hfd;
	ret = pt_rawwin_open(&w->rw, hfd, poll ? PERCS_WINDOW_F_POLL : 0,
			     send, recv, key);
	close(hfd);
	w->poll = poll;
	w->sunits = send / PERCS_FLIT_SIZE;
	w->runits = recv / PERCS_FLIT_SIZE;
	return ret;
}

static const volatile struct percs_status *st_of(struct rwin *w)
{
	return pt_rawwin_st(&w->rw);
}

static volatile struct percs_doorbell *db_of(struct rwin *w)
{
	return pt_rawwin_db(&w->rw);
}

static uint64_t load_acq(const volatile __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static long kick(struct rwin *w, unsigned long flags)
{
	int r = ioctl(w->rw.fd, PERCS_IOC_KICK, flags);

	return r < 0 ? -errno : r;
}

/*
 * Compose one FIFO packet (with a pad entry first when it would not fit
 * before the end of the ring).  Return: 0, or -EAGAIN without room.
 */
static int compose(struct rwin *w, const struct percs_addr *dst, uint32_t tag,
		   const void *payload, uint16_t len)
{
	uint8_t *base = w->rw.map[PERCS_REGION_SEND_FIFO];
	uint32_t units = (PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) /
			 PERCS_FLIT_SIZE;
	uint32_t contig = w->sunits - (w->pos & (w->sunits - 1));
	uint32_t pad = units > contig ? contig : 0;
	uint64_t head = load_acq(&st_of(w)->send_head);
	struct percs_pkt_hdr h;
	uint8_t *p;

	if (w->pos + pad + units - head > w->sunits)
		return -EAGAIN;
	if (pad) {
		memset(&h, 0, sizeof(h));
		h.kind = PERCS_PKT_PAD;
		h.length = pad * PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE;
		memcpy(base + (w->pos & (w->sunits - 1)) * PERCS_FLIT_SIZE, &h,
		       sizeof(h));
		w->pos += pad;
	}
	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.length = len;
	h.dst = *dst;
	h.tag = tag;
	p = base + (w->pos & (w->sunits - 1)) * PERCS_FLIT_SIZE;
	memcpy(p, &h, sizeof(h));
	if (len)
		memcpy(p + sizeof(h), payload, len);
	w->pos += units;
	return 0;
}

/*
 * Publish what is composed; kick in kick mode, in poll mode only when the
 * engine sleeps (store, full barrier, read the flag).  Return: the kick's
 * answer, or 0.
 */
static long trigger(struct rwin *w)
{
	__atomic_store_n(&db_of(w)->send_tail, w->pos, __ATOMIC_RELEASE);
	if (!w->poll)
		return kick(w, PERCS_KICK_F_SEND);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (st_of(w)->flags & PERCS_STATUS_NEED_WAKEUP)
		return kick(w, PERCS_KICK_F_SEND);
	return 0;
}

/* Take the next received packet: 1 (header, payload copied), 0 if none,
 * -EIO if the HFI published something that cannot be a packet.
 */
static int receive(struct rwin *w, struct percs_pkt_hdr *h, uint8_t *buf)
{
	const uint8_t *base = w->rw.map[PERCS_REGION_RECV_FIFO];
	uint64_t tail = load_acq(&st_of(w)->recv_tail);

	while (w->rhead != tail) {
		const uint8_t *p = base + (w->rhead & (w->runits - 1)) *
				   PERCS_FLIT_SIZE;
		uint32_t units;

		if (tail - w->rhead > w->runits)
			return -EIO;
		memcpy(h, p, sizeof(*h));
		units = (PERCS_PKT_HDR_SIZE + h->length + PERCS_FLIT_SIZE - 1) /
			PERCS_FLIT_SIZE;
		if (units > tail - w->rhead ||
		    (h->kind != PERCS_PKT_PAD &&
		     h->length > PERCS_MAX_PAYLOAD))
			return -EIO;
		w->rhead += units;
		if (h->kind == PERCS_PKT_PAD)
			continue;
		memcpy(buf, p + sizeof(*h), h->length);
		return 1;
	}
	return 0;
}

/* Return the consumed space; kick the retry if senders wait for it. */
static void credit(struct rwin *w)
{
	__atomic_store_n(&db_of(w)->recv_head, w->rhead, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (st_of(w)->flags & PERCS_STATUS_SENDERS_WAIT)
		kick(w, PERCS_KICK_F_CREDIT);
}

/* Take one completion: 1, or 0 if none. */
static int take_cqe(struct rwin *w, struct percs_cqe *c)
{
	const struct percs_cqe *cq = w->rw.map[PERCS_REGION_CQ];
	uint64_t tail = load_acq(&st_of(w)->cq_tail);

	if (tail == w->cq_head)
		return 0;
	*c = cq[w->cq_head % PERCS_CQ_ENTRIES];
	w->cq_head++;
	__atomic_store_n(&db_of(w)->cq_head, w->cq_head, __ATOMIC_RELEASE);
	return 1;
}

static void wait_fd(struct rwin *w, short events, int ms)
{
	struct pollfd p = { .fd = w->rw.fd, .events = events };

	poll(&p, 1, ms);
}

/* ---- payloads ---- */

static uint16_t pkt_len(unsigned int pair, uint32_t seq)
{
	return (seq * 131u + pair * 17u) % (PERCS_MAX_PAYLOAD + 1);
}

static void pkt_fill(uint8_t *buf, uint16_t len, uint64_t seed)
{
	uint64_t w;
	size_t i;

	for (i = 0; i < len; i += 8) {
		w = pt_mix64(seed + i);
		memcpy(buf + i, &w, len - i < 8 ? len - i : 8);
	}
}

/* ---- a good pair: one sender thread, one receiver thread ---- */

struct pair {
	unsigned int id;
	struct rwin s, r;
	uint32_t key;
	unsigned long n;	/* packets to send */
	uint64_t deadline;
	/* receiver's findings */
	unsigned long got;
	unsigned long bad_seq, bad_len, bad_data, bad_src, bad_key, extra;
	int rerr;
	/* sender's */
	unsigned long kick_err;
	long last_kick_err;
	int serr;
	atomic_bool sent_all;
	pthread_t st, rt;
};

static void *pair_sender(void *arg)
{
	struct pair *p = arg;
	uint8_t buf[PERCS_MAX_PAYLOAD];
	uint32_t seq;
	long k;

	for (seq = 0; seq < p->n; seq++) {
		uint16_t len = pkt_len(p->id, seq);

		pkt_fill(buf, len, (uint64_t)p->id << 32 | seq);
		while (compose(&p->s, &p->r.rw.req.addr, seq, buf, len)) {
			k = trigger(&p->s);
			if (k < 0) {
				p->kick_err++;
				p->last_kick_err = k;
			}
			if (pt_now_ms() > p->deadline) {
				p->serr = -ETIMEDOUT;
				return NULL;
			}
			usleep(50);
		}
		/* publish in small batches */
		if ((seq & 7) == 7 || seq + 1 == p->n) {
			k = trigger(&p->s);
			if (k < 0) {
				p->kick_err++;
				p->last_kick_err = k;
			}
		}
	}
	atomic_store(&p->sent_all, true);
	/* until the FIFO is consumed (the receiver returns credits) */
	while (load_acq(&st_of(&p->s)->send_head) != p->s.pos) {
		if (pt_now_ms() > p->deadline) {
			p->serr = -ETIMEDOUT;
			return NULL;
		}
		trigger(&p->s);
		usleep(200);
	}
	return NULL;
}

static void *pair_receiver(void *arg)
{
	struct pair *p = arg;
	uint8_t buf[PERCS_MAX_PAYLOAD], want[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	unsigned int since_credit = 0;
	int r;

	while (p->got < p->n) {
		r = receive(&p->r, &h, buf);
		if (r < 0) {
			p->rerr = r;
			return NULL;
		}
		if (!r) {
			credit(&p->r);
			since_credit = 0;
			if (pt_now_ms() > p->deadline) {
				p->rerr = -ETIMEDOUT;
				return NULL;
			}
			wait_fd(&p->r, POLLIN, 10);
			continue;
		}
		if (h.tag != p->got)
			p->bad_seq++;
		if (h.length != pkt_len(p->id, h.tag))
			p->bad_len++;
		else {
			pkt_fill(want, h.length, (uint64_t)p->id << 32 | h.tag);
			if (memcmp(want, buf, h.length))
				p->bad_data++;
		}
		if (memcmp(&h.src, &p->s.rw.req.addr, sizeof(h.src)))
			p->bad_src++;
		if (h.job_key != p->key)
			p->bad_key++;
		p->got++;
		if (++since_credit == 8) {
			credit(&p->r);
			since_credit = 0;
		}
	}
	credit(&p->r);
	/* nothing after the last one */
	usleep(20000);
	while ((r = receive(&p->r, &h, buf)) > 0)
		p->extra++;
	credit(&p->r);
	return NULL;
}

static void pair_report(struct __test_metadata *_metadata, struct pair *p)
{
	const volatile struct percs_status *ss = st_of(&p->s);
	const volatile struct percs_status *rs = st_of(&p->r);

	EXPECT_EQ(p->n, p->got)
		TH_LOG("pair %u (%s -> %s): received %lu of %lu (sender %d, receiver %d)",
		       p->id, p->s.poll ? "poll" : "kick",
		       p->r.poll ? "poll" : "kick", p->got, p->n, p->serr,
		       p->rerr);
	EXPECT_EQ(0, p->serr);
	EXPECT_EQ(0, p->rerr);
	EXPECT_EQ(0, p->bad_seq) TH_LOG("pair %u: out of order", p->id);
	EXPECT_EQ(0, p->bad_len) TH_LOG("pair %u: wrong lengths", p->id);
	EXPECT_EQ(0, p->bad_data) TH_LOG("pair %u: bad checksums", p->id);
	EXPECT_EQ(0, p->bad_src) TH_LOG("pair %u: wrong source", p->id);
	EXPECT_EQ(0, p->bad_key) TH_LOG("pair %u: wrong job key", p->id);
	EXPECT_EQ(0, p->extra) TH_LOG("pair %u: packets after the last",
				      p->id);
	EXPECT_EQ(0, p->kick_err)
		TH_LOG("pair %u: %lu kicks failed (last %ld)", p->id,
		       p->kick_err, p->last_kick_err);
	EXPECT_EQ(p->n, ss->packets_sent);
	EXPECT_EQ(0, ss->send_errors) TH_LOG("pair %u: send errors", p->id);
	EXPECT_FALSE(ss->flags & PERCS_STATUS_ERROR)
		TH_LOG("pair %u: sender error %u", p->id, ss->error);
	EXPECT_FALSE(rs->flags & PERCS_STATUS_ERROR)
		TH_LOG("pair %u: receiver error %u", p->id, rs->error);
	EXPECT_EQ(p->n, rs->packets_received);
}

/* ---- the scribbler ---- */

struct scribbler {
	struct rwin *victim;
	int fd;			/* its own dup of the victim's fd */
	uint8_t *send, *db, *imm;	/* its own mappings */
	size_t send_len;
	uint64_t rng;
	bool credits_only;	/* victim_receiver: mostly the credits */
	atomic_bool stop;
	unsigned long flips, indices, kicks;
	pthread_t t;
};

static uint64_t srnd(struct scribbler *s, uint64_t n)
{
	s->rng = pt_mix64(s->rng);
	return n ? s->rng % n : s->rng;
}

static void *scribble_main(void *arg)
{
	struct scribbler *s = arg;
	volatile struct percs_doorbell *db = (void *)s->db;

	while (!atomic_load(&s->stop)) {
		unsigned int what = srnd(s, 100), i, n;
		volatile uint8_t *page;
		size_t len;

		if (what < (s->credits_only ? 60 : 20)) {
			/* a garbage index: trigger, slot, credit, CQ head */
			uint64_t v;

			switch (srnd(s, 4)) {
			case 0: v = db->recv_head; break;
			case 1: v = db->send_tail; break;
			case 2: v = db->imm_tail; break;
			default: v = db->cq_head; break;
			}
			switch (srnd(s, 5)) {
			case 0: v = srnd(s, 0); break;
			case 1: v += srnd(s, 64) - 32; break;
			case 2: v ^= 1ull << srnd(s, 64); break;
			case 3: v = -v; break;
			default: v += 1 + srnd(s, 4096); break;
			}
			switch (srnd(s, 4)) {
			case 0: db->recv_head = v; break;
			case 1: db->send_tail = v; break;
			case 2: db->imm_tail = v; break;
			default: db->cq_head = v; break;
			}
			s->indices++;
		} else {
			/* flip bytes of one writable page */
			switch (srnd(s, s->credits_only ? 3 : 10)) {
			case 0:
				page = s->db;
				len = PAGE;
				break;
			case 1:
				page = s->imm;
				len = PAGE;
				break;
			default:
				page = s->send + PAGE * srnd(s, s->send_len /
							     PAGE);
				len = PAGE;
				break;
			}
			n = 1 + srnd(s, 8);
			for (i = 0; i < n; i++) {
				/* headers (the first 32 bytes of a unit)
				 * more often than payloads
				 */
				size_t off = srnd(s, 2) ?
					     PERCS_FLIT_SIZE * srnd(s, len /
						PERCS_FLIT_SIZE) + srnd(s, 32) :
					     srnd(s, len);

				page[off] ^= 1 + srnd(s, 255);
			}
			s->flips += n;
		}
		if (srnd(s, 16) == 0) {
			ioctl(s->fd, PERCS_IOC_KICK, srnd(s, 8));
			s->kicks++;
		}
		if (srnd(s, 8) == 0)
			usleep(20);
	}
	return NULL;
}

static int scribbler_start(struct scribbler *s, struct rwin *v, uint64_t seed,
			   bool credits_only)
{
	const struct percs_window_reserve *req = &v->rw.req;

	memset(s, 0, sizeof(*s));
	s->victim = v;
	s->rng = seed;
	s->credits_only = credits_only;
	s->fd = dup(v->rw.fd);
	if (s->fd < 0)
		return -errno;
	/* a second mapping of each writable region */
	s->send_len = req->regions[PERCS_REGION_SEND_FIFO].length;
	s->send = mmap(NULL, s->send_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       s->fd, req->regions[PERCS_REGION_SEND_FIFO].offset);
	s->db = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
		     req->regions[PERCS_REGION_DOORBELL].offset);
	s->imm = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
		      req->regions[PERCS_REGION_IMM].offset);
	if (s->send == MAP_FAILED || s->db == MAP_FAILED ||
	    s->imm == MAP_FAILED)
		return -errno;
	return -pthread_create(&s->t, NULL, scribble_main, s);
}

static void scribbler_stop(struct scribbler *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->t, NULL);
	munmap(s->send, s->send_len);
	munmap(s->db, PAGE);
	munmap(s->imm, PAGE);
	close(s->fd);
}

/* ---- victim_sender ---- */

/* The victim keeps sending valid packets to its own receiver. */
struct victim {
	struct rwin *w;
	struct rwin *to;
	atomic_bool stop;
	unsigned long composed, kicks_einval, kicks_other, err_cqes,
		      error_flag_seen;
	long other_err;
	pthread_t t;
};

static void *victim_main(void *arg)
{
	struct victim *v = arg;
	struct rwin *w = v->w;
	uint8_t buf[256];
	struct percs_cqe c;
	uint32_t seq = 0;
	long k;

	memset(buf, 0x77, sizeof(buf));
	while (!atomic_load(&v->stop)) {
		uint64_t head = load_acq(&st_of(w)->send_head);

		/* the scribbled trigger may have moved the HFI past us */
		if ((int64_t)(w->pos - head) < 0 || w->pos - head > w->sunits)
			w->pos = head;
		if (!compose(w, &v->to->rw.req.addr, seq, buf, seq % 256))
			v->composed++, seq++;
		k = trigger(w);
		if (k == -EINVAL)
			v->kicks_einval++;
		else if (k < 0)
			v->kicks_other++, v->other_err = k;
		if (st_of(w)->flags & PERCS_STATUS_ERROR)
			v->error_flag_seen++;
		/*
		 * Its CQ head in the doorbell is scribbled: the HFI may run
		 * more than the ring ahead of what this thread took.
		 */
		if (load_acq(&st_of(w)->cq_tail) - w->cq_head >
		    PERCS_CQ_ENTRIES)
			w->cq_head = load_acq(&st_of(w)->cq_tail) -
				     PERCS_CQ_ENTRIES;
		while (take_cqe(w, &c))
			if (c.res)
				v->err_cqes++;
		/* and put its own head back where the scribbler moved it */
		__atomic_store_n(&db_of(w)->cq_head, w->cq_head,
				 __ATOMIC_RELEASE);
		if (seq % 64 == 0)
			usleep(100);
	}
	return NULL;
}

/* The victim's receiver: drain whatever comes. */
struct drain {
	struct rwin *w;
	atomic_bool stop;
	bool tolerant;		/* its own credits are scribbled */
	unsigned long got, resyncs;
	int err;
	pthread_t t;
};

static void *drain_main(void *arg)
{
	struct drain *d = arg;
	uint8_t buf[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	int r;

	while (!atomic_load(&d->stop)) {
		r = receive(d->w, &h, buf);
		if (r < 0 && d->tolerant) {
			/*
			 * A scribbled credit the HFI took for real let it
			 * overwrite what was not read yet: start again from
			 * its tail (the victim's own confusion).
			 */
			d->w->rhead = load_acq(&st_of(d->w)->recv_tail);
			d->resyncs++;
			continue;
		}
		if (r < 0) {
			d->err = r;
			return NULL;
		}
		if (r) {
			d->got++;
			continue;
		}
		credit(d->w);
		if (d->tolerant)
			usleep(2000);	/* a slow consumer: senders block */
		else
			wait_fd(d->w, POLLIN, 5);
	}
	return NULL;
}

FIXTURE(scribble) {
	struct pair pairs[GOOD_PAIRS + 1];
	unsigned int nr_pairs;
	struct rwin v, vr, snd[3];
	struct scribbler sc;
};

FIXTURE_VARIANT(scribble) {
	bool victim_poll;
};

FIXTURE_VARIANT_ADD(scribble, kick_victim) {
	.victim_poll = false,
};

FIXTURE_VARIANT_ADD(scribble, poll_victim) {
	.victim_poll = true,
};

FIXTURE_SETUP(scribble)
{
	unsigned int i;

	for (i = 0; i < GOOD_PAIRS + 1; i++)
		self->pairs[i].s.rw.fd = self->pairs[i].r.rw.fd = -1;
	self->v.rw.fd = self->vr.rw.fd = -1;
	for (i = 0; i < 3; i++)
		self->snd[i].rw.fd = -1;
	PT_REQUIRE_DEVICE();
}

FIXTURE_TEARDOWN(scribble)
{
	unsigned int i;

	for (i = 0; i < GOOD_PAIRS + 1; i++) {
		pt_rawwin_close(&self->pairs[i].s.rw);
		pt_rawwin_close(&self->pairs[i].r.rw);
	}
	pt_rawwin_close(&self->v.rw);
	pt_rawwin_close(&self->vr.rw);
	for (i = 0; i < 3; i++)
		pt_rawwin_close(&self->snd[i].rw);
}

/* Where the good pairs live: (hub, unit, poll) of sender and receiver. */
static const struct {
	unsigned int sh, su, rh, ru;
	bool spoll, rpoll;
} pair_at[GOOD_PAIRS + 1] = {
	{ 0, 0, 1, 0, false, false },
	{ 0, 1, 1, 1, true, false },
	{ 0, 1, 2, 0, true, true },
	{ 2, 1, 1, 0, false, true },
	{ 3, 0, 3, 1, true, false },	/* victim_receiver's good pair */
};

static int pair_open(struct pair *p, unsigned int id, uint32_t key,
		     unsigned int nr_hubs, unsigned long n, uint64_t deadline)
{
	int ret;

	memset(p, 0, sizeof(*p));
	p->s.rw.fd = p->r.rw.fd = -1;
	p->id = id;
	p->key = key;
	p->n = n;
	p->deadline = deadline;
	ret = rwin_open(&p->s, pair_at[id].sh % nr_hubs, pair_at[id].su,
			pair_at[id].spoll, SEND_FIFO, PERCS_FIFO_MIN_SIZE, key);
	if (ret)
		return ret;
	return rwin_open(&p->r, pair_at[id].rh % nr_hubs, pair_at[id].ru,
			 pair_at[id].rpoll, PERCS_FIFO_MIN_SIZE, RECV_FIFO, key);
}

static int pair_start(struct pair *p)
{
	int ret = pthread_create(&p->rt, NULL, pair_receiver, p);

	return ret ? -ret : -pthread_create(&p->st, NULL, pair_sender, p);
}

static unsigned int nr_hubs(void)
{
	struct percs_hfi_info info = { .size = sizeof(info) };
	int fd = pt_hfi_open_fd(0, 0);

	if (fd < 0)
		return 1;
	if (ioctl(fd, PERCS_IOC_HFI_INFO, &info))
		info.nr_hubs = 1;
	close(fd);
	return info.nr_hubs;
}

TEST_F_TIMEOUT(scribble, victim_sender, 300)
{
	const unsigned long n = pt_scale(GOOD_PACKETS);
	const uint64_t deadline = pt_now_ms() + 240000;
	const uint32_t good = pt_new_key(), bad = pt_new_key();
	const unsigned int hubs = nr_hubs();
	struct victim vic = { 0 };
	struct drain dr = { 0 };
	uint64_t start;
	unsigned int i;
	bool all;

	if (_metadata->skip)
		return;
	self->nr_pairs = GOOD_PAIRS;
	for (i = 0; i < GOOD_PAIRS; i++)
		ASSERT_EQ(0, pair_open(&self->pairs[i], i, good, hubs, n,
				       deadline));
	/* the victim shares an HFI (and in poll mode the polling engine)
	 * with a good sender
	 */
	ASSERT_EQ(0, rwin_open(&self->v, 0, variant->victim_poll ? 1 : 0,
			       variant->victim_poll, SEND_FIFO,
			       PERCS_FIFO_MIN_SIZE, bad));
	ASSERT_EQ(0, rwin_open(&self->vr, 1 % hubs, 1, false,
			       PERCS_FIFO_MIN_SIZE, RECV_FIFO, bad));
	vic.w = &self->v;
	vic.to = &self->vr;
	dr.w = &self->vr;

	ASSERT_EQ(0, pthread_create(&dr.t, NULL, drain_main, &dr));
	ASSERT_EQ(0, pthread_create(&vic.t, NULL, victim_main, &vic));
	ASSERT_EQ(0, scribbler_start(&self->sc, &self->v,
				     0x5c1bb1e ^ n, false));
	start = pt_now_ms();
	for (i = 0; i < GOOD_PAIRS; i++)
		ASSERT_EQ(0, pair_start(&self->pairs[i]));

	/* until the good traffic is through, scribbling all along */
	do {
		usleep(20000);
		all = true;
		for (i = 0; i < GOOD_PAIRS; i++)
			all &= self->pairs[i].got == n ||
			       self->pairs[i].rerr || self->pairs[i].serr;
	} while ((!all || pt_now_ms() - start < MIN_SCRIBBLE_MS) &&
		 pt_now_ms() < deadline);
	for (i = 0; i < GOOD_PAIRS; i++) {
		pthread_join(self->pairs[i].st, NULL);
		pthread_join(self->pairs[i].rt, NULL);
	}
	scribbler_stop(&self->sc);
	atomic_store(&vic.stop, true);
	pthread_join(vic.t, NULL);
	atomic_store(&dr.stop, true);
	pthread_join(dr.t, NULL);

	TH_LOG("%lu good packets x %u pairs in %llu ms; victim: %lu composed, "
	       "%lu EINVAL kicks, %lu error CQEs, send_errors %llu, error flag "
	       "seen %lu times; scribbler: %lu bytes flipped, %lu indices, "
	       "%lu kicks; victim's receiver got %lu",
	       n, GOOD_PAIRS, (unsigned long long)(pt_now_ms() - start),
	       vic.composed, vic.kicks_einval, vic.err_cqes,
	       (unsigned long long)st_of(&self->v)->send_errors,
	       vic.error_flag_seen, self->sc.flips, self->sc.indices,
	       self->sc.kicks, dr.got);
	for (i = 0; i < GOOD_PAIRS; i++)
		pair_report(_metadata, &self->pairs[i]);
	/* the victim saw errors, and only documented ones */
	EXPECT_LT(0, vic.kicks_einval + vic.err_cqes + vic.error_flag_seen +
		     st_of(&self->v)->send_errors);
	EXPECT_EQ(0, vic.kicks_other)
		TH_LOG("victim kick answered %ld", vic.other_err);
	EXPECT_EQ(0, dr.err) TH_LOG("victim's receiver: bad index from the HFI");

	for (i = 0; i < GOOD_PAIRS; i++) {
		pt_rawwin_close(&self->pairs[i].s.rw);
		pt_rawwin_close(&self->pairs[i].r.rw);
	}
	pt_rawwin_close(&self->v.rw);
	pt_rawwin_close(&self->vr.rw);
	ASSERT_LIVE_ZERO();
}

/* ---- victim_receiver ---- */

/* A sender streaming into the victim receiver. */
struct vsender {
	struct rwin *w;
	const struct percs_addr *to;
	atomic_bool *closed;
	atomic_bool *closing;
	uint64_t deadline, start, first_refused;
	unsigned long composed, after_close, cqe_ok, cqe_refused, cqe_other;
	unsigned long refused_before_close;
	int last_other, err;
	pthread_t t;
};

static void drain_cq(struct vsender *s)
{
	struct percs_cqe c;

	while (take_cqe(s->w, &c)) {
		if (c.res == 0)
			s->cqe_ok++;
		else if (c.res == -ECONNREFUSED) {
			s->cqe_refused++;
			if (!atomic_load(s->closing) &&
			    !s->refused_before_close++)
				s->first_refused = pt_now_ms() - s->start;
		}
		else
			s->cqe_other++, s->last_other = c.res;
	}
}

static void *vsender_main(void *arg)
{
	struct vsender *s = arg;
	uint8_t buf[200];
	uint32_t seq = 0;

	memset(buf, 0x42, sizeof(buf));
	for (;;) {
		bool closed = atomic_load(s->closed);

		if (closed && s->after_close >= 16)
			break;
		if (!compose(s->w, s->to, seq, buf, seq % sizeof(buf))) {
			seq++;
			s->composed++;
			if (closed)
				s->after_close++;
			trigger(s->w);
		} else {
			/* blocked: the FIFO is full of packets for the victim */
			trigger(s->w);
			if (pt_now_ms() > s->deadline) {
				s->err = -ETIMEDOUT;
				return NULL;
			}
			usleep(200);
		}
		drain_cq(s);
	}
	/* once the victim is gone nothing may stay stuck */
	while (load_acq(&st_of(s->w)->send_head) != s->w->pos) {
		if (pt_now_ms() > s->deadline) {
			s->err = -ETIMEDOUT;
			return NULL;
		}
		trigger(s->w);
		drain_cq(s);
		usleep(200);
	}
	drain_cq(s);
	return NULL;
}

TEST_F_TIMEOUT(scribble, victim_receiver, 300)
{
	const unsigned long n = pt_scale(GOOD_PACKETS) / 2 + 1;
	const uint32_t key = pt_new_key(), other = pt_new_key();
	const unsigned int hubs = nr_hubs();
	struct vsender vs[3];
	struct drain dr = { .tolerant = true };
	struct percs_addr to;
	atomic_bool closed = false, closing = false;
	struct pair *p = &self->pairs[GOOD_PAIRS];
	uint64_t start, deadline = pt_now_ms() + 240000, closed_at;
	unsigned int i;

	if (_metadata->skip)
		return;
	/* the victim receiver: small FIFO, never drained by its owner */
	ASSERT_EQ(0, rwin_open(&self->vr, 1 % hubs, 0, variant->victim_poll,
			       PERCS_FIFO_MIN_SIZE, PERCS_FIFO_MIN_SIZE, key));
	to = self->vr.rw.req.addr;
	/* its senders: kick, poll, kick on another hub */
	ASSERT_EQ(0, rwin_open(&self->snd[0], 0, 0, false, 16384,
			       PERCS_FIFO_MIN_SIZE, key));
	ASSERT_EQ(0, rwin_open(&self->snd[1], 0, 1, true, 16384,
			       PERCS_FIFO_MIN_SIZE, key));
	ASSERT_EQ(0, rwin_open(&self->snd[2], 2 % hubs, 0, false, 16384,
			       PERCS_FIFO_MIN_SIZE, key));
	/* a good pair of another job: must not notice any of it */
	ASSERT_EQ(0, pair_open(p, GOOD_PAIRS, other, hubs, n, deadline));

	ASSERT_EQ(0, scribbler_start(&self->sc, &self->vr, 0x7ec1 ^ n, true));
	/* its owner consumes slowly and returns credits, racing the
	 * scribbler's
	 */
	dr.w = &self->vr;
	ASSERT_EQ(0, pthread_create(&dr.t, NULL, drain_main, &dr));
	start = pt_now_ms();
	for (i = 0; i < 3; i++) {
		vs[i] = (struct vsender){ .w = &self->snd[i], .to = &to,
					  .closed = &closed,
					  .closing = &closing,
					  .deadline = deadline,
					  .start = start };
		ASSERT_EQ(0, pthread_create(&vs[i].t, NULL, vsender_main,
					    &vs[i]));
	}
	ASSERT_EQ(0, pair_start(p));
	while ((p->got < n && !p->rerr && !p->serr) ||
	       pt_now_ms() - start < MIN_SCRIBBLE_MS) {
		if (pt_now_ms() > deadline)
			break;
		usleep(20000);
	}
	pthread_join(p->st, NULL);
	pthread_join(p->rt, NULL);

	/* the senders wait behind the scribbled credits */
	for (i = 0; i < 3; i++)
		TH_LOG("sender %u: %llu units waiting at the close", i,
		       (unsigned long long)(self->snd[i].pos -
			load_acq(&st_of(&self->snd[i])->send_head)));

	/* the victim goes: every fd and every mapping */
	atomic_store(&closing, true);
	scribbler_stop(&self->sc);
	atomic_store(&dr.stop, true);
	pthread_join(dr.t, NULL);
	pt_rawwin_close(&self->vr.rw);
	closed_at = pt_now_ms();
	atomic_store(&closed, true);
	for (i = 0; i < 3; i++)
		pthread_join(vs[i].t, NULL);
	TH_LOG("good pair: %lu packets; scribbler: %lu bytes, %lu indices, "
	       "%lu kicks; victim consumed %lu (%lu resyncs); senders "
	       "drained %llu ms after the close", n, self->sc.flips,
	       self->sc.indices, self->sc.kicks, dr.got, dr.resyncs,
	       (unsigned long long)(pt_now_ms() - closed_at));

	for (i = 0; i < 3; i++) {
		const volatile struct percs_status *st = st_of(&self->snd[i]);

		TH_LOG("sender %u (%s): composed %lu, sent %llu, errors %llu, "
		       "refused CQEs %lu (%lu before the close), overflows %llu",
		       i, self->snd[i].poll ? "poll" : "kick", vs[i].composed,
		       (unsigned long long)st->packets_sent,
		       (unsigned long long)st->send_errors, vs[i].cqe_refused,
		       vs[i].refused_before_close,
		       (unsigned long long)st->cq_overflows);
		EXPECT_EQ(0, vs[i].refused_before_close)
			TH_LOG("sender %u: packets refused while the receiver "
			       "was alive, the first %llu ms into the test", i,
			       (unsigned long long)vs[i].first_refused);
		EXPECT_EQ(0, vs[i].err) TH_LOG("sender %u hung", i);
		EXPECT_EQ(vs[i].composed, st->packets_sent + st->send_errors);
		EXPECT_LE(vs[i].after_close, st->send_errors);
		EXPECT_EQ(0, vs[i].cqe_other)
			TH_LOG("sender %u: completion %d", i,
			       vs[i].last_other);
		EXPECT_EQ(st->send_errors, vs[i].cqe_refused +
					   st->cq_overflows);
		EXPECT_FALSE(st->flags & PERCS_STATUS_SEND_BLOCKED);
		EXPECT_FALSE(st->flags & PERCS_STATUS_ERROR);
	}
	pair_report(_metadata, p);

	for (i = 0; i < 3; i++)
		pt_rawwin_close(&self->snd[i].rw);
	pt_rawwin_close(&p->s.rw);
	pt_rawwin_close(&p->r.rw);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
