/* The aliases file parser and the target-list splitter shared with .forward and :include:
 * files (see aliases.h; the syntax is documented in docs/local.md). */
#include "aliases.h"
#include "fileio.h"
#include "fmt.h"
#include "util.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Checks one decoded target and hands it to fn. quoted: the target was written with quotes
 * ("/path with space", "john doe"@example.com), so blanks inside are meant; unquoted, a blank
 * in an address or path is a missing comma. */
static int classify(const char *t, size_t n, int quoted, alias_target_fn *fn, void *ctx, char *err, size_t errlen)
{
	while (n && is_space(t[n - 1]))
		n--;
	if (n == 0) {
		str_fmt(err, errlen, "empty target");
		return -1;
	}
	if (n > ALIASES_TARGET_MAX) {
		str_fmt(err, errlen, "target longer than %d bytes", ALIASES_TARGET_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			str_fmt(err, errlen, "control character in target");
			return -1;
		}
	}
	enum alias_tkind kind = AT_ADDR;
	const char *p = t, *why = "";
	size_t len = n;
	if (t[0] == '|') {
		kind = AT_COMMAND;
		p++, len--;
		while (len && is_space(*p))
			p++, len--;
		if (!len) {
			str_fmt(err, errlen, "empty |command");
			return -1;
		}
	} else if (t[0] == '/') {
		kind = AT_FILE;
		if (memchr(t, '\t', n) || (!quoted && memchr(t, ' ', n)) || len >= 4000) {
			str_fmt(err, errlen, "bad file path '%.*s'", (int)(n > 80 ? 80 : n), t);
			return -1;
		}
	} else if (n >= 9 && str_ncaseeq(t, ":include:", 9)) {
		kind = AT_INCLUDE;
		p += 9, len -= 9;
		while (len && is_space(*p))
			p++, len--;
		if (!len || *p != '/' || (!quoted && (memchr(p, ' ', len) || memchr(p, '\t', len)))) {
			str_fmt(err, errlen, ":include: needs an absolute path");
			return -1;
		}
	} else {
		if (t[0] == '\\') {
			kind = AT_NOALIAS;
			p++, len--;
		}
		if (len >= 2 && p[0] == '<' && p[len - 1] == '>')
			p++, len -= 2;
		if (!len || len > 998)
			goto bad_address;
		for (size_t i = 0; i < len; i++) {
			char c = p[i];
			if ((!quoted && (c == ' ' || c == '\t')) || c == '<' || c == '>' || c == ',' ||
			    (kind == AT_NOALIAS && (c == '@' || c == '"'))) {
				why = c == ' ' || c == '\t' ? " (missing comma?)" : "";
				goto bad_address;
			}
		}
		if (p[0] == '@' || p[len - 1] == '@')
			goto bad_address;
	}
	return fn ? (fn(ctx, kind, p, len) ? 1 : 0) : 0;
bad_address: /* one text for the three findings, why after it */
	str_fmt(err, errlen, "bad address '%.*s'%s", (int)(n > 80 ? 80 : n), t, why);
	return -1;
}

int aliases_targets(const char *text, size_t len, int lines, alias_target_fn *fn, void *ctx, char *err, size_t errlen)
{
	char tok[ALIASES_TARGET_MAX + 2];
	size_t i = 0;
	int rc = 0, bol = 1;
	while (i < len && rc == 0) {
		char c = text[i];
		if (is_space(c) || c == '\n' || c == ',') {
			if (c == '\n')
				bol = 1;
			i++;
			continue;
		}
		if (lines && bol && c == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		bol = 0;
		/* One target: collect decoded bytes up to an unquoted comma or newline. */
		size_t n = 0, start = i;
		int quoted = 0, inq = 0, all_quoted = (c == '"'), closed = 0;
		for (; i < len; i++) {
			c = text[i];
			if (!inq && (c == ',' || c == '\n'))
				break;
			if (c == '\0') {
				str_fmt(err, errlen, "NUL byte in target list");
				rc = -1;
				break;
			}
			if (c == '"') {
				if (!inq && closed)
					all_quoted = 0;
				inq = !inq;
				quoted = 1;
				if (!inq)
					closed = 1;
				continue;
			}
			if (inq && c == '\\' && i + 1 < len && text[i + 1] != '\n') {
				c = text[++i];
			} else if (!inq && closed && !is_space(c)) {
				all_quoted = 0;
			}
			if (n > ALIASES_TARGET_MAX) {
				str_fmt(err, errlen, "target longer than %d bytes", ALIASES_TARGET_MAX);
				rc = -1;
				break;
			}
			tok[n++] = c;
		}
		if (rc)
			break;
		if (inq) {
			str_fmt(err, errlen, "unterminated quote");
			rc = -1;
			break;
		}
		/* Quotes around a whole target only group it ("|cmd a, b"); quotes inside an
		 * address are part of its local part and keep their meaning: then the raw text, quotes
		 * included, is the target. */
		const char *t = tok;
		if (quoted && !all_quoted)
			t = text + start, n = i - start;
		rc = classify(t, n, quoted, fn, ctx, err, errlen);
	}
	return rc < 0 ? -1 : 0;
}

/* ---- the file ---- */

struct pstate {
	struct aliases *a;
	const char *file;
	aliases_report_fn *report;
	void *ctx;
	size_t cap;
	struct buf ent;   /* the entry being assembled: name ':' rhs */
	int ent_line;
};

/* finding: on x86-64 an entry into lib/fmt.c's shared variadic prologue (FMT_VA_ENTRY), which
 * calls finding_v with the va_list; elsewhere a C function. Global for the entry's symbol. */
void aliases_finding(struct pstate *s, int line, const char *fmt, ...) PRINTF_LIKE(3, 4);
#define finding aliases_finding
__attribute__((used)) static void finding_v(struct pstate *s, int line, const char *fmt, long d, va_list ap)
{
	char reason[400];
	(void)d;
	vsnprintf(reason, sizeof reason, fmt, ap);
	for (char *p = reason; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	if (s->a->errors++ == 0)
		str_fmt(s->a->first_error, sizeof s->a->first_error, "%s:%d: %s", s->file, line, reason);
	if (s->report)
		s->report(s->ctx, s->file, line, reason);
}

FMT_VA_ENTRY(aliases_finding, 3, finding_v);
#if !FMT_VA_ASM
void finding(struct pstate *s, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	finding_v(s, line, fmt, 0, ap);
	va_end(ap);
}
#endif

/* Parses the assembled entry "name: rhs" and keeps it when it is valid. */
static void finish_entry(struct pstate *s)
{
	if (s->ent_line == 0)
		return;
	int line = s->ent_line;
	s->ent_line = 0;
	const char *p = s->ent.p, *end = s->ent.p + s->ent.len;
	char name[ALIASES_NAME_MAX + 1];
	size_t n = 0;
	if (s->ent.len >= ALIASES_ENTRY_MAX) {
		finding(s, line, "entry longer than %d bytes", ALIASES_ENTRY_MAX);
		return;
	}
	/* a "quoted name" (backslash escapes) up to its quote, else up to ':' or a blank: one loop */
	int quoted = *p == '"';
	for (p += quoted; p < end && (quoted ? *p != '"' : *p != ':' && !is_space(*p) && *p != '\n'); p++) {
		if (quoted && *p == '\\' && p + 1 < end)
			p++;
		if (n >= ALIASES_NAME_MAX) {
			finding(s, line, "alias name longer than %d bytes", ALIASES_NAME_MAX);
			return;
		}
		name[n++] = lower(*p);
	}
	if (quoted) {
		if (p >= end) {
			finding(s, line, "unterminated quoted name");
			return;
		}
		p++;
	}
	name[n] = 0;
	while (p < end && is_space(*p))
		p++;
	if (p >= end || *p != ':') {
		finding(s, line, "missing ':' after the alias name");
		return;
	}
	p++;
	if (n == 0) {
		finding(s, line, "empty alias name");
		return;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) {
			finding(s, line, "control character in alias name");
			return;
		}
	char err[300];
	size_t rlen = (size_t)(end - p);
	int any = 0;
	for (size_t i = 0; i < rlen; i++)
		if (!is_space(p[i]) && p[i] != '\n')
			any = 1;
	if (!any) {
		finding(s, line, "alias '%s' has no targets", name);
		return;
	}
	if (aliases_targets(p, rlen, 0, NULL, NULL, err, sizeof err) < 0) {
		finding(s, line, "alias '%s': %s", name, err);
		return;
	}
	if (s->a->n >= ALIASES_ENTRIES_MAX) {
		finding(s, line, "more than %d aliases", ALIASES_ENTRIES_MAX);
		return;
	}
	if (s->a->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct alias_entry *ne = realloc(s->a->e, cap * sizeof *ne);
		if (!ne) {
			finding(s, line, "out of memory");
			return;
		}
		s->a->e = ne;
		s->cap = cap;
	}
	/* the name and the targets in one allocation (freed by the name) */
	char *nm = malloc(n + 1 + rlen + 1);
	if (!nm) {
		finding(s, line, "out of memory");
		return;
	}
	char *rhs = nm + n + 1;
	memcpy(nm, name, n + 1);
	memcpy(rhs, p, rlen);
	rhs[rlen] = 0;
	s->a->e[s->a->n++] = (struct alias_entry){nm, rhs, line};
}

static int cmp_entry(const void *x, const void *y)
{
	const struct alias_entry *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : a->line - b->line;
}

int aliases_parse(struct aliases *a, const char *file, const char *text, size_t len, aliases_report_fn *report, void *ctx)
{
	memset(a, 0, sizeof *a);
	struct pstate s = {a, file, report, ctx, 0, {0}, 0};
	buf_init(&s.ent, ALIASES_ENTRY_MAX);
	int line = 0;
	size_t pos = 0;
	while (pos < len) {
		const char *l = text + pos;
		const char *nl = memchr(l, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - l) : len - pos;
		pos += ll + (nl ? 1 : 0);
		line++;
		size_t k = 0;
		while (k < ll && is_space(l[k]))
			k++;
		if (k == ll) { /* blank line: ends the entry */
			finish_entry(&s);
			continue;
		}
		if (l[k] == '#') /* comment: transparent inside an entry */
			continue;
		if (k > 0) { /* continuation */
			if (!s.ent_line) {
				finding(&s, line, "continuation line without an alias before it");
				continue;
			}
			if (buf_addc(&s.ent, '\n') < 0 || buf_add(&s.ent, l, ll) < 0) {
				/* over the limit: mark the entry over-long; finish_entry reports it */
				s.ent.len = ALIASES_ENTRY_MAX;
			}
			continue;
		}
		finish_entry(&s);
		buf_reset(&s.ent);
		s.ent_line = line;
		if (buf_add(&s.ent, l, ll) < 0)
			s.ent.len = ALIASES_ENTRY_MAX;
		if (s.ent.len < ALIASES_ENTRY_MAX && memchr(l, '\0', ll)) {
			finding(&s, line, "NUL byte");
			s.ent_line = 0;
		}
	}
	finish_entry(&s);
	buf_free(&s.ent);
	if (a->n)
		qsort(a->e, a->n, sizeof *a->e, cmp_entry);
	/* Duplicates: the first one wins, the others are errors (sendmail takes the last one,
	 * Postfix the first: an admin must not have to know which). */
	size_t w = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (w > 0 && strcmp(a->e[w - 1].name, a->e[i].name) == 0) {
			finding(&s, a->e[i].line, "duplicate alias '%s' (first at line %d)", a->e[i].name, a->e[w - 1].line);
			free(a->e[i].name); /* and rhs */
			continue;
		}
		a->e[w++] = a->e[i];
	}
	a->n = w;
	return a->errors;
}

int aliases_load(struct aliases *a, const char *path, aliases_report_fn *report, void *ctx)
{
	char *text = NULL;
	size_t len = 0;
	if (fio_slurp(path, ALIASES_FILE_MAX, &text, &len) < 0) {
		int e = errno;
		memset(a, 0, sizeof *a);
		if (e == ENOENT)
			return 0;
		a->errors = 1;
		const char *why = e == EFBIG ? "larger than the limit of 4 MiB" : strerror(e);
		str_fmt(a->first_error, sizeof a->first_error, "%s: %s", path, why);
		if (report)
			report(ctx, path, 0, why);
		return 1;
	}
	int r = aliases_parse(a, path, text, len, report, ctx);
	free(text);
	return r;
}

const char *aliases_lookup(const struct aliases *a, const char *name)
{
	/* name is in lower case, as the names kept are (every caller's is: expand_local's lname,
	 * "*", "owner-" and lname); a longer one than ALIASES_NAME_MAX matches none */
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, a->e[mid].name);
		if (c == 0)
			return a->e[mid].rhs;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

void aliases_free(struct aliases *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->e[i].name); /* and rhs */
	}
	free(a->e);
	memset(a, 0, sizeof *a);
}
