/* Parser of the SMARTHOST list (syntax in smarthost.h and docs/smtp.md). */
#include "smarthost.h"
#include "auth.h"
#include "util.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Characters allowed in a host name or address literal: enough for names, IPv4 and IPv6. */
static int hostchar(int c)
{
	/* by hand: musl's isalnum() was linked for this alone */
	return (unsigned)((c | 32) - 'a') < 26 || (unsigned)(c - '0') < 10 || c == '-' || c == '.' || c == '_' || c == ':';
}

static int parse_port(const char *s, size_t n, unsigned *port)
{
	if (n == 0 || n > 5)
		return -1;
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

static int parse_host(const char *t, size_t n, struct smarthost *h, const char **why)
{
	const char *hs = t, *ps = NULL;
	size_t hn = n, pn = 0;
	if (n && t[0] == '[') {
		const char *close = memchr(t, ']', n);
		if (!close) {
			*why = "missing ] after the address";
			return -1;
		}
		h->bracket = 1;
		hs = t + 1;
		hn = (size_t)(close - hs);
		size_t rest = n - (size_t)(close + 1 - t);
		if (rest) {
			if (close[1] != ':') {
				*why = "expected :port after ]";
				return -1;
			}
			ps = close + 2;
			pn = rest - 1;
		}
	} else {
		const char *colon = memchr(t, ':', n);
		if (colon) {
			if (memchr(colon + 1, ':', n - (size_t)(colon + 1 - t))) {
				*why = "an IPv6 address must be written in brackets";
				return -1;
			}
			hn = (size_t)(colon - t);
			ps = colon + 1;
			pn = n - hn - 1;
		}
	}
	if (hn == 0 || hn >= sizeof h->host) {
		*why = hn ? "host name too long" : "empty host name";
		return -1;
	}
	for (size_t i = 0; i < hn; i++)
		if (!hostchar((unsigned char)hs[i]) || (!h->bracket && hs[i] == ':')) {
			*why = "bad character in host name";
			return -1;
		}
	memcpy(h->host, hs, hn);
	h->host[hn] = 0;
	if (ps && parse_port(ps, pn, &h->port) < 0) {
		*why = "bad port (1-65535)";
		return -1;
	}
	return 0;
}

static int setstr(char *dst, size_t size, const char *v, size_t n, const char **why)
{
	if (n == 0 || n >= size) {
		*why = n ? "value too long" : "empty value";
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] <= ' ' || v[i] == 0x7f) {
			*why = "control character in value";
			return -1;
		}
	memcpy(dst, v, n);
	dst[n] = 0;
	return 0;
}

static int is_word(const char *t, size_t n, const char *w)
{
	return strlen(w) == n && str_ncaseeq(t, w, n);
}

/* The options without a value: each sets one int field of struct smarthost */
static const char flag_words[] = "smtps\0starttls\0mx\0noauth\0cleartext_auth\0unverified_auth";
static const unsigned char flags[][2] = { /* each word's field and value, in the same order */
	{offsetof(struct smarthost, smtps), 1},
	{offsetof(struct smarthost, smtps), 0},
	{offsetof(struct smarthost, mx), 1},
	{offsetof(struct smarthost, noauth), 1},
	{offsetof(struct smarthost, cleartext_auth), 1},
	{offsetof(struct smarthost, unverified_auth), 1},
};

/* The options with a string value: the field it goes to */
static const struct {
	char word[6];
	unsigned short off, size;
} strs[] = {
	{"auth", offsetof(struct smarthost, mech), sizeof ((struct smarthost *)0)->mech},
	{"cert", offsetof(struct smarthost, cert), SMARTHOST_PATH_MAX},
	{"key", offsetof(struct smarthost, key), SMARTHOST_PATH_MAX},
	{"name", offsetof(struct smarthost, tls_name), sizeof ((struct smarthost *)0)->tls_name},
};

static int parse_option(const char *t, size_t n, struct smarthost *h, const char **why)
{
	const char *eq = memchr(t, '=', n);
	if (!eq) {
		const char *w = flag_words;
		for (size_t i = 0; i < ARRAY_LEN(flags); i++, w += strlen(w) + 1)
			if (is_word(t, n, w)) {
				*(int *)(void *)((char *)h + flags[i][0]) = flags[i][1];
				return 0;
			}
		*why = "unknown option";
		return -1;
	}
	size_t kn = (size_t)(eq - t), vn = n - kn - 1;
	const char *v = eq + 1;
	if (is_word(t, kn, "tls")) {
		char w[16];
		if (vn && vn < sizeof w) {
			memcpy(w, v, vn);
			w[vn] = 0;
			if (str_caseeq(w, "smtps")) {
				h->policy = TLS_VERIFY;
				h->smtps = 1;
				return 0;
			}
			if (tls_policy_parse(w, &h->policy) == 0)
				return 0;
		}
		*why = "tls= wants none, may, encrypt, verify or smtps";
		return -1;
	}
	for (size_t i = 0; i < ARRAY_LEN(strs); i++) {
		if (!is_word(t, kn, strs[i].word))
			continue;
		char *dst = (char *)h + strs[i].off;
		if (setstr(dst, strs[i].size, v, vn, why) < 0)
			return -1;
		if (dst == h->mech) {
			for (char *p = h->mech; *p; p++)
				if (*p >= 'a' && *p <= 'z')
					*p = (char)(*p - 32); /* not toupper(): musl's was linked for this alone */
			if (auth_mech_parse(h->mech) == AUTH_NONE) {
				*why = "auth= wants PLAIN, LOGIN, CRAM-MD5 or XOAUTH2";
				return -1;
			}
		}
		if (dst == h->tls_name)
			for (const char *c = h->tls_name; *c; c++)
				if (!hostchar((unsigned char)*c) || *c == ':') {
					*why = "name= wants a host name";
					return -1;
				}
		return 0;
	}
	if (is_word(t, kn, "pin")) {
		/* Each pin= adds one to the comma-separated list lib/tls.h reads. */
		char one[80];
		unsigned char raw[32];
		size_t have = strlen(h->pins), count = have ? 1 : 0;
		for (const char *c = h->pins; *c; c++)
			count += *c == ',';
		if (count >= TLS_MAX_PINS) {
			*why = "too many pins";
			return -1;
		}
		if (setstr(one, sizeof one, v, vn, why) < 0)
			return -1;
		if (tls_pin_parse(one, raw) < 0) {
			*why = "pin= wants the SHA-256 of the public key: 64 hex digits or base64";
			return -1;
		}
		if (str_fmt(h->pins + have, sizeof h->pins - have, "%s%s", have ? "," : "", one) < 0) {
			h->pins[have] = 0;
			*why = "pins too long";
			return -1;
		}
		return 0;
	}
	*why = "unknown option";
	return -1;
}

static int blank(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One entry: s[0..n) without the separating commas. */
static int parse_entry(const char *s, size_t n, struct smarthost *h, const char **why)
{
	memset(h, 0, sizeof *h);
	h->policy = TLS_VERIFY;
	h->smtps = -1; /* until smtps, starttls or tls=smtps says */
	int first = 1;
	size_t i = 0;
	while (i < n) {
		while (i < n && blank((unsigned char)s[i]))
			i++;
		if (i == n)
			break;
		size_t st = i;
		while (i < n && !blank((unsigned char)s[i]))
			i++;
		if (first) {
			if (parse_host(s + st, i - st, h, why) < 0)
				return -1;
			first = 0;
		} else if (parse_option(s + st, i - st, h, why) < 0) {
			return -1;
		}
	}
	if (first) {
		*why = "empty entry";
		return -1;
	}
	if (h->smtps < 0)
		h->smtps = h->port == 465;
	/* a pin is a promise that the peer proves that key: over TLS, always (tls=may would fall
	 * back to clear text, and the message would go to whoever answered) */
	if (h->pins[0] && h->policy == TLS_NONE) {
		*why = "pin= needs TLS (tls=none cannot be pinned)";
		return -1;
	}
	if (h->pins[0] && h->policy == TLS_MAY)
		h->policy = TLS_ENCRYPT;
	if (h->smtps && h->policy < TLS_ENCRYPT) {
		*why = "implicit TLS (smtps) needs tls=encrypt or tls=verify";
		return -1;
	}
	if (h->mx && h->bracket) {
		*why = "mx cannot be used with a [bracketed] host";
		return -1;
	}
	if ((h->cert[0] != 0) != (h->key[0] != 0)) {
		*why = "cert= and key= go together";
		return -1;
	}
	return 0;
}

int smarthost_parse(const char *s, struct smarthost *out, size_t max, char *err, size_t errlen)
{
	size_t len = strlen(s), count = 0, st = 0;
	err[0] = 0;
	if (len > SMARTHOST_LEN) {
		str_fmt(err, errlen, "SMARTHOST is longer than %d bytes", SMARTHOST_LEN);
		return -1;
	}
	size_t k = 0;
	while (k < len && blank((unsigned char)s[k]))
		k++;
	if (k == len)
		return 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ',')
			continue;
		const char *why = NULL;
		if (count >= max)
			why = "too many entries";
		else if (parse_entry(s + st, i - st, &out[count], &why) == 0)
			count++;
		if (why) {
			str_fmt(err, errlen, "SMARTHOST entry %zu: %s", count + 1, why);
			return -1;
		}
		st = i + 1;
	}
	return (int)count;
}

unsigned smarthost_port(const struct smarthost *h)
{
	return h->port ? h->port : h->smtps ? 465 : 25;
}
