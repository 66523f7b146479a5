/* Unit tests of the aliases parser, the target-list splitter, the expansion rules (with a fake
 * user database), and the message copy of local delivery (mboxrd quoting, headers). */
#include "aliases.h"
#include "deliver.h"
#include "mbox.h"
#include "unit.h"
#include "util.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(struct aliases *a, const char *text, struct unit_findings *f)
{
	memset(f, 0, sizeof *f);
	return aliases_parse(a, "al", text, strlen(text), unit_collect, f);
}

TEST(aliases_parse_syntax)
{
	struct aliases a;
	struct unit_findings f;
	int n = parse(&a,
	              "# comment\n"
	              "\n"
	              "Root: admin, \"|/bin/prog a, b\",\n"
	              "  /var/log/x,\n"
	              "# comment inside\n"
	              "\t:include:/etc/list\n"
	              "\"Post Master\" : root\n"
	              "back: \\root\n"
	              "*: catch@example.com\n",
	              &f);
	CHECK_INT(n, 0);
	CHECK_INT(a.n, 4);
	CHECK_STR(aliases_lookup(&a, "root"), " admin, \"|/bin/prog a, b\",\n  /var/log/x,\n\t:include:/etc/list");
	CHECK_STR(aliases_lookup(&a, "post master"), " root");
	CHECK_STR(aliases_lookup(&a, "*"), " catch@example.com");
	CHECK(aliases_lookup(&a, "nobody") == NULL);
	aliases_free(&a);
}

TEST(aliases_parse_errors_name_their_line)
{
	struct aliases a;
	struct unit_findings f;
	int n = parse(&a,
	              "  orphan\n"
	              "nocolon root\n"
	              "ok: root\n"
	              "ok: again\n"
	              "empty:\n"
	              "bad: a b\n"
	              "q: \"open\n"
	              "\"unterminated: x\n"
	              "rel: :include:etc/x\n"
	              "ctl: a\001b\n",
	              &f);
	CHECK_INT(n, 9);
	CHECK_INT(a.n, 1);
	CHECK(strstr(f.all, "al:1: continuation line without an alias before it\n"));
	CHECK(strstr(f.all, "al:2: missing ':' after the alias name\n"));
	CHECK(strstr(f.all, "al:4: duplicate alias 'ok' (first at line 3)\n"));
	CHECK(strstr(f.all, "al:5: alias 'empty' has no targets\n"));
	CHECK(strstr(f.all, "al:6: alias 'bad': bad address 'a b' (missing comma?)\n"));
	CHECK(strstr(f.all, "al:7: alias 'q': unterminated quote\n"));
	CHECK(strstr(f.all, "al:8: unterminated quoted name\n"));
	CHECK(strstr(f.all, "al:9: alias 'rel': :include: needs an absolute path\n"));
	CHECK(strstr(f.all, "al:10: alias 'ctl': control character in target\n"));
	CHECK(strstr(a.first_error, "al:1: ") == a.first_error);
	CHECK_STR(aliases_lookup(&a, "ok"), " root");
	aliases_free(&a);
}

TEST(aliases_parse_limits)
{
	size_t big = ALIASES_ENTRY_MAX + 100;
	char *t = malloc(big + 10);
	memcpy(t, "x: a", 4);
	memset(t + 4, 'b', big - 4);
	memcpy(t + big, "\n", 2);
	struct aliases a;
	struct unit_findings f;
	CHECK_INT(parse(&a, t, &f), 1);
	CHECK(strstr(f.all, "longer than"));
	aliases_free(&a);
	/* a long entry assembled from continuation lines hits the same limit */
	size_t pos = (size_t)sprintf(t, "y: a");
	while (pos < big - 20)
		pos += (size_t)sprintf(t + pos, ",\n b%zu", pos);
	CHECK_INT(parse(&a, t, &f), 1);
	CHECK(strstr(f.all, "al:1: entry longer than"));
	aliases_free(&a);
	free(t);
	/* NUL bytes are an error, not the end of the file */
	CHECK_INT(aliases_parse(&a, "al", "a: b\0c\nd: e\n", 12, unit_collect, &f), 1);
	CHECK_INT(a.n, 1);
	aliases_free(&a);
}

struct tgt {
	int n;
	char out[1024];
};

static int on_t(void *ctx, enum alias_tkind k, const char *text, size_t len)
{
	struct tgt *t = ctx;
	static const char *const kn[] = {"addr", "noalias", "cmd", "file", "inc"};
	size_t l = strlen(t->out);
	snprintf(t->out + l, sizeof t->out - l, "%s[%.*s]", kn[k], (int)len, text);
	t->n++;
	return 0;
}

static const char *targets(const char *s, int lines)
{
	static struct tgt t;
	char err[200];
	memset(&t, 0, sizeof t);
	if (aliases_targets(s, strlen(s), lines, on_t, &t, err, sizeof err) < 0)
		snprintf(t.out, sizeof t.out, "ERR %s", err);
	return t.out;
}

TEST(alias_target_lists)
{
	CHECK_STR(targets(" a, b@x.org ,\\c", 0), "addr[a]addr[b@x.org]noalias[c]");
	CHECK_STR(targets("|/bin/prog -x y, /tmp/f", 0), "cmd[/bin/prog -x y]file[/tmp/f]");
	CHECK_STR(targets("\"|prog a, b\", \"/path with space\"", 0), "cmd[prog a, b]file[/path with space]");
	CHECK_STR(targets("\"john doe\"@example.com", 0), "addr[\"john doe\"@example.com]");
	CHECK_STR(targets(":include: /etc/x, <a@b>", 0), "inc[/etc/x]addr[a@b]");
	CHECK_STR(targets("\"a\\\"b\"", 0), "addr[a\"b]");
	CHECK_STR(targets("/maildir/", 0), "file[/maildir/]");
	CHECK_STR(targets("# c\na\n  # not a comment? yes: at line start after blanks\nb\n", 1),
	          "addr[a]addr[b]");
	CHECK_STR(targets("a\nb", 0), "addr[a]addr[b]");
	CHECK_STR(targets("a,,b", 0), "addr[a]addr[b]");
	CHECK(str_starts(targets("a b", 0), "ERR bad address"));
	CHECK(str_starts(targets("\"a", 0), "ERR unterminated quote"));
	CHECK(str_starts(targets("|", 0), "ERR empty |command"));
	CHECK(str_starts(targets("@x", 0), "ERR bad address"));
	CHECK(str_starts(targets("\\a@b", 0), "ERR bad address"));
	CHECK(str_starts(targets(":include:", 0), "ERR :include: needs"));
}

/* ---- expansion with a fake user database ---- */

static int fake_getpw(void *ctx, const char *name, struct dl_user *u)
{
	(void)ctx;
	static const char *const users[] = {"root", "alice", "bob", "nobody"};
	for (size_t i = 0; i < ARRAY_LEN(users); i++)
		if (strcmp(name, users[i]) == 0) {
			str_lcpy(u->name, name, sizeof u->name);
			u->uid = i == 3 ? 65534 : (uid_t)(i * 1000);
			u->gid = u->uid;
			str_fmt(u->home, sizeof u->home, "/nonexistent/%s", name);
			return 0;
		}
	return 1;
}

static char xbuf[2048];

static const char *expand(const char *aliases_text, const char *root, const char *rcpt)
{
	struct aliases a;
	struct unit_findings f;
	parse(&a, aliases_text, &f);
	struct dl_user nobody;
	fake_getpw(NULL, "nobody", &nobody);
	struct expand_cfg cfg = {&a, "al", &nobody, 0, root, 1, "box.example", "other.example", fake_getpw, NULL};
	struct expansion x;
	xbuf[0] = 0;
	if (expand_recipient(&cfg, rcpt, &x) == 0) {
		static const char *const kn[] = {"mailbox", "file", "maildir", "cmd", "remote", "error"};
		for (size_t i = 0; i < x.n; i++) {
			size_t l = strlen(xbuf);
			const struct dl_target *t = &x.t[i];
			if (t->kind == DK_ERROR)
				snprintf(xbuf + l, sizeof xbuf - l, "%s%s(%c %s %s)", i ? " " : "", kn[t->kind], t->status, t->enh, t->text);
			else
				snprintf(xbuf + l, sizeof xbuf - l, "%s%s(%s as %s%s%s)", i ? " " : "", kn[t->kind], t->text,
				         t->kind == DK_REMOTE ? "-" : t->user.name, t->sender ? " from " : "", t->sender ? t->sender : "");
		}
		expansion_free(&x);
	}
	aliases_free(&a);
	return xbuf;
}

TEST(expand_users_aliases_and_domains)
{
	const char *al = "root: alice, bob@remote.org\n"
	                 "list: alice, \\root, root@box.example, |prog, /var/x, /var/md/\n"
	                 "owner-list: alice\n"
	                 "olist: far@remote.org, root@other.example\n"
	                 "owner-olist: bob\n";
	CHECK_STR(expand("", NULL, "alice"), "mailbox(alice as alice)");
	CHECK_STR(expand("", NULL, "Alice@anything"), "mailbox(alice as alice)");
	CHECK_STR(expand("", NULL, "carol"), "error(f 5.1.1 unknown user: carol)");
	CHECK_STR(expand("", NULL, "alice+tag"), "mailbox(alice as alice)");
	CHECK_STR(expand(al, NULL, "root"), "mailbox(alice as alice) remote(bob@remote.org as -)");
	CHECK_STR(expand(al, NULL, "root@localhost"), "mailbox(alice as alice) remote(bob@remote.org as -)");
	CHECK_STR(expand(al, "\\bob", "root"), "mailbox(bob as bob)");
	CHECK_STR(expand(al, NULL, "list"),
	          "mailbox(alice as alice) mailbox(root as root) remote(bob@remote.org as - from owner-list@box.example) "
	          "cmd(prog as nobody) file(/var/x as nobody) maildir(/var/md/ as nobody)");
	/* other.example is in LOCALDOMAINS: root@other.example is local, so aliased */
	CHECK_STR(expand(al, NULL, "olist"),
	          "remote(far@remote.org as - from owner-olist@box.example) mailbox(alice as alice) "
	          "remote(bob@remote.org as - from owner-olist@box.example)");
	CHECK_STR(expand("*: bob\n", NULL, "carol"), "mailbox(bob as bob)");
	CHECK_STR(expand("*: bob\n", NULL, "alice"), "mailbox(alice as alice)");
}

TEST(expand_loops_and_self_references)
{
	CHECK_STR(expand("a: b\nb: a\n", NULL, "a"), "error(f 5.4.6 alias loop: a -> b -> a)");
	CHECK_STR(expand("alice: alice, bob\n", NULL, "alice"), "mailbox(alice as alice) mailbox(bob as bob)");
	CHECK_STR(expand("x: x\n", NULL, "x"), "error(f 5.1.1 unknown user: x)");
	CHECK_STR(expand("x: y\ny: z\nz: alice\n", NULL, "x"), "mailbox(alice as alice)");
	/* deep but finite nesting hits the depth limit */
	char deep[4096] = "";
	for (int i = 0; i < EXPAND_DEPTH_MAX + 2; i++)
		snprintf(deep + strlen(deep), sizeof deep - strlen(deep), "n%d: n%d\n", i, i + 1);
	CHECK(strstr(expand(deep, NULL, "n0"), "error(f 5.4.6 aliases nested more than"));
}

TEST(expand_refuses_unsafe_sources)
{
	struct aliases a;
	struct unit_findings f;
	parse(&a, "p: |prog, /file, alice\n", &f);
	struct expand_cfg cfg = {&a, "al", NULL, 0, NULL, 1, "box.example", NULL, fake_getpw, NULL};
	struct expansion x;
	CHECK_INT(expand_recipient(&cfg, "p", &x), 0);
	CHECK_INT(x.n, 3);
	CHECK(x.t[0].kind == DK_ERROR && x.t[0].status == 'd' && strcmp(x.t[0].enh, "4.3.5") == 0);
	CHECK(x.t[2].kind == DK_MAILBOX);
	expansion_free(&x);
	struct dl_user nobody;
	fake_getpw(NULL, "nobody", &nobody);
	cfg.alias_user = &nobody;
	cfg.aliases_unsafe = 1;
	CHECK_INT(expand_recipient(&cfg, "p", &x), 0);
	CHECK(x.t[0].kind == DK_ERROR && strstr(x.t[0].text, "group or world writable"));
	expansion_free(&x);
	aliases_free(&a);
}

TEST(expand_include_and_forward_files)
{
	const char *dir = unit_tmpdir();
	char inc[512], al[1024];
	snprintf(inc, sizeof inc, "%s/list", dir);
	FILE *fp = fopen(inc, "w");
	fputs("# members\nalice\n\"|prog x\"\n", fp);
	fclose(fp);
	chmod(inc, 0644);
	snprintf(al, sizeof al, "l: :include:%s\nw: :include:%s/missing\n", inc, dir);
	CHECK_STR(expand(al, NULL, "l"), "mailbox(alice as alice) cmd(prog x as nobody)");
	CHECK(strstr(expand(al, NULL, "w"), "error(d 4.3.0 :include: file"));
	chmod(inc, 0666); /* world-writable: ignored */
	CHECK(strstr(expand(al, NULL, "l"), "error(d 4.3.0 :include: file"));
}

/* ---- the message copy ---- */

struct mem {
	char buf[4096];
	size_t n;
};

static ssize_t mem_write(void *ctx, const void *p, size_t n, int timeout_ms)
{
	struct mem *m = ctx;
	(void)timeout_ms;
	if (m->n + n > sizeof m->buf - 1)
		return -1;
	memcpy(m->buf + m->n, p, n);
	m->n += n;
	return (ssize_t)n;
}

static const char *copy(const char *body, int flags)
{
	static struct mem out;
	char path[512];
	snprintf(path, sizeof path, "%s/msg", unit_tmpdir());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	write(fd, "ENVELOPE", 8);
	write(fd, body, strlen(body));
	struct dl_msg m = {fd, 8, (long long)strlen(body), "s@x", "r@y", 0, NULL};
	memset(&out, 0, sizeof out);
	int rd = 0;
	struct io io;
	dl_io(&io, -1, mem_write, &out);
	if (dl_copy(&m, &io, flags, &rd) < 0)
		snprintf(out.buf, sizeof out.buf, "ERR");
	close(fd);
	return out.buf;
}

TEST(copy_headers_and_mboxrd)
{
	CHECK_STR(copy("Subject: x\n\nFrom me\n", 0), "Return-Path: <s@x>\nDelivered-To: r@y\nSubject: x\n\nFrom me\n");
	CHECK_STR(copy("A\n\nFrom a\n>From b\n>>From c\n> From d\nFrom\nFromage\n", DL_MBOXRD),
	          "Return-Path: <s@x>\nDelivered-To: r@y\nA\n\n>From a\n>>From b\n>>>From c\n> From d\nFrom\nFromage\n\n");
	CHECK_STR(copy("A\n\nno newline", DL_MBOXRD), "Return-Path: <s@x>\nDelivered-To: r@y\nA\n\nno newline\n\n");
	CHECK_STR(copy("A\n\n>>Fro", DL_MBOXRD), "Return-Path: <s@x>\nDelivered-To: r@y\nA\n\n>>Fro\n\n");
	CHECK_STR(copy("A\n", DL_NO_RETURN_PATH), "Delivered-To: r@y\nA\n");
	char line[200];
	CHECK_INT(mbox_from_line(line, sizeof line, "", 0), 0);
	CHECK(str_starts(line, "From MAILER-DAEMON "));
	CHECK_INT(mbox_from_line(line, sizeof line, "a b\n@c", 0), 0);
	CHECK(str_starts(line, "From a_b_@c "));
	char env[] = "a$(b)`c'd\"e;f|g&h i\nj.k@l-m+n";
	dl_env_clean(env);
	CHECK_STR(env, "a__b__c_d_e_f_g_h_i_j.k@l-m+n");
}

/* A growing memory sink for copies larger than struct mem. */
struct bigmem {
	char *buf;
	size_t n, cap;
};

static ssize_t bigmem_write(void *ctx, const void *p, size_t n, int timeout_ms)
{
	struct bigmem *m = ctx;
	(void)timeout_ms;
	if (m->n + n > m->cap)
		return -1;
	memcpy(m->buf + m->n, p, n);
	m->n += n;
	return (ssize_t)n;
}

/* mboxrd as RFC 4155 says it, a line at a time: the reference for the copy's runs. */
static size_t mboxrd_ref(const char *in, size_t n, char *out)
{
	size_t o = 0, i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && in[j] == '>')
			j++;
		if (n - j >= 5 && memcmp(in + j, "From ", 5) == 0)
			out[o++] = '>';
		while (i < n && in[i] != '\n')
			out[o++] = in[i++];
		if (i < n)
			out[o++] = in[i++];
	}
	if (o && out[o - 1] != '\n')
		out[o++] = '\n';
	out[o++] = '\n';
	return o;
}

/* The copy reads DL_COPY_BUF bytes at a time and writes runs of them: a quoted line, or one
 * still undecided ("From" cut short, many '>'), must come out right wherever a read ends. */
TEST(copy_mboxrd_across_reads)
{
	static const char *const pat[] = {">>From a\n", "From b\n", ">>Fro\n", ">>>>>>>>>>>>\n", "Frox\n", ">From "};
	size_t cap = 3 * DL_COPY_BUF;
	char *body = malloc(cap), *want = malloc(2 * cap);
	struct bigmem out = {malloc(2 * cap), 0, 2 * cap};
	char path[512];
	snprintf(path, sizeof path, "%s/big", unit_tmpdir());
	for (size_t pi = 0; pi < sizeof pat / sizeof *pat; pi++)
		for (size_t s = 0; s <= 13; s++) {
			/* filler lines up to DL_COPY_BUF - s, the pattern there and at the end */
			size_t n = 0, at = DL_COPY_BUF - s;
			while (n < at) {
				size_t k = at - n > 70 ? 70 : at - n;
				memset(body + n, 'x', k);
				body[n + k - 1] = '\n';
				n += k;
			}
			for (int rep = 0; rep < 2; rep++) {
				size_t pl = strlen(pat[pi]);
				memcpy(body + n, pat[pi], pl);
				n += pl;
				if (rep == 0 && body[n - 1] != '\n')
					body[n++] = '\n';
				if (rep == 0)
					n += (size_t)snprintf(body + n, 40, "From middle\n");
			}
			int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
			CHECK(write(fd, "ENVELOPE", 8) == 8 && write(fd, body, n) == (ssize_t)n);
			struct dl_msg m = {fd, 8, (long long)n, "s@x", "r@y", 0, NULL};
			struct io io;
			dl_io(&io, -1, bigmem_write, &out);
			out.n = 0;
			int rd = 0;
			CHECK_INT(dl_copy(&m, &io, DL_MBOXRD, &rd), 0);
			close(fd);
			static const char head[] = "Return-Path: <s@x>\nDelivered-To: r@y\n";
			memcpy(want, head, sizeof head - 1);
			size_t wn = sizeof head - 1 + mboxrd_ref(body, n, want + sizeof head - 1);
			CHECK(out.n == wn && memcmp(out.buf, want, wn) == 0);
		}
	free(body);
	free(want);
	free(out.buf);
}

TEST(alias_targets_blanks_need_quotes)
{
	CHECK(str_starts(targets("/var/log/a /var/log/b", 0), "ERR bad file path"));
	CHECK_STR(targets("\"/var/log/a b\"", 0), "file[/var/log/a b]");
	CHECK(str_starts(targets(":include:/a b", 0), "ERR :include: needs"));
	CHECK_STR(targets("|prog a b", 0), "cmd[prog a b]");
}
