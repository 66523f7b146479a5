/* Unit tests of the injectable clock: offsets, speed-up, manual time, poll timeouts. */
#include "clock.h"
#include "unit.h"
#include <time.h>

TEST(clock_offset_and_speed)
{
	struct sclock c;
	sclock_init(&c);
	long long real = (long long)time(NULL);
	CHECK(sclock_now(&c) - real <= 1 && sclock_now(&c) - real >= -1);
	CHECK_INT(sclock_parse(&c, "+3d"), 0);
	CHECK(sclock_now(&c) - real >= 3 * 86400 - 1 && sclock_now(&c) - real <= 3 * 86400 + 1);
	CHECK_INT(sclock_parse(&c, "+0*60"), 0);
	CHECK_INT(c.speed, 60);
	/* a deadline one virtual minute away is about one real second away */
	int w = sclock_wait_ms(&c, sclock_now(&c) + 61, 100000);
	CHECK(w > 900 && w <= 1100);
	CHECK_INT(sclock_parse(&c, "*10"), 0);
	/* a clock stepped back */
	CHECK_INT(sclock_parse(&c, "-365d"), 0);
	CHECK(real - sclock_now(&c) >= 365 * 86400 - 1 && real - sclock_now(&c) <= 365 * 86400 + 1);
	CHECK_INT(sclock_parse(&c, "3d"), -1);
	CHECK_INT(sclock_parse(&c, "+3x"), -1);
	CHECK_INT(sclock_parse(&c, "+1*0"), -1);
}

TEST(clock_manual_and_timeouts)
{
	struct sclock c;
	sclock_init(&c);
	c.manual = 1;
	c.manual_ms = 1000000;
	CHECK_INT(sclock_now(&c), 1000);
	CHECK_INT(sclock_wait_ms(&c, 0, 5000), -1);
	CHECK_INT(sclock_wait_ms(&c, 999, 5000), 0);
	CHECK_INT(sclock_wait_ms(&c, 1002, 5000), 2000);
	CHECK_INT(sclock_wait_ms(&c, 9999, 5000), 5000);
	c.manual_ms += 2000;
	CHECK_INT(sclock_wait_ms(&c, 1002, 5000), 0);
}
