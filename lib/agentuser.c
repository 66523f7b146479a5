/* AGENT_USER resolved to ids, with the root fallback for systems without the account; the
 * rules are in agentuser.h. */
#include "agentuser.h"
#include "conf.h"
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>

int agentuser_ids(const char *name, const char *group, struct agent_ids *ids)
{
	char *end;
	long v = strtol(name, &end, 10);
	int numeric = *name && !*end && v >= 0;
	struct passwd *pw = numeric ? getpwuid((uid_t)v) : *name ? getpwnam(name) : NULL;
	struct group *g = group && *group ? getgrnam(group) : NULL;
	if (!numeric && (!pw || !g)) {
		ids->uid = 0;
		ids->gid = 0;
		return AGENTUSER_ROOT_FALLBACK;
	}
	ids->uid = numeric ? (uid_t)v : pw->pw_uid;
	ids->gid = g ? g->gr_gid : pw ? pw->pw_gid : AGENTUSER_NOGROUP;
	return 0;
}

int agentuser_ids_env(struct agent_ids *ids, const char **name)
{
	const char *n = getenv("AGENT_USER"), *g = getenv("SUBMIT_GROUP");
	if (!n)
		n = conf_default(CK_AGENT_USER);
	if (!g)
		g = conf_default(CK_SUBMIT_GROUP);
	if (name)
		*name = n;
	return agentuser_ids(n, g, ids);
}
