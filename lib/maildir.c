/* Maildir delivery (see maildir.h): tmp/ → fsync → link into new/ → fsync new/. */
#include "maildir.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

/* Makes dir and its tmp/, new/, cur/ (mode 0700); fsyncs the parents of what it created. */
static int make_dirs(const char *dir, struct dl_result *r)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		if (errno != ENOENT || fio_mkdirs(dir, 0700) < 0) {
			dl_set_errno(r, errno, "mkdir", dir);
			return -1;
		}
		fio_fsync_parent(dir);
	} else if (!S_ISDIR(st.st_mode)) {
		dl_set(r, DL_DEFER, "4.2.0", "Maildir %s is not a directory", dir);
		return -1;
	}
	static const char *const sub[] = {"tmp", "new", "cur"};
	int made = 0;
	for (size_t i = 0; i < ARRAY_LEN(sub); i++) {
		char p[4200];
		if (str_fmt(p, sizeof p, "%s/%s", dir, sub[i]) < 0) {
			dl_set(r, DL_FAIL, "5.3.5", "Maildir path too long: %s", dir);
			return -1;
		}
		if (mkdir(p, 0700) == 0)
			made = 1;
		else if (errno != EEXIST) {
			dl_set_errno(r, errno, "mkdir", p);
			return -1;
		}
	}
	if (made)
		fio_fsync_dir(dir);
	return 0;
}

static void host_part(char *out, size_t size, const char *host)
{
	size_t n = 0;
	for (; *host && n + 5 < size; host++) {
		if (*host == '/' || *host == ':') {
			n += (size_t)snprintf(out + n, size - n, "\\%03o", (unsigned char)*host);
			continue;
		}
		out[n++] = (unsigned char)*host < 0x21 || *host == 0x7f ? '_' : *host;
	}
	out[n] = 0;
}

void maildir_deliver(const char *dir_, const char *host, const struct dl_msg *m, struct dl_result *r)
{
	char dir[4096];
	if (str_lcpy(dir, dir_, sizeof dir) >= sizeof dir - 100) {
		dl_set(r, DL_FAIL, "5.3.5", "Maildir path too long");
		return;
	}
	size_t dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dir[--dl] = 0;
	if (make_dirs(dir, r) < 0)
		return;
	char hp[300];
	host_part(hp, sizeof hp, host);
	char tmp[4600], new_[4600], name[400];
	int fd = -1;
	for (unsigned attempt = 0; attempt < 8; attempt++) {
		struct timeval tv;
		gettimeofday(&tv, NULL);
		snprintf(name, sizeof name, "%lld.M%ldP%ldQ%u.%s", (long long)tv.tv_sec, (long)tv.tv_usec,
		         (long)getpid(), attempt, hp);
		snprintf(tmp, sizeof tmp, "%s/tmp/%s", dir, name);
		fd = openat(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		dl_set_errno(r, errno, "create", tmp);
		return;
	}
	int rd_fail = 0, e = 0;
	struct io io;
	dl_io(&io, fd, NULL, NULL);
	if (dl_copy(m, &io, 0, &rd_fail) < 0)
		e = errno;
	else if (fsync(fd) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (e) {
		unlink(tmp);
		/* "read message file: ..." (a read: never ENOSPC or EDQUOT, so 4.3.0) or "write ..." */
		dl_set_errno(r, e, rd_fail ? "read message" : "write", rd_fail ? "file" : tmp);
		return;
	}
	snprintf(new_, sizeof new_, "%s/new/%s", dir, name);
	if (link(tmp, new_) < 0) {
		/* filesystems without hard links: a rename does the same job here */
		if ((errno != EPERM && errno != ENOSYS && errno != EOPNOTSUPP) || rename(tmp, new_) < 0) {
			e = errno;
			unlink(tmp);
			dl_set_errno(r, e, "link", new_);
			return;
		}
	} else {
		unlink(tmp);
	}
	char nd[4200];
	snprintf(nd, sizeof nd, "%s/new", dir);
	if (fio_fsync_dir(nd) < 0) {
		e = errno;
		unlink(new_);
		dl_set_errno(r, e, "fsync", nd);
		return;
	}
	dl_set(r, DL_OK, "2.0.0", "delivered to Maildir %s", dir);
}
