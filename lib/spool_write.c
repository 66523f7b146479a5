/* The enqueue sequence E1..E4 of docs/spool.md 5, and the trigger FIFO. */
#include "crashpoint.h"
#include "spool.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <unistd.h>

#define SPOOL_MIN_INODES 64
int spool_room_spare(const struct spool *sp, long long minfree, const char *id, long long *spare)
{
	/* statfs, not statvfs (its copy into another struct is linked for this alone): statvfs's
	 * f_favail is statfs's f_ffree, its f_frsize falls back to f_bsize as here */
	struct statfs v;
	if (spare)
		*spare = 0;
	if (minfree <= 0 || statfs(sp->dir, &v) < 0)
		return 0;
	long long avail = (long long)v.f_bavail * (long long)(v.f_frsize ? v.f_frsize : v.f_bsize);
	int inodes_low = v.f_files > 0 && v.f_ffree < SPOOL_MIN_INODES;
	if (avail >= minfree && !inodes_low) {
		if (spare)
			*spare = (avail - minfree) / 2;
		return 0;
	}
	log_msg(LOG_WARNING, id,
	        "spool %s: %lld KiB free%s, below the reserve of %lld KiB (QUEUE_MINFREE) kept for the queue's own work: not queued",
	        sp->dir, avail / 1024, inodes_low ? " (or too few inodes)" : "", minfree / 1024);
	errno = EDQUOT;
	return -1;
}

int spool_room(const struct spool *sp, long long minfree, const char *id)
{
	return spool_room_spare(sp, minfree, id, NULL);
}

/* The message being written counts: it is already on disk. A look that found plenty of room
 * holds until the message has used half of it (others may write meanwhile: the reserve is a
 * soft limit, as Postfix's queue_minfree is). */
static int room(struct spool_writer *w)
{
	if (w->size < w->room_until)
		return 0;
	long long spare;
	int r = spool_room_spare(w->sp, w->minfree, w->id[0] ? w->id : NULL, &spare);
	w->room_until = spare ? w->size + spare : 0;
	return r;
}

int spool_writer_begin(const struct spool *sp, struct spool_writer *w, struct spool_msg *m)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	/* every field before the two buffers (the rest is set below before it is used) */
	memset(w, 0, offsetof(struct spool_writer, tmppath));
	w->fd = -1;
	w->sp = sp;
	for (int attempt = 0; attempt < 5; attempt++) {
		if (str_fmt(w->tmppath, sizeof w->tmppath, "%s/tmp/%ld.%lld.%06ld%s", sp->dir, (long)getpid(),
		            (long long)tv.tv_sec, (long)tv.tv_usec, attempt ? "x" : "") < 0) {
			log_msg(LOG_ERR, NULL, "spool path too long: %s", sp->dir);
			return -1;
		}
		w->fd = openat(AT_FDCWD, w->tmppath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (w->fd >= 0 || errno != EEXIST)
			break;
	}
	if (w->fd < 0) {
		log_syserr(NULL, "create", w->tmppath, NULL);
		return -1;
	}
	struct stat st;
	/* 0640 exactly, whatever the caller's umask: the scheduler reads it through the group (the
	 * create asked for 0640, so under the usual umask, 022 or 027, the mode is right already and
	 * no fchmod is needed) */
	if (fstat(w->fd, &st) < 0 || ((st.st_mode & 07777) != 0640 && fchmod(w->fd, 0640) < 0)) {
		log_syserr(NULL, "stat", w->tmppath, NULL);
		spool_writer_abort(w);
		return -1;
	}
	spool_id_make(w->id, tv.tv_sec, tv.tv_usec, (unsigned long long)st.st_ino);
	str_lcpy(m->id, w->id, sizeof m->id);
	if (!m->arrival)
		m->arrival = tv.tv_sec;
	struct buf b;
	buf_init(&b, SPOOL_CTL_MAX);
	if (spool_env_format(m, &b, &w->off_o, &w->off_z, &w->off_b) < 0) {
		log_msg(LOG_ERR, w->id, "cannot format the envelope (bad address, channel or host, or too large)");
		buf_free(&b);
		spool_writer_abort(w);
		errno = EINVAL;
		return -1;
	}
	/* the envelope waits in the buffer with the first message bytes: a message that fits
	 * leaves in one write at the commit, its sizes patched in the buffer, not by pwrite */
	int r = 0;
	w->env_held = b.len <= sizeof w->buf;
	if (w->env_held) {
		memcpy(w->buf, b.p, b.len);
		w->blen = b.len;
	} else {
		r = fio_write_all(w->fd, b.p, b.len, w->tmppath);
	}
	buf_free(&b);
	if (r < 0) {
		spool_writer_abort(w);
		return -1;
	}
	return 0;
}

static int flush(struct spool_writer *w)
{
	if (w->blen && (fio_write_all(w->fd, w->buf, w->blen, w->tmppath) < 0 || room(w) < 0))
		return -1;
	w->blen = 0;
	w->env_held = 0;
	return 0;
}

int spool_writer_write(struct spool_writer *w, const void *p, size_t n)
{
	const unsigned char *c = p;
	if (!w->body8) { /* a byte >= 0x80 anywhere: eight bytes at a time */
		uint64_t acc = 0;
		size_t i = 0;
		for (; i + 8 <= n; i += 8) {
			uint64_t v;
			memcpy(&v, c + i, 8);
			acc |= v;
		}
		for (; i < n; i++)
			acc |= c[i];
		w->body8 = (acc & 0x8080808080808080u) != 0;
	}
	w->size += (long long)n;
	if (n >= sizeof w->buf) {
		if (flush(w) < 0)
			return -1;
		return fio_write_all(w->fd, p, n, w->tmppath) < 0 ? -1 : room(w);
	}
	if (w->blen + n > sizeof w->buf && flush(w) < 0)
		return -1;
	memcpy(w->buf + w->blen, p, n);
	w->blen += n;
	return 0;
}

int spool_writer_commit(struct spool_writer *w)
{
	char z[17], dst[SPOOL_PATH_MAX];
	snprintf(z, sizeof z, "%016lld", w->size);
	int held = w->env_held, wrote = w->blen > 0;
	if (held) {
		memcpy(w->buf + w->off_z, z, 16);
		if (w->body8)
			w->buf[w->off_b] = '8';
	}
	/* flush() checks the reserve after what it writes; with nothing left to write, the
	 * last write was checked already, unless there was none since begin */
	if (flush(w) < 0 || (!wrote && room(w) < 0) ||
	    (!held && fio_pwrite_all(w->fd, z, 16, (off_t)w->off_z, w->tmppath) < 0) ||
	    (!held && w->body8 && fio_pwrite_all(w->fd, "8", 1, (off_t)w->off_b, w->tmppath) < 0) ||
	    fio_fsync(w->fd, w->tmppath) < 0)
		goto fail;
	if (close(w->fd) < 0) {
		w->fd = -1;
		log_syserr(w->id, "close", w->tmppath, NULL);
		goto fail;
	}
	w->fd = -1;
	if (spool_path_incoming(w->sp, w->id, dst, sizeof dst) < 0)
		goto fail;
	if (rename(w->tmppath, dst) < 0) {
		log_syserr(w->id, "rename", w->tmppath, dst);
		goto fail;
	}
	crash_point("rename", dst);
	if (fio_fsync_parent(dst) < 0) { /* incoming/ */
		/* Not durable: take it back, so the caller's retry cannot make a duplicate. */
		int e = errno;
		unlink(dst);
		errno = e;
		w->tmppath[0] = 0;
		return -1;
	}
	w->tmppath[0] = 0;
	spool_trigger_pull(w->sp);
	return 0;
fail:
	spool_writer_abort(w);
	return -1;
}

void spool_writer_abort(struct spool_writer *w)
{
	int e = errno;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->tmppath[0])
		unlink(w->tmppath);
	w->tmppath[0] = 0;
	errno = e;
}

int spool_trigger_send(const struct spool *sp, const char *line)
{
	char path[SPOOL_PATH_MAX], msg[512];
	if (spool_sub(sp, "trigger", path) < 0 || str_fmt(msg, sizeof msg, "%s\n", line) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = openat(AT_FDCWD, path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	ssize_t n = -1;
	/* only ever a FIFO: a regular file or a device planted there is not written */
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		n = write(fd, msg, strlen(msg));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(msg) ? 0 : -1;
}

void spool_trigger_pull(const struct spool *sp)
{
	int e = errno;
	spool_trigger_send(sp, "");
	errno = e;
}
