/* mbox delivery (mboxrd quoting, From_ line, fcntl lock plus .lock dotlock, truncation back to
 * the old length on any error) and the root-side creation of a missing mailbox.
 *
 * Contract: mbox_deliver() runs with the privileges of the mailbox's owner (a child of
 * dl_run_as()); it opens the mailbox with O_NOFOLLOW, refuses a mailbox that is not a regular
 * file, has more than one hard link or is not owned by the current user, and reports success
 * only after fsync. On any failure the mailbox is truncated back to its old length: a reader
 * never sees half a message. */
#ifndef SPOOLBOX_MBOX_H
#define SPOOLBOX_MBOX_H
#include "deliver.h"

#define MBOX_DOTLOCK_STALE 300 /* seconds after which a .lock file is stale (procmail, mutt) */
#define MBOX_DOTLOCK_EMPTY_STALE 5 /* an empty one: its maker died between create and write */

struct mbox_opts {
	long lock_timeout;    /* seconds to wait for the locks before deferring */
	int create;           /* create a missing mailbox (mode 0600) */
	int journal;          /* the mailbox's append journal (mbox_journal.h), or -1 */
};

/* Appends m to the mailbox. With a journal, an append cut short by a kill or a power cut is
 * recoverable: after the locks are held and before anything is written, the journal durably
 * records the mailbox (device, inode), its length, the length it will have and the first bytes
 * to be written; it is emptied once the mailbox is fsync'd. Whoever next holds the locks
 * (another delivery, or m == NULL: recovery only) truncates an append the journal shows
 * unfinished (the mailbox is longer than it was, shorter than it would have been, and starts
 * there with the recorded bytes) back to where it started. */
void mbox_deliver(const char *path, const struct dl_msg *m, const struct mbox_opts *o, struct dl_result *r);
/* As root: creates an empty mailbox owned by uid:gid, mode 0600, refusing to follow a symlink.
 * EEXIST is success (someone else made it; mbox_deliver checks it). */
void mbox_create(const char *path, uid_t uid, gid_t gid, struct dl_result *r);
/* As root, before delivering to the mailbox `name` in dir: in a world-writable dir, an entry
 * under that name that belongs neither to the recipient (uid) nor to root was planted by another
 * user (a symlink to capture or bounce the mail, a file of hers to read it): it is renamed aside
 * to dir/.NAME.planted.TIME.PID, the directory fsync'd, and logged at LOG_ALERT, so the delivery
 * creates a fresh mailbox. d: dir's stat; path: dir/name. Returns 1 moved, 0 nothing to do, -1 error (logged). */
struct stat;
int mbox_unplant(const struct stat *d, const char *dir, const char *path, const char *name, uid_t uid);
/* The "From " line of a message: "From SENDER DATE\n" (MAILER-DAEMON for the null sender). */
int mbox_from_line(char *out, size_t size, const char *sender, time_t t);
#endif
