/* Shell-style byte pattern matching (see glob.h). The classic two-pointer algorithm: remember
 * the last '*' and where the text stood then, and on a mismatch let that star eat one more
 * byte. That keeps it linear-ish and free of recursion. */
#include "glob.h"

/* Matches one set at *pp against c; advances *pp past the set. Returns 1/0, or -1 when the
 * set is not closed (then the '[' is literal). */
static int match_set(const char **pp, unsigned char c)
{
	const char *p = *pp + 1;
	int neg = 0, hit = 0;
	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	int first = 1;
	while (*p && (*p != ']' || first)) {
		first = 0;
		unsigned char lo = (unsigned char)*p, hi;
		if (lo == '\\' && p[1])
			lo = (unsigned char)*++p;
		p++;
		hi = lo;
		if (*p == '-' && p[1] && p[1] != ']') {
			p++;
			if (*p == '\\' && p[1])
				p++;
			hi = (unsigned char)*p++;
		}
		if (c >= lo && c <= hi)
			hit = 1;
	}
	if (*p != ']')
		return -1;
	*pp = p + 1;
	return hit != neg;
}

int glob_match(const char *pat, const char *s)
{
	const char *star = 0, *star_s = 0;
	for (;;) {
		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			if (!*pat)
				return 1;
			star = pat;
			star_s = s;
			continue;
		}
		if (!*s)
			return !*pat;
		int ok;
		const char *next = pat + 1;
		if (*pat == '?') {
			ok = 1;
		} else if (*pat == '[') {
			const char *q = pat;
			int r = match_set(&q, (unsigned char)*s);
			if (r < 0) {
				ok = *s == '[';
			} else {
				ok = r;
				next = q;
			}
		} else if (*pat == '\\' && pat[1]) {
			ok = pat[1] == *s;
			next = pat + 2;
		} else {
			ok = *pat == *s; /* *s is not NUL here, so neither is a *pat equal to it */
		}
		if (ok) {
			pat = next;
			s++;
			continue;
		}
		if (!star)
			return 0;
		pat = star;
		s = ++star_s;
	}
}
