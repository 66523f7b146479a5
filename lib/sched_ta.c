/* Transport-agent processes: started from a clause's command (our own binary under the applet's
 * name, or an absolute path), one socket each as stdin and stdout, the seed's #hungry protocol,
 * overfeed, the idle pool with idlemax, and the maxta/maxchannel/maxring/maxthr limits. */
#include "sched_int.h"
#include "agentuser.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define STA_RBUF 8192   /* a report line is at most ~3 KiB (docs/spool.md limits) */
#define KEY_MAX (SC_VALUE_MAX * 2 + 160)
#define STA_START_MAX 60 /* seconds a new TA has to say its first #hungry */

static int thread_key(struct sched *s, const struct thread *t, char *key, size_t size, char *argvbuf, size_t asize,
                      char **argv, char **env)
{
	if (!t->p.command || sc_command_split(t->p.command, t->name, t->host, s->o.logdir, argvbuf, asize, argv, env) < 0)
		return -1;
	size_t n = 0;
	key[0] = 0;
	for (char **v = env;; v = argv) {
		for (int k = 0; v[k]; k++)
			n += (size_t)snprintf(key + n, n < size ? size - n : 0, "%s ", v[k]);
		if (v == argv)
			break;
	}
	n += (size_t)snprintf(key + n, n < size ? size - n : 0, "u=%s g=%s", t->p.user ? t->p.user : "",
	                      t->p.group ? t->p.group : "");
	return n < size ? 0 : -1;
}

/* The ids a clause's user= and group= name. */
struct ta_ids {
	uid_t uid;
	gid_t gid;
	int have_uid, have_gid;
};

/* Resolves user= and group= in the scheduler (so that a failure is said in its log, not only on
 * the child's stderr): a name through /etc/passwd and /etc/group, a number as it is, "root" as
 * uid 0 even without /etc/passwd (rescue images, initramfs: issue 12 point 2), and
 * "$AGENT_USER" as agentuser.h says (group SUBMIT_GROUP; root, said once, when the account does
 * not exist: issue 9 point 9). Returns 0, or -1 with the reason in why. */
static int resolve_ids(struct sched *s, const struct sc_params *p, struct ta_ids *ids, char *why, size_t size)
{
	memset(ids, 0, sizeof *ids);
	char *end;
	if (p->group) {
		struct group *g = getgrnam(p->group);
		long v = strtol(p->group, &end, 10);
		if (g)
			ids->gid = g->gr_gid;
		else if (!*end && end != p->group && v >= 0)
			ids->gid = (gid_t)v;
		else if (!strcmp(p->group, "root"))
			ids->gid = 0;
		else {
			snprintf(why, size, "group=%s: no such group (not in /etc/group, not a number)", p->group);
			return -1;
		}
		ids->have_gid = 1;
	}
	if (p->user && !strcmp(p->user, AGENTUSER_VAR)) {
		struct agent_ids a;
		const char *name;
		if (agentuser_ids_env(&a, &name) == AGENTUSER_ROOT_FALLBACK && !(s->said_nopasswd & 2)) {
			log_msg(LOG_WARNING, NULL, "AGENT_USER=%s: no such user or SUBMIT_GROUP: the agents run as root "
			        "(spoolbox --install)", name);
			s->said_nopasswd |= 2;
		}
		ids->uid = a.uid;
		if (!ids->have_gid)
			ids->gid = a.gid;
	} else if (p->user) {
		struct passwd *pw = getpwnam(p->user);
		long v = strtol(p->user, &end, 10);
		if (pw) {
			ids->uid = pw->pw_uid;
			if (!ids->have_gid)
				ids->gid = pw->pw_gid;
		} else if (!*end && end != p->user && v >= 0) {
			ids->uid = (uid_t)v;
		} else if (!strcmp(p->user, "root")) {
			ids->uid = 0;
			if (!(s->said_nopasswd & 1)) {
				log_msg(LOG_NOTICE, NULL, "user=root is not in /etc/passwd: the agents run as uid 0, gid 0");
				s->said_nopasswd |= 1;
			}
		} else {
			snprintf(why, size, "user=%s: no such user (not in /etc/passwd, not a number)", p->user);
			return -1;
		}
	}
	if (p->user) {
		ids->have_gid = 1;
		ids->have_uid = 1;
	}
	return 0;
}

/* In the child: the TA's user and group, when we are root and the clause names them. */
static int drop_to(const struct ta_ids *ids)
{
	if (getuid() != 0)
		return 0;
	if (ids->have_gid && (setgroups(1, &ids->gid) < 0 || setgid(ids->gid) < 0))
		return -1;
	if (ids->have_uid && ids->uid != 0 && setuid(ids->uid) < 0)
		return -1;
	return 0;
}

/* Room for one more ack (the FIFO doubles). -1: out of memory. */
static int ack_room(struct sta *t)
{
	if (t->nack < t->ackcap)
		return 0;
	unsigned cap = t->ackcap ? t->ackcap * 2 : 8;
	struct sta_ack *a = malloc(cap * sizeof *a);
	if (!a)
		return -1;
	for (unsigned k = 0; k < t->nack; k++)
		a[k] = t->acks[(t->ackhead + k) % t->ackcap];
	free(t->acks);
	t->acks = a;
	t->ackhead = 0;
	t->ackcap = cap;
	return 0;
}

/* key, argv and env: thread_key()'s for thr (staff() expanded them). */
static struct sta *sta_spawn(struct sched *s, struct thread *thr, const char *key, char **argv, char **env)
{
	struct ta_ids ids;
	char why[200];
	if (resolve_ids(s, &thr->p, &ids, why, sizeof why) < 0) {
		log_msg(LOG_ERR, NULL, "%s/%s: %s: its agents cannot start; fix scheduler.conf or create it", thr->name,
		        thr->host, why);
		return NULL;
	}
	int sv[2] = {-1, -1};
	if (!s->agent_ops && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_syserr(NULL, "socketpair for", argv[0], NULL);
		return NULL;
	}
	/* everything the parent needs, before the fork: out of memory is a start that failed, and
	 * the thread's work is tried again later (staff blocks it), never an exit */
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	/* the read buffer, key and name in the struct's allocation (one free) */
	size_t kl = strlen(key) + 1, bl = strlen(base) + 1;
	struct sta *t = calloc(1, sizeof *t + STA_RBUF + kl + bl);
	pid_t pid = -1;
	if (!t || ack_room(t) < 0) { /* the FIFO's first 8 */
		log_msg(LOG_ERR, NULL, "out of memory starting %s for %s/%s", argv[0], thr->name, thr->host);
		goto undo;
	}
	if (s->agent_ops) {
		/* the simulator's agents (issue 14 point 1): no process, the same protocol */
		if (s->agent_ops->spawn(s->agent_ctx, thr->name, thr->host, &pid, &sv[0]) < 0) {
			pid = -1;
			errno = EAGAIN;
		}
	} else
		pid = fork();
	if (pid < 0) {
		log_syserr(NULL, "fork for", argv[0], NULL);
	undo:
		if (t)
			free(t->acks);
		free(t);
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	if (pid == 0 && !s->agent_ops) {
		sigset_t all;
		sigemptyset(&all);
		static const unsigned char sigs[] = {SIGTERM, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGINT, SIGPIPE};
		for (size_t i = 0; i < ARRAY_LEN(sigs); i++)
			signal(sigs[i], SIG_DFL);
		sigprocmask(SIG_SETMASK, &all, NULL);
		if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0)
			_exit(127);
		for (int k = 0; env[k]; k++) {
			/* NAME=value (sc_command_split checked the '='): setenv, which the applet links
			 * anyway, not putenv only for this */
			char *eq = strchr(env[k], '=');
			*eq = 0;
			setenv(env[k], eq + 1, 1);
		}
		/* the complaint as one write to stderr (snprintf: the router links no dprintf else) */
		const char *msg[4] = {"cannot become user ", thr->p.user ? thr->p.user : "-", " group ",
		                      thr->p.group ? thr->p.group : "-"};
		if (drop_to(&ids) == 0) {
			if (argv[0][0] == '/')
				execv(argv[0], argv);
			else if (strchr(argv[0], '/'))
				errno = EINVAL;
			else
				execv("/proc/self/exe", argv);
			msg[0] = "exec: ";
			msg[1] = strerror(errno);
			msg[2] = msg[3] = "";
		}
		char line[SC_VALUE_MAX * 2 + 712];
		int n = snprintf(line, sizeof line, "spoolbox/scheduler: TA %s: %s%s%s%s\n", argv[0], msg[0], msg[1], msg[2],
		                 msg[3]);
		if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) {
			/* nowhere else to say it */
		}
		_exit(127);
	}
	if (sv[1] >= 0)
		close(sv[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK); /* a new socket (ours or the simulator's): no other status flag */
	t->pid = pid;
	t->fd = sv[0];
	t->xc = -1;
	t->state = STA_STARTING;
	t->ring = thr->ring;
	t->rbuf = (char *)(t + 1);
	t->key = memcpy(t->rbuf + STA_RBUF, key, kl);
	t->argv0 = memcpy(t->key + kl, base, bl);
	t->since = s->now;
	t->gen = s->gen;
	t->idlemax = sched_idlemax(&thr->p);
	t->acks[t->nack++] = (struct sta_ack){NULL, 0, 0}; /* its first #hungry */
	t->next = s->tas;
	s->tas = t;
	s->ntas++;
	t->ring->tas++;
	s->started++;
	log_msg(LOG_DEBUG, NULL, "started %s[%ld] for %s/%s", t->argv0, (long)pid, thr->name, thr->host);
	return t;
}

static void attach(struct sched *s, struct sta *t, struct thread *thr)
{
	sx_move(s, &t->xc, thr->xc); /* callers checked sx_room */
	t->thr = thr;
	t->streak = 0;
	thr->running++;
	thr->chan->running++;
	thr->refs++;
}

static void detach(struct sched *s, struct sta *t)
{
	struct thread *thr = t->thr;
	if (!thr)
		return;
	t->thr = NULL;
	thr->running--;
	thr->chan->running--;
	st_put(s, thr);
}

/* Agents thread thr may have at once: its destination's concurrency window (issue 14 point 2),
 * capped by maxthr when the clause sets one. 0: a dead destination (suspended). */
static int thr_limit(const struct thread *thr)
{
	int n = thr->fb.window;
	return thr->p.maxthr > 0 && n > thr->p.maxthr ? thr->p.maxthr : n;
}

/* Ready jobs of a thread that may not run now go back to their messages; a dead destination's
 * recipients are deferred with the reason first (Postfix: "delivery temporarily suspended"), so
 * that mailq and the delay notices tell why. */
static void hold_back(struct sched *s, struct thread *thr, const char *why)
{
	if (thr->fb.window == 0) {
		char text[SPOOL_TEXT_MAX + 1];
		snprintf(text, sizeof text, "destination not responding%s%s", why ? ": " : "", why ? why : "");
		for (struct job *j = thr->head; j; j = j->next)
			sq_defer_queued(s, j->m, thr, thr->blocked_until, text);
	}
	st_block(s, thr, thr->blocked_until);
}

/* A destination whose failed pseudo-cohorts reached the limit: suspended until its retry time,
 * when one probe may reopen it (issue 14 point 3). */
static void dest_dead(struct sched *s, struct thread *thr, const char *why)
{
	long long until = sched_retry_next(&thr->p, 0, thr->host, s->now);
	if (thr->blocked_until < until)
		thr->blocked_until = until;
	log_msg(LOG_WARNING, NULL, "%s/%s: destination not responding: suspended for %llds, then one probe", thr->name,
	        thr->host, thr->blocked_until - s->now);
	hold_back(s, thr, why);
}

/* Feedback from one report of agent t (issue 14 point 2): a connection or handshake failure
 * (4.4.1, 4.4.2) is negative at once, once per job; a job with reports and no such failure is
 * positive when it ends (its #hungry). The error channel's threads get none. */
static void feedback_report(struct sched *s, struct sta *t, const struct sta_report *rl)
{
	struct thread *thr = t->thr;
	t->fb_any = 1;
	if (!thr || thr->is_error || t->fb_bad || !sfb_negative(rl->enh))
		return;
	t->fb_bad = 1;
	if (sfb_failure(&thr->fb, &thr->p))
		dest_dead(s, thr, rl->diag[0] ? rl->diag : rl->message);
}

static void feedback_job_end(struct sta *t)
{
	struct thread *thr = t->thr;
	t->proven = t->fb_any && !t->fb_bad;
	if (thr && !thr->is_error && t->fb_any && !t->fb_bad)
		sfb_success(&thr->fb, &thr->p, thr->running);
	t->fb_any = t->fb_bad = 0;
}

static void ta_kill(struct sched *s, struct sta *t)
{
	if (s->agent_ops)
		s->agent_ops->kill(s->agent_ctx, t->pid);
	else
		kill(t->pid, SIGKILL);
}

static void sta_free(struct sta *t)
{
	close(t->fd);
	free(t->acks);
	free(t);
}

/* The job at the head of the ack FIFO is the one the TA works on: its time limit runs from when
 * it got there (issue 11 point 6). */
static void head_changed(struct sched *s, struct sta *t)
{
	const struct sta_ack *h = t->nack ? &t->acks[t->ackhead] : NULL;
	t->deadline = h && h->m && h->limit > 0 ? s->now + h->limit : 0;
}

/* Callers make room first (ack_room, or a check of ackcap). */
static void ack_push(struct sched *s, struct sta *t, struct sta_ack a)
{
	t->acks[(t->ackhead + t->nack++) % t->ackcap] = a;
	if (t->nack == 1)
		head_changed(s, t);
}

static struct sta_ack ack_pop(struct sched *s, struct sta *t)
{
	struct sta_ack a = t->acks[t->ackhead];
	t->ackhead = (t->ackhead + 1) % t->ackcap;
	t->nack--;
	head_changed(s, t);
	return a;
}

/* Holds thr for its interval (60 s when none): its agent is tried again then (one that would not
 * start, or a command that does not expand). Returns the wait. */
static long long block_later(struct sched *s, struct thread *thr)
{
	long long wait = thr->p.interval > 0 ? thr->p.interval : 60;
	st_block(s, thr, s->now + wait);
	return wait;
}

/* Ends a TA: its outstanding jobs lose their recipients (back to the queue), it leaves every
 * count, and its process is reaped by SIGCHLD. */
static void sta_gone(struct sched *s, struct sta *t, const char *why, const char *job_why)
{
	struct thread *thr = t->thr;
	int never_started = t->state == STA_STARTING;
	if (never_started || (why && t->nack > 0))
		log_msg(never_started ? LOG_ERR : LOG_WARNING, NULL, "%s[%ld] %s%s", t->argv0, (long)t->pid,
		        never_started ? "could not be started: " : "", why ? why : "ended");
	/* job_why: the reason for the job it was on; the jobs behind it were not started */
	for (int first = 1; t->nack; first = 0) {
		struct sta_ack a = ack_pop(s, t);
		if (a.m)
			sq_job_done(s, a.m, a.seq, (long)t->pid, t->argv0, first ? job_why : NULL);
	}
	if (never_started && thr) {
		long long wait = block_later(s, thr);
		log_msg(LOG_ERR, NULL, "%s/%s: its work stays queued; the transport agent is tried again in %llds",
		        thr->name, thr->host, wait);
	}
	detach(s, t);
	sx_move(s, &t->xc, -1);
	struct sta **pp = &s->tas;
	while (*pp != t)
		pp = &(*pp)->next;
	*pp = t->next;
	s->ntas--;
	t->ring->tas--;
	sta_free(t);
}

void sta_close(struct sta *t)
{
	if (t->state == STA_CLOSING)
		return;
	shutdown(t->fd, SHUT_WR);
	t->state = STA_CLOSING;
}

static void send_idle(struct sched *s, struct sta *t)
{
	detach(s, t);
	if (t->nack == t->ackcap) {
		sta_close(t);
		return;
	}
	if (send(t->fd, "#idle\n", 6, MSG_DONTWAIT | MSG_NOSIGNAL) != 6) {
		sta_close(t);
		return;
	}
	ack_push(s, t, (struct sta_ack){NULL, 0, 0});
	t->state = STA_IDLE;
	t->since = s->now;
}

/* The job line's third field, the offsets of the recipients just claimed for it ("id\thost\t117,
 * 301"): an agent that only needs the envelope then reads it from the message file it opens
 * anyway, instead of opening and reading the control file for its T records (docs/spool.md 11).
 * Left out when it would not fit in the line: the agent reads the control file then, as it
 * always may. Returns the line's new length (len: the "id\thost\n" line in buf). */
static int job_rcpts(char *buf, size_t len, size_t size, const struct qmsg *m, long pid, uint16_t seq)
{
	size_t o = len - 1; /* over the newline */
	char sep = '\t';
	for (unsigned i = 0; i < m->nrcpt; i++) {
		const struct qrcpt *r = &m->r[i];
		if (r->tag != RT_TRANSIT || !(r->flags & RF_OURS) || r->pid != pid || r->jobseq != seq)
			continue;
		int n = snprintf(buf + o, size - o, "%c%lu", sep, (unsigned long)r->off);
		if (n < 0 || (size_t)n + 1 >= size - o) {
			buf[len - 1] = '\n';
			buf[len] = 0;
			return (int)len;
		}
		o += (size_t)n;
		sep = ',';
	}
	buf[o++] = '\n';
	buf[o] = 0;
	return (int)o;
}

int sta_handout(struct sched *s, struct sta *t, struct job *j)
{
	struct qmsg *m = j->m;
	struct thread *thr = t->thr;
	/* the ack's place first: claimed recipients without one could never be answered */
	if (ack_room(t) < 0)
		return 0;
	uint16_t seq = (uint16_t)(t->seq + 1);
	int n = sq_claim(s, thr, m, (long)t->pid, seq);
	if (n <= 0)
		return n;
	t->seq = seq;
	/* the ack is queued even when the write fails: closing the TA then loses these properly */
	ack_push(s, t, (struct sta_ack){m, seq, thr->p.timelimit});
	char line[SPOOL_JOB_LINE_MAX];
	log_flush(); /* the held lines about this message go before the agent's (log summarisers) */
	int len = snprintf(line, sizeof line, "%s\t%s\n", m->id, thr->host);
	if (len > 0 && (size_t)len < sizeof line)
		len = job_rcpts(line, (size_t)len, sizeof line, m, (long)t->pid, seq);
	if (len < 0 || (size_t)len >= sizeof line || send(t->fd, line, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) != len) {
		log_msg(LOG_ERR, m->id, "writing the job to %s[%ld]: %s", t->argv0, (long)t->pid, strerror(errno));
		return -2;
	}
	log_msg(LOG_DEBUG, m->id, "%d rcpt to %s[%ld] for %s/%s", n, t->argv0, (long)t->pid, thr->name, thr->host);
	return 1;
}

static struct thread *starving(struct sched *s, struct sta *t);

/* Gives a TA of thread thr jobs up to overfeed. A TA stays with its thread while it has jobs
 * (Courier's most-recently-used preference: a cached connection is reused), but after overfeed
 * jobs in a row it stops taking more while another thread of its ring waits with no TA at all
 * (Courier's anti-starvation rule). */
static void feed(struct sched *s, struct sta *t)
{
	struct thread *thr = t->thr;
	int limit = thr->p.overfeed; /* at least 1: the default 2, and scheduler.conf's minimum */
	/* an agent above the initial concurrency probes the server's capacity: until it got through
	 * (new, or its last job failed to connect) it gets one job at a time, since a second one in
	 * its pipe would knock on a full server again and count twice against the destination's
	 * concurrency (issue 14 point 2); within the initial concurrency overfeed applies at once */
	if (!t->proven && thr->running > thr->p.init_conc) /* (at least 1: sfb_init) */
		limit = 1;
	if (t->gen != s->gen)
		return; /* started under an older configuration: it finishes what it has, no more */
	/* a window that shrank (negative feedback, a dead destination): the agents over it take
	 * no more jobs, and leave the thread when their outstanding ones are answered */
	if (thr->running > thr_limit(thr))
		return;
	unsigned tries = thr->nready;
	while (thr->nready && tries-- > 0 && (int)t->nack < limit && t->state == STA_BUSY) {
		if (t->streak >= (unsigned)limit && starving(s, t))
			return;
		struct job *j = st_pop(thr);
		int r = sta_handout(s, t, j);
		if (r == 0) {
			st_push_back(thr, j); /* an earlier job of this message is still out */
			continue;
		}
		if (j->pj) /* the preemption slots (issue 14 point 4) */
			(r == -1 ? spr_unready : spr_selected)(&thr->ring->pl, j->pj);
		free(j);
		if (r == -2) {
			sta_close(t);
			return;
		}
		if (r == 1)
			t->streak++;
	}
}

/* An idle TA (or one to be closed to make room) for thread thr. */
static struct sta *find_idle(struct sched *s, struct thread *thr, const char *key)
{
	for (struct sta *t = s->tas; t; t = t->next)
		if (t->state == STA_IDLE && t->ring == thr->ring && !strcmp(t->key, key))
			return t;
	return NULL;
}

static int close_oldest_idle(struct sched *s)
{
	struct sta *old = NULL;
	for (struct sta *t = s->tas; t; t = t->next)
		if (t->state == STA_IDLE && (!old || t->since < old->since))
			old = t;
	if (!old)
		return 0;
	sta_close(old);
	return 1;
}

/* Host class xc is full (sched_xla.c): an idle agent that counts in it ends, so that its slot
 * goes to the thread that waits (an idle agent of the same command would have been reused). */
static void close_idle_in(struct sched *s, int xc)
{
	for (struct sta *t = s->tas; t; t = t->next)
		if (t->state == STA_IDLE && t->xc == xc) {
			sta_close(t);
			return;
		}
}

/* More TAs for a thread with ready jobs, within the limits. */
static void staff(struct sched *s, struct thread *thr)
{
	char key[KEY_MAX], abuf[SC_VALUE_MAX * 2 + 512];
	char *argv[SC_ARGV_MAX + 1], *env[SC_ARGV_MAX + 1];
	if (thread_key(s, thr, key, sizeof key, abuf, sizeof abuf, argv, env) < 0) {
		log_msg(LOG_ERR, NULL, "%s/%s: the command does not expand", thr->name, thr->host);
		block_later(s, thr);
		return;
	}
	if (thr->fb.window == 0 && thr->blocked_until <= s->now) {
		sfb_probe(&thr->fb);
		log_msg(LOG_INFO, NULL, "%s/%s: suspension over: one probe", thr->name, thr->host);
	}
	/* agents that are starting take a job each when they say #hungry: no more agents than jobs */
	unsigned starting = 0;
	for (struct sta *t = s->tas; t; t = t->next)
		starting += t->thr == thr && t->state == STA_STARTING;
	while (thr->nready > starting && thr->running < thr_limit(thr) && thr->blocked_until <= s->now) {
		if (thr->chan->running >= sched_maxchannel(&thr->p, s->maxta_fd))
			return;
		struct sta *t = find_idle(s, thr, key);
		if (!sx_room(s, t ? t->xc : -1, thr->xc)) {
			/* its host class is full: the jobs wait, queued (never failed) */
			close_idle_in(s, thr->xc);
			return;
		}
		if (t) {
			attach(s, t, thr);
			t->state = STA_BUSY;
			feed(s, t);
			continue;
		}
		int live = s->ntas; /* every agent in s->tas, as sta_spawn and sta_gone count them */
		if (!sched_may_start(&thr->p, s->maxta_fd, live, thr->ring->tas /* a thread on a ring */, thr->chan->running,
		                     thr->running)) {
			if (live >= sched_maxta(&thr->p, s->maxta_fd))
				close_oldest_idle(s);
			return;
		}
		t = sta_spawn(s, thr, key, argv, env);
		if (!t) {
			block_later(s, thr);
			return;
		}
		attach(s, t, thr);
		starting++;
	}
}

/* Whether agent mt->t may take thread thr: it has ready jobs and room under its limits (the
 * agent's own thread, while it is still attached, counts it in the channel already), and its
 * command is the agent's. */
struct may_take {
	struct sched *s;
	struct sta *t;
};

static int may_take(void *ctx, struct thread *thr)
{
	struct may_take *mt = ctx;
	struct sched *s = mt->s;
	char key[KEY_MAX], abuf[SC_VALUE_MAX * 2 + 512];
	char *argv[SC_ARGV_MAX + 1], *env[SC_ARGV_MAX + 1];
	if (!thr->nready || thr->blocked_until > s->now || thr->running >= thr_limit(thr) ||
	    !sx_room(s, mt->t->xc, thr->xc) ||
	    thr->chan->running >= sched_maxchannel(&thr->p, s->maxta_fd) + (mt->t->thr && mt->t->thr->chan == thr->chan))
		return 0;
	return thread_key(s, thr, key, sizeof key, abuf, sizeof abuf, argv, env) == 0 && !strcmp(key, mt->t->key);
}

/* A thread of t's ring, other than its own, with ready jobs, no TA, room under its limits and the
 * same command: the one that waited longest (rings are kept in round-robin order). */
static struct thread *starving(struct sched *s, struct sta *t)
{
	struct may_take mt = {s, t};
	for (struct thread *thr = t->ring->stale ? NULL : t->ring->head; thr; thr = thr->rnext)
		if (thr != t->thr && !thr->running && may_take(&mt, thr))
			return thr;
	return NULL;
}

/* A TA with nothing outstanding: another thread of its ring with the same command, or idle. */
static void reassign(struct sched *s, struct sta *t)
{
	struct thread *cur = t->thr;
	if (t->gen != s->gen) {
		/* a new spoolbox.conf or scheduler.conf: a new TA reads it */
		detach(s, t);
		sta_close(t);
		return;
	}
	if (cur && cur->nready && cur->blocked_until <= s->now && cur->running <= thr_limit(cur)) {
		struct thread *other = t->streak >= (unsigned)cur->p.overfeed ? starving(s, t) : NULL;
		if (!other) {
			feed(s, t);
			return;
		}
		log_msg(LOG_DEBUG, NULL, "%s[%ld]: %s/%s waited long enough, it goes before %s/%s", t->argv0, (long)t->pid,
		        other->name, other->host, cur->name, cur->host);
		detach(s, t);
		attach(s, t, other);
		feed(s, t);
		return;
	}
	detach(s, t);
	struct ring *r = t->ring;
	struct may_take mt = {s, t};
	/* the ring's preemptive job order first (issue 14 point 4), its round robin otherwise */
	struct thread *thr = ENABLE_PREEMPT && !r->stale ? spr_next(s, r, may_take, &mt) : NULL;
	if (!thr)
		for (thr = r->stale ? NULL : r->head; thr && !may_take(&mt, thr); thr = thr->rnext)
			;
	if (thr) {
		attach(s, t, thr);
		feed(s, t);
		return;
	}
	if (r->stale || s->quitting)
		sta_close(t);
	else
		send_idle(s, t);
}

void sta_dispatch(struct sched *s)
{
	if (s->quitting)
		return;
	/* TAs that have answered everything they were given */
	for (struct sta *t = s->tas, *nx; t; t = nx) {
		nx = t->next;
		if (t->state == STA_BUSY && t->nack == 0)
			reassign(s, t);
		else if (t->state == STA_BUSY && t->thr)
			feed(s, t);
	}
	if (s->o.freeze)
		return;
	for (struct ring *r = s->rings; r; r = r->next) {
		if (r->stale)
			continue;
		/* one round over the ring's threads with ready jobs */
		struct thread *last = r->tail;
		while (r->head) {
			struct thread *thr = r->head;
			r->head = thr->rnext;
			if (!r->head)
				r->tail = NULL;
			thr->on_ring = 0;
			if (thr->nready && thr->blocked_until > s->now)
				hold_back(s, thr, NULL);
			if (thr->nready) {
				for (struct sta *t = s->tas; t; t = t->next)
					if (t->thr == thr && t->state == STA_BUSY)
						feed(s, t);
				if (thr->nready)
					staff(s, thr);
			}
			if (thr->nready)
				st_ring_append(thr); /* thr->ring is r */
			else if (!thr->refs && !thr->running) {
				thr->refs = 1;
				st_put(s, thr);
			}
			if (thr == last)
				break;
		}
	}
}

void sta_line(struct sched *s, struct sta *t, char *line, size_t len)
{
	if (len == 7 && !memcmp(line, "#hungry", 7)) {
		if (!t->nack) {
			log_msg(LOG_WARNING, NULL, "%s[%ld]: #hungry with nothing outstanding", t->argv0, (long)t->pid);
			return;
		}
		struct sta_ack a = ack_pop(s, t);
		if (a.m) {
			feedback_job_end(t);
			sq_job_done(s, a.m, a.seq, (long)t->pid, t->argv0, NULL);
		} else if (t->state == STA_STARTING)
			t->state = STA_BUSY;
		return;
	}
	struct sta_report rl;
	if (sta_report_parse(line, len, &rl) < 0) {
		log_msg(LOG_INFO, NULL, "%s[%ld]: %.*s", t->argv0, (long)t->pid, (int)(len > 512 ? 512 : len), line);
		return;
	}
	sq_result(s, (long)t->pid, t->argv0, &rl);
	feedback_report(s, t, &rl);
}

void sta_io(struct sched *s, struct sta *t)
{
	for (;;) {
		ssize_t n = read(t->fd, t->rbuf + t->rlen, STA_RBUF - t->rlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			sta_gone(s, t, n < 0 ? strerror(errno) : "exited", NULL);
			return;
		}
		t->rlen += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < t->rlen; i++) {
			if (t->rbuf[i] != '\n')
				continue;
			size_t len = i - start;
			if (len && t->rbuf[start + len - 1] == '\r')
				len--;
			t->rbuf[start + len] = 0;
			/* the tail of an overlong line is not a line of its own (it could read as a
			 * report or a #hungry that answers the wrong job) */
			if (!t->skipping)
				sta_line(s, t, t->rbuf + start, len);
			t->skipping = 0;
			start = i + 1;
		}
		if (start == 0 && t->rlen == STA_RBUF) {
			if (!t->skipping)
				log_msg(LOG_WARNING, NULL, "%s[%ld]: line longer than %d bytes dropped", t->argv0, (long)t->pid,
				        STA_RBUF);
			t->skipping = 1;
			t->rlen = 0;
		} else {
			memmove(t->rbuf, t->rbuf + start, t->rlen - start);
			t->rlen -= start;
		}
		if ((size_t)n < STA_RBUF / 2)
			return;
	}
}

void sta_close_all(struct sched *s, int graceful)
{
	for (struct sta *t = s->tas; t; t = t->next) {
		if (!graceful && t->state != STA_IDLE)
			continue;
		sta_close(t);
	}
}

void sta_free_all(struct sched *s)
{
	while (s->tas) {
		struct sta *t = s->tas;
		s->tas = t->next;
		sta_free(t);
	}
}

void sta_timers(struct sched *s)
{
	for (struct sta *t = s->tas, *nx; t; t = nx) {
		nx = t->next;
		/* a TA that never says #hungry would hold its thread forever */
		if (t->state == STA_STARTING && t->since + STA_START_MAX <= s->now) {
			log_msg(LOG_ERR, NULL, "%s[%ld] said nothing for %ds after its start: killed", t->argv0, (long)t->pid,
			        STA_START_MAX);
			ta_kill(s, t);
			t->since = s->now; /* its EOF does the rest */
		}
		if (t->state == STA_IDLE && t->since + t->idlemax <= s->now) {
			log_msg(LOG_DEBUG, NULL, "%s[%ld] idle for %llds: ended", t->argv0, (long)t->pid, s->now - t->since);
			sta_close(t);
		}
		/* a job that hangs would keep its recipients T for ever (issue 11 point 6): the TA is
		 * killed and the job's recipients are deferred with the reason */
		if (t->deadline && t->deadline <= s->now) {
			const struct sta_ack *h = &t->acks[t->ackhead];
			char why[200];
			snprintf(why, sizeof why, "transport agent %s[%ld] killed: the job ran over its time limit of %llds "
			         "(timelimit)", t->argv0, (long)t->pid, h->limit);
			log_msg(LOG_ERR, h->m->id, "%s", why);
			ta_kill(s, t);
			sta_gone(s, t, "killed (time limit)", why);
		}
	}
}

long long sta_next_timer(struct sched *s)
{
	long long next = 0;
	for (struct sta *t = s->tas; t; t = t->next) {
		long long at = t->state == STA_IDLE ? t->since + t->idlemax : t->state == STA_STARTING ? t->since + STA_START_MAX : 0;
		if (at && (!next || at < next))
			next = at;
		if (t->deadline && (!next || t->deadline < next))
			next = t->deadline;
	}
	return next;
}

void sta_reap(struct sched *s)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			continue;
		if (WIFEXITED(st))
			log_msg(LOG_NOTICE, NULL, "transport agent [%ld] exited with status %d", (long)pid, WEXITSTATUS(st));
		else if (WIFSIGNALED(st))
			log_msg(LOG_NOTICE, NULL, "transport agent [%ld] killed by signal %d", (long)pid, WTERMSIG(st));
	}
	(void)s;
}

/* Copies [p, end) into out (size bytes), truncating. */
static void cut(char *out, size_t size, const char *p, const char *end)
{
	size_t n = (size_t)(end - p);
	if (n >= size)
		n = size - 1;
	memcpy(out, p, n);
	out[n] = 0;
}

int sta_report_parse(const char *line, size_t len, struct sta_report *r)
{
	memset(r, 0, sizeof *r);
	if (len && line[len - 1] == '\n')
		len--;
	const char *end = line + len;
	if (memchr(line, 0, len))
		return -1;
	const char *slash = memchr(line, '/', len), *tab1 = memchr(line, '\t', len);
	if (!slash || !tab1 || slash > tab1 || (size_t)(slash - line) >= sizeof r->id)
		return -1;
	cut(r->id, sizeof r->id, line, slash);
	if (!spool_id_valid(r->id))
		return -1;
	long long off = 0;
	const char *p = slash + 1;
	if (p == tab1)
		return -1;
	for (; p < tab1; p++) {
		if (*p < '0' || *p > '9' || off > 999999999999LL)
			return -1;
		off = off * 10 + (*p - '0');
	}
	r->offset = off;
	const char *notary = tab1 + 1, *tab2 = memchr(notary, '\t', (size_t)(end - notary));
	if (!tab2)
		return -1;
	const char *f[6];
	int nf = 0;
	f[nf++] = notary;
	for (const char *q = notary; q < tab2 && nf < 6; q++)
		if (*q == '\001')
			f[nf++] = q + 1;
	if (nf < 5)
		return -1;
	/* the five notary fields in order: where each goes in r, and its size (a table, not five calls) */
	static const unsigned short fld[5][2] = {
		{offsetof(struct sta_report, final), sizeof r->final},   {offsetof(struct sta_report, action), sizeof r->action},
		{offsetof(struct sta_report, enh), sizeof r->enh},       {offsetof(struct sta_report, diag), sizeof r->diag},
		{offsetof(struct sta_report, remote), sizeof r->remote}};
	_Static_assert(sizeof *r < 65536, "fld[] keeps offsets in 16 bits");
	for (int i = 0; i < 5; i++)
		cut((char *)r + fld[i][0], fld[i][1], f[i], i + 1 < nf ? f[i + 1] - 1 : tab2);
	const char *st = tab2 + 1, *sp = memchr(st, ' ', (size_t)(end - st));
	const char *stend = sp ? sp : end;
	if (stend == st || (size_t)(stend - st) >= sizeof r->status)
		return -1;
	cut(r->status, sizeof r->status, st, stend);
	if (sched_outcome_of(r->status) == SO_UNKNOWN)
		return -1; /* not one of the eight statuses */
	if (sp)
		cut(r->message, sizeof r->message, sp + 1, end);
	return 0;
}
