/* Host classes with session limits: Sendmail's XLA (seed 002) in the scheduler. A class is a
 * PARAMhostclass line of scheduler.conf (lib/schedconf.c parses and matches them); this file
 * decides which class a thread's sessions count in and keeps the counts.
 *
 * A session is a transport agent: from its first job in a class until it takes a job of another
 * class or ends, because an smtp agent keeps its connection open between jobs (idle included).
 * Over the limit a thread simply gets no agent: its jobs stay queued, nothing is deferred or
 * failed. With a smarthost every smtp session goes to the relay, so the relay's name picks the
 * class, not the recipient's domain. docs/scheduler.md "Host classes". */
#include "sched_int.h"
#include <string.h>

int sx_class(const struct sched *s, const char *channel, const char *host)
{
	/* only smtp opens network sessions; local, error and hold threads are no host's */
	if (!s->conf.nhc || strcmp(channel, "smtp"))
		return -1;
	return schedconf_hostclass(&s->conf, s->o.relay && *s->o.relay ? s->o.relay : host);
}

int sx_room(const struct sched *s, int from, int to)
{
	return to < 0 || from == to || s->conf.hc[to].used < s->conf.hc[to].limit;
}

void sx_move(struct sched *s, int *cls, int to)
{
	if (*cls == to)
		return;
	if (*cls >= 0)
		s->conf.hc[*cls].used--;
	if (to >= 0)
		s->conf.hc[to].used++;
	*cls = to;
}

void sx_reload(struct sched *s, const struct schedconf *old)
{
	for (unsigned h = 0; h <= s->tmask; h++)
		for (struct thread *t = s->thash[h]; t; t = t->hnext)
			t->xc = sx_class(s, t->name, t->host);
	/* an agent keeps its session to the host it talks to: it counts in the new class of the
	 * same pattern, or in none when that class is gone */
	for (struct sta *t = s->tas; t; t = t->next) {
		int was = t->xc;
		t->xc = -1;
		for (size_t i = 0; was >= 0 && i < s->conf.nhc; i++)
			if (!strcmp(s->conf.hc[i].pat, old->hc[was].pat)) {
				sx_move(s, &t->xc, (int)i);
				break;
			}
	}
}
