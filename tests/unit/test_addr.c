/* Unit tests of the RFC 5322/5321 address parser, the canonical form and routing. */
#include "addr.h"
#include "route.h"
#include "unit.h"
#include "util.h"

struct collected {
	int n;
	char text[16][ADDR_TEXT_MAX + 1];
	size_t local_end[16];
};

static int collect(void *ctx, const struct addr *a)
{
	struct collected *c = ctx;
	if (c->n < 16) {
		addr_format(a, NULL, c->text[c->n], sizeof c->text[0]);
		c->local_end[c->n] = a->local_end;
	}
	c->n++;
	return 0;
}

static int list(const char *s, struct collected *c, char *err)
{
	memset(c, 0, sizeof *c);
	return addr_parse_list(s, strlen(s), collect, c, err, 160);
}

static const char *one(const char *s, char *out, size_t size)
{
	struct addr a;
	char err[160];
	if (addr_parse_one(s, strlen(s), &a, err, sizeof err) < 0)
		return NULL;
	addr_format(&a, NULL, out, size);
	return out;
}

/* addr_parse_one and the canonical form: input, then the form, or NULL for a refusal. */
static const struct {
	const char *in, *canon;
} one_cases[] = {
	/* simple forms */
	{"user@example.com", "user@example.com"},
	{"<user@example.com>", "user@example.com"},
	{"John Doe <user@example.com>", "user@example.com"},
	{"\"Doe, John\" <user@example.com>", "user@example.com"},
	{"user@example.com (John Doe)", "user@example.com"},
	{"root", "root"},
	{"root (Cron Daemon)", "root"},
	{"  first.last@sub.example.org  ", "first.last@sub.example.org"},
	{"<@relay.example:user@example.com>", "user@example.com"},
	{"Mr. J. Doe <jd@example.com>", "jd@example.com"},
	/* quoted local parts; quoting that is not needed is dropped */
	{"\"john doe\"@example.com", "\"john doe\"@example.com"},
	{"\"john\"@example.com", "john@example.com"},
	{"\"a\\\"b\"@example.com", "\"a\\\"b\"@example.com"},
	{"\"a..b\"@example.com", "\"a..b\"@example.com"},
	/* obsolete: words joined by dots, one quoted */
	{"john.\"x y\".doe@example.com", "\"john.x y.doe\"@example.com"},
	{"john . doe @ example . com", "john.doe@example.com"},
	/* domain literals */
	{"user@[192.0.2.1]", "user@[192.0.2.1]"},
	{"user@[IPv6:2001:db8::1]", "user@[IPv6:2001:db8::1]"},
	{"user@[300.1.1.1]", NULL},
	{"user@[foo:bar]", NULL},
	{"user@[1.2.3.4", NULL},
};

TEST(addr_one_canonical_forms)
{
	char out[600];
	for (size_t i = 0; i < ARRAY_LEN(one_cases); i++) {
		unit_case(one_cases[i].in);
		if (one_cases[i].canon)
			CHECK_STR(one(one_cases[i].in, out, sizeof out), one_cases[i].canon);
		else
			CHECK(one(one_cases[i].in, out, sizeof out) == NULL);
	}
}

TEST(addr_quoted_local_part_decoded)
{
	struct addr a;
	char err[160];
	CHECK(addr_parse_one("\"john doe\"@example.com", 22, &a, err, sizeof err) == 0);
	CHECK_STR(a.local, "john doe");
}

TEST(addr_lists_and_groups)
{
	struct collected c;
	char err[160];
	CHECK_INT(list("a@x.org, B <b@y.org>, c", &c, err), 3);
	CHECK_STR(c.text[0], "a@x.org");
	CHECK_STR(c.text[1], "b@y.org");
	CHECK_STR(c.text[2], "c");
	CHECK_INT(list("undisclosed-recipients:;", &c, err), 0);
	CHECK_INT(list("Friends: a@x.org, \"B\" <b@y.org>;, c@z.org", &c, err), 3);
	CHECK_STR(c.text[1], "b@y.org");
	CHECK_STR(c.text[2], "c@z.org");
	CHECK_INT(list("a@x.org,,\n b@y.org,", &c, err), 2);
	CHECK_INT(list("", &c, err), 0);
	CHECK_INT(list("team: a@x.org", &c, err), 1); /* missing ';' at the end: tolerated */
	CHECK_INT(list("(just a comment)", &c, err), 0);
	/* where an unqualified address ends, for the header rewrite */
	CHECK_INT(list("root (Cron Daemon), admin", &c, err), 2);
	CHECK_INT(c.local_end[0], 4);
	CHECK_INT(c.local_end[1], 25);
}

/* Lists addr_parse_list refuses: input, then a part of the reason (NULL: any reason). */
static const struct {
	const char *in, *why;
} bad_lists[] = {
	{"john doe", "column 6"},
	{"a@", "missing domain"},
	{"@example.com", "empty local part"},
	{"<a@b.c", "missing '>'"},
	{"\"open", "unterminated quoted string"},
	{"a@b.c (open", "unterminated comment"},
	{"a@b..c", NULL},
	{"a@b.c.", NULL},
	{"a@exa mple.com", NULL},
	{"a@ex!ample.com", "not allowed in a domain"},
	{"G1: G2: a@b;;", "group inside a group"},
	{"a@b.c)", NULL},
	{"<>", NULL},
	{"a\x01@x.org", "control character"},
	{"a@b.c, d e", NULL},
};

TEST(addr_errors_have_reasons)
{
	struct collected c;
	char err[160];
	for (size_t i = 0; i < ARRAY_LEN(bad_lists); i++) {
		unit_case(bad_lists[i].in);
		CHECK(list(bad_lists[i].in, &c, err) < 0);
		if (bad_lists[i].why)
			CHECK(strstr(err, bad_lists[i].why) != NULL);
	}
	unit_case(NULL);
	static const char nul[] = "ro\0ot@x.org";
	CHECK(addr_parse_list(nul, sizeof nul - 1, NULL, NULL, err, sizeof err) < 0 && strstr(err, "NUL"));
	struct addr a;
	CHECK(addr_parse_one("a@b.c, d@e.f", 12, &a, err, sizeof err) < 0 && strstr(err, "more than one"));
	/* the quoted string's and the domain literal's texts, whole */
	static const char *const whole[][2] = {
	    {"\"ab", "column 1: unterminated quoted string"},
	    {"a@[1.2.3.4", "column 3: unterminated domain literal"},
	    {"\"a\x01\"@b.c", "column 3: control character in quoted string"},
	    {"a@[1.2\x01]", "column 7: control character in domain literal"},
	};
	for (size_t i = 0; i < ARRAY_LEN(whole); i++) {
		CHECK(addr_parse_one(whole[i][0], strlen(whole[i][0]), &a, err, sizeof err) < 0);
		CHECK_STR(err, whole[i][1]);
	}
}

TEST(addr_length_limits)
{
	char s[2048], err[160];
	struct addr a;
	memset(s, 'a', 255);
	strcpy(s + 255, "@example.com");
	CHECK(addr_parse_one(s, strlen(s), &a, err, sizeof err) == 0);
	memset(s, 'a', 256);
	strcpy(s + 256, "@example.com");
	CHECK(addr_parse_one(s, strlen(s), &a, err, sizeof err) < 0 && strstr(err, "local part too long"));
	strcpy(s, "u@");
	memset(s + 2, 'b', 64);
	strcpy(s + 66, ".com");
	CHECK(addr_parse_one(s, strlen(s), &a, err, sizeof err) < 0 && strstr(err, "63"));
	/* 256-byte domain of short labels */
	strcpy(s, "u@");
	size_t n = 2;
	while (n < 2 + 256) {
		memcpy(s + n, "abc.", 4);
		n += 4;
	}
	strcpy(s + n, "com");
	CHECK(addr_parse_one(s, strlen(s), &a, err, sizeof err) < 0 && strstr(err, "too long"));
	/* deep comment nesting is refused, not recursed into */
	char deep[200];
	memset(deep, '(', 100);
	memset(deep + 100, ')', 100);
	CHECK(addr_parse_list(deep, sizeof deep, NULL, NULL, err, sizeof err) < 0 && strstr(err, "nested"));
}

TEST(addr_utf8)
{
	struct addr a;
	char err[160];
	const char *s = "j\xc3\xb8rn@\xc3\xa6x.example";
	CHECK(addr_parse_one(s, strlen(s), &a, err, sizeof err) == 0);
	CHECK(a.utf8);
	CHECK(addr_parse_one("bad\xc3(@x.org", 11, &a, err, sizeof err) < 0);
	CHECK(addr_parse_one("o\xc0\xafx@x.org", 10, &a, err, sizeof err) < 0 && strstr(err, "UTF-8"));
	CHECK(addr_parse_one("plain@x.org", 11, &a, err, sizeof err) == 0 && !a.utf8);
	/* Latin-1 in a display name or comment is not an address error */
	CHECK(addr_parse_one("J\xf6rg <j@x.org> (M\xfcller)", strlen("J\xf6rg <j@x.org> (M\xfcller)"), &a, err, sizeof err) == 0);
	CHECK_STR(a.local, "j");
	CHECK(addr_parse_one("\"J\xf6rg\" <j@x.org>", strlen("\"J\xf6rg\" <j@x.org>"), &a, err, sizeof err) == 0);
	CHECK(addr_parse_one("j\xf6rg@x.org", strlen("j\xf6rg@x.org"), &a, err, sizeof err) < 0 && strstr(err, "UTF-8"));
	CHECK(addr_parse_one("j@x\xf6.org", strlen("j@x\xf6.org"), &a, err, sizeof err) < 0 && strstr(err, "UTF-8"));
}

TEST(addr_smtp_paths)
{
	struct addr a;
	char err[160];
	size_t used;
	CHECK_INT(addr_parse_path("<a@b.c> SIZE=10", 15, 0, &a, &used, err, sizeof err), 0);
	CHECK_INT(used, 7);
	CHECK_STR(a.local, "a");
	CHECK_INT(addr_parse_path(" <>", 3, 1, &a, &used, err, sizeof err), 1);
	CHECK_INT(addr_parse_path("<>", 2, 0, &a, &used, err, sizeof err), -1);
	CHECK_INT(addr_parse_path("a@b.c BODY=8BITMIME", 19, 0, &a, &used, err, sizeof err), 0);
	CHECK_INT(used, 5);
	CHECK_INT(addr_parse_path("<\"x>y\"@b.c>", 11, 0, &a, &used, err, sizeof err), 0);
	CHECK_STR(a.local, "x>y");
	CHECK_INT(addr_parse_path("<@r1,@r2:a@b.c>", 15, 0, &a, &used, err, sizeof err), 0);
	CHECK_STR(a.domain, "b.c");
	CHECK_INT(addr_parse_path("<a@b.c", 6, 0, &a, &used, err, sizeof err), -1);
	CHECK_INT(addr_parse_path("<a b@c>", 7, 0, &a, &used, err, sizeof err), -1);
	CHECK_INT(addr_parse_path("<postmaster>", 12, 0, &a, &used, err, sizeof err), 0);
	CHECK_STR(a.domain, "");
}

TEST(addr_format_and_qualify)
{
	struct addr a;
	char err[160], out[600];
	CHECK(addr_parse_one("root", 4, &a, err, sizeof err) == 0);
	CHECK_INT(addr_format(&a, "router.lan", out, sizeof out), 15);
	CHECK_STR(out, "root@router.lan");
	CHECK_INT(addr_format(&a, NULL, out, sizeof out), 4);
	CHECK_INT(addr_format(&a, "router.lan", out, 8), -1);
}

TEST(route_local_and_remote)
{
	struct route_conf rc;
	struct route r;
	struct addr a;
	char err[160];
	CHECK(route_conf_init(&rc, "", "box.example") == 0);
	CHECK(route_is_local(&rc, "BOX.example"));
	CHECK(route_is_local(&rc, "localhost"));
	CHECK(route_is_local(&rc, "localhost.localdomain"));
	CHECK(route_is_local(&rc, ""));
	CHECK(!route_is_local(&rc, "example.com"));
	CHECK(!route_is_local(&rc, "box.example.com"));
	CHECK(addr_parse_one("Root@Box.Example", 16, &a, err, sizeof err) == 0);
	CHECK(route_addr(&rc, &a, &r) == 0);
	CHECK_STR(r.channel, "local");
	CHECK_STR(r.host, "root"); /* a thread per local user (docs/local.md 10) */
	CHECK_STR(r.user, "Root");
	CHECK(addr_parse_one("\"-A b/C+x\"@box.example", 22, &a, err, sizeof err) == 0);
	CHECK(route_addr(&rc, &a, &r) == 0);
	CHECK_STR(r.host, "_a_b_c");
	char h[8];
	route_local_host("+only", h, sizeof h);
	CHECK_STR(h, "-");
	route_local_host("averylongname", h, sizeof h);
	CHECK_STR(h, "averylo");
	CHECK(addr_parse_one("Admin@Example.COM", 17, &a, err, sizeof err) == 0);
	CHECK(route_addr(&rc, &a, &r) == 0);
	CHECK_STR(r.channel, "smtp");
	CHECK_STR(r.host, "example.com");
	CHECK_STR(r.user, "Admin@Example.COM");
	CHECK(route_conf_init(&rc, "a.org, b.org", "box.example") == 0);
	CHECK(route_is_local(&rc, "b.org"));
	CHECK(!route_is_local(&rc, "box.example"));
}
