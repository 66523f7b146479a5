/* newaliases: checks the aliases file. spoolbox reads /etc/aliases directly at every delivery
 * (there is no database to rebuild), so this applet only parses the file and reports every
 * error as file:line: reason, the way `spoolbox --check` does (its checker is here too).
 *
 * usage: newaliases [-C FILE]
 * config: ALIASES ROOT MAILBOX_STYLE
 * exit:  0 the file is valid (or absent); 78 (EX_CONFIG) errors were found; 64 usage. */
#include "config_default.h"
#if ENABLE_LOCAL /* the whole file: local delivery (aliases) is a build option */
#include "aliases.h"
#include "common.h"
#include "sysexits.h"
#include "util.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char newaliases_usage[] =
    "usage: newaliases [-C FILE]\n"
    "Check the aliases file (ALIASES, default /etc/aliases) and report every error as\n"
    "file:line: reason. spoolbox reads the file directly: nothing needs rebuilding.\n"
    "  -C FILE  configuration file (default /etc/spoolbox/spoolbox.conf)\n";

/* The --check checker: the aliases file, the ROOT setting and MAILBOX_STYLE. */
int aliases_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	struct aliases a;
	int errors = aliases_load(&a, conf_str(c, CK_ALIASES), report, ctx);
	aliases_free(&a);
	const char *root = conf_str(c, CK_ROOT);
	char err[300];
	if (*root && aliases_targets(root, strlen(root), 0, NULL, NULL, err, sizeof err) < 0) {
		errors += conf_report_key(c, CK_ROOT, report, ctx, "ROOT: %s", err);
	}
	const char *style = conf_str(c, CK_MAILBOX_STYLE);
	if (strcmp(style, "mbox") && strcmp(style, "maildir")) {
		errors += conf_report_key(c, CK_MAILBOX_STYLE, report, ctx, "MAILBOX_STYLE must be maildir or mbox");
	}
	return errors;
}

int newaliases_main(int argc, char **argv)
{
	const char *conf_path = NULL;
	int c;
	while ((c = getopt(argc, argv, "C:")) != -1) {
		if (c != 'C')
			return applet_usage(newaliases_usage, 1);
		conf_path = optarg;
	}
	if (optind != argc)
		return applet_usage(newaliases_usage, 1);
	struct conf conf;
	int rc = applet_load_conf(&conf, conf_path);
	if (rc)
		return rc;
	const char *path = conf_str(&conf, CK_ALIASES);
	struct conf_stderr_ctx ctx = {0, "error"};
	struct aliases a;
	int errors = aliases_load(&a, path, conf_report_stderr, &ctx);
	if (!errors && access(path, F_OK) < 0)
		printf("newaliases: %s: no aliases file (none needed)\n", path);
	else if (!errors)
		printf("newaliases: %s: %zu aliases\n", path, a.n);
	else
		fprintf(stderr, "newaliases: %s: %d error%s\n", path, errors, errors == 1 ? "" : "s");
	aliases_free(&a);
	conf_free(&conf);
	return errors ? EX_CONFIG : 0;
}
#endif /* ENABLE_LOCAL */
