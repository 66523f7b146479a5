/* mbox delivery: dotlock and fcntl lock, From_ line, mboxrd body, fsync, truncate back on any
 * error (see mbox.h; the choices are explained in docs/local.md). */
#include "mbox.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_POLL_US 50000

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
	/* asctime()'s layout, written by hand: strftime would pull in 3.5 KB of libc */
	static const char days[] = "SunMonTueWedThuFriSat";
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	struct tm tm;
	if (!civil_time(&t, &tm))
		memset(&tm, 0, sizeof tm), tm.tm_mday = 1, tm.tm_year = 70, tm.tm_wday = 4;
	return str_fmt(out, size, "From %s %.3s %.3s %2d %02d:%02d:%02d %d\n", who, days + 3 * tm.tm_wday,
	               months + 3 * tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
}

/* A .lock file is stale when it is old, or names a process that is gone. */
static int dotlock_stale(const char *lock)
{
	struct stat st;
	if (lstat(lock, &st) < 0)
		return errno == ENOENT;
	if (time(NULL) - st.st_mtime > MBOX_DOTLOCK_STALE)
		return 1;
	int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[32];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *end;
	long pid = strtol(buf, &end, 10);
	if (pid > 0 && end != buf && (*end == '\n' || *end == 0) && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 1;
	return 0;
}

static int fsync_parent(const char *path)
{
	char dir[4200];
	if (fio_dirname(path, dir, sizeof dir) < 0)
		return -1;
	return fio_fsync_dir(dir);
}

/* Takes path.lock. Returns 1 held, 0 not possible here (the directory is not writable for this
 * user: the fcntl lock alone protects), -1 with r set. */
static int dotlock_take(const char *lock, long long deadline, struct dl_result *r)
{
	for (;;) {
		int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
		if (now_ms() >= deadline) {
			dl_set(r, DL_DEFER, "4.2.0", "mailbox locked: %s exists", lock);
			return -1;
		}
		usleep(LOCK_POLL_US);
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
		if (now_ms() >= deadline) {
			dl_set(r, DL_DEFER, "4.2.0", "mailbox locked: %s (fcntl lock held by another process)", path);
			return -1;
		}
		usleep(LOCK_POLL_US);
	}
}

/* Opens the mailbox for appending without following a symlink, and checks it is ours. */
static int open_mailbox(const char *path, const struct mbox_opts *o, int *created, struct dl_result *r)
{
	int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int fd = open(path, flags);
	if (fd < 0 && errno == ENOENT && o->create) {
		fd = open(path, flags | O_CREAT | O_EXCL, 0600);
		*created = fd >= 0;
		if (fd < 0 && errno == EEXIST)
			fd = open(path, flags);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			dl_set(r, DL_CREATE, "4.2.0", "create %s: %s", path, strerror(errno));
			return -1;
		}
	}
	if (fd < 0) {
		if (errno == ELOOP)
			dl_set(r, DL_DEFER, "4.2.0", "refusing mailbox %s: it is a symlink", path);
		else if (errno == ENOENT)
			dl_set(r, DL_DEFER, "4.2.0", "mailbox %s does not exist", path);
		else
			dl_set_errno(r, errno, "open", path);
		return -1;
	}
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "it is not a regular file";
	else if (st.st_nlink != 1)
		why = "it has more than one hard link";
	else if (st.st_uid != geteuid())
		why = "it is owned by another user";
	if (why) {
		close(fd);
		dl_set(r, DL_DEFER, "4.2.0", "refusing mailbox %s: %s", path, why);
		return -1;
	}
	fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
	return fd;
}

void mbox_deliver(const char *path, const struct dl_msg *m, const struct mbox_opts *o, struct dl_result *r)
{
	char lock[4200];
	if (str_fmt(lock, sizeof lock, "%s.lock", path) < 0) {
		dl_set(r, DL_FAIL, "5.3.5", "mailbox path too long: %s", path);
		return;
	}
	long long deadline = now_ms() + (o->lock_timeout > 0 ? o->lock_timeout : 0) * 1000LL;
	int dot = dotlock_take(lock, deadline, r);
	if (dot < 0)
		return;
	int created = 0;
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
	off_t old = st.st_size;
	/* the previous message must end with a blank line, or our From_ line is not a separator */
	char sep[4] = "", tail[2] = {'\n', '\n'};
	if (old > 0) {
		/* the same inode for reading (fd is write-only): by /proc, else by name and compared,
		 * never blocking on a FIFO swapped in under the name */
		char proc[64];
		struct stat rst;
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		int rfd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (rfd < 0)
			rfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (rfd >= 0 && (fstat(rfd, &rst) < 0 || rst.st_dev != st.st_dev || rst.st_ino != st.st_ino)) {
			close(rfd);
			rfd = -1;
		}
		size_t k = old >= 2 ? 2 : 1;
		if (rfd < 0 || pread(rfd, tail + 2 - k, k, old - (off_t)k) != (ssize_t)k)
			tail[0] = tail[1] = '\n';
		if (rfd >= 0)
			close(rfd);
		if (tail[1] != '\n')
			str_lcpy(sep, "\n\n", sizeof sep);
		else if (tail[0] != '\n')
			str_lcpy(sep, "\n", sizeof sep);
	}
	char from[100000];
	mbox_from_line(from, sizeof from, m->sender, m->now);
	int rd_fail = 0, e = 0;
	if (dl_write_fd(&fd, sep, strlen(sep)) < 0 || dl_write_fd(&fd, from, strlen(from)) < 0)
		e = errno;
	else if (dl_copy(m, dl_write_fd, &fd, DL_MBOXRD, &rd_fail) < 0)
		e = errno;
	else if (fsync(fd) < 0)
		e = errno;
	else if (created && fsync_parent(path) < 0) /* a new mailbox: its name must last too */
		e = errno;
	if (e) {
		/* never leave half a message: cut back to where we started */
		if (ftruncate(fd, old) < 0 || fsync(fd) < 0)
			log_msg(LOG_ERR, NULL, "truncate %s back to %lld bytes: %s", path, (long long)old, strerror(errno));
		if (rd_fail)
			dl_set(r, DL_DEFER, "4.3.0", "read message file: %s", strerror(e));
		else
			dl_set_errno(r, e, "write", path);
		goto out;
	}
	dl_set(r, DL_OK, "2.0.0", "delivered to mailbox %s", path);
out:
	if (fd >= 0)
		close(fd);
	if (dot > 0)
		unlink(lock);
}

void mbox_create(const char *path, uid_t uid, gid_t gid, struct dl_result *r)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST) {
			dl_set(r, DL_OK, "2.0.0", "exists");
			return;
		}
		dl_set_errno(r, errno, "create", path);
		return;
	}
	if (fchown(fd, uid, gid) < 0 || fsync(fd) < 0 || fsync_parent(path) < 0) {
		int e = errno;
		close(fd);
		unlink(path);
		dl_set_errno(r, e, "chown", path);
		return;
	}
	close(fd);
	dl_set(r, DL_OK, "2.0.0", "created");
}
