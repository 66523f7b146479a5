/* Checked reads of files holding secrets; the rules are in secfile.h. The checks are made on
 * the open descriptor (fstat), so the file cannot be swapped between check and read. */
#include "secfile.h"
#include "agentuser.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int secfile_read(const char *path, size_t max, char **out, size_t *len, char *why, size_t whysize)
{
	struct agent_ids a;
	int fallback = geteuid() == 0 ? agentuser_ids_env(&a, NULL) : AGENTUSER_ROOT_FALLBACK;
	return secfile_read_owned(path, max, fallback ? (uid_t)-1 : a.uid, out, len, why, whysize);
}

int secfile_read_owned(const char *path, size_t max, uid_t agent, char **out, size_t *len, char *why, size_t whysize)
{
	*out = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			str_fmt(why, whysize, "is a symbolic link (refused: point the configuration at the file itself)");
		else
			str_fmt(why, whysize, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	struct stat st;
	int e = 0;
	uid_t me = geteuid();
	if (fstat(fd, &st) < 0) {
		e = errno;
		str_fmt(why, whysize, "cannot stat: %s", strerror(e));
	} else if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
		str_fmt(why, whysize, "not a regular file");
	} else if (st.st_uid != 0 && st.st_uid != me && (agent == (uid_t)-1 || st.st_uid != agent)) {
		e = EPERM;
		str_fmt(why, whysize, "owned by uid %u, not by root or uid %u (refused)", (unsigned)st.st_uid, (unsigned)me);
	} else if (st.st_mode & 077) {
		e = EPERM;
		str_fmt(why, whysize, "mode %04o lets others read it (refused: chmod 600)", (unsigned)(st.st_mode & 07777));
	} else if ((unsigned long long)st.st_size > max) {
		e = EFBIG;
		str_fmt(why, whysize, "larger than the limit of %zu bytes", max);
	}
	char *p = NULL;
	if (!e && !(p = malloc(max + 1))) {
		e = ENOMEM;
		str_fmt(why, whysize, "out of memory");
	}
	/* read to EOF, not to st_size: the file may change size; max still bounds it */
	size_t n = 0;
	while (!e) {
		ssize_t r = read(fd, p + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			str_fmt(why, whysize, "read error: %s", strerror(e));
		} else if (r == 0) {
			break;
		} else if ((n += (size_t)r) > max) {
			e = EFBIG;
			str_fmt(why, whysize, "larger than the limit of %zu bytes", max);
		}
	}
	close(fd);
	if (e) {
		secfile_free(p, max + 1);
		errno = e;
		return -1;
	}
	p[n] = 0;
	*out = p;
	*len = n;
	return 0;
}

void secfile_free(char *p, size_t len)
{
	if (p) {
		explicit_bzero(p, len);
		free(p);
	}
}
