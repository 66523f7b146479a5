/* Shared applet plumbing (see common.h). */
#include "common.h"
#include "log.h"
#include "sysexits.h"
#include <stdio.h>
#include <string.h>

int applet_load_conf(struct conf *c, const char *path)
{
	struct conf_stderr_ctx ctx = {0, "error"};
	conf_init(c);
	if (conf_load(c, path, conf_report_stderr, &ctx) > 0) {
		conf_free(c);
		return EX_CONFIG;
	}
	return 0;
}

int applet_unwritten(const char *name)
{
	fprintf(stderr, "spoolbox: the %s applet is not written yet in this version\n", name);
	return EX_UNAVAILABLE;
}

int applet_usage(const char *usage, int misuse)
{
	fputs(usage, misuse ? stderr : stdout);
	return misuse ? EX_USAGE : 0;
}

int applet_wants_help(int argc, char **argv)
{
	return argc > 1 && strcmp(argv[1], "--help") == 0;
}

void applet_log_init(const char *ident, const struct conf *c, int verbose)
{
	unsigned w = log_where_of(conf_str(c, CK_LOG));
	log_init(ident, verbose ? w | LOG_TO_STDERR : w, verbose ? LOG_DEBUG : LOG_INFO);
}
