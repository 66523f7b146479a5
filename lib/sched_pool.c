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
 *   - The seed's bounds hold: at most B = max(minimum x active + sum(recipient_limit +
 *     extra_recipient_limit), limit) recipients in memory, and of one ring at most
 *     max(minimum x active + its two limits, limit). A message's own minimum is always there to
 *     read (so every message can go on, as Postfix reads that many "no matter what"); what any
 *     message holds beyond its minimum is kept, over all messages, within B - minimum x active
 *     (and a ring's within its bound's share), so with at most `active` messages in memory the
 *     total is within B. The unit test drives it at random and checks both. */
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
	long own = max_l(g->minimum - m->n, 0);
	/* the first batch: up to the limit less what the others hold (asked again as it grows) */
	long want = (m->first ? max_l(g->minimum, g->limit - g->incore + m->n) : g->minimum + m->slots + m->xslots) - m->n;
	/* above its own minimum, a message reads only while the recipients beyond every message's
	 * minimum stay within B - minimum x active (and the ring's within its bound's share) */
	long cap = srp_bound(g, NULL) - g->minimum * g->active - g->pooled;
	if (r && cap > srp_bound(g, r) - g->minimum * g->active - r->pooled)
		cap = srp_bound(g, r) - g->minimum * g->active - r->pooled;
	if (want > own + cap)
		want = own + max_l(cap, 0);
	return max_l(want, 0);
}

/* Recipients of m beyond its own minimum, when it holds n. */
static long beyond(const struct srp_global *g, long n)
{
	return max_l(n - g->minimum, 0);
}

void srp_add(struct srp_global *g, struct srp_ring *r, struct srp_msg *m, int k)
{
	long d = beyond(g, m->n + k) - beyond(g, m->n);
	m->n += k;
	g->incore += k;
	g->pooled += d;
	if (r) {
		r->incore += k;
		r->pooled += d;
	}
	if (g->incore > g->peak)
		g->peak = g->incore;
}

void srp_drop(struct srp_global *g, struct srp_ring *r, struct srp_msg *m, int k, int all_read)
{
	srp_add(g, r, m, -k); /* the counts as srp_add (its peak only ever goes up) */
	if (!r)
		return;
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
