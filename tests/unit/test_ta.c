/* Unit tests of the agent's side of the protocol (lib/ta.c): which recipients a job line's list
 * of offsets names (docs/spool.md 11). */
#include "ta.h"
#include "unit.h"
#include <stdlib.h>

static const char env[] = "@ spoolbox 1\n"
                          "i 0TP54JOJM3VOR9O\n"
                          "t 1795748676\n"
                          "o 0000000000000293\n"
                          "z 0000000000000215\n"
                          "b 7\n"
                          "u 0 root\n"
                          "s a@example.org\n"
                          "r N 0000000000 0000 0000000000 smtp example.com x@example.com -1\n"  /* 111 */
                          "r N 0000000000 0000 0000000000 smtp example.com y@example.com -1\n"  /* 176 */
                          "r N 0000000000 0000 0000000000 local root root -1\n"                 /* 241 */
                          ".\n";

TEST(ta_pick_takes_the_listed_recipients_of_its_channel_and_host)
{
	struct spool_msg m;
	char err[160];
	CHECK_INT(spool_msg_parse(env, sizeof env - 1, 1, &m, err, sizeof err), 0);
	CHECK_INT(m.nrcpt, 3);
	size_t idx[3];
	CHECK_INT(ta_pick(&m, "176,111", "smtp", "example.com", idx), 2);
	CHECK_INT(idx[0], 1);
	CHECK_INT(idx[1], 0);
	CHECK_INT(ta_pick(&m, "241", NULL, SPOOL_ANY_HOST, idx), 1);
	CHECK_INT(idx[0], 2);
	/* another channel or host, an offset that is no recipient, a malformed list: the agent
	 * falls back to the control file */
	CHECK_INT(ta_pick(&m, "241", "smtp", SPOOL_ANY_HOST, idx), -1);
	CHECK_INT(ta_pick(&m, "111", "smtp", "example.net", idx), -1);
	CHECK_INT(ta_pick(&m, "112", NULL, SPOOL_ANY_HOST, idx), -1);
	CHECK_INT(ta_pick(&m, "111,", NULL, SPOOL_ANY_HOST, idx), -1);
	CHECK_INT(ta_pick(&m, "111,,176", NULL, SPOOL_ANY_HOST, idx), -1);
	CHECK_INT(ta_pick(&m, "-111", NULL, SPOOL_ANY_HOST, idx), -1);
	CHECK_INT(ta_pick(&m, "111x", NULL, SPOOL_ANY_HOST, idx), -1);
	/* more entries than recipients never write past idx */
	CHECK_INT(ta_pick(&m, "111,111,111,111", NULL, SPOOL_ANY_HOST, idx), -1);
	spool_msg_free(&m);
}
