/* The AUTH credentials file: checked reading, the line parser, host matching, token files and
 * the `spoolbox --check` checker. The format and its rules are in creds.h. */
#include "creds.h"
#include "agentuser.h"
#include "secfile.h"
#include "smarthost.h"
#include "util.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAXFIELDS 5 /* one more than any valid line, to say "too many fields" */

struct fields {
	int n;
	int quoted[MAXFIELDS];
	char v[MAXFIELDS][CREDS_FIELD_MAX];
};

/* Splits one line (no LF) into fields. Returns 0, or -1 with the reason in why (no secret). */
static int split(const char *s, size_t len, struct fields *f, const char **why)
{
	size_t i = 0;
	f->n = 0;
	for (;;) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == len || s[i] == '#')
			return 0;
		if (f->n == MAXFIELDS) {
			*why = "too many fields (quote a password that holds spaces)";
			return -1;
		}
		char *out = f->v[f->n];
		size_t o = 0;
		int quoted = f->quoted[f->n] = s[i] == '"';
		/* a word up to a blank, or a string up to its quote (only \" and \\ escaped) */
		for (i += quoted;; i++) {
			if (i == len || (!quoted && (s[i] == ' ' || s[i] == '\t')))
				break;
			char c = s[i];
			if (quoted && c == '"')
				break;
			if (c == '"') {
				*why = "a quote inside an unquoted field";
				return -1;
			}
			if (quoted && c == '\\') {
				if (i + 1 == len || (s[i + 1] != '"' && s[i + 1] != '\\')) {
					*why = "bad escape in a quoted field (only \\\" and \\\\ exist)";
					return -1;
				}
				c = s[++i];
			}
			if (o + 1 >= CREDS_FIELD_MAX) {
				*why = "field too long";
				return -1;
			}
			out[o++] = c;
		}
		if (quoted) {
			if (i == len) {
				*why = "unterminated quoted field";
				return -1;
			}
			i++;
			if (i < len && s[i] != ' ' && s[i] != '\t') {
				*why = "text right after a closing quote";
				return -1;
			}
		}
		out[o] = 0;
		f->n++;
	}
}

/* HOST or HOST:PORT or [literal] or [literal]:PORT or "*". Splits off the port (0 = none) and
 * the brackets (and an "IPv6:" tag): the transport looks an address up without them, as
 * SMARTHOST=[192.0.2.1] connects to 192.0.2.1. Returns 0, or -1 when malformed. */
static int split_host(char *h, int *port)
{
	char *colon = NULL;
	*port = 0;
	if (h[0] == '[') {
		char *rb = strchr(h, ']');
		if (!rb || rb == h + 1)
			return -1;
		if (rb[1] == ':')
			colon = rb + 1;
		else if (rb[1])
			return -1;
		size_t skip = str_ncaseeq(h + 1, "IPv6:", 5) ? 6 : 1, n = (size_t)(rb - h) - skip;
		if (rb[1] == ':') {
			/* keep ":PORT" after the address for the code below */
			memmove(h, h + skip, n);
			memmove(h + n, rb + 1, strlen(rb + 1) + 1);
			colon = h + n;
		} else {
			memmove(h, h + skip, n);
			h[n] = 0;
		}
		if (!n)
			return -1;
	} else {
		colon = strrchr(h, ':');
		if (colon && strchr(h, ':') != colon)
			return -1; /* a bare IPv6 address: write it as [IPv6:...] */
	}
	if (colon) {
		long long p;
		if (parse_count(colon + 1, 65535, &p) < 0 || !p)
			return -1;
		*port = (int)p;
		*colon = 0;
	}
	if (!h[0])
		return -1;
	for (const char *c = h; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			return -1;
	return 0;
}

/* Host names compare without case and without one trailing dot. */
static int host_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la && a[la - 1] == '.')
		la--;
	if (lb && b[lb - 1] == '.')
		lb--;
	return la == lb && str_ncaseeq(a, b, la);
}

/* How well an entry fits: 0 no match, 1 "*", 2 "*:port", 3 host, 4 host:port. */
static int rank(const char *ehost, int eport, const char *host, int port)
{
	if (eport && eport != port)
		return 0;
	if (strcmp(ehost, "*") == 0)
		return eport ? 2 : 1;
	if (!host_eq(ehost, host))
		return 0;
	return eport ? 4 : 3;
}

struct check;
static void check_line(struct check *k, const char *file, int lineno, const struct fields *f, int token,
                       conf_report_fn *report, void *ctx);

/* creds_parse(), and with chk (creds_check's, on a file already found valid) check_line() for
 * every entry. */
static int parse(const char *file, const char *text, size_t len, const char *host, int port,
                 struct creds *out, conf_report_fn *report, void *ctx, struct check *chk)
{
	struct fields f; /* reused line by line, wiped at the end */
	int errors = 0, best = 0, lineno = 0, ignored;
	/* the host asked for, in the entries' form: "[192.0.2.1]" is 192.0.2.1 */
	char want[CREDS_FIELD_MAX];
	if (host && (str_lcpy(want, host, sizeof want) >= sizeof want || (want[0] == '[' && split_host(want, &ignored) < 0)))
		host = NULL;
	size_t pos = 0;
	while (pos < len) {
		size_t ll;
		const char *s = conf_line(text, len, &pos, &ll);
		lineno++;
		/* a line's error: a format of one string (arg) or of none, reported at the end of the
		 * loop; those of the field count take it too (fields) */
		const char *fmt, *arg = NULL;
		_Static_assert(CREDS_LINE_MAX == 1024, "the text below");
		fmt = "line longer than 1024 bytes";
		if (ll > CREDS_LINE_MAX)
			goto bad;
		fmt = "NUL byte in the line";
		if (memchr(s, 0, ll))
			goto bad;
		fmt = "%s";
		if (split(s, ll, &f, &arg) < 0)
			goto bad;
		if (f.n == 0)
			continue;
		int token = 0;
		if (f.n == 4 && !f.quoted[2] && str_caseeq(f.v[2], "xoauth2")) {
			token = 1;
			fmt = "the token file must be an absolute path";
			if (f.v[3][0] != '/')
				goto bad;
		} else if (f.n == 4 || f.n > 4) {
			fmt = "%d fields: expected HOST USER PASSWORD or HOST USER xoauth2 TOKENFILE (quote a password that holds "
			      "spaces)";
			goto fields;
		} else if (f.n < 3) {
			fmt = "%d field%s: expected HOST USER PASSWORD";
			arg = f.n == 1 ? "" : "s";
			goto fields;
		}
		if (chk)
			check_line(chk, file, lineno, &f, token, report, ctx);
		char *ehost = f.v[0];
		int eport;
		fmt = "bad HOST field (HOST, HOST:PORT, [ADDRESS][:PORT] or *)";
		if (split_host(ehost, &eport) < 0)
			goto bad;
		fmt = "empty %s";
		arg = f.v[1][0] ? "password" : "user name";
		if (!f.v[1][0] || !f.v[2][0])
			goto bad;
		int r = host ? rank(ehost, eport, want, port) : 0;
		if (r > best && out) {
			best = r;
			str_lcpy(out->host, ehost, sizeof out->host);
			str_lcpy(out->user, f.v[1], sizeof out->user);
			str_lcpy(out->secret, token ? f.v[3] : f.v[2], sizeof out->secret);
			out->is_token_file = token;
			out->line = lineno;
		}
		continue;
	fields:
		conf_reportf(report, ctx, file, lineno, fmt, f.n, arg);
		errors++;
		continue;
	bad:
		conf_reportf(report, ctx, file, lineno, fmt, arg);
		errors++;
	}
	explicit_bzero(&f, sizeof f);
	if (errors) {
		if (out)
			creds_wipe(out);
		return -1;
	}
	return best > 0;
}

int creds_parse(const char *file, const char *text, size_t len, const char *host, int port,
                struct creds *out, conf_report_fn *report, void *ctx)
{
	return parse(file, text, len, host, port, out, report, ctx, NULL);
}

int creds_lookup(const char *path, const char *host, int port, struct creds *out,
                 conf_report_fn *report, void *ctx)
{
	char *text;
	size_t len;
	char why[160];
	if (!path || !path[0])
		return 0;
	if (secfile_read(path, CREDS_FILE_MAX, &text, &len, why, sizeof why) < 0) {
		if (errno == ENOENT)
			return 0;
		conf_reportf(report, ctx, path, 0, "%s", why);
		return -1;
	}
	int r = creds_parse(path, text, len, host, port, out, report, ctx);
	secfile_free(text, len);
	return r;
}

/* The token in path into out: 0, or -1 with the reason in why (never the token). agent: the
 * agents' uid as secfile_read_owned() takes it, or AGENT_FROM_ENV. */
#define AGENT_FROM_ENV ((uid_t)-2)
static int read_token(const char *path, uid_t agent, char *out, size_t size, char *why, size_t whysize)
{
	char *text;
	size_t len;
	if (size)
		out[0] = 0;
	if ((agent == AGENT_FROM_ENV ? secfile_read(path, CREDS_TOKEN_MAX, &text, &len, why, whysize)
	                             : secfile_read_owned(path, CREDS_TOKEN_MAX, agent, &text, &len, why, whysize)) < 0)
		return -1;
	size_t a = 0, b = len;
	while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r' || text[a] == '\n'))
		a++;
	while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r' || text[b - 1] == '\n'))
		b--;
	const char *bad = NULL;
	if (a == b)
		bad = "is empty";
	for (size_t i = a; i < b && !bad; i++)
		if ((unsigned char)text[i] <= ' ' || (unsigned char)text[i] >= 0x7f)
			bad = "holds more than one printable word";
	if (!bad && b - a >= size)
		bad = "holds a token too long";
	if (bad) {
		str_lcpy(why, bad, whysize);
		secfile_free(text, len);
		return -1;
	}
	memcpy(out, text + a, b - a);
	out[b - a] = 0;
	secfile_free(text, len);
	return (int)(b - a);
}

int creds_read_token(const char *path, char *out, size_t size, conf_report_fn *report, void *ctx)
{
	char why[160];
	int r = read_token(path, AGENT_FROM_ENV, out, size, why, sizeof why);
	if (r < 0)
		conf_reportf(report, ctx, path, 0, "token file %s", why);
	return r;
}

void creds_wipe(struct creds *c)
{
	explicit_bzero(c, sizeof *c);
}

/* 1 when the HOST field of a line fits none of the smarthost entries. */
static int unused_line(const char *field, const struct smarthost *sh, size_t n)
{
	char h[CREDS_FIELD_MAX];
	int port;
	if (str_lcpy(h, field, sizeof h) >= sizeof h || split_host(h, &port) < 0 || strcmp(h, "*") == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (rank(h, port, sh[i].host, (int)smarthost_port(&sh[i])))
			return 0;
	return 1;
}

/* --check: a secret the smtp agent cannot read (it runs as AGENT_USER, not as root) is a
 * warning, not an error: AUTH is deferred with this reason in the log, everything else moves,
 * and an init script that runs --check first still starts the scheduler. */
static void agent_readable(const char *file, int lineno, const char *path, const struct conf *c,
                           const struct agent_ids *a, conf_report_fn *report, void *ctx)
{
	struct stat st;
	if (a->uid == 0 || lstat(path, &st) < 0 || st.st_uid == a->uid)
		return;
	const char *user = conf_str(c, CK_AGENT_USER);
	conf_reportf(report, ctx, file, lineno, CONF_WARNING "%.200s: owner uid %u, not AGENT_USER=%s: the smtp agent "
	             "cannot read it (AUTH deferred); fix: chown %s %.200s", path, (unsigned)st.st_uid, user, user, path);
}

struct check {
	const struct conf *c;
	const struct agent_ids *a;
	const struct smarthost *sh;
	int nsh;                     /* 0: no smarthost to compare hosts with */
	uid_t agent;
	int errors;
};

/* --check, one entry of a valid file: its host against the smarthosts, its token file. */
static void check_line(struct check *k, const char *file, int lineno, const struct fields *f, int token,
                       conf_report_fn *report, void *ctx)
{
	char why[160], tok[CREDS_TOKEN_MAX + 1];
	if (k->nsh > 0 && unused_line(f->v[0], k->sh, (size_t)k->nsh))
		conf_reportf(report, ctx, file, lineno, CONF_WARNING "host %.200s matches no SMARTHOST entry (%.200s), "
		             "so this line is never used; write the host as SMARTHOST does ([address] or name, "
		             ":port only when it names the same port)", f->v[0], conf_str(k->c, CK_SMARTHOST));
	if (!token)
		return;
	if (read_token(f->v[3], k->agent, tok, sizeof tok, why, sizeof why) < 0) {
		conf_reportf(report, ctx, file, lineno, "token file %.200s %s", f->v[3], why);
		k->errors++;
	} else {
		agent_readable(file, lineno, f->v[3], k->c, k->a, report, ctx);
	}
	explicit_bzero(tok, sizeof tok);
}

/* --check: the file and every token file it names; a missing credentials file is fine. */
int creds_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	const char *path = conf_str(c, CK_CREDENTIALS);
	char *text;
	size_t len;
	char why[160];
	if (!path || !path[0])
		return 0;
	/* the agents' user as this configuration names it (the environment may not) */
	struct agent_ids a;
	if (agentuser_ids(conf_str(c, CK_AGENT_USER), conf_str(c, CK_SUBMIT_GROUP), &a) == AGENTUSER_ROOT_FALLBACK)
		a.uid = 0;
	uid_t agent = a.uid ? a.uid : (uid_t)-1;
	if (secfile_read_owned(path, CREDS_FILE_MAX, agent, &text, &len, why, sizeof why) < 0) {
		if (errno == ENOENT)
			return 0;
		conf_reportf(report, ctx, path, 0, "%s", why);
		return 1;
	}
	agent_readable(path, 0, path, c, &a, report, ctx);
	int bad = parse(path, text, len, NULL, 0, NULL, report, ctx, NULL) < 0;
	/* with a smarthost every connection goes to one of its entries: a line naming another host
	 * is a mistake that silently leaves AUTH out (unless an entry is looked up by MX) */
	struct smarthost *sh = calloc(SMARTHOST_MAX, sizeof *sh);
	char err[160];
	int nsh = sh ? smarthost_parse(conf_str(c, CK_SMARTHOST), sh, SMARTHOST_MAX, err, sizeof err) : 0;
	for (int i = 0; i < nsh; i++)
		if (sh[i].mx)
			nsh = 0;
	/* the entries again, each token file reported at the line that names it */
	struct check k = {c, &a, sh, nsh, agent, bad};
	if (!bad)
		parse(path, text, len, NULL, 0, NULL, report, ctx, &k);
	secfile_free(text, len);
	free(sh);
	return k.errors;
}
