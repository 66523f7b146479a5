/* spoolbox's getopt for the static musl build, linked as an object like vfprintf.c so that
 * musl's (1.2 KiB with its multibyte option characters and message code) is never pulled: the
 * POSIX contract for the single-byte option strings the applets use ("C:m:v": clustered flags,
 * an argument attached or in the next word, "--", the first operand stops). An unknown option or
 * a missing argument is '?' (or ':' for a missing one when optstring starts with ':') with a
 * message on stderr unless opterr is 0. optind = 0 (or 1) starts over. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

char *optarg;
int optind = 1, opterr = 1, optopt;
static int optpos; /* the next character inside argv[optind], 0 at a word's start */

static int fail(char *const argv[], const char *why, int c)
{
	if (opterr)
		fprintf(stderr, "%s: %s: %c\n", argv[0], why, c);
	return '?';
}

int getopt(int argc, char *const argv[], const char *optstring)
{
	if (optind == 0) {
		optind = 1;
		optpos = 0;
	}
	optarg = NULL;
	if (!optpos) {
		if (optind >= argc || !argv[optind] || argv[optind][0] != '-' || !argv[optind][1])
			return -1;
		if (!strcmp(argv[optind], "--")) {
			optind++;
			return -1;
		}
		optpos = 1;
	}
	const char *w = argv[optind];
	int c = (unsigned char)w[optpos++];
	if (!w[optpos]) {
		optind++;
		optpos = 0;
	}
	const char *o = c != ':' ? strchr(optstring + (optstring[0] == ':'), c) : NULL;
	optopt = c;
	if (!o)
		return optstring[0] == ':' ? '?' : fail(argv, "unrecognized option", c);
	if (o[1] != ':')
		return c;
	if (optpos) { /* the rest of this word is the argument */
		optarg = (char *)w + optpos;
		optind++;
		optpos = 0;
	} else if (optind < argc) {
		optarg = argv[optind++];
	} else {
		return optstring[0] == ':' ? ':' : fail(argv, "option requires an argument", c);
	}
	return c;
}
