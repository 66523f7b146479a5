/* errormail: the transport agent of the error channel. It turns failed recipients into one
 * delivery status notification (RFC 3464, a multipart/report of RFC 6522) per job, addressed to
 * the original envelope sender from the null sender, and queues it like any submitted message
 * (lib/enqueue: the same routing, local or smtp); only once it is durable does it report
 * "ok <DSN-ID> ..." for each recipient, and the scheduler records the B record and sets X.
 * Never a bounce of a bounce: a null-sender message gets no DSN, nor does a recipient with
 * NOTIFY=NEVER or a NOTIFY list without FAILURE; those are reported "error" (nothing to send).
 * The contract is docs/scheduler.md "The error channel"; the report format docs/errormail.md.
 *
 * usage: errormail [-C FILE] [-m ID]
 *   -m ID  by hand: for message ID's failed recipients, print the DSN that would be queued and
 *          the report lines; queue nothing, change nothing
 * config: SPOOL, MYHOSTNAME, LOCALDOMAINS, QUALIFYDOMAIN, DSN_RETURN_LIMIT, SIZELIMIT.
 * exit: 0 at EOF from the scheduler (or after -m), 64 usage, 66 -m: no such message,
 *       75 spool unusable, 78 configuration errors. */
#include "addr.h"
#include "common.h"
#include "dsn.h"
#include "enqueue.h"
#include "log.h"
#include "route.h"
#include "spool.h"
#include "sysexits.h"
#include "ta.h"
#include "util.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

const char errormail_usage[] =
    "usage: errormail [-C FILE] [-m ID]\n"
    "The error channel's transport agent: sends a delivery status notification (RFC 3464)\n"
    "for failed recipients to the envelope sender, from the null sender.\n"
    "  -C FILE  spoolbox.conf\n"
    "  -m ID    by hand: print the DSN that would be sent for message ID's failed recipients\n"
    "           and the report lines; queue nothing, change nothing\n";

struct em {
	char hostname[256];
	char qualify[256];
	char postmaster[256];     /* POSTMASTER: "" = failures of null-sender mail are dropped */
	char double_bounce[300];  /* double-bounce@MYHOSTNAME: the sender of postmaster notices */
	char ret_default;         /* DSN_RET_DEFAULT: 'H' or 0 (full) when the sender gave no RET */
	struct enq_conf ec;
	long long return_max;
	int by_hand;
	unsigned seq;          /* makes boundaries of one process distinct */
};

/* The last attempt that failed recipient i (the failure being reported), else its last one. */
static const struct spool_attempt *last_attempt(const struct spool_msg *m, size_t i)
{
	const struct spool_attempt *any = NULL;
	for (size_t k = m->natt; k-- > 0;) {
		const struct spool_attempt *a = &m->att[k];
		if (a->rcpt != (int)i)
			continue;
		if (!strcmp(a->code, "error") || !strcmp(a->code, "error2"))
			return a;
		if (!any)
			any = a;
	}
	return any;
}

static const char *enh_of(const struct spool_attempt *a)
{
	return a && strcmp(a->enh, "-") ? a->enh : "5.0.0";
}

/* Why recipient r wants no failure DSN, or NULL when it wants one (RFC 3461 4.1: NOTIFY absent
 * means FAILURE). */
static const char *no_dsn_wanted(const struct spool_rcpt *r, char *buf, size_t size)
{
	if (r->notify & NOTIFY_NEVER)
		return "NOTIFY=NEVER: no DSN wanted";
	if (r->notify && !(r->notify & NOTIFY_FAILURE)) {
		snprintf(buf, size, "NOTIFY=%s%s%s: no failure DSN wanted", r->notify & NOTIFY_SUCCESS ? "SUCCESS" : "",
		         (r->notify & NOTIFY_SUCCESS) && (r->notify & NOTIFY_DELAY) ? "," : "",
		         r->notify & NOTIFY_DELAY ? "DELAY" : "");
		return buf;
	}
	return NULL;
}

static int put_enq(void *ctx, const char *p, size_t n)
{
	return enq_feed(ctx, p, n);
}

static int put_stdout(void *ctx, const char *p, size_t n)
{
	(void)ctx;
	return fwrite(p, 1, n, stdout) == n ? 0 : -1;
}

/* Reports every recipient of want[0..n) with the same status and text. */
static void report_all(struct ta_job *job, const size_t *want, size_t n, const char *status, const char *text)
{
	for (size_t k = 0; k < n; k++)
		ta_report(job, want[k], status, "failed", enh_of(last_attempt(&job->msg, want[k])), text, NULL);
}

/* 1 when sender is the sender of our own postmaster notices: a failure of one is dropped, never
 * reported again (Postfix's double-bounce address), so notices cannot loop. */
static int is_double_bounce(const struct em *em, const char *sender)
{
	return sender && !strcasecmp(sender, em->double_bounce);
}

/* Queues (or, by hand, prints) the report for recipients want[0..n): the DSN to the envelope
 * sender, or with pm set the postmaster notice (headers only, from the double-bounce address). */
static void send_dsn(struct em *em, struct ta_job *job, const size_t *want, size_t n, int pm)
{
	const struct spool_msg *m = &job->msg;
	const char *rcpt = pm ? em->postmaster : m->sender;
	const char *from = pm ? em->double_bounce : "<>";
	struct addr to;
	char err[160], text[SPOOL_TEXT_MAX + 1];
	if (addr_parse_one(rcpt, strlen(rcpt), &to, err, sizeof err) < 0) {
		/* it can never be delivered: say so and let the scheduler close the failure */
		snprintf(text, sizeof text, pm ? "no postmaster notice: POSTMASTER is unusable: %s"
		                               : "no DSN: the sender address is unusable: %s", err);
		log_msg(LOG_WARNING, job->id, "%s", text);
		report_all(job, want, n, TA_ERROR, text);
		return;
	}
	struct dsn_rcpt *dr = calloc(n, sizeof *dr);
	char **finals = calloc(n, sizeof *finals);
	if (!dr || !finals) {
		free(dr);
		free(finals);
		report_all(job, want, n, TA_DEFERRED, "out of memory building the DSN");
		return;
	}
	for (size_t k = 0; k < n; k++) {
		const struct spool_rcpt *r = &m->rcpt[want[k]];
		const struct spool_attempt *a = last_attempt(m, want[k]);
		size_t len = strlen(r->addr) + strlen(em->hostname) + 2;
		finals[k] = malloc(len);
		if (finals[k])
			snprintf(finals[k], len, strchr(r->addr, '@') ? "%s" : "%s@%s", r->addr, em->hostname);
		dr[k].final = finals[k] ? finals[k] : r->addr;
		dr[k].orcpt = r->orcpt;
		dr[k].enh = enh_of(a);
		dr[k].remote = a ? a->remote : NULL;
		dr[k].diag = a ? a->text : NULL;
		dr[k].last_attempt = a ? a->time : 0;
	}
	char boundary[128];
	dsn_boundary(boundary, sizeof boundary, job->id, (long long)time(NULL), ++em->seq);
	struct dsn d = {em->hostname, rcpt, job->id, m->envid, m->ret ? m->ret : em->ret_default, m->arrival, m->size,
	                em->return_max, m->body8, boundary, dr, n, pm};
	int fd = spool_msg_open(job->sp, job->id, m->body_off);
	if (fd < 0) {
		report_all(job, want, n, TA_DEFERRED, "cannot open the message file; the DSN is tried again later");
	} else if (em->by_hand) {
		struct route rt;
		route_addr(&em->ec.rc, &to, &rt);
		printf("# %s from <%s> to <%s> (channel %s, host %s), for %zu recipient%s of %s:\n",
		       pm ? "postmaster notice" : "DSN", pm ? from : "", rcpt, rt.channel, rt.host, n, n == 1 ? "" : "s",
		       job->id);
		int rc = dsn_write(&d, fd, put_stdout, NULL);
		fflush(stdout);
		report_all(job, want, n, rc ? TA_DEFERRED : TA_OK, rc ? "reading the message failed" : "- (by hand: not queued)");
	} else {
		struct enq e;
		enq_init(&e, &em->ec, 0, 0);
		e.body8_declared = m->body8;
		int rc = enq_sender(&e, from);
		if (!rc && (rc = enq_add_rcpt(&e, &to, 0, NULL)) != 0) {
			/* an address submit would refuse (a non-ASCII domain): it can never be sent */
			snprintf(text, sizeof text, "no DSN: %.400s", e.why);
			log_msg(LOG_WARNING, job->id, "%s", text);
			report_all(job, want, n, TA_ERROR, text);
		} else {
			if (!rc)
				rc = dsn_write(&d, fd, put_enq, &e);
			if (rc < 0 && !e.err)
				snprintf(e.why, sizeof e.why, "reading the message file failed");
			if (!rc)
				rc = enq_finish(&e);
			if (rc) {
				snprintf(text, sizeof text, "DSN not queued, tried again later: %.400s", e.why);
				log_msg(LOG_WARNING, job->id, "%s", text);
				report_all(job, want, n, TA_DEFERRED, text);
			} else {
				/* durable (E3): now, and only now, the scheduler may close the failures */
				snprintf(text, sizeof text, "%s %s queued for <%.400s>", e.m.id, pm ? "postmaster notice" : "DSN",
				         e.m.rcpt[0].addr);
				log_msg(LOG_INFO, job->id, "%s %s queued for <%s>: %zu failed recipient%s, %s",
				        pm ? "postmaster notice" : "DSN", e.m.id, e.m.rcpt[0].addr, n, n == 1 ? "" : "s",
				        dsn_returns_full(&d) ? "message returned" : "headers returned");
				report_all(job, want, n, TA_OK, text);
			}
		}
		enq_free(&e);
	}
	if (fd >= 0)
		close(fd);
	for (size_t k = 0; k < n; k++)
		free(finals[k]);
	free(finals);
	free(dr);
}

static int em_job(void *ctx, struct ta_job *job)
{
	struct em *em = ctx;
	const struct spool_msg *m = &job->msg;
	int pm = !m->sender || !*m->sender;
	if (is_double_bounce(em, m->sender) || (pm && !*em->postmaster)) {
		/* a postmaster notice that failed, or no postmaster: the end of the line (no loop) */
		const char *why = pm ? "no DSN for the null sender, and POSTMASTER is empty: dropped"
		                     : "a postmaster notice could not be delivered: dropped";
		log_msg(LOG_WARNING, job->id, "%s (%zu failed recipient%s)", why, job->n, job->n == 1 ? "" : "s");
		report_all(job, job->idx, job->n, TA_ERROR, why);
		return 0;
	}
	size_t *want = calloc(job->n ? job->n : 1, sizeof *want), n = 0;
	if (!want) {
		report_all(job, job->idx, job->n, TA_DEFERRED, "out of memory");
		return 0;
	}
	for (size_t k = 0; k < job->n; k++) {
		size_t i = job->idx[k];
		char why[80];
		/* NOTIFY is the sender's wish; the postmaster hears of every failure */
		const char *no = pm ? NULL : no_dsn_wanted(&m->rcpt[i], why, sizeof why);
		if (no) {
			log_msg(LOG_INFO, job->id, "rcpt %zu: %s", i, no);
			ta_report(job, i, TA_ERROR, "failed", enh_of(last_attempt(m, i)), no, NULL);
		} else {
			want[n++] = i;
		}
	}
	if (n) {
		/* a TERM from the scheduler waits until the DSN is queued (or not) and reported, so
		 * no temporary file is left behind and no queued DSN goes unreported */
		sigset_t s, old;
		sigemptyset(&s);
		sigaddset(&s, SIGTERM);
		sigaddset(&s, SIGINT);
		sigaddset(&s, SIGHUP);
		sigprocmask(SIG_BLOCK, &s, &old);
		send_dsn(em, job, want, n, pm);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	free(want);
	return 0;
}

/* 1 when recipient i waits for the error channel: F, or T in its error phase (a failure on
 * record). */
static int waits_for_report(const struct spool_msg *m, size_t i)
{
	const struct spool_rcpt *r = &m->rcpt[i];
	if (r->tag == RT_FAILED)
		return 1;
	const struct spool_attempt *a = last_attempt(m, i);
	return r->tag == RT_TRANSIT && a && (!strcmp(a->code, "error") || !strcmp(a->code, "error2"));
}

/* -m ID: the failed recipients of one message, in one job as the scheduler's error thread
 * would hand them out. (ta_main_loop's by-hand mode picks recipients not yet final, which is
 * what delivery agents want; ours are exactly the final-for-delivery ones.) */
static int by_hand(struct em *em, const struct spool *sp, const char *id)
{
	struct ta_job job;
	memset(&job, 0, sizeof job);
	job.sp = sp;
	if (!spool_id_valid(id)) {
		fprintf(stderr, "errormail: not a message id: %s\n", id);
		return EX_USAGE;
	}
	str_lcpy(job.id, id, sizeof job.id);
	char err[256];
	int fd;
	if (spool_ctl_load(sp, id, 1, &job.msg, &fd, err, sizeof err) < 0) {
		fprintf(stderr, "errormail: %s: %s\n", id, err);
		return EX_NOINPUT;
	}
	close(fd);
	size_t *mine = calloc(job.msg.nrcpt ? job.msg.nrcpt : 1, sizeof *mine);
	char *taken = calloc(job.msg.nrcpt ? job.msg.nrcpt : 1, 1);
	if (!mine || !taken) {
		free(mine);
		free(taken);
		spool_msg_free(&job.msg);
		return EX_OSERR;
	}
	size_t jobs = 0;
	for (size_t i = 0; i < job.msg.nrcpt; i++) {
		if (taken[i] || !waits_for_report(&job.msg, i))
			continue;
		size_t n = 0;
		for (size_t k = i; k < job.msg.nrcpt; k++)
			if (!taken[k] && waits_for_report(&job.msg, k)) {
				taken[k] = 1;
				mine[n++] = k;
			}
		str_lcpy(job.host, SPOOL_ANY_HOST, sizeof job.host);
		job.idx = mine;
		job.n = n;
		em_job(em, &job);
		jobs++;
	}
	if (!jobs)
		fprintf(stderr, "errormail: %s: no failed recipient waits for a report\n", id);
	free(mine);
	free(taken);
	spool_msg_free(&job.msg);
	return 0;
}

static int setup(struct em *em, const struct conf *c)
{
	char why[128];
	if (route_myhostname(conf_str(c, CK_MYHOSTNAME), em->hostname, sizeof em->hostname, why, sizeof why) < 0) {
		log_msg(LOG_ERR, NULL, "MYHOSTNAME=%s is not a domain name: %s", conf_str(c, CK_MYHOSTNAME), why);
		return EX_CONFIG;
	}
	struct enq_conf *ec = &em->ec;
	ec->hostname = em->hostname;
	str_lcpy(em->qualify, *conf_str(c, CK_QUALIFYDOMAIN) ? conf_str(c, CK_QUALIFYDOMAIN) : em->hostname, sizeof em->qualify);
	ec->qualify = em->qualify;
	/* the report is ours: no From rewriting, no forced sender, no size limit (the returned
	 * message is capped below instead), one recipient */
	ec->allmailfrom = "";
	ec->rewrite_from = "";
	ec->sizelimit = 0;
	ec->maxrcpt = 1;
	if (route_conf_init(&ec->rc, conf_str(c, CK_LOCALDOMAINS), em->hostname) < 0) {
		log_msg(LOG_ERR, NULL, "LOCALDOMAINS: list too long");
		return EX_CONFIG;
	}
	ec->uid = (long)getuid();
	str_lcpy(ec->user, "MAILER-DAEMON", sizeof ec->user);
	em->return_max = conf_num(c, CK_DSN_RETURN_LIMIT);
	str_lcpy(em->postmaster, conf_str(c, CK_POSTMASTER), sizeof em->postmaster);
	snprintf(em->double_bounce, sizeof em->double_bounce, "double-bounce@%s", em->hostname);
	const char *rd = conf_str(c, CK_DSN_RET_DEFAULT);
	if (strcasecmp(rd, "full") && strcasecmp(rd, "hdrs")) {
		log_msg(LOG_ERR, NULL, "DSN_RET_DEFAULT=%s: not full or hdrs", rd);
		return EX_CONFIG;
	}
	em->ret_default = strcasecmp(rd, "hdrs") ? 0 : 'H';
	long long sl = conf_num(c, CK_SIZELIMIT);
	if (sl > 0 && sl < em->return_max)
		em->return_max = sl;
	return 0;
}

int errormail_main(int argc, char **argv)
{
	const char *cfile = NULL, *debug_id = NULL;
	if (applet_wants_help(argc, argv))
		return applet_usage(errormail_usage, 0);
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "-C"))
			cfile = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "-m"))
			debug_id = argv[++i];
		else
			return applet_usage(errormail_usage, 1);
	}
	struct conf c;
	int rc = applet_load_conf(&c, cfile);
	if (rc)
		return rc;
	applet_log_setup(&c, NULL, 0, 0);
	struct em *em = calloc(1, sizeof *em);
	struct spool *sp = calloc(1, sizeof *sp);
	if (!em || !sp) {
		free(em);
		free(sp);
		conf_free(&c);
		return EX_OSERR;
	}
	rc = setup(em, &c);
	if (!rc && spool_open(sp, conf_str(&c, CK_SPOOL), 0, -1) < 0)
		rc = EX_TEMPFAIL;
	conf_free(&c);
	if (!rc) {
		em->ec.sp = sp;
		em->by_hand = debug_id != NULL;
		struct ta_ops ops = {em_job, NULL};
		rc = debug_id ? by_hand(em, sp, debug_id) : ta_main_loop(sp, NULL, &ops, em, NULL);
	}
	free(em);
	free(sp);
	return rc;
}
