/* Unit tests of spoolbox.conf parsing and the interval/size/bool parsers. */
#include "conf.h"
#include "unit.h"
#include <stdlib.h>

struct findings {
	int n;
	char last[512];
	int last_line;
};

static void collect(void *ctx, const char *file, int line, const char *reason)
{
	struct findings *f = ctx;
	f->n++;
	f->last_line = line;
	snprintf(f->last, sizeof f->last, "%s:%d: %s", file, line, reason);
}

static int parse(struct conf *c, const char *text, struct findings *f)
{
	memset(f, 0, sizeof *f);
	conf_init(c);
	return conf_parse(c, "t.conf", text, strlen(text), collect, f);
}

TEST(interval_parser)
{
	long long v;
	CHECK(parse_interval("1h5m20s", &v) == 0 && v == 3920);
	CHECK(parse_interval("10s", &v) == 0 && v == 10);
	CHECK(parse_interval("3d", &v) == 0 && v == 259200);
	CHECK(parse_interval("90", &v) == 0 && v == 90);
	CHECK(parse_interval("0", &v) == 0 && v == 0);
	CHECK(parse_interval("1d1s", &v) == 0 && v == 86401);
	CHECK(parse_interval("", &v) < 0);
	CHECK(parse_interval("h", &v) < 0);
	CHECK(parse_interval("5x", &v) < 0);
	CHECK(parse_interval("-5s", &v) < 0);
	CHECK(parse_interval("1 h", &v) < 0);
	CHECK(parse_interval("99999999999999999999d", &v) < 0);
	CHECK(parse_interval("106751991167301d", &v) < 0);
}

TEST(size_parser)
{
	long long v;
	CHECK(parse_size("10M", &v) == 0 && v == 10485760);
	CHECK(parse_size("512k", &v) == 0 && v == 524288);
	CHECK(parse_size("1G", &v) == 0 && v == 1073741824);
	CHECK(parse_size("2048", &v) == 0 && v == 2048);
	CHECK(parse_size("0", &v) == 0 && v == 0);
	CHECK(parse_size("10MB", &v) == 0 && v == 10485760);
	CHECK(parse_size("M", &v) < 0);
	CHECK(parse_size("10T", &v) < 0);
	CHECK(parse_size("-1", &v) < 0);
	CHECK(parse_size("99999999999999999G", &v) < 0);
}

TEST(bool_parser)
{
	long long v;
	CHECK(parse_bool("yes", &v) == 0 && v == 1);
	CHECK(parse_bool("Off", &v) == 0 && v == 0);
	CHECK(parse_bool("maybe", &v) < 0);
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
	struct findings f;
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

TEST(conf_errors_have_file_and_line)
{
	struct conf c;
	struct findings f;
	CHECK_INT(parse(&c, "SPOOL=/a\nNOSUCHKEY=1\n", &f), 1);
	CHECK_STR(f.last, "t.conf:2: unknown key NOSUCHKEY");
	conf_free(&c);
	CHECK_INT(parse(&c, "SPOOL=/a\nSPOOL=/b\n", &f), 1);
	CHECK_STR(f.last, "t.conf:2: duplicate key SPOOL (first set on line 1)");
	CHECK_STR(conf_str(&c, CK_SPOOL), "/a");
	conf_free(&c);
	CHECK_INT(parse(&c, "just words\n", &f), 1);
	CHECK_STR(f.last, "t.conf:1: expected NAME=value");
	conf_free(&c);
	CHECK_INT(parse(&c, "HELO_NAME=\"open\n", &f), 1);
	CHECK_STR(f.last, "t.conf:1: HELO_NAME: unterminated quoted value");
	conf_free(&c);
	CHECK_INT(parse(&c, "SIZELIMIT=lots\n", &f), 1);
	CHECK_STR(f.last, "t.conf:1: SIZELIMIT: not a size (like 10M, 512K or 2048)");
	conf_free(&c);
	CHECK_INT(parse(&c, "SPOOL=relative/dir\n", &f), 1);
	CHECK_STR(f.last, "t.conf:1: SPOOL: not an absolute path");
	conf_free(&c);
	CHECK_INT(parse(&c, "DELAY_WARN=soon\nFORWARD=perhaps\n", &f), 2);
	conf_free(&c);
	CHECK_INT(parse(&c, "HELO_NAME=\"x\" junk\n", &f), 1);
	conf_free(&c);
	CHECK_INT(parse(&c, "HELO_NAME=\"\\q\"\n", &f), 1);
	conf_free(&c);
}

TEST(conf_env_overrides_file)
{
	struct conf c;
	struct findings f;
	CHECK_INT(parse(&c, "SPOOL=/from/file\n", &f), 0);
	setenv("SPOOL", "/from/env", 1);
	CHECK_INT(conf_apply_env(&c, collect, &f), 0);
	CHECK_STR(conf_str(&c, CK_SPOOL), "/from/env");
	CHECK(conf_env_used(&c));
	setenv("SPOOL", "not/absolute", 1);
	CHECK_INT(conf_apply_env(&c, collect, &f), 1);
	unsetenv("SPOOL");
	conf_free(&c);
}

TEST(conf_long_line_rejected)
{
	struct conf c;
	struct findings f;
	char *text = malloc(CONF_LINE_MAX + 20);
	memset(text, 'A', CONF_LINE_MAX + 10);
	memcpy(text, "HELO_NAME=", 10);
	text[CONF_LINE_MAX + 10] = '\n';
	text[CONF_LINE_MAX + 11] = 0;
	CHECK_INT(parse(&c, text, &f), 1);
	free(text);
	conf_free(&c);
}
