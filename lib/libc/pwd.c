/* spoolbox's passwd and group lookups for the static build, linked as objects like vfprintf.c so
 * that musl's are never pulled (4.5 KiB with its stdio reader and its nscd client). They read
 * /etc/passwd and /etc/group, as musl does; what they leave out is musl's fallback to an nscd
 * socket for names the files do not have (no router runs nscd; glibc's NSS was never there).
 *
 * Contract (POSIX, as musl's): the result points into static storage that the next call of any
 * of them overwrites; NULL for "not found" (errno left alone) or for a file that cannot be read
 * (errno set). A line of the file that is malformed (too few fields, an id that is not a
 * number) is skipped, and so is one longer than PWD_LINE_MAX; a group's members beyond
 * PWD_MEMBERS_MAX are not listed. The single-threaded process needs no locking. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#ifndef PWD_PASSWD_FILE
#define PWD_PASSWD_FILE "/etc/passwd"
#define PWD_GROUP_FILE "/etc/group"
#endif
#define PWD_LINE_MAX 4096
#define PWD_MEMBERS_MAX 256

static char pwd_line[PWD_LINE_MAX];
static struct passwd pwd_pw;
static struct group pwd_gr;
static char *pwd_mem[PWD_MEMBERS_MAX + 1];

/* A decimal id; -1 for anything else (an empty field, a sign, a value over 32 bits). */
static long long pwd_id(const char *s)
{
	long long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 + (*s - '0')) > 0xffffffffLL)
			return -1;
	}
	return v;
}

/* Splits line at ':' into exactly n fields; 0 when it has another number of them. */
static int pwd_fields(char *line, char **f, int n)
{
	for (int i = 0; i < n; i++) {
		f[i] = line;
		line += strcspn(line, ":");
		if (i < n - 1) {
			if (!*line)
				return 0;
			*line++ = 0;
		}
	}
	return !*line;
}

/* Each line of path, NUL-terminated in pwd_line, goes to match() until it returns non-zero:
 * 1 then (pwd_line holds that line), 0 at the end, -1 when the file cannot be read. */
static int pwd_scan(const char *path, int (*match)(char *line, const void *key), const void *key)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t have = 0;
	int skip = 0, found = 0; /* skip: the rest of an over-long line is still to come */
	for (;;) {
		ssize_t r = read(fd, pwd_line + have, sizeof pwd_line - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			found = -1;
			break;
		}
		have += (size_t)r;
		char *s = pwd_line, *nl;
		while (!found && (nl = memchr(s, '\n', have - (size_t)(s - pwd_line)))) {
			*nl = 0;
			found = !skip && match(s, key); /* the result points into the line, left where it is */
			skip = 0;
			s = nl + 1;
		}
		if (found)
			break;
		have -= (size_t)(s - pwd_line);
		memmove(pwd_line, s, have);
		if (r == 0) { /* the last line, without its newline */
			pwd_line[have] = 0;
			found = have && !skip && match(pwd_line, key);
			break;
		}
		if (have == sizeof pwd_line - 1)
			skip = 1, have = 0;
	}
	close(fd);
	return found;
}

/* What a scan looks for: a name, else an id; for getgrouplist, a member and the list it fills. */
struct pwd_key {
	const char *name;
	unsigned id;
	const char *member;
	gid_t *groups;
	int n, max;
};

static int pwd_is(const char *name, long long id, const struct pwd_key *k)
{
	return id >= 0 && (k->name ? strcmp(name, k->name) == 0 : (unsigned)id == k->id);
}

static int pw_match(char *line, const void *key)
{
	char *f[7];
	if (!pwd_fields(line, f, 7))
		return 0;
	long long uid = pwd_id(f[2]), gid = pwd_id(f[3]);
	if (gid < 0 || !pwd_is(f[0], uid, key))
		return 0;
	pwd_pw = (struct passwd){f[0], f[1], (uid_t)uid, (gid_t)gid, f[4], f[5], f[6]};
	return 1;
}

static int gr_match(char *line, const void *key)
{
	const struct pwd_key *k = key;
	char *f[4];
	if (!pwd_fields(line, f, 4))
		return 0;
	long long gid = pwd_id(f[2]);
	if (!k->member) {
		if (!pwd_is(f[0], gid, k))
			return 0;
		size_t n = 0;
		for (char *m = f[3]; *m && n < PWD_MEMBERS_MAX;) {
			pwd_mem[n++] = m;
			m += strcspn(m, ",");
			if (*m)
				*m++ = 0;
		}
		pwd_mem[n] = NULL;
		pwd_gr = (struct group){f[0], f[1], (gid_t)gid, pwd_mem};
		return 1;
	}
	/* getgrouplist: every group listing the member, counted past the room */
	struct pwd_key *g = (struct pwd_key *)key;
	size_t ml = strlen(g->member);
	for (char *m = f[3]; gid >= 0 && *m;) {
		size_t l = strcspn(m, ",");
		if (l == ml && memcmp(m, g->member, l) == 0 && (gid_t)gid != g->groups[0]) {
			if (g->n < g->max)
				g->groups[g->n] = (gid_t)gid;
			g->n++;
			break;
		}
		m += l + (m[l] == ',');
	}
	return 0;
}

struct passwd *getpwnam(const char *name)
{
	struct pwd_key k = {.name = name};
	return pwd_scan(PWD_PASSWD_FILE, pw_match, &k) > 0 ? &pwd_pw : NULL;
}

struct passwd *getpwuid(uid_t uid)
{
	struct pwd_key k = {.id = uid};
	return pwd_scan(PWD_PASSWD_FILE, pw_match, &k) > 0 ? &pwd_pw : NULL;
}

struct group *getgrnam(const char *name)
{
	struct pwd_key k = {.name = name};
	return pwd_scan(PWD_GROUP_FILE, gr_match, &k) > 0 ? &pwd_gr : NULL;
}

struct group *getgrgid(gid_t gid)
{
	struct pwd_key k = {.id = gid};
	return pwd_scan(PWD_GROUP_FILE, gr_match, &k) > 0 ? &pwd_gr : NULL;
}

/* The primary group first, then each group of the file that lists user (the primary once, as
 * glibc does; musl listed it again). -1 when more than *ngroups were found; *ngroups is then the
 * number there are. An unreadable group file gives the primary group alone. */
int getgrouplist(const char *user, gid_t gid, gid_t *groups, int *ngroups)
{
	if (*ngroups < 1) {
		*ngroups = 1;
		return -1;
	}
	groups[0] = gid;
	struct pwd_key k = {.member = user, .groups = groups, .n = 1, .max = *ngroups};
	pwd_scan(PWD_GROUP_FILE, gr_match, &k);
	int fit = k.n <= *ngroups;
	*ngroups = k.n;
	return fit ? k.n : -1;
}

int initgroups(const char *user, gid_t gid)
{
	gid_t groups[NGROUPS_MAX];
	int n = NGROUPS_MAX;
	if (getgrouplist(user, gid, groups, &n) < 0)
		return -1;
	return setgroups((size_t)n, groups);
}
