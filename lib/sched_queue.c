/* The scheduler's in-memory queue: messages loaded from the due index (at most QUEUEHI), the
 * per-recipient state, TA reports written to the control file (A record, then the status field)
 * and made durable once per loop turn before anything acts on them, then settling: removal when
 * every recipient is done, the error channel for failures, the due link moved for the rest. */
#include "crashpoint.h"
#include "sched_int.h"
#include "qctl.h"
#include "fileio.h"
#include "glob.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TURN_FDS_MAX 64      /* control files kept open in one turn before an early sync */
#define KEPT_FDS_MAX 256     /* control files kept open between turns for the jobs out */
#define PICKUP_BATCH SPOOL_PENDING_MAX /* messages picked up between two directory syncs */
#define FOREIGN_RECHECK 2    /* seconds between looks at a TA of an earlier scheduler */
#define BADLOAD_RETRY 3600   /* a control file that cannot be read is looked at again after this */
#define NOMEM_RETRY 5        /* seconds: a message that did not fit in memory is loaded again */
#define SCAN_MISSES 1000     /* due entries in a row that displace no chosen one: the scan stops */
#define SCAN_BUF 65536       /* a refill reads the control file in pieces of this size */

/* The hash chain of message id. */
__attribute__((noinline)) static struct qmsg **bucket(struct sched *s, const char *id)
{
	return &s->hash[sched_fnv(SCHED_FNV_INIT, id) & s->hmask];
}

struct qmsg *sq_find(struct sched *s, const char *id)
{
	for (struct qmsg *m = *bucket(s, id); m; m = m->hnext)
		if (!strcmp(m->id, id))
			return m;
	return NULL;
}

static void ctl_close(struct sched *s, struct qmsg *m)
{
	if (m->fd >= 0 && spool_pending_return(&s->sp, m->fd) < 0)
		close(m->fd);
	m->fd = -1;
	if (m->kept)
		s->kept_fds--;
	m->kept = 0;
}

static void rcpt_done(struct sched *s, struct qrcpt *r)
{
	if (r->thr)
		st_put(s, r->thr);
	r->thr = NULL;
}

static void msg_free(struct sched *s, struct qmsg *m)
{
	struct qmsg **pp = bucket(s, m->id);
	while (*pp != m)
		pp = &(*pp)->hnext;
	*pp = m->hnext;
	if (m->prev)
		m->prev->next = m->next;
	else
		s->head = m->next;
	if (m->next)
		m->next->prev = m->prev;
	for (unsigned i = 0; i < m->nrcpt; i++)
		rcpt_done(s, &m->r[i]);
	srp_drop(&s->rp, m->pring ? &m->pring->rp : NULL, &m->pool, (int)m->nrcpt, 1);
	ctl_close(s, m);
	s->count--;
	free(m->r);
	free(m);
}

static void ctl_path(struct sched *s, const struct qmsg *m, char *out, size_t size)
{
	if (spool_path_ctl(&s->sp, m->id, out, size) < 0)
		str_lcpy(out, m->id, size);
}

/* One line of the statistics log (-l), the seed's new format. */
static void stat_line(struct sched *s, const struct qmsg *m, const char *state, const struct thread *t)
{
	if (s->stats_fd < 0)
		return;
	long long made = spool_id_time(m->id);
	long long dt1 = made >= 0 && m->arrival >= made ? m->arrival - made : 0;
	char line[600];
	int n = snprintf(line, sizeof line, "%s %lld %lld %s %s/%s\n", m->id, dt1, s->now - m->arrival, state, t->name,
	                 t->host);
	if (n > 0 && n < (int)sizeof line && write(s->stats_fd, line, (size_t)n) < 0)
		log_syserr(NULL, "statistics", "log", NULL);
}

/* 1 while a recipient of m is not done: in memory, or waiting on disk (a window, issue 14
 * point 5). */
static int undone(const struct qmsg *m)
{
	if (m->unread < m->nfile || m->evicted)
		return 1; /* some wait on disk */
	for (unsigned i = 0; i < m->nrcpt; i++)
		if (m->r[i].tag != RT_DELIVERED && m->r[i].tag != RT_REPORTED)
			return 1;
	return 0;
}

/* 1 when every recipient is done and no job points at m: settle() removes it this turn. */
static int finished(const struct qmsg *m)
{
	return !undone(m) && m->jobs == 0;
}

/* Makes this turn's writes durable (fdatasync, unless PARAMmsgwriteasync) and closes the files.
 * A message that is finished is not synced: its removal follows at once, and a crash that loses
 * the removal brings back its last durable state, which at worst delivers again (docs/spool.md
 * 7, D2) — the same bargain as Postfix's queue manager, and one disk flush less per message. */
static void turn_sync(struct sched *s)
{
	for (struct qmsg *m = s->turn; m; m = m->dnext) {
		if (m->fd < 0)
			continue;
		if (m->dirty && !s->conf.msgwriteasync && !finished(m) && fdatasync(m->fd) < 0)
			log_syserr(m->id, "fdatasync of the", "control file", NULL);
		crash_point("fdatasync", m->id);
		m->dirty = 0;
		/* a job is out: its report comes in a later turn and writes here (D2), so the file
		 * stays open for it instead of being opened again (issue 13 point 3) */
		if (m->kept || (m->jobs && s->kept_fds < KEPT_FDS_MAX)) {
			s->kept_fds += !m->kept;
			m->kept = 1;
			continue;
		}
		ctl_close(s, m);
	}
	s->turn_fds = 0;
}

/* The control file's descriptor, and its path in path (SPOOL_PATH_MAX bytes) for the caller's
 * messages. */
static int msg_open(struct sched *s, struct qmsg *m, char *path)
{
	ctl_path(s, m, path, SPOOL_PATH_MAX);
	if (m->fd >= 0) {
		sched_touch(s, m); /* kept from an earlier turn: this turn's writes are synced with it */
		return m->fd;
	}
	if (s->turn_fds >= TURN_FDS_MAX)
		turn_sync(s);
	/* just picked up: the file pick-up made is still open (its sync comes after the hand-out) */
	m->fd = spool_pending_lend(&s->sp, m->id);
	if (m->fd < 0)
		m->fd = openat(AT_FDCWD, path, O_RDWR | O_CLOEXEC);
	if (m->fd < 0) {
		log_syserr(m->id, "open", path, NULL);
		return -1;
	}
	s->turn_fds++;
	sched_touch(s, m);
	return m->fd;
}

static int rcpt_by_off(const struct qmsg *m, long long off)
{
	unsigned lo = 0, hi = m->nrcpt;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (m->r[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nrcpt && m->r[lo].off == off ? (int)lo : -1;
}

/* One pwrite of recipient i's status field from its in-memory state. */
static int write_status(struct sched *s, struct qmsg *m, unsigned i)
{
	char path[SPOOL_PATH_MAX];
	int fd = msg_open(s, m, path);
	if (fd < 0)
		return -1;
	struct spool_rcpt sr;
	memset(&sr, 0, sizeof sr);
	sr.tag = m->r[i].tag;
	sr.pid = m->r[i].tag == RT_TRANSIT ? m->r[i].pid : 0;
	sr.tries = m->r[i].tries;
	sr.next = m->r[i].next;
	sr.off = m->r[i].off;
	if (spool_rcpt_update(fd, &sr, path) < 0)
		return -1;
	m->dirty = 1;
	return 0;
}

static int write_attempt(struct sched *s, struct qmsg *m, unsigned i, const char *code, const char *action,
                         const char *enh, const char *remote, const char *text)
{
	char path[SPOOL_PATH_MAX];
	int fd = msg_open(s, m, path);
	if (fd < 0)
		return -1;
	struct spool_attempt a;
	memset(&a, 0, sizeof a);
	a.rcpt = (int)m->r[i].idx;
	a.time = s->now;
	str_lcpy(a.code, code, sizeof a.code);
	/* (action, enh and text are never NULL: a report's fields, or our own words) */
	str_lcpy(a.action, *action ? action : "-", sizeof a.action);
	str_lcpy(a.enh, *enh ? enh : "-", sizeof a.enh);
	a.remote = remote && *remote ? (char *)remote : NULL;
	a.text = (char *)text;
	if (spool_attempt_append_at(fd, &a, path, &m->ctl_end) < 0)
		return -1;
	m->dirty = 1;
	return 0;
}

static int record_append(struct sched *s, struct qmsg *m, const char *line)
{
	char path[SPOOL_PATH_MAX];
	int fd = msg_open(s, m, path);
	if (fd < 0 || spool_record_append_at(fd, line, path, &m->ctl_end) < 0)
		return -1;
	m->dirty = 1;
	return 0;
}

/* The error phase: a report from the error channel about a failed recipient (F), a delivered
 * one that wants a success notice (S), or a waiting one in a delay notice. A delay notice's
 * recipient is back waiting as before (its next time was kept), and the message's W record
 * follows the first final answer (the notice is durable by then; a crash before the W is synced
 * sends it again: a duplicate, never none). */
static void error_result(struct sched *s, struct qmsg *m, unsigned i, enum sched_outcome oc, const char *message)
{
	struct qrcpt *r = &m->r[i];
	int delay = r->flags & RF_DELAYQ, succ = r->flags & RF_SUCCPHASE;
	r->flags &= ~(RF_ERRPHASE | RF_OURS | RF_DELAYQ | RF_SUCCPHASE);
	r->pid = 0;
	char word[SPOOL_ID_MAX + 1];
	size_t n = 0;
	while (message[n] && message[n] != ' ' && n < sizeof word - 1)
		n++;
	memcpy(word, message, n);
	word[n] = 0;
	int final = oc == SO_DELIVERED || oc == SO_FAILED;
	int is_id = oc == SO_DELIVERED && spool_id_valid(word);
	const char *what = delay ? "delay notice" : succ ? "success notice" : "failure";
	char line[80];
	if (delay) {
		r->tag = r->tries ? RT_DEFERRED : RT_NEW;
		write_status(s, m, i);
		if (!final) {
			m->warned = WARN_LATER;
		} else if (m->warned != WARN_DONE) {
			snprintf(line, sizeof line, "W %lld", s->now);
			record_append(s, m, line);
			m->warned = WARN_DONE;
		}
	} else if (final) {
		if (is_id) {
			snprintf(line, sizeof line, "B %lld %s", s->now, word);
			record_append(s, m, line);
		}
		r->tag = succ ? RT_DELIVERED : RT_REPORTED;
		r->next = s->now;
		if (write_status(s, m, i) < 0) {
			r->tag = succ ? RT_SUCCESS : RT_FAILED;
			r->next = s->now + 60;
			return;
		}
		rcpt_done(s, r);
	} else {
		r->tag = succ ? RT_SUCCESS : RT_FAILED;
		r->next = s->now + r->thr->p.interval; /* T in the error thread */
		write_status(s, m, i);
	}
	if (final)
		log_msg(LOG_INFO, m->id, "rcpt %u: %s %s%s", r->idx, what,
		        is_id ? (delay ? "sent as " : "reported as ") : "handled: ", is_id ? word : message);
	else
		log_msg(LOG_NOTICE, m->id, "rcpt %u: the error channel could not %s the %s (%s); again %s", r->idx,
		        delay ? "send" : "report", what, message, delay ? "after the next attempt" : "later");
}

/* Applies one result to recipient i: history record, then the status field, then memory. Its
 * recipient is T, queued or being queued, so it has a thread (r->thr is NULL only once it is
 * done, D or X, and take_one() reads none in without one). */
static void apply_result(struct sched *s, struct qmsg *m, unsigned i, const char *status, const char *action,
                         const char *enh, const char *remote, const char *text, const char *message,
                         const char *final)
{
	struct qrcpt *r = &m->r[i];
	struct thread *thr = r->thr;
	enum sched_outcome oc = sched_outcome_of(status);
	if (r->flags & RF_ERRPHASE) {
		error_result(s, m, i, oc, message);
		return;
	}
	const struct sc_params *p = &thr->p;
	char newtag;
	long long next = s->now;
	switch (oc) {
	case SO_DELIVERED:
		/* a success notice is owed unless the next hop took it over (ok2: it has DSN) */
		newtag = (r->flags & RF_WANT_SUCCESS) && strcmp(status, "ok2") ? RT_SUCCESS : RT_DELIVERED;
		break;
	case SO_FAILED: newtag = RT_FAILED; break;
	case SO_RETRYAT:
		newtag = RT_DEFERRED;
		next = sched_retryat(message, s->now);
		if (next > s->now)
			break;
		if (next >= 0)
			next = s->now + 1;
		else
			next = sched_retry_next(p, r->tries, m->id, s->now);
		break;
	default:
		newtag = RT_DEFERRED;
		/* lost while stopping: most likely a job the agent did not start (it stops at the
		 * message boundary when we close its input), so due again at the next start; lost
		 * with a TA of an earlier scheduler (not ours): cut by that one's crash, due at once
		 * as when load finds it gone */
		next = oc == SO_UNKNOWN && (s->quitting || !(r->flags & RF_OURS)) ? s->now
		                                                                  : sched_retry_next(p, r->tries, m->id, s->now);
		break;
	}
	if (write_attempt(s, m, i, status, action, enh, remote, text) < 0) {
		/* not recorded: act as if the attempt had not happened (at worst a second delivery) */
		r->tag = RT_DEFERRED;
		r->flags &= ~RF_OURS;
		r->next = s->now + 60;
		return;
	}
	m->attempted = 1;
	if (m->warned == WARN_LATER)
		m->warned = WARN_NOT_YET; /* a delay notice that could not be sent: its next chance */
	m->tried = sched_tried_add(m->tried, m->seen, s->now, sched_retry_cap(p));
	m->seen = s->now;
	int expired = 0;
	if (newtag == RT_DEFERRED && sched_expired(p, m->arrival, m->tried, s->now, 1)) {
		char msg[SPOOL_TEXT_MAX + 1];
		snprintf(msg, sizeof msg, "expired: undeliverable for %llds of trying (expiry %llds); last: %s",
		         m->tried, p->expiry, *text ? text : status);
		if (write_attempt(s, m, i, "error", "failed", "4.4.7", remote, msg) == 0) {
			newtag = RT_FAILED;
			next = s->now;
			expired = 1;
		}
	}
	r->tag = newtag;
	r->pid = 0;
	r->flags &= ~RF_OURS;
	r->tries = r->tries < 9999 ? r->tries + 1 : 9999;
	r->next = next;
	/* The last recipient delivered: the removal (settle) unlinks the file this would write.
	 * A crash before it leaves T with a delivered last A record, which the restart makes D
	 * (recover_outcome): the same end, one pwrite less (docs/spool.md 7, D2). Only the last
	 * of the whole file: recipients still on disk or let go (a window, issue 14 point 5) keep
	 * the file, and a refill must find this one done. */
	if (undone(m))
		write_status(s, m, i);
	if (oc == SO_DEFERALL && newtag == RT_DEFERRED)
		st_block(s, thr, next);
	/* one log line of the outcome, then the statistics line */
	const char *fin = final && *final ? final : "", *state = "ok";
	if (!*enh)
		enh = "-";
	char tail[48] = "";
	int level = LOG_INFO;
	switch (newtag) {
	case RT_SUCCESS:
		str_lcpy(tail, "; a success notice is owed", sizeof tail);
		/* fall through */
	case RT_DELIVERED:
		s->delivered++;
		break;
	case RT_FAILED:
		s->failed++;
		level = LOG_NOTICE;
		state = "error";
		if (expired)
			status = "expired", enh = "4.4.7", state = "expiry";
		break;
	default:
		s->deferred++;
		state = NULL;
		snprintf(tail, sizeof tail, "; next attempt in %llds", next - s->now);
		break;
	}
	log_msg(level, m->id, "rcpt %u %s %s/%s: %s %s %s%s", r->idx, fin, thr->name, thr->host, status, enh, text, tail);
	if (state)
		stat_line(s, m, state, thr);
	if (newtag == RT_DELIVERED)
		rcpt_done(s, r);
	sched_touch(s, m);
}

void sq_result(struct sched *s, long pid, const char *who, const struct sta_report *rl)
{
	/* a result is never recorded before the pick-up of its message is durable (the loop syncs
	 * right after the hand-out; this is for any path that gets here first) */
	sq_pickup_sync(s);
	struct qmsg *m = sq_find(s, rl->id);
	int i = m ? rcpt_by_off(m, rl->offset) : -1;
	if (i < 0 || m->r[i].tag != RT_TRANSIT || m->r[i].pid != pid || !(m->r[i].flags & RF_OURS)) {
		log_msg(LOG_WARNING, rl->id, "%s[%ld] reported on %s/%lld, which it was not given; ignored", who, pid,
		        rl->id, rl->offset);
		return;
	}
	apply_result(s, m, (unsigned)i, rl->status, rl->action, rl->enh, rl->remote,
	             rl->diag[0] ? rl->diag : rl->message, rl->message, rl->final);
}

void sq_defer_queued(struct sched *s, struct qmsg *m, struct thread *thr, long long until, const char *why)
{
	sq_pickup_sync(s); /* as sq_result: nothing recorded before the pick-up is durable */
	char at[32];
	snprintf(at, sizeof at, "%lld", until);
	for (unsigned i = 0; i < m->nrcpt; i++)
		if (st_has(&m->r[i], thr) && (m->r[i].flags & RF_QUEUED) && !(m->r[i].flags & RF_ERRPHASE))
			apply_result(s, m, i, "retryat", "delayed", "4.4.1", NULL, why, at, NULL);
}

/* A recipient that was T and has no result: "lost", then back to Q (or F in the error phase:
 * apply_result hands "lost", SO_UNKNOWN, and why to error_result). */
static void lose(struct sched *s, struct qmsg *m, unsigned i, const char *why)
{
	s->lost++;
	apply_result(s, m, i, "lost", "delayed", "4.0.0", NULL, why, why, NULL);
}

void sq_job_done(struct sched *s, struct qmsg *m, uint16_t seq, long pid, const char *who, const char *reason)
{
	char why[200];
	if (reason)
		str_lcpy(why, reason, sizeof why);
	else
		snprintf(why, sizeof why, "transport agent %s[%ld] ended the job without a report", who, pid);
	for (unsigned i = 0; i < m->nrcpt; i++) {
		struct qrcpt *r = &m->r[i];
		if (r->tag == RT_TRANSIT && (r->flags & RF_OURS) && r->pid == pid && r->jobseq == seq)
			lose(s, m, i, why);
	}
	m->jobs--;
	sched_touch(s, m);
}

int sq_claim(struct sched *s, struct thread *thr, struct qmsg *m, long pid, uint16_t seq)
{
	unsigned n = 0;
	if (m->ctl) {
		/* held or deleted by mailq since this job was queued: it does not go out */
		for (unsigned i = 0; i < m->nrcpt; i++)
			if (m->r[i].thr == thr)
				m->r[i].flags &= (unsigned char)~RF_QUEUED;
		m->jobs--;
		sched_touch(s, m);
		/* the agent that popped this job has nothing: the next tick gives it other work */
		if (!s->mem_wake || s->mem_wake > s->now)
			s->mem_wake = s->now;
		return -1;
	}
	/* one job at a time per message and thread: a TA reads every T recipient of its pid */
	for (unsigned i = 0; i < m->nrcpt; i++)
		if (st_has(&m->r[i], thr) && m->r[i].tag == RT_TRANSIT && (m->r[i].flags & RF_OURS))
			return 0;
	unsigned char was_dirty = m->dirty;
	/* maxrcpt (Courier's MAXRCPT): at most that many per job; the rest stay queued in a job of
	 * their own behind this one. Not for the error thread: its job is the message's one report. */
	unsigned max = thr->p.maxrcpt > 0 && !thr->is_error ? (unsigned)thr->p.maxrcpt : UINT_MAX, rest = 0;
	for (unsigned i = 0; i < m->nrcpt; i++) {
		struct qrcpt *r = &m->r[i];
		if (!st_has(r, thr) || !(r->flags & RF_QUEUED))
			continue;
		if (n >= max) {
			rest++;
			continue;
		}
		char old = r->tag;
		long long oldnext = r->next;
		r->flags &= ~RF_QUEUED;
		r->tag = RT_TRANSIT;
		r->pid = pid;
		if (!(r->flags & RF_DELAYQ))
			r->next = s->now; /* a delay notice's recipient keeps its next attempt */
		r->jobseq = seq;
		if (write_status(s, m, i) < 0) {
			r->tag = old;
			r->flags &= ~RF_DELAYQ;
			r->next = oldnext > s->now + 60 ? oldnext : s->now + 60;
			continue;
		}
		r->flags |= RF_OURS | (thr->is_error ? RF_ERRPHASE : 0) | (old == RT_SUCCESS ? RF_SUCCPHASE : 0);
		n++;
	}
	/* D1 needs no sync: a T whose TA is gone is recovered at the next start */
	m->dirty = was_dirty;
	if (rest && st_enqueue(thr, m) < 0) {
		/* out of memory: they wait, and the message's next look queues them again */
		for (unsigned i = 0; i < m->nrcpt; i++)
			if (st_has(&m->r[i], thr) && m->r[i].tag != RT_TRANSIT)
				m->r[i].flags &= (unsigned char)~RF_QUEUED;
		sched_touch(s, m);
	}
	if (n == 0) { /* none was queued, or none could be written */
		m->jobs--;
		sched_touch(s, m);
		return -1;
	}
	return (int)n;
}

/* Queues recipient i into its thread's ready list (joining the message's job there, if it is the
 * newest one), or, when no clause with a command matches its channel, records that as a
 * deferral so the message does not wait silently. */
static int enqueue(struct sched *s, struct qmsg *m, unsigned i)
{
	struct qrcpt *r = &m->r[i];
	struct thread *thr = r->thr;
	if (!thr->ring) {
		char why[400];
		snprintf(why, sizeof why, "no scheduler.conf clause with a command matches %s/%s", thr->name, thr->host);
		apply_result(s, m, i, "deferred", "delayed", "4.3.5", NULL, why, why, NULL);
		return 0;
	}
	if (st_join(thr, m) < 0)
		return -1; /* out of memory: it stays waiting, and the timer looks again */
	r->flags |= RF_QUEUED;
	return 0;
}

static int only_ok(struct sched *s, const struct thread *t)
{
	if (!s->o.only)
		return 1;
	char buf[300];
	snprintf(buf, sizeof buf, "%s/%s", t->name, t->host);
	return glob_match(s->o.only, buf);
}

/* Issue 15 point 2 (docs/errormail.md "Delay notices"): one delay notice per message, through
 * the error thread like a failure report, once the message has been tried for DELAY_WARN (tried
 * time: a clock step cannot bring it early), nothing of it is in flight or queued, and some
 * waiting recipient asked for one (NOTIFY with DELAY, or absent; never for the null sender).
 * The recipients keep their delivery thread and next time (RF_DELAYQ); the W record closes it. */
static int wants_delay(const struct qrcpt *r)
{
	/* held on purpose (the hold channel) is not "still being tried": as Postfix's hold queue */
	return (r->tag == RT_NEW || r->tag == RT_DEFERRED) && (r->flags & RF_WANT_DELAY) && strcmp(r->thr->name, "hold");
}

static void delay_notice(struct sched *s, struct qmsg *m)
{
	if (!ENABLE_DSN || s->o.delay_warn <= 0 || m->warned || s->o.freeze)
		return;
	unsigned want = 0;
	long long cap = 1;
	for (unsigned i = 0; i < m->nrcpt; i++) {
		const struct qrcpt *r = &m->r[i];
		if (r->tag == RT_TRANSIT || (r->flags & RF_QUEUED))
			return; /* after the last outstanding attempt, as Courier does */
		if (wants_delay(r)) {
			want++;
			long long c = sched_retry_cap(&r->thr->p);
			if (c > cap)
				cap = c;
		}
	}
	long long tried = sched_tried_add(m->tried, m->seen, s->now, cap);
	if (!want || tried < s->o.delay_warn)
		return;
	struct thread *et = st_get(s, "error", SPOOL_ANY_HOST, 1);
	if (!et)
		return;
	if (et->ring && et->blocked_until <= s->now && st_join(et, m) == 0) {
		for (unsigned i = 0; i < m->nrcpt; i++) {
			struct qrcpt *r = &m->r[i];
			if (wants_delay(r))
				r->flags |= RF_QUEUED | RF_DELAYQ;
		}
		log_msg(LOG_INFO, m->id, "%u recipient%s still waiting after %llds of trying: delay notice", want,
		        want == 1 ? "" : "s", tried);
	}
	st_put(s, et); /* the job keeps the thread (st_put frees none with ready jobs) */
}

/* *at (0 = none) becomes the earlier of itself and t (0 = none). */
static void earliest(long long *at, long long t)
{
	if (t && (!*at || t < *at))
		*at = t;
}

/* r's thread is blocked or r's own retry time is ahead: not now, and *wake (0 = none) becomes
 * the earlier of itself and when it is. */
static int not_yet(const struct qrcpt *r, long long now, long long *wake)
{
	long long t = r->thr->blocked_until > now ? r->thr->blocked_until : r->next > now ? r->next : 0;
	earliest(wake, t);
	return t != 0;
}

void sq_activate(struct sched *s, struct qmsg *m)
{
	long long now = s->now, wake = 0;
	unsigned transit = 0, waiting = 0, queued = 0;
	int held = 0;
	if (m->ctl) {
		/* mailq asked to hold or delete it: nothing more is queued for delivery */
		m->held = 1;
		m->wake = 0;
		return;
	}
#define WAKE(t) earliest(&wake, t) /* t is never 0 */
	for (unsigned i = 0; i < m->nrcpt; i++) {
		struct qrcpt *r = &m->r[i];
		if (r->tag == RT_TRANSIT) {
			transit++;
			if (!(r->flags & RF_OURS))
				WAKE(now + FOREIGN_RECHECK);
			continue;
		}
		if (r->tag != RT_NEW && r->tag != RT_DEFERRED)
			continue;
		waiting++;
		if (r->flags & RF_QUEUED) {
			queued++;
			continue;
		}
		if (not_yet(r, now, &wake))
			continue;
		if (r->thr->p.queueonly && r->thr->kicked_until <= now) {
			/* runs only when asked (trigger Q or R<domain>, the ETRN of the seed) */
			WAKE(now + 86400);
			continue;
		}
		if (s->o.freeze || !only_ok(s, r->thr)) {
			held = 1; /* -F or -p: not ours to run, and not ours to reschedule */
			WAKE(now + 3600);
			continue;
		}
		if (enqueue(s, m, i) < 0)
			WAKE(now + 1);
		queued += (r->flags & RF_QUEUED) != 0;
		if (r->tag == RT_DEFERRED && r->next > now)
			WAKE(r->next);
	}
	/* every delivery is over: the failures go to the error channel; with
	 * PARAMglobal-report-interval, failures older than that go early. Success notices (S) wait
	 * only for what is in flight or due now, not for retries: one notice for the deliveries of
	 * one round, not one after days. */
	long long early = s->conf.report_interval;
	{
		for (unsigned i = 0; i < m->nrcpt; i++) {
			struct qrcpt *r = &m->r[i];
			if ((r->tag != RT_FAILED && r->tag != RT_SUCCESS) || (r->flags & RF_QUEUED))
				continue;
			if (r->tag == RT_SUCCESS ? transit || queued
			                         : (transit || waiting) && (early <= 0 || (!r->thr->is_error && r->next + early > now))) {
				if (r->tag == RT_FAILED && early > 0)
					WAKE(r->next + early);
				continue;
			}
			if (!r->thr->is_error) {
				/* one error thread for every host: all failures of a message are one job, so
				 * one report (docs/scheduler.md "The error channel") */
				struct thread *et = st_get(s, "error", SPOOL_ANY_HOST, 1);
				if (!et)
					continue;
				st_put(s, r->thr);
				r->thr = et;
			}
			if (not_yet(r, now, &wake))
				continue;
			if (s->o.freeze) {
				held = 1;
				WAKE(now + 3600);
				continue;
			}
			if (enqueue(s, m, i) < 0)
				WAKE(now + 1);
		}
	}
#undef WAKE
	if (!transit && !queued)
		delay_notice(s, m);
	m->held = (unsigned char)held;
	m->wake = wake;
	earliest(&s->mem_wake, wake);
}

static void window(struct sched *s, struct qmsg *m);

/* After results (or a load): remove, hand on, or put back on disk. */
static void settle(struct sched *s, struct qmsg *m)
{
	window(s, m);
	unsigned transit = 0;
	for (unsigned i = 0; i < m->nrcpt; i++)
		transit += m->r[i].tag == RT_TRANSIT;
	if (!m->nrcpt && m->unread >= m->nfile && !m->evicted) {
		if (m->jobs)
			return; /* an ack still points here */
		/* Postfix's "ID: removed": every recipient is done (docs/logging.md) */
		log_msg(LOG_INFO, m->id, "removed");
		spool_remove(&s->sp, m->id, m->due);
		msg_free(s, m);
		return;
	}
	sq_activate(s, m);
	/* recipients on disk: read when room comes, or on a new pass at the earliest retry let go */
	long long w = m->unread < m->nfile ? s->now + (m->pring ? m->pring->refill_delay : 5) : m->evicted;
	earliest(&m->wake, w);
	earliest(&s->mem_wake, m->wake);
	if (!m->jobs && m->kept)
		ctl_close(s, m); /* kept for a job (turn_sync), and none points here now */
	if (m->jobs || transit)
		return;
	if (m->ctl && m->fd < 0) {
		/* mailq's hold or delete, now that nothing of the message is out (docs/spool.md 12) */
		enum qctl_action a = (enum qctl_action)(m->ctl - 1);
		m->ctl = 0;
		if (qctl_apply_at(&s->sp, a, m->id, m->due, s->now) < 0) {
			log_msg(LOG_ERR, m->id, "%s asked by mailq failed: it stays queued", qctl_name(a));
			sched_touch(s, m);
			return;
		}
		log_msg(LOG_NOTICE, m->id, "%s, as mailq asked", a == QA_HOLD ? "held" : "deleted");
		msg_free(s, m);
		return;
	}
	/* nothing ready now: the due link moves to the earliest next attempt */
	long long due = m->wake;
	if (!due || m->held)
		return;
	if (due != m->due) {
		if (spool_due_move(&s->sp, m->id, m->due, due) < 0)
			return; /* the link still says the old time: wait here, with the timer, not on disk */
		m->due = due;
	}
	if (s->count > s->o.queuelo && m->fd < 0 && !m->in_turn) {
		earliest(&s->disk_next, m->due); /* not 0 */
		msg_free(s, m);
	}
}

void sq_flush(struct sched *s)
{
	for (int rounds = 0; s->turn && rounds < 8; rounds++) {
		turn_sync(s);
		struct qmsg *list = s->turn;
		s->turn = NULL;
		while (list) {
			struct qmsg *m = list;
			list = m->dnext;
			m->in_turn = 0;
			settle(s, m);
		}
	}
	turn_sync(s);
}

/* Reads /proc/PID/WHAT into buf (512 bytes, NUL-terminated when n > 0): n, or -2 when it cannot
 * be opened. */
static ssize_t proc_read(long pid, const char *what, char *buf)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", pid, what);
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	ssize_t n = read(fd, buf, 511);
	close(fd);
	if (n > 0)
		buf[n] = 0;
	return n;
}

/* 1 when pid is alive and looks like a transport agent (argv names a command of ours). */
static int pid_is_ta(struct sched *s, long pid)
{
	if (pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno != EPERM))
		return 0;
	char buf[512];
	ssize_t n = proc_read(pid, "stat", buf);
	if (n == -2)
		return 1; /* no /proc: assume it is one, and wait */
	if (n > 0) {
		const char *rp = strrchr(buf, ')');
		if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))
			return 0;
	}
	n = proc_read(pid, "cmdline", buf);
	if (n <= 0)
		return 0;
	/* argv[0] and argv[1] (an interpreter's script) against every command's program */
	const char *a[2] = {buf, buf + strlen(buf) + 1};
	for (int k = 0; k < 2; k++) {
		if (a[k] >= buf + n)
			break;
		const char *base = strrchr(a[k], '/');
		base = base ? base + 1 : a[k];
		for (const char *ap = "local\0smtp\0errormail\0hold\0"; *ap; ap += strlen(ap) + 1)
			if (!strcmp(base, ap))
				return 1;
		for (size_t i = 0; i < s->conf.n; i++) {
			const char *c = s->conf.cl[i].p.command;
			if (!c)
				continue;
			char cb[SC_VALUE_MAX * 2];
			char *argv[SC_ARGV_MAX + 1], *env[SC_ARGV_MAX + 1];
			if (sc_command_split(c, "-", "-", "-", cb, sizeof cb, argv, env) > 0) {
				const char *cbase = strrchr(argv[0], '/');
				if (!strcmp(cbase ? cbase + 1 : argv[0], base))
					return 1;
			}
		}
	}
	return 0;
}

/* A T recipient whose TA of an earlier scheduler is gone, with last its last outcome on record
 * ('F', 'D' or 0, last_outcome): a failure or a delivery on record was with the error channel
 * (or the crash came between the attempt record and the status), so the failure report or the
 * success notice is owed again, never the delivery. 0: nothing on record, the caller counts the
 * attempt lost (at least once: back to the queue). */
static int recover_outcome(struct sched *s, struct qmsg *m, unsigned i, char last)
{
	struct qrcpt *r = &m->r[i];
	if (last != 'F' && last != 'D')
		return 0;
	r->pid = 0;
	r->jobseq = 0;
	r->next = s->now;
	/* a delivery owes a success notice only to a sender who asked for one */
	r->tag = last == 'F' ? RT_FAILED : (r->flags & RF_WANT_SUCCESS) ? RT_SUCCESS : RT_DELIVERED;
	write_status(s, m, i);
	if (r->tag == RT_DELIVERED)
		rcpt_done(s, r);
	sched_touch(s, m);
	return 1;
}

#define FOREIGN_WHY 120

/* Recipient i is T with a TA of an earlier scheduler (its jobseq: the last outcome on record, as
 * take() found it): 1 when that TA is gone and nothing is on record, with the reason in why
 * (FOREIGN_WHY bytes) for the caller to count the attempt lost; 0 when the TA lives, or its
 * outcome was recovered. */
static int foreign_lost(struct sched *s, struct qmsg *m, unsigned i, char *why)
{
	struct qrcpt *r = &m->r[i];
	if (pid_is_ta(s, r->pid) || recover_outcome(s, m, i, (char)r->jobseq))
		return 0;
	snprintf(why, FOREIGN_WHY, "transport agent [%ld] of an earlier scheduler ended without a report", r->pid);
	return 1;
}

/* 1 while a message in memory has a recipient in transit with a TA of an earlier scheduler: a
 * one-shot run waits for it (sq_timer_pass looks again) instead of leaving the message behind. */
int sq_foreign_transit(const struct sched *s)
{
	for (const struct qmsg *m = s->head; m; m = m->next)
		for (unsigned i = 0; i < m->nrcpt; i++)
			if (m->r[i].tag == RT_TRANSIT && !(m->r[i].flags & RF_OURS))
				return 1;
	return 0;
}

void sq_timer_pass(struct sched *s)
{
	if (!s->mem_wake || s->now < s->mem_wake)
		return;
	s->mem_wake = 0;
	for (struct qmsg *m = s->head, *nx; m; m = nx) {
		nx = m->next;
		if (!m->wake || m->wake > s->now) {
			earliest(&s->mem_wake, m->wake);
			continue;
		}
		m->wake = 0;
		for (unsigned i = 0; i < m->nrcpt; i++) {
			struct qrcpt *r = &m->r[i];
			char why[FOREIGN_WHY];
			if (r->tag == RT_TRANSIT && !(r->flags & RF_OURS) && foreign_lost(s, m, i, why))
				lose(s, m, i, why);
		}
		sched_touch(s, m);
	}
}

/* What the last attempt record of recipient i says: 'F' failed for good, 'D' delivered, 0
 * anything else (or none). */
/* The outcome an A record's status word left on record for a T recipient: 'F', 'D' or 0. */
__attribute__((noinline)) static char outcome_letter(const char *code)
{
	enum sched_outcome oc = sched_outcome_of(code);
	return oc == SO_FAILED ? 'F' : oc == SO_DELIVERED ? 'D' : 0;
}

static char last_outcome(const struct spool_msg *sm, unsigned i)
{
	for (size_t k = sm->natt; k-- > 0;)
		if (sm->att[k].rcpt == (int)i)
			return outcome_letter(sm->att[k].code);
	return 0;
}

/* 0 when the message file exists (P3), else -1: a due link to a message still in incoming/
 * is a pick-up cut short by a crash (P2), for sq_pickup to finish, never for a TA. */
static int msg_file_present(struct sched *s, const char *id)
{
	char path[SPOOL_PATH_MAX];
	if (spool_path_msg(&s->sp, id, path, sizeof path) < 0)
		return -1;
	if (access(path, F_OK) == 0)
		return 0;
	if (spool_path_incoming(&s->sp, id, path, sizeof path) == 0 && access(path, F_OK) == 0) {
		log_msg(LOG_NOTICE, id, "due but still in incoming/ (an interrupted pick-up): picked up first");
		s->incoming_more = 1;
	} else {
		log_msg(LOG_ERR, id, "control file without a message file; looked at again in %ds", BADLOAD_RETRY);
	}
	return -1;
}

static int load_msg(struct sched *s, const char *id, long long due, struct spool_msg *sm, int fd);

/* A message that could not be loaded now: its due link moves `secs` ahead, and the due index is
 * read again then. */
static void look_later(struct sched *s, const char *id, long long due, long long secs)
{
	s->stuck++;
	if (due > 0 && spool_due_move(&s->sp, id, due, s->now + secs) == 0)
		earliest(&s->disk_next, s->now + secs);
}

/* The same for a message that could not be loaded, said why (what, then detail) at LOG_ERR. */
static void not_now(struct sched *s, const char *id, long long due, int secs, const char *what, const char *detail)
{
	log_msg(LOG_ERR, id, "%s%s; looked at again in %ds", what, detail, secs);
	look_later(s, id, due, secs);
}

/* Loads message id into memory. given != NULL: its envelope as pick-up just wrote it (taken
 * over, the control file is not read back); else the control file is read. */
static int load(struct sched *s, const char *id, long long due, struct spool_msg *given)
{
	struct spool_msg sm;
	int fd = -1;
	char err[256];
	if (given) {
		/* taken over: load_msg frees it (spool_msg_free leaves it empty for the caller's) */
		off_t end = given->env_end; /* the new control file is the envelope block, no more */
		if (load_msg(s, id, due, given, fd) < 0)
			return -1;
		struct qmsg *m = sq_find(s, id);
		if (m && m->fd < 0) {
			m->ctl_end = end;
			/* the file pick-up just made stays open for the hand-out and the report, while
			 * few enough are (turn_sync keeps it as long as a job points here) */
			if (s->kept_fds < KEPT_FDS_MAX && (m->fd = spool_pending_lend(&s->sp, id)) >= 0) {
				m->kept = 1;
				s->kept_fds++;
			}
		}
		return 0;
	}
	memset(&sm, 0, sizeof sm);
	if (msg_file_present(s, id) < 0) {
		if (!s->incoming_more)
			look_later(s, id, due, BADLOAD_RETRY);
		return -1;
	}
	int lr = spool_ctl_load(&s->sp, id, 0, &sm, &fd, err, sizeof err);
	if (lr < 0 && errno == ENOMEM) {
		/* memory, not damage: soon again, and never rebuilt */
		not_now(s, id, due, NOMEM_RETRY, "out of memory loading the control file", "");
		return -1;
	}
	if (lr < 0) {
		/* docs/spool.md 3: a damaged control file is rebuilt from the message file */
		char why[256];
		if (!s->o.freeze && spool_ctl_rebuild(&s->sp, id, why, sizeof why) == 0) {
			log_msg(LOG_WARNING, id, "damaged control file (%s) rebuilt from the message file; its delivery "
			        "history is lost", err);
			lr = spool_ctl_load(&s->sp, id, 0, &sm, &fd, err, sizeof err);
		}
	}
	if (lr < 0) {
		not_now(s, id, due, BADLOAD_RETRY, "cannot load the control file: ", err);
		return -1;
	}
	return load_msg(s, id, due, &sm, fd);
}

/* Trigger Q or R<domain> (the seed's ETRN): recipient r, when waiting, is due now. */
static int kick(struct sched *s, struct qrcpt *r, const char *domain)
{
	if ((r->tag != RT_NEW && r->tag != RT_DEFERRED) || (domain && !sc_domain_match(r->thr->host, domain)))
		return 0;
	r->next = s->now;
	r->thr->blocked_until = 0;
	r->thr->kicked_until = s->now + 600;
	return 1;
}

/* The state of recipient i, just read: the due time, a clock that went
 * back, a TA of an earlier scheduler that is gone, expiry without an attempt. */
static void rcpt_state(struct sched *s, struct qmsg *m, unsigned i, long long due)
{
	struct qrcpt *r = &m->r[i];
	/* the due link says when the message is next looked at; a message loaded before that
	 * (trigger Q/R) keeps its recipients waiting unless the trigger chose them */
	if (r->tag == RT_NEW || r->tag == RT_DEFERRED) {
		if (due > r->next)
			r->next = due;
		/* a clock stepped back leaves next times far ahead: never wait longer than planned */
		long long at = s->now + sched_retry_cap(&r->thr->p);
		if (r->next > at)
			r->next = at;
	}
	char why[160];
	if (r->tag == RT_TRANSIT) {
		if (foreign_lost(s, m, i, why)) {
			s->lost++;
			write_attempt(s, m, i, "lost", "delayed", "4.0.0", NULL, why);
			r->tag = RT_DEFERRED;
			r->next = s->now;
			r->tries = r->tries < 9999 ? r->tries + 1 : 9999;
			write_status(s, m, i);
			log_msg(LOG_NOTICE, m->id, "rcpt %u: %s", r->idx, why);
		}
	} else if ((r->tag == RT_NEW || r->tag == RT_DEFERRED) && sched_expired(&r->thr->p, m->arrival, m->tried, s->now, 0)) {
		snprintf(why, sizeof why, "expired: undeliverable for %llds (expiry %llds + expiry2 %llds)",
		         s->now - m->arrival, r->thr->p.expiry, r->thr->p.expiry2);
		if (write_attempt(s, m, i, "error", "failed", "4.4.7", NULL, why) == 0) {
			r->tag = RT_FAILED;
			r->next = s->now;
			write_status(s, m, i);
			stat_line(s, m, "expiry", r->thr);
			log_msg(LOG_NOTICE, m->id, "rcpt %u %s/%s: %s", r->idx, r->thr->name, r->thr->host, why);
		}
	}
}

static int off_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct qrcpt *)a)->off, y = ((const struct qrcpt *)b)->off;
	return (x > y) - (x < y);
}

static struct srp_ring *pool_of(const struct qmsg *m)
{
	return m->pring ? &m->pring->rp : NULL;
}

/* How many more recipients m may read in (srp_room for its pools; noinline: one copy for three). */
__attribute__((noinline)) static long room(struct sched *s, struct qmsg *m)
{
	return srp_room(&s->rp, pool_of(m), &m->pool);
}

/* 1 when m is its pool ring's owner: no older message of the ring has recipients on disk. */
static int pool_owner(const struct sched *s, const struct qmsg *m)
{
	for (const struct qmsg *o = s->head; o; o = o->next)
		if (o != m && o->pring == m->pring && o->unread < o->nfile &&
		    (o->arrival < m->arrival || (o->arrival == m->arrival && strcmp(o->id, m->id) < 0)))
			return 0;
	return 1;
}

/* 1 when m's job in its pool ring preempted the job in front of which it runs (seed 004). */
static int pool_preempting(const struct qmsg *m)
{
	for (const struct spr_job *j = m->pring->pl.head; j; j = j->next)
		if (j->key == m)
			return j->level > 0;
	return 0;
}

/* A recipient record as a batch reads it: from the parsed control file at a first load, or
 * from the file's text at a refill (scan). */
struct rrec {
	unsigned idx;
	uint32_t off;
	char tag;
	long pid;
	long long tries, next;
	const char *channel, *host;
	unsigned notify;
};

/* The batch being read into m: r[from .. from + n) are new, room were allocated; seen: the
 * number of the next r record a scan meets; env: a scan is in the envelope block. */
struct batch {
	struct sched *s;
	struct qmsg *m;
	unsigned from, n, seen;
	long room;
	int full, oom, env, transit;
};

/* The notices recipient r wants (NOTIFY), never for the null sender (DSNs, postmaster notices). */
static void notices(const struct qmsg *m, struct qrcpt *r, unsigned notify)
{
	if (!ENABLE_DSN || !m->notices || (notify & NOTIFY_NEVER))
		return;
	if (notify & NOTIFY_SUCCESS)
		r->flags |= RF_WANT_SUCCESS;
	if (!notify || (notify & NOTIFY_DELAY))
		r->flags |= RF_WANT_DELAY; /* RFC 3461 4.1: absent NOTIFY, DELAY is ours to give */
}

/* Record x into the batch when it is in the window, not done, not in memory already (a new
 * pass) and there is room. Returns 1 when the batch is full (its reading stops there). */
static int take_one(struct batch *b, const struct rrec *x)
{
	struct sched *s = b->s;
	struct qmsg *m = b->m;
	if (x->idx < m->unread)
		return 0;
	if ((long)b->n >= b->room || room(s, m) <= 0) {
		m->unread_off = x->off; /* where the next refill begins to read */
		return b->full = 1;
	}
	m->unread = x->idx + 1;
	if (x->tag == RT_DELIVERED || x->tag == RT_REPORTED || rcpt_by_off(m, x->off) >= 0)
		return 0;
	struct qrcpt *r = &m->r[b->from + b->n];
	memset(r, 0, sizeof *r);
	/* every thread first: a recipient without one must not look done */
	r->thr = st_get(s, x->channel, x->host, 0);
	if (!r->thr) {
		m->unread = x->idx;
		m->unread_off = x->off;
		return b->full = b->oom = 1;
	}
	/* one at a time: the first one names the pool ring, whose bound then applies */
	if (!m->pring)
		m->pring = r->thr->ring;
	srp_add(&s->rp, pool_of(m), &m->pool, 1);
	r->idx = x->idx;
	r->off = x->off;
	r->tag = x->tag;
	r->tries = (uint16_t)(x->tries > 9999 ? 9999 : x->tries);
	r->next = x->next;
	r->pid = x->pid;
	notices(m, r, x->notify);
	b->transit |= r->tag == RT_TRANSIT;
	b->n++;
	return 0;
}

/* The new recipient numbered idx, or NULL. */
static struct qrcpt *batch_find(struct batch *b, unsigned idx)
{
	for (unsigned k = b->n; k-- > 0;)
		if (b->m->r[b->from + k].idx == idx)
			return &b->m->r[b->from + k];
	return NULL;
}

/* One line of a control file as a refill reads it (sched_int.h): cut into at most nine words in
 * place; in the envelope (env) the end ".", an r record with its numbers checked, an N line;
 * after it, an A record (a recipient's attempt, its index checked). */
int sq_refill_line(char *line, int env, struct refill_line *l)
{
	char *w[9];
	int nw = 0;
	for (char *p = line; *p && nw < 9; nw++) {
		w[nw] = p;
		p += strcspn(p, " ");
		if (*p)
			*p++ = 0;
	}
	if (env && nw == 1 && !strcmp(w[0], "."))
		return RL_END;
	if (env && nw == 9 && !strcmp(w[0], "r")) {
		l->tag = w[1][0];
		l->channel = w[5];
		l->host = w[6];
		return parse_count(w[2], 9999999999LL, &l->pid) || parse_count(w[3], 9999, &l->tries) ||
		               parse_count(w[4], 9999999999LL, &l->next)
		           ? RL_RCPT_BAD
		           : RL_RCPT;
	}
	if (env && nw == 2 && !strcmp(w[0], "N")) {
		l->word = w[1];
		return RL_NOTIFY;
	}
	if (!env && nw >= 4 && !strcmp(w[0], "A") && !parse_count(w[1], SPOOL_RCPT_MAX, &l->idx)) {
		l->word = w[3];
		return RL_ATTEMPT;
	}
	return RL_NONE;
}

/* One line of a refill's reading of the control file (ours, and parsed whole at the first
 * load), at offset off: the r records of the window with the N after each, then, when a new one
 * is T, the last A record of each (the outcome a TA of an earlier scheduler left on record).
 * Returns 1 when nothing more is needed. */
static int scan_line(struct batch *b, char *line, off_t off)
{
	struct refill_line l;
	struct qrcpt *r;
	switch (sq_refill_line(line, b->env, &l)) {
	case RL_END:
		b->env = 0;
		return !b->transit;
	case RL_RCPT_BAD:
		b->seen++; /* counted, as every r record is */
		break;
	case RL_RCPT: {
		struct rrec x = {b->seen++, (uint32_t)off, l.tag, (long)l.pid, l.tries, l.next, l.channel, l.host, 0};
		if (b->full)
			break;
		take_one(b, &x);
		break;
	}
	case RL_NOTIFY:
		if (b->seen && (r = batch_find(b, b->seen - 1))) {
			/* the letters S, F, D (or N, never) as spool_fmt.c writes them */
			const char *w = l.word;
			unsigned notify = strchr(w, 'N') ? NOTIFY_NEVER : (strchr(w, 'S') ? NOTIFY_SUCCESS : 0) |
			                  (strchr(w, 'F') ? NOTIFY_FAILURE : 0) | (strchr(w, 'D') ? NOTIFY_DELAY : 0);
			r->flags &= (unsigned char)~(RF_WANT_SUCCESS | RF_WANT_DELAY);
			notices(b->m, r, notify);
		}
		break;
	case RL_ATTEMPT:
		if ((r = batch_find(b, (unsigned)l.idx)) && r->tag == RT_TRANSIT)
			r->jobseq = (unsigned char)outcome_letter(l.word);
	}
	return 0;
}

/* A refill: m's control file read from where its window stopped (m->unread_off) in pieces of
 * SCAN_BUF, each complete line to scan_line (a last line without its end is a torn append, not a
 * record: docs/spool.md 4.3). Memory: one piece, whatever the size of the file. */
static int scan(struct batch *b)
{
	char path[SPOOL_PATH_MAX];
	ctl_path(b->s, b->m, path, sizeof path);
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	char *buf = fd < 0 ? NULL : malloc(SCAN_BUF);
	int mid = b->m->unread && b->m->unread_off; /* else from the start, skipping what was read */
	off_t base = mid ? b->m->unread_off : 0;
	size_t have = 0;
	b->seen = mid ? b->m->unread : 0;
	ssize_t n = buf ? 1 : -1;
	while (n > 0 && (n = pread(fd, buf + have, SCAN_BUF - have, base + (off_t)have)) > 0) {
		have += (size_t)n;
		size_t pos = 0;
		for (char *nl; (nl = memchr(buf + pos, '\n', have - pos)); pos = (size_t)(nl - buf) + 1) {
			*nl = 0;
			if (scan_line(b, buf + pos, base + (off_t)pos))
				n = 0;
			if (!n)
				break;
		}
		if (!pos && have == SCAN_BUF)
			n = -1; /* a line longer than a piece: not ours (SPOOL_LINE_MAX) */
		memmove(buf, buf + pos, have - pos);
		base += (off_t)pos;
		have -= pos;
	}
	if (n < 0)
		log_msg(LOG_ERR, b->m->id, "%s: cannot read the next recipients", path);
	free(buf);
	if (fd >= 0)
		close(fd);
	return n < 0 ? -1 : 0;
}

/* The next batch of m's recipients, as many as its pools allow (issue 14 point 5), in file
 * order from m->unread: from sm, the parsed control file of a first load (its age for expiry
 * comes from sm's history), or else from the file read again (scan). Done ones are skipped, and
 * so are those already in memory (a new pass over the file). Returns how many came in, -1 when
 * none could for want of memory. */
static int take(struct sched *s, struct qmsg *m, const struct spool_msg *sm)
{
	if (m->pring && !m->pool.first)
		srp_grant(&m->pring->rp, &m->pool, pool_owner(s, m), pool_preempting(m));
	struct batch b = {s, m, m->nrcpt, 0, 0, room(s, m), 0, 0, 1, 0};
	if (b.room > (long)(m->nfile - m->unread))
		b.room = (long)(m->nfile - m->unread);
	if (b.room <= 0)
		return 0;
	struct qrcpt *nr = realloc(m->r, (b.from + (size_t)b.room) * sizeof *nr);
	if (!nr)
		return -1;
	m->r = nr;
	s->rp.refills += !sm; /* a read of the control file again (counted for the simulator) */
	if (!sm && scan(&b) < 0)
		return 0; /* logged; the timer looks again */
	for (size_t i = 0; sm && i < sm->nrcpt && !b.full; i++) {
		const struct spool_rcpt *sr = &sm->rcpt[i];
		struct rrec x = {(unsigned)i, (uint32_t)sr->off, sr->tag, sr->pid, sr->tries, sr->next, sr->channel, sr->host,
		                 sr->notify};
		take_one(&b, &x);
	}
	if (b.oom && !b.n)
		return -1; /* out of memory for the thread: m->unread stays, the timer looks again */
	if (sm) {
		/* the age for expiry from the history: arrival, then every attempt in the order written
		 * (the real order, whatever the clock said), each gap capped by the longest planned wait */
		long long cap = 1;
		for (unsigned k = 0; k < b.n; k++) {
			long long c = sched_retry_cap(&m->r[k].thr->p);
			if (c > cap)
				cap = c;
		}
		m->seen = sm->arrival;
		for (size_t k = 0; k < sm->natt; k++) {
			m->tried = sched_tried_add(m->tried, m->seen, sm->att[k].time, cap);
			m->seen = sm->att[k].time;
		}
	}
	if (m->unread < m->nfile && !b.full)
		m->unread = m->nfile; /* the rest were done */
	m->pool.first = 0;
	m->refilled = s->now;
	m->nrcpt = b.from + b.n;
	for (unsigned k = b.from; k < m->nrcpt; k++) {
		if (sm && m->r[k].tag == RT_TRANSIT)
			m->r[k].jobseq = (unsigned char)last_outcome(sm, m->r[k].idx); /* for rcpt_state */
		rcpt_state(s, m, k, sm ? m->due : 0); /* a refill: the due link is the window's own timer */
		if (m->kick)
			kick(s, &m->r[k], m->kick == 2 ? s->runall_dom : NULL);
	}
	if (m->unread >= m->nfile)
		m->kick = 0; /* the run has seen every recipient */
	/* a new pass read ones before those kept in memory: r[] is kept in file order */
	if (b.from && b.n && m->r[b.from].off < m->r[b.from - 1].off)
		qsort(m->r, m->nrcpt, sizeof *m->r, off_cmp);
	sched_touch(s, m);
	return (int)b.n;
}

/* The in-memory message from its parsed control file sm (freed here, and fd closed): its first
 * batch of recipients. */
static int load_msg(struct sched *s, const char *id, long long due, struct spool_msg *sm, int fd)
{
	struct qmsg *m = NULL;
	if (sm->nrcpt == 0 || sm->nrcpt > SPOOL_RCPT_MAX) {
		log_msg(LOG_ERR, id, "control file with %zu recipients; looked at again in %ds", sm->nrcpt, BADLOAD_RETRY);
		spool_msg_free(sm);
		if (fd >= 0)
			close(fd);
		look_later(s, id, due, BADLOAD_RETRY);
		return -1;
	}
	m = calloc(1, sizeof *m);
	if (!m)
		goto nomem;
	str_lcpy(m->id, id, sizeof m->id);
	m->nfile = (unsigned)sm->nrcpt;
	m->pool.first = 1;
	m->arrival = sm->arrival;
	m->warned = sm->warned > 0 ? WARN_DONE : WARN_NOT_YET;
	m->due = due;
	m->fd = -1;
	struct qmsg **b = bucket(s, id);
	m->hnext = *b;
	*b = m;
	m->next = s->head;
	if (s->head)
		s->head->prev = m;
	s->head = m;
	s->count++;
	m->notices = sm->sender && *sm->sender;
	if (take(s, m, sm) < 0) {
		msg_free(s, m);
		goto nomem;
	}
	/* Postfix's qmgr line: the message is in memory (active); log summarisers take its size
	 * and sender from it, once per id */
	log_msg_as("spoolbox/qmgr", LOG_INFO, id, "from=<%s>, size=%lld, nrcpt=%zu (queue active)",
	           sm->sender ? sm->sender : "", sm->size, sm->nrcpt);
	spool_msg_free(sm);
	if (fd >= 0)
		close(fd);
	sched_touch(s, m);
	return 0;
nomem:
	spool_msg_free(sm);
	if (fd >= 0)
		close(fd);
	not_now(s, id, due, NOMEM_RETRY, "out of memory loading the message", "");
	return -1;
}

/* Recipients of m that are done leave memory, and, while more are on disk, so do the waiting
 * ones (their state is on disk, the earliest next attempt in m->evicted): the window moves on.
 * Then the next batch is read when it is worth a read of the control file: recipient_refill_limit
 * of room, recipient_refill_delay since the last, or nothing of m in memory being worked on.
 * A batch of only later retries moves on to the next (docs/scheduler.md "Recipients in memory"). */
static void window(struct sched *s, struct qmsg *m)
{
	for (int rounds = 0; rounds < 1000; rounds++) {
		int more = m->unread < m->nfile, busy = 0;
		unsigned k = 0, gone = 0;
		for (unsigned i = 0; i < m->nrcpt; i++) {
			struct qrcpt *r = &m->r[i];
			int idle = more && (r->tag == RT_NEW || r->tag == RT_DEFERRED) &&
			           !(r->flags & (RF_QUEUED | RF_DELAYQ | RF_OURS)) && r->next > s->now;
			if (idle && (!m->evicted || r->next < m->evicted))
				m->evicted = r->next;
			if (idle || r->tag == RT_DELIVERED || r->tag == RT_REPORTED) {
				rcpt_done(s, r);
				gone++;
				continue;
			}
			busy |= r->tag == RT_TRANSIT || (r->flags & RF_QUEUED);
			m->r[k++] = *r;
		}
		m->nrcpt = k;
		srp_drop(&s->rp, pool_of(m), &m->pool, (int)gone, !more);
		struct qrcpt *t = gone ? realloc(m->r, (k ? k : 1) * sizeof *t) : NULL;
		if (t)
			m->r = t; /* memory for what it holds now, not for its largest batch */
		if (!more && m->evicted && m->evicted <= s->now) {
			m->unread = m->unread_off = 0; /* a new pass over the file for the retries let go */
			m->evicted = 0;
		}
		if (m->unread >= m->nfile || m->ctl)
			return;
		const struct ring *pr = m->pring;
		if (busy && pr && room(s, m) < pr->refill_limit &&
		    s->now - m->refilled < pr->refill_delay)
			return;
		int n = take(s, m, NULL);
		if (n <= 0)
			return;
		sq_activate(s, m);
		for (unsigned i = 0; i < m->nrcpt && !busy; i++)
			busy = m->r[i].tag == RT_TRANSIT || (m->r[i].flags & RF_QUEUED);
		if (busy)
			return;
	}
}

int sq_load(struct sched *s, const char *id, long long due)
{
	return load(s, id, due, NULL);
}

struct pick {
	char (*ids)[SPOOL_ID_MAX];
	long long *arrival;
	unsigned n, cap;
};

static int pick_one(void *ctx, const char *id, long long t)
{
	struct pick *p = ctx;
	(void)t;
	if (!spool_id_valid(id))
		return 0;
	str_lcpy(p->ids[p->n], id, SPOOL_ID_MAX);
	return ++p->n >= p->cap;
}

static int still_incoming(struct sched *s, const char *id)
{
	char path[SPOOL_PATH_MAX];
	return spool_path_incoming(&s->sp, id, path, sizeof path) == 0 && access(path, F_OK) == 0;
}

void sq_pickup_sync(struct sched *s)
{
	if (s->sp.npending || s->sp.dirty_queue || s->sp.dirty_incoming)
		spool_sync_dirty(&s->sp);
}

int sq_pickup(struct sched *s)
{
	struct pick p = {0};
	p.cap = PICKUP_BATCH;
	if (s->o.newents_max > 0 && s->o.newents_max < (long)p.cap)
		p.cap = (unsigned)s->o.newents_max;
	/* the ids and their arrival times in one allocation (an id's 32 bytes keep the times aligned) */
	_Static_assert(SPOOL_ID_MAX % sizeof(long long) == 0, "p.arrival aligned behind p.ids");
	p.ids = malloc(p.cap * (sizeof *p.ids + sizeof *p.arrival));
	if (!p.ids) {
		log_msg(LOG_ERR, NULL, "out of memory picking up new mail; tried again later");
		return -1;
	}
	p.arrival = (long long *)(p.ids + p.cap);
	/* the parsed envelopes go straight to load (issue 9 point 7); without memory for them,
	 * load reads the control files instead */
	struct spool_msg *env = calloc(p.cap, sizeof *env);
	/* P1-P3 without waiting for the disk: the fsyncs come after this turn's jobs went out
	 * (sq_pickup_sync), so the first delivery attempt does not wait for them (issue 13 point
	 * 4); docs/spool.md 6 has the rule and its duplicate bound */
	s->sp.defer_sync = 1;
	if (spool_incoming_each(&s->sp, pick_one, &p) < 0)
		s->stuck++;
	unsigned ok = 0;
	for (unsigned i = 0; i < p.n; i++) {
		if (spool_pickup_prepare(&s->sp, p.ids[i], &p.arrival[i], env ? &env[i] : NULL) < 0) {
			if (still_incoming(s, p.ids[i]))
				s->stuck++; /* not quarantined: it waits in incoming/ (said why) */
			p.ids[i][0] = 0;
		}
	}
	for (unsigned i = 0; i < p.n; i++)
		if (p.ids[i][0] && spool_pickup_finish(&s->sp, p.ids[i]) < 0) {
			s->stuck++;
			p.ids[i][0] = 0;
		}
	for (unsigned i = 0; i < p.n; i++) {
		if (!p.ids[i][0])
			continue;
		ok++;
		/* Postfix's pickup line, which log summarisers count as "received" (docs/logging.md) */
		if (env && env[i].sender)
			log_msg_as("spoolbox/pickup", LOG_INFO, p.ids[i], "uid=%ld from=<%s>", env[i].uid, env[i].sender);
		else
			log_msg_as("spoolbox/pickup", LOG_INFO, p.ids[i], "sender=<?> (picked up)");
		if (s->count < s->o.queuehi && !sq_find(s, p.ids[i]))
			load(s, p.ids[i], p.arrival[i], env ? &env[i] : NULL);
		else
			s->disk_more = 1;
	}
	s->incoming_more = p.n == p.cap && ok > 0;
	if (env)
		for (unsigned i = 0; i < p.n; i++)
			spool_msg_free(&env[i]);
	free(env);
	free(p.ids);
	return (int)ok;
}

static void run_all(struct sched *s, const char *domain)
{
	for (struct qmsg *m = s->head; m; m = m->next) {
		int hit = 0;
		/* tried since the run was asked for: its turn in this run is over */
		if (s->runall_at && m->seen >= s->runall_at && m->attempted)
			continue;
		for (unsigned i = 0; i < m->nrcpt; i++)
			hit |= kick(s, &m->r[i], domain);
		/* and those on disk, as their windows are read: a new pass begins now */
		if (m->evicted || m->unread < m->nfile) {
			m->kick = domain ? 2 : 1;
			hit = 1;
			m->evicted = m->evicted ? s->now : 0;
		}
		if (hit)
			sched_touch(s, m);
	}
}

/* A due entry chosen by a scan, to be loaded after the walk. */
struct cand {
	long long t;
	char id[SPOOL_ID_MAX];
};

struct scan {
	struct sched *s;
	int all;
	long loaded;
	long long parked;             /* > 0: only entries due after now + parked */
	struct cand *heap;            /* the earliest due entries seen, a max-heap on t; NULL: load at once */
	size_t n, cap;
	unsigned misses;              /* entries since the heap last changed */
};

/* The heap's top replaced by (t, id): down to its place, the larger child moving up into the
 * hole each step (the order a swap at each step gives). */
static void heap_top(struct cand *h, size_t n, long long t, const char *id)
{
	size_t i = 0;
	for (size_t l; (l = 2 * i + 1) < n; i = l) {
		if (l + 1 < n && h[l + 1].t > h[l].t)
			l++;
		if (h[l].t <= t)
			break;
		h[i] = h[l];
	}
	h[i].t = t;
	str_lcpy(h[i].id, id, sizeof h[i].id);
}

/* Courier's rule past the high watermark (seed 003): the walk goes on through the bucket, and an
 * entry due earlier than the latest one chosen takes its place (that one stays on disk, as if
 * loaded and evicted). The walk stops at a bucket that begins after every chosen entry (nothing
 * there can be earlier), or after SCAN_MISSES entries in a row that displaced nothing: a refill
 * of a large backlog of equal times must not read the whole bucket each time (measured: the
 * drain of 100 000 queued messages was 40% slower). Returns 1 to stop the walk. */
static int choose(struct scan *c, const char *id, long long t)
{
	struct sched *s = c->s;
	struct cand *h = c->heap;
	if (c->n < c->cap) {
		/* up from the end: the parents it passes move down into the hole */
		size_t i = c->n++;
		for (; i && h[(i - 1) / 2].t < t; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i].t = t;
		str_lcpy(h[i].id, id, sizeof h[i].id);
		return 0;
	}
	s->disk_more = 1;
	if (t / SPOOL_BUCKET > h[0].t / SPOOL_BUCKET)
		return 1;
	if (t < h[0].t) {
		heap_top(h, c->n, t, id);
		c->misses = 0;
		return 0;
	}
	return ++c->misses >= SCAN_MISSES;
}

static int cand_cmp(const void *a, const void *b)
{
	long long x = ((const struct cand *)a)->t, y = ((const struct cand *)b)->t;
	return (x > y) - (x < y);
}

static int scan_one(void *ctx, const char *id, long long t)
{
	struct scan *c = ctx;
	struct sched *s = c->s;
	if (c->parked && t <= s->now + c->parked)
		return 0;
	if (!c->all && !c->parked && t > s->now) {
		earliest(&s->disk_next, t); /* t > now: not 0 */
		return 0;
	}
	if (!spool_id_valid(id) || sq_find(s, id))
		return 0;
	if (c->heap)
		return choose(c, id, t);
	if (s->count >= s->o.queuehi) {
		s->disk_more = 1;
		return 1;
	}
	if (sq_load(s, id, t) == 0)
		c->loaded++;
	return 0;
}

/* The longest wait any clause plans: a due entry further ahead than this was written by a
 * clock that has since gone back. */
static long long park_limit(const struct sched *s)
{
	struct sc_params def;
	sc_params_default(&def);
	long long max = sched_retry_cap(&def);
	for (size_t i = 0; i < s->conf.n; i++) {
		long long c = sched_retry_cap(&s->conf.cl[i].p);
		if (c > max)
			max = c;
	}
	return max;
}

int sq_scan_parked(struct sched *s)
{
	struct scan c = {s, 0, 0, park_limit(s), NULL, 0, 0, 0};
	spool_due_each(&s->sp, LLONG_MAX / 4, scan_one, &c);
	if (c.loaded)
		log_msg(LOG_NOTICE, NULL, "due index: %ld messages due more than %llds ahead (the clock went back): "
		        "looked at now", c.loaded, c.parked);
	return (int)c.loaded;
}

void sq_clock_back(struct sched *s)
{
	for (struct qmsg *m = s->head; m; m = m->next) {
		int moved = 0;
		for (unsigned i = 0; i < m->nrcpt; i++) {
			struct qrcpt *r = &m->r[i];
			if ((r->tag == RT_NEW || r->tag == RT_DEFERRED) && r->thr) {
				long long at = s->now + sched_retry_cap(&r->thr->p);
				if (r->next > at) {
					r->next = at;
					moved = 1;
				}
			}
		}
		if (moved) {
			m->wake = s->now;
			s->mem_wake = s->now;
		}
	}
	sq_scan_parked(s);
}

int sq_scan(struct sched *s, int all)
{
	struct scan c = {s, all, 0, 0, NULL, 0, 0, 0};
	s->last_scan = s->now;
	s->disk_more = 0;
	s->disk_next = 0;
	/* the due scan chooses the earliest entries that fit, then loads them (without memory for
	 * the choice: the first that fit, as they come) */
	if (!all && s->count < s->o.queuehi) {
		c.cap = (size_t)(s->o.queuehi - s->count);
		c.heap = malloc(c.cap * sizeof *c.heap);
	}
	if (spool_due_each(&s->sp, all ? LLONG_MAX / 4 : s->now, scan_one, &c) < 0)
		s->stuck++;
	if (c.heap) {
		qsort(c.heap, c.n, sizeof *c.heap, cand_cmp);
		for (size_t i = 0; i < c.n; i++)
			if (!sq_find(s, c.heap[i].id) && sq_load(s, c.heap[i].id, c.heap[i].t) == 0)
				c.loaded++;
		free(c.heap);
	}
	if (!all) {
		long long nb = spool_due_next_bucket(&s->sp, s->now);
		if (nb > 0)
			earliest(&s->disk_next, nb);
	}
	if (all) {
		run_all(s, s->runall_dom[0] ? s->runall_dom : NULL);
		s->disk_next = s->now + 1; /* and the normal view again */
		if (!s->disk_more && s->runall_at) {
			/* the whole due index fitted: every message has had its turn */
			log_msg(LOG_INFO, NULL, "run of the queue: every message looked at");
			s->runall_at = 0;
		}
	}
	if (c.loaded)
		log_msg(LOG_DEBUG, NULL, "due index: %ld messages loaded, %ld in memory", c.loaded, s->count);
	return (int)c.loaded;
}

void sq_free_all(struct sched *s)
{
	while (s->head)
		msg_free(s, s->head);
}
