// SPDX-License-Identifier: GPL-2.0
/*
 * The uapi structs must have the same layout for 64-bit and 32-bit user
 * space (no compat code in the module): compiled with -m64 and -m32, every
 * size and the offsets that matter are asserted here.
 */
#include <stddef.h>
#include <linux/percs.h>

#define SIZE(s, n) _Static_assert(sizeof(struct s) == (n), #s " size")
#define OFF(s, f, n) _Static_assert(offsetof(struct s, f) == (n), #s "." #f)

SIZE(percs_addr, 8);
SIZE(percs_pkt_hdr, PERCS_PKT_HDR_SIZE);
OFF(percs_pkt_hdr, dst, 8);
OFF(percs_pkt_hdr, src, 16);
OFF(percs_pkt_hdr, job_key, 24);
OFF(percs_pkt_hdr, tag, 28);
SIZE(percs_rdma_ext, 48);
_Static_assert(sizeof(struct percs_rdma_ext) == PERCS_RDMA_EXT_SIZE, "PERCS_RDMA_EXT_SIZE");
OFF(percs_rdma_ext, remote_addr, 16);
OFF(percs_rdma_ext, user_data, 40);
SIZE(percs_atomic_op, PERCS_ATOMIC_OP_SIZE);
SIZE(percs_atomic_ext, PERCS_ATOMIC_EXT_SIZE);
OFF(percs_atomic_ext, user_data, 8);
OFF(percs_atomic_ext, result_addr, 16);
OFF(percs_atomic_ext, result_handle, 24);
/* Packed mode: four operations and their header are one cache line. */
_Static_assert(PERCS_PKT_HDR_SIZE + PERCS_ATOMIC_LEN(PERCS_ATOMIC_MAX_PACKED) ==
	       PERCS_FLIT_SIZE, "packed atomics");
SIZE(percs_coll_ext, PERCS_COLL_EXT_SIZE);
OFF(percs_coll_ext, seq, 8);
OFF(percs_coll_ext, status, 16);
/* A delivered CAU result is one cache line. */
_Static_assert(PERCS_PKT_HDR_SIZE + PERCS_COLL_EXT_SIZE + PERCS_CAU_PAYLOAD <=
	       PERCS_FLIT_SIZE, "CAU result line");
SIZE(percs_cau_member, 16);
SIZE(percs_cau_create, 24);
OFF(percs_cau_create, members, 16);
SIZE(percs_cau_tree_op, 16);
SIZE(percs_cqe, 16);
SIZE(percs_doorbell, 256);
OFF(percs_doorbell, recv_head, 64);
OFF(percs_doorbell, imm_tail, 128);
OFF(percs_doorbell, cq_head, 192);
SIZE(percs_status, 384 + 4 * PERCS_MR_INVAL_RING);
OFF(percs_status, flags, 256);
OFF(percs_status, poll_beat, 304);
OFF(percs_status, kicks, 328);
OFF(percs_status, mr_invalidated, 336);
OFF(percs_status, mr_inval_ring, 384);
SIZE(percs_region, 16);
SIZE(percs_hfi_info, 56);
SIZE(percs_window_reserve, 176);
OFF(percs_window_reserve, addr, 40);
OFF(percs_window_reserve, regions, 48);
OFF(percs_window_reserve, job_fd, 16);
OFF(percs_window_reserve, job_key, 36);
SIZE(percs_job_create, 16);
SIZE(percs_job_query, 24);
SIZE(percs_window_query, 96);
OFF(percs_window_query, sent_polled, 72);
SIZE(percs_clock, 128);
OFF(percs_clock, mult, 16);
OFF(percs_clock, tsc_base, 24);
OFF(percs_clock, ns_base, 32);
OFF(percs_clock, mono_offset, 40);
OFF(percs_clock, updates, 48);
OFF(percs_clock, reserved, 56);
OFF(percs_window_query, packets_sent, 40);
SIZE(percs_mr_register, 32);
OFF(percs_mr_register, access, 8);
OFF(percs_mr_register, handle, 12);
OFF(percs_mr_register, addr, 16);
OFF(percs_mr_register, length, 24);
SIZE(percs_mr_deregister, 16);
OFF(percs_mr_deregister, handle, 8);

/* An immediate send is one flit; a packet is at most 16. */
_Static_assert(PERCS_IMM_PAYLOAD + PERCS_PKT_HDR_SIZE == PERCS_FLIT_SIZE,
	       "immediate line");
_Static_assert(PERCS_MAX_PKT_UNITS == 16, "packet flits");

int main(void)
{
	return 0;
}
