/* Unit tests of the DNS answer parsers and the MX ordering (lib/dns.h), on answers built here
 * byte by byte: compression pointers, CNAMEs before the MX, null MX, truncation, bad lengths;
 * and of the hosts-file reader. */
#include "dns.h"
#include "unit.h"
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned seq(void *ctx)
{
	unsigned *s = ctx; /* a small LCG: deterministic, but not always even */
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

struct pkt {
	unsigned char b[1024];
	size_t n;
};

static void put16(struct pkt *p, unsigned v)
{
	p->b[p->n++] = (unsigned char)(v >> 8);
	p->b[p->n++] = (unsigned char)v;
}

static void name(struct pkt *p, const char *s)
{
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		p->b[p->n++] = (unsigned char)l;
		memcpy(p->b + p->n, s, l);
		p->n += l;
		s += l + (dot ? 1 : 0);
	}
	p->b[p->n++] = 0;
}

/* Header and the question "example.test MX" (its name at offset 12). */
static void start(struct pkt *p, unsigned rcode, unsigned an)
{
	memset(p, 0, sizeof *p);
	put16(p, 0x1234);
	put16(p, 0x8180 | rcode);
	put16(p, 1);
	put16(p, an);
	put16(p, 0);
	put16(p, 0);
	name(p, "example.test");
	put16(p, 15);
	put16(p, 1);
}

static void mx(struct pkt *p, unsigned pref, const char *host, int compress_owner)
{
	if (compress_owner)
		put16(p, 0xc00c);
	else
		name(p, "example.test");
	put16(p, 15);
	put16(p, 1);
	put16(p, 0);
	put16(p, 300);
	size_t lenpos = p->n;
	put16(p, 0);
	put16(p, pref);
	name(p, host);
	unsigned rdlen = (unsigned)(p->n - lenpos - 2);
	p->b[lenpos] = (unsigned char)(rdlen >> 8);
	p->b[lenpos + 1] = (unsigned char)rdlen;
}

TEST(dns_parse_mx_records)
{
	struct pkt p;
	struct dns_mx out[DNS_MX_MAX];
	size_t n;
	start(&p, 0, 3);
	mx(&p, 20, "MX2.example.test", 1);
	mx(&p, 10, "mx1.example.test", 0);
	mx(&p, 10, "mx1b.example.test", 1);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, DNS_MX_MAX, &n), DNS_OK);
	CHECK_INT(n, 3);
	CHECK_STR(out[0].host, "mx2.example.test"); /* lower-cased */
	CHECK_INT(out[0].pref, 20);
	/* every truncation of a good answer is an error or a subset, never a crash */
	for (size_t cut = 0; cut < p.n; cut++)
		CHECK(dns_parse_mx(p.b, cut, out, DNS_MX_MAX, &n) != DNS_OK || n < 3);
}

TEST(dns_parse_status)
{
	struct pkt p;
	struct dns_mx out[4];
	size_t n;
	start(&p, 3, 0);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_NXDOMAIN);
	start(&p, 2, 0);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_TEMPFAIL);
	start(&p, 0, 0);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_NODATA);
	start(&p, 0, 1);
	mx(&p, 0, "", 1);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_NULLMX);
	/* a null MX beside a real one is dropped */
	start(&p, 0, 2);
	mx(&p, 0, "", 1);
	mx(&p, 5, "real.test", 1);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_OK);
	CHECK_INT(n, 1);
	CHECK_STR(out[0].host, "real.test");
	/* truncated (TC bit) */
	start(&p, 0, 0);
	p.b[2] |= 2;
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_TEMPFAIL);
	/* an answer count larger than the records present */
	start(&p, 0, 5);
	mx(&p, 1, "a.test", 1);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_TEMPFAIL);
	/* a compression pointer pointing at itself */
	start(&p, 0, 1);
	size_t at = p.n;
	mx(&p, 1, "a.test", 1);
	p.b[at + 14] = 0xc0; /* the exchange name: owner(2) type class ttl rdlen(10) pref(2) */
	p.b[at + 15] = (unsigned char)(at + 14);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 4, &n), DNS_TEMPFAIL);
}

TEST(dns_keeps_the_most_preferred_when_too_many)
{
	struct pkt p;
	struct dns_mx out[2];
	size_t n;
	start(&p, 0, 4);
	mx(&p, 50, "e.test", 1);
	mx(&p, 40, "d.test", 1);
	mx(&p, 10, "a.test", 1);
	mx(&p, 30, "c.test", 1);
	CHECK_INT(dns_parse_mx(p.b, p.n, out, 2, &n), DNS_OK);
	CHECK_INT(n, 2);
	unsigned s = 0;
	dns_mx_order(out, n, seq, &s);
	CHECK_STR(out[0].host, "a.test");
	CHECK_STR(out[1].host, "c.test");
}

TEST(dns_mx_order_sorts_and_shuffles_equals)
{
	struct dns_mx m[4] = {{20, "c"}, {10, "a"}, {20, "d"}, {10, "b"}};
	unsigned s = 0, seen_a_first = 0, seen_b_first = 0;
	for (int round = 0; round < 8; round++) {
		struct dns_mx t[4];
		memcpy(t, m, sizeof t);
		dns_mx_order(t, 4, seq, &s);
		CHECK(t[0].pref == 10 && t[1].pref == 10 && t[2].pref == 20 && t[3].pref == 20);
		seen_a_first += t[0].host[0] == 'a';
		seen_b_first += t[0].host[0] == 'b';
	}
	CHECK(seen_a_first && seen_b_first);
}

TEST(dns_addr_literals)
{
	struct dns_addr a[4];
	size_t n;
	char s[64];
	CHECK_INT(dns_lookup_addr("192.0.2.7", a, 4, &n, s, sizeof s), DNS_OK);
	CHECK_INT(n, 1);
	dns_addr_str(&a[0], s, sizeof s);
	CHECK_STR(s, "192.0.2.7");
	CHECK_INT(dns_lookup_addr("2001:db8::1", a, 4, &n, s, sizeof s), DNS_OK);
	dns_addr_str(&a[0], s, sizeof s);
	CHECK_STR(s, "2001:db8::1");
}

/* an A (4 bytes) or AAAA (16) record for the owner at offset 12, of the class given */
static void rr(struct pkt *p, unsigned type, unsigned class, const void *data, unsigned len)
{
	put16(p, 0xc00c);
	put16(p, type);
	put16(p, class);
	put16(p, 0);
	put16(p, 300);
	put16(p, len);
	memcpy(p->b + p->n, data, len);
	p->n += len;
}

static const char *addr_str(const struct dns_addr *a)
{
	static char s[64];
	dns_addr_str(a, s, sizeof s);
	return s;
}

TEST(dns_parse_addr_records)
{
	struct pkt p;
	struct dns_addr out[3];
	size_t n = 0;
	static const unsigned char a1[4] = {192, 0, 2, 1}, a2[4] = {192, 0, 2, 2},
	                           v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	start(&p, 0, 6);
	p.b[p.n - 3] = 1; /* the question asks for A */
	name(&p, "alias.example.test"); /* a CNAME first: skipped, its target's records used */
	put16(&p, 5);
	put16(&p, 1);
	put16(&p, 0);
	put16(&p, 300);
	put16(&p, 2);
	put16(&p, 0xc00c);
	rr(&p, 1, 1, a1, 4);
	rr(&p, 1, 1, a1, 4);  /* a duplicate */
	rr(&p, 1, 3, a2, 4);  /* class CH: not ours */
	rr(&p, 1, 1, v6, 16); /* an A record of the wrong length */
	rr(&p, 28, 1, v6, 16);
	CHECK_INT(dns_parse_addr(p.b, p.n, out, 3, &n), DNS_OK);
	CHECK_INT(n, 2);
	CHECK_STR(addr_str(&out[0]), "192.0.2.1");
	CHECK_STR(addr_str(&out[1]), "2001:db8::1");
	CHECK_INT(out[0].len, sizeof(struct sockaddr_in));
	CHECK_INT(out[1].len, sizeof(struct sockaddr_in6));
	/* appended after what is there, up to max */
	start(&p, 0, 2);
	rr(&p, 1, 1, a2, 4);
	rr(&p, 1, 1, a1, 4);
	CHECK_INT(dns_parse_addr(p.b, p.n, out, 3, &n), DNS_OK);
	CHECK_INT(n, 3);
	CHECK_STR(addr_str(&out[2]), "192.0.2.2");
	/* every cut of an answer is an error or fewer records, never a read past it */
	for (size_t cut = 0; cut < p.n; cut++) {
		n = 0;
		CHECK(dns_parse_addr(p.b, cut, out, 3, &n) != DNS_OK || n < 2);
	}
	n = 0;
	start(&p, 3, 0);
	CHECK_INT(dns_parse_addr(p.b, p.n, out, 3, &n), DNS_NXDOMAIN);
	start(&p, 2, 0);
	CHECK_INT(dns_parse_addr(p.b, p.n, out, 3, &n), DNS_TEMPFAIL);
	start(&p, 0, 0);
	p.b[2] |= 2;
	CHECK_INT(dns_parse_addr(p.b, p.n, out, 3, &n), DNS_TEMPFAIL);
	start(&p, 0, 0);
	CHECK_INT(dns_parse_addr(p.b, p.n, out, 3, &n), DNS_OK);
	CHECK_INT(n, 0);
}

TEST(dns_hosts_lines)
{
	static const struct {
		const char *line, *name, *want;
	} t[] = {
		{"127.0.0.1 localhost", "localhost", "127.0.0.1"},
		{"127.0.0.1\tlocalhost.localdomain LocalHost\n", "localhost", "127.0.0.1"},
		{"::1 ip6-localhost localhost # comment", "LOCALHOST", "::1"},
		{"192.0.2.5 relay.Example.NET relay", "relay.example.net", "192.0.2.5"},
		{"192.0.2.5 relay#comment", "relay", "192.0.2.5"},
		{"192.0.2.5 relay #relay2", "relay2", NULL},
		{"# 192.0.2.5 relay", "relay", NULL},
		{"192.0.2.5", "192.0.2.5", NULL},
		{"192.0.2.5 relayx", "relay", NULL},
		{"192.0.2.5 relay", "relayx", NULL},
		{"relay 192.0.2.5", "192.0.2.5", NULL},
		{"192.0.2.500 relay", "relay", NULL},
		{"fe80::1%eth0 relay", "relay", NULL},
		{"", "relay", NULL},
		{"  \t ", "relay", NULL},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		unit_case(t[i].line);
		struct dns_addr a[2];
		size_t n = 0;
		CHECK_INT(dns_hosts_line(t[i].line, t[i].name, a, 2, &n), t[i].want != NULL);
		CHECK_INT(n, t[i].want != NULL);
		if (t[i].want && n)
			CHECK_STR(addr_str(&a[0]), t[i].want);
	}
}

/* The file: every matching line in order, an over-long line skipped, the last line without a
 * newline read; dns_lookup_addr puts IPv6 first (checked on literals: /etc/hosts is not ours). */
TEST(dns_hosts_file)
{
	char path[512];
	snprintf(path, sizeof path, "%s/hosts", unit_tmpdir());
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	char *longl = unit_long_line("192.0.2.3 relay ", 3000);
	fprintf(f, "192.0.2.1 relay\n%s192.0.2.2 other\n2001:db8::7 relay\n", longl);
	free(longl);
	fprintf(f, "192.0.2.1 RELAY\n192.0.2.4 x relay");
	fclose(f);
	struct dns_addr a[DNS_ADDR_MAX];
	size_t n = 0;
	CHECK_INT(dns_hosts_lookup(path, "relay", a, DNS_ADDR_MAX, &n), 1);
	CHECK_INT(n, 3);
	CHECK_STR(addr_str(&a[0]), "192.0.2.1");
	CHECK_STR(addr_str(&a[1]), "2001:db8::7");
	CHECK_STR(addr_str(&a[2]), "192.0.2.4");
	n = 0;
	CHECK_INT(dns_hosts_lookup(path, "nowhere", a, DNS_ADDR_MAX, &n), 0);
	CHECK_INT(dns_hosts_lookup("/nonexistent/hosts", "relay", a, DNS_ADDR_MAX, &n), 0);
	CHECK_INT(n, 0);
	char err[128];
	CHECK_INT(dns_lookup_addr("::ffff:192.0.2.1", a, DNS_ADDR_MAX, &n, err, sizeof err), DNS_OK);
	CHECK_INT(n, 1);
	CHECK_INT(a[0].sa.ss_family, AF_INET6);
}
