/* spoolbox: the multicall entry point. Dispatches on the basename of argv[0] (sendmail, mailq,
 * scheduler, ...) or on argv[1] when called as spoolbox, and implements the binary's own options.
 *
 * usage: spoolbox APPLET [ARGS...]
 *        spoolbox --list | --install [DIR] | --check [-C FILE] | --version | --help
 * exit:  the applet's status; 64 (EX_USAGE) for an unknown applet or option;
 *        --check: 0 when every configuration file is valid, 78 (EX_CONFIG) otherwise. */
#include "crashpoint.h"
#include "common.h"
#include "fileio.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SPOOLBOX_VERSION "0.1"
#if ENABLE_TLS
#define TLS_LIBRARY "bearssl"
#else
#define TLS_LIBRARY "no"
#endif

static const struct applet applets[] = {
#if ENABLE_VERBOSE_USAGE
#define APPLET(n, d, f) {#n, n##_main, n##_usage, d, f},
#else
#define APPLET(n, d, f) {#n, n##_main, d, f},
#endif
#define LINK(n, a, d)
#include "applets.h"
#undef APPLET
#undef LINK
};

static const struct link {
	const char *name, *applet, *dir;
} links[] = {
#define APPLET(n, d, f)
#define LINK(n, a, d) {#n, #a, d},
#include "applets.h"
#undef APPLET
#undef LINK
};

static const char spoolbox_usage[] =
    "usage: spoolbox APPLET [ARGS...]\n"
    "       spoolbox --list | --install [DIR] | --check [-C FILE] | --version | --help\n"
    "\n"
    "A mail transfer agent in one binary. Applets run by name (a symlink called sendmail,\n"
    "mailq, ...) or as `spoolbox APPLET`. `spoolbox APPLET --help` shows an applet's usage.\n"
    "\n"
    "  --list           print the applets and the other names they answer to\n"
    "  --install [DIR]  create a symlink to this binary for every applet and name: in DIR when\n"
    "                   given, else in each one's usual place: /usr/sbin/sendmail,\n"
    "                   /usr/lib/sendmail, /usr/bin/mailq, /usr/bin/newaliases,\n"
    "                   /usr/sbin/scheduler, transport agents under /usr/libexec/spoolbox;\n"
    "                   as root also the SUBMIT_GROUP group, this binary setgid to it and the\n"
    "                   spool with its modes (otherwise the commands that do it are printed)\n"
    "  --check          validate every configuration file the system reads; print each\n"
    "                   finding as file:line: reason; exit 78 when there are errors\n"
    "  --version        version and build options\n";

const struct applet *applet_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(applets); i++)
		if (strcmp(applets[i].name, name) == 0)
			return &applets[i];
	for (size_t i = 0; i < ARRAY_LEN(links); i++)
		if (strcmp(links[i].name, name) == 0)
			return applet_find(links[i].applet);
	return NULL;
}

/* "options: +tls -smtpd ...": the build options (config/config_default.h), for people and for
 * the tests, which skip what is compiled out. One literal made by the preprocessor: each option
 * is 0 or 1 (config/check.h asserts it), so OPT_SIGN_0 or OPT_SIGN_1 gives its sign. */
#define OPT_SIGN_0 "-"
#define OPT_SIGN_1 "+"
#define OPT_SIGN(v) OPT_SIGN_(v)
#define OPT_SIGN_(v) OPT_SIGN_##v
#define OPT_WORD(name, v) " " OPT_SIGN(v) #name
/* --version: one constant text, no table of names and flags to print in a loop */
static const char version_text[] =
    "spoolbox " SPOOLBOX_VERSION " (tls=" TLS_LIBRARY ")\noptions:" SPOOLBOX_OPTIONS(OPT_WORD) "\n";

static int list(void)
{
	for (size_t i = 0; i < ARRAY_LEN(applets); i++)
		fprintf(stdout, "%s\n", applets[i].name); /* not printf: gcc would make it a puts, linked for main alone */
	for (size_t i = 0; i < ARRAY_LEN(links); i++)
		if (i == 0 || strcmp(links[i].name, links[i - 1].name) != 0)
			printf("%s -> %s\n", links[i].name, links[i].applet);
	return 0;
}

static int make_link(const char *target, const char *dir, const char *name)
{
	char path[4096];
	/* a refusal: one of these texts with a and b */
	const char *fmt = "path too long: %s/%s\n", *a = dir, *b = name;
	if (str_fmt(path, sizeof path, "%s/%s", dir, name) < 0)
		goto bad;
	if (fio_mkdirs(dir, 0755) < 0) {
		fmt = "cannot create %s: %s\n";
		goto bad_errno;
	}
	a = path;
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISLNK(st.st_mode)) {
			fmt = "%s exists and is not a symlink; left alone\n";
			goto bad;
		}
		unlink(path);
	}
	fmt = "symlink %s: %s\n";
	if (symlink(target, path) < 0)
		goto bad_errno;
	printf("%s -> %s\n", path, target);
	return 0;
bad_errno:
	b = strerror(errno);
bad:
	fputs("spoolbox: --install: ", stderr);
	fprintf(stderr, fmt, a, b);
	return -1;
}

static int install(const char *dir)
{
	char target[4096];
	/* the binary itself, not argv[0] (it may have come through PATH or a link); the agents are
	 * started through /proc/self/exe anyway */
	if (applet_exe(target, sizeof target) < 0) {
		fprintf(stderr, "spoolbox: --install: cannot find this binary: %s\n", strerror(errno));
		return EX_OSFILE;
	}
	int bad = 0;
	for (size_t i = 0; i < ARRAY_LEN(applets); i++)
		bad |= make_link(target, dir ? dir : applets[i].dir, applets[i].name);
	for (size_t i = 0; i < ARRAY_LEN(links); i++)
		if (!dir || i == 0 || strcmp(links[i].name, links[i - 1].name) != 0)
			bad |= make_link(target, dir ? dir : links[i].dir, links[i].name);
	/* the group, setgid and spool steps run even when a link failed: each is independent */
	int rc = install_system(target);
	return bad ? EX_CANTCREAT : rc;
}

static int check(int argc, char **argv)
{
	const char *path = NULL;
	if (argc == 2 && strcmp(argv[0], "-C") == 0)
		path = argv[1];
	else if (argc != 0)
		return applet_usage(spoolbox_usage, 1);
	struct conf c;
	struct conf_stderr_ctx ctx = {0, "error"};
	conf_init(&c);
	int errors = conf_load(&c, path, conf_report_stderr, &ctx);
#define CHECKER(fn) errors += fn(&c, conf_report_stderr, &ctx);
#include "checks.h"
#undef CHECKER
	conf_free(&c);
	if (errors) {
		fprintf(stderr, "spoolbox: --check: %d error%s\n", errors, errors == 1 ? "" : "s");
		return EX_CONFIG;
	}
	fputs("spoolbox: --check: configuration is valid\n", stdout);
	return 0;
}

/* A binary installed setgid for submit (docs/spool.md 8): every other applet and option
 * drops the group at once. */
static void drop_group_unless(const struct applet *a)
{
	if (a && (a->flags & AF_SETGID))
		return; /* submit lowers it itself, without asking the ids again */
	gid_t g = getgid();
	if (getegid() != g && setresgid(g, g, g) < 0) {
		fprintf(stderr, "spoolbox: cannot drop the setgid group: %s\n", strerror(errno));
		exit(EX_OSERR);
	}
}

/* The argument area of the process as the kernel set it up, for its title in ps. */
static char *title_area;
static size_t title_len;
/* kept for the process's life (and seen by the leak checker): the applet's copy of its
 * arguments and the environment moved out of the title's way (each one block: the pointers,
 * then their strings) */
static char **volatile title_argv;
static char **volatile title_env;

/* Names the process as admins look for it: comm (pgrep, top) is the applet's name, the command
 * line (ps) "spoolbox: NAME ARGS" — agents are started through /proc/self/exe and would show
 * as "exe". The applet gets a copy of its arguments, since the area is overwritten. Returns
 * argv, or the copy. */
static char **name_process(const char *name, int argc, char **argv)
{
	syscall(SYS_prctl, (long)PR_SET_NAME, name, 0L, 0L, 0L); /* prctl() itself is a wrapper of 0.1 KiB */
	if (!title_area || !title_len)
		return argv;
	/* the argument strings lie in the area: one copy of it, behind the pointers */
	char **copy = malloc(((size_t)argc + 1) * sizeof *copy + title_len);
	if (!copy)
		return argv;
	char *strings = memcpy(copy + argc + 1, title_area, title_len);
	for (int i = 0; i < argc; i++)
		copy[i] = strings + (argv[i] - title_area);
	copy[argc] = NULL;
	/* the environment strings that follow argv's make room for a longer title (the agents run
	 * with a short argv): they move to the heap first */
	extern char **environ;
	size_t n = 0, bytes = 0;
	while (environ && environ[n])
		bytes += strlen(environ[n++]) + 1;
	/* the pointers and the strings behind them, one allocation */
	char **env = malloc((n + 1) * sizeof *env + bytes), *end = title_area + title_len;
	if (env) {
		char *b = (char *)(env + n + 1);
		for (size_t i = 0; i < n; i++) {
			size_t k = strlen(environ[i]) + 1;
			if (environ[i] == end)
				end += k;
			env[i] = memcpy(b, environ[i], k);
			b += k;
		}
		env[n] = NULL;
		environ = env;
		title_env = env;
		title_len = (size_t)(end - title_area);
	}
	title_argv = copy;
	size_t o = (size_t)snprintf(title_area, title_len, "spoolbox: %s", name);
	for (int i = 1; i < argc && o + 1 < title_len; i++)
		o += (size_t)snprintf(title_area + o, title_len - o, " %s", copy[i]);
	if (o < title_len)
		memset(title_area + o, 0, title_len - o);
	return copy;
}

static int run(const struct applet *a, int argc, char **argv)
{
	drop_group_unless(a);
	applet_self = a;
	crash_point_init(a->name);
	if (applet_wants_help(argc, argv))
#if ENABLE_VERBOSE_USAGE
		return applet_usage(a->usage, 0);
#else
		return applet_usage(NULL, 0);
#endif
	return a->main(argc, name_process(a->name, argc, argv));
}

int main(int argc, char **argv)
{
	/* argv's strings lie one after the other: the area a title may use */
	if (argc > 0 && argv[0]) {
		title_area = argv[0];
		title_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
		for (int i = 1; i < argc; i++)
			if (argv[i] != argv[i - 1] + strlen(argv[i - 1]) + 1)
				title_area = NULL; /* not contiguous: leave the command line alone */
	}
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	base = base ? base + 1 : (argc > 0 ? argv[0] : "spoolbox");
	const struct applet *a = applet_find(base);
	if (a)
		return run(a, argc, argv);
	if (argc < 2 || argv[1][0] == '-')
		drop_group_unless(NULL);
	if (argc < 2)
		return applet_usage(spoolbox_usage, 1);
	const char *cmd = argv[1];
	if (strcmp(cmd, "--list") == 0 && argc == 2)
		return list();
	if (strcmp(cmd, "--install") == 0 && argc <= 3)
		return install(argc == 3 ? argv[2] : NULL);
	if (strcmp(cmd, "--check") == 0)
		return check(argc - 2, argv + 2);
	if (strcmp(cmd, "--version") == 0 && argc == 2) {
		fputs(version_text, stdout);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 && argc == 2)
		return applet_usage(spoolbox_usage, 0);
	a = cmd[0] != '-' ? applet_find(cmd) : NULL;
	if (!a) {
		fprintf(stderr, "spoolbox: unknown applet or option '%s'\n", cmd);
		return applet_usage(spoolbox_usage, 1);
	}
	return run(a, argc - 1, argv + 1);
}
