/* Unit tests of the recipient pools (lib/sched_pool.c, seed 004's memory management, issue 14
 * point 5): the first batch, the owner's slots, a preemptor's half of both pools, slots going back
 * when a message is read to its end, and the seed's bound formulas over a long random run of
 * batches and deliveries on two rings, the scheduler's own order of calls. */
#include "sched_int.h"
#include "unit.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

static void global(struct srp_global *g, long limit, long minimum, long active)
{
	memset(g, 0, sizeof *g);
	g->limit = limit;
	g->minimum = minimum;
	g->active = active;
}

TEST(pool_first_batch_and_owner)
{
	struct srp_global g;
	struct srp_ring r = {0};
	struct srp_msg a = {0}, b = {0};
	global(&g, 20000, 10, 100);
	srp_ring_init(&g, &r, 20000, 1000);
	CHECK_INT(srp_bound(&g, NULL), 10 * 100 + 21000); /* max(M x A + R + E, L) */
	CHECK_INT(srp_bound(&g, &r), 22000);
	/* the first batch fills the global pool: up to the limit, at least the minimum */
	a.first = b.first = 1;
	CHECK_INT(srp_room(&g, NULL, &a), 20000);
	srp_add(&g, &r, &a, 15000);
	CHECK_INT(srp_room(&g, NULL, &a), 5000); /* asked again as it grows */
	a.first = 0;
	CHECK_INT(srp_room(&g, NULL, &b), 5000);
	srp_add(&g, &r, &b, 5000);
	b.first = 0;
	struct srp_msg c = {0};
	c.first = 1;
	CHECK_INT(srp_room(&g, NULL, &c), 10); /* the pool is full: the minimum, no matter what */
	/* later batches: the minimum plus the slots held; the owner takes every unused slot */
	CHECK_INT(srp_room(&g, &r, &a), 0);
	srp_grant(&r, &a, 1, 0);
	CHECK_INT(a.slots, 20000);
	CHECK_INT(r.unused, 0);
	/* 20000 + 10 - 15000 by the pools, but beyond the minimum the ring holds 14990 + 4990 of
	 * its bound's share 22000 - 10 x 100 */
	CHECK_INT(srp_room(&g, &r, &a), 22000 - 1000 - 19980);
	/* a message that preempted takes half of what is left of both pools, once */
	srp_grant(&r, &b, 0, 1);
	CHECK_INT(b.slots, 0);
	CHECK_INT(b.xslots, 500);
	CHECK_INT(r.xunused, 500);
	srp_grant(&r, &b, 0, 1);
	CHECK_INT(b.xslots, 500);
	/* read to its end, a message keeps no more slots than recipients in memory, extra first */
	srp_drop(&g, &r, &b, 4800, 1);
	CHECK_INT(b.n, 200);
	CHECK_INT(b.xslots, 200);
	CHECK_INT(r.xunused, 800);
	srp_drop(&g, &r, &a, 15000, 1);
	CHECK_INT(a.slots, 0);
	CHECK_INT(r.unused, 20000);
	CHECK_INT(g.incore, 200);
	CHECK_INT(g.peak, 20000);
}

/* A message of the random run: its ring and how many of its recipients are still on disk. */
struct rmsg {
	struct srp_msg p;
	int ring;
	int ondisk;
	unsigned age;
};

static unsigned rnd(unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	return (*x >> 16) & 0x7fff;
}

/* A run of batches, deliveries and messages coming and going over two rings, limits as given;
 * returns the most recipients in memory, and checks the pools' slot conservation on the way. */
static long random_run(long limit, long minimum, int active, int rl, int xl, unsigned seed, long most_ring[2],
                       int *ok)
{
	struct srp_global g;
	struct srp_ring rings[2] = {{0}, {0}};
	struct rmsg m[64];
	unsigned age = 0;
	global(&g, limit, minimum, active);
	srp_ring_init(&g, &rings[0], rl, xl);
	srp_ring_init(&g, &rings[1], rl / 2, xl);
	memset(m, 0, sizeof m);
	for (int i = 0; i < active; i++) {
		m[i].p.first = 1;
		m[i].ring = (int)(rnd(&seed) % 2);
		m[i].ondisk = 1 + (int)(rnd(&seed) % 30000);
		m[i].age = age++;
	}
	most_ring[0] = most_ring[1] = 0;
	for (int step = 0; step < 200000 && *ok; step++) {
		struct rmsg *x = &m[rnd(&seed) % (unsigned)active];
		struct srp_ring *r = &rings[x->ring];
		if (x->ondisk && rnd(&seed) % 2) {
			/* a batch, as take() does: the grant, the room, the reading */
			if (!x->p.first) {
				int owner = 1;
				for (int i = 0; i < active; i++)
					if (&m[i] != x && m[i].ring == x->ring && m[i].ondisk && m[i].age < x->age)
						owner = 0;
				srp_grant(r, &x->p, owner, rnd(&seed) % 8 == 0);
			}
			/* one at a time, as take() reads them; a batch of k stops at the room */
			int k = 1 + (int)(rnd(&seed) % 5000);
			while (k-- && x->ondisk && srp_room(&g, r, &x->p) > 0) {
				x->ondisk--;
				srp_add(&g, r, &x->p, 1);
			}
			x->p.first = 0;
		} else if (x->p.n) {
			/* some finish (delivered, or a window moving on) */
			int k = 1 + (int)(rnd(&seed) % (unsigned)x->p.n);
			srp_drop(&g, r, &x->p, k, !x->ondisk);
		} else if (!x->ondisk) {
			/* done: it leaves memory, a new message takes its place */
			srp_drop(&g, r, &x->p, 0, 1);
			CHECK_INT(x->p.slots + x->p.xslots, 0);
			memset(&x->p, 0, sizeof x->p);
			x->p.first = 1;
			x->ring = (int)(rnd(&seed) % 2);
			x->ondisk = 1 + (int)(rnd(&seed) % 30000);
			x->age = age++;
		}
		for (int k = 0; k < 2; k++) {
			long slots = rings[k].unused, xslots = rings[k].xunused;
			for (int i = 0; i < active; i++)
				if (m[i].ring == k) {
					slots += m[i].p.slots;
					xslots += m[i].p.xslots;
				}
			if (slots != rings[k].limit || xslots != rings[k].xlimit || rings[k].unused < 0 || rings[k].xunused < 0)
				*ok = 0;
			if (rings[k].incore > most_ring[k])
				most_ring[k] = rings[k].incore;
		}
	}
	return g.peak;
}

TEST(pool_bound_formulas_hold)
{
	static const struct {
		long limit, minimum;
		int active, rl, xl;
	} cases[] = {
		{20000, 10, 20, 20000, 1000}, /* Postfix's defaults, few messages */
		{20000, 10, 40, 20000, 1000},
		{5000, 10, 5, 5000, 500},     /* test_sched_memory.py's */
		{1000, 5, 30, 200, 50},       /* the pools far below the limit */
		{300, 20, 10, 2000, 100},     /* the pools far above it */
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		char name[32];
		snprintf(name, sizeof name, "bound case %zu", i);
		unit_case(name);
		long most_ring[2];
		int ok = 1;
		long peak = random_run(cases[i].limit, cases[i].minimum, cases[i].active, cases[i].rl, cases[i].xl,
		                       (unsigned)i + 7, most_ring, &ok);
		CHECK(ok);
		long sum = (long)cases[i].rl + cases[i].xl + cases[i].rl / 2 + cases[i].xl;
		long b = cases[i].minimum * cases[i].active + sum;
		if (b < cases[i].limit)
			b = cases[i].limit;
		/* the seed's total: B */
		CHECK(peak <= b);
		/* per ring: max(M x A + R + E, L), ring 1 with half the recipient_limit */
		for (int k = 0; k < 2; k++) {
			long rb = cases[i].minimum * cases[i].active + (k ? cases[i].rl / 2 : cases[i].rl) + cases[i].xl;
			CHECK(most_ring[k] <= (rb > cases[i].limit ? rb : cases[i].limit));
		}
		CHECK(peak > cases[i].limit / 2); /* and the run did fill memory */
	}
}
