/* smtp: the SMTP client transport agent (RFC 5321; docs/smtp.md, docs/man/smtp.8).
 *
 * The scheduler starts it with stdin/stdout on the transport-agent protocol (docs/spool.md 11):
 * for each job "ID\tHOST" it delivers the message's recipients marked for it to HOST's mail
 * servers (or the SMARTHOST list) and writes one report line per recipient. Between jobs the
 * connection stays open for SMTP_IDLE seconds and is reused for the next job to the same
 * destination, also after "#idle" (the agent then waits in the scheduler's idle pool, and a
 * message that comes within SMTP_IDLE finds it connected: issue 13 point 4).
 *
 * usage: smtp [-C FILE] [-v] [-m ID]
 *        smtp -t [-s] [-f FROM] [-C FILE] [-v] [RCPT]
 *   -m ID   deliver the smtp recipients of message ID now, print the report lines, change
 *           nothing in the spool (debugging; the scheduler records nothing)
 *   -t      test the setup: route, connect, EHLO, TLS, AUTH, MAIL, RCPT, each with a verdict;
 *           nothing is sent unless -s (smtp_test.c)
 *   -v      log the SMTP dialogue (AUTH lines hidden)
 * config: SMARTHOST, CREDENTIALS, CAFILE, SMTP_TLS, HELO_NAME, SMTP_MAXRCPT, SMTP_IDLE,
 *         SMTP_PORT, SMTP_*_TIMEOUT, SMTP_CLEARTEXT_AUTH, SMTP_8BIT_FALLBACK
 * exit:   0 at the end of the protocol; 64 usage; 66 -m on a message that cannot be read;
 *         78 configuration error. */
#include "common.h"
#include "fileio.h"
#include "header.h"
#include "log.h"
#include "mime7.h"
#include "smarthost.h"
#include "smtp_session.h"
#include "smtp_test.h"
#include "spool.h"
#include "sysexits.h"
#include "ta.h"
#include "route.h"
#include "util.h"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* the protocol client keeps its own limits (it builds without the spool); what it hands back
 * goes into spool records, so they must agree */
_Static_assert(SMTP_ADDR_MAX == SPOOL_ADDR_MAX && SMTP_TEXT_MAX == SPOOL_TEXT_MAX,
               "smtp_client.h and spool.h disagree on limits");

const char smtp_usage[] =
    "usage: smtp [-C FILE] [-v] [-m ID]\n"
    "       smtp -t [-s] [-f FROM] [-C FILE] [-v] [RCPT]\n"
    "SMTP transport agent: run by the scheduler, speaks its protocol on stdin/stdout.\n"
    "  -C FILE  read FILE instead of " DEFAULT_CONF_PATH "\n"
    "  -m ID    deliver message ID's smtp recipients now and print the reports (changes nothing)\n"
    "  -t       test the outgoing setup: route, connect, EHLO, TLS and the certificate, AUTH,\n"
    "           MAIL FROM (-f FROM, default ALLMAILFROM or postmaster@), RCPT TO:<RCPT>, each\n"
    "           with a verdict; nothing is sent unless -s (a short test message to RCPT)\n"
    "  -v       log the SMTP dialogue (passwords and tokens are never shown)\n";

struct smtp_ta {
	/* kept from job to job: allocating them per message cost an mmap/munmap pair each */
	struct smtp_txn_rcpt *rc;   /* maxrcpt entries */
	char *body_buf;             /* SMTP_TXN_BUF bytes */
	/* the small fields before the large ones: their offsets then fit a byte */
	long maxrcpt;
	long hop_limit;             /* HOPCOUNT_LIMIT, 0 = none */
	long idle;                  /* seconds a connection is kept between jobs */
	int send_8bit;
	int dead_timeout;           /* dead[] below timed out (1) or refused/dropped (0) */
	struct smtp_session sess;
	char helo[256];
	/* A destination that timed out: the jobs for it already handed to us (overfeed) are
	 * deferred with it, without a connection each (issue 11 point 5). Forgotten at "#idle" or
	 * at a job for another destination: the scheduler holds the thread until its retry time, so
	 * the next job for it comes after one of those. */
	char dead[300];
	char dead_why[SPOOL_TEXT_MAX + 1];
	/* The same for a destination that refused or dropped the connection (4.4.1, 4.4.2): the
	 * scheduler counts that as a failed delivery and may suspend the destination (issue 14
	 * point 3), so the jobs in the pipe do not knock again each. Reported as "deferred" (not
	 * "deferall": the scheduler's concurrency feedback decides, not a hold of the thread);
	 * dead_timeout tells the two apart. */
	struct smtp_config cfg;
};

/* The idle timer: a connection kept after a job (SMTP_IDLE=0: none) is closed when no job
 * came for SMTP_IDLE seconds. The wait is the poll() before the next job line (lib/ta.c), so
 * no alarm is armed and disarmed around every job. */
static void idle_arm(struct smtp_ta *ta)
{
	if (ta->sess.conn.open && ta->idle <= 0)
		smtp_session_end(&ta->sess); /* SMTP_IDLE=0: no caching */
}

static int idle_wait_ms(void *ctx)
{
	struct smtp_ta *ta = ctx;
	if (!ta->sess.conn.open)
		return -1;
	return ta->idle > INT_MAX / 1000 ? INT_MAX : (int)(ta->idle * 1000);
}

static void idle_expired(void *ctx)
{
	smtp_session_end(&((struct smtp_ta *)ctx)->sess); /* QUIT, then closed */
}

/* One recipient's report line and log line. */
static void report_rcpt(struct smtp_ta *ta, const struct ta_job *job, size_t idx, const struct smtp_result *res,
                   const char *relay, const char *remote, int all)
{
	const char *status, *action, *def; /* def: the enhanced code when the reply had none */
	char enh[16];
	int cls = res->code / 100;
	if (cls == 2) {
		/* A next hop that speaks DSN got NOTIFY/ORCPT and takes over success notices: ok2
		 * ("delivered", nothing more from us); without DSN it is "relayed" (RFC 3464 2.3.3). */
		int dsn = (ta->sess.conn.caps.ext & SMTP_EXT_DSN) != 0;
		status = dsn ? "ok2" : TA_OK;
		action = dsn ? "delivered" : "relayed";
		def = "2.0.0";
	} else if (cls == 5) {
		status = TA_ERROR;
		action = "failed";
		def = "5.0.0";
	} else {
		status = all ? TA_DEFERALL : TA_DEFERRED;
		action = "delayed";
		def = cls == 4 ? "4.0.0" : "4.4.2";
	}
	str_lcpy(enh, res->enh[0] ? res->enh : def, sizeof enh);
	if (cls != 2 && cls != 5)
		enh[0] = '4';
	ta_report(job, idx, status, action, enh, res->text, remote && *remote ? remote : NULL);
	/* Postfix's conn_use=N: the Nth transaction on a cached connection. */
	char use[32] = "";
	if (relay && *relay && ta->sess.messages > 1)
		str_fmt(use, sizeof use, ", conn_use=%u", ta->sess.messages);
	ta_log_delivery(job, idx, status, relay, use, enh, res->text);
}

/* The same local outcome for the job's recipients from `from` on (all: the destination timed
 * out, see report_rcpt). */
static void report_all(struct smtp_ta *ta, const struct ta_job *job, size_t from, int permanent, const char *enh,
                       const char *text, const char *remote, int all)
{
	struct smtp_result res;
	res.code = permanent ? 550 : 450;
	res.local = 1;
	str_lcpy(res.enh, enh, sizeof res.enh);
	str_lcpy(res.text, text, sizeof res.text);
	for (size_t i = from; i < job->n; i++)
		report_rcpt(ta, job, job->idx[i], &res, NULL, remote, all);
}

/* noinline: called three times, and a call is shorter than report_all's arguments */
__attribute__((noinline)) static void report_fail(struct smtp_ta *ta, const struct ta_job *job, size_t from, const struct smtp_fail *f)
{
	report_all(ta, job, from, f->permanent, f->enh, f->text, f->remote, f->timeouts > 0);
}

/* Remembers a destination that timed out (its later jobs in the pipe are deferred with it). */
static void mark_dead(struct smtp_ta *ta, const char *host, const char *why)
{
	str_lcpy(ta->dead, smtp_session_key(&ta->cfg, host), sizeof ta->dead);
	str_fmt(ta->dead_why, sizeof ta->dead_why, "not tried: %s on an earlier message", why);
}

static void txn_fill(const struct smtp_ta *ta, struct smtp_txn *t, const struct spool_msg *m, const struct ta_job *job,
                     size_t start, size_t n, struct smtp_txn_rcpt *rc, int fd)
{
	memset(t, 0, sizeof *t);
	t->sender = m->sender ? m->sender : "";
	t->size = m->size;
	t->body8 = m->body8;
	t->smtputf8 = m->smtputf8;
	t->ret = m->ret;
	t->envid = m->envid;
	t->send_8bit_anyway = ta->send_8bit;
	t->fd = fd;
	t->rcpt = rc;
	t->n = n;
	for (size_t i = 0; i < n; i++) {
		const struct spool_rcpt *r = &m->rcpt[job->idx[start + i]];
		rc[i].addr = r->addr;
		rc[i].notify = r->notify;
		rc[i].orcpt = r->orcpt;
	}
}

/* The message of fd converted to 7 bit (lib/mime7) for a server without 8BITMIME, in an
 * anonymous file: its fd (offset 0) and size. Returns the fd; -1 with f filled (5.6.3 when the
 * content cannot be converted, 4.3.0 when we could not). */
static int convert7(const struct ta_job *job, int fd, struct smtp_fail *f, long long *size)
{
	const struct spool_msg *m = &job->msg;
	struct buf out;
	char why[200];
	int cfd = -1, r = MIME7_NOMEM;
	memset(f, 0, sizeof f[0]);
	errno = 0;
	buf_init(&out, (size_t)m->size * 4 + 65536);
	char *in = m->size >= 0 ? malloc((size_t)m->size + 1) : NULL;
	if (in && pread(fd, in, (size_t)m->size, m->body_off) == (ssize_t)m->size)
		r = mime7_convert(in, (size_t)m->size, &out, why, sizeof why);
	free(in);
	if (r == MIME7_CANNOT) {
		f->permanent = 1;
		str_lcpy(f->enh, "5.6.3", sizeof f->enh);
		str_fmt(f->text, sizeof f->text, "the server does not support 8BITMIME and the message cannot be converted "
		        "to 7 bit: %s", why);
	} else if (r == 0 && (cfd = memfd_create("spoolbox-7bit", MFD_CLOEXEC)) >= 0 &&
	           fio_write_all(cfd, out.p, out.len, "the 7-bit copy") == 0) {
		*size = (long long)out.len;
	} else {
		if (cfd >= 0)
			close(cfd);
		cfd = -1;
		str_lcpy(f->enh, "4.3.0", sizeof f->enh);
		str_fmt(f->text, sizeof f->text, "converting the message to 7 bit failed: %s", strerror(errno ? errno : ENOMEM));
	}
	buf_free(&out);
	return cfd;
}

static int smtp_job(void *ctx, struct ta_job *job)
{
	struct smtp_ta *ta = ctx;
	const struct spool_msg *m = &job->msg;
	ta->sess.conn.logid = job->id;
	char why[SMTP_TEXT_MAX + 1];
	if (ta->dead[0] && !strcmp(ta->dead, smtp_session_key(&ta->cfg, job->host))) {
		report_all(ta, job, 0, 0, "4.4.2", ta->dead_why, NULL, ta->dead_timeout > 0);
		goto end;
	}
	ta->dead[0] = 0;
	int fd = ta_msg_fd(job); /* positioned below; the job closes it */
	if (fd < 0) {
		str_fmt(why, sizeof why, "cannot open the message file of %s", job->id);
		report_all(ta, job, 0, 0, "4.3.0", why, NULL, 0);
		goto end;
	}
	if (!ta->body_buf)
		ta->body_buf = malloc(SMTP_TXN_BUF); /* without it, each transaction allocates its own */
	/* the message's first chunk, read once: the hop count looks at its header, and the first
	 * transaction sends it from there (smtp_txn.pre) */
	size_t pre = 0;
	if (ta->body_buf) {
		ssize_t got = ta_msg_pread(job, ta->body_buf, m->size < SMTP_TXN_IN ? (size_t)m->size : SMTP_TXN_IN, m->body_off);
		pre = got > 0 ? (size_t)got : 0;
		/* the rest, if any, is read from where the chunk ends (a message that fits needs no seek) */
		if ((long long)pre < m->size && lseek(fd, m->body_off + (off_t)pre, SEEK_SET) != m->body_off + (off_t)pre)
			pre = 0;
	}
	int whole = 0;
	long hops = ta->hop_limit > 0 && pre ? hdr_count_hops_mem(ta->body_buf, pre, &whole) : 0;
	if (ta->hop_limit > 0 && !whole && (long long)pre < m->size)
		hops = hdr_count_hops(fd, m->body_off, m->size);
	if (hops > ta->hop_limit) {
		/* a loop: bounced here as Postfix's cleanup would, not relayed once more */
		str_fmt(why, sizeof why, "mail forwarding loop: %ld Received: header fields (limit %ld)", hops, ta->hop_limit);
		report_all(ta, job, 0, 1, "5.4.6", why, NULL, 0);
		goto end;
	}
	size_t max = ta->maxrcpt > 0 ? (size_t)ta->maxrcpt : 1;
	if (!ta->rc)
		ta->rc = malloc(max * sizeof *ta->rc);
	struct smtp_txn_rcpt *rc = ta->rc;
	if (rc)
		memset(rc, 0, max * sizeof *rc);
	int cfd = -1;            /* the message converted to 7 bit, once a server needed it */
	long long csize = 0;
	for (size_t start = 0; rc && start < job->n; start += max) {
		size_t n = job->n - start < max ? job->n - start : max;
		struct smtp_txn t;
		int tr = SMTP_TXN_STALE;
		/* A stale cached connection costs one reconnect, never a deferral. */
		for (int attempt = 0; attempt < 2 && tr == SMTP_TXN_STALE; attempt++) {
			struct smtp_fail f;
			if (smtp_session_get(&ta->sess, &ta->cfg, job->host, &f) < 0) {
				report_fail(ta, job, start, &f);
				if (f.timeouts || !strcmp(f.enh, "4.4.1") || !strcmp(f.enh, "4.4.2")) {
					mark_dead(ta, job->host, f.text);
					ta->dead_timeout = f.timeouts > 0;
				}
				goto done;
			}
			if (m->body8 && !(ta->sess.conn.caps.ext & SMTP_EXT_8BITMIME) && !ta->send_8bit && cfd < 0) {
				/* RFC 6152 section 3: converted, as Postfix does, rather than refused */
				cfd = convert7(job, fd, &f, &csize);
				if (cfd < 0) {
					report_fail(ta, job, start, &f);
					goto done;
				}
				log_msg(LOG_INFO, job->id, "%s does not support 8BITMIME: the message was converted to 7 bit",
				        ta->sess.relay);
			}
			int use7 = cfd >= 0 && !(ta->sess.conn.caps.ext & SMTP_EXT_8BITMIME);
			txn_fill(ta, &t, m, job, start, n, rc, use7 ? cfd : fd);
			t.body_buf = ta->body_buf;
			if (use7) {
				t.size = csize;
				t.body8 = 0;
			}
			off_t from = use7 ? 0 : m->body_off;
			/* the chunk read above is sent by the first transaction only: any other starts
			 * again from the message's first byte */
			t.pre = use7 ? 0 : pre;
			pre = 0;
			int ok = t.pre || lseek(use7 ? cfd : fd, from, SEEK_SET) == from;
			ta->sess.conn.timed_out = 0;
			tr = ok ? smtp_transaction(&ta->sess.conn, &t) : -1;
			if (!ok)
				for (size_t i = 0; i < n; i++) {
					rc[i].res.code = 0;
					str_lcpy(rc[i].res.enh, "4.3.0", sizeof rc[i].res.enh);
					str_fmt(rc[i].res.text, sizeof rc[i].res.text, "cannot read the message file: %s", strerror(errno));
				}
			if (tr == SMTP_TXN_STALE) {
				log_msg(LOG_DEBUG, job->id, "cached connection to %s was closed: reconnecting", ta->sess.relay);
				smtp_session_drop(&ta->sess);
			}
		}
		ta->sess.messages++;
		if (t.folded)
			log_msg(LOG_INFO, job->id, "folded %llu lines longer than 998 bytes", t.folded);
		int timed_out = tr < 0 && ta->sess.conn.timed_out;
		for (size_t i = 0; i < n; i++)
			report_rcpt(ta, job, job->idx[start + i], &rc[i].res, ta->sess.relay, ta->sess.remote, timed_out);
		if (timed_out) {
			mark_dead(ta, job->host, ta->sess.conn.err);
			ta->dead_timeout = 1;
		}
		if (tr < 0)
			smtp_session_drop(&ta->sess);
	}
done:
	if (!rc)
		report_all(ta, job, 0, 0, "4.3.0", "out of memory", NULL, 0);
	if (cfd >= 0)
		close(cfd);
end:
	/* the early ends too: idle_arm() does nothing there, as no connection was opened and none
	 * is left open after a job with SMTP_IDLE=0 */
	ta->sess.conn.logid = NULL;
	idle_arm(ta);
	return 0;
}

/* "#idle": the connection is kept, as between jobs (the idle timer ends it; a job for another
 * destination replaces it), so the next message within SMTP_IDLE goes out without a connect,
 * a greeting and an EHLO; a dead destination is forgotten. */
static void smtp_idle(void *ctx)
{
	((struct smtp_ta *)ctx)->dead[0] = 0;
}

/* Reads the smtp keys; reports problems through report (for --check too). Returns errors. */
static int load(struct smtp_ta *ta, const struct conf *c, conf_report_fn *rep, void *ctx)
{
	int errors = 0;
	char err[300];
	struct smtp_config *cfg = &ta->cfg;
	int n = smarthost_parse(conf_str(c, CK_SMARTHOST), cfg->smarthost, SMARTHOST_MAX, err, sizeof err);
	if (n < 0) {
		conf_report_key(c, CK_SMARTHOST, rep, ctx, "%s", err);
		errors++;
		n = 0;
	}
	cfg->nsmarthost = n;
	if (tls_policy_parse(conf_str(c, CK_SMTP_TLS), &cfg->mx_policy) < 0) {
		conf_report_key(c, CK_SMTP_TLS, rep, ctx, "SMTP_TLS: want none, may, encrypt or verify");
		errors++;
	}
	const char *eb = conf_str(c, CK_SMTP_8BIT_FALLBACK);
	ta->send_8bit = strcmp(eb, "send") == 0;
	if (!ta->send_8bit && strcmp(eb, "bounce")) {
		conf_report_key(c, CK_SMTP_8BIT_FALLBACK, rep, ctx, "SMTP_8BIT_FALLBACK: want bounce or send");
		errors++;
	}
	long long port = conf_num(c, CK_SMTP_PORT);
	if (port < 1 || port > 65535) {
		conf_report_key(c, CK_SMTP_PORT, rep, ctx, "SMTP_PORT: want 1-65535");
		errors++;
	}
	cfg->mx_port = (unsigned)port;
	ta->maxrcpt = (long)conf_num(c, CK_SMTP_MAXRCPT);
	ta->hop_limit = (long)conf_num(c, CK_HOPCOUNT_LIMIT);
	if (ta->maxrcpt < 1 || ta->maxrcpt > SPOOL_RCPT_MAX) {
		conf_report_key(c, CK_SMTP_MAXRCPT, rep, ctx, "SMTP_MAXRCPT: want 1-10000");
		errors++;
	}
	ta->idle = (long)conf_num(c, CK_SMTP_IDLE);
	const char *helo = conf_str(c, CK_HELO_NAME);
	char why[128];
	if (*helo)
		str_lcpy(ta->helo, helo, sizeof ta->helo);
	else if (route_myhostname(conf_str(c, CK_MYHOSTNAME), ta->helo, sizeof ta->helo, why, sizeof why) < 0) {
		conf_report_key(c, CK_MYHOSTNAME, rep, ctx, "MYHOSTNAME: not a domain name: %s", why);
		errors++;
	}
	for (const char *p = ta->helo; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			conf_report_key(c, CK_HELO_NAME, rep, ctx, "HELO_NAME: no blanks or control characters");
			errors++;
			break;
		}
	cfg->helo_name = ta->helo;
	cfg->cafile = conf_str(c, CK_CAFILE);
	cfg->credentials = conf_str(c, CK_CREDENTIALS);
	cfg->cleartext_auth = conf_num(c, CK_SMTP_CLEARTEXT_AUTH) != 0;
	/* each timeout's offset in struct smtp_timeouts and its key */
	static const unsigned char tos[][2] = {
	    {offsetof(struct smtp_timeouts, connect), CK_SMTP_CONNECT_TIMEOUT},
	    {offsetof(struct smtp_timeouts, greeting), CK_SMTP_HELO_TIMEOUT},
	    {offsetof(struct smtp_timeouts, helo), CK_SMTP_HELO_TIMEOUT},
	    {offsetof(struct smtp_timeouts, cmd), CK_SMTP_CMD_TIMEOUT},
	    {offsetof(struct smtp_timeouts, data_init), CK_SMTP_DATA_INIT_TIMEOUT},
	    {offsetof(struct smtp_timeouts, data_block), CK_SMTP_DATA_BLOCK_TIMEOUT},
	    {offsetof(struct smtp_timeouts, data_done), CK_SMTP_DATA_DONE_TIMEOUT},
	};
	_Static_assert(CK_SMTP_CONNECT_TIMEOUT < 256 && CK_SMTP_HELO_TIMEOUT < 256 && CK_SMTP_CMD_TIMEOUT < 256 &&
	                   CK_SMTP_DATA_INIT_TIMEOUT < 256 && CK_SMTP_DATA_BLOCK_TIMEOUT < 256 &&
	                   CK_SMTP_DATA_DONE_TIMEOUT < 256,
	               "the timeout keys fit a byte");
	for (size_t i = 0; i < ARRAY_LEN(tos); i++) {
		long long s = conf_num(c, (enum conf_key)tos[i][1]);
		*(int *)(void *)((char *)&cfg->to + tos[i][0]) = s > 86400 ? 86400000 : (int)s * 1000;
	}
	return errors;
}

/* tls=verify with no trust anchors defers every message to that relay until it expires: say so
 * now, with the ways out (issue 12 point 2). A pin does not replace the chain under verify. */
static int check_anchors(const struct conf *c, const struct smtp_config *cfg, conf_report_fn *report, void *ctx)
{
	const char *who = NULL;
	for (int i = 0; i < cfg->nsmarthost && !who; i++)
		if (cfg->smarthost[i].policy == TLS_VERIFY)
			who = cfg->smarthost[i].host;
	if (!who && cfg->nsmarthost == 0 && cfg->mx_policy == TLS_VERIFY)
		who = "MX hosts (SMTP_TLS=verify)";
	if (!who)
		return 0;
	/* a warning: the scheduler must still start (local mail goes on), but the admin hears of
	 * it now rather than from a bounce days later */
	if (!ENABLE_TLS) {
		conf_report_key(c, CK_SMARTHOST, report, ctx,
		                CONF_WARNING "%s: tls=verify, but this spoolbox is built without TLS, so every message to it "
		                "would be deferred until it expires; fix: tls=none (only on a trusted link) or a TLS build",
		                who);
		return 0;
	}
	char err[256];
	struct tls_anchors *a = tls_anchors_load(cfg->cafile, err, sizeof err); /* load() set it */
	if (a) {
		tls_anchors_free(a);
		return 0;
	}
	conf_report_key(c, *cfg->cafile ? CK_CAFILE : CK_SMARTHOST, report, ctx,
	                CONF_WARNING "%s: tls=verify, but no trust anchors can be loaded (%s), so every message to it "
	                "would be deferred until it expires; fix: install the CA bundle (Debian, Alpine: ca-certificates; "
	                "OpenWrt: ca-bundle), or set CAFILE= to the relay's CA, or use tls=encrypt with pin=",
	                who, err);
	return 0;
}

int smtp_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	struct smtp_ta *ta = calloc(1, sizeof *ta);
	if (!ta)
		return 1;
	int e = load(ta, c, report, ctx);
	/* warnings, not errors: the admin chose these, and should know what they cost */
	for (int i = 0; i < ta->cfg.nsmarthost; i++) {
		const struct smarthost *sh = &ta->cfg.smarthost[i];
		if (sh->cleartext_auth)
			conf_report_key(c, CK_SMARTHOST, report, ctx,
			                CONF_WARNING "SMARTHOST %s: cleartext_auth sends the password without TLS", sh->host);
		else if (sh->unverified_auth && sh->policy < TLS_VERIFY && !sh->pins[0])
			conf_report_key(c, CK_SMARTHOST, report, ctx,
			                CONF_WARNING "SMARTHOST %s: unverified_auth sends the password to whoever answers (tls=%s, "
			                "no pin); prefer tls=verify or pin=", sh->host, tls_policy_name(sh->policy));
	}
	if (ta->cfg.cleartext_auth)
		conf_report_key(c, CK_SMTP_CLEARTEXT_AUTH, report, ctx,
		                CONF_WARNING "SMTP_CLEARTEXT_AUTH=yes sends passwords without TLS (and to unverified TLS peers)");
	e += check_anchors(c, &ta->cfg, report, ctx);
	free(ta);
	return e;
}

int smtp_main(int argc, char **argv)
{
	const char *conf_path = NULL, *debug_id = NULL, *from = NULL;
	int verbose = 0, test = 0, send = 0;
	if (applet_wants_help(argc, argv))
		return applet_usage(smtp_usage, 0);
	int opt;
	while ((opt = getopt(argc, argv, "C:m:vtsf:")) != -1) {
		switch (opt) {
		case 'C': conf_path = optarg; break;
		case 'm': debug_id = optarg; break;
		case 'v': verbose = 1; break;
		case 't': test = 1; break;
		case 's': send = 1; break;
		case 'f': from = optarg; break;
		default: return applet_usage(smtp_usage, 1);
		}
	}
	if (optind != argc && !(test && optind + 1 == argc))
		return applet_usage(smtp_usage, 1);
	/* -s and -f only with -t (0 or 1 each: so GCC does not copy the configuration loading
	 * below for what it would know of test) */
	if ((send || from) > test)
		return applet_usage(smtp_usage, 1);
	struct conf c;
	if (applet_load_conf(&c, conf_path))
		return EX_CONFIG;
	applet_log_setup(&c, NULL, test ? LOG_TO_STDERR : 0u, verbose);
	/* root's smtp -t and -m read the agents' credentials as theirs (secfile.h): the user named
	 * in this file counts, not only one from the environment (which overrides the file anyway) */
	setenv("AGENT_USER", conf_str(&c, CK_AGENT_USER), 0); /* 0: not over one already set */
	struct smtp_ta *ta = calloc(1, sizeof *ta);
	struct conf_stderr_ctx rc = {0, "error"};
	struct spool sp;
	int code = EX_OSERR;
	if (!ta)
		goto end;
	/* a zeroed session (calloc) is what smtp_session_init() makes: freed below as it is */
	code = EX_CONFIG;
	if (load(ta, &c, conf_report_stderr, &rc))
		goto end;
	ta->cfg.verbose = verbose;
	code = EX_OK;
	if (test) {
		char self[300];
		const char *all = conf_str(&c, CK_ALLMAILFROM), *q = conf_str(&c, CK_QUALIFYDOMAIN);
		if (!from && *all)
			from = all;
		if (!from) {
			str_fmt(self, sizeof self, "postmaster@%s", *q ? q : ta->helo);
			from = self;
		}
		code = smtp_test(&ta->sess, &ta->cfg, &c, from, optind < argc ? argv[optind] : NULL, send);
	} else if (spool_open(&sp, conf_str(&c, CK_SPOOL), 0, -1) < 0) {
		code = EX_TEMPFAIL;
	} else {
		signal(SIGPIPE, SIG_IGN);
		struct ta_ops ops = {smtp_job, smtp_idle, idle_wait_ms, idle_expired, 1};
		code = ta_main_loop(&sp, "smtp", &ops, ta, debug_id);
		smtp_session_end(&ta->sess);
	}
	smtp_session_free(&ta->sess);
	free(ta->rc);
	free(ta->body_buf);
end:
	conf_free(&c);
	free(ta);
	return code;
}
