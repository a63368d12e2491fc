// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: protection domains, address handles and user contexts -
 * the objects that hold no resource of the HFI.
 */
#include "verbs.h"

int pv_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	return 0;
}

void pv_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * The device goes away under a process that holds it: nothing is mapped
 * (ABI 1 has no user-space queues), and the core destroys the objects.
 */
void pv_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

int pv_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibpd->device);

	if (atomic_inc_return(&dev->nr_pds) > PV_MAX_PD) {
		atomic_dec(&dev->nr_pds);
		return -ENOMEM;
	}
	return 0;
}

int pv_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_pv_dev(ibpd->device)->nr_pds);
	return 0;
}

/**
 * pv_create_ah() - an address handle: a LID of the fabric
 * @ibah: the core's object
 * @init: the attributes: IB type, port 1, a LID that names an HFI
 * @udata: unused
 *
 * Return: 0, -EINVAL (not an IB address, or a LID with no HFI), -ENOMEM
 * (%PV_MAX_AH reached).
 */
int pv_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		 struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibah->device);
	struct rdma_ah_attr *a = init->ah_attr;
	u16 dlid;

	if (a->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	dlid = rdma_ah_get_dlid(a);
	if (!pv_dev_by_lid(dlid))
		return -EINVAL;
	if (atomic_inc_return(&dev->nr_ahs) > PV_MAX_AH) {
		atomic_dec(&dev->nr_ahs);
		return -ENOMEM;
	}
	to_pv_ah(ibah)->dlid = dlid;
	return 0;
}

int pv_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(attr, to_pv_ah(ibah)->dlid);
	rdma_ah_set_port_num(attr, 1);
	return 0;
}

int pv_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_pv_dev(ibah->device)->nr_ahs);
	return 0;
}
