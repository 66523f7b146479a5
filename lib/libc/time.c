/* spoolbox's clock_gettime, gettimeofday and time for the static build, linked as objects like
 * setxid.c so that musl's are never pulled. musl's clock_gettime looks the call up in the
 * kernel's vDSO first (an ELF symbol-table walk, 1 KiB with its caller's wrappers), which saves
 * some 100 ns a call; spoolbox reads the clock a few times per delivery or scheduler turn, so
 * here it is the system call. The 32-bit ARM call with a 64-bit time_t (Linux 5.1) falls back
 * to the old call on older kernels, as musl's does. */
#include <errno.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#if defined(SYS_clock_gettime64) && SYS_clock_gettime64 != SYS_clock_gettime
int clock_gettime(clockid_t clk, struct timespec *ts)
{
	long r = syscall(SYS_clock_gettime64, clk, ts), t32[2];
	if (r == 0 || errno != ENOSYS)
		return (int)r;
	if ((r = syscall(SYS_clock_gettime, clk, t32)) == 0) {
		ts->tv_sec = t32[0];
		ts->tv_nsec = t32[1];
	}
	return (int)r;
}
#else
int clock_gettime(clockid_t clk, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, clk, ts);
}
#endif

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;
	if (!tv)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = (int)ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
