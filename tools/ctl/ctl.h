/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs-ctl: what its parts share.  percs-ctl.c has main(), the options,
 * JSON output and the commands over the HFI devices and sysfs; isr.c the
 * commands over the ISR's debugfs files; model.c what the firmware model
 * (compiled in) says about a topology: its links, and the routes left
 * when some are down.
 */
#ifndef PERCS_CTL_H
#define PERCS_CTL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define EXIT_USAGE	2

/* The ranges the kernel enforces on the ISR's debugfs knobs (EINVAL outside). */
#define ISR_ERROR_PPM_MAX	500000u
#define ISR_FAULT_PPM_MAX	500000u	/* drop_ppm, dup_ppm */
#define ISR_REORDER_PPM_MAX	1000000u
#define ISR_DEPTH_MIN		1u
#define ISR_DEPTH_MAX		64u
#define ISR_HOLD_US_MIN		1u
#define ISR_HOLD_US_MAX		1000000u

extern const char *prog;

/* A message about bad usage on stderr; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *env_or(const char *name, const char *def);

/* "key":value pairs of one JSON object, the separators taken care of. */
struct jobj {
	bool first;
};

void json_str(const char *s);
void jkey(struct jobj *o, const char *key);
void jstr(struct jobj *o, const char *key, const char *val);
void ju64(struct jobj *o, const char *key, uint64_t val);
void jbool(struct jobj *o, const char *key, bool val);

/* ---- isr.c ---- */

/* The command line of an ISR command, its options not yet checked. */
struct isr_args {
	bool json;
	const char *class;	/* --class, or NULL */
	bool down;		/* --down */
	long hub;		/* --hub, or -1 */
	const char *topology;	/* --topology, or NULL */
	bool all_up;		/* --all-up */
	const char *depth;	/* --depth, or NULL */
	const char *hold_us;	/* --hold-us, or NULL */
	char **args;		/* the words after the command */
	unsigned int nargs;
};

/* Each returns the exit status, after a message if it is not 0. */
int cmd_links(const struct isr_args *a);
int cmd_link(const struct isr_args *a);
int cmd_reorder(const struct isr_args *a);
int cmd_isr(const struct isr_args *a);
int cmd_drop(const struct isr_args *a);
int cmd_dup(const struct isr_args *a);
int cmd_atomic(const struct isr_args *a);

/* What isr/topology adds to the "topology" command. */
struct isr_shape {
	char path[PATH_MAX];	/* of isr/topology */
	char *spec;		/* the topology spec string, or NULL */
	bool has_links, has_d_links_per_pair;
	uint64_t links, d_links_per_pair;
};

/*
 * Fill @sh from isr/topology; unless @required, a file that cannot be
 * opened (missing, root only) leaves it empty.  Returns 0, or 1 after a
 * message if the file is malformed (or missing and @required).  Free with
 * isr_shape_free().
 */
int isr_shape_read(struct isr_shape *sh, bool required);
void isr_shape_free(struct isr_shape *sh);

/* One line of isr/links, as reach checks it against the model. */
struct isr_link {
	uint64_t id, hub_a, hub_b, port_a, port_b;
	const char *class;	/* "LL", "LR" or "D" */
	bool up;
	size_t line;		/* its line number in the file */
};

/*
 * Read and check isr/links: *@links, an array of *@n (free() it), its
 * path in @path.  Returns 0, or 1 after a message.
 */
int isr_links_get(struct isr_link **links, size_t *n, char *path,
		  size_t len);

/* ---- model.c ---- */

/*
 * links --topology SPEC: the links of a spec as the model wires them, of
 * link class @class (an index into LL, LR, D) or all (-1).
 */
int links_of_spec(const struct isr_args *a, int class);

/* reach [LINK...]: the routes left with links down (model.c's top). */
int cmd_reach(const struct isr_args *a);

#endif /* PERCS_CTL_H */
