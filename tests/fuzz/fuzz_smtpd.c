/* Fuzz target: the SMTP server engine fed a session script in input-chosen pieces, with
 * callbacks that accept everything, so every state (DATA included) is reachable. */
#include "smtpd.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ok_mail(void *c, const struct smtpd_mail *m, char *t, size_t n) { return 250; }
static int ok_rcpt(void *c, const struct smtpd_rcpt *r, char *t, size_t n) { return 250; }
static int ok_data(void *c, const char *p, size_t n)
{
	*(size_t *)c += n;
	return *(size_t *)c > 100000 ? -1 : 0;
}
static int ok_end(void *c, char *t, size_t n)
{
	*(size_t *)c = 0;
	return 250;
}

static void ok_reset(void *c) { (void)c; }

static const struct smtpd_ops ops = {ok_mail, ok_rcpt, ok_data, ok_end, ok_reset};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = 1 + data[0] % 23, total = 0;
	struct smtpd s;
	smtpd_init(&s, &ops, &total, "fuzz.example", 5000, 5);
	smtpd_greet(&s);
	for (size_t i = 1; i < size; i += chunk) {
		size_t c = size - i < chunk ? size - i : chunk;
		if (smtpd_feed(&s, (const char *)data + i, c) > c)
			__builtin_trap();
		if (s.out.len > 60000)
			buf_reset(&s.out); /* the caller flushed */
	}
	smtpd_eof(&s);
	smtpd_free(&s);
	return 0;
}
