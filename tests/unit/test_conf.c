/* Unit tests of spoolbox.conf parsing and the interval/size/bool parsers. */
#include "conf.h"
#include "unit.h"
#include "util.h"
#include <limits.h>
#include <stdlib.h>

static int parse(struct conf *c, const char *text, struct unit_findings *f)
{
	memset(f, 0, sizeof *f);
	conf_init(c);
	return conf_parse(c, "t.conf", text, strlen(text), unit_collect, f);
}

/* The value parsers: which, the text, and the value, or -1 for a refusal. */
enum value_parser { P_INTERVAL, P_SIZE, P_BOOL, P_COUNT1000, P_COUNTMAX };
static const struct {
	enum value_parser p;
	const char *in;
	long long v;
} values[] = {
	{P_INTERVAL, "1h5m20s", 3920},
	{P_INTERVAL, "10s", 10},
	{P_INTERVAL, "3d", 259200},
	{P_INTERVAL, "90", 90},
	{P_INTERVAL, "0", 0},
	{P_INTERVAL, "1d1s", 86401},
	{P_INTERVAL, "", -1},
	{P_INTERVAL, "h", -1},
	{P_INTERVAL, "5x", -1},
	{P_INTERVAL, "-5s", -1},
	{P_INTERVAL, "1 h", -1},
	{P_INTERVAL, "99999999999999999999d", -1},
	{P_INTERVAL, "106751991167301d", -1},
	{P_SIZE, "10M", 10485760},
	{P_SIZE, "512k", 524288},
	{P_SIZE, "1G", 1073741824},
	{P_SIZE, "2048", 2048},
	{P_SIZE, "0", 0},
	{P_SIZE, "10MB", 10485760},
	{P_SIZE, "M", -1},
	{P_SIZE, "10T", -1},
	{P_SIZE, "-1", -1},
	{P_SIZE, "99999999999999999G", -1},
	{P_BOOL, "yes", 1},
	{P_BOOL, "Off", 0},
	{P_BOOL, "maybe", -1},
	/* plain digits up to a maximum: no sign, no space, no suffix */
	{P_COUNT1000, "0", 0},
	{P_COUNT1000, "1000", 1000},
	{P_COUNT1000, "01000", 1000},
	{P_COUNT1000, "1001", -1},
	{P_COUNT1000, "", -1},
	{P_COUNT1000, "+5", -1},
	{P_COUNT1000, " 5", -1},
	{P_COUNT1000, "5s", -1},
	{P_COUNTMAX, "9223372036854775807", 9223372036854775807LL},
	{P_COUNTMAX, "9223372036854775808", -1},
	{P_COUNTMAX, "99999999999999999999", -1},
};

TEST(value_parsers)
{
	for (size_t i = 0; i < ARRAY_LEN(values); i++) {
		long long v = -1;
		int r;
		unit_case(values[i].in);
		switch (values[i].p) {
		case P_INTERVAL: r = parse_interval(values[i].in, &v); break;
		case P_SIZE: r = parse_size(values[i].in, &v); break;
		case P_BOOL: r = parse_bool(values[i].in, &v); break;
		case P_COUNT1000: r = parse_count(values[i].in, 1000, &v); break;
		default: r = parse_count(values[i].in, LLONG_MAX, &v); break;
		}
		if (values[i].v < 0) {
			CHECK(r < 0);
		} else {
			CHECK_INT(r, 0);
			CHECK_INT(v, values[i].v);
		}
	}
}

TEST(conf_defaults)
{
	struct conf c;
	conf_init(&c);
	CHECK_STR(conf_str(&c, CK_SPOOL), DEFAULT_SPOOL);
	CHECK_INT(conf_num(&c, CK_SIZELIMIT), 10 * 1024 * 1024);
	CHECK_INT(c.origin[CK_SPOOL], CO_DEFAULT);
	conf_free(&c);
}

TEST(conf_values_comments_quotes)
{
	struct conf c;
	struct unit_findings f;
	int e = parse(&c,
	              "# a comment\n"
	              "\n"
	              "   # indented comment\n"
	              "SPOOL=/tmp/q\n"
	              "SMARTHOST = mail.example.com:587   # trailing comment\n"
	              "HELO_NAME=\"a \\\"quoted\\\" #name\\t\"\n"
	              "SIZELIMIT=1M\r\n"
	              "MYHOSTNAME=host#1\n",
	              &f);
	CHECK_INT(e, 0);
	CHECK_STR(conf_str(&c, CK_SPOOL), "/tmp/q");
	CHECK_STR(conf_str(&c, CK_SMARTHOST), "mail.example.com:587");
	CHECK_STR(conf_str(&c, CK_HELO_NAME), "a \"quoted\" #name\t");
	CHECK_INT(conf_num(&c, CK_SIZELIMIT), 1048576);
	CHECK_STR(conf_str(&c, CK_MYHOSTNAME), "host#1");
	CHECK_INT(c.line[CK_SPOOL], 4);
	conf_free(&c);
}

/* Files with errors: the findings counted, and the last one (NULL: not checked). */
static const struct {
	const char *text;
	int n;
	const char *last, *spool; /* spool: the SPOOL value that stands, when not NULL */
} bad_files[] = {
	{"SPOOL=/a\nNOSUCHKEY=1\n", 1, "t.conf:2: unknown key NOSUCHKEY"},
	{"SPOOL=/a\nSPOOL=/b\n", 1, "t.conf:2: duplicate key SPOOL (first set on line 1)", "/a"},
	{"just words\n", 1, "t.conf:1: expected NAME=value"},
	{"HELO_NAME=\"open\n", 1, "t.conf:1: HELO_NAME: unterminated quoted value"},
	{"SIZELIMIT=lots\n", 1, "t.conf:1: SIZELIMIT: not a size (like 10M, 512K or 2048)"},
	{"SPOOL=relative/dir\n", 1, "t.conf:1: SPOOL: not an absolute path"},
	{"DELAY_WARN=soon\nFORWARD=perhaps\n", 2},
	{"HELO_NAME=\"x\" junk\n", 1},
	{"HELO_NAME=\"\\q\"\n", 1},
	/* a whole number is digits only: no sign, no space (as in every other parser here) */
	{"HOPCOUNT_LIMIT=+5\n", 1, "t.conf:1: HOPCOUNT_LIMIT: not a non-negative whole number"},
	{"HOPCOUNT_LIMIT= 5\n", 0},
	{"HOPCOUNT_LIMIT=99999999999999999999\n", 1},
};

TEST(conf_errors_have_file_and_line)
{
	for (size_t i = 0; i < ARRAY_LEN(bad_files); i++) {
		struct conf c;
		struct unit_findings f;
		unit_case(bad_files[i].text);
		CHECK_INT(parse(&c, bad_files[i].text, &f), bad_files[i].n);
		if (bad_files[i].last)
			CHECK_STR(f.last, bad_files[i].last);
		if (bad_files[i].spool)
			CHECK_STR(conf_str(&c, CK_SPOOL), bad_files[i].spool);
		conf_free(&c);
	}
}

TEST(conf_env_overrides_file)
{
	struct conf c;
	struct unit_findings f;
	CHECK_INT(parse(&c, "SPOOL=/from/file\n", &f), 0);
	setenv("SPOOL", "/from/env", 1);
	CHECK_INT(conf_apply_env(&c, unit_collect, &f), 0);
	CHECK_STR(conf_str(&c, CK_SPOOL), "/from/env");
	CHECK(conf_env_used(&c));
	setenv("SPOOL", "not/absolute", 1);
	CHECK_INT(conf_apply_env(&c, unit_collect, &f), 1);
	unsetenv("SPOOL");
	conf_free(&c);
}

/* The environment is read as getenv() reads it: the name whole (SPOOLX and SPOO are not SPOOL),
 * the first entry of a name that appears twice. */
TEST(conf_env_reads_names_whole_and_the_first_of_two)
{
	extern char **environ;
	char **saved = environ;
	char e1[] = "SPOOLX=/not/this", e2[] = "SPOO=/nor/this", e3[] = "SPOOL=/first", e4[] = "SPOOL=/second",
	     e5[] = "QUEUEHI", e6[] = "QUEUEHI=7";
	char *fake[] = {e1, e2, e5, e3, e4, e6, NULL};
	struct conf c;
	struct unit_findings f;
	CHECK_INT(parse(&c, "", &f), 0);
	environ = fake;
	int errors = conf_apply_env(&c, unit_collect, &f);
	environ = saved;
	CHECK_INT(errors, 0);
	CHECK_STR(conf_str(&c, CK_SPOOL), "/first");
	CHECK_INT(conf_num(&c, CK_QUEUEHI), 7);
	conf_free(&c);
}

TEST(conf_long_line_rejected)
{
	struct conf c;
	struct unit_findings f;
	char *text = unit_long_line("HELO_NAME=", CONF_LINE_MAX + 10);
	CHECK_INT(parse(&c, text, &f), 1);
	free(text);
	conf_free(&c);
}
