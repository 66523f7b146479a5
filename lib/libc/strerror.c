/* spoolbox's strerror for the static build, linked as an object like setxid.c so that musl's is
 * never pulled. musl's table has a text for every errno (2.2 KiB); this one keeps musl 1.2.3's
 * exact texts for the errors the system calls spoolbox makes, and its own code, can give: files,
 * directories, file systems, memory, processes, exec, pipes, sockets and the network. Any other
 * number (and 0) is told by its value, "Unknown error N" as glibc words it, where musl said "No
 * error information" for all of them. tests/unit/test_libc.c checks every text.
 *
 * The table is one run of bytes: an errno, its text with the text's NUL, the next errno, ... and a
 * 0 at the end (a struct of char arrays has no padding). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ERRNO_TEXTS                                                                                \
	E(ENOENT, "No such file or directory")                                                     \
	E(EACCES, "Permission denied")                                                             \
	E(EPERM, "Operation not permitted")                                                        \
	E(ENOSPC, "No space left on device")                                                       \
	E(EDQUOT, "Quota exceeded")                                                                \
	E(EROFS, "Read-only file system")                                                          \
	E(EIO, "I/O error")                                                                        \
	E(EEXIST, "File exists")                                                                   \
	E(ENOTDIR, "Not a directory")                                                              \
	E(EISDIR, "Is a directory")                                                                \
	E(ELOOP, "Symbolic link loop")                                                             \
	E(ENAMETOOLONG, "Filename too long")                                                       \
	E(ENOTEMPTY, "Directory not empty")                                                        \
	E(EXDEV, "Cross-device link")                                                              \
	E(EMLINK, "Too many links")                                                                \
	E(ETXTBSY, "Text file busy")                                                               \
	E(EFBIG, "File too large")                                                                 \
	E(ESTALE, "Stale file handle")                                                             \
	E(EBADMSG, "Bad message")                                                                  \
	E(ENOLCK, "No locks available")                                                            \
	E(EDEADLK, "Resource deadlock would occur")                                                \
	E(EBUSY, "Resource busy")                                                                  \
	E(ENXIO, "No such device or address")                                                      \
	E(ENODEV, "No such device")                                                                \
	E(ENOTTY, "Not a tty")                                                                     \
	E(ESPIPE, "Invalid seek")                                                                  \
	E(EMFILE, "No file descriptors available")                                                 \
	E(ENFILE, "Too many open files in system")                                                 \
	E(EBADF, "Bad file descriptor")                                                            \
	E(EFAULT, "Bad address")                                                                   \
	E(ENOMEM, "Out of memory")                                                                 \
	E(EAGAIN, "Resource temporarily unavailable")                                              \
	E(EINTR, "Interrupted system call")                                                        \
	E(EINVAL, "Invalid argument")                                                              \
	E(EOVERFLOW, "Value too large for data type")                                              \
	E(ERANGE, "Result not representable")                                                      \
	E(EILSEQ, "Illegal byte sequence")                                                         \
	E(ENOSYS, "Function not implemented")                                                      \
	E(EOPNOTSUPP, "Not supported")                                                             \
	E(E2BIG, "Argument list too long")                                                         \
	E(ENOEXEC, "Exec format error")                                                            \
	E(ECHILD, "No child process")                                                              \
	E(ESRCH, "No such process")                                                                \
	E(EPIPE, "Broken pipe")                                                                    \
	E(ECONNREFUSED, "Connection refused")                                                      \
	E(ECONNRESET, "Connection reset by peer")                                                  \
	E(ECONNABORTED, "Connection aborted")                                                      \
	E(ETIMEDOUT, "Operation timed out")                                                        \
	E(EHOSTUNREACH, "Host is unreachable")                                                     \
	E(EHOSTDOWN, "Host is down")                                                               \
	E(ENETUNREACH, "Network unreachable")                                                      \
	E(ENETDOWN, "Network is down")                                                             \
	E(EADDRINUSE, "Address in use")                                                            \
	E(EADDRNOTAVAIL, "Address not available")                                                  \
	E(EAFNOSUPPORT, "Address family not supported by protocol")                                \
	E(EPROTONOSUPPORT, "Protocol not supported")                                               \
	E(EPROTO, "Protocol error")                                                                \
	E(ENOTCONN, "Socket not connected")                                                        \
	E(ENOTSOCK, "Not a socket")                                                                \
	E(EDESTADDRREQ, "Destination address required")                                            \
	E(EMSGSIZE, "Message too large")                                                           \
	E(ENOBUFS, "No buffer space available")

static const struct {
#define E(n, s) unsigned char n##_no; char n##_text[sizeof s];
	ERRNO_TEXTS
#undef E
	unsigned char end;
} errno_texts = {
#define E(n, s) n, s,
	ERRNO_TEXTS
#undef E
	0};

char *strerror(int e)
{
	static char unknown[sizeof "Unknown error -2147483648"];
	for (const unsigned char *p = (const unsigned char *)&errno_texts; *p; p += strlen((const char *)p + 1) + 2)
		if (*p == e)
			return (char *)p + 1;
	snprintf(unknown, sizeof unknown, "Unknown error %d", e);
	return unknown;
}
