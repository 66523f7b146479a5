/* spoolbox's open() for the static build, linked as an object like setxid.c so that musl's is
 * never pulled. musl's follows every O_CLOEXEC open with fcntl(F_SETFD, FD_CLOEXEC) for kernels
 * before 2.6.23, which ignored the flag: one more system call for nearly every file spoolbox
 * opens (they all ask for O_CLOEXEC). This is the openat call with the directory AT_FDCWD, as
 * every architecture has it, with O_LARGEFILE added as musl adds it. openat likewise: musl's is
 * the same call made as a thread cancellation point (spoolbox starts no thread). */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the mode argument, which exists only when a file may be created */
static unsigned create_mode(int flags, va_list *ap)
{
	return flags & O_CREAT || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(*ap, unsigned) : 0;
}

int openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	unsigned mode = create_mode(flags, &ap);
	va_end(ap);
	return (int)syscall(SYS_openat, dir, path, flags | O_LARGEFILE, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	unsigned mode = create_mode(flags, &ap);
	va_end(ap);
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_LARGEFILE, mode);
}
