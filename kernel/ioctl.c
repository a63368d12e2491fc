// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the uAPI's front door - every ioctl of every percs file.
 *
 * One table (the iommufd pattern, drivers/iommu/iommufd/main.c) names each
 * command with its argument struct, the struct's minimum size (the end of
 * the last field of its first ABI version), the kinds of file that accept
 * it and its handler.  One dispatcher does what every command shares, once:
 * it finds the command, refuses it on a file kind that does not take it
 * (ENOTTY), reads the caller's size (EFAULT), refuses a size below the
 * minimum (EINVAL), and copies the struct in with copy_struct_from_user(),
 * which zero-fills what an older, shorter caller did not pass and refuses
 * non-zero bytes a newer, longer caller passed beyond the kernel's struct
 * (E2BIG).  Handlers see a kernel copy of the kernel's full size and answer
 * up to the caller's size (percs_ucmd_respond()).  Documentation/uapi.rst
 * gives each errno its one meaning.
 *
 * PERCS_IOC_KICK takes a value, not a struct: nothing is copied in, the
 * handler gets the argument as is (the doorbell's fast path).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/uaccess.h>

#include "nmmu.h"

/**
 * enum percs_file_kind - the files that take ioctls, as bits of
 *	&percs_ioctl_op.files
 * @PERCS_FILE_HFI: /dev/percs-hfiN
 * @PERCS_FILE_WINDOW: a window fd (PERCS_IOC_WINDOW_RESERVE)
 * @PERCS_FILE_JOB: a job fd (PERCS_IOC_JOB_CREATE)
 */
enum percs_file_kind {
	PERCS_FILE_HFI = 1U << 0,
	PERCS_FILE_WINDOW = 1U << 1,
	PERCS_FILE_JOB = 1U << 2,
};

/* Every argument struct, so the kernel copy fits any of them. */
union percs_ucmd_buf {
	struct percs_hfi_info hfi_info;
	struct percs_window_reserve window_reserve;
	struct percs_window_query window_query;
	struct percs_job_create job_create;
	struct percs_job_query job_query;
	struct percs_mr_register mr_register;
	struct percs_mr_deregister mr_deregister;
	struct percs_cau_create cau_create;
	struct percs_cau_tree_op cau_tree_op;
};

/**
 * struct percs_ucmd - one ioctl call being served
 * @obj: the file's object, one of:
 * @hfi: the HFI (%PERCS_FILE_HFI)
 * @w: the window (%PERCS_FILE_WINDOW)
 * @job: the job (%PERCS_FILE_JOB)
 * @arg: the argument as passed (a value command's value)
 * @ubuf: the caller's struct
 * @user_size: its size as the caller gave it
 * @size: the kernel's size of the struct
 * @cmd: the kernel copy, @size bytes
 */
struct percs_ucmd {
	union {
		void *obj;
		struct percs_hfi *hfi;
		struct percs_window *w;
		struct percs_job *job;
	};
	unsigned long arg;
	void __user *ubuf;
	u32 user_size;
	u32 size;
	void *cmd;
};

/*
 * The answer: the kernel copy, up to the caller's size (an older caller's
 * shorter struct gets the fields it knows).
 */
static int percs_ucmd_respond(struct percs_ucmd *ucmd)
{
	if (copy_to_user(ucmd->ubuf, ucmd->cmd,
			 min_t(size_t, ucmd->user_size, ucmd->size)))
		return -EFAULT;
	return 0;
}

static int percs_ioctl_hfi_info(struct percs_ucmd *ucmd)
{
	struct percs_hfi_info *info = ucmd->cmd;
	struct percs_hfi *hfi = ucmd->hfi;
	struct percs_dev *pd = hfi->pd;

	if (info->flags || info->reserved)
		return -EINVAL;
	info->hub = hfi->hub;
	info->supernode = fm_hub_supernode(&pd->topo, hfi->hub);
	info->unit = hfi->unit;
	info->windows_total = pd->windows_per_hfi;
	info->windows_in_use = READ_ONCE(hfi->in_use);
	info->nr_supernodes = pd->topo.nr_supernodes;
	info->hubs_per_supernode = pd->topo.hubs_per_sn;
	info->nr_hubs = pd->topo.nr_hubs;
	info->hfis_per_hub = PERCS_HFIS_PER_HUB;
	info->max_packet = PERCS_MAX_PACKET;
	info->flit_size = PERCS_FLIT_SIZE;
	return percs_ucmd_respond(ucmd);
}

/* The answer is copied inside: the fd is installed only once it is out. */
static int percs_ioctl_window_reserve(struct percs_ucmd *ucmd)
{
	return percs_window_reserve(ucmd->hfi, ucmd->cmd, ucmd->ubuf,
				    ucmd->user_size);
}

/* A free window answers ENOENT with the answer filled in all the same. */
/* The first ABI version's query ends here (the table's minimum size). */
static_assert(offsetofend(struct percs_window_query, send_blocked) ==
	      PERCS_WINDOW_QUERY_SIZE_VER0);

static int percs_ioctl_window_query(struct percs_ucmd *ucmd)
{
	int ret;

	ret = percs_window_query(ucmd->hfi, ucmd->cmd);
	if (ret && ret != -ENOENT)
		return ret;
	if (percs_ucmd_respond(ucmd))
		return -EFAULT;
	return ret;
}

static int percs_ioctl_job_create(struct percs_ucmd *ucmd)
{
	return percs_job_create(ucmd->hfi->pd, ucmd->cmd, ucmd->ubuf,
				ucmd->user_size);
}

static int percs_ioctl_job_query(struct percs_ucmd *ucmd)
{
	int ret;

	ret = percs_job_query(ucmd->job, ucmd->cmd);
	if (ret)
		return ret;
	return percs_ucmd_respond(ucmd);
}

static int percs_ioctl_kick(struct percs_ucmd *ucmd)
{
	if (ucmd->arg & ~(unsigned long)PERCS_KICK_F_ALL)
		return -EINVAL;
	return percs_window_kick(ucmd->w, ucmd->arg ?: PERCS_KICK_F_ALL);
}

static int percs_ioctl_mr_register(struct percs_ucmd *ucmd)
{
	return percs_mr_register(ucmd->w, ucmd->cmd, ucmd->ubuf,
				 ucmd->user_size);
}

static int percs_ioctl_mr_deregister(struct percs_ucmd *ucmd)
{
	return percs_mr_deregister(ucmd->w, ucmd->cmd);
}

static int percs_ioctl_cau_create(struct percs_ucmd *ucmd)
{
	return percs_cau_create(ucmd->w, ucmd->cmd, ucmd->ubuf);
}

static int percs_ioctl_cau_join(struct percs_ucmd *ucmd)
{
	return percs_cau_join(ucmd->w, ucmd->cmd);
}

static int percs_ioctl_cau_destroy(struct percs_ucmd *ucmd)
{
	return percs_cau_destroy(ucmd->w, ucmd->cmd);
}

/**
 * struct percs_ioctl_op - one command of the uAPI
 * @cmd: the ioctl number
 * @files: PERCS_FILE_* bits: the files that accept it
 * @size: sizeof() its struct; 0: the argument is a value
 * @min_size: the size of the struct's first ABI version: the end of its
 *	last field then (smaller is EINVAL)
 * @execute: the handler
 */
struct percs_ioctl_op {
	unsigned int cmd;
	unsigned int files;
	unsigned int size;
	unsigned int min_size;
	int (*execute)(struct percs_ucmd *ucmd);
};

#define PERCS_IOCTL_OP(_ioctl, _files, _fn, _struct, _last)		\
	[_IOC_NR(_ioctl)] = {						\
		.cmd = _ioctl,						\
		.files = _files,					\
		.size = sizeof(_struct),				\
		.min_size = offsetofend(_struct, _last),		\
		.execute = _fn,						\
	}

#define PERCS_IOCTL_OP_VALUE(_ioctl, _files, _fn)			\
	[_IOC_NR(_ioctl)] = {						\
		.cmd = _ioctl,						\
		.files = _files,					\
		.execute = _fn,						\
	}

static const struct percs_ioctl_op percs_ioctl_ops[] = {
	PERCS_IOCTL_OP(PERCS_IOC_HFI_INFO, PERCS_FILE_HFI,
		       percs_ioctl_hfi_info, struct percs_hfi_info, reserved),
	PERCS_IOCTL_OP(PERCS_IOC_WINDOW_RESERVE, PERCS_FILE_HFI,
		       percs_ioctl_window_reserve, struct percs_window_reserve,
		       regions),
	PERCS_IOCTL_OP(PERCS_IOC_WINDOW_QUERY, PERCS_FILE_HFI,
		       percs_ioctl_window_query, struct percs_window_query,
		       send_blocked),
	PERCS_IOCTL_OP(PERCS_IOC_JOB_CREATE, PERCS_FILE_HFI,
		       percs_ioctl_job_create, struct percs_job_create,
		       job_key),
	PERCS_IOCTL_OP(PERCS_IOC_JOB_QUERY, PERCS_FILE_JOB,
		       percs_ioctl_job_query, struct percs_job_query, uid),
	PERCS_IOCTL_OP_VALUE(PERCS_IOC_KICK, PERCS_FILE_WINDOW,
			     percs_ioctl_kick),
	PERCS_IOCTL_OP(PERCS_IOC_MR_REGISTER, PERCS_FILE_WINDOW,
		       percs_ioctl_mr_register, struct percs_mr_register,
		       length),
	PERCS_IOCTL_OP(PERCS_IOC_MR_DEREGISTER, PERCS_FILE_WINDOW,
		       percs_ioctl_mr_deregister, struct percs_mr_deregister,
		       reserved),
	PERCS_IOCTL_OP(PERCS_IOC_CAU_CREATE, PERCS_FILE_WINDOW,
		       percs_ioctl_cau_create, struct percs_cau_create,
		       members),
	PERCS_IOCTL_OP(PERCS_IOC_CAU_JOIN, PERCS_FILE_WINDOW,
		       percs_ioctl_cau_join, struct percs_cau_tree_op,
		       reserved),
	PERCS_IOCTL_OP(PERCS_IOC_CAU_DESTROY, PERCS_FILE_WINDOW,
		       percs_ioctl_cau_destroy, struct percs_cau_tree_op,
		       reserved),
};

static unsigned int percs_file_kind(const struct file *file)
{
	if (file->f_op == &percs_window_fops)
		return PERCS_FILE_WINDOW;
	if (file->f_op == &percs_hfi_fops)
		return PERCS_FILE_HFI;
	if (file->f_op == &percs_job_fops)
		return PERCS_FILE_JOB;
	return 0;
}

/**
 * percs_ioctl() - the unlocked_ioctl of every percs file
 * @file: an HFI, window or job file
 * @cmd: the command
 * @arg: a user pointer to the command's struct, or a value command's value
 *
 * Return: the handler's answer (0, an fd, a count), or -errno: -ENOTTY for
 * a command this kind of file does not take, -EFAULT when the struct
 * cannot be read, -EINVAL when its size is below the command's minimum,
 * -E2BIG when it is longer than the kernel's with non-zero bytes beyond.
 */
long percs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct percs_ucmd ucmd = {
		.obj = file->private_data,
	};
	const struct percs_ioctl_op *op;
	unsigned int nr = _IOC_NR(cmd);
	union percs_ucmd_buf buf;
	int ret;

	if (nr >= ARRAY_SIZE(percs_ioctl_ops))
		return -ENOTTY;
	op = &percs_ioctl_ops[nr];
	if (op->cmd != cmd || !op->execute ||
	    !(op->files & percs_file_kind(file)))
		return -ENOTTY;
	ucmd.arg = arg;
	if (!op->size)
		return op->execute(&ucmd);

	ucmd.ubuf = (void __user *)arg;
	if (get_user(ucmd.user_size, (u32 __user *)ucmd.ubuf))
		return -EFAULT;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, ucmd.ubuf,
				    ucmd.user_size);
	if (ret)
		return ret;
	ucmd.size = op->size;
	ucmd.cmd = &buf;
	return op->execute(&ucmd);
}
