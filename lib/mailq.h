/* mailq's view of the spool (docs/man/mailq.1): every message is read from disk one at a time
 * and handed to a callback, so listing a queue of any size takes the memory of its largest
 * control file, never of the queue. Only envelopes are read (control files, and the envelope
 * block of a message still in incoming/); a message body is never opened.
 *
 * The formats (the Postfix listing, -v, --json, -s) are in mailq_fmt.c; they print through a
 * caller's FILE and keep their counters in the caller's struct mq_out. */
#ifndef SPOOLBOX_MAILQ_H
#define SPOOLBOX_MAILQ_H
#include "spool.h"
#include <stdio.h>

enum mq_where { MQ_INCOMING, MQ_QUEUE };

/* One message as mailq sees it. m is NULL when the envelope could not be read or parsed:
 * damage then says why (file, line and reason). */
struct mq_item {
	char id[SPOOL_ID_MAX];
	enum mq_where where;
	int held;                   /* a hold index entry exists (docs/spool.md 12) */
	const struct spool_msg *m;
	char damage[256];
};

/* Return non-zero to stop the walk (that value is returned). */
typedef int mq_fn(void *ctx, const struct mq_item *it);

/* Every message: incoming/ first, then queue/0..Z/. Returns 0, fn's non-zero value, or -1 when
 * a directory could not be read (errno set: EACCES for a user the spool keeps out). */
int mq_walk(const struct spool *sp, mq_fn *fn, void *ctx);
/* One message by id (fn NULL: only whether it is there): 0 after fn ran, 1 when no such message
 * is queued, -1 for an invalid id. */
int mq_find(const struct spool *sp, const char *id, mq_fn *fn, void *ctx);

/* Output state: the stream, the time "now", and what the formats count. */
struct mq_out {
	FILE *f;
	long long now;
	int verbose;                 /* -v: every recipient with every attempt */
	unsigned long count;         /* messages listed */
	unsigned long long bytes;
	unsigned long deferred, held, transit, damaged;
	long long oldest;            /* earliest arrival, 0 = none */
	long long last_err_time;
	char last_err[SPOOL_TEXT_MAX + 300];
};

void mq_out_init(struct mq_out *o, FILE *f, long long now);
/* The Postfix `mailq` listing: a message (the heading line before the first), then the end. */
void mq_postfix_msg(struct mq_out *o, const struct mq_item *it);
void mq_postfix_end(struct mq_out *o);
/* One JSON object on one line. */
void mq_json_msg(struct mq_out *o, const struct mq_item *it);
/* -s: counts only; mq_summary_print writes the one line. */
void mq_summary_add(struct mq_out *o, const struct mq_item *it);
void mq_summary_print(struct mq_out *o);
/* Writes s as a JSON string (quotes included), valid for any bytes (see mailq.1). */
void mq_json_str(FILE *f, const char *s);
#endif
