/* smtp -t: tests the outgoing mail setup end to end, the day-one check of a router's smarthost.
 * It goes the way a delivery goes (the SMARTHOST list or the MX of the recipient's domain;
 * connect, EHLO, STARTTLS and the certificate verdict, AUTH with the credentials file) and then
 * MAIL FROM and RCPT TO, printing each step with its verdict on stdout (-v adds the dialogue
 * on stderr, AUTH lines hidden). Nothing is sent unless -s is given: the transaction ends with
 * RSET. docs/smtp.md "Testing a smarthost". */
#include "common.h"
#include "creds.h"
#include "header.h"
#include "smtp_session.h"
#include "smtp_test.h"
#include "sysexits.h"
#include "tls.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int step(const char *what, int ok, const char *detail)
{
	printf("%-10s %-4s %s\n", what, ok ? "ok" : "FAIL", detail);
	fflush(stdout);
	return ok;
}

/* One command of the transaction; returns the reply code (0: the connection failed). */
static int command(struct smtp_conn *c, const char *what, const char *line, int want, int timeout)
{
	struct smtp_reply r;
	char one[300];
	if (smtp_cmd(c, line, &r, timeout) < 0) {
		step(what, 0, c->err);
		return 0;
	}
	smtp_reply_oneline(&r, one, sizeof one); /* "250 2.1.0 Ok": the code is its start */
	step(what, r.code == want, one);
	return r.code;
}

static int verdict(int code, const char *text)
{
	step("verdict", code == 0, text);
	return code;
}

int smtp_test(struct smtp_session *s, const struct smtp_config *cfg, const struct conf *c, const char *from,
              const char *rcpt, int send)
{
	char line[SMTP_CMD_MAX], domain[256] = "example.invalid", route[600];
	const char *at = rcpt ? strrchr(rcpt, '@') : NULL;
	if (rcpt && (!at || !at[1] || strlen(rcpt) > 900 || strpbrk(rcpt, " <>\r\n"))) {
		fprintf(stderr, "smtp: -t %s: not an address (user@domain)\n", rcpt);
		return EX_USAGE;
	}
	if (at)
		str_lcpy(domain, at + 1, sizeof domain);
	if (cfg->nsmarthost) {
		const struct smarthost *h = &cfg->smarthost[0];
		str_fmt(route, sizeof route, "SMARTHOST %s (first: %s%s%s:%u tls=%s%s%s, %d entr%s)", conf_str(c, CK_SMARTHOST),
		        h->bracket ? "[" : "", h->host, h->bracket ? "]" : "", smarthost_port(h), tls_policy_name(h->policy),
		        h->tls_name[0] ? " name=" : "", h->tls_name, cfg->nsmarthost, cfg->nsmarthost == 1 ? "y" : "ies");
	} else {
		str_fmt(route, sizeof route, "the MX hosts of %s (no SMARTHOST; SMTP_TLS=%s)", domain,
		        tls_policy_name(cfg->mx_policy));
	}
	step("route", 1, route);
	struct smtp_fail why;
	int rc = EX_TEMPFAIL;
	const char *v = "mail would be deferred (connect, EHLO, TLS or AUTH failed: see above)";
	if (smtp_session_get(s, cfg, domain, &why) < 0) {
		step("session", 0, why.text);
		goto end; /* the session's end does nothing on a connection never opened */
	}
	step("connect", 1, s->relay);
	step("EHLO", 1, s->conn.caps.esmtp ? "ESMTP" : "HELO only");
	step("TLS", !cfg->nsmarthost || cfg->smarthost[0].policy < TLS_ENCRYPT || s->tlsdesc[0],
	     s->tlsdesc[0] ? s->tlsdesc : "none (clear text)");
	/* the session refuses a smarthost that has a credentials line but no AUTH, so a line here
	 * means AUTH succeeded; the name is the one the session looked up */
	struct creds cr;
	const char *host = s->remote;
	char name[256];
	str_lcpy(name, host, sizeof name);
	char *br = strchr(name, '[');
	if (br)
		*br = 0;
	int port = 0;
	const char *colon = strrchr(s->relay, ':');
	if (colon)
		port = (int)strtol(colon + 1, NULL, 10);
	int have = creds_lookup(cfg->credentials, name, port, &cr, NULL, NULL) == 1 &&
	           !(cfg->nsmarthost && cfg->smarthost[0].noauth);
	if (have) {
		char who[600];
		str_fmt(who, sizeof who, "as %s (%s line %d)", cr.user, cfg->credentials, cr.line);
		step("AUTH", 1, who);
	} else {
		step("AUTH", 1, "none (no credentials line for this host)");
	}
	creds_wipe(&cr);
	int to = cfg->to.cmd;
	str_fmt(line, sizeof line, "MAIL FROM:<%s>", from);
	int code = command(&s->conn, "MAIL", line, 250, to);
	if (code == 250 && rcpt) {
		str_fmt(line, sizeof line, "RCPT TO:<%s>", rcpt);
		code = command(&s->conn, "RCPT", line, 250, to);
		if ((code == 250 || code == 251) && send) {
			if (command(&s->conn, "DATA", "DATA", 354, cfg->to.data_init) == 354) {
				char date[64];
				if (hdr_date(time(NULL), date, sizeof date) < 0)
					date[0] = 0;
				str_fmt(line, sizeof line,
				        "From: <%s>\r\nTo: <%s>\r\nDate: %s\r\nSubject: spoolbox smarthost test\r\n\r\n"
				        "This message tests the outgoing mail setup (spoolbox smtp -t -s).\r\n.",
				        from, rcpt, date);
				code = command(&s->conn, "sent", line, 250, cfg->to.data_done);
			} else {
				code = 0;
			}
		}
	} else if (code == 250) {
		step("RCPT", 1, "skipped (give a recipient address to test RCPT TO)");
	}
	int ok = code >= 200 && code < 300;
	rc = 0;
	v = send && rcpt ? "the setup works: a test message was accepted" : "the setup works: mail would be accepted";
	if (ok) {
		if (!send)
			step("DATA", 1, "not sent (-s sends a test message)");
		smtp_rset(&s->conn);
	} else if (code >= 500) {
		rc = EX_UNAVAILABLE;
		v = "mail would bounce: the server refused it (see above)";
	} else {
		rc = EX_TEMPFAIL;
		v = "mail would be deferred (see above)";
	}
end:
	smtp_session_end(s);
	return verdict(rc, v);
}
