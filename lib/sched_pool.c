/* How many recipients of a message may be in memory (seed 004's "memory management", issue 14
 * point 5): Postfix's recipient pools in our own arithmetic. Pure: counters only, so the unit
 * tests drive the same code as the scheduler (docs/scheduler.md "Recipients in memory").
 *
 *   - A message's first batch may fill the global pool: up to message_recipient_limit minus
 *     what is in memory, and at least message_recipient_minimum (its own floor).
 *   - Later batches are paid by its ring (Postfix's transport): the minimum plus the slots it
 *     holds. The oldest message of the ring that still has recipients on disk (the owner) gets
 *     every unused slot of recipient_limit; a message that is served before the owner (it
 *     preempted) takes half of what is left of both pools, the extra one being
 *     extra_recipient_limit. A message with every recipient read keeps no more slots than it
 *     has recipients in memory: the rest, and one slot per recipient that leaves, go back.
 *   - The pools never take the total above the seed's bound
 *     B = max(minimum x active + sum(recipient_limit + extra_recipient_limit), limit), nor a
 *     ring's count above max(minimum x active + its two limits, limit); only a message's own
 *     minimum may, so that every message can always go on. So the total is at most
 *     max(B, limit + minimum x (active - 1)), which is B whenever the rings' limits add up to at
 *     least limit - minimum (Postfix's defaults: 21000 >= 19990); the unit test checks both. */
#include "sched_int.h"

static long max_l(long a, long b)
{
	return a > b ? a : b;
}

long srp_bound(const struct srp_global *g, const struct srp_ring *r)
{
	long pools = r ? (long)r->limit + r->xlimit : g->sum_re;
	return max_l(g->minimum * g->active + pools, g->limit);
}

void srp_ring_init(struct srp_global *g, struct srp_ring *r, int limit, int xlimit)
{
	r->unused = r->limit = limit;
	r->xunused = r->xlimit = xlimit;
	g->sum_re += (long)limit + xlimit;
}

void srp_grant(struct srp_ring *r, struct srp_msg *m, int owner, int preempting)
{
	if (owner) {
		m->slots += r->unused;
		r->unused = 0;
	} else if (preempting && !m->xslots) {
		int h = r->unused / 2, x = (r->xunused + 1) / 2;
		m->slots += h;
		r->unused -= h;
		m->xslots += x;
		r->xunused -= x;
	}
}

long srp_room(const struct srp_global *g, const struct srp_ring *r, const struct srp_msg *m)
{
	long floor = g->minimum - m->n;
	long room = m->first ? max_l(g->minimum, g->limit - g->incore) - m->n : g->minimum + m->slots + m->xslots - m->n;
	/* the bounds cap what the pools give above the floor, never the floor: every message can
	 * always go on with its minimum (Postfix reads that many "no matter what") */
	long cap = srp_bound(g, NULL) - g->incore;
	if (r && cap > srp_bound(g, r) - r->incore)
		cap = srp_bound(g, r) - r->incore;
	if (room > cap)
		room = max_l(cap, floor);
	return room > 0 ? room : 0;
}

void srp_add(struct srp_global *g, struct srp_ring *r, struct srp_msg *m, int k)
{
	m->n += k;
	g->incore += k;
	if (r)
		r->incore += k;
	if (g->incore > g->peak)
		g->peak = g->incore;
}

void srp_drop(struct srp_global *g, struct srp_ring *r, struct srp_msg *m, int k, int all_read)
{
	m->n -= k;
	g->incore -= k;
	if (!r)
		return;
	r->incore -= k;
	/* the slots above what it still holds in memory go back, the extra ones first */
	int excess = all_read ? m->slots + m->xslots - m->n : 0;
	int x = excess < m->xslots ? excess : m->xslots;
	if (x > 0) {
		m->xslots -= x;
		r->xunused += x;
		excess -= x;
	}
	if (excess > 0) {
		m->slots -= excess;
		r->unused += excess;
	}
}
