/* The control-file text format (docs/spool.md 4): parsing an envelope block or a whole control
 * file with every limit checked, and formatting the envelope block and the status field. */
#include "spool.h"
#include "xtext.h"
#include "util.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pctx {
	struct spool_msg *m;
	char *err;
	size_t errlen;
	int line;
	int oom;        /* the failure was memory, not the text: errno ENOMEM, never "damaged" */
};

static int perr(struct pctx *c, const char *what)
{
	if (!strcmp(what, "out of memory"))
		c->oom = 1;
	snprintf(c->err, c->errlen, "line %d: %s", c->line, c->oom ? "out of memory" : what);
	return -1;
}

/* Splits a line into space-separated fields (at most max); returns how many. The last field
 * takes the rest of the line when rest_last is set. Fields point into the mutable line. */
static int split(char *s, char **f, int max, int rest_last)
{
	int n = 0;
	while (*s && n < max) {
		if (rest_last && n == max - 1) {
			f[n++] = s;
			break;
		}
		f[n++] = s;
		char *sp = strchr(s, ' ');
		if (!sp)
			break;
		*sp = 0;
		s = sp + 1;
	}
	return n;
}

static int num(const char *s, int width, long long *out)
{
	long long v = 0;
	int n = 0;
	if (!*s)
		return -1;
	for (; *s; s++, n++) {
		if (*s < '0' || *s > '9' || n >= 18)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (width && n != width)
		return -1;
	*out = v;
	return 0;
}

/* pre (pl bytes, at most a line) then s decoded from xtext (at most SPOOL_ADDR_MAX), copied to
 * the heap; NULL when s is bad or memory is out (c->oom) */
static char *xdup_after(struct pctx *c, const char *pre, size_t pl, const char *s)
{
	char tmp[SPOOL_LINE_MAX + SPOOL_ADDR_MAX + 1];
	memcpy(tmp, pre, pl);
	if (xtext_decode(s, strlen(s), tmp + pl, SPOOL_ADDR_MAX + 1) < 0)
		return NULL;
	char *p = strdup(tmp);
	if (!p)
		c->oom = 1;
	return p;
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static char *xdup(struct pctx *c, const char *s)
{
	return xdup_after(c, "", 0, s);
}

static int valid_channel(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '-'))
			return 0;
	return n && n < sizeof(((struct spool_rcpt *)0)->channel);
}

static int valid_host(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if ((unsigned char)s[n] <= ' ' || (unsigned char)s[n] >= 0x7f || s[n] == '/' || (s[n] >= 'A' && s[n] <= 'Z'))
			return 0;
	return n && n < sizeof(((struct spool_rcpt *)0)->host);
}

static int parse_status(const char *f[4], struct spool_rcpt *r)
{
	long long pid, tries, next;
	const char *tag = f[0];
	if (!tag[0] || tag[1] || !strchr("NQTDFXS", tag[0]))
		return -1;
	if (num(f[1], 10, &pid) || num(f[2], 4, &tries) || num(f[3], 10, &next))
		return -1;
	r->tag = tag[0];
	r->pid = (long)pid;
	r->tries = (unsigned)tries;
	r->next = next;
	return 0;
}

static const char *parse_rcpt(struct pctx *c, char *rest, off_t off)
{
	struct spool_msg *m = c->m;
	char *f[9];
	if (split(rest, f, 9, 0) != 8)
		return "recipient record: expected 8 fields";
	if (m->nrcpt >= SPOOL_RCPT_MAX)
		return "too many recipients";
	/* 4, then doubled: 16 at once (5.7 KiB) is a block the allocator maps and unmaps for
	 * every one-recipient message an agent or the pick-up parses */
	if (m->nrcpt == 0 || (m->nrcpt >= 4 && !(m->nrcpt & (m->nrcpt - 1)))) {
		struct spool_rcpt *n = realloc(m->rcpt, (m->nrcpt ? 2 * m->nrcpt : 4) * sizeof *n);
		if (!n)
			return "out of memory";
		m->rcpt = n;
	}
	struct spool_rcpt *r = &m->rcpt[m->nrcpt];
	memset(r, 0, sizeof *r);
	if (parse_status((const char **)f, r))
		return "recipient record: bad status field";
	if (!valid_channel(f[4]))
		return "recipient record: bad channel";
	if (!valid_host(f[5]))
		return "recipient record: bad host";
	str_lcpy(r->channel, f[4], sizeof r->channel);
	str_lcpy(r->host, f[5], sizeof r->host);
	char *end;
	r->priv = strtol(f[7], &end, 10);
	if (*end || !*f[7] || r->priv < -1)
		return "recipient record: bad privilege";
	r->addr = xdup(c, f[6]);
	if (!r->addr || !*r->addr) {
		free(r->addr);
		return "recipient record: bad address";
	}
	r->off = off;
	m->nrcpt++;
	return NULL;
}

static int parse_notify(const char *s, unsigned *out)
{
	unsigned v = 0;
	if (s[0] == 'N' && !s[1])
		return *out = NOTIFY_NEVER, 0;
	for (; *s; s++) {
		if (*s == 'S')
			v |= NOTIFY_SUCCESS;
		else if (*s == 'F')
			v |= NOTIFY_FAILURE;
		else if (*s == 'D')
			v |= NOTIFY_DELAY;
		else
			return -1;
		if (s[1] == ',')
			s++;
		else if (s[1])
			return -1;
	}
	if (!v)
		return -1;
	*out = v;
	return 0;
}

static const char *parse_attempt(struct pctx *c, char *rest)
{
	struct spool_msg *m = c->m;
	char *f[7];
	int n = split(rest, f, 7, 1);
	if (n < 6)
		return "attempt record: expected at least 6 fields";
	long long rc, t;
	if (num(f[0], 0, &rc) || rc >= (long long)m->nrcpt)
		return "attempt record: bad recipient number";
	if (num(f[1], 0, &t))
		return "attempt record: bad time";
	if (m->natt % 16 == 0) {
		struct spool_attempt *na = realloc(m->att, (m->natt + 16) * sizeof *na);
		if (!na)
			return "out of memory";
		m->att = na;
	}
	struct spool_attempt *a = &m->att[m->natt];
	memset(a, 0, sizeof *a);
	a->rcpt = (int)rc;
	a->time = t;
	if (str_lcpy(a->code, f[2], sizeof a->code) >= sizeof a->code ||
	    str_lcpy(a->action, f[3], sizeof a->action) >= sizeof a->action ||
	    str_lcpy(a->enh, f[4], sizeof a->enh) >= sizeof a->enh)
		return "attempt record: field too long";
	if (!(f[5][0] == '-' && !f[5][1]) && !(a->remote = xdup(c, f[5])))
		return "attempt record: bad remote host";
	a->text = strdup(n == 7 ? f[6] : "");
	if (!a->text) {
		free(a->remote);
		return "out of memory";
	}
	m->natt++;
	return NULL;
}

/* noinline: spool_msg_parse's loop keeps its registers, the records theirs (-136 bytes) */
__attribute__((noinline)) static const char *parse_line(struct pctx *c, char *line, off_t off, int *in_env)
{
	struct spool_msg *m = c->m;
	char kind = line[0];
	if (c->line == 1) {
		char *f[4];
		long long v;
		int n = split(line, f, 4, 1);
		if (n < 3 || f[0][0] != '@' || f[0][1] || strcmp(f[1], "spoolbox") || num(f[2], 0, &v))
			return "not a spoolbox control file (bad version line)";
		if (v < 1 || v > SPOOL_VERSION)
			return "format version newer than this program knows";
		m->version = (int)v;
		return NULL;
	}
	if (!*in_env) {
		if (line[1] != ' ')
			return "unknown record after the envelope";
		if (kind == 'A')
			return parse_attempt(c, line + 2);
		if (kind == 'W') {
			if (num(line + 2, 0, &m->warned))
				return "warning record: bad time";
			return NULL;
		}
		if (kind == 'B') {
			char *f[3];
			long long t;
			if (split(line + 2, f, 3, 0) != 2 || num(f[0], 0, &t) || !spool_id_valid(f[1]))
				return "bounce record: bad fields";
			str_lcpy(m->bounce_id, f[1], sizeof m->bounce_id);
			return NULL;
		}
		return "unknown record after the envelope";
	}
	if (line[0] == '.' && !line[1]) {
		*in_env = 0;
		return NULL;
	}
	if (line[0] == 'U' && !line[1]) {
		m->smtputf8 = 1;
		return NULL;
	}
	if (line[1] != ' ')
		return "malformed record (no space after the type)";
	char *rest = line + 2;
	long long v;
	/* the three numbers apart from the switch: fewer cases, no jump table */
	static const char nums[] = "toz";
	const char *k = strchr(nums, kind); /* kind: not NUL (the line is not empty) */
	if (k) {
		static const unsigned char at[] = {offsetof(struct spool_msg, arrival), offsetof(struct spool_msg, body_off),
		                                   offsetof(struct spool_msg, size)};
		static const char *const bad[] = {"bad arrival time", "bad body offset", "bad size"};
		_Static_assert(sizeof m->body_off == sizeof v && sizeof m->size == sizeof v, "8-byte numbers");
		size_t i = (size_t)(k - nums);
		if (num(rest, i ? 16 : 0, &v))
			return bad[i];
		memcpy((char *)m + at[i], &v, sizeof v);
		return NULL;
	}
	switch (kind) {
	case 'i':
		if (!spool_id_valid(rest))
			return "bad message id";
		str_lcpy(m->id, rest, sizeof m->id);
		return NULL;
	case 'b':
		if ((rest[0] != '7' && rest[0] != '8') || rest[1])
			return "bad body type";
		m->body8 = rest[0] == '8';
		return NULL;
	case 'u': {
		char *f[3];
		if (split(rest, f, 3, 0) != 2 || num(f[0], 0, &v))
			return "bad user record";
		m->uid = (long)v;
		/* a failure leaves m->user half written, but the whole parse fails with it */
		if (xtext_decode(f[1], strlen(f[1]), m->user, sizeof m->user) < 0)
			return "bad user name";
		return NULL;
	}
	case 's':
		if (m->sender)
			return "second sender record";
		m->sender = xdup(c, strcmp(rest, "<>") ? rest : ""); /* "<>": the null sender */
		return m->sender ? NULL : "bad sender address";
	case 'R':
		if ((rest[0] != 'F' && rest[0] != 'H') || rest[1])
			return "bad RET value";
		m->ret = rest[0];
		return NULL;
	case 'e':
		free(m->envid);
		m->envid = xdup(c, rest);
		return m->envid ? NULL : "bad ENVID";
	case 'r':
		return parse_rcpt(c, rest, off);
	case 'N':
		if (!m->nrcpt || parse_notify(rest, &m->rcpt[m->nrcpt - 1].notify))
			return "bad NOTIFY record";
		return NULL;
	case 'O': {
		char *semi = strchr(rest, ';');
		if (!m->nrcpt || !semi || semi == rest || m->rcpt[m->nrcpt - 1].orcpt)
			return "bad ORCPT record";
		/* "type;" then the decoded address (out of memory: perr says so) */
		if (!(m->rcpt[m->nrcpt - 1].orcpt = xdup_after(c, rest, (size_t)(semi - rest) + 1, semi + 1)))
			return "bad ORCPT address";
		return NULL;
	}
	default:
		return "unknown record in the envelope";
	}
}

int spool_msg_parse(const char *text, size_t len, int stop_at_env, struct spool_msg *m, char *err, size_t errlen)
{
	struct pctx c = {m, err, errlen, 0, 0};
	const char *e; /* what failed: one perr() for every failure */
	memset(m, 0, sizeof *m);
	if (errlen)
		err[0] = 0;
	if (len > SPOOL_CTL_MAX) {
		e = "control file larger than the limit";
		goto fail;
	}
	int in_env = 1;
	size_t pos = 0;
	char line[SPOOL_LINE_MAX + 1];
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		c.line++;
		if (!nl) {
			/* A torn final append (docs/spool.md 4.3) is ignored; a torn envelope is not. */
			if (in_env)
				goto fail_trunc;
			break;
		}
		size_t ll = (size_t)(nl - (text + pos));
		if (ll > SPOOL_LINE_MAX) {
			e = "line too long";
			goto fail;
		}
		memcpy(line, text + pos, ll);
		line[ll] = 0;
		if (memchr(line, 0, ll) || ll == 0) {
			e = ll ? "NUL byte in a record" : "empty line";
			goto fail;
		}
		if ((e = parse_line(&c, line, (off_t)pos, &in_env)))
			goto fail;
		pos += ll + 1;
		if (!in_env && stop_at_env)
			break;
	}
	if (in_env)
		goto fail_trunc;
	m->env_end = (off_t)pos;
	if (!m->id[0] || !m->sender || !m->nrcpt) {
		c.line = 0;
		e = !m->id[0] ? "no message id" : !m->sender ? "no sender" : "no recipients";
		goto fail;
	}
	return 0;
fail_trunc:
	e = "truncated: the envelope does not end with a '.' line";
fail:
	perr(&c, e);
	spool_msg_free(m);
	errno = c.oom ? ENOMEM : EINVAL;
	return -1;
}

void spool_msg_free(struct spool_msg *m)
{
	for (size_t i = 0; i < m->nrcpt; i++) {
		free(m->rcpt[i].addr);
		free(m->rcpt[i].orcpt);
	}
	for (size_t i = 0; i < m->natt; i++) {
		free(m->att[i].remote);
		free(m->att[i].text);
	}
	free(m->rcpt);
	free(m->att);
	free(m->sender);
	free(m->envid);
	memset(m, 0, sizeof *m);
}

void spool_status_format(const struct spool_rcpt *r, char out[SPOOL_STATUS_LEN])
{
	char tmp[SPOOL_STATUS_LEN + 8];
	unsigned long long pid = r->pid < 0 ? 0 : (unsigned long long)r->pid;
	unsigned tries = r->tries > 9999 ? 9999 : r->tries;
	long long next = r->next < 0 ? 0 : r->next > 9999999999LL ? 9999999999LL : r->next;
	if (pid > 9999999999ULL)
		pid = 0;
	snprintf(tmp, sizeof tmp, "%c %010llu %04u %010lld", r->tag, pid, tries, next);
	memcpy(out, tmp, SPOOL_STATUS_LEN);
}

static int add_x(struct buf *b, const char *s)
{
	char tmp[3 * SPOOL_ADDR_MAX + 4];
	if (strlen(s) > SPOOL_ADDR_MAX || xtext_encode(s, strlen(s), tmp, sizeof tmp) < 0)
		return -1;
	return buf_adds(b, tmp);
}

int spool_env_format(const struct spool_msg *m, struct buf *b, size_t *off_o, size_t *off_z, size_t *off_b)
{
	int r = 0;
	if (!spool_id_valid(m->id) || !m->sender || m->nrcpt == 0 || m->nrcpt > SPOOL_RCPT_MAX)
		return -1;
	r |= buf_printf(b, "@ spoolbox %d\ni %s\nt %lld\n", SPOOL_VERSION_ENV, m->id, m->arrival);
	/* o, z and b in one format: o's 16 digits fix where z starts, b is found from the end */
	*off_o = b->len + 2;
	*off_z = b->len + 21;
	r |= buf_printf(b, "o 0000000000000000\nz %016lld\nb %c\n", (long long)m->size, m->body8 ? '8' : '7');
	*off_b = b->len - 2;
	if (m->smtputf8)
		r |= buf_adds(b, "U\n");
	r |= buf_printf(b, "u %ld ", m->uid);
	r |= add_x(b, m->user[0] ? m->user : "-");
	r |= buf_adds(b, "\ns ");
	r |= m->sender[0] ? add_x(b, m->sender) : buf_adds(b, "<>");
	r |= buf_addc(b, '\n');
	if (m->ret)
		r |= buf_printf(b, "R %c\n", m->ret);
	if (m->envid) {
		r |= buf_adds(b, "e ");
		r |= add_x(b, m->envid);
		r |= buf_addc(b, '\n');
	}
	for (size_t i = 0; i < m->nrcpt && !r; i++) {
		const struct spool_rcpt *rc = &m->rcpt[i];
		if (!valid_channel(rc->channel) || !valid_host(rc->host) || !rc->addr || !*rc->addr)
			return -1;
		r |= buf_printf(b, "r N 0000000000 0000 0000000000 %s %s ", rc->channel, rc->host);
		r |= add_x(b, rc->addr);
		r |= buf_printf(b, " %ld\n", rc->priv < -1 ? -1 : rc->priv);
		if (rc->notify) {
			/* the initials of the wire words: "N", or "S,F,D" and its subsets */
			char w[DSN_NOTIFY_TEXT], n[10] = "N ", *q = n + 2;
			dsn_notify_format(rc->notify, w);
			for (const char *p = w; *p; p++)
				if (p == w || p[-1] == ',' || *p == ',')
					*q++ = *p;
			*q = '\n';
			r |= buf_adds(b, n);
		}
		if (rc->orcpt) {
			const char *semi = strchr(rc->orcpt, ';');
			if (!semi || semi == rc->orcpt || semi - rc->orcpt > 32)
				return -1;
			for (const char *p = rc->orcpt; p < semi; p++)
				if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
					return -1;
			r |= buf_printf(b, "O %.*s;", (int)(semi - rc->orcpt), rc->orcpt);
			r |= add_x(b, semi + 1);
			r |= buf_addc(b, '\n');
		}
	}
	r |= buf_adds(b, ".\n");
	if (r)
		return -1;
	/* the body starts right after the envelope: fill in 'o' now */
	char o[17];
	snprintf(o, sizeof o, "%016zu", b->len);
	memcpy(b->p + *off_o, o, 16);
	return 0;
}
