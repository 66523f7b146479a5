/* Fuzz target: a transport agent's reading of a job line's recipient list against an envelope
 * (lib/ta.c ta_pick, docs/spool.md 11). Input: an envelope block, a NUL, the list (the corpus
 * holds a real envelope of three recipients with lists good and bad). */
#include "ta.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > SPOOL_JOB_LINE_MAX * 4)
		return 0;
	const char *nul = memchr(data, 0, size);
	if (!nul)
		return 0;
	const char *text = (const char *)data;
	size_t tlen = (size_t)(nul - text);
	const uint8_t *l = (const uint8_t *)nul + 1;
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
