/* PRINTF_LIKE(fmt, first): the attribute of every printf-like function of lib/ and applets/.
 *
 * Besides the format check, on x86-64 and arm64 (GCC) the function is built without the vector
 * registers, so its variadic start saves only the general ones: 59 bytes less for each (x86-64:
 * 896 bytes in the full build for the twelve defined in C there; log_msg, str_fmt, buf_printf
 * and die are lib/fmt.c's shared entry, FMT_VA_ENTRY, on x86-64; docs/size.md). The price is a
 * rule: no floating-point argument ever goes to one of them. Nothing in the product formats a
 * float: ta.c writes delay= from whole numbers, scripts/printf_nofp.sh (run by .ci/run) fails on a
 * float conversion in any format string of lib/ and applets/ (the simulator's own output,
 * lib/sched_sim.c, goes through musl's fprintf in tests/sim's binary), and lib/fmt.c, the product's
 * printf, has no float conversion at all (a %f is copied as written). */
#ifndef SPOOLBOX_PRINTF_LIKE_H
#define SPOOLBOX_PRINTF_LIKE_H

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a), target("general-regs-only")))
#else
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#endif

#endif
