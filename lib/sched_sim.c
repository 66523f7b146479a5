/* The scheduling simulator (issue 14 point 1; docs/simulate.md): the real scheduler (sched_init,
 * sched_turn, sta_io, the queue on a real spool, scheduler.conf) on a manual clock. Only the
 * process layer is replaced, at its seam (struct sched_agent_ops: spawn and kill): a simulated
 * agent is the far end of a socket pair, reads the job lines the scheduler writes and answers
 * with report lines and #hungry, so the protocol code runs as with real agents. Destinations are
 * simulated servers: latency, a concurrency limit answering 421 above it, failure rates, down
 * periods. Everything is driven by one event queue in virtual milliseconds and one seeded PRNG:
 * the same workload gives the same output, byte for byte. Not linked into spoolbox. */
#include "sched_sim.h"
#include "conf.h"
#include "log.h"
#include "sched_int.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BASE_S 1800000000LL        /* virtual time 0, in epoch seconds */
#define STARTUP_MS 5               /* an agent's exec until its first #hungry */
#define LINE_CAP (SPOOL_ID_MAX + 320)
#define TURNS_MAX 50000000L        /* a runaway simulation stops with an error */

/* ---- the workload ---- */

static int sim_bad(char *err, size_t size, int line, const char *why, const char *word)
{
	snprintf(err, size, "line %d: %s%s%s", line, why, word ? ": " : "", word ? word : "");
	return -1;
}

static int good_name(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= SIM_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '-' || *s == '_'))
			return 0;
	return 1;
}

static int find_dest(const struct sim_work *w, const char *name)
{
	for (int i = 0; i < w->ndest; i++)
		if (!strcmp(w->dest[i].name, name))
			return i;
	return -1;
}

/* key=value of a dest or mail line. */
static int dest_key(struct sim_dest *d, const char *k, const char *v)
{
	long long x, y;
	if (!strcmp(k, "down")) {
		const char *dash = strchr(v, '-');
		char a[24];
		if (!dash || (size_t)(dash - v) >= sizeof a || d->ndown == SIM_DOWN_MAX)
			return -1;
		memcpy(a, v, (size_t)(dash - v));
		a[dash - v] = 0;
		if (parse_count(a, 100LL * 86400, &x) < 0 || parse_count(dash + 1, 100LL * 86400, &y) < 0 || y <= x)
			return -1;
		d->down[d->ndown][0] = x;
		d->down[d->ndown][1] = y;
		d->ndown++;
		return 0;
	}
	if (parse_count(v, 86400000, &x) < 0)
		return -1;
	if (!strcmp(k, "latency"))
		d->latency_ms = (long)x;
	else if (!strcmp(k, "jitter"))
		d->jitter_ms = (long)x;
	else if (!strcmp(k, "connect"))
		d->connect_ms = (long)x;
	else if (!strcmp(k, "limit") && x <= 100000)
		d->limit = (int)x;
	else if (!strcmp(k, "fail") && x <= 100)
		d->fail_pct = (int)x;
	else if (!strcmp(k, "confail") && x <= 100)
		d->confail_pct = (int)x;
	else
		return -1;
	return 0;
}

static int mail_key(struct sim_work *w, struct sim_mail *m, const char *k, const char *v)
{
	long long x;
	if (!strcmp(k, "dest")) {
		m->dest = find_dest(w, v);
		return m->dest < 0 ? -1 : 0;
	}
	if (!strcmp(k, "class")) {
		if (!good_name(v))
			return -1;
		for (m->cls = 0; m->cls < w->ncls && strcmp(w->cls[m->cls], v); m->cls++)
			;
		if (m->cls == w->ncls)
			str_lcpy(w->cls[w->ncls++], v, SIM_NAME_MAX);
		return 0;
	}
	if (parse_count(v, 100LL * 86400000, &x) < 0)
		return -1;
	if (!strcmp(k, "at"))
		m->at_ms = x;
	else if (!strcmp(k, "every"))
		m->every_ms = (long)x;
	else if (!strcmp(k, "count") && x >= 1 && x <= SIM_MSGS_MAX)
		m->count = (long)x;
	else if (!strcmp(k, "domains") && x >= 1 && x <= SIM_DOMAINS_MAX)
		m->domains = (int)x;
	else if (!strcmp(k, "rcpts") && x >= 1 && x <= SIM_RCPTS_MAX)
		m->rcpts = (long)x;
	else
		return -1;
	return 0;
}

int sim_parse(const char *text, size_t len, struct sim_work *w, char *err, size_t errsize)
{
	memset(w, 0, sizeof *w);
	w->seed = 1;
	w->sample_s = 10;
	w->until_s = 30 * 86400;
	if (len > SIM_TEXT_MAX)
		return sim_bad(err, errsize, 0, "workload larger than 64 KiB", NULL);
	int lineno = 0;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char line[SIM_LINE_MAX];
		lineno++;
		if (n >= sizeof line)
			return sim_bad(err, errsize, lineno, "line longer than 511 bytes", NULL);
		memcpy(line, text + pos, n);
		line[n] = 0;
		pos += n + 1;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)line[i] < ' ' && line[i] != '\t')
				return sim_bad(err, errsize, lineno, "control character", NULL);
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		char *word = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strcmp(word, "conf")) {
			if (w->nconf == SIM_CONF_MAX)
				return sim_bad(err, errsize, lineno, "more than 32 conf lines", NULL);
			str_lcpy(w->conf[w->nconf++], p, SIM_LINE_MAX);
			continue;
		}
		/* the rest: words, the first maybe positional, then key=value */
		char *args[16];
		int na = 0;
		while (*p) {
			if (na == 16)
				return sim_bad(err, errsize, lineno, "more than 16 words", NULL);
			args[na++] = p;
			while (*p && *p != ' ' && *p != '\t')
				p++;
			if (*p)
				*p++ = 0;
			while (*p == ' ' || *p == '\t')
				p++;
		}
		long long x;
		if (!strcmp(word, "seed") || !strcmp(word, "sample") || !strcmp(word, "until") || !strcmp(word, "queuehi")) {
			if (na != 1 || parse_count(args[0], !strcmp(word, "seed") ? 999999999999LL : 100LL * 86400, &x) < 0 ||
			    (x == 0 && strcmp(word, "seed")))
				return sim_bad(err, errsize, lineno, "expected one number", word);
			if (!strcmp(word, "seed"))
				w->seed = (unsigned long long)x;
			else if (!strcmp(word, "sample"))
				w->sample_s = x;
			else if (!strcmp(word, "queuehi"))
				w->queuehi = x;
			else
				w->until_s = x;
		} else if (!strcmp(word, "dest")) {
			if (na < 1 || !good_name(args[0]))
				return sim_bad(err, errsize, lineno, "dest: expected a name", NULL);
			if (find_dest(w, args[0]) >= 0 || w->ndest == SIM_DEST_MAX)
				return sim_bad(err, errsize, lineno, "dest: defined twice, or more than 64", args[0]);
			struct sim_dest *d = &w->dest[w->ndest];
			str_lcpy(d->name, args[0], sizeof d->name);
			d->latency_ms = 100;
			d->connect_ms = 10;
			for (int i = 1; i < na; i++) {
				char *eq = strchr(args[i], '=');
				if (!eq)
					return sim_bad(err, errsize, lineno, "dest: expected key=value", args[i]);
				*eq = 0;
				if (dest_key(d, args[i], eq + 1) < 0) {
					*eq = '=';
					return sim_bad(err, errsize, lineno, "dest: bad key or value", args[i]);
				}
			}
			w->ndest++;
		} else if (!strcmp(word, "mail")) {
			if (w->nmail == SIM_MAIL_MAX)
				return sim_bad(err, errsize, lineno, "more than 64 mail lines", NULL);
			struct sim_mail *m = &w->mail[w->nmail];
			m->dest = -1;
			m->count = 1;
			m->cls = -1;
			for (int i = 0; i < na; i++) {
				char *eq = strchr(args[i], '=');
				if (!eq)
					return sim_bad(err, errsize, lineno, "mail: expected key=value", args[i]);
				*eq = 0;
				if (mail_key(w, m, args[i], eq + 1) < 0) {
					*eq = '=';
					return sim_bad(err, errsize, lineno, "mail: bad key or value (dest= names a dest line above)",
					               args[i]);
				}
			}
			if (m->dest < 0)
				return sim_bad(err, errsize, lineno, "mail: dest= is missing", NULL);
			if (m->cls < 0) {
				for (m->cls = 0; m->cls < w->ncls && strcmp(w->cls[m->cls], "default"); m->cls++)
					;
				if (m->cls == w->ncls)
					str_lcpy(w->cls[w->ncls++], "default", SIM_NAME_MAX);
			}
			if (w->total + m->count > SIM_MSGS_MAX)
				return sim_bad(err, errsize, lineno, "more than 200000 messages in all", NULL);
			if (!m->rcpts)
				m->rcpts = m->domains ? m->domains : 1;
			if ((long long)w->rcpts + (long long)m->count * m->rcpts > SIM_RCPTS_ALL)
				return sim_bad(err, errsize, lineno, "more than 1000000 recipients in all", NULL);
			w->total += m->count;
			w->rcpts += m->count * m->rcpts;
			w->files += m->count * ((m->rcpts + SIM_FILE_RCPTS - 1) / SIM_FILE_RCPTS);
			w->nmail++;
		} else
			return sim_bad(err, errsize, lineno, "unknown word (seed, sample, until, queuehi, conf, dest, mail)", word);
	}
	if (!w->total)
		return sim_bad(err, errsize, lineno, "no mail line", NULL);
	if (!w->queuehi)
		w->queuehi = w->files + 1; /* room for every message: memory bounds nothing */
	return 0;
}

/* ---- the simulation ---- */

enum { EV_MAIL, EV_START, EV_DONE, EV_SAMPLE };
enum { OUT_OK, OUT_CONNFAIL, OUT_HANDSHAKE, OUT_NOTTRIED };

struct ev {
	long long t;                  /* virtual ms */
	unsigned long seq;            /* ties go in the order of scheduling */
	int type, a;
	long b;
};

struct agent {
	pid_t pid;
	int fd;                       /* our end of its socket, -1 when gone */
	int started, busy, eof, conn; /* conn: the destination it has a connection to, -1 = none */
	int refused;                  /* as the smtp agent: a destination that refused it, its later
	                               * jobs reported "not tried" until #idle (-1 = none) */
	unsigned gen;                 /* its EV_DONE events carry it (a kill voids them) */
	char rbuf[4096];
	size_t rlen;
	char (*q)[LINE_CAP];          /* job lines and #idle not yet started */
	unsigned nq, qcap;
	char job[LINE_CAP];           /* the job it is on */
	int outcome, dest;
};

/* One control file. A message of more than SIM_FILE_RCPTS recipients is several, the first
 * of which (head) counts for the message. */
struct smsg {
	char id[SPOOL_ID_MAX];
	long long arrival_ms;
	int dest, cls;
	unsigned tries;
	long head;                    /* the message's first control file */
	long rbase;                   /* its first recipient's number among all (x->rcnt) */
	long left;                    /* of the head: the message's recipients not yet delivered */
	unsigned char done;
};

struct dstat {
	int open;                     /* connections the server has now */
	unsigned long connections, refused, r421, reports, deferred, first, first_deferred;
	long long open_ms;            /* the integral of open over virtual time */
	int open_max;
};

struct sim {
	const struct sim_work *w;
	struct sched *s;
	FILE *out;
	char spool[512];
	long long now;                /* virtual ms */
	unsigned long long rng;
	struct ev *heap;
	size_t nheap, capheap;
	unsigned long seq;
	struct agent *ag;
	int nag, capag;
	pid_t next_pid;
	pid_t *io;                    /* agents whose output the scheduler must read */
	int nio, capio;
	struct smsg *msg;
	long nmsg;
	long *idx;                    /* open hash: id -> msg index + 1 */
	size_t idxmask;
	struct dstat ds[SIM_DEST_MAX];
	long long *lat[SIM_MAIL_MAX];
	long nlat[SIM_MAIL_MAX];
	long delivered, failed;
	unsigned char *rcnt;          /* per recipient: how many times it was delivered (at most 255) */
	long rnext;                   /* the next recipient number */
	int oom;
};

static unsigned long long rnd(struct sim *x)
{
	/* xorshift64*: small, fast, and the same everywhere */
	unsigned long long v = x->rng;
	v ^= v >> 12;
	v ^= v << 25;
	v ^= v >> 27;
	x->rng = v;
	return v * 2685821657736338717ULL;
}

static int roll(struct sim *x, int pct)
{
	return pct > 0 && (int)(rnd(x) % 100) < pct;
}

static void ev_push(struct sim *x, long long t, int type, int a, long b)
{
	if (x->nheap == x->capheap) {
		size_t cap = x->capheap ? x->capheap * 2 : 256;
		struct ev *h = realloc(x->heap, cap * sizeof *h);
		if (!h) {
			x->oom = 1;
			return;
		}
		x->heap = h;
		x->capheap = cap;
	}
	struct ev e = {t, x->seq++, type, a, b};
	size_t i = x->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (x->heap[p].t < e.t || (x->heap[p].t == e.t && x->heap[p].seq < e.seq))
			break;
		x->heap[i] = x->heap[p];
		i = p;
	}
	x->heap[i] = e;
}

static struct ev ev_pop(struct sim *x)
{
	struct ev top = x->heap[0], last = x->heap[--x->nheap];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= x->nheap)
			break;
		if (c + 1 < x->nheap && (x->heap[c + 1].t < x->heap[c].t ||
		                         (x->heap[c + 1].t == x->heap[c].t && x->heap[c + 1].seq < x->heap[c].seq)))
			c++;
		if (last.t < x->heap[c].t || (last.t == x->heap[c].t && last.seq < x->heap[c].seq))
			break;
		x->heap[i] = x->heap[c];
		i = c;
	}
	if (x->nheap)
		x->heap[i] = last;
	return top;
}

static unsigned hash_id(const char *id)
{
	unsigned h = 2166136261u;
	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return h;
}

static long msg_find(struct sim *x, const char *id)
{
	for (size_t i = hash_id(id) & x->idxmask; x->idx[i]; i = (i + 1) & x->idxmask)
		if (!strcmp(x->msg[x->idx[i] - 1].id, id))
			return x->idx[i] - 1;
	return -1;
}

static struct agent *agent_of(struct sim *x, pid_t pid)
{
	for (int i = 0; i < x->nag; i++)
		if (x->ag[i].pid == pid)
			return &x->ag[i];
	return NULL;
}

static void want_io(struct sim *x, pid_t pid)
{
	for (int i = 0; i < x->nio; i++)
		if (x->io[i] == pid)
			return;
	if (x->nio == x->capio) {
		int cap = x->capio ? x->capio * 2 : 16;
		pid_t *n = realloc(x->io, (size_t)cap * sizeof *n);
		if (!n) {
			x->oom = 1;
			return;
		}
		x->io = n;
		x->capio = cap;
	}
	x->io[x->nio++] = pid;
}

/* The scheduler reads what the agents wrote (or their EOF): the real sta_io. */
static void flush_io(struct sim *x)
{
	for (int i = 0; i < x->nio; i++)
		for (struct sta *t = x->s->tas; t; t = t->next)
			if (t->pid == x->io[i]) {
				sta_io(x->s, t);
				break;
			}
	x->nio = 0;
}

static void say(struct sim *x, struct agent *a, const char *text)
{
	size_t len = strlen(text);
	while (a->fd >= 0 && len) {
		ssize_t n = write(a->fd, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			x->oom = 1;
			return;
		}
		if (n > 0) {
			text += n;
			len -= (size_t)n;
		}
		if (!len)
			break;
		/* the socket is full (the report of a large job): the scheduler reads it now, with
		 * sta_io as when its poll says so */
		struct sta *t = x->s->tas;
		while (t && t->pid != a->pid)
			t = t->next;
		if (!t) {
			x->oom = 1;
			return;
		}
		sta_io(x->s, t);
	}
	want_io(x, a->pid);
}

static void close_conn(struct sim *x, struct agent *a)
{
	if (a->conn >= 0)
		x->ds[a->conn].open--;
	a->conn = -1;
}

static void agent_exit(struct sim *x, struct agent *a)
{
	close_conn(x, a);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->busy = 0;
	a->nq = 0;
	a->gen++;
	want_io(x, a->pid); /* its EOF */
}

static int sim_spawn(void *ctx, const char *channel, const char *host, pid_t *pid, int *fd)
{
	struct sim *x = ctx;
	int sv[2];
	if (x->nag == x->capag) {
		int cap = x->capag ? x->capag * 2 : 16;
		struct agent *n = realloc(x->ag, (size_t)cap * sizeof *n);
		if (!n)
			return -1;
		x->ag = n;
		x->capag = cap;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
	struct agent *a = &x->ag[x->nag];
	memset(a, 0, sizeof *a);
	a->pid = x->next_pid++;
	a->fd = sv[1];
	a->conn = -1;
	a->refused = -1;
	ev_push(x, x->now + STARTUP_MS, EV_START, x->nag, 0);
	x->nag++;
	*pid = a->pid;
	*fd = sv[0];
	(void)channel;
	(void)host;
	return 0;
}

static void sim_kill(void *ctx, pid_t pid)
{
	struct sim *x = ctx;
	struct agent *a = agent_of(x, pid);
	if (a && a->fd >= 0)
		agent_exit(x, a);
}

static const struct sched_agent_ops sim_ops = {sim_spawn, sim_kill};

static int is_down(const struct sim_dest *d, long long ms)
{
	for (int i = 0; i < d->ndown; i++)
		if (ms >= d->down[i][0] * 1000 && ms < d->down[i][1] * 1000)
			return 1;
	return 0;
}

/* The destination a host is: its name, or hK.NAME of a message with domains= (-1: none, the
 * error channel). */
static int dest_of(const struct sim_work *w, const char *host)
{
	const char *dot = host[0] == 'h' ? strchr(host, '.') : NULL;
	for (int i = 0; i < w->ndest; i++)
		if (!strcmp(w->dest[i].name, host) || (dot && !strcmp(w->dest[i].name, dot + 1)))
			return i;
	return -1;
}

/* The agent takes its next line: #idle is answered at once; a job connects (or reuses its
 * connection) and ends after the destination's latency. */
static void agent_next(struct sim *x, struct agent *a)
{
	while (a->fd >= 0 && a->started && !a->busy && a->nq) {
		char line[LINE_CAP];
		memcpy(line, a->q[0], sizeof line);
		memmove(a->q, a->q + 1, (a->nq - 1) * sizeof *a->q);
		a->nq--;
		if (!strcmp(line, "#idle")) {
			close_conn(x, a);
			a->refused = -1;
			say(x, a, "#hungry\n");
			continue;
		}
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		tab[strcspn(tab + 1, "\t") + 1] = 0; /* the recipients' offsets after the host */
		int d = dest_of(x->w, tab + 1);
		str_lcpy(a->job, line, sizeof a->job);
		a->dest = d;
		a->outcome = OUT_OK;
		a->busy = 1;
		long long dur = 0;
		if (d >= 0 && a->refused == d) {
			a->outcome = OUT_NOTTRIED;
		} else if (d >= 0) {
			a->refused = -1;
			const struct sim_dest *sd = &x->w->dest[d];
			if (a->conn >= 0 && (a->conn != d || is_down(sd, x->now)))
				close_conn(x, a);
			if (a->conn < 0) {
				x->ds[d].connections++;
				dur += sd->connect_ms;
				if (is_down(sd, x->now) || roll(x, sd->confail_pct)) {
					a->outcome = OUT_CONNFAIL;
					a->refused = d;
					x->ds[d].refused++;
				} else if (sd->limit > 0 && x->ds[d].open >= sd->limit) {
					a->outcome = OUT_HANDSHAKE;
					x->ds[d].r421++;
				} else {
					if (++x->ds[d].open > x->ds[d].open_max)
						x->ds[d].open_max = x->ds[d].open;
					a->conn = d;
				}
			}
			if (a->outcome == OUT_OK)
				dur += sd->latency_ms + (sd->jitter_ms > 0 ? (long long)(rnd(x) % (unsigned long long)(sd->jitter_ms + 1)) : 0);
		}
		ev_push(x, x->now + dur, EV_DONE, (int)(a - x->ag), (long)a->gen);
		return;
	}
	if (a->fd >= 0 && a->eof && !a->busy && !a->nq)
		agent_exit(x, a);
}

/* The job is over: a report per recipient the scheduler gave it (T with its pid), then #hungry. */
static void agent_done(struct sim *x, struct agent *a)
{
	a->busy = 0;
	struct qmsg *m = sq_find(x->s, a->job);
	long mi = msg_find(x, a->job);
	size_t cap = 4096, n = 0;
	char *out = malloc(cap);
	for (unsigned i = 0; out && m && i < m->nrcpt; i++) {
		const struct qrcpt *r = &m->r[i];
		if (r->tag != RT_TRANSIT || r->pid != (long)a->pid)
			continue;
		if (cap - n < 600) {
			char *o = realloc(out, cap * 2);
			if (!o) {
				free(out);
				out = NULL;
				break;
			}
			out = o;
			cap *= 2;
		}
		const char *status = "ok", *action = "relayed", *enh = "2.0.0", *text = "250 2.0.0 queued";
		const char *host = a->dest >= 0 ? x->w->dest[a->dest].name : "local";
		if (a->outcome == OUT_CONNFAIL) {
			status = "deferred", action = "delayed", enh = "4.4.1";
			text = "connect: Connection refused";
		} else if (a->outcome == OUT_NOTTRIED) {
			status = "deferred", action = "delayed", enh = "4.4.1";
			text = "not tried: connect: Connection refused on an earlier message";
		} else if (a->outcome == OUT_HANDSHAKE) {
			status = "deferred", action = "delayed", enh = "4.4.2";
			text = "refused to talk to me: 421 4.7.0 too many connections";
		} else if (a->dest >= 0 && roll(x, x->w->dest[a->dest].fail_pct)) {
			status = "deferred", action = "delayed", enh = "4.3.0";
			text = "451 4.3.0 simulated temporary failure";
		}
		n += (size_t)snprintf(out + n, cap - n, "%s/%u\trfc822;rcpt@%s\001%s\001%s\001%s\001\t%s %s\n", m->id,
		                      (unsigned)r->off, host, action, enh, text, status, text);
		if (mi < 0 || a->dest < 0)
			continue;
		struct smsg *sm = &x->msg[mi];
		struct dstat *ds = &x->ds[a->dest];
		int deferred = strcmp(status, "ok") != 0;
		ds->reports++;
		ds->deferred += deferred;
		if (!sm->tries++) {
			ds->first++;
			ds->first_deferred += deferred;
		}
		if (deferred || r->idx >= SIM_FILE_RCPTS)
			continue;
		unsigned char *c = &x->rcnt[sm->rbase + (long)r->idx];
		struct smsg *g = &x->msg[sm->head];
		if (*c < 255 && ++*c == 1 && !g->done && --g->left == 0) {
			g->done = 1;
			x->delivered++;
			x->lat[g->cls][x->nlat[g->cls]++] = x->now - g->arrival_ms;
		}
	}
	if (!out) {
		x->oom = 1;
		return;
	}
	memcpy(out + n, "#hungry\n", 9);
	say(x, a, out);
	free(out);
	agent_next(x, a);
}

/* Reads what the scheduler wrote to every agent: job lines, #idle, EOF. */
static void sweep(struct sim *x)
{
	for (int i = 0; i < x->nag; i++) {
		struct agent *a = &x->ag[i];
		while (a->fd >= 0) {
			ssize_t r = read(a->fd, a->rbuf + a->rlen, sizeof a->rbuf - a->rlen);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				break;
			if (r == 0) {
				a->eof = 1;
				break;
			}
			a->rlen += (size_t)r;
			size_t start = 0;
			for (size_t k = 0; k < a->rlen; k++) {
				if (a->rbuf[k] != '\n')
					continue;
				if (a->nq == a->qcap) {
					unsigned cap = a->qcap ? a->qcap * 2 : 4;
					char(*q)[LINE_CAP] = realloc(a->q, cap * sizeof *q);
					if (!q) {
						x->oom = 1;
						return;
					}
					a->q = q;
					a->qcap = cap;
				}
				size_t len = k - start < LINE_CAP - 1 ? k - start : LINE_CAP - 1;
				memcpy(a->q[a->nq], a->rbuf + start, len);
				a->q[a->nq++][len] = 0;
				start = k + 1;
			}
			memmove(a->rbuf, a->rbuf + start, a->rlen - start);
			a->rlen -= start;
		}
		agent_next(x, a);
	}
}

/* One control file of message `head` (of mail line ml): its recipients from..to-1 of the message's. */
static void inject_file(struct sim *x, const struct sim_mail *ml, long head, long from, long to)
{
	long i = x->nmsg++;
	struct smsg *sm = &x->msg[i];
	long long sec = BASE_S + x->now / 1000;
	spool_id_make(sm->id, sec, (long)(x->now % 1000) * 1000 + i % 1000, (unsigned long long)i + 1);
	sm->arrival_ms = x->now;
	sm->dest = ml->dest;
	sm->cls = ml->cls;
	sm->head = head < 0 ? i : head;
	sm->rbase = x->rnext;
	x->rnext += to - from;
	if (head < 0)
		sm->left = ml->rcpts;
	size_t h = hash_id(sm->id) & x->idxmask;
	while (x->idx[h])
		h = (h + 1) & x->idxmask;
	x->idx[h] = i + 1;
	char path[700], to_path[700];
	snprintf(path, sizeof path, "%s/incoming/.sim", x->spool);
	snprintf(to_path, sizeof to_path, "%s/incoming/%s", x->spool, sm->id);
	const char *dn = x->w->dest[sm->dest].name;
	size_t size = 256 + (size_t)(to - from) * (2 * SIM_NAME_MAX + 100);
	char *text = malloc(size);
	int env = 0;
	for (int pass = 0; text && pass < 2; pass++) {
		/* the body offset is the envelope's own length: the second pass writes it */
		env = snprintf(text, size, "@ spoolbox 1\ni %s\nt %lld\no %016d\nz %016d\nb 7\nu 0 root\ns sim@sim.example\n",
		               sm->id, sec, env - 6, 6);
		for (long k = from; k < to; k++)
			env += ml->domains ? snprintf(text + env, size - (size_t)env,
			                              "r N 0000000000 0000 0000000000 smtp h%ld.%s m%ldr%ld@h%ld.%s 0\n",
			                              k % ml->domains, dn, sm->head, k, k % ml->domains, dn)
			                   : snprintf(text + env, size - (size_t)env,
			                              "r N 0000000000 0000 0000000000 smtp %s m%ldr%ld@%s 0\n", dn, sm->head, k, dn);
		env += snprintf(text + env, size - (size_t)env, ".\nhello\n");
	}
	int fd = text ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640) : -1;
	if (fd < 0 || write(fd, text, (size_t)env) != env || close(fd) < 0 || rename(path, to_path) < 0)
		x->oom = 1;
	free(text);
	/* one pick-up per file: the order of incoming/ on disk never matters */
	sq_pickup(x->s);
}

/* A message of mail line `mail`: one control file, or, above SIM_FILE_RCPTS recipients, one per
 * SIM_FILE_RCPTS of them (as Courier's batchsize splits a message; docs/scheduler.md). */
static void inject(struct sim *x, int mail)
{
	const struct sim_mail *ml = &x->w->mail[mail];
	long head = x->nmsg;
	for (long from = 0; from < ml->rcpts; from += SIM_FILE_RCPTS)
		inject_file(x, ml, from ? head : -1, from,
		            from + SIM_FILE_RCPTS < ml->rcpts ? from + SIM_FILE_RCPTS : ml->rcpts);
}

static struct thread *thread_of(struct sched *s, const char *host)
{
	for (unsigned h = 0; h <= s->tmask; h++)
		for (struct thread *t = s->thash[h]; t; t = t->hnext)
			if (!t->is_error && !strcmp(t->name, "smtp") && !strcmp(t->host, host))
				return t;
	return NULL;
}

static void sample(struct sim *x)
{
	fprintf(x->out, "conc t=%lld", x->now / 1000);
	for (int d = 0; d < x->w->ndest; d++) {
		struct thread *t = thread_of(x->s, x->w->dest[d].name);
		int run = t ? t->running : 0;
		fprintf(x->out, " %s=%d/%d", x->w->dest[d].name, run, t ? t->fb.window : 0);
	}
	fprintf(x->out, " rcpts_in_memory=%ld\n", x->s->rp.incore);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static void pct(FILE *out, const char *what, unsigned long part, unsigned long whole)
{
	fprintf(out, " %s=%lu/%lu (%.1f%%)", what, part, whole, whole ? 100.0 * (double)part / (double)whole : 0.0);
}

static void summary(struct sim *x)
{
	for (int d = 0; d < x->w->ndest; d++) {
		const struct dstat *ds = &x->ds[d];
		fprintf(x->out, "dest %s connections=%lu refused=%lu 421=%lu", x->w->dest[d].name, ds->connections, ds->refused,
		        ds->r421);
		pct(x->out, "deferred", ds->deferred, ds->reports);
		pct(x->out, "first_deferred", ds->first_deferred, ds->first);
		fprintf(x->out, " open_avg=%.2f open_max=%d\n", x->now ? (double)ds->open_ms / (double)x->now : 0.0,
		        ds->open_max);
	}
	for (int c = 0; c < x->w->ncls; c++) {
		long n = x->nlat[c];
		long long *v = x->lat[c];
		qsort(v, (size_t)n, sizeof *v, cmp_ll);
		fprintf(x->out, "class %s delivered=%ld", x->w->cls[c], n);
		if (n)
			fprintf(x->out, " p50=%lldms p90=%lldms p99=%lldms max=%lldms", v[(n - 1) * 50 / 100], v[(n - 1) * 90 / 100],
			        v[(n - 1) * 99 / 100], v[n - 1]);
		fputc('\n', x->out);
	}
	/* every recipient delivered once; the most in memory and the seed's bound, as the
	 * scheduler's pools (lib/sched_pool.c) counted and compute them */
	long once = 0, more = 0;
	for (long r = 0; r < x->w->rcpts; r++) {
		once += x->rcnt[r] == 1;
		more += x->rcnt[r] > 1;
	}
	fprintf(x->out, "rcpts total=%ld once=%ld more=%ld never=%ld in_memory_max=%ld bound=%ld limit=%ld refills=%ld\n",
	        x->w->rcpts, once, more, x->w->rcpts - once - more, x->s->rp.peak, srp_bound(&x->s->rp, NULL),
	        x->s->rp.limit, x->s->rp.refills);
	fprintf(x->out, "total messages=%ld delivered=%ld undelivered=%ld end=%llds\n", x->w->total, x->delivered,
	        x->w->total - x->delivered, x->now / 1000);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	remove(path);
	return 0;
}

static int conf_write(const struct sim_work *w, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	/* the sim's defaults, then the workload's clauses, then the command (matching stops at
	 * the first clause with one, and later clauses override earlier ones) */
	fprintf(f, "*/*\n\tinterval=1m expiry=3d retries=\"1 1 2 3 5 8 13 21 34\" maxta=0 maxchannel=1000 maxring=1000\n");
	for (int i = 0; i < w->nconf; i++)
		fprintf(f, "%s\n", w->conf[i]);
	fprintf(f, "error\n\tcommand=errormail\n*/*\n\tcommand=smtp\n");
	return fclose(f);
}

static void sim_free(struct sim *x)
{
	for (int i = 0; i < x->nag; i++) {
		if (x->ag[i].fd >= 0)
			close(x->ag[i].fd);
		free(x->ag[i].q);
	}
	free(x->ag);
	free(x->heap);
	free(x->io);
	free(x->msg);
	free(x->rcnt);
	free(x->idx);
	for (int c = 0; c < SIM_MAIL_MAX; c++)
		free(x->lat[c]);
}

int sim_run(const struct sim_work *w, const char *tmpdir, FILE *out, char *err, size_t errsize)
{
	struct sim *x = calloc(1, sizeof *x);
	struct sched *s = calloc(1, sizeof *s);
	char dir[400], conf[500];
	int rc = 0;
	if (!x || !s) {
		free(x);
		free(s);
		snprintf(err, errsize, "out of memory");
		return EX_OSERR;
	}
	snprintf(dir, sizeof dir, "%s/spoolbox-sim-XXXXXX", tmpdir);
	if (!mkdtemp(dir)) {
		snprintf(err, errsize, "mkdtemp in %s: %s", tmpdir, strerror(errno));
		free(x);
		free(s);
		return EX_CANTCREAT;
	}
	x->w = w;
	x->s = s;
	x->out = out;
	x->rng = w->seed * 0x9E3779B97F4A7C15ULL + 1;
	x->next_pid = 1000000;
	snprintf(x->spool, sizeof x->spool, "%s/spool", dir);
	snprintf(conf, sizeof conf, "%s/scheduler.conf", dir);
	size_t hs = 1024;
	while (hs < (size_t)w->files * 2)
		hs <<= 1;
	x->idxmask = hs - 1;
	x->idx = calloc(hs, sizeof *x->idx);
	x->msg = calloc((size_t)w->files, sizeof *x->msg);
	x->rcnt = calloc((size_t)w->rcpts, 1);
	for (int c = 0; c < w->ncls; c++) {
		long n = 0;
		for (int i = 0; i < w->nmail; i++)
			n += w->mail[i].cls == c ? w->mail[i].count : 0;
		x->lat[c] = malloc((size_t)(n ? n : 1) * sizeof **x->lat);
	}
	int oom = !x->idx || !x->msg || !x->rcnt;
	for (int c = 0; c < w->ncls; c++)
		oom |= !x->lat[c];
	struct sched_opts o = {0};
	o.conf_path = conf;
	o.queuelo = o.queuehi = w->queuehi;
	o.logdir = dir;
	o.readyfd = -1;
	if (oom) {
		snprintf(err, errsize, "out of memory");
		rc = EX_OSERR;
	} else if (conf_write(w, conf) < 0) {
		snprintf(err, errsize, "writing %s: %s", conf, strerror(errno));
		rc = EX_CANTCREAT;
	} else if ((rc = sched_init(s, &o, x->spool)) != 0) {
		snprintf(err, errsize, "the scheduler did not start (exit %d; its log says why)", rc);
	}
	if (rc)
		goto out;
	s->agent_ops = &sim_ops;
	s->agent_ctx = x;
	s->clock.manual = 1;
	s->clock.manual_ms = BASE_S * 1000;
	s->now = BASE_S;
	fprintf(out, "# spoolbox scheduler simulation: seed %llu, %d destinations, %ld messages\n"
	             "# conc t=SECONDS then per destination: agents on it / its concurrency window; then the recipients in memory\n",
	        w->seed, w->ndest, w->total);
	for (int i = 0; i < w->nmail; i++)
		ev_push(x, w->mail[i].at_ms, EV_MAIL, i, 0);
	ev_push(x, 0, EV_SAMPLE, 0, 0);
	long turns = 0;
	long long until = w->until_s * 1000;
	for (;;) {
		const long long inf = (long long)1 << 62;
		long long t = x->nheap ? x->heap[0].t : inf;
		long long wake = sched_next_wake(s);
		if (wake) {
			long long wm = (wake - BASE_S) * 1000;
			if (wm <= x->now)
				wm = (x->now / 1000 + 1) * 1000; /* due now: the next second, as the loop's tick */
			if (wm < t)
				t = wm;
		}
		/* the end: all delivered, the time is up, or nothing is left to happen but samples */
		if (t == inf || t > until || x->delivered >= w->total ||
		    (!wake && x->nheap == 1 && x->heap[0].type == EV_SAMPLE))
			break;
		if (++turns > TURNS_MAX || x->oom) {
			snprintf(err, errsize, x->oom ? "out of memory, or a write failed" : "more than %ld turns: a runaway",
			         TURNS_MAX);
			rc = EX_SOFTWARE;
			goto out;
		}
		for (int d = 0; d < w->ndest; d++)
			x->ds[d].open_ms += x->ds[d].open * (t - x->now);
		x->now = t;
		s->clock.manual_ms = BASE_S * 1000 + t;
		s->now = BASE_S + t / 1000;
		while (x->nheap && x->heap[0].t <= x->now) {
			struct ev e = ev_pop(x);
			struct agent *a = e.type == EV_START || e.type == EV_DONE ? &x->ag[e.a] : NULL;
			switch (e.type) {
			case EV_MAIL:
				inject(x, e.a);
				if (e.b + 1 < w->mail[e.a].count)
					ev_push(x, x->now + w->mail[e.a].every_ms, EV_MAIL, e.a, e.b + 1);
				break;
			case EV_START:
				if (a->fd >= 0) {
					a->started = 1;
					say(x, a, "#hungry\n");
				}
				break;
			case EV_DONE:
				if (a->fd >= 0 && (unsigned long)e.b == a->gen)
					agent_done(x, a);
				break;
			default:
				sample(x);
				ev_push(x, x->now + w->sample_s * 1000, EV_SAMPLE, 0, 0);
				break;
			}
			flush_io(x);
		}
		sched_turn(s, 0);
		sweep(x);
		flush_io(x);
	}
	sample(x);
	summary(x);
out:
	sched_free(s);
	sim_free(x);
	free(x);
	free(s);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
