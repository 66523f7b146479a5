/* Queue control on the spool itself (docs/spool.md 12): hold, release, delete and retry-now of
 * one message, done by mailq while it holds the scheduler's lock (SPOOL/scheduler.pid), so no
 * scheduler runs meanwhile and these steps are the only writer. With a scheduler running, mailq
 * sends the same request as a trigger line and the scheduler does it (it owns its memory).
 *
 * Every function logs what failed and returns -1 (errno kept), 0 when done, or 1 when the
 * message is not in a state the action applies to (not queued, not held, already held). */
#ifndef SPOOLBOX_QCTL_H
#define SPOOLBOX_QCTL_H
#include "spool.h"

enum qctl_action { QA_HOLD, QA_RELEASE, QA_DELETE, QA_RETRY };

/* The scheduler's lock, taken by mailq (see qctl_lock). */
struct qctl_lock {
	int fd;
	int marked;   /* we wrote our pid: a crash of ours reads as an unclean stop */
};

/* 1 when hold/<id> exists. */
int qctl_held(const struct spool *sp, const char *id);
int qctl_path_hold(const struct spool *sp, const char *id, char *out, size_t size);
/* Pid of the scheduler holding the spool's lock, 0 when none runs, -1 on error. */
long qctl_scheduler_pid(const struct spool *sp);
/* Takes the lock: 0 taken, 1 a scheduler runs (its pid in *pid), -1 error. While the lock is
 * held the pid file names this process (unless it named a crashed scheduler, which it keeps
 * naming), so that a crash here makes the next scheduler start check the whole queue. */
int qctl_lock(const struct spool *sp, struct qctl_lock *lk, long *pid);
void qctl_unlock(struct qctl_lock *lk);
/* The time in the name of the message's due link, 0 when it has none. */
long long qctl_due_time(const struct spool *sp, const char *id);
/* One action on one message, with the lock held (or by the scheduler for a trigger line, for
 * a message it does not have in memory). now is the time written for retry and release. a MUST
 * be one of the four actions (as for qctl_name). */
int qctl_apply(struct spool *sp, enum qctl_action a, const char *id, long long now);
/* Users' runs of the queue (sendmail -q by anyone but root, issue 11 point 10): at most one per
 * QCTL_QRUN_INTERVAL seconds for all users together, counted by the time of SPOOL/tmp/.qrun
 * (group-writable, flock'd). 1 allowed (and counted), 0 not yet (*wait: seconds left), -1 the
 * stamp could not be used (refused too). */
#define QCTL_QRUN_INTERVAL 60
int qctl_qrun_allowed(const struct spool *sp, long long now, long *wait);
/* The same, when the time in the message's due link is known (the scheduler's m->due, or a walk
 * of the due index); due < 0: looked up. */
int qctl_apply_at(struct spool *sp, enum qctl_action a, const char *id, long long due, long long now);
/* Calls fn for every held message (t = 0); fn returning non-zero stops the walk. */
int qctl_hold_each(const struct spool *sp, spool_each_fn *fn, void *ctx);
/* "hold", "release", ... */
const char *qctl_name(enum qctl_action a);
/* The trigger line for an action ("H<id>", docs/spool.md 10); 0, or -1 when it does not fit. */
int qctl_line(enum qctl_action a, const char *id, char *out, size_t size);
#endif
