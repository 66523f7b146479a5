/* Enqueueing one message as submit does it, whatever the message came from (stdin, an SMTP
 * dialogue): the envelope (sender precedence, recipient parsing, routing, de-duplication,
 * limits), the header rules (-t recipients, Bcc removal, bare-address qualification, From
 * rewriting, the added Received/Date/Message-ID/From fields), line-ending normalisation, the
 * size limit, and the spool writer (docs/spool.md 5). docs/submit.md is the reference for every
 * rule here.
 *
 * Errors are returned as sysexits codes with a one-line reason in e->why; nothing here exits.
 * Nothing is visible in the queue before enq_finish() returns 0. */
#ifndef SPOOLBOX_ENQUEUE_H
#define SPOOLBOX_ENQUEUE_H
#include "addr.h"
#include "header.h"
#include "route.h"
#include "spool.h"

struct enq_conf {
	const struct spool *sp;
	const char *hostname;      /* MYHOSTNAME (or uname) */
	const char *qualify;       /* QUALIFYDOMAIN (or hostname) */
	const char *allmailfrom;   /* "" = none (never NULL) */
	const char *rewrite_from;  /* "" = none (never NULL) */
	long long sizelimit;       /* 0 = none */
	long long minfree;         /* QUEUE_MINFREE for this submitter (root: half), 0 = none */
	unsigned maxrcpt;
	long uid;
	/* raise/lower the submit group around the spool steps (docs/spool.md 8); may be NULL */
	void (*priv)(int raise);
	/* the arrays last: one-byte displacements (docs/size.md) */
	char user[64];             /* the submitting user's login name */
	char fullname[256];        /* -F, else the passwd gecos name, else "" */
	struct route_conf rc;
};

struct enq {
	const struct enq_conf *c;
	size_t rcpt_cap;
	int t_mode;                /* -t: recipients from the header */
	int body8_declared;        /* -B 8BITMIME or BODY=8BITMIME */
	unsigned notify;           /* -N for recipients added from the header */
	int writing;               /* w is open */
	int err;                   /* the first error (sysexits code), 0 while all is well */
	const char *with;          /* its "with" protocol (SMTP, ESMTP) or NULL */
	long long size;            /* normalised message bytes so far */
	struct spool_msg m;        /* envelope; m.rcpt grows as recipients are added */
	struct msgin in;
	struct hdr_reader hr;
	char received[300];        /* the "from" part of our Received: line ("" for a local user) */
	char why[600];
	/* last, so that enq_init() need not touch its 16 KiB buffer (every page touched costs a
	 * page fault, a noticeable part of a submission) */
	struct spool_writer w;
};

/* Starts a message. dot_end: a "." line ends the input (stdin without -i). */
void enq_init(struct enq *e, const struct enq_conf *c, int dot_end, int t_mode);
/* Releases everything; removes a temporary file that was not committed. */
void enq_free(struct enq *e);
/* Sets the envelope sender by the precedence of docs/submit.md: arg NULL (none given), "" or
 * "<>" (the null sender), or an address (bare ones are qualified). ALLMAILFROM overrides any
 * non-null sender. Returns 0 or EX_DATAERR. */
int enq_sender(struct enq *e, const char *arg);
/* Adds the recipients of an address list (a command-line argument). Returns 0 or EX_DATAERR. */
int enq_add_rcpts(struct enq *e, const char *list, const char *where);
/* Adds one parsed recipient with its DSN parameters. Returns 0 or EX_DATAERR. */
int enq_add_rcpt(struct enq *e, const struct addr *a, unsigned notify, const char *orcpt);
/* Routes a recipient as enq_add_rcpt does (route_addr; without local delivery a bare local part
 * is qualified with c->qualify first). 0, or -1 when a field does not fit. */
int enq_route(const struct enq_conf *c, const struct addr *a, struct route *r);
/* Message bytes as read (any line endings). Returns 0, or EX_CANTCREAT (size limit),
 * EX_DATAERR (header section too large, no recipients with -t, bad -t address) or EX_TEMPFAIL
 * (spool). After an error, further calls return the same error. */
int enq_feed(struct enq *e, const char *p, size_t n);
/* 1 when the input's end-of-message line was seen (dot_end). */
int enq_input_done(const struct enq *e);
/* End of input: writes what is left and makes the message durable and visible (E2..E4).
 * Returns 0 (e->m.id is the id) or an error as enq_feed. */
int enq_finish(struct enq *e);
/* The temporary file being written ("" when none), for a signal handler's unlink. */
const char *enq_tmppath(const struct enq *e);
#endif
