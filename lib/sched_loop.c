/* The scheduler's event loop: start-up (pick-up, due index, repair scan), the trigger FIFO and
 * its lines, signals (HUP TERM QUIT ALRM USR1 USR2 CHLD), configuration reload, the state dump,
 * the statistics log, and the one poll() whose timeout is always the earliest known due time. */
#include "sched_int.h"
#include "qctl.h"
#include "fileio.h"
#include "log.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BACKSTOP 60        /* seconds: incoming/ is looked at this often even without a trigger */
#define QUIT_WAIT 30       /* seconds TERM and QUIT wait for TAs to finish their message */

static struct sched *sig_target;

static const unsigned char handled[] = { /* (signal numbers fit a byte) */
	SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD};

/* handled[i] sets the i - 1-th of the flags sig_term ... sig_chld (INT counts as TERM): a table,
 * not a switch */
_Static_assert(offsetof(struct sched, sig_chld) == offsetof(struct sched, sig_term) + 6 * sizeof(sig_atomic_t),
               "struct sched's signal flags follow handled[]");
static void on_signal(int sig)
{
	struct sched *s = sig_target;
	if (!s)
		return;
	for (unsigned i = 0; i < sizeof handled; i++)
		if (handled[i] == sig) {
			volatile sig_atomic_t *f = (volatile sig_atomic_t *)((char *)s + offsetof(struct sched, sig_term) +
			                                                     (i ? i - 1 : 0) * sizeof *f);
			*f = !(i & ~1u) && *f ? 2 : 1; /* a second TERM or INT: 2 */
			return;
		}
}

void sched_log_report(void *ctx, const char *file, int line, const char *reason)
{
	(void)ctx;
	if (line > 0)
		log_msg(LOG_ERR, NULL, "%s:%d: %s", file, line, reason);
	else
		log_msg(LOG_ERR, NULL, "%s: %s", file, reason);
}

static int open_append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		log_syserr(NULL, "open", path, NULL);
	return fd;
}

static void reopen_logs(struct sched *s)
{
	if (s->o.logfile) {
		int fd = open_append(s->o.logfile);
		if (fd >= 0) {
			dup2(fd, 2); /* TAs write their complaints to stderr: the same file */
			close(fd);
			log_set_fd(2);
		}
	}
	if (s->o.statslog) {
		if (s->stats_fd >= 0)
			close(s->stats_fd);
		s->stats_fd = open_append(s->o.statslog);
	}
}

void sched_dump(struct sched *s)
{
	log_msg(LOG_INFO, NULL, "state: %ld messages in memory (queuelo %ld, queuehi %ld), %ld threads, %d TAs; "
	        "delivered %lu, failed %lu, deferred %lu, lost %lu, TAs started %lu; disk %s, next due %lld",
	        s->count, s->o.queuelo, s->o.queuehi, s->nthreads, s->ntas, s->delivered, s->failed, s->deferred,
	        s->lost, s->started, s->disk_more ? "has more due" : "read", s->disk_next);
	for (struct sta *t = s->tas; t; t = t->next)
		log_msg(LOG_INFO, NULL, "state: ta %s[%ld] %s, %u outstanding, thread %s/%s", t->argv0, (long)t->pid,
		        str_bykey("\1busy\0\2idle\0\3closing\0\0starting", t->state), t->nack, t->thr ? t->thr->name : "-",
		        t->thr ? t->thr->host : "-");
	for (unsigned h = 0; h <= s->tmask; h++)
		for (struct thread *t = s->thash[h]; t; t = t->hnext)
			log_msg(LOG_INFO, NULL, "state: thread %s%s/%s ring %d: %u ready, %d running, %d rcpt, concurrency %d%s",
			        t->is_error ? "(error) " : "", t->name, t->host, t->ring ? t->ring->clause : -1, t->nready,
			        t->running, t->refs, t->fb.window, t->blocked_until > s->now ? ", blocked" : "");
	for (size_t i = 0; i < s->conf.nhc; i++)
		log_msg(LOG_INFO, NULL, "state: host class %s: %d of %d sessions", s->conf.hc[i].pat, s->conf.hc[i].used,
		        s->conf.hc[i].limit);
}

/* The global recipient pool's keys from scheduler.conf, QUEUEHI as the seed's active limit. */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static void pool_limits(struct sched *s)
{
	s->rp.limit = s->conf.rcpt_limit;
	s->rp.minimum = s->conf.rcpt_minimum;
	s->rp.active = s->o.queuehi;
}

/* HUP, USR1: scheduler.conf and (through the applet's hook) spoolbox.conf with the credentials
 * file it names, all or nothing. Idle TAs end now and busy ones after their jobs, so the next
 * job runs under the new files (a new SMARTHOST without a restart, issue 12 point 2). */
static void reload(struct sched *s)
{
	struct schedconf nc;
	schedconf_init(&nc);
	int errors = schedconf_load(&nc, s->o.conf_path, s->o.conf_missing_ok, sched_log_report, NULL);
	if (errors) {
		log_msg(LOG_ERR, NULL, "reload: %d error%s in %s; keeping the previous configuration", errors,
		        errors == 1 ? "" : "s", s->o.conf_path);
		schedconf_free(&nc);
		return;
	}
	if (s->o.reload_hook && s->o.reload_hook(s->o.reload_ctx) < 0) {
		log_msg(LOG_ERR, NULL, "reload: keeping the previous configuration");
		schedconf_free(&nc);
		return;
	}
	struct schedconf old = s->conf;
	s->conf = nc;
	pool_limits(s);
	st_reresolve(s);
	sx_reload(s, &old);
	schedconf_free(&old);
	s->gen++;
	sta_close_all(s, 0); /* the idle ones */
	log_msg(LOG_INFO, NULL, "reload: %s read (%zu clauses)", s->conf.file, s->conf.n);
}

/* Trigger lines (docs/spool.md 10): new mail, Q (run everything), R<domain>, mailq's H U D I. */
/* A run of the queue: the first pass kicks every message in memory, even one tried earlier in
 * the same second (a link-up flush right after a deferral); the later passes, as memory frees
 * up, skip what was tried since the run began. */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static void start_run(struct sched *s)
{
	s->runall_at = 0;
	sq_scan(s, 1);
	if (s->disk_more)
		s->runall_at = s->now;
}

static int read_trigger(struct sched *s)
{
	char buf[1024];
	size_t n = spool_trigger_drain(s->trigger_fd, buf, sizeof buf);
	int newmail = 0;
	for (size_t pos = 0; pos < n;) {
		const char *p = buf + pos;
		const char *nl = memchr(p, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - p) : n - pos;
		pos += len + 1;
		if (len == 1 && p[0] == 'Q') {
			log_msg(LOG_INFO, NULL, "trigger: run the whole queue");
			s->runall_dom[0] = 0;
			start_run(s);
		} else if (len >= 2 && p[0] == 'R') {
			char *dom = s->runall_dom;
			size_t dl = len - 1 < sizeof s->runall_dom - 1 ? len - 1 : sizeof s->runall_dom - 1;
			memcpy(dom, p + 1, dl);
			dom[dl] = 0;
			log_msg(LOG_INFO, NULL, "trigger: run the queue for %s", dom);
			start_run(s);
		} else if (!sched_mailq_line(s, p, len)) {
			newmail = 1;
		}
	}
	return newmail || n == 0;
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

struct idset {
	char (*ids)[SPOOL_ID_MAX];
	size_t n, cap;
	struct sched *s;
	long fixed;
};

static int collect_due(void *ctx, const char *id, long long t)
{
	struct idset *c = ctx;
	(void)t;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		void *p = realloc(c->ids, cap * sizeof *c->ids);
		if (!p)
			return 1;
		c->ids = p;
		c->cap = cap;
	}
	str_lcpy(c->ids[c->n++], id, SPOOL_ID_MAX);
	return 0;
}

static int repair_one(void *ctx, const char *id, long long t)
{
	struct idset *c = ctx;
	(void)t;
	/* indexed already: a binary search of the sorted ids (not bsearch, which only this used) */
	for (size_t lo = 0, hi = c->n; lo < hi;) {
		size_t mid = (lo + hi) / 2;
		int d = strcmp(id, c->ids[mid]);
		if (!d)
			return 0;
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (spool_due_move(&c->s->sp, id, 0, c->s->now) == 0) {
		log_msg(LOG_NOTICE, id, "queued message had no due index entry: given one");
		c->fixed++;
	}
	return 0;
}

/* docs/spool.md 9.5: every control file gets a due link (after a crash between R1 and R2). */
static void repair_scan(struct sched *s)
{
	struct idset c = {NULL, 0, 0, s, 0};
	spool_due_each(&s->sp, LLONG_MAX / 4, collect_due, &c);
	qctl_hold_each(&s->sp, collect_due, &c); /* held messages are indexed too (docs/spool.md 12) */
	if (c.n)
		qsort(c.ids, c.n, sizeof *c.ids, cmp_id);
	spool_queue_each(&s->sp, repair_one, &c);
	free(c.ids);
	log_msg(LOG_INFO, NULL, "full queue scan: %zu indexed, %ld repaired", c.n, c.fixed);
}

/* getrlimit(RLIMIT_NOFILE) as lib/libc/setxid.c's setrlimit sets it: prlimit64 alone (musl's
 * getrlimit adds a fallback for kernels without it, which the set side never had; noinline:
 * one copy for the two calls) */
__attribute__((noinline)) static int get_nofile(struct rlimit *rl)
{
	return (int)syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, rl);
}

int sched_init(struct sched *s, const struct sched_opts *o, const char *spooldir)
{
	memset(s, 0, sizeof *s);
	s->o = *o;
	s->trigger_fd = -1;
	s->stats_fd = -1;
	if (s->o.queuehi < 1)
		s->o.queuehi = 1;
	if (s->o.queuelo > s->o.queuehi)
		s->o.queuelo = s->o.queuehi;
	sclock_init(&s->clock);
	const char *tc = getenv("SPOOLBOX_TEST_CLOCK");
	if (tc && *tc && sclock_parse(&s->clock, tc) < 0)
		log_msg(LOG_WARNING, NULL, "SPOOLBOX_TEST_CLOCK=%s: not +OFFSET[*SPEED]; real time used", tc);
	s->now = sclock_now(&s->clock);
	if (spool_open(&s->sp, spooldir, 1, -1) < 0)
		return EX_TEMPFAIL;
	schedconf_init(&s->conf);
	if (schedconf_load(&s->conf, s->o.conf_path, s->o.conf_missing_ok, sched_log_report, NULL))
		return EX_CONFIG;
	pool_limits(s);
	unsigned hs = 64;
	while (hs < (unsigned)s->o.queuehi * 2 && hs < (1u << 16))
		hs <<= 1;
	s->hash = calloc(hs, sizeof *s->hash);
	s->hmask = hs - 1;
	s->thash = calloc(256, sizeof *s->thash);
	s->tmask = 255;
	if (!s->hash || !s->thash)
		return EX_OSERR;
	/* maxta 0: the descriptor limit, raised to its hard limit, minus about 20 (one socket per TA) */
	struct rlimit rl;
	long budget = 1024;
	if (get_nofile(&rl) == 0) {
		rlim_t want = rl.rlim_max;
		if (want == RLIM_INFINITY || want > 65536)
			want = 65536;
		if (s->o.maxfno > 0 && (rlim_t)s->o.maxfno < want)
			want = (rlim_t)s->o.maxfno;
		if (want > rl.rlim_cur) {
			rl.rlim_cur = want;
			setrlimit(RLIMIT_NOFILE, &rl);
			get_nofile(&rl);
		}
		budget = (long)rl.rlim_cur;
		if (s->o.maxfno > 0 && s->o.maxfno < budget)
			budget = s->o.maxfno;
	}
	s->maxta_fd = budget > 40 ? (int)(budget - 20) : 20;
	s->trigger_fd = spool_trigger_open(&s->sp);
	if (s->trigger_fd < 0)
		return EX_TEMPFAIL;
	sched_mq_open(s); /* mailq's live queries; the queue runs without them */
	reopen_logs(s);
	return 0;
}

static int has_ready(struct sched *s)
{
	for (struct ring *r = s->rings; r; r = r->next)
		for (struct thread *t = r->head; t; t = t->rnext)
			if (t->nready && t->blocked_until <= s->now)
				return 1;
	return 0;
}

static int busy_tas(struct sched *s)
{
	int n = 0;
	for (struct sta *t = s->tas; t; t = t->next)
		n += t->state == STA_STARTING || t->state == STA_BUSY;
	return n;
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static long long min_t(long long a, long long b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

/* Watches the wall clock against the monotonic one: a step back brings parked work closer
 * (sq_clock_back); a step forward needs nothing, since expiry counts tried time
 * (docs/scheduler.md "Clock jumps"). */
static void clock_jump(struct sched *s)
{
	long long d = (long long)time(NULL) - clock_mono_ms() / 1000;
	long long was = s->wall_mono;
	s->wall_mono = d;
	if (!was || (d - was < 60 && was - d < 60))
		return;
	log_msg(LOG_WARNING, NULL, "the system clock jumped %s by %llds", d > was ? "ahead" : "back",
	        d > was ? d - was : was - d);
	if (d < was)
		sq_clock_back(s);
}

/* One turn of the queue's work at s->now: new mail (pick), timers, the due index, agents' time
 * limits, handing out jobs, and every result made durable. The loop below runs it after each
 * wake-up, and the simulator (tests/sim/schedsim.c) on virtual time. */
void sched_turn(struct sched *s, int pick)
{
	if (pick && !s->quitting)
		sq_pickup(s);
	sq_timer_pass(s);
	/* below the low watermark with work left on disk: read more at once; a due time
	 * reached: at most one look per second */
	/* a run of the queue under way covers the ordinary look (everything is due in it), and
	 * an ordinary scan in between would forget that the run has more to read */
	if (!s->quitting && s->runall_at) {
		if (s->count < s->o.queuelo)
			sq_scan(s, 1);
	} else if (!s->quitting && ((s->disk_more && s->count < s->o.queuelo) ||
	                            (s->disk_next && s->now >= s->disk_next && s->now != s->last_scan)))
		sq_scan(s, 0);
	sq_flush(s);
	sta_timers(s);
	sta_dispatch(s);
	sq_pickup_sync(s); /* after the hand-out, before any result is read */
	sq_flush(s);
}

long long sched_next_wake(struct sched *s)
{
	return min_t(min_t(s->mem_wake, s->disk_next), sta_next_timer(s));
}

static const struct timespec one_second = {1, 0};

int sched_run(struct sched *s)
{
	sigset_t block, orig;
	sigemptyset(&block);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sig_target = s;
	for (size_t i = 0; i < ARRAY_LEN(handled); i++) {
		sigaddset(&block, handled[i]);
		sigaction(handled[i], &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
	/* the applet may have blocked them since it wrote its pid: they wait for ppoll, not kill.
	 * orig, ppoll's mask, is the mask without them: unblocked (one pending now only sets its
	 * flag, the handlers are in place), then blocked again with orig saved (no sigdelset) */
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	sigprocmask(SIG_BLOCK, &block, &orig);

	s->now = sclock_now(&s->clock);
	/* a turn's log lines leave together, before the loop waits (issue 13 point 3) */
	log_hold(1);
	struct spool_clean_counts cc = {0, 0, 0};
	if (spool_clean(&s->sp, s->now, SPOOL_TMP_MAX_AGE, &cc) == 0 && (cc.tmp || cc.orphan_msg || cc.stale_due))
		log_msg(LOG_NOTICE, NULL, "start: removed %u old tmp/ files, %u message files without a control file, "
		        "%u stale due entries", cc.tmp, cc.orphan_msg, cc.stale_due);
	if (s->o.full_scan)
		repair_scan(s);
	sq_pickup(s);
	sq_scan(s, 0);
	sq_scan_parked(s); /* the clock may have gone back while we were down */
	sq_flush(s);
	log_msg(LOG_INFO, NULL, "started: %ld messages due in memory, %s", s->count, s->conf.file);
	if (s->o.readyfd >= 0) {
		if (write(s->o.readyfd, "\n", 1) < 0) {
			/* the parent went away; nothing to tell */
		}
		close(s->o.readyfd);
		s->o.readyfd = -1;
	}
	struct pollfd *pfd = NULL;
	size_t pcap = 0;
	long long quit_deadline = 0, last_pickup = s->now;
	int rc = 0;
	for (;;) {
		s->now = sclock_now(&s->clock);
		clock_jump(s);
		if (s->sig_chld) {
			s->sig_chld = 0;
			sta_reap(s);
		}
		/* TERM (how procd, runit, s6 and init scripts stop a daemon) stops as cleanly as QUIT
		 * (issue 11 point 1): nothing more is handed out, every TA gets EOF, finishes the
		 * message it is on and exits, and its reports are collected until QUIT_WAIT. A second
		 * TERM or INT exits at once. */
		if (s->quitting && s->sig_term > 1) {
			log_msg(LOG_NOTICE, NULL, "SIGTERM again: exiting now; running transport agents stop after their message");
			break;
		}
		if ((s->sig_term || s->sig_quit) && !s->quitting) {
			log_msg(LOG_INFO, NULL, "%s: stopping the transport agents first", s->sig_term ? "SIGTERM" : "SIGQUIT");
			s->quitting = 1;
			quit_deadline = s->now + QUIT_WAIT;
			sta_close_all(s, 1);
		}
		if (s->quitting && (!s->tas || s->now >= quit_deadline))
			break;
		if (s->sig_hup) {
			s->sig_hup = 0;
			reopen_logs(s);
			log_msg(LOG_INFO, NULL, "SIGHUP: log files reopened");
			reload(s);
		}
		if (s->sig_usr1) {
			s->sig_usr1 = 0;
			reload(s);
		}
		if (s->sig_usr2) {
			s->sig_usr2 = 0;
			sched_dump(s);
		}
		int pick = s->incoming_more;
		if (s->sig_alrm) {
			s->sig_alrm = 0;
			pick = 1;
			s->disk_next = s->now;
		}
		if (pfd && pfd[0].revents)
			pick |= read_trigger(s);
		if (pfd)
			pfd[0].revents = 0;
		if (s->now - last_pickup >= BACKSTOP)
			pick = 1;
		if (pick && !s->quitting)
			last_pickup = s->now;
		sched_turn(s, pick);
		if (s->o.oneshot && !s->quitting && !s->incoming_more && !s->disk_more && !has_ready(s) && !busy_tas(s) &&
		    (!s->disk_next || s->disk_next > s->now) && (!s->mem_wake || s->mem_wake > s->now) &&
		    !sq_foreign_transit(s)) {
			log_msg(LOG_INFO, NULL, "one-shot: nothing is due and no transport agent runs: exiting");
			s->quitting = 1;
			quit_deadline = s->now + QUIT_WAIT;
			sta_close_all(s, 1);
			if (!s->tas)
				break;
		}
		/* the timeout is the earliest thing known to come due */
		long long wake = sched_next_wake(s);
		wake = min_t(wake, last_pickup + BACKSTOP);
		if (s->quitting)
			wake = min_t(wake, quit_deadline);
		int timeout = s->incoming_more || (s->disk_more && s->count < s->o.queuelo) ? 0 :
		              sclock_wait_ms(&s->clock, wake, BACKSTOP * 1000);
		if (wake && wake <= s->now && timeout == 0 && !s->incoming_more)
			timeout = 1000 / (int)(s->clock.speed > 1000 ? 1000 : s->clock.speed); /* same second: next tick */
		size_t need = 1 + (size_t)s->ntas + sched_mq_nfds(s);
		if (need > pcap) {
			struct pollfd *np = realloc(pfd, need * 2 * sizeof *pfd);
			if (np) {
				pfd = np;
				pcap = need * 2;
			} else {
				/* out of memory: the agents that do not fit wait a turn (never an exit) */
				log_msg(LOG_ERR, NULL, "out of memory for the poll set; %zu of %zu descriptors watched", pcap, need);
				if (timeout < 0 || timeout > 1000)
					timeout = 1000;
			}
		}
		if (!pfd) {
			nanosleep(&one_second, NULL);
			continue;
		}
		pfd[0] = (struct pollfd){s->trigger_fd, s->quitting ? 0 : POLLIN, 0};
		size_t n = 1;
		for (struct sta *t = s->tas; t && n < pcap; t = t->next)
			pfd[n++] = (struct pollfd){t->fd, POLLIN, 0};
		size_t mq0 = n;
		n += sched_mq_pollfds(s, pfd + n, pcap - n);
		struct timespec ts, *tsp = NULL;
		if (timeout >= 0) {
			ts.tv_sec = timeout / 1000;
			ts.tv_nsec = (long)(timeout % 1000) * 1000000;
			tsp = &ts;
		}
		log_flush();
		int r = ppoll(pfd, n, tsp, &orig);
		if (r < 0 && errno != EINTR) {
			int e = errno;
			log_msg(LOG_ERR, NULL, "poll: %s", strerror(e));
			if (e != ENOMEM) {
				rc = EX_OSERR;
				break;
			}
			/* the kernel's memory: wait a moment and go on */
			nanosleep(&one_second, NULL);
		}
		if (r <= 0) {
			pfd[0].revents = 0;
			continue;
		}
		s->now = sclock_now(&s->clock);
		for (size_t i = 1; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			for (struct sta *t = s->tas; t && i < mq0; t = t->next)
				if (t->fd == pfd[i].fd) {
					sta_io(s, t);
					break;
				}
		}
		sched_mq_io(s, pfd + mq0, n - mq0);
		sq_flush(s);
	}
	free(pfd);
	sq_pickup_sync(s);
	sq_flush(s);
	if (s->o.oneshot && rc == 0) {
		/* A due link left by a crash of an earlier run whose message this run delivered and
		 * removed under its other name: the daemon's start removes such links, a one-shot run
		 * removes them on its way out, so `sendmail -q` leaves a clean spool. */
		struct spool_clean_counts ec = {0, 0, 0};
		if (spool_clean(&s->sp, s->now, SPOOL_TMP_MAX_AGE, &ec) == 0 && ec.stale_due)
			log_msg(LOG_NOTICE, NULL, "one-shot: removed %u stale due entries", ec.stale_due);
	}
	/* issue 14 point 5: what the recipient pools held at most, for the tests and make bench */
	log_msg(LOG_INFO, NULL, "recipients in memory: at most %ld (message_recipient_limit %ld, bound %ld)",
	        s->rp.peak, s->rp.limit, srp_bound(&s->rp, NULL));
	log_hold(0);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	if (s->o.oneshot && rc == 0 && s->stuck) {
		log_msg(LOG_ERR, NULL, "one-shot: mail is stuck in the queue (%lu problems above): exit %d", s->stuck,
		        EX_TEMPFAIL);
		rc = EX_TEMPFAIL;
	}
	return rc;
}

void sched_free(struct sched *s)
{
	sta_free_all(s);
	/* the messages with their thread references (st_put frees none with jobs or agents
	 * counted); then the threads themselves */
	sq_free_all(s);
	st_free_all(s);
	free(s->hash);
	free(s->thash);
	schedconf_free(&s->conf);
	sched_mq_close(s);
	if (s->trigger_fd >= 0)
		close(s->trigger_fd);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	sig_target = NULL;
}
