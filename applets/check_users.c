/* spoolbox --check: every user= and group= of scheduler.conf names an account that exists (or
 * is a number). The scheduler starts each transport agent as the clause's user; a name that
 * does not resolve stops every agent of that clause, and mail piles up with nothing else said
 * (issue 11 point 10). user=$AGENT_USER (the built-in policy's) never stops them: a missing
 * AGENT_USER is a warning that the agents run as root (issue 9 point 9). The syntax of the file
 * is scheduler_check's; this looks only at names. */
#include "common.h"
#include "schedconf.h"
#include "agentuser.h"
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

static int numeric(const char *s)
{
	char *end;
	strtol(s, &end, 10);
	return *s && !*end;
}

/* One text for both: "user" or "group", the name, and what the fix adds */
static const char no_such[] = "%s=%s: no such %s, so no transport agent of this clause can start; fix: create the "
                              "%s, or write its number%s";

int schedconf_users_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	struct schedconf sc;
	schedconf_init(&sc);
	int errors = 0, said = 0;
	/* a file with syntax errors is scheduler_check's to report */
	if (schedconf_load(&sc, conf_str(c, CK_SCHEDULER_CONF), 1, NULL, NULL) == 0) {
		for (size_t i = 0; i < sc.n; i++) {
			const struct sc_clause *cl = &sc.cl[i];
			if (cl->p.user && !strcmp(cl->p.user, AGENTUSER_VAR)) {
				struct agent_ids a;
				const char *u = conf_str(c, CK_AGENT_USER);
				if (!said && agentuser_ids(u, conf_str(c, CK_SUBMIT_GROUP), &a) == AGENTUSER_ROOT_FALLBACK)
					conf_report_key(c, CK_AGENT_USER, report, ctx,
					                CONF_WARNING "AGENT_USER=%s: no such user or SUBMIT_GROUP: the agents run as "
					                "root; fix: spoolbox --install", u);
				said = 1;
			} else if (cl->p.user && !numeric(cl->p.user) && !getpwnam(cl->p.user)) {
				conf_reportf(report, ctx, sc.file, cl->line, no_such, "user", cl->p.user, "user", "user", " (user=0)");
				errors++;
			}
			if (cl->p.group && !numeric(cl->p.group) && !getgrnam(cl->p.group)) {
				conf_reportf(report, ctx, sc.file, cl->line, no_such, "group", cl->p.group, "group", "group", "");
				errors++;
			}
		}
	}
	schedconf_free(&sc);
	return errors;
}
