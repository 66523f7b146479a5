/* Getting an SMTP session that is ready for mail: routing (the SMARTHOST list, or MX records
 * with A/AAAA fallback), every address of every host in order, connect, greeting, EHLO, TLS
 * (STARTTLS or implicit, by policy), AUTH; and keeping it open for the next job to the same
 * destination (connection caching, checked with RSET before reuse).
 *
 * Failure policy (docs/smtp.md "Errors"): anything that goes wrong before a transaction starts
 * is a temporary failure (deferred) with a precise reason, except an RFC 7505 null MX, which is
 * permanent. The next address/host is tried after a connect failure or timeout, a greeting or
 * EHLO that is not 2xx, a TLS failure and an AUTH refusal; when all fail, the reason reported
 * is that of the most telling failure (AUTH > TLS > a server's reply > connect/DNS; the last
 * among equals). */
#ifndef SPOOLBOX_SMTP_SESSION_H
#define SPOOLBOX_SMTP_SESSION_H
#include "smarthost.h"
#include "smtp_client.h"
#include "tls.h"

#define SMTP_TARGETS_MAX 16

/* What the transport's configuration says (filled by the applet from spoolbox.conf). */
struct smtp_config {
	int nsmarthost;              /* 0: deliver by MX */
	enum tls_policy mx_policy;   /* SMTP_TLS */
	unsigned mx_port;            /* SMTP_PORT */
	const char *helo_name;
	const char *cafile;          /* "" = system bundle */
	const char *credentials;     /* path of the credentials file */
	int cleartext_auth;          /* SMTP_CLEARTEXT_AUTH */
	struct smtp_timeouts to;
	int verbose;
	struct smarthost smarthost[SMARTHOST_MAX]; /* last: the fields above get short offsets */
};

/* Why a session could not be had. */
struct smtp_fail {
	int permanent;               /* 1 only for a null MX */
	int rank;                    /* how telling the failure is (see above) */
	int timeouts;                /* addresses that timed out (connect, greeting, EHLO, STARTTLS) */
	char enh[16];
	char text[SMTP_TEXT_MAX + 1];
	char remote[300];            /* host[addr] of the failing server, or "" */
};

struct smtp_session {
	struct smtp_conn conn;
	char key[300];               /* the destination it serves ("" = none) */
	char relay[320];             /* "host[addr]:port" for the log */
	char remote[300];            /* "host[addr]" for the report's Remote-MTA */
	char tlsdesc[96];            /* "" or tls_describe() */
	unsigned messages;           /* transactions on this connection */
	unsigned connections;        /* connections opened by this process (for the log/bench) */
	const struct tls_anchors *anchors; /* loaded once, when first needed */
	char anchors_err[256];
	int anchors_tried;
};

void smtp_session_init(struct smtp_session *s);
/* A session ready for MAIL for destination `domain` (a mail domain or "[address]"): the
 * cached one when it serves the same destination (RSET succeeded), else a new one.
 * Returns 0, or -1 with *why filled. */
int smtp_session_get(struct smtp_session *s, const struct smtp_config *cfg, const char *domain, struct smtp_fail *why);
/* The destination a session to `domain` serves: "[smarthost]" or the domain itself. */
const char *smtp_session_key(const struct smtp_config *cfg, const char *domain);
/* QUIT and forget the connection. */
void smtp_session_end(struct smtp_session *s);
/* Forget it without QUIT (after a failure). */
void smtp_session_drop(struct smtp_session *s);
/* Frees the trust anchors (end of process). */
void smtp_session_free(struct smtp_session *s);
#endif
