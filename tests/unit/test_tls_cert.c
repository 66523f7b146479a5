/* RFC 6125 host-name matching and the DER walker of lib/tls_cert.c, without a network: the
 * match rules as a table, then real openssl-made certificates (SAN dNSName, wildcard, iPAddress,
 * CN-only, CN beside SAN) and the SPKI against openssl's own extraction. */
#include "tls_cert.h"
#include "unit.h"
#include <stdio.h>
#include <stdlib.h>

TEST(cert_name_match_rules)
{
	static const struct {
		const char *pattern, *host;
		int want;
	} cases[] = {
		{"mail.example.com", "mail.example.com", 1},
		{"MAIL.Example.COM", "mail.example.com", 1},
		{"mail.example.com.", "mail.example.com", 1},
		{"mail.example.com", "mail.example.com.", 1},
		{"mail.example.com", "example.com", 0},
		{"mail.example.com", "mail.example.co", 0},
		{"*.example.com", "mail.example.com", 1},
		{"*.example.com", "MAIL.EXAMPLE.COM", 1},
		{"*.example.com", "example.com", 0},       /* exactly one label */
		{"*.example.com", "a.b.example.com", 0},
		{"*.example.com", ".example.com", 0},      /* not an empty label */
		{"*.com", "example.com", 0},               /* at least two labels after the wildcard */
		{"*", "localhost", 0},
		{"f*.example.com", "foo.example.com", 0},  /* no partial-label wildcards */
		{"*oo.example.com", "foo.example.com", 0},
		{"a.*.example.com", "a.b.example.com", 0}, /* only leftmost */
		{"*.*.example.com", "a.b.example.com", 0},
		{"xn--caf-dma.example", "xn--caf-dma.example", 1},
		{"mail..example.com", "mail..example.com", 0},
		{".example.com", ".example.com", 0},
		{"", "", 0},
		{"mail.example.com\0evil.com", "mail.example.com", 0},
		{"mail example.com", "mail example.com", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t plen = strlen(cases[i].pattern);
		if (i == sizeof cases / sizeof *cases - 2)
			plen = 25; /* the embedded NUL */
		int got = cert_name_match(cases[i].pattern, plen, cases[i].host);
		if (got != cases[i].want)
			unit_fail(__FILE__, __LINE__, "%s vs %s: %d, expected %d", cases[i].pattern, cases[i].host,
			          got, cases[i].want);
	}
}

/* A certificate made by openssl with extra req arguments (extensions), as DER, into buf.
 * Returns its length or -1. */
static long make_cert_args(const char *subj, const char *args, unsigned char *buf, size_t size)
{
	char cmd[1024], path[300];
	const char *d = unit_tmpdir();
	snprintf(path, sizeof path, "%s/c.der", d);
	snprintf(cmd, sizeof cmd,
	         "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout %s/k.pem "
	         "-subj '%s' %s -days 1 -outform DER -out %s 2>/dev/null",
	         d, subj, args, path);
	if (system(cmd) != 0)
		return -1;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	long n = (long)fread(buf, 1, size, f);
	fclose(f);
	return n;
}

/* The same with a subjectAltName (NULL: none). */
static long make_cert(const char *subj, const char *san, unsigned char *buf, size_t size)
{
	char args[600];
	snprintf(args, sizeof args, "%s%s%s", san ? "-addext 'subjectAltName=" : "", san ? san : "", san ? "'" : "");
	return make_cert_args(subj, args, buf, size);
}

TEST(cert_check_name_real_certificates)
{
	static unsigned char der[8192];
	char names[256];
	long n = make_cert("/CN=ignored.test", "DNS:mail.test,DNS:*.wild.test,IP:192.0.2.7,IP:::1", der, sizeof der);
	CHECK(n > 0);
	CHECK_INT(cert_check_name(der, (size_t)n, "mail.test", names, sizeof names), 1);
	CHECK_INT(cert_check_name(der, (size_t)n, "x.wild.test", names, sizeof names), 1);
	CHECK_INT(cert_check_name(der, (size_t)n, "192.0.2.7", names, sizeof names), 1);
	CHECK_INT(cert_check_name(der, (size_t)n, "[192.0.2.7]", names, sizeof names), 1);
	CHECK_INT(cert_check_name(der, (size_t)n, "[IPv6:::1]", names, sizeof names), 1);
	CHECK_INT(cert_check_name(der, (size_t)n, "192.0.2.8", names, sizeof names), 0);
	/* the CN is not used when dNSNames exist */
	CHECK_INT(cert_check_name(der, (size_t)n, "ignored.test", names, sizeof names), 0);
	CHECK_STR(names, "mail.test, *.wild.test, 192.0.2.7, ::1");
	/* a dNSName that spells an address does not match the address */
	n = make_cert("/CN=x", "DNS:192.0.2.7", der, sizeof der);
	CHECK_INT(cert_check_name(der, (size_t)n, "192.0.2.7", names, sizeof names), 0);
	/* no SAN at all: the CN is not an identifier (no fallback); it is named in the error */
	n = make_cert("/O=Org/CN=cnonly.test", NULL, der, sizeof der);
	CHECK_INT(cert_check_name(der, (size_t)n, "cnonly.test", names, sizeof names), 0);
	CHECK_STR(names, "CN=cnonly.test only, no subjectAltName");
	/* a SAN of another type only (an address): still no CN fallback */
	n = make_cert("/CN=cnonly.test", "IP:192.0.2.9", der, sizeof der);
	CHECK_INT(cert_check_name(der, (size_t)n, "cnonly.test", names, sizeof names), 0);
	/* truncated anywhere: -1 or 0, never a match and never a read past the end */
	n = make_cert("/CN=t", "DNS:mail.test", der, sizeof der);
	for (long cut = 0; cut < n; cut++) {
		unsigned char *copy = malloc((size_t)cut + 1);
		memcpy(copy, der, (size_t)cut);
		if (cert_check_name(copy, (size_t)cut, "mail.test", NULL, 0) == 1)
			unit_fail(__FILE__, __LINE__, "match on a certificate cut at %ld", cut);
		free(copy);
	}
}

TEST(cert_spki_matches_openssl)
{
	static unsigned char der[8192], spki_ref[1024];
	char cmd[600];
	const char *d = unit_tmpdir();
	long n = make_cert("/CN=k", "DNS:k.test", der, sizeof der);
	CHECK(n > 0);
	snprintf(cmd, sizeof cmd, "openssl x509 -inform DER -in %s/c.der -pubkey -noout | openssl pkey -pubin -outform DER -out %s/spki.der", d, d);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/spki.der", d);
	FILE *f = fopen(cmd, "rb");
	CHECK(f != NULL);
	size_t rn = f ? fread(spki_ref, 1, sizeof spki_ref, f) : 0;
	if (f)
		fclose(f);
	const unsigned char *spki;
	size_t len;
	CHECK_INT(cert_spki(der, (size_t)n, &spki, &len), 0);
	CHECK_INT(len, rn);
	CHECK(len == rn && memcmp(spki, spki_ref, len) == 0);
	CHECK_INT(cert_spki(der, 10, &spki, &len), -1);
	static const unsigned char junk[] = {0x30, 0x84, 0xff, 0xff, 0xff, 0xff};
	CHECK_INT(cert_spki(junk, sizeof junk, &spki, &len), -1);
}

TEST(cert_extended_key_usage_and_name_constraints)
{
	static unsigned char der[8192];
	static const struct {
		const char *args;
		int server, nc;
	} t[] = {
	    {"-addext 'subjectAltName=DNS:a.test'", 1, 0},
	    {"-addext 'extendedKeyUsage=serverAuth'", 1, 0},
	    {"-addext 'extendedKeyUsage=clientAuth,serverAuth'", 1, 0},
	    {"-addext 'extendedKeyUsage=clientAuth'", 0, 0},
	    {"-addext 'extendedKeyUsage=critical,clientAuth,emailProtection'", 0, 0},
	    {"-addext 'extendedKeyUsage=anyExtendedKeyUsage'", 1, 0},
	    {"-addext 'nameConstraints=permitted;DNS:.test'", 1, 1},
	    {"-addext 'nameConstraints=critical,excluded;DNS:.example'", 1, 1},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		long n = make_cert_args("/CN=x", t[i].args, der, sizeof der);
		CHECK(n > 0);
		if (n <= 0)
			continue;
		if (cert_server_auth_ok(der, (size_t)n) != t[i].server)
			unit_fail(__FILE__, __LINE__, "%s: server auth %d", t[i].args, cert_server_auth_ok(der, (size_t)n));
		if (cert_has_name_constraints(der, (size_t)n) != t[i].nc)
			unit_fail(__FILE__, __LINE__, "%s: name constraints %d", t[i].args, cert_has_name_constraints(der, (size_t)n));
		/* truncated: never "fine" by accident */
		for (long cut = 1; cut < n; cut += 7)
			if (cert_server_auth_ok(der, (size_t)cut) == 1 && t[i].server == 0)
				unit_fail(__FILE__, __LINE__, "%s cut at %ld looks like a server certificate", t[i].args, cut);
	}
}
