/* errormail: the transport agent of the error channel. It turns the recipients of a job into
 * delivery status notifications (RFC 3464, a multipart/report of RFC 6522), one per kind:
 * failed recipients (F) make a failure report, delivered ones that asked for it (S) a success
 * notice, waiting ones a delay notice; the kind is what each recipient's last attempt record
 * says. Each goes to the original envelope sender from the null sender, queued like any
 * submitted message (lib/enqueue: the same routing, local or smtp); only once it is durable
 * does it report "ok <DSN-ID> ..." for each recipient, and the scheduler records B (or W) and
 * closes them. Never a bounce of a bounce: a null-sender message gets no DSN (its failures are
 * the postmaster's), nor does a recipient whose NOTIFY does not ask for that kind; those are
 * reported "error" (nothing to send).
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
	/* the scalars first: short offsets */
	char ret_default;         /* DSN_RET_DEFAULT: 'H' or 0 (full) when the sender gave no RET */
	long long return_max;
	int by_hand;
	unsigned seq;          /* makes boundaries of one process distinct */
	struct enq_conf ec;
	char hostname[256];
	char qualify[256];
	char postmaster[256];     /* POSTMASTER: "" = failures of null-sender mail are dropped */
	char double_bounce[300];  /* double-bounce@MYHOSTNAME: the sender of postmaster notices */
	struct spool sp;          /* last: 9 KiB, allocated with the rest */
	struct ta_job hand;       /* -m's job: reached through a pointer, zeroed by calloc */
};

/* What an attempt's code says: "error" or "error2" a failure, "ok", "ok2" or "ok3" a delivery,
 * anything else a wait. */
static enum dsn_kind code_kind(const char *c)
{
	if (!strncmp(c, "error", 5) && (!c[5] || (c[5] == '2' && !c[6])))
		return DSN_FAILED;
	if (c[0] == 'o' && c[1] == 'k' && (!c[2] || (c[2] >= '2' && c[2] <= '3' && !c[3])))
		return DSN_SUCCESS;
	return DSN_DELAYED;
}

/* The attempt a report of that kind is about: for a failure the last one that failed recipient
 * i (the failure being reported), else its last one; for any other kind (DSN_DELAYED when it
 * is only asked for the record) its last attempt record, whatever it says. */
static const struct spool_attempt *attempt_for(const struct spool_msg *m, size_t i, enum dsn_kind kind)
{
	const struct spool_attempt *any = NULL;
	for (size_t k = m->natt; k-- > 0;) {
		const struct spool_attempt *a = &m->att[k];
		if (a->rcpt != (int)i)
			continue;
		if (kind != DSN_FAILED || code_kind(a->code) == DSN_FAILED)
			return a;
		if (!any)
			any = a;
	}
	return any;
}

/* Which report recipient i is in: its last attempt failed (F: a failure report), delivered (S:
 * a success notice), or anything else, none included (waiting: a delay notice). The scheduler
 * appends the A record before it sets the tag, so the record says why it is here. */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static enum dsn_kind kind_of(const struct spool_msg *m, size_t i)
{
	const struct spool_attempt *a = attempt_for(m, i, DSN_DELAYED);
	return a ? code_kind(a->code) : DSN_DELAYED;
}

static const char kind_name[][8] = {"failure", "delay", "success"};
static const char *const kind_action[] = {"failed", "delayed", "delivered"};

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static const char *enh_of(const struct spool_attempt *a, enum dsn_kind kind)
{
	return a && strcmp(a->enh, "-") ? a->enh : dsn_generic[kind];
}

/* Why recipient r wants no report of this kind, or NULL when it wants one (RFC 3461 4.1: NOTIFY
 * absent means FAILURE, and DELAY at the MTA's choice: we give it). */
static const char *no_dsn_wanted(const struct spool_rcpt *r, enum dsn_kind kind, char *buf, size_t size)
{
	static const unsigned bit[] = {NOTIFY_FAILURE, NOTIFY_DELAY, NOTIFY_SUCCESS};
	if (r->notify & NOTIFY_NEVER)
		return "NOTIFY=NEVER: no DSN wanted";
	if ((r->notify || kind == DSN_SUCCESS) && !(r->notify & bit[kind])) {
		char list[DSN_NOTIFY_TEXT];
		dsn_notify_format(r->notify, list);
		snprintf(buf, size, "NOTIFY=%s: no %s %s wanted", *list ? list : "(absent)", kind_name[kind],
		         kind == DSN_FAILED ? "DSN" : "notice");
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

static void report_one(struct ta_job *job, size_t i, enum dsn_kind kind, const char *status, const char *text)
{
	const struct spool_attempt *a = attempt_for(&job->msg, i, kind);
	const char *action = kind == DSN_SUCCESS && a && strcmp(a->action, "-") ? a->action : kind_action[kind];
	ta_report(job, i, status, action, enh_of(a, kind), text, NULL);
}

/* Reports every recipient of want[0..n) with the same status and text. */
static void report_all(struct ta_job *job, const size_t *want, size_t n, enum dsn_kind kind, const char *status,
                       const char *text)
{
	for (size_t k = 0; k < n; k++)
		report_one(job, want[k], kind, status, text);
}

/* 1 when sender is the sender of our own postmaster notices: a failure of one is dropped, never
 * reported again (Postfix's double-bounce address), so notices cannot loop. */
static int is_double_bounce(const struct em *em, const char *sender)
{
	return sender && !strcasecmp(sender, em->double_bounce);
}

/* Queues (or, by hand, prints) the report of this kind for recipients want[0..n): the DSN to
 * the envelope sender, or for a failure of null-sender mail the postmaster notice (headers
 * only, from the double-bounce address). */
static void send_dsn(struct em *em, struct ta_job *job, const size_t *want, size_t n, enum dsn_kind kind)
{
	const struct spool_msg *m = &job->msg;
	int pm = kind == DSN_FAILED && (!m->sender || !*m->sender);
	static const char *const what_of[] = {"DSN", "delay notice", "success notice"};
	const char *what = pm ? "postmaster notice" : what_of[kind];
	const char *rcpt = pm ? em->postmaster : m->sender;
	const char *from = pm ? em->double_bounce : "<>";
	struct addr to;
	struct enq e;
	struct dsn_rcpt *dr = NULL;
	char err[160], text[SPOOL_TEXT_MAX + 1];
	/* every way out reports the recipients once, with status and why (text, logged as a
	 * warning, when warn) */
	const char *status = TA_ERROR, *why = text;
	int fd = -1, warn = 1, enq = 0;
	if (addr_parse_one(rcpt, strlen(rcpt), &to, err, sizeof err) < 0) {
		/* it can never be delivered: say so and let the scheduler close the failure */
		snprintf(text, sizeof text, pm ? "no postmaster notice: POSTMASTER is unusable: %s"
		                               : "no DSN: the sender address is unusable: %s", err);
		goto out;
	}
	warn = 0;
	status = TA_DEFERRED;
	why = "out of memory building the DSN";
	dr = calloc(n, sizeof *dr);
	if (!dr)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const struct spool_rcpt *r = &m->rcpt[want[k]];
		const struct spool_attempt *a = attempt_for(m, want[k], kind);
		dr[k].final = r->addr; /* a local user's is shown at em->hostname (dsn.c) */
		dr[k].orcpt = r->orcpt;
		dr[k].enh = enh_of(a, kind);
		if (a) { /* without an attempt: NULL and 0, as calloc left them */
			dr[k].action = a->action;
			dr[k].remote = a->remote;
			dr[k].diag = a->text;
			dr[k].last_attempt = a->time;
		}
	}
	char boundary[128];
	dsn_boundary(boundary, sizeof boundary, job->id, (long long)time(NULL), ++em->seq);
	struct dsn d = {em->hostname, rcpt, job->id, m->envid, m->ret ? m->ret : em->ret_default, m->arrival, m->size,
	                em->return_max, m->body8, boundary, dr, n, pm, kind};
	fd = spool_msg_open(job->sp, job->id, m->body_off);
	why = "cannot open the message file; the DSN is tried again later";
	if (fd < 0) {
		/* as said */
	} else if (em->by_hand) {
		struct route rt;
		route_addr(&em->ec.rc, &to, &rt);
		printf("# %s from <%s> to <%s> (channel %s, host %s), for %zu recipient%s of %s:\n",
		       what, pm ? from : "", rcpt, rt.channel, rt.host, n, n == 1 ? "" : "s",
		       job->id);
		int rc = dsn_write(&d, fd, put_stdout, NULL);
		fflush(stdout);
		if (!rc)
			status = TA_OK;
		why = rc ? "reading the message failed" : "- (by hand: not queued)";
	} else {
		enq_init(&e, &em->ec, 0, 0);
		enq = 1;
		e.body8_declared = m->body8;
		warn = 1;
		why = text;
		int rc = enq_sender(&e, from);
		if (!rc && (rc = enq_add_rcpt(&e, &to, 0, NULL)) != 0) {
			/* an address submit would refuse (a non-ASCII domain): it can never be sent */
			snprintf(text, sizeof text, "no DSN: %.400s", e.why);
			status = TA_ERROR;
		} else {
			if (!rc)
				rc = dsn_write(&d, fd, put_enq, &e);
			if (rc < 0 && !e.err)
				snprintf(e.why, sizeof e.why, "reading the message file failed");
			if (!rc)
				rc = enq_finish(&e);
			if (rc) {
				snprintf(text, sizeof text, "DSN not queued, tried again later: %.400s", e.why);
			} else {
				/* durable (E3): now, and only now, the scheduler may close the failures */
				snprintf(text, sizeof text, "%s %s queued for <%.400s>", e.m.id, what, e.m.rcpt[0].addr);
				log_msg(LOG_INFO, job->id, "%s %s queued for <%s>: %zu %s recipient%s, %s", what, e.m.id,
				        e.m.rcpt[0].addr, n, kind_action[kind], n == 1 ? "" : "s",
				        dsn_returns_full(&d) ? "message returned" : "headers returned");
				/* Postfix's bounce line, which log summarisers read (docs/logging.md) */
				static const char *const pf[] = {"non-delivery", "delay", "delivery status"};
				log_msg_as("spoolbox/bounce", LOG_INFO, job->id, "%s %s notification: %s", pm ? "postmaster" : "sender",
				           pf[kind], e.m.id);
				warn = 0;
				status = TA_OK;
			}
		}
	}
out:
	if (warn)
		log_msg(LOG_WARNING, job->id, "%s", text);
	report_all(job, want, n, kind, status, why);
	if (enq)
		enq_free(&e);
	if (fd >= 0)
		close(fd);
	free(dr);
}

/* Why recipient i gets no report of its kind, or NULL. Failures of null-sender mail go to the
 * postmaster whatever NOTIFY says (the sender is nobody), unless POSTMASTER is empty or the
 * message is itself a failed postmaster notice (the end of the line: no loop). Delay and
 * success notices never go to the null sender or to the double-bounce address. */
static const char *no_report(const struct em *em, const struct spool_msg *m, size_t i, enum dsn_kind kind, char *buf,
                             size_t size)
{
	int null = !m->sender || !*m->sender;
	if (kind == DSN_FAILED && is_double_bounce(em, m->sender))
		return "a postmaster notice could not be delivered: dropped";
	if (kind == DSN_FAILED && null)
		return *em->postmaster ? NULL : "no DSN for the null sender, and POSTMASTER is empty: dropped";
	if (null || is_double_bounce(em, m->sender)) {
		snprintf(buf, size, "no %s notice for the null sender", kind_name[kind]);
		return buf;
	}
	return no_dsn_wanted(&m->rcpt[i], kind, buf, size);
}

static int em_job(void *ctx, struct ta_job *job)
{
	struct em *em = ctx;
	const struct spool_msg *m = &job->msg;
	size_t per = job->n ? job->n : 1;
	size_t *want = calloc(3 * per, sizeof *want), n[3] = {0, 0, 0};
	for (size_t k = 0; k < job->n; k++) {
		size_t i = job->idx[k];
		enum dsn_kind kind = kind_of(m, i);
		char why[96];
		/* out of memory: every recipient is tried again later, nothing logged */
		const char *no = want ? no_report(em, m, i, kind, why, sizeof why) : "out of memory";
		if (!want) {
			report_one(job, i, kind, TA_DEFERRED, no);
		} else if (no) {
			/* a dropped failure is worth a warning: nobody hears of it */
			log_msg(kind == DSN_FAILED && strstr(no, "dropped") ? LOG_WARNING : LOG_INFO, job->id, "rcpt %zu: %s", i, no);
			report_one(job, i, kind, TA_ERROR, no);
		} else {
			want[kind * per + n[kind]++] = i;
		}
	}
	if (n[0] + n[1] + n[2]) {
		/* a TERM from the scheduler waits until the reports are queued (or not) and reported,
		 * so no temporary file is left behind and no queued report goes unreported */
		sigset_t s, old;
		sigemptyset(&s);
		sigaddset(&s, SIGTERM);
		sigaddset(&s, SIGINT);
		sigaddset(&s, SIGHUP);
		sigprocmask(SIG_BLOCK, &s, &old);
		for (int kind = DSN_FAILED; kind <= DSN_SUCCESS; kind++)
			if (n[kind])
				send_dsn(em, job, want + kind * per, n[kind], (enum dsn_kind)kind);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	free(want);
	return 0;
}

/* 1 when recipient i waits for the error channel: F or S, or T in its error phase (a failure
 * or a delivery on record). Delay notices are the scheduler's to time: not made by hand. */
static int waits_for_report(const struct spool_msg *m, size_t i)
{
	const struct spool_rcpt *r = &m->rcpt[i];
	if (r->tag == RT_FAILED || r->tag == RT_SUCCESS)
		return 1;
	return r->tag == RT_TRANSIT && kind_of(m, i) != DSN_DELAYED;
}

/* -m ID: the failed recipients of one message, in one job as the scheduler's error thread
 * would hand them out. (ta_main_loop's by-hand mode picks recipients not yet final, which is
 * what delivery agents want; ours are exactly the final-for-delivery ones.) */
static int by_hand(struct em *em, const struct spool *sp, const char *id)
{
	struct ta_job *job = &em->hand;
	job->sp = sp;
	if (!spool_id_valid(id)) {
		fprintf(stderr, "errormail: not a message id: %s\n", id);
		return EX_USAGE;
	}
	str_lcpy(job->id, id, sizeof job->id);
	char err[256];
	int fd;
	if (spool_ctl_load(sp, id, 1, &job->msg, &fd, err, sizeof err) < 0) {
		fprintf(stderr, "errormail: %s: %s\n", id, err);
		return EX_NOINPUT;
	}
	close(fd);
	size_t nr = job->msg.nrcpt ? job->msg.nrcpt : 1;
	size_t *mine = calloc(nr, sizeof *mine);
	if (!mine) {
		spool_msg_free(&job->msg);
		return EX_OSERR;
	}
	/* all of them in one job */
	size_t n = 0;
	for (size_t i = 0; i < job->msg.nrcpt; i++)
		if (waits_for_report(&job->msg, i))
			mine[n++] = i;
	if (n) {
		str_lcpy(job->host, SPOOL_ANY_HOST, sizeof job->host);
		job->idx = mine;
		job->n = n;
		em_job(em, job);
	} else {
		fprintf(stderr, "errormail: %s: %s\n", id, "no failed recipient waits for a report"); /* the format above */
	}
	free(mine);
	spool_msg_free(&job->msg);
	return 0;
}

static int setup(struct em *em, const struct conf *c)
{
	char why[128];
	const char *myhost = conf_str(c, CK_MYHOSTNAME), *qd = conf_str(c, CK_QUALIFYDOMAIN);
	/* a refusal: this text with a and b, logged once at the end */
	const char *fmt = "MYHOSTNAME=%s is not a domain name: %s", *a = myhost;
	if (route_myhostname(myhost, em->hostname, sizeof em->hostname, why, sizeof why) < 0)
		goto bad;
	struct enq_conf *ec = &em->ec;
	ec->hostname = em->hostname;
	str_lcpy(em->qualify, *qd ? qd : em->hostname, sizeof em->qualify);
	ec->qualify = em->qualify;
	/* the report is ours: no From rewriting, no forced sender, no size limit (the returned
	 * message is capped below instead), one recipient */
	ec->allmailfrom = "";
	ec->rewrite_from = "";
	ec->maxrcpt = 1; /* sizelimit: 0 (em is calloc'd) */
	fmt = "LOCALDOMAINS: list too long";
	if (route_conf_init(&ec->rc, conf_str(c, CK_LOCALDOMAINS), em->hostname) < 0)
		goto bad;
	ec->uid = (long)getuid();
	str_lcpy(ec->user, "MAILER-DAEMON", sizeof ec->user);
	em->return_max = conf_num(c, CK_DSN_RETURN_LIMIT);
	str_lcpy(em->postmaster, conf_str(c, CK_POSTMASTER), sizeof em->postmaster);
	snprintf(em->double_bounce, sizeof em->double_bounce, "double-bounce@%s", em->hostname);
	const char *rd = conf_str(c, CK_DSN_RET_DEFAULT);
	int hdrs = !strcasecmp(rd, "hdrs");
	fmt = "DSN_RET_DEFAULT=%s: not full or hdrs";
	a = rd;
	if (!hdrs && strcasecmp(rd, "full"))
		goto bad;
	em->ret_default = hdrs ? 'H' : 0;
	long long sl = conf_num(c, CK_SIZELIMIT);
	if (sl > 0 && sl < em->return_max)
		em->return_max = sl;
	return 0;
bad:
	log_msg(LOG_ERR, NULL, fmt, a, why); /* a format without the %s leaves them unread */
	return EX_CONFIG;
}

int errormail_main(int argc, char **argv)
{
	const char *cfile = NULL, *debug_id = NULL;
	/* (--help never gets here: main's run() answers it for every applet) */
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
	if (!em) {
		conf_free(&c);
		return EX_OSERR;
	}
	struct spool *sp = &em->sp;
	rc = setup(em, &c);
	if (!rc && spool_open(sp, conf_str(&c, CK_SPOOL), 0, -1) < 0)
		rc = EX_TEMPFAIL;
	conf_free(&c);
	if (!rc) {
		em->ec.sp = sp;
		em->by_hand = debug_id != NULL;
		struct ta_ops ops = {em_job, NULL, NULL, NULL, 0};
		rc = debug_id ? by_hand(em, sp, debug_id) : ta_main_loop(sp, NULL, &ops, em, NULL);
	}
	free(em);
	return rc;
}
