// SPDX-License-Identifier: GPL-2.0
/*
 * percs-ctl: inspect the emulated PERCS system and drive its network.
 *
 *   percs-ctl list                       hubs, supernodes, HFIs, windows in use
 *   percs-ctl windows [--hfi N]          every reserved window
 *   percs-ctl topology                   the system's shape
 *   percs-ctl links [--class C] [--down] [--hub N] [--topology SPEC]
 *                                        the ISR's links and their counters
 *                                        (a spec's links: model.c)
 *   percs-ctl reach [LINK...] [--topology SPEC | --all-up] [--hub N]
 *                                        the routes left with links down
 *   percs-ctl link ID up|down            link state
 *   percs-ctl link ID|all errors PPM     transient link errors
 *   percs-ctl reorder PPM [--depth N] [--hold-us N]
 *                                        out-of-order delivery
 *   percs-ctl drop PPM                   drop atomic packets
 *   percs-ctl dup PPM                    duplicate atomic packets
 *   percs-ctl isr                        ISR topology, knobs, flight counters
 *   percs-ctl atomic                     the remote atomics' counters
 *
 * The first three ask the HFI devices and sysfs; the others (isr.c) read
 * and write debugfs (PERCS_DEBUGFS_DIR, root only), but for links and
 * reach with --topology, which need only the firmware model compiled in
 * (model.c).  list, windows, topology, links, reach, isr and atomic take
 * --json.  Exit status: 0 success, 1 the system could not be inspected or
 * refused a change, 2 bad usage.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ctl.h"
#include "percs.h"

const char *prog = "percs-ctl";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--json] COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  list                 hubs, supernodes, HFIs and their windows in use\n"
		"  windows [--hfi N]    every reserved window (of HFI N only)\n"
		"  topology             supernodes, hubs per supernode, hubs, HFIs\n"
		"  links [--class C] [--down] [--hub N] [--topology SPEC]\n"
		"                       the network's links: state, error rate, counters;\n"
		"                       with --topology, the links of a topology spec\n"
		"  reach [LINK...] [--topology SPEC | --all-up] [--hub N]\n"
		"                       with links LINK... down (and those down now), the\n"
		"                       routes each pair of hubs has left, direct and via\n"
		"                       which supernodes, and the hubs it cannot reach;\n"
		"                       LINK: a link ID, a range A-B or a list A,B\n"
		"  link ID up|down      bring link ID up or take it down\n"
		"  link ID|all errors PPM\n"
		"                       inject transient errors on link ID (or on every\n"
		"                       link): PPM per million flits, 0..%u, 0 stops\n"
		"  reorder PPM [--depth N] [--hold-us N]\n"
		"                       hold back PPM packets per million (0..%u)\n"
		"  drop PPM             drop PPM atomic packets per million (0..%u);\n"
		"                       retransmission recovers them\n"
		"  dup PPM              duplicate PPM atomic packets per million (0..%u)\n"
		"  isr                  the network's topology, fault knobs and the\n"
		"                       packets it holds back\n"
		"  atomic               remote atomics: issued, completed, retransmits,\n"
		"                       duplicates, ... (percs/atomic)\n"
		"\n"
		"options:\n"
		"  --json               machine-readable output (list, windows, topology,\n"
		"                       links, reach, isr, atomic)\n"
		"  --hfi N              with windows: only /dev/percs-hfiN\n"
		"  --class LL|LR|D      with links: only links of this class\n"
		"  --down               with links: only links that are down\n"
		"  --hub N              with links: only links of hub N; with reach: only\n"
		"                       the pairs from or to hub N\n"
		"  --topology SPEC      with links and reach: the system of topology spec\n"
		"                       SPEC (e.g. 3x4, 5x8,dpair=4, d1), not the module's\n"
		"  --all-up             with reach: only the links named are down, not\n"
		"                       those down in the module now\n"
		"  --depth N            with reorder: a held packet is overtaken by up\n"
		"                       to N later ones (1..%u)\n"
		"  --hold-us N          with reorder: and held at most N us (1..%u)\n"
		"  -h, --help           this text\n"
		"\n"
		"environment: PERCS_DEV_DIR (default /dev), PERCS_SYSFS_DIR\n"
		"(default /sys/class/percs), PERCS_DEBUGFS_DIR (default\n"
		"/sys/kernel/debug/percs)\n", prog, ISR_ERROR_PPM_MAX,
		ISR_REORDER_PPM_MAX, ISR_FAULT_PPM_MAX, ISR_FAULT_PPM_MAX,
		ISR_DEPTH_MAX, ISR_HOLD_US_MAX);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	return EXIT_USAGE;
}

const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/* ---- JSON output --------------------------------------------------------- */

void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\r':
			fputs("\\r", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		case '\b':
			fputs("\\b", stdout);
			break;
		case '\f':
			fputs("\\f", stdout);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				printf("\\u%04x", c);
			else
				putchar(c);
		}
	}
	putchar('"');
}

void jkey(struct jobj *o, const char *key)
{
	if (!o->first)
		putchar(',');
	o->first = false;
	json_str(key);
	putchar(':');
}

void jstr(struct jobj *o, const char *key, const char *val)
{
	jkey(o, key);
	json_str(val);
}

void ju64(struct jobj *o, const char *key, uint64_t val)
{
	jkey(o, key);
	printf("%" PRIu64, val);
}

void jbool(struct jobj *o, const char *key, bool val)
{
	jkey(o, key);
	fputs(val ? "true" : "false", stdout);
}

/* ---- the system ------------------------------------------------------------ */

struct sys {
	struct percs_hfi *hfi0;
	struct percs_hfi_info info;
	unsigned int nr_hfis;
};

/*
 * Open HFI 0 and learn the system's shape.  A missing device means the
 * module is not loaded.
 */
static int sys_open(struct sys *s)
{
	const char *dir = env_or("PERCS_DEV_DIR", "/dev");
	int err;

	err = percs_hfi_open(0, 0, &s->hfi0);
	if (err == -ENOENT) {
		fprintf(stderr, "%s: percs module not loaded: %s/percs-hfi0 missing\n",
			prog, dir);
		return 1;
	}
	if (err) {
		fprintf(stderr, "%s: %s/percs-hfi0: %s\n", prog, dir,
			strerror(-err));
		return 1;
	}
	err = percs_hfi_info(s->hfi0, &s->info);
	if (err) {
		fprintf(stderr, "%s: %s/percs-hfi0: PERCS_IOC_HFI_INFO: %s\n",
			prog, dir, strerror(-err));
		percs_hfi_close(s->hfi0);
		return 1;
	}
	if (!s->info.hfis_per_hub)
		s->info.hfis_per_hub = 2;
	s->nr_hfis = s->info.nr_hubs * s->info.hfis_per_hub;
	return 0;
}

static void sys_close(struct sys *s)
{
	percs_hfi_close(s->hfi0);
}

/* Open HFI @n (0 is already open). */
static int hfi_open(struct sys *s, unsigned int n, struct percs_hfi **out)
{
	int err;

	if (n == 0) {
		*out = s->hfi0;
		return 0;
	}
	err = percs_hfi_open(n / s->info.hfis_per_hub, n % s->info.hfis_per_hub,
			     out);
	if (err)
		fprintf(stderr, "%s: %s/percs-hfi%u: %s\n", prog,
			env_or("PERCS_DEV_DIR", "/dev"), n, strerror(-err));
	return err;
}

static void hfi_close(struct sys *s, struct percs_hfi *h)
{
	if (h != s->hfi0)
		percs_hfi_close(h);
}

static bool sysfs_u32(unsigned int n, const char *attr, uint32_t *val)
{
	char path[PATH_MAX];
	unsigned long v;
	char *end;
	char buf[32];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/percs-hfi%u/%s",
		 env_or("PERCS_SYSFS_DIR", "/sys/class/percs"), n, attr);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	errno = 0;
	v = strtoul(buf, &end, 0);
	if (errno || end == buf || (*end && *end != '\n') || v > UINT32_MAX)
		return false;
	*val = (uint32_t)v;
	return true;
}

/*
 * Describe HFI @n: from sysfs, or (without sysfs) from PERCS_IOC_HFI_INFO
 * on its device.
 */
static int hfi_describe(struct sys *s, unsigned int n, struct percs_hfi_info *d)
{
	struct percs_hfi *h;
	int err;

	memset(d, 0, sizeof(*d));
	if (sysfs_u32(n, "hub", &d->hub) &&
	    sysfs_u32(n, "supernode", &d->supernode) &&
	    sysfs_u32(n, "unit", &d->unit) &&
	    sysfs_u32(n, "windows_total", &d->windows_total) &&
	    sysfs_u32(n, "windows_in_use", &d->windows_in_use))
		return 0;
	err = hfi_open(s, n, &h);
	if (err)
		return err;
	err = percs_hfi_info(h, d);
	if (err)
		fprintf(stderr, "%s: percs-hfi%u: PERCS_IOC_HFI_INFO: %s\n",
			prog, n, strerror(-err));
	hfi_close(s, h);
	return err;
}

/* ---- commands ------------------------------------------------------------------ */

static int cmd_topology(struct sys *s, bool json)
{
	const struct percs_hfi_info *i = &s->info;
	struct isr_shape sh;
	int ret;

	/* The ISR's view, if debugfs shows it to us (root only). */
	ret = isr_shape_read(&sh, false);
	if (json) {
		struct jobj o = { true };

		putchar('{');
		if (sh.spec)
			jstr(&o, "spec", sh.spec);
		ju64(&o, "nr_supernodes", i->nr_supernodes);
		ju64(&o, "hubs_per_supernode", i->hubs_per_supernode);
		ju64(&o, "nr_hubs", i->nr_hubs);
		ju64(&o, "hfis_per_hub", i->hfis_per_hub);
		ju64(&o, "nr_hfis", s->nr_hfis);
		ju64(&o, "windows_per_hfi", i->windows_total);
		ju64(&o, "max_packet", i->max_packet);
		ju64(&o, "flit_size", i->flit_size);
		if (sh.has_links)
			ju64(&o, "nr_links", sh.links);
		if (sh.has_d_links_per_pair)
			ju64(&o, "d_links_per_pair", sh.d_links_per_pair);
		puts("}");
	} else {
		if (sh.spec)
			printf("spec:                %s\n", sh.spec);
		printf("supernodes:          %u\n", i->nr_supernodes);
		printf("hubs per supernode:  %u\n", i->hubs_per_supernode);
		printf("hubs:                %u\n", i->nr_hubs);
		printf("HFIs per hub:        %u\n", i->hfis_per_hub);
		printf("HFIs:                %u\n", s->nr_hfis);
		printf("windows per HFI:     %u\n", i->windows_total);
		printf("max packet:          %u bytes (%u-byte flits)\n",
		       i->max_packet, i->flit_size);
		if (sh.has_links)
			printf("links:               %" PRIu64 "\n", sh.links);
		if (sh.has_d_links_per_pair)
			printf("D links per pair:    %" PRIu64 "\n",
			       sh.d_links_per_pair);
	}
	isr_shape_free(&sh);
	return ret;
}

static int cmd_list(struct sys *s, bool json)
{
	const struct percs_hfi_info *i = &s->info;
	int ret = 0;

	if (json) {
		struct jobj o = { true };

		putchar('{');
		ju64(&o, "nr_supernodes", i->nr_supernodes);
		ju64(&o, "hubs_per_supernode", i->hubs_per_supernode);
		ju64(&o, "nr_hubs", i->nr_hubs);
		ju64(&o, "nr_hfis", s->nr_hfis);
		jkey(&o, "hfis");
		putchar('[');
	} else {
		printf("%u supernodes x %u hubs = %u hubs, %u HFIs\n",
		       i->nr_supernodes, i->hubs_per_supernode, i->nr_hubs,
		       s->nr_hfis);
		printf("%-12s %5s %9s %4s %7s %6s\n", "DEVICE", "HUB",
		       "SUPERNODE", "UNIT", "WINDOWS", "IN-USE");
	}
	for (unsigned int n = 0, shown = 0; n < s->nr_hfis; n++) {
		struct percs_hfi_info d;
		char name[32];

		if (hfi_describe(s, n, &d)) {
			ret = 1;
			continue;
		}
		snprintf(name, sizeof(name), "percs-hfi%u", n);
		if (json) {
			struct jobj o = { true };

			printf("%s{", shown++ ? "," : "");
			jstr(&o, "device", name);
			ju64(&o, "hfi", n);
			ju64(&o, "hub", d.hub);
			ju64(&o, "supernode", d.supernode);
			ju64(&o, "unit", d.unit);
			ju64(&o, "windows_total", d.windows_total);
			ju64(&o, "windows_in_use", d.windows_in_use);
			putchar('}');
		} else {
			printf("%-12s %5u %9u %4u %7u %6u\n", name, d.hub,
			       d.supernode, d.unit, d.windows_total,
			       d.windows_in_use);
		}
	}
	if (json)
		puts("]}");
	return ret;
}

static int cmd_windows(struct sys *s, bool json, long only)
{
	unsigned int first = 0, last = s->nr_hfis, shown = 0;
	int ret = 0;

	if (only >= 0) {
		if ((unsigned long)only >= s->nr_hfis) {
			fprintf(stderr, "%s: --hfi %ld: the system has HFIs 0..%u\n",
				prog, only, s->nr_hfis ? s->nr_hfis - 1 : 0);
			return EXIT_USAGE;
		}
		first = (unsigned int)only;
		last = first + 1;
	}
	if (json)
		fputs("{\"windows\":[", stdout);
	else
		printf("%4s %6s %10s %7s %6s %4s %9s %9s %12s %12s %8s %8s %12s %12s %10s\n",
		       "HFI", "WINDOW", "JOB-KEY", "PID", "UID", "MODE",
		       "SEND-FIFO", "RECV-FIFO", "SENT", "RECEIVED", "ERRORS",
		       "BLOCKED", "POLLED", "KICKED", "KICKS");
	for (unsigned int n = first; n < last; n++) {
		struct percs_hfi_info d;
		struct percs_hfi *h;
		int err;

		if (hfi_open(s, n, &h)) {
			ret = 1;
			continue;
		}
		err = percs_hfi_info(h, &d);
		if (err) {
			fprintf(stderr, "%s: percs-hfi%u: PERCS_IOC_HFI_INFO: %s\n",
				prog, n, strerror(-err));
			hfi_close(s, h);
			ret = 1;
			continue;
		}
		for (uint32_t win = 0; win < d.windows_total; win++) {
			struct percs_window_query q = {
				.size = sizeof(q),
				.window = win,
			};
			const char *mode;
			bool hidden;

			if (ioctl(percs_hfi_fd(h), PERCS_IOC_WINDOW_QUERY, &q)) {
				if (errno == ENOENT)
					continue;
				fprintf(stderr, "%s: percs-hfi%u: window %u: PERCS_IOC_WINDOW_QUERY: %s\n",
					prog, n, win, strerror(errno));
				ret = 1;
				break;
			}
			/* A kernel window is a verbs QP's (percs_verbs.ko). */
			mode = q.wflags & PERCS_WINDOW_F_KERNEL ? "qp" :
			       q.wflags & PERCS_WINDOW_F_POLL ? "poll" :
			       q.wflags & PERCS_WINDOW_F_AUTO ? "auto" : "kick";
			/* Another user's job: in use, and nothing more to tell. */
			hidden = q.state == PERCS_WSTATE_HIDDEN;
			if (json) {
				struct jobj o = { true };

				printf("%s{", shown++ ? "," : "");
				ju64(&o, "hfi", n);
				ju64(&o, "hub", d.hub);
				ju64(&o, "unit", d.unit);
				ju64(&o, "window", win);
				jbool(&o, "hidden", hidden);
				if (!hidden) {
					ju64(&o, "job_key", q.job_key);
					ju64(&o, "pid", q.pid);
					ju64(&o, "uid", q.uid);
				}
				jstr(&o, "mode", mode);
				if (q.wflags & PERCS_WINDOW_F_KERNEL)
					ju64(&o, "qpn", PERCS_VERBS_QPN_BASE + win);
				ju64(&o, "send_fifo_size", q.send_fifo_size);
				ju64(&o, "recv_fifo_size", q.recv_fifo_size);
				if (hidden) {
					putchar('}');
					continue;
				}
				ju64(&o, "packets_sent", q.packets_sent);
				ju64(&o, "packets_received", q.packets_received);
				ju64(&o, "send_errors", q.send_errors);
				ju64(&o, "send_blocked", q.send_blocked);
				ju64(&o, "sent_polled", q.sent_polled);
				ju64(&o, "sent_kicked", q.sent_kicked);
				ju64(&o, "kicks", q.kicks);
				putchar('}');
			} else if (hidden) {
				printf("%4u %6u %10s %7s %6s %4s %9u %9u %12s %12s %8s %8s %12s %12s %10s\n",
				       n, win, "-", "-", "-", mode,
				       q.send_fifo_size, q.recv_fifo_size,
				       "-", "-", "-", "-", "-", "-", "-");
			} else {
				printf("%4u %6u %10u %7u %6u %4s %9u %9u %12" PRIu64
				       " %12" PRIu64 " %8" PRIu64 " %8" PRIu64
				       " %12" PRIu64 " %12" PRIu64 " %10" PRIu64 "\n",
				       n, win, q.job_key, q.pid, q.uid, mode,
				       q.send_fifo_size, q.recv_fifo_size,
				       (uint64_t)q.packets_sent,
				       (uint64_t)q.packets_received,
				       (uint64_t)q.send_errors,
				       (uint64_t)q.send_blocked,
				       (uint64_t)q.sent_polled,
				       (uint64_t)q.sent_kicked,
				       (uint64_t)q.kicks);
			}
		}
		hfi_close(s, h);
	}
	if (json)
		puts("]}");
	return ret;
}

/* ---- main ------------------------------------------------------------------------ */

static bool parse_uint(const char *s, long *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > INT_MAX)
		return false;
	*out = v;
	return true;
}

/* The options, each with the commands it applies to. */
enum {
	OPT_JSON = 1 << 0,
	OPT_HFI = 1 << 1,
	OPT_CLASS = 1 << 2,
	OPT_DOWN = 1 << 3,
	OPT_HUB = 1 << 4,
	OPT_DEPTH = 1 << 5,
	OPT_HOLD_US = 1 << 6,
	OPT_TOPOLOGY = 1 << 7,
	OPT_ALL_UP = 1 << 8,
};

static const struct {
	unsigned int bit;
	const char *name;
} options[] = {
	{ OPT_JSON, "--json" }, { OPT_HFI, "--hfi" }, { OPT_CLASS, "--class" },
	{ OPT_DOWN, "--down" }, { OPT_HUB, "--hub" }, { OPT_DEPTH, "--depth" },
	{ OPT_HOLD_US, "--hold-us" }, { OPT_TOPOLOGY, "--topology" },
	{ OPT_ALL_UP, "--all-up" },
};

static const struct {
	const char *name;
	unsigned int opts;	/* the options it takes */
	unsigned int max_args;	/* words after the command */
	int (*isr)(const struct isr_args *a);	/* NULL: an HFI command */
} commands[] = {
	{ "list", OPT_JSON, 0, NULL },
	{ "windows", OPT_JSON | OPT_HFI, 0, NULL },
	{ "topology", OPT_JSON, 0, NULL },
	{ "links", OPT_JSON | OPT_CLASS | OPT_DOWN | OPT_HUB | OPT_TOPOLOGY, 0,
	  cmd_links },
	{ "reach", OPT_JSON | OPT_HUB | OPT_TOPOLOGY | OPT_ALL_UP, UINT_MAX,
	  cmd_reach },
	{ "link", 0, 3, cmd_link },
	{ "reorder", OPT_DEPTH | OPT_HOLD_US, 1, cmd_reorder },
	{ "drop", 0, 1, cmd_drop },
	{ "dup", 0, 1, cmd_dup },
	{ "isr", OPT_JSON, 0, cmd_isr },
	{ "atomic", OPT_JSON, 0, cmd_atomic },
};
#define NR_COMMANDS	(sizeof(commands) / sizeof(commands[0]))
#define NR_OPTIONS	(sizeof(options) / sizeof(options[0]))

/* "--hfi applies to 'windows' only, not 'list'", or a list of commands. */
static int option_misplaced(unsigned int bit, const char *name,
			    const char *cmd)
{
	char list[256] = "";
	unsigned int n = 0, total = 0;

	for (size_t c = 0; c < NR_COMMANDS; c++)
		total += !!(commands[c].opts & bit);
	for (size_t c = 0; c < NR_COMMANDS; c++) {
		size_t len = strlen(list);

		if (!(commands[c].opts & bit))
			continue;
		snprintf(list + len, sizeof(list) - len, "%s'%s'",
			 !n ? "" : n + 1 == total ? " and " : ", ",
			 commands[c].name);
		n++;
	}
	if (n == 1)
		return usage_error("%s applies to %s only, not '%s'", name,
				   list, cmd);
	return usage_error("%s applies to %s, not '%s'", name, list, cmd);
}

/*
 * Option @name (with or without "=VALUE") at argv[*i]: its value in
 * *@val.  Returns 1 if argv[*i] is that option, 0 if not, -1 after a
 * message if its value is missing.
 */
static int option_value(int argc, char **argv, int *i, const char *name,
			const char **val)
{
	const char *a = argv[*i];
	size_t len = strlen(name);

	if (strncmp(a, name, len))
		return 0;
	if (a[len] == '=') {
		*val = a + len + 1;
		return 1;
	}
	if (a[len])
		return 0;
	if (*i + 1 >= argc) {
		usage_error("option '%s' needs a value", name);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

/* The command line; @args has room for every word of it. */
static int run(int argc, char **argv, char **args)
{
	struct isr_args ia = { .hub = -1, .args = args };
	const char *cmd = NULL, *val;
	bool opts_done = false;
	unsigned int given = 0;
	long hfi = -1;
	struct sys s;
	size_t c;
	int ret, r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		/* "-1" is a (bad) number, not an option */
		if (!opts_done && a[0] == '-' && a[1] &&
		    !isdigit((unsigned char)a[1])) {
			if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
				usage(stdout);
				return 0;
			} else if (!strcmp(a, "--json")) {
				ia.json = true;
				given |= OPT_JSON;
			} else if (!strcmp(a, "--down")) {
				ia.down = true;
				given |= OPT_DOWN;
			} else if (!strcmp(a, "--all-up")) {
				ia.all_up = true;
				given |= OPT_ALL_UP;
			} else if ((r = option_value(argc, argv, &i, "--hfi", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				if (!parse_uint(val, &hfi))
					return usage_error("bad HFI number '%s'", val);
				given |= OPT_HFI;
			} else if ((r = option_value(argc, argv, &i, "--class", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				ia.class = val;
				given |= OPT_CLASS;
			} else if ((r = option_value(argc, argv, &i, "--hub", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				if (!parse_uint(val, &ia.hub))
					return usage_error("bad hub number '%s': a hub from 0 up", val);
				given |= OPT_HUB;
			} else if ((r = option_value(argc, argv, &i, "--topology", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				ia.topology = val;
				given |= OPT_TOPOLOGY;
			} else if ((r = option_value(argc, argv, &i, "--depth", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				ia.depth = val;
				given |= OPT_DEPTH;
			} else if ((r = option_value(argc, argv, &i, "--hold-us", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				ia.hold_us = val;
				given |= OPT_HOLD_US;
			} else if (!strcmp(a, "--")) {
				opts_done = true;
			} else {
				return usage_error("unknown option '%s'", a);
			}
		} else if (!cmd) {
			cmd = a;
		} else {
			args[ia.nargs++] = argv[i];
		}
	}
	if (!cmd) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (c = 0; c < NR_COMMANDS; c++)
		if (!strcmp(cmd, commands[c].name))
			break;
	if (c == NR_COMMANDS)
		return usage_error("unknown command '%s'", cmd);
	for (size_t o = 0; o < NR_OPTIONS; o++)
		if ((given & options[o].bit) && !(commands[c].opts & options[o].bit))
			return option_misplaced(options[o].bit, options[o].name,
						cmd);
	if (ia.nargs > commands[c].max_args)
		return usage_error("unexpected argument '%s'",
				   args[commands[c].max_args]);

	if (commands[c].isr) {
		ret = commands[c].isr(&ia);
	} else {
		ret = sys_open(&s);
		if (ret)
			return ret;
		if (!strcmp(cmd, "list"))
			ret = cmd_list(&s, ia.json);
		else if (!strcmp(cmd, "windows"))
			ret = cmd_windows(&s, ia.json, hfi);
		else
			ret = cmd_topology(&s, ia.json);
		sys_close(&s);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
		return 1;
	}
	return ret;
}

int main(int argc, char **argv)
{
	char **args = calloc(argc, sizeof(*args));
	int ret;

	if (!args) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	ret = run(argc, argv, args);
	free(args);
	return ret;
}
