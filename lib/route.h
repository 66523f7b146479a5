/* Routing at submission: each recipient address becomes the ZMailer quad's channel, host and
 * user (docs/spool.md 4.1). Local recipients (no domain, or a domain in LOCALDOMAINS) go to
 * channel "local" with the user (lower case, without +detail) as host and the local part as user,
 * so that deliveries are serialised per user only (docs/local.md 10); all others to channel "smtp" with
 * the lower-cased domain as host and the whole address as user. A smarthost changes nothing
 * here: the smtp transport connects to it, while the host field keeps the recipient domain so
 * that per-destination limits, mailq and `sendmail -qR DOMAIN` still see domains
 * (docs/submit.md, "Routing"). Nothing here resolves names. */
#ifndef SPOOLBOX_ROUTE_H
#define SPOOLBOX_ROUTE_H
#include "addr.h"
#include <stddef.h>

#define ROUTE_LOCALDOMAINS_MAX 1024 /* bytes of the LOCALDOMAINS list kept */

struct route_conf {
	/* comma/space separated domains handled locally; "" means the defaults below */
	char localdomains[ROUTE_LOCALDOMAINS_MAX];
	char myhostname[256];
};

struct route {
	char channel[32];
	char host[ADDR_DOMAIN_MAX + 1];
	char user[ADDR_TEXT_MAX + 1];
};

/* This host's name for headers and routing: MYHOSTNAME when set (it must be a domain name, else
 * -1 with the reason in why), else uname's node name when that is a domain name, else
 * "localhost" (an unset name is "(none)" on many embedded systems). Never asks DNS. */
int route_myhostname(const char *configured, char *out, size_t size, char *why, size_t whylen);
/* Fills rc from the LOCALDOMAINS list (NULL or "": MYHOSTNAME, localhost, localhost.localdomain)
 * and the host name. Returns 0, or -1 when the list does not fit. */
int route_conf_init(struct route_conf *rc, const char *localdomains, const char *myhostname);
/* 1 when domain (case-insensitive; "" counts as local) is one of ours. */
int route_is_local(const struct route_conf *rc, const char *domain);
/* Routes one address (already qualified or not). Returns 0, or -1 when a field does not fit. */
int route_addr(const struct route_conf *rc, const struct addr *a, struct route *out);
/* The host field of a local recipient with this local part (always a valid host field). */
void route_local_host(const char *local, char *out, size_t size);
#endif
