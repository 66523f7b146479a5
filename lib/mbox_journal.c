/* The append journal of an mbox (see mbox_journal.h). */
#include "mbox_journal.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char magic[] = "mbox-append 1 ";

/* One decimal field followed by sep; advances *p. */
static int num(const char **p, const char *end, char sep, unsigned long long *out)
{
	unsigned long long v = 0;
	const char *q = *p;
	if (q >= end || *q < '0' || *q > '9')
		return -1;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > (~0ULL - 9) / 10)
			return -1;
		v = v * 10 + (unsigned)(*q - '0');
	}
	if (q >= end || *q != sep)
		return -1;
	*p = q + 1;
	*out = v;
	return 0;
}

int mbox_journal_parse(const char *buf, size_t len, struct mbox_jentry *e)
{
	size_t ml = sizeof magic - 1;
	if (len < ml || len > MBOXJ_MAX || memcmp(buf, magic, ml) != 0)
		return 0;
	const char *p = buf + ml, *end = buf + len;
	unsigned long long f[5];
	for (int i = 0; i < 5; i++)
		if (num(&p, end, i < 4 ? ' ' : '\n', &f[i]) < 0)
			return 0;
	if (f[2] > (unsigned long long)1 << 62 || f[3] > (unsigned long long)1 << 62 || f[2] >= f[3] ||
	    f[4] > MBOXJ_PREFIX_MAX || f[4] != (unsigned long long)(end - p) || f[4] > f[3] - f[2])
		return 0;
	e->dev = f[0];
	e->ino = f[1];
	e->old = (long long)f[2];
	e->new_len = (long long)f[3];
	e->plen = (size_t)f[4];
	memcpy(e->prefix, p, e->plen);
	return 1;
}

int mbox_journal_dir(const char *spool)
{
	char dir[4200];
	if (str_fmt(dir, sizeof dir, "%s/mbox", spool) < 0)
		return -1;
	struct stat st;
	const char *why = NULL;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		why = strerror(errno);
	else if (lstat(dir, &st) < 0)
		why = strerror(errno);
	else if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		why = "not a private directory of ours";
	if (why)
		log_msg(LOG_WARNING, NULL, "%s: %s: mailbox appends are not journaled (a kill during one can leave half a message)",
		        dir, why);
	return why ? -1 : 0;
}

int mbox_journal_open(const char *spool, const char *path)
{
	/* FNV-1a: a name per mailbox; a collision only makes two mailboxes share a journal, and
	 * the record names its inode */
	unsigned long long h = 1469598103934665603ULL;
	for (const char *c = path; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	char file[4300];
	if (str_fmt(file, sizeof file, "%s/mbox/%016llx", spool, h) < 0)
		return -1;
	int fd = openat(AT_FDCWD, file, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
		errno = EPERM;
	}
	if (fd < 0)
		log_msg(LOG_WARNING, NULL, "open %s: %s (mailbox appends are not journaled)", file, strerror(errno));
	return fd;
}

int mbox_journal_cut(int fd, off_t old, const char *path, const char *why)
{
	if (ftruncate(fd, old) < 0 || fsync(fd) < 0) {
		log_msg(LOG_ERR, NULL, "truncate %s back to %lld bytes%s: %s", path, (long long)old, why, strerror(errno));
		return -1;
	}
	return 0;
}

off_t mbox_journal_recover(int journal, int wfd, int rfd, const struct stat *st, const char *path)
{
	char buf[MBOXJ_MAX + 1], have[MBOXJ_PREFIX_MAX];
	struct mbox_jentry e;
	if (journal < 0)
		return st->st_size;
	ssize_t n = pread(journal, buf, sizeof buf, 0);
	if (n <= 0 || !mbox_journal_parse(buf, (size_t)n, &e))
		return st->st_size;
	/* only an append to this very mailbox that is neither undone nor complete, and whose
	 * first bytes are still where it began (not a mailbox a reader has rewritten since) */
	if (e.dev != (unsigned long long)st->st_dev || e.ino != (unsigned long long)st->st_ino || st->st_size <= e.old ||
	    st->st_size >= e.new_len || rfd < 0 || pread(rfd, have, e.plen, e.old) != (ssize_t)e.plen ||
	    memcmp(have, e.prefix, e.plen) != 0) {
		mbox_journal_end(journal);
		return st->st_size;
	}
	if (mbox_journal_cut(wfd, e.old, path, " (an unfinished append)") < 0)
		return st->st_size;
	log_msg(LOG_NOTICE, NULL, "%s: removed an unfinished append of %lld bytes (a delivery was cut short)", path,
	        (long long)st->st_size - e.old);
	mbox_journal_end(journal);
	return e.old;
}

int mbox_journal_begin(int journal, const struct stat *st, off_t old, off_t new_len, const char *prefix, size_t plen)
{
	if (journal < 0)
		return 0;
	char buf[MBOXJ_MAX];
	if (plen > MBOXJ_PREFIX_MAX)
		plen = MBOXJ_PREFIX_MAX;
	int k = snprintf(buf, sizeof buf, "%s%llu %llu %lld %lld %zu\n", magic, (unsigned long long)st->st_dev,
	                 (unsigned long long)st->st_ino, (long long)old, (long long)new_len, plen);
	if (k < 0 || (size_t)k + plen > sizeof buf)
		return -1;
	memcpy(buf + k, prefix, plen);
	size_t len = (size_t)k + plen;
	/* the record must be on disk before the first byte of the append can be */
	if (pwrite(journal, buf, len, 0) != (ssize_t)len || ftruncate(journal, (off_t)len) < 0 || fdatasync(journal) < 0) {
		log_msg(LOG_WARNING, NULL, "%s the mailbox append journal: %s", "writing", strerror(errno));
		return -1;
	}
	return 0;
}

void mbox_journal_end(int journal)
{
	/* not synced: a record that outlives a power cut names an append that is complete (the
	 * mailbox was fsync'd first), which recovery leaves alone (its length is not below NEW) */
	if (journal >= 0 && ftruncate(journal, 0) < 0)
		log_msg(LOG_WARNING, NULL, "%s the mailbox append journal: %s", "emptying", strerror(errno));
}
