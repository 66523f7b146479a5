/* Threads (recipients grouped by channel/host), rings (threads whose scheduler.conf clause is the
 * same) and channels: the units the limits maxthr, maxring and maxchannel count. A thread holds
 * its resolved clause parameters and a FIFO of ready jobs; a ring holds its threads that have
 * ready jobs, served round robin so that one busy host does not starve the others. */
#include "sched_int.h"
#include "log.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static struct thread **hash_thr(struct sched *s, const char *chan, const char *host,
                                                           int is_error)
{
	return &s->thash[sched_fnv(sched_fnv(sched_fnv(SCHED_FNV_INIT + (unsigned)is_error, chan), "/"), host) & s->tmask];
}

/* The ring of clause (made with its recipient pools from p, the clause's resolved keys). */
static struct ring *ring_get(struct sched *s, int clause, const struct sc_params *p)
{
	if (clause < 0)
		return NULL;
	for (struct ring *r = s->rings; r; r = r->next)
		if (r->clause == clause && !r->stale)
			return r;
	struct ring *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	srp_ring_init(&s->rp, &r->rp, p->rcpt_limit, p->extra_rcpt_limit);
	r->refill_limit = p->refill_limit;
	r->refill_delay = p->refill_delay;
	r->clause = clause;
	r->next = s->rings;
	s->rings = r;
	return r;
}

static struct chan *chan_get(struct sched *s, const char *name)
{
	for (struct chan *c = s->chans; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	struct chan *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	str_lcpy(c->name, name, sizeof c->name);
	c->next = s->chans;
	s->chans = c;
	return c;
}

struct thread *st_get(struct sched *s, const char *channel, const char *host, int is_error)
{
	struct thread **b = hash_thr(s, channel, host, is_error);
	for (struct thread *t = *b; t; t = t->hnext)
		if (t->is_error == is_error && !strcmp(t->name, channel) && !strcmp(t->host, host)) {
			t->refs++;
			return t;
		}
	size_t cl = strlen(channel), hl = strlen(host);
	struct thread *t = calloc(1, sizeof *t + cl + hl + 2);
	struct chan *c = chan_get(s, channel);
	if (!t || !c) {
		free(t);
		log_msg(LOG_ERR, NULL, "out of memory for thread %s/%s", channel, host);
		return NULL;
	}
	t->name = (char *)(t + 1);
	memcpy(t->name, channel, cl + 1);
	t->host = t->name + cl + 1;
	memcpy(t->host, host, hl + 1);
	t->is_error = is_error;
	t->chan = c;
	t->xc = sx_class(s, channel, host);
	int clause = schedconf_resolve(&s->conf, channel, host, &t->p);
	sfb_init(&t->fb, &t->p);
	t->ring = ring_get(s, clause, &t->p);
	if (!t->ring && clause >= 0) {
		/* out of memory, not "no clause": a thread kept without its ring would defer its
		 * mail as unmatched for as long as it lives */
		free(t);
		log_msg(LOG_ERR, NULL, "out of memory for thread %s/%s", channel, host);
		return NULL;
	}
	if (!t->ring)
		log_msg(LOG_WARNING, NULL, "%s/%s: no scheduler.conf clause with a command matches", channel, host);
	t->refs = 1;
	t->hnext = *b;
	*b = t;
	s->nthreads++;
	return t;
}

void st_put(struct sched *s, struct thread *t)
{
	if (--t->refs > 0 || t->running || t->nready || t->on_ring)
		return;
	struct thread **pp = hash_thr(s, t->name, t->host, t->is_error);
	while (*pp != t) /* (every thread is on its chain from st_get to here) */
		pp = &(*pp)->hnext;
	*pp = t->hnext;
	s->nthreads--;
	free(t);
}

/* The ring's preemption job of m, one entry more (issue 14 point 4, lib/sched_preempt.c). */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static struct spr_job *preempt_add(struct thread *t, struct qmsg *m)
{
	if (!ENABLE_PREEMPT || !t->ring)
		return NULL;
	t->ring->pl.p = t->p.slots;
	return spr_add(&t->ring->pl, m, m->arrival);
}

void st_ring_append(struct thread *t)
{
	if (!t->ring)
		return;
	t->on_ring = 1;
	t->rnext = NULL;
	if (t->ring->tail)
		t->ring->tail->rnext = t;
	else
		t->ring->head = t;
	t->ring->tail = t;
}

int st_enqueue(struct thread *t, struct qmsg *m)
{
	struct job *j = malloc(sizeof *j);
	if (!j)
		return -1;
	j->m = m;
	j->pj = preempt_add(t, m);
	m->jobs++;
	st_push_back(t, j);
	if (!t->on_ring)
		st_ring_append(t);
	return 0;
}

int st_join(struct thread *t, struct qmsg *m)
{
	return t->tail && t->tail->m == m ? 0 : st_enqueue(t, m);
}

void st_reresolve(struct sched *s)
{
	for (struct ring *r = s->rings; r; r = r->next) {
		r->stale = 1;
		r->head = r->tail = NULL;
		spr_clear(&r->pl); /* the jobs are made again in the new rings below */
	}
	for (unsigned h = 0; h <= s->tmask; h++)
		for (struct thread *t = s->thash[h]; t; t = t->hnext) {
			t->ring = ring_get(s, schedconf_resolve(&s->conf, t->is_error ? "error" : t->name, t->host, &t->p), &t->p);
			if (t->fb.window > t->p.conc_limit)
				t->fb.window = t->p.conc_limit; /* a lower limit in the new configuration */
			t->on_ring = 0;
			for (struct job *j = t->head; j; j = j->next)
				j->pj = preempt_add(t, j->m);
			if (t->nready)
				st_ring_append(t);
		}
}

void st_block(struct sched *s, struct thread *t, long long until)
{
	t->blocked_until = until;
	/* its ready jobs go back to their messages, which then wait (on disk, if memory is short) */
	while (t->head) {
		struct job *j = t->head;
		t->head = j->next;
		struct qmsg *m = j->m;
		for (unsigned i = 0; i < m->nrcpt; i++)
			if (st_has(&m->r[i], t) && (m->r[i].flags & RF_QUEUED))
				m->r[i].flags &= ~(RF_QUEUED | RF_DELAYQ);
		m->jobs--;
		sched_touch(s, m);
		if (j->pj)
			spr_unready(&t->ring->pl, j->pj);
		free(j);
	}
	t->tail = NULL;
	t->nready = 0;
}

struct job *st_pop(struct thread *t)
{
	struct job *j = t->head;
	if (j) {
		t->head = j->next;
		if (!t->head)
			t->tail = NULL;
		t->nready--;
	}
	return j;
}

void st_push_back(struct thread *t, struct job *j)
{
	j->next = NULL;
	if (t->tail)
		t->tail->next = j;
	else
		t->head = j;
	t->tail = j;
	t->nready++;
}

void st_free_all(struct sched *s)
{
	if (s->thash)
		for (unsigned h = 0; h <= s->tmask; h++)
			while (s->thash[h]) {
				struct thread *t = s->thash[h];
				s->thash[h] = t->hnext;
				while (t->head) {
					struct job *j = t->head;
					t->head = j->next;
					free(j);
				}
				free(t);
			}
	while (s->rings) {
		struct ring *r = s->rings;
		s->rings = r->next;
		spr_clear(&r->pl);
		free(r);
	}
	while (s->chans) {
		struct chan *c = s->chans;
		s->chans = c->next;
		free(c);
	}
}

void sched_touch(struct sched *s, struct qmsg *m)
{
	if (!m->in_turn) {
		m->in_turn = 1;
		m->dnext = s->turn;
		s->turn = m;
	}
}
