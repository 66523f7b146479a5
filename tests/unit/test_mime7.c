/* mime7: the reasons a message cannot be converted to 7 bit, each with its exact text, and a
 * text part that can (quoted-printable). */
#include "mime7.h"
#include "unit.h"
#include "util.h"

static int convert(const char *msg, char *why, size_t whylen, struct buf *out)
{
	buf_init(out, 1 << 20);
	return mime7_convert(msg, strlen(msg), out, why, whylen);
}

TEST(mime7_cannot_reasons)
{
	static const struct {
		const char *msg, *why;
	} cases[] = {
	    {"Content-Type: application/octet-stream\nContent-Transfer-Encoding: binary\n\n\xff\n",
	     "a application/octet-stream part is declared binary"},
	    {"Content-Type: text/plain\nContent-Transfer-Encoding: base64\n\n\xff\n",
	     "a text/plain part declared base64 holds 8-bit bytes"},
	    {"Content-Type: multipart/mixed\n\n\xff\n", "a multipart/mixed part without a boundary holds 8-bit bytes"},
	    {"Content-Type: image/png\n\n\xff\n", "a image/png part holds 8-bit data that is not text"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		char why[200];
		struct buf out;
		CHECK_INT(convert(cases[i].msg, why, sizeof why, &out), MIME7_CANNOT);
		CHECK_STR(why, cases[i].why);
		buf_free(&out);
	}
	/* messages in messages, deeper than MIME7_DEPTH_MAX */
	static char deep[20 * 32 + 8];
	for (int i = 0; i < 20; i++)
		strcat(deep, "Content-Type: message/rfc822\n\n");
	strcat(deep, "\xff\n");
	char why[200];
	struct buf out;
	CHECK_INT(convert(deep, why, sizeof why, &out), MIME7_CANNOT);
	CHECK_STR(why, "MIME parts nested deeper than 16");
	buf_free(&out);
}

TEST(mime7_text_to_qp)
{
	char why[200];
	struct buf out;
	CHECK_INT(convert("Subject: x\n\nb\xc3\xa4r\n", why, sizeof why, &out), 0);
	CHECK_STR(why, "");
	CHECK(buf_addc(&out, 0) == 0);
	CHECK_STR(out.p, "Subject: x\nContent-Transfer-Encoding: quoted-printable\n\nb=C3=A4r\n");
	buf_free(&out);
}
