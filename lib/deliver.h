/* What every local delivery shares: its vocabulary (a target, and the user whose privileges it
 * runs with, which the alias expansion of aliases.h produces), the message being delivered (a
 * spool message file read with pread, so forked children share the descriptor safely), the
 * result of one delivery, copying the message with the Return-Path/Delivered-To headers
 * (optionally mboxrd-quoted), running a delivery in a child with a user's privileges, and
 * |command deliveries.
 *
 * Contract: nothing here reports success before the data is fsync'd (files) or the command
 * exited 0. Errors are returned as a struct dl_result with a status, an enhanced status code
 * and a text naming the path and the errno text; nothing exits the caller's process. */
#ifndef SPOOLBOX_DELIVER_H
#define SPOOLBOX_DELIVER_H
#include "io.h"
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include "printf_like.h"

#define DL_COPY_BUF 65536 /* read buffer of one delivery */

/* A user whose privileges a delivery runs with, as the passwd entry says. */
struct dl_user {
	char name[64];
	uid_t uid;
	gid_t gid;
	char home[1024];
};

/* Looks a user up; returns 0 and fills u, 1 when there is no such user, -1 on a lookup error. */
typedef int dl_getpw_fn(void *ctx, const char *name, struct dl_user *u);
struct passwd;
/* Fills u from a passwd entry (no home: "/"). Returns 0; 1 when the home directory was cut to
 * fit; -1 when the name does not fit (u is then unusable). */
int dl_user_set(struct dl_user *u, const struct passwd *pw);
dl_getpw_fn dl_getpw_system; /* getpwnam() */

enum dl_kind { DK_MAILBOX, DK_FILE, DK_MAILDIR, DK_COMMAND, DK_REMOTE, DK_ERROR };

/* One thing to deliver. text: the mailbox owner's name (DK_MAILBOX), the path (DK_FILE,
 * DK_MAILDIR), the command (DK_COMMAND), the address (DK_REMOTE) or the reason (DK_ERROR).
 * user: whose privileges the delivery runs with. */
struct dl_target {
	enum dl_kind kind;
	char *text;
	char *sender;   /* DK_REMOTE: envelope sender to use (owner-NAME), NULL: the original */
	char status;    /* DK_ERROR: 'f' (permanent) or 'd' (temporary), DL_FAIL or DL_DEFER */
	char enh[8];    /* DK_ERROR: enhanced status code (after status: both dl_set's code) */
	/* DK_ERROR raised inside a user's .forward or include files: text may quote what root read
	 * there, so reports use this instead (it names the file only); NULL: text is fit for one */
	char *public_text;
	struct dl_user user; /* last: the fields above have short offsets */
};

struct dl_msg {
	int fd;               /* the message file (read with pread only) */
	off_t off;            /* first header byte */
	long long size;       /* message bytes */
	const char *sender;   /* envelope sender; "" is the null sender */
	const char *rcpt;     /* the recipient, for Delivered-To: */
	time_t now;
	char *buf;            /* DL_COPY_BUF bytes the caller keeps across deliveries to read the
	                       * message into, or NULL (then allocated per copy) */
};

/* DL_CREATE is internal to mbox delivery: the user may not create the mailbox, root must
 * create it empty first (the way dma's dma-mbox-create does). */
enum { DL_OK = 'o', DL_DEFER = 'd', DL_FAIL = 'f', DL_CREATE = 'c' };
/* a DK_ERROR target's status and enh, one after the other, are dl_set's code ("f5.1.1") */
_Static_assert(offsetof(struct dl_target, enh) == offsetof(struct dl_target, status) + 1 && DL_DEFER == 'd' &&
               DL_FAIL == 'f', "dl_target: status, then enh");

struct dl_result {
	char status;          /* DL_OK, DL_DEFER, DL_FAIL */
	char enh[8];          /* "2.0.0", "4.3.1", ... */
	char died;            /* dl_run_as: the process died or was killed without a result */
	char text[400];
};

/* code: the status letter, then the enhanced status code: "d4.3.0" is DL_DEFER and 4.3.0 (one
 * argument fewer at every call). Always 6 characters (a one-digit class, subject, detail). */
_Static_assert(offsetof(struct dl_result, enh) == 1, "dl_result: status, then enh");
void dl_set(struct dl_result *r, const char *code, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* Sets a deferral for a failed system call on path: ENOSPC → 4.3.1, EDQUOT → 4.2.2, anything
 * else 4.3.0; the text is "op path: strerror". */
void dl_set_errno(struct dl_result *r, int err, const char *op, const char *path);

/* Sets io up for a copy: writing to the file or pipe fd with write() and no time limit, or,
 * when w is not NULL, through w(ctx, ...) (a counter, a command's pipe, a test). */
void dl_io(struct io *io, int fd, ssize_t (*w)(void *ctx, const void *p, size_t n, int timeout_ms), void *ctx);

enum {
	DL_MBOXRD = 1,        /* quote ">*From " lines with one more '>'; end with a blank line */
	DL_NO_RETURN_PATH = 2 /* only Delivered-To: (a message re-entering the queue) */
};
/* Writes Return-Path:, Delivered-To: and the message to io, as flags say, after what io
 * already holds (mbox's From_ line), and flushes it: one write for a small message, one per
 * DL_COPY_BUF read for a large one. Returns 0, or -1 with errno: *rd_fail tells whether
 * reading the message file failed (else the write did). */
int dl_copy(const struct dl_msg *m, struct io *io, int flags, int *rd_fail);

/* The deferral for a failed copy: "read message file: ERROR" when rd_fail, else "write PATH:
 * ERROR" (dl_set_errno's codes). */
void dl_set_copy(struct dl_result *r, int e, int rd_fail, const char *path);

/* Drops to the user's privileges (groups, gid, uid), adding extra_gid to the groups when it is
 * not -1. Refuses uid 0 targets only by the caller's decision. Returns 0, -1 with errno. When
 * the process is not root, succeeds only when u is already the current user. */
int dl_become(const struct dl_user *u, long extra_gid);

/* Runs fn(arg, r) in a child process with u's privileges and returns the child's result in r.
 * The child never returns into the caller (it _exits). A child that dies without a result
 * gives a deferral (4.3.0). The child runs as u, so u can stop it (SIGSTOP) or keep it waiting
 * on a lock: after timeout seconds (> 0) the caller kills it (SIGKILL, which a stopped process
 * cannot refuse) and defers with 4.3.0 "timed out", so one user never holds the agent. */
/* waitpid(pid, st, 0), again after EINTR */
void dl_wait(pid_t pid, int *st);

typedef void dl_child_fn(void *arg, struct dl_result *r);
void dl_run_as(const struct dl_user *u, long extra_gid, long timeout, dl_child_fn *fn, void *arg, struct dl_result *r);

/* Runs `/bin/sh -c cmd` as u with env (NULL-terminated) in u's home directory, the message on
 * its stdin, at most timeout seconds. Exit 0 → ok; 75 (EX_TEMPFAIL), a signal or the time
 * limit → deferred; any other code → failed with the code mapped as sendmail maps sysexits.
 * The first line the command printed is added to the text. */
void dl_command(const char *cmd, const struct dl_user *u, char *const env[], const struct dl_msg *m,
                long timeout, struct dl_result *r);

/* A value that is safe in a command's environment: bytes outside [A-Za-z0-9!#%+,-./:=@_^~]
 * become '_' (Postfix's command_expansion_filter). */
void dl_env_clean(char *s);

/* pipe2(p, O_CLOEXEC) by the system call (Linux 2.6.27 and later): musl's pipe2 (0.2 KiB) is
 * not linked for its fallback to pipe and fcntl on older kernels. */
int dl_pipe(int p[2]);

/* The file of fd (st: its fstat) opened again for reading, never blocking (on a FIFO swapped in
 * under the name): through /proc/self/fd when that is there, else by path without following a
 * symlink (any != 0: also when the /proc open failed otherwise). Returns the descriptor; -1 with
 * errno when the open failed; -2 when what it opened is not the same file. */
struct stat;
int dl_reopen(int fd, const char *path, const struct stat *st, int any);

/* Closes every descriptor from `from` up (before exec). */
void dl_close_from(int from);
#endif
