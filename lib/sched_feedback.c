/* Per-destination delivery concurrency with Postfix 2.5's feedback (seed 004, issue 14 points 2
 * and 3): a window that starts at the initial concurrency, grows by positive feedback g(N) per
 * delivery that had no connection or handshake failure and shrinks by negative feedback f(N) per
 * delivery that had one, with hysteresis (+1 at the END of 1/g successes, -1 at the START of 1/f
 * failures), no growth while the window is not used, the limit as a cap, and the "dead
 * destination" rule: after failed_cohort_limit failed pseudo-cohorts the window is 0 (suspended)
 * until one probe at the retry time. Pure: no clock, no I/O, so the simulator and the unit tests
 * drive the same code as the scheduler (docs/scheduler.md "Concurrency"). */
#include "sched_int.h"
#include <stdlib.h>
#include <string.h>

/* sqrt by Newton's method: deterministic, and no libm in the static build. */
static double root(double x)
{
	if (x <= 0)
		return 0;
	double r = x > 1 ? x / 2 : 1;
	for (int i = 0; i < 40; i++)
		r = (r + x / r) / 2;
	return r;
}

double sfb_amount(int style, double x, int window)
{
	double n = window > 0 ? window : 1;
	switch (style) {
	case SFB_PER_N: return x / n;
	case SFB_PER_SQRT_N: return x / root(n);
	default: return x;
	}
}

void sfb_init(struct sfb *f, const struct sc_params *p)
{
	memset(f, 0, sizeof *f);
	/* (init_conc and conc_limit are at least 1: the defaults, and scheduler.conf's minimum) */
	f->window = p->init_conc;
	if (f->window > p->conc_limit)
		f->window = p->conc_limit;
}

void sfb_success(struct sfb *f, const struct sc_params *p, int busy)
{
	f->fail_cohorts = 0;
	if (f->window <= 0 || f->probing) {
		/* the probe got through: back from the dead, at the initial concurrency (or what is
		 * busy already, as Postfix's qmgr_queue_unthrottle) */
		f->window = busy > p->init_conc ? busy : p->init_conc;
		f->probing = 0;
		f->success = f->failure = 0;
		return;
	}
	/* safety: no growth for a window that is not used (a destination with little mail would
	 * otherwise climb to its limit and overshoot when a burst comes) */
	if (f->window >= busy + p->init_conc)
		return;
	f->success += sfb_amount(p->pos_style, p->pos_x, f->window);
	while (f->success >= 1) {
		f->window++;
		f->failure = 0;
		f->success -= 1;
	}
	if (f->window > p->conc_limit)
		f->window = p->conc_limit;
}

int sfb_failure(struct sfb *f, const struct sc_params *p)
{
	if (f->window > 0) {
		f->fail_cohorts += 1.0 / f->window;
		if (p->cohort_limit > 0 && f->fail_cohorts >= p->cohort_limit) {
			f->window = 0;
			f->probing = 0;
			return 1;
		}
	}
	if (f->window > 0) {
		/* reversed hysteresis: the -1 comes at the start of 1/f failures */
		f->failure -= sfb_amount(p->neg_style, p->neg_x, f->window);
		while (f->failure < 0) {
			f->window--;
			f->failure += 1;
			f->success = 0;
		}
		if (f->window < 1)
			f->window = 1;
	}
	return 0;
}

void sfb_probe(struct sfb *f)
{
	f->window = 1;
	f->probing = 1;
	f->fail_cohorts = 0;
	f->success = f->failure = 0;
}

int sfb_negative(const char *enh)
{
	return !strcmp(enh, "4.4.1") || !strcmp(enh, "4.4.2");
}
