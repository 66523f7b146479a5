/* spoolbox's open() for the static build, linked as an object like setxid.c so that musl's is
 * never pulled. musl's follows every O_CLOEXEC open with fcntl(F_SETFD, FD_CLOEXEC) for kernels
 * before 2.6.23, which ignored the flag: one more system call for nearly every file spoolbox
 * opens (they all ask for O_CLOEXEC). This is the openat call with the directory AT_FDCWD, as
 * every architecture has it, with O_LARGEFILE added as musl adds it. openat likewise: musl's is
 * the same call made as a thread cancellation point (spoolbox starts no thread). */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* open and openat are variadic, but on the ABIs spoolbox is built for (x86-64, arm64 and 32-bit
 * ARM Linux) an integer after the named arguments is passed where one more named argument would
 * be: so they are these functions of one more argument under the variadic names (a variadic
 * prologue, with its va_list, was 0.1 KiB each). The mode, which the caller passes only when a
 * file may be created, is read only then, as musl's va_arg does. */
static int open_at(int dir, const char *path, int flags, unsigned mode)
{
	if (!(flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE)
		mode = 0;
	return (int)syscall(SYS_openat, dir, path, flags | O_LARGEFILE, mode);
}

static int open_cwd(const char *path, int flags, unsigned mode)
{
	return open_at(AT_FDCWD, path, flags, mode);
}

#define STR_(x) #x
#define STR(x) STR_(x)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattribute-alias"
int openat(int dir, const char *path, int flags, ...) __attribute__((alias(STR(open_at))));
int open(const char *path, int flags, ...) __attribute__((alias(STR(open_cwd))));
#pragma GCC diagnostic pop
