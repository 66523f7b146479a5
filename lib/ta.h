/* The transport-agent side of the scheduler protocol (docs/spool.md 11, seed 000): the
 * "#hungry" loop, choosing the recipients of a job, and the per-recipient report line.
 * Shared by local, smtp, errormail and hold. */
#ifndef SPOOLBOX_TA_H
#define SPOOLBOX_TA_H
#include "spool.h"
#include <stdio.h>

struct ta_chan;

/* A job: one message, one host, the recipients the scheduler marked for this TA. */
struct ta_job {
	/* the scalars first, then msg (its recipients first), the arrays last: one-byte
	 * displacements (docs/size.md) */
	const struct spool *sp;
	size_t *idx;               /* indexes into msg.rcpt of this job's recipients */
	size_t n;
	struct ta_chan *chan;      /* the streams to the scheduler (lib/ta.c); NULL: reports go to fd 1 */
	int msg_fd;                /* the message file, once open (ta_msg_fd); 0 or -1: not open */
	const char *head;          /* its first headlen bytes, when msg came from them (else NULL) */
	size_t headlen;
	struct spool_msg msg;      /* the parsed control file */
	char id[SPOOL_ID_MAX];
	char host[256];
};

/* Called once per job; it must call ta_report() once for every recipient in job->idx. A TA that
 * wants to close a cached connection when moved to the idle pool sets `idle`. One that keeps
 * something open between jobs for a limited time sets `wait_ms` (how long it may wait for the
 * next job line now, -1 = no limit) and `waited` (called when that time passed without one):
 * the wait is the poll() that precedes reading a job line anyway, so no timer is armed and
 * disarmed around every job. */
struct ta_ops {
	int (*job)(void *ctx, struct ta_job *job);
	void (*idle)(void *ctx);
	int (*wait_ms)(void *ctx);
	void (*waited)(void *ctx);
	/* 1: the agent needs only the envelope (sender, recipients, DSN parameters), not the
	 * control file's delivery history: when the job line names the recipients, the envelope is
	 * read from the message file, in the read that also brings the message's first bytes
	 * (ta_msg_fd, ta_msg_pread), and the control file is not opened (docs/spool.md 11) */
	int envelope_only;
};

/* Runs the protocol on stdin/stdout until EOF: "#hungry", read "id\thost" (optionally
 * "\toff,off,...": the offsets of the job's recipients) or "#idle", load the control file
 * read-only, select the recipients with tag T, pid == getpid() and this host (and channel, when
 * channel is not NULL), call ops->job. With ops->envelope_only and the offsets, the envelope
 * comes from the message file and the offsets select the recipients. A control file that cannot be read is
 * logged and nothing is reported: the scheduler defers every recipient of a job that was not
 * reported when the TA says "#hungry" again (docs/spool.md 11). Returns an exit code.
 * debug_id != NULL: the by-hand mode (-m ID): every recipient of `channel` that is not done,
 * reports printed, nothing else. */
int ta_main_loop(const struct spool *sp, const char *channel, const struct ta_ops *ops, void *ctx, const char *debug_id);

/* The recipients of m that a job line's list of offsets ("117,301") names, as indexes into
 * m->rcpt (idx has room for m->nrcpt): each must be there, of channel (NULL: any) and host (the
 * host "*": any), and appear at most m->nrcpt times in all. Returns how many, or -1 when the list
 * is malformed or names one that does not qualify. */
long ta_pick(const struct spool_msg *m, const char *list, const char *channel, const char *host, size_t *idx);

/* The job's message file, opened on the first call (positioned nowhere in particular: read it
 * with pread() or seek first); the job owns it and closes it after ops->job. -1 when it cannot be
 * opened (logged). */
int ta_msg_fd(struct ta_job *job);
/* pread() of the message file, from the bytes already read with the envelope where they
 * cover it (no system call for a message that came whole in that read). */
ssize_t ta_msg_pread(struct ta_job *job, void *buf, size_t n, off_t off);

/* Status words of the protocol. */
#define TA_OK "ok"
#define TA_ERROR "error"
#define TA_DEFERRED "deferred"
#define TA_DEFERALL "deferall"
#define TA_RETRYAT "retryat"

/* Writes one report line to the scheduler (the job's last one leaves with the next "#hungry"):
 *   id/offset \t final \x01 action \x01 enh \x01 diag \x01 remote \t status message
 * final is the address (written as "rfc822;addr"), action the DSN action ("delivered",
 * "failed", "delayed", "relayed", "expanded"), enh "X.Y.Z", diag the remote reply or the
 * diagnostic, remote the remote MTA or NULL. Tabs, \x01 and control characters in any field are
 * replaced by spaces, so a remote reply cannot forge a report. */
void ta_report(const struct ta_job *job, size_t idx, const char *status, const char *action,
               const char *enh, const char *diag, const char *remote);

/* Logs the recipient's outcome as Postfix's delivery agents do ("to=<a>, relay=R, delay=S,
 * dsn=X.Y.Z, status=sent|bounced|deferred (text)") for log summarisers; status is a TA_* word
 * (TA_OK and smtp's "ok2" sent, TA_ERROR bounced, anything else deferred), extra goes after the relay. */
void ta_log_delivery(const struct ta_job *job, size_t idx, const char *status, const char *relay,
                     const char *extra, const char *enh, const char *text);

/* The scheduler's end parses these lines with sta_report_parse() (lib/sched_ta.c). */
#endif
