/* Log sink: formats one line and sends it to syslog and/or a stream fd (see log.h). */
#include "log.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
	const char *ident;
	unsigned where;
	int level_max;
	int fd;
	int syslog_open;
} lg = {"spoolbox", LOG_TO_STDERR, LOG_INFO, 2, 0};

void log_init(const char *ident, unsigned where, int level_max)
{
	if (lg.syslog_open)
		closelog();
	lg.ident = ident;
	lg.where = where;
	lg.level_max = level_max;
	lg.fd = 2;
	lg.syslog_open = 0;
	if (where & LOG_TO_SYSLOG) {
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_MAIL);
		lg.syslog_open = 1;
	}
}

void log_set_level(int level_max)
{
	lg.level_max = level_max;
}

void log_set_fd(int fd)
{
	lg.fd = fd < 0 ? 2 : fd;
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
	if (lg.where & LOG_TO_SYSLOG) {
		if (id)
			syslog(level, "%s: %s", id, text);
		else
			syslog(level, "%s", text);
	}
	if (lg.where & LOG_TO_STDERR) {
		char line[1200];
		int n = snprintf(line, sizeof line, "%s[%ld]: %s%s%s\n", lg.ident, (long)getpid(),
		                 id ? id : "", id ? ": " : "", text);
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
