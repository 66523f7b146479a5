/* The RFC 5321 client protocol: replies, EHLO, STARTTLS and AUTH commands, connection set-up
 * (see smtp_client.h). The mail transaction itself is in smtp_txn.c. */
#include "smtp_client.h"
#include "auth.h"
#include "clock.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int smtp_reply_line_parse(const char *line, size_t len, int *code, int *more, size_t *text)
{
	if (len < 3)
		return -1;
	for (int i = 0; i < 3; i++)
		if (line[i] < '0' || line[i] > '9')
			return -1;
	if (line[0] < '2' || line[0] > '5')
		return -1;
	*code = (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
	*more = 0;
	*text = 3;
	if (len == 3)
		return 0;
	if (line[3] == '-')
		*more = 1;
	else if (line[3] != ' ')
		return -1;
	*text = 4;
	return 0;
}

/* noinline (here and on transcript_out): a call is shorter than its inlined copies */
__attribute__((noinline)) static size_t digits(const char *s, size_t max)
{
	size_t n = 0;
	while (n < max && s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

size_t smtp_enh_parse(const char *text, int code, char *enh, size_t size)
{
	if (text[0] != '0' + code / 100 || text[1] != '.')
		return 0;
	size_t a = digits(text + 2, 4);
	if (a < 1 || a > 3 || text[2 + a] != '.')
		return 0;
	size_t b = digits(text + 3 + a, 4);
	if (b < 1 || b > 3)
		return 0;
	size_t end = 3 + a + b;
	if (text[end] != 0 && text[end] != ' ' && text[end] != '\t')
		return 0;
	if (end + 1 > size)
		return 0;
	memcpy(enh, text, end);
	enh[end] = 0;
	return text[end] ? end + 1 : end;
}

/* Also notes a timeout in c: the agent defers the whole destination after one (issue 11 point 5). */
static const char *io_why(struct smtp_conn *c, int eof)
{
	if (eof)
		return "connection closed by";
	c->timed_out = errno == ETIMEDOUT;
	return c->timed_out ? "timeout talking to" : "lost connection with";
}

int smtp_read_reply(struct smtp_conn *c, struct smtp_reply *r, int timeout_ms)
{
	char line[SMTP_LINE_MAX];
	size_t tlen = 0;
	int lines = 0;
	/* each failure is a format of up to four strings, the server's name first but in one */
	const char *fmt, *a1 = c->name, *a2 = line, *a3 = NULL, *a4 = NULL;
	r->code = 0;
	r->enh[0] = 0;
	r->text[0] = 0;
	/* the time limit is for the whole reply: a multi-line reply that trickles in line by line
	 * must not outlast it either */
	long long deadline = timeout_ms > 0 ? clock_mono_ms() + timeout_ms : 0;
	for (;;) {
		c->io.timeout_ms = timeout_ms;
		if (deadline) {
			long long left = deadline - clock_mono_ms();
			c->io.timeout_ms = left > 0 ? (int)left : 1;
		}
		ssize_t n = io_getline(&c->io, line, sizeof line);
		int overlong = n < 0 && errno == EMSGSIZE;
		if (overlong) {
			n = (ssize_t)strlen(line); /* an overlong line is kept, cut */
		} else if (n <= 0) {
			/* the reason of an error (not EOF, not a time limit) is told */
			int told = n < 0 && errno != ETIMEDOUT;
			fmt = "%s %s%s%s";
			a1 = io_why(c, n == 0);
			a2 = c->name;
			a3 = told ? ": " : "";
			a4 = told ? strerror(errno) : "";
			goto fail;
		}
		/* the connection ended inside a line: "250 2.0.0 queu" then a close is not a
		 * reply, whatever it starts with (at worst a duplicate later, never a false "sent") */
		fmt = "connection closed by %s in the middle of a reply line";
		if (!overlong && line[n - 1] != '\n')
			goto fail;
		size_t len = (size_t)n;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (c->verbose)
			log_msg(LOG_DEBUG, c->logid, "< %s", line);
		int code, more;
		size_t off;
		fmt = "malformed reply from %s: %.80s";
		if (smtp_reply_line_parse(line, len, &code, &more, &off) < 0 || (lines && code != r->code))
			goto fail;
		/* the first line's enhanced code is kept; later lines repeat it: only their text is */
		char skip[sizeof r->enh];
		r->code = code;
		off += smtp_enh_parse(line + off, code, lines ? skip : r->enh, sizeof skip);
		_Static_assert(SMTP_REPLY_LINES == 64, "the text below");
		fmt = "reply from %s has more than 64 lines";
		if (++lines > SMTP_REPLY_LINES)
			goto fail;
		for (size_t i = off; i <= len; i++) {
			if (tlen + 2 >= sizeof r->text)
				break;
			if (i == len) {
				if (more)
					r->text[tlen++] = '\n';
				break;
			}
			r->text[tlen++] = line[i];
		}
		r->text[tlen] = 0;
		if (!more)
			return 0;
	}
fail:
	str_fmt(c->err, sizeof c->err, fmt, a1, a2, a3, a4);
	return -1;
}

/* always_inline: both its calls are in smtp_parse_ehlo, which then keeps its pointers in registers (-13 bytes) */
static inline __attribute__((always_inline)) const char *next_line(const char *p, const char **end)
{
	const char *nl = strchr(p, '\n');
	*end = nl ? nl : p + strlen(p);
	return nl ? nl + 1 : NULL;
}

void smtp_parse_ehlo(const struct smtp_reply *r, struct smtp_caps *caps)
{
	/* the keywords in the order of their bits: SMTP_EXT_PIPELINING is 1 << 0, and so on */
	_Static_assert(SMTP_EXT_PIPELINING == 1 && SMTP_EXT_SIZE == 2 && SMTP_EXT_8BITMIME == 4 && SMTP_EXT_SMTPUTF8 == 8 &&
	                   SMTP_EXT_DSN == 16 && SMTP_EXT_ENHANCED == 32 && SMTP_EXT_STARTTLS == 64 && SMTP_EXT_AUTH == 128,
	               "SMTP_EXT_* bits");
	static const char kws[] = "PIPELINING\0SIZE\08BITMIME\0SMTPUTF8\0DSN\0ENHANCEDSTATUSCODES\0STARTTLS\0AUTH\0";
	caps->ext = 0;
	caps->size = 0;
	caps->auth[0] = 0;
	const char *p = r->text, *end;
	p = next_line(p, &end); /* the first line is the server's name */
	while (p) {
		const char *line = p;
		p = next_line(p, &end);
		size_t kl = 0;
		while (line + kl < end && line[kl] != ' ' && line[kl] != '=')
			kl++;
		unsigned bit = 1;
		for (const char *kw = kws; *kw; kw += strlen(kw) + 1, bit <<= 1) {
			/* the line's kl bytes hold no NUL: a shorter keyword differs at its end */
			if (!str_ncaseeq(line, kw, kl) || kw[kl])
				continue;
			caps->ext |= bit;
			const char *arg = line + kl;
			while (arg < end && (*arg == ' ' || *arg == '='))
				arg++;
			size_t al = (size_t)(end - arg);
			if (bit == SMTP_EXT_SIZE) {
				long long v = 0;
				for (const char *q = arg; q < end && *q >= '0' && *q <= '9' && v < (1LL << 50); q++)
					v = v * 10 + (*q - '0');
				caps->size = v;
			} else if (bit == SMTP_EXT_AUTH) {
				/* "AUTH PLAIN" and the old "AUTH=LOGIN" may both appear: keep both lists. */
				size_t have = strlen(caps->auth);
				if (have + al + 2 < sizeof caps->auth) {
					if (have)
						caps->auth[have++] = ' ';
					memcpy(caps->auth + have, arg, al);
					caps->auth[have + al] = 0;
				}
			}
		}
	}
}

void smtp_reply_oneline(const struct smtp_reply *r, char *out, size_t size)
{
	int n = snprintf(out, size, "%d%s%s%s%s", r->code, r->enh[0] ? " " : "", r->enh, r->text[0] ? " " : "", r->text);
	(void)n;
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

int smtp_connect(struct smtp_conn *c, const struct sockaddr *sa, unsigned salen)
{
	c->open = 0;
	c->timed_out = 0;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		str_fmt(c->err, sizeof c->err, "connect to %s: socket: %s", c->name, strerror(errno));
		return -1;
	}
	int r = connect(fd, sa, (socklen_t)salen);
	if (r < 0 && errno == EINPROGRESS) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int pr;
		do
			pr = poll(&p, 1, c->to.connect > 0 ? c->to.connect : -1);
		while (pr < 0 && errno == EINTR);
		if (pr == 0) {
			close(fd);
			c->timed_out = 1;
			str_fmt(c->err, sizeof c->err, "connect to %s: timed out after %d s", c->name, c->to.connect / 1000);
			return -1;
		}
		int e = 0;
		socklen_t el = sizeof e;
		if (pr < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e) {
			errno = e;
			r = -1;
		} else {
			r = 0;
		}
	}
	if (r < 0) {
		str_fmt(c->err, sizeof c->err, "connect to %s: %s", c->name, strerror(errno));
		close(fd);
		return -1;
	}
	/* Back to blocking: io's poll() bounds every wait. NODELAY: we coalesce writes ourselves. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	io_init_fd(&c->io, fd, c->to.greeting);
	c->open = 1;
	memset(&c->caps, 0, sizeof c->caps);
	return 0;
}

__attribute__((noinline)) static void transcript_out(struct smtp_conn *c, const char *line)
{
	if (c->verbose)
		log_msg(LOG_DEBUG, c->logid, "> %s", line);
}

/* A write failed: -1 with the reason in c->err. */
static int write_failed(struct smtp_conn *c, const char *when)
{
	str_fmt(c->err, sizeof c->err, "%s %s%s: %s", io_why(c, 0), c->name, when, strerror(errno));
	return -1;
}

int smtp_send(struct smtp_conn *c, const char *line)
{
	transcript_out(c, line);
	if (io_puts(&c->io, line) < 0 || io_write(&c->io, "\r\n", 2) < 0)
		return write_failed(c, "");
	return 0;
}

int smtp_flush(struct smtp_conn *c, int timeout_ms)
{
	c->io.timeout_ms = timeout_ms;
	if (io_flush(&c->io) < 0)
		return write_failed(c, " while sending");
	return 0;
}

int smtp_cmd(struct smtp_conn *c, const char *line, struct smtp_reply *r, int timeout_ms)
{
	c->io.timeout_ms = timeout_ms;
	if (smtp_send(c, line) < 0 || smtp_flush(c, timeout_ms) < 0)
		return -1;
	return smtp_read_reply(c, r, timeout_ms);
}

int smtp_ehlo(struct smtp_conn *c, const char *helo_name, struct smtp_reply *r)
{
	char line[300];
	for (int helo = 0;; helo = 1) {
		str_fmt(line, sizeof line, "%s %s", helo ? "HELO" : "EHLO", helo_name);
		if (smtp_cmd(c, line, r, c->to.helo) < 0)
			return -1;
		if (helo) { /* an old server: no extensions */
			memset(&c->caps, 0, sizeof c->caps);
			return r->code / 100 == 2 ? 0 : 1;
		}
		if (r->code / 100 == 2) {
			smtp_parse_ehlo(r, &c->caps);
			c->caps.esmtp = 1;
			return 0;
		}
		if (r->code / 100 != 5)
			return 1; /* HELO only after a 5xx to EHLO */
	}
}

int smtp_greet(struct smtp_conn *c, const char *helo_name, struct smtp_reply *r)
{
	if (smtp_read_reply(c, r, c->to.greeting) < 0)
		return -1;
	if (r->code != 220)
		return 1;
	return smtp_ehlo(c, helo_name, r);
}

int smtp_starttls_cmd(struct smtp_conn *c, struct smtp_reply *r)
{
	if (smtp_cmd(c, "STARTTLS", r, c->to.cmd) < 0)
		return -1;
	return r->code == 220 ? 0 : 1;
}

int smtp_auth(struct smtp_conn *c, int mech, const char *user, const char *secret, struct smtp_reply *r)
{
	enum { LINE = AUTH_LINE_MAX + 8 };
	char *line = malloc(LINE), shown[128];
	struct auth a;
	if (!line) {
		str_fmt(c->err, sizeof c->err, "AUTH to %s: out of memory", c->name);
		return -1;
	}
	auth_init(&a, (enum auth_mech)mech, user, secret);
	ssize_t n = auth_start(&a, line, LINE - 2);
	int ret = -1;
	if (n < 0) {
		str_fmt(c->err, sizeof c->err, "AUTH %s to %s: %s", auth_mech_name((enum auth_mech)mech), c->name, a.err);
		goto out;
	}
	for (;;) {
		auth_redact(line, shown, sizeof shown);
		transcript_out(c, shown);
		c->io.timeout_ms = c->to.cmd;
		line[n] = '\r'; /* LINE - 2 was the room given: the line end fits after it */
		line[n + 1] = '\n';
		if (io_write(&c->io, line, (size_t)n + 2) < 0 || smtp_flush(c, c->to.cmd) < 0)
			goto out;
		if (smtp_read_reply(c, r, c->to.cmd) < 0)
			goto out;
		if (r->code != 334)
			break;
		if (a.step > 8) { /* no mechanism we speak needs more: a server looping on 334 */
			str_fmt(c->err, sizeof c->err, "AUTH with %s: too many challenges", c->name);
			goto out;
		}
		n = auth_step(&a, r->text, line, LINE - 2);
		if (n < 0) { /* "*" cancels the exchange (RFC 4954) */
			line[0] = '*';
			line[1] = 0;
			n = 1;
		}
	}
	ret = r->code == 235 ? 0 : 1;
out:
	explicit_bzero(line, LINE);
	free(line);
	auth_clear(&a);
	return ret;
}

int smtp_rset(struct smtp_conn *c)
{
	struct smtp_reply r;
	if (smtp_cmd(c, "RSET", &r, c->to.cmd) < 0)
		return -1;
	if (r.code != 250) {
		str_fmt(c->err, sizeof c->err, "RSET refused by %s: %d %.100s", c->name, r.code, r.text);
		return -1;
	}
	return 0;
}

void smtp_close(struct smtp_conn *c)
{
	if (c->open)
		io_close(&c->io);
	c->open = 0;
}

void smtp_quit(struct smtp_conn *c)
{
	if (!c->open)
		return;
	struct smtp_reply r;
	/* A polite goodbye, not worth waiting long for. */
	smtp_cmd(c, "QUIT", &r, 2000);
	smtp_close(c);
}
