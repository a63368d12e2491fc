// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: module entry points, one ib_device per HFI, and the
 * device, port and address queries.
 *
 * Addressing: the LID of an HFI is its global number + 1 (hub * 2 + unit
 * + 1, never 0); its GUID is 02:50:45:52:43:53 ("PERCS", locally
 * administered) followed by that number; its port GID is fe80:: + GUID.
 * One partition (the default P_Key 0xffff): verbs users are separated as
 * on InfiniBand, by Q_Keys (UD) and R_Keys (RDMA, atomics), and all the
 * device's QPs live in one job of the emulated system that native windows
 * can never join (pv_job_create()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "verbs.h"

#define PV_GUID_PREFIX	0x0250455243530000ULL
#define PV_VENDOR_ID	0x0250	/* none assigned: the GUID prefix */
#define PV_PART_ID	0x0775	/* Power 775 */

static struct pv_dev **pv_devs;
static u32 pv_nr_devs;
static struct percs_job *pv_job;

/**
 * pv_job_create() - the verbs job: the one place it is made
 * @pd: the system
 *
 * The verbs devices are one job of the emulated system, as an InfiniBand
 * fabric is one default partition.  The job has no fd, so no native
 * window can join it: no native packet reaches a verbs QP's window, nor
 * the reverse.
 *
 * Return: the job, or an ERR_PTR().
 */
static struct percs_job *pv_job_create(struct percs_dev *pd)
{
	return percs_kapi_job_create(pd);
}

/**
 * pv_dev_by_lid() - the device whose port has @lid
 * @lid: a LID
 *
 * Return: the device, or NULL.  Devices live as long as the module.
 */
struct pv_dev *pv_dev_by_lid(u16 lid)
{
	if (!lid || lid > pv_nr_devs)
		return NULL;
	return pv_devs[lid - 1];
}

static int pv_query_device(struct ib_device *ibdev,
			   struct ib_device_attr *attr, struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibdev);

	if (udata->inlen || udata->outlen)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 1;
	attr->sys_image_guid = dev->guid;
	/* One MR is one NMMU registration. */
	attr->max_mr_size = PERCS_MR_MAX_LENGTH;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = PV_VENDOR_ID;
	attr->vendor_part_id = PV_PART_ID;
	attr->hw_ver = 1;
	attr->max_qp = dev->info.windows;
	attr->max_qp_wr = PV_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID;
	attr->max_send_sge = PV_MAX_SGE;
	attr->max_recv_sge = PV_MAX_SGE;
	attr->max_sge_rd = PV_MAX_SGE;
	attr->max_cq = PV_MAX_CQ;
	attr->max_cqe = PV_MAX_CQE;
	attr->max_mr = PV_MAX_MR;
	attr->max_pd = PV_MAX_PD;
	attr->max_qp_rd_atom = PV_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = PV_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = PV_MAX_RD_ATOMIC * dev->info.windows;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = PV_MAX_AH;
	attr->max_srq = PV_MAX_SRQ;
	attr->max_srq_wr = PV_MAX_QP_WR;
	attr->max_srq_sge = PV_MAX_SGE;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int pv_query_port(struct ib_device *ibdev, u32 port,
			 struct ib_port_attr *attr)
{
	struct pv_dev *dev = to_pv_dev(ibdev);

	/* The core zeroed *attr and checked @port. */
	attr->state = IB_PORT_ACTIVE;
	attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	attr->max_mtu = PV_MTU;
	attr->active_mtu = PV_MTU;
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = PV_MAX_MSG;
	attr->lid = dev->lid;
	attr->sm_lid = 1;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_EDR;
	attr->subnet_timeout = 18;
	return 0;
}

static int pv_get_port_immutable(struct ib_device *ibdev, u32 port,
				 struct ib_port_immutable *imm)
{
	imm->pkey_tbl_len = 1;
	imm->gid_tbl_len = 1;
	imm->core_cap_flags = RDMA_CORE_CAP_PROT_IB;
	imm->max_mad_size = 0;
	return 0;
}

static enum rdma_link_layer pv_get_link_layer(struct ib_device *ibdev,
					      u32 port)
{
	return IB_LINK_LAYER_INFINIBAND;
}

static int pv_query_gid(struct ib_device *ibdev, u32 port, int index,
			union ib_gid *gid)
{
	if (index)
		return -EINVAL;
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
	gid->global.interface_id = to_pv_dev(ibdev)->guid;
	return 0;
}

static int pv_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			 u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = PV_PKEY;
	return 0;
}

static const struct ib_device_ops pv_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_HFI1,
	.uverbs_abi_ver = 1,

	.alloc_hw_port_stats = pv_alloc_hw_port_stats,
	.alloc_pd = pv_alloc_pd,
	.alloc_ucontext = pv_alloc_ucontext,
	.create_ah = pv_create_ah,
	.create_user_ah = pv_create_ah,
	.create_cq = pv_create_cq,
	.create_qp = pv_create_qp,
	.create_srq = pv_create_srq,
	.dealloc_pd = pv_dealloc_pd,
	.dealloc_ucontext = pv_dealloc_ucontext,
	.dereg_mr = pv_dereg_mr,
	.get_dma_mr = pv_get_dma_mr,
	.destroy_ah = pv_destroy_ah,
	.destroy_cq = pv_destroy_cq,
	.destroy_qp = pv_destroy_qp,
	.destroy_srq = pv_destroy_srq,
	.disassociate_ucontext = pv_disassociate_ucontext,
	.get_hw_stats = pv_get_hw_stats,
	.get_link_layer = pv_get_link_layer,
	.get_port_immutable = pv_get_port_immutable,
	.modify_qp = pv_modify_qp,
	.modify_srq = pv_modify_srq,
	.poll_cq = pv_poll_cq,
	.post_recv = pv_post_recv,
	.post_send = pv_post_send,
	.post_srq_recv = pv_post_srq_recv,
	.query_ah = pv_query_ah,
	.query_device = pv_query_device,
	.query_gid = pv_query_gid,
	.query_pkey = pv_query_pkey,
	.query_port = pv_query_port,
	.query_qp = pv_query_qp,
	.query_srq = pv_query_srq,
	.reg_user_mr = pv_reg_user_mr,
	.req_notify_cq = pv_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, pv_ah, ib),
	INIT_RDMA_OBJ_SIZE(ib_cq, pv_cq, ib),
	INIT_RDMA_OBJ_SIZE(ib_pd, pv_pd, ib),
	INIT_RDMA_OBJ_SIZE(ib_qp, pv_qp, ib),
	INIT_RDMA_OBJ_SIZE(ib_srq, pv_srq, ib),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, pv_ucontext, ib),
};

static struct pv_dev *pv_dev_create(struct percs_dev *pd, u32 id)
{
	struct pv_dev *dev;
	int ret;

	dev = ib_alloc_device(pv_dev, ib);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->hfi = percs_kapi_hfi(pd, id, &dev->info);
	dev->lid = id + 1;
	dev->guid = cpu_to_be64(PV_GUID_PREFIX | id);
	dev->job = pv_job;
	xa_init(&dev->qps);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC1);

	dev->ib.node_type = RDMA_NODE_IB_CA;
	dev->ib.phys_port_cnt = 1;
	dev->ib.num_comp_vectors = 1;
	dev->ib.node_guid = dev->guid;
	dev->ib.uverbs_cmd_mask |=
		BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV);
	snprintf(dev->ib.node_desc, sizeof(dev->ib.node_desc),
		 "percs hub %u HFI %u", dev->info.hub, dev->info.unit);
	ib_set_device_ops(&dev->ib, &pv_dev_ops);

	ret = ib_register_device(&dev->ib, "percs%d", NULL);
	if (ret) {
		ib_dealloc_device(&dev->ib);
		return ERR_PTR(ret);
	}
	return dev;
}

/*
 * Every device is unregistered first (which destroys the objects user
 * space still holds, by disassociation), and only then freed: a QP of a
 * device not yet unregistered may still look a peer device up by LID.
 */
static void pv_remove_all(void)
{
	u32 i;

	for (i = pv_nr_devs; i--;)
		ib_unregister_device(&pv_devs[i]->ib);
	for (i = pv_nr_devs; i--;) {
		struct pv_dev *dev = pv_devs[i];

		WARN_ON(!xa_empty(&dev->qps) || !xa_empty(&dev->mrs));
		xa_destroy(&dev->qps);
		xa_destroy(&dev->mrs);
		ib_dealloc_device(&dev->ib);
	}
	pv_nr_devs = 0;
	kfree(pv_devs);
	pv_devs = NULL;
}

static int __init pv_init(void)
{
	struct percs_dev *pd = percs_kapi_system();
	u32 nr, i;
	int ret;

	if (!pd)
		return -ENODEV;
	nr = percs_kapi_nr_hfis(pd);
	/* LIDs are 16-bit, unicast below 0xc000. */
	if (nr >= 0xc000) {
		pr_err("%u HFIs: more than the unicast LIDs\n", nr);
		return -E2BIG;
	}
	pv_job = pv_job_create(pd);
	if (IS_ERR(pv_job))
		return PTR_ERR(pv_job);
	pv_devs = kcalloc(nr, sizeof(*pv_devs), GFP_KERNEL);
	if (!pv_devs) {
		ret = -ENOMEM;
		goto out_job;
	}
	for (i = 0; i < nr; i++) {
		struct pv_dev *dev = pv_dev_create(pd, i);

		if (IS_ERR(dev)) {
			ret = PTR_ERR(dev);
			pr_err("HFI %u: cannot register its verbs device (%d)\n",
			       i, ret);
			goto out_devs;
		}
		pv_devs[i] = dev;
		pv_nr_devs = i + 1;
	}
	pr_info("%u verbs devices, job key %#x\n", nr,
		percs_kapi_job_key(pv_job));
	return 0;

out_devs:
	pv_remove_all();
out_job:
	percs_kapi_job_put(pv_job);
	return ret;
}

static void __exit pv_exit(void)
{
	pv_remove_all();
	percs_kapi_job_put(pv_job);
}

module_init(pv_init);
module_exit(pv_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RDMA verbs devices over the emulated PERCS HFIs");
MODULE_AUTHOR("percs developers");
MODULE_SOFTDEP("pre: ib_uverbs");
