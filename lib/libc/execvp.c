/* musl 1.2.3's execvp (its __execvpe with the process's environment; MIT licence, Copyright
 * 2005-2020 Rich Felker, et al.) for the static build, linked as an object like strstr.c so that
 * musl's member is never pulled: the same PATH walk (the default PATH when unset, an empty entry
 * meaning the current directory, over-long entries skipped, EACCES remembered, any other error
 * but ENOENT and ENOTDIR final), built with our size flags instead of -O2 and a stack protector,
 * and with one buffer for the longest name instead of a variable-length array. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **__environ;

int execvp(const char *file, char *const argv[])
{
	const char *p, *z, *path = getenv("PATH");
	size_t l, k;
	int seen_eacces = 0;
	char b[PATH_MAX + NAME_MAX + 1];

	errno = ENOENT;
	if (!*file)
		return -1;

	if (strchr(file, '/'))
		return execve(file, argv, __environ);

	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	k = strnlen(file, NAME_MAX + 1);
	if (k > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	l = strnlen(path, PATH_MAX - 1) + 1;

	for (p = path;; p = z) {
		z = strchrnul(p, ':');
		if ((size_t)(z - p) >= l) {
			if (!*z++)
				break;
			continue;
		}
		memcpy(b, p, (size_t)(z - p));
		b[z - p] = '/';
		memcpy(b + (z - p) + (z > p), file, k + 1);
		execve(b, argv, __environ);
		switch (errno) {
		case EACCES:
			seen_eacces = 1;
			/* fall through */
		case ENOENT:
		case ENOTDIR:
			break;
		default:
			return -1;
		}
		if (!*z++)
			break;
	}
	if (seen_eacces)
		errno = EACCES;
	return -1;
}
