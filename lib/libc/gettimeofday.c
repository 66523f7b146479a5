/* spoolbox's gettimeofday and time for the static build, linked as objects like setxid.c so that
 * musl's are never pulled: musl's code, through musl's clock_gettime (and so its vDSO: no system
 * call), compiled with our flags (libc.a's is -O2 with a stack protector). */
#include <sys/time.h>
#include <time.h>

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
