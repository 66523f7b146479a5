/* Postfix's preemptive scheduling (nqmgr, seed 004 "How the preemption works"; issue 14 point 4),
 * per ring. A ring's jobs (one per message) are listed by the time their message arrived; the
 * entries of the first job go out one by one, and each entry earns its job one "delivery slot"
 * per delivery_slot_cost entries. A job that needs no more slots than the current one can still
 * earn is a candidate to preempt it; the one waiting longest per entry (arrival age over its
 * entry count) is moved in front of the current job once the current job's slots, plus the loan,
 * cover the discounted part of what it needs, and the current job pays for all of it. So a
 * one-recipient alert slips past a 600-destination mailing, and the mailing takes at most
 * k/(k-1) times as long (k the cost) however deep the preemptions nest.
 *
 * Blockers (jobs none of whose destinations may take an agent now) are skipped and are no
 * candidates; unlike Postfix, which tags them and untags them when a destination frees up, we ask
 * the caller each time (can()), so a job is never left blocked by a stale tag.
 *
 * Pure: no clock, no I/O, no allocation beyond the jobs. The first half knows only spr_job (the
 * unit tests replay the seed's example sequences on it); spr_next, the glue, reads the scheduler's
 * messages and threads. docs/scheduler.md "Preemption". */
#include "sched_int.h"
#include <stdlib.h>

static void link_after(struct spr_list *l, struct spr_job *prev, struct spr_job *j)
{
	j->prev = prev;
	j->next = prev ? prev->next : l->head;
	if (j->next)
		j->next->prev = j;
	else
		l->tail = j;
	if (prev)
		prev->next = j;
	else
		l->head = j;
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static void unlink_job(struct spr_list *l, struct spr_job *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		l->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		l->tail = j->prev;
	j->prev = j->next = NULL;
}

struct spr_job *spr_add(struct spr_list *l, const void *key, long long enq)
{
	/* from the end: a message's entries arrive together, and new messages go last */
	for (struct spr_job *j = l->tail; j; j = j->prev)
		if (j->key == key && j->ready > 0) {
			j->ready++;
			return j;
		}
	struct spr_job *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	j->key = key;
	j->enq = enq;
	j->ready = 1;
	/* after the last job in time order (not a preemptor: those sit in front of the job they
	 * preempted, wherever it is) that is not newer */
	struct spr_job *prev = l->tail;
	while (prev && (prev->parent || prev->enq > enq))
		prev = prev->prev;
	link_after(l, prev, j);
	return j;
}

/* j leaves the stack of the job it preempted: that job gets back what j did not use (or pays
 * what it used beyond what it expected), and j's own preemptors become its parent's (none at
 * level 0: orphans). */
static void pop(struct spr_list *l, struct spr_job *j)
{
	struct spr_job *parent = j->parent;
	/* only the job j preempted itself, not one that adopted j: otherwise a job near its end
	 * would pay again for slots its parent already paid (Postfix's qmgr_job_pop) */
	if (parent && j->level == parent->level + 1)
		parent->slots_avail -= j->slots_used * l->p.cost;
	if (parent)
		parent->children--;
	j->parent = NULL;
	if (j->children)
		for (struct spr_job *c = l->head; c; c = c->next)
			if (c->parent == j) {
				c->parent = parent;
				if (parent)
					parent->children++;
			}
	j->children = 0;
	j->level = 0;
}

/* j is done for now: off its stack (its preemptors go to its parent, or become orphans that
 * keep their place in front) and off the list. */
static void retire(struct spr_list *l, struct spr_job *j)
{
	pop(l, j);
	unlink_job(l, j);
	free(j);
}

void spr_selected(struct spr_list *l, struct spr_job *j)
{
	j->selected++;
	j->slots_avail++;
	j->slots_used++;
	spr_unready(l, j);
}

void spr_unready(struct spr_list *l, struct spr_job *j)
{
	if (--j->ready <= 0)
		retire(l, j);
}

/* The best candidate to preempt cur: among the jobs after it that are nobody's stack parent and
 * can go out, need no more slots than cur can still earn, the highest age per entry. */
static struct spr_job *candidate(struct spr_list *l, struct spr_job *cur, long long now, spr_can_fn *can, void *ctx)
{
	int max_slots = (cur->ready + cur->slots_avail) / l->p.cost;
	struct spr_job *best = NULL;
	long long best_delay = 0, best_total = 1; /* the score delay/total, kept as a fraction */
	if (max_slots <= 0)
		return NULL;
	for (struct spr_job *j = cur->next; j; j = j->next) {
		if (j->children)
			continue;
		long long total = j->selected + j->ready, delay = now - j->enq + 1;
		if (j->ready <= max_slots && delay * best_total > best_delay * total && can(ctx, j)) {
			best = j;
			best_delay = delay;
			best_total = total;
		}
		/* the jobs behind in time order are younger: none can score better */
		if (delay * best_total <= best_delay && j->level == 0)
			break;
	}
	return best;
}

static struct spr_job *preempt(struct spr_list *l, struct spr_job *cur, long long now, spr_can_fn *can, void *ctx)
{
	const struct spr_params *p = &l->p;
	/* no slots yet (the count goes below 0 after a loan), or a job too small to ever earn the
	 * minimum: not worth the search */
	if (cur->slots_avail <= 0 || cur->selected + cur->ready < p->min_slots * p->cost)
		return cur;
	struct spr_job *j = candidate(l, cur, now, can, ctx);
	if (!j)
		return cur;
	/* the loan lets it go earlier, never cheaper: the whole price is charged below */
	int expected = j->ready;
	if ((long long)(cur->slots_avail / p->cost + p->loan) * 100 < (long long)expected * p->discount)
		return cur;
	if (j->level > 0)
		pop(l, j);
	unlink_job(l, j);
	link_after(l, cur->prev, j);
	j->parent = cur;
	cur->children++;
	j->level = cur->level + 1;
	cur->slots_avail -= expected * p->cost;
	j->slots_used = -expected; /* counts up to the difference between used and expected */
	return j;
}

struct spr_job *spr_pick(struct spr_list *l, long long now, spr_can_fn *can, void *ctx)
{
	struct spr_job *cur = l->head;
	while (cur && !can(ctx, cur))
		cur = cur->next;
	if (!cur)
		return NULL;
	/* the cost is at least 1 here (spr_pick's contract). A cost of 1 lets every slot be given
	 * away (the inflation bound k/(k-1) is infinite): Postfix turns preemption off below 2, and
	 * so does spr_next; the unit tests use 1 to replay the seed's "every other slot" sequence */
	return preempt(l, cur, now, can, ctx);
}

void spr_clear(struct spr_list *l)
{
	while (l->head) {
		struct spr_job *j = l->head;
		l->head = j->next;
		free(j);
	}
	l->tail = NULL;
}

/* ---- the glue: the scheduler's messages and threads ---- */

struct glue {
	struct ring *r;
	int (*ok)(void *ctx, struct thread *thr);
	void *ctx;
};

/* The thread of ring g->r that has a ready job of j's message and that the agent may serve,
 * searched round robin over the message's recipients. */
static struct thread *find(struct glue *g, struct spr_job *j, int move)
{
	const struct qmsg *m = j->key;
	for (unsigned k = 0; k < m->nrcpt; k++) {
		unsigned i = (j->rr + k) % m->nrcpt;
		const struct qrcpt *q = &m->r[i];
		struct thread *thr = q->thr;
		/* a delay notice's recipient is the error thread's, which the fallback finds */
		if (!(q->flags & RF_QUEUED) || (q->flags & RF_DELAYQ) || !thr || thr->ring != g->r || !thr->nready ||
		    !g->ok(g->ctx, thr))
			continue;
		if (move)
			j->rr = i + 1;
		return thr;
	}
	return NULL;
}

static int can(void *ctx, struct spr_job *j)
{
	return find(ctx, j, 0) != NULL;
}

struct thread *spr_next(struct sched *s, struct ring *r, int (*ok)(void *ctx, struct thread *thr), void *ctx)
{
	struct glue g = {r, ok, ctx};
	if (r->pl.p.cost < 2)
		return NULL; /* off: the ring's round robin decides */
	struct spr_job *j = spr_pick(&r->pl, s->now, can, &g);
	struct thread *thr = j ? find(&g, j, 1) : NULL;
	if (!thr)
		return NULL;
	/* the message's job first in the thread's FIFO, where the agent's feed takes it */
	for (struct job *prev = thr->head, *mj; prev && (mj = prev->next); prev = mj)
		if (mj->m == j->key) {
			prev->next = mj->next;
			if (thr->tail == mj)
				thr->tail = prev;
			mj->next = thr->head;
			thr->head = mj;
			break;
		}
	return thr;
}
