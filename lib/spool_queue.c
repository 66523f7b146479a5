/* The scheduler's side of the spool (docs/spool.md 6, 7, 9, 10): the trigger, pick-up with
 * batched directory fsyncs, the due index, control-file loading, in-place status updates,
 * appended records and removal. */
#include "crashpoint.h"
#include "spool.h"
#include "xtext.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int spool_trigger_open(const struct spool *sp)
{
	char path[SPOOL_PATH_MAX];
	if (spool_sub(sp, "trigger", path) < 0)
		return -1;
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISFIFO(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* a file where the FIFO belongs (a restore, a mistake) would keep the scheduler from
		 * starting: it carries nothing (trigger lines are only wake-ups), so make the FIFO again,
		 * in the group of incoming/ as spool_open does */
		log_msg(LOG_WARNING, NULL, "%s is not a FIFO: replaced by one", path);
		char inc[SPOOL_PATH_MAX];
		struct stat ist;
		if (unlink(path) == 0 && mkfifo(path, 0620) == 0 && spool_sub(sp, "incoming", inc) == 0 &&
		    stat(inc, &ist) == 0 && (chmod(path, 0620) < 0 || chown(path, (uid_t)-1, ist.st_gid) < 0))
			log_msg(LOG_WARNING, NULL, "set mode/group of %s: %s", path, strerror(errno));
	}
	const char *op = "mkfifo";
	int fd;
	if (mkfifo(path, 0620) < 0 && errno != EEXIST)
		goto fail;
	/* O_RDWR keeps a writer open, so the FIFO never reports EOF between submits */
	op = "open";
	fd = openat(AT_FDCWD, path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
fail:
		log_syserr(NULL, op, path, NULL);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		log_msg(LOG_ERR, NULL, "%s is not a FIFO", path);
		close(fd);
		return -1;
	}
	return fd;
}

size_t spool_trigger_drain(int fd, char *buf, size_t size)
{
	size_t kept = 0;
	char tmp[512];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof tmp);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		size_t c = (size_t)n;
		if (c > size - kept)
			c = size - kept;
		memcpy(buf + kept, tmp, c);
		kept += c;
	}
	return kept;
}

/* Calls fn for every entry of dir whose name passes `want`, with the id (up to a '.') and the
 * number after the dot (0 when none). */
static int each_entry(const char *dir, const char *suffix, spool_each_fn *fn, void *ctx)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		log_syserr(NULL, "opendir", dir, NULL); /* keeps errno: mailq tells EACCES from the rest */
		return -1;
	}
	struct dirent *e;
	int r = 0;
	while ((e = readdir(d))) {
		char id[SPOOL_ID_MAX];
		const char *dot = strchr(e->d_name, '.');
		size_t n = dot ? (size_t)(dot - e->d_name) : strlen(e->d_name);
		if (n >= sizeof id)
			continue;
		memcpy(id, e->d_name, n);
		id[n] = 0;
		if (!spool_id_valid(id))
			continue;
		long long t = 0;
		if (suffix) {
			if (!dot || strcmp(dot + 1, suffix) != 0)
				continue;
		} else if (dot) {
			char *end;
			t = strtoll(dot + 1, &end, 10);
			if (*end || t < 0)
				continue;
		}
		if ((r = fn(ctx, id, t)) != 0)
			break;
	}
	closedir(d);
	return r;
}

int spool_incoming_each(const struct spool *sp, spool_each_fn *fn, void *ctx)
{
	char dir[SPOOL_PATH_MAX];
	spool_sub(sp, "incoming", dir);
	return each_entry(dir, NULL, fn, ctx);
}

static int hash_index(const char *id)
{
	char h = id[strlen(id) - 1];
	return h <= '9' ? h - '0' : h - 'A' + 10;
}

static void mark_due(struct spool *sp, long long bucket)
{
	for (size_t i = 0; i < ARRAY_LEN(sp->dirty_due); i++) {
		if (sp->dirty_due[i] == bucket + 1)
			return;
		if (!sp->dirty_due[i]) {
			sp->dirty_due[i] = bucket + 1;
			return;
		}
	}
	/* full: make room by syncing now */
	spool_sync_dirty(sp);
	sp->dirty_due[0] = bucket + 1;
}

static int ensure_dir_of(const char *path)
{
	char dir[SPOOL_PATH_MAX];
	if (fio_dirname(path, dir, sizeof dir) < 0)
		return -1;
	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		log_syserr(NULL, "mkdir", dir, NULL);
		return -1;
	}
	return 0;
}

/* mkdir of the bucket directory of path, remembered for the few buckets in use; the cache is
 * forgotten when spool_due_each removes an empty past bucket. */
static int ensure_due_dir(struct spool *sp, long long t, const char *path)
{
	long long b = t / SPOOL_BUCKET + 1;
	for (size_t i = 0; i < ARRAY_LEN(sp->have_due); i++)
		if (sp->have_due[i] == b)
			return 0;
	if (ensure_dir_of(path) < 0)
		return -1;
	memmove(sp->have_due + 1, sp->have_due, sizeof sp->have_due - sizeof *sp->have_due);
	sp->have_due[0] = b;
	return 0;
}

static void forget_due_dir(struct spool *sp, long long t)
{
	for (size_t k = 0; k < ARRAY_LEN(sp->have_due); k++)
		if (sp->have_due[k] == t / SPOOL_BUCKET + 1)
			sp->have_due[k] = 0;
}

/* link(), re-making the bucket directory once if someone (cleaner) removed it meanwhile. */
static int link_due(struct spool *sp, const char *from, const char *to, long long t)
{
	if (link(from, to) == 0 || errno == EEXIST) {
		crash_point("link", to);
		return 0;
	}
	if (errno != ENOENT)
		return -1;
	forget_due_dir(sp, t);
	if (ensure_due_dir(sp, t, to) < 0)
		return -1;
	return link(from, to) == 0 || errno == EEXIST ? 0 : -1;
}

static void quarantine(const struct spool *sp, const char *id, const char *from, const char *why)
{
	char to[SPOOL_PATH_MAX];
	spool_path_in(sp, "corrupt", id, to, sizeof to); /* id: valid (its incoming/ path was made) */
	ensure_dir_of(to);
	if (rename(from, to) == 0)
		log_msg(LOG_ERR, id, "unreadable message moved to %s: %s", to, why);
	else
		log_msg(LOG_ERR, id, "unreadable message %s (%s), and moving it to %s failed: %s", from, why, to, strerror(errno));
}

const char *spool_env_end(const char *p, size_t n)
{
	for (const char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) && p + 2 < e; p++)
		if (p[1] == '.' && p[2] == '\n')
			return p + 3;
	return NULL;
}

/* Reads the envelope block (up to and including the "." line) of a message file. */
/* keep: where the open file is handed back (the caller closes it), so that pick-up looks at it
 * once (give_group); NULL closes it here. */
static int read_envelope_fd(const char *path, struct buf *b, int *keep)
{
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		log_syserr(NULL, "open", path, NULL);
		return -1;
	}
	char chunk[8192];
	for (;;) {
		/* one read at a time: the envelope block usually ends in the first, and reading on
		 * to the end of the file would be a system call for nothing */
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_syserr(NULL, "read", path, NULL);
			break;
		}
		size_t from = b->len > 2 ? b->len - 2 : 0;
		if (buf_add(b, chunk, (size_t)n) < 0) {
			/* too big is the file's fault; no memory is not (and must not quarantine it) */
			errno = b->len + (size_t)n > b->max ? EFBIG : ENOMEM;
			break;
		}
		const char *end = spool_env_end(b->p + from, b->len - from);
		if (end) {
			b->len = (size_t)(end - b->p);
			if (keep)
				*keep = fd;
			else
				close(fd);
			return 0;
		}
		if (n == 0) {
			errno = EINVAL;
			break;
		}
	}
	close(fd);
	return -1;
}

static int read_envelope(const char *path, struct buf *b)
{
	return read_envelope_fd(path, b, NULL);
}

/* The message file gets the group of its queue directory (the control file made there has it):
 * the transport agents that run as AGENT_USER read it through that group (docs/spool.md 8). A
 * root submit (cron) makes it in root's group; a setgid one already has the right group. No
 * fsync of its own: the batch's directory fsyncs commit it with the rename on a journaling file
 * system, and a change lost elsewhere leaves a message only root reads, which spoolbox --install
 * puts right (and the agent's log names the file). */
static void give_group(int fd, const char *path, gid_t gid, const char *id)
{
	struct stat st;
	/* one link only: never lend the group to a file linked in from elsewhere; fd is the file
	 * the envelope was read from (opened O_NOFOLLOW), not a second open of its name */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_gid != gid && geteuid() == 0 &&
	    fchown(fd, (uid_t)-1, gid) < 0)
		log_msg(LOG_WARNING, id, "chgrp %s to %ld: %s (the agents may not read it)", path, (long)gid,
		        strerror(errno));
}

int spool_pickup_prepare(struct spool *sp, const char *id, long long *arrival, struct spool_msg *env)
{
	char src[SPOOL_PATH_MAX], ctl[SPOOL_PATH_MAX], due[SPOOL_PATH_MAX], err[160];
	if (spool_path_incoming(sp, id, src, sizeof src) < 0 || spool_path_ctl(sp, id, ctl, sizeof ctl) < 0)
		return -1;
	struct buf b;
	buf_init(&b, SPOOL_CTL_MAX);
	int src_fd = -1;
	if (read_envelope_fd(src, &b, &src_fd) < 0) {
		if (errno == EINVAL || errno == EFBIG)
			quarantine(sp, id, src, "no complete envelope block");
		buf_free(&b);
		return -1;
	}
	struct spool_msg m;
	int pr = spool_msg_parse(b.p, b.len, 1, &m, err, sizeof err), r = -1, h = hash_index(id);
	/* (a failed parse leaves m empty: the exit's spool_msg_free does nothing with it) */
	if (pr < 0 && errno == ENOMEM) {
		log_msg(LOG_ERR, id, "%s: %s; picked up later", src, err);
		goto out;
	}
	if (pr < 0 || strcmp(m.id, id) != 0) {
		quarantine(sp, id, src, err[0] ? err : "id does not match the file name");
		goto out;
	}
	*arrival = m.arrival;
	if (!(sp->have_queue & (1UL << h))) {
		if (ensure_dir_of(ctl) < 0)
			goto out;
		sp->have_queue |= 1UL << h;
	}
	/* read-write: the scheduler's hand-out may borrow it (spool_pending_lend) */
	int fd = openat(AT_FDCWD, ctl, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0) {
		log_syserr(id, "create", ctl, NULL);
		goto out;
	}
	if (fio_write_all(fd, b.p, b.len, ctl) < 0) {
		close(fd);
		goto out;
	}
	/* the group the control files of queue/<h>/ get (its setgid bit hands down one): looked at
	 * once per directory, not per message */
	struct stat cst;
	if (!(sp->have_qgid & (1UL << h)) && fstat(fd, &cst) == 0) {
		sp->qgid[h] = cst.st_gid;
		sp->have_qgid |= 1UL << h;
	}
	if (sp->have_qgid & (1UL << h))
		give_group(src_fd, src, sp->qgid[h], id);
	if (sp->defer_sync) {
		if (sp->npending == SPOOL_PENDING_MAX)
			spool_sync_dirty(sp);
		/* synced by spool_sync_dirty(), after the hand-out */
		str_lcpy(sp->pending_id[sp->npending], id, SPOOL_ID_MAX);
		sp->pending_fd[sp->npending++] = fd;
	} else {
		int w = fio_fsync(fd, ctl);
		close(fd);
		if (w < 0)
			goto out;
	}
	if (spool_path_due(sp, id, *arrival, due, sizeof due) < 0 || ensure_due_dir(sp, *arrival, due) < 0)
		goto out;
	if (link_due(sp, ctl, due, *arrival) < 0) {
		log_syserr(id, "link", ctl, due);
		goto out;
	}
	sp->dirty_queue |= 1UL << h;
	mark_due(sp, *arrival / SPOOL_BUCKET);
	r = 0;
out:
	close(src_fd);
	buf_free(&b);
	/* the control file is these bytes: its parse is handed on rather than read back */
	if (r == 0 && env)
		*env = m;
	else
		spool_msg_free(&m);
	return r;
}

int spool_pickup_finish(struct spool *sp, const char *id)
{
	char src[SPOOL_PATH_MAX], dst[SPOOL_PATH_MAX];
	if (spool_path_incoming(sp, id, src, sizeof src) < 0 || spool_path_msg(sp, id, dst, sizeof dst) < 0)
		return -1;
	if (rename(src, dst) < 0) {
		log_syserr(id, "rename", src, dst);
		return -1;
	}
	crash_point("rename", dst);
	sp->dirty_queue |= 1UL << hash_index(id);
	sp->dirty_incoming = 1;
	return 0;
}

int spool_sync_dirty(struct spool *sp)
{
	char dir[SPOOL_PATH_MAX];
	int r = 0;
	for (unsigned i = 0; i < sp->npending; i++) {
		if (spool_path_ctl(sp, sp->pending_id[i], dir, sizeof dir) < 0)
			str_lcpy(dir, sp->pending_id[i], sizeof dir);
		r |= fio_fsync(sp->pending_fd[i], dir);
		if (!sp->pending_lent[i])
			close(sp->pending_fd[i]); /* a lent one is the borrower's to close now */
	}
	sp->npending = 0;
	memset(sp->pending_lent, 0, sizeof sp->pending_lent);
	for (int h = 0; h < 36; h++) {
		if (!(sp->dirty_queue & (1UL << h)))
			continue;
		str_fmt(dir, sizeof dir, "%s/queue/%c", sp->dir, spool_b36[h]);
		r |= fio_fsync_dir(dir);
	}
	sp->dirty_queue = 0;
	for (size_t i = 0; i < ARRAY_LEN(sp->dirty_due); i++) {
		if (!sp->dirty_due[i])
			continue;
		str_fmt(dir, sizeof dir, "%s/due/%lld", sp->dir, sp->dirty_due[i] - 1);
		r |= fio_fsync_dir(dir);
		sp->dirty_due[i] = 0;
	}
	if (sp->dirty_incoming) {
		spool_sub(sp, "incoming", dir);
		r |= fio_fsync_dir(dir);
		sp->dirty_incoming = 0;
	}
	return r ? -1 : 0;
}

int spool_pending_lend(struct spool *sp, const char *id)
{
	for (unsigned i = 0; i < sp->npending; i++)
		if (!sp->pending_lent[i] && !strcmp(sp->pending_id[i], id)) {
			sp->pending_lent[i] = 1;
			return sp->pending_fd[i];
		}
	return -1;
}

int spool_pending_return(struct spool *sp, int fd)
{
	for (unsigned i = 0; i < sp->npending; i++)
		if (sp->pending_lent[i] && sp->pending_fd[i] == fd) {
			sp->pending_lent[i] = 0;
			return 0;
		}
	return -1;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* The bucket numbers present under due/, sorted; *n gets the count. malloc'd. */
static long long *list_buckets(const struct spool *sp, size_t *n)
{
	char dir[SPOOL_PATH_MAX];
	spool_sub(sp, "due", dir);
	*n = 0;
	DIR *d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			log_syserr(NULL, "opendir", dir, NULL);
		return NULL;
	}
	long long *v = NULL;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		long long b = strtoll(e->d_name, &end, 10);
		if (*end)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			long long *nv = realloc(v, cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = b;
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof *v, cmp_ll);
	return v;
}

int spool_due_each(struct spool *sp, long long upto, spool_each_fn *fn, void *ctx)
{
	size_t n;
	long long *b = list_buckets(sp, &n);
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (b[i] * SPOOL_BUCKET > upto)
			break;
		char dir[SPOOL_PATH_MAX];
		str_fmt(dir, sizeof dir, "%s/due/%lld", sp->dir, b[i]);
		r = each_entry(dir, NULL, fn, ctx);
		/* a past bucket that was empty: forget that it existed */
		if (r == 0 && (b[i] + 1) * SPOOL_BUCKET <= upto && rmdir(dir) == 0)
			forget_due_dir(sp, b[i] * SPOOL_BUCKET);
	}
	free(b);
	return r;
}

long long spool_due_next_bucket(const struct spool *sp, long long after)
{
	size_t n;
	long long *b = list_buckets(sp, &n), next = 0;
	for (size_t i = 0; i < n; i++)
		if (b[i] * SPOOL_BUCKET > after) {
			next = b[i] * SPOOL_BUCKET;
			break;
		}
	free(b);
	return next;
}

int spool_due_move(struct spool *sp, const char *id, long long old, long long new_t)
{
	char from[SPOOL_PATH_MAX], to[SPOOL_PATH_MAX];
	if (new_t < 0 || spool_path_due(sp, id, new_t, to, sizeof to) < 0 || ensure_due_dir(sp, new_t, to) < 0)
		return -1;
	if (old == new_t && old > 0)
		return 0;
	if (old > 0) {
		if (spool_path_due(sp, id, old, from, sizeof from) < 0)
			return -1;
		if (rename(from, to) == 0)
			return 0;
		if (errno == ENOENT && access(from, F_OK) == 0) {
			/* the target bucket went away (cleaner): make it again */
			forget_due_dir(sp, new_t);
			if (ensure_due_dir(sp, new_t, to) == 0 && rename(from, to) == 0)
				return 0;
		}
		if (errno != ENOENT) {
			log_syserr(id, "rename", from, to);
			return -1;
		}
	}
	if (spool_path_ctl(sp, id, from, sizeof from) < 0)
		return -1;
	if (link_due(sp, from, to, new_t) < 0) {
		log_syserr(id, "link", from, to);
		return -1;
	}
	return 0;
}

int spool_queue_each(const struct spool *sp, spool_each_fn *fn, void *ctx)
{
	char dir[SPOOL_PATH_MAX];
	for (int h = 0; h < 36; h++) {
		str_fmt(dir, sizeof dir, "%s/queue/%c", sp->dir, spool_b36[h]);
		int r = each_entry(dir, "c", fn, ctx);
		if (r)
			return r;
	}
	return 0;
}

/* The size bytes of the open file path, in a malloc'd buffer (one byte spare); NULL with err
 * set when it cannot be read whole. */
static char *read_whole(int fd, size_t size, const char *path, char *err, size_t errlen)
{
	char *text = malloc(size + 1);
	ssize_t n = text ? pread(fd, text, size, 0) : -1;
	if (n == (ssize_t)size)
		return text;
	snprintf(err, errlen, "read %s: %s", path, n < 0 ? strerror(errno) : "short read");
	free(text);
	return NULL;
}

int spool_ctl_load(const struct spool *sp, const char *id, int readonly, struct spool_msg *m, int *fdp, char *err, size_t errlen)
{
	char path[SPOOL_PATH_MAX];
	if (errlen)
		err[0] = 0;
	if (spool_path_ctl(sp, id, path, sizeof path) < 0) {
		str_lcpy(err, "invalid message id", errlen);
		return -1;
	}
	int fd = openat(AT_FDCWD, path, (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return -1;
	}
	/* A transport agent's job (readonly): most control files are a few hundred bytes, and one
	 * read() that comes back short has the whole file (a regular file reads short only at its
	 * end), with no fstat() and no buffer to allocate. A longer one, or anything else (a
	 * directory fails the read), is looked at. The scheduler always looks: a file it misread
	 * would be rebuilt. */
	char small[4096], *text = small;
	ssize_t got = readonly ? read(fd, small, sizeof small) : -1;
	size_t n = got > 0 ? (size_t)got : 0;
	if (got < 0 || n == sizeof small) {
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size > SPOOL_CTL_MAX) {
			snprintf(err, errlen, "%s: not a regular file of at most %u bytes", path, SPOOL_CTL_MAX);
			close(fd);
			return -1;
		}
		n = (size_t)st.st_size;
		text = read_whole(fd, n, path, err, errlen);
		if (!text) {
			close(fd);
			return -1;
		}
	}
	char perr[160];
	int r = spool_msg_parse(text, n, 0, m, perr, sizeof perr);
	if (text != small)
		free(text);
	if (r == 0 && strcmp(m->id, id) != 0) {
		spool_msg_free(m);
		str_lcpy(perr, "id does not match the file name", sizeof perr);
		r = -1;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, perr);
		close(fd);
		return -1;
	}
	*fdp = fd;
	return 0;
}

/* The version number of a "@ spoolbox V" first line, or 0 when the line is not one. */
static long first_line_version(const char *text, size_t len)
{
	static const char head[] = "@ spoolbox ";
	if (len < sizeof head || memcmp(text, head, sizeof head - 1) != 0)
		return 0;
	long v = 0;
	for (size_t i = sizeof head - 1; i < len && text[i] >= '0' && text[i] <= '9' && v < 1000000; i++)
		v = v * 10 + (text[i] - '0');
	return v;
}

int spool_ctl_rebuild(const struct spool *sp, const char *id, char *err, size_t errlen)
{
	char ctl[SPOOL_PATH_MAX], msg[SPOOL_PATH_MAX], perr[160];
	if (spool_path_ctl(sp, id, ctl, sizeof ctl) < 0 || spool_path_msg(sp, id, msg, sizeof msg) < 0) {
		str_lcpy(err, "invalid message id", errlen);
		return -1;
	}
	/* every failure: "where: why" at the one exit (why NULL: err is already written) */
	const char *where = ctl, *why;
	struct buf b;
	buf_init(&b, SPOOL_CTL_MAX);
	int fd = openat(AT_FDCWD, ctl, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0) {
		why = strerror(errno);
		goto fail;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		why = "not a regular file";
		goto fail;
	}
	struct spool_msg m;
	/* only a file that can be read and does not parse is damaged; a read error is not */
	if ((unsigned long long)st.st_size <= SPOOL_CTL_MAX) {
		size_t n = (size_t)st.st_size;
		char *text = read_whole(fd, n, ctl, err, errlen);
		why = NULL;
		if (!text)
			goto fail;
		int ok = spool_msg_parse(text, n, 0, &m, perr, sizeof perr) == 0;
		why = "out of memory";
		if (!ok && errno == ENOMEM) {
			free(text);
			goto fail;
		}
		if (ok) {
			ok = !strcmp(m.id, id);
			spool_msg_free(&m);
		}
		long v = first_line_version(text, n);
		free(text);
		why = ok ? "not damaged" : "written by a newer version: left alone";
		if (ok || v > SPOOL_VERSION)
			goto fail;
	}
	where = msg;
	why = "no complete envelope block to rebuild from";
	if (read_envelope(msg, &b) < 0)
		goto fail;
	/* (an out-of-memory parse here refuses too: nothing has been written yet) */
	why = perr;
	if (spool_msg_parse(b.p, b.len, 1, &m, perr, sizeof perr) < 0)
		goto fail;
	int same = !strcmp(m.id, id);
	spool_msg_free(&m);
	why = "id does not match the file name";
	if (!same)
		goto fail;
	/* in place: the due link is another name of this inode */
	if (fio_pwrite_all(fd, b.p, b.len, 0, ctl) < 0 || ftruncate(fd, (off_t)b.len) < 0 || fio_fsync(fd, ctl) < 0) {
		snprintf(err, errlen, "rewriting %s: %s", ctl, strerror(errno));
		why = NULL;
		goto fail;
	}
	buf_free(&b);
	close(fd);
	return 0;
fail:
	if (why)
		snprintf(err, errlen, "%s: %s", where, why);
	buf_free(&b);
	if (fd >= 0)
		close(fd);
	return -1;
}

int spool_rcpt_update(int fd, const struct spool_rcpt *r, const char *path)
{
	char field[SPOOL_STATUS_LEN];
	spool_status_format(r, field);
	/* "@ spoolbox 1": the digit is byte 11; an older reader must refuse a file with an S */
	if (r->tag == RT_SUCCESS && fio_pwrite_all(fd, "2", 1, 11, path) < 0)
		return -1;
	int w = fio_pwrite_all(fd, field, sizeof field, r->off + 2, path);
	crash_point("status", path);
	return w;
}

int spool_record_append_at(int fd, const char *line, const char *path, off_t *end)
{
	struct stat st;
	size_t n = strlen(line);
	if (strchr(line, '\n') || n > SPOOL_LINE_MAX || (!(end && *end > 0) && fstat(fd, &st) < 0)) {
		errno = EINVAL;
		log_msg(LOG_ERR, NULL, "append to %s: bad record or stat failed", path);
		return -1;
	}
	char rec[SPOOL_LINE_MAX + 2], last = '\n';
	size_t o = 0;
	off_t size, at;
	if (end && *end > 0) {
		/* this process wrote the file's end last, whole: its tail needs no look */
		size = at = *end;
	} else {
		size = at = st.st_size;
		if (size > 0 && pread(fd, &last, 1, size - 1) == 1 && last != '\n') {
			/* A torn earlier append (a full disk or a crash mid-write) is not a record: the new
			 * one goes over it, from just after the last complete line (docs/spool.md 4.3).
			 * Giving it a line end instead would leave a malformed line that makes the next
			 * load rebuild the file and lose its delivered marks. */
			char tail[SPOOL_LINE_MAX + 1];
			off_t from = size > (off_t)sizeof tail ? size - (off_t)sizeof tail : 0;
			ssize_t got = pread(fd, tail, (size_t)(size - from), from);
			const char *lf = got > 0 ? memrchr(tail, '\n', (size_t)got) : NULL;
			if (lf)
				at = from + (lf - tail) + 1;
			else
				rec[o++] = '\n'; /* no line end within a line's length: keep it apart, as before */
		}
	}
	memcpy(rec + o, line, n);
	o += n;
	rec[o++] = '\n';
	int r = fio_pwrite_all(fd, rec, o, at, path);
	/* a torn tail longer than the new record: what is left of it goes (a crash before this
	 * leaves a tail without a line end, which readers ignore) */
	if (r == 0 && at + (off_t)o < size && ftruncate(fd, at + (off_t)o) < 0)
		log_msg(LOG_WARNING, NULL, "truncate %s: %s", path, strerror(errno));
	if (end)
		*end = r == 0 ? at + (off_t)o : 0; /* after a failure: look again next time */
	crash_point("record", path);
	return r;
}

int spool_record_append(int fd, const char *line, const char *path)
{
	return spool_record_append_at(fd, line, path, NULL);
}

char *spool_clean_as(char *dst, size_t size, const char *src, char repl)
{
	size_t o = 0;
	for (; src && *src && o + 1 < size; src++)
		dst[o++] = ((unsigned char)*src < 0x20 || *src == 0x7f) ? repl : *src;
	dst[o] = 0;
	return dst;
}

void spool_clean_copy(char *dst, size_t size, const char *src)
{
	spool_clean_as(dst, size, src, ' ');
}

/* s when it is one word of printable ASCII, else "-". noinline: one copy for the three
 * fields (docs/size.md) */
__attribute__((noinline)) static const char *word_or_dash(const char *s)
{
	const char *p = s;
	for (; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return "-";
	return p == s ? "-" : s;
}

int spool_attempt_append_at(int fd, const struct spool_attempt *a, const char *path, off_t *end)
{
	char remote[3 * 256 + 4], text[SPOOL_TEXT_MAX + 1], line[SPOOL_LINE_MAX];
	/* (a str_lcpy, not "= "-"": that zeroes all of it) */
	if (!a->remote || !*a->remote || xtext_encode(a->remote, strnlen(a->remote, 255), remote, sizeof remote) < 0)
		str_lcpy(remote, "-", sizeof remote);
	spool_clean_copy(text, sizeof text, a->text);
	if (str_fmt(line, sizeof line, "A %d %lld %s %s %s %s %s", a->rcpt, a->time, word_or_dash(a->code),
	            word_or_dash(a->action), word_or_dash(a->enh), remote, text) < 0)
		return -1;
	return spool_record_append_at(fd, line, path, end);
}

int spool_attempt_append(int fd, const struct spool_attempt *a, const char *path)
{
	return spool_attempt_append_at(fd, a, path, NULL);
}

int spool_remove(struct spool *sp, const char *id, long long t)
{
	char path[SPOOL_PATH_MAX];
	int r = 0;
	if (t > 0 && spool_path_due(sp, id, t, path, sizeof path) == 0 && unlink(path) < 0 && errno != ENOENT)
		r = -1;
	crash_point("unlink", path);
	for (int i = 0; i < 2; i++) { /* the control file, then the message file */
		if ((i ? spool_path_msg : spool_path_ctl)(sp, id, path, sizeof path) < 0 || (unlink(path) < 0 && errno != ENOENT))
			r = -1;
		crash_point("unlink", path);
	}
	if (r)
		log_msg(LOG_ERR, id, "remove from the queue: %s", strerror(errno));
	return r;
}

int spool_msg_open(const struct spool *sp, const char *id, off_t body_off)
{
	char path[SPOOL_PATH_MAX];
	if (spool_path_msg(sp, id, path, sizeof path) < 0)
		return -1;
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		log_syserr(id, "open", path, NULL);
		return -1;
	}
	if (body_off >= 0 && lseek(fd, body_off, SEEK_SET) != body_off) {
		log_msg(LOG_ERR, id, "seek %s to %lld: %s", path, (long long)body_off, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int spool_env_read(const char *path, struct buf *b)
{
	return read_envelope(path, b);
}
