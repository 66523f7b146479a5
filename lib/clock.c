/* The scheduler's injectable clock (see clock.h). */
#include "clock.h"
#include "conf.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the clock's time in milliseconds: one copy for the real and the monotonic clock */
static long long clock_ms(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long real_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

void sclock_init(struct sclock *c)
{
	memset(c, 0, sizeof *c);
	c->speed = 1;
	c->base_real_ms = real_ms();
}

int sclock_parse(struct sclock *c, const char *spec)
{
	char off[64];
	long long offset = 0, speed = 1;
	const char *star = strchr(spec, '*');
	size_t n = star ? (size_t)(star - spec) : strlen(spec);
	if (n >= sizeof off)
		return -1;
	memcpy(off, spec, n);
	off[n] = 0;
	if (n) {
		if ((off[0] != '+' && off[0] != '-') || parse_interval(off + 1, &offset) < 0 || offset > 100LL * 365 * 86400)
			return -1;
		if (off[0] == '-') /* a clock stepped back (docs/scheduler.md "Clock jumps") */
			offset = -offset;
	}
	if (star) {
		char *end;
		speed = strtoll(star + 1, &end, 10);
		if (*end || speed < 1 || speed > 100000)
			return -1;
	}
	sclock_init(c);
	c->offset_ms = offset * 1000;
	c->speed = (unsigned)speed;
	return 0;
}

long long sclock_now_ms(const struct sclock *c)
{
	if (c->manual)
		return c->manual_ms;
	long long r = real_ms();
	return r + c->offset_ms + (r - c->base_real_ms) * (long long)(c->speed - 1);
}

long long sclock_now(const struct sclock *c)
{
	return sclock_now_ms(c) / 1000;
}

int sclock_wait_ms(const struct sclock *c, long long deadline, int cap_ms)
{
	if (deadline <= 0)
		return -1;
	long long left = deadline * 1000 - sclock_now_ms(c);
	if (left <= 0)
		return 0;
	left = (left + c->speed - 1) / c->speed;
	return left > cap_ms ? cap_ms : (int)left;
}

long long clock_mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

const char clock_days[22] = "SunMonTueWedThuFriSat";
const char clock_months[37] = "JanFebMarAprMayJunJulAugSepOctNovDec";
