/* The one clock of the scheduler: every "now" and every timer goes through a struct sclock, so
 * tests and a later simulator can move time without sleeping.
 *
 * A clock is real time, optionally shifted by an offset and sped up by a factor (the test hook
 * SPOOLBOX_TEST_CLOCK="+OFFSET[*SPEED]" or "-OFFSET[*SPEED]", e.g. "+3d", "-365d" or "+0*60"), or fully manual (a test sets
 * c->manual and moves c->manual_ms itself). Timers are deadlines in the clock's own time;
 * sclock_wait_ms() turns the nearest deadline into a poll() timeout in real milliseconds. */
#ifndef SPOOLBOX_CLOCK_H
#define SPOOLBOX_CLOCK_H

struct sclock {
	long long offset_ms;  /* virtual - real at base_real_ms */
	long long base_real_ms;
	unsigned speed;       /* virtual ms per real ms, >= 1 */
	int manual;           /* 1: time is manual_ms, and only moves when a test sets it */
	long long manual_ms;
};

/* Real time, no offset, speed 1. */
void sclock_init(struct sclock *c);
/* Applies a test-hook spec "+OFFSET[*SPEED]", "-OFFSET[*SPEED]" or "*SPEED" (OFFSET an interval
 * like 3d or 90).
 * Returns 0, or -1 (the clock is left real) when the spec is malformed. */
int sclock_parse(struct sclock *c, const char *spec);
/* The clock's time in milliseconds and in seconds since the epoch. */
long long sclock_now_ms(const struct sclock *c);
long long sclock_now(const struct sclock *c);
/* Real milliseconds to wait until the clock reaches deadline (seconds); 0 when it has passed,
 * -1 for deadline 0 ("no timer"), at most cap_ms. */
int sclock_wait_ms(const struct sclock *c, long long deadline, int cap_ms);
/* The monotonic clock in milliseconds (CLOCK_MONOTONIC; timeouts, not the sclock's time): one
 * copy for the log and the streams. */
long long clock_mono_ms(void);
/* English day and month abbreviations, three letters each ("SunMon...", "JanFeb..."): one copy for
 * the Date: field and the syslog stamp (printed with %.3s from day * 3, month * 3). */
extern const char clock_days[22], clock_months[37];
#endif
