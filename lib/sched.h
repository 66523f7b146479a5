/* The scheduler's public interface (docs/scheduler.md): what the scheduler applet (and a test)
 * needs to run one. Everything else lives in sched_int.h, shared only by lib/sched_*.c and the
 * unit tests (BearSSL's inner.h pattern): the in-memory queue, threads and rings, the transport
 * agents and the pure policy. Everything here logs and returns, and never exits.
 *
 * struct sched is complete so that the caller can own it (stack or malloc); its members are
 * private to lib/sched_*.c except `o` (read-only after sched_init) and the test clock `clock`.
 *
 * Memory: per in-memory message only what scheduling needs (id, due time, arrival, and per
 * recipient its offset, tag, tries, next time and thread); the control file is re-read for
 * nothing else. The number of messages in memory is bounded by QUEUEHI; below QUEUELO the due
 * index is read again (Courier's watermarks). */
#ifndef SPOOLBOX_SCHED_H
#define SPOOLBOX_SCHED_H
#include "clock.h"
#include "schedconf.h"
#include "spool.h"
#include <signal.h>
#include <sys/types.h>

struct qmsg;
struct thread;
struct ring;
struct chan;
struct sta;

/* In-core recipients over every message (lib/sched_pool.c, issue 14 point 5). */
struct srp_global {
	long incore, peak;            /* recipients in memory now, and the most ever */
	long pooled;                  /* of them, those beyond each message's own minimum */
	long limit, minimum;          /* PARAMmessage_recipient_limit, PARAMmessage_recipient_minimum */
	long active;                  /* most messages in memory (QUEUEHI): the seed's active limit */
	long sum_re;                  /* recipient_limit + extra_recipient_limit of every ring made */
	long refills;                 /* control files read again for a window (the simulator shows it) */
};

struct sched_opts {
	const char *conf_path;        /* scheduler.conf */
	int conf_missing_ok;
	const char *statslog;         /* -l */
	const char *logfile;          /* -L */
	const char *only;             /* -p channel/host pattern */
	int oneshot;                  /* -1: exit when nothing is due and no TA runs */
	int freeze;                   /* -F: scan only, start no TA */
	int full_scan;                /* -S, or an unclean stop: walk queue/ for lost due links */
	int verbose;
	long newents_max;             /* -E: most messages picked up per scan (0 = no limit) */
	long maxfno;                  /* -N: file descriptors for TAs (0 = the limit) */
	long queuelo, queuehi;
	const char *logdir;           /* for ${LOGDIR} */
	int readyfd;                  /* write one byte when ready (daemon start), -1 */
	/* HUP and USR1 (issue 12 point 2): called after the new scheduler.conf has been read and
	 * before it is taken, so the applet re-reads spoolbox.conf for the agents it starts.
	 * Returns 0, or -1 (having logged why) to keep both files' old configuration. NULL: none. */
	int (*reload_hook)(void *ctx);
	void *reload_ctx;
	long long delay_warn;         /* DELAY_WARN: a delay notice after this much tried time, 0 = never */
	/* the first SMARTHOST's host, "" or NULL = none: smtp sessions go there, so its host class
	 * applies (issue 14 point 7). The caller's buffer; a reload_hook may change it. */
	const char *relay;
};

/* The process layer's seam (issue 14 point 1): NULL is real agents (fork, exec, a socket pair).
 * The simulator (tests/sim/schedsim.c) gives its own: spawn returns 0 with a pid and the
 * scheduler's end of a new socket (its status flags become O_NONBLOCK alone), so job lines,
 * reports and #hungry still go through the real protocol code; kill replaces kill(pid,
 * SIGKILL). */
struct sched_agent_ops {
	int (*spawn)(void *ctx, const char *channel, const char *host, pid_t *pid, int *fd);
	void (*kill)(void *ctx, pid_t pid);
};

struct sched {
	/* the most used scalars first: offsets below 128 take one byte in x86-64 code (docs/size.md) */
	long long now;
	struct qmsg **hash;           /* messages */
	unsigned hmask;
	int ntas;
	struct qmsg *head;            /* all in memory */
	long count;
	struct qmsg *turn;            /* written in this turn */
	struct thread **thash;        /* threads, rings, TAs */
	unsigned tmask;
	int quitting;
	struct sta *tas;
	struct ring *rings;
	struct chan *chans;
	long long mem_wake;           /* earliest wake of an in-memory message, 0 = none */
	long long disk_next;          /* earliest due time known on disk, 0 = none */
	int disk_more;                /* due work was left on disk (watermark) */
	int incoming_more;            /* incoming/ had more than one batch */
	int trigger_fd;
	int stats_fd;
	/* the spool starts below 128 too: &s->sp takes one byte (what follows it is far anyway) */
	struct spool sp;
	int turn_fds;                 /* control files open in this turn */
	int kept_fds;                 /* control files kept open between turns for a job out */
	struct sched_opts o;
	const struct sched_agent_ops *agent_ops; /* NULL: real processes */
	void *agent_ctx;
	struct srp_global rp;         /* recipients in memory */
	long long last_scan;
	long nthreads;
	int maxta_fd;                 /* maxta when the configuration says 0 */
	unsigned gen;                 /* configuration generation: TAs of an older one take no new job */
	int said_nopasswd;            /* logged once: user=root without /etc/passwd */
	/* signals (in the order of sched_loop.c's handled[], which sets them by position) */
	volatile sig_atomic_t sig_term, sig_quit, sig_hup, sig_usr1, sig_usr2, sig_alrm, sig_chld;
	long long wall_mono;          /* real time minus monotonic time, to see the clock jump */
	struct sched_mq *mq;          /* the live query socket (sched_mq.c), NULL = none */
	/* counters for the dump */
	unsigned long delivered, failed, deferred, lost, started;
	/* messages that could not be picked up or loaded, and directories that could not be read:
	 * a one-shot run (-1) that leaves mail stuck so exits 75, not 0 (issue 11 point 10) */
	unsigned long stuck;
	/* a run of the whole queue (trigger Q, or R for a domain) still being worked through: the
	 * due index is walked again as memory frees up, until every message was looked at once */
	long long runall_at;          /* when it was asked for, 0 = none */
	char runall_dom[256];         /* "" = every domain */
	struct sclock clock;
	struct schedconf conf;
};

/* Opens the spool, reads scheduler.conf (o->conf_path) and sets up the tables. Returns 0, or an
 * exit code (EX_TEMPFAIL: the spool; EX_CONFIG: scheduler.conf; EX_OSERR: memory). sched_free()
 * MUST be called afterwards either way. */
int sched_init(struct sched *s, const struct sched_opts *o, const char *spooldir);
/* Runs until TERM/QUIT (or, one-shot, until nothing is due). Returns an exit code. */
int sched_run(struct sched *s);
void sched_free(struct sched *s);
/* One turn of work at s->now (pick: look in incoming/ too), as the loop runs it after each
 * wake-up; and the earliest time (seconds) something comes due, 0 = none. For the simulator. */
void sched_turn(struct sched *s, int pick);
long long sched_next_wake(struct sched *s);
/* The state into the log (SIGUSR2). */
void sched_dump(struct sched *s);
/* A conf_report_fn that logs each finding as an error ("file:line: reason", or "file: reason"). */
conf_report_fn sched_log_report;
#endif
