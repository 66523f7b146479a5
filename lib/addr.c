/* RFC 5322 / RFC 5321 address parsing (see addr.h). A small lexer turns the text into atoms,
 * quoted strings, domain literals and specials, skipping folding white space and (nested)
 * comments; a recursive-descent parser on top of it handles the address-list grammar including
 * its obsolete forms (CFWS between the dots of a local part, '.' in display names). */
#include "addr.h"
#include "util.h"
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#define COMMENT_DEPTH_MAX 32

enum tok { T_EOF, T_ATOM, T_QSTR, T_DLIT, T_SPECIAL };

struct token {
	enum tok type;
	size_t start, end; /* [start, end) in the input; for T_QSTR/T_DLIT the delimiters included */
	char c;            /* the character of a T_SPECIAL */
};

struct lex {
	const unsigned char *s;
	size_t n, pos;
	char *err;
	size_t errlen;
};

static int fail(struct lex *L, size_t at, const char *why)
{
	snprintf(L->err, L->errlen, "column %zu: %s", at + 1, why);
	return -1;
}

/* fail() for a quoted string (c '"') or a domain literal: "WHY quoted string".
 * noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static int fail_in(struct lex *L, size_t at, const char *why, unsigned char c)
{
	snprintf(L->err, L->errlen, "column %zu: %s %s", at + 1, why, c == '"' ? "quoted string" : "domain literal");
	return -1;
}

int addr_is_atext(unsigned char c)
{
	if (c >= 0x80)
		return 1; /* UTF-8 (RFC 6532); validated per token */
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return 1;
	return c && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL;
}

static int is_wsp(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Skips folding white space and comments. */
static int skip_cfws(struct lex *L)
{
	while (L->pos < L->n) {
		unsigned char c = L->s[L->pos];
		if (is_wsp(c)) {
			L->pos++;
			continue;
		}
		if (c != '(')
			return 0;
		size_t open = L->pos;
		int depth = 0;
		do {
			c = L->s[L->pos];
			if (c == '\\') {
				if (L->pos + 1 >= L->n)
					break;
				L->pos++;
			} else if (c == '(') {
				if (++depth > COMMENT_DEPTH_MAX)
					return fail(L, L->pos, "comments nested too deeply");
			} else if (c == ')') {
				depth--;
			} else if (c == 0) {
				return fail(L, L->pos, "NUL byte in comment");
			}
			L->pos++;
		} while (depth > 0 && L->pos < L->n);
		if (depth > 0)
			return fail(L, open, "unterminated comment");
	}
	return 0;
}

/* Reads the next token. Returns 0 or -1. */
static int next(struct lex *L, struct token *t)
{
	if (skip_cfws(L) < 0)
		return -1;
	t->start = L->pos;
	t->c = 0;
	if (L->pos >= L->n) {
		t->type = T_EOF;
		t->end = L->pos;
		return 0;
	}
	unsigned char c = L->s[L->pos];
	if (addr_is_atext(c)) {
		while (L->pos < L->n && addr_is_atext(L->s[L->pos]))
			L->pos++;
		t->type = T_ATOM;
		t->end = L->pos;
		return 0;
	}
	if (c == '"' || c == '[') {
		unsigned char close = c == '"' ? '"' : ']';
		L->pos++;
		while (L->pos < L->n && L->s[L->pos] != close) {
			unsigned char d = L->s[L->pos];
			int quoted_pair = 0;
			if (d == '\\') {
				if (++L->pos >= L->n)
					break;
				d = L->s[L->pos];
				quoted_pair = 1;
			}
			/* RFC 5322 quoted-pair is "\" (VCHAR / WSP): an escaped CR or LF would survive
			 * unfolding into the decoded local part and then into a header line */
			if (d == 0 || (d < 0x20 && (!is_wsp(d) || (quoted_pair && d != ' ' && d != '\t'))) || d == 0x7f)
				return fail_in(L, L->pos, "control character in", c);
			if (c == '[' && (d == '[' || is_wsp(d)))
				return fail(L, L->pos, "bad character in domain literal");
			L->pos++;
		}
		if (L->pos >= L->n)
			return fail_in(L, t->start, "unterminated", c);
		L->pos++;
		t->type = c == '"' ? T_QSTR : T_DLIT;
		t->end = L->pos;
		return 0;
	}
	if (strchr("()<>:;@\\,.", c) && c) {
		if (c == ')')
			return fail(L, L->pos, "unbalanced ')'");
		if (c == '\\')
			return fail(L, L->pos, "stray backslash");
		t->type = T_SPECIAL;
		t->c = (char)c;
		t->end = ++L->pos;
		return 0;
	}
	if (c == 0)
		return fail(L, L->pos, "NUL byte in address");
	if (c < 0x20 || c == 0x7f)
		return fail(L, L->pos, "control character in address");
	return fail(L, L->pos, "character not allowed in an address");
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static int peek(struct lex *L, struct token *t)
{
	size_t save = L->pos;
	int r = next(L, t);
	L->pos = save;
	return r;
}

static int is_special(const struct token *t, char c)
{
	return t->type == T_SPECIAL && t->c == c;
}

/* Takes the next token into t when it is the special c: 1 taken, 0 not there, -1 error. */
static int take(struct lex *L, struct token *t, char c)
{
	size_t save = L->pos;
	int r = next(L, t); /* lexed once: not a peek and then the same token again */
	if (r < 0 || !is_special(t, c)) {
		L->pos = save;
		return r;
	}
	return 1;
}

/* Appends the decoded text of an atom or quoted string to out[*len]. */
static int add_word(struct lex *L, const struct token *t, char *out, size_t *len, size_t max)
{
	size_t a = t->start, b = t->end;
	if (t->type == T_QSTR) {
		a++;
		b--;
	}
	for (size_t i = a; i < b; i++) {
		unsigned char c = L->s[i];
		if (t->type == T_QSTR) {
			if (c == '\\') {
				c = L->s[++i];
			} else if (c == '\r' || c == '\n') {
				continue; /* unfolding: the line break goes, the white space after it stays */
			}
		}
		if (*len >= max)
			return fail(L, t->start, "local part too long");
		out[(*len)++] = (char)c;
	}
	out[*len] = 0;
	return 0;
}

static int parse_domain(struct lex *L, struct addr *a)
{
	struct token t;
	size_t len = 0;
	if (next(L, &t) < 0)
		return -1;
	size_t first = t.start;
	if (t.type == T_DLIT) {
		len = t.end - t.start;
		if (len > ADDR_DOMAIN_MAX)
			return fail(L, t.start, "domain literal too long");
		memcpy(a->domain, L->s + t.start, len);
		a->literal = 1;
		a->end = t.end;
	} else {
		for (;;) {
			if (t.type != T_ATOM)
				return fail(L, t.start, t.type == T_EOF ? "missing domain after '@'"
				                        : is_special(&t, '.') ? "empty label in domain" : "bad domain");
			if (len + (t.end - t.start) + 1 > ADDR_DOMAIN_MAX)
				return fail(L, first, "domain too long");
			memcpy(a->domain + len, L->s + t.start, t.end - t.start);
			len += t.end - t.start;
			a->end = t.end;
			struct token d;
			int dot = take(L, &d, '.');
			if (dot < 0)
				return -1;
			if (!dot)
				break;
			a->domain[len++] = '.';
			if (next(L, &t) < 0)
				return -1;
		}
	}
	a->domain[len] = 0;
	char why[128];
	if (addr_domain_check(a->domain, len, why, sizeof why) < 0)
		return fail(L, first, why);
	for (size_t i = 0; i < len; i++)
		a->utf8 |= (unsigned char)a->domain[i] >= 0x80;
	return 0;
}

/* addr-spec, or a bare local part: word *("." word) ["@" domain]. Its dot loop has the shape
 * of parse_domain's, but words, limits and errors differ, so each keeps its own. */
static int parse_addr_spec(struct lex *L, struct addr *a)
{
	struct token t;
	size_t len = 0;
	memset(a, 0, sizeof *a);
	if (next(L, &t) < 0)
		return -1;
	a->start = t.start;
	for (;;) {
		if (t.type != T_ATOM && t.type != T_QSTR) {
			if (is_special(&t, '@'))
				return fail(L, t.start, "empty local part");
			if (t.type == T_EOF)
				return fail(L, t.start, "empty address");
			return fail(L, t.start, "bad local part");
		}
		if (add_word(L, &t, a->local, &len, ADDR_LOCAL_MAX) < 0)
			return -1;
		a->local_end = a->end = t.end;
		struct token d;
		int dot = take(L, &d, '.');
		if (dot < 0)
			return -1;
		if (!dot)
			break;
		if (len >= ADDR_LOCAL_MAX)
			return fail(L, d.start, "local part too long");
		a->local[len++] = '.';
		a->local[len] = 0;
		if (next(L, &t) < 0)
			return -1;
	}
	if (len == 0)
		return fail(L, a->start, "empty local part");
	for (size_t i = 0; i < len; i++)
		a->utf8 |= (unsigned char)a->local[i] >= 0x80;
	/* 8-bit text is fine in display names and comments; an address must be UTF-8 (RFC 6532) */
	if (a->utf8 && !addr_utf8_valid((const unsigned char *)a->local, len))
		return fail(L, a->start, "invalid UTF-8 in the local part");
	struct token at;
	int r = take(L, &at, '@');
	return r <= 0 ? r : parse_domain(L, a);
}

/* After '<': [obs-route ":"] addr-spec ">". */
static int parse_angle(struct lex *L, struct addr *a, size_t open)
{
	struct token t;
	if (peek(L, &t) < 0)
		return -1;
	if (is_special(&t, '>'))
		return fail(L, t.start, "empty address '<>'");
	if (is_special(&t, '@')) {
		/* obs-route: "@a,@b:" — a source route, ignored as RFC 5321 C says */
		for (;;) {
			if (next(L, &t) < 0)
				return -1;
			if (is_special(&t, ':'))
				break;
			if (t.type == T_EOF)
				return fail(L, open, "unterminated source route");
		}
	}
	if (parse_addr_spec(L, a) < 0)
		return -1;
	if (next(L, &t) < 0)
		return -1;
	if (!is_special(&t, '>'))
		return fail(L, t.start, t.type == T_EOF ? "missing '>'" : "unexpected text before '>'");
	return 0;
}

/* mailbox = name-addr / addr-spec; with allow_group, also group. Calls fn per mailbox and
 * returns the count, or -1. */
static int parse_address(struct lex *L, int allow_group, addr_each_fn *fn, void *ctx, int *stop)
{
	size_t save = L->pos;
	struct token t;
	int words = 0;
	for (;;) {
		if (next(L, &t) < 0)
			return -1;
		if (t.type == T_ATOM || t.type == T_QSTR || (words && is_special(&t, '.')))
			words++;
		else
			break;
	}
	struct addr a;
	if (is_special(&t, ':') && words) {
		if (!allow_group)
			return fail(L, t.start, "group inside a group");
		int count = 0;
		for (;;) {
			if (peek(L, &t) < 0)
				return -1;
			if (t.type == T_EOF)
				return count; /* a group missing its ';' at the end of the field: tolerated */
			if (is_special(&t, ';') || is_special(&t, ',')) {
				L->pos = t.end; /* taken: where next() would leave it */
				if (t.c == ';')
					return count;
				continue;
			}
			int r = parse_address(L, 0, fn, ctx, stop);
			if (r < 0 || *stop)
				return r;
			count += r;
			if (peek(L, &t) < 0)
				return -1;
			if (!is_special(&t, ',') && !is_special(&t, ';') && t.type != T_EOF)
				return fail(L, t.start, "expected ',' or ';' after an address in a group");
		}
	}
	if (is_special(&t, '<')) {
		if (parse_angle(L, &a, t.start) < 0)
			return -1;
	} else {
		L->pos = save;
		if (parse_addr_spec(L, &a) < 0)
			return -1;
	}
	if (fn) {
		int r = fn(ctx, &a);
		if (r) {
			*stop = r;
			return 1;
		}
	}
	return 1;
}

int addr_parse_list(const char *s, size_t n, addr_each_fn *fn, void *ctx, char *err, size_t errlen)
{
	struct lex L = {(const unsigned char *)s, n, 0, err, errlen};
	if (n > ADDR_INPUT_MAX)
		return fail(&L, 0, "address list too long");
	int count = 0, stop = 0;
	for (;;) {
		struct token t;
		if (peek(&L, &t) < 0)
			return -1;
		if (t.type == T_EOF)
			return count;
		if (is_special(&t, ',')) {
			L.pos = t.end; /* taken: where next() would leave it */
			continue;
		}
		int r = parse_address(&L, 1, fn, ctx, &stop);
		if (r < 0)
			return -1;
		if (stop)
			return stop;
		count += r;
		if (next(&L, &t) < 0)
			return -1;
		if (t.type == T_EOF)
			return count;
		if (!is_special(&t, ','))
			return fail(&L, t.start, "expected ',' between addresses");
	}
}

static int take_one(void *ctx, const struct addr *a)
{
	*(struct addr *)ctx = *a;
	return 0;
}

int addr_parse_one(const char *s, size_t n, struct addr *a, char *err, size_t errlen)
{
	struct lex L = {(const unsigned char *)s, n, 0, err, errlen};
	if (n > ADDR_INPUT_MAX)
		return fail(&L, 0, "address too long");
	int stop = 0;
	struct token t;
	int r = parse_address(&L, 0, take_one, a, &stop);
	if (r < 0)
		return -1;
	if (next(&L, &t) < 0)
		return -1;
	if (t.type != T_EOF)
		return fail(&L, t.start, is_special(&t, ',') ? "more than one address" : "unexpected text after the address");
	return 0;
}

int addr_parse_path(const char *s, size_t n, int allow_null, struct addr *a, size_t *used, char *err, size_t errlen)
{
	struct lex L = {(const unsigned char *)s, n, 0, err, errlen};
	size_t i = 0;
	memset(a, 0, sizeof *a);
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t a0, a1, after;
	if (i < n && s[i] == '<') {
		/* find the closing '>' outside quoted strings and literals */
		size_t j = i + 1;
		int inq = 0, inb = 0;
		for (; j < n; j++) {
			char c = s[j];
			if (c == '\\' && (inq || inb)) {
				j++;
				continue;
			}
			if (inq) {
				inq = c != '"';
			} else if (inb) {
				inb = c != ']';
			} else if (c == '"') {
				inq = 1;
			} else if (c == '[') {
				inb = 1;
			} else if (c == '>') {
				break;
			}
		}
		if (j >= n)
			return fail(&L, i, "missing '>'");
		a0 = i + 1;
		a1 = j;
		after = j + 1;
	} else {
		size_t j = i;
		while (j < n && s[j] != ' ' && s[j] != '\t')
			j++;
		a0 = i;
		a1 = after = j;
	}
	if (a0 == a1) {
		if (!allow_null)
			return fail(&L, i, "empty address");
		*used = after;
		return 1;
	}
	L.pos = a0;
	L.n = a1;
	struct token t;
	if (peek(&L, &t) < 0)
		return -1;
	if (is_special(&t, '@')) {
		for (;;) {
			if (next(&L, &t) < 0)
				return -1;
			if (is_special(&t, ':'))
				break;
			if (t.type == T_EOF)
				return fail(&L, a0, "unterminated source route");
		}
	}
	if (parse_addr_spec(&L, a) < 0)
		return -1;
	if (next(&L, &t) < 0)
		return -1;
	if (t.type != T_EOF)
		return fail(&L, t.start, "unexpected text in the address");
	*used = after;
	return 0;
}

int addr_local_needs_quotes(const char *local)
{
	const unsigned char *p = (const unsigned char *)local;
	if (!*p || *p == '.')
		return 1;
	for (; *p; p++) {
		if (*p == '.') {
			if (p[1] == '.' || p[1] == 0)
				return 1;
		} else if (!addr_is_atext(*p)) {
			return 1;
		}
	}
	return 0;
}

int addr_format(const struct addr *a, const char *qualify, char *out, size_t size)
{
	struct buf b;
	buf_init(&b, size ? size - 1 : 0);
	int bad = 0;
	if (addr_local_needs_quotes(a->local)) {
		bad |= buf_addc(&b, '"');
		for (const char *p = a->local; *p; p++) {
			if (*p == '"' || *p == '\\')
				bad |= buf_addc(&b, '\\');
			bad |= buf_addc(&b, *p);
		}
		bad |= buf_addc(&b, '"');
	} else {
		bad |= buf_adds(&b, a->local);
	}
	const char *d = a->domain[0] ? a->domain : qualify;
	if (d && *d) {
		bad |= buf_addc(&b, '@');
		bad |= buf_adds(&b, d);
	}
	int len = (int)b.len;
	if (!bad && size)
		memcpy(out, b.p ? b.p : "", b.len + 1);
	buf_free(&b);
	return bad || !size ? -1 : len;
}

int addr_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		unsigned min;
		unsigned cp;
		if ((c & 0xe0) == 0xc0) {
			len = 2, min = 0x80, cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, min = 0x800, cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, min = 0x10000, cp = c & 0x07;
		} else {
			return 0;
		}
		if (i + len > n)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static int why(char *err, size_t errlen, const char *text)
{
	str_lcpy(err, text, errlen);
	return -1;
}

int addr_domain_check(const char *d, size_t n, char *err, size_t errlen)
{
	if (n == 0)
		return why(err, errlen, "empty domain");
	if (n > ADDR_DOMAIN_MAX)
		return why(err, errlen, "domain too long");
	if (d[0] == '[') {
		char lit[64];
		if (n < 3 || d[n - 1] != ']' || n - 2 >= sizeof lit)
			return why(err, errlen, "bad domain literal");
		memcpy(lit, d + 1, n - 2);
		lit[n - 2] = 0;
		unsigned char bin[16];
		if (str_ncaseeq(lit, "IPv6:", 5)) {
			if (inet_pton(AF_INET6, lit + 5, bin) == 1)
				return 0;
			return why(err, errlen, "bad IPv6 address literal");
		}
		if (inet_pton(AF_INET, lit, bin) == 1)
			return 0;
		return why(err, errlen, "domain literal is not an IPv4 or IPv6: address");
	}
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)d[i];
		if (c == '.') {
			if (label == 0)
				return why(err, errlen, "empty label in domain");
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c >= 0x80))
			return why(err, errlen, "character not allowed in a domain name");
		if (++label > ADDR_LABEL_MAX)
			return why(err, errlen, "domain label longer than 63 bytes");
	}
	if (label == 0)
		return why(err, errlen, "domain ends with '.'");
	if (!addr_utf8_valid((const unsigned char *)d, n))
		return why(err, errlen, "invalid UTF-8 in domain");
	return 0;
}
