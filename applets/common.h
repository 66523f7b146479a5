/* What every applet shares: its prototypes and flags (from applets.h), configuration loading
 * with the one error policy, the one logging setup, and the "not written
 * yet" answer for applets that do not exist yet. */
#ifndef SPOOLBOX_APPLETS_COMMON_H
#define SPOOLBOX_APPLETS_COMMON_H
#include "conf.h"

enum {
	AF_SETGID = 1,      /* keeps the setgid group of the binary (submit, docs/spool.md 8) */
	AF_AGENT = 2,       /* a transport agent run by the scheduler */
	AF_INTERACTIVE = 4, /* run by a person: warnings and errors always on stderr */
	AF_MAN1 = 8,        /* its man page is in section 1 (the rest are in 8) */
};

#define APPLET(name, dir, flags) int name##_main(int argc, char **argv); extern const char name##_usage[];
#define LINK(name, applet, dir)
#include "applets.h"
#undef APPLET
#undef LINK

#define CHECKER(fn) int fn(const struct conf *c, conf_report_fn *report, void *ctx);
#include "checks.h"
#undef CHECKER

struct applet {
	const char *name;
	int (*main)(int, char **);
#if ENABLE_VERBOSE_USAGE
	const char *usage; /* without the texts no row has one (8 bytes a row) */
#endif
	const char *dir;
	unsigned flags; /* AF_* */
};

/* The applet this process runs (set once by main() before the applet starts). */
extern const struct applet *applet_self;

/* The applet called name (or a LINK to it), NULL when there is none in this build. */
const struct applet *applet_find(const char *name);
/* Loads spoolbox.conf (path NULL: $SPOOLBOX_CONF or the default) and the environment into c.
 * Every finding is printed on stderr as "file:line: reason"; any error returns EX_CONFIG (78),
 * else 0. An explicit path (-C) is put into $SPOOLBOX_CONF for the processes this one starts. */
int applet_load_conf(struct conf *c, const char *path);
/* The one logging setup: LOG (syslog, stderr) from c, the applet's flags, -v
 * (verbose: debug level, and every line on stderr). ident NULL: "spoolbox/<applet>". extra adds
 * LOG_* bits (the scheduler's -L file and foreground mode). Only an applet calls it (applet_self
 * MUST be set). */
void applet_log_setup(const struct conf *c, const char *ident, unsigned extra, int verbose);
/* spoolbox --install's system part (install.c): the submit group, the setgid bit of binary and
 * the spool, done as root or printed as commands. Returns 0, EX_CANTCREAT or EX_CONFIG. */
int install_system(const char *binary);
/* For an applet that is registered but not implemented: says so, returns EX_UNAVAILABLE. */
int applet_unwritten(const char *name);
/* Prints the applet's usage to stdout (help) or stderr (misuse) and returns 0 or EX_USAGE.
 * Without ENABLE_VERBOSE_USAGE the texts are not referenced (so not linked) and a pointer to the
 * man page is printed instead. usage MUST be a text when built with ENABLE_VERBOSE_USAGE (it is
 * not tested for NULL then). */
int applet_usage_text(const char *usage, int misuse);
#define applet_usage(usage, misuse) applet_usage_text(ENABLE_VERBOSE_USAGE ? (usage) : NULL, misuse)
/* 1 when any spoolbox.conf key is set in the environment (a setgid applet then drops its group
 * before reading anything: nobody points a privileged process at another spool). */
int applet_env_overrides(void);
/* 1 when argv[1] is --help. */
int applet_wants_help(int argc, char **argv);
/* This binary's path (/proc/self/exe) in buf, NUL-terminated: its length, or -1 with errno.
 * The readlink system call: musl's readlink wrapper is not linked for it. */
long applet_exe(char *buf, size_t size);
#endif
