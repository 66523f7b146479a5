/* spoolbox's res_query and dn_expand for the static build, linked as objects like vfprintf.c so
 * that musl's resolver is never pulled (its res_msend, resolv.conf reader over stdio, address
 * parser and query builder: 5 KiB, docs/size.md). lib/dns.c is the one caller: MX, AAAA and A.
 *
 * What it does, as musl's does: reads the nameserver lines (at most RES_NS_MAX, IPv4 or IPv6;
 * 127.0.0.1 when there are none) and "options timeout:N attempts:N" of /etc/resolv.conf on every
 * call (so a network namespace's own file counts), sends the query over UDP to every server at
 * once, again after each timeout up to attempts times, and takes the first answer whose id and
 * question are the query's from one of those servers with rcode 0 (NOERROR) or 3 (NXDOMAIN); a
 * SERVFAIL or REFUSED is kept in case nothing better comes. What musl 1.2.3 does not: a
 * truncated answer (TC) is asked again over TCP of the server that sent it (RFC 7766).
 * What neither does: search lists (res_query never searched), EDNS0, a nameserver's scope id.
 * Results as musl's res_query: the answer's length, or -1 with h_errno HOST_NOT_FOUND (rcode 3),
 * NO_DATA (no answer record), TRY_AGAIN (no answer at all); a SERVFAIL answer is returned as it
 * came, for the caller to read its rcode. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <resolv.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"

#ifndef RES_CONF_FILE
#define RES_CONF_FILE "/etc/resolv.conf"
#define RES_PORT 53
#endif
#define RES_NS_MAX 3          /* nameservers used, as MAXNS */
#define RES_CONF_MAX 4096     /* bytes of resolv.conf read */
#define RES_QUERY_MAX 280     /* a name of 255 bytes, the header and the question's tail */

struct res_conf {
	struct sockaddr_in6 ns[RES_NS_MAX]; /* IPv4 servers as v4-mapped addresses */
	int n, timeout, attempts, v6;
};

/* The value after "name:" in an options line, bounded to [1, max]; def when absent. */
static int res_opt(const char *line, const char *name, int def, int max)
{
	const char *p = strstr(line, name);
	if (!p)
		return def;
	int v = 0;
	for (p += strlen(name); *p >= '0' && *p <= '9' && v < 1000; p++)
		v = v * 10 + (*p - '0');
	return v < 1 ? 1 : v > max ? max : v;
}

/* Parses resolv.conf's text (NUL-terminated; changed in place). */
static void res_parse_conf(char *text, struct res_conf *c)
{
	memset(c, 0, sizeof *c);
	c->timeout = 5;
	c->attempts = 2;
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "options", 7) && (line[7] == ' ' || line[7] == '\t')) {
			c->timeout = res_opt(line, "timeout:", c->timeout, 60);
			c->attempts = res_opt(line, "attempts:", c->attempts, 10);
			continue;
		}
		if (strncmp(line, "nameserver", 10) || (line[10] != ' ' && line[10] != '\t') || c->n == RES_NS_MAX)
			continue;
		char *a = line + 10;
		a += strspn(a, " \t");
		a[strcspn(a, " \t\r#;%")] = 0;
		struct sockaddr_in6 *s = &c->ns[c->n];
		if (inet_pton(AF_INET6, a, &s->sin6_addr) == 1) {
			c->v6 = 1;
		} else if (inet_pton(AF_INET, a, &s->sin6_addr.s6_addr[12]) == 1) {
			s->sin6_addr.s6_addr[10] = s->sin6_addr.s6_addr[11] = 0xff;
		} else {
			continue;
		}
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(RES_PORT);
		c->n++;
	}
	if (!c->n) { /* no nameserver line: the local one */
		c->ns[0].sin6_family = AF_INET6;
		c->ns[0].sin6_port = htons(RES_PORT);
		c->ns[0].sin6_addr.s6_addr[10] = c->ns[0].sin6_addr.s6_addr[11] = 0xff;
		c->ns[0].sin6_addr.s6_addr[12] = 127;
		c->ns[0].sin6_addr.s6_addr[15] = 1;
		c->n = 1;
	}
}

/* noinline: its 4 KiB buffer and the call cost less than inlined into res_send_q (-54 bytes) */
__attribute__((noinline)) static void res_load_conf(struct res_conf *c)
{
	char text[RES_CONF_MAX + 1];
	ssize_t r = -1;
	int fd = open(RES_CONF_FILE, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		r = read(fd, text, RES_CONF_MAX); /* one read: a text file this small comes whole */
		close(fd);
	}
	text[r > 0 ? r : 0] = 0;
	res_parse_conf(text, c);
}

/* The query for name (a trailing dot allowed): its length, or -1 for a name DNS cannot carry. */
static int res_mkq(const char *name, int class, int type, unsigned char *q, unsigned id)
{
	size_t l = strlen(name);
	l -= l && name[l - 1] == '.';
	if (l > 253)
		return -1;
	static const unsigned char hdr[12] = {0, 0, 1, 0, 0, 1}; /* RD, one question */
	memcpy(q, hdr, 12);
	q[0] = (unsigned char)(id >> 8);
	q[1] = (unsigned char)id;
	unsigned char *p = q + 12;
	for (size_t i = 0; i < l;) {
		size_t n = strcspn(name + i, ".");
		if (n == 0 || n > 63 || i + n > l)
			return -1;
		*p++ = (unsigned char)n;
		memcpy(p, name + i, n);
		p += n;
		i += n + 1;
	}
	*p++ = 0;
	*p++ = (unsigned char)(type >> 8);
	*p++ = (unsigned char)type;
	*p++ = (unsigned char)(class >> 8);
	*p++ = (unsigned char)class;
	return (int)(p - q);
}

/* Whole reads and writes on a TCP socket within the time left. 0, or -1. */
static int res_tcp_io(int fd, void *buf, size_t n, int out, int ms)
{
	unsigned char *p = buf;
	while (n) {
		struct pollfd pf = {fd, out ? POLLOUT : POLLIN, 0};
		if (poll(&pf, 1, ms) != 1)
			return -1;
		ssize_t r = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* The query again over TCP to the server that truncated it: the answer's length, or -1. */
static int res_tcp(const struct sockaddr *sa, socklen_t sl, const unsigned char *q, int ql, unsigned char *ans,
                   int anslen, int ms)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), r = -1;
	if (fd < 0)
		return -1;
	unsigned char len[2] = {(unsigned char)(ql >> 8), (unsigned char)ql};
	if ((connect(fd, sa, sl) == 0 || errno == EINPROGRESS) && res_tcp_io(fd, len, 2, 1, ms) == 0 &&
	    res_tcp_io(fd, (void *)q, (size_t)ql, 1, ms) == 0 && res_tcp_io(fd, len, 2, 0, ms) == 0) {
		int al = len[0] << 8 | len[1], keep = al < anslen ? al : anslen;
		if (keep >= 12 && res_tcp_io(fd, ans, (size_t)keep, 0, ms) == 0)
			r = keep; /* what did not fit is left unread: the caller's buffer is the limit */
	}
	close(fd);
	return r;
}

/* ns rewritten in place as an IPv4 address for an IPv4 socket (family 0 for an IPv6 server,
 * which that socket cannot reach). */
static void res_to4(struct sockaddr_in6 *ns)
{
	struct sockaddr_in s4 = {0};
	if (IN6_IS_ADDR_V4MAPPED(&ns->sin6_addr)) {
		s4.sin_family = AF_INET;
		s4.sin_port = ns->sin6_port;
		memcpy(&s4.sin_addr, ns->sin6_addr.s6_addr + 12, 4);
	}
	memset(ns, 0, sizeof *ns);
	memcpy(ns, &s4, sizeof s4);
}

static int res_send_q(const unsigned char *q, int ql, unsigned char *ans, int anslen)
{
	struct res_conf c;
	struct sockaddr_in6 from; /* room for either family */
	res_load_conf(&c);
	int no = 0, fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	socklen_t sl = sizeof(struct sockaddr_in6); /* the length of the socket's family's addresses */
	if (fd >= 0) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no); /* IPv4 servers, v4-mapped */
	} else { /* no IPv6 in this kernel: the IPv4 servers alone */
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		sl = sizeof(struct sockaddr_in);
		for (int i = 0; i < c.n; i++)
			res_to4(&c.ns[i]);
	}
	if (fd < 0)
		return -1;
	int best = -1, ms = c.timeout * 1000;
	for (int a = 0; a < c.attempts && best < 0; a++) {
		for (int i = 0; i < c.n; i++)
			if (c.ns[i].sin6_family)
				sendto(fd, q, (size_t)ql, MSG_NOSIGNAL, (struct sockaddr *)&c.ns[i], sl);
		long long t0 = clock_mono_ms();
		for (int left = ms; left > 0;) {
			struct pollfd pf = {fd, POLLIN, 0};
			if (poll(&pf, 1, left) <= 0)
				break;
			socklen_t fl = sizeof from;
			ssize_t r = recvfrom(fd, ans, (size_t)anslen, 0, (struct sockaddr *)&from, &fl);
			left = ms - (int)(clock_mono_ms() - t0);
			/* one of our servers, a response, our id and our question: else not the answer */
			int known = 0;
			/* the same port and address: the kernel's address is written as ours is (zero
			 * flow label; a scope id only for the link-local addresses, which a server
			 * without one cannot have answered from) */
			for (int i = 0; i < c.n; i++)
				known |= c.ns[i].sin6_family && !memcmp(&from, &c.ns[i], sl);
			if (!known || r < ql || !(ans[2] & 0x80) || memcmp(ans, q, 2) || memcmp(ans + 12, q + 12, (size_t)ql - 12))
				continue;
			best = (int)r;
			if (ans[2] & 2) { /* truncated: the whole answer over TCP from the same server */
				best = res_tcp((struct sockaddr *)&from, fl, q, ql, ans, anslen, left > 0 ? left : 1);
				break;
			}
			if ((ans[3] & 15) == 0 || (ans[3] & 15) == 3)
				break;
			/* SERVFAIL, REFUSED: kept, while another server may still say more */
		}
	}
	close(fd);
	return best;
}

int res_query(const char *name, int class, int type, unsigned char *dest, int len)
{
	unsigned char q[RES_QUERY_MAX];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int ql = res_mkq(name, class, type, q, (unsigned)ts.tv_nsec ^ (unsigned)getpid() << 16);
	int r = -1, e = NO_RECOVERY; /* the h_errno of a failure, set once (musl's is a call) */
	if (ql >= 0) {
		r = res_send_q(q, ql, dest, len);
		e = r < 12                                      ? TRY_AGAIN
		    : (dest[3] & 15) == 3                       ? HOST_NOT_FOUND
		    : (dest[3] & 15) == 0 && !dest[6] && !dest[7] ? NO_DATA
		                                                : 0;
	}
	if (e) {
		h_errno = e;
		return -1;
	}
	return r;
}

/* A (possibly compressed) name at src into dst as dotted text ("" for the root); the bytes it
 * took at src, or -1. Every pointer must go backwards, which also ends every loop. */
int dn_expand(const unsigned char *base, const unsigned char *end, const unsigned char *src, char *dst, int space)
{
	const unsigned char *p = src, *lowest = src;
	int used = -1, n = 0;
	if (p >= end || space < 1)
		return -1;
	if (space > 254)
		space = 254; /* a name is at most 253 characters (RFC 1035 3.1), as musl's dn_expand has it */
	for (;;) {
		if (p >= end)
			return -1;
		unsigned c = *p;
		if ((c & 0xc0) == 0xc0) {
			if (p + 1 >= end)
				return -1;
			unsigned off = (c & 0x3f) << 8 | p[1];
			if (used < 0)
				used = (int)(p + 2 - src);
			if (base + off >= lowest)
				return -1;
			p = lowest = base + off;
		} else if (c & 0xc0) {
			return -1;
		} else if (c == 0) {
			dst[n] = 0;
			return used < 0 ? (int)(p + 1 - src) : used;
		} else {
			if (p + 1 + c > end || n + (int)c + 1 >= space)
				return -1;
			if (n)
				dst[n++] = '.';
			memcpy(dst + n, p + 1, c);
			n += (int)c;
			p += 1 + c;
		}
	}
}
