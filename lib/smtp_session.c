/* Routing, failover, TLS, AUTH and the cached connection of the smtp transport (see
 * smtp_session.h). */
#include "smtp_session.h"
#include "config_default.h"
#include "auth.h"
#include "creds.h"
#include "dns.h"
#include "log.h"
#include "util.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { RANK_DNS = 1, RANK_CONNECT = 1, RANK_REPLY = 2, RANK_TLS = 3, RANK_AUTH = 4, RANK_PERM = 9 };

struct target {
	unsigned port;
	const struct smarthost *sh;   /* NULL for MX delivery */
	char name[256];               /* host name, or address for a literal */
};

void smtp_session_init(struct smtp_session *s)
{
	memset(s, 0, sizeof *s);
}

static void fail(struct smtp_fail *f, int rank, const char *enh, const char *remote, const char *fmt, ...)
    PRINTF_LIKE(5, 6);
static void fail(struct smtp_fail *f, int rank, const char *enh, const char *remote, const char *fmt, ...)
{
	if (rank < f->rank)
		return;
	va_list ap;
	f->rank = rank;
	f->permanent = rank == RANK_PERM;
	str_lcpy(f->enh, enh, sizeof f->enh);
	str_lcpy(f->remote, remote ? remote : "", sizeof f->remote);
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof f->text, fmt, ap);
	va_end(ap);
}

/* A server's reply, reported as a deferral: its enhanced code with class 4. */
static void fail_reply(struct smtp_fail *f, int rank, const char *remote, const char *what, const struct smtp_reply *r)
{
	char one[SMTP_TEXT_MAX + 1], enh[16] = "4.0.0";
	smtp_reply_oneline(r, one, sizeof one);
	if (r->enh[0]) {
		str_lcpy(enh, r->enh, sizeof enh);
		enh[0] = '4';
	}
	fail(f, rank, enh, remote, "%s %s: %s", remote, what, one);
}

/* Adds the MX hosts of domain (or the domain itself when it has none) to the targets. */
static int add_mx(const char *domain, const struct smarthost *sh, unsigned port, struct target *t, size_t max, size_t *n,
                  struct smtp_fail *why)
{
	struct dns_mx mx[DNS_MX_MAX];
	size_t nmx;
	char err[300];
	int st = dns_lookup_mx(domain, mx, DNS_MX_MAX, &nmx, err, sizeof err);
	if (st == DNS_NULLMX || st == DNS_NXDOMAIN || st == DNS_TEMPFAIL) {
		/* A null MX: for a recipient domain it is final; for a smarthost it is a configuration
		 * error. Deferred even for NXDOMAIN: a router's resolver says that while its uplink is
		 * down. One call: "%.0s" leaves the domain out where the text does not name it. */
		int perm = st == DNS_NULLMX && !sh;
		fail(why, perm ? RANK_PERM : RANK_DNS, perm ? "5.1.10" : "4.4.3", NULL,
		     st == DNS_NULLMX && sh ? "smarthost %s: %s" : "%.0s%s", domain, err);
		return -1;
	}
	if (st == DNS_NODATA) { /* RFC 5321 5.1: the domain itself is the implicit MX */
		nmx = 1;
		mx[0].pref = 0;
		str_lcpy(mx[0].host, domain, sizeof mx[0].host);
	}
	for (size_t i = 0; i < nmx && *n < max; i++) {
		str_lcpy(t[*n].name, mx[i].host, sizeof t[*n].name);
		t[*n].port = port;
		t[*n].sh = sh;
		(*n)++;
	}
	return 0;
}

/* noinline here and on do_auth(): called once each, but inlined GCC copies their tails (-59 bytes) */
__attribute__((noinline)) static size_t route(const struct smtp_config *cfg, const char *domain, struct target *t,
                                              size_t max, struct smtp_fail *why)
{
	size_t n = 0;
	if (cfg->nsmarthost) {
		for (int i = 0; i < cfg->nsmarthost && n < max; i++) {
			const struct smarthost *sh = &cfg->smarthost[i];
			unsigned port = smarthost_port(sh);
			if (sh->mx) {
				add_mx(sh->host, sh, port, t, max, &n, why);
				continue;
			}
			str_lcpy(t[n].name, sh->host, sizeof t[n].name);
			t[n].port = port;
			t[n].sh = sh;
			n++;
		}
		return n;
	}
	size_t dl = strlen(domain);
	if (dl > 2 && domain[0] == '[' && domain[dl - 1] == ']') {
		if (dl - 2 >= sizeof t[0].name)
			return 0;
		/* "[IPv6:2001:db8::1]" (RFC 5321 4.1.3): the tag left out of the copy */
		size_t tag = str_ncaseeq(domain + 1, "IPv6:", 5) ? 5 : 0;
		memcpy(t[0].name, domain + 1 + tag, dl - 2 - tag);
		t[0].name[dl - 2 - tag] = 0;
		t[0].port = cfg->mx_port;
		t[0].sh = NULL;
		return 1;
	}
	add_mx(domain, NULL, cfg->mx_port, t, max, &n, why);
	return n;
}

static void log_creds(void *ctx, const char *file, int line, const char *reason)
{
	(void)ctx;
	if (line > 0)
		log_msg(LOG_ERR, NULL, "%s:%d: %s", file, line, reason);
	else
		log_msg(LOG_ERR, NULL, "%s: %s", file, reason);
}

static const struct tls_anchors *anchors(struct smtp_session *s, const struct smtp_config *cfg)
{
	if (!s->anchors_tried) {
		s->anchors_tried = 1;
		s->anchors = tls_anchors_load(cfg->cafile, s->anchors_err, sizeof s->anchors_err);
	}
	return s->anchors;
}

/* TLS on the connection (after connect for smtps, after a 220 to STARTTLS otherwise). */
static int start_tls(struct smtp_session *s, const struct smtp_config *cfg, const struct target *t, enum tls_policy pol,
                     const char *remote, struct smtp_fail *why)
{
	struct tls_params p;
	char reason[TLS_REASON_MAX];
	memset(&p, 0, sizeof p);
	p.policy = pol;
	/* name= verifies a relay reached by address against the name its certificate carries */
	p.server_name = t->sh && t->sh->tls_name[0] ? t->sh->tls_name : t->name;
	if (pol == TLS_VERIFY && !(p.anchors = anchors(s, cfg))) {
		fail(why, RANK_TLS, "4.7.5", remote, "cannot verify %s: %s", remote, s->anchors_err);
		return -1;
	}
	if (t->sh) {
		p.pins = t->sh->pins;
		p.client_cert = t->sh->cert; /* "" is none, as NULL is (tls.c) */
		p.client_key = t->sh->key;
	}
	s->conn.io.timeout_ms = cfg->to.helo;
	enum tls_status st = tls_start(&s->conn.io, &p, reason, sizeof reason);
	if (st != TLS_OK) {
		fail(why, RANK_TLS, st == TLS_E_CLOCK ? "4.7.0" : "4.7.5", remote, "TLS with %s failed (%s): %s", remote,
		     tls_status_name(st), reason);
		return -1;
	}
	tls_describe(&s->conn.io, s->tlsdesc, sizeof s->tlsdesc);
	return 0;
}

/* AUTH when credentials exist for the target. 0 = fine (done or not needed), -1 = failed. */
__attribute__((noinline)) static int do_auth(struct smtp_session *s, const struct smtp_config *cfg,
                                             const struct target *t, const char *remote, struct smtp_fail *why)
{
	struct creds cr;
	const struct smarthost *sh = t->sh;
	struct smtp_conn *c = &s->conn;
	/* the refusals: a format of up to four strings, reported by one fail() at the end */
	const char *fmt, *a1 = remote, *a2 = c->caps.auth, *a3 = NULL, *a4 = NULL;
	int rc = -1;
	if (sh && sh->noauth)
		return 0;
	int r = creds_lookup(cfg->credentials, t->name, (int)t->port, &cr, log_creds, NULL);
	if (r < 0) {
		fmt = "credentials file %s is not usable (see the log)";
		a1 = cfg->credentials;
		goto failed;
	}
	if (r == 0)
		return 0;
	/* A smarthost with credentials must get them; for MX delivery only a line naming the host
	 * itself is used, and only when the server offers AUTH. */
	int required = sh != NULL;
	if (!sh && strcmp(cr.host, "*") == 0) {
		rc = 0;
		goto out;
	}
	int over_tls = tls_active(&c->io);
	unsigned offered = auth_parse_ehlo(c->caps.auth);
	if (!(c->caps.ext & SMTP_EXT_AUTH)) {
		fmt = "credentials are configured for %s, but %s offers no AUTH%s";
		a1 = t->name;
		a2 = remote;
		a3 = over_tls ? "" : " (without TLS)";
		goto optional;
	}
	if (!over_tls && !cfg->cleartext_auth && !(sh && sh->cleartext_auth)) {
		fmt = "not sending credentials to %s without TLS (allow with cleartext_auth / SMTP_CLEARTEXT_AUTH)";
		goto optional;
	}
	/* A password (PLAIN, LOGIN) or a bearer token (XOAUTH2) goes only to a peer that proved who
	 * it is (verified chain and name, or a pinned key): tls=may/encrypt alone is encryption to
	 * whoever answered, a man in the middle included. CRAM-MD5 does not reveal the password.
	 * An explicit opt-in (unverified_auth, or cleartext_auth / SMTP_CLEARTEXT_AUTH, which
	 * already allow far less) lifts this, as Postfix's smtp_sasl_tls_security_options does. */
	int plain_ok = !over_tls || tls_peer_authenticated(&c->io) || cfg->cleartext_auth ||
	               (sh && (sh->cleartext_auth || sh->unverified_auth));
	unsigned usable = plain_ok ? offered : offered & AUTH_BIT(AUTH_CRAM_MD5);
	enum auth_mech mech;
	if (sh && sh->mech[0]) {
		mech = auth_mech_parse(sh->mech);
		if (!(usable & AUTH_BIT(mech)))
			mech = AUTH_NONE;
	} else {
		mech = auth_choose(usable, cr.is_token_file, over_tls);
	}
	if (mech == AUTH_NONE && usable != offered) {
		fmt = "not sending the %s to %s: its certificate is not verified (tls=%s); use tls=verify or pin=, "
		      "or allow it with unverified_auth (offered: %s)";
		a1 = cr.is_token_file ? "token" : "password";
		a2 = remote;
		a3 = tls_policy_name(sh ? sh->policy : cfg->mx_policy);
		a4 = c->caps.auth;
		goto failed;
	}
	fmt = "no usable AUTH mechanism at %s (offered: %s)";
	if (mech == AUTH_NONE)
		goto failed;
	char token[CREDS_TOKEN_MAX + 1];
	const char *secret = cr.secret;
	if (cr.is_token_file) {
		if (creds_read_token(cr.secret, token, sizeof token, log_creds, NULL) < 0) {
			fmt = "cannot read the XOAUTH2 token file for %s (see the log)";
			a1 = t->name;
			goto failed;
		}
		secret = token;
	}
	struct smtp_reply rep;
	int a = smtp_auth(c, mech, cr.user, secret, &rep);
	if (cr.is_token_file)
		explicit_bzero(token, sizeof token);
	if (a < 0) {
		fail(why, RANK_AUTH, "4.4.2", remote, "%s", c->err);
	} else if (a > 0) {
		char what[80];
		str_fmt(what, sizeof what, "refused AUTH %s", auth_mech_name(mech));
		fail_reply(why, RANK_AUTH, remote, what, &rep);
		if (rep.code / 100 == 5 && !rep.enh[0])
			str_lcpy(why->enh, "4.7.8", sizeof why->enh);
	} else {
		log_msg(LOG_INFO, c->logid, "authenticated to %s as %s with %s", remote, cr.user, auth_mech_name(mech));
		rc = 0;
	}
	goto out;
optional:
	if (!required) {
		rc = 0;
		goto out;
	}
failed:
	fail(why, RANK_AUTH, "4.7.0", remote, fmt, a1, a2, a3, a4);
out:
	creds_wipe(&cr);
	return rc;
}

/* One address of one target. 0 = session ready; -1 = failed (why updated). */
static int try_addr(struct smtp_session *s, const struct smtp_config *cfg, const struct target *t, const struct dns_addr *a,
                    struct smtp_fail *why)
{
	char addr[INET6_ADDRSTRLEN], remote[300];
	struct smtp_conn *c = &s->conn;
	struct smtp_reply r;
	const struct smarthost *sh = t->sh;
	enum tls_policy pol = sh ? sh->policy : cfg->mx_policy;
	int smtps = sh && sh->smtps, cleartext_retry = 0;
	dns_addr_str(a, addr, sizeof addr);
	str_fmt(remote, sizeof remote, "%s[%s]", t->name, addr);
again:
	c->to = cfg->to;
	c->verbose = cfg->verbose;
	str_fmt(c->name, sizeof c->name, "%s:%u", remote, t->port);
	s->tlsdesc[0] = 0;
	if (pol >= TLS_ENCRYPT && !ENABLE_TLS) { /* a constant: this text is only in a TLS=0 build */
		fail(why, RANK_TLS, "4.7.5", remote, "TLS is required for %s (tls=%s), but this spoolbox is built without TLS",
		     t->name, tls_policy_name(pol));
		return -1;
	}
	struct dns_addr sa = *a;
	if (sa.sa.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&sa.sa)->sin6_port = htons((unsigned short)t->port);
	else
		((struct sockaddr_in *)&sa.sa)->sin_port = htons((unsigned short)t->port);
	/* a failed connect is reported as a lost connection is, with its own code (closing the
	 * connection that never opened does nothing) */
	const char *lost_enh = "4.4.1";
	if (smtp_connect(c, (struct sockaddr *)&sa.sa, sa.len) < 0)
		goto lost;
	lost_enh = "4.4.2";
	s->connections++;
	if (smtps && start_tls(s, cfg, t, pol, remote, why) < 0)
		goto bad;
	/* a refusal is reported with what was refused, at its rank; then QUIT */
	const char *refused = "refused to talk to me";
	int rank = RANK_REPLY;
	int g = smtp_greet(c, cfg->helo_name, &r);
	if (g < 0)
		goto lost;
	if (g > 0)
		goto refusal;
	int want_tls = !smtps && !cleartext_retry && pol != TLS_NONE && ENABLE_TLS;
	if (want_tls && !(c->caps.ext & SMTP_EXT_STARTTLS)) {
		if (pol >= TLS_ENCRYPT) {
			fail(why, RANK_TLS, "4.7.4", remote, "TLS is required for %s (tls=%s), but %s does not offer STARTTLS",
			     t->name, tls_policy_name(pol), remote);
			smtp_quit(c);
			return -1;
		}
		want_tls = 0;
	}
	if (want_tls) {
		int st = smtp_starttls_cmd(c, &r);
		if (st < 0)
			goto lost;
		if (st > 0) {
			refused = "refused STARTTLS";
			rank = RANK_TLS;
			if (pol >= TLS_ENCRYPT)
				goto refusal;
			/* may: carry on in clear text on this connection */
		} else {
			if (start_tls(s, cfg, t, pol, remote, why) < 0) {
				if (pol == TLS_MAY) {
					/* may: one retry in clear text on a new connection, never on this one */
					log_msg(LOG_INFO, c->logid, "%s; retrying %s without TLS (tls=may)", why->text, remote);
					smtp_close(c);
					cleartext_retry = 1;
					goto again;
				}
				goto bad;
			}
			/* the greeting's two failures again (error: drop, refusal: QUIT), inline because
			 * each leaves through this function's own labels */
			int e = smtp_ehlo(c, cfg->helo_name, &r);
			refused = "refused EHLO after STARTTLS";
			if (e < 0)
				goto lost;
			if (e > 0)
				goto refusal;
		}
	}
	if (do_auth(s, cfg, t, remote, why) < 0) {
		smtp_quit(c);
		return -1;
	}
	str_lcpy(s->remote, remote, sizeof s->remote);
	str_fmt(s->relay, sizeof s->relay, "%s:%u", remote, t->port);
	if (s->tlsdesc[0])
		log_msg(LOG_INFO, c->logid, "TLS connection to %s: %s", s->relay, s->tlsdesc);
	return 0;
refusal:
	fail_reply(why, rank, remote, refused, &r);
	smtp_quit(c);
	return -1;
lost:
	fail(why, RANK_CONNECT, lost_enh, remote, "%s", c->err);
bad:
	why->timeouts += c->timed_out;
	smtp_close(c);
	return -1;
}

const char *smtp_session_key(const struct smtp_config *cfg, const char *domain)
{
	return cfg->nsmarthost ? "[smarthost]" : domain;
}

int smtp_session_get(struct smtp_session *s, const struct smtp_config *cfg, const char *domain, struct smtp_fail *why)
{
	const char *key = smtp_session_key(cfg, domain);
	memset(why, 0, sizeof *why);
	if (s->conn.open) {
		if (strcmp(s->key, key) == 0) {
			/* With PIPELINING the RSET rides with the next MAIL (smtp_transaction). */
			if (s->conn.caps.ext & SMTP_EXT_PIPELINING) {
				s->conn.rset_pending = 1;
				return 0;
			}
			if (smtp_rset(&s->conn) == 0)
				return 0;
			log_msg(LOG_DEBUG, s->conn.logid, "cached connection to %s unusable (%s): reconnecting", s->relay, s->conn.err);
			smtp_session_drop(s);
		} else {
			smtp_session_end(s);
		}
	}
	struct target t[SMTP_TARGETS_MAX];
	size_t n = route(cfg, domain, t, SMTP_TARGETS_MAX, why);
	if (why->permanent)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct dns_addr addr[DNS_ADDR_MAX];
		size_t na;
		char err[300];
		if (dns_lookup_addr(t[i].name, addr, DNS_ADDR_MAX, &na, err, sizeof err) != DNS_OK) {
			fail(why, RANK_DNS, "4.4.3", NULL, "%s", err);
			continue;
		}
		for (size_t k = 0; k < na; k++)
			if (try_addr(s, cfg, &t[i], &addr[k], why) == 0) {
				str_lcpy(s->key, key, sizeof s->key);
				s->messages = 0;
				return 0;
			}
	}
	if (!why->text[0])
		fail(why, RANK_DNS, "4.4.3", NULL, "no host to deliver mail for %s to", domain);
	return -1;
}

void smtp_session_end(struct smtp_session *s)
{
	smtp_quit(&s->conn);
	s->key[0] = 0;
}

void smtp_session_drop(struct smtp_session *s)
{
	smtp_close(&s->conn);
	s->key[0] = 0;
}

void smtp_session_free(struct smtp_session *s)
{
	smtp_session_drop(s);
	if (s->anchors)
		tls_anchors_free((struct tls_anchors *)s->anchors);
	s->anchors = NULL;
	s->anchors_tried = 0;
}
