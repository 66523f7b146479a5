/* Finding where mail for a domain goes: MX records through the resolver (res_query +
 * dn_expand: ours in lib/libc/resolv.c in the static build, which reads /etc/resolv.conf on
 * every call, as musl's did, so a network namespace can point it at a test server), ordered by preference with equal preferences shuffled (RFC 5321 5.1),
 * RFC 7505 null MX, and the addresses of a host, IPv6 first, then IPv4: a literal, else the
 * hosts file, else AAAA and A queries through the same res_query. There is no getaddrinfo (and
 * so no nsswitch, which musl has not either, and no resolv.conf search list: names in
 * SMARTHOST and MX records are fully qualified, and MX lookups never searched).
 *
 * The answer parsers and the hosts-file line parser are separate from the I/O so they can be
 * fuzzed: they never read outside what they are given, and a malformed answer is an error,
 * never a crash. */
#ifndef SPOOLBOX_DNS_H
#define SPOOLBOX_DNS_H
#include <stddef.h>
#include <sys/socket.h>

#define DNS_MX_MAX 16        /* MX records kept (more are dropped, the most preferred kept) */
#define DNS_ADDR_MAX 16      /* addresses kept per host */
#define DNS_ANSWER_MAX 8192  /* largest answer read */
#define DNS_HOSTS_LINE_MAX 1024  /* longer lines of the hosts file are skipped */
#define DNS_HOSTS_FILE "/etc/hosts"

enum dns_status {
	DNS_OK = 0,
	DNS_NXDOMAIN,   /* the domain does not exist */
	DNS_NODATA,     /* the domain exists, without records of the asked type */
	DNS_NULLMX,     /* RFC 7505: the domain accepts no mail */
	DNS_TEMPFAIL,   /* no answer, SERVFAIL, timeout, or an answer we could not parse */
};

struct dns_mx {
	unsigned pref;
	char host[256];
};

struct dns_addr {
	struct sockaddr_storage sa;   /* port left 0: the caller sets it */
	socklen_t len;
};

/* Parses a DNS response to an MX query. Records of other types (a CNAME before the MX) are
 * skipped. Returns DNS_OK with *n records (unsorted), DNS_NODATA when there are none,
 * DNS_NULLMX when the only record is "0 .", DNS_NXDOMAIN for rcode 3, or DNS_TEMPFAIL for any
 * other rcode or a malformed answer. Null MX records beside real ones are dropped. */
int dns_parse_mx(const unsigned char *ans, size_t len, struct dns_mx *out, size_t max, size_t *n);

/* Parses a DNS response to an A or AAAA query: every A and AAAA record of its answer (a CNAME's
 * target comes in the same answer) is appended to out[*n..max), without duplicates. Returns
 * DNS_OK (also without any record), DNS_NXDOMAIN for rcode 3, or DNS_TEMPFAIL for any other
 * rcode, a truncated or a malformed answer. */
int dns_parse_addr(const unsigned char *ans, size_t len, struct dns_addr *out, size_t max, size_t *n);

/* One line of a hosts file ("ADDRESS NAME [ALIAS...] [# comment]", NUL-terminated): when name
 * is one of its names (compared case-blind, name without a trailing dot), its address is
 * appended to out[*n..max) unless there already, and the result is 1; else 0. */
int dns_hosts_line(const char *line, const char *name, struct dns_addr *out, size_t max, size_t *n);

/* Every address path (a hosts file) gives name, appended to out[*n..max) in the file's order;
 * 1 when there was at least one, 0 otherwise (also when path cannot be read). */
int dns_hosts_lookup(const char *path, const char *name, struct dns_addr *out, size_t max, size_t *n);

/* Sorts by preference and shuffles each run of equal preference; rnd() gives the randomness
 * (a test passes a fixed sequence). */
void dns_mx_order(struct dns_mx *mx, size_t n, unsigned (*rnd)(void *ctx), void *ctx);

/* Looks up and orders the MX records of domain. err gets a one-line reason for anything but
 * DNS_OK ("example.com: MX lookup: SERVFAIL"). */
int dns_lookup_mx(const char *domain, struct dns_mx *out, size_t max, size_t *n, char *err, size_t errlen);

/* The addresses of host (a name, or an IPv4/IPv6 literal), IPv6 first, then IPv4, each family
 * in the hosts file's or the DNS's order, without duplicates; at most DNS_ADDR_MAX. Returns
 * DNS_OK, DNS_NXDOMAIN / DNS_NODATA (no address) or DNS_TEMPFAIL, with err set for the others. */
int dns_lookup_addr(const char *host, struct dns_addr *out, size_t max, size_t *n, char *err, size_t errlen);

/* "192.0.2.1" or "2001:db8::1" for an address. */
/* The family (AF_INET6, AF_INET) of an address literal, its 16 or 4 bytes in bin; 0 for
 * anything else. */
int dns_literal(const char *s, unsigned char *bin);
void dns_addr_str(const struct dns_addr *a, char *out, size_t size);
#endif
