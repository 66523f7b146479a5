/* Unit tests of the DSN text (lib/dsn): the delivery-status fields, Status fallbacks, the
 * Diagnostic-Code type, header-injection attempts in every field, RET=HDRS and the size cap
 * (headers only), a header section with no body, the closing boundary. */
#include "dsn.h"
#include "unit.h"
#include "util.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int put_buf(void *ctx, const char *p, size_t n)
{
	return buf_add(ctx, p, n) ? 1 : 0;
}

/* A file holding text, opened for reading at its start. */
static int file_with(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", unit_tmpdir(), name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static const char original[] = "Received: from root by box.example\nSubject: hi\n\nbody\nmore body\n";

static struct dsn base(const struct dsn_rcpt *r, size_t n)
{
	struct dsn d = {"box.example", "alice@example.org", "T4G2KQ80A1F3Z7K", NULL, 0, 1795246800,
	                (long long)strlen(original), 100000, 0, "=_b", r, n, 0, DSN_FAILED};
	return d;
}

static char *render(const struct dsn *d, const char *text)
{
	static struct buf b;
	buf_free(&b);
	buf_init(&b, 1 << 20);
	int fd = file_with("orig", text);
	CHECK(fd >= 0);
	int rc = dsn_write(d, fd, put_buf, &b);
	CHECK_INT(rc, 0);
	close(fd);
	return b.p ? b.p : (char *)"";
}

TEST(dsn_fields_of_a_failure)
{
	struct dsn_rcpt r[2] = {
	    {"bob@example.com", "rfc822;Bob@Example.com", "5.1.1", "mx.example.com[192.0.2.1]",
	     "550 5.1.1 <bob@example.com>: no such user", 1795246900, NULL},
	    {"root@box.example", NULL, "-", NULL, "unknown user: root2", 0, NULL},
	};
	struct dsn d = base(r, 2);
	d.envid = "QQ314159";
	char *t = render(&d, original);
	CHECK(strstr(t, "From: Mail Delivery System <MAILER-DAEMON@box.example>\n") == t);
	CHECK(strstr(t, "\nTo: <alice@example.org>\n"));
	CHECK(strstr(t, "\nAuto-Submitted: auto-replied\n"));
	CHECK(strstr(t, "\nContent-Type: multipart/report; report-type=delivery-status;\n\tboundary=\"=_b\"\n"));
	CHECK(strstr(t, "\nReporting-MTA: dns; box.example\n"));
	CHECK(strstr(t, "\nOriginal-Envelope-Id: QQ314159\n"));
	CHECK(strstr(t, "\nArrival-Date: "));
	CHECK(strstr(t, "\n\nFinal-Recipient: rfc822; bob@example.com\nOriginal-Recipient: rfc822; Bob@Example.com\n"
	                "Action: failed\nStatus: 5.1.1\nRemote-MTA: dns; mx.example.com[192.0.2.1]\n"
	                "Diagnostic-Code: smtp; 550 5.1.1 <bob@example.com>: no such user\nLast-Attempt-Date: "));
	/* no enhanced code on record: 5.0.0; our own diagnostic: our type; no attempt time: no field */
	CHECK(strstr(t, "\n\nFinal-Recipient: rfc822; root@box.example\nAction: failed\nStatus: 5.0.0\n"
	                "Diagnostic-Code: X-Spoolbox; unknown user: root2\n\n--=_b\n"));
	CHECK(strstr(t, "--=_b\nContent-Type: message/rfc822\n"));
	CHECK(strstr(t, "\n\nReceived: from root by box.example\nSubject: hi\n\nbody\nmore body\n\n--=_b--\n"));
	CHECK(strstr(t, "It is attached below."));
	CHECK(!strstr(t, "Content-Transfer-Encoding"));
}

TEST(dsn_local_user_is_shown_at_the_hostname)
{
	/* the control file keeps a local recipient without a domain: both parts show it at MYHOSTNAME */
	struct dsn_rcpt r = {"root", NULL, "5.1.1", NULL, "unknown user: root", 0, NULL};
	struct dsn d = base(&r, 1);
	char *t = render(&d, original);
	CHECK(strstr(t, "\n<root@box.example>: unknown user: root\n"));
	CHECK(strstr(t, "\n\nFinal-Recipient: rfc822; root@box.example\nAction: failed\n"));
}

TEST(dsn_ret_hdrs_returns_only_the_header)
{
	struct dsn_rcpt r = {"bob@example.com", NULL, "5.2.2", NULL, "mailbox full", 0, NULL};
	struct dsn d = base(&r, 1);
	d.ret = 'H';
	char *t = render(&d, original);
	CHECK(strstr(t, "--=_b\nContent-Type: text/rfc822-headers\n"));
	CHECK(strstr(t, "\n\nReceived: from root by box.example\nSubject: hi\n\n--=_b--\n"));
	CHECK(!strstr(t, "body\n"));
	CHECK(!strstr(t, "message/rfc822"));
	CHECK(strstr(t, "you asked for headers only"));
}

TEST(dsn_large_message_returns_headers_and_says_so)
{
	struct dsn_rcpt r = {"bob@example.com", NULL, "5.0.0", NULL, NULL, 0, NULL};
	struct dsn d = base(&r, 1);
	d.return_max = 10;
	char *t = render(&d, original);
	CHECK(strstr(t, "Content-Type: text/rfc822-headers\n"));
	CHECK(strstr(t, "more than the 10 bytes this system returns"));
	CHECK(!strstr(t, "more body"));
	CHECK(!strstr(t, "Diagnostic-Code"));
	d.return_max = (long long)strlen(original);
	t = render(&d, original);
	CHECK(strstr(t, "Content-Type: message/rfc822\n"));
}

TEST(dsn_header_only_original_and_no_final_newline)
{
	struct dsn_rcpt r = {"bob@example.com", NULL, "5.0.0", NULL, NULL, 0, NULL};
	struct dsn d = base(&r, 1);
	const char *o = "Subject: x";
	d.size = (long long)strlen(o);
	char *t = render(&d, o);
	CHECK(strstr(t, "\n\nSubject: x\n\n--=_b--\n"));
	d.ret = 'H';
	t = render(&d, o);
	CHECK(strstr(t, "Message Headers\n\nSubject: x\n\n--=_b--\n"));
	/* an empty header section: nothing returned, still well-formed */
	o = "\nbody only\n";
	d.size = (long long)strlen(o);
	t = render(&d, o);
	CHECK(strstr(t, "Message Headers\n\n\n--=_b--\n"));
}

TEST(dsn_fields_cannot_inject_headers)
{
	struct dsn_rcpt r = {"evil@example.com\nBcc: x@y", "rfc822;a\r\nX-Evil: 1", "5.1.1\nX: y",
	                     "mx\nX-Evil: 2", "550 bad\r\nX-Evil: 3\x01\xff", 0, NULL};
	struct dsn d = base(&r, 1);
	d.to = "alice@example.org\nBcc: victim@example.net";
	d.envid = "id\nX-Evil: 4";
	d.hostname = "box\n.example";
	char *t = render(&d, original);
	CHECK(!strstr(t, "\nBcc:"));
	CHECK(!strstr(t, "\nX-Evil"));
	CHECK(!strstr(t, "\nX: y"));
	CHECK(strstr(t, "\nStatus: 5.0.0\n"));
	CHECK(strstr(t, "\nDiagnostic-Code: smtp; 550 bad X-Evil: 3??\n"));
	CHECK(strstr(t, "\nTo: <alice@example.org Bcc: victim@example.net>\n"));
	for (const unsigned char *p = (const unsigned char *)t; *p; p++)
		CHECK(*p < 0x80 && (*p >= 0x20 || *p == '\n' || *p == '\t'));
}

TEST(dsn_8bit_original_is_declared)
{
	struct dsn_rcpt r = {"bob@example.com", NULL, "5.0.0", NULL, NULL, 0, NULL};
	struct dsn d = base(&r, 1);
	d.body8 = 1;
	char *t = render(&d, original);
	CHECK(strstr(t, "Content-Type: message/rfc822\nContent-Description: Undelivered Message\n"
	                "Content-Transfer-Encoding: 8bit\n\n"));
}

TEST(dsn_clean_and_boundary)
{
	char out[16];
	dsn_clean(out, sizeof out, "  a\t\r\n b \x7f\x80");
	CHECK_STR(out, "a b ??");
	dsn_clean(out, sizeof out, "0123456789abcdefghij");
	CHECK_STR(out, "0123456789abcde");
	dsn_clean(out, sizeof out, NULL);
	CHECK_STR(out, "");
	char b[80];
	dsn_boundary(b, sizeof b, "T4G2\n-KQ", 17, 3);
	CHECK_STR(b, "=_spoolbox_T4G2xxKQ_17_3");
}

TEST(dsn_postmaster_notice_returns_headers_only)
{
	struct dsn_rcpt r = {"ghost@box.example", NULL, "5.1.1", NULL, "unknown user: ghost", 0, NULL};
	struct dsn d = base(&r, 1);
	d.to = "root";
	d.ret = 'F'; /* the sender's RET does not matter: the postmaster never gets the body */
	d.postmaster = 1;
	CHECK_INT(dsn_returns_full(&d), 0);
	char *t = render(&d, original);
	CHECK(strstr(t, "\nSubject: Postmaster Copy: Undelivered Mail\n"));
	CHECK(strstr(t, "This copy goes to the postmaster instead."));
	CHECK(strstr(t, "--=_b\nContent-Type: text/rfc822-headers\n"));
	CHECK(strstr(t, "Subject: hi\n"));
	CHECK(!strstr(t, "more body"));
}

TEST(dsn_delay_report)
{
	/* Action delayed, a 4.x.x status (a recorded 5.x.x or junk becomes 4.0.0), headers only
	 * whatever RET says (RFC 3461 4.3), and its own subject and words */
	struct dsn_rcpt r[2] = {
	    {"bob@example.com", NULL, "4.7.1", "mx.example.com[192.0.2.1]", "451 4.7.1 greylisted", 1795246900, NULL},
	    {"carol@example.net", NULL, "5.1.1", NULL, NULL, 0, NULL},
	};
	struct dsn d = base(r, 2);
	d.kind = DSN_DELAYED;
	d.ret = 'F';
	CHECK_INT(dsn_returns_full(&d), 0);
	char *t = render(&d, original);
	CHECK(strstr(t, "\nSubject: Delayed Mail (still being retried)\n"));
	CHECK(strstr(t, "delivery is still being tried"));
	CHECK(strstr(t, "<bob@example.com>: delayed: 451 4.7.1 greylisted\n"));
	CHECK(strstr(t, "\nFinal-Recipient: rfc822; bob@example.com\nAction: delayed\nStatus: 4.7.1\n"
	                "Remote-MTA: dns; mx.example.com[192.0.2.1]\nDiagnostic-Code: smtp; 451 4.7.1 greylisted\n"));
	CHECK(strstr(t, "\nFinal-Recipient: rfc822; carol@example.net\nAction: delayed\nStatus: 4.0.0\n"));
	CHECK(strstr(t, "--=_b\nContent-Type: text/rfc822-headers\nContent-Description: Delayed Message Headers\n"));
	CHECK(!strstr(t, "more body"));
	CHECK(!strstr(t, "Action: failed"));
}

TEST(dsn_success_report)
{
	/* delivered, relayed or expanded from the attempt; anything else is "delivered"; a
	 * non-2.x.x status becomes 2.0.0; headers only */
	struct dsn_rcpt r[3] = {
	    {"root@box.example", NULL, "2.0.0", NULL, "delivered to mailbox /var/mail/root", 0, "delivered"},
	    {"bob@example.com", NULL, "2.0.0", "mx.example.com[192.0.2.1]", "250 2.0.0 Ok: queued", 0, "relayed"},
	    {"list@box.example", NULL, "5.9.9", NULL, NULL, 0, "failed\nX-Evil: 1"},
	};
	struct dsn d = base(r, 3);
	d.kind = DSN_SUCCESS;
	char *t = render(&d, original);
	CHECK(strstr(t, "\nSubject: Successful Mail Delivery Report\n"));
	CHECK(strstr(t, "\nFinal-Recipient: rfc822; root@box.example\nAction: delivered\nStatus: 2.0.0\n"));
	CHECK(strstr(t, "\nFinal-Recipient: rfc822; bob@example.com\nAction: relayed\nStatus: 2.0.0\n"
	                "Remote-MTA: dns; mx.example.com[192.0.2.1]\nDiagnostic-Code: smtp; 250 2.0.0 Ok: queued\n"));
	CHECK(strstr(t, "\nFinal-Recipient: rfc822; list@box.example\nAction: delivered\nStatus: 2.0.0\n"));
	CHECK(!strstr(t, "X-Evil"));
	CHECK(strstr(t, "Content-Type: text/rfc822-headers\n"));
	CHECK(!strstr(t, "more body"));
	r[2].action = "expanded";
	t = render(&d, original);
	CHECK(strstr(t, "\nFinal-Recipient: rfc822; list@box.example\nAction: expanded\n"));
}
