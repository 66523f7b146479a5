/* spoolbox --install, the system part (docs/spool.md 8): the submit group, the agents' user
 * (AGENT_USER), the setgid bit of the binary, the spool with its modes, and what an upgrade from
 * agents that ran as root needs in /etc (the credentials file becomes the agents').
 * As root it does each step and prints what it did; what it cannot do (not root, no group tools,
 * a read-only /etc) it prints as the exact commands to run.
 * Links are main.c's; this file is called after them. */
#include "common.h"
#include "agentuser.h"
#include "fileio.h"
#include "log.h"
#include "spool.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define GROUP_FILE "/etc/group"
#define PASSWD_FILE "/etc/passwd"
#define SHADOW_FILE "/etc/shadow"
#define NOLOGIN "/sbin/nologin"
/* statfs f_type of file systems in RAM (linux/magic.h, which musl does not ship) */
#define TMPFS_MAGIC 0x01021994
#define RAMFS_MAGIC 0x858458f6

/* A group name we may hand to groupadd or write into /etc/group: the portable set. */
static int group_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 32 || !((*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* execvp(argv[0], argv) as musl's: each entry of PATH (its default without one; an empty entry
 * is the working directory), on to the next while not found or not allowed. Returns when none
 * ran. Here so that musl's execvpe (0.5 KiB) stays out of the binary. */
static void exec_path(char *const argv[])
{
	const char *p = getenv("PATH");
	char file[4096];
	for (p = p ? p : "/usr/local/bin:/bin:/usr/bin";; p++) {
		int n = (int)strcspn(p, ":");
		if (str_fmt(file, sizeof file, "%.*s%s%s", n, p, n ? "/" : "", argv[0]) == 0) {
			execv(file, argv);
			if (errno != EACCES && errno != ENOENT && errno != ENOTDIR)
				return;
		}
		p += n;
		if (!*p)
			return;
	}
}

/* Runs argv (no shell) quietly; 0 when it ran and exited 0. */
static int run_tool(char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 1);
		exec_path(argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Appends line to file (O_APPEND, fsync'd); 0 or -1. */
static int append_line(const char *file, const char *line, size_t n)
{
	int fd = open(file, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = fio_write_all(fd, line, n, file) < 0 || fio_fsync(fd, file) < 0 ? -1 : 0;
	close(fd);
	return r;
}

/* Appends "name:x:gid:" to /etc/group with the first free system gid (100..999, as useradd's
 * SYS_GID range): for systems without groupadd or addgroup (initramfs, rescue images). */
static int append_group(const char *name)
{
	gid_t gid = 999;
	while (gid >= 100 && getgrgid(gid))
		gid--;
	if (gid < 100)
		return -1;
	char line[64];
	int n = snprintf(line, sizeof line, "%s:x:%u:\n", name, (unsigned)gid);
	return append_line(GROUP_FILE, line, (size_t)n);
}

/* The same for the agents' user: a passwd line with the first free system uid, no home, no
 * shell, and a locked shadow entry when the system has /etc/shadow. */
static int append_user(const char *name, long gid)
{
	uid_t uid = 999;
	while (uid >= 100 && getpwuid(uid))
		uid--;
	if (uid < 100)
		return -1;
	char line[160];
	int n = snprintf(line, sizeof line, "%s:x:%u:%ld:spoolbox transport agents:/nonexistent:" NOLOGIN "\n", name,
	                 (unsigned)uid, gid);
	if (append_line(PASSWD_FILE, line, (size_t)n) < 0)
		return -1;
	n = snprintf(line, sizeof line, "%s:!:::::::\n", name);
	if (access(SHADOW_FILE, F_OK) == 0 && append_line(SHADOW_FILE, line, (size_t)n) < 0)
		return -1;
	return 0;
}

/* Makes the agents' user in the submit group (so it reads the queue): useradd, or a line in
 * /etc/passwd (BusyBox systems: their packages make it with adduser -S). Its uid, or -1 with the way that failed in how. */
static long make_user(const char *name, const char *group, long gid, const char **how)
{
	char *ua[] = {"useradd", "-r", "-g", (char *)group, "-d", "/nonexistent", "-M", "-s", NOLOGIN, (char *)name, NULL};
	struct passwd *pw = getpwnam(name);
	if (pw) /* never a second line for a user that exists */
		return *how = "-", (long)pw->pw_uid;
	if (run_tool(ua) == 0 && (pw = getpwnam(name)))
		return *how = "useradd -r", (long)pw->pw_uid;
	if (append_user(name, gid) == 0 && (pw = getpwnam(name)))
		return *how = "a line in " PASSWD_FILE, (long)pw->pw_uid;
	*how = NULL;
	return -1;
}

/* A credentials file that is root's (as it was while the agents ran as root) becomes the agents'
 * user's: they read it themselves now. Only a regular file with no group or other bits; any
 * other owner is --check's to report, with the fix. */
static void give_credentials(const struct conf *c, uid_t uid, const char *user)
{
	const char *path = conf_str(c, CK_CREDENTIALS);
	struct stat st;
	if (!*path || lstat(path, &st) < 0)
		return;
	if (st.st_uid == uid)
		return;
	if (S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 077) && lchown(path, uid, (gid_t)-1) == 0)
		printf("gave %s to %s (mode %04o): the smtp agent reads it\n", path, user, (unsigned)(st.st_mode & 07777));
}

/* Makes the group; returns its gid, or -1 with the way that failed in how. */
static long make_group(const char *name, const char **how)
{
	char *ga[] = {"groupadd", "-r", (char *)name, NULL}, *ag[] = {"addgroup", "-S", (char *)name, NULL};
	long gid;
	if (run_tool(ga) == 0 && (gid = spool_submit_gid(name)) >= 0)
		return *how = "groupadd -r", gid;
	if (run_tool(ag) == 0 && (gid = spool_submit_gid(name)) >= 0)
		return *how = "addgroup -S", gid;
	if (append_group(name) == 0 && (gid = spool_submit_gid(name)) >= 0)
		return *how = "a line in " GROUP_FILE, gid;
	*how = NULL;
	return -1;
}

int install_system(const char *binary)
{
	struct conf c;
	int rc = applet_load_conf(&c, NULL);
	if (rc)
		return rc;
	const char *group = conf_str(&c, CK_SUBMIT_GROUP), *spool = conf_str(&c, CK_SPOOL);
	int root = geteuid() == 0, failed = 0;
	if (!group_name_ok(group)) {
		fprintf(stderr, "spoolbox: --install: SUBMIT_GROUP=%s is not a group name ([a-z_][a-z0-9_-]*)\n", group);
		conf_free(&c);
		return EX_CONFIG;
	}
	printf("\n");
	long gid = spool_submit_gid(group);
	if (gid >= 0)
		printf("group %s exists (gid %ld)\n", group, gid);
	else if (root) {
		const char *how;
		if ((gid = make_group(group, &how)) >= 0)
			printf("created group %s (gid %ld) with %s\n", group, gid, how);
		else
			failed = 1;
	}
	if (gid < 0)
		printf("to do as root: groupadd -r %s   (BusyBox: addgroup -S %s)\n", group, group);

	/* the agents' user, in the group that reads the queue (a number is used as it is) */
	const char *agent = conf_str(&c, CK_AGENT_USER);
	struct agent_ids ids;
	int have_agent = agentuser_ids(agent, group, &ids) != AGENTUSER_ROOT_FALLBACK;
	if (have_agent)
		printf("user %s exists (uid %u): the agents run as it\n", agent, (unsigned)ids.uid);
	else if (root && gid >= 0 && group_name_ok(agent)) {
		const char *how;
		long uid = make_user(agent, group, gid, &how);
		if (uid >= 0) {
			printf("created user %s (uid %ld, group %s) with %s: the agents run as it\n", agent, uid, group, how);
			have_agent = agentuser_ids(agent, group, &ids) != AGENTUSER_ROOT_FALLBACK;
		} else
			failed = 1;
	}
	if (!have_agent)
		printf("to do as root: useradd -r -g %s -d /nonexistent -M -s " NOLOGIN " %s (until then the agents run as "
		       "root)\n", group, agent);
	else if (root && ids.uid != 0)
		give_credentials(&c, ids.uid, agent);

	/* chown clears the setgid bit, so the mode comes after the group */
	struct stat st;
	int setgid_ok = gid >= 0 && stat(binary, &st) == 0 && st.st_gid == (gid_t)gid && (st.st_mode & 07777) == 02755;
	const char *said = "%s is setgid %s (mode 2755)\n";
	if (!setgid_ok && root && gid >= 0 && chown(binary, (uid_t)-1, (gid_t)gid) == 0 && chmod(binary, 02755) == 0) {
		said = "made %s setgid %s (mode 2755): every user can submit\n";
		setgid_ok = 1;
	}
	if (setgid_ok) {
		printf(said, binary, group);
	} else if (root && gid >= 0) {
		printf("cannot make %s setgid: %s\n", binary, strerror(errno));
		failed = 1;
	}
	if (!setgid_ok)
		printf("to do as root: chgrp %s %s && chmod 2755 %s\n", group, binary, binary);

	struct spool sp;
	if (root) {
		log_init("spoolbox", LOG_TO_STDERR, LOG_INFO);
		if (spool_open(&sp, spool, 1, gid) == 0 && spool_perm(spool, gid, 0, NULL, NULL) == 0)
			printf("spool %s has the owners and modes of docs/spool.md 8\n", spool);
		else
			failed = 1;
	}
	if (!root || failed)
		printf("to do as root: spoolbox --install   (or start the scheduler once as root: it creates %s)\n",
		       spool);
	conf_free(&c);
	return failed ? EX_CANTCREAT : 0;
}

/* ---- spoolbox --check: the installation (binary, group, spool) ---- */

struct perm_ctx {
	conf_report_fn *report;
	void *ctx;
	int count;
};

/* A wrong mode, group or owner is a warning: the scheduler repairs it when it starts, and an
 * init script that runs --check before starting it must not be stopped by it. Something that
 * is not a directory or FIFO where one belongs is an error: nothing repairs that. */
static void perm_finding(void *ctx, const char *path, const char *problem, const char *fix)
{
	struct perm_ctx *p = ctx;
	if (strstr(problem, "is not a")) {
		conf_reportf(p->report, p->ctx, path, 0, "%s; fix: %s", problem, fix);
		p->count++;
	} else {
		conf_reportf(p->report, p->ctx, path, 0,
		             CONF_WARNING "%s; the scheduler repairs this when it starts (submit fails for users until "
		             "then); fix now: %s", problem, fix);
	}
}

/* A place for the spool that survives a reboot, for the tmpfs warning. */
static const char *persistent_place(void)
{
	static const char *const places[] = {"/overlay", "/var/lib", "/srv", "/home"};
	for (size_t i = 0; i < ARRAY_LEN(places); i++) {
		struct statfs fs;
		if (statfs(places[i], &fs) == 0 && fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC)
			return places[i];
	}
	return NULL;
}

int install_check(const struct conf *c, conf_report_fn *report, void *ctx)
{
	const char *group = conf_str(c, CK_SUBMIT_GROUP), *spool = conf_str(c, CK_SPOOL);
	long gid = spool_submit_gid(group);
	char self[4096];
	int errors = 0;
	struct stat st;
	if (applet_exe(self, sizeof self) > 0 && stat(self, &st) == 0) {
		int sg = (st.st_mode & S_ISGID) != 0;
		/* the fix starts by making the group when there is none */
		const char *ga = gid < 0 ? "groupadd -r " : "", *gn = gid < 0 ? group : "";
		if (sg && gid >= 0 && st.st_gid == (gid_t)gid)
			;
		else if (sg)
			conf_report_key(c, CK_SUBMIT_GROUP, report, ctx,
			                CONF_WARNING "%s is setgid to gid %ld, not SUBMIT_GROUP=%s: submit drops it, so only "
			                "root can submit; fix: %s%s chgrp %s %s && chmod 2755 %s",
			                self, (long)st.st_gid, group, ga, gn, group, self, self);
		else
			conf_reportf(report, ctx, self, 0,
			             CONF_WARNING "not setgid: only root can submit mail; fix: %s%s%schgrp %s %s && chmod 2755 %s "
			             "(or spoolbox --install as root)",
			             ga, gn, gid < 0 ? " && " : "", group, self, self);
	}
	struct perm_ctx pc = {report, ctx, 0};
	if (access(spool, F_OK) < 0)
		conf_reportf(report, ctx, spool, 0, CONF_WARNING "the spool does not exist yet; spoolbox --install (as root) or the "
		             "first start of the scheduler creates it");
	else {
		spool_perm(spool, gid, 0, perm_finding, &pc);
		errors += pc.count;
	}

	/* the spool, or the directory it will be made in */
	char dir[4096];
	struct statfs fs;
	str_lcpy(dir, spool, sizeof dir);
	while (statfs(dir, &fs) < 0 && strrchr(dir, '/') && strrchr(dir, '/') != dir)
		*strrchr(dir, '/') = 0;
	if (statfs(dir, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC)) {
		const char *p = persistent_place();
		conf_report_key(c, CK_SPOOL, report, ctx,
		                CONF_WARNING "SPOOL=%s is on %s: queued mail does not survive a reboot; set SPOOL to a directory "
		                "on persistent storage%s%s%s",
		                spool, fs.f_type == TMPFS_MAGIC ? "tmpfs" : "ramfs", p ? " (such as " : "", p ? p : "",
		                p ? "/spoolbox)" : "");
	}
	return errors;
}
