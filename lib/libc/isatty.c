/* spoolbox's isatty for the static build, linked as an object like setxid.c so that musl's is
 * never pulled: musl's code (the TIOCGWINSZ ioctl; ENOTTY for any failure but EBADF), compiled
 * with our flags (libc.a's is -O2 with a stack protector). */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int isatty(int fd)
{
	struct winsize wsz;
	if (syscall(SYS_ioctl, fd, TIOCGWINSZ, &wsz) == 0)
		return 1;
	if (errno != EBADF)
		errno = ENOTTY;
	return 0;
}
