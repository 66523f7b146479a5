/* spoolbox's futimens for the static build, linked as an object like setxid.c so that musl's is
 * never pulled. musl's goes through its utimensat, which falls back to futimesat and utimes for
 * kernels before 2.6.22 (0.4 KiB); here it is the utimensat call on the descriptor. 32-bit ARM
 * keeps musl's: its times are 64-bit, which only the utimensat_time64 call of Linux 5.1 takes,
 * and musl falls back to the 32-bit call for older kernels. */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_utimensat_time64
int futimens(int fd, const struct timespec times[2])
{
	return (int)syscall(SYS_utimensat, fd, 0, times, 0);
}
#else
typedef int futimens_is_musls; /* an empty file is not ISO C */
#endif
