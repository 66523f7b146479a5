/* mbox delivery: dotlock and fcntl lock, From_ line, mboxrd body, fsync, truncate back on any
 * error (see mbox.h; the choices are explained in docs/local.md). */
#include "clock.h"
#include "crashpoint.h"
#include "mbox.h"
#include "mbox_journal.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the lock polls' pause, 50 ms: nanosleep, as usleep calls it (which is not linked otherwise) */
static const struct timespec lock_poll = {0, 50000000};

int mbox_from_line(char *out, size_t size, const char *sender, time_t t)
{
	char who[1000];
	size_t n = 0;
	if (!*sender)
		sender = "MAILER-DAEMON";
	/* the From_ line is split on spaces by readers: no blanks or controls in the address */
	for (; *sender && n < sizeof who - 1; sender++)
		who[n++] = (unsigned char)*sender <= ' ' || *sender == 0x7f ? '_' : *sender;
	who[n] = 0;
	/* asctime()'s layout */
	struct tm tm;
	char date[32];
	if (!civil_time(&t, &tm))
		memset(&tm, 0, sizeof tm), tm.tm_mday = 1, tm.tm_year = 70, tm.tm_wday = 4;
	str_asctime(date, sizeof date, &tm);
	return str_fmt(out, size, "From %s %s %d\n", who, date, tm.tm_year + 1900);
}

/* A .lock file is stale when it is old, or names a process that is gone. */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static int dotlock_stale(const char *lock)
{
	struct stat st;
	if (lstat(lock, &st) < 0)
		return errno == ENOENT;
	if (time(NULL) - st.st_mtime > MBOX_DOTLOCK_STALE)
		return 1;
	int fd = openat(AT_FDCWD, lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[32];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	/* The pid is written right after the create: a lock still empty seconds later was left by a
	 * crash between the two, or by a power cut that kept the name and lost the unsynced pid
	 * (test_power_cut.py); waiting MBOX_DOTLOCK_STALE for it would defer every delivery. */
	if (n == 0)
		return time(NULL) - st.st_mtime > MBOX_DOTLOCK_EMPTY_STALE;
	if (n < 0)
		return 0;
	buf[n] = 0;
	char *end;
	long pid = strtol(buf, &end, 10);
	if (pid > 0 && end != buf && (*end == '\n' || *end == 0) && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 1;
	return 0;
}

static ssize_t count_bytes(void *ctx, const void *p, size_t n, int timeout_ms)
{
	(void)p, (void)timeout_ms;
	*(long long *)ctx += (long long)n;
	return (ssize_t)n;
}

/* Takes path.lock. Returns 1 held, 0 not possible here (the directory is not writable for this
 * user: the fcntl lock alone protects), -1 with r set. */
static int dotlock_take(const char *lock, long long deadline, struct dl_result *r)
{
	for (;;) {
		int fd = openat(AT_FDCWD, lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			char pid[24];
			int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
			if (write(fd, pid, (size_t)n) != n || close(fd) < 0) {
				int e = errno;
				unlink(lock);
				dl_set_errno(r, e ? e : EIO, "write", lock);
				return -1;
			}
			return 1;
		}
		if (errno == EACCES || errno == EPERM || errno == EROFS) {
			log_msg(LOG_DEBUG, NULL, "no dotlock %s: %s", lock, strerror(errno));
			return 0;
		}
		if (errno != EEXIST) {
			dl_set_errno(r, errno, "create", lock);
			return -1;
		}
		if (dotlock_stale(lock)) {
			log_msg(LOG_NOTICE, NULL, "removing stale lock %s", lock);
			if (unlink(lock) < 0 && errno != ENOENT) {
				if (errno == EACCES || errno == EPERM) /* we could not lock here at all */
					return 0;
				dl_set_errno(r, errno, "unlink stale", lock);
				return -1;
			}
			continue;
		}
		if (clock_mono_ms() >= deadline) {
			dl_set(r, "d4.2.0", "mailbox locked: %s exists", lock);
			return -1;
		}
		nanosleep(&lock_poll, NULL);
	}
}

static int fcntl_take(int fd, const char *path, long long deadline, struct dl_result *r)
{
	for (;;) {
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
		if (fcntl(fd, F_SETLK, &fl) == 0)
			return 0;
		if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
			dl_set_errno(r, errno, "lock", path);
			return -1;
		}
		if (clock_mono_ms() >= deadline) {
			dl_set(r, "d4.2.0", "mailbox locked: %s (fcntl lock held by another process)", path);
			return -1;
		}
		nanosleep(&lock_poll, NULL);
	}
}

/* Opens the mailbox for appending without following a symlink, and checks it is ours. */
static int open_mailbox(const char *path, const struct mbox_opts *o, int *created, struct dl_result *r)
{
	int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int fd = openat(AT_FDCWD, path, flags);
	if (fd < 0 && errno == ENOENT && o->create) {
		fd = openat(AT_FDCWD, path, flags | O_CREAT | O_EXCL, 0600);
		*created = fd >= 0;
		if (fd < 0 && errno == EEXIST)
			fd = openat(AT_FDCWD, path, flags);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			dl_set(r, "c4.2.0", "create %s: %s", path, strerror(errno));
			return -1;
		}
	}
	struct stat st;
	const char *why = NULL;
	if (fd < 0) {
		if (errno != ELOOP) {
			if (errno == ENOENT)
				dl_set(r, "d4.2.0", "mailbox %s does not exist", path);
			else
				dl_set_errno(r, errno, "open", path);
			return -1;
		}
		why = "it is a symlink"; /* refused below: its close(-1) is harmless */
	} else if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "it is not a regular file";
	else if (st.st_nlink != 1)
		why = "it has more than one hard link";
	else if (st.st_uid != geteuid())
		why = "it is owned by another user";
	if (why) {
		close(fd);
		dl_set(r, "d4.2.0", "refusing mailbox %s: %s", path, why);
		return -1;
	}
	fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
	return fd;
}

void mbox_deliver(const char *path, const struct dl_msg *m, const struct mbox_opts *o, struct dl_result *r)
{
	char lock[4200];
	if (str_fmt(lock, sizeof lock, "%s.lock", path) < 0) {
		dl_set(r, "f5.3.5", "mailbox path too long: %s", path);
		return;
	}
	long long deadline = clock_mono_ms() + (o->lock_timeout > 0 ? o->lock_timeout : 0) * 1000LL;
	int dot = dotlock_take(lock, deadline, r);
	if (dot < 0)
		return;
	int created = 0, rfd = -1;
	int fd = open_mailbox(path, o, &created, r);
	if (fd < 0)
		goto out;
	if (fcntl_take(fd, path, deadline, r) < 0)
		goto out;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		dl_set_errno(r, errno, "stat", path);
		goto out;
	}
	/* the same inode for reading (fd is write-only): by /proc, else by name and compared;
	 * none (< 0) when that fails */
	rfd = dl_reopen(fd, path, &st, 1);
	/* an append that a kill or a power cut left unfinished goes first */
	off_t old = mbox_journal_recover(o->journal, fd, rfd, &st, path);
	if (!m) {
		dl_set(r, "o2.0.0", "mailbox %s checked", path);
		goto out;
	}
	/* the previous message must end with a blank line, or our From_ line is not a separator:
	 * slen newlines before it */
	char tail[2] = {'\n', '\n'}, from[MBOXJ_PREFIX_MAX + 1100];
	size_t slen = 0;
	from[0] = from[1] = '\n'; /* not "= {...}": that zeroes all of it */
	if (old > 0) {
		size_t k = old >= 2 ? 2 : 1;
		if (rfd < 0 || pread(rfd, tail + 2 - k, k, old - (off_t)k) != (ssize_t)k)
			tail[0] = tail[1] = '\n';
		slen = tail[1] != '\n' ? 2 : tail[0] != '\n';
	}
	mbox_from_line(from + slen, sizeof from - slen, m->sender, m->now);
	size_t flen = strlen(from);
	int rd_fail = 0, e = 0;
	long long body = 0;
	struct io io;
	/* the length the mailbox will have, for the journal: the copy, counted first */
	dl_io(&io, -1, count_bytes, &body);
	if (o->journal >= 0 && dl_copy(m, &io, DL_MBOXRD, &rd_fail) < 0)
		e = errno;
	else if (o->journal >= 0)
		mbox_journal_begin(o->journal, &st, old, old + (off_t)flen + (off_t)body, from, flen);
	/* the From_ line leaves with the message, in the copy's first write */
	dl_io(&io, fd, NULL, NULL);
	io_write(&io, from, flen);
	if (e)
		;
	else if (dl_copy(m, &io, DL_MBOXRD, &rd_fail) < 0)
		e = errno;
	else if (fsync(fd) < 0)
		e = errno;
	else if (created && fio_fsync_parent(path) < 0) /* a new mailbox: its name must last too */
		e = errno;
	if (!e)
		crash_point("fsync", path); /* delivered and durable, not yet reported */
	if (e) {
		/* never leave half a message: cut back to where we started */
		if (mbox_journal_cut(fd, old, path, "") == 0)
			mbox_journal_end(o->journal);
		dl_set_copy(r, e, rd_fail, path);
		goto out;
	}
	mbox_journal_end(o->journal);
	dl_set(r, "o2.0.0", "delivered to mailbox %s", path);
out:
	if (rfd >= 0)
		close(rfd);
	if (fd >= 0)
		close(fd);
	if (dot > 0)
		unlink(lock);
}

void mbox_create(const char *path, uid_t uid, gid_t gid, struct dl_result *r)
{
	int fd = openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST) {
			dl_set(r, "o2.0.0", "exists");
			return;
		}
		dl_set_errno(r, errno, "create", path);
		return;
	}
	if (fchown(fd, uid, gid) < 0 || fsync(fd) < 0 || fio_fsync_parent(path) < 0) {
		int e = errno;
		close(fd);
		unlink(path);
		dl_set_errno(r, e, "chown", path);
		return;
	}
	close(fd);
	dl_set(r, "o2.0.0", "created");
}

int mbox_unplant(const struct stat *d, const char *dir, const char *path, const char *name, uid_t uid)
{
	char aside[4300];
	struct stat st, a;
	if (!S_ISDIR(d->st_mode) || !(d->st_mode & S_IWOTH) || lstat(path, &st) < 0)
		return 0;
	if (st.st_uid == uid || st.st_uid == 0)
		return 0; /* hers or the admin's: the ordinary checks refuse what is wrong with it */
	const char *what = S_ISLNK(st.st_mode) ? "symlink"
	                   : S_ISREG(st.st_mode) ? (st.st_nlink > 1 ? "hard link" : "file")
	                   : S_ISDIR(st.st_mode) ? "directory" : "special file";
	struct passwd *pw = getpwuid(st.st_uid);
	if (str_fmt(aside, sizeof aside, "%s/.%s.planted.%lld.%ld", dir, name, (long long)time(NULL), (long)getpid()) < 0)
		return -1;
	/* rename, not unlink: nothing of hers is destroyed, and the admin has the evidence */
	if (rename(path, aside) < 0) {
		log_msg(LOG_ALERT, NULL, "mailbox %s of uid %ld is a %s planted by uid %ld (%s), and moving it aside failed: %s",
		        path, (long)uid, what, (long)st.st_uid, pw ? pw->pw_name : "?", strerror(errno));
		return -1;
	}
	if (lstat(aside, &a) < 0 || a.st_dev != st.st_dev || a.st_ino != st.st_ino || a.st_uid != st.st_uid)
		log_msg(LOG_ALERT, NULL, "%s changed while it was moved aside to %s: check both", path, aside);
	fio_fsync_dir(dir);
	log_msg(LOG_ALERT, NULL, "mailbox %s of %s was a %s planted by uid %ld (%s): moved aside to %s, delivering into a new mailbox",
	        path, name, what, (long)st.st_uid, pw ? pw->pw_name : "?", aside);
	return 1;
}
