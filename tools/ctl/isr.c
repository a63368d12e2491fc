// SPDX-License-Identifier: GPL-2.0
/*
 * percs-ctl's debugfs commands, over the network's files (root only) in
 * PERCS_DEBUGFS_DIR/isr/ (default /sys/kernel/debug/percs/isr/) and the
 * atomic counters next to that directory:
 *
 *   links     reads isr/links: a header naming the columns, then one link
 *             a line (id class hub_a hub_b port_a port_b state error_ppm
 *             packets flits flits_vc0 flits_vc1 flits_vc2 replays drops,
 *             in any order; columns added later go to the JSON as named)
 *   link      writes a link id to isr/link_up or isr/link_down, "ID PPM"
 *             or "all PPM" to isr/link_error
 *   reorder   writes the u32 knobs reorder_depth, hold_us, reorder_ppm
 *   drop, dup write the u32 knobs drop_ppm, dup_ppm (atomic packets)
 *   isr       reads isr/topology and isr/flight ("name value" lines) and
 *             the knobs
 *   atomic    reads the module's atomic counters, percs/atomic ("name
 *             value" lines, outside isr/)
 *
 * A file is read whole and checked before anything is printed, so a
 * malformed one gives a message naming file, line and field and no partial
 * output.  A write the kernel refuses gives its errno (ENOENT: no such
 * link).
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
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

/* ---- the ISR's debugfs files ------------------------------------------------- */

static const char *debugfs_dir(void)
{
	return env_or("PERCS_DEBUGFS_DIR", "/sys/kernel/debug/percs");
}

/*
 * The debugfs file @rel (relative to the module's directory: "isr/links",
 * "atomic") in @buf; false after a message if the path does not fit.
 */
static bool dbg_path(char *buf, size_t len, const char *rel)
{
	int n = snprintf(buf, len, "%s/%s", debugfs_dir(), rel);

	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "%s: %s/%s: %s\n", prog, debugfs_dir(), rel,
			strerror(ENAMETOOLONG));
		return false;
	}
	return true;
}

/* Say why the debugfs file @path could not be opened (errno @err). */
static void isr_open_error(const char *path, int err)
{
	const char *root = debugfs_dir();
	struct stat st;

	if (err == ENOENT && stat(root, &st) && errno == ENOENT)
		fprintf(stderr, "%s: percs module not loaded or debugfs not mounted: %s missing\n",
			prog, root);
	else if (err == EACCES || err == EPERM)
		fprintf(stderr, "%s: %s: %s (the %s debugfs files are root only)\n",
			prog, path, strerror(err),
			strstr(path, "/isr/") ? "ISR's" : "module's");
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
 * Open the debugfs file @rel for reading, its path in @path.  Returns 0
 * with *@f open (or NULL if @need lets the file be left out), or 1 after
 * a message.
 */
static int isr_fopen(const char *rel, enum isr_need need, FILE **f,
		     char *path, size_t len)
{
	*f = NULL;
	if (!dbg_path(path, len, rel))
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

/* ---- "name value" files: isr/flight, isr/topology, atomic ---- */

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
 * Read the debugfs file @rel, one "name value" pair a line, names unique,
 * every value a decimal number but that of @text_key (NULL: none).  @need
 * as for isr_fopen(); a file left out has present false.  Returns 0, or 1
 * after a message.
 */
static int kv_read(const char *rel, enum isr_need need, const char *text_key,
		   struct kv_file *kv)
{
	size_t cap = 0, lineno = 0;
	char *line = NULL;
	int ret = 0, r;
	FILE *f;

	memset(kv, 0, sizeof(*kv));
	if (isr_fopen(rel, need, &f, kv->path, sizeof(kv->path)))
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

/*
 * Read the u32 knob isr/@name into *@val; @need as for isr_fopen() (a
 * knob left out sets *@present false).  Returns 0, or 1 after a message.
 */
static int knob_read(const char *name, enum isr_need need, uint32_t *val,
		     bool *present)
{
	char path[PATH_MAX], rel[64];
	size_t cap = 0;
	char *line = NULL, *tok[2];
	uint64_t v = 0;
	int ret = 1, r;
	FILE *f;

	snprintf(rel, sizeof(rel), "isr/%s", name);
	*present = false;
	if (isr_fopen(rel, need, &f, path, sizeof(path)))
		return 1;
	if (!f)
		return 0;
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
	if (!ret) {
		*val = (uint32_t)v;
		*present = true;
	}
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
	char path[PATH_MAX], rel[64];
	int fd, err = 0;
	ssize_t n;

	snprintf(rel, sizeof(rel), "isr/%s", name);
	if (!dbg_path(path, sizeof(path), rel))
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
	size_t lineno;		/* where it is in the file */
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
	r->lineno = lineno;
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
	if (isr_fopen("isr/links", ISR_REQUIRED, &f, t->path, sizeof(t->path)))
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

/* ---- what the topology command shows ---- */

int isr_shape_read(struct isr_shape *sh, bool required)
{
	struct kv_file kv;
	const char *spec;
	int ret;

	memset(sh, 0, sizeof(*sh));
	ret = kv_read("isr/topology", required ? ISR_REQUIRED : ISR_QUIET,
		      "spec", &kv);
	if (ret)
		return ret;
	snprintf(sh->path, sizeof(sh->path), "%s", kv.path);
	spec = kv_get(&kv, "spec");
	if (spec) {
		sh->spec = strdup(spec);
		if (!sh->spec) {
			fprintf(stderr, "%s: out of memory\n", prog);
			ret = 1;
		}
	}
	sh->has_links = kv_u64(&kv, "links", &sh->links);
	sh->has_d_links_per_pair = kv_u64(&kv, "d_links_per_pair",
					  &sh->d_links_per_pair);
	kv_free(&kv);
	return ret;
}

void isr_shape_free(struct isr_shape *sh)
{
	free(sh->spec);
	sh->spec = NULL;
}

int isr_links_get(struct isr_link **links, size_t *n, char *path,
		  size_t len)
{
	struct link_table t;
	struct isr_link *l;

	*links = NULL;
	*n = 0;
	if (links_read(&t))
		return 1;
	snprintf(path, len, "%s", t.path);
	l = calloc(t.nr ? t.nr : 1, sizeof(*l));
	if (!l) {
		fprintf(stderr, "%s: out of memory\n", prog);
		links_free(&t);
		return 1;
	}
	for (size_t i = 0; i < t.nr; i++) {
		const uint64_t *v = t.rows[i].v;

		l[i] = (struct isr_link) {
			.id = v[LC_ID], .hub_a = v[LC_HUB_A],
			.hub_b = v[LC_HUB_B], .port_a = v[LC_PORT_A],
			.port_b = v[LC_PORT_B],
			.class = link_class_name[v[LC_CLASS]],
			.up = v[LC_STATE] == LINK_UP,
			.line = t.rows[i].lineno,
		};
	}
	*links = l;
	*n = t.nr;
	links_free(&t);
	return 0;
}

/* ---- the commands ---- */

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

static int class_index(const char *s)
{
	for (int i = 0; i < NR_LINK_CLASSES; i++)
		if (!strcasecmp(s, link_class_name[i]))
			return i;
	return -1;
}

/* links [--class C] [--down] [--hub N] */
int cmd_links(const struct isr_args *a)
{
	unsigned int shown = 0;
	struct link_table t;
	int class = -1;

	if (a->class) {
		class = class_index(a->class);
		if (class < 0)
			return usage_error("bad link class '%s': LL, LR or D",
					   a->class);
	}
	if (a->topology)
		return links_of_spec(a, class);
	if (a->hub >= 0) {
		struct kv_file kv;
		uint64_t hubs;

		if (kv_read("isr/topology", ISR_QUIET, "spec", &kv))
			return 1;
		if (kv_u64(&kv, "hubs", &hubs) && (uint64_t)a->hub >= hubs) {
			fprintf(stderr, "%s: --hub %ld: the system has hubs 0..%" PRIu64 "\n",
				prog, a->hub, hubs ? hubs - 1 : 0);
			kv_free(&kv);
			return EXIT_USAGE;
		}
		kv_free(&kv);
	}
	if (links_read(&t))
		return 1;
	if (a->json)
		fputs("{\"links\":[", stdout);
	else
		printf("%5s %-5s %5s %5s %6s %6s %-5s %9s %10s %10s %10s %10s %10s %8s %8s\n",
		       "ID", "CLASS", "HUB-A", "HUB-B", "PORT-A", "PORT-B",
		       "STATE", "ERROR-PPM", "PACKETS", "FLITS", "FLITS-VC0",
		       "FLITS-VC1", "FLITS-VC2", "REPLAYS", "DROPS");
	for (size_t i = 0; i < t.nr; i++) {
		const struct link_row *r = &t.rows[i];

		if (class >= 0 && r->v[LC_CLASS] != (uint64_t)class)
			continue;
		if (a->down && r->v[LC_STATE] == LINK_UP)
			continue;
		if (a->hub >= 0 && r->v[LC_HUB_A] != (uint64_t)a->hub &&
		    r->v[LC_HUB_B] != (uint64_t)a->hub)
			continue;
		if (a->json) {
			if (shown)
				putchar(',');
			link_json(&t, r);
		} else {
			link_text(r);
		}
		shown++;
	}
	if (a->json)
		puts("]}");
	links_free(&t);
	return 0;
}

/* link ID up|down, link ID|all errors PPM */
int cmd_link(const struct isr_args *a)
{
	char **args = a->args;
	unsigned int nargs = a->nargs;
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
int cmd_reorder(const struct isr_args *a)
{
	uint32_t ppm, depth = 0, hold_us = 0;

	if (a->depth && !parse_range(a->depth, ISR_DEPTH_MIN, ISR_DEPTH_MAX,
				     &depth))
		return usage_error("bad --depth '%s': a held packet is overtaken by %u..%u later packets",
				   a->depth, ISR_DEPTH_MIN, ISR_DEPTH_MAX);
	if (a->hold_us && !parse_range(a->hold_us, ISR_HOLD_US_MIN,
				       ISR_HOLD_US_MAX, &hold_us))
		return usage_error("bad --hold-us '%s': microseconds a packet is held at most, %u..%u",
				   a->hold_us, ISR_HOLD_US_MIN, ISR_HOLD_US_MAX);
	if (!a->nargs)
		return usage_error("reorder needs a rate: packets per million held back, 0..%u",
				   ISR_REORDER_PPM_MAX);
	if (!parse_range(a->args[0], 0, ISR_REORDER_PPM_MAX, &ppm))
		return usage_error("bad reorder rate '%s': packets per million held back, 0..%u",
				   a->args[0], ISR_REORDER_PPM_MAX);
	if (a->nargs > 1)
		return usage_error("unexpected argument '%s'", a->args[1]);
	if (a->depth && knob_write("reorder_depth", depth))
		return 1;
	if (a->hold_us && knob_write("hold_us", hold_us))
		return 1;
	return knob_write("reorder_ppm", ppm);
}

/*
 * drop PPM, dup PPM: the rates at which the network drops or duplicates
 * atomic request and reply packets (the other kinds are covered by
 * link-level retry and never lost).
 */
static int fault_rate(const struct isr_args *a, const char *cmd,
		      const char *what, const char *knob)
{
	uint32_t ppm;

	if (!a->nargs)
		return usage_error("%s needs a rate: atomic packets per million %s, 0..%u",
				   cmd, what, ISR_FAULT_PPM_MAX);
	if (!parse_range(a->args[0], 0, ISR_FAULT_PPM_MAX, &ppm))
		return usage_error("bad %s rate '%s': atomic packets per million %s, 0..%u",
				   cmd, a->args[0], what, ISR_FAULT_PPM_MAX);
	if (a->nargs > 1)
		return usage_error("unexpected argument '%s'", a->args[1]);
	return knob_write(knob, ppm);
}

int cmd_drop(const struct isr_args *a)
{
	return fault_rate(a, "drop", "dropped", "drop_ppm");
}

int cmd_dup(const struct isr_args *a)
{
	return fault_rate(a, "dup", "duplicated", "dup_ppm");
}

/* The knobs isr shows; those not required are left out when missing. */
static const struct {
	const char *name;
	enum isr_need need;
} isr_knobs[] = {
	{ "reorder_ppm", ISR_REQUIRED },
	{ "reorder_depth", ISR_REQUIRED },
	{ "hold_us", ISR_REQUIRED },
	{ "drop_ppm", ISR_IF_PRESENT },	/* modules with atomics */
	{ "dup_ppm", ISR_IF_PRESENT },
};
#define NR_ISR_KNOBS	(sizeof(isr_knobs) / sizeof(isr_knobs[0]))

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
int cmd_isr(const struct isr_args *a)
{
	bool json = a->json, present[NR_ISR_KNOBS];
	uint32_t knob[NR_ISR_KNOBS];
	struct kv_file topo, flight;
	struct jobj o = { true };

	if (kv_read("isr/topology", ISR_IF_PRESENT, "spec", &topo))
		return 1;
	for (size_t i = 0; i < NR_ISR_KNOBS; i++)
		if (knob_read(isr_knobs[i].name, isr_knobs[i].need, &knob[i],
			      &present[i])) {
			kv_free(&topo);
			return 1;
		}
	if (kv_read("isr/flight", ISR_REQUIRED, NULL, &flight)) {
		kv_free(&topo);
		return 1;
	}
	if (json) {
		struct jobj k = { true };

		putchar('{');
		if (topo.present) {
			jkey(&o, "topology");
			kv_print(&topo, true);
		}
		jkey(&o, "knobs");
		putchar('{');
		for (size_t i = 0; i < NR_ISR_KNOBS; i++)
			if (present[i])
				ju64(&k, isr_knobs[i].name, knob[i]);
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
		for (size_t i = 0; i < NR_ISR_KNOBS; i++)
			if (present[i])
				printf("  %-20s %" PRIu32 "\n", isr_knobs[i].name,
				       knob[i]);
		puts("flight:");
		kv_print(&flight, false);
	}
	kv_free(&topo);
	kv_free(&flight);
	return 0;
}

/* atomic: the remote atomics' counters, percs/atomic as it is. */
int cmd_atomic(const struct isr_args *a)
{
	struct kv_file kv;

	if (kv_read("atomic", ISR_REQUIRED, NULL, &kv))
		return 1;
	if (a->json) {
		kv_print(&kv, true);
		putchar('\n');
	} else {
		for (unsigned int i = 0; i < kv.n; i++)
			printf("%-20s %s\n", kv.key[i], kv.val[i]);
	}
	kv_free(&kv);
	return 0;
}
