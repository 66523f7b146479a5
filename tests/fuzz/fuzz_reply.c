/* Fuzz target: SMTP replies as a server could send them, read through a struct io (multi-line
 * replies, enhanced codes, the size limits), then the EHLO capability parser and the one-line
 * form used in reports. */
#include "smtp_client.h"
#include <stdint.h>
#include <string.h>

struct feed {
	const uint8_t *p;
	size_t n, pos;
};

static ssize_t feed_read(void *ctx, void *out, size_t n, int t)
{
	struct feed *f = ctx;
	(void)t;
	size_t left = f->n - f->pos;
	if (n > left)
		n = left;
	if (n > 97) /* odd chunk sizes exercise lines split across reads */
		n = 97;
	memcpy(out, f->p + f->pos, n);
	f->pos += n;
	return (ssize_t)n;
}

static ssize_t feed_write(void *ctx, const void *p, size_t n, int t)
{
	(void)ctx, (void)p, (void)t;
	return (ssize_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct smtp_conn c;
	struct feed f = {data, size, 0};
	struct smtp_reply r;
	char one[SMTP_TEXT_MAX + 1];
	memset(&c, 0, sizeof c);
	c.io.low_read = feed_read;
	c.io.low_write = feed_write;
	c.io.ctx = &f;
	c.io.fd = -1;
	for (int i = 0; i < 64 && smtp_read_reply(&c, &r, 0) == 0; i++) {
		smtp_parse_ehlo(&r, &c.caps);
		smtp_reply_oneline(&r, one, sizeof one);
	}
	return 0;
}
