/* The scheduler's core (docs/scheduler.md): the in-memory queue, threads and rings, transport
 * agents, results, and the event loop. The scheduler applet parses options and calls
 * sched_run(); everything here logs and returns, and never exits.
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
#include <stdint.h>
#include <sys/types.h>

struct thread;

/* Recipient flags (memory only). */
enum {
	RF_QUEUED = 1,   /* in a ready job of its thread */
	RF_OURS = 2,     /* T for one of our TAs (not a TA of an earlier scheduler) */
	RF_ERRPHASE = 4, /* handed to the error channel (a report turns F into X) */
};

struct qrcpt {
	uint32_t off;         /* offset of the 'r' record */
	char tag;             /* RT_* as on disk */
	unsigned char flags;  /* RF_* */
	uint16_t jobseq;      /* which job of its TA carries it (T only) */
	uint16_t tries;
	long pid;             /* T: the TA */
	long long next;
	struct thread *thr;   /* NULL when done */
};

struct qmsg {
	struct qmsg *hnext;           /* hash chain */
	struct qmsg *prev, *next;     /* every in-memory message */
	struct qmsg *dnext;           /* this turn's written messages */
	long long due;                /* the time in its due link's name */
	long long arrival;
	long long wake;               /* 0, or when to look at it again */
	long long tried, seen;        /* age for expiry, and when it was last counted (sched_tried_add) */
	int fd;                       /* control file while this turn's results are written */
	unsigned jobs;                /* ready and outstanding jobs that point here */
	unsigned nrcpt;
	unsigned char dirty, attempted, held, in_turn;
	char id[SPOOL_ID_MAX];
	struct qrcpt r[];
};

/* A ready job: one message for one thread. */
struct job {
	struct job *next;
	struct qmsg *m;
};

struct ring {
	struct ring *next;
	int clause;                   /* body index in the configuration that made it */
	int stale;                    /* made by an earlier configuration */
	int tas;                      /* TAs of this ring, idle ones included */
	struct thread *head, *tail;   /* threads with ready jobs, round robin */
};

struct chan {
	struct chan *next;
	int running;                  /* TAs working on a thread of this channel */
	char name[32];
};

struct thread {
	struct thread *hnext;
	struct thread *rnext;         /* in its ring's ready list */
	struct ring *ring;            /* NULL: no clause with a command matches */
	struct chan *chan;
	struct sc_params p;
	struct job *head, *tail;
	unsigned nready;
	int running;                  /* TAs attached */
	int refs;                     /* recipients pointing here */
	int on_ring;
	int is_error;                 /* the error-reporting thread of a host */
	long long blocked_until;      /* deferall, or a TA that would not start */
	long long kicked_until;       /* queueonly: a Q/R trigger lets it run until then */
	char *host;                   /* into name */
	char name[];                  /* "channel\0host" */
};

enum ta_state { TA_STARTING, TA_BUSY, TA_IDLE, TA_CLOSING };

struct ta_ack {
	struct qmsg *m;               /* NULL: the start or an #idle */
	uint16_t seq;
};

struct ta {
	struct ta *next;
	pid_t pid;
	int fd;                       /* socket: the TA's stdin and stdout */
	enum ta_state state;
	struct ring *ring;
	struct thread *thr;           /* attached thread, or NULL */
	char *key;                    /* expanded command + user + group: reuse only when equal */
	char *argv0;                  /* for logs */
	long long since;              /* started, or idle since */
	long long idlemax;
	struct ta_ack *acks;          /* FIFO of what each coming #hungry answers */
	unsigned nack, ackhead, ackcap;
	uint16_t seq;
	unsigned streak;              /* jobs from the attached thread in a row */
	char *rbuf;
	size_t rlen;
	unsigned char skipping;       /* dropping the rest of an overlong line */
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
};

struct sched {
	struct sched_opts o;
	struct spool sp;
	struct sclock clock;
	struct schedconf conf;
	long long now;
	/* messages */
	struct qmsg **hash;
	unsigned hmask;
	struct qmsg *head;            /* all in memory */
	long count;
	struct qmsg *turn;            /* written in this turn */
	int turn_fds;                 /* control files open in this turn */
	long long mem_wake;           /* earliest wake of an in-memory message, 0 = none */
	int disk_more;                /* due work was left on disk (watermark) */
	long long disk_next;          /* earliest due time known on disk, 0 = none */
	long long last_scan;
	int incoming_more;            /* incoming/ had more than one batch */
	/* threads, rings, TAs */
	struct thread **thash;
	unsigned tmask;
	long nthreads;
	struct ring *rings;
	struct chan *chans;
	struct ta *tas;
	int ntas;
	int maxta_fd;                 /* maxta when the configuration says 0 */
	/* signals and files */
	int trigger_fd;
	int stats_fd;
	volatile sig_atomic_t sig_term, sig_quit, sig_hup, sig_usr1, sig_usr2, sig_alrm, sig_chld;
	int quitting;
	long long wall_mono;          /* real time minus monotonic time, to see the clock jump */
	/* counters for the dump */
	unsigned long delivered, failed, deferred, lost, started;
};

/* ---- policy: pure functions (sched_policy.c) ---- */

/* Outcomes of a report. */
enum sched_outcome { SO_DELIVERED, SO_FAILED, SO_DEFERRED, SO_DEFERALL, SO_RETRYAT, SO_UNKNOWN };
enum sched_outcome sched_outcome_of(const char *status);
/* Next attempt after the tries-th deferral (tries counts finished attempts before this one):
 * now + interval x retries[tries]; past the end of the sequence the position jumps to a spot
 * chosen from (id, lap) and runs to the end again (the seed's random re-entry, reproducible).
 * Never earlier than now + 1, so "retries=0" retries at once without spinning. */
long long sched_retry_next(const struct sc_params *p, unsigned tries, const char *id, long long now);
/* The position in the retries sequence used for the tries-th deferral. */
unsigned sched_retry_index(unsigned nretries, unsigned tries, const char *id);
/* retryat's first word: "+SECONDS" (relative) or absolute epoch seconds. -1 when malformed. */
long long sched_retryat(const char *message, long long now);
/* Time that cannot lie (docs/scheduler.md "Clock jumps"): a message's age for expiry is the
 * time the queue has been trying it, summed over the gaps between the attempts and observations
 * it has seen, each gap counted between 0 and the longest wait the clause plans
 * (sched_retry_cap: interval x the largest retries factor + interval). A clock stepped forward
 * (NTP after a boot without RTC) or a queue that was off adds at most that cap; a clock stepped
 * back adds nothing. */
long long sched_retry_cap(const struct sc_params *p);
long long sched_tried_add(long long tried, long long last, long long now, long long cap);
/* 1 when a deferred recipient is past expiry: tried (the age above) >= expiry and an attempt
 * was made in this run; or, without an attempt, past arrival + expiry + expiry2 by the wall
 * clock (expiry2 > 0: the seed's fallback for mail that is never tried). */
int sched_expired(const struct sc_params *p, long long arrival, long long tried, long long now, int attempted);
/* Effective limits (0 in the configuration = maxta, and maxta 0 = fd budget). */
int sched_maxta(const struct sc_params *p, int fd_budget);
int sched_maxchannel(const struct sc_params *p, int fd_budget);
int sched_maxring(const struct sc_params *p, int fd_budget);
long long sched_idlemax(const struct sc_params *p);
/* May a new TA start for a thread? Pure check of the four limits. */
int sched_may_start(const struct sc_params *p, int fd_budget, int tas, int ring_tas, int chan_running, int thr_running);

/* ---- the core (sched_*.c) ---- */
int sched_init(struct sched *s, const struct sched_opts *o, const char *spooldir);
/* Runs until TERM/QUIT (or, one-shot, until nothing is due). Returns an exit code. */
int sched_run(struct sched *s);
void sched_free(struct sched *s);

/* internal, between the sched_*.c files */
struct qmsg *sq_find(struct sched *s, const char *id);
int sq_load(struct sched *s, const char *id, long long due);
void sq_activate(struct sched *s, struct qmsg *m);
void sq_touch(struct sched *s, struct qmsg *m);
void sq_flush(struct sched *s);
void sq_timer_pass(struct sched *s);
int sq_pickup(struct sched *s);
int sq_scan(struct sched *s, int all, const char *domain);
/* Due entries further ahead than any clause would wait (a clock that went back while the queue
 * was down, or while it ran): loaded now. */
int sq_scan_parked(struct sched *s);
/* The clock went back while running: in-memory next attempts beyond their clause's longest
 * wait come closer, and the parked due entries are loaded. */
void sq_clock_back(struct sched *s);
void sq_free_all(struct sched *s);
void sq_report(struct sched *s, struct ta *t, const char *line, size_t len);
void sq_job_done(struct sched *s, struct ta *t, struct qmsg *m, uint16_t seq);
int sq_handout(struct sched *s, struct ta *t, struct job *j);
void sq_run_all(struct sched *s, const char *domain);
struct thread *st_get(struct sched *s, const char *channel, const char *host, int is_error);
void st_put(struct sched *s, struct thread *t);
void st_enqueue(struct sched *s, struct thread *t, struct qmsg *m);
void st_block(struct sched *s, struct thread *t, long long until);
struct job *st_pop(struct thread *t);
void st_push_back(struct thread *t, struct job *j);
void st_reresolve(struct sched *s);
void ta_dispatch(struct sched *s);
void ta_io(struct sched *s, struct ta *t);
void ta_close_all(struct sched *s, int graceful);
void ta_reap(struct sched *s);
void ta_kill_all(struct sched *s);
void ta_close(struct ta *t);
void ta_expire_idle(struct sched *s);
long long ta_next_timer(struct sched *s);
void sched_stat(struct sched *s, const struct qmsg *m, const char *state, const struct thread *t);
void sched_dump(struct sched *s);
#endif
