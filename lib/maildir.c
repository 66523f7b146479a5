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

/* Makes dir (dl bytes in p) and its tmp/, new/, cur/ (mode 0700); fsyncs the parents of what
 * it created. The subdirectories' names are written after dir in p (room is the caller's) and
 * taken off again. */
static int make_dirs(char *p, size_t dl, struct dl_result *r)
{
	struct stat st;
	if (stat(p, &st) < 0) {
		if (errno != ENOENT || fio_mkdirs(p, 0700) < 0) {
			dl_set_errno(r, errno, "mkdir", p);
			return -1;
		}
		fio_fsync_parent(p);
	} else if (!S_ISDIR(st.st_mode)) {
		dl_set(r, "d4.2.0", "Maildir %s is not a directory", p);
		return -1;
	}
	static const char sub[][5] = {"/tmp", "/new", "/cur"};
	int made = 0;
	for (size_t i = 0; i < ARRAY_LEN(sub); i++) {
		memcpy(p + dl, sub[i], 5);
		if (mkdir(p, 0700) == 0)
			made = 1;
		else if (errno != EEXIST) {
			dl_set_errno(r, errno, "mkdir", p);
			return -1;
		}
	}
	p[dl] = 0;
	if (made)
		fio_fsync_dir(p);
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

void maildir_deliver(const char *dir, const char *host, const struct dl_msg *m, struct dl_result *r)
{
	/* one buffer: the Maildir (under 3996 bytes), then DIR/tmp/NAME; DIR/new/NAME in nw (a
	 * name is under 400 bytes: the host part is cut at 299) */
	char p[4608], nw[sizeof p];
	size_t dl = str_lcpy(p, dir, 4096);
	if (dl >= 4096 - 100) {
		dl_set(r, "f5.3.5", "Maildir path too long");
		return;
	}
	while (dl > 1 && p[dl - 1] == '/')
		p[--dl] = 0;
	if (make_dirs(p, dl, r) < 0)
		return;
	char hp[300];
	host_part(hp, sizeof hp, host);
	int fd = -1;
	for (unsigned attempt = 0; attempt < 8; attempt++) {
		struct timeval tv;
		gettimeofday(&tv, NULL);
		snprintf(p + dl, sizeof p - dl, "/tmp/%lld.M%ldP%ldQ%u.%s", (long long)tv.tv_sec, (long)tv.tv_usec,
		         (long)getpid(), attempt, hp);
		fd = openat(AT_FDCWD, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		dl_set_errno(r, errno, "create", p);
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
		unlink(p);
		dl_set_copy(r, e, rd_fail, p);
		return;
	}
	memcpy(nw, p, sizeof p);
	memcpy(nw + dl + 1, "new", 3);
	if (link(p, nw) < 0) {
		/* filesystems without hard links: a rename does the same job here */
		if ((errno != EPERM && errno != ENOSYS && errno != EOPNOTSUPP) || rename(p, nw) < 0) {
			e = errno;
			unlink(p);
			dl_set_errno(r, e, "link", nw);
			return;
		}
	} else {
		unlink(p);
	}
	nw[dl + 4] = 0; /* DIR/new */
	if (fio_fsync_dir(nw) < 0) {
		e = errno;
		nw[dl + 4] = '/';
		unlink(nw);
		nw[dl + 4] = 0;
		dl_set_errno(r, e, "fsync", nw);
		return;
	}
	p[dl] = 0;
	dl_set(r, "o2.0.0", "delivered to Maildir %s", p);
}
