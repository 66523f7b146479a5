/* Recipient routing for submit (see route.h). */
#include "route.h"
#include "config_default.h"
#include "util.h"
#include <string.h>
#include <sys/utsname.h>

int route_conf_init(struct route_conf *rc, const char *localdomains, const char *myhostname)
{
	memset(rc, 0, sizeof *rc);
	if (str_lcpy(rc->myhostname, myhostname ? myhostname : "", sizeof rc->myhostname) >= sizeof rc->myhostname)
		return -1;
	if (localdomains && *localdomains)
		return str_lcpy(rc->localdomains, localdomains, sizeof rc->localdomains) >= sizeof rc->localdomains ? -1 : 0;
	return str_fmt(rc->localdomains, sizeof rc->localdomains, "%s,localhost,localhost.localdomain", rc->myhostname);
}

int route_is_local(const struct route_conf *rc, const char *domain)
{
	size_t dl = strlen(domain);
	if (dl == 0)
		return 1;
	const char *p = rc->localdomains;
	while (*p) {
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, ", \t");
		if (n && n == dl && str_ncaseeq(p, domain, n))
			return 1;
		p += n;
	}
	return 0;
}

/* The host field of a local recipient: its user, so that every user is a thread of its own and
 * the scheduler serialises deliveries per user only (ZMailer's local/USER). Lower case, the
 * +detail dropped (user+a and user+b are one mailbox), bytes a host field cannot hold as '_',
 * never starting with '-' (a clause command's $host); "-" when nothing is left. */
void route_local_host(const char *local, char *out, size_t size)
{
	size_t n = 0;
	for (; *local && *local != '+' && n + 1 < size; local++) {
		unsigned char c = (unsigned char)*local;
		out[n++] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c <= ' ' || c >= 0x7f || c == '/' ? '_' : (char)c;
	}
	out[n] = 0;
	if (n && out[0] == '-')
		out[0] = '_';
	if (!n)
		str_lcpy(out, "-", size);
}

int route_addr(const struct route_conf *rc, const struct addr *a, struct route *out)
{
	memset(out, 0, sizeof *out);
	/* without local delivery every address leaves by SMTP (a null client) */
	if (ENABLE_LOCAL && route_is_local(rc, a->domain)) {
		str_lcpy(out->channel, "local", sizeof out->channel);
		route_local_host(a->local, out->host, sizeof out->host);
		return str_lcpy(out->user, a->local, sizeof out->user) >= sizeof out->user ? -1 : 0;
	}
	str_lcpy(out->channel, "smtp", sizeof out->channel);
	size_t n = str_lcpy(out->host, a->domain, sizeof out->host);
	if (n >= sizeof out->host)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (out->host[i] >= 'A' && out->host[i] <= 'Z')
			out->host[i] = (char)(out->host[i] + 32);
	return addr_format(a, NULL, out->user, sizeof out->user) < 0 ? -1 : 0;
}

int route_myhostname(const char *configured, char *out, size_t size, char *why, size_t whylen)
{
	struct utsname u;
	const char *h = "localhost";
	if (*configured) {
		if (addr_domain_check(configured, strlen(configured), why, whylen) < 0)
			return -1;
		h = configured;
	} else if (uname(&u) == 0 && addr_domain_check(u.nodename, strlen(u.nodename), why, whylen) == 0) {
		h = u.nodename;
	}
	return str_lcpy(out, h, size) >= size ? -1 : 0;
}
