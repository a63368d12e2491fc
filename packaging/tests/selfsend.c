// SPDX-License-Identifier: GPL-2.0
/*
 * selfsend: a program built outside the tree against an installed libpercs
 * (pkg-config --cflags --libs libpercs).  It reserves a window on hub 0,
 * sends itself one FIFO packet and one immediate (ICSWX) line, and checks
 * that both arrive whole, once each, from itself.  Exit 0 and one line on
 * stdout when they do; 1 and the reason on stderr otherwise.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <percs/percs.h>

#define FIFO_LEN	1000
#define IMM_LEN		PERCS_IMM_PAYLOAD
#define TIMEOUT_MS	10000

static int fail(const char *what, int err)
{
	fprintf(stderr, "selfsend: %s: %s\n", what, strerror(-err));
	return 1;
}

/* Wait for the next packet: its length, or -errno. */
static int recv_one(struct percs_window *w, struct percs_pkt_hdr *h,
		    uint8_t *buf, size_t cap)
{
	int tries, ret;

	for (tries = 0; tries < 100; tries++) {
		ret = percs_recv(w, h, buf, cap);
		if (ret != -EAGAIN)
			return ret;
		ret = percs_wait(w, TIMEOUT_MS / 100);
		if (ret < 0)
			return ret;
	}
	return -ETIMEDOUT;
}

static int check(const struct percs_pkt_hdr *h, const uint8_t *buf, int len,
		 int want_len, uint32_t want_tag, const struct percs_addr *me)
{
	int i;

	if (len != want_len || h->tag != want_tag) {
		fprintf(stderr, "selfsend: got %d bytes tag %u, want %d tag %u\n",
			len, h->tag, want_len, want_tag);
		return 1;
	}
	if (memcmp(&h->src, me, sizeof(*me)) != 0) {
		fprintf(stderr, "selfsend: tag %u did not come from this window\n",
			want_tag);
		return 1;
	}
	for (i = 0; i < len; i++) {
		if (buf[i] != (uint8_t)(i * 7 + want_tag)) {
			fprintf(stderr, "selfsend: tag %u: byte %d is %u\n",
				want_tag, i, buf[i]);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	struct percs_window_attr attr = { .window = PERCS_WINDOW_ANY };
	static uint8_t out[FIFO_LEN], in[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr h;
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct percs_addr me;
	unsigned int seen = 0;
	int i, ret, bad;

	ret = percs_hfi_open(0, 0, &hfi);
	if (ret)
		return fail("open hub 0 HFI 0", ret);
	ret = percs_window_reserve(hfi, &attr, &w);
	if (ret)
		return fail("reserve a window", ret);
	me = percs_window_addr(w);

	for (i = 0; i < FIFO_LEN; i++)
		out[i] = (uint8_t)(i * 7 + 1);
	ret = percs_send(w, &me, out, FIFO_LEN, 1, 0);
	if (ret)
		return fail("FIFO send", ret);
	for (i = 0; i < IMM_LEN; i++)
		out[i] = (uint8_t)(i * 7 + 2);
	ret = percs_icswx(w, &me, out, IMM_LEN, 2);
	if (ret)
		return fail("immediate send", ret);
	/* Packets moved, or -errno: how many depends on the engine's mode. */
	ret = percs_kick(w, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
	if (ret < 0)
		return fail("kick", ret);

	/* Either may come first: the engine serves the FIFO and the slots. */
	bad = 0;
	for (i = 0; i < 2; i++) {
		ret = recv_one(w, &h, in, sizeof(in));
		if (ret < 0)
			return fail("receive", ret);
		if (h.tag == 1 && !(seen & 1))
			bad |= check(&h, in, ret, FIFO_LEN, 1, &me);
		else if (h.tag == 2 && !(seen & 2))
			bad |= check(&h, in, ret, IMM_LEN, 2, &me);
		else
			bad |= check(&h, in, ret, -1, 0, &me);
		seen |= h.tag;
	}
	ret = percs_recv(w, &h, in, sizeof(in));
	if (ret != -EAGAIN) {
		fprintf(stderr, "selfsend: a third packet (%d)\n", ret);
		bad = 1;
	}

	percs_window_release(w);
	percs_hfi_close(hfi);
	if (bad)
		return 1;
	printf("selfsend: %d + %d bytes to itself through hub 0 window %u\n",
	       FIFO_LEN, IMM_LEN, (unsigned int)me.window);
	return 0;
}
