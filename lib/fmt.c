/* The printf formatter of fmt.h: one pass over the format; each conversion is built in a small
 * stack buffer and written with its prefix, zeros and padding (field()). No allocation, no
 * locale, no floating point: what the 10 KiB of musl's vfprintf mostly is. Nothing the product
 * links formats a float (lib/printf_like.h, scripts/printf_nofp.sh), so %f and the other float
 * conversions are copied as written, as %n is (docs/size.md: 0.75 KiB). */
#include "fmt.h"
#include <limits.h>
#include <stdint.h>
#include <string.h>

enum { F_MINUS = 1, F_PLUS = 2, F_SPACE = 4, F_HASH = 8, F_ZERO = 16 };
enum { L_INT, L_CHAR, L_SHORT, L_LONG, L_LLONG, L_PTR };
#define FMT_MAX_WIDTH 4096 /* a width or precision beyond this is cut to it */

struct out {
	fmt_sink sink;
	void *ctx;
	size_t n;
	int err;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (n && o->sink(o->ctx, s, n) < 0)
		o->err = 1;
	o->n += n;
}

/* n bytes c, a byte at a time: the pads are a few bytes ("%02d", "%016llx") */
static void pad(struct out *o, char c, int n)
{
	for (; n > 0; n--)
		put(o, &c, 1);
}

/* pre (sign, 0x), then zeros, then s, in a field of width: spaces before it, zeros after pre
 * (F_ZERO), or spaces after it (F_MINUS) */
static void field(struct out *o, int fl, int width, const char *pre, int zeros, const char *s, size_t len)
{
	size_t plen = strlen(pre);
	size_t total = plen + (size_t)zeros + len;
	int padn = (size_t)width > total ? width - (int)total : 0, left = 0, right = 0;
	if (fl & F_MINUS)
		right = padn;
	else if (fl & F_ZERO)
		zeros += padn;
	else
		left = padn;
	pad(o, ' ', left);
	put(o, pre, plen);
	pad(o, '0', zeros);
	put(o, s, len);
	pad(o, ' ', right);
}

/* the digits of v in base, ending at end; returns where they start */
static char *digits(char *end, uintmax_t v, unsigned base, int upper)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	do {
		*--end = dig[v % base];
		v /= base;
	} while (v);
	return end;
}

/* the next integer argument of length len, sign-extended when is_signed, else zero-extended */
__attribute__((noinline)) static uintmax_t int_arg(va_list *ap, int len, int is_signed)
{
	if (len == L_PTR)
		return (uintptr_t)va_arg(*ap, void *);
	if (len == L_LLONG)
		return va_arg(*ap, unsigned long long);
	if (len == L_LONG)
		return is_signed ? (uintmax_t)(intmax_t)va_arg(*ap, long) : va_arg(*ap, unsigned long);
	int v = va_arg(*ap, int);
	if (len == L_CHAR)
		return is_signed ? (uintmax_t)(intmax_t)(signed char)v : (unsigned char)v;
	if (len == L_SHORT)
		return is_signed ? (uintmax_t)(intmax_t)(short)v : (unsigned short)v;
	return is_signed ? (uintmax_t)(intmax_t)v : (unsigned)v;
}

/* always_inline: in its two places fmt_vformat keeps p in a register (-66 bytes) */
static inline __attribute__((always_inline)) int number(const char **p)
{
	int n = 0;
	for (; **p >= '0' && **p <= '9'; (*p)++)
		n = n < FMT_MAX_WIDTH ? n * 10 + (**p - '0') : FMT_MAX_WIDTH;
	return n;
}

int fmt_vformat(fmt_sink sink, void *ctx, const char *fmt, va_list ap0)
{
	struct out o = {sink, ctx, 0, 0};
	va_list ap;
	va_copy(ap, ap0);
	const char *p = fmt;
	while (*p) {
		if (*p != '%') {
			const char *s = p;
			while (*p && *p != '%')
				p++;
			put(&o, s, (size_t)(p - s));
			continue;
		}
		const char *spec = p++;
		int fl = 0, width = 0, prec = -1, len = L_INT;
		for (const char *f; *p && (f = strchr("-+ #0", *p)); p++)
			fl |= 1 << (f - "-+ #0");
		if (*p == '*') {
			p++;
			width = (int)int_arg(&ap, L_INT, 1);
			if (width < 0) {
				fl |= F_MINUS;
				width = width < -FMT_MAX_WIDTH ? FMT_MAX_WIDTH : -width;
			}
			if (width > FMT_MAX_WIDTH)
				width = FMT_MAX_WIDTH;
		} else {
			width = number(&p);
		}
		if (*p == '.') {
			p++;
			if (*p == '*') {
				p++;
				prec = (int)int_arg(&ap, L_INT, 1);
				if (prec < 0)
					prec = -1;
				else if (prec > FMT_MAX_WIDTH)
					prec = FMT_MAX_WIDTH;
			} else {
				prec = number(&p);
			}
		}
		if (*p == 'h')
			len = *++p == 'h' ? (p++, L_CHAR) : L_SHORT;
		else if (*p == 'l')
			len = *++p == 'l' ? (p++, L_LLONG) : L_LONG;
		else if (*p == 'j')
			len = (p++, L_LLONG);
		else if (*p == 'z' || *p == 't') /* size_t, ptrdiff_t: a long on every Linux ABI */
			len = (p++, L_LONG);
		char c = *p;
		if (!c) { /* a format that ends inside a conversion: copied as it is */
			put(&o, spec, (size_t)(p - spec));
			break;
		}
		p++;
		char buf[24]; /* the 22 octal digits of a 64-bit number */
		char *end = buf + sizeof buf;
		uintmax_t uv;
		const char *pre = "";
		switch (c) {
		case 'd':
		case 'i': {
			intmax_t v = (intmax_t)int_arg(&ap, len, 1);
			uv = v < 0 ? -(uintmax_t)v : (uintmax_t)v;
			pre = v < 0 ? "-" : fl & F_PLUS ? "+" : fl & F_SPACE ? " " : "";
			goto integer;
		}
		case 'p':
			uv = int_arg(&ap, L_PTR, 0);
			fl |= F_HASH;
			c = 'x';
			goto unsigned_int;
		case 'u':
		case 'o':
		case 'x':
		case 'X':
			uv = int_arg(&ap, len, 0);
		unsigned_int:
			if ((fl & F_HASH) && uv && (c == 'x' || c == 'X'))
				pre = c == 'x' ? "0x" : "0X";
		integer: {
			char *s = prec == 0 && uv == 0 ? end : digits(end, uv, c == 'o' ? 8 : c == 'x' || c == 'X' ? 16 : 10, c == 'X');
			int n = (int)(end - s);
			int zeros = prec > n ? prec - n : 0;
			if (c == 'o' && (fl & F_HASH) && !zeros && (n == 0 || *s != '0'))
				zeros = 1;
			if (prec >= 0)
				fl &= ~F_ZERO;
			field(&o, fl, width, pre, zeros, s, (size_t)n);
			break;
		}
		case 'c':
			buf[0] = (char)int_arg(&ap, L_INT, 0);
			field(&o, fl & ~F_ZERO, width, "", 0, buf, 1);
			break;
		case 's': {
			const char *s = (const char *)(uintptr_t)int_arg(&ap, L_PTR, 0);
			if (!s)
				s = "(null)";
			field(&o, fl & ~F_ZERO, width, "", 0, s, prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s));
			break;
		}
		case '%':
			put(&o, "%", 1);
			break;
		default: /* %n, %m, wide characters: not supported, shown as written */
			put(&o, spec, (size_t)(p - spec));
			break;
		}
	}
	va_end(ap);
	if (o.err)
		return -1;
	return o.n > INT_MAX ? INT_MAX : (int)o.n;
}

struct snbuf {
	char *buf;
	size_t size;
	size_t used;
};

static int sn_put(void *ctx, const char *s, size_t n)
{
	struct snbuf *b = ctx;
	if (b->used + 1 < b->size) {
		size_t room = b->size - 1 - b->used;
		memcpy(b->buf + b->used, s, n < room ? n : room);
		b->used += n < room ? n : room;
	}
	return 0;
}

int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct snbuf b = {buf, size, 0};
	int n = fmt_vformat(sn_put, &b, fmt, ap);
	if (size)
		buf[b.used] = 0;
	return n;
}

#if FMT_VA_ASM
/* The shared body of FMT_VA_ENTRY's functions: what GCC's prologue of a variadic function does,
 * then the call of target (in %r11) with the va_list in %r8. Below the return address (E): the
 * six argument registers pushed (the save area's 48 bytes, starting at the pushed %rdi), then the
 * va_list: gp_offset (8 n, pushed by the entry), fp_offset 176 (no vector register saved: no
 * floating-point argument is ever read, see above), the stack arguments at E + 8, the save area.
 * E is 8 past a 16-byte boundary, so the call is made on one. */
__asm__(".pushsection .text.fmt_va_entry,\"ax\",@progbits\n.global fmt_va_entry\n.hidden fmt_va_entry\n"
        ".type fmt_va_entry,@function\nfmt_va_entry:\n"
        "\tpop %r10\n\tpush %r9\n\tpush %r8\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n\tpush %rdi\n"
        "\tmov %rsp,%rax\n\tpush %rax\n\tlea 56(%rax),%r9\n\tpush %r9\n\tpush %r10\n\tmovb $176,4(%rsp)\n"
        "\tmov %rsp,%r8\n\tcall *%r11\n\tadd $72,%rsp\n\tret\n"
        ".size fmt_va_entry,.-fmt_va_entry\n.popsection\n");
#endif
