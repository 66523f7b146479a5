/* The physical limit of a sendmail(1) that is a separate process (make bench, bench_submit.py):
 * the raw durable-enqueue loop's steps, once, in the smallest static program: standard input's
 * bytes written to a new file in DIR/tmp/, fsync'd, renamed into DIR/incoming/, the directory
 * fsync'd. No parsing, no configuration, no checks: what any queueing program must at least do,
 * process start and exit included.  Usage: enqueue_once DIR < message */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	char tmp[4096], dst[4096];
	if (argc != 2)
		return 64;
	ssize_t n = read(0, buf, sizeof buf);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(tmp, sizeof tmp, "%s/tmp/%ld.%ld", argv[1], (long)getpid(), ts.tv_nsec);
	snprintf(dst, sizeof dst, "%s/incoming/%ld.%ld", argv[1], (long)getpid(), ts.tv_nsec);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (n < 0 || fd < 0 || write(fd, buf, (size_t)n) != n || fsync(fd) < 0 || close(fd) < 0 || rename(tmp, dst) < 0)
		return 74;
	snprintf(tmp, sizeof tmp, "%s/incoming", argv[1]);
	int d = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return d < 0 || fsync(d) < 0 ? 74 : 0;
}
