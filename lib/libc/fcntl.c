/* spoolbox's fcntl for the static build, linked as an object like setxid.c so that musl's is never
 * pulled. musl's works around old kernels and the kernel's API for commands spoolbox never gives
 * (F_GETOWN through F_GETOWN_EX, F_DUPFD_CLOEXEC before Linux 2.6.24, F_SETLKW as a cancellation
 * point for threads); the ones it gives (F_GETFL, F_SETFL, F_SETFD, F_GETLK, F_SETLK) are the
 * system call as musl makes it: F_SETFL with O_LARGEFILE, and the fcntl64 call where there is
 * one (32-bit ARM: its F_*LK are the 64-bit offset ones). Others go to the kernel as they are. */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_fcntl64
#undef SYS_fcntl
#define SYS_fcntl SYS_fcntl64
#endif

/* the third argument where a third named one would be (lib/libc/open.c says why that holds here);
 * as with musl's va_arg, a command without one passes whatever is there, which the kernel ignores */
static int fcntl_3(int fd, int cmd, unsigned long arg)
{
	if (cmd == F_SETFL)
		arg |= O_LARGEFILE;
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

#define STR_(x) #x
#define STR(x) STR_(x)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattribute-alias"
int fcntl(int fd, int cmd, ...) __attribute__((alias(STR(fcntl_3))));
#pragma GCC diagnostic pop
