/* hold: the transport agent of the hold channel (ZMailer's hold(8)). It keeps mail in the queue:
 * every recipient it is given is answered "retryat +SECONDS", so the scheduler looks at it again
 * only after that long (30 days unless -t says otherwise) and never delivers it. The recipient's
 * expiry (scheduler.conf) still applies.
 *
 * Holding and releasing a message by hand is mailq's (--hold, --release: docs/spool.md 12), which
 * takes the message out of the due index and needs no agent; this agent is for mail a
 * scheduler.conf routes to a hold channel.
 *
 * usage: hold [-C FILE] [-t SECONDS] [-m ID]
 *   -t SECONDS  how long to hold before the scheduler asks again (default 2592000 = 30 days)
 *   -m ID       by hand: print what would be reported for message ID, change nothing
 * config: SPOOL.
 * exit: 0 at EOF from the scheduler, 64 usage, 78 configuration errors, 75 spool unreadable. */
#include "common.h"
#include "log.h"
#include "spool.h"
#include "sysexits.h"
#include "ta.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char hold_usage[] = "usage: hold [-C FILE] [-t SECONDS] [-m ID]\n"
                          "The hold channel's transport agent: keeps every recipient queued (retryat).\n";

struct hold {
	long long seconds;
};

static int hold_job(void *ctx, struct ta_job *job)
{
	const struct hold *h = ctx;
	char diag[64];
	snprintf(diag, sizeof diag, "+%lld held", h->seconds);
	for (size_t i = 0; i < job->n; i++)
		ta_report(job, job->idx[i], TA_RETRYAT, "delayed", "4.3.2", diag, NULL);
	return 0;
}

int hold_main(int argc, char **argv)
{
	const char *cfile = NULL, *debug_id = NULL;
	struct hold h = {30LL * 86400};
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "-C"))
			cfile = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "-m"))
			debug_id = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "-t")) {
			char *end;
			h.seconds = strtoll(argv[++i], &end, 10);
			if (*end || h.seconds < 1 || h.seconds > 10LL * 365 * 86400)
				return applet_usage(hold_usage, 1);
		} else
			return applet_usage(hold_usage, 1);
	}
	struct conf c;
	int rc = applet_load_conf(&c, cfile);
	if (rc)
		return rc;
	applet_log_setup(&c, NULL, 0, 0);
	struct spool sp;
	if (spool_open(&sp, conf_str(&c, CK_SPOOL), 0, -1) < 0) {
		conf_free(&c);
		return EX_TEMPFAIL;
	}
	conf_free(&c);
	struct ta_ops ops = {hold_job, NULL, NULL, NULL, 0};
	return ta_main_loop(&sp, NULL, &ops, &h, debug_id);
}
