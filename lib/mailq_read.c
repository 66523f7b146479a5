/* mailq's streaming read of the spool: one message loaded, shown and freed at a time, so the
 * memory needed does not grow with the queue (issue 10 point 3). A file that vanishes between
 * the directory listing and the read was delivered or picked up meanwhile and is skipped; one
 * that cannot be parsed is reported as damaged with the parser's reason, never skipped. */
#include "mailq.h"
#include "qctl.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A message still in incoming/: its envelope block is all there is to show. 1: gone. */
static int load_incoming(const struct spool *sp, struct mq_item *it, struct spool_msg *m)
{
	char path[SPOOL_PATH_MAX], err[200];
	if (spool_path_incoming(sp, it->id, path, sizeof path) < 0)
		return 1;
	struct buf b;
	buf_init(&b, SPOOL_CTL_MAX);
	const char *why = err; /* what is damaged, or NULL */
	int gone = 0;
	if (spool_env_read(path, &b) < 0) {
		int e = errno;
		gone = e == ENOENT;
		why = e == EINVAL || e == EFBIG ? "no complete envelope block" : strerror(e);
	} else if (spool_msg_parse(b.p, b.len, 1, m, err, sizeof err) >= 0) {
		it->m = m;
		why = NULL;
	}
	buf_free(&b);
	if (why && !gone)
		str_fmt(it->damage, sizeof it->damage, "incoming/%s: %s", it->id, why);
	return gone;
}

static int load_queued(const struct spool *sp, struct mq_item *it, struct spool_msg *m)
{
	int fd;
	char err[sizeof it->damage];
	if (spool_ctl_load(sp, it->id, 1, m, &fd, err, sizeof err) < 0) {
		char path[SPOOL_PATH_MAX];
		struct stat st; /* stat: the effective ids, as faccessat(F_OK, AT_EACCESS) */
		if (spool_path_ctl(sp, it->id, path, sizeof path) == 0 && stat(path, &st) < 0 && errno == ENOENT)
			return 1;
		str_lcpy(it->damage, err, sizeof it->damage);
		return 0;
	}
	close(fd);
	it->m = m;
	it->held = qctl_held(sp, it->id);
	return 0;
}

/* Loads one message, calls fn, frees it. 1 when the message is not there (any more). */
static int show(const struct spool *sp, const char *id, enum mq_where where, mq_fn *fn, void *ctx, int *fr)
{
	struct mq_item it;
	struct spool_msg m;
	memset(&it, 0, sizeof it);
	str_lcpy(it.id, id, sizeof it.id);
	it.where = where;
	int gone = where == MQ_INCOMING ? load_incoming(sp, &it, &m) : load_queued(sp, &it, &m);
	if (gone)
		return 1;
	*fr = fn ? fn(ctx, &it) : 0;
	if (it.m)
		spool_msg_free(&m);
	return 0;
}

/* The walk itself is the scheduler's (spool_incoming_each, spool_queue_each): mailq sees the
 * same entries as valid ids that pick-up and the full scan do. */
struct walk {
	const struct spool *sp;
	enum mq_where where;
	mq_fn *fn;
	void *ctx;
};

static int walk_one(void *ctx, const char *id, long long t)
{
	struct walk *w = ctx;
	int r = 0;
	(void)t;
	show(w->sp, id, w->where, w->fn, w->ctx, &r);
	return r;
}

/* 0 when dir is readable with the effective ids (a user's mailq reads with its setgid group)
 * or missing; else -1 with errno, before the walk would log the refusal: a user the spool keeps
 * out must hear so from mailq, not see an empty queue or a log line. Opening "DIR/." asks what
 * faccessat(DIR, R_OK | X_OK, AT_EACCESS) asks (its lookup needs x, the open r, with the
 * effective ids), without musl's faccessat and the pipe2 it brings (0.7 KiB). */
static int readable(const struct spool *sp, const char *sub)
{
	char dir[SPOOL_PATH_MAX];
	if (str_fmt(dir, sizeof dir, "%s/%s/.", sp->dir, sub) < 0)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno != ENOENT ? -1 : 0;
}

int mq_walk(const struct spool *sp, mq_fn *fn, void *ctx)
{
	struct walk w = {sp, MQ_INCOMING, fn, ctx};
	if (readable(sp, "incoming") < 0)
		return -1;
	int r = spool_incoming_each(sp, walk_one, &w);
	if (r)
		return r;
	if (readable(sp, "queue") < 0)
		return -1;
	w.where = MQ_QUEUE;
	return spool_queue_each(sp, walk_one, &w);
}

int mq_find(const struct spool *sp, const char *id, mq_fn *fn, void *ctx)
{
	if (!spool_id_valid(id))
		return -1;
	int r = 0;
	/* queued first: a message moves from incoming/ to queue/, so looking in this order can
	 * only miss one that is being picked up right now, and that one is then looked for again */
	for (int k = 0; k < 3; k++)
		if (show(sp, id, k == 1 ? MQ_INCOMING : MQ_QUEUE, fn, ctx, &r) == 0)
			return 0;
	return 1;
}
