/* scheduler.conf parser, clause resolution and command expansion (see schedconf.h). */
#include "schedconf.h"
#include "fileio.h"
#include "util.h"
#include <errno.h>
#include "glob.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seed 000's example configuration, with our applets as the commands. group=daemon is left out:
 * a minimal image may have no such group, and a TA that cannot start delivers nothing; so is
 * skew=5, which has no effect (spoolbox --check warns about it). The agents run as AGENT_USER
 * (they parse the network: DNS, SMTP replies, X.509), local as root, which it needs to become
 * each recipient (docs/spool.md 8.1; issue 9 point 9). */
const char schedconf_builtin[] =
    "# Default values\n"
    "*/*\n"
    "\tinterval=1m expiry=3d retries=\"1 1 2 3 5 8 13 21 34\"\n"
    "\tmaxring=0 maxta=0 user=$AGENT_USER\n"
    "# Boilerplate parameters for local delivery and service channels\n"
    "local/*\n"
    "\tinterval=10s expiry=3h maxchannel=2 maxthr=1 command=local user=root\n"
    "error\n"
    "\tinterval=5m maxchannel=10 command=errormail\n"
    "hold/*\n"
    "\tinterval=5m maxchannel=1 maxthr=1 command=hold\n"
    "smtp\n"
    "\tmaxchannel=10 maxring=5 command=smtp\n";

static const unsigned default_retries[] = {1, 1, 2, 3, 5, 8, 13, 21, 34};

enum vtype { VT_INTERVAL, VT_INT, VT_RETRIES, VT_NAME, VT_COMMAND, VT_KEYWORD, VT_CONC };

/* The variables' names in enum sc_var order, one string (a name's position is its SV_ value:
 * no table of pointers), and their types. */
static const char var_names[] =
	"interval\0" "idlemax\0" "expiry\0" "expiry2\0" "retries\0" "maxta\0" "maxchannel\0" "maxring\0"
	"maxthr\0" "overfeed\0" "skew\0" "user\0" "group\0" "command\0" "queueonly\0" "timelimit\0"
	"maxrcpt\0"
	/* per-destination concurrency (issue 14 points 2-3): VT_CONC */
	"initial_destination_concurrency\0" "destination_concurrency_limit\0"
	"destination_concurrency_positive_feedback\0" "destination_concurrency_negative_feedback\0"
	"destination_concurrency_failed_cohort_limit\0"
	/* preemption (issue 14 point 4): VT_CONC too */
	"delivery_slot_cost\0" "delivery_slot_discount\0" "delivery_slot_loan\0"
	"minimum_delivery_slots\0"
	/* in-core recipients (issue 14 point 5) */
	"recipient_limit\0" "extra_recipient_limit\0" "recipient_refill_limit\0"
	"recipient_refill_delay\0";
static const unsigned char var_type[SV__COUNT] = {
	VT_INTERVAL, VT_INTERVAL, VT_INTERVAL, VT_INTERVAL, VT_RETRIES, VT_INT, VT_INT, VT_INT, VT_INT,
	VT_INT, VT_INT, VT_NAME, VT_NAME, VT_COMMAND, VT_KEYWORD, VT_INTERVAL, VT_INT, VT_CONC, VT_CONC,
	VT_CONC, VT_CONC, VT_CONC, VT_CONC, VT_CONC, VT_CONC, VT_CONC, VT_INT, VT_INT, VT_INT,
	VT_INTERVAL
};

/* Which member of struct sc_params each variable sets (two for retries and the feedbacks). */
#define FIELD(v, m) {v, offsetof(struct sc_params, m), sizeof(((struct sc_params *)0)->m)}
static const struct {
	unsigned char var, off, len;
} fields[] = {
	FIELD(SV_INTERVAL, interval),         FIELD(SV_IDLEMAX, idlemax),         FIELD(SV_EXPIRY, expiry),
	FIELD(SV_EXPIRY2, expiry2),           FIELD(SV_RETRIES, retries),         FIELD(SV_RETRIES, nretries),
	FIELD(SV_MAXTA, maxta),               FIELD(SV_MAXCHANNEL, maxchannel),   FIELD(SV_MAXRING, maxring),
	FIELD(SV_MAXTHR, maxthr),             FIELD(SV_OVERFEED, overfeed),       FIELD(SV_SKEW, skew),
	FIELD(SV_USER, user),                 FIELD(SV_GROUP, group),             FIELD(SV_COMMAND, command),
	FIELD(SV_QUEUEONLY, queueonly),       FIELD(SV_TIMELIMIT, timelimit),     FIELD(SV_MAXRCPT, maxrcpt),
	FIELD(SV_INIT_CONC, init_conc),       FIELD(SV_CONC_LIMIT, conc_limit),   FIELD(SV_POS_FEEDBACK, pos_style),
	FIELD(SV_POS_FEEDBACK, pos_x),        FIELD(SV_NEG_FEEDBACK, neg_style),  FIELD(SV_NEG_FEEDBACK, neg_x),
	FIELD(SV_COHORT_LIMIT, cohort_limit), FIELD(SV_SLOT_COST, slots.cost),       FIELD(SV_SLOT_DISCOUNT, slots.discount),
	FIELD(SV_SLOT_LOAN, slots.loan),      FIELD(SV_MIN_SLOTS, slots.min_slots),
	FIELD(SV_RCPT_LIMIT, rcpt_limit),     FIELD(SV_EXTRA_RCPT_LIMIT, extra_rcpt_limit),
	FIELD(SV_REFILL_LIMIT, refill_limit), FIELD(SV_REFILL_DELAY, refill_delay),
};
#undef FIELD
_Static_assert(sizeof(struct sc_params) < 256, "fields[] keeps offsets in a byte");

/* Sets number variable var of p to x (an int or a long long member, as fields[] says). */
static void set_number(struct sc_params *p, int var, long long x)
{
	for (size_t i = 0; i < ARRAY_LEN(fields); i++)
		if (fields[i].var == var) {
			if (fields[i].len == sizeof(long long))
				*(long long *)((char *)p + fields[i].off) = x;
			else
				*(int *)((char *)p + fields[i].off) = (int)x;
			return;
		}
}

void sc_params_default(struct sc_params *p)
{
	memset(p, 0, sizeof *p);
	p->interval = 60;
	p->expiry = 3 * 86400;
	p->retries = default_retries;
	p->nretries = ARRAY_LEN(default_retries);
	/* maxthr 0: the destination concurrency below is the limit (issue 13 point 2) */
	p->maxthr = 0;
	/* small (issue 11 point 1): jobs an agent holds when the scheduler dies are repeated after a
	 * restart if the agent still delivers them (ours do not, see lib/ta.c; any agent may) */
	p->overfeed = 2;
	p->skew = 5;
	p->timelimit = 18000; /* Postfix's transport_time_limit */
	/* Postfix's defaults for the per-destination concurrency */
	p->init_conc = 5;
	p->conc_limit = 20;
	p->pos_style = p->neg_style = SFB_FIXED;
	p->pos_x = p->neg_x = 1;
	p->cohort_limit = 1;
	/* Postfix's defaults for preemption (seed 004) */
	p->slots = (struct spr_params){5, 50, 3, 3};
	/* and for the in-core recipients */
	p->rcpt_limit = 20000;
	p->extra_rcpt_limit = 1000;
	p->refill_limit = 100;
	p->refill_delay = 5;
}

void schedconf_init(struct schedconf *c)
{
	memset(c, 0, sizeof *c);
	c->rcpt_limit = 20000;
	c->rcpt_minimum = 10;
}

void schedconf_free(struct schedconf *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct sc_clause *k = &c->cl[i];
		/* a clause's own values are its allocations (merged copies only point at them) */
		free(k->chan_pat);
		free((void *)k->p.retries);
		free((void *)k->p.user);
		free((void *)k->p.group);
		free((void *)k->p.command);
	}
	free(c->cl);
	for (size_t i = 0; i < c->nhc; i++)
		free(c->hc[i].pat);
	free(c->hc);
	free(c->mailqpath);
	free(c->authfile);
	schedconf_init(c);
}

struct parser {
	struct schedconf *c;
	const char *file;
	int line;
	int errors;
	conf_report_fn *report;
	void *ctx;
};

/* A finding: an error, or (its format starting with CONF_WARNING, as warn() makes it) a warning,
 * a key that is accepted and has no effect (issue 14 point 8), which counts as no error: warn()
 * takes back the one bad() counts. */
static void bad(struct parser *ps, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void bad(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ps->errors++; /* (warn() took one off before) */
	conf_vreportf(ps->report, ps->ctx, ps->file, ps->line, fmt, ap);
	va_end(ap);
}
#define warn(ps, ...) ((ps)->errors--, bad(ps, CONF_WARNING __VA_ARGS__))

/* A copy of val, or NULL with "out of memory" reported: the scheduler's reload then keeps its
 * old configuration instead of exiting (issue 9 point 8). */
static char *dup_val(struct parser *ps, const char *val)
{
	char *d = strdup(val);
	if (!d)
		bad(ps, "out of memory");
	return d;
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* noinline: one copy for the nine places that skip blanks */
__attribute__((noinline)) static const char *skip_space(const char *p)
{
	while (is_space(*p))
		p++;
	return p;
}

static int is_name(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

static int parse_retries(struct parser *ps, const char *v, const unsigned **out, unsigned *count)
{
	unsigned tmp[SC_RETRIES_MAX];
	unsigned n = 0;
	const char *p = v;
	while (*p) {
		p = skip_space(p);
		if (!*p)
			break;
		/* a number of at most 15 digits (as parse_count() on a 16-byte copy had it), <= SC_RETRY_MAX */
		size_t len = 0;
		long long x = 0;
		int ok = 1;
		for (; p[len] && !is_space(p[len]); len++)
			ok = ok && p[len] >= '0' && p[len] <= '9' && (x = x * 10 + (p[len] - '0')) <= SC_RETRY_MAX;
		if (!ok || len >= 16) {
			bad(ps, "retries: '%.*s' is not a number from 0 to %d", (int)(len > 40 ? 40 : len), p, SC_RETRY_MAX);
			return -1;
		}
		if (n == SC_RETRIES_MAX) {
			bad(ps, "retries: more than %d elements", SC_RETRIES_MAX);
			return -1;
		}
		tmp[n++] = (unsigned)x;
		p += len;
	}
	if (!n) {
		bad(ps, "retries: empty sequence");
		return -1;
	}
	unsigned *a = malloc(n * sizeof *a);
	if (!a) {
		bad(ps, "out of memory");
		return -1;
	}
	*out = memcpy(a, tmp, n * sizeof *a);
	*count = n;
	return 0;
}

/* ---- per-destination concurrency keys (issue 14 points 2-3) ---- */

/* A decimal "D[.DDDDDD]" at *pp, at most 1000000: its value, and *pp past it; -1 when there is
 * none. Not strtod: that pulls musl's whole float scanner (6 KiB) into the static binary. */
static double decimal(const char **pp)
{
	const char *p = *pp;
	double v = 0, scale = 1;
	int digits = 0;
	for (; *p >= '0' && *p <= '9' && digits < 7; p++, digits++)
		v = v * 10 + (*p - '0');
	if (!digits || (*p >= '0' && *p <= '9'))
		return -1;
	if (*p == '.') {
		int frac = 0;
		for (p++; *p >= '0' && *p <= '9' && frac < 6; p++, frac++)
			v += (*p - '0') * (scale /= 10);
		if (!frac || (*p >= '0' && *p <= '9'))
			return -1;
	}
	*pp = p;
	return v;
}

int sc_feedback_parse(const char *text, int *style, double *x)
{
	const char *end = text;
	double v = decimal(&end);
	if (v < 0 || v > 1)
		return -1;
	*style = SFB_FIXED;
	if (!*end) {
		*x = v;
		return 0;
	}
	if (*end++ != '/')
		return -1;
	if (!strcmp(end, "concurrency"))
		*style = SFB_PER_N;
	else if (!strcmp(end, "sqrt_concurrency"))
		*style = SFB_PER_SQRT_N;
	else {
		/* "number / number", as Postfix accepts */
		double d = decimal(&end);
		if (*end || d < 1)
			return -1;
		v /= d;
	}
	*x = v;
	return 0;
}

static int check_command(struct parser *ps, const char *v)
{
	char buf[SC_VALUE_MAX * 2];
	char *argv[SC_ARGV_MAX + 1], *env[SC_ARGV_MAX + 1];
	if (sc_command_split(v, "channel", "host", "/log", buf, sizeof buf, argv, env) < 0) {
		bad(ps, "command: no program, more than %d words, or a bad NAME=value setting", SC_ARGV_MAX);
		return -1;
	}
	return 0;
}

/* The position of w in list ("A\0B\0...\0"), or the number of words in it when w is not one
 * (noinline: one copy for the variables and the parameters). */
__attribute__((noinline)) static int word_index(const char *list, const char *w)
{
	int k = 0;
	for (; *list && strcmp(list, w); list += strlen(list) + 1)
		k++;
	return k;
}

static void assign(struct parser *ps, struct sc_clause *k, const char *name, const char *val)
{
	int var = word_index(var_names, name);
	if (var == SV__COUNT) {
		bad(ps, "unknown variable '%s'", name);
		return;
	}
	unsigned bit = 1u << var;
	if (k->p.set & bit) {
		bad(ps, "%s: set twice in the clause of line %d", name, k->line);
		return;
	}
	long long x = 1;
	if (var_type[var] == VT_KEYWORD) {
		if (val && parse_bool(val, &x) < 0) {
			bad(ps, "%s: a keyword takes no value (or yes/no)", name);
			return;
		}
	} else if (!val || !*val) {
		bad(ps, "%s: missing value", name);
		return;
	}
	switch (var_type[var]) {
	case VT_KEYWORD:
		k->p.queueonly = (int)x;
		break;
	case VT_INTERVAL:
		if (parse_interval(val, &x) < 0 || x > 100LL * 365 * 86400) {
			bad(ps, "%s: '%s' is not an interval (like 1h5m20s, 10s or 3d)", name, val);
			return;
		}
		set_number(&k->p, var, x);
		break;
	case VT_CONC:
		if (var == SV_POS_FEEDBACK || var == SV_NEG_FEEDBACK) {
			int style;
			double amount;
			if (sc_feedback_parse(val, &style, &amount) < 0) {
				bad(ps, "%s: '%s' is not a feedback (x, x/y, x/concurrency, x/sqrt_concurrency; x in 0..1)", name, val);
				return;
			}
			if (var == SV_POS_FEEDBACK) {
				k->p.pos_style = style;
				k->p.pos_x = amount;
			} else {
				k->p.neg_style = style;
				k->p.neg_x = amount;
			}
			break;
		}
		/* the other concurrency keys are numbers */
		/* fall through */
	case VT_INT: {
		/* 0 is a value for the cohort limit (never dead) and the slot keys (a cost below 2: no
		 * preemption), a percentage stops at 100 */
		long long min = var == SV_INIT_CONC || var == SV_CONC_LIMIT;
		long long max = var == SV_SLOT_DISCOUNT ? 100 : var_type[var] == VT_INT ? 1000000 : 10000;
		if (parse_count(val, max, &x) < 0 || x < min) {
			bad(ps, "%s: '%s' is not a number from %lld to %lld", name, val, min, max);
			return;
		}
		if (x < 1 && (var == SV_MAXTHR || var == SV_OVERFEED || var == SV_RCPT_LIMIT ||
		              var == SV_REFILL_LIMIT)) {
			bad(ps, "%s: must be at least 1", name);
			return;
		}
		set_number(&k->p, var, x);
		if (var == SV_SKEW)
			warn(ps, "skew: not implemented (accepted for ZMailer compatibility, it has no effect)");
		if (!ENABLE_PREEMPT && var >= SV_SLOT_COST && var <= SV_MIN_SLOTS)
			warn(ps, "%s: preemption is not in this build (ENABLE_PREEMPT=0), it has no effect", name);
		break;
	}
	case VT_RETRIES:
		if (parse_retries(ps, val, &k->p.retries, &k->p.nretries) < 0)
			return;
		break;
	case VT_NAME:
		for (const char *p = strcmp(val, "$AGENT_USER") ? val : ""; *p; p++)
			if (!is_name(*p) && *p != '.') {
				bad(ps, "%s: '%s' is not a user or group name or number", name, val);
				return;
			}
		if (strlen(val) > 64) {
			bad(ps, "%s: name longer than 64 bytes", name);
			return;
		}
		if (var == SV_USER)
			k->p.user = dup_val(ps, val);
		else
			k->p.group = dup_val(ps, val);
		break;
	case VT_COMMAND:
		if (check_command(ps, val) < 0)
			return;
		k->p.command = dup_val(ps, val);
		break;
	}
	k->p.set |= bit;
	k->nset++;
}

/* Reads one value (word or "quoted string") at *pp into out. Returns 0 or -1 (reported). */
static int read_value(struct parser *ps, const char **pp, char *out)
{
	const char *p = *pp, *why;
	size_t n = 0;
	int quoted = *p == '"';
	p += quoted;
	/* a word up to a blank, or a string up to its quote (\" and \\ escaped) */
	for (char ch; (ch = *p) && (quoted ? ch != '"' : !is_space(ch));) {
		why = "stray '\"' in a value";
		if (ch == '"')
			goto bad;
		p++;
		if (quoted && ch == '\\' && (*p == '"' || *p == '\\'))
			ch = *p++;
		if (n >= SC_VALUE_MAX) {
			bad(ps, "value longer than %d bytes", SC_VALUE_MAX);
			return -1;
		}
		out[n++] = ch;
	}
	if (quoted) {
		why = "unterminated quoted value";
		if (*p++ != '"')
			goto bad;
		why = "no space after the quoted value";
		if (*p && !is_space(*p))
			goto bad;
	}
	out[n] = 0;
	*pp = p;
	return 0;
bad:
	bad(ps, "%s", why);
	return -1;
}

/* The assignments and keywords of one line (after the pattern, or an indented line). */
static void assignments(struct parser *ps, struct sc_clause *k, const char *p)
{
	char name[48], val[SC_VALUE_MAX + 1]; /* the longest: destination_concurrency_failed_cohort_limit */
	for (;;) {
		p = skip_space(p);
		if (!*p || *p == '#')
			return;
		size_t n = 0;
		while (is_name(p[n]))
			n++;
		if (!n) {
			bad(ps, "unexpected '%c' (expected name=value or a keyword)", *p);
			return;
		}
		if (n >= sizeof name) {
			bad(ps, "unknown variable '%.*s'", (int)sizeof name, p);
			return;
		}
		memcpy(name, p, n);
		name[n] = 0;
		p += n;
		const char *q = p;
		q = skip_space(q);
		if (*q == '=') {
			q++;
			q = skip_space(q);
			p = q;
			if (read_value(ps, &p, val) < 0)
				return;
			assign(ps, k, name, val);
		} else {
			if (*p && !is_space(*p)) {
				bad(ps, "unexpected '%c' after '%s'", *p, name);
				return;
			}
			assign(ps, k, name, NULL);
		}
	}
}

static int is_host(char ch)
{
	return is_name(ch) || ch == '.' || ch == ':' || ch == '[' || ch == ']';
}

/* "PATTERN SESSIONS": the pattern an exact host, *.domain or *; the classes keep file order. v
 * is the value's buffer: the two words are cut in place. */
static void hostclass(struct parser *ps, char *v)
{
	struct schedconf *c = ps->c;
	size_t n = 0, k = 0;
	long long x;
	while (v[n] && !is_space(v[n]))
		n++;
	char *num = v + (skip_space(v + n) - v);
	while (num[k] && !is_space(num[k]))
		k++;
	if (!n || !k || *skip_space(num + k)) {
		bad(ps, "PARAMhostclass: expected \"PATTERN SESSIONS\" (like \"*.example.com 3\")");
		return;
	}
	if (n > SC_PATTERN_MAX || k >= 16) {
		bad(ps, "PARAMhostclass: pattern longer than %d bytes or session limit too long", SC_PATTERN_MAX);
		return;
	}
	char *pat = v;
	pat[n] = 0; /* a blank: num starts after it */
	num[k] = 0;
	int star = pat[0] == '*' && !pat[1];
	const char *h = pat[0] == '*' && pat[1] == '.' ? pat + 2 : pat;
	int ok = star || *h;
	for (const char *q = h; ok && *q && !star; q++)
		ok = is_host(*q);
	if (!ok) {
		bad(ps, "PARAMhostclass: '%s' is not a host, *.domain or *", pat);
		return;
	}
	if (parse_count(num, SC_SESSIONS_MAX, &x) < 0 || x < 1) {
		bad(ps, "PARAMhostclass: '%s' is not a session limit from 1 to %d", num, SC_SESSIONS_MAX);
		return;
	}
	for (char *q = pat; *q; q++)
		if (*q >= 'A' && *q <= 'Z')
			*q = (char)(*q - 'A' + 'a');
	for (size_t i = 0; i < c->nhc; i++) {
		if (c->hc[i].pat[0] == '*' && !c->hc[i].pat[1]) {
			bad(ps, "PARAMhostclass: '%s' can never match: the class '*' of line %d comes first ('*' must be last)",
			    pat, c->hc[i].line);
			return;
		}
		if (!strcmp(c->hc[i].pat, pat)) {
			bad(ps, "PARAMhostclass: '%s' is already the class of line %d", pat, c->hc[i].line);
			return;
		}
	}
	if (c->nhc == SC_HOSTCLASS_MAX) {
		bad(ps, "more than %d host classes", SC_HOSTCLASS_MAX);
		return;
	}
	struct sc_hostclass *a = realloc(c->hc, (c->nhc + 1) * sizeof *a);
	if (!a) {
		bad(ps, "out of memory");
		return;
	}
	c->hc = a;
	char *d = dup_val(ps, pat);
	if (!d)
		return;
	a[c->nhc++] = (struct sc_hostclass){d, (int)x, ps->line, 0};
}

int sc_domain_match(const char *host, const char *domain)
{
	size_t h = strlen(host), d = strlen(domain);
	if (h == d)
		return str_caseeq(host, domain);
	return h > d && host[h - d - 1] == '.' && str_caseeq(host + h - d, domain);
}

int schedconf_hostclass(const struct schedconf *c, const char *host)
{
	for (size_t i = 0; i < c->nhc; i++) {
		const char *p = c->hc[i].pat;
		if (p[0] == '*' && !p[1])
			return (int)i;
		if (p[0] == '*') {
			/* "*.domain": the domain itself and every name ending in ".domain" */
			if (sc_domain_match(host, p + 2))
				return (int)i;
		} else if (str_caseeq(host, p)) {
			return (int)i;
		}
	}
	return -1;
}

static void param_line(struct parser *ps, const char *p)
{
	char name[32], val[SC_VALUE_MAX + 1];
	size_t n = 0;
	while (is_name(p[n]))
		n++;
	if (!n || n >= sizeof name) {
		bad(ps, "PARAM line without a parameter name");
		return;
	}
	memcpy(name, p, n);
	name[n] = 0;
	p += n;
	p = skip_space(p);
	if (*p != '=') {
		bad(ps, "PARAM%s: expected '='", name);
		return;
	}
	p++;
	p = skip_space(p);
	if (read_value(ps, &p, val) < 0)
		return;
	p = skip_space(p);
	if (*p && *p != '#') {
		bad(ps, "PARAM%s: unexpected text after the value", name);
		return;
	}
	struct schedconf *c = ps->c;
	long long x;
	/* the parameters by their position in one string (no chain of strcmp calls); 8: unknown */
	static const char params[] = "mailqpath\0authfile\0global-report-interval\0hostclass\0msgwriteasync\0"
	                             "store-error-on-error\0message_recipient_limit\0message_recipient_minimum\0";
	int k = word_index(params, name);
	if (k < 2) {
		char **slot = k == 0 ? &c->mailqpath : &c->authfile;
		if (!*val) {
			bad(ps, "PARAM%s: empty value", name);
			return;
		}
		if (*slot) {
			bad(ps, "PARAM%s: set twice", name);
			return;
		}
		*slot = dup_val(ps, val);
	} else if (k == 2) {
		if (parse_interval(val, &x) < 0) {
			bad(ps, "PARAM%s: '%s' is not an interval", name, val);
			return;
		}
		c->report_interval = x;
	} else if (k == 3) {
		hostclass(ps, val);
	} else if (k < 8) {
		/* the recipient pools' (issue 14 point 5): the global pool of first batches, and every
		 * message's own floor, at least 1 */
		int pool = k >= 6;
		if (parse_count(val, 10000000, &x) < 0 || (pool && x < 1)) {
			bad(ps, "PARAM%s: '%s' is not a number from %d to 10000000", name, val, pool);
			return;
		}
		if (pool)
			*(k == 6 ? &c->rcpt_limit : &c->rcpt_minimum) = (long)x;
		else if (k == 4)
			c->msgwriteasync = x;
		else {
			c->store_error_on_error = x;
			warn(ps, "PARAM%s: not implemented (accepted for ZMailer compatibility, it has no effect)", name);
		}
	} else {
		bad(ps, "unknown parameter PARAM%s", name);
	}
}

static struct sc_clause *new_clause(struct parser *ps, const char *pat, size_t n)
{
	struct schedconf *c = ps->c;
	if (c->n == SC_CLAUSE_MAX) {
		bad(ps, "more than %d clauses", SC_CLAUSE_MAX);
		return NULL;
	}
	if (n > SC_PATTERN_MAX) {
		bad(ps, "pattern longer than %d bytes", SC_PATTERN_MAX);
		return NULL;
	}
	struct sc_clause *cl = realloc(c->cl, (c->n + 1) * sizeof *cl);
	if (!cl) {
		bad(ps, "out of memory");
		return NULL;
	}
	c->cl = cl;
	struct sc_clause *k = &cl[c->n++];
	memset(k, 0, sizeof *k);
	k->line = ps->line;
	const char *slash = memchr(pat, '/', n);
	/* "chan" becomes "chan" + "*"; "chan/host" is split at the first slash */
	char *s = malloc(n + 3);
	if (!s) {
		c->n--;
		bad(ps, "out of memory");
		return NULL;
	}
	size_t cn = slash ? (size_t)(slash - pat) : n;
	memcpy(s, pat, cn);
	s[cn] = 0;
	k->chan_pat = s;
	k->host_pat = s + cn + 1;
	if (slash) {
		memcpy(k->host_pat, slash + 1, n - cn - 1);
		k->host_pat[n - cn - 1] = 0;
	} else {
		strcpy(k->host_pat, "*");
	}
	if (!*k->chan_pat || !*k->host_pat)
		bad(ps, "pattern '%.*s': empty channel or host part", (int)n, pat);
	return k;
}

int schedconf_parse(struct schedconf *c, const char *file, const char *text, size_t len,
                    conf_report_fn *report, void *ctx)
{
	struct parser ps = {c, file, 0, 0, report, ctx};
	str_lcpy(c->file, file, sizeof c->file);
	if (len > SC_FILE_MAX) {
		bad(&ps, "file larger than %d bytes", SC_FILE_MAX);
		return ps.errors;
	}
	struct sc_clause *cur = NULL;
	char line[SC_LINE_MAX + 1];
	size_t pos = 0;
	while (pos < len) {
		size_t n;
		const char *src = conf_line(text, len, &pos, &n);
		ps.line++;
		if (n > SC_LINE_MAX) {
			bad(&ps, "line longer than %d bytes", SC_LINE_MAX);
			continue;
		}
		memcpy(line, src, n);
		line[n] = 0;
		size_t i;
		for (i = 0; i < n; i++)
			if (((unsigned char)line[i] < 0x20 && line[i] != '\t') || line[i] == 0x7f)
				break;
		if (i < n) {
			bad(&ps, "control character (0x%02x) in the line", (unsigned char)line[i]);
			continue;
		}
		const char *p = line;
		p = skip_space(p);
		if (!*p || *p == '#')
			continue;
		if (p != line) {
			if (!cur)
				bad(&ps, "indented line before the first clause pattern");
			else
				assignments(&ps, cur, p);
			continue;
		}
		if (str_starts(line, "PARAM")) {
			param_line(&ps, line + 5);
			continue;
		}
		size_t pl = 0;
		while (line[pl] && !is_space(line[pl]))
			pl++;
		if (memchr(line, '=', pl)) {
			bad(&ps, "'%.*s' in column 1: a pattern cannot hold '=' (assignments must be indented "
			         "or follow the pattern)", (int)(pl > 60 ? 60 : pl), line);
			cur = NULL;
			continue;
		}
		cur = new_clause(&ps, line, pl);
		if (cur)
			assignments(&ps, cur, line + pl);
	}
	/* an empty clause takes the contents of the next non-empty one */
	int next = -1;
	for (size_t i = c->n; i-- > 0;) {
		if (c->cl[i].nset) {
			next = (int)i;
			c->cl[i].body = (int)i;
		} else if (next >= 0) {
			c->cl[i].body = next;
		} else {
			ps.line = c->cl[i].line;
			bad(&ps, "clause '%s/%s' is empty and no non-empty clause follows it", c->cl[i].chan_pat, c->cl[i].host_pat);
			c->cl[i].body = (int)i;
		}
	}
	if (c->rcpt_minimum > c->rcpt_limit) {
		ps.line = 0;
		bad(&ps, "PARAMmessage_recipient_minimum (%ld) is above PARAMmessage_recipient_limit (%ld)",
		    c->rcpt_minimum, c->rcpt_limit);
	}
	return ps.errors;
}

int schedconf_load(struct schedconf *c, const char *path, int missing_ok, conf_report_fn *report, void *ctx)
{
	char *text;
	size_t len;
	if (fio_slurp(path, SC_FILE_MAX, &text, &len) < 0) {
		if (errno == ENOENT && missing_ok)
			return schedconf_parse(c, "(built-in scheduler.conf)", schedconf_builtin,
			                       sizeof schedconf_builtin - 1, report, ctx);
		conf_reportf(report, ctx, path, 0, "cannot read: %s", errno == EFBIG ? "larger than 256 KiB" : strerror(errno));
		return 1;
	}
	int errors = schedconf_parse(c, path, text, len, report, ctx);
	free(text);
	return errors;
}

/* The variables in's clause set override out's. */
static void merge(struct sc_params *out, const struct sc_params *in)
{
	for (size_t i = 0; i < ARRAY_LEN(fields); i++)
		if (in->set & (1u << fields[i].var))
			memcpy((char *)out + fields[i].off, (const char *)in + fields[i].off, fields[i].len);
	out->set |= in->set;
}

int schedconf_resolve(const struct schedconf *c, const char *channel, const char *host, struct sc_params *out)
{
	sc_params_default(out);
	for (size_t i = 0; i < c->n; i++) {
		const struct sc_clause *k = &c->cl[i];
		if (!glob_match(k->chan_pat, channel) || !glob_match(k->host_pat, host))
			continue;
		const struct sc_clause *b = &c->cl[k->body];
		merge(out, &b->p);
		if (b->p.command)
			return k->body;
	}
	return -1;
}

static int env_word(const char *w)
{
	if (!((*w >= 'A' && *w <= 'Z') || (*w >= 'a' && *w <= 'z') || *w == '_'))
		return 0;
	while (*w && *w != '=') {
		if (!((*w >= 'A' && *w <= 'Z') || (*w >= 'a' && *w <= 'z') || (*w >= '0' && *w <= '9') || *w == '_'))
			return 0;
		w++;
	}
	return *w == '=';
}

int sc_command_split(const char *command, const char *channel, const char *host, const char *logdir,
                     char *buf, size_t size, char *argv[SC_ARGV_MAX + 1], char *env[SC_ARGV_MAX + 1])
{
	/* each variable behind the number of its value in rep[] (one string, no table of pointers) */
	static const char subst[] = "\1${channel}\0\1$channel\0\2${host}\0\2$host\0\3${LOGDIR}\0\3$LOGDIR\0";
	const char *const reps[3] = {channel, host, logdir};
	/* a host that looks like an option must not become one in the TA's argv */
	if (host[0] == '-' && host[1])
		return -1;
	size_t n = 0;
	for (const char *p = command; *p;) {
		const char *rep = NULL;
		size_t skip = 0;
		if (*p == '$')
			for (const char *t = subst; *t; t += strlen(t) + 1)
				if (str_starts(p, t + 1)) {
					rep = reps[*t - 1];
					skip = strlen(t + 1);
					break;
				}
		if (rep) {
			size_t l = strlen(rep);
			if (n + l + 1 >= size)
				return -1;
			memcpy(buf + n, rep, l);
			n += l;
			p += skip;
		} else {
			if (n + 2 >= size)
				return -1;
			buf[n++] = *p++;
		}
	}
	buf[n] = 0;
	int argc = 0, envc = 0;
	char *p = buf;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			*p++ = 0;
		if (!*p)
			break;
		char *w = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (argc == 0 && env_word(w)) {
			if (envc == SC_ARGV_MAX)
				return -1;
			env[envc++] = w;
		} else {
			if (argc == SC_ARGV_MAX)
				return -1;
			argv[argc++] = w;
		}
	}
	argv[argc] = NULL;
	env[envc] = NULL;
	return argc ? argc : -1;
}
