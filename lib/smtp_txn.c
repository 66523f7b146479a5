/* One mail transaction: MAIL, RCPT..., DATA, the body, the end of data (see smtp_client.h). */
#include "smtp_body.h"
#include "smtp_client.h"
#include "tls.h"
#include "xtext.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BODY_IN SMTP_TXN_IN /* message bytes read per chunk */
#define BODY_OUT 32768   /* wire bytes gathered per write */
#define BODY_ROOM 4096   /* write out when less room than this is left */
_Static_assert(BODY_IN + BODY_OUT + SMTP_BODY_FINISH <= SMTP_TXN_BUF, "SMTP_TXN_BUF holds both buffers");
#define BODY_KEEP 512    /* wire bytes always held back for the final write */

/* A diagnosis made here; text NULL: r->text is already written. noinline: a call is shorter. */
__attribute__((noinline)) static void set_local(struct smtp_result *r, int code, const char *enh, const char *text)
{
	r->code = code;
	r->local = 1;
	str_lcpy(r->enh, enh, sizeof r->enh);
	if (text)
		str_lcpy(r->text, text, sizeof r->text);
}

static void set_reply(struct smtp_result *res, const struct smtp_reply *r)
{
	res->code = r->code;
	res->local = 0;
	str_lcpy(res->enh, r->enh, sizeof res->enh);
	smtp_reply_oneline(r, res->text, sizeof res->text);
}

/* The outcome of the recipients still open: those with a 2xx reply, and with lost0 also those
 * without any yet (one refused here has its 553). With a reply r they get it; without, a local
 * result: code (0: the connection failed), enhanced code enh and text. */
static void settle(struct smtp_txn *t, int lost0, const struct smtp_reply *r, int code, const char *enh,
                   const char *text)
{
	for (size_t i = 0; i < t->n; i++) {
		struct smtp_result *res = &t->rcpt[i].res;
		if (res->code / 100 != 2 && (res->code || !lost0))
			continue;
		if (r)
			set_reply(res, r);
		else
			set_local(res, code, enh, text);
	}
}

/* 1 when an address can go into "<...>" on a command line: no control characters, no angle
 * brackets; 8-bit bytes only with SMTPUTF8. */
static int addr_ok(const char *a, int utf8)
{
	for (const unsigned char *p = (const unsigned char *)a; *p; p++)
		if (*p < 0x21 || *p == 0x7f || *p == '<' || *p == '>' || (*p >= 0x80 && !utf8))
			return 0;
	return strlen(a) <= SMTP_ADDR_MAX;
}

static int has8(const char *a)
{
	for (; a && *a; a++)
		if ((unsigned char)*a >= 0x80)
			return 1;
	return 0;
}

/* Appends " KEY=xtext(value)" to line. */
static int add_xtext(char *line, size_t size, const char *key, const char *prefix, const char *v)
{
	char x[3 * SMTP_ADDR_MAX + 1];
	if (xtext_encode(v, strlen(v), x, sizeof x) < 0)
		return -1;
	size_t l = strlen(line);
	return str_fmt(line + l, size - l, " %s=%s%s", key, prefix, x);
}

static int mail_line(const struct smtp_conn *c, const struct smtp_txn *t, char *line, size_t size)
{
	unsigned ext = c->caps.ext;
	int sz = (ext & SMTP_EXT_SIZE) != 0, dsn = ENABLE_DSN && (ext & SMTP_EXT_DSN);
	/* one format for every parameter: one not sent is "", and SIZE's number then has precision
	 * 0 and the value 0, which prints no digit */
	if (str_fmt(line, size, "MAIL FROM:<%s>%s%.*lld%s%s%s", t->sender, sz ? " SIZE=" : "", sz, sz ? t->size : 0,
	            t->body8 && (ext & SMTP_EXT_8BITMIME) ? " BODY=8BITMIME" : "", t->smtputf8 ? " SMTPUTF8" : "",
	            !dsn || !t->ret ? "" : t->ret == 'H' ? " RET=HDRS" : " RET=FULL") < 0)
		return -1;
	if (dsn && t->envid && *t->envid && add_xtext(line, size, "ENVID", "", t->envid) < 0)
		return -1;
	return strlen(line) + 1 < size ? 0 : -1;
}

static int rcpt_line(const struct smtp_conn *c, const struct smtp_txn_rcpt *r, char *line, size_t size)
{
	if (str_fmt(line, size, "RCPT TO:<%s>", r->addr) < 0)
		return -1;
	if (!ENABLE_DSN || !(c->caps.ext & SMTP_EXT_DSN))
		return 0;
	if (r->notify) {
		char n[DSN_NOTIFY_TEXT];
		dsn_notify_format(r->notify, n);
		if (n[0])
			str_fmt(line + strlen(line), size - strlen(line), " NOTIFY=%s", n);
	}
	if (r->orcpt && *r->orcpt) {
		const char *semi = strchr(r->orcpt, ';');
		char type[32];
		size_t k = semi ? (size_t)(semi - r->orcpt) : sizeof type;
		if (k < sizeof type) {
			memcpy(type, r->orcpt, k);
			if (k + 1 < sizeof type) /* a 31-byte type has no room left for its ";" */
				type[k++] = ';';
			type[k] = 0;
			if (add_xtext(line, size, "ORCPT", type, semi + 1) < 0)
				return -1;
		}
	}
	return strlen(line) + 1 < size ? 0 : -1;
}

/* Writes p[0..n) with the stream's low-level writer, after what io had buffered, so the bytes
 * given here leave in as few writes as possible and the last one carries the end of data.
 * noinline: a call is shorter than its inlined copies. */
__attribute__((noinline)) static int write_raw(struct smtp_conn *c, const char *p, size_t n)
{
	c->io.timeout_ms = c->to.data_block;
	return io_write_direct(&c->io, p, n);
}

/* Sends the message and the end of data. -2: the message file failed (the connection must be
 * dropped without ".", so the server discards what it got); -1: the connection failed. */
/* 1 when the server has said something since its 354 (buffered, or waiting to be read).
 * Nothing may come before the end of data. On TLS a readable socket may hold a record of no
 * application data, so the records that are there are decrypted and judged by their content. */
static int spoke_early(struct smtp_conn *c)
{
	if (tls_active(&c->io))
		return tls_app_data_arrived(&c->io);
	if (c->io.ctx != &c->io.fd)
		return 0;
	if (io_pending(&c->io))
		return 1;
	struct pollfd pfd = {.fd = c->io.fd, .events = POLLIN};
	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	/* A server that hung up has not answered: say so, not "answered early". */
	char b;
	return recv(c->io.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0 ? 1 : 2;
}

static int send_body(struct smtp_conn *c, struct smtp_txn *t, char *why, size_t whylen)
{
	char *own = t->body_buf ? NULL : malloc(SMTP_TXN_BUF), *buf = t->body_buf ? t->body_buf : own;
	char *in = buf, *out = buf ? buf + BODY_IN : NULL;
	struct smtp_body_enc e;
	long long left = t->size;
	size_t olen = 0;
	int ret = 0;
	if (!in || !out) {
		str_lcpy(why, "out of memory", whylen);
		ret = -2;
		goto done;
	}
	smtp_body_init(&e);
	size_t pre = t->body_buf && t->pre <= BODY_IN ? t->pre : 0;
	while (left > 0) {
		size_t want = left < BODY_IN ? (size_t)left : BODY_IN;
		ssize_t r = pre ? (ssize_t)(pre < want ? pre : want) : read(t->fd, in, want);
		pre = 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(why, whylen, "reading the message file: %s", r < 0 ? strerror(errno) : "shorter than its size record");
			ret = -2;
			goto done;
		}
		left -= r;
		size_t pos = 0;
		while (pos < (size_t)r) {
			if (BODY_OUT - olen < BODY_ROOM) {
				/* Write all but the last BODY_KEEP bytes: whatever the sizes, the end of data
				 * then leaves in one write with body bytes (PERF-NOTES trap 1). */
				if (write_raw(c, out, olen - BODY_KEEP) < 0) {
					ret = -1;
					goto done;
				}
				memmove(out, out + olen - BODY_KEEP, BODY_KEEP);
				olen = BODY_KEEP;
			}
			size_t used;
			olen += smtp_body_encode(&e, in + pos, (size_t)r - pos, &used, out + olen, BODY_OUT - olen);
			pos += used;
		}
	}
	olen += smtp_body_finish(&e, out + olen, SMTP_BODY_FINISH);
	int early = spoke_early(c);
	if (early == 2) {
		str_fmt(why, whylen, "connection closed by %s while sending the message body", c->name);
		ret = -2;
		goto done;
	}
	if (early) {
		/* a reply before our end of data is not a reply to it: never let it confirm */
		str_fmt(why, whylen, "%s answered before the end of data", c->name);
		ret = -2;
		goto done;
	}
	if (write_raw(c, out, olen) < 0)
		ret = -1;
	t->folded = e.folded;
done:
	free(own);
	return ret;
}

/* The checks RFC 1870, 6152 and 6531 ask for before a transaction starts. 1 when they failed
 * (t->mail has the result every recipient gets). */
static int precheck(struct smtp_conn *c, struct smtp_txn *t)
{
	unsigned ext = c->caps.ext;
	int utf8 = t->smtputf8, code = 553;
	const char *enh, *fmt;
	char *text = t->mail.text;
	if ((ext & SMTP_EXT_SIZE) && c->caps.size > 0 && t->size > c->caps.size) {
		code = 552;
		enh = "5.3.4";
		snprintf(text, sizeof t->mail.text, "message size %lld exceeds the size limit %lld of %s", t->size,
		         c->caps.size, c->name);
	} else {
		/* the other reasons take the server's name or nothing: one format call */
		if (utf8 && !(ext & SMTP_EXT_SMTPUTF8)) {
			enh = "5.6.7";
			fmt = "%s does not support SMTPUTF8, needed for the non-ASCII addresses of this message";
		} else if (t->body8 && !(ext & SMTP_EXT_8BITMIME) && !t->send_8bit_anyway) {
			code = 554;
			enh = "5.6.3";
			fmt = "%s does not support 8BITMIME and the message has 8-bit data (RFC 6152: not converted, not sent)";
		} else if (!addr_ok(t->sender, utf8) && t->sender[0]) {
			enh = "5.1.7";
			fmt = "the sender address cannot be written on an SMTP command line";
		} else {
			return 0;
		}
		snprintf(text, sizeof t->mail.text, fmt, c->name);
	}
	set_local(&t->mail, code, enh, NULL);
	return 1;
}

/* One command of the transaction in a pass: pass 0 (pipelining only) buffers it; pass 1 reads
 * its reply, after sending it first when not pipelining. */
static int exchange(struct smtp_conn *c, int pass, int pipelining, const char *line, struct smtp_reply *r, int timeout)
{
	if (!pass)
		return smtp_send(c, line);
	return pipelining ? smtp_read_reply(c, r, timeout) : smtp_cmd(c, line, r, timeout);
}

int smtp_transaction(struct smtp_conn *c, struct smtp_txn *t)
{
	char line[SMTP_CMD_MAX];
	struct smtp_reply r;
	int pipelining = (c->caps.ext & SMTP_EXT_PIPELINING) != 0;
	size_t i;
	memset(&t->mail, 0, sizeof t->mail);
	memset(&t->data, 0, sizeof t->data);
	t->accepted = 0;
	t->folded = 0;
	for (i = 0; i < t->n; i++)
		memset(&t->rcpt[i].res, 0, sizeof t->rcpt[i].res);
	/* SMTPUTF8 when the envelope says so or any address is not ASCII (RFC 6531 3.4). */
	int utf8 = t->smtputf8 || has8(t->sender);
	for (i = 0; i < t->n && !utf8; i++)
		utf8 = has8(t->rcpt[i].addr);
	t->smtputf8 = utf8;
	int ret = 0, mail_ok = 1, stale = 0;
	if (precheck(c, t))
		goto mail_failed; /* no recipient is marked local yet: each gets MAIL's result */
	/* Recipients whose address cannot be sent fail here: until the end, res.local marks them
	 * (every other result so far is the zeroed one or a server's reply; each step that gives
	 * the others a local result is the last) */
	size_t sendable = 0;
	for (i = 0; i < t->n; i++) {
		if (!addr_ok(t->rcpt[i].addr, utf8) || rcpt_line(c, &t->rcpt[i], line, sizeof line) < 0) {
			set_local(&t->rcpt[i].res, 553, "5.1.3", "the recipient address cannot be written on an SMTP command line");
		} else {
			sendable++;
		}
	}
	if (!sendable)
		goto out;
	if (mail_line(c, t, line, sizeof line) < 0) {
		/* the MAIL command's own result, as a refused MAIL's goes to the recipients */
		set_local(&t->mail, 553, "5.1.7", "the MAIL command would be too long");
		goto mail_failed;
	}
	stale = c->rset_pending;
	c->rset_pending = 0;
	/* With PIPELINING the whole group (RSET, MAIL, RCPT..., DATA: the last of the group, RFC 2920
	 * 3.1) is sent in pass 0 and the replies read in pass 1; without, pass 1 alone sends each
	 * command and reads its reply. line holds the MAIL command until the RCPT lines. */
	for (int pass = !pipelining; pass < 2; pass++) {
		if (stale) {
			/* a cached connection whose RSET gets no 250: see lost */
			if (exchange(c, pass, pipelining, "RSET", &r, c->to.cmd) < 0 || (pass && r.code != 250))
				goto lost;
			stale = !pass;
		}
		if (exchange(c, pass, pipelining, line, &r, c->to.cmd) < 0)
			goto lost;
		if (pass) {
			set_reply(&t->mail, &r);
			mail_ok = r.code / 100 == 2;
			if (!mail_ok && !pipelining)
				goto mail_failed;
		}
		for (i = 0; i < t->n; i++) {
			if (t->rcpt[i].res.local)
				continue;
			rcpt_line(c, &t->rcpt[i], line, sizeof line);
			if (exchange(c, pass, pipelining, line, &r, c->to.cmd) < 0)
				goto lost;
			if (pass && mail_ok) {
				set_reply(&t->rcpt[i].res, &r);
				if (r.code / 100 == 2)
					t->accepted++;
			}
		}
		if (pass && !pipelining && !t->accepted)
			goto out; /* nothing accepted: no DATA; the caller's RSET ends the transaction */
		if (exchange(c, pass, pipelining, "DATA", &r, c->to.data_init) < 0 || (!pass && smtp_flush(c, c->to.cmd) < 0))
			goto lost;
	}
	if (!mail_ok) {
		if (r.code == 354) /* a server that accepts DATA after all: send nothing */
			goto empty_data;
		goto mail_failed;
	}
	set_reply(&t->data, &r);
	if (r.code != 354 && r.code / 100 != 4 && r.code / 100 != 5) {
		/* A 2xx to DATA itself is no delivery (the body was never sent): a protocol error,
		 * and the connection's state is unknown, so it is not reused. */
		str_fmt(line, sizeof line, "protocol error: %s answered DATA with %d, not 354: %.200s", c->name, r.code,
		        r.text);
		settle(t, 0, NULL, 451, "4.5.0", line);
		smtp_close(c);
		ret = -1;
		goto out;
	}
	if (r.code != 354) {
		settle(t, 0, &r, 0, NULL, NULL);
		goto out;
	}
	if (!t->accepted) {
	empty_data:
		/* RFC 2920 3.1: 354 with no valid recipient; end the empty message at once. */
		if (write_raw(c, ".\r\n", 3) < 0 || smtp_read_reply(c, &r, c->to.data_done) < 0)
			goto lost;
		if (!mail_ok)
			goto mail_failed;
		goto out;
	}
	char why[256];
	const char *lost_enh = ""; /* lost_data's enhanced code */
	int b = send_body(c, t, why, sizeof why);
	if (b == -2) {
		/* Never let a partial message look complete: drop the connection without ".". */
		str_fmt(c->err, sizeof c->err, "message not sent: %s", why);
		smtp_close(c);
		lost_enh = "4.3.0";
		goto lost_data;
	}
	if (b < 0) {
		int to = c->timed_out = errno == ETIMEDOUT;
		str_fmt(c->err, sizeof c->err, "%s %s while sending the message body%s%s",
		        to ? "timeout talking to" : "lost connection with", c->name, to ? "" : ": ", to ? "" : strerror(errno));
		goto lost_data;
	}
	if (smtp_read_reply(c, &r, c->to.data_done) < 0) {
		size_t l = strlen(c->err);
		str_fmt(c->err + l, sizeof c->err - l, " after the end of data");
		goto lost_data;
	}
	set_reply(&t->data, &r);
	settle(t, 0, &r, 0, NULL, NULL);
	goto out;

mail_failed:
	for (i = 0; i < t->n; i++)
		if (!t->rcpt[i].res.local)
			t->rcpt[i].res = t->mail;
	goto out;
lost_data:
	/* Accepted recipients are not delivered: the server never confirmed the end of data. */
	settle(t, 0, NULL, 0, lost_enh, c->err);
	ret = -1;
	goto out;
lost:
	if (stale) {
		/* A cached connection the server had given up before answering the RSET that leads
		 * the group: nothing happened on it, the caller reconnects. */
		ret = SMTP_TXN_STALE;
		goto out;
	}
	settle(t, 1, NULL, 0, "", c->err);
	ret = -1;
out:
	return ret;
}
