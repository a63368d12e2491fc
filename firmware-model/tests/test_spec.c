// SPDX-License-Identifier: GPL-2.0
/* Unit tests of firmware-model/spec.c: topology spec strings. */
#include "topology.h"
#include "fm_test.h"

static void check_good(const char *spec, u32 S, u32 H, u32 d, const char *fmt)
{
	struct fm_topo_spec s;
	struct fm_topology t;
	char err[256], canon[64];
	int ret;

	memset(err, 'x', sizeof(err));
	ret = fm_topo_parse(spec, &s, err, sizeof(err));
	CHECK_CTX(ret == 0 && err[0] == '\0', "'%s': %d %s", spec, ret, err);
	if (ret)
		return;
	CHECK(!fm_topo_init_spec(&t, &s, err, sizeof(err)));
	CHECK_CTX(t.nr_supernodes == S && t.hubs_per_sn == H &&
		  t.d_links_per_pair == d && !t.rt,
		  "'%s': %ux%u d=%u", spec, t.nr_supernodes, t.hubs_per_sn,
		  t.d_links_per_pair);
	fm_topo_format(&t, canon, sizeof(canon));
	CHECK_CTX(!strcmp(canon, fmt), "'%s' formats as '%s', not '%s'",
		  spec, canon, fmt);
	/* the canonical spec names the same wiring */
	CHECK(!fm_topo_parse(canon, &s, err, sizeof(err)) &&
	      !fm_topo_init_spec(&t, &s, err, sizeof(err)) &&
	      t.nr_supernodes == S && t.hubs_per_sn == H &&
	      t.d_links_per_pair == d);
}

FM_TEST(spec_parses_good_specs)
{
	check_good("2x4", 2, 4, 64, "2x4");
	check_good("1x1", 1, 1, 0, "1x1");
	check_good("1x32", 1, 32, 0, "1x32");
	check_good("513x32", 513, 32, 1, "513x32");
	check_good("17x1", 17, 1, 1, "17x1");
	check_good("2x32", 2, 32, 512, "2x32");
	check_good("5x8,dpair=4", 5, 8, 4, "5x8,dpair=4");
	check_good("5x8,dpair=32", 5, 8, 32, "5x8");
	check_good("257x32,dhub=8", 257, 32, 1, "257x32,dpair=1");
	check_good("d8", 257, 32, 1, "257x32,dpair=1");
	check_good("d1", 33, 32, 1, "33x32,dpair=1");
	check_good("d16", 513, 32, 1, "513x32");
	check_good("d2,dpair=1", 65, 32, 1, "65x32,dpair=1");
	check_good("3x4,dhub=2,dpair=3", 3, 4, 3, "3x4,dpair=3");
	check_good("3x4,dpair=3,dhub=2", 3, 4, 3, "3x4,dpair=3");
	check_good("9x2,dhub=4", 9, 2, 1, "9x2,dpair=1");
	check_good("007x04", 7, 4, 10, "7x4");
}

/* @spec must be refused with a one-line message containing @want. */
static void check_bad(const char *spec, const char *want)
{
	struct fm_topo_spec s;
	char err[256];
	int ret;

	err[0] = '\0';
	ret = fm_topo_parse(spec, &s, err, sizeof(err));
	CHECK_CTX(ret == -EINVAL, "'%s': returned %d", spec, ret);
	CHECK_CTX(strstr(err, want), "'%s': \"%s\" lacks \"%s\"", spec, err,
		  want);
	CHECK_CTX(!strchr(err, '\n') && strlen(err) < sizeof(err) - 1,
		  "'%s': \"%s\"", spec, err);
}

FM_TEST(spec_refuses_bad_syntax)
{
	check_bad("", "empty topology spec: expected SxH");
	check_bad("x4", "expected the number of supernodes (SxH or dN) at column 1, found 'x'");
	check_bad("2", "expected 'x' between supernodes and hubs per supernode at column 2, found the end of the spec");
	check_bad("2X4", "at column 2, found 'X'");
	check_bad("2x", "expected the hubs per supernode after 'x' at column 3, found the end");
	check_bad("2x4x", "expected ',' before an option or the end of the spec at column 4, found 'x'");
	check_bad("2x4 ", "at column 4, found ' '");
	check_bad(" 2x4", "at column 1, found ' '");
	check_bad("-2x4", "found '-'");
	check_bad("+2x4", "found '+'");
	check_bad("2x4,", "expected an option (dpair=N or dhub=N) at column 5, found the end");
	check_bad("2x4,,dpair=1", "expected an option (dpair=N or dhub=N) at column 5, found ','");
	check_bad("2x4,foo=1", "expected an option name (dpair or dhub) at column 5, found 'f'");
	check_bad("2x4,dpair", "expected '=' after dpair at column 10, found the end");
	check_bad("2x4,dhub:3", "expected '=' after dhub at column 9, found ':'");
	check_bad("2x4,dpair=", "expected D links per pair (dpair) at column 11");
	check_bad("2x4,dpair=x", "found 'x'");
	check_bad("2x4,dpair=1,dpair=2", "option dpair at column 13 given twice");
	check_bad("d8,dhub=8", "option dhub at column 4 given twice (dN sets dhub=N)");
	check_bad("d", "expected the D links per hub of dN (1..16) at column 2, found the end");
	check_bad("dx", "found 'x'");
	check_bad("2x4\x01", "found '\\x01'");
	check_bad("2x4\xff", "found '\\xff'");
	check_bad("2x'", "found '\\x27'");
	check_bad("99999999999x4", "the number at column 1 is too large");
	check_bad("2x4,dpair=4294967297", "the number at column 11 is too large");
	check_bad("1234567890123456789012345678901234567890123456789012345678901234567890",
		  "longer than 64 characters");
	check_bad(NULL, "empty topology spec");
}

FM_TEST(spec_refuses_bad_numbers)
{
	check_bad("0x4", "supernodes=0: the system has 1..513 supernodes");
	check_bad("514x32", "supernodes=514: the system has 1..513 supernodes");
	check_bad("2x0", "hubs_per_supernode=0: a supernode has 1..32 hubs");
	check_bad("2x33", "hubs_per_supernode=33: a supernode has 1..32 hubs");
	check_bad("18x1", "supernodes=18: at most 17 with 1 hubs per supernode and 16 D ports per hub");
	check_bad("258x32,dhub=8", "supernodes=258: at most 257 with 32 hubs per supernode and 8 D ports per hub");
	check_bad("2x4,dpair=0", "dpair=0: at least 1 D link joins each pair");
	check_bad("2x4,dpair=65", "dpair=65: at most 64 D links per pair of 2 supernodes of 4 hubs with 16 D ports per hub");
	check_bad("3x4,dhub=2,dpair=5", "dpair=5: at most 4 D links per pair");
	check_bad("2x4,dhub=0", "dhub=0: a hub uses 1..16 of its D ports");
	check_bad("2x4,dhub=17", "dhub=17: a hub has 1..16 D ports");
	check_bad("1x4,dpair=1", "dpair=1: a system of one supernode has no D links");
	check_bad("1x4,dhub=3", "dhub=3: a system of one supernode has no D links");
	check_bad("d0", "d0: section VII.A systems are d1..d16");
	check_bad("d17", "d17: section VII.A systems are d1..d16");
	check_bad("d1,dpair=2", "dpair=2: at most 1 D links per pair");
}

FM_TEST(spec_message_buffer)
{
	struct fm_topo_spec s;
	char err[10];

	memset(err, 'x', sizeof(err));
	CHECK_EQ(fm_topo_parse("2x99", &s, err, sizeof(err)), -EINVAL);
	CHECK_EQ(strlen(err), sizeof(err) - 1);
	CHECK_EQ(fm_topo_parse("2x99", &s, NULL, 0), -EINVAL);
	CHECK_EQ(fm_topo_parse("2x4", &s, NULL, 0), 0);
	CHECK_EQ(s.supernodes, 2);
}

/*
 * Random strings over the spec's alphabet and a few others: the parser
 * accepts exactly what builds a topology, and gives a message otherwise.
 */
FM_TEST(spec_random_strings)
{
	static const char alphabet[] = "0123456789xd,=pairhub \x01\xff";
	u32 x = 12345, i, n, k, accepted = 0;

	for (i = 0; i < 200000; i++) {
		char spec[80], err[256];
		struct fm_topo_spec s;
		struct fm_topology t;
		int ret;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		n = x % 20;
		for (k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			/* mostly digits and 'x', so that some are valid */
			spec[k] = x % 4 ? "0123456789x"[x / 4 % 11] :
				  alphabet[x / 4 % (sizeof(alphabet) - 1)];
		}
		spec[n] = '\0';
		err[0] = '\0';
		ret = fm_topo_parse(spec, &s, err, sizeof(err));
		if (!ret) {
			accepted++;
			CHECK_CTX(!fm_topo_init_spec(&t, &s, err, sizeof(err)),
				  "'%s'", spec);
		} else {
			CHECK_CTX(ret == -EINVAL && err[0] && !strchr(err, '\n'),
				  "'%s': %d '%s'", spec, ret, err);
		}
	}
	CHECK_CTX(accepted > 100, "%u accepted", accepted);
}
