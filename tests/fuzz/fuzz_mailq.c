/* Fuzz target: mailq's views of any control file (lib/mailq_fmt.c): the parsed message, or the
 * damage, through the Postfix listing, -v, --json and -s, and the JSON string encoder on the
 * raw bytes. The output goes to /dev/null; what is checked is that no input crashes them. */
#include "mailq.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	struct spool_msg m;
	struct mq_item it;
	memset(&it, 0, sizeof it);
	strcpy(it.id, "0TP1UQ5CXSC6IXKX");
	it.held = size & 1;
	int ok = spool_msg_parse((const char *)data, size, 0, &m, it.damage, sizeof it.damage) == 0;
	it.m = ok ? &m : NULL;
	struct mq_out o;
	mq_out_init(&o, null, 1795596000);
	for (int v = 0; v < 2; v++) {
		o.verbose = v;
		mq_postfix_msg(&o, &it);
	}
	mq_postfix_end(&o);
	mq_json_msg(&o, &it);
	mq_summary_add(&o, &it);
	mq_summary_print(&o);
	char s[512];
	size_t n = size < sizeof s - 1 ? size : sizeof s - 1;
	memcpy(s, data, n);
	s[n] = 0;
	mq_json_str(null, s);
	if (ok)
		spool_msg_free(&m);
	return 0;
}
