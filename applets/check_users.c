/* spoolbox --check: every user= and group= of scheduler.conf names an account that exists (or
 * is a number). The scheduler starts each transport agent as the clause's user; a name that
 * does not resolve stops every agent of that clause, and mail piles up with nothing else said
 * (issue 11 point 10). The syntax of the file is scheduler_check's; this looks only at names. */
#include "common.h"
#include "schedconf.h"
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>

static int numeric(const char *s)
{
	char *end;
	strtol(s, &end, 10);
	return *s && !*end;
}

int schedconf_users_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	struct schedconf sc;
	schedconf_init(&sc);
	int errors = 0;
	/* a file with syntax errors is scheduler_check's to report */
	if (schedconf_load(&sc, conf_str(c, CK_SCHEDULER_CONF), 1, NULL, NULL) == 0) {
		for (size_t i = 0; i < sc.n; i++) {
			const struct sc_clause *cl = &sc.cl[i];
			if (cl->user && !numeric(cl->user) && !getpwnam(cl->user)) {
				conf_reportf(report, ctx, sc.file, cl->line,
				             "user=%s: no such user, so no transport agent of this clause can start; fix: "
				             "create the user, or write its number (user=0)", cl->user);
				errors++;
			}
			if (cl->group && !numeric(cl->group) && !getgrnam(cl->group)) {
				conf_reportf(report, ctx, sc.file, cl->line,
				             "group=%s: no such group, so no transport agent of this clause can start; fix: "
				             "create the group, or write its number", cl->group);
				errors++;
			}
		}
	}
	schedconf_free(&sc);
	return errors;
}
