/* The scheduling simulator (issue 14 point 1, docs/simulate.md): the real scheduler code
 * (lib/sched_*.c) on virtual time, with simulated destinations and agents in place of processes
 * and servers. Not part of the product binary: tests/sim/schedsim.c and the unit tests link it. */
#ifndef SPOOLBOX_SCHED_SIM_H
#define SPOOLBOX_SCHED_SIM_H
#include <stddef.h>
#include <stdio.h>

#define SIM_TEXT_MAX (64 << 10)   /* largest workload */
#define SIM_LINE_MAX 512          /* longest line */
#define SIM_DEST_MAX 64           /* most destinations */
#define SIM_DOWN_MAX 8            /* most down periods per destination */
#define SIM_MAIL_MAX 64           /* most mail lines */
#define SIM_CONF_MAX 32           /* most conf lines */
#define SIM_MSGS_MAX 200000       /* most messages in all */
#define SIM_NAME_MAX 64           /* longest destination or class name */

struct sim_dest {
	char name[SIM_NAME_MAX];
	long latency_ms, jitter_ms, connect_ms;
	int limit;                    /* server concurrency limit: 421 above it (0 = none) */
	int fail_pct, confail_pct;    /* per delivery 4.3.0; per connection refused 4.4.1 */
	int ndown;
	long long down[SIM_DOWN_MAX][2]; /* [from, to) in seconds of virtual time */
};

#define SIM_DOMAINS_MAX 2000     /* most hosts (domains) of one message */
#define SIM_RCPTS_MAX 100000     /* most recipients of one message (several control files) */
#define SIM_RCPTS_ALL 1000000    /* most recipients in all */
#define SIM_FILE_RCPTS 10000     /* most recipients of one control file (SPOOL_RCPT_MAX) */

struct sim_mail {
	long long at_ms;
	long count;
	long every_ms;
	int dest;
	int cls;
	int domains;                  /* 0: its recipients to dest; N: to hosts hK.DEST (K = 0..N-1,
	                               * recipient j to K = j mod N), each a thread behaving as dest */
	long rcpts;                   /* recipients of each message (0: domains, or 1); above
	                               * SIM_FILE_RCPTS it is submitted as several control files */
};

struct sim_work {
	unsigned long long seed;
	long long sample_s;           /* concurrency sample period (default 10) */
	long long until_s;            /* stop then (default 30 days) */
	int ndest, nmail, nconf, ncls;
	long total;                   /* messages in all */
	long files, rcpts;            /* control files and recipients in all */
	long queuehi;                 /* QUEUEHI: most messages (control files) in memory */
	struct sim_dest dest[SIM_DEST_MAX];
	struct sim_mail mail[SIM_MAIL_MAX];
	char cls[SIM_MAIL_MAX][SIM_NAME_MAX];
	char conf[SIM_CONF_MAX][SIM_LINE_MAX];
};

/* Parses a workload (docs/simulate.md). Returns 0, or -1 with "line N: reason" in err. */
int sim_parse(const char *text, size_t len, struct sim_work *w, char *err, size_t errsize);
/* Runs a parsed workload in a private spool under tmpdir and prints the figures to out. The
 * same workload gives the same bytes. Returns 0, or an exit code (sysexits.h) with err set. */
int sim_run(const struct sim_work *w, const char *tmpdir, FILE *out, char *err, size_t errsize);
#endif
