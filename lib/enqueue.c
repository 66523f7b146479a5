/* One message from input to the queue, as submit does it (see enqueue.h and docs/submit.md). */
#include "enqueue.h"
#include "config_default.h"
#include "log.h"
#include "sysexits.h"
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 8192

/* Removes the temporary file being written, if any (with the submit group raised).
 * noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static void stop_writing(struct enq *e)
{
	if (e->writing) {
		e->c->priv ? e->c->priv(1) : (void)0;
		spool_writer_abort(&e->w);
		e->c->priv ? e->c->priv(0) : (void)0;
		e->writing = 0;
	}
}

static int fail(struct enq *e, int code, const char *fmt, ...) PRINTF_LIKE(3, 4);
static int fail(struct enq *e, int code, const char *fmt, ...)
{
	if (!e->err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->why, sizeof e->why, fmt, ap);
		va_end(ap);
		e->err = code;
	}
	stop_writing(e);
	return e->err;
}

void enq_init(struct enq *e, const struct enq_conf *c, int dot_end, int t_mode)
{
	memset(e, 0, offsetof(struct enq, w));
	e->c = c;
	e->t_mode = t_mode;
	e->w.fd = -1;
	e->w.tmppath[0] = 0;
	e->m.uid = c->uid;
	str_lcpy(e->m.user, c->user, sizeof e->m.user);
	msgin_init(&e->in, dot_end);
	hdr_reader_init(&e->hr, HDR_BLOCK_MAX);
}

void enq_free(struct enq *e)
{
	stop_writing(e);
	spool_msg_free(&e->m);
	hdr_reader_free(&e->hr);
}

/* A command-line address must not hold a control character: a CR LF in it would end up
 * elsewhere than the caller meant (a header line, another recipient). Returns 0, or fails with
 * the argument shown escaped (never raw, so the reason cannot forge a log line). */
static int no_controls(struct enq *e, const char *arg, const char *where)
{
	const char *bad = NULL;
	for (const char *p = arg; *p && !bad; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			bad = p;
	if (!bad)
		return 0;
	char shown[200];
	size_t o = 0;
	for (const char *p = arg; *p && o + 5 < sizeof shown; p++)
		o += (size_t)snprintf(shown + o, sizeof shown - o, (unsigned char)*p < 0x20 || *p == 0x7f ? "\\x%02x" : "%c",
		                      (unsigned char)*p);
	return fail(e, EX_DATAERR, "%s '%s': control character 0x%02x at position %d: not an address", where, shown,
	            (unsigned char)*bad, (int)(bad - arg) + 1);
}

const char *enq_tmppath(const struct enq *e)
{
	/* the file exists from the moment its descriptor is stored (spool_writer_begin sets the
	 * whole name first and -1 before it): a signal in the middle of the begin sees it too */
	return e->writing || e->w.fd >= 0 ? e->w.tmppath : "";
}

int enq_input_done(const struct enq *e)
{
	return e->in.done;
}

static char *dup_or_null(const char *s)
{
	char *p = strdup(s);
	return p;
}

int enq_sender(struct enq *e, const char *arg)
{
	char out[ADDR_TEXT_MAX + 1], err[160];
	const struct enq_conf *c = e->c;
	free(e->m.sender);
	e->m.sender = NULL;
	if (arg && (!*arg || strcmp(arg, "<>") == 0)) {
		out[0] = 0; /* the null sender */
		goto set;
	}
	const char *src = *c->allmailfrom ? c->allmailfrom : arg; /* never NULL: "" = none */
	if (arg && no_controls(e, arg, "sender address"))
		return e->err;
	if (src) {
		struct addr a;
		if (addr_parse_one(src, strlen(src), &a, err, sizeof err) < 0)
			return fail(e, EX_DATAERR, "sender address '%s': %s", src, err);
		if (addr_format(&a, c->qualify, out, sizeof out) < 0 || strlen(out) > SPOOL_ADDR_MAX)
			return fail(e, EX_DATAERR, "sender address '%s': too long", src);
		e->m.smtputf8 |= a.utf8;
	} else if (str_fmt(out, sizeof out, "%s@%s", c->user, c->qualify) < 0) {
		return fail(e, EX_DATAERR, "sender address of user %s: too long", c->user);
	}
set:
	e->m.sender = dup_or_null(out);
	return e->m.sender ? 0 : fail(e, EX_OSERR, "out of memory");
}

int enq_route(const struct enq_conf *c, const struct addr *a, struct route *r)
{
	struct addr q;
	if (!ENABLE_LOCAL && !a->domain[0]) {
		/* a null client sends "root" out as root@QUALIFYDOMAIN (Postfix with no mydestination) */
		q = *a;
		if (str_lcpy(q.domain, c->qualify, sizeof q.domain) >= sizeof q.domain)
			return -1;
		a = &q;
	}
	return route_addr(&c->rc, a, r);
}

int enq_add_rcpt(struct enq *e, const struct addr *a, unsigned notify, const char *orcpt)
{
	char shown[ADDR_TEXT_MAX + 1];
	addr_format(a, NULL, shown, sizeof shown);
	for (const unsigned char *p = (const unsigned char *)a->domain; *p; p++)
		if (*p >= 0x80)
			return fail(e, EX_DATAERR, "recipient '%s': non-ASCII domain; give it in its ASCII (xn--) form", shown);
	struct route r;
	if (enq_route(e->c, a, &r) < 0 || strlen(r.user) > SPOOL_ADDR_MAX)
		return fail(e, EX_DATAERR, "recipient '%s': address too long", shown);
	for (size_t i = 0; i < e->m.nrcpt; i++) {
		const struct spool_rcpt *o = &e->m.rcpt[i];
		if (strcmp(o->channel, r.channel) == 0 && strcmp(o->host, r.host) == 0 && strcmp(o->addr, r.user) == 0)
			return 0; /* the same recipient twice gets one copy */
	}
	if (e->m.nrcpt >= e->c->maxrcpt || e->m.nrcpt >= SPOOL_RCPT_MAX)
		return fail(e, EX_DATAERR, "too many recipients (more than %u)", e->c->maxrcpt);
	if (e->m.nrcpt == e->rcpt_cap) {
		size_t cap = e->rcpt_cap ? e->rcpt_cap * 2 : 8;
		struct spool_rcpt *n = realloc(e->m.rcpt, cap * sizeof *n);
		if (!n)
			return fail(e, EX_OSERR, "out of memory");
		e->m.rcpt = n;
		e->rcpt_cap = cap;
	}
	struct spool_rcpt *n = &e->m.rcpt[e->m.nrcpt];
	memset(n, 0, sizeof *n);
	n->tag = RT_NEW;
	n->priv = -1;
	n->notify = notify;
	str_lcpy(n->channel, r.channel, sizeof n->channel);
	str_lcpy(n->host, r.host, sizeof n->host);
	n->addr = strdup(r.user);
	n->orcpt = orcpt && *orcpt ? strdup(orcpt) : NULL;
	if (!n->addr || (orcpt && *orcpt && !n->orcpt)) {
		free(n->addr);
		free(n->orcpt);
		return fail(e, EX_OSERR, "out of memory");
	}
	e->m.nrcpt++;
	e->m.smtputf8 |= a->utf8;
	return 0;
}

static int add_each(void *ctx, const struct addr *a)
{
	struct enq *e = ctx;
	return enq_add_rcpt(e, a, e->notify, NULL) ? -1 : 0;
}

int enq_add_rcpts(struct enq *e, const char *list, const char *where)
{
	char err[160];
	if (no_controls(e, list, where))
		return e->err;
	int n = addr_parse_list(list, strlen(list), add_each, e, err, sizeof err);
	if (e->err)
		return e->err;
	if (n < 0)
		return fail(e, EX_DATAERR, "%s '%s': %s", where, list, err);
	if (n == 0)
		return fail(e, EX_DATAERR, "%s '%s': no address in it", where, list);
	return 0;
}

/* ---- the header ---- */

struct local_ctx {
	const struct route_conf *rc;
	int all_local;
};

static int check_local(void *ctx, const struct addr *a)
{
	struct local_ctx *l = ctx;
	if (!route_is_local(l->rc, a->domain))
		l->all_local = 0;
	return 0;
}

static int from_is_local(struct enq *e, const struct hdr *h, long i)
{
	size_t n;
	const char *v = hdr_value(h, (size_t)i, &n);
	struct local_ctx l = {&e->c->rc, 1};
	char err[160];
	if (addr_parse_list(v, n, check_local, &l, err, sizeof err) <= 0)
		return 0;
	return l.all_local;
}

/* Appends a display name as a phrase: plain when it is only words, else a quoted string. */
static int add_phrase(struct buf *b, const char *name)
{
	int plain = 1;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p != ' ' && !addr_is_atext(*p))
			plain = 0;
	int r = plain ? 0 : buf_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p == '"' || *p == '\\')
			r |= buf_addc(b, '\\');
		r |= buf_addc(b, (char)(*p < 0x20 || *p == 0x7f ? ' ' : *p));
	}
	return r | (plain ? 0 : buf_addc(b, '"'));
}

static int add_from(struct enq *e, struct buf *b, const char *addr)
{
	int r = buf_adds(b, "From: ");
	int named = e->c->fullname[0] != 0;
	if (named)
		r |= add_phrase(b, e->c->fullname);
	return r | buf_printf(b, named ? " <%s>\n" : "%s\n", addr);
}

static int collect_t(struct enq *e, const struct hdr *h)
{
	/* with any Resent- field, only the Resent- ones count; the plain names are their tails */
	static const char *const res[] = {"Resent-To", "Resent-Cc", "Resent-Bcc"};
	size_t skip = 7; /* strlen("Resent-") */
	for (size_t k = 0; k < 3; k++)
		if (hdr_find(h, res[k], 0) >= 0)
			skip = 0;
	for (size_t i = 0; i < h->n; i++) {
		for (size_t k = 0; k < 3; k++) {
			const char *name = res[k] + skip;
			if (!hdr_is(h, i, name))
				continue;
			size_t n;
			const char *v = hdr_value(h, i, &n);
			char err[160];
			if (addr_parse_list(v, n, add_each, e, err, sizeof err) < 0) {
				if (e->err)
					return e->err;
				return fail(e, EX_DATAERR, "%s: header field %zu: %s", name, i + 1, err);
			}
		}
	}
	return 0;
}

/* Writes bytes of the stored message. */
static int put(struct enq *e, const char *p, size_t n)
{
	if (n && spool_writer_write(&e->w, p, n) < 0)
		return fail(e, EX_TEMPFAIL, "message not queued: writing %s failed: %s", e->w.tmppath, strerror(errno));
	return 0;
}

/* The header section is complete: settle the recipients, open the queue file, write the
 * rewritten header. */
static int start(struct enq *e)
{
	const struct enq_conf *c = e->c;
	struct hdr h;
	char err[160];
	if (hdr_split(&h, e->hr.block.p ? e->hr.block.p : "", e->hr.block.len, err, sizeof err) < 0)
		return fail(e, EX_DATAERR, "%s", err);
	int rc = 0;
	if (!e->m.sender)
		rc = enq_sender(e, NULL);
	if (!rc && e->t_mode)
		rc = collect_t(e, &h);
	if (!rc && e->m.nrcpt == 0)
		rc = fail(e, EX_DATAERR, e->t_mode ? "no recipient addresses found in the header (To:, Cc:, Bcc:)" : "no recipients given");
	if (rc) {
		hdr_free(&h);
		return rc;
	}
	/* No signal mask around the create (two system calls): a handler looking at
	 * enq_tmppath() sees the name only once the file is there (its descriptor stored). A
	 * signal between the open's return and that store leaves the file in tmp/, as a crash at
	 * E1 does (docs/spool.md 5: the cleaner's). */
	c->priv ? c->priv(1) : (void)0;
	long long spare = 0;
	int r = spool_room_spare(c->sp, c->minfree, NULL, &spare) < 0 ? -1 : spool_writer_begin(c->sp, &e->w, &e->m);
	e->w.minfree = c->minfree;
	e->w.room_until = spare;
	c->priv ? c->priv(0) : (void)0;
	e->writing = r == 0;
	if (r < 0) {
		hdr_free(&h);
		return fail(e, errno == EINVAL ? EX_DATAERR : EX_TEMPFAIL, "message not queued: cannot create it in %s/tmp: %s",
		            c->sp->dir, errno == EINVAL ? "bad envelope" : strerror(errno));
	}
	if (e->body8_declared)
		e->w.body8 = 1;

	long from_i = hdr_find(&h, "From", 0);
	int rewrite = *c->rewrite_from && (from_i < 0 || from_is_local(e, &h, from_i));
	struct buf b;
	buf_init(&b, HDR_BLOCK_MAX + 65536);
	char date[64];
	hdr_date(time(NULL), date, sizeof date);
	int bad = 0;
	/* "Received: <received>\n\tby ..." (-bs), or "Received: from <user> by ..." */
	int rcv = e->received[0] != 0;
	bad |= buf_printf(&b, "Received: %s%s%sby %s (spoolbox)%s%s id %s; %s\n", rcv ? "" : "from ", rcv ? e->received : c->user,
	                  rcv ? "\n\t" : " ", c->hostname, e->with ? " with " : "", e->with ? e->with : "", e->w.id, date);
	for (size_t i = 0; i < h.n; i++) {
		const char *f = h.p + h.f[i].off;
		if (hdr_is(&h, i, "Bcc") || hdr_is(&h, i, "Resent-Bcc"))
			continue;
		if (rewrite && hdr_is(&h, i, "From"))
			continue;
		if (hdr_is_addr_field(f, h.f[i].name_len))
			bad |= hdr_qualify_field(f, h.f[i].len, h.f[i].name_len, c->qualify, &b) < 0;
		else
			bad |= buf_add(&b, f, h.f[i].len);
	}
	if (hdr_find(&h, "Date", 0) < 0)
		bad |= buf_printf(&b, "Date: %s\n", date);
	if (hdr_find(&h, "Message-ID", 0) < 0)
		bad |= buf_printf(&b, "Message-ID: <%s@%s>\n", e->w.id, c->hostname);
	if (rewrite) {
		bad |= add_from(e, &b, c->rewrite_from);
	} else if (from_i < 0) {
		char self[ADDR_TEXT_MAX + 1];
		const char *a = e->m.sender && *e->m.sender ? e->m.sender : self;
		str_fmt(self, sizeof self, "%s@%s", c->user, c->qualify);
		bad |= add_from(e, &b, a);
	}
	bad |= buf_addc(&b, '\n');
	hdr_free(&h);
	if (bad) {
		buf_free(&b);
		return fail(e, EX_DATAERR, "header section too large after rewriting");
	}
	r = put(e, b.p, b.len);
	buf_free(&b);
	if (r)
		return r;
	r = put(e, e->hr.spill.p, e->hr.spill.len);
	buf_free(&e->hr.spill);
	return r;
}

/* noinline: one copy for take() and enq_finish() (docs/size.md) */
__attribute__((noinline)) static int header_too_large(struct enq *e)
{
	return fail(e, EX_DATAERR, "header section larger than %u bytes; not queued", HDR_BLOCK_MAX);
}

/* Normalised bytes: size limit, header collection, then straight to the queue file. */
static int take(struct enq *e, const char *p, size_t n)
{
	e->size += (long long)n;
	if (e->c->sizelimit > 0 && e->size > e->c->sizelimit)
		return fail(e, EX_CANTCREAT, "message larger than the size limit of %lld bytes (SIZELIMIT); not queued",
		            e->c->sizelimit);
	if (e->writing)
		return put(e, p, n);
	ssize_t used = hdr_reader_feed(&e->hr, p, n);
	if (used < 0)
		return header_too_large(e);
	if (!e->hr.body)
		return 0;
	int r = start(e);
	return r ? r : put(e, p + used, n - (size_t)used);
}

int enq_feed(struct enq *e, const char *p, size_t n)
{
	char out[CHUNK + 2];
	while (n && !e->err && !e->in.done) {
		size_t k = n < CHUNK ? n : CHUNK;
		size_t o = msgin_feed(&e->in, p, k, out);
		p += k;
		n -= k;
		if (o && take(e, out, o))
			break;
	}
	return e->err;
}

int enq_finish(struct enq *e)
{
	char out[4];
	if (e->err)
		return e->err;
	size_t o = msgin_eof(&e->in, out);
	if (o && take(e, out, o))
		return e->err;
	if (!e->writing) {
		if (hdr_reader_eof(&e->hr) < 0)
			return header_too_large(e);
		if (start(e))
			return e->err;
	}
	e->c->priv ? e->c->priv(1) : (void)0;
	int r = spool_writer_commit(&e->w);
	e->c->priv ? e->c->priv(0) : (void)0;
	e->writing = 0;
	if (r < 0)
		return fail(e, EX_TEMPFAIL, "message not queued: %s", strerror(errno));
	return 0;
}
