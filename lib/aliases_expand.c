/* Expansion of one local recipient into delivery targets: ROOT, the aliases file, ~/.forward,
 * :include: files, owner-NAME, the catch-all "*", +detail, loop detection and the privileges
 * every |command and /file target runs with (see aliases.h and docs/local.md). */
#include "aliases.h"
#include "config_default.h"
#include "fmt.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Most aliases, .forward and :include: files expanded for one recipient. The depth limit and
 * the loop check look at one branch only: without a budget, a few small include files that
 * each name the next one several times make the work exponential (a user's ~/.forward can). */
#define EXPAND_STEPS_MAX 10000

struct xs {
	/* the scalars first: short offsets */
	const struct expand_cfg *cfg;
	struct expansion *out;
	int depth;                  /* of stack below */
	int oom, full;
	unsigned steps;
	int udepth;                 /* > 0 while walking a file a user controls */
	const char *ufile;          /* the outermost such file (a ~/.forward or a listed include) */
	/* the groups of the last user whose rights read a file (the group database is read once
	 * per user, not once per file: an expansion may read thousands) */
	long gl_uid;                /* -1: none yet */
	int gl_n;
	char *stack[EXPAND_DEPTH_MAX + 1]; /* "a:name", "f:user", "i:path" being expanded */
	gid_t gl[64];
};

/* Where a target list came from: it decides the privileges of its |command and /file targets
 * and what a reference to itself means. */
struct src {
	struct xs *s;
	const struct dl_user *priv; /* NULL: commands and files refused with `refuse` */
	const char *refuse;
	const char *self;           /* lower-case alias name or .forward owner, or NULL */
	const char *owner;          /* envelope sender for remote targets, or NULL */
	const struct dl_user *fwd;  /* set inside a user's .forward (and its includes) */
};

/* add_error: on x86-64 an entry into lib/fmt.c's shared variadic prologue (FMT_VA_ENTRY), which
 * calls add_error_v with the va_list; elsewhere a C function. Global for the entry's symbol. */
void expand_add_error(struct xs *s, const char *code, const char *fmt, ...) PRINTF_LIKE(3, 4);
#define add_error expand_add_error

/* A failed lookup (-1) is added as a 4.3.0 target here. */
static int user_lookup(struct xs *s, const char *name, struct dl_user *u)
{
	dl_getpw_fn *fn = s->cfg->getpw ? s->cfg->getpw : dl_getpw_system;
	if (!*name || strlen(name) >= sizeof u->name)
		return 1;
	int r = fn(s->cfg->getpw_ctx, name, u);
	if (r < 0)
		add_error(s, "d4.3.0", "user lookup of '%s' failed", name);
	return r;
}

/* Adds a target (text: NUL-terminated, as every caller's is); returns it, or NULL when nothing
 * was added. A DK_ERROR target's status and enh are the caller's to set, unless status is set
 * already (the list is full: that error). */
static struct dl_target *add(struct xs *s, enum dl_kind kind, const char *text, const struct dl_user *u,
                             const char *sender)
{
	struct expansion *x = s->out;
	if (s->oom || s->full)
		return NULL;
	for (size_t i = 0; i < x->n; i++) /* the same delivery twice is done once */
		if (x->t[i].kind == kind && strcmp(x->t[i].text, text) == 0 && (!u || x->t[i].user.uid == u->uid))
			return NULL;
	const char *code = NULL;
	if (x->n >= EXPAND_TARGETS_MAX) {
		s->full = 1;
		kind = DK_ERROR, text = "too many delivery targets";
		code = "f5.3.4", u = NULL, sender = NULL;
	}
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 4;
		struct dl_target *nt = realloc(x->t, cap * sizeof *nt);
		if (!nt) {
			s->oom = 1;
			return NULL;
		}
		x->t = nt;
		x->cap = cap;
	}
	struct dl_target *t = &x->t[x->n];
	memset(t, 0, sizeof *t);
	t->kind = kind;
	t->text = strdup(text);
	t->sender = sender ? strdup(sender) : NULL;
	if (!t->text || (sender && !t->sender)) {
		free(t->text);
		free(t->sender);
		s->oom = 1;
		return NULL;
	}
	if (u)
		t->user = *u;
	if (code) /* status, then enh (dl_set's code) */
		memcpy(&t->status, code, 7);
	x->n++;
	return t;
}

/* code: dl_set's, the status letter then the enhanced code ("f5.1.1") */
__attribute__((used)) static void add_error_v(struct xs *s, const char *code, const char *fmt, long d, va_list ap)
{
	char text[600];
	(void)d;
	vsnprintf(text, sizeof text, fmt, ap);
	struct dl_target *t = add(s, DK_ERROR, text, NULL, NULL);
	if (t && !t->status) /* status, then enh */
		memcpy(&t->status, code, 7);
	if (s->udepth > 0 && t) {
		/* what a user's file says never goes into a report (a bounce to the sender) */
		char pub[300];
		str_fmt(pub, sizeof pub, "a target in %.200s could not be delivered (details in the mail log)", s->ufile);
		if (!(t->public_text = strdup(pub)))
			s->oom = 1;
	}
}

FMT_VA_ENTRY(expand_add_error, 3, add_error_v);
#if !FMT_VA_ASM
void add_error(struct xs *s, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_error_v(s, code, fmt, 0, ap);
	va_end(ap);
}
#endif

/* Reading a file on a user's behalf with the user's rights (issue 11 point 9): root must not
 * read for her what she could not (a world-readable file in a directory she cannot enter). The
 * effective ids change and are restored; when we are not root there is nothing to change. */
struct as_user {
	int active;
	gid_t egid;
	int ngroups;
	gid_t groups[256];
};

static int as_user_begin(struct xs *s, const struct dl_user *u, struct as_user *a)
{
	a->active = 0;
	if (geteuid() != 0 || !u || u->uid == 0)
		return 0;
	a->egid = getegid();
	a->ngroups = getgroups(256, a->groups);
	if (a->ngroups < 0)
		return -1;
	if (s->gl_uid != (long)u->uid) {
		int n = (int)ARRAY_LEN(s->gl);
		if (getgrouplist(u->name, u->gid, s->gl, &n) < 0) /* more than fit: the primary only */
			s->gl[0] = u->gid, n = 1;
		s->gl_n = n;
		s->gl_uid = (long)u->uid;
	}
	if (setgroups((size_t)s->gl_n, s->gl) < 0)
		return -1;
	a->active = 1;
	if (setegid(u->gid) < 0 || seteuid(u->uid) < 0)
		return -1;
	return 0;
}

static void as_user_end(struct as_user *a)
{
	if (!a->active)
		return;
	/* a process left with a user's ids would do the rest of its work as that user */
	if (seteuid(0) < 0 || setegid(a->egid) < 0 || setgroups((size_t)a->ngroups, a->groups) < 0) {
		log_msg(LOG_CRIT, NULL, "cannot return to root's ids after reading a user's file: %s", strerror(errno));
		_exit(71);
	}
	a->active = 0;
}

/* read_safe() with the user's rights (u NULL: as we are), u also the owner it asks for; its
 * failure worth a retry (-1) is added as a 4.3.0 target here. */
static int read_as(struct xs *s, const struct dl_user *u, const char *path, int need_world_read, struct stat *st,
                   char **text, size_t *len);

/* strncat(chain, s, size - strlen(chain) - 1), without linking strncat for this alone */
static void chain_add(char *chain, size_t size, const char *s)
{
	size_t l = strlen(chain);
	str_lcpy(chain + l, s, size - l);
}

static int push(struct xs *s, char kind, const char *name)
{
	size_t n = strlen(name);
	char *k = malloc(n + 3);
	if (!k) {
		s->oom = 1;
		return -1;
	}
	k[0] = kind, k[1] = ':';
	memcpy(k + 2, name, n + 1);
	for (int i = 0; i < s->depth; i++)
		if (strcmp(s->stack[i], k) == 0) {
			char chain[400] = "";
			for (int j = i; j < s->depth; j++) {
				chain_add(chain, sizeof chain, s->stack[j] + 2);
				chain_add(chain, sizeof chain, " -> ");
			}
			chain_add(chain, sizeof chain, name);
			add_error(s, "f5.4.6", "alias loop: %s", chain);
			free(k);
			return -1;
		}
	if (++s->steps > EXPAND_STEPS_MAX) {
		add_error(s, "f5.4.6", "expansion too large: more than %d aliases, .forward and :include: files at '%s'",
		          EXPAND_STEPS_MAX, name);
		s->full = 1; /* stops every walk */
		free(k);
		return -1;
	}
	if (s->depth >= EXPAND_DEPTH_MAX) {
		add_error(s, "f5.4.6", "aliases nested more than %d deep at '%s'", EXPAND_DEPTH_MAX, name);
		free(k);
		return -1;
	}
	s->stack[s->depth++] = k;
	return 0;
}

static void pop(struct xs *s)
{
	free(s->stack[--s->depth]);
}

int expand_domain_is_local(const struct expand_cfg *cfg, const char *domain)
{
	if (str_caseeq(domain, "localhost") || str_caseeq(domain, "localhost.localdomain"))
		return 1;
	if (cfg->myhostname && *cfg->myhostname && str_caseeq(domain, cfg->myhostname))
		return 1;
	const char *p = cfg->localdomains;
	size_t dl = strlen(domain);
	while (p && *p) {
		p += strspn(p, ", \t");
		size_t n = strcspn(p, ", \t");
		if (n && n == dl && str_ncaseeq(p, domain, n))
			return 1;
		p += n;
	}
	return 0;
}

/* Reads a .forward or :include: file if it is safe. Returns 0 with the text, 1 when it is to be
 * ignored (missing, or unsafe: logged), -1 on an error worth a retry (reason in err). */
static int read_safe(const char *path, const struct dl_user *owner, int need_world_read, struct stat *st,
                     char **text, size_t *len, char *err, size_t errlen)
{
	/* Root reads these files, and a user names them: an O_PATH descriptor is looked at first,
	 * because a real open of a device (a watchdog, a tape) or a FIFO has effects of its own. */
	int pfd = openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		if (errno == ELOOP || errno == EACCES) {
			log_msg(LOG_WARNING, NULL, "ignoring %s: %s", path, errno == ELOOP ? "is a symlink" : strerror(errno));
			return 1;
		}
		str_fmt(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	const char *why = NULL;
	int fd = -1;
	memset(st, 0, sizeof *st);
	if (fstat(pfd, st) < 0)
		why = "cannot stat";
	else if (S_ISLNK(st->st_mode))
		why = "is a symlink";
	else if (!S_ISREG(st->st_mode))
		why = "not a regular file";
	if (!why) {
		/* the same inode, opened for reading: through /proc when it is there (no window for a
		 * swap), else by name again and compared */
		fd = dl_reopen(pfd, path, st, 0);
		if (fd == -1) {
			int e = errno;
			close(pfd);
			if (e == EACCES) { /* read with a user's rights: a file she may not read */
				log_msg(LOG_WARNING, NULL, "ignoring %s: %s", path, strerror(e));
				return 1;
			}
			str_fmt(err, errlen, "cannot open %s: %s", path, strerror(e));
			return -1;
		}
		if (fd < 0)
			why = "changed while it was opened";
	}
	close(pfd);
	if (why)
		; /* already refused */
	else if (st->st_nlink != 1)
		why = "has more than one hard link";
	else if (st->st_mode & 022)
		why = "group or world writable";
	else if (owner && st->st_uid != owner->uid && !(st->st_uid == 0 && (!need_world_read || (st->st_mode & 04))))
		why = "owned by another user";
	else if (st->st_size > (off_t)ALIASES_INCLUDE_MAX)
		why = "larger than 1 MiB";
	if (why) {
		if (fd >= 0)
			close(fd);
		log_msg(LOG_WARNING, NULL, "ignoring %s: %s", path, why);
		if (st->st_size > (off_t)ALIASES_INCLUDE_MAX && S_ISREG(st->st_mode)) {
			str_fmt(err, errlen, "%s is %s", path, why);
			return -1;
		}
		return 1;
	}
	size_t n = (size_t)st->st_size;
	char *p = malloc(n + 1);
	ssize_t got = p ? read(fd, p, n) : -1;
	int e = errno;
	close(fd);
	if (got < 0 || (size_t)got != n) {
		free(p);
		str_fmt(err, errlen, "cannot read %s: %s", path, got < 0 ? strerror(e) : "short read");
		return -1;
	}
	p[n] = 0;
	*text = p;
	*len = n;
	return 0;
}

static int read_as(struct xs *s, const struct dl_user *u, const char *path, int need_world_read, struct stat *st,
                   char **text, size_t *len)
{
	struct as_user a;
	char err[400];
	int r;
	if (as_user_begin(s, u, &a) < 0) {
		str_fmt(err, sizeof err, "cannot take the rights of %s to read %s: %s", u->name, path, strerror(errno));
		r = -1;
	} else {
		r = read_safe(path, u, need_world_read, st, text, len, err, sizeof err);
	}
	as_user_end(&a);
	if (r < 0)
		add_error(s, "d4.3.0", "%s", err);
	return r;
}

static void expand_local(struct xs *s, const char *name, const char *owner, int top);
static void walk(struct src *src, const char *text, size_t len, int lines, const char *what);

static void mailbox(struct xs *s, const struct dl_user *u)
{
	add(s, DK_MAILBOX, u->name, u, NULL);
}

/* A user's mailbox, through ~/.forward when allowed. */
static void user_delivery(struct xs *s, const struct dl_user *u, int forward, const char *owner)
{
	if (!forward || !s->cfg->forward) {
		mailbox(s, u);
		return;
	}
	char path[1200];
	if (str_fmt(path, sizeof path, "%s/.forward", strcmp(u->home, "/") ? u->home : "") < 0) {
		mailbox(s, u);
		return;
	}
	struct stat st;
	char *text = NULL;
	size_t len;
	int r = read_as(s, u, path, 0, &st, &text, &len);
	if (r < 0)
		return;
	if (r > 0) {
		mailbox(s, u);
		return;
	}
	size_t before = s->out->n;
	if (push(s, 'f', u->name) == 0) {
		struct src src = {s, u, NULL, u->name, owner, u};
		walk(&src, text, len, 1, path);
		pop(s);
	}
	if (s->out->n == before) /* an empty .forward: the mailbox */
		mailbox(s, u);
	free(text);
}

/* The targets of an aliases file entry (or ROOT's, or the catch-all's), pushed on the stack:
 * their |commands and /files run as the file's user (norun: the refusal when there is none). */
static void walk_alias(struct xs *s, const char *rhs, const char *self, const char *owner, const char *what,
                       const char *norun)
{
	struct src src = {s, s->cfg->alias_user, norun, self, owner, NULL}; /* refuse: read without priv only */
	if (s->cfg->aliases_unsafe)
		src.priv = NULL, src.refuse = "the aliases file is group or world writable";
	walk(&src, rhs, strlen(rhs), 0, what);
	pop(s);
}

/* A local name that is not (or no longer) an alias: a user, with +detail and catch-all. */
static void local_user(struct xs *s, const char *name, const char *owner, int top, int forward)
{
	struct dl_user u;
	int r = user_lookup(s, name, &u);
	if (r < 0)
		return;
	if (r == 0) {
		user_delivery(s, &u, forward, owner);
		return;
	}
	const char *plus = strchr(name, '+');
	if (plus && plus != name) {
		char base[ALIASES_NAME_MAX + 1];
		size_t n = (size_t)(plus - name);
		if (n < sizeof base) {
			memcpy(base, name, n);
			base[n] = 0;
			if (forward)
				expand_local(s, base, owner, top);
			else
				local_user(s, base, owner, 0, 0);
			return;
		}
	}
	const char *all = top && forward && s->cfg->aliases ? aliases_lookup(s->cfg->aliases, "*") : NULL;
	if (all && push(s, 'a', "*") == 0) {
		walk_alias(s, all, NULL, owner, "*", NULL);
		return;
	}
	add_error(s, "f5.1.1", "unknown user: %s", name);
}

static void lower_copy(char *dst, const char *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i] >= 'A' && src[i] <= 'Z' ? (char)(src[i] - 'A' + 'a') : src[i];
	dst[n] = 0;
}

/* A local part (no domain): ROOT, an alias, or a user. */
static void expand_local(struct xs *s, const char *name, const char *owner, int top)
{
	char lname[ALIASES_NAME_MAX + 1];
	size_t n = strlen(name);
	if (n == 0) {
		add_error(s, "f5.1.3", "empty local part");
		return;
	}
	if (n > ALIASES_NAME_MAX) {
		add_error(s, "f5.1.3", "local part longer than %d bytes", ALIASES_NAME_MAX);
		return;
	}
	lower_copy(lname, name, n);
	const char *rhs = NULL, *what = s->cfg->aliases_path;
	if (strcmp(lname, "root") == 0 && s->cfg->root && *s->cfg->root)
		rhs = s->cfg->root, what = "ROOT";
	else if (s->cfg->aliases)
		rhs = aliases_lookup(s->cfg->aliases, lname);
	if (!rhs) {
		local_user(s, lname, owner, top, 1);
		return;
	}
	if (push(s, 'a', lname) < 0)
		return;
	char ownbuf[ALIASES_NAME_MAX + 300];
	/* owner-NAME@HOST when the alias owner-NAME exists (looked up with the '@' cut off) */
	if (s->cfg->aliases &&
	    str_fmt(ownbuf, sizeof ownbuf, "owner-%s@%s", lname, s->cfg->myhostname ? s->cfg->myhostname : "localhost") == 0) {
		ownbuf[6 + n] = 0;
		if (aliases_lookup(s->cfg->aliases, ownbuf))
			owner = ownbuf;
		ownbuf[6 + n] = '@';
	}
	walk_alias(s, rhs, lname, owner, what, "no user to run it as (DEFAULT_USER)");
}

static int on_target(void *ctx, enum alias_tkind kind, const char *text, size_t len)
{
	struct src *src = ctx;
	struct xs *s = src->s;
	if (s->oom || s->full)
		return 1;
	char buf[ALIASES_TARGET_MAX + 1];
	memcpy(buf, text, len);
	buf[len] = 0;
	if (!ENABLE_DELIVER_CMD && (kind == AT_COMMAND || kind == AT_INCLUDE)) {
		add_error(s, "f5.3.5", "%s '%.100s': this spoolbox is built without |command and :include: "
		          "(ENABLE_DELIVER_CMD)", kind == AT_COMMAND ? "|command" : ":include:", buf);
		return 0;
	}
	switch (kind) {
	case AT_COMMAND:
	case AT_FILE:
		if (!src->priv) {
			add_error(s, "d4.3.5", "%s '%.100s' refused: %s", kind == AT_COMMAND ? "|command" : "file",
			          buf, src->refuse ? src->refuse : "no privileges");
			return 0;
		}
		add(s, kind == AT_COMMAND ? DK_COMMAND : buf[len - 1] == '/' ? DK_MAILDIR : DK_FILE, buf, src->priv, NULL);
		return 0;
	case AT_INCLUDE: {
		if (push(s, 'i', buf) < 0)
			return 0;
		struct stat st;
		char *inc = NULL;
		size_t ilen;
		/* From a .forward the file must be the user's own or readable by everyone: root
		 * reads it, and must not read what the user could not. */
		int r = read_as(s, src->fwd, buf, src->fwd != NULL, &st, &inc, &ilen);
		if (r < 0) {
			; /* said by read_as */
		} else if (r > 0) {
			add_error(s, "d4.3.0", ":include: file %s missing or unsafe (see the log)", buf);
		} else {
			struct src sub = *src;
			struct dl_user owner_user;
			if (!src->fwd && st.st_uid != 0) {
				/* an include file owned by a user runs its commands as that user */
				struct passwd *pw = s->cfg->getpw ? NULL : getpwuid(st.st_uid);
				if (pw && dl_user_set(&owner_user, pw) >= 0) {
					sub.priv = &owner_user;
					/* what it includes in turn is read as for a .forward of its owner: root
					 * must not read for this user what the user could not */
					sub.fwd = &owner_user;
				} else {
					sub.priv = NULL;
					sub.refuse = "include file owner has no passwd entry";
				}
				if (s->cfg->aliases_unsafe)
					sub.priv = NULL, sub.refuse = "the aliases file is group or world writable";
			}
			walk(&sub, inc, ilen, 1, buf);
			free(inc);
		}
		pop(s);
		return 0;
	}
	case AT_NOALIAS: {
		struct dl_user u;
		int r = user_lookup(s, buf, &u);
		if (r == 0)
			mailbox(s, &u);
		else if (r > 0)
			add_error(s, "f5.1.1", "unknown user: %s", buf);
		return 0;
	}
	case AT_ADDR: {
		char *at = strrchr(buf, '@');
		if (at && !expand_domain_is_local(s->cfg, at + 1)) {
			add(s, DK_REMOTE, buf, NULL, src->owner);
			return 0;
		}
		if (at)
			*at = 0;
		char lname[ALIASES_NAME_MAX + 1];
		size_t n = strlen(buf);
		if (n <= ALIASES_NAME_MAX && src->self) {
			lower_copy(lname, buf, n);
			if (strcmp(lname, src->self) == 0) { /* "root: root, admin@x": root's own mailbox */
				local_user(s, lname, src->owner, 0, 0);
				return 0;
			}
		}
		expand_local(s, buf, src->owner, 0);
		return 0;
	}
	}
	return 0;
}

/* what: the file (or alias) the list comes from. Inside a .forward, or an include read as for
 * one (src->fwd set), a user wrote what it says: the outermost such file is s->ufile. */
static void walk(struct src *src, const char *text, size_t len, int lines, const char *what)
{
	struct xs *s = src->s;
	char err[300];
	int user_file = src->fwd != NULL;
	if (user_file && s->udepth++ == 0)
		s->ufile = what;
	if (aliases_targets(text, len, lines, on_target, src, err, sizeof err) < 0)
		add_error(s, "d4.3.5", "%s: %s", what, err);
	if (user_file && --s->udepth == 0)
		s->ufile = NULL;
	s->out->aliased = 1; /* the recipient went through a list: an alias, a .forward, an include */
}

int expand_recipient(const struct expand_cfg *cfg, const char *rcpt, struct expansion *out)
{
	memset(out, 0, sizeof *out);
	struct xs s = {.cfg = cfg, .out = out, .gl_uid = -1};
	char local[ALIASES_NAME_MAX + 2];
	const char *at = strrchr(rcpt, '@');
	size_t n = at ? (size_t)(at - rcpt) : strlen(rcpt);
	if (n > ALIASES_NAME_MAX) /* one byte too many: expand_local refuses it */
		n = ALIASES_NAME_MAX + 1;
	memcpy(local, rcpt, n);
	local[n] = 0;
	if (n <= ALIASES_NAME_MAX && memchr(local, '/', n))
		add_error(&s, "f5.1.1", "unknown user: %s", local);
	else
		expand_local(&s, local, NULL, 1);
	while (s.depth)
		pop(&s);
	if (s.oom) {
		expansion_free(out);
		return -1;
	}
	if (out->n == 0) /* an alias whose every target was a duplicate cannot happen; be safe */
		add_error(&s, "f5.1.1", "no delivery target");
	return s.oom ? -1 : 0;
}

void expansion_free(struct expansion *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->t[i].text);
		free(x->t[i].sender);
		free(x->t[i].public_text);
	}
	free(x->t);
	memset(x, 0, sizeof *x);
}
