/* Unit tests of the per-destination concurrency feedback (lib/sched_feedback.c, seed 004, issue
 * 14 points 2-3): the initial window, g(N) and f(N) in their three styles, hysteresis (+1 at the
 * end of 1/g successes, -1 at the start of 1/f failures), no growth while idle, the cap, failed
 * pseudo-cohorts making a destination dead, and the probe that reopens it. */
#include "sched_int.h"
#include "unit.h"

static void params(struct sc_params *p, int pos, int neg, int cohorts)
{
	sc_params_default(p);
	p->pos_style = pos;
	p->neg_style = neg;
	p->cohort_limit = cohorts;
}

TEST(feedback_amounts)
{
	CHECK(sfb_amount(SFB_FIXED, 1, 9) == 1);
	CHECK(sfb_amount(SFB_PER_N, 1, 4) == 0.25);
	CHECK(sfb_amount(SFB_PER_SQRT_N, 1, 4) == 0.5);
	CHECK(sfb_amount(SFB_PER_SQRT_N, 0.5, 16) == 0.125);
	CHECK(sfb_amount(SFB_PER_N, 1, 0) == 1); /* a dead window counts as 1 */
	CHECK(sfb_negative("4.4.1"));
	CHECK(sfb_negative("4.4.2"));
	CHECK(!sfb_negative("4.4.7"));
	CHECK(!sfb_negative("4.2.0"));
}

TEST(feedback_positive_hysteresis_and_safety)
{
	struct sc_params p;
	params(&p, SFB_PER_N, SFB_PER_N, 0);
	struct sfb f;
	sfb_init(&f, &p);
	CHECK_INT(f.window, 5);
	/* 1/N: +1 at the END of a pseudo-cohort of 5 successes */
	for (int i = 0; i < 4; i++) {
		sfb_success(&f, &p, 5);
		CHECK_INT(f.window, 5);
	}
	sfb_success(&f, &p, 5);
	CHECK_INT(f.window, 6);
	/* safety: a window that is not used (busy 0: 6 >= 0 + initial 5) does not grow */
	for (int i = 0; i < 50; i++)
		sfb_success(&f, &p, 0);
	CHECK_INT(f.window, 6);
	/* fixed 1: +1 per success, up to the limit */
	params(&p, SFB_FIXED, SFB_FIXED, 0);
	sfb_init(&f, &p);
	for (int i = 0; i < 100; i++)
		sfb_success(&f, &p, f.window);
	CHECK_INT(f.window, 20);
	p.init_conc = 50; /* the initial value never exceeds the limit */
	sfb_init(&f, &p);
	CHECK_INT(f.window, 20);
}

TEST(feedback_negative_reverse_hysteresis)
{
	struct sc_params p;
	params(&p, SFB_PER_N, SFB_PER_N, 0);
	struct sfb f;
	sfb_init(&f, &p);
	/* -1 at the START of 1/f failures: the first failure at window 5 drops it at once */
	sfb_failure(&f, &p);
	CHECK_INT(f.window, 4);
	/* then 1/(1/4) = 4 more failures before the next -1 (the first of the next sequence) */
	for (int i = 0; i < 3; i++) {
		sfb_failure(&f, &p);
		CHECK_INT(f.window, 4);
	}
	sfb_failure(&f, &p);
	CHECK_INT(f.window, 3);
	/* never below 1 without the dead rule */
	for (int i = 0; i < 100; i++)
		CHECK_INT(sfb_failure(&f, &p), 0);
	CHECK_INT(f.window, 1);
	/* a decrement resets the positive credit, an increment the negative one */
	params(&p, SFB_PER_SQRT_N, SFB_PER_SQRT_N, 0);
	sfb_init(&f, &p);
	sfb_success(&f, &p, 5);
	CHECK(f.success > 0);
	sfb_failure(&f, &p);
	CHECK(f.success == 0);
}

TEST(feedback_dead_after_failed_cohorts_and_probe)
{
	struct sc_params p;
	params(&p, SFB_FIXED, SFB_FIXED, 1);
	struct sfb f;
	sfb_init(&f, &p);
	/* fail_cohorts += 1/window: 1/5 + 1/4 + 1/3 + 1/2 >= 1 at the fourth failure */
	CHECK_INT(sfb_failure(&f, &p), 0);
	CHECK_INT(sfb_failure(&f, &p), 0);
	CHECK_INT(sfb_failure(&f, &p), 0);
	CHECK_INT(f.window, 2);
	CHECK_INT(sfb_failure(&f, &p), 1);
	CHECK_INT(f.window, 0);
	/* the probe: window 1, and one failure is a whole pseudo-cohort: dead again */
	sfb_probe(&f);
	CHECK_INT(f.window, 1);
	CHECK_INT(sfb_failure(&f, &p), 1);
	CHECK_INT(f.window, 0);
	/* a probe that gets through reopens it at the initial concurrency */
	sfb_probe(&f);
	sfb_success(&f, &p, 1);
	CHECK_INT(f.window, 5);
	CHECK_INT(f.probing, 0);
	/* a success in between starts the count of failed cohorts again */
	sfb_failure(&f, &p);
	sfb_success(&f, &p, 4);
	CHECK(f.fail_cohorts == 0);
	/* cohort limit 0: never dead */
	p.cohort_limit = 0;
	sfb_init(&f, &p);
	for (int i = 0; i < 100; i++)
		CHECK_INT(sfb_failure(&f, &p), 0);
	CHECK_INT(f.window, 1);
	/* with initial concurrency 1, the first failure is the failed pseudo-cohort */
	p.cohort_limit = 1;
	p.init_conc = 1;
	sfb_init(&f, &p);
	CHECK_INT(sfb_failure(&f, &p), 1);
}
