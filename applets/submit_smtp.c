/* submit -bs: the SMTP dialogue on stdin/stdout (docs/submit.md 6). lib/smtpd.c speaks the
 * protocol; this file connects its callbacks to the enqueue pipeline and moves the bytes: it
 * reads what is there, feeds it, and writes the replies once all of it is processed, which is
 * what PIPELINING needs. Every accepted message is durable before its 250. */
#include "submit.h"
#include "log.h"
#include "io.h"
#include "smtpd.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef SUBMIT_SMTP_TIMEOUT_MS
#define SUBMIT_SMTP_TIMEOUT_MS (300 * 1000)
#endif

struct bs {
	struct submit_ctx *x;
	int active;
	const struct smtpd *s;
	struct enq e;
};

static void bs_reset(void *vctx)
{
	struct bs *b = vctx;
	if (b->active) {
		submit_set_current(NULL);
		enq_free(&b->e);
		b->active = 0;
	}
}

static int bs_mail(void *vctx, const struct smtpd_mail *m, char *text, size_t size)
{
	struct bs *b = vctx;
	/* no transaction is open: smtpd ends each with bs_reset (RSET, HELO, DATA's end, QUIT,
	 * end of input, its own 421), and a refused MAIL ends it below */
	enq_init(&b->e, &b->x->ec, 0, 0);
	b->active = 1;
	submit_set_current(&b->e);
	b->e.body8_declared = m->body8;
	b->e.m.ret = m->ret;
	b->e.m.smtputf8 = m->smtputf8;
	if (m->envid[0])
		b->e.m.envid = xstrdup(m->envid);
	/* the HELO name as smtpd made it safe; never empty: MAIL comes after a HELO with a name */
	snprintf(b->e.received, sizeof b->e.received, "from %s (%s, uid %ld)", b->s->helo, b->x->ec.user, b->x->ec.uid);
	b->e.with = b->s->esmtp ? "ESMTP" : "SMTP";
	char from[ADDR_TEXT_MAX + 1];
	from[0] = 0; /* not "= """: that zeroes all of it */
	if (!m->null_sender)
		addr_format(&m->from, NULL, from, sizeof from);
	if (enq_sender(&b->e, from)) {
		snprintf(text, size, "5.1.7 %s", b->e.why);
		bs_reset(b);
		return 553;
	}
	return 250;
}

static int bs_rcpt(void *vctx, const struct smtpd_rcpt *r, char *text, size_t size)
{
	struct bs *b = vctx;
	int code = enq_add_rcpt(&b->e, &r->to, r->notify, r->orcpt);
	if (!code)
		return 250;
	/* never "too many recipients": smtpd answers 452 itself once its count, which is at least
	 * e.m.nrcpt (a duplicate counts there, not here), reaches max_rcpt = ec.maxrcpt (at most
	 * SPOOL_RCPT_MAX), and both counts start again at each MAIL */
	snprintf(text, size, "5.1.3 %s", b->e.why);
	b->e.err = 0; /* a refused recipient does not spoil the transaction */
	b->e.why[0] = 0;
	return 553;
}

static int bs_data(void *vctx, const char *p, size_t n)
{
	struct bs *b = vctx;
	return enq_feed(&b->e, p, n) ? -1 : 0;
}

static int bs_data_end(void *vctx, char *text, size_t size)
{
	struct bs *b = vctx;
	submit_block_signals(1);
	int r = enq_finish(&b->e);
	submit_block_signals(0);
	submit_log(&b->e, r);
	int code = !r ? 250 : r == EX_CANTCREAT ? 552 : r == EX_DATAERR ? 554 : 451;
	snprintf(text, size, "%s %s", !r ? "2.0.0 Ok: queued as" : code == 552 ? "5.3.4" : code == 554 ? "5.6.0" : "4.3.0",
	         r ? b->e.why : b->e.m.id);
	return code; /* smtpd calls bs_reset next */
}

static const struct smtpd_ops bs_ops = {bs_mail, bs_rcpt, bs_data, bs_data_end, bs_reset};

int submit_smtp(struct submit_ctx *x)
{
	int r = submit_open_spool(x);
	if (r) {
		/* no usable spool: say so the SMTP way, then end */
		char text[320]; /* the host name is under 256 bytes: it fits */
		int n = snprintf(text, sizeof text, "421 4.3.0 %s mail queue unavailable\r\n", x->hostname);
		io_write_all_fd(1, text, (size_t)n);
		return r;
	}
	struct smtpd s;
	struct bs b;
	memset(&b, 0, sizeof b);
	b.x = x;
	b.s = &s;
	smtpd_init(&s, &bs_ops, &b, x->hostname, x->ec.sizelimit, x->ec.maxrcpt);
	smtpd_greet(&s);
	/* the session's streams are lib/io.c's: replies leave with the one write-all, commands and
	 * DATA come in a buffer at a time within the 5-minute limit of RFC 5321 4.5.3.2.7 */
	struct io in;
	io_init_fd(&in, 0, SUBMIT_SMTP_TIMEOUT_MS);
	char buf[4 * IO_BUFSIZE];
	for (;;) {
		if (s.out.len) {
			if (io_write_all_fd(1, s.out.p, s.out.len) < 0) {
				r = EX_IOERR;
				break;
			}
			buf_reset(&s.out);
		}
		if (s.state == SMTPD_CLOSED)
			break;
		ssize_t n = io_read(&in, buf, sizeof buf);
		if (n < 0 && errno == ETIMEDOUT) {
			static const char bye[] = "421 4.4.2 Timeout waiting for input, closing\r\n";
			io_write_all_fd(1, bye, sizeof bye - 1);
			log_msg(LOG_ERR, NULL, "-bs: no input for %d seconds, session closed", SUBMIT_SMTP_TIMEOUT_MS / 1000);
			r = EX_TEMPFAIL;
		}
		if (n <= 0)
			break;
		smtpd_feed(&s, buf, (size_t)n);
	}
	smtpd_eof(&s); /* a transaction still open (end of input, a failed write) ends unqueued */
	smtpd_free(&s);
	return r;
}
