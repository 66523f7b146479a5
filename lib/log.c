/* Log sink: formats one line and sends it to syslog and/or a stream fd (see log.h). Syslog is
 * spoken directly (RFC 3164 over the local datagram socket) rather than through libc's
 * syslog(): that one tries to reconnect on every line while there is no socket (containers,
 * initramfs: ten failed system calls per message in a drain), and pulls in strftime. */
#include "log.h"
#include "clock.h"
#include "fmt.h"
#include "util.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SYSLOG_RETRY_MS 60000 /* a socket that was missing is looked for again after this */
#define LOG_LINE_MAX 1400      /* one datagram, cut beyond */
#define LOG_STREAM_MAX 1199    /* one line on the stream, its LF included, cut beyond */
#define LOG_TEXT_MAX 1023      /* the caller's text, cut beyond */

/* Stream lines held between log_hold(1) and log_flush() (the scheduler's turn): one write
 * instead of one per line. Syslog lines are not held: each is a datagram of its own, and
 * batching them (sendmmsg) was measured at 600 bytes of code (docs/logging.md). */
struct log_hold {
	size_t used;
	char buf[16384];
};
/* A full queue at the log daemon: wait this long for room before the line is dropped, but not
 * again for SYSLOG_SLOW_MS after a line was dropped (a daemon that stopped reading must not cost
 * every line the wait). syslog(3) would block for as long as it takes; the queue can be as short
 * as 10 datagrams (net.unix.max_dgram_qlen), which a busy daemon fills in a burst. */
#define SYSLOG_WAIT_MS 1000
#define SYSLOG_SLOW_MS 10000

static struct {
	const char *ident;
	unsigned where;
	int level_max;
	int fd;
	int sl_fd;             /* the syslog socket, -1 when not connected */
	long long sl_retry_ms; /* monotonic time before which no connect is tried again */
	long long sl_slow_ms;  /* monotonic time before which a full queue drops at once */
	long pid;              /* getpid() once, not per line (log_forked() after a fork); 0: unknown */
	struct log_hold *hold; /* lines held for one write (log_hold), or NULL */
} lg = {"spoolbox", LOG_TO_STDERR, LOG_INFO, 2, -1, 0, 0, 0, NULL};

static long my_pid(void)
{
	if (!lg.pid)
		lg.pid = (long)getpid();
	return lg.pid;
}

void log_forked(void)
{
	lg.pid = 0;
	if (lg.hold)
		lg.hold->used = 0; /* the parent's held lines are the parent's to write */
}

unsigned log_where_of(const char *list)
{
	unsigned w = 0;
	if (list && strstr(list, "syslog"))
		w |= LOG_TO_SYSLOG;
	if (list && strstr(list, "stderr"))
		w |= LOG_TO_STDERR;
	return w ? w : LOG_TO_SYSLOG;
}

static void sl_close(void)
{
	if (lg.sl_fd >= 0)
		close(lg.sl_fd);
	lg.sl_fd = -1;
}

/* Connects the syslog socket (SPOOLBOX_SYSLOG_SOCKET, else /dev/log) unless a recent attempt
 * failed. 0, or -1. */
static int sl_connect(void)
{
	if (lg.sl_fd >= 0)
		return 0;
	if (lg.sl_retry_ms && clock_mono_ms() < lg.sl_retry_ms)
		return -1;
	const char *path = getenv("SPOOLBOX_SYSLOG_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (!path || !*path || strlen(path) >= sizeof sa.sun_path)
		path = "/dev/log";
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
		lg.sl_fd = fd;
		lg.sl_retry_ms = 0;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	lg.sl_retry_ms = clock_mono_ms() + SYSLOG_RETRY_MS;
	return -1;
}

static void stream_write(const char *p, size_t n)
{
	ssize_t w = write(lg.fd, p, n);
	(void)w;
}

void log_flush(void)
{
	struct log_hold *h = lg.hold;
	if (h && h->used)
		stream_write(h->buf, h->used);
	if (h)
		h->used = 0;
}

int log_hold(int on)
{
	if (!on) {
		log_flush();
		free(lg.hold);
		lg.hold = NULL;
		return 0;
	}
	if (!lg.hold)
		lg.hold = calloc(1, sizeof *lg.hold);
	return lg.hold ? 0 : -1;
}

/* One line to syslog: buf[0..n), "<PRI>Mmm dd hh:mm:ss ident[pid]: text" (RFC 3164). 0, or -1
 * when it did not go. */
static int sl_send(const char *buf, size_t n)
{
	if (sl_connect() < 0)
		return -1;
	for (int attempt = 0; attempt < 2; attempt++) {
		/* never wait long for a log daemon that does not read: a full queue drops the line */
		if (send(lg.sl_fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			return 0;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd p = {lg.sl_fd, POLLOUT, 0};
			if (clock_mono_ms() >= lg.sl_slow_ms && poll(&p, 1, SYSLOG_WAIT_MS) > 0 &&
			    send(lg.sl_fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
				return 0;
			lg.sl_slow_ms = clock_mono_ms() + SYSLOG_SLOW_MS;
			return -1;
		}
		/* the log daemon restarted: one reconnect, then give up until the retry time */
		sl_close();
		if (attempt || sl_connect() < 0)
			break;
	}
	lg.sl_retry_ms = clock_mono_ms() + SYSLOG_RETRY_MS;
	return -1;
}

void log_init(const char *ident, unsigned where, int level_max)
{
	log_hold(0);
	sl_close();
	lg.ident = ident;
	lg.where = where;
	lg.level_max = level_max;
	lg.fd = 2;
	lg.sl_retry_ms = 0;
	lg.sl_slow_ms = 0;
	lg.pid = 0;
	/* the syslog socket is connected at the first line: a submit that logs nothing (the usual
	 * case) makes no socket at all */
}

void log_set_level(int level_max)
{
	lg.level_max = level_max;
}

void log_set_fd(int fd)
{
	lg.fd = fd < 0 ? 2 : fd;
}

/* prog: the program name of this line, or NULL for the process's own (log_init) */
__attribute__((used)) static void emit(const char *prog, int level, const char *id, const char *fmt, va_list ap)
{
	const char *ident = prog ? prog : lg.ident;
	if (level > lg.level_max)
		return;
	int saved = errno;
	/* The line once: syslog's "<PRI>stamp " then "ident[pid]: id: text" (the text cut at
	 * LOG_TEXT_MAX), which is also the stream's line: cut to LOG_STREAM_MAX with its LF written
	 * over what follows (the stream's cut is the shorter, for any prefix under 200 bytes). */
	char buf[LOG_LINE_MAX];
	char stamp[20] = "";
	/* without local time (ENABLE_LOCALTIME) no stamp: the log daemon adds its own, in local time */
	if (ENABLE_LOCALTIME && (lg.where & LOG_TO_SYSLOG)) {
		time_t now = time(NULL);
		struct tm tm;
		if (civil_time(&now, &tm))
			snprintf(stamp, sizeof stamp, "%.3s %2d %02d:%02d:%02d ", clock_months + 3 * (tm.tm_mon % 12), tm.tm_mday,
			         tm.tm_hour, tm.tm_min, tm.tm_sec);
	}
	size_t k = (size_t)snprintf(buf, sizeof buf, "<%d>%s", LOG_MAIL | (level & 7), stamp);
	size_t n = k + (size_t)snprintf(buf + k, sizeof buf - k, "%s[%ld]: %s%s", ident, my_pid(), id ? id : "", id ? ": " : "");
	if (n > sizeof buf - 1)
		n = sizeof buf - 1;
	vsnprintf(buf + n, sizeof buf - n < LOG_TEXT_MAX + 1 ? sizeof buf - n : LOG_TEXT_MAX + 1, fmt, ap);
	/* A log line is one line: a remote reply or an address must not forge another entry. */
	for (; buf[n]; n++)
		if ((unsigned char)buf[n] < 0x20 && buf[n] != '\t')
			buf[n] = ' ';
	int to_stderr = (lg.where & LOG_TO_STDERR) || ((lg.where & LOG_ERRORS_TO_STDERR) && level <= LOG_WARNING);
	if ((lg.where & LOG_TO_SYSLOG) && sl_send(buf, n) < 0 && (lg.where & LOG_STDERR_FALLBACK))
		to_stderr = 1; /* no syslog socket: a foreground daemon must not be silent */
	if (to_stderr) {
		char *line = buf + k;
		n -= k;
		if (n > LOG_STREAM_MAX - 1)
			n = LOG_STREAM_MAX - 1;
		line[n++] = '\n';
		struct log_hold *h = lg.hold;
		if (h) {
			if (h->used + n > sizeof h->buf)
				log_flush();
			memcpy(h->buf + h->used, line, n);
			h->used += n;
		} else {
			stream_write(line, n);
		}
	}
	/* an error is not kept back: it may be the last thing the process says */
	if (level <= LOG_ERR)
		log_flush();
	errno = saved;
}

void log_vmsg(int level, const char *id, const char *fmt, va_list ap)
{
	emit(NULL, level, id, fmt, ap);
}

/* log_msg_as and log_msg: on x86-64 entries into lib/fmt.c's shared variadic prologue
 * (FMT_VA_ENTRY), which calls emit() with the va_list; elsewhere C functions */
FMT_VA_ENTRY(log_msg_as, 4, emit);
#if !FMT_VA_ASM
void log_msg_as(const char *prog, int level, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(prog, level, id, fmt, ap);
	va_end(ap);
}
#endif

void log_syserr(const char *id, const char *op, const char *path, const char *to)
{
	log_msg(LOG_ERR, id, "%s %s%s%s: %s", op, path, to ? " to " : "", to ? to : "", strerror(errno));
}

__attribute__((used)) static void log_msg_v(int level, const char *id, const char *fmt, long d, va_list ap)
{
	emit(NULL, level, id, fmt, ap);
}

FMT_VA_ENTRY(log_msg, 3, log_msg_v);
#if !FMT_VA_ASM
void log_msg(int level, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_msg_v(level, id, fmt, 0, ap);
	va_end(ap);
}
#endif
