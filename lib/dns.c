/* MX and address lookup for the smtp transport (see dns.h): res_query for MX, AAAA and A, and
 * the hosts file read here, without getaddrinfo (8 KiB of musl: docs/size.md). */
#include "dns.h"
#include "io.h"
#include "util.h"
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T_A_ 1
#define T_MX_ 15
#define T_AAAA_ 28

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

/* The record at *p (moved past it): its type, its data and their length, and whether it is of
 * class IN; 0 for a record that runs past the end. */
static int next_rr(const unsigned char **p, const unsigned char *end, unsigned *type,
                   const unsigned char **rd, unsigned *rdlen)
{
	const unsigned char *q = skip_name(*p, end);
	if (!q || end - q < 10)
		return 0;
	*type = get16(q);
	if (get16(q + 2) != 1)
		*type = 0; /* another class: nothing we ask for */
	*rdlen = get16(q + 8);
	q += 10;
	if ((size_t)(end - q) < *rdlen)
		return 0;
	*rd = q;
	*p = q + *rdlen;
	return 1;
}

/* Checks an answer's header, skips its questions and calls fn for each answer record (type 0
 * for one of another class). DNS_OK, DNS_NXDOMAIN for rcode 3, DNS_TEMPFAIL for another error
 * rcode, truncation or a malformed answer, or what fn returned other than DNS_OK. */
static int each_rr(const unsigned char *ans, size_t len, void *ctx,
                   int (*fn)(void *ctx, unsigned type, const unsigned char *rd, unsigned rdlen))
{
	if (len < 12 || len > 65535)
		return DNS_TEMPFAIL;
	unsigned rcode = ans[3] & 15;
	if (rcode == 3)
		return DNS_NXDOMAIN;
	if (rcode != 0 || (ans[2] & 2)) /* an error, or a truncated answer */
		return DNS_TEMPFAIL;
	unsigned qd = get16(ans + 4), an = get16(ans + 6), type, rdlen;
	const unsigned char *p = ans + 12, *end = ans + len, *rd;
	for (unsigned i = 0; i < qd; i++) {
		p = skip_name(p, end);
		if (!p || end - p < 4)
			return DNS_TEMPFAIL;
		p += 4;
	}
	for (unsigned i = 0; i < an; i++) {
		if (!next_rr(&p, end, &type, &rd, &rdlen))
			return DNS_TEMPFAIL;
		int st = fn(ctx, type, rd, rdlen);
		if (st != DNS_OK)
			return st;
	}
	return DNS_OK;
}

struct mx_walk {
	const unsigned char *ans, *end;
	struct dns_mx *out;
	size_t max, kept, nullmx;
	unsigned worst; /* preference of the least preferred kept, to replace it */
};

static int mx_rr(void *ctx, unsigned type, const unsigned char *rd, unsigned rdlen)
{
	struct mx_walk *w = ctx;
	if (type != T_MX_)
		return DNS_OK;
	if (rdlen < 3)
		return DNS_TEMPFAIL;
	struct dns_mx mx;
	mx.pref = get16(rd);
	/* dn_expand checks compression pointers against the whole message; we also require
	 * the name to end inside this record's data. */
	int used = dn_expand(w->ans, w->end, rd + 2, mx.host, (int)sizeof mx.host);
	if (used < 1 || (unsigned)used > rdlen - 2)
		return DNS_TEMPFAIL;
	if (mx.host[0] == 0 || strcmp(mx.host, ".") == 0) {
		w->nullmx++;
		return DNS_OK;
	}
	for (char *c = mx.host; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c + 32);
	if (w->kept < w->max) {
		w->out[w->kept++] = mx;
	} else if (w->max && mx.pref < w->worst) {
		/* Keep the most preferred DNS_MX_MAX records of an over-long list. */
		for (size_t k = 0; k < w->kept; k++)
			if (w->out[k].pref == w->worst) {
				w->out[k] = mx;
				break;
			}
	} else {
		return DNS_OK;
	}
	w->worst = 0;
	for (size_t k = 0; k < w->kept; k++)
		if (w->out[k].pref > w->worst)
			w->worst = w->out[k].pref;
	return DNS_OK;
}

int dns_parse_mx(const unsigned char *ans, size_t len, struct dns_mx *out, size_t max, size_t *n)
{
	struct mx_walk w = {ans, ans + len, out, max, 0, 0, 0};
	*n = 0;
	int st = each_rr(ans, len, &w, mx_rr);
	if (st != DNS_OK)
		return st;
	*n = w.kept;
	if (w.kept)
		return DNS_OK;
	return w.nullmx ? DNS_NULLMX : DNS_NODATA;
}

/* Appends a to out[0..*n) unless it is there already or out is full. */
static void add_addr(struct dns_addr *out, size_t max, size_t *n, int family, const void *bin)
{
	struct dns_addr a;
	memset(&a, 0, sizeof a);
	a.sa.ss_family = (sa_family_t)family;
	if (family == AF_INET6) {
		memcpy(&((struct sockaddr_in6 *)&a.sa)->sin6_addr, bin, 16);
		a.len = sizeof(struct sockaddr_in6);
	} else {
		memcpy(&((struct sockaddr_in *)&a.sa)->sin_addr, bin, 4);
		a.len = sizeof(struct sockaddr_in);
	}
	for (size_t k = 0; k < *n; k++)
		if (memcmp(&out[k], &a, sizeof a) == 0)
			return;
	if (*n < max)
		out[(*n)++] = a;
}

struct addr_walk {
	struct dns_addr *out;
	size_t max, *n;
};

/* Any A or AAAA record of the answer: a CNAME's target comes in the same answer. */
static int addr_rr(void *ctx, unsigned type, const unsigned char *rd, unsigned rdlen)
{
	struct addr_walk *w = ctx;
	if ((type == T_A_ && rdlen == 4) || (type == T_AAAA_ && rdlen == 16))
		add_addr(w->out, w->max, w->n, type == T_A_ ? AF_INET : AF_INET6, rd);
	return DNS_OK;
}

int dns_parse_addr(const unsigned char *ans, size_t len, struct dns_addr *out, size_t max, size_t *n)
{
	struct addr_walk w = {out, max, n};
	return each_rr(ans, len, &w, addr_rr);
}

int dns_literal(const char *s, unsigned char *bin)
{
	return inet_pton(AF_INET6, s, bin) == 1 ? AF_INET6 : inet_pton(AF_INET, s, bin) == 1 ? AF_INET : 0;
}

int dns_hosts_line(const char *line, const char *name, struct dns_addr *out, size_t max, size_t *n)
{
	char f[INET6_ADDRSTRLEN];
	unsigned char bin[16];
	size_t nl = strlen(name), k = 0;
	int family = 0;
	for (const char *p = line;;) {
		p += strspn(p, " \t\r\n");
		size_t l = strcspn(p, " \t\r\n#");
		if (l == 0)
			return 0; /* the end, or a comment */
		if (k++ == 0) {
			if (l >= sizeof f)
				return 0; /* longer than any address */
			memcpy(f, p, l);
			f[l] = 0;
			family = dns_literal(f, bin);
			if (!family)
				return 0;
		} else if (l == nl && str_ncaseeq(p, name, l)) {
			add_addr(out, max, n, family, bin);
			return 1;
		}
		p += l;
	}
}

int dns_hosts_lookup(const char *path, const char *name, struct dns_addr *out, size_t max, size_t *n)
{
	struct io io;
	char line[DNS_HOSTS_LINE_MAX];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	io_init_fd(&io, fd, 0);
	int found = 0;
	for (ssize_t r; (r = io_getline(&io, line, sizeof line)) != 0;)
		if (r > 0)
			found |= dns_hosts_line(line, name, out, max, n);
		else if (errno != EMSGSIZE) /* an over-long line is skipped, as musl does */
			break;
	close(fd);
	return found;
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

/* One query for the addresses of name; st is the answer's status (DNS_OK also without any) */
static int query_addr(const char *name, int type, struct dns_addr *out, size_t max, size_t *n)
{
	unsigned char ans[DNS_ANSWER_MAX];
	h_errno = 0;
	int r = res_query(name, 1, type, ans, (int)sizeof ans);
	if (r < 0)
		return h_errno == HOST_NOT_FOUND ? DNS_NXDOMAIN : h_errno == NO_DATA ? DNS_OK : DNS_TEMPFAIL;
	return dns_parse_addr(ans, (size_t)r < sizeof ans ? (size_t)r : sizeof ans, out, max, n);
}

int dns_lookup_addr(const char *host, struct dns_addr *out, size_t max, size_t *n, char *err, size_t errlen)
{
	unsigned char bin[16];
	char bare[256];
	*n = 0;
	int family = dns_literal(host, bin);
	if (family) {
		add_addr(out, max, n, family, bin);
		return DNS_OK;
	}
	/* The hosts file first, as musl's getaddrinfo did, but case-blind and with "relay.example.net."
	 * as absolute as it is for DNS (musl matched its names byte for byte, without the dot). */
	size_t hl = strlen(host);
	hl -= hl > 0 && host[hl - 1] == '.';
	int st = DNS_NXDOMAIN;
	if (hl > 0 && hl < sizeof bare) {
		memcpy(bare, host, hl);
		bare[hl] = 0;
		if (dns_hosts_lookup(DNS_HOSTS_FILE, bare, out, max, n)) {
			/* IPv6 first, each family in the file's order */
			struct dns_addr t[DNS_ADDR_MAX];
			size_t k = 0;
			for (int f = 0; f < 2; f++)
				for (size_t i = 0; i < *n && k < DNS_ADDR_MAX; i++)
					if ((out[i].sa.ss_family == AF_INET6) == (f == 0))
						t[k++] = out[i];
			memcpy(out, t, k * sizeof *t);
			*n = k;
			return DNS_OK;
		}
		/* Then DNS, AAAA then A (IPv6 first: RFC 6724's default preference, made explicit so
		 * an unreachable AAAA costs one connect attempt, never the whole delivery). A failure
		 * of the first stops: a missing domain has no A either, and a DNS outage is temporary
		 * whatever the second would say. */
		st = query_addr(host, T_AAAA_, out, max, n);
		if (st == DNS_OK)
			st = query_addr(host, T_A_, out, max, n);
	}
	if (st == DNS_OK && *n)
		return DNS_OK;
	if (err)
		str_fmt(err, errlen, "address lookup of %s: %s", host,
		        st == DNS_TEMPFAIL ? "no answer from the DNS (server failure or timeout)"
		        : st == DNS_NXDOMAIN ? "host not found" : "no IPv4 or IPv6 address");
	return st == DNS_OK ? DNS_NODATA : st;
}

void dns_addr_str(const struct dns_addr *a, char *out, size_t size)
{
	const void *p = a->sa.ss_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)&a->sa)->sin6_addr
	                                            : (const void *)&((const struct sockaddr_in *)&a->sa)->sin_addr;
	if (!inet_ntop(a->sa.ss_family, p, out, (socklen_t)size))
		str_lcpy(out, "?", size);
}
