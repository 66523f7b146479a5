/* Shell-style pattern matching (*, ?, [set], [!set], [a-z], backslash escapes) on bytes, for
 * scheduler.conf's channel/host patterns. musl's fnmatch() pulls in ~16 KB of wide-character
 * tables that byte patterns on host names never need. */
#ifndef SPOOLBOX_GLOB_H
#define SPOOLBOX_GLOB_H
/* 1 when s matches pat entirely. A malformed set ("[abc" without "]") matches a literal '['.
 * Runs in O(len(pat) * len(s)) time: no exponential backtracking on hostile patterns. */
int glob_match(const char *pat, const char *s);
#endif
