/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs_verbs: the RDMA verbs device over the emulated HFIs - internal
 * definitions shared by its files.
 *
 * One &struct pv_dev (an ib_device, "percsN") per HFI.  Every verb reaches
 * the driver as a uverbs command (ABI version 1, the hfi1verbs provider:
 * see Documentation/design.rst), so posting a work request executes it at
 * once, in the poster's context: the data moves between the pinned pages
 * of the two registrations and each transfer crosses the emulated network
 * (percs_kapi_xfer(): ISR route, link counters, knobs, job isolation).
 *
 * Each QP owns a kernel window of its HFI, in the verbs job; its QPN is
 * %PV_QPN_BASE + the window index, so QPN and window address name each
 * other.
 *
 * Locking (outermost first): qp->sq_lock (the send queue, and the sending
 * side of every transfer), then the receiver's qp->rq_lock or srq->lock,
 * then a cq->lock.  Nothing here runs in interrupt context.  QPs and MRs
 * are found by number under rcu_read_lock(); their removal waits for a
 * grace period (QPs) or frees after one (MRs).
 */
#ifndef _PERCS_VERBS_H
#define _PERCS_VERBS_H

#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <linux/percs.h>

#include "kapi.h"

/* Limits reported by query_device and enforced by the create verbs. */
#define PV_QPN_BASE		PERCS_VERBS_QPN_BASE	/* QPN of window 0 */
#define PV_MAX_QP_WR		4096
#define PV_MAX_SGE		8
#define PV_MAX_INLINE		256
#define PV_MAX_CQE		65536
#define PV_MAX_CQ		16384
#define PV_MAX_MR		65536
#define PV_MAX_PD		16384
#define PV_MAX_AH		65536
#define PV_MAX_SRQ		4096
#define PV_MAX_RD_ATOMIC	16
#define PV_MAX_MSG		(1U << 31)
#define PV_MTU			IB_MTU_2048	/* PERCS_MAX_PACKET */
#define PV_MTU_BYTES		2048
#define PV_UD_GRH		40	/* UD receives start with a GRH */
#define PV_PKEY			0xffff	/* the default partition only */
#define PV_MR_KEY_BITS		8	/* low key bits: a variant byte */

/* The calls counted per device (stats.c); each is one uverbs command. */
enum pv_stat {
	PV_STAT_POST_SEND,
	PV_STAT_POST_RECV,	/* to a QP or an SRQ */
	PV_STAT_POLL_CQ,
	PV_STAT_POLL_CQ_EMPTY,	/* of the above, those that found nothing */
	PV_STAT_REQ_NOTIFY,
	PV_NR_STATS
};

/**
 * struct pv_dev - the verbs device of one HFI
 * @ib: the ib_device
 * @hfi: the HFI
 * @info: its place in the topology
 * @lid: its LID (pv_lid())
 * @guid: node and port GUID, big endian
 * @job: the verbs job (pv_job_create())
 * @qps: QPN -> &struct pv_qp, RCU lookups
 * @mrs: key >> %PV_MR_KEY_BITS -> &struct pv_mr, RCU lookups
 * @nr_pds: PDs allocated
 * @nr_cqs: CQs allocated
 * @nr_srqs: SRQs allocated
 * @nr_ahs: AHs allocated
 * @stats: calls served, by &enum pv_stat
 */
struct pv_dev {
	struct ib_device ib;
	struct percs_hfi *hfi;
	struct percs_kapi_hfi_info info;
	u16 lid;
	__be64 guid;
	struct percs_job *job;
	struct xarray qps;
	struct xarray mrs;
	atomic_t nr_pds;
	atomic_t nr_cqs;
	atomic_t nr_srqs;
	atomic_t nr_ahs;
	atomic64_t stats[PV_NR_STATS];
};

struct pv_ucontext {
	struct ib_ucontext ib;
};

struct pv_pd {
	struct ib_pd ib;
};

/**
 * struct pv_ah - an address handle (UD)
 * @ib: the ib_ah
 * @dlid: destination LID
 */
struct pv_ah {
	struct ib_ah ib;
	u16 dlid;
};

/**
 * struct pv_mr - a memory region: a percs registration
 * @ib: the ib_mr (lkey == rkey)
 * @pmr: the registration (pinned, charged)
 * @start: user address of the first byte
 * @iova: the address work requests use for it
 * @length: bytes
 * @access: IB_ACCESS_* given
 * @rcu: freed after readers are gone
 */
struct pv_mr {
	struct ib_mr ib;
	struct percs_mr *pmr;
	u64 start;
	u64 iova;
	u64 length;
	int access;
	struct rcu_head rcu;
};

/**
 * struct pv_cq - a completion queue
 * @ib: the ib_cq
 * @lock: the ring
 * @wc: the ring, @size entries
 * @size: entries
 * @head: next to poll
 * @count: entries held
 * @notify: IB_CQ_NEXT_COMP, IB_CQ_SOLICITED or 0 (disarmed)
 * @overflows: completions lost to a full ring (reported as CQ_ERR)
 */
struct pv_cq {
	struct ib_cq ib;
	spinlock_t lock;
	struct ib_wc *wc;
	u32 size;
	u32 head;
	u32 count;
	u32 notify;
	u64 overflows;
};

/**
 * struct pv_rwqe - a posted receive
 * @wr_id: the caller's id
 * @num_sge: entries of @sge
 * @sge: where the message goes
 */
struct pv_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[PV_MAX_SGE];
};

/**
 * struct pv_rq - a ring of receives (a QP's RQ or an SRQ)
 * @wqe: the ring
 * @size: entries
 * @max_sge: SGEs allowed per receive
 * @head: next to consume
 * @count: entries held
 */
struct pv_rq {
	struct pv_rwqe *wqe;
	u32 size;
	u32 max_sge;
	u32 head;
	u32 count;
};

/**
 * struct pv_srq - a shared receive queue
 * @ib: the ib_srq
 * @lock: @rq and @limit
 * @rq: the receives
 * @limit: the armed limit (0: not armed)
 */
struct pv_srq {
	struct ib_srq ib;
	spinlock_t lock;
	struct pv_rq rq;
	u32 limit;
};

/**
 * struct pv_swqe - a posted send
 * @wr_id: the caller's id
 * @opcode: IB_WR_*
 * @flags: IB_SEND_*
 * @num_sge: entries of @sge (0 with inline data)
 * @len: total bytes
 * @imm: immediate data (big endian, as posted)
 * @remote_addr: RDMA and atomic target address
 * @rkey: its key
 * @compare_add: atomic operand
 * @swap: compare-and-swap operand
 * @dlid: UD destination LID
 * @remote_qpn: UD destination QPN
 * @remote_qkey: UD Q_Key
 * @sge: the gather list
 * @inline_data: the bytes of an IB_SEND_INLINE request
 */
struct pv_swqe {
	u64 wr_id;
	u32 opcode;
	u32 flags;
	u32 num_sge;
	u32 len;
	__be32 imm;
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	u16 dlid;
	u32 remote_qpn;
	u32 remote_qkey;
	struct ib_sge sge[PV_MAX_SGE];
	u8 inline_data[PV_MAX_INLINE];
};

/**
 * struct pv_qp - a queue pair
 * @ib: the ib_qp
 * @dev: its device
 * @win: its HFI window (kernel window, verbs job)
 * @sq_lock: the send queue and the send-side state
 * @rq_lock: the receive queue
 * @state: IB_QPS_*, written under both locks
 * @sq: the send ring, @sq_size entries
 * @sq_size: entries
 * @sq_head: next to execute
 * @sq_count: entries held
 * @max_send_sge: SGEs allowed per send
 * @rq: the receive ring (no SRQ)
 * @srq: the SRQ, or NULL
 * @access: IB_ACCESS_REMOTE_* the QP lets peers use
 * @dlid: the connected peer's LID (RC, UC)
 * @dest_qpn: its QPN
 * @qkey: UD Q_Key
 * @sq_psn: send PSN (reported only)
 * @rq_psn: receive PSN (reported only)
 * @mtu: path MTU, IB_MTU_*
 * @timeout: local ACK timeout, 4.096 us << @timeout; 0: none (for ever)
 * @retry_cnt: transport retries of a request no QP acknowledged
 * @rnr_retry: RNR retries allowed, 7 for ever
 * @min_rnr_timer: IB encoding (reported only)
 * @max_rd_atomic: reported only
 * @max_dest_rd_atomic: reported only
 * @sig_all: every request completes (IB_SIGNAL_ALL_WR)
 * @rnr_left: RNR retries left for the request at the head
 * @retry_left: transport retries left for the request at the head
 * @rnr_work: retries the send queue after an RNR or an ACK timeout
 * @rnr_node: entry in the RNR waiters while the head request waits for a
 *	receive (send.c)
 * @rnr_lid: the LID of the QP it waits for
 * @rnr_qpn: that QP's QPN
 * @rnr_srq: that QP's SRQ, or NULL (compared, never dereferenced)
 */
struct pv_qp {
	struct ib_qp ib;
	struct pv_dev *dev;
	struct percs_window *win;
	spinlock_t sq_lock;
	spinlock_t rq_lock;
	enum ib_qp_state state;
	struct pv_swqe *sq;
	u32 sq_size;
	u32 sq_head;
	u32 sq_count;
	u32 max_send_sge;
	struct pv_rq rq;
	struct pv_srq *srq;
	int access;
	u16 dlid;
	u32 dest_qpn;
	u32 qkey;
	u32 sq_psn;
	u32 rq_psn;
	enum ib_mtu mtu;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	bool sig_all;
	u8 rnr_left;
	u8 retry_left;
	struct delayed_work rnr_work;
	struct list_head rnr_node;
	u16 rnr_lid;
	u32 rnr_qpn;
	void *rnr_srq;
};

static inline struct pv_dev *to_pv_dev(struct ib_device *ib)
{
	return container_of(ib, struct pv_dev, ib);
}

static inline void pv_count(struct ib_device *ib, enum pv_stat stat)
{
	atomic64_inc(&to_pv_dev(ib)->stats[stat]);
}

static inline struct pv_pd *to_pv_pd(struct ib_pd *ib)
{
	return container_of(ib, struct pv_pd, ib);
}

static inline struct pv_ah *to_pv_ah(struct ib_ah *ib)
{
	return container_of(ib, struct pv_ah, ib);
}

static inline struct pv_mr *to_pv_mr(struct ib_mr *ib)
{
	return container_of(ib, struct pv_mr, ib);
}

static inline struct pv_cq *to_pv_cq(struct ib_cq *ib)
{
	return container_of(ib, struct pv_cq, ib);
}

static inline struct pv_srq *to_pv_srq(struct ib_srq *ib)
{
	return container_of(ib, struct pv_srq, ib);
}

static inline struct pv_qp *to_pv_qp(struct ib_qp *ib)
{
	return container_of(ib, struct pv_qp, ib);
}

/* main.c */
struct pv_dev *pv_dev_by_lid(u16 lid);

/* pd.c: protection domains, address handles, user contexts */
int pv_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int pv_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int pv_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		 struct ib_udata *udata);
int pv_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int pv_destroy_ah(struct ib_ah *ibah, u32 flags);
int pv_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void pv_dealloc_ucontext(struct ib_ucontext *uctx);
void pv_disassociate_ucontext(struct ib_ucontext *uctx);

/* mr.c */
struct ib_mr *pv_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			     u64 iova, int access, struct ib_udata *udata);
int pv_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *pv_get_dma_mr(struct ib_pd *ibpd, int access);
struct pv_mr *pv_mr_lookup_rcu(struct pv_dev *dev, u32 key);
int pv_mr_check(struct pv_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		int access);
static inline u64 pv_mr_va(const struct pv_mr *mr, u64 iova)
{
	return iova - mr->iova + mr->start;
}

/* cq.c */
int pv_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		 struct ib_udata *udata);
int pv_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int pv_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
struct rdma_hw_stats *pv_alloc_hw_port_stats(struct ib_device *ibdev,
					     u32 port);
int pv_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		    u32 port, int index);
int pv_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void pv_cq_post(struct pv_cq *cq, const struct ib_wc *wc, bool solicited);

/* srq.c */
int pv_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		  struct ib_udata *udata);
int pv_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		  enum ib_srq_attr_mask mask, struct ib_udata *udata);
int pv_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int pv_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int pv_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad);
bool pv_srq_take(struct pv_srq *srq, struct pv_rwqe *out);

/* rq.c: receive rings */
int pv_rq_init(struct pv_rq *rq, u32 size, u32 max_sge);
void pv_rq_free(struct pv_rq *rq);
int pv_rq_post(struct pv_rq *rq, const struct ib_recv_wr *wr);
bool pv_rq_take(struct pv_rq *rq, struct pv_rwqe *out);

/* qp.c */
int pv_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		 struct ib_udata *udata);
int pv_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_udata *udata);
int pv_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		struct ib_qp_init_attr *init);
int pv_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int pv_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		 const struct ib_recv_wr **bad);
void pv_qp_error(struct pv_qp *qp);
struct pv_qp *pv_qp_lookup_rcu(struct pv_dev *dev, u32 qpn);

/* send.c: the send queue and the transfers */
int pv_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		 const struct ib_send_wr **bad);
void pv_sq_progress(struct pv_qp *qp);
void pv_sq_flush(struct pv_qp *qp);
void pv_rnr_work(struct work_struct *work);
void pv_rnr_wake(struct pv_qp *qp, struct pv_srq *srq);
void pv_rnr_forget(struct pv_qp *qp);

#endif /* _PERCS_VERBS_H */
