/* Opening the spool (docs/spool.md 2 and 8): every applet that touches the queue starts here;
 * with create it is spool_perm's table that makes and repairs the layout. */
#include "spool.h"
#include "fileio.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int spool_open(struct spool *sp, const char *dir, int create, long gid)
{
	memset(sp, 0, sizeof *sp);
	if (!*dir || str_lcpy(sp->dir, dir, sizeof sp->dir) >= sizeof sp->dir) {
		log_msg(LOG_ERR, NULL, "spool directory name too long or empty: %s", dir);
		return -1;
	}
	char path[SPOOL_PATH_MAX];
	if (create < 0)
		return 0; /* the caller has just seen incoming/ */
	if (create) {
		if (fio_mkdirs(dir, 0755) < 0)
			return -1;
		/* the scheduler passes no group: SUBMIT_GROUP is in its environment (or the default),
		 * so a scheduler started before any submit still makes the spool submit can use */
		if (gid < 0)
			gid = spool_submit_gid(NULL);
		/* the layout is spool_perm's table: what is missing is made, and what an earlier run
		 * left in other modes (an older version, a scheduler started before the group existed,
		 * a restore) is put right; what cannot be is logged */
		return spool_perm(dir, gid, 1, NULL, NULL) < 0 ? -1 : 0;
	}
	spool_sub(sp, "incoming", path);
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_msg(LOG_ERR, NULL, "spool %s is not set up (%s: %s)", dir, path,
		        errno ? strerror(errno) : "not a directory");
		return -1;
	}
	return 0;
}
