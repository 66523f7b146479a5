/* Removing the leftovers of interrupted work (docs/spool.md 5, 7, 9). Every rule here removes
 * only what no state of a live message can be: a temporary file older than any submit could
 * take, a message file whose control file was already removed (R2 is the only state with a .d
 * and no .c), and an index link that no longer shares its inode with a control file. */
#include "spool.h"
#include "log.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void clean_queue_dir(const struct spool *sp, char h, unsigned *count)
{
	char dir[SPOOL_PATH_MAX], path[SPOOL_PATH_MAX];
	str_fmt(dir, sizeof dir, "%s/queue/%c", sp->dir, h);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 3 || strcmp(e->d_name + n - 2, ".d") != 0)
			continue;
		char id[SPOOL_ID_MAX];
		if (n - 2 >= sizeof id)
			continue;
		memcpy(id, e->d_name, n - 2);
		id[n - 2] = 0;
		struct stat st;
		if (!spool_id_valid(id) || spool_path_ctl(sp, id, path, sizeof path) < 0 || lstat(path, &st) == 0)
			continue;
		if (errno == ENOENT && spool_path_msg(sp, id, path, sizeof path) == 0 && unlink(path) == 0) {
			(*count)++;
			log_msg(LOG_INFO, id, "removed message file left by an interrupted removal");
		}
	}
	closedir(d);
}

/* Removes the regular files of dir that are leftovers: with links1, index links (due/<bucket>/
 * and hold/) whose control file is gone (a link count of 1); else files of tmp/ last changed
 * before the time "before". what names them in the log line. */
static void sweep(const char *dir, int links1, long long before, const char *what, unsigned *count)
{
	char path[SPOOL_PATH_MAX];
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.' || str_fmt(path, sizeof path, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    (links1 ? st.st_nlink == 1 : (long long)st.st_mtime < before) && unlink(path) == 0) {
			(*count)++;
			log_msg(LOG_INFO, NULL, "removed %s %s", what, path);
		}
	}
	closedir(d);
}

static void clean_due(const struct spool *sp, unsigned *count)
{
	char top[SPOOL_PATH_MAX], dir[SPOOL_PATH_MAX];
	spool_sub(sp, "due", top);
	DIR *d = opendir(top);
	if (!d)
		return;
	struct dirent *b;
	while ((b = readdir(d))) {
		if (b->d_name[0] < '0' || b->d_name[0] > '9' || str_fmt(dir, sizeof dir, "%s/%s", top, b->d_name) < 0)
			continue;
		sweep(dir, 1, 0, "stale index entry", count);
		rmdir(dir); /* fails while not empty, as intended */
	}
	closedir(d);
	/* the hold index (docs/spool.md 12): a held message deleted by a crashed mailq */
	if (spool_sub(sp, "hold", dir) == 0)
		sweep(dir, 1, 0, "stale index entry", count);
}

int spool_clean(struct spool *sp, long long now, long long max_age, struct spool_clean_counts *counts)
{
	struct spool_clean_counts c = {0, 0, 0};
	char tmp[SPOOL_PATH_MAX];
	if (spool_sub(sp, "tmp", tmp) == 0)
		sweep(tmp, 0, now - max_age, "abandoned temporary file", &c.tmp);
	for (int h = 0; h < 36; h++)
		clean_queue_dir(sp, spool_b36[h], &c.orphan_msg);
	clean_due(sp, &c.stale_due);
	if (counts)
		*counts = c;
	return 0;
}
