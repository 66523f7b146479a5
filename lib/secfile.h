/* Reading a file that holds secrets (credentials, bearer tokens, TLS private keys) with the
 * checks such a file deserves.
 *
 * Contract: secfile_read() MUST refuse, with a reason naming the problem but never the
 * contents: a symbolic link (opened with O_NOFOLLOW), anything but a regular file, a file owned
 * by anyone but root or the effective user, a file with any group or other permission bit, and
 * a file larger than max. Run as root, it also accepts a file owned by AGENT_USER (the
 * environment's, else the default; agentuser.h): the smtp agent runs as that user and its
 * credentials and keys are that user's alone (docs/spool.md 8), and root's tools (smtp -t,
 * spoolbox --check) read them too. On success *out is a malloc'd NUL-terminated copy that the caller
 * frees with secfile_free() (which wipes it). */
#ifndef SPOOLBOX_SECFILE_H
#define SPOOLBOX_SECFILE_H
#include <stddef.h>
#include <sys/types.h>

/* Returns 0, or -1 with errno (ENOENT when the file does not exist) and a reason in why. */
int secfile_read(const char *path, size_t max, char **out, size_t *len, char *why, size_t whysize);
/* The same with the agents' uid given ((uid_t)-1: none), for a caller that knows it from its
 * configuration rather than the environment (spoolbox --check). */
int secfile_read_owned(const char *path, size_t max, uid_t agent, char **out, size_t *len, char *why,
                       size_t whysize);
void secfile_free(char *p, size_t len);
#endif
