/* The MAILQv2 authentication file (seed 000's PARAMauthfile): parsing and lookup. See mqauth.h. */
#include "mqauth.h"
#include "conf.h"
#include "md5.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MQAUTH_STR2(x) #x
#define MQAUTH_STR(x) MQAUTH_STR2(x) /* a limit's digits, into a message at compile time */

/* The next blank-separated word of p (n bytes) at or after *i: its start and length (*wl),
 * *i moved past it; NULL when only blanks are left. Both lists of an entry are such words. */
static const char *next_word(const char *p, size_t n, size_t *i, size_t *wl)
{
	while (*i < n && (p[*i] == ' ' || p[*i] == '\t'))
		(*i)++;
	size_t k = *i;
	while (k < n && p[k] != ' ' && p[k] != '\t')
		k++;
	if (k == *i)
		return NULL;
	const char *w = p + *i;
	*wl = k - *i;
	*i = k;
	return w;
}

static unsigned attr_bits(const char *p, size_t n)
{
	/* each name behind its bits (one string, no table of pointers) */
	static const char names[] = "\037ALL\0\001SNMP\0\002QQ\0\004TT\0\010ETRN\0\020KILL\0";
	_Static_assert(MQA_ALL == 037 && MQA_SNMP == 1 && MQA_QQ == 2 && MQA_TT == 4 && MQA_ETRN == 010 &&
	               MQA_KILL == 020, "names[] holds the MQA_ bits");
	unsigned bits = 0;
	size_t i = 0, wl;
	for (const char *w; (w = next_word(p, n, &i, &wl));)
		/* unknown tokens are the seed's "work in progress" (SMTPIP...): not ours, ignored */
		for (const char *t = names; *t; t += strlen(t) + 1)
			if (strlen(t + 1) == wl && !memcmp(t + 1, w, wl)) {
				bits |= (unsigned char)*t;
				break;
			}
	return bits;
}

/* "[a.b.c.d]/len" at p (n bytes): 1 when ip is in it, 0 when not (or an IPv6 entry), -1 bad. */
static int acl_match(const char *p, size_t n, uint32_t ip)
{
	if (n < 2 || p[0] != '[')
		return -1;
	if (n > 6 && !memcmp(p + 1, "ipv6.", 5))
		return 0; /* a UNIX-socket peer is 127.0.0.1: IPv6 entries never match it */
	uint32_t a = 0;
	size_t i = 1;
	for (int part = 0; part < 4; part++) {
		unsigned v = 0, digits = 0;
		while (i < n && p[i] >= '0' && p[i] <= '9' && digits < 3)
			v = v * 10 + (unsigned)(p[i++] - '0'), digits++;
		if (!digits || v > 255)
			return -1;
		a = a << 8 | v;
		if (part < 3 && (i >= n || p[i++] != '.'))
			return -1;
	}
	if (i >= n || p[i++] != ']')
		return -1;
	unsigned len = 32;
	if (i < n) {
		if (p[i++] != '/' || i >= n)
			return -1;
		len = 0;
		unsigned digits = 0;
		while (i < n && p[i] >= '0' && p[i] <= '9' && digits < 2)
			len = len * 10 + (unsigned)(p[i++] - '0'), digits++;
		if (!digits || len > 32 || i != n)
			return -1;
	}
	uint32_t mask = len ? 0xffffffffu << (32 - len) : 0;
	return (a & mask) == (ip & mask);
}

static int list_match(const char *p, size_t n, uint32_t ip)
{
	int hit = 0;
	size_t i = 0, wl;
	for (const char *w; (w = next_word(p, n, &i, &wl));) {
		int m = acl_match(w, wl, ip);
		if (m < 0)
			return -1;
		hit |= m;
	}
	return hit;
}

int mqauth_lookup(const char *text, size_t len, const char *user, uint32_t ip, char *pass, size_t passlen,
                  unsigned *attrs, char *err, size_t errlen)
{
	size_t ulen = strlen(user);
	int lineno = 0;
	for (size_t pos = 0; pos < len;) {
		size_t n;
		const char *l = conf_line(text, len, &pos, &n); /* conf.c's LF/CRLF line split */
		lineno++;
		if (!n || l[0] == '#')
			continue;
		const char *why = "longer than " MQAUTH_STR(MQAUTH_LINE_MAX) " bytes";
		if (n > MQAUTH_LINE_MAX)
			goto bad;
		/* user:password:attrs:acls (the password holds no ':', as the seed says) */
		const char *f[4];
		size_t fl[4];
		size_t start = 0;
		int nf = 0;
		for (size_t i = 0; i <= n && nf < 4; i++)
			if (i == n || (l[i] == ':' && nf < 3)) {
				f[nf] = l + start;
				fl[nf++] = i - start;
				start = i + 1;
			}
		why = "expected user:password:attributes:addresses";
		if (nf != 4)
			goto bad;
		int m = list_match(f[3], fl[3], ip);
		why = "addresses are [a.b.c.d]/len";
		if (m < 0) {
		bad: /* one message for the three faults: "line N: why" */
			snprintf(err, errlen, "line %d: %s", lineno, why);
			return -1;
		}
		if (fl[0] != ulen || memcmp(f[0], user, ulen) || !m)
			continue;
		*attrs = attr_bits(f[2], fl[2]);
		size_t pl = fl[1] < passlen ? fl[1] : passlen - 1;
		memcpy(pass, f[1], pl);
		pass[pl] = 0;
		return 1;
	}
	return 0;
}

int mqauth_read(const char *path, uid_t owner, char *buf, size_t size, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	const char *why = NULL;
	ssize_t n = -1;
	/* one error path: errno of open, fstat or read (a close that succeeds leaves it) */
	if (fd >= 0 && fstat(fd, &st) == 0) {
		why = !S_ISREG(st.st_mode) ? "not a regular file" :
		      (st.st_mode & 07777) != 0600 ? "not mode 0600 (it holds passwords)" :
		      st.st_uid != owner ? "not owned by the scheduler's user" :
		      (size_t)st.st_size >= size ? "too large" : NULL;
		n = why ? -1 : read(fd, buf, size - 1);
	}
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, why ? why : strerror(errno));
		return -1;
	}
	buf[n] = 0;
	*len = (size_t)n;
	return 0;
}

void mqauth_digest(const char *challenge, const char *password, char out[33])
{
	struct md5 m;
	unsigned char d[MD5_LEN];
	md5_init(&m);
	md5_update(&m, challenge, strlen(challenge));
	md5_update(&m, password, strlen(password));
	md5_final(&m, d);
	for (int i = 0; i < MD5_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}
