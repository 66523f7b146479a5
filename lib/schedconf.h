/* scheduler.conf: ZMailer's clause file exactly as seed 000 describes it (scheduler(8), section
 * CONFIGURATION FILE), plus its PARAM lines.
 *
 *   - A clause starts with a shell-style pattern in column 1, matched (fnmatch) against
 *     "channel/host"; a pattern without a slash means "channel" + "/" + "*".
 *   - Assignments (name=value, value a word or a double-quoted string) and keywords follow on
 *     the pattern line or on indented lines; '#' starts a comment (a line, or a word).
 *   - A clause with no assignments takes the contents of the next non-empty clause.
 *   - Matching runs through the clauses in order, each matching clause's settings overriding the
 *     earlier ones, and stops at the first matching clause that has a command. That clause (its
 *     contents) is the recipient's ring.
 *   - "PARAMname = value" lines in column 1 set scheduler-wide parameters.
 *
 * Every finding is reported as (file, line, reason) through the conf.h callback; the parser never
 * prints, exits or crashes, and enforces the size limits below. */
#ifndef SPOOLBOX_SCHEDCONF_H
#define SPOOLBOX_SCHEDCONF_H
#include "conf.h"
#include <stddef.h>

#define SC_FILE_MAX (256 << 10)  /* largest scheduler.conf */
#define SC_LINE_MAX 4096         /* longest line */
#define SC_CLAUSE_MAX 1024       /* most clauses */
#define SC_PATTERN_MAX 255       /* longest pattern */
#define SC_VALUE_MAX 1024        /* longest value (a command) */
#define SC_RETRIES_MAX 64        /* longest retries sequence */
#define SC_RETRY_MAX 100000      /* largest retries element */
#define SC_ARGV_MAX 32           /* most words in a command, environment settings included */
#define SC_HOSTCLASS_MAX 256     /* most PARAMhostclass lines */
#define SC_SESSIONS_MAX 100000   /* largest session limit of a host class */

/* Preemption's keys (lib/sched_preempt.c), Postfix's names and defaults (seed 004). */
struct spr_params {
	int cost;                     /* delivery_slot_cost: 5 (0 or 1: no preemption) */
	int discount;                 /* delivery_slot_discount: 50 (percent) */
	int loan;                     /* delivery_slot_loan: 3 */
	int min_slots;                /* minimum_delivery_slots: 3 */
};

/* The variables of a clause; bit (1u << SV_x) in sc_params.set says it was given. */
enum sc_var {
	SV_INTERVAL, SV_IDLEMAX, SV_EXPIRY, SV_EXPIRY2, SV_RETRIES, SV_MAXTA, SV_MAXCHANNEL,
	SV_MAXRING, SV_MAXTHR, SV_OVERFEED, SV_SKEW, SV_USER, SV_GROUP, SV_COMMAND, SV_QUEUEONLY,
	SV_TIMELIMIT, SV_MAXRCPT,
	/* per-destination concurrency (issue 14 points 2-3), Postfix's names without default_ */
	SV_INIT_CONC, SV_CONC_LIMIT, SV_POS_FEEDBACK, SV_NEG_FEEDBACK, SV_COHORT_LIMIT,
	/* preemption (issue 14 point 4), Postfix's names without default_ */
	SV_SLOT_COST, SV_SLOT_DISCOUNT, SV_SLOT_LOAN, SV_MIN_SLOTS,
	/* in-core recipients (issue 14 point 5), Postfix's names without default_ */
	SV_RCPT_LIMIT, SV_EXTRA_RCPT_LIMIT, SV_REFILL_LIMIT, SV_REFILL_DELAY, SV__COUNT
};

/* Feedback styles: x, x/concurrency, x/sqrt_concurrency. */
enum { SFB_FIXED, SFB_PER_N, SFB_PER_SQRT_N };

struct sc_params {
	unsigned set;                /* which variables were given (merged: by any matched clause) */
	/* (what struct thread reads most first: one-byte offsets) */
	int maxthr;                  /* 0 = no cap beyond the destination concurrency */
	int overfeed;                /* 2 */
	int maxrcpt;                 /* most recipients in one job (Courier's MAXRCPT), 0 = no limit */
	/* per-destination concurrency, Postfix's defaults (docs/man/scheduler.8) */
	int init_conc;               /* initial_destination_concurrency: 5 */
	int conc_limit;              /* destination_concurrency_limit: 20 */
	long long interval;          /* 1m */
	const char *command;         /* NULL = no command (matching goes on) */
	const char *user, *group;    /* NULL = the scheduler's own */
	long long idlemax;           /* 0 = 3 x interval */
	long long expiry;            /* 3d */
	long long expiry2;           /* 0 = never expire without an attempt in this run */
	const unsigned *retries;     /* "1 1 2 3 5 8 13 21 34"; points into the schedconf */
	unsigned nretries;
	int maxta, maxchannel, maxring; /* 0 = from maxta, which 0 makes the fd limit - 20 */
	int skew;                    /* 5, accepted and unused (as the seed says) */
	int queueonly;
	long long timelimit;         /* 5h: longest job before its TA is killed (0 = none) */
	int pos_style, neg_style;    /* SFB_*: destination_concurrency_{positive,negative}_feedback */
	double pos_x, neg_x;         /* their numerators: 1 and 1 */
	int cohort_limit;            /* destination_concurrency_failed_cohort_limit: 1 (0 = never dead) */
	struct spr_params slots;     /* preemption: 5, 50, 3, 3 */
	/* in-core recipients of the ring (lib/sched_pool.c, seed 004), Postfix's defaults */
	int rcpt_limit;              /* recipient_limit: 20000, the ring's pool */
	int extra_rcpt_limit;        /* extra_recipient_limit: 1000, its extra pool for preemptors */
	int refill_limit;            /* recipient_refill_limit: 100, the smallest refill ... */
	long long refill_delay;      /* recipient_refill_delay: 5s, ... unless this long has passed */
};

struct sc_clause {
	char *chan_pat, *host_pat;   /* one allocation */
	int line;
	int body;                    /* index of the clause whose contents apply */
	int nset;                    /* assignments written in this clause */
	struct sc_params p;          /* (last: the fields above keep one-byte offsets); its retries,
	                              * user, group and command are the clause's own allocations */
};

/* A host class (Sendmail's XLA, seed 002): "PARAMhostclass = PATTERN SESSIONS". PATTERN is an
 * exact host name, "*.domain" (the domain and every host under it) or "*" (every host; it MUST
 * be the last class). The first class that matches a host is its class; a host no class
 * matches has no session limit. lib/sched_xla.c counts the sessions. */
struct sc_hostclass {
	char *pat;                   /* lower case */
	int limit;                   /* most sessions at once, >= 1 */
	int line;
	int used;                    /* the scheduler's count (sched_xla.c); 0 after a parse */
};

struct schedconf {
	struct sc_clause *cl;
	size_t n;
	struct sc_hostclass *hc;     /* PARAMhostclass lines, in file order */
	size_t nhc;
	char *mailqpath;             /* PARAMmailqpath, NULL = default */
	char *authfile;              /* PARAMauthfile */
	long long report_interval;   /* PARAMglobal-report-interval, 0 = off */
	long long msgwriteasync;     /* PARAMmsgwriteasync */
	long long store_error_on_error; /* PARAMstore-error-on-error */
	long rcpt_limit;             /* PARAMmessage_recipient_limit: 20000 (Postfix's qmgr_...) */
	long rcpt_minimum;           /* PARAMmessage_recipient_minimum: 10 */
	char file[256];              /* where it came from, for messages */
};

/* The built-in configuration: seed 000's example with our applets as commands. */
extern const char schedconf_builtin[];

void schedconf_init(struct schedconf *c);
void schedconf_free(struct schedconf *c);
/* Parses text into c (which must be fresh from schedconf_init). Returns the error count. */
int schedconf_parse(struct schedconf *c, const char *file, const char *text, size_t len,
                    conf_report_fn *report, void *ctx);
/* Reads path (a missing file means the built-in configuration when missing_ok) and parses it.
 * Returns the error count; an unreadable file is one error. */
int schedconf_load(struct schedconf *c, const char *path, int missing_ok, conf_report_fn *report, void *ctx);

/* The class of host (an index into c->hc), or -1 when no class matches. Case-insensitive. */
int schedconf_hostclass(const struct schedconf *c, const char *host);
/* 1 when host is domain or a name under it (ends in ".domain"), case-insensitive: the hosts of
 * "*.domain" and of the seed's ETRN (trigger R<domain>). */
int sc_domain_match(const char *host, const char *domain);
/* A feedback value: "x", "x/y", "x/concurrency" or "x/sqrt_concurrency" (Postfix's syntax, the
 * amount in 0..1). Returns 0, or -1 when it is not one. */
int sc_feedback_parse(const char *text, int *style, double *x);

/* The seed's defaults. */
void sc_params_default(struct sc_params *p);
/* Resolves channel/host: *out gets the defaults overridden by every matching clause up to and
 * including the first with a command. Returns that clause's body index (the ring), or -1 when no
 * matching clause has a command. */
int schedconf_resolve(const struct schedconf *c, const char *channel, const char *host, struct sc_params *out);

/* Splits a command into argv after substituting $channel, $host, ${LOGDIR}/$LOGDIR, with the
 * leading NAME=value words moved to env[]. buf (size bytes) holds the strings. Returns the argv
 * count (>= 1), or -1 when the expansion does not fit or no program word is left. */
int sc_command_split(const char *command, const char *channel, const char *host, const char *logdir,
                     char *buf, size_t size, char *argv[SC_ARGV_MAX + 1], char *env[SC_ARGV_MAX + 1]);
#endif
