/* Parsing and writing the DSN request parameters; the contract is in dsn_flags.h. */
#include "dsn_flags.h"
#include "util.h"
#include <string.h>

static const struct {
	unsigned char bit;
	char word[8];
} notify_words[] = {
	{NOTIFY_SUCCESS, "SUCCESS"},
	{NOTIFY_FAILURE, "FAILURE"},
	{NOTIFY_DELAY, "DELAY"},
	{NOTIFY_NEVER, "NEVER"},
};

int dsn_notify_parse(const char *s, size_t n, unsigned *bits)
{
	unsigned b = 0;
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		size_t k = 0;
		while (k < 4 && !(strlen(notify_words[k].word) == j - i && str_ncaseeq(s + i, notify_words[k].word, j - i)))
			k++;
		if (k == 4)
			return -1;
		b |= notify_words[k].bit;
		i = j + 1;
	}
	if ((b & NOTIFY_NEVER) && b != NOTIFY_NEVER)
		return -1;
	*bits = b;
	return 0;
}

void dsn_notify_format(unsigned bits, char out[DSN_NOTIFY_TEXT])
{
	/* the longest, "SUCCESS,FAILURE,DELAY", fits: no bound to check */
	_Static_assert(DSN_NOTIFY_TEXT >= sizeof "SUCCESS,FAILURE,DELAY", "DSN_NOTIFY_TEXT");
	char *p = out;
	*p = 0;
	if (bits & NOTIFY_NEVER) /* alone: the table's last word */
		bits = NOTIFY_NEVER;
	for (size_t k = 0; k < 4; k++)
		if (bits & notify_words[k].bit) {
			if (p != out)
				*p++ = ',';
			p = stpcpy(p, notify_words[k].word);
		}
}

char dsn_ret_parse(const char *s, size_t n)
{
	if (n == 4 && str_ncaseeq(s, "FULL", 4))
		return 'F';
	if (n == 4 && str_ncaseeq(s, "HDRS", 4))
		return 'H';
	return 0;
}
