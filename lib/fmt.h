/* A small printf formatter: the conversions spoolbox uses (d i u o x X c s p %), the flags
 * "-+ #0", width and precision (also '*'), and the length modifiers hh h l ll z j t. %n, wide
 * characters and floating point (%f %e %g %a, with L) are not supported: such a conversion is
 * copied to the output as written (and its argument not read). Nothing the product links formats
 * a float (lib/printf_like.h); the simulator (tests/sim) prints its figures through musl's printf.
 *
 * The static build links lib/libc/vfprintf.c, which makes this the vfprintf under musl's whole
 * printf family (snprintf, fprintf, dprintf, ...): musl's own is 10 KiB, mostly long-double
 * floating point that nothing here prints (docs/size.md). */
#ifndef SPOOLBOX_FMT_H
#define SPOOLBOX_FMT_H
#include <stdarg.h>
#include <stddef.h>

/* Receives the output in pieces; returns 0, or -1 to record an error (the formatting goes on,
 * fmt_vformat returns -1). */
typedef int (*fmt_sink)(void *ctx, const char *s, size_t n);

/* Formats fmt with ap into sink: the number of bytes produced, or -1 after a sink error. */
int fmt_vformat(fmt_sink sink, void *ctx, const char *fmt, va_list ap);
/* vsnprintf's contract: at most size-1 bytes and a NUL into buf (nothing when size is 0); the
 * length the whole output has. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

/* FMT_VA_ENTRY(name, n, target): on x86-64, the variadic function name, with n fixed arguments
 * (at most 4), as a 14-byte entry into one shared piece of fmt.c (fmt_va_entry) that saves the
 * argument registers and calls target with name's fixed arguments in their places, then the
 * va_list as the fifth argument: target(a, b, c, d, ap), the arguments name does not have
 * being whatever the registers hold. Each variadic function GCC compiles saves those registers
 * itself (0.1 KiB). Elsewhere FMT_VA_ASM is 0, the macro empty, and the file defines name in C
 * with the same target. name is expanded first (the unit tests rename libc functions). */
#if defined(__x86_64__)
#define FMT_VA_ASM 1
#define FMT_VA_ENTRY(name, n, target) FMT_VA_ENTRY_(name, n, target)
#define FMT_VA_ENTRY_(name, n, target)                                                                          \
	__asm__(".pushsection .text." #name ",\"ax\",@progbits\n.global " #name "\n.type " #name ",@function\n"  \
	        #name ":\n\tpush $8*" #n "\n\tlea " #target "(%rip),%r11\n\tjmp fmt_va_entry\n.size " #name ",.-" #name \
	        "\n.popsection\n")
#else
#define FMT_VA_ASM 0
#define FMT_VA_ENTRY(name, n, target)
#endif
#endif
