// SPDX-License-Identifier: GPL-2.0
/*
 * percs-ctl: inspect the emulated PERCS system and drive its network.
 *
 *   percs-ctl list                       hubs, supernodes, HFIs, windows in use
 *   percs-ctl windows [--hfi N]          every reserved window
 *   percs-ctl topology                   the system's shape
 *   percs-ctl links [--class C] [--down] [--hub N]
 *                                        the ISR's links and their counters
 *   percs-ctl link ID up|down            link state
 *   percs-ctl link ID|all errors PPM     transient link errors
 *   percs-ctl reorder PPM [--depth N] [--hold-us N]
 *                                        out-of-order delivery
 *   percs-ctl isr                        ISR topology, knobs, flight counters
 *
 * The first three ask the HFI devices and sysfs; the ISR commands read and
 * write debugfs (PERCS_DEBUGFS_DIR/isr/, root only).  list, windows,
 * topology, links and isr take --json.  Exit status: 0 success, 1 the
 * system could not be inspected or refused a change, 2 bad usage.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "percs.h"

#define EXIT_USAGE	2

/* The ranges the kernel enforces on the ISR's debugfs knobs (EINVAL outside). */
#define ISR_ERROR_PPM_MAX	500000u
#define ISR_REORDER_PPM_MAX	1000000u
#define ISR_DEPTH_MIN		1u
#define ISR_DEPTH_MAX		64u
#define ISR_HOLD_US_MIN		1u
#define ISR_HOLD_US_MAX		1000000u

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
		"  links [--class C] [--down] [--hub N]\n"
		"                       the network's links: state, error rate, counters\n"
		"  link ID up|down      bring link ID up or take it down\n"
		"  link ID|all errors PPM\n"
		"                       inject transient errors on link ID (or on every\n"
		"                       link): PPM per million flits, 0..%u, 0 stops\n"
		"  reorder PPM [--depth N] [--hold-us N]\n"
		"                       hold back PPM packets per million (0..%u)\n"
		"  isr                  the network's topology, reorder knobs and the\n"
		"                       packets it holds back\n"
		"\n"
		"options:\n"
		"  --json               machine-readable output (list, windows, topology,\n"
		"                       links, isr)\n"
		"  --hfi N              with windows: only /dev/percs-hfiN\n"
		"  --class LL|LR|D      with links: only links of this class\n"
		"  --down               with links: only links that are down\n"
		"  --hub N              with links: only links of hub N\n"
		"  --depth N            with reorder: a held packet is overtaken by up\n"
		"                       to N later ones (1..%u)\n"
		"  --hold-us N          with reorder: and held at most N us (1..%u)\n"
		"  -h, --help           this text\n"
		"\n"
		"environment: PERCS_DEV_DIR (default /dev), PERCS_SYSFS_DIR\n"
		"(default /sys/class/percs), PERCS_DEBUGFS_DIR (default\n"
		"/sys/kernel/debug/percs)\n", prog, ISR_ERROR_PPM_MAX,
		ISR_REORDER_PPM_MAX, ISR_DEPTH_MAX, ISR_HOLD_US_MAX);
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

/* ---- the ISR's debugfs files ------------------------------------------------- */

static const char *debugfs_dir(void)
{
	return env_or("PERCS_DEBUGFS_DIR", "/sys/kernel/debug/percs");
}

/* isr/@name in @buf; false after a message if the path does not fit. */
static bool isr_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/isr/%s", debugfs_dir(), name);

	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "%s: %s/isr/%s: %s\n", prog, debugfs_dir(), name,
			strerror(ENAMETOOLONG));
		return false;
	}
	return true;
}

/* Say why the ISR file @path could not be opened (errno @err). */
static void isr_open_error(const char *path, int err)
{
	const char *root = debugfs_dir();
	struct stat st;

	if (err == ENOENT && stat(root, &st) && errno == ENOENT)
		fprintf(stderr, "%s: percs module not loaded or debugfs not mounted: %s missing\n",
			prog, root);
	else if (err == EACCES || err == EPERM)
		fprintf(stderr, "%s: %s: %s (the ISR's debugfs files are root only)\n",
			prog, path, strerror(err));
	else
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(err));
}

/* What a file that cannot be opened means. */
enum isr_need {
	ISR_REQUIRED,		/* an error */
	ISR_IF_PRESENT,		/* nothing if it does not exist, else an error */
	ISR_QUIET,		/* nothing, whatever the reason */
};

/*
 * Open isr/@name for reading, its path in @path.  Returns 0 with *@f open,
 * or NULL if @need lets the file be left out; 1 after a message.
 */
static int isr_fopen(const char *name, enum isr_need need, FILE **f,
		     char *path, size_t len)
{
	*f = NULL;
	if (!isr_path(path, len, name))
		return 1;
	*f = fopen(path, "re");
	if (*f || need == ISR_QUIET || (need == ISR_IF_PRESENT && errno == ENOENT))
		return 0;
	isr_open_error(path, errno);
	return 1;
}

static void __attribute__((format(printf, 3, 4)))
file_error(const char *path, size_t line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s", prog, path);
	if (line)
		fprintf(stderr, ":%zu", line);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Read one line of @f into *@line without its newline.  Returns 1, 0 at
 * the end of the file, -1 after a message (read error, NUL byte).
 */
static int read_line(FILE *f, const char *path, size_t lineno, char **line,
		     size_t *cap)
{
	ssize_t len;

	errno = 0;
	len = getline(line, cap, f);
	if (len < 0) {
		if (ferror(f)) {
			file_error(path, 0, "%s", strerror(errno ? errno : EIO));
			return -1;
		}
		return 0;
	}
	if (len && (*line)[len - 1] == '\n')
		(*line)[--len] = 0;
	if (memchr(*line, 0, (size_t)len)) {
		file_error(path, lineno, "a NUL byte in the line");
		return -1;
	}
	return 1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Split @line in place at blanks; store at most @max fields in @tok.
 * Returns the number of fields in the line (more than @max if it has more).
 */
static size_t split(char *line, char **tok, size_t max)
{
	size_t n = 0;
	char *p = line;

	for (;;) {
		while (is_blank(*p))
			p++;
		if (!*p)
			return n;
		if (n < max)
			tok[n] = p;
		n++;
		while (*p && !is_blank(*p))
			p++;
		if (*p && n <= max)
			*p++ = 0;
	}
}

/*
 * A decimal u64 with nothing around it: 0, or -1 if @s is not a decimal
 * number, -2 if it does not fit.
 */
static int parse_dec_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -1;
	if (errno == ERANGE || v > UINT64_MAX)
		return -2;
	*out = v;
	return 0;
}

/* A value of a debugfs file printed as a JSON number, not a string. */
static bool json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s) || (*s == '0' && s[1]))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	return !*s;
}

static void jraw(struct jobj *o, const char *key, const char *val)
{
	jkey(o, key);
	if (json_number(val))
		fputs(val, stdout);
	else
		json_str(val);
}

/* ---- "name value" files: isr/flight, isr/topology ---- */

#define KV_MAX	32

struct kv_file {
	char path[PATH_MAX];
	bool present;
	unsigned int n;
	char *key[KV_MAX], *val[KV_MAX];
};

static void kv_free(struct kv_file *kv)
{
	for (unsigned int i = 0; i < kv->n; i++) {
		free(kv->key[i]);
		free(kv->val[i]);
	}
	kv->n = 0;
}

static const char *kv_get(const struct kv_file *kv, const char *key)
{
	for (unsigned int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return NULL;
}

static bool kv_u64(const struct kv_file *kv, const char *key, uint64_t *v)
{
	const char *s = kv_get(kv, key);

	return s && !parse_dec_u64(s, v);
}

static bool kv_name_ok(const char *s)
{
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) &&
		    *s != '_')
			return false;
	return true;
}

/*
 * Read isr/@name, one "name value" pair a line, names unique, every value
 * a decimal number but that of @text_key (NULL: none).  @need as for
 * isr_fopen(); a file left out has present false.  Returns 0, or 1 after a
 * message.
 */
static int kv_read(const char *name, enum isr_need need, const char *text_key,
		   struct kv_file *kv)
{
	size_t cap = 0, lineno = 0;
	char *line = NULL;
	int ret = 0, r;
	FILE *f;

	memset(kv, 0, sizeof(*kv));
	if (isr_fopen(name, need, &f, kv->path, sizeof(kv->path)))
		return 1;
	if (!f)
		return 0;
	kv->present = true;
	while ((r = read_line(f, kv->path, ++lineno, &line, &cap)) > 0) {
		char *tok[2];
		uint64_t v;
		size_t n = split(line, tok, 2);

		if (!n)
			continue;
		if (n != 2) {
			file_error(kv->path, lineno,
				   "%zu fields, expected 'NAME VALUE'", n);
			ret = 1;
			break;
		}
		if (!kv_name_ok(tok[0])) {
			file_error(kv->path, lineno, "bad name '%s'", tok[0]);
			ret = 1;
			break;
		}
		if (kv_get(kv, tok[0])) {
			file_error(kv->path, lineno, "'%s' twice", tok[0]);
			ret = 1;
			break;
		}
		if ((!text_key || strcmp(tok[0], text_key)) &&
		    !(json_number(tok[1]) && (tok[1][0] == '-' ||
					      !parse_dec_u64(tok[1], &v)))) {
			file_error(kv->path, lineno, "%s '%s' is not a number",
				   tok[0], tok[1]);
			ret = 1;
			break;
		}
		if (kv->n == KV_MAX) {
			file_error(kv->path, lineno, "more than %d lines",
				   KV_MAX);
			ret = 1;
			break;
		}
		kv->key[kv->n] = strdup(tok[0]);
		kv->val[kv->n] = strdup(tok[1]);
		if (!kv->key[kv->n] || !kv->val[kv->n]) {
			free(kv->key[kv->n]);
			free(kv->val[kv->n]);
			fprintf(stderr, "%s: out of memory\n", prog);
			ret = 1;
			break;
		}
		kv->n++;
	}
	if (r < 0)
		ret = 1;
	free(line);
	fclose(f);
	if (ret)
		kv_free(kv);
	return ret;
}

/* Read the u32 knob isr/@name.  Returns 0, or 1 after a message. */
static int knob_read(const char *name, uint32_t *val)
{
	char path[PATH_MAX];
	size_t cap = 0;
	char *line = NULL, *tok[2];
	uint64_t v = 0;
	int ret = 1, r;
	FILE *f;

	if (isr_fopen(name, ISR_REQUIRED, &f, path, sizeof(path)))
		return 1;
	r = read_line(f, path, 1, &line, &cap);
	if (r == 0)
		file_error(path, 0, "empty, expected a number");
	else if (r > 0 && (split(line, tok, 2) != 1 ||
			   parse_dec_u64(tok[0], &v) || v > UINT32_MAX))
		file_error(path, 1, "expected one number from 0 to %u",
			   UINT32_MAX);
	else if (r > 0 && read_line(f, path, 2, &line, &cap) != 0)
		file_error(path, 2, "expected one line");
	else if (r > 0)
		ret = 0;
	if (!ret)
		*val = (uint32_t)v;
	free(line);
	fclose(f);
	return ret;
}

/*
 * Write @text to isr/@name in one write().  Returns 0; the errno with
 * which the kernel refused it, for the caller to put in context; or -1
 * after a message if the file could not be opened.
 */
static int isr_write(const char *name, const char *text)
{
	size_t len = strlen(text);
	char path[PATH_MAX];
	int fd, err = 0;
	ssize_t n;

	if (!isr_path(path, sizeof(path), name))
		return -1;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		isr_open_error(path, errno);
		return -1;
	}
	n = write(fd, text, len);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = EIO;
	if (close(fd) && !err)
		err = errno;
	return err;
}

/* ---- isr/links ---- */

enum link_col {
	LC_ID, LC_CLASS, LC_HUB_A, LC_HUB_B, LC_PORT_A, LC_PORT_B, LC_STATE,
	LC_ERROR_PPM, LC_PACKETS, LC_FLITS, LC_FLITS_VC0, LC_FLITS_VC1,
	LC_FLITS_VC2, LC_REPLAYS, LC_DROPS, LC_NR
};

/* The header names of the columns percs-ctl knows, also its JSON keys. */
static const char *const link_col_name[LC_NR] = {
	"id", "class", "hub_a", "hub_b", "port_a", "port_b", "state",
	"error_ppm", "packets", "flits", "flits_vc0", "flits_vc1", "flits_vc2",
	"replays", "drops",
};

static const char *const link_class_name[] = { "LL", "LR", "D" };
static const char *const link_state_name[] = { "down", "up" };
#define NR_LINK_CLASSES	3
#define LINK_UP		1

struct link_row {
	char *line;		/* owns the fields */
	char **tok;		/* every field, in the file's order */
	uint64_t v[LC_NR];	/* class and state as indices into the names */
};

struct link_table {
	char path[PATH_MAX];
	char *header;		/* owns the column names */
	char **names;
	size_t ncols;
	size_t col[LC_NR];	/* where each known column is in the file */
	struct link_row *rows;
	size_t nr;
};

static void links_free(struct link_table *t)
{
	for (size_t i = 0; i < t->nr; i++) {
		free(t->rows[i].line);
		free(t->rows[i].tok);
	}
	free(t->rows);
	free(t->names);
	free(t->header);
}

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* The header line: every known column once, no name twice. */
static int links_header(struct link_table *t, char *line)
{
	t->ncols = split(line, NULL, 0);
	if (!t->ncols) {
		file_error(t->path, 1, "empty, expected the header line");
		return 1;
	}
	t->names = calloc(t->ncols, sizeof(*t->names));
	if (!t->names) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	split(line, t->names, t->ncols);
	for (size_t i = 0; i < t->ncols; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->names[i], t->names[j])) {
				file_error(t->path, 1,
					   "the header names column '%s' twice",
					   t->names[i]);
				return 1;
			}
	for (int c = 0; c < LC_NR; c++) {
		size_t i = 0;

		while (i < t->ncols && strcmp(t->names[i], link_col_name[c]))
			i++;
		if (i == t->ncols) {
			file_error(t->path, 1, "the header lacks column '%s'",
				   link_col_name[c]);
			return 1;
		}
		t->col[c] = i;
	}
	return 0;
}

/* One link's line, split into @r (which then owns @line). */
static int links_row(struct link_table *t, char *line, size_t lineno,
		     struct link_row *r)
{
	size_t n = split(line, NULL, 0);

	if (n != t->ncols) {
		file_error(t->path, lineno, "%zu fields, the header names %zu",
			   n, t->ncols);
		return 1;
	}
	r->tok = calloc(n, sizeof(*r->tok));
	if (!r->tok) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	r->line = line;
	split(line, r->tok, n);
	for (int c = 0; c < LC_NR; c++) {
		const char *s = r->tok[t->col[c]];
		int i, err;

		if (c == LC_CLASS) {
			i = lookup(link_class_name, NR_LINK_CLASSES, s);
			if (i < 0) {
				file_error(t->path, lineno,
					   "class '%s' is not LL, LR or D", s);
				return 1;
			}
			r->v[c] = (uint64_t)i;
		} else if (c == LC_STATE) {
			i = lookup(link_state_name, 2, s);
			if (i < 0) {
				file_error(t->path, lineno,
					   "state '%s' is not up or down", s);
				return 1;
			}
			r->v[c] = (uint64_t)i;
		} else if ((err = parse_dec_u64(s, &r->v[c]))) {
			file_error(t->path, lineno, "%s '%s' is %s",
				   link_col_name[c], s, err == -2 ?
				   "out of range (64 bits)" :
				   "not a decimal number");
			return 1;
		}
	}
	return 0;
}

/* Read and check all of isr/links.  Returns 0, or 1 after a message. */
static int links_read(struct link_table *t)
{
	size_t cap = 0, lineno = 1, alloc = 0;
	char *line = NULL;
	int ret = 1, r;
	FILE *f;

	memset(t, 0, sizeof(*t));
	if (isr_fopen("links", ISR_REQUIRED, &f, t->path, sizeof(t->path)))
		return 1;
	r = read_line(f, t->path, lineno, &line, &cap);
	if (r == 0)
		file_error(t->path, 0, "empty, expected the header line");
	if (r <= 0)
		goto out;
	t->header = line;
	line = NULL;
	cap = 0;
	if (links_header(t, t->header))
		goto out;
	while ((r = read_line(f, t->path, ++lineno, &line, &cap)) > 0) {
		if (!split(line, NULL, 0))
			continue;
		if (t->nr == alloc) {
			size_t more = alloc ? 2 * alloc : 64;
			struct link_row *rows;

			rows = realloc(t->rows, more * sizeof(*rows));
			if (!rows) {
				fprintf(stderr, "%s: out of memory\n", prog);
				goto out;
			}
			t->rows = rows;
			alloc = more;
		}
		memset(&t->rows[t->nr], 0, sizeof(t->rows[t->nr]));
		if (links_row(t, line, lineno, &t->rows[t->nr])) {
			if (t->rows[t->nr].line)
				line = NULL;	/* freed with the row */
			t->nr++;
			goto out;
		}
		t->nr++;
		line = NULL;
		cap = 0;
	}
	if (r == 0)
		ret = 0;
out:
	free(line);
	fclose(f);
	if (ret)
		links_free(t);
	return ret;
}

static bool link_col_known(const struct link_table *t, size_t i)
{
	for (int c = 0; c < LC_NR; c++)
		if (t->col[c] == i)
			return true;
	return false;
}

static void link_json(const struct link_table *t, const struct link_row *r)
{
	struct jobj o = { true };

	putchar('{');
	for (int c = 0; c < LC_NR; c++) {
		if (c == LC_CLASS)
			jstr(&o, link_col_name[c], link_class_name[r->v[c]]);
		else if (c == LC_STATE)
			jstr(&o, link_col_name[c], link_state_name[r->v[c]]);
		else
			ju64(&o, link_col_name[c], r->v[c]);
	}
	/* Columns added after this percs-ctl, as the kernel names them. */
	for (size_t i = 0; i < t->ncols; i++)
		if (!link_col_known(t, i))
			jraw(&o, t->names[i], r->tok[i]);
	putchar('}');
}

static void link_text(const struct link_row *r)
{
	const uint64_t *v = r->v;

	printf("%5" PRIu64 " %-5s %5" PRIu64 " %5" PRIu64 " %6" PRIu64
	       " %6" PRIu64 " %-5s %9" PRIu64 " %10" PRIu64 " %10" PRIu64
	       " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64
	       " %8" PRIu64 "\n", v[LC_ID], link_class_name[v[LC_CLASS]],
	       v[LC_HUB_A], v[LC_HUB_B], v[LC_PORT_A], v[LC_PORT_B],
	       link_state_name[v[LC_STATE]], v[LC_ERROR_PPM], v[LC_PACKETS],
	       v[LC_FLITS], v[LC_FLITS_VC0], v[LC_FLITS_VC1], v[LC_FLITS_VC2],
	       v[LC_REPLAYS], v[LC_DROPS]);
}

/* ---- commands ------------------------------------------------------------------ */

static int cmd_topology(struct sys *s, bool json)
{
	const struct percs_hfi_info *i = &s->info;
	uint64_t nr_links = 0, d_per_pair = 0;
	bool has_links, has_d;
	const char *spec;
	struct kv_file kv;
	int ret;

	/* The ISR's view, if debugfs shows it to us (root only). */
	ret = kv_read("topology", ISR_QUIET, "spec", &kv);
	spec = kv_get(&kv, "spec");
	has_links = kv_u64(&kv, "links", &nr_links);
	has_d = kv_u64(&kv, "d_links_per_pair", &d_per_pair);
	if (json) {
		struct jobj o = { true };

		putchar('{');
		if (spec)
			jstr(&o, "spec", spec);
		ju64(&o, "nr_supernodes", i->nr_supernodes);
		ju64(&o, "hubs_per_supernode", i->hubs_per_supernode);
		ju64(&o, "nr_hubs", i->nr_hubs);
		ju64(&o, "hfis_per_hub", i->hfis_per_hub);
		ju64(&o, "nr_hfis", s->nr_hfis);
		ju64(&o, "windows_per_hfi", i->windows_total);
		ju64(&o, "max_packet", i->max_packet);
		ju64(&o, "flit_size", i->flit_size);
		if (has_links)
			ju64(&o, "nr_links", nr_links);
		if (has_d)
			ju64(&o, "d_links_per_pair", d_per_pair);
		puts("}");
	} else {
		if (spec)
			printf("spec:                %s\n", spec);
		printf("supernodes:          %u\n", i->nr_supernodes);
		printf("hubs per supernode:  %u\n", i->hubs_per_supernode);
		printf("hubs:                %u\n", i->nr_hubs);
		printf("HFIs per hub:        %u\n", i->hfis_per_hub);
		printf("HFIs:                %u\n", s->nr_hfis);
		printf("windows per HFI:     %u\n", i->windows_total);
		printf("max packet:          %u bytes (%u-byte flits)\n",
		       i->max_packet, i->flit_size);
		if (has_links)
			printf("links:               %" PRIu64 "\n", nr_links);
		if (has_d)
			printf("D links per pair:    %" PRIu64 "\n", d_per_pair);
	}
	kv_free(&kv);
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

/* ---- the ISR's commands --------------------------------------------------------- */

/* A decimal number in @min..@max, nothing around it. */
static bool parse_range(const char *s, uint32_t min, uint32_t max,
			uint32_t *out)
{
	uint64_t v;

	if (parse_dec_u64(s, &v) || v < min || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

struct links_filter {
	int class;		/* index into link_class_name, or -1 */
	bool down;		/* only links that are down */
	long hub;		/* only links of this hub, or -1 */
};

static int cmd_links(bool json, const struct links_filter *flt)
{
	struct link_table t;
	unsigned int shown = 0;

	if (flt->hub >= 0) {
		struct kv_file kv;
		uint64_t hubs;

		if (kv_read("topology", ISR_QUIET, "spec", &kv))
			return 1;
		if (kv_u64(&kv, "hubs", &hubs) && (uint64_t)flt->hub >= hubs) {
			fprintf(stderr, "%s: --hub %ld: the system has hubs 0..%" PRIu64 "\n",
				prog, flt->hub, hubs ? hubs - 1 : 0);
			kv_free(&kv);
			return EXIT_USAGE;
		}
		kv_free(&kv);
	}
	if (links_read(&t))
		return 1;
	if (json)
		putchar('[');
	else
		printf("%5s %-5s %5s %5s %6s %6s %-5s %9s %10s %10s %10s %10s %10s %8s %8s\n",
		       "ID", "CLASS", "HUB-A", "HUB-B", "PORT-A", "PORT-B",
		       "STATE", "ERROR-PPM", "PACKETS", "FLITS", "FLITS-VC0",
		       "FLITS-VC1", "FLITS-VC2", "REPLAYS", "DROPS");
	for (size_t i = 0; i < t.nr; i++) {
		const struct link_row *r = &t.rows[i];

		if (flt->class >= 0 && r->v[LC_CLASS] != (uint64_t)flt->class)
			continue;
		if (flt->down && r->v[LC_STATE] == LINK_UP)
			continue;
		if (flt->hub >= 0 && r->v[LC_HUB_A] != (uint64_t)flt->hub &&
		    r->v[LC_HUB_B] != (uint64_t)flt->hub)
			continue;
		if (json) {
			if (shown)
				putchar(',');
			link_json(&t, r);
		} else {
			link_text(r);
		}
		shown++;
	}
	if (json)
		puts("]");
	links_free(&t);
	return 0;
}

/*
 * link ID up|down, link ID|all errors PPM: @args are the words after
 * "link".  Returns the exit status.
 */
static int cmd_link(char **args, unsigned int nargs)
{
	const char *id = nargs > 0 ? args[0] : NULL;
	const char *verb = nargs > 1 ? args[1] : NULL;
	bool all = id && !strcmp(id, "all");
	char text[64];
	uint32_t n = 0, ppm;
	const char *file;
	int err;

	if (!verb)
		return usage_error("link needs a link ID and an action: 'link ID up|down' or 'link ID|all errors PPM'");
	if (!all && !parse_range(id, 0, UINT32_MAX, &n))
		return usage_error("bad link ID '%s': a link number as 'percs-ctl links' shows (or 'all' with errors)",
				   id);
	if (!strcmp(verb, "up") || !strcmp(verb, "down")) {
		if (all)
			return usage_error("'all' goes with 'errors' only: link all errors PPM; '%s' takes one link ID",
					   verb);
		if (nargs > 2)
			return usage_error("unexpected argument '%s'", args[2]);
		file = verb[0] == 'u' ? "link_up" : "link_down";
		snprintf(text, sizeof(text), "%" PRIu32 "\n", n);
	} else if (!strcmp(verb, "errors")) {
		if (nargs < 3)
			return usage_error("link %s errors needs a rate: errors per million flits, 0..%u",
					   id, ISR_ERROR_PPM_MAX);
		if (!parse_range(args[2], 0, ISR_ERROR_PPM_MAX, &ppm))
			return usage_error("bad error rate '%s': errors per million flits, 0..%u",
					   args[2], ISR_ERROR_PPM_MAX);
		if (nargs > 3)
			return usage_error("unexpected argument '%s'", args[3]);
		file = "link_error";
		if (all)
			snprintf(text, sizeof(text), "all %" PRIu32 "\n", ppm);
		else
			snprintf(text, sizeof(text), "%" PRIu32 " %" PRIu32 "\n",
				 n, ppm);
	} else {
		return usage_error("link %s: unknown action '%s': up, down or errors PPM",
				   id, verb);
	}

	err = isr_write(file, text);
	if (err < 0)
		return 1;
	if (err == ENOENT && !all) {
		fprintf(stderr, "%s: link %s: no such link\n", prog, id);
		return 1;
	}
	if (err) {
		fprintf(stderr, "%s: link %s %s%s%s: %s\n", prog, id, verb,
			nargs > 2 ? " " : "", nargs > 2 ? args[2] : "",
			strerror(err));
		return 1;
	}
	return 0;
}

/* Write the knob isr/@name; returns 0 or 1 after a message. */
static int knob_write(const char *name, uint32_t val)
{
	char text[16];
	int err;

	snprintf(text, sizeof(text), "%" PRIu32 "\n", val);
	err = isr_write(name, text);
	if (err > 0)
		fprintf(stderr, "%s: %s %" PRIu32 ": %s\n", prog, name, val,
			strerror(err));
	return err ? 1 : 0;
}

/*
 * reorder PPM [--depth N] [--hold-us N]: depth and hold time first, so
 * that the new rate applies with them (and is left alone if they fail).
 */
static int cmd_reorder(char **args, unsigned int nargs, long depth,
		       long hold_us)
{
	uint32_t ppm;

	if (!nargs)
		return usage_error("reorder needs a rate: packets per million held back, 0..%u",
				   ISR_REORDER_PPM_MAX);
	if (!parse_range(args[0], 0, ISR_REORDER_PPM_MAX, &ppm))
		return usage_error("bad reorder rate '%s': packets per million held back, 0..%u",
				   args[0], ISR_REORDER_PPM_MAX);
	if (nargs > 1)
		return usage_error("unexpected argument '%s'", args[1]);
	if (depth >= 0 && knob_write("reorder_depth", (uint32_t)depth))
		return 1;
	if (hold_us >= 0 && knob_write("hold_us", (uint32_t)hold_us))
		return 1;
	return knob_write("reorder_ppm", ppm);
}

static const char *const isr_knobs[] = {
	"reorder_ppm", "reorder_depth", "hold_us",
};
#define NR_ISR_KNOBS	3

static void kv_print(const struct kv_file *kv, bool json)
{
	struct jobj o = { true };

	if (json)
		putchar('{');
	for (unsigned int i = 0; i < kv->n; i++) {
		if (json)
			jraw(&o, kv->key[i], kv->val[i]);
		else
			printf("  %-20s %s\n", kv->key[i], kv->val[i]);
	}
	if (json)
		putchar('}');
}

/* isr: topology (if the module has it), knobs, flight counters. */
static int cmd_isr(bool json)
{
	uint32_t knob[NR_ISR_KNOBS];
	struct kv_file topo, flight;
	struct jobj o = { true };

	if (kv_read("topology", ISR_IF_PRESENT, "spec", &topo))
		return 1;
	for (int i = 0; i < NR_ISR_KNOBS; i++)
		if (knob_read(isr_knobs[i], &knob[i])) {
			kv_free(&topo);
			return 1;
		}
	if (kv_read("flight", ISR_REQUIRED, NULL, &flight)) {
		kv_free(&topo);
		return 1;
	}
	if (json) {
		putchar('{');
		if (topo.present) {
			jkey(&o, "topology");
			kv_print(&topo, true);
		}
		jkey(&o, "knobs");
		putchar('{');
		for (int i = 0, first = 1; i < NR_ISR_KNOBS; i++, first = 0)
			printf("%s\"%s\":%" PRIu32, first ? "" : ",",
			       isr_knobs[i], knob[i]);
		putchar('}');
		jkey(&o, "flight");
		kv_print(&flight, true);
		puts("}");
	} else {
		if (topo.present) {
			puts("topology:");
			kv_print(&topo, false);
		}
		puts("knobs:");
		for (int i = 0; i < NR_ISR_KNOBS; i++)
			printf("  %-20s %" PRIu32 "\n", isr_knobs[i], knob[i]);
		puts("flight:");
		kv_print(&flight, false);
	}
	kv_free(&topo);
	kv_free(&flight);
	return 0;
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
};

static const struct {
	unsigned int bit;
	const char *name;
} options[] = {
	{ OPT_JSON, "--json" }, { OPT_HFI, "--hfi" }, { OPT_CLASS, "--class" },
	{ OPT_DOWN, "--down" }, { OPT_HUB, "--hub" }, { OPT_DEPTH, "--depth" },
	{ OPT_HOLD_US, "--hold-us" },
};

static const struct {
	const char *name;
	unsigned int opts;	/* the options it takes */
	unsigned int max_args;	/* words after the command */
	bool device;		/* needs the HFI devices */
} commands[] = {
	{ "list", OPT_JSON, 0, true },
	{ "windows", OPT_JSON | OPT_HFI, 0, true },
	{ "topology", OPT_JSON, 0, true },
	{ "links", OPT_JSON | OPT_CLASS | OPT_DOWN | OPT_HUB, 0, false },
	{ "link", 0, 3, false },
	{ "reorder", OPT_DEPTH | OPT_HOLD_US, 1, false },
	{ "isr", OPT_JSON, 0, false },
};
#define NR_COMMANDS	(sizeof(commands) / sizeof(commands[0]))
#define NR_OPTIONS	(sizeof(options) / sizeof(options[0]))

/* "--hfi applies to 'windows' only, not 'list'", or a list of commands. */
static int option_misplaced(unsigned int bit, const char *name,
			    const char *cmd)
{
	char list[128] = "";
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

static int class_index(const char *s)
{
	for (int i = 0; i < NR_LINK_CLASSES; i++)
		if (!strcasecmp(s, link_class_name[i]))
			return i;
	return -1;
}

int main(int argc, char **argv)
{
	struct links_filter flt = { .class = -1, .down = false, .hub = -1 };
	const char *cmd = NULL, *val;
	bool json = false, opts_done = false;
	long hfi = -1, depth = -1, hold_us = -1;
	unsigned int given = 0, nargs = 0;
	char *args[4];
	size_t c;
	struct sys s;
	int ret, r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint32_t v;

		/* "-1" is a (bad) number, not an option */
		if (!opts_done && a[0] == '-' && a[1] &&
		    !isdigit((unsigned char)a[1])) {
			if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
				usage(stdout);
				return 0;
			} else if (!strcmp(a, "--json")) {
				json = true;
				given |= OPT_JSON;
			} else if (!strcmp(a, "--down")) {
				flt.down = true;
				given |= OPT_DOWN;
			} else if ((r = option_value(argc, argv, &i, "--hfi", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				if (!parse_uint(val, &hfi))
					return usage_error("bad HFI number '%s'", val);
				given |= OPT_HFI;
			} else if ((r = option_value(argc, argv, &i, "--class", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				flt.class = class_index(val);
				if (flt.class < 0)
					return usage_error("bad link class '%s': LL, LR or D", val);
				given |= OPT_CLASS;
			} else if ((r = option_value(argc, argv, &i, "--hub", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				if (!parse_uint(val, &flt.hub))
					return usage_error("bad hub number '%s': a hub from 0 up", val);
				given |= OPT_HUB;
			} else if ((r = option_value(argc, argv, &i, "--depth", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				if (!parse_range(val, ISR_DEPTH_MIN, ISR_DEPTH_MAX, &v))
					return usage_error("bad --depth '%s': a held packet is overtaken by %u..%u later packets",
							   val, ISR_DEPTH_MIN, ISR_DEPTH_MAX);
				depth = v;
				given |= OPT_DEPTH;
			} else if ((r = option_value(argc, argv, &i, "--hold-us", &val))) {
				if (r < 0)
					return EXIT_USAGE;
				if (!parse_range(val, ISR_HOLD_US_MIN, ISR_HOLD_US_MAX, &v))
					return usage_error("bad --hold-us '%s': microseconds a packet is held at most, %u..%u",
							   val, ISR_HOLD_US_MIN, ISR_HOLD_US_MAX);
				hold_us = v;
				given |= OPT_HOLD_US;
			} else if (!strcmp(a, "--")) {
				opts_done = true;
			} else {
				return usage_error("unknown option '%s'", a);
			}
		} else if (!cmd) {
			cmd = a;
		} else if (nargs < sizeof(args) / sizeof(args[0])) {
			args[nargs++] = argv[i];
		} else {
			return usage_error("unexpected argument '%s'", a);
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
	if (nargs > commands[c].max_args)
		return usage_error("unexpected argument '%s'",
				   args[commands[c].max_args]);

	if (!commands[c].device) {
		if (!strcmp(cmd, "links"))
			ret = cmd_links(json, &flt);
		else if (!strcmp(cmd, "link"))
			ret = cmd_link(args, nargs);
		else if (!strcmp(cmd, "reorder"))
			ret = cmd_reorder(args, nargs, depth, hold_us);
		else
			ret = cmd_isr(json);
	} else {
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
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
		return 1;
	}
	return ret;
}
