/* spoolbox.conf reader and the shared interval/size/bool parsers (see conf.h). */
#include "conf.h"
#include "fileio.h"
#include "util.h"
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every key's name and default, one after the other in one block, found by the name's 16-bit
 * offset (the default follows it): a table of two pointers and a type was 24 bytes a key, this
 * is 3 (issue 9 point 1). */
static const struct strs {
#define CONF(name, type, def, help) char n_##name[sizeof #name], d_##name[sizeof def];
#include "conf_keys.h"
#undef CONF
} strs = {
#define CONF(name, type, def, help) #name, def,
#include "conf_keys.h"
#undef CONF
};

/* each default right after its name, as conf_default() finds it */
#define CONF(name, type, def, help) \
	_Static_assert(offsetof(struct strs, d_##name) == offsetof(struct strs, n_##name) + sizeof #name, #name);
#include "conf_keys.h"
#undef CONF

static const unsigned short key_name[CK__COUNT] = {
#define CONF(name, type, def, help) offsetof(struct strs, n_##name),
#include "conf_keys.h"
#undef CONF
};

static const unsigned char key_type[CK__COUNT] = {
#define CONF(name, type, def, help) type,
#include "conf_keys.h"
#undef CONF
};

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) const char *conf_name(enum conf_key k)
{
	return (const char *)&strs + key_name[k];
}

const char *conf_default(enum conf_key k)
{
	const char *n = conf_name(k);
	return n + strlen(n) + 1;
}

enum conf_type conf_type_of(enum conf_key k)
{
	return (enum conf_type)key_type[k];
}

int conf_lookup(const char *name)
{
	for (int i = 0; i < CK__COUNT; i++)
		if (strcmp(conf_name((enum conf_key)i), name) == 0)
			return i;
	return -1;
}

/* Reads the run of digits at *s (at least one) into *n, at most max; advances *s past it.
 * Returns 0, or -1 for no digit or a value above max. */
static int digits(const char **s, long long max, long long *n)
{
	const char *p = *s;
	long long v = 0;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	*s = p;
	*n = v;
	return 0;
}

int parse_count(const char *s, long long max, long long *out)
{
	return digits(&s, max, out) < 0 || *s ? -1 : 0;
}

int parse_interval(const char *s, long long *out)
{
	long long total = 0;
	if (!*s)
		return -1;
	while (*s) {
		long long n;
		if (digits(&s, LLONG_MAX, &n) < 0)
			return -1;
		long long mul = 1;
		switch (*s) {
		case 'd': mul = 86400; s++; break;
		case 'h': mul = 3600; s++; break;
		case 'm': mul = 60; s++; break;
		case 's': s++; break;
		case 0: break;
		default: return -1;
		}
		if (n > (LLONG_MAX / mul) || total > LLONG_MAX - n * mul)
			return -1;
		total += n * mul;
	}
	*out = total;
	return 0;
}

int parse_size(const char *s, long long *out)
{
	long long n;
	if (digits(&s, LLONG_MAX, &n) < 0)
		return -1;
	long long mul = 1;
	switch (*s | 0x20) { /* the letters of either case, and nothing else */
	case 'k': mul = 1024LL; s++; break;
	case 'm': mul = 1024LL * 1024; s++; break;
	case 'g': mul = 1024LL * 1024 * 1024; s++; break;
	}
	if ((*s | 0x20) == 'b')
		s++;
	if (*s || n > LLONG_MAX / mul)
		return -1;
	*out = n * mul;
	return 0;
}

int parse_bool(const char *s, long long *out)
{
	/* the four words for yes, then the four for no, as one string */
	static const char words[] = "yes\0true\0on\0" "1\0no\0false\0off\0" "0";
	const char *w = words;
	for (int i = 0; i < 8; i++, w += strlen(w) + 1)
		if (str_caseeq(s, w))
			return *out = i < 4, 0;
	return -1;
}

/* Checks and stores the typed value; returns NULL or the reason it is wrong. */
static const char *typecheck(enum conf_key k, const char *v, long long *num)
{
	*num = 0;
	/* ifs, not a switch: its jump table is bigger than the comparisons */
	enum conf_type t = (enum conf_type)key_type[k];
	if (t == CT_BOOL)
		return parse_bool(v, num) ? "not a yes/no value" : NULL;
	if (t == CT_INT)
		return parse_count(v, LLONG_MAX, num) ? "not a non-negative whole number" : NULL;
	if (t == CT_SIZE)
		return parse_size(v, num) ? "not a size (like 10M, 512K or 2048)" : NULL;
	if (t == CT_INTERVAL)
		return parse_interval(v, num) ? "not an interval (like 1h5m20s, 10s or 3d)" : NULL;
	if (t == CT_PATH && *v && *v != '/')
		return "not an absolute path";
	return NULL;
}

void conf_init(struct conf *c)
{
	memset(c, 0, sizeof *c);
	for (int k = 0; k < CK__COUNT; k++)
		conf_unset(c, (enum conf_key)k);
}

void conf_free(struct conf *c)
{
	for (int k = 0; k < CK__COUNT; k++)
		free(c->val[k]);
	conf_init(c);
}

void conf_unset(struct conf *c, enum conf_key k)
{
	free(c->val[k]);
	c->val[k] = NULL;
	/* a default always parses; typecheck() leaves 0 where a value does not */
	typecheck(k, conf_default(k), &c->num[k]);
	c->origin[k] = CO_DEFAULT;
	c->line[k] = 0;
}

const char *conf_str(const struct conf *c, enum conf_key k)
{
	return c->val[k] ? c->val[k] : conf_default((enum conf_key)k);
}

long long conf_num(const struct conf *c, enum conf_key k)
{
	return c->num[k];
}

int conf_env_used(const struct conf *c)
{
	if (getenv(CONF_PATH_ENV))
		return 1;
	for (int k = 0; k < CK__COUNT; k++)
		if (c->origin[k] == CO_ENV)
			return 1;
	return 0;
}

void conf_vreportf(conf_report_fn *report, void *ctx, const char *file, int line, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (report)
		report(ctx, file, line, msg);
}

void conf_reportf(conf_report_fn *report, void *ctx, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_vreportf(report, ctx, file, line, fmt, ap);
	va_end(ap);
}

int conf_report_key(const struct conf *c, enum conf_key k, conf_report_fn *report, void *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_vreportf(report, ctx, c->origin[k] == CO_ENV ? "environment" : c->path[0] ? c->path : "spoolbox.conf",
	        c->origin[k] == CO_FILE ? c->line[k] : 0, fmt, ap);
	va_end(ap);
	return 1;
}

static int set_value(struct conf *c, enum conf_key k, const char *v, enum conf_origin o, int line,
                     const char *file, conf_report_fn *report, void *ctx)
{
	long long num;
	char *copy = NULL;
	/* (only the environment's can be too long: a line holds less) */
	const char *why = strlen(v) >= CONF_LINE_MAX ? "value too long" : typecheck(k, v, &num);
	if (!why && !(copy = strdup(v)))
		why = "out of memory";
	if (why) {
		conf_reportf(report, ctx, file, line, "%s: %s", conf_name(k), why);
		return 1;
	}
	free(c->val[k]);
	c->val[k] = copy;
	c->num[k] = num;
	c->origin[k] = (unsigned char)o;
	c->line[k] = line;
	return 0;
}

/* p past the blanks before end; noinline: one copy for the four places */
__attribute__((noinline)) static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Parses the value part of one line (after '=') into out. Returns NULL or the reason. */
static const char *parse_value(const char *p, const char *end, char *out, size_t size)
{
	size_t n = 0;
	p = skip_blank(p, end);
	if (p < end && *p == '"') {
		p++;
		for (;;) {
			if (p >= end)
				return "unterminated quoted value";
			char ch = *p++;
			if (ch == '"')
				break;
			if (ch == '\\') {
				if (p >= end)
					return "unterminated quoted value";
				ch = *p++;
				switch (ch) {
				case 'n': ch = '\n'; break;
				case 't': ch = '\t'; break;
				case '\\': case '"': case '$': break;
				default: return "unknown escape in quoted value (known: \\\" \\\\ \\n \\t \\$)";
				}
			}
			if (ch == 0)
				return "NUL byte in value";
			if (n + 1 >= size)
				return "value too long";
			out[n++] = ch;
		}
		p = skip_blank(p, end);
		if (p < end && *p != '#')
			return "text after the closing quote";
	} else {
		const char *start = p;
		while (p < end && !(*p == '#' && (p == start || p[-1] == ' ' || p[-1] == '\t'))) {
			if (*p == '"')
				return "quote inside an unquoted value";
			if (*p == 0)
				return "NUL byte in value";
			if (n + 1 >= size)
				return "value too long";
			out[n++] = *p++;
		}
		while (n && (out[n - 1] == ' ' || out[n - 1] == '\t'))
			n--;
	}
	out[n] = 0;
	return NULL;
}

const char *conf_line(const char *text, size_t len, size_t *pos, size_t *ll)
{
	const char *s = text + *pos;
	const char *nl = memchr(s, '\n', len - *pos);
	size_t l = nl ? (size_t)(nl - s) : len - *pos;
	*pos += l + (nl != NULL);
	if (l && s[l - 1] == '\r')
		l--;
	*ll = l;
	return s;
}

int conf_parse(struct conf *c, const char *file, const char *text, size_t len, conf_report_fn *report, void *ctx)
{
	int errors = 0, lineno = 0;
	size_t pos = 0;
	char value[CONF_LINE_MAX];
	char kname[64];
	while (pos < len) {
		size_t ll;
		const char *q = conf_line(text, len, &pos, &ll), *le = q + ll;
		lineno++;
		if (ll >= CONF_LINE_MAX) {
			conf_reportf(report, ctx, file, lineno, "line longer than %d bytes", CONF_LINE_MAX - 1);
			errors++;
			continue;
		}
		/* a line's error: its format takes kname and why (or neither), reported at the end */
		const char *fmt, *why = NULL;
		q = skip_blank(q, le);
		if (q == le || *q == '#')
			continue;
		const char *name = q;
		while (q < le && (*q == '_' || (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
			q++;
		size_t nlen = (size_t)(q - name);
		q = skip_blank(q, le);
		fmt = "expected NAME=value";
		if (nlen == 0 || q >= le || *q != '=')
			goto bad;
		fmt = "unknown key (name too long)";
		if (nlen >= sizeof kname)
			goto bad;
		memcpy(kname, name, nlen);
		kname[nlen] = 0;
		int k = conf_lookup(kname);
		fmt = "unknown key %s";
		if (k < 0)
			goto bad;
		fmt = "%s: %s";
		if ((why = parse_value(q + 1, le, value, sizeof value)))
			goto bad;
		if (c->origin[k] == CO_FILE) {
			conf_reportf(report, ctx, file, lineno, "duplicate key %s (first set on line %d)", kname, c->line[k]);
			errors++;
			continue;
		}
		errors += set_value(c, (enum conf_key)k, value, CO_FILE, lineno, file, report, ctx);
		continue;
	bad:
		conf_reportf(report, ctx, file, lineno, fmt, kname, why);
		errors++;
	}
	return errors;
}

extern char **environ;

/* The environment's value of key k, as getenv() finds it (the first entry of that name). The
 * keys' first letters are looked at before any comparison: every applet's start runs this for
 * all keys, and getenv() for each was a scan of the whole environment per key (66 000 of a
 * submit's 175 000 instructions in a login shell's 37 variables: docs/bench.md). */
/* noinline: its one caller is smaller without it inside (docs/size.md) */
__attribute__((noinline)) static const char *env_value(enum conf_key k)
{
	const char *n = conf_name(k);
	size_t l = strlen(n);
	for (char **e = environ; e && *e; e++)
		if (**e == *n && !strncmp(*e, n, l) && (*e)[l] == '=')
			return *e + l + 1;
	return NULL;
}

int conf_apply_env(struct conf *c, conf_report_fn *report, void *ctx)
{
	int errors = 0;
	for (int k = 0; k < CK__COUNT; k++) {
		const char *v = env_value((enum conf_key)k);
		if (v)
			errors += set_value(c, (enum conf_key)k, v, CO_ENV, 0, "environment", report, ctx);
	}
	return errors;
}

int conf_load(struct conf *c, const char *path, conf_report_fn *report, void *ctx)
{
	char *text;
	size_t len;
	int errors = 1;
	if (!path && (path = getenv(CONF_PATH_ENV)) && !*path) {
		conf_reportf(report, ctx, "environment", 0, "%s is set but empty", CONF_PATH_ENV);
	} else {
		const char *p = path ? path : DEFAULT_CONF_PATH;
		c->path[0] = 0;
		if (fio_slurp(p, CONF_FILE_MAX, &text, &len) < 0) {
			if (errno != ENOENT || path)
				conf_reportf(report, ctx, p, 0, "cannot read: %s", errno == EFBIG ? "file too large" : strerror(errno));
			else
				errors = 0;
		} else {
			str_lcpy(c->path, p, sizeof c->path);
			errors = conf_parse(c, p, text, len, report, ctx);
			free(text);
		}
	}
	return errors + conf_apply_env(c, report, ctx);
}

void conf_report_stderr(void *ctx, const char *file, int line, const char *reason)
{
	struct conf_stderr_ctx *s = ctx;
	const char *prefix = s->prefix; /* ctx and its prefix are always given (conf.h) */
	/* a checker's "warning: ..." is printed as one and not counted (conf.h) */
	if (str_starts(reason, CONF_WARNING))
		prefix = "warning", reason += strlen(CONF_WARNING);
	else
		s->count++;
	/* "file:line: " or "file: " (%.0d prints no 0) */
	fprintf(stderr, line > 0 ? "%s:%d: %s: %s\n" : "%s:%.0d %s: %s\n", file, line > 0 ? line : 0, prefix, reason);
}
