/* Log sink: formats one line and sends it to the syslog socket and/or a stream fd (see log.h). */
#include "log.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct {
	const char *ident;
	char syslog_path[108]; /* sizeof sun_path */
	unsigned where;
	int level_max;
	int fd;         /* the stream */
	int sock;       /* the syslog socket, -1 when not connected */
	time_t down_at; /* when the socket last failed; 0: not known to be down */
} lg = {"spoolbox", LOG_SYSLOG_PATH, LOG_TO_STDERR, LOG_INFO, 2, -1, 0};

void log_init(const char *ident, unsigned where, int level_max)
{
	if (lg.sock >= 0)
		close(lg.sock);
	lg.ident = ident;
	lg.where = where;
	lg.level_max = level_max;
	lg.fd = 2;
	lg.sock = -1;
	lg.down_at = 0;
}

void log_set_level(int level_max)
{
	lg.level_max = level_max;
}

void log_set_syslog_path(const char *path)
{
	if (lg.sock >= 0)
		close(lg.sock);
	lg.sock = -1;
	lg.down_at = 0;
	if (!path || !*path)
		path = LOG_SYSLOG_PATH;
	if (strlen(path) < sizeof lg.syslog_path)
		memcpy(lg.syslog_path, path, strlen(path) + 1);
	else
		lg.syslog_path[0] = 0; /* too long for a socket address: never reached */
}

void log_set_fd(int fd)
{
	lg.fd = fd < 0 ? 2 : fd;
}

static int syslog_connect(void)
{
	struct sockaddr_un sa;
	if (!lg.syslog_path[0])
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, lg.syslog_path, sizeof lg.syslog_path);
	lg.sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (lg.sock < 0)
		return -1;
	if (connect(lg.sock, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(lg.sock);
		lg.sock = -1;
		return -1;
	}
	return 0;
}

/* Sends one datagram; reconnects once (the daemon may have restarted). A failure is
 * remembered, so a system without a syslog daemon costs one connect per LOG_SYSLOG_RETRY
 * seconds, not one per line. Returns 0 when the line was taken. */
static int syslog_send(const char *line, size_t n)
{
	time_t now = 0;
	if (lg.down_at) {
		now = time(NULL);
		if (now - lg.down_at < LOG_SYSLOG_RETRY && now >= lg.down_at)
			return -1;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		if (lg.sock < 0 && syslog_connect() < 0)
			break;
		if (send(lg.sock, line, n, MSG_NOSIGNAL) == (ssize_t)n) {
			lg.down_at = 0;
			return 0;
		}
		close(lg.sock);
		lg.sock = -1;
	}
	lg.down_at = now ? now : time(NULL);
	return -1;
}

void log_vmsg(int level, const char *id, const char *fmt, va_list ap)
{
	if (level > lg.level_max)
		return;
	int saved = errno;
	char text[1024];
	vsnprintf(text, sizeof text, fmt, ap);
	/* A log line is one line: a remote reply or an address must not forge another entry. */
	for (char *p = text; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			*p = ' ';
	char line[1200];
	int to_stream = (lg.where & LOG_TO_STDERR) || ((lg.where & LOG_ERRORS_TO_STDERR) && level <= LOG_WARNING);
	if (lg.where & LOG_TO_SYSLOG) {
		int n = snprintf(line, sizeof line, "<%d>%s[%ld]: %s%s%s", LOG_MAIL | (level & LOG_PRIMASK), lg.ident,
		                 (long)getpid(), id ? id : "", id ? ": " : "", text);
		if (n > (int)sizeof line - 1)
			n = (int)sizeof line - 1;
		if (syslog_send(line, (size_t)n) < 0 && (lg.where & LOG_STDERR_IF_NO_SYSLOG))
			to_stream = 1;
	}
	if (to_stream) {
		int n = snprintf(line, sizeof line, "%s[%ld]: %s%s%s\n", lg.ident, (long)getpid(), id ? id : "",
		                 id ? ": " : "", text);
		if (n > (int)sizeof line - 1) {
			n = (int)sizeof line - 1;
			line[n - 1] = '\n';
		}
		ssize_t w = write(lg.fd, line, (size_t)n);
		(void)w;
	}
	errno = saved;
}

void log_msg(int level, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, id, fmt, ap);
	va_end(ap);
}
