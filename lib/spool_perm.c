/* The permission model of docs/spool.md 8 as one table: the owner, group and mode of every
 * entry of the spool root. The scheduler and a first root submit repair what differs (so the
 * spool ends up right whichever of them ran first); spoolbox --check reports it with the fix. */
#include "spool.h"
#include "conf.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	char name[9];         /* "" is the spool root (in place: no pointer a row) */
	unsigned short mode;  /* permission bits, exactly */
	char grouped;         /* group GROUP (writable by submit); else the owner's */
	char fifo;
} entries[] = {
    {"", 0710, 1, 0},        {"tmp", 01770, 1, 0},   {"incoming", 01770, 1, 0}, {"trigger", 0620, 1, 1},
    {"queue", 02750, 1, 0},  {"due", 0750, 0, 0},    {"corrupt", 0750, 0, 0}, {"hold", 02750, 1, 0},
};

long spool_submit_gid(const char *group)
{
	if (!group && !(group = getenv("SUBMIT_GROUP")))
		group = conf_default(CK_SUBMIT_GROUP);
	struct group *g = *group ? getgrnam(group) : NULL;
	return g ? (long)g->gr_gid : -1;
}

int spool_perm(const char *dir, long gid, int fix, spool_perm_fn *report, void *ctx)
{
	int left = 0;
	struct stat root;
	if (lstat(dir, &root) < 0 || !S_ISDIR(root.st_mode)) {
		if (report)
			report(ctx, dir, errno == ENOENT ? "does not exist" : "is not a directory",
			       "spoolbox --install (or the first start of the scheduler) creates it");
		return 1;
	}
	for (size_t i = 0; i < ARRAY_LEN(entries); i++) {
		char path[SPOOL_PATH_MAX], cmd[SPOOL_PATH_MAX + 64];
		struct stat st;
		if (str_fmt(path, sizeof path, "%s%s%s", dir, *entries[i].name ? "/" : "", entries[i].name) < 0)
			return left + 1;
		int made = 0;
		if (lstat(path, &st) < 0 && fix && errno == ENOENT) {
			/* made in the mode the table asks; the chmod below then corrects the umask */
			made = 1;
			if ((entries[i].fifo ? mkfifo : mkdir)(path, entries[i].mode) < 0 &&
			    errno != EEXIST) {
				log_syserr(NULL, entries[i].fifo ? "mkfifo" : "mkdir", path, NULL);
				return -1;
			}
		}
		if (lstat(path, &st) < 0) {
			if (report)
				report(ctx, path, "is missing", "the scheduler creates it when it starts");
			left++;
			continue;
		}
		if (S_ISLNK(st.st_mode) || (entries[i].fifo ? !S_ISFIFO(st.st_mode) : !S_ISDIR(st.st_mode))) {
			/* never chmod through a symlink somebody planted */
			if (report) {
				str_fmt(cmd, sizeof cmd, "rm %s and restart the scheduler, which makes it again", path);
				report(ctx, path, entries[i].fifo ? "is not a FIFO" : "is not a directory", cmd);
			}
			left++;
			continue;
		}
		mode_t mode = st.st_mode & 07777;
		int bad_mode = mode != entries[i].mode;
		int bad_owner = st.st_uid != root.st_uid;
		int bad_group = entries[i].grouped && gid >= 0 && st.st_gid != (gid_t)gid;
		if (!bad_mode && !bad_owner && !bad_group)
			continue;
		errno = 0;
		if (fix && (geteuid() == 0 || geteuid() == st.st_uid) &&
		    (!bad_owner || chown(path, root.st_uid, (gid_t)-1) == 0) &&
		    (!bad_group || chown(path, (uid_t)-1, (gid_t)gid) == 0) && chmod(path, entries[i].mode) == 0) {
			if (!made)
				log_msg(LOG_NOTICE, NULL, "repaired %s: mode %04o, group %ld (was %04o, group %ld)", path,
				        (unsigned)entries[i].mode, bad_group ? gid : (long)st.st_gid, (unsigned)mode,
				        (long)st.st_gid);
			continue;
		}
		if (fix)
			log_msg(LOG_WARNING, NULL, "cannot repair %s (mode %04o, group %ld): %s", path, (unsigned)mode,
			        (long)st.st_gid, errno ? strerror(errno) : "not its owner");
		left++;
		if (!report)
			continue;
		struct group *g = bad_group ? getgrgid((gid_t)gid) : NULL;
		char detail[240];
		str_fmt(detail, sizeof detail, "%s%s%s (%04o, uid %ld, gid %ld)", bad_mode ? "mode is not the documented one" : "",
		        bad_mode && (bad_owner || bad_group) ? ", " : "",
		        bad_owner ? "owner differs from the spool's" : bad_group ? "group is not SUBMIT_GROUP" : "",
		        (unsigned)mode, (long)st.st_uid, (long)st.st_gid);
		int o = 0;
		if (bad_owner)
			o = snprintf(cmd, sizeof cmd, "chown %ld %s && ", (long)root.st_uid, path);
		if (bad_group && o >= 0 && (size_t)o < sizeof cmd)
			o += g ? snprintf(cmd + o, sizeof cmd - (size_t)o, "chgrp %s %s && ", g->gr_name, path)
			       : snprintf(cmd + o, sizeof cmd - (size_t)o, "chgrp %ld %s && ", gid, path);
		if (o >= 0 && (size_t)o < sizeof cmd)
			snprintf(cmd + o, sizeof cmd - (size_t)o, "chmod %04o %s", (unsigned)entries[i].mode, path);
		report(ctx, path, detail, cmd);
	}
	return left;
}
