/* The parts of tls.h that need no BearSSL and exist in every build: policy names, pin syntax,
 * status names. */
#include "tls.h"
#include "base64.h"
#include "util.h"
#include <string.h>

static const char *const policies[] = {"none", "may", "encrypt", "verify"};

int tls_available(void)
{
	return ENABLE_TLS;
}

int tls_policy_parse(const char *s, enum tls_policy *out)
{
	for (unsigned i = 0; i < ARRAY_LEN(policies); i++)
		if (str_caseeq(s, policies[i])) {
			*out = (enum tls_policy)i;
			return 0;
		}
	return -1;
}

const char *tls_policy_name(enum tls_policy p)
{
	return (unsigned)p < ARRAY_LEN(policies) ? policies[p] : "?";
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tls_pin_parse(const char *s, unsigned char out[32])
{
	if (str_ncaseeq(s, "sha256/", 7)) /* "sha256//" or "sha256/" */
		s += 7 + (s[7] == '/');
	size_t n = strlen(s);
	if (n == 64) {
		for (int i = 0; i < 32; i++) {
			int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
			if (hi < 0 || lo < 0)
				return -1;
			out[i] = (unsigned char)(hi << 4 | lo);
		}
		return 0;
	}
	unsigned char tmp[33];
	if (n == 44 && base64_decode(tmp, sizeof tmp, s, n) == 32) {
		memcpy(out, tmp, 32);
		return 0;
	}
	return -1;
}

int tls_pins_parse(const char *s, unsigned char out[][32], int max)
{
	int n = 0;
	if (!s)
		return 0;
	while (*s) {
		char one[80];
		size_t k = strcspn(s, ",");
		const char *a = s + strspn(s, " \t"), *b = s + k; /* blanks stop at the comma: a <= b */
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			if ((size_t)(b - a) >= sizeof one || n == max)
				return -1;
			memcpy(one, a, (size_t)(b - a));
			one[b - a] = 0;
			if (tls_pin_parse(one, out[n]) < 0)
				return -1;
			n++;
		}
		s += k;
		if (*s == ',')
			s++;
	}
	return n;
}

const char *tls_status_name(enum tls_status s)
{
	_Static_assert(TLS_E_NOMEM == 8, "the keys below");
	/* keyed by status + 1 (str_bykey's keys start at 1) */
	return str_bykey("\001ok\0\002TLS not built in\0\003configuration\0\004connection\0\005protocol\0"
	                 "\006certificate\0\007clock not set\0\010pin mismatch\0\011out of memory\0\0?",
	                 (unsigned)s + 1);
}
