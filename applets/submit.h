/* What the two files of the submit applet share: submit.c (command line, privileges, -bm and
 * the other modes) and submit_smtp.c (-bs). */
#ifndef SPOOLBOX_APPLETS_SUBMIT_H
#define SPOOLBOX_APPLETS_SUBMIT_H
#include "conf.h"
#include "enqueue.h"
#include "spool.h"

/* Everything submit needs to know besides the options. */
struct submit_ctx {
	struct conf conf;
	struct spool sp;
	struct enq_conf ec;
	char hostname[256];
	const char *ident;
};

/* Opens (as root: creates) the spool with the submit group raised; returns 0 or EX_TEMPFAIL. */
int submit_open_spool(struct submit_ctx *x);
/* The one log line of a message: queued (r, enq_finish's result, is 0), or why it was not. */
void submit_log(const struct enq *e, int r);
/* Holds SIGTERM/SIGINT/SIGHUP while a commit runs, so the reported outcome is the true one. */
void submit_block_signals(int block);
/* The message a signal must clean up after (NULL: none). */
void submit_set_current(struct enq *e);
/* -bs. Returns the exit code. */
int submit_smtp(struct submit_ctx *x);
#endif
