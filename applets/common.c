/* Shared applet plumbing (see common.h). */
#include "common.h"
#include "log.h"
#include "sysexits.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

extern char **environ;

const struct applet *applet_self;

int applet_load_conf(struct conf *c, const char *path)
{
	struct conf_stderr_ctx ctx = {0, "error"};
	conf_init(c);
	if (conf_load(c, path, conf_report_stderr, &ctx) > 0) {
		conf_free(c);
		return EX_CONFIG;
	}
	return 0;
}

static int has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; *p;) {
		p += strspn(p, ", \t");
		size_t k = strcspn(p, ", \t");
		if (k == n && strncmp(p, w, n) == 0)
			return 1;
		p += k;
	}
	return 0;
}

void applet_log_setup(const struct conf *c, const char *ident, unsigned extra, int verbose)
{
	static char own[64];
	const char *name = applet_self ? applet_self->name : "spoolbox";
	unsigned flags = applet_self ? applet_self->flags : 0;
	const char *list = conf_str(c, CK_LOG);
	unsigned w = extra;
	if (has_word(list, "syslog"))
		w |= LOG_TO_SYSLOG;
	if (has_word(list, "stderr") || verbose)
		w |= LOG_TO_STDERR;
	if (!(w & (LOG_TO_SYSLOG | LOG_TO_STDERR)))
		w |= LOG_TO_SYSLOG;
	if (flags & AF_AGENT)
		w |= LOG_STDERR_IF_NO_SYSLOG;
	if (flags & AF_INTERACTIVE)
		w |= LOG_ERRORS_TO_STDERR;
	if (!ident) {
		snprintf(own, sizeof own, "spoolbox/%s", name);
		ident = own;
	}
	log_init(ident, w, verbose ? LOG_DEBUG : LOG_INFO);
	log_set_syslog_path(conf_str(c, CK_SYSLOG_SOCKET));
}

void applet_set_title(const char *name, int argc, char **argv)
{
	char comm[16];
	snprintf(comm, sizeof comm, "%s", name);
	prctl(PR_SET_NAME, (unsigned long)comm, 0UL, 0UL, 0UL);
	if (argc < 1 || !argv[0])
		return;
	/* The title goes where the kernel keeps the arguments, and may run on into the environment
	 * strings that follow them (the kernel reads it from there, as for BSD's setproctitle):
	 * both are copied into one block first, kept for the process's life (a static pointer, so
	 * the leak checker sees it in use). Without memory the command line stays as it was. */
	static char *block;
	char *start = argv[0], *end = argv[0];
	int nenv = 0;
	for (int i = 0; i < argc; i++) {
		if (argv[i] != end)
			return; /* not the kernel's layout */
		end += strlen(argv[i]) + 1;
	}
	while (environ && environ[nenv] == end)
		end += strlen(environ[nenv++]) + 1;
	if (block)
		return; /* once per process */
	block = malloc((size_t)(end - start));
	if (!block)
		return;
	memcpy(block, start, (size_t)(end - start));
	for (int i = 0; i < argc; i++)
		argv[i] = block + (argv[i] - start);
	for (int i = 0; i < nenv; i++)
		environ[i] = block + (environ[i] - start);
	size_t room = (size_t)(end - start);
	memset(start, 0, room);
	snprintf(start, room, "spoolbox: %s", name);
}

int applet_unwritten(const char *name)
{
	fprintf(stderr, "spoolbox: the %s applet is not written yet in this version\n", name);
	return EX_UNAVAILABLE;
}

int applet_usage(const char *usage, int misuse)
{
	fputs(usage, misuse ? stderr : stdout);
	return misuse ? EX_USAGE : 0;
}

int applet_wants_help(int argc, char **argv)
{
	return argc > 1 && strcmp(argv[1], "--help") == 0;
}
