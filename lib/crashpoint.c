/* Test-only crash points: see crashpoint.h. Kept in every build so that the tests exercise the
 * product binary itself; without SPOOLBOX_TEST_CRASH it costs one getenv per process. */
#include "crashpoint.h"
#include "log.h"
#include "util.h"
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
	long at;           /* crash after this step; 0 = never */
	long done;         /* steps so far */
	char flag[256];    /* "" or the once-only flag file */
} cp;

void crash_point_reset(void)
{
	memset(&cp, 0, sizeof cp);
}

void crash_point_init(const char *applet)
{
	crash_point_reset();
	const char *v = getenv("SPOOLBOX_TEST_CRASH");
	if (!v || !*v || getuid() != geteuid() || getgid() != getegid())
		return;
	char *end;
	long n = strtol(v, &end, 10);
	if (n <= 0)
		return;
	if (*end == ':') {
		const char *name = end + 1, *colon = strchr(name, ':');
		size_t len = colon ? (size_t)(colon - name) : strlen(name);
		if (strlen(applet) != len || strncmp(applet, name, len) != 0)
			return;
		if (colon)
			str_lcpy(cp.flag, colon + 1, sizeof cp.flag);
	}
	cp.at = n;
}

void crash_point(const char *step, const char *path)
{
	if (!cp.at || ++cp.done != cp.at)
		return;
	if (cp.flag[0]) {
		int fd = open(cp.flag, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return; /* another process crashed here already */
		close(fd);
	}
	log_flush(); /* the lines held before this step (log_hold): the tests read them after the kill */
	/* no stdio buffer to flush, nothing else to run (snprintf here is lib/fmt.c: no lock, no
	 * allocation). One write, so that an agent's log line on the same stderr cannot land inside
	 * it (the tests parse it); cut at 1023 bytes. */
	char line[1024];
	snprintf(line, sizeof line, "spoolbox: test crash point: %s %s\n", step, path ? path : "-");
	size_t n = strlen(line);
	ssize_t w = write(2, line, n);
	(void)w;
	kill(getpid(), SIGKILL);
	_exit(137);
}
