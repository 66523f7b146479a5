/* The spool: message ids, the message and control file formats, enqueue, pick-up, the due index,
 * in-place recipient status, attempt records and removal. docs/spool.md is the definition; this
 * header is its API. Every function logs what failed (operation, path, errno text) and returns
 * -1; none of them exits. */
#ifndef SPOOLBOX_SPOOL_H
#define SPOOLBOX_SPOOL_H
#include "dsn_flags.h"
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* Versions (docs/spool.md 4.1): 1 is what every envelope block says; 2 is a control file that
 * may hold the tag S (a success notice owed), turned from 1 into 2 in place by the write of its
 * first S, so that an older reader refuses it rather than misread it. Readers take 1..VERSION. */
#define SPOOL_VERSION 2
#define SPOOL_VERSION_ENV 1
#define SPOOL_ID_MAX 32           /* buffer size for an id, NUL included */
#define SPOOL_PATH_MAX 4096
#define SPOOL_CTL_MAX (16u << 20) /* largest control file */
#define SPOOL_LINE_MAX 4096       /* longest control-file line */
#define SPOOL_ADDR_MAX 998        /* longest decoded address */
#define SPOOL_RCPT_MAX 10000      /* most recipients of one message */
#define SPOOL_TEXT_MAX 512        /* longest attempt text kept */
#define SPOOL_BUCKET 10000        /* seconds per due-index bucket */
#define SPOOL_TMP_MAX_AGE (36 * 3600)
/* The host of a job line that takes the agent's recipients whatever their host: the error
 * channel's one thread, so that all failures of a message make one report. No host name has
 * a '*' (docs/spool.md 11). */
#define SPOOL_ANY_HOST "*"

/* Recipient tags (docs/spool.md 4.2). */
enum {
	RT_NEW = 'N',
	RT_DEFERRED = 'Q',
	RT_TRANSIT = 'T',
	RT_DELIVERED = 'D',
	RT_FAILED = 'F',
	RT_REPORTED = 'X',
	RT_SUCCESS = 'S',     /* delivered, a success notice (NOTIFY=SUCCESS) still owed */
};

struct spool_rcpt {
	/* small fields first, the arrays last: one-byte displacements (docs/size.md) */
	char tag;             /* RT_* */
	unsigned tries;       /* finished attempts */
	long pid;             /* TA pid while RT_TRANSIT */
	long long next;       /* see docs/spool.md 4.2 */
	char *addr;           /* the address handed to the channel (decoded), malloc'd */
	long priv;            /* uid whose privileges apply, or -1 */
	unsigned notify;      /* NOTIFY_* bits (dsn_flags.h), 0 = not given */
	char *orcpt;          /* "rfc822;addr" (decoded) or NULL, malloc'd */
	off_t off;            /* byte offset of the 'r' of this record (in both files) */
	char channel[32];     /* [a-z0-9_-]+ */
	char host[256];       /* lower-case domain, [literal] or "-" */
};

struct spool_attempt {
	int rcpt;             /* recipient number */
	long long time;
	char code[12];        /* ok, error, deferred, lost, ... */
	char action[12];      /* delivered, failed, delayed, ... */
	char enh[16];         /* "5.1.1" or "-" */
	char *remote;         /* decoded, or NULL */
	char *text;
};

/* Everything the envelope block and the control file say. */
struct spool_msg {
	/* small fields first, the arrays last: one-byte displacements (docs/size.md); the
	 * recipients first of all (struct enq holds this after a few fields of its own) */
	struct spool_rcpt *rcpt;
	size_t nrcpt;
	char *sender;         /* decoded; "" is the null sender */
	char *envid;          /* decoded or NULL */
	struct spool_attempt *att;
	size_t natt;
	int version;
	int body8;            /* 'b 8' */
	int smtputf8;         /* 'U' */
	char ret;             /* 'F', 'H' or 0 */
	long long arrival;
	off_t body_off;       /* 'o' */
	long long size;       /* 'z' */
	long uid;             /* 'u' */
	long long warned;     /* time of the last 'W', 0 if none */
	off_t env_end;        /* offset just past the "." line */
	char id[SPOOL_ID_MAX];
	char bounce_id[SPOOL_ID_MAX]; /* from 'B', "" if none */
	char user[64];
};

/* New control files left unsynced by one pick-up (defer_sync): as many as the scheduler picks up
 * between two syncs (PICKUP_BATCH in lib/sched_queue.c), so that a whole batch is synced in one
 * round of directory fsyncs and every new file is still open when its message is loaded and
 * handed out (a smaller list synced and closed the first part of each batch, which the hand-out
 * then opened again: two calls a message, and a second round of directory fsyncs). */
#define SPOOL_PENDING_MAX 128

/* An open spool: the root directory and what pick-up touched (for batched directory fsyncs). */
struct spool {
	unsigned long dirty_queue;   /* bit h: queue/<h>/ needs fsync */
	unsigned long have_queue;    /* bit h: queue/<h>/ is known to exist (saves a mkdir) */
	unsigned long have_qgid;     /* bit h: qgid[h] is the group files made in queue/<h>/ get */
	int dirty_incoming;
	/* The scheduler's pick-up sets defer_sync: the new control files are left open here, unsynced,
	 * and spool_sync_dirty() makes them durable with the directories, after the jobs went out
	 * (docs/spool.md 6); npending is at most SPOOL_PENDING_MAX (a full list is synced first). */
	int defer_sync;
	unsigned npending;
	long long dirty_due[8];      /* due buckets needing fsync (0 = unused) */
	long long have_due[4];       /* due buckets known to exist, +1 (0 = unused) */
	gid_t qgid[36];
	int pending_fd[SPOOL_PENDING_MAX];
	unsigned char pending_lent[SPOOL_PENDING_MAX]; /* 1: pending_fd[i] is lent (spool_pending_lend) */
	char pending_id[SPOOL_PENDING_MAX][SPOOL_ID_MAX];
	/* the arrays after the scalars, the path last: one-byte displacements (docs/size.md) */
	char dir[SPOOL_PATH_MAX - 64];
};

/* ---- ids and paths ---- */

/* 1 when s is a well-formed id (the only ids ever used in a path). */
int spool_id_valid(const char *s);
/* Builds an id from a creation time and an inode number. */
void spool_id_make(char out[SPOOL_ID_MAX], long long sec, long usec, unsigned long long ino);
/* The 36 digits of ids and queue/<h>/ names, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" (one copy). */
extern const char spool_b36[37];
/* Creation time encoded in an id (seconds), or -1. */
long long spool_id_time(const char *id);
/* Paths of a message's files. Return 0, or -1 if the id is invalid or the path too long. */
int spool_path_ctl(const struct spool *sp, const char *id, char *out, size_t size);
int spool_path_msg(const struct spool *sp, const char *id, char *out, size_t size);
int spool_path_incoming(const struct spool *sp, const char *id, char *out, size_t size);
/* SPOOL/sub into out (SPOOL_PATH_MAX bytes); str_fmt's result. */
int spool_sub(const struct spool *sp, const char *sub, char *out);
/* SPOOL/sub/id (incoming/, hold/): -1 for an invalid id, as the other path builders. */
int spool_path_in(const struct spool *sp, const char *sub, const char *id, char *out, size_t size);
int spool_path_due(const struct spool *sp, const char *id, long long t, char *out, size_t size);

/* ---- opening ---- */

/* Opens the spool at dir. With create, makes the layout and repairs its modes (root only;
 * docs/spool.md 8 with spool_perm(); group gid, or -1 for spool_submit_gid(NULL)). Without,
 * only checks that it is there; create < 0: not even that (the caller has just seen incoming/). */
int spool_open(struct spool *sp, const char *dir, int create, long gid);

/* ---- permissions (docs/spool.md 8) ---- */

/* The gid of the submit group named group; NULL: SUBMIT_GROUP from the environment (where the
 * scheduler exports its configuration) or its compiled-in default. -1 when there is none. */
long spool_submit_gid(const char *group);
/* A difference from docs/spool.md 8: the path, what is wrong, the command that fixes it. */
typedef void spool_perm_fn(void *ctx, const char *path, const char *problem, const char *fix);
/* Compares every entry of the spool root dir with docs/spool.md 8 (tmp/, incoming/, trigger,
 * queue/, hold/ and the root itself in group gid when gid >= 0; everything owned by the root's
 * owner). With fix, creates what is missing and sets what differs where this process may
 * (logged at notice level); never follows a symlink. report (may be NULL) gets each difference
 * left. Returns their number, or -1 when fix could not create a missing entry (logged). */
int spool_perm(const char *dir, long gid, int fix, spool_perm_fn *report, void *ctx);

/* The longest line of the agent protocol, newline included (docs/spool.md 11). */
#define SPOOL_JOB_LINE_MAX 1024

/* ---- the text formats ---- */

/* Parses an envelope block or a whole control file. On error returns -1 with the reason and the
 * 1-based line in err ("line 7: recipient record: bad status field"); never crashes on any input.
 * stop_at_env: stop after the "." line (message files). */
int spool_msg_parse(const char *text, size_t len, int stop_at_env, struct spool_msg *m, char *err, size_t errlen);
void spool_msg_free(struct spool_msg *m);
/* Writes the envelope block of m (recipients from m->rcpt, status fields N/0/0/0) into the
 * buffer-appending callback. body_off and size are written as fixed-width placeholders; their
 * offsets are returned in *off_o and *off_z for spool_writer to patch. */
struct buf;
int spool_env_format(const struct spool_msg *m, struct buf *out, size_t *off_o, size_t *off_z, size_t *off_b);
/* Formats the status field of r (tag .. next, SPOOL_STATUS_LEN bytes, no NUL) into out. */
#define SPOOL_STATUS_LEN 28
void spool_status_format(const struct spool_rcpt *r, char out[SPOOL_STATUS_LEN]);

/* ---- enqueue (submit): docs/spool.md 5 ---- */

struct spool_writer {
	int fd;
	char id[SPOOL_ID_MAX];
	size_t off_o, off_z, off_b;    /* where the placeholders are */
	long long size;                /* message bytes written */
	int body8;                     /* saw a byte >= 0x80 */
	const struct spool *sp;
	size_t blen;                   /* bytes waiting in buf */
	int env_held;                  /* buf still starts with the envelope: commit patches it there */
	/* bytes of the spool's file system that must stay free (QUEUE_MINFREE), checked at every
	 * flush and before the commit; begin sets 0 (none), the caller may set it afterwards */
	long long minfree;
	/* while size is below this, the last look found room to spare (half of what was free above
	 * the reserve): no statfs() per flush for a small message; begin sets 0 (always look) */
	long long room_until;
	char tmppath[SPOOL_PATH_MAX]; /* the arrays last: one-byte displacements (docs/size.md) */
	char buf[16384];
};

/* The free-space reserve (QUEUE_MINFREE, Postfix's queue_minfree; docs/spool.md 5): 0 while
 * the spool's file system has at least minfree bytes available (and a few inodes), else -1 with
 * errno EDQUOT, the figures logged (under id, may be NULL). minfree <= 0: always 0. */
int spool_room(const struct spool *sp, long long minfree, const char *id);
/* The same; *spare gets half of what is free above the reserve (0 when not known). */
int spool_room_spare(const struct spool *sp, long long minfree, const char *id, long long *spare);
/* E1: creates the temporary file, assigns the id (w->id, and m->id), writes the envelope block.
 * m->arrival is set to now when 0. With w->minfree set afterwards, a write or the commit that
 * finds less free space fails with errno EDQUOT (spool_room). */
int spool_writer_begin(const struct spool *sp, struct spool_writer *w, struct spool_msg *m);
/* Appends message bytes (already in the stored form: LF line endings). */
int spool_writer_write(struct spool_writer *w, const void *p, size_t n);
/* E2..E4: patches o/z/b, fsyncs, renames into incoming/, fsyncs incoming/, pulls the trigger.
 * 0 means the message is durable and visible. On failure the temporary file is removed. */
int spool_writer_commit(struct spool_writer *w);
/* Removes the temporary file (any state before commit). */
void spool_writer_abort(struct spool_writer *w);
/* Wakes a running scheduler; silently does nothing when none runs. */
void spool_trigger_pull(const struct spool *sp);
/* Writes one trigger line ("Q", "Rexample.com"; docs/spool.md 10). Returns 0 when a scheduler
 * got it, -1 (errno ENXIO) when none is running. */
int spool_trigger_send(const struct spool *sp, const char *line);

/* ---- the scheduler's side: docs/spool.md 6, 7, 9 ---- */

/* Opens the trigger FIFO for reading (creating it when missing); returns the fd or -1.
 * Drain it with spool_trigger_drain() after poll() says it is readable: it reads everything
 * waiting and returns how many bytes of it it stored in buf (the rest is dropped). */
int spool_trigger_open(const struct spool *sp);
size_t spool_trigger_drain(int fd, char *buf, size_t size);

typedef int spool_each_fn(void *ctx, const char *id, long long t);
/* Calls fn for every message in incoming/ (t = 0). fn returning non-zero stops the walk. */
int spool_incoming_each(const struct spool *sp, spool_each_fn *fn, void *ctx);
/* P1+P2 for one message; the directory fsyncs are left to spool_pickup_sync(). *arrival gets
 * the arrival time (the due link's time). env != NULL: on success *env gets the parsed envelope,
 * which is the new control file's whole content with the same offsets (the caller frees it with
 * spool_msg_free), so the scheduler need not read back what it just wrote. */
int spool_pickup_prepare(struct spool *sp, const char *id, long long *arrival, struct spool_msg *env);
/* fsyncs the control files left pending (defer_sync), then the directories that prepare/finish
 * touched; closes the pending files that are not lent (spool_pending_lend: the borrower's). */
int spool_sync_dirty(struct spool *sp);
/* The control file of id that pick-up created and has not synced yet, lent to the caller (the
 * scheduler's hand-out writes to it instead of opening it again), or -1. The spool still syncs
 * it in spool_sync_dirty(); the caller gives it back with spool_pending_return() instead of
 * closing it: 0 when it was one (the spool closes it after its sync), -1 when the caller must
 * close fd itself. */
int spool_pending_lend(struct spool *sp, const char *id);
int spool_pending_return(struct spool *sp, int fd);
/* P3 for one message (rename into queue/). */
int spool_pickup_finish(struct spool *sp, const char *id);

/* Due buckets whose range starts at or before `upto`, oldest first; fn gets every entry's id and
 * time (also entries later than upto in those buckets: the caller decides). */
int spool_due_each(struct spool *sp, long long upto, spool_each_fn *fn, void *ctx);
/* The earliest bucket start after `after`, or 0 when there is none (for the wake-up timer). */
long long spool_due_next_bucket(const struct spool *sp, long long after);
/* Moves the index entry from time old to time new (D3). old == 0: creates it. */
int spool_due_move(struct spool *sp, const char *id, long long old, long long new_t);
/* Walks every queue/<h>/ directory for control files (the full scan of docs/spool.md 9.5). */
int spool_queue_each(const struct spool *sp, spool_each_fn *fn, void *ctx);

/* Opens and parses a queued message's control file. *fd gets an O_RDWR descriptor (O_RDONLY
 * with readonly) for the in-place updates; the caller closes it. */
int spool_ctl_load(const struct spool *sp, const char *id, int readonly, struct spool_msg *m, int *fd, char *err, size_t errlen);
/* Rebuilds a damaged control file from the envelope block of the message file (docs/spool.md 3),
 * in place (same inode, so the due link still names it), fsync'd; the delivery history is lost.
 * Refuses (-1, reason in err) when the control file parses, cannot be read, or says a format
 * version newer than this program's, or when the message file's envelope is not usable. */
int spool_ctl_rebuild(const struct spool *sp, const char *id, char *err, size_t errlen);
/* D1/D2: one pwrite of r's status field at r->off + 2 (writing the tag S first makes the file
 * version 2: one more pwrite of the version digit). */
int spool_rcpt_update(int fd, const struct spool_rcpt *r, const char *path);
/* D2: appends one attempt record (text is sanitised and cut to SPOOL_TEXT_MAX). */
int spool_attempt_append(int fd, const struct spool_attempt *a, const char *path);
/* Appends a raw record line ("W 1795246800", "B 1795246800 ID"); it must not contain '\n'. */
int spool_record_append(int fd, const char *line, const char *path);
/* The same where the caller tracks the file's end: *end > 0 (the offset just past a whole last
 * line this process wrote) is appended at without a look at the file; it is updated on success,
 * and 0 after a failure (the next append looks). The caller MUST be the file's only writer. */
int spool_record_append_at(int fd, const char *line, const char *path, off_t *end);
int spool_attempt_append_at(int fd, const struct spool_attempt *a, const char *path, off_t *end);
/* Copies src (NULL: "") into dst, at most size - 1 bytes, each control character a space: text
 * fit for one field of a record or a protocol line. */
void spool_clean_copy(char *dst, size_t size, const char *src);
/* The same with each control character (and DEL) as repl; returns dst (mailq shows them as '?'). */
char *spool_clean_as(char *dst, size_t size, const char *src, char repl);
/* R1..R3: removes the due link for time t (t < 0: every due link of the id found by name is
 * left to the cleaner), the control file, then the message file. */
int spool_remove(struct spool *sp, const char *id, long long t);

/* Removes the leftovers of interrupted work (docs/spool.md 5, 7, 9): tmp/ files older than
 * max_age seconds, message files whose control file is gone (R2), due links whose control file
 * is gone (R1 crashes and stale D3 names: a due link with a link count of 1). Fills counts
 * (may be NULL). Safe while submit runs; run it only where no scheduler is picking up
 * (the scheduler itself at start, or the cleaner applet with the scheduler's lock held). */
struct spool_clean_counts {
	unsigned tmp, orphan_msg, stale_due;
};
int spool_clean(struct spool *sp, long long now, long long max_age, struct spool_clean_counts *counts);

/* Just past the first "\n.\n" of p[0..n) (the end of an envelope block, whose first line is
 * never "."), or NULL. */
const char *spool_env_end(const char *p, size_t n);
/* Reads the envelope block (up to and including the "." line) of a message file into b (its
 * max bounds it); nothing after the block is read. -1 with errno (EFBIG, ENOMEM, EINVAL: no
 * end of block) when it fails. */
int spool_env_read(const char *path, struct buf *b);

/* Opens the message file for reading, positioned at the first header byte (body_off); a negative
 * body_off leaves it at 0, for a caller that reads with pread(). */
int spool_msg_open(const struct spool *sp, const char *id, off_t body_off);
#endif
