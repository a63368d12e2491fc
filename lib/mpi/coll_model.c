// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: the PLogP model of the collectives (Ali, Midkiff and Pai,
 * "Modeling advanced collective communication algorithms on Cell-based
 * systems", PPoPP 2010: seed 004), its parameter file, its predictions.
 *
 * The parameters are measured on the running system by percs-mpi-model
 * (percs-bench model --calibrate): L(m) per distance class, g(m), o, the
 * per-byte combining cost gamma, the CAU's cost, and the time of one
 * butterfly round at n ranks, R(n, m) = L(m) + C(m, n), which is seed
 * 004's contention term made a function of the job's size.  Here all
 * ranks share the VM's vCPUs and every waiting rank polls, so a round of
 * a p-rank collective costs R(p, m) whichever ranks take part in it;
 * seed 004's "L(m) + L(1)" per round (data plus acknowledgement) is
 * R(p, m) as measured, since MPI's rendezvous carries its own
 * acknowledgement.  Each algorithm's equation is next to its case in
 * predict(), with the seed's table it adapts.
 *
 * The file, text, one item a line ('#' starts a comment):
 *   percs-mpi-model 1             first line: format and version
 *   sizes M1 M2 ...               message sizes, ascending
 *   l CLASS V1 V2 ...             L(m) per size (us), CLASS same_hub,
 *                                 same_supernode or other_supernode
 *   g V1 V2 ...                   g(m) per size (us)
 *   o V                           us
 *   gamma V                       us per byte
 *   round N V1 V2 ...             R(N, m) per size (us), N ascending
 *   cau N V                       8-byte CAU allreduce at N ranks (us)
 *   cau_packet V                  us per further 64-byte CAU packet
 * sizes, g, o, gamma and at least one round are required.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"
#include "coll_model.h"

/* Largest time (us) and size a file may give: beyond them, it is wrong. */
#define MODEL_MAX_US	1e7
#define MODEL_MAX_BYTES	(1UL << 30)
#define MODEL_MAX_FILE	65536

static const char *const class_names[MPI_MODEL_CLASSES] = {
	[MPI_MODEL_SAME_HUB] = "same_hub",
	[MPI_MODEL_SAME_SUPERNODE] = "same_supernode",
	[MPI_MODEL_OTHER_SUPERNODE] = "other_supernode",
};

const char *mpi_model_class_name(enum mpi_model_class cl)
{
	return cl < MPI_MODEL_CLASSES ? class_names[cl] : "?";
}

/* ---- the file --------------------------------------------------------- */

struct model_reader {
	const char *name;
	int line;
	char *err;
	size_t errlen;
};

static int fail(struct model_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct model_reader *r, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (r->line)
		n = (size_t)snprintf(r->err, r->errlen, "%s: line %d: ",
				     r->name, r->line);
	else
		n = (size_t)snprintf(r->err, r->errlen, "%s: ", r->name);
	if (n < r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The next blank-separated word of *@s, NULL at the end of the line. */
static char *word(char **s)
{
	char *w;

	*s += strspn(*s, " \t\r");
	if (!**s)
		return NULL;
	w = *s;
	*s += strcspn(*s, " \t\r");
	if (**s)
		*(*s)++ = 0;
	return w;
}

/* A time in us, finite, 0 .. MODEL_MAX_US. */
static int time_value(struct model_reader *r, const char *key, const char *w,
		      double *v)
{
	char *end;

	errno = 0;
	*v = strtod(w, &end);
	if (end == w || *end || errno)
		return fail(r, "%s: '%s' is not a number", key, w);
	if (!isfinite(*v) || *v < 0 || *v > MODEL_MAX_US)
		return fail(r, "%s: %s is out of range (0 .. %g us)", key, w,
			    MODEL_MAX_US);
	return 0;
}

static int long_value(struct model_reader *r, const char *key, const char *w,
		      unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(w, &end, 10);
	if (end == w || *end || errno || !isdigit((unsigned char)*w))
		return fail(r, "%s: '%s' is not a whole number", key, w);
	if (*v > max)
		return fail(r, "%s: %s is out of range (at most %lu)", key, w,
			    max);
	return 0;
}

/* Exactly @n times after the keyword, into @v. */
static int times(struct model_reader *r, const char *key, char *s, int n,
		 double *v)
{
	char *w;
	int i;

	for (i = 0; (w = word(&s)); i++) {
		if (i >= n)
			return fail(r, "%s: more than the %d values of 'sizes'",
				    key, n);
		if (time_value(r, key, w, &v[i]))
			return -1;
	}
	if (i < n)
		return fail(r, "%s: %d values, 'sizes' wants %d", key, i, n);
	return 0;
}

static int read_sizes(struct model_reader *r, struct mpi_model *m, char *s)
{
	unsigned long v;
	char *w;

	if (m->nsizes)
		return fail(r, "sizes: given twice");
	while ((w = word(&s))) {
		if (m->nsizes == MPI_MODEL_MAX_SIZES)
			return fail(r, "sizes: more than %d", MPI_MODEL_MAX_SIZES);
		if (long_value(r, "sizes", w, MODEL_MAX_BYTES, &v))
			return -1;
		if (m->nsizes && v <= m->size[m->nsizes - 1])
			return fail(r, "sizes: %lu after %zu: not ascending", v,
				    m->size[m->nsizes - 1]);
		m->size[m->nsizes++] = v;
	}
	if (m->nsizes < 2)
		return fail(r, "sizes: at least 2 wanted");
	return 0;
}

static int read_line(struct model_reader *r, struct mpi_model *m, char *s,
		     bool *seen_g)
{
	char *key = word(&s), *w;
	unsigned long n;
	int c;

	if (!key)
		return 0;
	if (!strcmp(key, "sizes"))
		return read_sizes(r, m, s);
	if (!m->nsizes && (!strcmp(key, "l") || !strcmp(key, "g") ||
			   !strcmp(key, "round")))
		return fail(r, "%s before 'sizes'", key);
	if (!strcmp(key, "l")) {
		w = word(&s);
		for (c = 0; c < MPI_MODEL_CLASSES; c++)
			if (w && !strcmp(w, class_names[c]))
				break;
		if (c == MPI_MODEL_CLASSES)
			return fail(r, "l: '%s' is no distance class (same_hub, same_supernode, other_supernode)",
				    w ? w : "");
		m->have_l[c] = true;
		return times(r, "l", s, m->nsizes, m->l[c]);
	}
	if (!strcmp(key, "g")) {
		*seen_g = true;
		return times(r, "g", s, m->nsizes, m->g);
	}
	if (!strcmp(key, "o"))
		return times(r, "o", s, 1, &m->o);
	if (!strcmp(key, "gamma"))
		return times(r, "gamma", s, 1, &m->gamma);
	if (!strcmp(key, "cau_packet"))
		return times(r, "cau_packet", s, 1, &m->cau_packet);
	if (!strcmp(key, "round") || !strcmp(key, "cau")) {
		bool round = key[0] == 'r';
		int i;

		w = word(&s);
		if (!w)
			return fail(r, "%s: no rank count", key);
		if (long_value(r, key, w, 4096, &n))
			return -1;
		if (n < 2)
			return fail(r, "%s: %lu ranks: at least 2 wanted", key, n);
		for (i = 0; i < m->nranks && m->ranks[i] != (int)n; i++)
			;
		if (i == m->nranks) {
			if (!round)
				return fail(r, "cau: %lu ranks: no 'round %lu' line before it",
					    n, n);
			if (m->nranks == MPI_MODEL_MAX_RANKS)
				return fail(r, "round: more than %d rank counts",
					    MPI_MODEL_MAX_RANKS);
			if (m->nranks && (int)n <= m->ranks[m->nranks - 1])
				return fail(r, "round: %lu ranks after %d: not ascending",
					    n, m->ranks[m->nranks - 1]);
			m->ranks[m->nranks++] = (int)n;
		} else if (round) {
			return fail(r, "round: %lu ranks given twice", n);
		}
		if (round)
			return times(r, "round", s, m->nsizes, m->round[i]);
		m->have_cau = true;
		return times(r, "cau", s, 1, &m->cau[i]);
	}
	return fail(r, "unknown item '%s'", key);
}

int mpi_model_parse(const char *text, const char *name, struct mpi_model *m,
		    char *err, size_t errlen)
{
	struct model_reader r = { .name = name, .err = err, .errlen = errlen };
	bool seen_g = false, seen_cau_packet;
	char *copy, *line, *next, *w;
	unsigned long version;
	int ret = -1, i;

	memset(m, 0, sizeof(*m));
	m->o = m->gamma = m->cau_packet = -1;
	copy = strdup(text);
	if (!copy)
		return fail(&r, "out of memory");
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		r.line++;
		line[strcspn(line, "#")] = 0;
		if (r.line == 1) {
			w = word(&line);
			if (!w || strcmp(w, "percs-mpi-model"))
				goto bad_magic;
			w = word(&line);
			if (!w || long_value(&r, "version", w, 1000000, &version))
				goto bad_magic;
			if (version != MPI_MODEL_VERSION) {
				fail(&r, "format version %lu, this library reads version %d (run percs-bench model --calibrate again)",
				     version, MPI_MODEL_VERSION);
				goto out;
			}
			continue;
		}
		if (read_line(&r, m, line, &seen_g))
			goto out;
	}
	r.line = 0;
	seen_cau_packet = m->cau_packet >= 0;
	if (!m->nsizes)
		fail(&r, "no 'sizes' line (a truncated file?)");
	else if (!seen_g)
		fail(&r, "no 'g' line (a truncated file?)");
	else if (m->o < 0 || m->gamma < 0)
		fail(&r, "no '%s' line (a truncated file?)", m->o < 0 ? "o" : "gamma");
	else if (!m->nranks)
		fail(&r, "no 'round' line (a truncated file?)");
	else if (m->have_cau && !seen_cau_packet)
		fail(&r, "'cau' lines without 'cau_packet'");
	else
		ret = 0;
	for (i = 0; !ret && m->have_cau && i < m->nranks; i++)
		if (m->cau[i] <= 0)
			ret = fail(&r, "round %d has no 'cau %d' line", m->ranks[i],
				   m->ranks[i]);
	goto out;
bad_magic:
	r.line = 0;
	fail(&r, "not a percs MPI model file (the first line is not \"percs-mpi-model VERSION\")");
out:
	free(copy);
	return ret;
}

int mpi_model_load(const char *path, struct mpi_model *m, char *err,
		   size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t n;
	int ret;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	text = malloc(MODEL_MAX_FILE + 1);
	if (!text) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	n = fread(text, 1, MODEL_MAX_FILE + 1, f);
	fclose(f);
	if (n > MODEL_MAX_FILE) {
		free(text);
		snprintf(err, errlen, "%s: larger than %d bytes", path,
			 MODEL_MAX_FILE);
		return -1;
	}
	text[n] = 0;
	if (strlen(text) != n) {
		free(text);
		snprintf(err, errlen, "%s: not a text file (a NUL byte)", path);
		return -1;
	}
	ret = mpi_model_parse(text, path, m, err, errlen);
	free(text);
	return ret;
}

/* ---- interpolation ---------------------------------------------------- */

/*
 * @v at @x of the ascending @xs (@n points): linear between points, the
 * end segments' slopes beyond them (never below 0).
 */
static double interp(const double *xs, const double *v, int n, double x)
{
	int i = 1;
	double y;

	if (n == 1)
		return v[0];
	while (i < n - 1 && x > xs[i])
		i++;
	y = v[i - 1] + (v[i] - v[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
	return y > 0 ? y : 0;
}

static double by_size(const struct mpi_model *m, const double *v, double bytes)
{
	double xs[MPI_MODEL_MAX_SIZES];
	int i;

	for (i = 0; i < m->nsizes; i++)
		xs[i] = (double)m->size[i];
	return interp(xs, v, m->nsizes, bytes);
}

/* R(p, m): a round of a p-rank collective moving @bytes per rank. */
static double round_time(const struct mpi_model *m, int p, double bytes)
{
	double xs[MPI_MODEL_MAX_RANKS], v[MPI_MODEL_MAX_RANKS];
	int i;

	for (i = 0; i < m->nranks; i++) {
		xs[i] = m->ranks[i];
		v[i] = by_size(m, m->round[i], bytes);
	}
	return interp(xs, v, m->nranks, p);
}

static double gap(const struct mpi_model *m, double bytes)
{
	return by_size(m, m->g, bytes);
}

/* An 8-byte CAU allreduce (or barrier, bcast, reduce: one packet). */
static double cau_time(const struct mpi_model *m, int p, double bytes)
{
	double xs[MPI_MODEL_MAX_RANKS], npkt;
	int i;

	for (i = 0; i < m->nranks; i++)
		xs[i] = m->ranks[i];
	npkt = bytes > MPI_MODEL_CAU_PACKET ?
	       ceil(bytes / MPI_MODEL_CAU_PACKET) : 1;
	return interp(xs, m->cau, m->nranks, p) + (npkt - 1) * m->cau_packet;
}

/* ---- the equations ---------------------------------------------------- */

static int ceil_log2(int p)
{
	int k = 0;

	while ((1 << k) < p)
		k++;
	return k;
}

static int floor_log2(int p)
{
	int k = 0;

	while ((2 << k) <= p)
		k++;
	return k;
}

/*
 * Binomial tree over p ranks, whole message each level: seed 004 Table 2
 * "Binomial-Tree-opt", ceil(log2 p) x [L(m) + L(1)], a level being R(p, m).
 */
static double binomial(const struct mpi_model *m, int p, double b)
{
	return ceil_log2(p) * round_time(m, p, b);
}

/*
 * Reduce-scatter by recursive halving then gather by doubling (or
 * allgather by recursive doubling: the same rounds), the ranks beyond the
 * power of two folded in first: seed 004 Table 4/5 "ReduceScatter+gather",
 * sum over k of [2 L(2^k m') + gamma 2^k m' + 2 L(1)], plus a fold of the
 * whole vector and its combine when p is no power of two.
 */
static double rs_halving(const struct mpi_model *m, int p, double b)
{
	int k, lg = floor_log2(p);
	double t = 0, part = b;

	for (k = 0; k < lg; k++) {
		part /= 2;
		t += 2 * round_time(m, p, part) + m->gamma * part;
	}
	if (p != 1 << lg)
		t += 2 * round_time(m, p, b) + m->gamma * b;
	return t;
}

/* Linear gather at a root: seed 004 Table 1 "one-to-all", q = p - 2 gaps. */
static double linear_in(const struct mpi_model *m, int p, double b)
{
	return round_time(m, p, b) + (p - 2) * gap(m, b);
}

static double predict(const struct mpi_model *m, int kind, int algo, int p,
		      double b)
{
	int lg = ceil_log2(p), fl = floor_log2(p);
	bool pof2 = p == 1 << fl;
	double t;
	int k;

	if (p < 2)
		return m->o;
	if (kind == MPI_COLL_BARRIER && algo != BARRIER_CAU)
		b = 0;
	if ((algo == BARRIER_CAU && kind == MPI_COLL_BARRIER) ||
	    (algo == BCAST_CAU && kind == MPI_COLL_BCAST) ||
	    (algo == REDUCE_CAU && kind == MPI_COLL_REDUCE) ||
	    (algo == ALLREDUCE_CAU && kind == MPI_COLL_ALLREDUCE))
		return m->have_cau ? cau_time(m, p, b) : -1;

	switch (kind) {
	case MPI_COLL_BARRIER:
		switch (algo) {
		case BARRIER_DISSEMINATION:
			/* Table 1 "Bruck": ceil(log2 p) x L(1). */
			return lg * round_time(m, p, 0);
		case BARRIER_RECURSIVE_DOUBLING:
			/* Table 1: log2 p x L(1); floor(log2 p) + 2 otherwise. */
			return (fl + (pof2 ? 0 : 2)) * round_time(m, p, 0);
		case BARRIER_GATHER_BCAST:
			/* Table 1 "one-to-all" in, "Gather-Broadcast" out. */
			return linear_in(m, p, 0) + binomial(m, p, 0);
		}
		break;
	case MPI_COLL_BCAST:
		switch (algo) {
		case BCAST_BINOMIAL:
			return binomial(m, p, b);
		case BCAST_PIPELINED: {
			/*
			 * Table 2 "Segmented-Binomial" adapted to this
			 * pipeline (coll_bcast.c): nseg + 1 rounds, each the
			 * root sending a segment to its ceil(log2 p) children,
			 * one R and a gap per further child.
			 */
			double seg = 16384, nseg = ceil(b / seg);

			if (nseg <= 1)
				return binomial(m, p, b);
			return (nseg + 1) * (round_time(m, p, seg) +
					     (lg - 1) * gap(m, seg));
		}
		}
		break;
	case MPI_COLL_REDUCE:
		switch (algo) {
		case REDUCE_LINEAR:
			/* Table 1 "one-to-all" reversed, p - 1 combines. */
			return linear_in(m, p, b) + (p - 1) * m->gamma * b;
		case REDUCE_BINOMIAL:
			/* Table 4 "Binomial": log2 p x [L(m) + L(1) + gamma m]. */
			return lg * (round_time(m, p, b) + m->gamma * b);
		case REDUCE_RABENSEIFNER:
			/* Table 4 "ReduceScatter+gather". */
			return rs_halving(m, p, b);
		}
		break;
	case MPI_COLL_ALLREDUCE:
		switch (algo) {
		case ALLREDUCE_RECURSIVE_DOUBLING:
			/*
			 * Table 5 "Recursive doubling": log2 p x [L(m) +
			 * 2 L(1) + gamma m], floor(log2 p) + 2 rounds when
			 * p is no power of two (section 4).
			 */
			t = fl * (round_time(m, p, b) + m->gamma * b);
			return pof2 ? t : t + 2 * round_time(m, p, b) +
					  m->gamma * b;
		case ALLREDUCE_RABENSEIFNER:
			/* Table 5 "ReduceScatter+rd-allgather". */
			return rs_halving(m, p, b);
		case ALLREDUCE_REDUCE_BCAST:
			/* Table 4 "Binomial" reduce, Table 2 binomial bcast. */
			return lg * (round_time(m, p, b) + m->gamma * b) +
			       binomial(m, p, b);
		}
		break;
	case MPI_COLL_ALLGATHER:
		switch (algo) {
		case ALLGATHER_RING:
			/* p - 1 rounds of one block (the seed has no ring). */
			return (p - 1) * round_time(m, p, b);
		case ALLGATHER_RECURSIVE_DOUBLING:
			if (!pof2)
				return (p - 1) * round_time(m, p, b);
			/* Table 3: sum over k of [L(2^k m) + L(1)]. */
			for (t = 0, k = 0; k < lg; k++)
				t += round_time(m, p, b * (1 << k));
			return t;
		case ALLGATHER_GATHER_BCAST:
			/* Gather "one-to-all", then Table 2 binomial of p m. */
			return linear_in(m, p, b) + binomial(m, p, b * p);
		}
		break;
	}
	return -1;
}

double mpi_model_predict(const struct mpi_model *m, int kind, int algo, int p,
			 size_t bytes)
{
	return predict(m, kind, algo, p, (double)bytes);
}

int mpi_model_choose(const struct mpi_model *m, int kind, int p, size_t bytes,
		     bool commute, bool cau)
{
	static const int cau_algo[] = {
		[MPI_COLL_BARRIER] = BARRIER_CAU,
		[MPI_COLL_BCAST] = BCAST_CAU,
		[MPI_COLL_REDUCE] = REDUCE_CAU,
		[MPI_COLL_ALLREDUCE] = ALLREDUCE_CAU,
	};
	double t, best_t = -1;
	int a, best = -1;

	if (kind > MPI_COLL_ALLGATHER)
		return -1;
	for (a = 0; a < 4; a++) {
		if (kind <= MPI_COLL_ALLREDUCE && a == cau_algo[kind] && !cau)
			continue;
		if (!commute && ((kind == MPI_COLL_REDUCE &&
				  a == REDUCE_RABENSEIFNER) ||
				 (kind == MPI_COLL_ALLREDUCE &&
				  a == ALLREDUCE_RABENSEIFNER)))
			continue;
		t = mpi_model_predict(m, kind, a, p, bytes);
		if (t >= 0 && (best < 0 || t < best_t)) {
			best = a;
			best_t = t;
		}
	}
	return best;
}
