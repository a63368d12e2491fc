// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: topology spec strings (grammar in spec.h).
 *
 * The parser reads each character once, never past the terminating NUL
 * nor past FM_SPEC_MAX_LEN characters, and answers every bad spec with a
 * one-line message naming the column (1-based), what it found there and
 * what is allowed.  Characters outside printable ASCII are shown as \xNN.
 * Range checks of the numbers are fm_topo_init_spec()'s, so a spec is
 * accepted exactly when a topology can be built from it.
 */
#include "topology.h"

#define FM_SPEC_NUM_MAX	1000000

struct fm_spec_parser {
	const char *s;
	u32 pos;
	char *err;
	size_t errlen;
};

/* Describe the character at the parser's position for a message. */
static const char *fm_spec_what(const struct fm_spec_parser *p, char *buf,
				size_t len)
{
	unsigned char c = p->s[p->pos];

	if (!c)
		fm_snprintf(buf, len, "the end of the spec");
	else if (c >= 0x20 && c < 0x7f && c != '\'')
		fm_snprintf(buf, len, "'%c'", c);
	else
		fm_snprintf(buf, len, "'\\x%02x'", c);
	return buf;
}

static int fm_spec_expected(struct fm_spec_parser *p, const char *what)
{
	char buf[24];

	fm_snprintf(p->err, p->errlen,
		    "topology spec: expected %s at column %u, found %s", what,
		    p->pos + 1, fm_spec_what(p, buf, sizeof(buf)));
	return -EINVAL;
}

static bool fm_spec_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal number at the parser's position. */
static int fm_spec_number(struct fm_spec_parser *p, const char *what,
			  u32 *val)
{
	u32 start = p->pos, v = 0;

	if (!fm_spec_digit(p->s[p->pos]))
		return fm_spec_expected(p, what);
	while (fm_spec_digit(p->s[p->pos])) {
		v = v * 10 + (p->s[p->pos] - '0');
		p->pos++;
		if (v > FM_SPEC_NUM_MAX) {
			fm_snprintf(p->err, p->errlen,
				    "topology spec: the number at column %u is too large (%s)",
				    start + 1, what);
			return -EINVAL;
		}
	}
	*val = v;
	return 0;
}

/* Does the spec continue with @word at the parser's position? */
static bool fm_spec_word(const struct fm_spec_parser *p, const char *word)
{
	u32 i;

	for (i = 0; word[i]; i++)
		if (p->s[p->pos + i] != word[i])
			return false;
	return true;
}

static int fm_spec_option(struct fm_spec_parser *p, struct fm_topo_spec *s,
			  bool *seen_pair, bool *seen_hub, bool d_shape)
{
	bool pair = fm_spec_word(p, "dpair"), hub = fm_spec_word(p, "dhub");
	u32 col = p->pos + 1, v;
	int ret;

	if (!pair && !hub) {
		if (!p->s[p->pos] || p->s[p->pos] == ',')
			return fm_spec_expected(p,
				"an option (dpair=N or dhub=N)");
		return fm_spec_expected(p,
			"an option name (dpair or dhub)");
	}
	p->pos += pair ? 5 : 4;
	if (p->s[p->pos] != '=')
		return fm_spec_expected(p, pair ? "'=' after dpair" :
					"'=' after dhub");
	p->pos++;
	ret = fm_spec_number(p, pair ? "D links per pair (dpair)" :
			     "D ports per hub (dhub)", &v);
	if (ret)
		return ret;
	if ((pair && *seen_pair) || (hub && *seen_hub)) {
		fm_snprintf(p->err, p->errlen,
			    "topology spec: option %s at column %u given twice%s",
			    pair ? "dpair" : "dhub", col,
			    hub && d_shape ? " (dN sets dhub=N)" : "");
		return -EINVAL;
	}
	if (!v) {
		fm_snprintf(p->err, p->errlen, pair ?
			    "dpair=0: at least 1 D link joins each pair of supernodes" :
			    "dhub=0: a hub uses 1..16 of its D ports");
		return -EINVAL;
	}
	if (pair) {
		*seen_pair = true;
		s->d_per_pair = v;
	} else {
		*seen_hub = true;
		s->d_per_hub = v;
	}
	return 0;
}

/**
 * fm_topo_parse() - read a topology spec string
 * @spec: the spec (grammar in spec.h), NUL-terminated; NULL is refused
 * @s: out: the shape, ready for fm_topo_init_spec(); zeroed first
 * @err: buffer for a one-line message without newline; may be NULL when
 *	@errlen is 0; set to "" on success
 * @errlen: size of @err
 *
 * Checks the syntax and every number, so fm_topo_init_spec() accepts
 * what this accepts.
 *
 * Return: 0, or -EINVAL with a message in @err.
 */
int fm_topo_parse(const char *spec, struct fm_topo_spec *s, char *err,
		  size_t errlen)
{
	struct fm_spec_parser p = { spec, 0, err, errlen };
	bool seen_pair = false, seen_hub = false, d_shape = false;
	struct fm_topology t;
	u32 n, len;
	int ret;

	memset(s, 0, sizeof(*s));
	if (!spec || !spec[0]) {
		fm_snprintf(err, errlen,
			    "empty topology spec: expected SxH (e.g. 2x4: 2 supernodes of 4 hubs) or dN (e.g. d8)");
		return -EINVAL;
	}
	for (len = 0; spec[len]; len++) {
		if (len == FM_SPEC_MAX_LEN) {
			fm_snprintf(err, errlen,
				    "topology spec: longer than %u characters",
				    FM_SPEC_MAX_LEN);
			return -EINVAL;
		}
	}
	if (spec[0] == 'd') {
		p.pos = 1;
		ret = fm_spec_number(&p, "the D links per hub of dN (1..16)",
				     &n);
		if (ret)
			return ret;
		if (n < 1 || n > FM_D_PORTS_PER_HUB) {
			fm_snprintf(err, errlen,
				    "d%u: section VII.A systems are d1..d%u (D links per hub)",
				    n, FM_D_PORTS_PER_HUB);
			return -EINVAL;
		}
		s->supernodes = n * FM_MAX_HUBS_PER_SN + 1;
		s->hubs_per_sn = FM_MAX_HUBS_PER_SN;
		s->d_per_hub = n;
		seen_hub = true;
		d_shape = true;
	} else {
		ret = fm_spec_number(&p, "the number of supernodes (SxH or dN)",
				     &s->supernodes);
		if (ret)
			return ret;
		if (spec[p.pos] != 'x')
			return fm_spec_expected(&p,
				"'x' between supernodes and hubs per supernode");
		p.pos++;
		ret = fm_spec_number(&p, "the hubs per supernode after 'x'",
				     &s->hubs_per_sn);
		if (ret)
			return ret;
	}
	while (spec[p.pos]) {
		if (spec[p.pos] != ',')
			return fm_spec_expected(&p,
				"',' before an option or the end of the spec");
		p.pos++;
		ret = fm_spec_option(&p, s, &seen_pair, &seen_hub, d_shape);
		if (ret)
			return ret;
	}
	return fm_topo_init_spec(&t, s, err, errlen);
}

/**
 * fm_topo_format() - the canonical spec of a topology
 * @t: the topology
 * @buf: out: "SxH", or "SxH,dpair=P" when the pairs have fewer D links
 *	than the 16 ports of each hub allow
 * @len: size of @buf
 *
 * Parsing the result gives a topology with the same wiring.
 *
 * Return: the length of the full string, as snprintf().
 */
int fm_topo_format(const struct fm_topology *t, char *buf, size_t len)
{
	u32 S = t->nr_supernodes, H = t->hubs_per_sn;
	u32 full = S > 1 ? FM_D_PORTS_PER_HUB * H / (S - 1) : 0;

	if (t->d_links_per_pair == full)
		return fm_snprintf(buf, len, "%ux%u", S, H);
	return fm_snprintf(buf, len, "%ux%u,dpair=%u", S, H,
			   t->d_links_per_pair);
}
