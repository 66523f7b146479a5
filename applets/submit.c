/* submit (also sendmail): take a message from a local program and queue it durably.
 *
 * The sendmail command line as real callers use it (cron, mailx, mutt, git send-email, PHP,
 * sudo, mailutils, Symfony/SwiftMailer/Laravel with -bs, pine with -bs -odb -oem). Every rule
 * (headers, rewriting, routing, 8-bit data, NUL and CR, sizes, permissions) is in
 * docs/submit.md; the queue it writes is docs/spool.md. Nothing here resolves a name in DNS.
 *
 * usage: sendmail [options] [recipient ...]
 * exit:  0 queued (durable and visible); 64 usage; 65 bad address or message; 73 message larger
 *        than SIZELIMIT; 75 temporary failure (spool full or unwritable, signal); 78 bad
 *        configuration; with -bp the exit code of mailq. */
#include "addr.h"
#include "common.h"
#include "config_default.h"
#include "route.h"
#include "submit.h"
#include "enqueue.h"
#include "log.h"
#include "qctl.h"
#include "smtpd.h"
#include "spool.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char submit_usage[] =
    "usage: sendmail [options] [recipient ...]\n"
    "\n"
    "Reads a message on standard input and queues it for the recipients given, durably.\n"
    "\n"
    "  -t            also take recipients from To:, Cc:, Bcc: (Resent-* when present);\n"
    "                Bcc: is removed from the stored message\n"
    "  -i, -oi       a line with a single '.' does not end the message\n"
    "  -f ADDR       envelope sender (-f '' or -f '<>': the null sender); -r is the same\n"
    "  -F NAME       full name for the From: line submit adds\n"
    "  -N DSN        NOTIFY: never, or success,failure,delay\n"
    "  -R full|hdrs  DSN RET       -V ENVID  DSN envelope id\n"
    "  -B 7BIT|8BITMIME            body type\n"
    "  -bm           deliver mail (the default)\n"
    "  -bs           SMTP dialogue on standard input and output\n"
    "  -bp           list the queue (runs mailq)\n"
    "  -bv           show how each recipient would be routed; queue nothing\n"
    "  -q, -qR DOM, -qI ID  run the queue now (all, one domain, one message); with no\n"
    "                scheduler running, root runs it once here (users: once a minute)\n"
    "  -C FILE       configuration file (drops a setgid privilege)\n"
    "  -v            verbose\n"
    "Accepted for compatibility: -o options (-oem -oep -oee -oeq -oew -odi -odb -odq -om\n"
    "-oQ -oX -oL ...), -O, -G, -U, -L TAG, -X FILE, -h N, -d X, -e X, -A X, -M X, -p X, -Q X,\n"
    "-c, -I, -m, -n, -s. Other sendmails' options (msmtp -a ACCOUNT, --NAME[=VALUE]; BusyBox\n"
    "-S HOST, -au USER, -ap PASS, -w SECS, -H PROG) and unknown letters are ignored and logged.\n";

struct opts {
	const char *conf;
	int dot_end;
	int t;
	const char *from; /* NULL: not given */
	const char *fullname;
	unsigned notify;
	char ret;
	const char *envid;
	int body8;
	char mode;        /* m s p q v i */
	const char *qr;   /* -qR domain */
	const char *qi;   /* -qI id */
	int verbose;
	const char *tag;
	char **rcpt;
	int nrcpt;
	size_t nignored;
	/* the arrays last: one-byte displacements (docs/size.md) */
	char tagbuf[64];
	char ignored[16][48]; /* options of other sendmails, logged once the log is set up */
};

/* The setgid privilege (docs/spool.md 8): held only around the spool steps. */
static struct {
	int active;
	gid_t real, group;
} priv;

static void priv_set(int raise)
{
	if (priv.active && setresgid((gid_t)-1, raise ? priv.group : priv.real, (gid_t)-1) < 0)
		log_msg(LOG_WARNING, NULL, "setresgid: %s", strerror(errno));
}

/* Returns -1 when the group could not be dropped: the caller must then stop, since what
 * follows (a caller's configuration, another spool) must not see the group. */
static int priv_drop(void)
{
	/* the group was lowered at the start (submit_main), so egid differs from gid only while
	 * priv.active: no getegid()/getgid() to ask again */
	if (priv.active) {
		gid_t g = priv.real;
		if (setresgid(g, g, g) < 0) {
			log_msg(LOG_ERR, NULL, "dropping the submit group: %s", strerror(errno));
			return -1;
		}
	}
	priv.active = 0;
	return 0;
}

/* The message being written, so that a signal can remove its temporary file. */
static struct enq *volatile current;

void submit_set_current(struct enq *e)
{
	current = e;
}

static void on_signal(int sig)
{
	struct enq *e = current;
	if (e) {
		const char *t = enq_tmppath(e);
		/* a setgid submit holds the group only around spool steps; without it tmp/ cannot
		 * be reached and the file would stay behind (setresgid is async-signal-safe) */
		if (*t && priv.active)
			setresgid((gid_t)-1, priv.group, (gid_t)-1);
		if (*t)
			unlink(t);
	}
	static const char msg[] = "submit: interrupted by a signal; message not queued\n";
	ssize_t w = write(2, msg, sizeof msg - 1);
	(void)w;
	_exit(EX_TEMPFAIL);
}

static void catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* Once the commit starts, a signal waits until the end: the outcome is reported truthfully. */
void submit_block_signals(int block)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGHUP);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &s, NULL);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "sendmail: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return applet_usage(submit_usage, 1);
}

/* sendmail's option letters: these take an argument (attached or the next word) ... */
#define WITH_ARG "ABbCdeFfhLMNOopQqRrVX"
/* ... and these do not. */
#define NO_ARG "cGIimnstUv"
/* Other sendmails' letters, ignored with their argument (docs/submit.md 1): msmtp's -a ACCOUNT,
 * BusyBox's -S HOST, -au USER, -ap PASS, -am METHOD, -w SECS, -H 'PROG ARGS'. Any letter in
 * none of these lists is ignored too, without an argument (as sendmail and Postfix accept
 * what they do not use): a caller written for another sendmail still gets its mail queued. */
#define FOREIGN_WITH_ARG "aSwH"
/* msmtp's long options that take the next word when written without '=' (--account NAME);
 * --read-recipients is -t and --from is -f, every other long option is ignored. */
static const char long_with_arg[] =
    "from\0account\0host\0port\0timeout\0protocol\0domain\0user\0passwordeval\0tls-trust-file\0"
    "tls-crl-file\0tls-fingerprint\0tls-key-file\0tls-cert-file\0tls-priorities\0tls-host-override\0"
    "maildomain\0dsn-notify\0dsn-return\0logfile\0logfile-time-format\0aliases\0"
    "proxy-host\0proxy-port\0source-ip\0socket\0file\0"; /* one string, each name NUL-ended, "" ends it;
                                                          * "from" first: long_option() knows it there */

static int option(struct opts *o, char c, const char *arg);

/* Remembers an ignored option for the log (never its argument: -ap carries a password). */
static void ignored(struct opts *o, const char *name, size_t n, int with_arg)
{
	if (o->nignored < ARRAY_LEN(o->ignored))
		snprintf(o->ignored[o->nignored++], sizeof o->ignored[0], "%.*s%s", (int)n, name,
		         with_arg ? " (with its argument)" : "");
}

/* --name, --name=value, --name value. Returns 0 or EX_USAGE; *i moves past a used word. */
static int long_option(struct opts *o, const char *a, int *i, int argc, char **argv)
{
	const char *name = a + 2, *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	const char *val = eq ? eq + 1 : NULL;
	const char *takes = NULL; /* the name in long_with_arg */
	for (const char *k = long_with_arg; *k; k += strlen(k) + 1)
		if (strlen(k) == n && memcmp(k, name, n) == 0)
			takes = k;
	if (takes && !val) {
		if (*i + 1 >= argc)
			return usage_error("option %s needs an argument", a);
		val = argv[++*i];
	}
	if (n == 15 && memcmp(name, "read-recipients", n) == 0 && !val)
		return option(o, 't', "");
	if (takes == long_with_arg) /* --from */
		return option(o, 'f', val);
	ignored(o, a, n + 2, val != NULL);
	return 0;
}

/* The options that only store: -C -F -f -r their argument, -i -t -v a flag (-i clears
 * dot_end, the others set theirs). A table, and fewer cases for the switch below (its jump
 * table over 'B'..'v' was 336 bytes). */
static const char store_letters[] = "CFfritv";
static const unsigned char store_off[] = {
    offsetof(struct opts, conf), offsetof(struct opts, fullname), offsetof(struct opts, from),
    offsetof(struct opts, from), offsetof(struct opts, dot_end),  offsetof(struct opts, t),
    offsetof(struct opts, verbose)};

static int option(struct opts *o, char c, const char *arg)
{
	const char *k = strchr(store_letters, c);
	if (k && c) {
		size_t i = (size_t)(k - store_letters);
		if (i < 4)
			*(const char **)((char *)o + store_off[i]) = arg;
		else
			*(int *)((char *)o + store_off[i]) = c != 'i';
		return 0;
	}
	switch (c) {
	case 'b':
		if (!arg[0] || arg[1] || !strchr("mspvi", arg[0])) {
			if (arg[0] == 'd' || arg[0] == 'D')
				return usage_error("-b%s: submit runs no daemon; start the scheduler applet instead", arg);
			return usage_error("-b%s is not supported", arg);
		}
		if (arg[0] == 's' && !ENABLE_SMTPD)
			return usage_error("-b%s: this spoolbox is built without the SMTP dialogue (ENABLE_SMTPD)", arg);
		o->mode = arg[0];
		return 0;
	case 'B':
		if (str_caseeq(arg, "8BITMIME"))
			o->body8 = 1;
		else if (str_caseeq(arg, "7BIT"))
			o->body8 = 0;
		else
			return usage_error("-B %s: the body type is 7BIT or 8BITMIME", arg);
		return 0;
	case 'N':
		if (dsn_notify_parse(arg, strlen(arg), &o->notify) < 0)
			return usage_error("-N %s: give never, or a list of success, failure, delay", arg);
		return 0;
	case 'R':
		if (!(o->ret = dsn_ret_parse(arg, strlen(arg))))
			return usage_error("-R %s: give full or hdrs", arg);
		return 0;
	case 'V':
		if (!*arg || strlen(arg) > SMTPD_ENVID_MAX)
			return usage_error("-V %s: the envelope id is 1 to 100 characters", arg);
		for (const char *p = arg; *p; p++)
			if (*p < '!' || *p > '~')
				return usage_error("-V %s: the envelope id must be printable ASCII without spaces", arg);
		o->envid = arg;
		return 0;
	case 'o':
		/* -oi is the one that changes anything: the error (-oe*) and delivery (-od*) modes
		 * are how sendmail reports and schedules, and submit always reports by exit code and
		 * always queues and wakes the scheduler */
		if (arg[0] == 'i' && (arg[1] == 0 || str_caseeq(arg + 1 + (arg[1] == '='), "true"))) /* -oi, -oi=true, -oitrue */
			o->dot_end = 0;
		return 0;
	case 'q':
		o->mode = 'q';
		if (arg[0] == 'R')
			o->qr = arg + 1;
		else if (arg[0] == 'I')
			o->qi = arg + 1;
		return 0;
	case 'L':
	{
		/* the syslog ident: printable ASCII only, or a caller could forge log lines */
		size_t i = 0;
		for (; arg[i] && i < sizeof o->tagbuf - 1; i++)
			o->tagbuf[i] = arg[i] <= ' ' || arg[i] >= 0x7f ? '_' : arg[i];
		o->tagbuf[i] = 0;
		o->tag = o->tagbuf;
		return 0;
	}
	default:
		/* accepted for compatibility, no effect (docs/submit.md); another sendmail's own
		 * options are logged, sendmail's documented no-ops are not */
		if (strchr(FOREIGN_WITH_ARG, c) || !strchr(WITH_ARG NO_ARG, c)) {
			char name[3] = {'-', c, 0};
			ignored(o, name, 2, strchr(FOREIGN_WITH_ARG, c) != NULL);
		}
		return 0;
	}
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof *o);
	o->dot_end = 1;
	o->mode = 'm';
	o->rcpt = xcalloc((size_t)argc + 1, sizeof *o->rcpt);
	int only_rcpts = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_rcpts || a[0] != '-' || a[1] == 0) {
			o->rcpt[o->nrcpt++] = a;
			continue;
		}
		if (a[1] == '-' && !a[2]) { /* "--" */
			only_rcpts = 1;
			continue;
		}
		if (a[1] == '-') {
			int r = long_option(o, a, &i, argc, argv);
			if (r)
				return r;
			continue;
		}
		for (char *p = a + 1; *p; p++) {
			char c = *p;
			if (strchr(NO_ARG, c) || !strchr(WITH_ARG FOREIGN_WITH_ARG, c)) {
				int r = option(o, c, "");
				if (r)
					return r;
				continue;
			}
			const char *arg = p + 1;
			/* the option's name for the texts: "-c", or "-au", "-qR" with its second letter */
			char name[4] = {'-', c, arg[0], 0};
			if (c == 'a' && arg[0] && !arg[1] && strchr("upm", arg[0]) && i + 1 < argc) {
				/* BusyBox's -au USER, -ap PASS, -am METHOD: two words */
				ignored(o, name, 3, 1);
				i++;
				break;
			}
			if (c == 'q') {
				/* -q takes only an attached argument, except -qR DOMAIN and -qI ID */
				if ((arg[0] == 'R' || arg[0] == 'I') && !arg[1]) {
					if (i + 1 >= argc)
						return usage_error("option %s needs an argument", name);
					char *d = argv[++i];
					o->mode = 'q';
					*(arg[0] == 'R' ? &o->qr : &o->qi) = d;
					break;
				}
			} else if (!*arg) {
				if (i + 1 >= argc)
					return usage_error("option %s needs an argument", name); /* arg is "": "-c" */
				arg = argv[++i];
			}
			int r = option(o, c, arg);
			if (r)
				return r;
			break;
		}
	}
	return 0;
}




/* A key whose value cannot be used is dropped (its default applies), with a warning: mail is
 * queued all the same (docs/configuration.md, "Errors"). */
static void check_conf_addr(struct conf *c, enum conf_key k)
{
	const char *v = conf_str(c, k);
	struct addr a;
	char err[160];
	if (!*v)
		return;
	if (addr_parse_one(v, strlen(v), &a, err, sizeof err) < 0 || !a.domain[0]) {
		log_msg(LOG_WARNING, NULL, "%s=%s: not an address with a domain%s%s; ignored until it is fixed (spoolbox --check)",
		        conf_name(k), v, err[0] ? ": " : "", err);
		conf_unset(c, k);
	}
}

/* The findings of loading spoolbox.conf, kept until the log is set up. */
struct conf_findings {
	int count, fatal;
	char text[8][300];
};

static void keep_finding(void *ctx, const char *file, int line, const char *reason)
{
	struct conf_findings *f = ctx;
	/* without a readable file or a usable SPOOL there is no telling where mail should go */
	if (str_starts(reason, "cannot read") || str_starts(reason, "SPOOL:") || str_starts(reason, CONF_PATH_ENV))
		f->fatal = 1;
	if (f->count < (int)ARRAY_LEN(f->text))
		snprintf(f->text[f->count], sizeof f->text[0], line > 0 ? "%s:%d: %s" : "%s:%.0d %s", file, line, reason);
	f->count++;
}

/* Reads spoolbox.conf as sendmail must: a mistake submit can work around (an unknown or
 * misspelled key, a malformed line, a bad value) is logged and skipped, as Postfix warns about
 * an unknown parameter, and the mail is queued; only an unreadable file or an unusable SPOOL
 * refuses it (78). spoolbox --check and every other applet still treat them as errors. */
static int load_conf(struct submit_ctx *x, const struct opts *o, struct conf_findings *f)
{
	memset(f, 0, sizeof *f);
	conf_init(&x->conf);
	if (conf_load(&x->conf, o->conf, keep_finding, f) == 0)
		return 0;
	if (!f->fatal)
		return 0;
	for (int i = 0; i < f->count && i < (int)ARRAY_LEN(f->text); i++)
		fprintf(stderr, "%s\n", f->text[i]);
	fprintf(stderr, "sendmail: message not queued: the configuration cannot be used\n");
	conf_free(&x->conf);
	return EX_CONFIG;
}

static int setup(struct submit_ctx *x, const struct opts *o)
{
	if (o->conf || applet_env_overrides())
		if (priv_drop() < 0) /* a privileged submit never reads another configuration or spool */
			return EX_OSERR;
	struct conf_findings f;
	int r = load_conf(x, o, &f);
	if (r)
		return r;
	applet_log_setup(&x->conf, x->ident, 0, o->verbose);
	for (int i = 0; i < f.count && i < (int)ARRAY_LEN(f.text); i++)
		log_msg(LOG_WARNING, NULL, "configuration error ignored, mail is queued all the same: %s (spoolbox --check)",
		        f.text[i]);
	for (size_t i = 0; i < o->nignored; i++)
		log_msg(LOG_NOTICE, NULL, "ignored option %s: spoolbox does not use it", o->ignored[i]);
	if (priv.active) {
		const char *sg = conf_str(&x->conf, CK_SUBMIT_GROUP);
		if (spool_submit_gid(sg) != (long)priv.group) { /* -1: no such group */
			log_msg(LOG_WARNING, NULL, "running setgid to gid %ld, which is not SUBMIT_GROUP=%s: privilege dropped",
			        (long)priv.group, sg);
			if (priv_drop() < 0)
				return EX_OSERR;
		}
	}
	check_conf_addr(&x->conf, CK_ALLMAILFROM);
	check_conf_addr(&x->conf, CK_REWRITE_FROM);

	char why[128];
	const char *mh = conf_str(&x->conf, CK_MYHOSTNAME);
	if (route_myhostname(mh, x->hostname, sizeof x->hostname, why, sizeof why) < 0) {
		log_msg(LOG_WARNING, NULL, "MYHOSTNAME=%s is not a domain name: %s; the system's name is used (spoolbox --check)",
		        mh, why);
		if (route_myhostname("", x->hostname, sizeof x->hostname, why, sizeof why) < 0) {
			log_msg(LOG_ERR, NULL, "no usable host name: %s", why);
			return EX_CONFIG;
		}
	}
	struct enq_conf *ec = &x->ec;
	memset(ec, 0, sizeof *ec);
	ec->sp = &x->sp;
	ec->hostname = x->hostname;
	const char *q = conf_str(&x->conf, CK_QUALIFYDOMAIN);
	ec->qualify = *q ? q : x->hostname;
	ec->allmailfrom = conf_str(&x->conf, CK_ALLMAILFROM);
	ec->rewrite_from = conf_str(&x->conf, CK_REWRITE_FROM);
	ec->sizelimit = conf_num(&x->conf, CK_SIZELIMIT);
	/* the free-space reserve (docs/spool.md 5): users stop at QUEUE_MINFREE, root at half of
	 * it, so cron's and the monitors' mail still gets in after a user has filled her share */
	ec->uid = (long)getauxval(AT_UID); /* the real uid is never changed: as at exec */
	ec->minfree = conf_num(&x->conf, CK_QUEUE_MINFREE) / (ec->uid == 0 ? 2 : 1);
	long long mr = conf_num(&x->conf, CK_MAXRCPT_SUBMIT);
	ec->maxrcpt = mr <= 0 || mr > SPOOL_RCPT_MAX ? SPOOL_RCPT_MAX : (unsigned)mr;
	if (route_conf_init(&ec->rc, conf_str(&x->conf, CK_LOCALDOMAINS), x->hostname) < 0) {
		log_msg(LOG_ERR, NULL, "LOCALDOMAINS: list too long");
		return EX_CONFIG;
	}
	struct passwd *pw = getpwuid((uid_t)ec->uid);
	if (pw && pw->pw_name[0] && !addr_local_needs_quotes(pw->pw_name))
		str_lcpy(ec->user, pw->pw_name, sizeof ec->user);
	else
		snprintf(ec->user, sizeof ec->user, "uid%ld", ec->uid);
	if (o->fullname)
		str_lcpy(ec->fullname, o->fullname, sizeof ec->fullname);
	else if (pw && pw->pw_gecos)
		snprintf(ec->fullname, sizeof ec->fullname, "%.*s", (int)strcspn(pw->pw_gecos, ","), pw->pw_gecos);
	ec->priv = priv_set;
	return 0;
}

int submit_open_spool(struct submit_ctx *x)
{
	const char *dir = conf_str(&x->conf, CK_SPOOL);
	char in[SPOOL_PATH_MAX];
	struct stat st;
	int r;
	priv_set(1);
	int root = x->ec.uid == 0, looked = 0;
	if (root && str_fmt(in, sizeof in, "%s/incoming", dir) == 0 && !(looked = stat(in, &st) == 0) && errno == ENOENT) {
		/* first use on a fresh system, before the scheduler ever ran */
		r = spool_open(&x->sp, dir, 1, spool_submit_gid(conf_str(&x->conf, CK_SUBMIT_GROUP)));
	} else {
		/* incoming/ seen a moment ago: spool_open need not look again */
		r = spool_open(&x->sp, dir, looked && S_ISDIR(st.st_mode) ? -1 : 0, -1);
	}
	priv_set(0);
	if (r < 0) {
		log_msg(LOG_ERR, NULL, "message not queued: spool %s cannot be used", dir);
		return EX_TEMPFAIL;
	}
	return 0;
}

void submit_log(const struct enq *e, int r)
{
	if (r) {
		log_msg(LOG_ERR, NULL, "%s", e->why[0] ? e->why : "message not queued");
		return;
	}
	char text[700];
	snprintf(text, sizeof text, "queued: from=<%s> nrcpt=%zu size=%lld uid=%ld", e->m.sender, e->m.nrcpt, e->size,
	         e->c->uid);
	log_msg(LOG_INFO, e->m.id, "%s", text);
}

static void start_message(struct enq *e, const struct opts *o)
{
	e->body8_declared = o->body8;
	if (!ENABLE_DSN) /* -N, -R and -V are accepted and ignored, as unknown -o options */
		return;
	e->notify = o->notify;
	e->m.ret = o->ret;
	if (o->envid)
		e->m.envid = xstrdup(o->envid);
}

/* -bm: the message on stdin. */
static int mode_mail(struct submit_ctx *x, const struct opts *o)
{
	struct enq e;
	enq_init(&e, &x->ec, o->dot_end, o->t);
	start_message(&e, o);
	int r = enq_sender(&e, o->from);
	for (int i = 0; i < o->nrcpt && !r; i++)
		r = enq_add_rcpts(&e, o->rcpt[i], "recipient");
	if (!r && (r = submit_open_spool(x)))
		e.err = r;
	current = &e;
	char buf[65536];
	while (!r && !enq_input_done(&e)) {
		ssize_t n = read(0, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(e.why, sizeof e.why, "reading the message from standard input: %s", strerror(errno));
			r = e.err = EX_IOERR;
			break;
		}
		if (n == 0)
			break;
		r = enq_feed(&e, buf, (size_t)n);
	}
	if (!r) {
		submit_block_signals(1);
		r = enq_finish(&e);
	}
	submit_log(&e, r);
	current = NULL;
	enq_free(&e);
	return r;
}

/* Another applet of this binary (args[0], n words so far; args has room for "-C FILE" and the
 * NULL this puts after them), without the submit group. */
static int run_self(const struct opts *o, char **args, int n)
{
	if (priv_drop() < 0)
		return EX_OSERR;
	if (o->conf) {
		args[n++] = "-C";
		args[n++] = (char *)o->conf;
	}
	args[n] = NULL;
	fflush(NULL);
	execv("/proc/self/exe", args);
	/* no /proc: run it in this process */
	const struct applet *a = applet_find(args[0]);
	return a ? a->main(n, args) : EX_UNAVAILABLE;
}

/* -q / -qR DOMAIN / -qI ID without a scheduler: root runs the queue once in the foreground
 * (mailq -q, which ends in scheduler -1), as dma -q does without a daemon. */
static int run_queue_here(const struct opts *o)
{
	char *args[6]; /* run_self() ends it with its NULL */
	int n = 2;
	args[0] = "mailq";
	args[1] = "-q";
	if (o->qr || o->qi) {
		args[1] = o->qr ? "-qR" : "-qI";
		args[n++] = (char *)(o->qr ? o->qr : o->qi);
	}
	return run_self(o, args, n);
}

/* -q / -qR DOMAIN / -qI ID: a trigger line for the scheduler (docs/spool.md 10). */
static int mode_queue_run(struct submit_ctx *x, const struct opts *o)
{
	char line[300];
	if (o->qr) {
		char why[128];
		if (addr_domain_check(o->qr, strlen(o->qr), why, sizeof why) < 0) {
			log_msg(LOG_ERR, NULL, "-qR %s: %s", o->qr, why);
			return EX_USAGE;
		}
		snprintf(line, sizeof line, "R%s", o->qr);
	} else if (o->qi) {
		if (!spool_id_valid(o->qi)) {
			log_msg(LOG_ERR, NULL, "-qI %s: not a message id", o->qi);
			return EX_USAGE;
		}
		snprintf(line, sizeof line, "I%s", o->qi);
	} else {
		str_lcpy(line, "Q", sizeof line);
	}
	int r = submit_open_spool(x);
	if (r)
		return r;
	long wait = 0;
	priv_set(1);
	int allowed = getuid() == 0 ? 1 : qctl_qrun_allowed(&x->sp, (long long)time(NULL), &wait);
	r = allowed > 0 ? spool_trigger_send(&x->sp, line) : -1;
	int e = errno;
	priv_set(0);
	if (allowed <= 0) {
		if (allowed == 0)
			log_msg(LOG_ERR, NULL, "runs of the queue by users are limited to one a minute: try again in %lds", wait);
		else
			log_msg(LOG_ERR, NULL, "cannot use %s/tmp/.qrun to count runs of the queue: %s", x->sp.dir, strerror(e));
		return EX_TEMPFAIL;
	}
	if (r < 0) {
		if (e == ENXIO && getuid() == 0)
			return run_queue_here(o);
		if (e == ENXIO)
			log_msg(LOG_ERR, NULL, "no scheduler is running; the queue is run when it starts");
		else
			log_msg(LOG_ERR, NULL, "cannot wake the scheduler through %s/trigger: %s", x->sp.dir, strerror(e));
		return EX_TEMPFAIL;
	}
	log_msg(LOG_DEBUG, NULL, "asked the scheduler to run %s%s by uid %ld", o->qr ? "the queue for " : o->qi ? "message " :
	        "the whole queue", o->qr ? o->qr : o->qi ? o->qi : "", (long)getuid());
	return 0;
}

/* -bv: how each recipient would be routed. */
static int verify_each(void *ctx, const struct addr *a)
{
	struct submit_ctx *x = ctx;
	struct route r;
	char shown[ADDR_TEXT_MAX + 1];
	addr_format(a, NULL, shown, sizeof shown);
	if (enq_route(&x->ec, a, &r) < 0) {
		printf("%s: address too long\n", shown);
		return 1;
	}
	printf("%s: channel %s host %s user %s\n", shown, r.channel, r.host, r.user);
	return 0;
}

static int mode_verify(struct submit_ctx *x, const struct opts *o)
{
	int bad = 0;
	for (int i = 0; i < o->nrcpt; i++) {
		char err[160];
		int n = addr_parse_list(o->rcpt[i], strlen(o->rcpt[i]), verify_each, x, err, sizeof err);
		if (n <= 0) {
			printf("%s: %s\n", o->rcpt[i], n < 0 ? err : "no address in it");
			bad = 1;
		}
	}
	return bad ? EX_DATAERR : 0;
}

/* -bp, -bi: another applet of this binary, without the submit group. */
static int run_other(const char *applet, const struct opts *o)
{
	char *args[4];
	args[0] = (char *)applet;
	return run_self(o, args, 1);
}

/* spoolbox --check: the values of submit's keys make sense (the file's syntax and types are
 * checked before this runs). */
static int check_report(const struct conf *c, enum conf_key k, conf_report_fn *report, void *ctx, const char *why)
{
	return conf_report_key(c, k, report, ctx, "%s: %s", conf_name(k), why);
}

int submit_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	int errors = 0;
	char why[160];
	static const enum conf_key addrs[] = {CK_ALLMAILFROM, CK_REWRITE_FROM};
	for (size_t i = 0; i < ARRAY_LEN(addrs); i++) {
		const char *v = conf_str(c, addrs[i]);
		struct addr a;
		if (*v && (addr_parse_one(v, strlen(v), &a, why, sizeof why) < 0 || !a.domain[0]))
			errors += check_report(c, addrs[i], report, ctx, "not an address with a domain");
	}
	static const enum conf_key domains[] = {CK_MYHOSTNAME, CK_QUALIFYDOMAIN};
	for (size_t i = 0; i < ARRAY_LEN(domains); i++) {
		const char *v = conf_str(c, domains[i]);
		if (*v && addr_domain_check(v, strlen(v), why, sizeof why) < 0)
			errors += check_report(c, domains[i], report, ctx, why);
	}
	const char *p = conf_str(c, CK_LOCALDOMAINS);
	while (*p) {
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, ", \t");
		if (n && addr_domain_check(p, n, why, sizeof why) < 0)
			errors += check_report(c, CK_LOCALDOMAINS, report, ctx, why);
		p += n;
	}
	if (strlen(conf_str(c, CK_LOCALDOMAINS)) >= ROUTE_LOCALDOMAINS_MAX)
		errors += check_report(c, CK_LOCALDOMAINS, report, ctx, "list too long");
	return errors;
}

int submit_main(int argc, char **argv)
{
	/* the ids the kernel gave the process at exec (its aux vector): no system call, and the
	 * same as getgid()/getegid()/getuid() until something changes them (setup() below) */
	priv.real = (gid_t)getauxval(AT_GID);
	priv.group = (gid_t)getauxval(AT_EGID);
	priv.active = priv.real != priv.group;
	/* the group is lowered before anything is parsed; if that fails, nothing runs with it */
	if (priv.active && setresgid((gid_t)-1, priv.real, (gid_t)-1) < 0) {
		fprintf(stderr, "sendmail: cannot lower the setgid group: %s\n", strerror(errno));
		return EX_OSERR;
	}
	struct opts o;
	int r = parse_args(argc, argv, &o);
	if (r)
		goto out;
	if (o.mode == 'i' && !ENABLE_LOCAL) {
		/* init scripts run newaliases after installing an MTA: nothing to do is not an error */
		fprintf(stderr, "sendmail: -bi: this spoolbox has no local delivery, hence no aliases\n");
		goto out;
	}
	if (o.mode == 'p' || o.mode == 'i') {
		r = run_other(o.mode == 'p' ? "mailq" : "newaliases", &o);
		goto out;
	}
	if ((o.mode == 'm' || o.mode == 'v') && !o.t && o.nrcpt == 0) {
		r = usage_error("no recipients given (name them, or use -t)%s", "");
		goto out;
	}
	struct submit_ctx x;
	memset(&x, 0, sizeof x);
	x.ident = o.tag ? o.tag : "submit";
	log_init(x.ident, LOG_TO_STDERR, LOG_INFO);
	catch_signals();
	r = setup(&x, &o);
	if (!r) {
		switch (o.mode) {
		case 's': r = ENABLE_SMTPD ? submit_smtp(&x) : EX_USAGE; break;
		case 'q': r = mode_queue_run(&x, &o); break;
		case 'v': r = mode_verify(&x, &o); break;
		default: r = mode_mail(&x, &o); break;
		}
	}
	conf_free(&x.conf);
out:
	free(o.rcpt);
	return r;
}
