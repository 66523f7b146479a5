/* An SMTP server protocol engine (RFC 5321 with PIPELINING, 8BITMIME, SIZE, DSN,
 * ENHANCEDSTATUSCODES, SMTPUTF8), independent of any I/O: the caller feeds it the bytes it read
 * and sends what it put in `out`. `submit -bs` drives it over stdin/stdout; an SMTP listener can
 * drive it over a socket. What to do with a sender, a recipient or the data is decided by the
 * caller's callbacks.
 *
 * Contract: command lines longer than SMTPD_LINE_MAX are refused (500 5.5.2) and skipped up to
 * their end, never cut and run. DATA is undone as RFC 5321 4.5.2 says (a leading dot removed)
 * and ends only at CRLF "." CRLF: a "." line after a bare LF is message content, which closes
 * the SMTP-smuggling class of bugs (docs/submit.md). The data reaches the caller with its line
 * endings as received. Replies are buffered in `out` until the caller flushes them; flushing
 * whenever all input read so far has been fed gives correct PIPELINING behaviour. */
#ifndef SPOOLBOX_SMTPD_H
#define SPOOLBOX_SMTPD_H
#include "addr.h"
#include "dsn_flags.h"
#include "util.h"
#include <stddef.h>

#define SMTPD_LINE_MAX 2048   /* command line, CRLF included (512 + room for DSN parameters) */
#define SMTPD_ENVID_MAX DSN_ENVID_MAX
#define SMTPD_ORCPT_MAX DSN_ORCPT_MAX
#define SMTPD_ERRORS_MAX 20   /* bad commands before the server gives up (421) */
#define SMTPD_OUT_MAX 65536   /* replies buffered before a flush is forced by the caller */

enum smtpd_state { SMTPD_START, SMTPD_READY, SMTPD_MAIL, SMTPD_RCPT, SMTPD_DATA, SMTPD_CLOSED };

/* MAIL FROM parameters. */
struct smtpd_mail {
	int null_sender;            /* MAIL FROM:<> */
	int body8;                  /* BODY=8BITMIME */
	int smtputf8;               /* SMTPUTF8 */
	char ret;                   /* 'F' (FULL), 'H' (HDRS), 0 */
	long long size;             /* SIZE=, -1 when absent */
	/* the arrays last: one-byte displacements (docs/size.md) */
	char envid[SMTPD_ENVID_MAX + 1]; /* decoded ENVID, "" when absent */
	struct addr from;
};

/* RCPT TO parameters. */
struct smtpd_rcpt {
	unsigned notify;            /* NOTIFY_* bits of dsn_flags.h, 0 = absent */
	struct addr to;
	char orcpt[SMTPD_ORCPT_MAX + 8]; /* "rfc822;addr" decoded, "" when absent */
};

/* Callbacks return an SMTP reply code (250, 452, 550 ...) and write the reply text (with its
 * enhanced status code) into `text`: a refusal MUST have one, an acceptance left empty gets
 * "2.x.x Ok". Every callback MUST be set (no NULL: the engine does not test them). DATA is
 * always answered 354: what would refuse it is refused at MAIL and RCPT. */
struct smtpd_ops {
	int (*mail)(void *ctx, const struct smtpd_mail *m, char *text, size_t size);
	int (*rcpt)(void *ctx, const struct smtpd_rcpt *r, char *text, size_t size);
	/* message bytes (dot-unstuffing undone, line endings as received); returning -1 makes the
	 * engine drop the rest of the data, data_end is still called at the end */
	int (*data)(void *ctx, const char *p, size_t n);
	int (*data_end)(void *ctx, char *text, size_t size);
	/* the transaction is over (RSET, HELO/EHLO, after DATA, QUIT, end of input) */
	void (*reset)(void *ctx);
};

struct smtpd {
	const struct smtpd_ops *ops;
	void *ctx;
	const char *hostname;
	long long size_max;         /* advertised SIZE and the SIZE= check; 0 = no limit, never < 0 */
	unsigned max_rcpt;          /* RCPTs a transaction takes (452 beyond), more than 0 */
	int state;
	int esmtp;
	int smtputf8;               /* this transaction said SMTPUTF8 */
	unsigned nrcpt;
	unsigned errors;
	/* command line assembly */
	size_t linelen;
	int overflow;
	/* DATA decoding */
	int dstate;
	int data_failed;
	struct buf out;             /* replies waiting to be sent */
	/* the arrays last: one-byte displacements (docs/size.md) */
	/* the HELO/EHLO name, cut at 63 bytes, each byte that is not printable ASCII or is one of
	 * ";()" written '?': it goes into a Received: line as it is */
	char helo[64];
	char line[SMTPD_LINE_MAX + 1];
};

void smtpd_init(struct smtpd *s, const struct smtpd_ops *ops, void *ctx, const char *hostname, long long size_max, unsigned max_rcpt);
void smtpd_free(struct smtpd *s);
/* Queues the 220 greeting. */
void smtpd_greet(struct smtpd *s);
/* Processes input; returns the bytes consumed (fewer than n only once the session is closed). */
size_t smtpd_feed(struct smtpd *s, const char *p, size_t n);
/* End of input without QUIT: aborts a transaction in progress. */
void smtpd_eof(struct smtpd *s);
#endif
