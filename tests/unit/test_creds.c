/* The credentials file: format, quoting, host matching, the file checks (mode, owner, symlink,
 * size), bearer token files and the --check checker. Reports must never carry a secret. */
#include "creds.h"
#include "unit.h"
#include "util.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(const char *text, const char *host, int port, struct creds *c, struct unit_findings *s)
{
	memset(s, 0, sizeof *s);
	memset(c, 0, sizeof *c);
	return creds_parse("creds", text, strlen(text), host, port, c, unit_collect, s);
}

static const char basic_text[] =
	"# comment\n"
	"\n"
	"  smtp.example.test  alice  s3cr#t   # trailing comment\r\n"
	"relay.example.test \"bob smith\" \"pass with \\\"quotes\\\" and \\\\ and # \"\n"
	"mail.example.test carol xoauth2 /etc/spoolbox/carol.token\n"
	"quoted.example.test dave \"xoauth2\"\n";
static const char specific_text[] =
	"* anyuser anypass\n"
	"*:465 anyport465 p\n"
	"relay.test relayuser p\n"
	"relay.test:587 relay587 p\n"
	"relay.test second p\n"
	"[192.0.2.1]:25 literal p\n";
static const char v6_text[] = "[IPv6:2001:db8::1] v6 p\n[192.0.2.9] v4 p\n";

/* A lookup in a credentials file: the file, the host and port asked for, and what must come
 * back (rc 1 found, 0 none; NULL fields and a token of -1 are not checked). */
static const struct {
	const char *name, *text, *host;
	int port, rc;
	const char *user, *secret;
	int token, line;
	const char *entry_host;
} lookups[] = {
	{"plain", basic_text, "smtp.example.test", 587, 1, "alice", "s3cr#t", 0, 3},
	/* host names match without case and a trailing dot; quoting and escapes */
	{"quoted", basic_text, "RELAY.Example.TEST.", 25, 1, "bob smith", "pass with \"quotes\" and \\ and # ", -1},
	{"token_file", basic_text, "mail.example.test", 25, 1, NULL, "/etc/spoolbox/carol.token", 1},
	{"quoted_keyword_is_a_password", basic_text, "quoted.example.test", 25, 1, NULL, "xoauth2", 0},
	{"no_entry", basic_text, "other.example.test", 25, 0, NULL, NULL, -1},
	{"empty_file", "", "x", 25, 0, NULL, NULL, -1},
	/* the most specific entry wins */
	{"host_and_port", specific_text, "relay.test", 587, 1, "relay587", NULL, -1},
	{"host", specific_text, "relay.test", 25, 1, "relayuser", NULL, -1},
	{"any_host_port", specific_text, "elsewhere.test", 465, 1, "anyport465", NULL, -1},
	{"any_host", specific_text, "elsewhere.test", 25, 1, "anyuser", NULL, -1},
	{"literal", specific_text, "[192.0.2.1]", 25, 1, "literal", NULL, -1, 0, "192.0.2.1"},
	/* the transport asks for the address without brackets (SMARTHOST=[192.0.2.1]:25) */
	{"literal_bare", specific_text, "192.0.2.1", 25, 1, "literal", NULL, -1},
	{"ipv6_literal", v6_text, "2001:db8::1", 587, 1, "v6", NULL, -1},
	{"ipv4_literal", v6_text, "192.0.2.9", 587, 1, "v4", NULL, -1},
};

TEST(creds_lookups)
{
	for (size_t i = 0; i < ARRAY_LEN(lookups); i++) {
		struct creds c;
		struct unit_findings s;
		unit_case(lookups[i].name);
		CHECK_INT(parse(lookups[i].text, lookups[i].host, lookups[i].port, &c, &s), lookups[i].rc);
		CHECK_INT(s.n, 0);
		if (lookups[i].user)
			CHECK_STR(c.user, lookups[i].user);
		if (lookups[i].secret)
			CHECK_STR(c.secret, lookups[i].secret);
		if (lookups[i].token >= 0)
			CHECK_INT(c.is_token_file, lookups[i].token);
		if (lookups[i].line)
			CHECK_INT(c.line, lookups[i].line);
		if (lookups[i].entry_host)
			CHECK_STR(c.host, lookups[i].entry_host);
	}
}

TEST(creds_errors_say_where_never_what)
{
	static const char *bad[] = {
		"host user pass extra\n",
		"host user \"unterminated\n",
		"host user \"bad \\n escape\"\n",
		"host user \"x\"y\n",
		"host user pa\"ss\n",
		"host:99999 user pass\n",
		"a:b:c user pass\n",
		"host user\n",
		"host \"\" pass\n",
		"host user xoauth2 relative/token\n",
		"host user a b c\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct creds c;
		struct unit_findings s;
		char text[256];
		snprintf(text, sizeof text, "ok.test u p\n%s", bad[i]);
		int r = parse(text, "ok.test", 25, &c, &s);
		if (r != -1 || s.n != 1 || !strstr(s.all, "creds:2: "))
			unit_fail(__FILE__, __LINE__, "case %zu: r=%d reports=%s", i, r, s.all);
		/* a file with errors is not used, not even its good lines */
		CHECK_STR(c.user, "");
	}
	struct creds c;
	struct unit_findings s;
	CHECK_INT(parse("host user \"secretvalue\" x y\n", "host", 25, &c, &s), -1);
	CHECK(strstr(s.all, "secretvalue") == NULL);
	char *longline = unit_long_line("h u ", CREDS_LINE_MAX + 19);
	CHECK_INT(parse(longline, "h", 25, &c, &s), -1);
	free(longline);
	CHECK(strstr(s.all, "line longer") != NULL);
	CHECK_INT(creds_parse("creds", "h u p\0\n", 7, "h", 25, &c, unit_collect, &s), -1);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, text, strlen(text)), strlen(text));
	close(fd);
	CHECK_INT(chmod(path, mode), 0);
}

TEST(creds_file_checks)
{
	char path[300], link[300];
	struct creds c;
	struct unit_findings s = {0};
	snprintf(path, sizeof path, "%s/credentials", unit_tmpdir());
	snprintf(link, sizeof link, "%s/link", unit_tmpdir());
	CHECK_INT(creds_lookup(path, "h", 25, &c, unit_collect, &s), 0); /* missing: no credentials */
	CHECK_INT(s.n, 0);
	write_file(path, "h user pass\n", 0600);
	CHECK_INT(creds_lookup(path, "h", 25, &c, unit_collect, &s), 1);
	CHECK_STR(c.secret, "pass");
	creds_wipe(&c);
	CHECK_STR(c.secret, "");
	CHECK_INT(chmod(path, 0400), 0);
	CHECK_INT(creds_lookup(path, "h", 25, &c, unit_collect, &s), 1);
	CHECK_INT(chmod(path, 0640), 0);
	CHECK_INT(creds_lookup(path, "h", 25, &c, unit_collect, &s), -1);
	CHECK(strstr(s.all, "mode 0640") != NULL);
	CHECK_INT(chmod(path, 0600), 0);
	CHECK_INT(symlink(path, link), 0);
	s.all[0] = 0;
	CHECK_INT(creds_lookup(link, "h", 25, &c, unit_collect, &s), -1);
	CHECK(strstr(s.all, "symbolic link") != NULL);
	if (geteuid() == 0) {
		CHECK_INT(chown(path, 12345, 12345), 0);
		s.all[0] = 0;
		CHECK_INT(creds_lookup(path, "h", 25, &c, unit_collect, &s), -1);
		CHECK(strstr(s.all, "owned by uid 12345") != NULL);
		CHECK_INT(chown(path, 0, 0), 0);
	}
	/* too large */
	FILE *f = fopen(path, "w");
	for (int i = 0; i < CREDS_FILE_MAX / 10 + 1; i++)
		fputs("h u pass9\n", f);
	fclose(f);
	s.all[0] = 0;
	CHECK_INT(creds_lookup(path, "h", 25, &c, unit_collect, &s), -1);
	CHECK(strstr(s.all, "larger than") != NULL);
	/* a directory */
	s.all[0] = 0;
	CHECK_INT(creds_lookup(unit_tmpdir(), "h", 25, &c, unit_collect, &s), -1);
}

TEST(creds_token_files)
{
	char path[300];
	char tok[CREDS_TOKEN_MAX + 1];
	struct unit_findings s = {0};
	snprintf(path, sizeof path, "%s/token", unit_tmpdir());
	write_file(path, "  ya29.abc-DEF_123\n\n", 0600);
	CHECK_INT(creds_read_token(path, tok, sizeof tok, unit_collect, &s), 16);
	CHECK_STR(tok, "ya29.abc-DEF_123");
	CHECK_INT(creds_read_token(path, tok, 8, unit_collect, &s), -1); /* does not fit */
	write_file(path, "two words\n", 0600);
	CHECK_INT(creds_read_token(path, tok, sizeof tok, unit_collect, &s), -1);
	write_file(path, "\n", 0600);
	CHECK_INT(creds_read_token(path, tok, sizeof tok, unit_collect, &s), -1);
	write_file(path, "SECRETTOKEN\n", 0644);
	s.all[0] = 0;
	CHECK_INT(creds_read_token(path, tok, sizeof tok, unit_collect, &s), -1);
	CHECK(strstr(s.all, "token file mode 0644") != NULL);
	write_file(path, "SECRETTOKEN and more\n", 0600);
	CHECK_INT(creds_read_token(path, tok, sizeof tok, unit_collect, &s), -1);
	CHECK(strstr(s.all, "SECRET") == NULL);
}

TEST(creds_checker)
{
	char path[300], tpath[300], conftext[400];
	struct conf c;
	struct unit_findings s = {0};
	snprintf(path, sizeof path, "%s/credentials", unit_tmpdir());
	snprintf(tpath, sizeof tpath, "%s/token", unit_tmpdir());
	snprintf(conftext, sizeof conftext, "CREDENTIALS=%s\n", path);
	conf_init(&c);
	CHECK_INT(conf_parse(&c, "conf", conftext, strlen(conftext), NULL, NULL), 0);
	CHECK_INT(creds_check(&c, unit_collect, &s), 0); /* missing is fine */
	char text[700];
	snprintf(text, sizeof text, "relay.test u p\nmail.test u xoauth2 %s\n", tpath);
	write_file(path, text, 0600);
	CHECK_INT(creds_check(&c, unit_collect, &s), 1); /* the token file does not exist */
	CHECK(strstr(s.all, ":2: token file") != NULL);
	write_file(tpath, "tok\n", 0600);
	s.n = 0;
	CHECK_INT(creds_check(&c, unit_collect, &s), 0);
	CHECK_INT(s.n, 0);
	write_file(path, "relay.test u\n", 0600);
	CHECK_INT(creds_check(&c, unit_collect, &s), 1);
	conf_free(&c);
}
