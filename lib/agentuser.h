/* AGENT_USER: the account the network-facing transport agents (smtp, errormail, hold) run as,
 * and the group they read the queue with (docs/spool.md 8, "Who runs as whom").
 *
 * Contract: agentuser_ids() resolves name (AGENT_USER's value: a user name or a number) and
 * group (SUBMIT_GROUP's value) without ever failing a delivery for want of an account:
 *   - uid: the name's passwd entry, or the number as it is;
 *   - gid: the group's gid when that group exists (the queue is readable through it), else
 *     (a number only) the user's passwd group, else 65534 (nogroup);
 *   - a name that is no user here (no /etc/passwd: rescue images, initramfs; a copied binary
 *     before `spoolbox --install`), or a name when the group does not exist (then the spool is
 *     in root's group, which the agents could not read), resolves to uid 0, gid 0 and the
 *     return value says so: mail keeps moving as it did before the agents had a user of their
 *     own, and the scheduler's log and `spoolbox --check` say why. A number is the admin's
 *     explicit choice and is used as it is.
 * Returns 0, or AGENTUSER_ROOT_FALLBACK. The scheduler clause value "$AGENT_USER" names it
 * (the built-in policy gives it to every channel but local, which keeps user=root). */
#ifndef SPOOLBOX_AGENTUSER_H
#define SPOOLBOX_AGENTUSER_H
#include <sys/types.h>

#define AGENTUSER_VAR "$AGENT_USER" /* the user= value that means AGENT_USER */
#define AGENTUSER_ROOT_FALLBACK 1
#define AGENTUSER_NOGROUP 65534

struct agent_ids {
	uid_t uid;
	gid_t gid;
};

int agentuser_ids(const char *name, const char *group, struct agent_ids *ids);

/* AGENT_USER and SUBMIT_GROUP from the environment (where the scheduler exports its
 * configuration), else their defaults: for the scheduler and its agents. */
int agentuser_ids_env(struct agent_ids *ids, const char **name);
#endif
