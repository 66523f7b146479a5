/* Queue control on the spool (docs/spool.md 12): the hold index, the scheduler's lock as mailq
 * takes it, and the steps of hold, release, delete and retry-now. Each action's first step
 * is the one that decides it, and a crash after it leaves a state the next scheduler start (or
 * the cleaner) finishes the same way; a crash before it leaves the message as it was. */
#include "crashpoint.h"
#include "qctl.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int qctl_path_hold(const struct spool *sp, const char *id, char *out, size_t size)
{
	return spool_path_in(sp, "hold", id, out, size);
}

int qctl_held(const struct spool *sp, const char *id)
{
	char path[SPOOL_PATH_MAX];
	struct stat st; /* stat: the effective ids, as faccessat(F_OK, AT_EACCESS) */
	return qctl_path_hold(sp, id, path, sizeof path) == 0 && stat(path, &st) == 0;
}

static int pidfile(const struct spool *sp, int flags)
{
	char path[SPOOL_PATH_MAX];
	if (spool_sub(sp, "scheduler.pid", path) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0644);
}

static long lock_owner(int fd)
{
	struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (fcntl(fd, F_GETLK, &q) < 0)
		return -1;
	return q.l_type == F_UNLCK ? 0 : (long)q.l_pid;
}

long qctl_scheduler_pid(const struct spool *sp)
{
	int fd = pidfile(sp, O_RDONLY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	long pid = lock_owner(fd);
	close(fd);
	return pid;
}

int qctl_lock(const struct spool *sp, struct qctl_lock *lk, long *pid)
{
	lk->fd = pidfile(sp, O_RDWR | O_CREAT);
	lk->marked = 0;
	*pid = 0;
	if (lk->fd < 0)
		return -1;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (fcntl(lk->fd, F_SETLK, &fl) < 0) {
		int e = errno;
		*pid = lock_owner(lk->fd);
		close(lk->fd);
		lk->fd = -1;
		if (e == EAGAIN || e == EACCES)
			return 1;
		errno = e;
		return -1;
	}
	char old[32], line[32];
	if (pread(lk->fd, old, sizeof old, 0) == 0) {
		int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
		if (pwrite(lk->fd, line, (size_t)n, 0) != n || fsync(lk->fd) < 0) {
			qctl_unlock(lk);
			return -1;
		}
		lk->marked = 1;
	}
	return 0;
}

void qctl_unlock(struct qctl_lock *lk)
{
	if (lk->fd < 0)
		return;
	if (lk->marked && (ftruncate(lk->fd, 0) < 0 || fsync(lk->fd) < 0))
		log_msg(LOG_ERR, NULL, "truncating scheduler.pid: %s", strerror(errno));
	close(lk->fd);
	lk->fd = -1;
}

int qctl_hold_each(const struct spool *sp, spool_each_fn *fn, void *ctx)
{
	char dir[SPOOL_PATH_MAX];
	if (spool_sub(sp, "hold", dir) < 0)
		return -1;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	struct dirent *e;
	int r = 0;
	while (!r && (e = readdir(d)))
		if (spool_id_valid(e->d_name))
			r = fn(ctx, e->d_name, 0);
	closedir(d);
	return r;
}

long long qctl_due_time(const struct spool *sp, const char *id)
{
	char path[SPOOL_PATH_MAX];
	struct stat cst;
	if (spool_path_ctl(sp, id, path, sizeof path) < 0 || stat(path, &cst) < 0 || cst.st_nlink < 2)
		return 0;
	if (spool_sub(sp, "due", path) < 0)
		return 0;
	DIR *top = opendir(path);
	if (!top)
		return 0;
	size_t idlen = strlen(id);
	long long found = 0;
	struct dirent *b;
	while (!found && (b = readdir(top))) {
		if (b->d_name[0] == '.')
			continue;
		/* the bucket by its name, and only when the name is the directory opened (no symlink):
		 * what openat(O_NOFOLLOW) and fdopendir did, without musl's fdopendir */
		char sub[SPOOL_PATH_MAX];
		struct stat st, lst;
		DIR *d = str_fmt(sub, sizeof sub, "%s/%s", path, b->d_name) < 0 ? NULL : opendir(sub);
		if (!d)
			continue;
		int bfd = dirfd(d);
		if (fstat(bfd, &st) < 0 || lstat(sub, &lst) < 0 || lst.st_dev != st.st_dev || lst.st_ino != st.st_ino) {
			closedir(d);
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d)))
			if (strncmp(e->d_name, id, idlen) == 0 && e->d_name[idlen] == '.' &&
			    fstatat(bfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == cst.st_ino) {
				found = strtoll(e->d_name + idlen + 1, NULL, 10);
				break;
			}
		closedir(d);
	}
	closedir(top);
	return found;
}

static int unlink_logged(const char *id, const char *path)
{
	if (unlink(path) == 0 || errno == ENOENT) {
		crash_point("unlink", path);
		return 0;
	}
	log_syserr(id, "unlink", path, NULL);
	return -1;
}

/* unlink_logged, then the directory synced: the step that decides an action */
static int unlink_synced(const char *id, const char *path)
{
	return unlink_logged(id, path) < 0 || fio_fsync_parent(path) < 0 ? -1 : 0;
}

/* 1 when id's message is in incoming/ (its path in path, SPOOL_PATH_MAX bytes), else 0. */
static int in_incoming(const struct spool *sp, const char *id, char *path)
{
	return spool_path_incoming(sp, id, path, SPOOL_PATH_MAX) == 0 && access(path, F_OK) == 0;
}

/* Delete: the control file goes first and decides it (without it nothing is delivered again);
 * index links and the message file left by a crash are the cleaner's (docs/spool.md 7, 12). */
static int do_delete(struct spool *sp, const char *id, long long t)
{
	char ctl[SPOOL_PATH_MAX], path[SPOOL_PATH_MAX];
	if (spool_path_ctl(sp, id, ctl, sizeof ctl) < 0)
		return -1;
	if (access(ctl, F_OK) < 0) {
		if (!in_incoming(sp, id, path))
			return 1;
		return unlink_synced(id, path);
	}
	if (t < 0)
		t = qctl_due_time(sp, id);
	if (unlink_synced(id, ctl) < 0)
		return -1;
	int r = 0;
	if (t > 0 && spool_path_due(sp, id, t, path, sizeof path) == 0)
		r |= unlink_logged(id, path);
	if (qctl_path_hold(sp, id, path, sizeof path) == 0)
		r |= unlink_logged(id, path);
	if (spool_path_msg(sp, id, path, sizeof path) == 0)
		r |= unlink_logged(id, path);
	return r ? -1 : 0;
}

/* A message still in incoming/ is picked up first (docs/spool.md 6), as the scheduler would. */
static int pick_up(struct spool *sp, const char *id)
{
	char path[SPOOL_PATH_MAX];
	long long arrival;
	if (!in_incoming(sp, id, path))
		return 1;
	if (spool_pickup_prepare(sp, id, &arrival, NULL) < 0 || spool_sync_dirty(sp) < 0 || spool_pickup_finish(sp, id) < 0 ||
	    spool_sync_dirty(sp) < 0)
		return -1;
	return 0;
}

/* hold/ as spool_open makes it: the group and mode of queue/, so a user's mailq (setgid to that
 * group, docs/spool.md 8) sees held mail too. */
static int make_hold_dir(const struct spool *sp, const char *dir)
{
	char q[SPOOL_PATH_MAX];
	struct stat st;
	if (mkdir(dir, 0750) < 0)
		return errno == EEXIST ? 0 : -1;
	if (spool_sub(sp, "queue", q) == 0 && stat(q, &st) == 0 &&
	    (chown(dir, (uid_t)-1, st.st_gid) < 0 || chmod(dir, st.st_mode & 07777) < 0))
		return -1;
	return 0;
}

/* Hold: the due link goes first (a crash then leaves no index entry, which the next start
 * repairs to "due": not held, as mailq did not report), then the hold link is made. */
static int do_hold(struct spool *sp, const char *id, long long t)
{
	char ctl[SPOOL_PATH_MAX], hold[SPOOL_PATH_MAX], due[SPOOL_PATH_MAX];
	if (spool_path_ctl(sp, id, ctl, sizeof ctl) < 0 || qctl_path_hold(sp, id, hold, sizeof hold) < 0)
		return -1;
	if (access(ctl, F_OK) < 0) {
		int r = pick_up(sp, id);
		if (r)
			return r;
	}
	if (access(hold, F_OK) == 0)
		return 1;
	if (t < 0)
		t = qctl_due_time(sp, id);
	if (t > 0 && (spool_path_due(sp, id, t, due, sizeof due) < 0 || unlink_logged(id, due) < 0))
		return -1;
	char dir[SPOOL_PATH_MAX];
	if (spool_sub(sp, "hold", dir) < 0 || make_hold_dir(sp, dir) < 0) {
		log_syserr(id, "mkdir", dir, NULL);
		return -1;
	}
	if (link(ctl, hold) < 0 && errno != EEXIST) {
		log_syserr(id, "link", ctl, hold);
		return -1;
	}
	crash_point("link", hold);
	return fio_fsync_dir(dir) < 0 || (t > 0 && fio_fsync_parent(due) < 0) ? -1 : 0;
}

/* Retry now: every deferred recipient's next attempt becomes now (one pwrite each, synced),
 * then the due link is renamed to now. */
static int do_retry(struct spool *sp, const char *id, long long now)
{
	if (qctl_held(sp, id))
		return 1;
	struct spool_msg m;
	int fd;
	char err[200], ctl[SPOOL_PATH_MAX];
	if (spool_path_ctl(sp, id, ctl, sizeof ctl) < 0)
		return -1;
	if (access(ctl, F_OK) < 0) {
		if (in_incoming(sp, id, ctl))
			return 0; /* not picked up yet: it is tried as soon as it is */
		return 1;
	}
	if (spool_ctl_load(sp, id, 0, &m, &fd, err, sizeof err) < 0) {
		log_msg(LOG_ERR, id, "%s", err);
		return -1;
	}
	int r = 0;
	for (size_t i = 0; i < m.nrcpt && !r; i++)
		if (m.rcpt[i].tag == RT_DEFERRED && m.rcpt[i].next > now) {
			m.rcpt[i].next = now;
			r = spool_rcpt_update(fd, &m.rcpt[i], ctl);
		}
	if (!r && fdatasync(fd) < 0)
		r = -1;
	close(fd);
	spool_msg_free(&m);
	long long t = qctl_due_time(sp, id);
	if (r || spool_due_move(sp, id, t, now) < 0 || spool_sync_dirty(sp) < 0)
		return -1;
	return 0;
}

/* Release: the hold link goes first (a crash leaves no index entry: repaired to "due"), then
 * the message is due now and its deferred recipients are tried at once. */
static int do_release(struct spool *sp, const char *id, long long now)
{
	char hold[SPOOL_PATH_MAX];
	if (qctl_path_hold(sp, id, hold, sizeof hold) < 0)
		return -1;
	if (access(hold, F_OK) < 0)
		return 1;
	if (unlink_synced(id, hold) < 0)
		return -1;
	if (spool_due_move(sp, id, 0, now) < 0 || spool_sync_dirty(sp) < 0)
		return -1;
	return do_retry(sp, id, now) < 0 ? -1 : 0;
}

int qctl_apply(struct spool *sp, enum qctl_action a, const char *id, long long now)
{
	return qctl_apply_at(sp, a, id, -1, now);
}

int qctl_apply_at(struct spool *sp, enum qctl_action a, const char *id, long long due, long long now)
{
	if (!spool_id_valid(id)) {
		errno = EINVAL;
		return -1;
	}
	/* by the enum's order; hold and delete take the due time, release and retry now */
	static int (*const step[])(struct spool *, const char *, long long) = {do_hold, do_release, do_delete, do_retry};
	return step[a](sp, id, a == QA_HOLD || a == QA_DELETE ? due : now);
}

const char *qctl_name(enum qctl_action a)
{
	static const char names[][8] = {"hold", "release", "delete", "retry"};
	return names[a];
}

int qctl_line(enum qctl_action a, const char *id, char *out, size_t size)
{
	return str_fmt(out, size, "%c%s", "HUDI"[a], id);
}

int qctl_qrun_allowed(const struct spool *sp, long long now, long *wait)
{
	char path[SPOOL_PATH_MAX];
	*wait = 0;
	if (spool_sub(sp, "tmp/.qrun", path) < 0)
		return -1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0660);
	if (fd < 0)
		return -1;
	int r = -1;
	struct stat st;
	if (flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		/* the umask must not keep the next user (the same group) from writing it */
		if (st.st_uid == geteuid() && (st.st_mode & 0777) != 0660)
			fchmod(fd, 0660);
		long long since = now - (long long)st.st_mtime;
		/* a stamp from the future (the clock went back) does not lock users out */
		if (st.st_size && since >= 0 && since < QCTL_QRUN_INTERVAL) {
			*wait = (long)(QCTL_QRUN_INTERVAL - since);
			r = 0;
		} else {
			r = pwrite(fd, "q\n", 2, 0) == 2 && futimens(fd, NULL) == 0 ? 1 : -1;
		}
	}
	close(fd);
	return r;
}
