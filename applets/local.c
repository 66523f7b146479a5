/* local: the local transport agent. Speaks the scheduler's transport-agent protocol
 * (docs/spool.md 11) on stdin/stdout, expands each recipient through ROOT, the aliases file,
 * ~/.forward and :include: files, and delivers into mbox or Maildir with the recipient's
 * privileges, to |commands and /files with the privileges of whoever wrote them, and hands
 * remote targets back to submit. docs/local.md holds the decisions (mboxrd, locking, alias
 * semantics, privileges); lib/aliases.h, lib/deliver.h, lib/mbox.h, lib/maildir.h the parts.
 *
 * usage: local [-C FILE] [-v] [-m ID | -x NAME]
 * config: ALIASES ROOT MAILBOX_STYLE MAILDIR MBOX_DIR FORWARD DEFAULT_USER COMMAND_TIMEOUT
 *         LOCK_TIMEOUT DELIVERY_TIMEOUT MYHOSTNAME LOCALDOMAINS SPOOL LOG
 * exit:  0 at the scheduler's EOF (or -m done); 64 usage; 66 -m: no such message;
 *        75 the spool cannot be opened; 78 configuration error;
 *        -x: 0 every target is deliverable, 67 a permanent failure, 75 a temporary one. */
#include "config_default.h"
#if ENABLE_LOCAL /* the whole file: local delivery is a build option */
#include "aliases.h"
#include "common.h"
#include "deliver.h"
#include "fileio.h"
#include "header.h"
#include "log.h"
#include "maildir.h"
#include "mbox.h"
#include "mbox_journal.h"
#include "spool.h"
#include "sysexits.h"
#include "ta.h"
#include "route.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char local_usage[] =
    "usage: local [-C FILE] [-v] [-m ID | -x NAME]\n"
    "The local transport agent: started by the scheduler, it reads jobs on stdin and\n"
    "delivers into mbox or Maildir, through /etc/aliases and ~/.forward.\n"
    "  -C FILE  configuration file (default /etc/spoolbox/spoolbox.conf)\n"
    "  -m ID    deliver the local recipients of queued message ID now and print the\n"
    "           report lines (debugging; the control file is not changed)\n"
    "  -x NAME  print what NAME expands to (aliases, .forward), deliver nothing\n"
    "  -v       log on stderr, with debugging detail\n";

#define LOCAL_REPAIR_LOCK_WAIT 5 /* seconds the repair after a killed delivery waits for the locks */
#define TARGET_PATH_MAX 4200 /* a mailbox, Maildir or /file path, and the texts made of one */
#define DT_MAX 64 /* Delivered-To: headers kept for the loop check; more is a loop in itself */

struct local {
	/* the scalars first: short offsets */
	const char *conf_path;
	int maildir;              /* MAILBOX_STYLE=maildir */
	long lock_timeout, cmd_timeout;
	long run_timeout;          /* a mailbox/file/Maildir process is killed after this */
	int journal_dir;           /* SPOOL/mbox/: 0 not looked at yet, 1 usable, -1 not */
	size_t ndt;
	int dt_overflow;
	long hops, hop_limit;     /* Received: fields of the message; HOPCOUNT_LIMIT */
	char *copy_buf;           /* the delivery copy's buffers (dl_msg.buf), or NULL */
	struct expand_cfg xc;
	struct conf conf;
	struct spool sp;
	char host[256];
	char self[1024];          /* this binary, for re-entering the queue through submit */
	/* the aliases file, re-read when it changes */
	struct aliases al;
	struct stat al_st;
	struct dl_user al_user;
	/* the Delivered-To: values of the message being delivered (ndt above) */
	char *dt[DT_MAX];
};

/* ---- configuration ---- */

/* The report to the scheduler and the Postfix-shaped log line for it (docs/logging.md). A
 * forward (an alias to a remote address re-queued through submit) is Postfix's "forwarded as":
 * summarisers count it once, when the new message is delivered. */
static void report(const struct ta_job *job, size_t idx, const char *status, const char *action,
                   const char *enh, const char *diag, const char *remote)
{
	ta_report(job, idx, status, action, enh, diag, remote);
	char text[SPOOL_TEXT_MAX + 32];
	if (*action == 'r') /* "relayed": the only action of this file starting with 'r' */
		str_fmt(text, sizeof text, "forwarded as %s", diag);
	else
		str_lcpy(text, diag, sizeof text);
	ta_log_delivery(job, idx, status, "local", NULL, enh, text);
}

static int user_by_uid(uid_t uid, struct dl_user *u)
{
	struct passwd *pw = getpwuid(uid);
	return pw && dl_user_set(u, pw) >= 0 ? 0 : -1;
}

/* Re-reads the aliases file when it changed, and decides whose privileges its |command and
 * /file targets get: its owner's, or DEFAULT_USER when root owns it. */
static void aliases_refresh(struct local *L)
{
	const char *path = L->xc.aliases_path; /* ALIASES, set by local_setup */
	struct stat st;
	memset(&st, 0, sizeof st);
	if (stat(path, &st) < 0 && errno != ENOENT)
		log_msg(LOG_WARNING, NULL, "stat %s: %s", path, strerror(errno));
	if (L->xc.aliases && st.st_ino == L->al_st.st_ino && st.st_dev == L->al_st.st_dev &&
	    st.st_size == L->al_st.st_size && st.st_mtime == L->al_st.st_mtime && st.st_ctime == L->al_st.st_ctime)
		return;
	if (L->xc.aliases) /* set once the file was read (loaded) */
		aliases_free(&L->al);
	aliases_load(&L->al, path, NULL, NULL);
	if (L->al.errors)
		log_msg(LOG_ERR, NULL, "aliases file has errors, local delivery deferred: %s", L->al.first_error);
	L->al_st = st;
	L->xc.aliases = &L->al;
	L->xc.aliases_unsafe = st.st_ino && (st.st_mode & 022);
	L->xc.alias_user = NULL;
	const char *du = conf_str(&L->conf, CK_DEFAULT_USER);
	int ok;
	if (st.st_ino && st.st_uid != 0)
		ok = user_by_uid(st.st_uid, &L->al_user) == 0;
	else
		ok = dl_getpw_system(NULL, du, &L->al_user) == 0;
	if (ok)
		L->xc.alias_user = &L->al_user;
	else
		log_msg(LOG_WARNING, NULL, "no user for |command and /file aliases (DEFAULT_USER=%s)", du);
}

static int local_setup(struct local *L)
{
	char why[128];
	const char *myhost = conf_str(&L->conf, CK_MYHOSTNAME);
	if (route_myhostname(myhost, L->host, sizeof L->host, why, sizeof why) < 0) {
		log_msg(LOG_ERR, NULL, "MYHOSTNAME=%s is not a domain name: %s", myhost, why);
		return EX_CONFIG;
	}
	const char *style = conf_str(&L->conf, CK_MAILBOX_STYLE);
	if (strcmp(style, "maildir") == 0)
		L->maildir = 1;
	else if (strcmp(style, "mbox") != 0) {
		fprintf(stderr, "local: MAILBOX_STYLE must be maildir or mbox, not '%s'\n", style);
		return EX_CONFIG;
	}
	L->lock_timeout = (long)conf_num(&L->conf, CK_LOCK_TIMEOUT);
	L->cmd_timeout = (long)conf_num(&L->conf, CK_COMMAND_TIMEOUT);
	/* the delivery child waits for the locks, then writes: both bounded, by the parent */
	L->run_timeout = L->lock_timeout + (long)conf_num(&L->conf, CK_DELIVERY_TIMEOUT);
	if (L->run_timeout <= 0)
		L->run_timeout = 1;
	L->hop_limit = (long)conf_num(&L->conf, CK_HOPCOUNT_LIMIT);
	if (applet_exe(L->self, sizeof L->self) <= 0)
		str_lcpy(L->self, "/usr/sbin/sendmail", sizeof L->self);
	L->xc.aliases_path = conf_str(&L->conf, CK_ALIASES);
	L->xc.root = conf_str(&L->conf, CK_ROOT);
	L->xc.forward = conf_num(&L->conf, CK_FORWARD) != 0;
	L->xc.myhostname = L->host;
	L->xc.localdomains = conf_str(&L->conf, CK_LOCALDOMAINS);
	aliases_refresh(L);
	return 0;
}

/* ---- the message's Delivered-To: headers ---- */

static void dt_clear(struct local *L)
{
	for (size_t i = 0; i < L->ndt; i++)
		free(L->dt[i]);
	L->ndt = 0;
	L->dt_overflow = 0;
}

static void dt_line(struct local *L, char *line, size_t n)
{
	if (n < 13 || !str_ncaseeq(line, "delivered-to:", 13))
		return;
	char *v = line + 13;
	while (*v == ' ' || *v == '\t')
		v++;
	size_t k = strlen(v);
	while (k && (v[k - 1] == ' ' || v[k - 1] == '\t' || v[k - 1] == '\r'))
		v[--k] = 0;
	if (L->ndt >= DT_MAX) {
		L->dt_overflow = 1;
		return;
	}
	L->dt[L->ndt] = strdup(v);
	if (L->dt[L->ndt])
		L->ndt++;
}

/* One header line: counts the hops, keeps the Delivered-To: values. */
static void dt_cb(void *ctx, char *line, size_t len, int cut)
{
	struct local *L = ctx;
	L->hops += hdr_is_received(line, len);
	if (!cut)
		dt_line(L, line, len);
}

/* Reads the header section (up to the first empty line): the Delivered-To: values and the hop
 * count. */
static void dt_scan(struct local *L, int fd, off_t off, long long size)
{
	L->hops = 0;
	hdr_scan_file(fd, off, size, dt_cb, L);
}

static int dt_seen(const struct local *L, const char *rcpt)
{
	for (size_t i = 0; i < L->ndt; i++)
		if (str_caseeq(L->dt[i], rcpt))
			return 1;
	return 0;
}

/* ---- one delivery target ---- */

struct child_arg {
	const char *path;
	const char *host;
	const struct dl_msg *m;
	struct mbox_opts o;
};

static void child_mbox(void *arg, struct dl_result *r)
{
	struct child_arg *a = arg;
	mbox_deliver(a->path, a->m, &a->o, r);
}

/* An mbox delivery: the recipient's process appends, with the mailbox's append journal open,
 * and when that process dies in the middle (killed, timed out), a second one undoes the
 * unfinished append at once, so readers do not see half a message until the next delivery. */
static void run_mbox(struct local *L, const struct dl_user *u, long g, struct child_arg *a, struct dl_result *r)
{
	/* the journal directory is made once; without it (an agent that is not root) that is
	 * said once, and mailboxes go on without journals */
	if (!L->journal_dir)
		L->journal_dir = mbox_journal_dir(L->sp.dir) == 0 ? 1 : -1;
	a->o.journal = L->journal_dir > 0 ? mbox_journal_open(L->sp.dir, a->path) : -1;
	dl_run_as(u, g, L->run_timeout, child_mbox, a, r);
	if (r->died && a->o.journal >= 0) {
		struct child_arg fix = *a;
		struct dl_result fr;
		fix.m = NULL;
		fix.o.create = 0;
		/* briefly: when she holds the lock (the reason of a time-out), the next delivery
		 * repairs it, and her stalling must not cost everyone a second full time limit */
		if (fix.o.lock_timeout > LOCAL_REPAIR_LOCK_WAIT)
			fix.o.lock_timeout = LOCAL_REPAIR_LOCK_WAIT;
		dl_run_as(u, g, fix.o.lock_timeout + LOCAL_REPAIR_LOCK_WAIT, child_mbox, &fix, &fr);
		if (fr.status != DL_OK)
			log_msg(LOG_WARNING, NULL, "%s: checking for an unfinished append: %s", a->path, fr.text);
	}
	if (a->o.journal >= 0)
		close(a->o.journal);
	a->o.journal = -1;
}

static void child_maildir(void *arg, struct dl_result *r)
{
	struct child_arg *a = arg;
	if (!ENABLE_MAILDIR) {
		dl_set(r, "d4.3.5", "Maildir %.300s: this spoolbox is built without Maildir delivery "
		       "(ENABLE_MAILDIR)", a->path);
		return;
	}
	maildir_deliver(a->path, a->host, a->m, r);
}

/* MAILDIR: "~/x" is under the home directory, "%u" is the user name, a relative path is
 * relative to the home directory. */
static int maildir_path(const struct local *L, const struct dl_user *u, char *out, size_t size)
{
	const char *t = conf_str(&L->conf, CK_MAILDIR);
	/* the home directory first: "~/x" and "~" (the '~' taken), "x" (a '/' added), "/x" none */
	if (str_fmt(out, size, t[0] == '~' && (t[1] == '/' || t[1] == 0) ? (t++, "%s") : t[0] != '/' ? "%s/" : "",
	            u->home) < 0)
		return -1;
	size_t n = strlen(out);
	for (; *t; t++) {
		if (t[0] == '%' && t[1] == 'u') {
			n += str_lcpy(out + n, u->name, size - n);
			t++;
		} else if (n + 1 < size) {
			out[n++] = *t, out[n] = 0;
		} else {
			return -1;
		}
		if (n >= size)
			return -1;
	}
	return 0;
}

/* a: deliver_target's, its path the buffer path (TARGET_PATH_MAX bytes) */
static void deliver_mailbox(struct local *L, const struct dl_target *t, struct child_arg *a, char *path,
                            struct dl_result *r)
{
	if (L->maildir) {
		if (maildir_path(L, &t->user, path, TARGET_PATH_MAX) < 0) {
			dl_set(r, "f5.3.5", "Maildir path of %s too long", t->user.name);
			return;
		}
		dl_run_as(&t->user, -1, L->run_timeout, child_maildir, a, r);
		return;
	}
	const char *dir = conf_str(&L->conf, CK_MBOX_DIR);
	if (str_fmt(path, TARGET_PATH_MAX, "%s/%s", dir, t->user.name) < 0) {
		dl_set(r, "f5.3.5", "mailbox path of %s too long", t->user.name);
		return;
	}
	/* MBOX_DIR looked at once (made when missing), for the two decisions below */
	struct stat st;
	if (stat(dir, &st) < 0) {
		if (errno == ENOENT && fio_mkdirs(dir, 0755) < 0) {
			dl_set_errno(r, errno, "mkdir", dir);
			return;
		}
		st.st_mode = 0; /* made 0755 now, or not to be looked at: neither applies */
	}
	/* a world-writable MBOX_DIR: what another user planted under this name goes aside */
	mbox_unplant(&st, dir, path, t->user.name, t->user.uid);
	/* The mbox directory's group, when it is the Debian layout (group-writable, e.g. 2775
	 * root:mail): deliveries get it as a supplementary group to make .lock files, as the mail
	 * readers' setgid helpers do. */
	long g = S_ISDIR(st.st_mode) && (st.st_mode & S_IWGRP) && !(st.st_mode & S_IWOTH) && st.st_gid != 0
	             ? (long)st.st_gid : -1;
	run_mbox(L, &t->user, g, a, r);
	if (r->status == DL_CREATE) {
		/* the user may not create files in MBOX_DIR: root makes the empty mailbox (owned
		 * by the user, mode 0600), the user's process does the rest */
		mbox_create(path, t->user.uid, g >= 0 ? (gid_t)g : t->user.gid, r);
		if (r->status == DL_OK)
			run_mbox(L, &t->user, g, a, r);
		if (r->status == DL_CREATE)
			r->status = DL_DEFER;
	}
}

static void deliver_command(struct local *L, const struct dl_target *t, const struct dl_msg *m, struct dl_result *r)
{
	/* the command's environment, as Postfix's local(8) sets it: only harmless characters of
	 * the values (they come from addresses) reach it */
	static const char names[][10] = {"HOME", "USER", "LOGNAME", "SENDER", "RECIPIENT", "LOCAL", "HOST"};
	char vars[ARRAY_LEN(names)][1100];
	char *env[ARRAY_LEN(names) + 3] = {"PATH=/usr/bin:/bin", "SHELL=/bin/sh"};
	const char *at = strrchr(m->rcpt, '@');
	size_t ll = at ? (size_t)(at - m->rcpt) : strlen(m->rcpt);
	const char *val[] = {t->user.home, t->user.name, t->user.name, m->sender, m->rcpt, m->rcpt, at ? at + 1 : L->host};
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		int n = i == 5 ? (int)(ll > 1000 ? 1000 : ll) : (int)sizeof vars[i]; /* LOCAL: the local part */
		snprintf(vars[i], sizeof vars[i], "%s=%.*s", names[i], n, val[i]);
		dl_env_clean(vars[i] + strlen(names[i]) + 1);
		env[i + 2] = vars[i];
	}
	dl_command(t->text, &t->user, env, m, L->cmd_timeout, r);
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static void deliver_target(struct local *L, const struct dl_target *t, const struct dl_msg *m, struct dl_result *r)
{
	char path[TARGET_PATH_MAX];
	struct child_arg a = {t->text, L->host, m, {L->lock_timeout, 1, -1}};
	memset(r, 0, sizeof *r);
	/* ifs, not a switch: its jump table is bigger than the comparisons */
	enum dl_kind k = t->kind;
	if (k == DK_ERROR) {
		if (t->public_text) /* the full text, which may quote a user's file, is for the log */
			log_msg(LOG_NOTICE, NULL, "to=<%s> %s: %s", m->rcpt, t->enh, t->text);
		/* t->status ('d' or 'f', DL_DEFER or DL_FAIL) and t->enh are dl_set's code */
		dl_set(r, &t->status, "%s", t->public_text ? t->public_text : t->text);
	} else if (k == DK_MAILBOX) {
		a.path = path;
		deliver_mailbox(L, t, &a, path, r);
	} else if (k == DK_FILE) {
		run_mbox(L, &t->user, -1, &a, r);
		if (r->status == DL_CREATE) {
			r->status = DL_DEFER;
			str_lcpy(path, r->text, sizeof path);
			snprintf(r->text, sizeof r->text, "%.300s (as %s)", path, t->user.name);
		}
	} else if (k == DK_MAILDIR) {
		dl_run_as(&t->user, -1, L->run_timeout, child_maildir, &a, r);
	} else if (k == DK_COMMAND && ENABLE_DELIVER_CMD) { /* else never made: aliases_expand refuses |command */
		deliver_command(L, t, m, r);
	} else {
		dl_set(r, "d4.3.0", "internal error: unexpected target kind");
	}
}

/* Re-enters the queue: `sendmail -f SENDER -i -- ADDR...` (this binary's submit applet) with
 * Delivered-To: prepended, so a loop through a remote host comes back recognisable. */
static void resubmit(struct local *L, const char *sender, const char **addr, size_t n, const struct dl_msg *m,
                     struct dl_result *r)
{
	const char **argv = calloc(n + 10, sizeof *argv);
	int p[2] = {-1, -1};
	pid_t pid = -1;
	if (argv) {
		size_t k = 0;
		argv[k++] = "sendmail";
		if (L->conf_path)
			argv[k++] = "-C", argv[k++] = L->conf_path;
		argv[k++] = "-f";
		argv[k++] = *sender ? sender : "<>";
		argv[k++] = "-i";
		argv[k++] = "--";
		for (size_t i = 0; i < n; i++)
			argv[k++] = addr[i];
		argv[k] = NULL;
	}
	/* one refusal for the three calls: a pipe not made is -1, and its close(-1) harmless */
	if (!argv || dl_pipe(p) < 0 || (fflush(stdout), pid = fork()) < 0) {
		int e = argv ? errno : ENOMEM;
		free(argv);
		close(p[0]);
		close(p[1]);
		dl_set(r, "d4.3.0", "cannot run submit: %s", strerror(e));
		return;
	}
	if (pid == 0) {
		/* its stdout must not reach the scheduler's pipe */
		if (dup2(p[0], 0) < 0 || dup2(2, 1) < 0)
			_exit(EX_OSERR);
		signal(SIGPIPE, SIG_DFL);
		execv(L->self, (char *const *)argv);
		_exit(EX_TEMPFAIL);
	}
	free(argv);
	close(p[0]);
	int rd_fail = 0;
	struct io io;
	dl_io(&io, p[1], NULL, NULL);
	int w = dl_copy(m, &io, DL_NO_RETURN_PATH, &rd_fail);
	int e = errno;
	close(p[1]);
	int st;
	dl_wait(pid, &st);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (w < 0 && code == 0)
		code = EX_TEMPFAIL;
	if (code == 0)
		dl_set(r, "o2.0.0", "queued again for %s%s", addr[0], n > 1 ? " and others" : "");
	else if (code == EX_DATAERR || code == EX_NOUSER || code == EX_NOHOST)
		dl_set(r, "f5.1.3", "submit refused %s: exit %d", addr[0], code);
	else
		dl_set(r, "d4.3.0", "submit for %s failed: %s", addr[0],
		       w < 0 ? strerror(e) : code < 0 ? "killed" : "temporary failure");
}

/* ---- one recipient ---- */

static const char *kind_name(enum dl_kind k)
{
	static const char *const n[] = {"mailbox", "file", "maildir", "command", "remote", "error"};
	return n[k];
}

static void deliver_rcpt(struct local *L, struct ta_job *job, size_t idx, int fd)
{
	const struct spool_rcpt *rc = &job->msg.rcpt[idx];
	char rcpt[SPOOL_ADDR_MAX + 300];
	if (strchr(rc->addr, '@'))
		str_lcpy(rcpt, rc->addr, sizeof rcpt);
	else
		snprintf(rcpt, sizeof rcpt, "%s@%s", rc->addr, L->host);
	if (L->dt_overflow || dt_seen(L, rcpt)) {
		log_msg(LOG_NOTICE, job->id, "to=<%s> mail loop: Delivered-To already present", rcpt);
		report(job, idx, TA_ERROR, "failed", "5.4.6",
		          L->dt_overflow ? "mail forwarding loop: too many Delivered-To: headers"
		                         : "mail forwarding loop: this message was already delivered to this recipient",
		          NULL);
		return;
	}
	if (L->al.errors) {
		char text[700];
		snprintf(text, sizeof text, "aliases file has errors, fix it (spoolbox --check): %s", L->al.first_error);
		report(job, idx, TA_DEFERRED, "delayed", "4.3.5", text, NULL);
		return;
	}
	/* the targets' submit addresses, then their results, one calloc; one refusal for both
	 * (a failed expansion is empty: expansion_free is harmless) */
	struct expansion x;
	const char **addrs = NULL;
	_Static_assert(_Alignof(struct dl_result) <= _Alignof(const char *), "results after the pointers");
	if (expand_recipient(&L->xc, rc->addr, &x) < 0 || !(addrs = calloc(x.n, sizeof *addrs + sizeof(struct dl_result)))) {
		expansion_free(&x);
		report(job, idx, TA_DEFERRED, "delayed", "4.3.0", "out of memory", NULL);
		return;
	}
	if (!L->copy_buf)
		L->copy_buf = malloc(DL_COPY_BUF); /* kept: no mmap/munmap per delivery */
	struct dl_msg m = {fd, job->msg.body_off, job->msg.size, job->msg.sender ? job->msg.sender : "", rcpt, time(NULL),
	                   L->copy_buf};
	struct dl_result *res = (struct dl_result *)(addrs + x.n);
	for (size_t i = 0; i < x.n; i++)
		if (x.t[i].kind != DK_REMOTE)
			deliver_target(L, &x.t[i], &m, &res[i]);
	/* remote targets: one submit per envelope sender (the original, or owner-NAME) */
	for (size_t i = 0; i < x.n; i++) {
		if (x.t[i].kind != DK_REMOTE || res[i].status)
			continue;
		const char *snd = x.t[i].sender ? x.t[i].sender : m.sender;
		size_t n = 0;
		for (size_t k = i; k < x.n; k++) {
			const char *sk = x.t[k].sender ? x.t[k].sender : m.sender;
			if (x.t[k].kind == DK_REMOTE && !res[k].status && strcmp(sk, snd) == 0) {
				addrs[n++] = x.t[k].text;
				res[k].status = '?'; /* in this submit: its result below */
			}
		}
		struct dl_result r;
		resubmit(L, snd, addrs, n, &m, &r);
		for (size_t k = i; k < x.n; k++)
			if (res[k].status == '?')
				res[k] = r;
	}
	size_t nok = 0, ndef = 0, nfail = 0, fdef = 0, ffail = 0;
	for (size_t i = 0; i < x.n; i++) {
		log_msg(res[i].status == DL_OK ? LOG_INFO : LOG_NOTICE, job->id, "to=<%s> %s %s: %s %s %s", rcpt,
		        kind_name(x.t[i].kind), x.t[i].kind == DK_ERROR ? "-" : x.t[i].text,
		        res[i].status == DL_OK ? "delivered" : res[i].status == DL_FAIL ? "failed" : "deferred", res[i].enh,
		        res[i].text);
		if (res[i].status == DL_OK)
			nok++;
		else if (res[i].status == DL_FAIL && !nfail++)
			ffail = i;
		else if (res[i].status != DL_FAIL && !ndef++)
			fdef = i;
	}
	char text[SPOOL_TEXT_MAX + 1];
	/* One temporary failure defers the recipient (targets already done get it again at the
	 * next attempt); all targets failing fails it; otherwise it is delivered, with any failed
	 * targets named in the report. */
	if (ndef || !nok) {
		size_t f = ndef ? fdef : ffail; /* the first deferred target, else the first failed */
		/* one target: its own text (under 400 bytes, so it fits) */
		if (x.n > 1)
			str_fmt(text, sizeof text, "%s %.200s: %s", kind_name(x.t[f].kind),
			         x.t[f].kind == DK_ERROR ? rcpt : x.t[f].text, res[f].text);
		report(job, idx, ndef ? TA_DEFERRED : TA_ERROR, ndef ? "delayed" : "failed", res[f].enh,
		       x.n > 1 ? text : res[f].text, NULL);
	} else {
		const char *action = x.n > 1 ? "expanded" : x.t[0].kind == DK_REMOTE ? "relayed" : "delivered";
		if (nfail) /* then x.n > 1: a target was delivered */
			str_fmt(text, sizeof text, "delivered to %zu of %zu targets; failed: %.200s: %s", nok, x.n,
			         x.t[ffail].kind == DK_ERROR ? "-" : x.t[ffail].text, res[ffail].text);
		else if (x.n > 1)
			str_fmt(text, sizeof text, "delivered to %zu targets", nok);
		report(job, idx, TA_OK, action, "2.0.0", x.n > 1 ? text : res[0].text, NULL);
	}
	free(addrs);
	expansion_free(&x);
}

static int local_job(void *ctx, struct ta_job *job)
{
	struct local *L = ctx;
	aliases_refresh(L);
	int fd = spool_msg_open(job->sp, job->id, job->msg.body_off);
	if (fd < 0) {
		for (size_t i = 0; i < job->n; i++)
			report(job, job->idx[i], TA_DEFERRED, "delayed", "4.3.0", "cannot open the message file", NULL);
		return -1;
	}
	dt_scan(L, fd, job->msg.body_off, job->msg.size);
	char loop[96];
	loop[0] = 0;
	if (L->hop_limit > 0 && L->hops > L->hop_limit)
		snprintf(loop, sizeof loop, "mail forwarding loop: %ld Received: header fields (limit %ld)", L->hops,
		         L->hop_limit);
	for (size_t i = 0; i < job->n; i++)
		if (loop[0])
			report(job, job->idx[i], TA_ERROR, "failed", "5.4.6", loop, NULL);
		else
			deliver_rcpt(L, job, job->idx[i], fd);
	dt_clear(L);
	close(fd);
	return 0;
}

/* -x NAME: what would happen, without delivering. */
static int show_expansion(struct local *L, const char *name)
{
	if (L->al.errors)
		fprintf(stderr, "local: aliases file has errors (delivery would be deferred): %s\n", L->al.first_error);
	struct expansion x;
	if (expand_recipient(&L->xc, name, &x) < 0)
		return EX_OSERR;
	int rc = L->al.errors ? EX_TEMPFAIL : 0;
	for (size_t i = 0; i < x.n; i++) {
		/* one line: "error ENH TEXT", "remote ADDR[ sender OWNER]", "KIND TEXT user NAME" */
		const struct dl_target *t = &x.t[i];
		const char *a = t->text, *b = " user ", *c = t->user.name;
		if (t->kind == DK_ERROR) {
			a = t->enh, b = " ", c = t->text;
			if (t->status == 'd')
				rc = EX_TEMPFAIL;
			else if (!rc)
				rc = EX_NOUSER;
		} else if (t->kind == DK_REMOTE) {
			b = t->sender ? " sender " : "", c = t->sender ? t->sender : "";
		}
		printf("%s %s%s%s\n", kind_name(t->kind), a, b, c);
	}
	expansion_free(&x);
	return rc;
}

int local_main(int argc, char **argv)
{
	const char *debug_id = NULL, *xname = NULL;
	int verbose = 0, c;
	struct local *L = calloc(1, sizeof *L);
	if (!L)
		return EX_OSERR;
	while ((c = getopt(argc, argv, "C:m:x:v")) != -1) {
		switch (c) {
		case 'C': L->conf_path = optarg; break;
		case 'm': debug_id = optarg; break;
		case 'x': xname = optarg; break;
		case 'v': verbose = 1; break;
		default: goto usage;
		}
	}
	if (optind != argc || (debug_id && xname)) {
usage:
		free(L);
		return applet_usage(local_usage, 1);
	}
	/* a configuration that does not load leaves conf empty: conf_free below is harmless */
	int rc = applet_load_conf(&L->conf, L->conf_path);
	if (!rc) {
		applet_log_setup(&L->conf, NULL, 0, verbose);
		signal(SIGPIPE, SIG_IGN); /* a |command that stops reading is judged by its exit code */
		signal(SIGCHLD, SIG_DFL); /* an ignored SIGCHLD inherited from a parent breaks waitpid() */
		rc = local_setup(L);
	}
	if (!rc && xname) {
		rc = show_expansion(L, xname);
	} else if (!rc) {
		const char *spool = conf_str(&L->conf, CK_SPOOL);
		if (spool_open(&L->sp, spool, 0, -1) < 0) {
			fprintf(stderr, "local: cannot open the spool %s\n", spool);
			rc = EX_TEMPFAIL;
		} else {
			struct ta_ops ops = {local_job, NULL, NULL, NULL, 0};
			rc = ta_main_loop(&L->sp, "local", &ops, L, debug_id);
		}
	}
	if (L->xc.aliases)
		aliases_free(&L->al);
	conf_free(&L->conf);
	free(L->copy_buf);
	free(L);
	return rc;
}
#endif /* ENABLE_LOCAL */
