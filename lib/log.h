/* Logging to syslog (facility mail) and/or stderr. Every line names the message id when the
 * caller has one: "spoolbox/submit[123]: 1AB2CD3EF: text".
 *
 * The state is one struct that log_init() resets completely, so tests can start over. Syslog is
 * written directly (RFC 3164 on the local datagram socket), not through libc's syslog(). */
#ifndef SPOOLBOX_LOG_H
#define SPOOLBOX_LOG_H
#include <stdarg.h>
#include <syslog.h>
#include "printf_like.h"

enum {
	LOG_TO_STDERR = 1,
	LOG_TO_SYSLOG = 2,
	LOG_STDERR_FALLBACK = 4, /* with LOG_TO_SYSLOG: lines syslog cannot take go to stderr */
	LOG_ERRORS_TO_STDERR = 8, /* lines at LOG_WARNING or worse go to stderr too */
};

/* The syslog socket is SPOOLBOX_SYSLOG_SOCKET (environment: containers, tests) or /dev/log.
 * When it is missing, that is remembered for a minute: no connect per line. */

/* ident is kept by pointer and must outlive logging. level_max drops messages above it
 * (LOG_INFO by default; LOG_DEBUG with -v). */
void log_init(const char *ident, unsigned where, int level_max);
void log_set_level(int level_max);
/* The pid in each line is looked up once: a child of fork() that logs MUST call this first (it
 * also drops the parent's held lines). */
void log_forked(void);
/* log_hold(1): lines to the stream (stderr, the -L file) are held (up to a buffer's worth;
 * errors are not) until log_flush(), which writes them in one system call; syslog lines are
 * never held. A loop calls log_flush() before it waits, and before it hands another process
 * work whose lines must come after these. log_hold(0) flushes and stops holding. Returns -1
 * when there is no memory to hold (then lines go one by one). */
int log_hold(int on);
void log_flush(void);
/* The LOG key's list ("syslog", "stderr", both; anything else: syslog) as LOG_TO_* bits. */
unsigned log_where_of(const char *list);
/* Redirect the stderr stream of the log to fd (the scheduler's -L logfile); -1 restores 2. */
void log_set_fd(int fd);
void log_msg(int level, const char *id, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* One line under another program name than the process's (e.g. "spoolbox/pickup"): the
 * Postfix-shaped lines that log summarisers count by program (docs/logging.md). */
void log_msg_as(const char *prog, int level, const char *id, const char *fmt, ...)
    PRINTF_LIKE(4, 5);
void log_vmsg(int level, const char *id, const char *fmt, va_list ap);
/* The failure of a system call at LOG_ERR, with strerror(errno): "OP PATH: reason", or with
 * to set "OP PATH to TO: reason" (rename, link). One call instead of a format at every site. */
void log_syserr(const char *id, const char *op, const char *path, const char *to);
#endif
