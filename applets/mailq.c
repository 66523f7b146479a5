/* mailq: shows the queue and acts on it (issue 10; docs/man/mailq.1, docs/spool.md 12).
 *
 * Listing reads the spool one message at a time (lib/mailq_read.c) and prints Postfix's mailq
 * format, or -v, --json, -s (lib/mailq_fmt.c). Control (hold, release, delete, retry, and
 * running the queue) goes to a running scheduler as a trigger line, which it carries out (it
 * owns its memory); with none running, mailq takes the scheduler's lock and does the same steps
 * on the spool itself (lib/qctl.c), so no scheduler can start in the middle.
 *
 * usage: see mailq_usage below. sendmail -bp runs this applet.
 * config: SPOOL, LOG.
 * exit: 0 done; 64 usage; 66 an id is not in the queue; 75 the spool could not be read or an
 *       action failed (nothing reported done was left half done); 77 not allowed (control
 *       actions need root; a user the spool keeps out); 78 configuration errors. */
#include "common.h"
#include "fmt.h"
#include "log.h"
#include "mailq.h"
#include "qctl.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char mailq_usage[] =
    "usage: mailq [-C FILE] [-v | --json | -s] [ID...]   mailq [-C FILE] -Q | -QQ | -QQQ\n"
    "       mailq [-C FILE] --hold | --release | --delete | --retry  ID... | ALL\n"
    "       mailq [-C FILE] -q | -qR DOMAIN | -qI ID\n"
    "List the queue in Postfix's mailq format (also sendmail -bp), or act on messages.\n"
    "  -C FILE    configuration file (default /etc/spoolbox/spoolbox.conf)\n"
    "  -v         every recipient with every delivery attempt\n"
    "  --json     one JSON object per message and line\n"
    "  -s         one line of counts: queued, deferred, held, in transit, oldest, last error\n"
    "  -Q, -QQ, -QQQ  the running scheduler's threads, its short view, its counters\n"
    "  --hold     keep messages from delivery until released (root)\n"
    "  --release  let held messages go, and try them now (root)\n"
    "  --delete   remove messages from the queue, without a bounce (root)\n"
    "  --retry    try the deferred recipients of messages now (root)\n"
    "  -q         run the whole queue now; without a scheduler, once in the foreground\n"
    "  -qR DOMAIN run the recipients at DOMAIN (and its subdomains) now\n"
    "  -qI ID     run one message now\n";

enum mode { M_LIST, M_VERBOSE, M_JSON, M_SUMMARY, M_LIVE, M_ACTION, M_RUN };

struct mq {
	enum mode mode;
	enum qctl_action action;
	const char *conf_path;
	const char *domain;        /* -qR */
	char **ids;
	char *one;                 /* -qI ID */
	int nids;
	int all;
	int live;                  /* -Q 1, -QQ 2, -QQQ 3 */
	gid_t gid_real, gid_set;   /* the setgid group (docs/spool.md 8), raised only to read */
	struct spool sp;           /* its dir still at a one-byte offset */
	struct mq_out out;
	char user[64];
};

/* "mailq: " and the message on standard error: the prefix written once, not in each text. On
 * x86-64 an entry into lib/fmt.c's shared variadic prologue (FMT_VA_ENTRY), hence global. */
void mailq_say(const char *fmt, ...) PRINTF_LIKE(1, 2);
#define say mailq_say
__attribute__((used)) static void say_v(const char *fmt, long b, long c, long d, va_list ap)
{
	fputs("mailq: ", stderr);
	vfprintf(stderr, fmt, ap);
}

FMT_VA_ENTRY(mailq_say, 1, say_v);
#if !FMT_VA_ASM
void mailq_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_v(fmt, 0, 0, 0, ap);
	va_end(ap);
}
#endif

/* The group a setgid mailq reads the queue with: raised around the reads only. */
static void group_set(const struct mq *q, int raise)
{
	if (q->gid_real != q->gid_set && setresgid((gid_t)-1, raise ? q->gid_set : q->gid_real, (gid_t)-1) < 0)
		say("setresgid: %s\n", strerror(errno));
}

/* For good: another configuration or spool is never read with the group. */
static int group_drop(struct mq *q)
{
	if (q->gid_real != q->gid_set && setresgid(q->gid_real, q->gid_real, q->gid_real) < 0)
		return -1;
	q->gid_set = q->gid_real;
	return 0;
}

/* MAILQ_RESTRICT=yes: root and members of SUBMIT_GROUP (group) only (sendmail's restrictmailq). */
static int may_list(const struct conf *c, const char *group)
{
	if (!conf_num(c, CK_MAILQ_RESTRICT) || getuid() == 0)
		return 1;
	struct group *g = getgrnam(group);
	if (!g)
		return 0;
	if (getgid() == g->gr_gid)
		return 1;
	gid_t list[256];
	int n = getgroups(256, list);
	for (int i = 0; i < n; i++)
		if (list[i] == g->gr_gid)
			return 1;
	return 0;
}

/* "name (uid N)" of the caller, for the log line of every action. */
static void caller(char *out, size_t size)
{
	uid_t uid = getuid();
	struct passwd *pw = getpwuid(uid);
	snprintf(out, size, "%s (uid %ld)", pw ? pw->pw_name : "?", (long)uid);
}

static int pending(const struct spool_msg *m)
{
	for (size_t i = 0; i < m->nrcpt; i++)
		if (m->rcpt[i].tag != RT_DELIVERED && m->rcpt[i].tag != RT_REPORTED)
			return 1;
	return 0;
}

static int show_one(void *ctx, const struct mq_item *it)
{
	struct mq *q = ctx;
	/* a message whose every recipient is done is being removed: not in the queue any more */
	if (it->m && !pending(it->m) && q->mode != M_JSON)
		return 0;
	switch (q->mode) {
	case M_JSON: mq_json_msg(&q->out, it); break;
	case M_SUMMARY: mq_summary_add(&q->out, it); break;
	default: mq_postfix_msg(&q->out, it); break;
	}
	return ferror(q->out.f) ? -2 : 0;
}

static int list(struct mq *q, long sched)
{
	mq_out_init(&q->out, stdout, (long long)time(NULL));
	q->out.verbose = q->mode == M_VERBOSE;
	int rc = 0, walked = 0;
	group_set(q, 1);
	if (q->nids) {
		for (int i = 0; i < q->nids; i++) {
			int r = mq_find(&q->sp, q->ids[i], show_one, q);
			if (r) {
				say("%s: %s\n", q->ids[i], r < 0 ? "not a message id" : "no such message in the queue");
				rc = EX_NOINPUT;
			}
		}
	} else {
		walked = mq_walk(&q->sp, show_one, q);
	}
	group_set(q, 0);
	if (walked == -1) {
		int e = errno;
		say("cannot read the queue in %s: %s%s\n", q->sp.dir, strerror(e),
		    e == EACCES ? " (the queue is readable by root only)" : "");
		return e == EACCES ? EX_NOPERM : EX_TEMPFAIL;
	}
	if (q->mode == M_LIST || q->mode == M_VERBOSE)
		mq_postfix_end(&q->out);
	else if (q->mode == M_SUMMARY)
		mq_summary_print(&q->out);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		say("writing the listing: %s\n", strerror(errno));
		return EX_IOERR;
	}
	if (!sched)
		say("no scheduler is running: this is what the spool in %s says\n", q->sp.dir);
	return rc;
}

/* With a scheduler running: one trigger line per id; it logs what it did. */
static int ask_scheduler(struct mq *q, const char *line, const char *what)
{
	if (spool_trigger_send(&q->sp, line) < 0) {
		say("cannot reach the scheduler through %s/trigger: %s\n", q->sp.dir, strerror(errno));
		return EX_TEMPFAIL;
	}
	log_msg(LOG_NOTICE, NULL, "asked the scheduler to %s, by %s", what, q->user);
	return 0;
}

struct each_ctx {
	struct mq *q;
	long long now;
	unsigned done, failed;
};

static int act_one(struct each_ctx *c, const char *id)
{
	struct mq *q = c->q;
	int r = qctl_apply(&q->sp, q->action, id, c->now);
	if (r == 0) {
		static const char *const done[] = {"held", "released", "deleted", "retry now"};
		log_msg(LOG_NOTICE, id, "%s by %s", done[q->action], q->user);
		printf("%s: %s\n", id, q->action == QA_RETRY ? "will be tried now" : done[q->action]);
		c->done++;
	} else if (r < 0) {
		say("%s: %s failed: %s\n", id, qctl_name(q->action), strerror(errno));
		c->failed++;
	}
	return r;
}

/* 1 when a recipient of m that is not done has its host at domain or below it (-qR). */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static int at_domain(const struct spool_msg *m, const char *domain)
{
	size_t dl = strlen(domain);
	for (size_t i = 0; m && i < m->nrcpt; i++) {
		const char *h = m->rcpt[i].host;
		size_t hl = strlen(h);
		if (m->rcpt[i].tag != RT_DEFERRED || hl < dl || !str_caseeq(h + hl - dl, domain))
			continue;
		if (hl == dl || h[hl - dl - 1] == '.')
			return 1;
	}
	return 0;
}

static int act_each(void *ctx, const struct mq_item *it)
{
	struct each_ctx *c = ctx;
	if (c->q->domain && !at_domain(it->m, c->q->domain))
		return 0;
	/* ALL: what the action applies to; the rest is left alone without a word */
	if (c->q->action == QA_RELEASE && !it->held)
		return 0;
	if (c->q->action == QA_HOLD && it->held)
		return 0;
	act_one(c, it->id);
	return 0;
}

/* Without a scheduler: the steps on the spool, under the scheduler's lock. */
static int act_on_spool(struct mq *q)
{
	struct each_ctx c = {q, (long long)time(NULL), 0, 0};
	int rc = 0;
	if (q->all) {
		if (mq_walk(&q->sp, act_each, &c) == -1) {
			say("cannot read the queue in %s: %s%s\n", q->sp.dir, strerror(errno), ""); /* list()'s format */
			return EX_TEMPFAIL;
		}
		if (!c.failed)
			printf("mailq: %s: %u message%s\n", qctl_name(q->action), c.done, c.done == 1 ? "" : "s");
	} else {
		for (int i = 0; i < q->nids; i++) {
			int r = act_one(&c, q->ids[i]);
			if (r == 1) {
				int queued = mq_find(&q->sp, q->ids[i], NULL, NULL) == 0;
				say("%s: %s\n", q->ids[i],
				    !queued ? "no such message in the queue" :
				    q->action == QA_HOLD ? "already held" :
				    q->action == QA_RELEASE ? "not held" : "held: release it first");
				rc = queued ? EX_DATAERR : EX_NOINPUT;
			}
		}
	}
	return c.failed ? EX_TEMPFAIL : rc;
}

/* --hold, --release, --delete, --retry (M_ACTION), and -q, -qR, -qI (M_RUN): a running
 * scheduler is asked; without one, the steps are done on the spool under its lock, and for
 * -q... root makes the messages due now and runs the queue once in the foreground (scheduler
 * -1), as dma -q does without a daemon. */
static int mode_control(struct mq *q)
{
	for (int i = 0; i < q->nids; i++)
		if (!spool_id_valid(q->ids[i])) {
			say("%s: %s\n", q->ids[i], "not a message id"); /* one format for the id texts */
			return EX_USAGE;
		}
	int run = q->mode == M_RUN;
	char line[300];
	long pid;
	if (run) {
		if (q->nids)
			qctl_line(QA_RETRY, q->ids[0], line, sizeof line);
		else if (q->domain)
			snprintf(line, sizeof line, "R%s", q->domain);
		else
			str_lcpy(line, "Q", sizeof line);
		pid = qctl_scheduler_pid(&q->sp);
		if (pid > 0)
			return ask_scheduler(q, line, line[0] == 'Q' ? "run the queue" : line);
	}
	struct qctl_lock lk;
	int lr = qctl_lock(&q->sp, &lk, &pid);
	if (lr < 0) {
		say("cannot lock %s/scheduler.pid: %s\n", q->sp.dir, strerror(errno));
		return EX_TEMPFAIL;
	}
	if (lr == 1 && run)
		return ask_scheduler(q, line, line);
	if (lr == 1) {
		int rc = 0;
		for (int i = 0; i < (q->all ? 1 : q->nids); i++) {
			char what[SPOOL_ID_MAX + 16];
			const char *id = q->all ? "ALL" : q->ids[i], *name = qctl_name(q->action);
			if (!q->all && mq_find(&q->sp, id, NULL, NULL) != 0) {
				say("%s: %s\n", id, "no such message in the queue");
				rc = EX_NOINPUT;
				continue;
			}
			/* retry of everything is a run of the queue (sendmail -q) */
			if (q->all && q->action == QA_RETRY)
				str_lcpy(line, "Q", sizeof line);
			else
				qctl_line(q->action, id, line, sizeof line);
			snprintf(what, sizeof what, "%s %s", name, id);
			int r = ask_scheduler(q, line, what);
			if (r)
				return r;
			printf("%s: asked the scheduler (pid %ld) to %s it\n", id, pid, name);
		}
		return rc;
	}
	if (!run) {
		int rc = act_on_spool(q);
		qctl_unlock(&lk);
		return rc;
	}
	struct each_ctx c = {q, (long long)time(NULL), 0, 0};
	q->action = QA_RETRY;
	if (q->nids) {
		if (act_one(&c, q->ids[0]) == 1) {
			say("%s: %s\n", q->ids[0], "no such message in the queue, or held");
			qctl_unlock(&lk);
			return EX_NOINPUT;
		}
	} else {
		mq_walk(&q->sp, act_each, &c);
	}
	qctl_unlock(&lk);
	if (c.failed)
		return EX_TEMPFAIL;
	log_msg(LOG_NOTICE, NULL, "no scheduler: running the queue once in the foreground, by %s", q->user);
	fflush(NULL);
	/* -qR without a daemon: the one-shot scheduler runs only the threads at that domain */
	char pat[300];
	snprintf(pat, sizeof pat, "*/*%s", q->domain ? q->domain : "");
	char *args[8]; /* at most 7 and the NULL */
	args[0] = "scheduler";
	args[1] = "-1";
	args[2] = "-i";
	int n = 3;
	if (q->domain) {
		args[n++] = "-p";
		args[n++] = pat;
	}
	if (q->conf_path) {
		args[n++] = "-C";
		args[n++] = (char *)q->conf_path;
	}
	args[n] = NULL;
	execv("/proc/self/exe", args);
	return scheduler_main(n, args);
}

/* The scheduler's answer, read as fgets would read it from a FILE (without one: fdopen, fgets
 * and fclose were linked for this alone): a line of up to size - 1 bytes with its '\n', or the
 * rest before the end or an error (SO_RCVTIMEO); 0 when nothing was left. */
struct answer {
	int fd;
	size_t pos, len;
	char buf[1024];
};

/* noinline: its one caller is smaller without it inside (docs/size.md) */
__attribute__((noinline)) static int answer_line(struct answer *r, char *line, size_t size)
{
	size_t n = 0;
	while (n + 1 < size) {
		if (r->pos == r->len) {
			ssize_t k;
			while ((k = read(r->fd, r->buf, sizeof r->buf)) < 0 && errno == EINTR)
				;
			if (k <= 0)
				break;
			r->pos = 0;
			r->len = (size_t)k;
		}
		if ((line[n++] = r->buf[r->pos++]) == '\n')
			break;
	}
	line[n] = 0;
	return n > 0;
}

/* -Q, -QQ, -QQQ: the scheduler's own view over its socket (seed 000's mailq -Q: SHOW QUEUE
 * THREADS, SHOW QUEUE SHORT, SHOW SNMP), printed as it comes (docs/spool.md 13). */
static int live(struct mq *q)
{
	static const char *const cmd[] = {"SHOW QUEUE THREADS\n", "SHOW QUEUE SHORT\n", "SHOW SNMP\n"};
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (str_fmt(a.sun_path, sizeof a.sun_path, "%s/scheduler.sock", q->sp.dir) < 0) {
		say("the spool's path is too long for its socket\n");
		return EX_CONFIG;
	}
	group_set(q, 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int c = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	group_set(q, 0);
	if (c != 0) {
		say("no scheduler answers on %s: %s\n", a.sun_path, strerror(e));
		if (fd >= 0)
			close(fd);
		return EX_UNAVAILABLE;
	}
	/* a scheduler that stops answering must not hang a monitoring script */
	struct timeval tv = {30, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct answer in; /* the buffer needs no zeroing */
	in.fd = fd;
	in.pos = in.len = 0;
	char line[1024];
	int rc = EX_PROTOCOL, n = 0;
	while (answer_line(&in, line, sizeof line)) {
		n++;
		if (n == 2) {
			/* after the greeting and the challenge: the request */
			if (!str_starts(line, "MAILQ-V2-CHALLENGE: ") ||
			    send(fd, cmd[q->live - 1], strlen(cmd[q->live - 1]), MSG_NOSIGNAL) < 0)
				break;
		} else if (n == 3) {
			if (!str_starts(line, "+OK")) {
				say("the scheduler says: %s", line);
				rc = str_starts(line, "-ERR not allowed") ? EX_NOPERM : EX_TEMPFAIL;
				break;
			}
		} else if (n > 3) {
			if (!strcmp(line, ".\n")) {
				rc = 0;
				break;
			}
			fputs(line[0] == '.' ? line + 1 : line, stdout);
		}
	}
	if (rc == EX_PROTOCOL)
		say("the scheduler's answer on %s ended early\n", a.sun_path);
	if (send(fd, "QUIT\n", 5, MSG_NOSIGNAL) < 0) {
		/* it may have gone; nothing was left to ask */
	}
	close(fd);
	if (fflush(stdout) == EOF)
		return EX_IOERR;
	return rc;
}

static int parse(int argc, char **argv, struct mq *q)
{
	/* the options that are a word alone: a mode, -Q's level, an action (in qctl_action's order) */
	static const char words[] = "-v\0--json\0-s\0-q\0-Q\0-QQ\0-QQQ\0--hold\0--release\0--delete\0--retry\0";
	static const unsigned char word_mode[] = {M_VERBOSE, M_JSON, M_SUMMARY, M_RUN, M_LIVE, M_LIVE, M_LIVE};
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		int k = 0;
		for (const char *w = words; *w && strcmp(a, w); w += strlen(w) + 1)
			k++;
		if (k >= 7 && k < 11) {
			q->mode = M_ACTION;
			q->action = (enum qctl_action)(k - 7);
		} else if (k < 7) {
			q->mode = (enum mode)word_mode[k];
			q->live = k - 3; /* -Q 1, -QQ 2, -QQQ 3; only M_LIVE reads it */
		} else if (!strcmp(a, "--"))
			return i + 1;
		else if (!strncmp(a, "-C", 2) && (a[2] || i + 1 < argc))
			q->conf_path = a[2] ? a + 2 : argv[++i];
		else if (!strncmp(a, "-q", 2) && (a[2] == 'R' || a[2] == 'I') && (a[3] || i + 1 < argc)) {
			char *v = a[3] ? argv[i] + 3 : argv[++i]; /* -qR DOMAIN, -qI ID */
			q->mode = M_RUN;
			if (a[2] == 'R') {
				q->domain = v;
			} else {
				q->one = v;
				q->ids = &q->one;
				q->nids = 1;
			}
		} else
			return -1;
	}
	return i;
}

/* mailq_main's work on its zeroed state: reached through a pointer, the fields have one-byte
 * offsets, where the stack frame's are four bytes (docs/size.md). */
/* noinline: so that q stays a pointer */
__attribute__((noinline)) static int mailq_run(struct mq *q, int argc, char **argv)
{
	q->gid_real = getgid();
	q->gid_set = getegid();
	/* setgid (a user's mailq): the group is lowered before anything is parsed */
	if (q->gid_real != q->gid_set && setresgid((gid_t)-1, q->gid_real, (gid_t)-1) < 0) {
		say("cannot lower the setgid group: %s\n", strerror(errno));
		return EX_OSERR;
	}
	int i = parse(argc, argv, q);
	if (i < 0)
		return applet_usage(mailq_usage, 1);
	if (q->mode == M_LIVE && !ENABLE_MAILQ_PROTO) {
		say("-Q: this spoolbox is built without the scheduler's query socket "
		            "(ENABLE_MAILQ_PROTO); plain mailq reads the queue\n");
		return EX_USAGE;
	}
	if (q->mode != M_RUN) {
		q->ids = argv + i;
		q->nids = argc - i;
	} else if (i != argc) {
		return applet_usage(mailq_usage, 1);
	}
	if (q->mode == M_ACTION) {
		/* ALL alone (beside ids it is not an id: refused as one) */
		q->all = q->nids == 1 && !strcmp(q->ids[0], "ALL");
		if (!q->nids)
			return applet_usage(mailq_usage, 1);
		if (q->all)
			q->nids = 0;
	}
	if ((q->mode == M_ACTION || q->mode == M_RUN) && geteuid() != 0) {
		say("only root may %s%s (users may run sendmail -q, once a minute)\n",
		    q->mode == M_RUN ? "run the queue with mailq" : qctl_name(q->action), q->mode == M_RUN ? "" : " messages");
		return EX_NOPERM;
	}
	if ((q->conf_path || applet_env_overrides() || q->mode > M_LIVE) && group_drop(q) < 0) {
		say("cannot drop the setgid group: %s\n", strerror(errno));
		return EX_OSERR;
	}
	struct conf conf;
	int rc = applet_load_conf(&conf, q->conf_path);
	if (rc)
		return rc;
	const char *group = conf_str(&conf, CK_SUBMIT_GROUP);
	/* a refusal below: conf freed, rc returned */
	rc = EX_NOPERM;
	if (!may_list(&conf, group)) {
		say("MAILQ_RESTRICT=yes: only root and the %s group may list the queue\n", group);
		goto refused;
	}
	rc = EX_OSERR;
	if (q->gid_real != q->gid_set) {
		/* the group must be the one the spool is made for, or it is dropped (as submit) */
		struct group *g = getgrnam(group);
		if ((!g || g->gr_gid != q->gid_set) && group_drop(q) < 0)
			goto refused;
	}
	applet_log_setup(&conf, NULL, 0, 0);
	caller(q->user, sizeof q->user);
	/* no check that the spool is set up: what is missing is simply empty (a queue nothing was
	 * ever submitted to), and every path below is made from a checked id */
	const char *dir = conf_str(&conf, CK_SPOOL);
	rc = EX_CONFIG;
	if (str_lcpy(q->sp.dir, dir, sizeof q->sp.dir) >= sizeof q->sp.dir || !*dir) {
		say("spool directory name too long or empty: %s\n", dir);
		goto refused;
	}
	rc = EX_TEMPFAIL;
	/* acting as the scheduler does (root): the spool's layout is made when missing */
	if (q->mode > M_LIVE && spool_open(&q->sp, dir, 1, -1) < 0) {
		say("cannot set up the spool %s\n", dir);
		goto refused;
	}
	rc = 0;
refused:
	conf_free(&conf);
	if (rc)
		return rc;
	switch (q->mode) {
	case M_ACTION:
	case M_RUN: return mode_control(q);
	case M_LIVE: return ENABLE_MAILQ_PROTO ? live(q) : EX_USAGE;
	default: return list(q, qctl_scheduler_pid(&q->sp));
	}
}

/* (--help never gets here: main's run() answers it for every applet, and submit's -bp and -q
 * pass no --help) */
int mailq_main(int argc, char **argv)
{
	struct mq q;
	memset(&q, 0, sizeof q);
	return mailq_run(&q, argc, argv);
}
