/* Unit tests of the preemptive job order (lib/sched_preempt.c, seed 004 "How the preemption
 * works", issue 14 point 4): the seed's example delivery sequences replayed with the parameters
 * each assumes, the choice among candidates (age per entry), blockers skipped, the nested
 * preemption stack of the seed's job-list picture, and the k/(k-1) inflation bound. */
#include "sched_int.h"
#include "unit.h"

#define NJ 16

/* A transport's jobs: job n (1-based) has size[n] entries and arrives at enq[n]; blocked[n]
 * makes it a blocker. */
struct world {
	struct spr_list l;
	struct spr_job *pj[NJ + 1];
	int blocked[NJ + 1];
	int key[NJ + 1];
};

static int can(void *ctx, struct spr_job *j)
{
	struct world *w = ctx;
	return j->ready > 0 && !w->blocked[*(const int *)j->key];
}

static void setup(struct world *w, int cost, int discount, int loan, int min_slots)
{
	memset(w, 0, sizeof *w);
	w->l.p = (struct spr_params){cost, discount, loan, min_slots};
}

static void add(struct world *w, int n, int entries, long long enq)
{
	w->key[n] = n;
	for (int i = 0; i < entries; i++)
		w->pj[n] = spr_add(&w->l, &w->key[n], enq);
}

/* Picks up to max entries at time now; the job numbers in out ("1121..."). Returns the count. */
static int run(struct world *w, long long now, int max, char *out)
{
	int n = 0;
	for (; n < max; n++) {
		struct spr_job *j = spr_pick(&w->l, now, can, w);
		if (!j)
			break;
		int k = *(const int *)j->key;
		out[n] = (char)(k < 10 ? '0' + k : 'a' + k - 10);
		spr_selected(&w->l, j);
	}
	out[n] = 0;
	return n;
}

/* The seed's example sequences, each with the parameters it assumes. Jobs arrive at time 0 in
 * the order listed; sizes[i] is job i+1's entry count. */
static const struct {
	const char *name;
	int cost, discount, loan, min_slots;
	int sizes[6];
	const char *seq;
} seed_sequences[] = {
	/* "Say we have ten-recipient mail followed by two two-recipient mails ... (assuming slot
	 * cost 2)": waiting for all the slots (discount 100 %, no loan) */
	{"ten and two twos, all slots", 2, 100, 0, 3, {10, 2, 2}, "11112211113311"},
	/* the same with "only 50% of the necessary slots" */
	{"ten and two twos, half the slots", 2, 50, 0, 3, {10, 2, 2}, "11221111331111"},
	/* "one four-recipient mail followed by four one recipients mail ... 12131415": every other
	 * slot free, k = 1 (the scheduler itself turns preemption off below 2, as Postfix does,
	 * because the inflation bound k/(k-1) is then infinite; spr_next checks it) */
	{"every other slot", 1, 100, 0, 1, {4, 1, 1, 1, 1}, "12131415"},
};

TEST(preempt_seed_sequences)
{
	for (size_t i = 0; i < sizeof seed_sequences / sizeof *seed_sequences; i++) {
		struct world w;
		char seq[64];
		unit_case(seed_sequences[i].name);
		setup(&w, seed_sequences[i].cost, seed_sequences[i].discount, seed_sequences[i].loan,
		      seed_sequences[i].min_slots);
		for (int n = 0; n < 6 && seed_sequences[i].sizes[n]; n++)
			add(&w, n + 1, seed_sequences[i].sizes[n], 0);
		run(&w, 0, 60, seq);
		CHECK_STR(seq, seed_sequences[i].seq);
		CHECK(w.l.head == NULL); /* every job done and freed */
	}
	unit_case(NULL);
}

/* Postfix's defaults (cost 5, discount 50, loan 3, minimum 3): a one-recipient alert that
 * arrives while a 600-entry mailing is going out is the very next entry, and a 20-entry message
 * that arrives then waits until the mailing has earned 2 slots (10 entries) minus the loan. */
TEST(preempt_defaults_alert_goes_next)
{
	struct world w;
	char seq[700];
	setup(&w, 5, 50, 3, 3);
	add(&w, 1, 600, 0);
	CHECK_INT(run(&w, 1, 20, seq), 20);
	add(&w, 2, 1, 1);
	run(&w, 2, 1, seq);
	CHECK_STR(seq, "2");
	/* a small job and its blocker twin: with 2 blocked, 3 goes, then 2 once it is free */
	add(&w, 2, 1, 3);
	add(&w, 3, 1, 3);
	w.blocked[2] = 1;
	run(&w, 4, 2, seq);
	CHECK_STR(seq, "31");
	w.blocked[2] = 0;
	run(&w, 5, 1, seq);
	CHECK_STR(seq, "2");
	spr_clear(&w.l);
}

/* Until the current job has slots nothing preempts it, and a job too small to ever earn
 * minimum_delivery_slots is never preempted. */
TEST(preempt_needs_slots_and_a_big_enough_job)
{
	struct world w;
	char seq[64];
	setup(&w, 5, 50, 3, 3);
	add(&w, 1, 14, 0); /* 14 < 3 x 5: never preempted */
	add(&w, 2, 1, 0);
	run(&w, 0, 64, seq);
	CHECK_STR(seq, "111111111111112");
	spr_clear(&w.l);
	setup(&w, 5, 50, 3, 3);
	add(&w, 1, 15, 0);
	add(&w, 2, 1, 0);
	run(&w, 0, 64, seq);
	CHECK_STR(seq, "1211111111111111"); /* one entry first: slots_available must be > 0 */
}

/* The candidate with the highest age per entry wins: an older two-entry job (age 100/2) beats
 * a younger one-entry job (age 10/1); with ages equal per entry the one-entry job does. */
TEST(preempt_candidate_by_age_per_entry)
{
	struct world w;
	char seq[64];
	setup(&w, 2, 100, 0, 1);
	add(&w, 1, 40, 0);
	add(&w, 2, 2, 0);    /* at now=99: (99+1)/2 = 50 */
	add(&w, 3, 1, 90);   /* (99-90+1)/1 = 10 */
	run(&w, 99, 9, seq);
	/* 2 is chosen, and goes once 1 has its 2 slots x cost 2; 3 then needs 1 slot */
	CHECK_STR(seq, "111122113");
	spr_clear(&w.l);
	setup(&w, 2, 100, 0, 1);
	add(&w, 1, 40, 0);
	add(&w, 2, 2, 0);    /* 100/2 = 50 */
	add(&w, 3, 1, 50);   /* 50/1 = 50: not better, the older stays */
	add(&w, 4, 1, 40);   /* 60/1 = 60: best; it came before 3 in enqueue order */
	run(&w, 99, 4, seq);
	CHECK_STR(seq, "1141");
	CHECK(w.l.head && *(const int *)w.l.head->key == 1);
	CHECK(w.l.head->next && *(const int *)w.l.head->next->key == 2); /* time order kept */
	spr_clear(&w.l);
}

/* A candidate must fit in the slots the current job can still earn: a 30-entry job never
 * preempts a 40-entry one at cost 2 (at most 20 slots); it waits its turn. */
TEST(preempt_candidate_must_fit)
{
	struct world w;
	char seq[128];
	setup(&w, 2, 100, 0, 1);
	add(&w, 1, 40, 0);
	add(&w, 2, 30, 0);
	CHECK_INT(run(&w, 0, 128, seq), 70);
	for (int i = 0; i < 70; i++)
		CHECK(seq[i] == (i < 40 ? '1' : '2'));
}

/* The seed's picture: "job 1 was preempted by job 4 and then job 4 was preempted by job 7. After
 * job 7 is completed, remaining entries of job 4 are selected, and once they are all selected,
 * job 1 continues." While 7 goes out the list reads 7 4 1 2 3 5 6 8 (the jobs of 60 entries never
 * fit in what 1 or 4 can earn at cost 2). */
static void order(struct world *w, char *out)
{
	int n = 0;
	for (struct spr_job *j = w->l.head; j; j = j->next)
		out[n++] = (char)('0' + *(const int *)j->key);
	out[n] = 0;
}

TEST(preempt_nested_stack_of_the_seed_picture)
{
	struct world w;
	char seq[256], list[NJ + 1];
	setup(&w, 2, 100, 0, 1);
	add(&w, 1, 100, 0);
	add(&w, 2, 60, 1);
	add(&w, 3, 60, 2);
	CHECK_INT(run(&w, 3, 20, seq), 20); /* 1 earns 10 slots */
	add(&w, 4, 10, 3);
	add(&w, 5, 60, 4);
	add(&w, 6, 60, 5);
	CHECK_INT(run(&w, 6, 4, seq), 4);
	CHECK_STR(seq, "4444"); /* 4 needs 10 slots: 1 has them */
	add(&w, 7, 1, 7);
	add(&w, 8, 60, 8);
	struct spr_job *j = spr_pick(&w.l, 8, can, &w); /* 4 has earned 4 slots: 7 needs 1 */
	CHECK(j && *(const int *)j->key == 7);
	CHECK_INT(j->level, 2);
	order(&w, list);
	CHECK_STR(list, "74123568");
	spr_selected(&w.l, j);
	CHECK_INT(run(&w, 9, 7, seq), 7);
	CHECK_STR(seq, "4444441"); /* 4 finishes, then 1 continues */
	order(&w, list);
	CHECK_STR(list, "123568");
	spr_clear(&w.l);
}

/* k/(k-1): a 1000-entry job with a one-entry job arriving every entry, and a 10-entry job every
 * 7 entries, is stretched by at most k/(k-1) for cost k = 2..6, however the preemptions nest. */
TEST(preempt_inflation_bound)
{
	for (int k = 2; k <= 6; k++) {
		struct world w;
		setup(&w, k, 100, 0, 1);
		static int keys[3000];
		add(&w, 1, 1000, 0);
		long long t = 0, last1 = 0;
		int small = 0, mailing_left = 1000;
		while (mailing_left > 0 && t < 100000) {
			t++;
			if (small < 2900) {
				keys[small] = 2;
				for (int i = 0; i < (t % 7 ? 1 : 10); i++)
					spr_add(&w.l, &keys[small], t);
				small++;
			}
			struct spr_job *j = spr_pick(&w.l, t, can, &w);
			CHECK(j != NULL);
			if (!j)
				break;
			if (j->key == &w.key[1]) {
				mailing_left--;
				last1 = t;
			}
			spr_selected(&w.l, j);
		}
		CHECK_INT(mailing_left, 0);
		/* slots from its first entry to its last: at most 1000 x k/(k-1), rounded up */
		CHECK(last1 * (k - 1) <= 1000LL * k + k);
		CHECK(last1 > 1000); /* and the small jobs did preempt it */
		spr_clear(&w.l);
	}
}
