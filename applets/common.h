/* What every applet shares: its prototypes (from applets.h), configuration loading with the
 * one error policy, and the "not written yet" answer for applets that do not exist yet. */
#ifndef SPOOLBOX_APPLETS_COMMON_H
#define SPOOLBOX_APPLETS_COMMON_H
#include "conf.h"

#define APPLET(name, dir) int name##_main(int argc, char **argv); extern const char name##_usage[];
#define LINK(name, applet, dir)
#include "applets.h"
#undef APPLET
#undef LINK

#define CHECKER(fn) int fn(const struct conf *c, conf_report_fn *report, void *ctx);
#include "checks.h"
#undef CHECKER

/* Loads spoolbox.conf (path NULL: the default) and the environment into c. Every finding is
 * printed on stderr as "file:line: reason"; any error returns EX_CONFIG (78), else 0. */
int applet_load_conf(struct conf *c, const char *path);
/* The one logging setup of the applets: ident "spoolbox/NAME", where the LOG key says
 * (stderr added when verbose), LOG_DEBUG when verbose. */
void applet_log_init(const char *ident, const struct conf *c, int verbose);
/* For an applet that is registered but not implemented: says so, returns EX_UNAVAILABLE. */
int applet_unwritten(const char *name);
/* Prints the applet's usage to stdout (help) or stderr (misuse) and returns 0 or EX_USAGE. */
int applet_usage(const char *usage, int misuse);
/* 1 when argv[1] is --help. */
int applet_wants_help(int argc, char **argv);
#endif
