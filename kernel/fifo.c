// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the receive side of FIFO and immediate packets - writing a packet
 * into a target window's receive FIFO.
 */
#include <linux/string.h>
#include <linux/wait.h>

#include "net.h"
#include "firmware-model/packet.h"

/*
 * The credit (recv_head) is written by user space: accept it only inside
 * [last valid credit, recv_tail]; anything else frees nothing and is
 * reported on the receiver.
 */
static u64 percs_fifo_read_credit(struct percs_window *t)
{
	u64 head = READ_ONCE(t->db->recv_head);

	if (head - t->recv_head > t->recv_tail - t->recv_head) {
		percs_window_error(t, -EINVAL);
		return t->recv_head;
	}
	t->recv_head = head;
	return head;
}

/* Room by the last credit seen first; read the doorbell only if short. */
static bool percs_fifo_has_room(struct percs_window *t, u32 units)
{
	if (t->recv_tail + units - t->recv_head <= t->recv.units)
		return true;
	return t->recv_tail + units - percs_fifo_read_credit(t) <=
	       t->recv.units;
}

static void percs_fifo_write_pad(struct percs_window *t, u32 units)
{
	struct percs_pkt_hdr *pad = percs_ring_unit(&t->recv, t->recv_tail);

	memset(pad, 0, sizeof(*pad));
	pad->kind = PERCS_PKT_PAD;
	pad->length = fm_pkt_pad_length(units);
	t->recv_tail += units;
}

/**
 * percs_fifo_unlock() - release a receive FIFO and wake its readers
 * @t: target window, recv_lock held
 */
void percs_fifo_unlock(struct percs_window *t)
	__releases(&t->recv_lock)
{
	/*
	 * No barrier needed: poll(2) reads recv_tail under recv_lock after
	 * queueing itself, so either it sees the tail or we see it queued.
	 */
	bool wake = waitqueue_active(&t->wq);

	spin_unlock(&t->recv_lock);
	if (wake)
		wake_up_interruptible(&t->wq);
}

/**
 * percs_fifo_put() - write one packet into a receive FIFO
 * @t: target window, recv_lock held, not dead
 * @h: validated header, with src and job_key already stamped
 * @payload: h->length bytes
 *
 * A packet that does not fit is not written: the caller keeps it (in the
 * sender's FIFO, or held in flight) and retries later (backpressure, never
 * a silent drop).
 *
 * Return: 0, or -EAGAIN when the FIFO is full.
 */
int percs_fifo_put(struct percs_window *t, const struct percs_pkt_hdr *h,
		   const void *payload)
{
	u32 units = fm_pkt_units(h->length);
	u32 contig, pad;
	u8 *dst;

	lockdep_assert_held(&t->recv_lock);
	contig = t->recv.units - (t->recv_tail & (t->recv.units - 1));
	pad = units > contig ? contig : 0;
	if (!percs_fifo_has_room(t, pad + units)) {
		/*
		 * Tell the receiver someone waits, then look again: either we
		 * see its new credit or it sees the flag and kicks a retry.
		 */
		percs_status_set(t, PERCS_STATUS_SENDERS_WAIT);
		/* Flag before re-reading the credit; pairs with libpercs. */
		smp_mb__after_atomic();
		if (!percs_fifo_has_room(t, pad + units))
			return -EAGAIN;
	}
	if (pad)
		percs_fifo_write_pad(t, pad);

	dst = percs_ring_unit(&t->recv, t->recv_tail);
	percs_copy(dst, h, sizeof(*h));
	percs_copy(dst + sizeof(*h), payload, h->length);
	t->recv_tail += units;
	WRITE_ONCE(t->st->packets_received, t->st->packets_received + 1);
	/* Publish: the packet bytes before the index. */
	smp_store_release(&t->st->recv_tail, t->recv_tail);
	return 0;
}

/**
 * percs_fifo_net_deliver() - the delivery table's FIFO handler
 * @pd: the system
 * @pkt: a FIFO or immediate packet; pkt->t's recv_lock held, not dead
 *
 * Return: as percs_fifo_put().
 */
int percs_fifo_net_deliver(struct percs_dev *pd,
			   const struct percs_net_pkt *pkt)
{
	return percs_fifo_put(pkt->t, pkt->hdr, pkt->payload);
}

const struct percs_net_handler percs_fifo_net_handler = {
	.name = "fifo",
	.deliver = percs_fifo_net_deliver,
};
