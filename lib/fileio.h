/* File I/O wrappers that finish the job or say exactly what failed: every failure is logged as
 * "<operation> <path>: <strerror>" at error level and returned as -1 with errno kept, so the
 * caller can pick the exit code (EX_TEMPFAIL for ENOSPC/EIO, for one). path MUST be given (a
 * name for the log line: "standard output" where there is no file name).
 *
 * The files of the message path (spool, scheduler, agents) are opened with openat(AT_FDCWD, ...)
 * rather than open(): musl's open() follows every O_CLOEXEC open with an fcntl(F_SETFD) for
 * kernels older than 2.6.23, a system call per file for nothing (issue 13 point 3). */
#ifndef SPOOLBOX_FILEIO_H
#define SPOOLBOX_FILEIO_H
#include <stddef.h>
#include <sys/types.h>

/* Writes all n bytes, retrying short writes and EINTR. */
int fio_write_all(int fd, const void *p, size_t n, const char *path);
/* pwrite of all n bytes at off. */
int fio_pwrite_all(int fd, const void *p, size_t n, off_t off, const char *path);
/* Reads up to n bytes (short only at end of file); returns the count or -1. */
ssize_t fio_read_full(int fd, void *p, size_t n, const char *path);
int fio_fsync(int fd, const char *path);
/* Opens the directory read-only and fsyncs it, so a create, rename or unlink in it is durable. */
int fio_fsync_dir(const char *dir);
/* The directory part of path into out (".", when there is no slash). */
int fio_dirname(const char *path, char *out, size_t size);
/* fio_fsync_dir() of path's directory: a file created, renamed or removed there lasts (-1 also
 * when the directory's name does not fit PATH_MAX). */
int fio_fsync_parent(const char *path);
/* Reads a whole regular file of at most max bytes into a NUL-terminated malloc'd buffer.
 * Returns 0, -1 on error (logged), and sets errno=EFBIG when the file is larger than max.
 * A missing file returns -1 with errno ENOENT and is not logged. */
int fio_slurp(const char *path, size_t max, char **out, size_t *len);
/* mkdir -p with the given mode for each created component; existing ones are left alone. */
int fio_mkdirs(const char *path, mode_t mode);
#endif
