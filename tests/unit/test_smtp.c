/* Unit tests of the smtp client's parsers and encoder, and scripted fake-server transactions
 * (OpenSMTPD's smtpscript idea): a struct io whose low-level read returns a script of server
 * replies and whose write records what the client sent. */
#include "smarthost.h"
#include "smtp_body.h"
#include "smtp_client.h"
#include "auth.h"
#include "unit.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* A reply line: rc, then (when 0) the code, the continuation flag and the text's offset. */
static const struct {
	const char *line;
	int rc, code, more;
	size_t off;
} reply_lines[] = {
	{"250 OK", 0, 250, 0, 4},
	{"250-PIPELINING", 0, 250, 1, 4},
	{"354", 0, 354, 0, 3},
	{"25", -1},
	{"2x0 hi", -1},
	{"150 hi", -1},
	{"650 hi", -1},
	{"250:hi", -1},
};

TEST(reply_line_parse)
{
	for (size_t i = 0; i < ARRAY_LEN(reply_lines); i++) {
		int code, more;
		size_t off;
		unit_case(reply_lines[i].line);
		int r = smtp_reply_line_parse(reply_lines[i].line, strlen(reply_lines[i].line), &code, &more, &off);
		if (reply_lines[i].rc < 0) {
			CHECK(r < 0);
			continue;
		}
		CHECK_INT(r, 0);
		CHECK_INT(code, reply_lines[i].code);
		CHECK_INT(more, reply_lines[i].more);
		CHECK_INT(off, reply_lines[i].off);
	}
}

/* An enhanced status code at the start of a reply text: its length and the code, or 0. */
static const struct {
	const char *text;
	int code, len;
	const char *enh;
} enh_cases[] = {
	{"5.1.1 no such user", 550, 6, "5.1.1"},
	{"4.7.0", 421, 5, "4.7.0"},
	{"2.123.456 ok", 250, 10, "2.123.456"},
	{"5.1.1 class differs", 450, 0},
	{"5.1234.1 x", 550, 0},
	{"5.1.1x", 550, 0},
	{"Ok", 250, 0},
	{"", 250, 0},
};

TEST(enhanced_code_parse)
{
	for (size_t i = 0; i < ARRAY_LEN(enh_cases); i++) {
		char e[16];
		unit_case(enh_cases[i].text);
		CHECK_INT(smtp_enh_parse(enh_cases[i].text, enh_cases[i].code, e, sizeof e), enh_cases[i].len);
		if (enh_cases[i].enh)
			CHECK_STR(e, enh_cases[i].enh);
	}
}

/* ---- a scripted server ---- */

struct script {
	const char *in;     /* what the "server" says */
	size_t pos;
	char out[300000];   /* what the client sent */
	size_t olen;
	int writes;
	size_t last_len;       /* size of the last low-level write */
	int fail_write_after; /* > 0: writes after this many bytes fail with EPIPE */
};

static ssize_t s_read(void *ctx, void *p, size_t n, int t)
{
	struct script *s = ctx;
	(void)t;
	size_t left = strlen(s->in) - s->pos;
	if (!left)
		return 0;
	if (n > left)
		n = left;
	memcpy(p, s->in + s->pos, n);
	s->pos += n;
	return (ssize_t)n;
}

static ssize_t s_write(void *ctx, const void *p, size_t n, int t)
{
	struct script *s = ctx;
	(void)t;
	if (s->fail_write_after && s->olen >= (size_t)s->fail_write_after) {
		errno = EPIPE;
		return -1;
	}
	if (n > sizeof s->out - 1 - s->olen)
		n = sizeof s->out - 1 - s->olen;
	memcpy(s->out + s->olen, p, n);
	s->olen += n;
	s->out[s->olen] = 0;
	s->writes++;
	s->last_len = n;
	return (ssize_t)n;
}

static int s_close(void *ctx)
{
	(void)ctx;
	return 0;
}

static void conn_on(struct smtp_conn *c, struct script *s, const char *server)
{
	memset(c, 0, sizeof *c);
	memset(s, 0, sizeof *s);
	s->in = server;
	c->io.low_read = s_read;
	c->io.low_write = s_write;
	c->io.low_close = s_close;
	c->io.ctx = s;
	c->io.fd = -1;
	c->open = 1;
	str_lcpy(c->name, "mx.test[192.0.2.1]:25", sizeof c->name);
}

TEST(multiline_reply_and_ehlo_caps)
{
	struct smtp_conn c;
	struct script s;
	struct smtp_reply r;
	conn_on(&c, &s, "250-mx.test hello\r\n250-PIPELINING\r\n250-SIZE 1000\r\n250-8BITMIME\r\n250-AUTH=LOGIN\r\n"
	                "250-AUTH PLAIN LOGIN\r\n250-dsn\r\n250 ENHANCEDSTATUSCODES\r\n");
	CHECK(smtp_read_reply(&c, &r, 1000) == 0);
	CHECK_INT(r.code, 250);
	smtp_parse_ehlo(&r, &c.caps);
	CHECK(c.caps.ext & SMTP_EXT_PIPELINING);
	CHECK(c.caps.ext & SMTP_EXT_8BITMIME);
	CHECK(c.caps.ext & SMTP_EXT_DSN);
	CHECK(c.caps.ext & SMTP_EXT_ENHANCED);
	CHECK(!(c.caps.ext & SMTP_EXT_STARTTLS));
	CHECK_INT(c.caps.size, 1000);
	CHECK_STR(c.caps.auth, "LOGIN PLAIN LOGIN");
}

TEST(reply_errors)
{
	struct smtp_conn c;
	struct script s;
	struct smtp_reply r;
	conn_on(&c, &s, "250-first\r\n550 mixed codes\r\n");
	CHECK(smtp_read_reply(&c, &r, 1000) < 0);
	CHECK(strstr(c.err, "malformed reply") != NULL);
	conn_on(&c, &s, "250-cut off\r\n");
	CHECK(smtp_read_reply(&c, &r, 1000) < 0);
	CHECK(strstr(c.err, "connection closed by mx.test") != NULL);
	/* more lines than allowed */
	static char many[SMTP_REPLY_LINES * 12 + 32];
	size_t o = 0;
	for (int i = 0; i < SMTP_REPLY_LINES + 1; i++)
		o += (size_t)snprintf(many + o, sizeof many - o, "250-line\r\n");
	snprintf(many + o, sizeof many - o, "250 end\r\n");
	conn_on(&c, &s, many);
	CHECK(smtp_read_reply(&c, &r, 1000) < 0);
	/* an overlong line is kept, cut, and the reply still parses */
	static char longl[SMTP_LINE_MAX * 2 + 32];
	memset(longl, 'a', sizeof longl);
	memcpy(longl, "550 5.1.1 ", 10);
	memcpy(longl + sizeof longl - 3, "\r\n", 3);
	conn_on(&c, &s, longl);
	CHECK(smtp_read_reply(&c, &r, 1000) == 0);
	CHECK_INT(r.code, 550);
	CHECK_STR(r.enh, "5.1.1");
	CHECK(strlen(r.text) < SMTP_REPLY_MAX);
}

static const char msg[] = "Subject: t\n\n.dot\nbody\n";

static int msg_fd(void)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	if (write(p[1], msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1))
		return -1;
	close(p[1]);
	return p[0];
}

static void txn_setup(struct smtp_txn *t, struct smtp_txn_rcpt *rc, size_t n)
{
	static const char *addrs[] = {"a@x.test", "b@x.test", "c@x.test"};
	memset(t, 0, sizeof *t);
	memset(rc, 0, n * sizeof *rc);
	for (size_t i = 0; i < n; i++)
		rc[i].addr = addrs[i];
	t->sender = "s@y.test";
	t->size = sizeof msg - 1;
	t->rcpt = rc;
	t->n = n;
	t->fd = msg_fd();
}

/* Scripted transactions: the server's replies, what the client must send (all of it, a part,
 * or not a part), and each recipient's result. */
struct txn_want {
	int code;            /* expected result code (0: a local failure, no reply) */
	const char *enh;     /* expected enhanced code, or NULL: not checked */
	const char *text_is; /* expected text, or NULL */
	const char *text_has;
};
static const struct {
	const char *name, *server;
	unsigned ext;
	long long caps_size;
	size_t nrcpt;
	int short_file; /* the file is shorter than its size record */
	int rc;         /* 0, or -1 for "< 0" */
	const char *out_is, *out_has, *out_lacks;
	int writes;     /* expected low-level writes, or 0: not checked */
	struct txn_want want[2];
} txn_cases[] = {
	/* the commands in one write, the body with its end in another */
	{"pipelined_one_rcpt_refused", "250 ok\r\n550 5.1.1 no\r\n250 ok\r\n354 go\r\n250 2.0.0 queued\r\n",
	 SMTP_EXT_PIPELINING | SMTP_EXT_SIZE, 0, 2, 0, 0,
	 "MAIL FROM:<s@y.test> SIZE=22\r\nRCPT TO:<a@x.test>\r\nRCPT TO:<b@x.test>\r\nDATA\r\nSubject: t\r\n\r\n..dot\r\nbody\r\n.\r\n",
	 NULL, NULL, 2, {{550, "5.1.1"}, {250, NULL, "250 2.0.0 queued"}}},
	/* MAIL refused, but the server said 354 to the pipelined DATA: end it at once */
	{"pipelined_mail_refused_then_data_354_sends_empty_end", "452 4.3.1 full\r\n503 no mail\r\n354 go anyway\r\n250 whatever\r\n",
	 SMTP_EXT_PIPELINING, 0, 1, 0, 0, NULL, "DATA\r\n.\r\n", "Subject", 0, {{452, "4.3.1"}}},
	{"unpipelined_all_refused_no_data", "250 ok\r\n550 no\r\n451 later\r\n", 0, 0, 2, 0, 0, NULL, NULL, "DATA", 0,
	 {{550}, {451}}},
	/* EOF instead of the final 250 */
	{"lost_connection_after_body_is_not_delivered", "250 ok\r\n250 ok\r\n354 go\r\n", SMTP_EXT_PIPELINING, 0, 1, 0, -1,
	 NULL, NULL, NULL, 0, {{0, NULL, NULL, "after the end of data"}}},
	{"short_message_file_never_ends_the_data", "250 ok\r\n250 ok\r\n354 go\r\n250 ok\r\n", SMTP_EXT_PIPELINING, 0, 1, 1, -1,
	 NULL, NULL, "\r\n.\r\n", 0, {{0, "4.3.0"}}},
	/* nothing is sent at all */
	{"size_limit_checked_before_mail", "", SMTP_EXT_SIZE, 10, 1, 0, 0, "", NULL, NULL, 0, {{552, "5.3.4"}}},
};

TEST(scripted_transactions)
{
	for (size_t i = 0; i < ARRAY_LEN(txn_cases); i++) {
		struct smtp_conn c;
		static struct script s;
		struct smtp_txn t;
		struct smtp_txn_rcpt rc[2];
		unit_case(txn_cases[i].name);
		conn_on(&c, &s, txn_cases[i].server);
		c.caps.ext = txn_cases[i].ext;
		c.caps.size = txn_cases[i].caps_size;
		txn_setup(&t, rc, txn_cases[i].nrcpt);
		if (txn_cases[i].short_file)
			t.size += 100;
		int r = smtp_transaction(&c, &t);
		if (txn_cases[i].rc < 0)
			CHECK(r < 0);
		else
			CHECK_INT(r, txn_cases[i].rc);
		if (txn_cases[i].out_is)
			CHECK_STR(s.out, txn_cases[i].out_is);
		if (txn_cases[i].out_has)
			CHECK(strstr(s.out, txn_cases[i].out_has) != NULL);
		if (txn_cases[i].out_lacks)
			CHECK(strstr(s.out, txn_cases[i].out_lacks) == NULL);
		if (txn_cases[i].writes)
			CHECK_INT(s.writes, txn_cases[i].writes);
		for (size_t k = 0; k < txn_cases[i].nrcpt; k++) {
			const struct txn_want *w = &txn_cases[i].want[k];
			CHECK_INT(rc[k].res.code, w->code);
			if (w->enh)
				CHECK_STR(rc[k].res.enh, w->enh);
			if (w->text_is)
				CHECK_STR(rc[k].res.text, w->text_is);
			if (w->text_has)
				CHECK(strstr(rc[k].res.text, w->text_has) != NULL);
		}
		close(t.fd);
	}
}

/* A recipient whose address cannot go on a command line keeps its local 553 whatever happens to
 * the others: accepted, the MAIL refused, the connection lost after the body. */
TEST(unsendable_recipient_keeps_its_553)
{
	static const struct {
		const char *server;
		int code0;
	} cases[] = {
		{"250 ok\r\n250 ok\r\n354 go\r\n250 2.0.0 queued\r\n", 250},
		{"452 4.3.1 full\r\n503 no mail\r\n503 no data\r\n", 452},
		{"250 ok\r\n250 ok\r\n354 go\r\n", 0},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct smtp_conn c;
		static struct script s;
		struct smtp_txn t;
		struct smtp_txn_rcpt rc[2];
		conn_on(&c, &s, cases[i].server);
		c.caps.ext = SMTP_EXT_PIPELINING;
		txn_setup(&t, rc, 2);
		rc[1].addr = "b<x>@x.test";
		smtp_transaction(&c, &t);
		CHECK(strstr(s.out, "b<x>") == NULL);
		CHECK_INT(rc[0].res.code, cases[i].code0);
		CHECK_INT(rc[1].res.code, 553);
		CHECK_STR(rc[1].res.enh, "5.1.3");
		CHECK_STR(rc[1].res.text, "the recipient address cannot be written on an SMTP command line");
		close(t.fd);
	}
}

/* A MAIL command that would be too long (an ENVID as long as the line) fails every recipient
 * that could be sent, and nothing goes out; an unsendable one keeps its own reason. */
TEST(mail_command_too_long)
{
	struct smtp_conn c;
	static struct script s;
	struct smtp_txn t;
	struct smtp_txn_rcpt rc[2];
	static char envid[SMTP_CMD_MAX];
	if (!ENABLE_DSN)
		return; /* no ENVID is sent */
	memset(envid, 'e', sizeof envid - 1);
	conn_on(&c, &s, "");
	c.caps.ext = SMTP_EXT_PIPELINING | SMTP_EXT_DSN;
	txn_setup(&t, rc, 2);
	t.envid = envid;
	rc[1].addr = "b<x>@x.test";
	CHECK_INT(smtp_transaction(&c, &t), 0);
	CHECK_STR(s.out, "");
	CHECK_INT(rc[0].res.code, 553);
	CHECK_STR(rc[0].res.enh, "5.1.7");
	CHECK_STR(rc[0].res.text, "the MAIL command would be too long");
	CHECK_STR(rc[1].res.enh, "5.1.3");
	close(t.fd);
}

TEST(dsn_parameters)
{
	struct smtp_conn c;
	struct script s;
	struct smtp_txn t;
	struct smtp_txn_rcpt rc[1];
	conn_on(&c, &s, "250 ok\r\n250 ok\r\n354 go\r\n250 ok\r\n");
	c.caps.ext = SMTP_EXT_PIPELINING | SMTP_EXT_DSN | SMTP_EXT_8BITMIME;
	txn_setup(&t, rc, 1);
	t.ret = 'H';
	t.envid = "id=1 x";
	t.body8 = 1;
	rc[0].notify = NOTIFY_SUCCESS | NOTIFY_DELAY;
	rc[0].orcpt = "rfc822;o+x@z.test";
	CHECK(smtp_transaction(&c, &t) == 0);
	CHECK(str_starts(s.out, "MAIL FROM:<s@y.test> BODY=8BITMIME RET=HDRS ENVID=id+3D1+20x\r\n"
	                        "RCPT TO:<a@x.test> NOTIFY=SUCCESS,DELAY ORCPT=rfc822;o+2Bx@z.test\r\n"));
	close(t.fd);
}

TEST(auth_plain_is_never_in_the_transcript_buffer)
{
	struct smtp_conn c;
	struct script s;
	struct smtp_reply r;
	conn_on(&c, &s, "535 5.7.8 bad\r\n");
	CHECK(smtp_auth(&c, AUTH_PLAIN, "u", "pw", &r) == 1);
	CHECK_INT(r.code, 535);
	CHECK(str_starts(s.out, "AUTH PLAIN AHUAcHc=\r\n"));
}

/* ---- the body encoder ---- */

static size_t enc(const char *in, size_t n, char *out, size_t size, size_t step)
{
	struct smtp_body_enc e;
	size_t o = 0, pos = 0;
	smtp_body_init(&e);
	while (pos < n) {
		size_t k = n - pos < step ? n - pos : step, used;
		o += smtp_body_encode(&e, in + pos, k, &used, out + o, size - o);
		pos += used;
	}
	o += smtp_body_finish(&e, out + o, size - o);
	out[o] = 0;
	return o;
}

TEST(body_crlf_dots_and_end)
{
	char out[256];
	enc("a\n.b\n..\nc", 9, out, sizeof out, 100);
	CHECK_STR(out, "a\r\n..b\r\n...\r\nc\r\n.\r\n");
	enc("", 0, out, sizeof out, 100);
	CHECK_STR(out, ".\r\n");
	enc(".\n", 2, out, sizeof out, 1);
	CHECK_STR(out, "..\r\n.\r\n");
}

TEST(body_folding_any_split_same_bytes)
{
	static char in[3000], a[4000], b[4000];
	memset(in, 'x', sizeof in);
	in[0] = '.';
	in[2000] = '\n';
	size_t na = enc(in, sizeof in, a, sizeof a, sizeof in);
	size_t nb = enc(in, sizeof in, b, sizeof b, 7);
	CHECK_INT(na, nb);
	CHECK(memcmp(a, b, na) == 0);
	/* every wire line is at most 998 bytes */
	size_t col = 0;
	for (size_t i = 0; i < na; i++) {
		if (a[i] == '\r')
			continue;
		col = a[i] == '\n' ? 0 : col + 1;
		CHECK(col <= SMTP_LINE_LIMIT);
	}
	CHECK(memcmp(a + 998, "\r\n ", 3) == 0);
}

/* ---- the SMARTHOST list ---- */

TEST(smarthost_list)
{
	struct smarthost h[SMARTHOST_MAX];
	char err[200];
	CHECK_INT(smarthost_parse("", h, SMARTHOST_MAX, err, sizeof err), 0);
	CHECK_INT(smarthost_parse("  ", h, SMARTHOST_MAX, err, sizeof err), 0);
	int n = smarthost_parse("relay1.example:587 tls=verify, [192.0.2.1]:465, [2001:db8::1] tls=none noauth,"
	                        "r3.example tls=smtps auth=login mx, [r4.example]:465 starttls tls=encrypt",
	                        h, SMARTHOST_MAX, err, sizeof err);
	CHECK_INT(n, 5);
	CHECK_STR(h[0].host, "relay1.example");
	CHECK_INT(h[0].port, 587);
	CHECK_INT(h[0].policy, TLS_VERIFY);
	CHECK(!h[0].smtps && !h[0].bracket);
	CHECK_STR(h[1].host, "192.0.2.1");
	CHECK(h[1].bracket && h[1].smtps);   /* 465 means implicit TLS */
	CHECK_STR(h[2].host, "2001:db8::1");
	CHECK_INT(h[2].port, 0);
	CHECK_INT(h[2].policy, TLS_NONE);
	CHECK(h[2].noauth);
	CHECK(h[3].smtps && h[3].mx);
	CHECK_STR(h[3].mech, "LOGIN");
	CHECK(!h[4].smtps);
	CHECK_INT(h[4].policy, TLS_ENCRYPT);
}

/* SMARTHOST values refused (two entries at most), with a part of the reason or NULL. */
static const struct {
	const char *in, *why;
} bad_smarthosts[] = {
	{"relay:0", "entry 1: bad port"},
	{"a, b:70000", "entry 2"},
	{"a, b, c", "too many"},
	{"2001:db8::1", NULL},
	{"[::1", NULL},
	{"a,,b", NULL},
	{"a tls=may smtps", NULL},
	{"a bogus", NULL},
	{"a auth=GSSAPI", NULL},
	{"a cert=/x", NULL},
	{"[a] mx", NULL},
	{"a/b", NULL},
	{"a pin=nothex", NULL},
};

TEST(smarthost_errors)
{
	for (size_t i = 0; i < ARRAY_LEN(bad_smarthosts); i++) {
		struct smarthost h[2];
		char err[200];
		unit_case(bad_smarthosts[i].in);
		CHECK(smarthost_parse(bad_smarthosts[i].in, h, 2, err, sizeof err) < 0);
		if (bad_smarthosts[i].why)
			CHECK(strstr(err, bad_smarthosts[i].why) != NULL);
	}
}

TEST(stale_cached_connection_is_reported_as_such)
{
	struct smtp_conn c;
	struct script s;
	struct smtp_txn t;
	struct smtp_txn_rcpt rc[1];
	conn_on(&c, &s, ""); /* the server closed the connection while it was idle */
	c.caps.ext = SMTP_EXT_PIPELINING;
	c.rset_pending = 1;
	txn_setup(&t, rc, 1);
	CHECK_INT(smtp_transaction(&c, &t), SMTP_TXN_STALE);
	CHECK(str_starts(s.out, "RSET\r\nMAIL FROM:<s@y.test>\r\n"));
	CHECK(!c.rset_pending);
	close(t.fd);
	/* a live one: RSET, then the transaction, in one write */
	conn_on(&c, &s, "250 reset\r\n250 ok\r\n250 ok\r\n354 go\r\n250 done\r\n");
	c.caps.ext = SMTP_EXT_PIPELINING;
	c.rset_pending = 1;
	txn_setup(&t, rc, 1);
	CHECK_INT(smtp_transaction(&c, &t), 0);
	CHECK_INT(rc[0].res.code, 250);
	CHECK_INT(s.writes, 2);
	close(t.fd);
}

TEST(helo_fallback_and_refused_greeting)
{
	struct smtp_conn c;
	struct script s;
	struct smtp_reply r;
	conn_on(&c, &s, "220 old.test\r\n502 what is EHLO\r\n250 old.test\r\n");
	CHECK_INT(smtp_greet(&c, "me.test", &r), 0);
	CHECK_STR(s.out, "EHLO me.test\r\nHELO me.test\r\n");
	CHECK(!c.caps.esmtp && c.caps.ext == 0);
	conn_on(&c, &s, "421 4.3.2 busy\r\n");
	CHECK_INT(smtp_greet(&c, "me.test", &r), 1);
	CHECK_INT(r.code, 421);
	CHECK_STR(r.enh, "4.3.2");
	CHECK_INT(s.olen, 0);
	conn_on(&c, &s, "220 x\r\n421 closing\r\n");
	CHECK_INT(smtp_greet(&c, "me.test", &r), 1);
	conn_on(&c, &s, "220 x\r\n");
	CHECK_INT(smtp_greet(&c, "me.test", &r), -1);
}

TEST(end_of_data_shares_the_last_write_with_body_bytes)
{
	/* Every size around the buffer boundaries: the final write always carries body bytes and
	 * the end of data together (PERF-NOTES trap 1). */
	static const size_t sizes[] = {1, 511, 512, 513, 28671, 28672, 28673, 32768, 65536, 100000, 131071};
	static char body[131072];
	for (size_t i = 0; i < sizeof body; i++)
		body[i] = (i % 73 == 72) ? '\n' : 'a' + (char)(i % 26);
	char path[512];
	snprintf(path, sizeof path, "%s/msg", unit_tmpdir());
	for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
		FILE *f = fopen(path, "wb");
		fwrite(body, 1, sizes[k], f);
		fclose(f);
		struct smtp_conn c;
		static struct script s;
		struct smtp_txn t;
		struct smtp_txn_rcpt rc[1];
		conn_on(&c, &s, "250 ok\r\n250 ok\r\n354 go\r\n250 ok\r\n");
		c.caps.ext = SMTP_EXT_PIPELINING;
		txn_setup(&t, rc, 1);
		close(t.fd);
		t.fd = open(path, O_RDONLY);
		t.size = (long long)sizes[k];
		CHECK_INT(smtp_transaction(&c, &t), 0);
		CHECK_INT(rc[0].res.code, 250);
		CHECK(s.last_len > 5);
		CHECK(s.olen >= 5 && memcmp(s.out + s.olen - 5, "\r\n.\r\n", 5) == 0);
		close(t.fd);
	}
}
