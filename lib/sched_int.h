/* The scheduler's internal header (BearSSL's inner.h pattern): the types and functions shared by
 * lib/sched_*.c, and by the unit tests, never by applets. The files form layers, and a file
 * calls only into the layers below it (scripts/sched_deps.sh checks it in CI):
 *
 *   sched_sim.c     sim_*     the simulator: the layers below on virtual time   (test only)
 *   sched_loop.c    sched_*   the event loop, signals, trigger, reload, dump        (top)
 *   sched_ta.c      sta_*     transport-agent processes: spawn, job lines, reports, limits
 *   sched_queue.c   sq_*      messages in memory and their control files: load, results, settle
 *   sched_thread.c  st_*      threads, rings, channels, ready jobs
 *   sched_xla.c     sx_*      host classes: which class a session counts in, the counts
 *   sched_policy.c  sched_*   pure decisions: retries, expiry, limits                (bottom)
 *   sched_feedback.c sfb_*    pure: per-destination concurrency feedback            (bottom)
 *   sched_preempt.c spr_*     pure: Postfix's preemptive job order per ring         (bottom)
 *   sched_pool.c    srp_*     pure: how many recipients may be in memory            (bottom)
 *
 * The agent's own end of the protocol is lib/ta.c (prefix ta_); the scheduler's end is sta_. */
#ifndef SPOOLBOX_SCHED_INT_H
#define SPOOLBOX_SCHED_INT_H
#include "sched.h"
#include <stdint.h>
#include <sys/types.h>

/* Recipient flags (memory only). */
enum {
	RF_QUEUED = 1,   /* in a ready job of its thread */
	RF_OURS = 2,     /* T for one of our TAs (not a TA of an earlier scheduler) */
	RF_ERRPHASE = 4, /* handed to the error channel (a report turns F into X) */
	RF_WANT_SUCCESS = 8, /* NOTIFY has SUCCESS and the sender is not null: delivered becomes S */
	RF_WANT_DELAY = 16,  /* NOTIFY has DELAY or is absent, and the sender is not null */
	RF_DELAYQ = 32,      /* in the error thread's job for a delay notice; keeps its delivery thread */
	RF_SUCCPHASE = 64,   /* handed to the error channel for its success notice (S) */
};

struct qrcpt {
	uint32_t off;         /* offset of the 'r' record */
	char tag;             /* RT_* as on disk */
	unsigned char flags;  /* RF_* */
	uint16_t jobseq;      /* T: which job of its TA carries it; T of an earlier scheduler's TA:
	                       * the last outcome on record ('F', 'D' or 0) */
	uint16_t tries;
	uint32_t idx;         /* its number in the control file (A records, logs) */
	long pid;             /* T: the TA */
	long long next;
	struct thread *thr;   /* NULL when done */
};

/* Recipients in memory (sched_pool.c, seed 004, issue 14 point 5): a ring's pools (Postfix's
 * transport_recipient_limit and transport_extra_recipient_limit) and a message's share. */
struct srp_ring {
	int limit, xlimit;            /* recipient_limit, extra_recipient_limit of its clause */
	int unused, xunused;          /* slots no message holds */
	int incore;                   /* in memory, of messages whose pool ring this is */
	int pooled;                   /* of them, those beyond each message's own minimum */
};

struct srp_msg {
	int n;                        /* its recipients in memory */
	int slots, xslots;            /* held from its pool ring's two pools */
	unsigned char first;          /* its first batch is not read yet */
};

/* Delay notice of a message: not yet; sent (its W record; also when none could be wanted); or
 * the error channel failed and it waits for the next delivery attempt (memory only). */
enum { WARN_NOT_YET, WARN_DONE, WARN_LATER };

struct qmsg {
	struct qmsg *next;            /* every in-memory message */
	long long due;                /* the time in its due link's name */
	long long arrival;
	long long tried;              /* age for expiry (sched_tried_add) */
	struct qrcpt *r;              /* sorted by off */
	struct ring *pring;           /* the ring whose pools pay for its batches */
	long long wake;               /* 0, or when to look at it again */
	long long evicted;            /* earliest next attempt of a waiting one let go, 0 = none */
	int fd;                       /* control file while this turn's results are written, and
	                               * while a job is out (kept: its report writes here next) */
	unsigned nrcpt;               /* recipients in memory, r[]: a window of the control file's */
	unsigned unread;              /* the next one a refill looks at (file order) */
	unsigned nfile;               /* recipients in the control file */
	unsigned jobs;                /* ready and outstanding jobs that point here */
	uint32_t unread_off;          /* its r record's offset, 0 = not known (read from the start) */
	struct srp_msg pool;
	unsigned char dirty, attempted, held, in_turn, kept;
	unsigned char kick;           /* a run of the queue reaches the ones still on disk: 1 all (trigger
	                               * Q, mailq --retry), 2 those of s->runall_dom (trigger R) */
	unsigned char notices;        /* the sender is not null: recipients may want notices */
	unsigned char warned;         /* WARN_*: the delay notice (issue 15 point 2) */
	unsigned char ctl;            /* mailq's hold or delete (QA_* + 1, sched_mailq.c): nothing more
	                               * goes out, and it is done once nothing is out (settle) */
	char id[SPOOL_ID_MAX];        /* (its address is within the one-byte offsets) */
	struct qmsg *hnext;           /* hash chain */
	struct qmsg *prev;            /* every in-memory message (next above) */
	struct qmsg *dnext;           /* this turn's written messages */
	long long seen;               /* when tried was last counted (sched_tried_add) */
	off_t ctl_end;                /* the control file's size as this scheduler last wrote it,
	                               * 0 when not known (an append then looks) */
	long long refilled;           /* when a batch was last read */
};

/* A ready job: one message for one thread. */
struct job {
	struct job *next;
	struct qmsg *m;
	struct spr_job *pj;           /* its message's job in the ring's preemption list, or NULL */
};

/* Preemption (sched_preempt.c, seed 004, issue 14 point 4). A ring is Postfix's transport; its
 * job (spr_job) is one message's work in the ring, whose entries are that message's ready jobs
 * of the ring's threads (one per destination). Its keys, struct spr_params, are in schedconf.h. */
struct spr_job {
	struct spr_job *prev, *next;  /* the ring's list: by enqueue time, preemptors in front */
	struct spr_job *parent;       /* the job it preempted, while it is on that job's stack */
	const void *key;              /* its message (struct qmsg *), compared, never read here */
	long long enq;                /* when its message arrived */
	int ready;                    /* entries waiting (its ready jobs) */
	int selected;                 /* entries handed out */
	int slots_avail;              /* Postfix's slots_available: +1 per entry, -cost x a preemptor */
	int slots_used;               /* and slots_used (after a preemption: minus what it expects) */
	int level;                    /* preemption stack depth, 0: in enqueue-time order */
	int children;                 /* jobs that preempted it and are still on its stack */
	unsigned rr;                  /* where the search for its next destination starts */
};

struct spr_list {
	struct spr_job *head, *tail;
	struct spr_params p;          /* the ring's keys (from the thread that enqueued last) */
};

struct ring {
	struct ring *next;
	int clause;                   /* body index in the configuration that made it */
	int stale;                    /* made by an earlier configuration */
	int tas;                      /* TAs of this ring, idle ones included */
	struct thread *head, *tail;   /* threads with ready jobs, round robin */
	struct spr_list pl;           /* its messages in preemption order (issue 14 point 4) */
	struct srp_ring rp;           /* its recipient pools (issue 14 point 5) */
	int refill_limit;             /* recipient_refill_limit and _delay of its clause */
	long long refill_delay;
};

struct chan {
	struct chan *next;
	int running;                  /* TAs working on a thread of this channel */
	char name[32];
};

/* Per-destination concurrency (sched_feedback.c, seed 004): window 0 = dead (suspended). */
struct sfb {
	int window;                   /* agents the destination may have at once */
	int probing;                  /* back from the dead: one probe, window 1 */
	double success, failure;      /* hysteresis accumulators */
	double fail_cohorts;          /* failed pseudo-cohorts since the last success */
};

struct thread {
	struct thread *hnext;
	struct thread *rnext;         /* in its ring's ready list */
	struct ring *ring;            /* NULL: no clause with a command matches */
	struct chan *chan;
	struct job *head, *tail;
	char *name;                   /* "channel\0host", in the same allocation behind the struct */
	char *host;                   /* into name */
	unsigned nready;
	int running;                  /* TAs attached */
	int refs;                     /* recipients pointing here */
	int on_ring;
	int is_error;                 /* the error-reporting thread of a host */
	int xc;                       /* host class of its sessions (sx_class), -1 = none */
	long long blocked_until;      /* deferall, or a TA that would not start */
	long long kicked_until;       /* queueonly: a Q/R trigger lets it run until then */
	struct sc_params p;
	struct sfb fb;                /* its concurrency (issue 14 point 2) */
};

enum sta_state { STA_STARTING, STA_BUSY, STA_IDLE, STA_CLOSING };

struct sta_ack {
	struct qmsg *m;               /* NULL: the start or an #idle */
	uint16_t seq;
	long long limit;              /* the job's time limit (timelimit of its clause), 0 = none */
};

struct sta {
	struct sta *next;
	pid_t pid;
	int fd;                       /* socket: the TA's stdin and stdout */
	enum sta_state state;
	int xc;                       /* host class its session counts in (sched_xla.c), -1 = none */
	struct ring *ring;
	struct thread *thr;           /* attached thread, or NULL */
	char *argv0;                  /* for logs */
	struct sta_ack *acks;          /* FIFO of what each coming #hungry answers */
	char *rbuf;                   /* rbuf, key and argv0: in the same allocation behind the struct */
	size_t rlen;
	long long since;              /* started, or idle since */
	long long deadline;           /* the job at the FIFO's head must be done by then, 0 = none */
	unsigned nack, ackhead, ackcap;
	uint16_t seq;
	unsigned char skipping;       /* dropping the rest of an overlong line */
	unsigned char fb_bad, fb_any; /* the current job: a connection failure / any report */
	unsigned char proven;         /* its last job had reports and no connection failure */
	unsigned streak;              /* jobs from the attached thread in a row */
	unsigned gen;                 /* s->gen when it was started (its environment, its files) */
	char *key;                    /* expanded command + user + group: reuse only when equal */
	long long idlemax;
};

/* ---- policy: pure functions (sched_policy.c) ---- */

/* Outcomes of a report. */
enum sched_outcome { SO_DELIVERED, SO_FAILED, SO_DEFERRED, SO_DEFERALL, SO_RETRYAT, SO_UNKNOWN };
enum sched_outcome sched_outcome_of(const char *status);
/* FNV-1a: h (SCHED_FNV_INIT to start) over the string p. One copy for the message and thread
 * hashes and the retry spot. */
#define SCHED_FNV_INIT 2166136261u
unsigned sched_fnv(unsigned h, const char *p);
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
/* May a new TA start for a thread? Pure check of the four limits (maxthr 0: no cap; the
 * destination's concurrency window is checked by its caller). */
int sched_may_start(const struct sc_params *p, int fd_budget, int tas, int ring_tas, int chan_running, int thr_running);

/* ---- host classes, Sendmail's XLA (sched_xla.c) ---- */
/* The class (index into s->conf.hc) a session of thread channel/host counts in: the relay's
 * (s->o.relay) for smtp when there is one, else the host's; -1: no limit. */
int sx_class(const struct sched *s, const char *channel, const char *host);
/* May an agent counted in class `from` (-1: a new agent, or none) take a job of class `to`? */
int sx_room(const struct sched *s, int from, int to);
/* The agent whose count is *cls now counts in class `to` (-1: none). */
void sx_move(struct sched *s, int *cls, int to);
/* After a reload (s->conf is new, old the previous): every thread's class again, and every
 * agent's count carried to the class of the same pattern. */
void sx_reload(struct sched *s, const struct schedconf *old);
/* ---- per-destination concurrency feedback: pure (sched_feedback.c) ---- */
/* The feedback amount of style for window N: x, x/N or x/sqrt(N). */
double sfb_amount(int style, double x, int window);
void sfb_init(struct sfb *f, const struct sc_params *p);
/* A delivery without a connection or handshake failure; busy = the destination's agents. */
void sfb_success(struct sfb *f, const struct sc_params *p, int busy);
/* A delivery with one. Returns 1 when the destination is now dead (window 0). */
int sfb_failure(struct sfb *f, const struct sc_params *p);
/* The suspension is over: one probe (window 1). */
void sfb_probe(struct sfb *f);
/* Whether an enhanced status code is a connection (4.4.1) or handshake (4.4.2) failure. */
int sfb_negative(const char *enh);

/* ---- preemption: pure (sched_preempt.c) ---- */
/* One more ready entry of message key (arrived at enq): its job, made and linked by enqueue time
 * when it has none. NULL: out of memory (the entry then runs outside preemption). */
struct spr_job *spr_add(struct spr_list *l, const void *key, long long enq);
/* An entry of j was handed out: the slot counters (Postfix's qmgr_job_count_slots). A job with
 * no entry left leaves the list (freed), here and in spr_unready. */
void spr_selected(struct spr_list *l, struct spr_job *j);
/* An entry of j went back to its message without being handed out. */
void spr_unready(struct spr_list *l, struct spr_job *j);
/* Whether a job has an entry that may go out now (its blocker status, asked fresh each time). */
typedef int spr_can_fn(void *ctx, struct spr_job *j);
/* The job whose entry goes out next: the first that can, unless a candidate preempts it (moved in
 * front of it, its slots charged). NULL: none can. Nothing is counted until spr_selected.
 * now: seconds, for the candidates' waiting time. l->p.cost MUST be at least 1. */
struct spr_job *spr_pick(struct spr_list *l, long long now, spr_can_fn *can, void *ctx);
/* Every job of the list is freed. */
void spr_clear(struct spr_list *l);
/* The glue: which thread of ring r a free agent serves next, picked by the preemptive job order;
 * ok(ctx, thr) says whether the agent may serve thr. The message's ready job is moved to the front
 * of the thread's FIFO. NULL: none. */
struct thread *spr_next(struct sched *s, struct ring *r, int (*ok)(void *ctx, struct thread *thr), void *ctx);

/* ---- recipients in memory: pure (sched_pool.c) ---- */
/* The seed's bound on recipients in memory: of ring r, or of all (r NULL). */
long srp_bound(const struct srp_global *g, const struct srp_ring *r);
/* A new ring with its two limits (its pools full). */
void srp_ring_init(struct srp_global *g, struct srp_ring *r, int limit, int xlimit);
/* Slots for message m from ring r: every unused one to the owner (the oldest message of r with
 * recipients still on disk); half of both pools to a message that preempted (once). */
void srp_grant(struct srp_ring *r, struct srp_msg *m, int owner, int preempting);
/* How many more recipients m may read now (r: its pool ring, NULL: none yet). */
long srp_room(const struct srp_global *g, const struct srp_ring *r, const struct srp_msg *m);
/* k recipients of m came into memory / left it (all_read: m has none left on disk, so its
 * slots above what it holds go back to r). */
void srp_add(struct srp_global *g, struct srp_ring *r, struct srp_msg *m, int k);
void srp_drop(struct srp_global *g, struct srp_ring *r, struct srp_msg *m, int k, int all_read);

/* ---- threads, rings, channels (sched_thread.c) ---- */
/* A reference to thread channel/host (made, with its clause resolved, when new). NULL: out of
 * memory (logged). */
struct thread *st_get(struct sched *s, const char *channel, const char *host, int is_error);
void st_put(struct sched *s, struct thread *t);
/* Appends a job for m (m->jobs counts it). -1: out of memory, nothing queued. */
int st_enqueue(struct thread *t, struct qmsg *m);
/* m joins t's newest job when that is m's, else st_enqueue */
int st_join(struct thread *t, struct qmsg *m);
/* Holds t until `until`: its ready jobs go back to their messages (sched_touch). */
void st_block(struct sched *s, struct thread *t, long long until);
struct job *st_pop(struct thread *t);
void st_push_back(struct thread *t, struct job *j);
/* t joins the end of its ring's ready list (none without a ring). */
void st_ring_append(struct thread *t);
/* After a reload: every thread's clause and ring again (old rings become stale). */
void st_reresolve(struct sched *s);
void st_free_all(struct sched *s);

/* Whether recipient r belongs in a job of thread t: its own thread's, except that a recipient
 * queued for a delay notice (RF_DELAYQ) keeps its delivery thread and is the error thread's. */
static inline int st_has(const struct qrcpt *r, const struct thread *t)
{
	return (r->flags & RF_DELAYQ) ? t->is_error : r->thr == t;
}

/* Marks m for this turn's write-and-settle pass (sq_flush). Only memory, and in sched_thread.c:
 * the lower layers call it without calling up into the queue. */
void sched_touch(struct sched *s, struct qmsg *m);

/* ---- the in-memory queue and its control files (sched_queue.c) ---- */
/* A parsed report line of a transport agent (sta_report_parse). */
struct sta_report {
	long long offset;             /* (the short fields first: one-byte offsets) */
	char id[SPOOL_ID_MAX];
	char status[12];
	char action[16];
	char enh[16];
	char final[SPOOL_ADDR_MAX + 8];
	char remote[256];
	char diag[SPOOL_TEXT_MAX + 1];
	char message[SPOOL_TEXT_MAX + 1];
};

struct qmsg *sq_find(struct sched *s, const char *id);
int sq_load(struct sched *s, const char *id, long long due);
void sq_activate(struct sched *s, struct qmsg *m);
void sq_flush(struct sched *s);
void sq_timer_pass(struct sched *s);
int sq_foreign_transit(const struct sched *s);
int sq_pickup(struct sched *s);
/* The pick-up's fsyncs (new control files, then queue/, due/ and incoming/), deferred by
 * sq_pickup until the turn's jobs are out: the loop calls it right after the hand-out, before it
 * reads any result (docs/spool.md 6). */
void sq_pickup_sync(struct sched *s);
/* The due index into memory: what is due now, or (all) a run of the whole queue, for the domain
 * s->runall_dom ("" = every domain). */
int sq_scan(struct sched *s, int all);
/* Due entries further ahead than any clause would wait (a clock that went back while the queue
 * was down, or while it ran): loaded now. */
int sq_scan_parked(struct sched *s);
/* The clock went back while running: in-memory next attempts beyond their clause's longest
 * wait come closer, and the parked due entries are loaded. */
void sq_clock_back(struct sched *s);
void sq_free_all(struct sched *s);
/* Job j of thread thr goes to the agent `pid`: its queued recipients become T (one status
 * write each) with job number seq. Returns how many; 0 when an earlier job of the same message
 * and thread is still out (j stays, to be pushed back); -1 when none was left or none could be
 * written (the job is dropped and m->jobs counts it no more). */
int sq_claim(struct sched *s, struct thread *thr, struct qmsg *m, long pid, uint16_t seq);
/* A report of agent pid (named who, for logs): the A record, the status field, memory. A report
 * on a recipient that is not T for this agent is logged and ignored. */
void sq_result(struct sched *s, long pid, const char *who, const struct sta_report *rl);
/* Job seq of agent pid on m has ended (its #hungry, or the agent is gone): recipients it did not
 * report on are "lost" (deferred), with the reason why (NULL: "ended the job without a
 * report"). */
void sq_job_done(struct sched *s, struct qmsg *m, uint16_t seq, long pid, const char *who, const char *why);

/* A dead destination (issue 14 point 3): every recipient of m queued for thr is deferred without
 * an attempt until `until` (an A record with why, the status field, the due time). */
void sq_defer_queued(struct sched *s, struct qmsg *m, struct thread *thr, long long until, const char *why);

/* A line of a control file as a refill reads it again for the next window (sched_queue.c; the
 * file is ours, but its parser is fuzzed like every other: tests/fuzz/fuzz_refill.c). line is
 * cut into words in place; env: still in the envelope (before "."). Returns what the line is;
 * the fields of l that kind names point into line. */
enum { RL_NONE, RL_END, RL_RCPT, RL_RCPT_BAD, RL_NOTIFY, RL_ATTEMPT };
struct refill_line {
	long long pid, tries, next;   /* RL_RCPT: its numbers (at most 9999999999, 9999, 9999999999) */
	long long idx;                /* RL_ATTEMPT: the recipient's index, at most SPOOL_RCPT_MAX */
	const char *channel, *host;   /* RL_RCPT, RL_RCPT_BAD: words 5 and 6 */
	const char *word;             /* RL_NOTIFY: the letters; RL_ATTEMPT: the outcome word */
	char tag;                     /* RL_RCPT, RL_RCPT_BAD: the tag byte */
};
int sq_refill_line(char *line, int env, struct refill_line *l);

/* ---- transport agents, the scheduler's end (sched_ta.c) ---- */
/* Parses one report line (fuzzable, tests/fuzz/fuzz_tareport.c). Returns 0 and fills r, or -1
 * when the line is not a report (the scheduler logs it as the agent's chatter). */
int sta_report_parse(const char *line, size_t len, struct sta_report *r);
/* Gives job j to agent t: claims its recipients, queues the ack, writes the job line. 1: sent
 * (j may be freed); 0: an earlier job of the message is still out (push j back); -1: nothing to
 * send (free j); -2: the agent cannot take it (free j and close t). */
int sta_handout(struct sched *s, struct sta *t, struct job *j);
/* One line from agent t: "#hungry" (the oldest outstanding job has ended) or a report. */
void sta_line(struct sched *s, struct sta *t, char *line, size_t len);
void sta_dispatch(struct sched *s);
void sta_io(struct sched *s, struct sta *t);
void sta_close_all(struct sched *s, int graceful);
void sta_reap(struct sched *s);
void sta_close(struct sta *t);
void sta_timers(struct sched *s);
long long sta_next_timer(struct sched *s);
void sta_free_all(struct sched *s);
/* ---- the live query socket, MAILQv2 (sched_mq.c, called by the loop) ---- */
struct pollfd;
/* Listens on SPOOL/scheduler.sock (or PARAMmailqpath UNIX:/path); -1 (logged): no live queries. */
int sched_mq_open(struct sched *s);
void sched_mq_close(struct sched *s);
/* Most descriptors sched_mq_pollfds may add. */
size_t sched_mq_nfds(const struct sched *s);
/* Fills at most room poll entries (the listener, then the clients; idle clients are closed
 * here) and returns how many; sched_mq_io handles their events. */
size_t sched_mq_pollfds(struct sched *s, struct pollfd *p, size_t room);
void sched_mq_io(struct sched *s, struct pollfd *p, size_t n);

/* ---- mailq's requests (sched_mailq.c, called by the loop) ---- */
/* A trigger line H<id>, U<id>, D<id>, I<id> (hold, release, delete, retry now; id "ALL" for
 * every message): 1 when the line was one of these (carried out, or logged why not), else 0. */
int sched_mailq_line(struct sched *s, const char *line, size_t len);

#endif
