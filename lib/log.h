/* Logging to syslog (facility mail) and/or stderr. Every line names the message id when the
 * caller has one: "spoolbox/submit[123]: 1AB2CD3EF: text".
 *
 * The state is one struct that log_init() resets completely, so tests can start over. */
#ifndef SPOOLBOX_LOG_H
#define SPOOLBOX_LOG_H
#include <stdarg.h>
#include <syslog.h>

enum {
	LOG_TO_STDERR = 1,
	LOG_TO_SYSLOG = 2,
};

/* ident is kept by pointer and must outlive logging. level_max drops messages above it
 * (LOG_INFO by default; LOG_DEBUG with -v). */
void log_init(const char *ident, unsigned where, int level_max);
void log_set_level(int level_max);
/* Redirect the stderr stream of the log to fd (the scheduler's -L logfile); -1 restores 2. */
void log_set_fd(int fd);
void log_msg(int level, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void log_vmsg(int level, const char *id, const char *fmt, va_list ap);
#endif
