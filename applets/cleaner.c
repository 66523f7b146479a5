/* cleaner: removes the leftovers of interrupted work from the spool (docs/spool.md 5, 7, 9):
 * temporary files older than 36 hours, message files whose control file was already removed,
 * and index links whose control file is gone. Safe to run while submit and the scheduler run
 * (cron: once a day). It never touches a message that is queued.
 *
 * usage: cleaner [-C FILE] [-a HOURS] [-v]
 * exit:  0 done; 75 the spool could not be opened; 78 configuration error; 64 usage. */
#include "common.h"
#include "log.h"
#include "spool.h"
#include "sysexits.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char cleaner_usage[] =
    "usage: cleaner [-C FILE] [-a HOURS] [-v]\n"
    "Remove leftovers of interrupted work from the spool: temporary files older than\n"
    "HOURS (default 36), message files whose control file is gone, stale index links.\n"
    "  -C FILE   configuration file (default /etc/spoolbox/spoolbox.conf)\n"
    "  -a HOURS  age after which a temporary file is abandoned\n"
    "  -v        say what was removed\n";

int cleaner_main(int argc, char **argv)
{
	const char *conf_path = NULL;
	long long max_age = SPOOL_TMP_MAX_AGE;
	int verbose = 0, c;
	while ((c = getopt(argc, argv, "C:a:v")) != -1) {
		switch (c) {
		case 'C': conf_path = optarg; break;
		case 'a': {
			char *end;
			long h = strtol(optarg, &end, 10);
			if (*end || h < 1)
				return applet_usage(cleaner_usage, 1);
			max_age = (long long)h * 3600;
			break;
		}
		case 'v': verbose = 1; break;
		default: return applet_usage(cleaner_usage, 1);
		}
	}
	if (optind != argc)
		return applet_usage(cleaner_usage, 1);
	struct conf conf;
	int r = applet_load_conf(&conf, conf_path);
	if (r)
		return r;
	applet_log_setup(&conf, NULL, 0, verbose);
	struct spool sp;
	const char *spool = conf_str(&conf, CK_SPOOL);
	if (spool_open(&sp, spool, 0, -1) < 0) {
		fprintf(stderr, "cleaner: cannot open the spool %s\n", spool);
		conf_free(&conf);
		return EX_TEMPFAIL;
	}
	struct spool_clean_counts n;
	spool_clean(&sp, (long long)time(NULL), max_age, &n);
	if (verbose)
		printf("cleaner: removed %u temporary, %u orphaned message, %u stale index files\n", n.tmp, n.orphan_msg,
		       n.stale_due);
	conf_free(&conf);
	return 0;
}
