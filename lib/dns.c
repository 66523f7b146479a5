/* MX and address lookup for the smtp transport (see dns.h). */
#include "dns.h"
#include "util.h"
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef EAI_NODATA /* musl folds "no address" into EAI_NONAME */
#define EAI_NODATA EAI_NONAME
#endif
#define T_MX_ 15

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Skips a (possibly compressed) name starting at p; returns the position after it or NULL. */
static const unsigned char *skip_name(const unsigned char *p, const unsigned char *end)
{
	while (p < end) {
		unsigned c = *p;
		if (c == 0)
			return p + 1;
		if ((c & 0xc0) == 0xc0)
			return p + 2 <= end ? p + 2 : NULL;
		if (c & 0xc0)
			return NULL; /* the reserved label types */
		p += 1 + c;
	}
	return NULL;
}

int dns_parse_mx(const unsigned char *ans, size_t len, struct dns_mx *out, size_t max, size_t *n)
{
	*n = 0;
	if (len < 12 || len > 65535)
		return DNS_TEMPFAIL;
	unsigned rcode = ans[3] & 15;
	if (rcode == 3)
		return DNS_NXDOMAIN;
	if (rcode != 0 || (ans[2] & 2)) /* an error, or a truncated answer */
		return DNS_TEMPFAIL;
	unsigned qd = get16(ans + 4), an = get16(ans + 6);
	const unsigned char *p = ans + 12, *end = ans + len;
	for (unsigned i = 0; i < qd; i++) {
		p = skip_name(p, end);
		if (!p || end - p < 4)
			return DNS_TEMPFAIL;
		p += 4;
	}
	size_t nullmx = 0, kept = 0;
	unsigned worst = 0; /* preference of the least preferred kept, to replace it */
	for (unsigned i = 0; i < an; i++) {
		p = skip_name(p, end);
		if (!p || end - p < 10)
			return DNS_TEMPFAIL;
		unsigned type = get16(p), class = get16(p + 2), rdlen = get16(p + 8);
		p += 10;
		if ((size_t)(end - p) < rdlen)
			return DNS_TEMPFAIL;
		const unsigned char *rd = p;
		p += rdlen;
		if (type != T_MX_ || class != 1)
			continue;
		if (rdlen < 3)
			return DNS_TEMPFAIL;
		struct dns_mx mx;
		mx.pref = get16(rd);
		/* dn_expand checks compression pointers against the whole message; we also require
		 * the name to end inside this record's data. */
		int used = dn_expand(ans, end, rd + 2, mx.host, (int)sizeof mx.host);
		if (used < 1 || (unsigned)used > rdlen - 2)
			return DNS_TEMPFAIL;
		if (mx.host[0] == 0 || strcmp(mx.host, ".") == 0) {
			nullmx++;
			continue;
		}
		for (char *c = mx.host; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c + 32);
		if (kept < max) {
			out[kept++] = mx;
		} else if (max && mx.pref < worst) {
			/* Keep the most preferred DNS_MX_MAX records of an over-long list. */
			for (size_t k = 0; k < kept; k++)
				if (out[k].pref == worst) {
					out[k] = mx;
					break;
				}
		} else {
			continue;
		}
		worst = 0;
		for (size_t k = 0; k < kept; k++)
			if (out[k].pref > worst)
				worst = out[k].pref;
	}
	*n = kept;
	if (kept)
		return DNS_OK;
	return nullmx ? DNS_NULLMX : DNS_NODATA;
}

void dns_mx_order(struct dns_mx *mx, size_t n, unsigned (*rnd)(void *ctx), void *ctx)
{
	/* Insertion sort: n is at most DNS_MX_MAX. */
	for (size_t i = 1; i < n; i++) {
		struct dns_mx t = mx[i];
		size_t j = i;
		for (; j > 0 && mx[j - 1].pref > t.pref; j--)
			mx[j] = mx[j - 1];
		mx[j] = t;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && mx[j].pref == mx[i].pref)
			j++;
		for (size_t k = j - 1; k > i; k--) { /* Fisher-Yates over [i, j) */
			size_t r = i + rnd(ctx) % (k - i + 1);
			struct dns_mx t = mx[k];
			mx[k] = mx[r];
			mx[r] = t;
		}
		i = j;
	}
}

/* xorshift seeded from the clock and pid: spreading load is all this is for. */
static unsigned default_rnd(void *ctx)
{
	unsigned long long *s = ctx;
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (unsigned)(*s >> 16);
}

int dns_lookup_mx(const char *domain, struct dns_mx *out, size_t max, size_t *n, char *err, size_t errlen)
{
	unsigned char ans[DNS_ANSWER_MAX];
	*n = 0;
	h_errno = 0;
	int r = res_query(domain, 1, T_MX_, ans, (int)sizeof ans);
	int st;
	if (r < 0) {
		if (h_errno == HOST_NOT_FOUND)
			st = DNS_NXDOMAIN;
		else if (h_errno == NO_DATA)
			st = DNS_NODATA;
		else
			st = DNS_TEMPFAIL;
	} else {
		st = dns_parse_mx(ans, (size_t)r < sizeof ans ? (size_t)r : sizeof ans, out, max, n);
	}
	if (st == DNS_OK) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		unsigned long long seed = ((unsigned long long)ts.tv_nsec * 2654435761u ^ (unsigned long long)getpid() << 32) | 1;
		dns_mx_order(out, *n, default_rnd, &seed);
	} else if (err) {
		static const char *const why[] = {"", "domain not found (NXDOMAIN)", "no MX records",
		                                  "null MX: the domain accepts no mail (RFC 7505)",
		                                  "no answer from the DNS (server failure or timeout)"};
		str_fmt(err, errlen, "MX lookup of %s: %s", domain, why[st]);
	}
	return st;
}

int dns_lookup_addr(const char *host, struct dns_addr *out, size_t max, size_t *n, char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	*n = 0;
	int r = getaddrinfo(host, NULL, &hints, &res);
	size_t hl = strlen(host);
	if (r != 0 && hl > 0 && hl < 256) {
		/* Names are case-blind and "relay.example.net." is absolute for DNS, but musl matches
		 * the hosts file byte for byte against names without the dot: one more try with the
		 * name as the hosts file writes it (also when DNS is down: the hosts file is not). Its
		 * failure leaves the first answer standing, so a DNS outage stays temporary. */
		char bare[256];
		size_t bl = host[hl - 1] == '.' ? hl - 1 : hl;
		for (size_t i = 0; i < bl; i++)
			bare[i] = (char)(host[i] >= 'A' && host[i] <= 'Z' ? host[i] + 32 : host[i]);
		bare[bl] = 0;
		if (bl > 0 && memcmp(bare, host, hl) && getaddrinfo(bare, NULL, &hints, &res) == 0)
			r = 0;
	}
	if (r != 0) {
		int st = DNS_TEMPFAIL;
		if (r == EAI_NONAME || r == EAI_NODATA)
			st = DNS_NXDOMAIN;
		if (err)
			str_fmt(err, errlen, "address lookup of %s: %s", host,
			        st == DNS_NXDOMAIN ? "host not found" : gai_strerror(r));
		return st;
	}
	/* Two passes: IPv6 first, then IPv4 (RFC 6724's default preference, made explicit so an
	 * unreachable AAAA costs one connect attempt, never the whole delivery). */
	static const int fams[2] = {AF_INET6, AF_INET};
	for (int f = 0; f < 2; f++)
		for (struct addrinfo *a = res; a; a = a->ai_next) {
			if (a->ai_family != fams[f] || *n >= max || a->ai_addrlen > sizeof out->sa)
				continue;
			int dup = 0;
			for (size_t k = 0; k < *n; k++)
				if (out[k].len == a->ai_addrlen && memcmp(&out[k].sa, a->ai_addr, a->ai_addrlen) == 0)
					dup = 1;
			if (dup)
				continue;
			memset(&out[*n].sa, 0, sizeof out[*n].sa);
			memcpy(&out[*n].sa, a->ai_addr, a->ai_addrlen);
			out[*n].len = a->ai_addrlen;
			(*n)++;
		}
	freeaddrinfo(res);
	if (*n == 0) {
		if (err)
			str_fmt(err, errlen, "address lookup of %s: no IPv4 or IPv6 address", host);
		return DNS_NODATA;
	}
	return DNS_OK;
}

void dns_addr_str(const struct dns_addr *a, char *out, size_t size)
{
	const void *p = a->sa.ss_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)&a->sa)->sin6_addr
	                                            : (const void *)&((const struct sockaddr_in *)&a->sa)->sin_addr;
	if (!inet_ntop(a->sa.ss_family, p, out, (socklen_t)size))
		str_lcpy(out, "?", size);
}
