/* The AUTH credentials file (CREDENTIALS, default /etc/spoolbox/credentials).
 *
 * Format, one entry per line; '#' starts a comment line; blank lines are ignored:
 *
 *     HOST  USER  PASSWORD
 *     HOST  USER  xoauth2  TOKENFILE
 *
 * Fields are separated by spaces or tabs; an unquoted field that starts with '#' begins a
 * comment to the end of the line ('#' inside a field is literal). A field MAY be double-quoted,
 * and then holds spaces, tabs and '#'; inside quotes \" is a quote and \\ a backslash, and no
 * other escape exists (a backslash outside quotes is an ordinary character). A quoted field is
 * always literal (a password "xoauth2" is written quoted in the three-field form, or simply as
 * the third of three fields). TOKENFILE MUST be an absolute path. A line is at most
 * CREDS_LINE_MAX bytes, a field at most CREDS_FIELD_MAX - 1; CRLF line ends are accepted.
 * The four-field form names a file holding an OAuth2 bearer token for SASL XOAUTH2; the file is
 * read at each login (refreshing it stays outside spoolbox) and is checked like this file.
 * HOST is the name the smtp transport connects to (the smarthost as configured, or the MX host),
 * compared without regard to case; "HOST:PORT" applies to that port only; "*" matches any host.
 * The most specific entry wins: HOST:PORT, then HOST, then "*"; among equals, the first.
 *
 * Checks (each a refusal with "file:line: reason" or "file: reason"): the file MUST be a
 * regular file opened without following a symlink, owned by root or by the effective user,
 * with no group or other permission bits (0600 or 0400), at most CREDS_FILE_MAX bytes, lines at
 * most CREDS_LINE_MAX bytes, no NUL bytes. A missing file means "no credentials" (not an error).
 *
 * Secrets never appear in any report: findings name the file, the line and the field, never
 * the value. creds_wipe() clears a struct creds when the caller is done with it. */
#ifndef SPOOLBOX_CREDS_H
#define SPOOLBOX_CREDS_H
#include "conf.h"
#include <stddef.h>

#define CREDS_FILE_MAX (64 * 1024)
#define CREDS_LINE_MAX 1024
#define CREDS_FIELD_MAX 512      /* longest host, user, password or path */
#define CREDS_TOKEN_MAX 8192     /* largest bearer token file */

struct creds {
	int is_token_file;
	int line;                     /* line of the entry in the file */
	char host[CREDS_FIELD_MAX];   /* the HOST field of the entry used */
	char user[CREDS_FIELD_MAX];
	char secret[CREDS_FIELD_MAX]; /* the password, or the token file's path when is_token_file */
};

/* Looks up the entry for host (and port, 0 = any) in the file at path (NULL: "" or absent means
 * no file). Returns 1 and fills *out when an entry matches, 0 when none matches or the file does
 * not exist, -1 when the file fails a check or has any malformed line (each finding reported;
 * a file with errors is never used, not even its good lines). report may be NULL. */
int creds_lookup(const char *path, const char *host, int port, struct creds *out,
                 conf_report_fn *report, void *ctx);

/* The parser behind creds_lookup, on text already in memory (no file checks): file names the
 * text in reports. host NULL only validates. Same return values; never reads past len. */
int creds_parse(const char *file, const char *text, size_t len, const char *host, int port,
                struct creds *out, conf_report_fn *report, void *ctx);

/* Reads a bearer token file (same ownership, mode and symlink checks; at most CREDS_TOKEN_MAX
 * bytes; surrounding whitespace and the final newline removed; it MUST then be one non-empty
 * line of printable ASCII). Returns the token length, or -1 (reported). */
int creds_read_token(const char *path, char *out, size_t size, conf_report_fn *report, void *ctx);

/* Clears the secrets in c (a write the compiler may not remove). */
void creds_wipe(struct creds *c);

/* The `spoolbox --check` checker (applets/checks.h): validates the CREDENTIALS file and every
 * token file it names. A missing file is fine. Returns the number of errors. */
int creds_check(const struct conf *c, conf_report_fn *report, void *ctx);
#endif
