/* Fuzz target: a refill's reader of control-file lines (lib/sched_queue.c sq_refill_line), in
 * the envelope and after it: the words it hands back lie in the line, its numbers in their
 * bounds. The input is one line (a refill never passes the newline). */
#include "sched_int.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_ 65536 /* SCAN_BUF: a longer line is not read */

static int inside(const char *p, const char *buf, size_t n)
{
	return p >= buf && p <= buf + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= LINE_MAX_)
		return 0;
	char *line = malloc(size + 1);
	if (!line)
		return 0;
	for (int env = 0; env < 2; env++) {
		memcpy(line, data, size);
		line[size] = 0;
		struct refill_line l;
		switch (sq_refill_line(line, env, &l)) {
		case RL_RCPT:
			if (l.pid < 0 || l.pid > 9999999999LL || l.tries < 0 || l.tries > 9999 || l.next < 0 ||
			    l.next > 9999999999LL)
				__builtin_trap();
			/* fall through */
		case RL_RCPT_BAD:
			if (!env || !inside(l.channel, line, size) || !inside(l.host, line, size))
				__builtin_trap();
			break;
		case RL_NOTIFY:
			if (!env || !inside(l.word, line, size))
				__builtin_trap();
			break;
		case RL_ATTEMPT:
			if (env || l.idx < 0 || l.idx > SPOOL_RCPT_MAX || !inside(l.word, line, size))
				__builtin_trap();
			break;
		case RL_END:
			if (!env)
				__builtin_trap();
			break;
		}
	}
	free(line);
	return 0;
}
