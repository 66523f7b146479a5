/* Delivery status notifications (RFC 3464, RFC 6522, RFC 3834): the text of a report of one
 * kind — failure, delay or success — a multipart/report; report-type=delivery-status message
 * with a human-readable part, the message/delivery-status part, and the returned message
 * (message/rfc822 for a failure, or text/rfc822-headers: for RET=HDRS, for messages over the
 * return limit, and always for delay and success reports, as RFC 3461 4.3 says).
 *
 * This module only writes text: it never opens the queue, never exits, allocates nothing. The
 * caller (applets/errormail.c) collects what the control file says, hands the text to the
 * enqueue pipeline and leaves Date:, Message-ID: and Received: to it.
 *
 * Contract: every string field given here is untrusted (it came from the control file, and from a
 * remote server before that): control characters, bytes >= 0x80 and anything else that could
 * break a header line are replaced, so the output is 7-bit apart from the returned message. */
#ifndef SPOOLBOX_DSN_H
#define SPOOLBOX_DSN_H
#include <stddef.h>
#include <sys/types.h>

#define DSN_HDRS_MAX (256u << 10) /* most header bytes returned (text/rfc822-headers) */
#define DSN_FIELD_MAX 1000        /* longest field value written (longer ones are cut) */

/* What a report is about: every recipient in it has this outcome. */
enum dsn_kind {
	DSN_FAILED = 0,         /* Action: failed, Status 4.x.x/5.x.x (else 5.0.0) */
	DSN_DELAYED,            /* Action: delayed, Status 4.x.x (else 4.0.0): still being tried */
	DSN_SUCCESS,            /* Action: delivered, relayed or expanded, Status 2.x.x (else 2.0.0) */
};

/* One recipient. */
struct dsn_rcpt {
	const char *final;      /* the address as delivered ("user@host"), required; one without a
	                         * domain is shown at the struct dsn's hostname */
	const char *orcpt;      /* "rfc822;addr" from ORCPT, or NULL */
	const char *enh;        /* "5.1.1"; anything not of that form becomes 5.0.0 */
	const char *remote;     /* the remote MTA, or NULL */
	const char *diag;       /* the reply or diagnostic, or NULL */
	long long last_attempt; /* epoch seconds, 0 = unknown */
	const char *action;     /* DSN_SUCCESS: "delivered", "relayed" or "expanded" (anything
	                         * else: delivered); ignored for the other kinds */
};

/* One report. */
struct dsn {
	const char *hostname;   /* MYHOSTNAME: Reporting-MTA and MAILER-DAEMON@ */
	const char *to;         /* the original envelope sender (the report's recipient) */
	const char *queue_id;   /* the original message's id */
	const char *envid;      /* ENVID or NULL */
	char ret;               /* 'H' (RET=HDRS), 'F' or 0 */
	long long arrival;      /* arrival time of the original */
	long long size;         /* bytes of the original (from the control file) */
	long long return_max;   /* largest original returned whole; larger ones: headers only */
	int body8;              /* the original carries 8-bit data */
	const char *boundary;   /* MIME boundary: must not occur in the original (see dsn_boundary) */
	const struct dsn_rcpt *rcpt;
	size_t nrcpt;
	int postmaster;         /* a notice to the postmaster about a failed null-sender message
	                         * (Postfix's 2bounce): its own subject and text, headers only */
	enum dsn_kind kind;
};

/* The generic status code of each kind ("5.0.0", "4.0.0", "2.0.0"), by enum dsn_kind. */
extern const char dsn_generic[3][6];

/* Where the text goes; returns 0, or non-zero to stop (returned by dsn_write). */
typedef int dsn_put_fn(void *ctx, const char *p, size_t n);

/* 1 when the whole original is returned (message/rfc822), 0 when only its header section is
 * (RET=HDRS, over the limit, a postmaster notice, a delay or success report). */
int dsn_returns_full(const struct dsn *d);

/* Makes a boundary from the queue id, a time and a counter: "=_spoolbox_ID_T_N" ("=_" cannot
 * start a line of quoted-printable or base64 text). */
void dsn_boundary(char *out, size_t size, const char *id, long long t, unsigned n);

/* Writes the whole report: its header fields (From, To, Subject, Auto-Submitted, MIME) and body.
 * The original is read from fd, which MUST be positioned at its first header byte and hold
 * d->size bytes of it (the queue's message file after spool_msg_open). Returns 0, the non-zero
 * value of put, or -1 when reading fd failed (errno set). */
int dsn_write(const struct dsn *d, int fd, dsn_put_fn *put, void *ctx);

/* Copies s into out (size bytes) as one safe header-field value: control characters and bytes
 * >= 0x80 become '?', runs of spaces collapse, the result is cut at size-1 bytes. */
void dsn_clean(char *out, size_t size, const char *s);
#endif
