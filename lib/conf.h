/* spoolbox.conf: NAME=value lines, '#' comments, blank lines, double-quoted values with
 * backslash escapes; an environment variable NAME overrides the file's NAME; compiled-in
 * defaults (conf_keys.h) for everything absent. Also the interval ("1h5m20s") and size ("10M")
 * parsers every configuration file shares.
 *
 * Findings are reported through a callback as (file, line, reason); the loader never prints or
 * exits by itself. Unknown keys, duplicates, malformed lines and badly typed values are errors. */
#ifndef SPOOLBOX_CONF_H
#define SPOOLBOX_CONF_H
#include "config_default.h"
#include <stdarg.h>
#include <stddef.h>

enum conf_type { CT_STR, CT_PATH, CT_BOOL, CT_INT, CT_SIZE, CT_INTERVAL, CT_LIST };

enum conf_key {
#define CONF(name, type, def, help) CK_##name,
#include "conf_keys.h"
#include "printf_like.h"
#undef CONF
	CK__COUNT
};

enum conf_origin { CO_DEFAULT, CO_FILE, CO_ENV };

#define CONF_LINE_MAX 4096       /* longest line of spoolbox.conf */
/* The environment variable naming spoolbox.conf instead of DEFAULT_CONF_PATH, as -C does
 * (Postfix's MAIL_CONFIG): the file must exist. The tests set it so that no run ever reads the
 * system's file; an applet given -C sets it for the processes it starts. */
#define CONF_PATH_ENV "SPOOLBOX_CONF"
#define CONF_FILE_MAX (1 << 20)  /* largest spoolbox.conf */

struct conf {
	char *val[CK__COUNT];            /* NULL: the compiled-in default */
	long long num[CK__COUNT];        /* parsed value of int, size, interval and bool keys */
	unsigned char origin[CK__COUNT]; /* enum conf_origin */
	int line[CK__COUNT];             /* line in the file, for CO_FILE */
	char path[512];                  /* the file read ("" if none existed) */
};

typedef void conf_report_fn(void *ctx, const char *file, int line, const char *reason);

/* Resets c to the compiled-in defaults. */
void conf_init(struct conf *c);
void conf_free(struct conf *c);
/* Reads the file (path NULL: $SPOOLBOX_CONF, else the default path, where a missing file is
 * fine; an explicit path or $SPOOLBOX_CONF must exist), then applies environment overrides.
 * Returns the number of errors reported. */
int conf_load(struct conf *c, const char *path, conf_report_fn *report, void *ctx);
/* The parts of conf_load, for tests and the fuzzer. */
int conf_parse(struct conf *c, const char *file, const char *text, size_t len, conf_report_fn *report, void *ctx);
int conf_apply_env(struct conf *c, conf_report_fn *report, void *ctx);

const char *conf_str(const struct conf *c, enum conf_key k);
long long conf_num(const struct conf *c, enum conf_key k);
const char *conf_name(enum conf_key k);
/* Drops k's value: the compiled-in default applies again. */
void conf_unset(struct conf *c, enum conf_key k);
/* The compiled-in default of k. */
const char *conf_default(enum conf_key k);
enum conf_type conf_type_of(enum conf_key k);
/* Key by name, or -1. */
int conf_lookup(const char *name);
/* 1 when any key came from the environment, or $SPOOLBOX_CONF is set (a setgid submit drops
 * privilege then). */
int conf_env_used(const struct conf *c);

/* The line at text[*pos] (*pos < len): its start, and in *ll its length without the LF or CRLF
 * that ends it; *pos moves past the LF. The one line splitter of every configuration file. */
const char *conf_line(const char *text, size_t len, size_t *pos, size_t *ll);

/* Plain decimal digits, at most max (no sign, no space). Returns 0 or -1. */
int parse_count(const char *s, long long max, long long *out);
/* "1h5m20s", "10s", "3d", "90" (seconds), "0". Returns 0 or -1 (syntax, overflow). */
int parse_interval(const char *s, long long *out);
/* "10M", "512k", "1G", "2048" (bytes); K/M/G are powers of 1024. Returns 0 or -1. */
int parse_size(const char *s, long long *out);
/* yes/no, true/false, on/off, 1/0. Returns 0 or -1. */
int parse_bool(const char *s, long long *out);

/* Formats a finding and passes it to report (which may be NULL): the one formatter every
 * configuration-file parser uses. */
void conf_reportf(conf_report_fn *report, void *ctx, const char *file, int line, const char *fmt, ...)
    PRINTF_LIKE(5, 6);
void conf_vreportf(conf_report_fn *report, void *ctx, const char *file, int line, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* Reports a finding about key k where its value came from: "environment" (line 0) for an
 * environment override, else the file and the key's line (0 for a compiled-in default). The
 * one way every checker names a key's origin; returns 1 (one finding) for counting. */
int conf_report_key(const struct conf *c, enum conf_key k, conf_report_fn *report, void *ctx, const char *fmt, ...)
    PRINTF_LIKE(5, 6);

/* A finding whose reason starts with this is a warning: --check prints it as one and a checker
 * does not count it as an error (something that works, but not as the admin likely meant). */
#define CONF_WARNING "warning: "

/* A report callback that prints "file:line: prefix: reason" on stderr and counts (warnings: not).
 * Its ctx MUST be a struct conf_stderr_ctx, with a prefix. */
struct conf_stderr_ctx {
	int count;
	const char *prefix; /* "error" or "warning", printed after the location */
};
conf_report_fn conf_report_stderr;
#endif
