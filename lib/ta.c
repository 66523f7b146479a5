/* The transport-agent side of the scheduler protocol (see ta.h, docs/spool.md 11). */
#include "ta.h"
#include "fileio.h"
#include "io.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TA_LINE_MAX SPOOL_JOB_LINE_MAX
/* The first read of a job's message file (ops->envelope_only): the envelope block and, for most
 * messages an agent relays, the whole message. */
#define TA_HEAD 16384

/* The protocol's two streams (lib/io.h): job lines on fd 0, read a buffer at a time (a byte at a
 * time cost a system call per byte: about 30 per job), and reports on fd 1, buffered until the
 * job's last report, which leaves in one write with the "#hungry" after it (the scheduler then
 * reads both in one turn and removes a finished message without syncing its control file first).
 * stdio is not used, so nothing an agent's child could inherit sits in a FILE. */
struct ta_chan {
	long pid;
	size_t reported; /* reports of the current job written so far */
	struct io in, out;
	char head[TA_HEAD];
};

/* 1 when the scheduler has closed its end: it is stopping, or it died. A job line it wrote
 * before is not started then (issue 11 point 1): the message in progress was finished, and a
 * scheduler that is gone cannot record another result, so the restarted one would deliver it
 * again. Its recipients stay T and come back as "lost" (not attempted). The socket says so by
 * POLLRDHUP even while job lines are still unread; a pipe (by hand, tests) by POLLHUP. */
static int scheduler_gone(void)
{
	struct pollfd p = {0, POLLIN | POLLRDHUP, 0};
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Waits for the next line from the scheduler when none is buffered: one poll(), which also
 * says whether the scheduler's end is closed (the check above, for free) and serves as the
 * agent's idle timer (ops->wait_ms). Returns 1 when the scheduler is gone, else 0. noinline, as
 * job_load_msg: out of ta_main_loop's loop, which then keeps its values in fewer registers (-82
 * bytes for the two). */
__attribute__((noinline)) static int wait_line(struct ta_chan *ch, const struct ta_ops *ops, void *ctx)
{
	if (io_pending(&ch->in))
		return -1; /* a line is buffered: the caller asks scheduler_gone() before starting it */
	int ms = ops->wait_ms ? ops->wait_ms(ctx) : -1;
	for (;;) {
		struct pollfd p = {0, POLLIN | POLLRDHUP, 0};
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 && ops->waited) {
			ops->waited(ctx);
			ms = -1;
			continue;
		}
		return r > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
	}
}

/* The streams on fd 0 and 1, without time limits: the scheduler is a local peer that either
 * answers or closes. Allocated, since two buffers are too much for some agents' stacks. */
static struct ta_chan *chan_new(void)
{
	struct ta_chan *ch = malloc(sizeof *ch);
	if (!ch)
		return NULL;
	io_init_fd(&ch->in, 0, 0);
	io_init_fd(&ch->out, 1, 0);
	ch->pid = (long)getpid();
	return ch;
}

static int done_tag(char t)
{
	return t == RT_DELIVERED || t == RT_REPORTED || t == RT_FAILED || t == RT_SUCCESS;
}

/* Loads the job's control file and picks its recipients. debug: every undone recipient of the
 * channel, whatever its host. */
static int job_load(struct ta_job *job, const char *channel, int debug, long me)
{
	char err[256];
	int fd;
	if (spool_ctl_load(job->sp, job->id, 1, &job->msg, &fd, err, sizeof err) < 0) {
		log_msg(LOG_ERR, job->id, "cannot read the control file: %s", err);
		return -1;
	}
	close(fd);
	job->idx = calloc(job->msg.nrcpt ? job->msg.nrcpt : 1, sizeof *job->idx);
	if (!job->idx) {
		spool_msg_free(&job->msg);
		return -1;
	}
	job->n = 0;
	for (size_t i = 0; i < job->msg.nrcpt; i++) {
		const struct spool_rcpt *r = &job->msg.rcpt[i];
		if (channel && strcmp(r->channel, channel) != 0)
			continue;
		if (debug ? (done_tag(r->tag) || (job->host[0] && strcmp(r->host, job->host)))
		          : (r->tag != RT_TRANSIT || r->pid != me ||
		             (strcmp(job->host, SPOOL_ANY_HOST) && strcmp(r->host, job->host))))
			continue;
		job->idx[job->n++] = i;
	}
	return 0;
}

long ta_pick(const struct spool_msg *m, const char *list, const char *channel, const char *host, size_t *idx)
{
	size_t n = 0;
	for (const char *p = list;; p++) {
		char *e;
		unsigned long off = strtoul(p, &e, 10);
		size_t i = 0;
		while (i < m->nrcpt && (unsigned long long)m->rcpt[i].off != off)
			i++;
		if (e == p || *p < '0' || *p > '9' || (*e != ',' && *e) || n >= m->nrcpt || i >= m->nrcpt ||
		    (channel && strcmp(m->rcpt[i].channel, channel)) ||
		    (strcmp(host, SPOOL_ANY_HOST) && strcmp(m->rcpt[i].host, host)))
			return -1;
		idx[n++] = i;
		if (!*e)
			return (long)n;
		p = e;
	}
}

/* The job line named its recipients by their offsets (list): the envelope is parsed from the
 * message file's first bytes, the same envelope block the control file starts with (docs/spool.md
 * 3: the control file is a copy of it; what differs later are the status fields and the records
 * after the block, which an envelope_only agent does not read). The descriptor stays open for
 * the agent. 1: not usable this way (no end of block in the first read, a mismatch): the
 * caller reads the control file, which always works. */
__attribute__((noinline)) static int job_load_msg(struct ta_job *job, const char *channel, const char *list)
{
	char err[160], *h = job->chan->head;
	int fd = spool_msg_open(job->sp, job->id, -1);
	if (fd < 0)
		return 1;
	ssize_t got;
	do
		got = read(fd, h, TA_HEAD);
	while (got < 0 && errno == EINTR);
	/* the block ends at the first "." line (no record is one) */
	const char *end = got > 0 ? spool_env_end(h, (size_t)got) : NULL;
	if (!end || spool_msg_parse(h, (size_t)(end - h), 1, &job->msg, err, sizeof err) < 0) {
		close(fd);
		return 1;
	}
	job->idx = calloc(job->msg.nrcpt ? job->msg.nrcpt : 1, sizeof *job->idx);
	long n = job->idx && !strcmp(job->msg.id, job->id) ? ta_pick(&job->msg, list, channel, job->host, job->idx) : -1;
	job->n = n > 0 ? (size_t)n : 0;
	if (n <= 0) {
		free(job->idx);
		job->idx = NULL;
		job->n = 0;
		spool_msg_free(&job->msg);
		close(fd);
		return 1;
	}
	job->msg_fd = fd;
	job->head = h;
	job->headlen = (size_t)got;
	return 0;
}

int ta_msg_fd(struct ta_job *job)
{
	if (job->msg_fd <= 0)
		job->msg_fd = spool_msg_open(job->sp, job->id, -1);
	return job->msg_fd;
}

ssize_t ta_msg_pread(struct ta_job *job, void *buf, size_t n, off_t off)
{
	size_t have = 0;
	if (job->head && off >= 0 && (size_t)off < job->headlen) {
		have = job->headlen - (size_t)off < n ? job->headlen - (size_t)off : n;
		memcpy(buf, job->head + off, have);
		/* a first read that came back short had the whole file */
		if (have == n || job->headlen < TA_HEAD)
			return (ssize_t)have;
	}
	ssize_t r = pread(ta_msg_fd(job), (char *)buf + have, n - have, off + (off_t)have);
	return r < 0 ? (have ? (ssize_t)have : -1) : (ssize_t)have + r;
}

static void job_free(struct ta_job *job)
{
	if (job->msg_fd > 0)
		close(job->msg_fd);
	job->msg_fd = -1;
	job->head = NULL;
	free(job->idx);
	job->idx = NULL;
	spool_msg_free(&job->msg);
}

static int run_debug(const struct spool *sp, const char *channel, const struct ta_ops *ops, void *ctx, const char *id)
{
	struct ta_job job;
	memset(&job, 0, sizeof job);
	job.sp = sp;
	if (!spool_id_valid(id)) {
		fprintf(stderr, "not a message id: %s\n", id);
		return 64;
	}
	str_lcpy(job.id, id, sizeof job.id);
	struct ta_chan *ch = chan_new();
	if (!ch)
		return 71;
	job.chan = ch;
	if (job_load(&job, channel, 1, ch->pid) < 0) {
		free(ch);
		return 66;
	}
	/* one job per distinct host, as the scheduler would hand them out */
	size_t total = job.n;
	size_t *all = job.idx;
	for (size_t i = 0; i < total; i++) {
		if (all[i] == (size_t)-1)
			continue;
		const char *host = job.msg.rcpt[all[i]].host;
		size_t *mine = calloc(total, sizeof *mine), n = 0;
		if (!mine)
			break;
		for (size_t k = i; k < total; k++)
			if (all[k] != (size_t)-1 && strcmp(job.msg.rcpt[all[k]].host, host) == 0) {
				mine[n++] = all[k];
				if (k != i)
					all[k] = (size_t)-1;
			}
		str_lcpy(job.host, host, sizeof job.host);
		ch->reported = 0;
		job.idx = mine;
		job.n = n;
		ops->job(ctx, &job);
		io_flush(&ch->out);
		free(mine);
	}
	job.idx = all;
	job_free(&job);
	free(ch);
	return 0;
}

int ta_main_loop(const struct spool *sp, const char *channel, const struct ta_ops *ops, void *ctx, const char *debug_id)
{
	if (debug_id)
		return run_debug(sp, channel, ops, ctx, debug_id);
	char line[TA_LINE_MAX];
	struct ta_chan *ch = chan_new();
	if (!ch) {
		log_msg(LOG_ERR, NULL, "out of memory for the scheduler's streams");
		return 71;
	}
	for (;;) {
		/* the last job's reports leave with it, in one write */
		if (io_puts(&ch->out, "#hungry\n") < 0 || io_flush(&ch->out) < 0)
			break; /* the scheduler is gone: nothing can be reported any more */
		int gone = wait_line(ch, ops, ctx);
		ssize_t n = io_getline(&ch->in, line, sizeof line);
		if (n < 0 && errno == EMSGSIZE) {
			log_msg(LOG_WARNING, NULL, "ignored an overlong line from the scheduler");
			continue;
		}
		if (n <= 0)
			break; /* EOF: the scheduler wants us gone */
		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (strcmp(line, "#idle") == 0) {
			if (ops->idle)
				ops->idle(ctx);
			continue;
		}
		char *tab = strchr(line, '\t'), *list = tab ? strchr(tab + 1, '\t') : NULL;
		if (list)
			*list++ = 0;
		struct ta_job job;
		memset(&job, 0, sizeof job);
		job.sp = sp;
		job.chan = ch;
		if (!tab || (size_t)(tab - line) >= sizeof job.id || strlen(tab + 1) >= sizeof job.host) {
			log_msg(LOG_WARNING, NULL, "ignored a malformed job line from the scheduler");
			continue;
		}
		*tab = 0;
		if (!spool_id_valid(line)) {
			log_msg(LOG_WARNING, NULL, "ignored a job with a malformed id");
			continue;
		}
		str_lcpy(job.id, line, sizeof job.id);
		str_lcpy(job.host, tab + 1, sizeof job.host);
		if (gone > 0 || (gone < 0 && scheduler_gone())) {
			log_msg(LOG_NOTICE, job.id, "the scheduler has gone: this job and any after it are not started");
			break;
		}
		int lr = list && *list && ops->envelope_only ? job_load_msg(&job, channel, list) : 1;
		if (lr > 0 && job_load(&job, channel, 0, ch->pid) < 0)
			continue;
		ch->reported = 0;
		if (job.n)
			ops->job(ctx, &job);
		else
			log_msg(LOG_DEBUG, job.id, "job for %s has no recipients marked for this agent", job.host);
		job_free(&job);
	}
	free(ch);
	return 0;
}

void ta_report(const struct ta_job *job, size_t idx, const char *status, const char *action,
               const char *enh, const char *diag, const char *remote)
{
	const struct spool_rcpt *r = &job->msg.rcpt[idx];
	char a[SPOOL_ADDR_MAX + 1], act[16], e[16], d[SPOOL_TEXT_MAX + 1], rem[256], st[12], line[2 * SPOOL_TEXT_MAX + SPOOL_ADDR_MAX + 400];
	spool_clean_copy(a, sizeof a, r->addr);
	spool_clean_copy(act, sizeof act, action);
	spool_clean_copy(e, sizeof e, enh && *enh ? enh : "-");
	spool_clean_copy(d, sizeof d, diag);
	spool_clean_copy(rem, sizeof rem, remote);
	spool_clean_copy(st, sizeof st, status);
	for (char *p = st; *p; p++)
		if (*p == ' ')
			*p = '_';
	snprintf(line, sizeof line, "%s/%lld\trfc822;%s\001%s\001%s\001%s\001%s\t%s %s\n", job->id, (long long)r->off, a,
	         act, e, d, rem, st, d);
	size_t n = strlen(line);
	if (line[n - 1] != '\n')
		line[n - 1] = '\n';
	/* every report but the job's last leaves at once, so an agent killed in the middle of a
	 * long job repeats only the recipient it was on; the last one waits for the "#hungry"
	 * that follows it at once (ta_main_loop) */
	struct ta_chan *ch = job->chan;
	if (!ch) {
		/* a job made by hand outside ta_main_loop (errormail -m) */
		fio_write_all(1, line, n, "standard output");
		return;
	}
	if (io_write(&ch->out, line, n) < 0 || (++ch->reported < job->n && io_flush(&ch->out) < 0))
		log_msg(LOG_ERR, job->id, "writing a report to the scheduler: %s", strerror(errno));
}

void ta_log_delivery(const struct ta_job *job, size_t idx, const char *status, const char *relay,
                     const char *extra, const char *enh, const char *text)
{
	/* Postfix's shape, which pflogsumm and other summarisers count (docs/logging.md) */
	const char *word = !strncmp(status, TA_OK, 2) ? "sent" : !strcmp(status, TA_ERROR) ? "bounced" : "deferred";
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* the age in hundredths of a second, rounded, from whole numbers: log_msg takes no double
	 * (lib/printf_like.h) */
	long long cs = (long long)(ts.tv_sec - job->msg.arrival) * 100 + (ts.tv_nsec + 5000000) / 10000000;
	if (cs < 0)
		cs = 0;
	log_msg(LOG_INFO, job->id, "to=<%s>, relay=%s%s, delay=%lld.%02d, dsn=%s, status=%s (%s)", job->msg.rcpt[idx].addr,
	        relay && *relay ? relay : "none", extra ? extra : "", cs / 100, (int)(cs % 100), enh && *enh ? enh : "-",
	        word, text ? text : "");
}
