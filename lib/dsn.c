/* The text of a DSN: failure, delay or success (see dsn.h; RFC 3464 for the delivery-status fields, RFC 6522 for
 * multipart/report, RFC 3834 for Auto-Submitted). */
#include "dsn.h"
#include "fmt.h"
#include "header.h"
#include "util.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_OUT (DSN_FIELD_MAX + 2048) /* the head and the human part's first lines are one emit */

struct out {
	dsn_put_fn *put;
	void *ctx;
	int rc;
};

/* On x86-64 an entry into lib/fmt.c's shared variadic prologue (FMT_VA_ENTRY), hence global. */
void dsn_emit(struct out *o, const char *fmt, ...) PRINTF_LIKE(2, 3);
#define emit dsn_emit
__attribute__((used)) static void emit_v(struct out *o, const char *fmt, long c, long d, va_list ap)
{
	char line[LINE_MAX_OUT];
	if (o->rc)
		return;
	int n = vsnprintf(line, sizeof line, fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof line)
		n = (int)sizeof line - 1; /* every value is cut to DSN_FIELD_MAX before; cannot happen */
	o->rc = o->put(o->ctx, line, (size_t)n);
}

FMT_VA_ENTRY(dsn_emit, 2, emit_v);
#if !FMT_VA_ASM
void dsn_emit(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit_v(o, fmt, 0, 0, ap);
	va_end(ap);
}
#endif

void dsn_clean(char *out, size_t size, const char *s)
{
	size_t o = 0;
	if (!size)
		return;
	for (; s && *s && o + 1 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			if (o && out[o - 1] != ' ')
				out[o++] = ' ';
			continue;
		}
		out[o++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = 0;
}

/* "X.Y.Z" with X in 2, 4, 5 and 1-3 digits each for Y and Z (RFC 3463). */
static int enh_valid(const char *s)
{
	if (!s || (s[0] != '2' && s[0] != '4' && s[0] != '5') || s[1] != '.')
		return 0;
	s += 2;
	for (int part = 0; part < 2; part++) {
		int n = 0;
		while (*s >= '0' && *s <= '9' && n < 4)
			s++, n++;
		if (n < 1 || n > 3)
			return 0;
		if (part == 0 && *s++ != '.')
			return 0;
	}
	return *s == 0;
}

/* An SMTP reply as the smtp agent records it: "550 5.1.1 text" or "550-text". */
static int is_smtp_reply(const char *s)
{
	return s && s[0] >= '2' && s[0] <= '5' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
	       (s[3] == ' ' || s[3] == '-' || s[3] == 0);
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static void date(long long t, char *out, size_t size)
{
	if (hdr_date((time_t)t, out, size) < 0)
		str_lcpy(out, "Thu, 1 Jan 1970 00:00:00 +0000", size);
}

int dsn_returns_full(const struct dsn *d)
{
	return d->kind == DSN_FAILED && d->ret != 'H' && !d->postmaster && d->size <= d->return_max;
}

void dsn_boundary(char *out, size_t size, const char *id, long long t, unsigned n)
{
	char safe[64];
	dsn_clean(safe, sizeof safe, id);
	for (char *p = safe; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
			*p = 'x';
	snprintf(out, size, "=_spoolbox_%s_%lld_%u", safe, t, n);
}

/* A value of the report: cleaned; "" stays "" (the caller leaves the field out). */
#define CLEAN(buf, s) dsn_clean(buf, sizeof buf, s)

static const char *action_of(const struct dsn *d, const struct dsn_rcpt *r)
{
	if (d->kind == DSN_DELAYED)
		return "delayed";
	if (d->kind == DSN_FAILED)
		return "failed";
	if (r->action && (!strcmp(r->action, "relayed") || !strcmp(r->action, "expanded")))
		return r->action;
	return "delivered";
}

const char dsn_generic[3][6] = {"5.0.0", "4.0.0", "2.0.0"};
_Static_assert(DSN_FAILED == 0 && DSN_DELAYED == 1 && DSN_SUCCESS == 2, "dsn_generic's order");

/* The Status field: the recorded code when its class fits the report's kind (RFC 3464 2.3.4:
 * 2 for success, 4 for delayed, 4 or 5 for failed), else the kind's generic code. */
static const char *status_of(const struct dsn *d, const char *enh)
{
	const char *g = dsn_generic[d->kind]; /* its class is the first digit */
	return enh_valid(enh) && (d->kind == DSN_FAILED || enh[0] == g[0]) ? enh : g;
}

static const char *subject_of(const struct dsn *d)
{
	if (d->postmaster)
		return "Postmaster Copy: Undelivered Mail";
	if (d->kind == DSN_DELAYED)
		return "Delayed Mail (still being retried)";
	if (d->kind == DSN_SUCCESS)
		return "Successful Mail Delivery Report";
	return "Undelivered Mail Returned to Sender";
}

/* The recipient's address, cleaned into v: at our host name when it has no domain (a local
 * user). */
static void final_of(const struct dsn *d, const struct dsn_rcpt *r, char v[DSN_FIELD_MAX])
{
	char full[DSN_FIELD_MAX + 300]; /* an address (998) and a host name (255) fit whole */
	snprintf(full, sizeof full, strchr(r->final, '@') ? "%s" : "%s@%s", r->final, d->hostname);
	dsn_clean(v, DSN_FIELD_MAX, full);
}

/* host: the cleaned hostname; arrived: the arrival date */
static void human_part(struct out *o, const struct dsn *d, int full, const char *host, const char *arrived)
{
	char v[DSN_FIELD_MAX], a[DSN_FIELD_MAX];
	/* (its head is the end of dsn_write's first emit) */
	/* one emit with the paragraph chosen */
	emit(o, d->postmaster ? "A message from the null sender (a delivery report, or mail that asked for no\n"
		        "replies) could not be delivered to %s below, and there is nobody\n"
		        "to return it to. This copy goes to the postmaster instead.\n\n" :
	     d->kind == DSN_DELAYED ? "Your message could not be delivered to %s below yet. This is a\n"
		        "warning only: delivery is still being tried, and you will hear again only if\n"
		        "it fails for good. You do not need to send it again.\n\n" :
	     d->kind == DSN_SUCCESS ? "Your message was delivered to %s below, and you asked to be told.\n"
		        "\"relayed\" means it went on to a system that sends no such reports: this is the\n"
		        "last you will hear of it.\n\n" :
	     "Your message could not be delivered to %s below. Delivery\n"
		        "has been given up for good; the reason is given for each.\n\n",
	     d->nrcpt == 1 ? "the recipient" : "the recipients");
	for (size_t i = 0; i < d->nrcpt; i++) {
		const struct dsn_rcpt *r = &d->rcpt[i];
		final_of(d, r, a);
		CLEAN(v, r->diag && *r->diag ? r->diag : d->kind == DSN_FAILED ? "delivery failed" : "-");
		int failed = d->kind == DSN_FAILED; /* a failure's line has no action */
		emit(o, "<%s>: %s%s%s\n", a, failed ? "" : action_of(d, r), failed ? "" : ": ", v);
		if (r->remote && *r->remote) {
			CLEAN(v, r->remote);
			emit(o, "    (reported by %s)\n", v);
		}
	}
	emit(o, "\nThe message arrived on %s and was queued as %s.\n", arrived, d->queue_id);
	/* one emit: the formats without the sizes leave them unread */
	emit(o, d->postmaster || d->kind != DSN_FAILED ? "Its header section is attached.\n\n" :
	        d->ret == 'H' ? "Its header section is attached (you asked for headers only).\n\n" :
	        !full ? "It was %lld bytes long, more than the %lld bytes this system returns,\n"
	                "so only its header section is attached.\n\n" :
	                "It is attached below.\n\n",
	     d->size, d->return_max);
}

static void status_part(struct out *o, const struct dsn *d, const char *host, const char *arrived)
{
	char v[DSN_FIELD_MAX], when[64];
	CLEAN(v, d->queue_id);
	emit(o, "--%s\nContent-Type: message/delivery-status\nContent-Description: Delivery report\n\n"
	        "Reporting-MTA: dns; %s\nX-Spoolbox-Queue-ID: %s\n", d->boundary, host, v);
	if (d->envid && *d->envid) {
		CLEAN(v, d->envid);
		emit(o, "Original-Envelope-Id: %s\n", v);
	}
	emit(o, "Arrival-Date: %s\n", arrived);
	for (size_t i = 0; i < d->nrcpt; i++) {
		const struct dsn_rcpt *r = &d->rcpt[i];
		final_of(d, r, v);
		emit(o, "\nFinal-Recipient: rfc822; %s\n", v);
		if (r->orcpt && *r->orcpt) {
			/* "type;addr": the type is kept, the address cleaned */
			const char *semi = strchr(r->orcpt, ';'), *type = "rfc822", *addr = r->orcpt;
			char t[64];
			int tl = 6;
			if (semi && semi > r->orcpt && semi - r->orcpt < (int)sizeof t) {
				type = r->orcpt;
				tl = (int)(semi - r->orcpt);
				addr = semi + 1;
			}
			snprintf(t, sizeof t, "%.*s", tl, type);
			CLEAN(t, t); /* in place: it never writes past what it has read */
			CLEAN(v, addr);
			emit(o, "Original-Recipient: %s; %s\n", t, v);
		}
		emit(o, "Action: %s\nStatus: %s\n", action_of(d, r), status_of(d, r->enh));
		if (r->remote && *r->remote) {
			CLEAN(v, r->remote);
			emit(o, "Remote-MTA: dns; %s\n", v);
		}
		if (r->diag && *r->diag) {
			CLEAN(v, r->diag);
			/* a reply from a server is "smtp"; our own diagnostics get our own type, as
			 * Postfix's "X-Postfix" (RFC 3464 2.3.6 allows X- types) */
			emit(o, "Diagnostic-Code: %s; %s\n", is_smtp_reply(r->diag) ? "smtp" : "X-Spoolbox", v);
		}
		if (r->last_attempt > 0) {
			date(r->last_attempt, when, sizeof when);
			emit(o, "Last-Attempt-Date: %s\n", when);
		}
	}
	/* the blank line that ends this part starts the next emit (dsn_write) */
}


/* Reads up to n bytes; 0 at end of file. */
static ssize_t read_some(int fd, char *p, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

int dsn_write(const struct dsn *d, int fd, dsn_put_fn *put, void *ctx)
{
	/* the header fields and everything up to the returned message's part header */
	int full = dsn_returns_full(d);
	struct out o = {put, ctx, 0};
	char host[300], to[DSN_FIELD_MAX], arrived[64];
	CLEAN(host, d->hostname);
	CLEAN(to, d->to);
	date(d->arrival, arrived, sizeof arrived);
	emit(&o, "From: Mail Delivery System <MAILER-DAEMON@%s>\nTo: <%s>\nSubject: %s\nAuto-Submitted: auto-replied\n"
	     "MIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status;\n\tboundary=\"%s\"\n"
	     "\nThis is a MIME-encapsulated message.\n\n"
	     "--%s\nContent-Type: text/plain; charset=us-ascii\nContent-Description: Notification\n\n"
	     "This is the mail delivery system at %s.\n\n", host, to, subject_of(d), d->boundary, d->boundary, host);
	human_part(&o, d, full, host, arrived);
	status_part(&o, d, host, arrived);
	const char *desc = d->kind == DSN_FAILED ? "Undelivered Message" : d->kind == DSN_DELAYED ? "Delayed Message" : "Message";
	emit(&o, "\n--%s\nContent-Type: %s\nContent-Description: %s%s\n%s\n", d->boundary,
	     full ? "message/rfc822" : "text/rfc822-headers", desc, full ? "" : " Headers",
	     d->body8 ? "Content-Transfer-Encoding: 8bit\n" : "");
	if (o.rc)
		return o.rc;

	/* the returned message (its header section, or all of it) and the closing boundary */
	long long left = full ? d->size : (d->size < (long long)DSN_HDRS_MAX ? d->size : (long long)DSN_HDRS_MAX);
	char buf[8192];
	/* prev starts as a line end, so a message with no header at all returns nothing */
	char last = '\n', prev = '\n';
	int rc;
	while (left > 0) {
		ssize_t n = read_some(fd, buf, (size_t)(left < (long long)sizeof buf ? left : (long long)sizeof buf));
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		size_t use = (size_t)n;
		if (!full) {
			/* stop after the blank line that ends the header section (LF-stored) */
			for (size_t i = 0; i < (size_t)n; i++) {
				if (buf[i] == '\n' && prev == '\n') {
					use = i; /* the blank line itself is not part of the headers */
					left = 0;
					break;
				}
				prev = buf[i];
			}
		}
		if (use && (rc = put(ctx, buf, use)) != 0)
			return rc;
		if (use)
			last = buf[use - 1];
		left -= n;
	}
	/* a part that does not end in a line end (a header section cut at DSN_HDRS_MAX, or a
	 * message without a last newline) gets one before the boundary line: the part stays
	 * well-formed */
	char tail[160];
	int n = snprintf(tail, sizeof tail, "%s\n--%s--\n", last == '\n' ? "" : "\n", d->boundary);
	return put(ctx, tail, (size_t)n);
}
