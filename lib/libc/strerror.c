/* spoolbox's strerror for the static build, linked as an object like setxid.c so that musl's is
 * never pulled. musl's table has a text for every errno (2.2 KiB); this one keeps musl 1.2.3's
 * exact texts for the errors the system calls spoolbox makes, and its own code, can give: files,
 * directories, file systems, memory, processes, exec, pipes, sockets and the network. Any other
 * number (and 0) is told by its value, "Unknown error N" as glibc words it, where musl said "No
 * error information" for all of them. tests/unit/test_libc.c checks every text.
 *
 * The table is one run of bytes: an errno, its text and the text's NUL, the next errno, ... and a
 * 0 at the end (a struct of char arrays has no padding). In a text, a byte below ' ' stands for
 * the word of errno_words it numbers (W_*, from 1): the words that come back in several texts are
 * kept once (-0.2 KiB). So the text is built in a static buffer, as POSIX allows: the next call
 * may overwrite it (no caller keeps one text across another call). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define W_AVAILABLE   "\001" /* "available" */
#define W_NOT         "\002" /* " not " */
#define W_FILE        "\003" /* " file " */
#define W_DIRECTORY   "\004" /* "directory" */
#define W_CONNECTION  "\005" /* "Connection " */
#define W_NO_SUCH     "\006" /* "No such " */
#define W_RESOURCE    "\007" /* "Resource " */
#define W_DEVICE      "\010" /* "device" */
#define W_TOO         "\011" /* " too " */
#define W_SYSTEM      "\012" /* "system" */
#define W_UNREACHABLE "\013" /* " unreachable" */
#define W_TOO_MANY    "\014" /* "Too many " */
#define W_INVALID     "\015" /* "Invalid " */
#define W_SUPPORTED   "\016" /* "supported" */
#define W_ERROR       "\017" /* " error" */
#define W_NOT_A       "\020" /* "Not a " */
#define W_ADDRESS     "\021" /* " address" */

static const char errno_words[] = "available\0" " not \0" " file \0" "directory\0" "Connection \0" "No such \0"
                                  "Resource \0" "device\0" " too \0" "system\0" " unreachable\0" "Too many \0"
                                  "Invalid \0" "supported\0" " error\0" "Not a \0" " address";

#define ERRNO_TEXTS                                                                                \
	E(ENOENT, "No such" W_FILE "or " W_DIRECTORY)                                                   \
	E(EACCES, "Permission denied")                                                                  \
	E(EPERM, "Operation" W_NOT "permitted")                                                         \
	E(ENOSPC, "No space left on " W_DEVICE)                                                         \
	E(EDQUOT, "Quota exceeded")                                                                     \
	E(EROFS, "Read-only" W_FILE W_SYSTEM)                                                           \
	E(EIO, "I/O" W_ERROR)                                                                           \
	E(EEXIST, "File exists")                                                                        \
	E(ENOTDIR, W_NOT_A W_DIRECTORY)                                                                 \
	E(EISDIR, "Is a " W_DIRECTORY)                                                                  \
	E(ELOOP, "Symbolic link loop")                                                                  \
	E(ENAMETOOLONG, "Filename" W_TOO "long")                                                        \
	E(ENOTEMPTY, "Directory" W_NOT "empty")                                                         \
	E(EXDEV, "Cross-" W_DEVICE " link")                                                             \
	E(EMLINK, W_TOO_MANY "links")                                                                   \
	E(ETXTBSY, "Text" W_FILE "busy")                                                                \
	E(EFBIG, "File" W_TOO "large")                                                                  \
	E(ESTALE, "Stale" W_FILE "handle")                                                              \
	E(EBADMSG, "Bad message")                                                                       \
	E(ENOLCK, "No locks " W_AVAILABLE)                                                              \
	E(EDEADLK, W_RESOURCE "deadlock would occur")                                                   \
	E(EBUSY, W_RESOURCE "busy")                                                                     \
	E(ENXIO, W_NO_SUCH W_DEVICE " or" W_ADDRESS)                                                    \
	E(ENODEV, W_NO_SUCH W_DEVICE)                                                                   \
	E(ENOTTY, W_NOT_A "tty")                                                                        \
	E(ESPIPE, W_INVALID "seek")                                                                     \
	E(EMFILE, "No" W_FILE "descriptors " W_AVAILABLE)                                               \
	E(ENFILE, W_TOO_MANY "open files in " W_SYSTEM)                                                 \
	E(EBADF, "Bad" W_FILE "descriptor")                                                             \
	E(EFAULT, "Bad" W_ADDRESS)                                                                      \
	E(ENOMEM, "Out of memory")                                                                      \
	E(EAGAIN, W_RESOURCE "temporarily un" W_AVAILABLE)                                              \
	E(EINTR, "Interrupted " W_SYSTEM " call")                                                       \
	E(EINVAL, W_INVALID "argument")                                                                 \
	E(EOVERFLOW, "Value" W_TOO "large for data type")                                               \
	E(ERANGE, "Result" W_NOT "representable")                                                       \
	E(EILSEQ, "Illegal byte sequence")                                                              \
	E(ENOSYS, "Function" W_NOT "implemented")                                                       \
	E(EOPNOTSUPP, "Not " W_SUPPORTED)                                                               \
	E(E2BIG, "Argument list" W_TOO "long")                                                          \
	E(ENOEXEC, "Exec format" W_ERROR)                                                               \
	E(ECHILD, "No child process")                                                                   \
	E(ESRCH, W_NO_SUCH "process")                                                                   \
	E(EPIPE, "Broken pipe")                                                                         \
	E(ECONNREFUSED, W_CONNECTION "refused")                                                         \
	E(ECONNRESET, W_CONNECTION "reset by peer")                                                     \
	E(ECONNABORTED, W_CONNECTION "aborted")                                                         \
	E(ETIMEDOUT, "Operation timed out")                                                             \
	E(EHOSTUNREACH, "Host is" W_UNREACHABLE)                                                        \
	E(EHOSTDOWN, "Host is down")                                                                    \
	E(ENETUNREACH, "Network" W_UNREACHABLE)                                                         \
	E(ENETDOWN, "Network is down")                                                                  \
	E(EADDRINUSE, "Address in use")                                                                 \
	E(EADDRNOTAVAIL, "Address" W_NOT W_AVAILABLE)                                                   \
	E(EAFNOSUPPORT, "Address family" W_NOT W_SUPPORTED " by protocol")                              \
	E(EPROTONOSUPPORT, "Protocol" W_NOT W_SUPPORTED)                                                \
	E(EPROTO, "Protocol" W_ERROR)                                                                   \
	E(ENOTCONN, "Socket" W_NOT "connected")                                                         \
	E(ENOTSOCK, W_NOT_A "socket")                                                                   \
	E(EDESTADDRREQ, "Destination" W_ADDRESS " required")                                            \
	E(EMSGSIZE, "Message" W_TOO "large")                                                            \
	E(ENOBUFS, "No buffer space " W_AVAILABLE)

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
	static char text[48]; /* the longest is 40 bytes, "Address family not supported by protocol" */
	const unsigned char *p = (const unsigned char *)&errno_texts;
	while (*p && *p != e)
		p += strlen((const char *)p + 1) + 2;
	if (!*p) {
		snprintf(text, sizeof text, "Unknown error %d", e);
		return text;
	}
	char *t = text;
	while (*++p) {
		if (*p >= ' ') {
			*t++ = (char)*p;
			continue;
		}
		const char *w = errno_words;
		for (int k = *p; --k;)
			w += strlen(w) + 1;
		t = stpcpy(t, w);
	}
	*t = 0;
	return text;
}
