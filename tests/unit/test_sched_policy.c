/* Unit tests of the scheduler's pure decisions: outcomes, retry arithmetic (including the
 * random re-entry at the end of the sequence), retryat, expiry and expiry2, limits. */
#include "sched_int.h"
#include "unit.h"

TEST(policy_outcomes)
{
	CHECK_INT(sched_outcome_of("ok"), SO_DELIVERED);
	CHECK_INT(sched_outcome_of("ok2"), SO_DELIVERED);
	CHECK_INT(sched_outcome_of("ok3"), SO_DELIVERED);
	CHECK_INT(sched_outcome_of("error"), SO_FAILED);
	CHECK_INT(sched_outcome_of("error2"), SO_FAILED);
	CHECK_INT(sched_outcome_of("deferred"), SO_DEFERRED);
	CHECK_INT(sched_outcome_of("deferall"), SO_DEFERALL);
	CHECK_INT(sched_outcome_of("retryat"), SO_RETRYAT);
	CHECK_INT(sched_outcome_of("okay"), SO_UNKNOWN);
}

TEST(policy_retry_sequence)
{
	struct sc_params p;
	sc_params_default(&p);
	/* interval 1m, retries 1 1 2 3 5 8 13 21 34 */
	static const long long expect[] = {60, 60, 120, 180, 300, 480, 780, 1260, 2040};
	for (unsigned i = 0; i < 9; i++)
		CHECK_INT(sched_retry_next(&p, i, "ID1", 1000) - 1000, expect[i]);
	/* past the end: every element is from the sequence, and each lap runs to its end */
	unsigned prev = 8;
	int laps = 0;
	for (unsigned t = 9; t < 400; t++) {
		unsigned ix = sched_retry_index(9, t, "ID1");
		CHECK(ix < 9);
		if (ix != prev + 1) {
			CHECK_INT(prev, 8); /* a new lap only starts after the end */
			laps++;
		}
		prev = ix;
		CHECK_INT(sched_retry_index(9, t, "ID1"), ix); /* reproducible */
	}
	CHECK(laps > 10);
	/* different messages re-enter at different spots */
	int differ = 0;
	for (unsigned t = 9; t < 60; t++)
		differ += sched_retry_index(9, t, "ID1") != sched_retry_index(9, t, "ID2");
	CHECK(differ > 0);
	/* constant interval and jackhammer */
	static const unsigned one[] = {1}, zero[] = {0};
	p.retries = one;
	p.nretries = 1;
	CHECK_INT(sched_retry_next(&p, 57, "X", 10), 70);
	p.retries = zero;
	CHECK_INT(sched_retry_next(&p, 3, "X", 10), 11);
	/* instant backoff */
	static const unsigned inst[] = {1, 50, 50};
	p.retries = inst;
	p.nretries = 3;
	p.interval = 10;
	CHECK_INT(sched_retry_next(&p, 0, "X", 0), 10);
	CHECK_INT(sched_retry_next(&p, 1, "X", 0), 500);
}

TEST(policy_retryat)
{
	CHECK_INT(sched_retryat("+30 try later", 1000), 1030);
	CHECK_INT(sched_retryat("2000000000", 1000), 2000000000);
	CHECK_INT(sched_retryat("soon", 1000), -1);
	CHECK_INT(sched_retryat("+", 1000), -1);
	CHECK_INT(sched_retryat("+12x", 1000), -1);
	CHECK_INT(sched_retryat("99999999999999999999999", 1000), -1);
}

TEST(policy_expiry)
{
	struct sc_params p;
	sc_params_default(&p);
	p.expiry = 100;
	/* tried time, not the wall clock */
	CHECK_INT(sched_expired(&p, 1000, 99, 1099, 1), 0);
	CHECK_INT(sched_expired(&p, 1000, 100, 1100, 1), 1);
	CHECK_INT(sched_expired(&p, 1000, 5, 1000 + 400LL * 86400, 1), 0); /* a clock 400 days ahead */
	/* without an attempt in this run: only expiry2, by the wall clock, and 0 means never */
	CHECK_INT(sched_expired(&p, 1000, 0, 999999, 0), 0);
	p.expiry2 = 50;
	CHECK_INT(sched_expired(&p, 1000, 0, 1149, 0), 0);
	CHECK_INT(sched_expired(&p, 1000, 0, 1150, 0), 1);
}

TEST(policy_limits)
{
	struct sc_params p;
	sc_params_default(&p);
	CHECK_INT(sched_maxta(&p, 1000), 1000);
	CHECK_INT(sched_maxring(&p, 1000), 1000);
	CHECK_INT(sched_maxchannel(&p, 1000), 1000);
	p.maxta = 4;
	p.maxchannel = 2;
	CHECK_INT(sched_maxring(&p, 1000), 4);
	CHECK_INT(sched_maxchannel(&p, 1000), 2);
	CHECK(sched_may_start(&p, 1000, 3, 0, 1, 0));
	CHECK(!sched_may_start(&p, 1000, 4, 0, 0, 0));
	CHECK(!sched_may_start(&p, 1000, 0, 0, 2, 0));
	CHECK(sched_may_start(&p, 1000, 0, 0, 0, 7)); /* maxthr 0: the destination concurrency decides */
	p.maxthr = 1;
	CHECK(!sched_may_start(&p, 1000, 0, 0, 0, 1)); /* maxthr 1 */
	p.maxthr = 0;
	p.maxring = 1;
	CHECK(!sched_may_start(&p, 1000, 0, 1, 0, 0));
	p.interval = 10;
	CHECK_INT(sched_idlemax(&p), 30);
	p.idlemax = 7;
	CHECK_INT(sched_idlemax(&p), 7);
}

TEST(policy_tried_time_ignores_clock_jumps)
{
	struct sc_params p;
	sc_params_default(&p);
	static const unsigned seq[] = {1, 2, 5};
	p.interval = 60;
	p.retries = seq;
	p.nretries = 3;
	long long cap = sched_retry_cap(&p);
	CHECK_INT(cap, 60 * 5 + 60);
	/* regular attempts count fully */
	long long t = sched_tried_add(0, 1000, 1060, cap);
	CHECK_INT(t, 60);
	t = sched_tried_add(t, 1060, 1180, cap);
	CHECK_INT(t, 180);
	/* NTP steps 400 days ahead between two attempts: one cap, not 400 days */
	t = sched_tried_add(t, 1180, 1180 + 400LL * 86400, cap);
	CHECK_INT(t, 180 + cap);
	/* and back a year: nothing */
	CHECK_INT(sched_tried_add(t, 1180 + 400LL * 86400, 1180 + 35LL * 86400, cap), t);
	/* nothing seen yet: nothing */
	CHECK_INT(sched_tried_add(0, 0, 5000, cap), 0);
}
