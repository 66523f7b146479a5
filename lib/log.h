/* Logging to syslog (facility mail) and/or stderr. Every line names the message id when the
 * caller has one: "spoolbox/submit[123]: 1AB2CD3EF: text".
 *
 * Syslog is written here, not with libc's syslog(): the socket path can be changed (chroots,
 * tests), a socket that cannot be reached is remembered and tried again only every
 * LOG_SYSLOG_RETRY seconds (not once per line), and no time-zone code is linked. Lines carry no
 * timestamp; every syslog daemon (rsyslog, syslog-ng, busybox syslogd, journald) stamps them on
 * receipt, as RFC 3164 section 4.3.2 allows.
 *
 * The state is one struct that log_init() resets completely, so tests can start over. */
#ifndef SPOOLBOX_LOG_H
#define SPOOLBOX_LOG_H
#include <stdarg.h>
#include <syslog.h>

enum {
	LOG_TO_STDERR = 1,           /* every line also goes to the stream (fd 2 or log_set_fd's) */
	LOG_TO_SYSLOG = 2,           /* every line goes to the syslog socket */
	LOG_ERRORS_TO_STDERR = 4,    /* lines at LOG_WARNING or worse also go to the stream */
	LOG_STDERR_IF_NO_SYSLOG = 8, /* a line syslog could not take goes to the stream instead */
};

#define LOG_SYSLOG_PATH "/dev/log"
#define LOG_SYSLOG_RETRY 60 /* seconds before a syslog socket that failed is tried again */

/* ident is kept by pointer and must outlive logging. level_max drops messages above it
 * (LOG_INFO by default; LOG_DEBUG with -v). The syslog socket is connected at the first line
 * that needs it. */
void log_init(const char *ident, unsigned where, int level_max);
void log_set_level(int level_max);
/* The syslog socket's path (copied); NULL or "" restores LOG_SYSLOG_PATH. A path longer than
 * a socket address takes (107 bytes) is never reached: its lines count as syslog failures. */
void log_set_syslog_path(const char *path);
/* Redirect the stderr stream of the log to fd (the scheduler's -L logfile); -1 restores 2. */
void log_set_fd(int fd);
void log_msg(int level, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void log_vmsg(int level, const char *id, const char *fmt, va_list ap);
#endif
