/* The scheduler's live query socket (seed 000's MAILQv2; docs/spool.md 13): SPOOL/scheduler.sock,
 * a UNIX stream socket. Each client gets the greeting and a challenge, may AUTH (MD5 of the
 * challenge and its password from PARAMauthfile), and asks SHOW SNMP, SHOW QUEUE SHORT, SHOW
 * QUEUE THREADS, SHOW THREAD channel host, ETRN domain, KILL MSG id; replies are POP-style
 * (+OK / -ERR, multi-line answers end with "." and dot-stuff). On this socket the peer's uid
 * (SO_PEERCRED) stands in for a password: root may do everything, another user what the auth
 * file gives its name without a password. PATH.v1 serves the seed's version 1 dump and closes.
 * PARAMmailqpath="TCP:PORT" puts the v2 listener on TCP instead (only when asked).
 *
 * The event loop never waits for a client: every socket is non-blocking, each client has a
 * bounded input line and a bounded output buffer, a client whose output is backed up is not
 * read from (so a client that never reads costs at most its buffer), there are at most
 * MQ_CLIENTS, and an idle one is closed after MQ_IDLE seconds. */
#include "config_default.h"
#if ENABLE_MAILQ_PROTO /* the whole file; lib/sched_mq_none.c otherwise */
#include "sched_int.h"
#include "log.h"
#include "mqauth.h"
#include "util.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MQ_CLIENTS 16
#define MQ_LINE 1024          /* longest command line */
#define MQ_OUT (64 * 1024)    /* output buffered for one client */
#define MQ_IDLE 60            /* seconds without a command or a byte read */

struct mq_client {
	int fd;
	uint32_t ip;                  /* the peer's IPv4 address; a UNIX-socket peer is 127.0.0.1 */
	unsigned attrs;               /* MQA_* allowed */
	int closing;                  /* close once the output is written */
	int cut;                      /* this answer did not fit */
	long long last;
	size_t inlen, outlen, outoff;
	char *out;
	char challenge[64];
	char in[MQ_LINE + 1];
};

struct sched_mq {
	int lfd;
	int v1fd;                     /* PATH.v1: the seed's version 1 dump, then close */
	unsigned long serial;         /* makes every challenge differ */
	struct mq_client c[MQ_CLIENTS];
	char path[sizeof ((struct sockaddr_un *)0)->sun_path];
	char v1[sizeof ((struct sockaddr_un *)0)->sun_path + 3]; /* path.v1, formatted once */
};

static void drop(struct mq_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->out = NULL;
	c->fd = -1;
}

void sched_mq_close(struct sched *s)
{
	struct sched_mq *q = s->mq;
	if (!q)
		return;
	for (int i = 0; i < MQ_CLIENTS; i++)
		drop(&q->c[i]);
	if (q->lfd >= 0) {
		close(q->lfd);
		if (q->path[0])
			unlink(q->path);
	}
	if (q->v1fd >= 0) {
		close(q->v1fd);
		unlink(q->v1);
	}
	free(q);
	s->mq = NULL;
}

/* A listening socket for anyone (the protocol decides who may do what): at path, a UNIX socket,
 * or with path NULL on TCP port; -1 logged. The UNIX socket is made listening under a temporary
 * name and renamed into place, so that a client that sees the path never meets a socket that is
 * bound but not yet listening (ECONNREFUSED). */
static int listen_at(const char *path, int port)
{
	union {
		struct sockaddr sa;
		struct sockaddr_un un;
		struct sockaddr_in in; /* INADDR_ANY: 0 in either byte order */
	} a;
	memset(&a, 0, sizeof a);
	socklen_t len = sizeof a.in;
	int fd = -1, one = 1;
	if (path) {
		a.un.sun_family = AF_UNIX;
		len = sizeof a.un;
		if (snprintf(a.un.sun_path, sizeof a.un.sun_path, "%s.new", path) >= (int)sizeof a.un.sun_path) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		/* we hold the spool's lock: a socket left there is a dead scheduler's */
		unlink(a.un.sun_path);
	} else {
		a.in.sin_family = AF_INET;
		a.in.sin_port = htons((uint16_t)port);
	}
	fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || (!path && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) ||
	    bind(fd, &a.sa, len) < 0 || (path && chmod(a.un.sun_path, 0666) < 0) || listen(fd, MQ_CLIENTS) < 0 ||
	    (path && rename(a.un.sun_path, path) < 0)) {
		if (path)
			unlink(a.un.sun_path);
	fail:
		if (path)
			log_msg(LOG_ERR, NULL, "mailq socket %s: %s: no live queries there", path, strerror(errno));
		else
			log_msg(LOG_ERR, NULL, "mailq TCP port %d: %s: no live queries", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int sched_mq_open(struct sched *s)
{
	struct sched_mq *q = calloc(1, sizeof *q);
	if (!q)
		return -1;
	for (int i = 0; i < MQ_CLIENTS; i++)
		q->c[i].fd = -1;
	q->lfd = q->v1fd = -1;
	s->mq = q;
	const char *p = s->conf.mailqpath, *bad;
	if (p && str_starts(p, "TCP:")) {
		/* only when asked: the seed's MAILQ port (174, "mailq") or the number given */
		char *e;
		long port = !strcmp(p + 4, "mailq") ? 174 : strtol(p + 4, &e, 10);
		if (port < 1 || port > 65535 || (port != 174 && *e)) {
			bad = "PARAMmailqpath=%s: not TCP:PORT: no live queries";
			goto bad;
		}
		q->lfd = listen_at(NULL, (int)port);
		return q->lfd < 0 ? -1 : 0;
	}
	if (p && !str_starts(p, "UNIX:")) {
		log_msg(LOG_WARNING, NULL, "PARAMmailqpath=%s: not UNIX:/path or TCP:port; using the spool's socket", p);
		p = NULL;
	}
	if (str_fmt(q->path, sizeof q->path, p ? "%s" : "%s/scheduler.sock", p ? p + 5 : s->sp.dir) < 0) {
		bad = "the mailq socket path is too long: no live queries";
		goto bad;
	}
	q->lfd = listen_at(q->path, 0);
	q->v1fd = snprintf(q->v1, sizeof q->v1, "%s.v1", q->path) < (int)sizeof q->path ? listen_at(q->v1, 0) : -1;
	return q->lfd < 0 ? -1 : 0;
bad: /* a refusal: one of the two texts (the second leaves p unread) */
	log_msg(LOG_ERR, NULL, bad, p);
	return -1;
}

/* Appends to the client's output; what does not fit is dropped and marked (the answer ends
 * with a line saying so). */
static void put(struct mq_client *c, const char *p, size_t n)
{
	if (c->cut || c->outlen + n > MQ_OUT - 64) {
		c->cut = 1;
		return;
	}
	memcpy(c->out + c->outlen, p, n);
	c->outlen += n;
}

static void say(struct mq_client *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void say(struct mq_client *c, const char *fmt, ...)
{
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line + 1, sizeof line - 2, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 3)
		n = (int)(sizeof line - 3);
	/* dot-stuffing, as POP and SMTP */
	line[0] = '.';
	line[n + 1] = '\n';
	int dot = line[1] == '.';
	put(c, line + 1 - dot, (size_t)(n + 1 + dot));
}

static void end(struct mq_client *c)
{
	if (c->cut) {
		static const char cut[] = "(the rest did not fit)\n.\n";
		/* put() keeps 64 bytes for this; a client that let several answers pile up may find
		 * them used already, and then gets a cut answer without its end (it was not reading) */
		if (c->outlen + sizeof cut - 1 <= MQ_OUT) {
			memcpy(c->out + c->outlen, cut, sizeof cut - 1);
			c->outlen += sizeof cut - 1;
		}
		c->cut = 0;
		return;
	}
	put(c, ".\n", 2);
}

static void reply(struct mq_client *c, const char *text)
{
	c->cut = 0;
	put(c, text, strlen(text));
}

static void show_snmp(struct sched *s, struct mq_client *c)
{
	unsigned long transit = 0, waiting = 0;
	for (struct qmsg *m = s->head; m; m = m->next)
		for (unsigned i = 0; i < m->nrcpt; i++) {
			transit += m->r[i].tag == RT_TRANSIT;
			waiting += m->r[i].tag == RT_NEW || m->r[i].tag == RT_DEFERRED;
		}
	/* one say() for the eleven lines: none starts with a dot, and all fit its buffer */
	say(c, "messages-in-memory: %ld\nrecipients-in-transit: %lu\nrecipients-waiting: %lu\nthreads: %ld\n"
	    "transport-agents: %d\nmore-on-disk: %s\ndelivered: %lu\nfailed: %lu\ndeferred: %lu\nlost: %lu\n"
	    "agents-started: %lu", s->count, transit, waiting, s->nthreads, s->ntas, s->disk_more ? "yes" : "no",
	    s->delivered, s->failed, s->deferred, s->lost, s->started);
}

static void show_threads(struct sched *s, struct mq_client *c, int full)
{
	for (unsigned b = 0; b <= s->tmask; b++)
		for (struct thread *t = s->thash[b]; t; t = t->hnext)
			/* one call: the short form leaves the last three arguments unread */
			say(c, full ? "%s/%s\tready=%u\tagents=%d\trecipients=%d\tblocked=%lld\tclause=%d" : "%s/%s\tR=%u\tA=%d",
			    t->name, t->host, t->nready, t->running, t->refs,
			    t->blocked_until > s->now ? t->blocked_until - s->now : 0, t->ring ? t->ring->clause : -1);
}

static void show_thread(struct sched *s, struct mq_client *c, const char *chan, const char *host)
{
	for (struct qmsg *m = s->head; m; m = m->next)
		for (unsigned i = 0, line = 0; i < m->nrcpt; i++) {
			const struct qrcpt *r = &m->r[i];
			if (!r->thr || strcmp(r->thr->name, chan) || strcmp(r->thr->host, host))
				continue;
			/* the seed's fields, from memory: file, line in group, offset, next, tries, state */
			say(c, "queue/%c/%s.c\t%u\t%lu\t%lld\t%u\t%s", m->id[strlen(m->id) - 1], m->id, line++,
			    (unsigned long)r->off, r->next, r->tries,
			    r->tag == RT_TRANSIT ? "in transit" : r->next > s->now ? "retry later" : "ready");
		}
}

#define MQ_PASS 256 /* a password, cut */
#define MQ_ERR 160  /* what was wrong with the auth file */

/* The password and attributes of the first of user, then user2 (unless NULL), that the auth file
 * gives the client's address: 1; else 0, with err saying what was wrong with the file ("" when
 * nothing was, or there is no file). */
static int auth_lookup(const struct sched *s, const struct mq_client *c, const char *user, const char *user2,
                       char pass[MQ_PASS], unsigned *attrs, char err[MQ_ERR])
{
	char text[MQAUTH_FILE_MAX];
	size_t len;
	err[0] = 0;
	if (!s->conf.authfile || mqauth_read(s->conf.authfile, geteuid(), text, sizeof text, &len, err, MQ_ERR) < 0)
		return 0;
	for (; user; user = user2, user2 = NULL)
		if (mqauth_lookup(text, len, user, c->ip, pass, MQ_PASS, attrs, err, MQ_ERR) == 1)
			return 1;
	return 0;
}

/* The index of w in list ("A\0B\0...\0"), or the number of words in it when w is not one (or
 * NULL). */
static int word_at(const char *list, const char *w)
{
	int k = 0;
	for (; *list && (!w || strcmp(w, list)); list += strlen(list) + 1)
		k++;
	return k;
}

static void command(struct sched *s, struct mq_client *c, char *line)
{
	char *w[4] = {NULL, NULL, NULL, NULL};
	int n = 0;
	/* the first four words, as strtok would cut them (without pulling strtok in) */
	for (char *p = line; n < 4;) {
		p += strspn(p, " \t");
		if (!*p)
			break;
		w[n++] = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = 0;
	}
	if (!n)
		return;
	enum { C_AUTH, C_SHOW, C_ETRN, C_KILL, C_QUIT };
	enum { A_SNMP, A_QUEUE, A_THREAD, A_MSG };
	int cmd = word_at("AUTH\0SHOW\0ETRN\0KILL\0QUIT\0", w[0]);
	int arg = word_at("SNMP\0QUEUE\0THREAD\0MSG\0", w[1]);
	int view = word_at("SHORT\0THREADS\0", w[2]); /* SHOW QUEUE's: 0, 1, else 2 */
	/* what the command needs of the peer's attributes: SHOW SNMP, SHOW QUEUE SHORT, SHOW QUEUE
	 * (anything else), SHOW THREAD, ETRN, KILL, whatever words follow */
	unsigned need = cmd == C_ETRN ? MQA_ETRN : cmd == C_KILL ? MQA_KILL : 0;
	if (cmd == C_SHOW)
		need = arg == A_SNMP ? MQA_SNMP : arg == A_THREAD ? MQA_TT : arg == A_QUEUE && w[2] ? (view ? MQA_TT : MQA_QQ) : 0;
	if ((c->attrs & need) != need) {
		reply(c, "-ERR not allowed\n");
		return;
	}
	const char *answer = "-ERR unknown command\n";
	char t[300];
	if (cmd == C_AUTH && n == 3) {
		char pass[MQ_PASS], err[MQ_ERR], want[33];
		unsigned attrs = 0;
		answer = "-LOGIN FAILED\n";
		if (!auth_lookup(s, c, w[1], NULL, pass, &attrs, err)) {
			if (err[0])
				log_msg(LOG_WARNING, NULL, "mailq authentication file %s", err);
		} else {
			mqauth_digest(c->challenge, pass, want);
			if (!strcmp(want, w[2])) {
				c->attrs = attrs;
				answer = "+OK\n";
			}
		}
	} else if (cmd == C_SHOW && ((n == 2 && arg == A_SNMP) || (n == 3 && arg == A_QUEUE && view < 2) ||
	                             (n == 4 && arg == A_THREAD))) {
		/* one answer frame for the three (n tells them apart) */
		reply(c, "+OK until LF.LF\n");
		if (n == 2)
			show_snmp(s, c);
		else if (n == 3)
			show_threads(s, c, view);
		else
			show_thread(s, c, w[2], w[3]);
		end(c);
		return;
	} else if ((cmd == C_ETRN && n == 2 && strlen(w[1]) < 250) ||
	           (cmd == C_KILL && n == 3 && arg == A_MSG && spool_id_valid(w[2]))) {
		/* ETRN is the same as sendmail -qR, KILL MSG as mailq --delete: a trigger line the
		 * loop reads next */
		snprintf(t, sizeof t, "%c%s", cmd == C_ETRN ? 'R' : 'D', w[n - 1]);
		answer = spool_trigger_send(&s->sp, t) == 0 ? "+OK\n" : "-ERR cannot reach the trigger\n";
	} else if (cmd == C_KILL && n == 4 && arg == A_THREAD) {
		answer = "-ERR KILL THREAD is not implemented (KILL MSG each message)\n";
	} else if (cmd == C_QUIT) {
		answer = "+OK\n";
		c->closing = 1;
	}
	reply(c, answer);
}

/* The seed's version 1 dump ("zmailer 1.0"): every message in memory as a vertex (key, file,
 * recipients not done and their offsets), then which keys each channel and host has. Written
 * raw (no dot-stuffing) and the connection closes after it. */
static void dump_v1(struct sched *s, struct mq_client *c)
{
	put(c, "version zmailer 1.0\nVertices:\n", 30);
	unsigned long key = 0;
	char line[600];
	for (struct qmsg *m = s->head; m; m = m->next, key++) {
		unsigned k = 0;
		for (unsigned i = 0; i < m->nrcpt; i++)
			k += m->r[i].thr != NULL;
		int n = snprintf(line, sizeof line, "%lu:\tqueue/%c/%s.c\t%u;", key, m->id[strlen(m->id) - 1], m->id, k);
		char sep = ' ';
		for (unsigned i = 0; i < m->nrcpt && n < (int)sizeof line - 16; i++)
			if (m->r[i].thr) {
				n += snprintf(line + n, sizeof line - (size_t)n, "%c%lu", sep, (unsigned long)m->r[i].off);
				sep = ',';
			}
		line[n++] = '\n';
		put(c, line, (size_t)n);
	}
	for (int hosts = 0; hosts < 2; hosts++) {
		put(c, hosts ? "Hosts:\n" : "Channels:\n", hosts ? 7 : 10);
		/* the thread's host or its channel name: one field, by its offset */
		size_t off = hosts ? offsetof(struct thread, host) : offsetof(struct thread, name);
#define WORD(t) (*(char *const *)((const char *)(t) + off))
		/* each channel (or thread's host) once, with the keys of its messages */
		for (unsigned b = 0; b <= s->tmask; b++)
			for (struct thread *t = s->thash[b]; t; t = t->hnext) {
				const char *word = WORD(t);
				int seen = 0;
				for (unsigned b2 = 0; b2 <= b && !seen; b2++)
					for (struct thread *u = s->thash[b2]; u && u != t && !seen; u = u->hnext)
						seen = !strcmp(WORD(u), word);
				if (seen)
					continue;
				int n = snprintf(line, sizeof line, "%s:\t", word);
				key = 0;
				for (struct qmsg *m = s->head; m; m = m->next, key++)
					for (unsigned i = 0; i < m->nrcpt; i++)
						if (m->r[i].thr && !strcmp(WORD(m->r[i].thr), word)) {
							if (n > (int)sizeof line - 24) {
								put(c, line, (size_t)n);
								n = 0;
							}
							n += snprintf(line + n, sizeof line - (size_t)n, ">%lu", key);
							break;
						}
				line[n++] = '\n';
				put(c, line, (size_t)n);
			}
	}
#undef WORD
	put(c, "End:\n", 5);
	if (c->cut)
		end(c); /* the reader sees it was cut */
	c->closing = 1;
}

/* The attributes a peer has without AUTH: on the UNIX socket root everything, another user what
 * the auth file gives its name (or "nobody") from 127.0.0.1, without a password; over TCP what
 * the "nobody" line gives the peer's address (the seed's default account). */
static unsigned peer_attrs(struct sched *s, struct mq_client *c)
{
	struct ucred cr = {0, (uid_t)-1, (gid_t)-1};
	socklen_t len = sizeof cr;
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	c->ip = 0x7f000001;
	if (getsockname(c->fd, (struct sockaddr *)&sin, &sl) == 0 && sin.sin_family == AF_INET) {
		sl = sizeof sin;
		if (getpeername(c->fd, (struct sockaddr *)&sin, &sl) < 0)
			return 0;
		const unsigned char *b = (const unsigned char *)&sin.sin_addr.s_addr; /* network order */
		c->ip = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	} else if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		return 0;
	}
	if (cr.uid == 0)
		return MQA_ALL;
	char pass[MQ_PASS], err[MQ_ERR];
	unsigned attrs = 0;
	struct passwd *pw = cr.uid != (uid_t)-1 ? getpwuid(cr.uid) : NULL;
	/* the peer's user name, then "nobody" */
	return auth_lookup(s, c, pw ? pw->pw_name : "nobody", pw ? "nobody" : NULL, pass, &attrs, err) ? attrs : 0;
}

static void accept_all(struct sched *s, struct sched_mq *q, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct mq_client *c = NULL;
		for (int i = 0; i < MQ_CLIENTS && !c; i++)
			if (q->c[i].fd < 0)
				c = &q->c[i];
		char *out = c ? malloc(MQ_OUT) : NULL;
		if (!out) {
			static const char busy[] = "-ERR too many clients\n";
			if (write(fd, busy, sizeof busy - 1) < 0) {
				/* nothing more to say to it */
			}
			close(fd);
			continue;
		}
		memset(c, 0, sizeof *c);
		c->fd = fd;
		c->out = out;
		c->last = s->now;
		c->attrs = peer_attrs(s, c);
		if (lfd == q->v1fd) {
			/* version 1 has no login: the peer's own right to see the threads decides */
			if (c->attrs & MQA_TT)
				dump_v1(s, c);
			else
				c->closing = 1;
			continue;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(c->challenge, sizeof c->challenge, "MAILQ-V2-CHALLENGE: %lld.%06ld.%lu", (long long)ts.tv_sec,
		         ts.tv_nsec / 1000, ++q->serial);
		say(c, "version zmailer 2.0\n%s", c->challenge); /* two lines; neither starts with a dot */
	}
}

static void client_io(struct sched *s, struct mq_client *c, short ev)
{
	if (ev & POLLOUT && c->outoff < c->outlen) {
		ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			drop(c);
			return;
		}
		if (w > 0) {
			c->outoff += (size_t)w;
			c->last = s->now;
		}
		if (c->outoff == c->outlen) {
			c->outoff = c->outlen = 0;
			if (c->closing) {
				drop(c);
				return;
			}
		}
	}
	if (!(ev & (POLLIN | POLLHUP | POLLERR)))
		return;
	ssize_t r = recv(c->fd, c->in + c->inlen, MQ_LINE - c->inlen, MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		drop(c);
		return;
	}
	if (r < 0)
		return;
	c->inlen += (size_t)r;
	c->last = s->now;
	char *nl;
	while (c->fd >= 0 && !c->closing && (nl = memchr(c->in, '\n', c->inlen))) {
		*nl = 0;
		if (nl > c->in && nl[-1] == '\r')
			nl[-1] = 0;
		size_t used = (size_t)(nl - c->in) + 1;
		command(s, c, c->in);
		memmove(c->in, c->in + used, c->inlen - used);
		c->inlen -= used;
	}
	if (c->inlen == MQ_LINE) {
		/* a line longer than any command: the client is not speaking the protocol */
		reply(c, "-ERR line too long\n");
		c->closing = 1;
		c->inlen = 0;
	}
}

size_t sched_mq_pollfds(struct sched *s, struct pollfd *p, size_t room)
{
	struct sched_mq *q = s->mq;
	size_t n = 0;
	if (!q || q->lfd < 0 || !room)
		return 0;
	p[n++] = (struct pollfd){q->lfd, POLLIN, 0};
	if (q->v1fd >= 0 && n < room)
		p[n++] = (struct pollfd){q->v1fd, POLLIN, 0};
	for (int i = 0; i < MQ_CLIENTS && n < room; i++) {
		struct mq_client *c = &q->c[i];
		if (c->fd < 0)
			continue;
		if (s->now - c->last > MQ_IDLE || (c->closing && c->outoff == c->outlen)) {
			drop(c);
			continue;
		}
		/* a client whose answers pile up is not read from: it costs no more than its buffer */
		short ev = c->closing || c->outlen > MQ_OUT / 2 ? 0 : POLLIN;
		if (c->outoff < c->outlen)
			ev |= POLLOUT;
		p[n++] = (struct pollfd){c->fd, ev, 0};
	}
	return n;
}

size_t sched_mq_nfds(const struct sched *s)
{
	return s->mq ? 2 + MQ_CLIENTS : 0;
}

void sched_mq_io(struct sched *s, struct pollfd *p, size_t n)
{
	struct sched_mq *q = s->mq;
	if (!q)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].revents)
			continue;
		if (p[i].fd == q->lfd || p[i].fd == q->v1fd) {
			accept_all(s, q, p[i].fd);
			continue;
		}
		for (int k = 0; k < MQ_CLIENTS; k++)
			if (q->c[k].fd == p[i].fd) {
				client_io(s, &q->c[k], p[i].revents);
				break;
			}
	}
}
#endif /* ENABLE_MAILQ_PROTO */
