/* Unit test of the host-class counts (lib/sched_xla.c, issue 14 point 7): which class a thread's
 * sessions count in (smtp only; the relay's with a smarthost), the room check, and how a reload
 * carries each agent's count to the new class of the same pattern. */
#include "sched_int.h"
#include "unit.h"
#include <stdlib.h>
#include <string.h>

static void conf(struct schedconf *c, const char *text)
{
	schedconf_init(c);
	CHECK_INT(schedconf_parse(c, "t.conf", text, strlen(text), NULL, NULL), 0);
}

TEST(sched_xla_class_and_room)
{
	struct sched *s = calloc(1, sizeof *s);
	conf(&s->conf, "PARAMhostclass = \"relay.example 1\"\nPARAMhostclass = \"*.example 2\"\n*/* command=x\n");
	CHECK_INT(sx_class(s, "smtp", "a.example"), 1);
	CHECK_INT(sx_class(s, "smtp", "other.org"), -1);
	CHECK_INT(sx_class(s, "local", "a.example"), -1); /* only smtp opens sessions */
	s->o.relay = "RELAY.example";
	CHECK_INT(sx_class(s, "smtp", "other.org"), 0); /* the relay's class, whatever the domain */
	int a = -1, b = -1;
	CHECK(sx_room(s, -1, 0));
	sx_move(s, &a, 0);
	CHECK_INT(s->conf.hc[0].used, 1);
	CHECK(!sx_room(s, -1, 0));    /* a second session: no */
	CHECK(sx_room(s, a, 0));      /* the agent already counted there: yes */
	CHECK(sx_room(s, -1, -1));    /* no class: no limit */
	sx_move(s, &b, 1);
	sx_move(s, &b, 1);           /* already there: no change */
	CHECK_INT(s->conf.hc[1].used, 1);
	sx_move(s, &a, 1);            /* moves: one slot freed, one taken */
	CHECK_INT(s->conf.hc[0].used, 0);
	CHECK_INT(s->conf.hc[1].used, 2);
	CHECK(!sx_room(s, -1, 1));
	sx_move(s, &a, -1);
	sx_move(s, &b, -1);
	CHECK_INT(s->conf.hc[1].used, 0);
	schedconf_free(&s->conf);
	free(s);
}

TEST(sched_xla_reload_carries_the_counts)
{
	struct sched *s = calloc(1, sizeof *s);
	struct thread *t = calloc(1, sizeof *t + 32);
	struct sta *ta = calloc(2, sizeof *ta);
	conf(&s->conf, "PARAMhostclass = \"*.gone.example 1\"\nPARAMhostclass = \"*.example 2\"\n*/* command=x\n");
	t->name = (char *)(t + 1);
	strcpy(t->name, "smtp");
	t->host = t->name + 5;
	strcpy(t->host, "a.example");
	t->xc = sx_class(s, "smtp", "a.example");
	s->tmask = 0;
	s->thash = &t;
	ta[0].xc = ta[1].xc = -1;
	ta[0].next = &ta[1];
	s->tas = &ta[0];
	sx_move(s, &ta[0].xc, 0);
	sx_move(s, &ta[1].xc, 1);
	/* the new file drops *.gone.example, keeps *.example (now first), and adds a.example */
	struct schedconf old = s->conf;
	conf(&s->conf, "PARAMhostclass = \"a.example 5\"\nPARAMhostclass = \"*.example 2\"\n*/* command=x\n");
	sx_reload(s, &old);
	CHECK_INT(t->xc, 0);          /* the thread's class again: the new exact one */
	CHECK_INT(ta[0].xc, -1);      /* its class is gone: it counts nowhere */
	CHECK_INT(ta[1].xc, 1);       /* same pattern, new index */
	CHECK_INT(s->conf.hc[1].used, 1);
	CHECK_INT(s->conf.hc[0].used, 0);
	schedconf_free(&old);
	schedconf_free(&s->conf);
	free(ta);
	free(t);
	free(s);
}
