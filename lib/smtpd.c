/* SMTP server protocol engine (see smtpd.h): command line assembly with a length limit, the
 * command state machine, ESMTP parameter parsing, and the DATA decoder. */
#include "smtpd.h"
#include "xtext.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DATA decoder states */
enum { D_BOL, D_DOT, D_DOTCR, D_LINE, D_CR };

void smtpd_init(struct smtpd *s, const struct smtpd_ops *ops, void *ctx, const char *hostname, long long size_max, unsigned max_rcpt)
{
	memset(s, 0, sizeof *s);
	s->ops = ops;
	s->ctx = ctx;
	s->hostname = hostname;
	s->size_max = size_max;
	s->max_rcpt = max_rcpt; /* state: SMTPD_START, the 0 of the memset */
	buf_init(&s->out, SMTPD_OUT_MAX * 4);
}

void smtpd_free(struct smtpd *s)
{
	buf_free(&s->out);
}

static void close_session(struct smtpd *s)
{
	s->state = SMTPD_CLOSED;
	s->ops->reset(s->ctx);
}

static void reply(struct smtpd *s, int code, const char *text)
{
	/* out is bounded; a client that pipelines without ever reading is cut off there */
	if (buf_printf(&s->out, "%d %s\r\n", code, text) < 0 && s->state != SMTPD_CLOSED)
		close_session(s);
}

/* noinline: one copy, not one per caller (docs/size.md) */
/* a callback's reply: its text, else ok (only a 2xx comes without one); returns whether it
 * was a 2xx */
__attribute__((noinline)) static int reply_cb(struct smtpd *s, int code, const char *text, const char *ok)
{
	reply(s, code, text[0] ? text : ok);
	return code / 100 == 2;
}

static void error(struct smtpd *s, int code, const char *text)
{
	reply(s, code, text);
	if (++s->errors >= SMTPD_ERRORS_MAX && s->state != SMTPD_CLOSED) {
		reply(s, 421, "4.7.0 Too many errors, closing the session");
		close_session(s);
	}
}

static void reset_transaction(struct smtpd *s)
{
	if (s->state == SMTPD_MAIL || s->state == SMTPD_RCPT || s->state == SMTPD_DATA)
		s->ops->reset(s->ctx);
	s->nrcpt = 0;
	s->smtputf8 = 0;
	if (s->state != SMTPD_CLOSED)
		s->state = s->helo[0] ? SMTPD_READY : SMTPD_START;
}

/* reply() with a text made from fmt and the host name (the greeting, QUIT's) */
static void reply_host(struct smtpd *s, int code, const char *fmt)
{
	char text[320]; /* the host name is under 256 bytes */
	snprintf(text, sizeof text, fmt, s->hostname);
	reply(s, code, text);
}

void smtpd_greet(struct smtpd *s)
{
	reply_host(s, 220, "%s ESMTP spoolbox");
}

/* Splits the next space-separated word of p: returns its start and sets *len, or NULL. */
static const char *word(const char **p, size_t *len)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	const char *e = s;
	while (*e && *e != ' ' && *e != '\t')
		e++;
	*len = (size_t)(e - s);
	*p = e;
	return s;
}

/* Which of names (each NUL-ended, "" ends them) the parameter w (len bytes) is: its index, and
 * *val, *vlen its value after '=' (NULL and 0 without one); -1 when none (NULL, 0). */
static int param(const char *w, size_t len, const char *names, const char **val, size_t *vlen)
{
	*val = NULL, *vlen = 0;
	for (int i = 0; *names; i++) {
		size_t n = strlen(names);
		if (len >= n && str_ncaseeq(w, names, n) && (len == n || w[n] == '=')) {
			if (len != n)
				*val = w + n + 1, *vlen = len - n - 1;
			return i;
		}
		names += n + 1;
	}
	return -1;
}

static int parse_digits(const char *p, size_t n, long long *out)
{
	long long v = 0;
	if (!n || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return 0;
}

/* MAIL's sender (mail 1, "<>" allowed) or RCPT's recipient at *p: addr_parse_path's result,
 * *p moved past the address; -1 with the 501 said. */
static int path(struct smtpd *s, const char **p, int mail, struct addr *a)
{
	char err[160], text[200];
	size_t used;
	int r = addr_parse_path(*p, strlen(*p), mail, a, &used, err, sizeof err);
	if (r < 0) {
		snprintf(text, sizeof text, "5.1.%c Bad %s address syntax: %s", mail ? '7' : '3',
		         mail ? "sender" : "recipient", err);
		error(s, 501, text);
		return r;
	}
	*p += used;
	return r;
}

/* error() with a text made from fmt and one string */
static void error_s(struct smtpd *s, int code, const char *fmt, const char *arg)
{
	char text[64];
	snprintf(text, sizeof text, fmt, arg);
	error(s, code, text);
}

/* MAIL (mail 1) and RCPT (mail 0): one path, as both take an address, parameters, the SMTPUTF8
 * check and a callback; MAIL's parameters are the first five names, RCPT's the last two */
static void cmd_path(struct smtpd *s, const char *arg, int mail)
{
	if (mail ? s->state != SMTPD_READY : s->state != SMTPD_MAIL && s->state != SMTPD_RCPT)
		return error(s, 503, !mail ? "5.5.1 Need MAIL before RCPT"
		                     : s->state == SMTPD_START ? "5.5.1 Send HELO or EHLO first" : "5.5.1 Nested MAIL command");
	const char *cmd = mail ? "MAIL" : "RCPT";
	struct smtpd_mail m;
	struct smtpd_rcpt rc;
	memset(&m, 0, sizeof m);
	memset(&rc, 0, sizeof rc);
	m.size = -1;
	struct addr *a = mail ? &m.from : &rc.to;
	char text[512];
	const char *p = arg, *w;
	int r = path(s, &p, mail, a);
	if (r < 0)
		return;
	m.null_sender = r == 1;
	size_t len;
	while ((w = word(&p, &len))) {
		const char *v;
		size_t vl;
		if (!s->esmtp)
			return error_s(s, 555, "5.5.4 %s parameters need EHLO", cmd);
		int k = param(w, len, "SIZE\0BODY\0RET\0ENVID\0SMTPUTF8\0NOTIFY\0ORCPT\0", &v, &vl);
		if (mail != (k < 5))
			k = -1; /* the other command's */
		if (k == 0 && v) {
			if (parse_digits(v, vl, &m.size) < 0)
				return error(s, 501, "5.5.4 Bad SIZE value");
		} else if (k == 1 && v) {
			if (vl == 8 && str_ncaseeq(v, "8BITMIME", 8))
				m.body8 = 1;
			else if (!(vl == 4 && str_ncaseeq(v, "7BIT", 4)))
				return error(s, 555, "5.5.4 Unsupported BODY type");
		} else if (ENABLE_DSN && k == 2 && v) {
			if (!(m.ret = dsn_ret_parse(v, vl)))
				return error(s, 501, "5.5.4 Bad RET value");
		} else if (ENABLE_DSN && k == 3 && v) {
			if (xtext_decode(v, vl, m.envid, sizeof m.envid) <= 0)
				return error(s, 501, "5.5.4 Bad ENVID value");
		} else if (k == 4 && !v) {
			m.smtputf8 = 1;
		} else if (ENABLE_DSN && k == 5 && v) {
			if (dsn_notify_parse(v, vl, &rc.notify) < 0)
				return error(s, 501, "5.5.4 Bad NOTIFY value");
		} else if (ENABLE_DSN && k == 6 && v) {
			const char *semi = memchr(v, ';', vl);
			char dec[SMTPD_ORCPT_MAX + 1];
			if (!semi || semi == v || (size_t)(semi - v) > 32 ||
			    xtext_decode(semi + 1, vl - (size_t)(semi - v) - 1, dec, sizeof dec) <= 0)
				return error(s, 501, "5.5.4 Bad ORCPT value");
			snprintf(rc.orcpt, sizeof rc.orcpt, "%.*s;%s", (int)(semi - v), v, dec);
		} else {
			return error_s(s, 555, "5.5.4 Unsupported %s parameter", cmd);
		}
	}
	if (m.size >= 0 && s->size_max && m.size > s->size_max) /* RCPT's m.size is -1 */
		return error(s, 552, "5.3.4 Message size exceeds fixed limit");
	if (a->utf8 && !(mail ? m.smtputf8 : s->smtputf8))
		return error_s(s, 553, "5.6.7 Non-ASCII %s address needs SMTPUTF8", mail ? "sender" : "recipient");
	if (!mail && s->nrcpt >= s->max_rcpt)
		return reply(s, 452, "4.5.3 Too many recipients");
	text[0] = 0;
	int code = mail ? s->ops->mail(s->ctx, &m, text, sizeof text) : s->ops->rcpt(s->ctx, &rc, text, sizeof text);
	if (reply_cb(s, code, text, mail ? "2.1.0 Ok" : "2.1.5 Ok")) {
		s->state = mail ? SMTPD_MAIL : SMTPD_RCPT;
		s->nrcpt = mail ? 0 : s->nrcpt + 1;
		if (mail)
			s->smtputf8 = m.smtputf8;
	}
}

static void cmd_data(struct smtpd *s, const char *arg)
{
	if (*arg)
		return error(s, 501, "5.5.4 DATA takes no arguments");
	if (s->state == SMTPD_MAIL)
		return error(s, 554, "5.5.1 No valid recipients");
	if (s->state != SMTPD_RCPT)
		return error(s, 503, "5.5.1 Need MAIL and RCPT before DATA");
	reply(s, 354, "End data with <CR><LF>.<CR><LF>");
	s->state = SMTPD_DATA;
	s->dstate = D_BOL;
	s->data_failed = 0;
}

static void cmd_helo(struct smtpd *s, const char *arg, int esmtp)
{
	const char *p = arg, *w;
	size_t len;
	if (!(w = word(&p, &len)))
		return error(s, 501, esmtp ? "5.5.4 EHLO needs a domain" : "5.5.4 HELO needs a domain");
	reset_transaction(s);
	size_t i = 0;
	for (; i < len && i < sizeof s->helo - 1; i++) {
		char c = w[i];
		s->helo[i] = c > ' ' && c < 0x7f && c != ';' && c != '(' && c != ')' ? c : '?';
	}
	s->helo[i] = 0;
	s->esmtp = esmtp;
	s->state = SMTPD_READY;
	if (!esmtp) {
		reply(s, 250, s->hostname);
		return;
	}
	/* one format: "250-SIZE 1000" with a limit, "250-SIZE" without (%.0lld of 0 prints nothing;
	 * size_max is never negative) */
	buf_printf(&s->out, "250-%s\r\n250-PIPELINING\r\n250-8BITMIME\r\n250-SIZE%s%.0lld\r\n%s250-SMTPUTF8\r\n250 ENHANCEDSTATUSCODES\r\n",
	           s->hostname, s->size_max ? " " : "", s->size_max, ENABLE_DSN ? "250-DSN\r\n" : "");
}

static int is_cmd(const char *line, const char *cmd)
{
	size_t n = strlen(cmd);
	return str_ncaseeq(line, cmd, n) && (line[n] == 0 || line[n] == ' ');
}

static void command(struct smtpd *s, char *line)
{
	const char *arg;
	if (memchr(line, 0, s->linelen) != NULL) /* a NUL inside the line: nothing valid has one */
		return error(s, 500, "5.5.2 Syntax error (NUL byte in command)");
	/* which command: its index in one string, each name NUL-ended, "" ends it; the last six
	 * are known and not implemented */
	int k = 0;
	for (const char *t = "EHLO\0HELO\0DATA\0RSET\0NOOP\0QUIT\0VRFY\0HELP\0EXPN\0STARTTLS\0AUTH\0BDAT\0ETRN\0TURN\0";
	     *t && !is_cmd(line, t); t += strlen(t) + 1)
		k++;
	if (k < 2)
		return cmd_helo(s, line + 4, k == 0);
	/* MAIL FROM: and RCPT TO:, else a syntax hint for anything else starting MAIL or RCPT */
	int mail = str_ncaseeq(line, "MAIL", 4);
	if (mail || str_ncaseeq(line, "RCPT", 4)) {
		if (str_ncaseeq(line + 4, mail ? " FROM:" : " TO:", mail ? 6 : 4))
			return cmd_path(s, line + (mail ? 10 : 8), mail);
		return error(s, 501, "5.5.4 Syntax: MAIL FROM:<address> / RCPT TO:<address>");
	}
	arg = line + 4;
	while (*arg == ' ')
		arg++;
	if (k == 2)
		return cmd_data(s, arg);
	if (k == 3 || k == 5)
		reset_transaction(s);
	if (k == 3 || k == 4)
		return reply(s, 250, "2.0.0 Ok");
	if (k == 5) {
		reply_host(s, 221, "2.0.0 %s closing connection");
		s->state = SMTPD_CLOSED;
		return;
	}
	if (k == 6)
		return reply(s, 252, "2.5.2 Cannot VRFY user, but will accept the message and attempt delivery");
	if (k == 7)
		return reply(s, 214, "2.0.0 Commands: HELO EHLO MAIL RCPT DATA RSET NOOP QUIT VRFY");
	if (k < 14)
		return error(s, 502, "5.5.1 Command not implemented");
	error(s, 500, "5.5.2 Syntax error, command unrecognized");
}

static void data_emit(struct smtpd *s, const char *p, size_t n)
{
	if (n && !s->data_failed && s->ops->data(s->ctx, p, n) < 0)
		s->data_failed = 1;
}

static void data_done(struct smtpd *s)
{
	char text[512];
	text[0] = 0; /* not "= """: that zeroes all of it */
	int code = s->ops->data_end(s->ctx, text, sizeof text);
	reply_cb(s, code, text, "2.0.0 Ok");
	s->state = SMTPD_RCPT; /* so that reset_transaction() calls reset */
	reset_transaction(s);
}

/* Decodes DATA bytes; returns how many were used (stops just after the final CRLF.CRLF). The
 * states by ranges, not a switch: its jump table was 40 bytes. */
static size_t data_feed(struct smtpd *s, const char *p, size_t n)
{
	size_t i = 0, run = 0; /* run: start of bytes to pass on unchanged */
	for (; i < n; i++) {
		char c = p[i];
		int st = s->dstate;
		if (st >= D_LINE) { /* D_LINE, D_CR */
			if (c == '\n' && st == D_CR)
				s->dstate = D_BOL;
			else if (c == '\r')
				s->dstate = D_CR;
			else
				s->dstate = D_LINE;
			continue;
		}
		if (st == D_BOL && c == '.') {
			data_emit(s, p + run, i - run);
			s->dstate = D_DOT;
			run = i + 1; /* the dot is dropped: stuffed, or part of the end */
			continue;
		}
		if (st == D_DOT && c == '\r') {
			s->dstate = D_DOTCR;
			run = i + 1;
			continue;
		}
		if (st == D_DOTCR) {
			if (c == '\n') {
				s->dstate = D_BOL;
				data_done(s);
				return i + 1;
			}
			data_emit(s, "\r", 1); /* ".\r" and something else: a stuffed line after all */
			run = i;
		}
		s->dstate = c == '\r' ? D_CR : D_LINE;
	}
	if (s->dstate != D_DOTCR)
		data_emit(s, p + run, i - run);
	return i;
}

size_t smtpd_feed(struct smtpd *s, const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && s->state != SMTPD_CLOSED) {
		if (s->state == SMTPD_DATA) {
			i += data_feed(s, p + i, n - i);
			continue;
		}
		const char *lf = memchr(p + i, '\n', n - i);
		size_t take = lf ? (size_t)(lf - (p + i)) + 1 : n - i;
		if (!s->overflow) {
			if (s->linelen + take > SMTPD_LINE_MAX) {
				s->overflow = 1;
			} else {
				memcpy(s->line + s->linelen, p + i, take);
				s->linelen += take;
			}
		}
		i += take;
		if (!lf)
			continue;
		if (s->overflow) {
			s->overflow = 0;
			s->linelen = 0;
			error(s, 500, "5.5.2 Line too long");
			continue;
		}
		size_t len = s->linelen;
		while (len && (s->line[len - 1] == '\n' || s->line[len - 1] == '\r'))
			len--;
		s->line[len] = 0;
		s->linelen = len;
		command(s, s->line);
		s->linelen = 0;
	}
	return i;
}

void smtpd_eof(struct smtpd *s)
{
	if (s->state != SMTPD_CLOSED) {
		reset_transaction(s);
		s->state = SMTPD_CLOSED;
	}
}
