/* Fuzz target: a transport agent's reading of a job line's recipient list against an envelope
 * (lib/ta.c ta_pick, docs/spool.md 11). Input: an envelope block, a NUL, the list; without a
 * NUL, the whole input is the list against a fixed envelope of three recipients. */
#include "ta.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char env[] = "@ spoolbox 1\n"
                          "i 0TP54JOJM3VOR9O\n"
                          "t 1795748676\n"
                          "o 0000000000000293\n"
                          "z 0000000000000215\n"
                          "b 7\n"
                          "u 0 root\n"
                          "s a@example.org\n"
                          "r N 0000000000 0000 0000000000 smtp example.com x@example.com -1\n"
                          "r N 0000000000 0000 0000000000 smtp example.com y@example.com -1\n"
                          "r N 0000000000 0000 0000000000 local root root -1\n"
                          ".\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > SPOOL_JOB_LINE_MAX * 4)
		return 0;
	const char *nul = memchr(data, 0, size);
	const char *text = nul ? (const char *)data : env;
	size_t tlen = nul ? (size_t)(nul - (const char *)data) : sizeof env - 1;
	const uint8_t *l = nul ? (const uint8_t *)nul + 1 : data;
	size_t llen = size - (size_t)(l - data);
	char *list = malloc(llen + 1);
	if (!list)
		return 0;
	memcpy(list, l, llen);
	list[llen] = 0;
	struct spool_msg m;
	char err[160];
	if (spool_msg_parse(text, tlen, 1, &m, err, sizeof err) == 0) {
		size_t *idx = calloc(m.nrcpt ? m.nrcpt : 1, sizeof *idx);
		if (idx) {
			long n = ta_pick(&m, list, NULL, "example.com", idx);
			for (long i = 0; i < n; i++)
				if (idx[i] >= m.nrcpt)
					abort();
			ta_pick(&m, list, "smtp", SPOOL_ANY_HOST, idx);
		}
		free(idx);
		spool_msg_free(&m);
	}
	free(list);
	return 0;
}
