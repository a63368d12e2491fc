// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: threaded streams through a polling engine
 * (NEED_WAKEUP handshake).
 */
#include "unit.h"

#define STREAM_PACKETS	100000
#define STREAM_IMM	20000

bool engine_stop;
unsigned int lost_wakeups, engine_sleeps;

/*
 * The engine thread: run passes while there is work; after a while idle,
 * set NEED_WAKEUP, full barrier, re-check, and sleep until kicked.  A sleep
 * that times out while a doorbell shows unprocessed work is a lost wake-up.
 */
void *engine_thread(void *arg)
{
	unsigned int idle = 0;

	(void)arg;
	while (!__atomic_load_n(&engine_stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts;

		if (engine_all()) {
			idle = 0;
			continue;
		}
		if (++idle < 50) {
			sched_yield();
			continue;
		}
		for (int i = 0; i < NWIN; i++)
			if (H.win[i])
				__atomic_fetch_or(&H.win[i]->st->flags,
						  PERCS_STATUS_NEED_WAKEUP,
						  __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!engine_all()) {
			engine_sleeps++;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 3;
			if (sem_timedwait(&H.wake, &ts) && errno == ETIMEDOUT &&
			    !__atomic_load_n(&engine_stop, __ATOMIC_ACQUIRE) &&
			    engine_all())
				lost_wakeups++;
		}
		for (int i = 0; i < NWIN; i++)
			if (H.win[i])
				__atomic_fetch_and(&H.win[i]->st->flags,
						   ~PERCS_STATUS_NEED_WAKEUP,
						   __ATOMIC_SEQ_CST);
		idle = 0;
	}
	return NULL;
}

struct stream_arg {
	struct fwin *from;
	struct fwin *to;
	bool imm;
	unsigned int count;
	unsigned int bad;
};

static void *sender_thread(void *p)
{
	struct stream_arg *s = p;
	uint8_t buf[PERCS_MAX_PAYLOAD];

	for (uint32_t i = 0; i < s->count; i++) {
		size_t len = s->imm ? i % 97 : (i * 37) % 700;
		int r;

		fill(buf, len, i);
		do {
			r = s->imm ? percs_icswx(s->from->w, &s->to->addr, buf,
						 len, i) :
				     percs_send(s->from->w, &s->to->addr, buf,
						len, i, 0);
			if (r == -EAGAIN)
				sched_yield();
		} while (r == -EAGAIN);
		if (r)
			s->bad++;
	}
	return NULL;
}

static void *receiver_thread(void *p)
{
	struct stream_arg *s = p;
	uint8_t out[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	uint32_t i = 0;

	while (i < s->count) {
		int r = percs_recv(s->to->w, &h, out, sizeof(out));

		if (r == -EAGAIN) {
			sched_yield();
			continue;
		}
		if (r < 0 || h.tag != i || !pattern_ok(out, r, i))
			s->bad++;
		i++;
	}
	return NULL;
}

static void run_stream(bool imm, unsigned int count)
{
	struct fwin *a = fwin_new(1, 4096, 4096, PERCS_WINDOW_F_POLL);
	struct fwin *b = fwin_new(2, 4096, 4096, PERCS_WINDOW_F_POLL);
	struct stream_arg s = { .from = a, .to = b, .imm = imm, .count = count };
	pthread_t e, tx, rx;

	H.threaded = true;
	sem_init(&H.wake, 0, 0);
	REQUIRE(!pthread_create(&e, NULL, engine_thread, NULL));
	REQUIRE(!pthread_create(&rx, NULL, receiver_thread, &s));
	REQUIRE(!pthread_create(&tx, NULL, sender_thread, &s));
	pthread_join(tx, NULL);
	pthread_join(rx, NULL);
	__atomic_store_n(&engine_stop, true, __ATOMIC_RELEASE);
	sem_post(&H.wake);
	pthread_join(e, NULL);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(lost_wakeups, 0);
	CHECK_EQ(b->st->packets_received, count);
	CHECK_EQ(H.violations, 0);
	printf("#   %u packets, %u engine sleeps, %u sender kicks, %u receiver kicks\n",
	       count, engine_sleeps, a->nkicks, b->nkicks);
	fwin_free(a);
	fwin_free(b);
	sem_destroy(&H.wake);
}

static void test_threaded_fifo_stream(void)
{
	run_stream(false, STREAM_PACKETS);
}

static void test_threaded_icswx_stream(void)
{
	run_stream(true, STREAM_IMM);
}

const struct unit_test threaded_tests[] = {
	{ "threaded: FIFO stream through a polling engine", test_threaded_fifo_stream },
	{ "threaded: ICSWX stream through a polling engine", test_threaded_icswx_stream },
	{ NULL, NULL }
};
