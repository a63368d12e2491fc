// SPDX-License-Identifier: GPL-2.0
/*
 * percs-ctl: inspect the emulated PERCS system.
 *
 *   percs-ctl list                 hubs, supernodes, HFIs, windows in use
 *   percs-ctl windows [--hfi N]    every reserved window
 *   percs-ctl topology             the system's shape
 *
 * Every command takes --json.  Exit status: 0 success, 1 the system could
 * not be inspected, 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "percs.h"

#define EXIT_USAGE	2

static const char *prog = "percs-ctl";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--json] COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  list                 hubs, supernodes, HFIs and their windows in use\n"
		"  windows [--hfi N]    every reserved window (of HFI N only)\n"
		"  topology             supernodes, hubs per supernode, hubs, HFIs\n"
		"\n"
		"options:\n"
		"  --json               machine-readable output\n"
		"  --hfi N              with windows: only /dev/percs-hfiN\n"
		"  -h, --help           this text\n"
		"\n"
		"environment: PERCS_DEV_DIR (default /dev), PERCS_SYSFS_DIR\n"
		"(default /sys/class/percs)\n", prog);
}

static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	return EXIT_USAGE;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/* ---- JSON output --------------------------------------------------------- */

static void json_str(const char *s)
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

/* "key":value pairs, with the separator taken care of. */
struct jobj {
	bool first;
};

static void jkey(struct jobj *o, const char *key)
{
	if (!o->first)
		putchar(',');
	o->first = false;
	json_str(key);
	putchar(':');
}

static void jstr(struct jobj *o, const char *key, const char *val)
{
	jkey(o, key);
	json_str(val);
}

static void ju64(struct jobj *o, const char *key, uint64_t val)
{
	jkey(o, key);
	printf("%" PRIu64, val);
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

	if (json) {
		struct jobj o = { true };

		putchar('{');
		ju64(&o, "nr_supernodes", i->nr_supernodes);
		ju64(&o, "hubs_per_supernode", i->hubs_per_supernode);
		ju64(&o, "nr_hubs", i->nr_hubs);
		ju64(&o, "hfis_per_hub", i->hfis_per_hub);
		ju64(&o, "nr_hfis", s->nr_hfis);
		ju64(&o, "windows_per_hfi", i->windows_total);
		ju64(&o, "max_packet", i->max_packet);
		ju64(&o, "flit_size", i->flit_size);
		puts("}");
		return 0;
	}
	printf("supernodes:          %u\n", i->nr_supernodes);
	printf("hubs per supernode:  %u\n", i->hubs_per_supernode);
	printf("hubs:                %u\n", i->nr_hubs);
	printf("HFIs per hub:        %u\n", i->hfis_per_hub);
	printf("HFIs:                %u\n", s->nr_hfis);
	printf("windows per HFI:     %u\n", i->windows_total);
	printf("max packet:          %u bytes (%u-byte flits)\n", i->max_packet,
	       i->flit_size);
	return 0;
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
		printf("%4s %6s %10s %7s %6s %4s %9s %9s %12s %12s %8s %8s\n",
		       "HFI", "WINDOW", "JOB-KEY", "PID", "UID", "MODE",
		       "SEND-FIFO", "RECV-FIFO", "SENT", "RECEIVED", "ERRORS",
		       "BLOCKED");
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

			if (ioctl(percs_hfi_fd(h), PERCS_IOC_WINDOW_QUERY, &q)) {
				if (errno == ENOENT)
					continue;
				fprintf(stderr, "%s: percs-hfi%u: window %u: PERCS_IOC_WINDOW_QUERY: %s\n",
					prog, n, win, strerror(errno));
				ret = 1;
				break;
			}
			mode = q.wflags & PERCS_WINDOW_F_POLL ? "poll" : "kick";
			if (json) {
				struct jobj o = { true };

				printf("%s{", shown++ ? "," : "");
				ju64(&o, "hfi", n);
				ju64(&o, "hub", d.hub);
				ju64(&o, "unit", d.unit);
				ju64(&o, "window", win);
				ju64(&o, "job_key", q.job_key);
				ju64(&o, "pid", q.pid);
				ju64(&o, "uid", q.uid);
				jstr(&o, "mode", mode);
				ju64(&o, "send_fifo_size", q.send_fifo_size);
				ju64(&o, "recv_fifo_size", q.recv_fifo_size);
				ju64(&o, "packets_sent", q.packets_sent);
				ju64(&o, "packets_received", q.packets_received);
				ju64(&o, "send_errors", q.send_errors);
				ju64(&o, "send_blocked", q.send_blocked);
				putchar('}');
			} else {
				printf("%4u %6u %10u %7u %6u %4s %9u %9u %12" PRIu64
				       " %12" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
				       n, win, q.job_key, q.pid, q.uid, mode,
				       q.send_fifo_size, q.recv_fifo_size,
				       (uint64_t)q.packets_sent,
				       (uint64_t)q.packets_received,
				       (uint64_t)q.send_errors,
				       (uint64_t)q.send_blocked);
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

int main(int argc, char **argv)
{
	const char *cmd = NULL;
	bool json = false, opts_done = false;
	long hfi = -1;
	struct sys s;
	int ret;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!opts_done && a[0] == '-' && a[1]) {
			if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
				usage(stdout);
				return 0;
			} else if (!strcmp(a, "--json")) {
				json = true;
			} else if (!strcmp(a, "--hfi")) {
				if (++i >= argc)
					return usage_error("option '%s' needs a value", a);
				if (!parse_uint(argv[i], &hfi))
					return usage_error("bad HFI number '%s'", argv[i]);
			} else if (!strncmp(a, "--hfi=", 6)) {
				if (!parse_uint(a + 6, &hfi))
					return usage_error("bad HFI number '%s'", a + 6);
			} else if (!strcmp(a, "--")) {
				opts_done = true;
			} else {
				return usage_error("unknown option '%s'", a);
			}
		} else if (!cmd) {
			cmd = a;
		} else {
			return usage_error("unexpected argument '%s'", a);
		}
	}
	if (!cmd) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(cmd, "list") && strcmp(cmd, "windows") &&
	    strcmp(cmd, "topology"))
		return usage_error("unknown command '%s'", cmd);
	if (hfi >= 0 && strcmp(cmd, "windows"))
		return usage_error("--hfi applies to 'windows' only, not '%s'", cmd);

	ret = sys_open(&s);
	if (ret)
		return ret;
	if (!strcmp(cmd, "list"))
		ret = cmd_list(&s, json);
	else if (!strcmp(cmd, "windows"))
		ret = cmd_windows(&s, json, hfi);
	else
		ret = cmd_topology(&s, json);
	sys_close(&s);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
		return 1;
	}
	return ret;
}
