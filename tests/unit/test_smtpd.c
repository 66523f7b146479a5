/* Unit tests of the SMTP server engine: scripted sessions fed in one piece and byte by byte,
 * checking the replies and what reached the callbacks. */
#include "smtpd.h"
#include "unit.h"
#include "util.h"
#include <stdio.h>

struct sess {
	char log[8192];   /* "M<from> R<to> D<data> E" events */
	struct buf data;
	int ndata;
};

static void ev(struct sess *s, const char *fmt, const char *a)
{
	size_t n = strlen(s->log);
	snprintf(s->log + n, sizeof s->log - n, fmt, a);
}

static int on_mail(void *ctx, const struct smtpd_mail *m, char *text, size_t size)
{
	char a[600];
	addr_format(&m->from, NULL, a, sizeof a);
	ev(ctx, "M<%s>", m->null_sender ? "" : a);
	if (m->body8)
		ev(ctx, "%s", "8");
	if (m->envid[0])
		ev(ctx, "E%s", m->envid);
	if (m->ret)
		ev(ctx, "%s", m->ret == 'F' ? "F" : "H");
	return 250;
}

static int on_rcpt(void *ctx, const struct smtpd_rcpt *r, char *text, size_t size)
{
	char a[600];
	addr_format(&r->to, NULL, a, sizeof a);
	if (strcmp(a, "nobody@nowhere.example") == 0) {
		snprintf(text, size, "5.1.1 no such user");
		return 550;
	}
	ev(ctx, " R<%s>", a);
	if (r->notify) {
		char n[8];
		snprintf(n, sizeof n, "%u", r->notify);
		ev(ctx, "N%s", n);
	}
	if (r->orcpt[0])
		ev(ctx, "O%s", r->orcpt);
	return 250;
}

/* the transaction is over: the next one's data starts empty */
static void on_reset(void *ctx)
{
	buf_reset(&((struct sess *)ctx)->data);
}

static int on_data(void *ctx, const char *p, size_t n)
{
	return buf_add(&((struct sess *)ctx)->data, p, n);
}

static int on_data_end(void *ctx, char *text, size_t size)
{
	struct sess *s = ctx;
	s->ndata++;
	ev(s, " D[%s]", s->data.p ? s->data.p : "");
	snprintf(text, size, "2.0.0 Ok: queued as X%d", s->ndata);
	return 250;
}

static const struct smtpd_ops ops = {on_mail, on_rcpt, on_data, on_data_end, on_reset};

/* Runs a session; returns the replies (static buffer). */
static const char *run(struct sess *s, const char *in, size_t n, int bytewise)
{
	static char out[16384];
	struct smtpd d;
	memset(s, 0, sizeof *s);
	buf_init(&s->data, 1 << 20);
	smtpd_init(&d, &ops, s, "box.example", 1000, 3);
	smtpd_greet(&d);
	if (bytewise)
		for (size_t i = 0; i < n; i++)
			smtpd_feed(&d, in + i, 1);
	else
		smtpd_feed(&d, in, n);
	smtpd_eof(&d);
	snprintf(out, sizeof out, "%s", d.out.p ? d.out.p : "");
	smtpd_free(&d);
	buf_free(&s->data);
	return out;
}

#define S(x) x, sizeof(x) - 1

TEST(smtpd_pipelined_session)
{
	static const char in[] =
	    "EHLO client\r\nMAIL FROM:<a@x.org> BODY=8BITMIME\r\nRCPT TO:<b@y.org>\r\nRCPT TO:<c@y.org> NOTIFY=SUCCESS,FAILURE ORCPT=rfc822;c+2Bx@y.org\r\n"
	    "DATA\r\nSubject: t\r\n\r\n..dot\r\nline\r\n.\r\nQUIT\r\n";
	for (int bw = 0; bw < 2; bw++) {
		struct sess s;
		const char *out = run(&s, S(in), bw);
		CHECK(strstr(out, "220 box.example ESMTP") == out);
		CHECK(strstr(out, "250-PIPELINING\r\n") && strstr(out, "250-8BITMIME\r\n") && strstr(out, "250-SIZE 1000\r\n") &&
		      strstr(out, "250-DSN\r\n") && strstr(out, "250 ENHANCEDSTATUSCODES\r\n"));
		CHECK(strstr(out, "354 "));
		CHECK(strstr(out, "250 2.0.0 Ok: queued as X1\r\n221 2.0.0"));
		CHECK_STR(s.log, "M<a@x.org>8 R<b@y.org> R<c@y.org>N3Orfc822;c+x@y.org D[Subject: t\r\n\r\n.dot\r\nline\r\n]");
	}
}

/* Sessions fed in one piece: the client's lines, replies that must be among the server's, and
 * a part of the callbacks' log (NULL: not checked). */
static const struct {
	const char *name, *in;
	const char *replies[12];
	const char *log_has;
} sessions[] = {
	{"sequence_errors",
	 "MAIL FROM:<a@b.c>\r\nHELO x\r\nRCPT TO:<a@b.c>\r\nDATA\r\nMAIL FROM:<a@b.c>\r\nMAIL FROM:<a@b.c>\r\nDATA\r\nQUIT\r\n",
	 {"503 5.5.1 Send HELO", "250 box.example\r\n", "503 5.5.1 Need MAIL before RCPT", "503 5.5.1 Need MAIL and RCPT",
	  "503 5.5.1 Nested MAIL", "554 5.5.1 No valid recipients"}},
	{"parameters",
	 "HELO x\r\nMAIL FROM:<a@b.c> SIZE=10\r\nEHLO x\r\nMAIL FROM:<a@b.c> SIZE=5000\r\n"
	 "MAIL FROM:<a@b.c> FOO=1\r\nMAIL FROM:<a@b.c> BODY=BINARYMIME\r\n"
	 "MAIL FROM:<> RET=HDRS ENVID=abc+2B1\r\nRCPT TO:<a@b.c> NOTIFY=NEVER,SUCCESS\r\n"
	 "RCPT TO:<>\r\nRCPT TO:<nobody@nowhere.example>\r\nVRFY root\r\nNOOP\r\nRSET\r\nQUIT\r\n",
	 {"555 5.5.4 MAIL parameters need EHLO", "552 5.3.4", "555 5.5.4 Unsupported MAIL parameter", "555 5.5.4 Unsupported BODY",
	  "501 5.5.4 Bad NOTIFY", "501 5.1.3", "550 5.1.1 no such user", "252 2.5.2", "221 2.0.0"},
	 "M<>Eabc+1H"},
	{"recipient_limit_and_utf8",
	 "EHLO x\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<1@b.c>\r\nRCPT TO:<2@b.c>\r\nRCPT TO:<3@b.c>\r\n"
	 "RCPT TO:<4@b.c>\r\nRCPT TO:<j\xc3\xb8rn@b.c>\r\nRSET\r\nMAIL FROM:<a@b.c> SMTPUTF8\r\nRCPT TO:<j\xc3\xb8rn@b.c>\r\n",
	 {"452 4.5.3 Too many recipients", "553 5.6.7"}, "R<j\xc3\xb8rn@b.c>"},
};

TEST(smtpd_sessions)
{
	for (size_t i = 0; i < ARRAY_LEN(sessions); i++) {
		struct sess s;
		unit_case(sessions[i].name);
		const char *out = run(&s, sessions[i].in, strlen(sessions[i].in), 0);
		for (size_t k = 0; k < ARRAY_LEN(sessions[i].replies) && sessions[i].replies[k]; k++)
			if (!strstr(out, sessions[i].replies[k]))
				unit_fail(__FILE__, __LINE__, "no \"%s\" among the replies:\n%s", sessions[i].replies[k], out);
		if (sessions[i].log_has)
			CHECK(strstr(s.log, sessions[i].log_has) != NULL);
	}
}

TEST(smtpd_long_lines_and_garbage)
{
	char in[8000];
	size_t n = 0;
	n += (size_t)sprintf(in + n, "EHLO x\r\nMAIL FROM:<");
	memset(in + n, 'a', 3000);
	n += 3000;
	n += (size_t)sprintf(in + n, "@b.c>\r\nNOOP\r\nBOGUS\r\n\r\nMAIL\r\n");
	memcpy(in + n, "NO\0OP\r\n", 7);
	n += 7;
	struct sess s;
	const char *out = run(&s, in, n, 0);
	CHECK(strstr(out, "500 5.5.2 Line too long\r\n250 2.0.0 Ok\r\n"));
	CHECK(strstr(out, "500 5.5.2 Syntax error, command unrecognized"));
	CHECK(strstr(out, "501 5.5.4 Syntax"));
	CHECK(strstr(out, "NUL byte"));
	/* too many errors end the session */
	char many[1000] = "";
	for (int i = 0; i < 25; i++)
		strcat(many, "XYZZY\r\n");
	out = run(&s, many, strlen(many), 0);
	CHECK(strstr(out, "421 4.7.0"));
}

TEST(smtpd_data_end_only_at_crlf_dot_crlf)
{
	struct sess s;
	/* "\n.\n" and "\r.\r" are content, not the end: no smuggled second transaction */
	static const char in[] = "EHLO x\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<d@e.f>\r\nDATA\r\nA\n.\nMAIL FROM:<evil@x.org>\r\n"
	                         "B\r.\r\nC\r\n.\r\nQUIT\r\n";
	for (int bw = 0; bw < 2; bw++) {
		const char *out = run(&s, S(in), bw);
		CHECK_INT(s.ndata, 1);
		CHECK_STR(s.log, "M<a@b.c> R<d@e.f> D[A\n.\nMAIL FROM:<evil@x.org>\r\nB\r.\r\nC\r\n]");
		CHECK(strstr(out, "221 "));
	}
	/* a dot line right after DATA, and ".\r" followed by text */
	static const char in2[] = "HELO x\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<d@e.f>\r\nDATA\r\n.\rx\r\n.\r\n";
	run(&s, S(in2), 1);
	CHECK_STR(s.log, "M<a@b.c> R<d@e.f> D[\rx\r\n]");
	/* end of input in the middle of DATA: nothing is accepted */
	run(&s, S("HELO x\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<d@e.f>\r\nDATA\r\npartial\r\n"), 0);
	CHECK_INT(s.ndata, 0);
}
