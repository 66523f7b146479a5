/* scheduler: the queue daemon (ZMailer scheduler(8), seed 000; docs/scheduler.md).
 *
 * Picks up new messages from the spool, groups their recipients into threads (channel/host) and
 * rings (scheduler.conf clauses), runs transport agents (local, smtp, errormail, hold, or any
 * program a clause names) over the #hungry protocol, records every result in the control file
 * before acting on it, retries, expires, hands failures to the error channel, and removes what
 * is done. Runs in the foreground with -i or -v (for procd, runit, s6, systemd), as a daemon
 * otherwise; SPOOL/scheduler.pid is locked so two schedulers never share a spool.
 *
 * usage: see scheduler_usage below.
 * config: SPOOL, SCHEDULER_CONF, QUEUELO, QUEUEHI, LOG (spoolbox.conf); scheduler.conf.
 * exit: 0 after TERM/QUIT (or -1 with nothing left to do), 64 usage, 75 another scheduler holds
 *       the spool (its pid is named), the spool cannot be opened, the pid cannot be written, or
 *       -1 leaves mail stuck, 78 configuration errors, 71 system errors. */
#include "common.h"
#include "fileio.h"
#include "log.h"
#include "sched.h"
#include "smarthost.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char scheduler_usage[] =
    "usage: scheduler [-divFHnQSVW1] [-C FILE] [-f scheduler.conf] [-E newentsmax[,seconds]]\n"
    "                 [-L logfile] [-l statisticslog] [-N transpmaxfno] [-P spool] [-p channel/host]\n"
    "                 [-q rendezvous] [-R maxforkfreq] [-M 1|2] [-Z zenvfile]\n"
    "\n"
    "The queue daemon. Without -i or -v it detaches (a daemon); with them it stays in the\n"
    "foreground for a supervisor.\n"
    "  -i        run in the foreground          -v  foreground and verbose (debug logging)\n"
    "  -d        run as a daemon (after -v: a verbose daemon)\n"
    "  -1        one-shot: exit when nothing is due and no transport agent runs\n"
    "            (-E with no value means the same)\n"
    "  -C FILE   spoolbox.conf                  -f FILE  scheduler.conf (must exist)\n"
    "  -P DIR    the spool (default: SPOOL)     -L FILE  log to FILE instead of stderr\n"
    "  -l FILE   append the statistics log (spoolid dt1 dt2 state channel/host)\n"
    "  -E N[,S]  pick up at most N new messages per scan (S: not implemented)\n"
    "  -N N      file descriptors for transport agents (maxta 0 is this minus 20)\n"
    "  -p PAT    only run threads whose channel/host matches the shell pattern PAT\n"
    "  -F        freeze: scan the queue but start no transport agent\n"
    "  -S        walk the whole queue at start and repair missing due-index entries\n"
    "  -V        print the version and run in the foreground\n"
    "  -n        bounces return headers only when the sender gave no RET (DSN_RET_DEFAULT=hdrs)\n"
    "  -H -Q -W -q -R -M -Z  not implemented: accepted for ZMailer compatibility, logged, ignored\n"
    "signals: TERM/QUIT stop (TAs finish their message first), ALRM look for work,\n"
    "         HUP reopen logs and reload, USR1 reload both files, USR2 dump state\n";

struct opts {
	struct sched_opts so;
	const char *cfile, *spool, *conf_file;
	int daemon, foreground, version;
	char unused[8];               /* options accepted for ZMailer compatibility and ignored */
	int e_secs;                   /* -E N,S was given: S is ignored */
};

/* An accepted option without effect is said, not silently dropped (issue 14 point 8). */
static void note_unused(struct opts *o, char c)
{
	size_t n = strlen(o->unused);
	if (!strchr(o->unused, c) && n + 1 < sizeof o->unused)
		o->unused[n] = c;
}

static int need_arg(int argc, char **argv, int *i, const char *rest, const char **out)
{
	if (*rest) {
		*out = rest;
		return 0;
	}
	if (*i + 1 >= argc)
		return -1;
	*out = argv[++*i];
	return 0;
}

/* The options that only set flags, and which (two ints of struct opts each, the same one twice
 * for one): a table, not a switch over the letters */
#define OFF(f) offsetof(struct opts, f)
static const char flag_opts[] = "divFSV1";
static const unsigned char flag_off[][2] = {
	{OFF(daemon), OFF(daemon)},   {OFF(foreground), OFF(foreground)}, {OFF(foreground), OFF(so.verbose)},
	{OFF(so.freeze), OFF(so.freeze)}, {OFF(so.full_scan), OFF(so.full_scan)}, {OFF(version), OFF(foreground)},
	{OFF(so.oneshot), OFF(so.oneshot)}};
/* The options with a value; the first five only keep it: where */
static const char arg_opts[] = "CfLlPNpqRMZ";
static const unsigned char str_off[] = {OFF(cfile), OFF(conf_file), OFF(so.logfile), OFF(so.statslog), OFF(spool)};
#undef OFF
_Static_assert(sizeof(struct opts) < 256, "flag_off[] and str_off[] keep offsets in a byte");

static int parse_opts(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			fprintf(stderr, "scheduler: unexpected argument '%s'\n", a);
			return -1;
		}
		if (!strcmp(a, "--"))
			return i + 1 < argc ? -1 : 0;
		for (const char *p = a + 1; *p; p++) {
			const char *v = NULL;
			char c = *p;
			const char *k = strchr(flag_opts, c);
			if (k) {
				const unsigned char *f = flag_off[k - flag_opts];
				*(int *)((char *)o + f[0]) = 1;
				*(int *)((char *)o + f[1]) = 1;
				continue;
			}
			if (c == 'n') {
				/* the seed's default_full_content toggle: the error channel reads it from the
				 * environment it inherits (environment overrides spoolbox.conf) */
				setenv("DSN_RET_DEFAULT", "hdrs", 1);
				continue;
			}
			if (strchr("HQW", c)) {
				note_unused(o, c);
				continue;
			}
			if (c == 'E') {
				/* the seed's -E takes newentsmax; with no value it is our one-shot (-1) */
				if (!p[1] && (i + 1 >= argc || argv[i + 1][0] == '-')) {
					o->so.oneshot = 1;
					continue;
				}
				need_arg(argc, argv, &i, p + 1, &v);
				o->so.newents_max = strtol(v, NULL, 10);
				o->e_secs = strchr(v, ',') != NULL;
				if (o->so.newents_max < 1) {
					fprintf(stderr, "scheduler: -E %s: not a count\n", v);
					return -1;
				}
				p += strlen(p) - 1;
				continue;
			}
			k = strchr(arg_opts, c);
			if (!k) {
				fprintf(stderr, "scheduler: unknown option -%c\n", c);
				return -1;
			}
			if (need_arg(argc, argv, &i, p + 1, &v) < 0) {
				fprintf(stderr, "scheduler: -%c needs a value\n", c);
				return -1;
			}
			if (k - arg_opts < (long)sizeof str_off)
				*(const char **)((char *)o + str_off[k - arg_opts]) = v;
			else if (c == 'p') {
				o->so.only = strchr(v, '/') ? v : NULL;
				if (!o->so.only) {
					fprintf(stderr, "scheduler: -p %s: expected channel/host\n", v);
					return -1;
				}
			} else if (c == 'N') {
				o->so.maxfno = strtol(v, NULL, 10);
				if (o->so.maxfno < 1) {
					fprintf(stderr, "scheduler: -N %s: not a count\n", v);
					return -1;
				}
			} else
				note_unused(o, c); /* -q, -R, -M, -Z */
			p += strlen(p) - 1;
		}
	}
	return 0;
}

/* What a reload needs: which keys we put into the environment (a reload takes them out again
 * before it reads the file, or they would override its new values as if the user had set them). */
struct reload_ctx {
	const char *spool;
	unsigned char exported[CK__COUNT];
	char relay[256];              /* sched_opts.relay: the first SMARTHOST's host */
};

/* Where smtp sessions go when there is a smarthost: its first host (a failover host counts in
 * the same class, as the same relay service). An unparsable SMARTHOST is the smtp agent's to
 * report; the classes then go by the recipient's domain. */
static void set_relay(const struct conf *c, struct reload_ctx *r)
{
	struct smarthost *sh = malloc(SMARTHOST_MAX * sizeof *sh);
	char err[200];
	r->relay[0] = 0;
	if (sh && smarthost_parse(conf_str(c, CK_SMARTHOST), sh, SMARTHOST_MAX, err, sizeof err) > 0)
		str_lcpy(r->relay, sh[0].host, sizeof r->relay);
	free(sh);
}

/* Children (transport agents) read spoolbox.conf without -C: what came from an explicit file, and
 * the spool chosen with -P, reach them through the environment, which overrides their file. */
static void export_conf(const struct conf *c, const char *spool, struct reload_ctx *r)
{
	for (int k = 0; k < CK__COUNT; k++)
		if (c->origin[k] == CO_FILE && c->val[k]) {
			setenv(conf_name((enum conf_key)k), c->val[k], 1);
			r->exported[k] = 1;
		}
	setenv("SPOOL", spool, 1);
}

/* HUP/USR1: spoolbox.conf again (the file this scheduler read: $SPOOLBOX_CONF, which -C set, or
 * the default), exported for the agents started from now on; they read the credentials file
 * themselves when they start. A file with errors changes nothing (sched_opts.reload_hook). The
 * scheduler's own keys (SPOOL, QUEUELO, QUEUEHI, SCHEDULER_CONF, LOG) take effect at a restart. */
static int reload_conf(void *vctx)
{
	struct reload_ctx *r = vctx;
	char *saved[CK__COUNT];
	int rc = 0;
	for (int k = 0; k < CK__COUNT; k++) {
		saved[k] = NULL;
		const char *v = r->exported[k] ? getenv(conf_name((enum conf_key)k)) : NULL;
		if (!v)
			continue;
		/* out of the environment once saved (put back below when anything fails) */
		if ((saved[k] = strdup(v)))
			unsetenv(conf_name((enum conf_key)k));
		else {
			log_msg(LOG_ERR, NULL, "spoolbox.conf: out of memory");
			rc = -1;
		}
	}
	struct conf c;
	conf_init(&c);
	if (rc == 0) {
		int errors = conf_load(&c, NULL, sched_log_report, NULL);
		if (errors) {
			log_msg(LOG_ERR, NULL, "spoolbox.conf: %d error%s", errors, errors == 1 ? "" : "s");
			rc = -1;
		}
	}
	for (int k = 0; k < CK__COUNT; k++)
		if (saved[k] && rc < 0)
			setenv(conf_name((enum conf_key)k), saved[k], 1); /* all as before */
	if (rc == 0) {
		/* every key we had exported left the environment above, so one gone from the file has
		 * its compiled-in default again; export_conf marks what the file still sets */
		memset(r->exported, 0, sizeof r->exported);
		export_conf(&c, r->spool, r);
		set_relay(&c, r);
		log_msg(LOG_INFO, NULL, "spoolbox.conf: %s read again", c.path[0] ? c.path : "(none: the defaults)");
	}
	for (int k = 0; k < CK__COUNT; k++)
		free(saved[k]);
	conf_free(&c);
	return rc;
}

#define PID_RESERVE 64 /* bytes kept allocated behind an empty scheduler.pid */

/* Keeps space for the pid allocated while the file is empty (FALLOC_FL_KEEP_SIZE: the size stays
 * 0, which says "stopped cleanly"), so a scheduler that ran before can start again on a full
 * disk, which it must to drain it. Best effort: a filesystem without fallocate does without. */
static void pid_reserve(int fd)
{
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, PID_RESERVE) < 0) {
		/* nothing to do: the next start finds out whether there is room */
	}
}

/* Locks SPOOL/scheduler.pid. Returns the fd, or -1 (said why). *unclean: the file still named a
 * pid, so the last scheduler did not stop cleanly. */
static int lock_pidfile(const char *spool, int *unclean)
{
	char path[SPOOL_PATH_MAX];
	if (str_fmt(path, sizeof path, "%s/scheduler.pid", spool) < 0) {
		fprintf(stderr, "scheduler: spool path too long\n");
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_syserr(NULL, "open", path, NULL);
		return -1;
	}
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (fcntl(fd, F_SETLK, &fl) < 0) {
		long other = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? (long)fl.l_pid : -1;
		log_msg(LOG_ERR, NULL, "another scheduler (pid %ld) is running on %s; not starting", other, spool);
		close(fd);
		return -1;
	}
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	*unclean = n > 0;
	char line[32];
	int len = snprintf(line, sizeof line, "%ld\n", (long)getpid());
	/* over the old contents or the reserved space (a full disk can still take it), then cut;
	 * a scheduler that cannot say its pid does not run (issue 11 point 10): mailq, submit and
	 * an unclean-stop check would not find it */
	pid_reserve(fd);
	ssize_t w = pwrite(fd, line, (size_t)len, 0);
	if (w != len || ftruncate(fd, len) < 0) {
		log_msg(LOG_ERR, NULL, "cannot write my pid to %s: %s; not starting (mail stays queued)", path,
		        w < 0 || w == len ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	return fd;
}

/* -d: the parent waits until the daemon is ready (or has failed) and exits with its status. */
static int daemonize(int *readyfd)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(p[1]);
		char ch;
		ssize_t n;
		do
			n = read(p[0], &ch, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1)
			_exit(0);
		int st;
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
			_exit(WEXITSTATUS(st));
		_exit(EX_OSERR);
	}
	close(p[0]);
	log_forked(); /* the daemon is the child: its own pid in every line */
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	setsid();
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		close(null);
	}
	*readyfd = p[1];
	return 0;
}

/* The errors of scheduler.conf at path, reported (the start's check and --check's; noinline: one
 * copy for the two). */
__attribute__((noinline)) static int conf_errors(const char *path, int missing_ok, conf_report_fn *report, void *ctx)
{
	struct schedconf sc;
	schedconf_init(&sc);
	int errors = schedconf_load(&sc, path, missing_ok, report, ctx);
	schedconf_free(&sc);
	return errors;
}

/* spoolbox --check: scheduler.conf (a missing file means the built-in one, which is valid). */
int scheduler_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	return conf_errors(conf_str(c, CK_SCHEDULER_CONF), 1, report, ctx);
}

int scheduler_main(int argc, char **argv)
{
	struct opts o;
	memset(&o, 0, sizeof o);
	o.so.readyfd = -1;
	if (parse_opts(argc, argv, &o) < 0)
		return applet_usage(scheduler_usage, 1);
	if (o.version)
		printf("spoolbox scheduler (tls=%s)\n", ENABLE_TLS ? "bearssl" : "no");
	struct conf c;
	int rc = applet_load_conf(&c, o.cfile);
	if (rc)
		return rc;
	int fg = o.foreground && !o.daemon;
	/* in the foreground (-i, -v: a supervisor's terminal or log) errors also go to stderr, and
	 * everything does when there is no syslog daemon (containers, initramfs) */
	applet_log_setup(&c, NULL, (o.so.logfile ? LOG_TO_STDERR : 0u) |
	                 (fg ? LOG_ERRORS_TO_STDERR | LOG_STDERR_FALLBACK : 0u), 0);
	if (o.so.verbose)
		log_set_level(LOG_DEBUG);
	for (const char *u = o.unused; *u; u++)
		log_msg(LOG_WARNING, NULL, "-%c: not implemented (accepted for ZMailer compatibility); ignored", *u);
	if (o.e_secs)
		log_msg(LOG_WARNING, NULL, "-E N,S: the seconds part S is not implemented; ignored");
	const char *spool = o.spool ? o.spool : conf_str(&c, CK_SPOOL);
	o.so.conf_path = o.conf_file ? o.conf_file : conf_str(&c, CK_SCHEDULER_CONF);
	o.so.conf_missing_ok = o.conf_file == NULL;
	o.so.queuelo = (long)conf_num(&c, CK_QUEUELO);
	o.so.queuehi = (long)conf_num(&c, CK_QUEUEHI);
	o.so.delay_warn = conf_num(&c, CK_DELAY_WARN);
	o.so.logdir = getenv("LOGDIR");
	if (!o.so.logdir)
		o.so.logdir = "/var/log/spoolbox";
	/* configuration errors go to the terminal, before any detaching */
	struct conf_stderr_ctx ctx = {0, "error"};
	int errors = conf_errors(o.so.conf_path, o.so.conf_missing_ok, conf_report_stderr, &ctx);
	rc = EX_CONFIG;
	if (errors)
		goto out;
	struct reload_ctx rctx;
	memset(&rctx, 0, sizeof rctx);
	rctx.spool = spool;
	export_conf(&c, spool, &rctx);
	set_relay(&c, &rctx);
	o.so.relay = rctx.relay;
	o.so.reload_hook = reload_conf;
	o.so.reload_ctx = &rctx;
	rc = EX_TEMPFAIL;
	if (fio_mkdirs(spool, 0755) < 0)
		goto out;
	if (!fg && daemonize(&o.so.readyfd) < 0) {
		log_syserr(NULL, "cannot become", "a daemon", NULL);
		rc = EX_OSERR;
		goto out;
	}
	/* from the moment the pid is visible a TERM must be a clean stop, not the default death that
	 * leaves the pid in the file (the next start would take it for a crash): held back until
	 * sched_run has its handlers, which lets them through */
	sigset_t early;
	sigemptyset(&early);
	static const unsigned char stops[] = {SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
	for (size_t i = 0; i < ARRAY_LEN(stops); i++)
		sigaddset(&early, stops[i]);
	sigprocmask(SIG_BLOCK, &early, NULL);
	int unclean = 0;
	int pidfd = lock_pidfile(spool, &unclean);
	if (pidfd < 0)
		goto out; /* rc is EX_TEMPFAIL */
	if (unclean) {
		log_msg(LOG_NOTICE, NULL, "the last scheduler did not stop cleanly: checking the whole queue");
		o.so.full_scan = 1;
	}
	struct sched *s = malloc(sizeof *s);
	if (!s) {
		close(pidfd);
		rc = EX_OSERR;
		goto out;
	}
	rc = sched_init(s, &o.so, spool);
	if (!rc)
		rc = sched_run(s);
	sched_free(s);
	free(s);
	if (ftruncate(pidfd, 0) < 0)
		log_syserr(NULL, "truncating", "scheduler.pid", NULL);
	pid_reserve(pidfd);
	close(pidfd);
out:
	conf_free(&c);
	return rc;
}
