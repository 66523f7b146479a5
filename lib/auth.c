/* SASL client mechanisms for SMTP AUTH; the contract and the mechanism preference order are in
 * auth.h. Every line built here may hold a secret, so nothing here logs, and the intermediate
 * buffers are wiped before returning. */
#include "auth.h"
#include "config_default.h"
#include "base64.h"
#include "md5.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

static const char *const names[] = {"none", "PLAIN", "LOGIN", "CRAM-MD5", "XOAUTH2"};

const char *auth_mech_name(enum auth_mech m)
{
	return (unsigned)m < ARRAY_LEN(names) ? names[m] : "none";
}

enum auth_mech auth_mech_parse(const char *s)
{
	for (unsigned i = 1; i < ARRAY_LEN(names); i++)
		if (str_caseeq(s, names[i]))
			return (enum auth_mech)i;
	return AUTH_NONE;
}

unsigned auth_parse_ehlo(const char *params)
{
	unsigned mask = 0;
	const char *p = params;
	if (str_ncaseeq(p, "AUTH=", 5)) /* pre-RFC 2554 servers: "250-AUTH=LOGIN PLAIN" */
		p += 5;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		const char *w = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
		char word[16];
		size_t n = (size_t)(p - w);
		if (n == 0 || n >= sizeof word)
			continue;
		memcpy(word, w, n);
		word[n] = 0;
		enum auth_mech m = auth_mech_parse(word);
		/* a mechanism compiled out is one the server did not offer */
		if (m != AUTH_NONE && (ENABLE_CRAM_MD5 || m != AUTH_CRAM_MD5))
			mask |= AUTH_BIT(m);
	}
	return mask;
}

enum auth_mech auth_choose(unsigned offered, int have_token, int over_tls)
{
	static const enum auth_mech tls_order[] = {AUTH_PLAIN, AUTH_LOGIN, AUTH_CRAM_MD5};
	static const enum auth_mech clear_order[] = {AUTH_CRAM_MD5, AUTH_PLAIN, AUTH_LOGIN};
	if (have_token)
		return offered & AUTH_BIT(AUTH_XOAUTH2) ? AUTH_XOAUTH2 : AUTH_NONE;
	const enum auth_mech *order = over_tls ? tls_order : clear_order;
	for (int i = 0; i < 3; i++)
		if (offered & AUTH_BIT(order[i]))
			return order[i];
	return AUTH_NONE;
}

void auth_init(struct auth *a, enum auth_mech mech, const char *user, const char *secret)
{
	a->mech = mech;
	a->step = 0;
	a->user = user ? user : "";
	a->secret = secret ? secret : "";
	a->err[0] = 0;
}

void auth_clear(struct auth *a)
{
	a->user = a->secret = "";
	a->err[0] = 0;
	a->step = 0;
}

/* "MECH: what" as the reason; -1 */
static int fail_mech(struct auth *a, const char *what)
{
	str_fmt(a->err, sizeof a->err, "%s: %s", auth_mech_name(a->mech), what);
	return -1;
}

/* "PREFIX base64(data)" into out; -1 with a reason when it does not fit. */
/* always_inline (here and on has_byte): measured smaller than the calls (-16 bytes each) */
static inline __attribute__((always_inline)) ssize_t encode_line(struct auth *a, char *out, size_t size,
                                                                 const char *prefix, const void *data, size_t n)
{
	size_t pl = strlen(prefix);
	if (pl >= size || base64_encode(out + pl, size - pl, data, n) < 0) {
		if (size)
			out[0] = 0;
		return fail_mech(a, "response too long for the buffer");
	}
	memcpy(out, prefix, pl);
	return (ssize_t)strlen(out);
}

/* A user or secret may not hold bytes its mechanism uses as separators. */
static inline __attribute__((always_inline)) int has_byte(const char *s, const char *bad)
{
	return s[strcspn(s, bad)] != 0;
}

ssize_t auth_start(struct auth *a, char *out, size_t size)
{
	/* the initial response of PLAIN and XOAUTH2, sent base64-encoded after "AUTH MECH " */
	char msg[AUTH_LINE_MAX];
	size_t n = 0;
	a->step = 0;
	a->err[0] = 0;
	if (size)
		out[0] = 0;
	if (has_byte(a->user, "\r\n") || has_byte(a->secret, "\r\n")) {
		str_fmt(a->err, sizeof a->err, "user name or secret holds a line break");
		return -1;
	}
	char prefix[16];
	size_t prl = (size_t)snprintf(prefix, sizeof prefix, "AUTH %s ", auth_mech_name(a->mech));
	switch (a->mech) {
	case AUTH_PLAIN: {
		/* RFC 4616: [authzid] NUL authcid NUL passwd; we send no authzid */
		size_t ul = strlen(a->user), pl = strlen(a->secret);
		if (ul + pl + 2 > 2 * 1024 + 2)
			return fail_mech(a, "user name or password too long"); /* "PLAIN: ..." */
		msg[0] = 0;
		memcpy(msg + 1, a->user, ul);
		msg[1 + ul] = 0;
		memcpy(msg + 2 + ul, a->secret, pl);
		n = ul + pl + 2;
		break;
	}
	case AUTH_XOAUTH2:
		/* "user=" user ^A "auth=Bearer " token ^A ^A (Google's and Microsoft's XOAUTH2) */
		if (has_byte(a->user, "\1") || has_byte(a->secret, "\1 "))
			return fail_mech(a, "user name or token holds a byte it cannot carry"); /* "XOAUTH2: ..." */
		if (str_fmt(msg, sizeof msg, "user=%s\1auth=Bearer %s\1\1", a->user, a->secret) < 0) {
			explicit_bzero(msg, sizeof msg);
			return fail_mech(a, "user name or token too long");
		}
		n = strlen(msg);
		break;
	case AUTH_LOGIN:
	case AUTH_CRAM_MD5:
		/* "AUTH MECH" without the space: the response comes with the first challenge */
		if (prl > size) {
			str_fmt(a->err, sizeof a->err, "output buffer too small");
			return -1;
		}
		prefix[prl - 1] = 0;
		return (ssize_t)str_lcpy(out, prefix, size);
	default:
		str_fmt(a->err, sizeof a->err, "no AUTH mechanism chosen");
		return -1;
	}
	ssize_t r = encode_line(a, out, size, prefix, msg, n);
	explicit_bzero(msg, n);
	return r;
}

static ssize_t step_cram(struct auth *a, const unsigned char *ch, size_t chlen, char *out, size_t size)
{
	/* RFC 2195: user SP lowercase-hex(HMAC-MD5(password, challenge)) */
	static const char hex[] = "0123456789abcdef";
	unsigned char mac[MD5_LEN];
	char resp[1024 + 1 + 2 * MD5_LEN + 1];
	size_t ul = strlen(a->user);
	if (ul > 1024)
		return fail_mech(a, "user name too long"); /* "CRAM-MD5: ..." */
	hmac_md5(a->secret, strlen(a->secret), ch, chlen, mac);
	memcpy(resp, a->user, ul);
	resp[ul] = ' ';
	for (int i = 0; i < MD5_LEN; i++) {
		resp[ul + 1 + 2 * i] = hex[mac[i] >> 4];
		resp[ul + 2 + 2 * i] = hex[mac[i] & 15];
	}
	ssize_t r = encode_line(a, out, size, "", resp, ul + 1 + 2 * MD5_LEN);
	explicit_bzero(mac, sizeof mac);
	explicit_bzero(resp, sizeof resp);
	return r;
}

/* Keeps the printable part of the server's XOAUTH2 error JSON for the report. */
static void keep_printable(char *dst, size_t size, const unsigned char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < size; i++)
		dst[o++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	dst[o] = 0;
}

ssize_t auth_step(struct auth *a, const char *challenge, char *out, size_t size)
{
	unsigned char ch[1024];
	size_t cl = strlen(challenge);
	if (size)
		out[0] = 0;
	/* a lenient server may end the text with spaces */
	while (cl && (challenge[cl - 1] == ' ' || challenge[cl - 1] == '\r' || challenge[cl - 1] == '\n'))
		cl--;
	if (cl > BASE64_ENCLEN(sizeof ch)) {
		return fail_mech(a, "the server's challenge is too long");
	}
	ssize_t n = base64_decode(ch, sizeof ch, challenge, cl);
	if (n < 0) {
		return fail_mech(a, "the server's challenge is not valid base64");
	}
	int step = a->step++;
	switch (a->mech) {
	case AUTH_LOGIN:
		/* the prompts ("Username:", "Password:") vary between servers; the order does not */
		if (step == 0)
			return encode_line(a, out, size, "", a->user, strlen(a->user));
		if (step == 1)
			return encode_line(a, out, size, "", a->secret, strlen(a->secret));
		break;
	case AUTH_CRAM_MD5:
		if (ENABLE_CRAM_MD5 && step == 0)
			return step_cram(a, ch, (size_t)n, out, size);
		break;
	case AUTH_XOAUTH2:
		/* a 334 after the initial response carries the error as JSON; RFC 4954 wants an
		 * empty response, after which the server sends its 535 */
		if (step == 0) {
			keep_printable(a->err, sizeof a->err, ch, (size_t)n);
			return 0;
		}
		break;
	default:
		break;
	}
	return fail_mech(a, "unexpected challenge from the server");
}

void auth_redact(const char *sent, char *out, size_t size)
{
	if (!size)
		return;
	if (strcmp(sent, "*") == 0 || strcmp(sent, "*\r\n") == 0) {
		str_lcpy(out, "*", size);
		return;
	}
	if (str_ncaseeq(sent, "AUTH ", 5)) {
		/* keep "AUTH MECH", hide the initial response */
		size_t n = 5 + strcspn(sent + 5, " \r\n");
		if (n > 31)
			n = 31; /* at most 31 bytes of the command shown */
		str_fmt(out, size, "%.*s%s", (int)n, sent, sent[n] == ' ' ? " <hidden>" : "");
		return;
	}
	str_lcpy(out, "<hidden>", size);
}
