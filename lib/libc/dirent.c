/* spoolbox's opendir, readdir, closedir and dirfd for the static build, linked as objects like
 * setxid.c so that musl's are never pulled: musl's code (libc.a's is -O2 with a stack protector,
 * 0.2 KiB) with our flags, and musl's DIR as it is, so that any other musl dirent function a
 * later caller links reads it right. readdir is getdents64 a buffer at a time; it leaves errno
 * alone at the end of the directory and when the directory was removed (ENOENT), as musl's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* musl's src/dirent/__dirent.h */
struct __dirstream {
	off_t tell;
	int fd;
	int buf_pos;
	int buf_end;
	volatile int lock[1];
	char buf[2048];
};

DIR *opendir(const char *name)
{
	int fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	DIR *dir = calloc(1, sizeof *dir);
	if (!dir) {
		close(fd); /* a close that succeeds leaves calloc's errno */
		return NULL;
	}
	dir->fd = fd;
	return dir;
}

int closedir(DIR *dir)
{
	int r = close(dir->fd);
	free(dir);
	return r;
}

struct dirent *readdir(DIR *dir)
{
	if (dir->buf_pos >= dir->buf_end) {
		int saved = errno;
		long len = syscall(SYS_getdents64, dir->fd, dir->buf, sizeof dir->buf);
		if (len <= 0) {
			if (len < 0 && errno == ENOENT)
				errno = saved;
			return NULL;
		}
		dir->buf_end = (int)len;
		dir->buf_pos = 0;
	}
	struct dirent *de = (void *)(dir->buf + dir->buf_pos);
	dir->buf_pos += de->d_reclen;
	dir->tell = de->d_off;
	return de;
}

int dirfd(DIR *dir)
{
	return dir->fd;
}
