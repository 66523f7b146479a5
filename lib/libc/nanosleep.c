/* spoolbox's nanosleep for the static build, linked as an object like setxid.c so that musl's is
 * never pulled. musl's goes through its clock_nanosleep (which makes the nanosleep call for the
 * real-time clock without flags, as a thread cancellation point) and turns its error number
 * back into errno; here it is that call. 32-bit ARM keeps musl's: its 64-bit times need the
 * clock_nanosleep_time64 call of Linux 5.1, and musl's fallback for older kernels. */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_clock_nanosleep_time64
int nanosleep(const struct timespec *req, struct timespec *rem)
{
	return (int)syscall(SYS_nanosleep, req, rem);
}
#else
typedef int nanosleep_is_musls; /* an empty file is not ISO C */
#endif
