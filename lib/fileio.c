/* Durable, error-reporting file operations (see fileio.h). */
#include "crashpoint.h"
#include "fileio.h"
#include "io.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *op, const char *path)
{
	log_syserr(NULL, op, path, NULL); /* errno is kept; path is always given (fileio.h) */
	return -1;
}

int fio_write_all(int fd, const void *p, size_t n, const char *path)
{
	return io_write_all_fd(fd, p, n) < 0 ? fail("write", path) : 0;
}

int fio_pwrite_all(int fd, const void *p, size_t n, off_t off, const char *path)
{
	const char *c = p;
	while (n) {
		ssize_t w = pwrite(fd, c, n, off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return fail("pwrite", path);
		}
		c += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

ssize_t fio_read_full(int fd, void *p, size_t n, const char *path)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return fail("read", path);
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int fio_fsync(int fd, const char *path)
{
	while (fsync(fd) < 0) {
		if (errno != EINTR)
			return fail("fsync", path);
	}
	crash_point("fsync", path);
	return 0;
}

int fio_fsync_dir(const char *dir)
{
	int fd = openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail("open directory", dir);
	int r = fio_fsync(fd, dir);
	close(fd);
	return r;
}

int fio_fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	return fio_dirname(path, dir, sizeof dir) < 0 ? -1 : fio_fsync_dir(dir);
}

int fio_dirname(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return str_lcpy(out, ".", size) >= size ? -1 : 0;
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		return -1;
	memcpy(out, path, n);
	out[n] = 0;
	return 0;
}

int fio_slurp(const char *path, size_t max, char **out, size_t *len)
{
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -1;
		return fail("open", path);
	}
	/* each refusal reported, then the one close (which leaves errno when it succeeds) */
	struct stat st;
	char *p = NULL;
	ssize_t r = -1;
	if (fstat(fd, &st) < 0) {
		fail("stat", path);
	} else if (!S_ISREG(st.st_mode)) {
		log_msg(LOG_ERR, NULL, "read %s: not a regular file", path);
		errno = EINVAL;
	} else if ((unsigned long long)st.st_size > max) {
		log_msg(LOG_ERR, NULL, "read %s: larger than the limit of %zu bytes", path, max);
		errno = EFBIG;
	} else if (!(p = malloc((size_t)st.st_size + 1))) {
		fail("malloc for", path);
	} else {
		r = fio_read_full(fd, p, (size_t)st.st_size, path);
	}
	close(fd);
	if (r < 0) {
		free(p);
		return -1;
	}
	p[r] = 0;
	*out = p;
	*len = (size_t)r;
	return 0;
}

int fio_mkdirs(const char *path, mode_t mode)
{
	char tmp[4096];
	if (str_lcpy(tmp, path, sizeof tmp) >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return fail("mkdir", path);
	}
	for (char *p = tmp + 1;; p++) {
		if (*p == '/' || *p == 0) {
			char c = *p;
			*p = 0;
			if (mkdir(tmp, mode) < 0 && errno != EEXIST)
				return fail("mkdir", tmp);
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}
