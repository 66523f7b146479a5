/* mailq's requests to a running scheduler (docs/spool.md 10, 12): trigger lines H<id> (hold),
 * U<id> (release), D<id> (delete), I<id> (retry now), with "ALL" for every message. The scheduler
 * owns the messages it has in memory, so it carries these out itself: a message not in memory is
 * changed on disk at once (lib/qctl.c, the steps mailq takes when no scheduler runs); one in
 * memory is marked, nothing more of it goes out, and it is held or deleted once no transport
 * agent works on it (sq_claim, settle) — so a delete never races a delivery, and a hold takes
 * effect for the recipients not yet done. */
#include "sched_int.h"
#include "log.h"
#include "qctl.h"
#include "util.h"
#include <limits.h>
#include <string.h>

struct walk {
	struct sched *s;
	enum qctl_action a;
	unsigned n;
};

static void on_disk(struct sched *s, enum qctl_action a, const char *id, long long due)
{
	int r = qctl_apply_at(&s->sp, a, id, due, s->now);
	if (r < 0) {
		log_msg(LOG_ERR, id, "%s asked by mailq failed", qctl_name(a));
		return;
	}
	if (r > 0) {
		log_msg(LOG_NOTICE, id, "%s asked by mailq: %s", qctl_name(a),
		        str_bykey("\2not held\0\1already held, or not queued\0\0not queued, or held", a + 1u));
		return;
	}
	log_msg(LOG_NOTICE, id, "%s, as mailq asked", str_bykey("\1held\0\2released\0\3deleted\0\0due now", a + 1u));
	/* released or made due now: the next look at the index loads it */
	if ((a == QA_RELEASE || a == QA_RETRY) && (!s->disk_next || s->disk_next > s->now))
		s->disk_next = s->now;
}

static void in_memory(struct sched *s, enum qctl_action a, struct qmsg *m)
{
	if (a == QA_RELEASE) {
		log_msg(LOG_NOTICE, m->id, "release asked by mailq: not held");
		return;
	}
	if (a == QA_RETRY) {
		for (unsigned i = 0; i < m->nrcpt; i++)
			if (m->r[i].tag == RT_DEFERRED && m->r[i].next > s->now)
				m->r[i].next = s->now;
		if (m->evicted) {
			/* and those a window let go: a pass over the file now, each one due (issue 14 point 5) */
			m->evicted = s->now;
			m->kick = 1;
		}
		log_msg(LOG_NOTICE, m->id, "due now, as mailq asked");
	} else {
		m->ctl = (unsigned char)(a + 1);
		log_msg(LOG_NOTICE, m->id, "%s asked by mailq: done when no agent works on it", qctl_name(a));
	}
	sched_touch(s, m);
}

static void one(struct sched *s, enum qctl_action a, const char *id, long long due)
{
	struct qmsg *m = sq_find(s, id);
	if (m)
		in_memory(s, a, m);
	else
		on_disk(s, a, id, due);
}

static int each_due(void *ctx, const char *id, long long t)
{
	struct walk *w = ctx;
	if (sq_find(w->s, id))
		return 0; /* done above, from memory */
	w->n++;
	on_disk(w->s, w->a, id, t);
	return 0;
}

static int each_held(void *ctx, const char *id, long long t)
{
	struct walk *w = ctx;
	(void)t;
	w->n++;
	on_disk(w->s, w->a, id, -1);
	return 0;
}

/* ALL: what is in memory, then the due index for what is not (hold, delete, retry), and the
 * hold index (release, delete). New mail is picked up first, so it is covered too. */
static void all(struct sched *s, enum qctl_action a)
{
	struct walk w = {s, a, 0};
	if (a == QA_HOLD || a == QA_DELETE)
		sq_pickup(s);
	if (a != QA_RELEASE) {
		for (struct qmsg *m = s->head, *next; m; m = next) {
			next = m->next;
			in_memory(s, a, m);
			w.n++;
		}
		spool_due_each(&s->sp, LLONG_MAX / 4, each_due, &w);
	}
	if (a == QA_RELEASE || a == QA_DELETE)
		qctl_hold_each(&s->sp, each_held, &w);
	log_msg(LOG_NOTICE, NULL, "mailq: %s ALL: %u messages", qctl_name(a), w.n);
}

int sched_mailq_line(struct sched *s, const char *line, size_t len)
{
	static const char letters[] = "HUDI";
	const char *k = len >= 2 ? memchr(letters, line[0], 4) : NULL;
	if (!k)
		return 0;
	enum qctl_action a = (enum qctl_action)(k - letters);
	char id[SPOOL_ID_MAX];
	if (len - 1 >= sizeof id)
		return 0;
	memcpy(id, line + 1, len - 1);
	id[len - 1] = 0;
	if (!strcmp(id, "ALL")) {
		all(s, a);
		return 1;
	}
	if (!spool_id_valid(id))
		return 0;
	/* a message still in incoming/ is picked up first, to be held or deleted from memory */
	if (!sq_find(s, id))
		sq_pickup(s);
	one(s, a, id, -1);
	return 1;
}
