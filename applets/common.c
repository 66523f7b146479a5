/* Shared applet plumbing (see common.h). */
#include "common.h"
#include "log.h"
#include "sysexits.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

const struct applet *applet_self;

int applet_load_conf(struct conf *c, const char *path)
{
	struct conf_stderr_ctx ctx = {0, "error"};
	conf_init(c);
	if (conf_load(c, path, conf_report_stderr, &ctx) > 0) {
		conf_free(c);
		return EX_CONFIG;
	}
	/* the agents, errormail and submit this process starts read the same file, never the
	 * system's (they run from another directory: the name is made absolute; joined to the
	 * working directory, not resolved: realpath costs 1.4 KiB, docs/size.md). The directory is
	 * the system call's answer, as getcwd checks it (an unreachable one does not start with a
	 * '/'), without getcwd's 0.2 KiB. */
	char abs[4096];
	const char *name = path;
	size_t l;
	if (path && path[0] != '/' && syscall(SYS_getcwd, abs, sizeof abs) > 0 && abs[0] == '/' &&
	    (l = strlen(abs)) + 1 + strlen(path) < sizeof abs) {
		abs[l] = '/';
		strcpy(abs + l + 1, path);
		name = abs;
	}
	if (path && c->path[0] && setenv(CONF_PATH_ENV, name, 1) < 0)
		return EX_OSERR;
	return 0;
}

void applet_log_setup(const struct conf *c, const char *ident, unsigned extra, int verbose)
{
	static char own[64];
	/* only applets call this: main() has set applet_self */
	const char *name = applet_self->name;
	unsigned flags = applet_self->flags;
	unsigned w = extra | log_where_of(conf_str(c, CK_LOG));
	if (verbose)
		w |= LOG_TO_STDERR;
	if (flags & AF_AGENT)
		w |= LOG_STDERR_FALLBACK;
	if (flags & AF_INTERACTIVE)
		w |= LOG_ERRORS_TO_STDERR;
	if (!ident) {
		snprintf(own, sizeof own, "spoolbox/%s", name);
		ident = own;
	}
	log_init(ident, w, verbose ? LOG_DEBUG : LOG_INFO);
}

int applet_unwritten(const char *name)
{
	fprintf(stderr, "spoolbox: the %s applet is not written yet in this version\n", name);
	return EX_UNAVAILABLE;
}

int applet_usage_text(const char *usage, int misuse)
{
	FILE *f = misuse ? stderr : stdout;
	const char *name = applet_self ? applet_self->name : "spoolbox";
	int man1 = applet_self && (applet_self->flags & AF_MAN1);
	/* usage is NULL exactly when built without ENABLE_VERBOSE_USAGE (applet_usage() and
	 * main.c's table): the build decides which branch is linked */
	if (ENABLE_VERBOSE_USAGE)
		fputs(usage, f);
	else
		fprintf(f, "usage: see %s(%d) (this spoolbox is built without usage texts)\n", name,
		        man1 ? 1 : 8);
	return misuse ? EX_USAGE : 0;
}

int applet_wants_help(int argc, char **argv)
{
	return argc > 1 && strcmp(argv[1], "--help") == 0;
}

int applet_env_overrides(void)
{
	if (getenv(CONF_PATH_ENV)) /* another spoolbox.conf is as much an override as -C */
		return 1;
	for (int k = 0; k < CK__COUNT; k++)
		if (getenv(conf_name((enum conf_key)k)))
			return 1;
	return 0;
}

long applet_exe(char *buf, size_t size)
{
	long n = syscall(SYS_readlinkat, (long)AT_FDCWD, "/proc/self/exe", buf, size - 1); /* arm64 has no readlink call */
	if (n >= 0)
		buf[n] = 0;
	return n;
}
