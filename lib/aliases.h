/* The aliases file (/etc/aliases syntax) and the target lists of .forward and :include: files:
 * parsing with size limits, lookup, and the expansion of a local recipient into delivery
 * targets (mailboxes, files, commands, remote addresses). docs/local.md describes the syntax
 * and the semantics; this header is the contract.
 *
 * Contract: the parsers never crash or loop on any input, never read past the length given,
 * and report every finding as (file, line, reason) through the callback. Nothing here writes a
 * file or runs a program: expansion only decides what to deliver where, and with whose
 * privileges. */
#ifndef SPOOLBOX_ALIASES_H
#define SPOOLBOX_ALIASES_H
#include "conf.h"
#include "deliver.h"
#include <stddef.h>
#include <sys/types.h>

#define ALIASES_FILE_MAX (4u << 20)    /* largest aliases file */
#define ALIASES_INCLUDE_MAX (1u << 20) /* largest .forward or :include: file */
#define ALIASES_ENTRY_MAX 65536        /* one entry, continuation lines included */
#define ALIASES_NAME_MAX 256           /* longest alias name */
#define ALIASES_TARGET_MAX 4096        /* longest single target */
#define ALIASES_ENTRIES_MAX 100000     /* most entries in one file */
#define EXPAND_DEPTH_MAX 16            /* nesting of aliases, .forward and :include: */
#define EXPAND_TARGETS_MAX 1000        /* most delivery targets of one recipient */

/* ---- target lists ---- */

enum alias_tkind {
	AT_ADDR,    /* a local name or an address: expanded further */
	AT_NOALIAS, /* \user: that user's mailbox, no alias or .forward */
	AT_COMMAND, /* |command (the text after the bar) */
	AT_FILE,    /* /absolute/path (a trailing slash means a Maildir) */
	AT_INCLUDE, /* :include:/absolute/path */
};

/* Receives each target; text is not NUL-terminated. A non-zero return stops the walk. */
typedef int alias_target_fn(void *ctx, enum alias_tkind kind, const char *text, size_t len);

/* Splits a target list: targets separated by commas (and by newlines when lines != 0: .forward
 * and :include: files, where '#' starts a comment line). A target is "quoted" (the quotes
 * removed, backslash escapes \" and \\), or unquoted text to the next comma. Returns 0, or -1
 * with the reason in err (an empty target, an unterminated quote, a control character, an
 * over-long target, a relative path, a malformed address). fn may be NULL to only validate. */
int aliases_targets(const char *text, size_t len, int lines, alias_target_fn *fn, void *ctx, char *err, size_t errlen);

/* ---- the aliases file ---- */

struct alias_entry {
	char *name;       /* lower-case */
	char *rhs;        /* the target list, continuation lines joined (after name, in its allocation) */
	int line;         /* first line of the entry */
};

struct aliases {
	struct alias_entry *e; /* sorted by name after parsing */
	size_t n;
	int errors;            /* findings reported by the parser */
	char first_error[512]; /* "file:line: reason" of the first one, for delivery reports */
};

typedef void aliases_report_fn(void *ctx, const char *file, int line, const char *reason);

/* Parses an aliases file's text: "name: target, target", continuation lines starting with a
 * space or tab, '#' comment lines, blank lines, "quoted names". Names are case-insensitive.
 * Every error (syntax, bad target, duplicate name, limits) is reported and counted; entries
 * that parse are kept. Returns the error count. report may be NULL. */
int aliases_parse(struct aliases *a, const char *file, const char *text, size_t len, aliases_report_fn *report, void *ctx);
/* Reads and parses a file (a missing file is an empty table and no error). */
int aliases_load(struct aliases *a, const char *path, aliases_report_fn *report, void *ctx);
/* The target list of name, or NULL. name must be in lower case (the names are kept lowered);
 * a must not be NULL. */
const char *aliases_lookup(const struct aliases *a, const char *name);
void aliases_free(struct aliases *a);

/* ---- expansion ---- */

struct expand_cfg {
	const struct aliases *aliases; /* may be NULL */
	const char *aliases_path;      /* for messages */
	const struct dl_user *alias_user; /* runs the file's |command and /file targets: its owner,
	                                   * or DEFAULT_USER when root owns it; NULL: refused */
	int aliases_unsafe;            /* group/world writable: no |command or /file from it */
	const char *root;              /* the ROOT setting, or NULL/"" */
	int forward;                   /* honour ~/.forward */
	const char *myhostname;        /* for owner-NAME@host and local domains */
	const char *localdomains;      /* comma/space separated, may be NULL */
	dl_getpw_fn *getpw;            /* NULL: dl_getpw_system */
	void *getpw_ctx;
};

struct expansion {
	struct dl_target *t;
	size_t n, cap;
	int aliased;    /* went through an alias, .forward or :include: */
};

/* Expands one local recipient (a local part, or an address whose domain is dropped) into
 * delivery targets. Always returns 0 with at least one target (errors are DK_ERROR targets),
 * or -1 when memory ran out. */
int expand_recipient(const struct expand_cfg *cfg, const char *rcpt, struct expansion *out);
void expansion_free(struct expansion *x);
/* 1 when the domain is this host's (localhost, MYHOSTNAME, LOCALDOMAINS); case-insensitive. */
int expand_domain_is_local(const struct expand_cfg *cfg, const char *domain);
#endif
