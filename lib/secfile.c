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
	/* the refusal: "op: strerror(e)" when op is set, else fmt with the numbers a and b */
	const char *op = NULL, *fmt = NULL;
	unsigned long a = 0, b = 0;
	struct stat st;
	uid_t me = geteuid();
	char *p = NULL;
	size_t n = 0;
	int e = 0, fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			fmt = "is a symbolic link (refused: point the configuration at the file itself)";
		else
			op = "cannot open";
	} else if (fstat(fd, &st) < 0) {
		e = errno;
		op = "cannot stat";
	} else if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
		fmt = "not a regular file";
	} else if (st.st_uid != 0 && st.st_uid != me && (agent == (uid_t)-1 || st.st_uid != agent)) {
		e = EPERM;
		fmt = "owned by uid %lu, not by root or uid %lu (refused)";
		a = st.st_uid;
		b = me;
	} else if (st.st_mode & 077) {
		e = EPERM;
		fmt = "mode %04lo lets others read it (refused: chmod 600)";
		a = st.st_mode & 07777;
	} else if ((unsigned long long)st.st_size > max) {
		e = EFBIG;
		fmt = "larger than the limit of %lu bytes";
		a = max;
	} else if (!(p = malloc(max + 1))) {
		e = ENOMEM;
		fmt = "out of memory";
	}
	/* read to EOF, not to st_size: the file may change size; max still bounds it */
	while (!e) {
		ssize_t r = read(fd, p + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			op = "read error";
		} else if (r == 0) {
			break;
		} else if ((n += (size_t)r) > max) {
			e = EFBIG;
			fmt = "larger than the limit of %lu bytes";
			a = max;
		}
	}
	if (fd >= 0)
		close(fd);
	if (e) {
		if (op)
			str_fmt(why, whysize, "%s: %s", op, strerror(e));
		else
			str_fmt(why, whysize, fmt, a, b);
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
