/* spoolbox's getenv, setenv, putenv and unsetenv for the static build, linked as objects like
 * strstr.c so that musl's are never pulled: musl's logic in one file (1.1 KiB there, with its
 * lookup written out in each function). The same contract: a name is what comes before the
 * first '=', and an empty one or one holding '=' is EINVAL (putenv of such a string unsets it);
 * the array grows by copy the first time (it may be the kernel's or one a caller made) and by
 * realloc after; strings setenv made are freed when replaced or removed, never a caller's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern char **__environ;

static char **alloced; /* setenv's strings (NULL: a free slot) */
static size_t nalloced;

/* old leaves the environment, new (setenv's, or NULL) enters it */
static void env_rm_add(char *old, char *new)
{
	for (size_t i = 0; i < nalloced; i++)
		if (alloced[i] == old) { /* old is ours, or both NULL: a free slot */
			alloced[i] = new;
			free(old);
			return;
		}
	if (!new)
		return;
	char **t = realloc(alloced, sizeof *t * (nalloced + 1));
	if (t)
		(alloced = t)[nalloced++] = new;
}

/* the length of s's name, 0 when there is none */
static size_t name_len(const char *s)
{
	return (size_t)(strchrnul(s, '=') - s);
}

/* the entry of the name s[0..l), else the array's terminating NULL (NULL: no environment) */
static char **find(const char *s, size_t l)
{
	char **e = __environ;
	if (e)
		for (; *e; e++)
			if (!strncmp(s, *e, l) && (*e)[l] == '=')
				break;
	return e;
}

char *getenv(const char *name)
{
	size_t l = name_len(name);
	char **e;
	if (!l || name[l] || !(e = find(name, l)) || !*e)
		return NULL;
	return *e + l + 1;
}

/* s ("NAME=value", l the name's length) in place of the name's entry or at the end; own: s
 * itself when setenv made it */
static int put(char *s, size_t l, char *own)
{
	static char **oldenv; /* the array we made */
	char **cur = __environ, **e = find(s, l), **n;
	if (e && *e) {
		env_rm_add(*e, own);
		*e = s;
		return 0;
	}
	size_t i = e ? (size_t)(e - cur) : 0;
	if (!(n = realloc(cur == oldenv ? cur : NULL, sizeof *n * (i + 2)))) {
		free(own);
		return -1;
	}
	if (cur != oldenv) {
		for (size_t k = 0; k < i; k++)
			n[k] = cur[k];
		free(oldenv);
	}
	n[i] = s;
	n[i + 1] = NULL;
	__environ = oldenv = n;
	env_rm_add(NULL, own); /* (NULL: nothing changes) */
	return 0;
}

int setenv(const char *name, const char *value, int overwrite)
{
	size_t l = name ? name_len(name) : 0;
	if (!l || name[l]) {
		errno = EINVAL;
		return -1;
	}
	if (!overwrite && getenv(name))
		return 0;
	size_t vl = strlen(value) + 1;
	char *s = malloc(l + 1 + vl);
	if (!s)
		return -1;
	memcpy(s, name, l);
	s[l] = '=';
	memcpy(s + l + 1, value, vl);
	return put(s, l, s);
}

int unsetenv(const char *name)
{
	size_t l = name_len(name);
	if (!l || name[l]) {
		errno = EINVAL;
		return -1;
	}
	for (char **e; (e = find(name, l)) && *e;) {
		env_rm_add(*e, NULL);
		do
			e[0] = e[1];
		while (*e++);
	}
	return 0;
}

int putenv(char *s)
{
	size_t l = name_len(s);
	if (!l || !s[l])
		return unsetenv(s);
	return put(s, l, NULL);
}
