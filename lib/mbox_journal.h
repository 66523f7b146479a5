/* The append journal of an mbox: what makes a mailbox append that was cut short (a kill -9 of
 * the delivery process, a power cut) recoverable, so a reader never sees half a message
 * (docs/local.md 2, "Never half a message").
 *
 * One small file per mailbox, SPOOL/mbox/<64-bit FNV-1a of the path in hex>, root's, mode 0600,
 * opened by the agent as root and handed to the recipient's delivery process as a descriptor.
 * While an append runs it holds one record:
 *   "mbox-append 1 DEV INO OLD NEW PLEN\n" followed by PLEN bytes (<= MBOXJ_PREFIX_MAX)
 * the mailbox's device and inode, its length before the append, its length after it, and the
 * first bytes the append writes. It is empty when no append is unfinished. */
#ifndef SPOOLBOX_MBOX_JOURNAL_H
#define SPOOLBOX_MBOX_JOURNAL_H
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define MBOXJ_PREFIX_MAX 256 /* bytes of the append's beginning kept to recognise it */
#define MBOXJ_MAX 512        /* largest journal read; anything longer is not ours */

struct mbox_jentry {
	unsigned long long dev, ino;
	long long old, new_len;
	size_t plen;
	char prefix[MBOXJ_PREFIX_MAX];
};

/* Parses a journal's content. Returns 1 with e filled, 0 when it holds no record (empty, or not
 * a well-formed record: ignored). Pure, fuzzed (tests/fuzz/fuzz_mboxjournal.c). */
int mbox_journal_parse(const char *buf, size_t len, struct mbox_jentry *e);

/* Makes SPOOL/mbox (0700, ours; a symlink or anything else there is refused). Returns 0, or -1
 * logged: then mailbox appends go on without journals (an agent that is not root). */
int mbox_journal_dir(const char *spool);
/* As root: opens (creating) the journal of the mailbox path under spool (after
 * mbox_journal_dir). Returns an fd or -1 (logged; delivery goes on without a journal). */
int mbox_journal_open(const char *spool, const char *path);

/* Truncates the mailbox fd back to old bytes and fsyncs it. Returns 0, or -1 logged as
 * "truncate PATH back to OLD bytesWHY: error". */
int mbox_journal_cut(int fd, off_t old, const char *path, const char *why);
/* With the mailbox locked (wfd write-only, st its fstat): when the journal shows an unfinished
 * append to this inode, truncates the mailbox back to where it started, fsyncs it, logs it and
 * empties the journal. Returns the mailbox's length afterwards. */
off_t mbox_journal_recover(int journal, int wfd, int rfd, const struct stat *st, const char *path);

/* Records an append about to start and makes the record durable (fdatasync). Returns 0, or -1
 * (logged: the append goes on unprotected rather than not at all). */
int mbox_journal_begin(int journal, const struct stat *st, off_t old, off_t new_len, const char *prefix, size_t plen);

/* The append is durable (or was cut back): empties the journal. */
void mbox_journal_end(int journal);
#endif
