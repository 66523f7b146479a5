#!/bin/sh
# The rule of lib/printf_like.h: the printf-like functions of lib/ and applets/ are built without
# the vector registers (x86-64, arm64), so no floating-point value may reach one. A float
# conversion (%f, %.2e, %g, %a, ...) in a format string there would be one: this fails on any.
# lib/fmt.c and lib/libc/ are the formatter itself, lib/sched_sim.c the simulator's own output
# (through fprintf, which keeps the vector registers).
set -eu
cd "$(dirname "$0")/.."
bad=$(grep -nE '"[^"]*%[-+ #0]*[0-9*]*(\.[0-9*]+)?[lL]?[aAeEfFgG][^"]*"' lib/*.c lib/*.h applets/*.c applets/*.h |
	grep -v '^lib/fmt\.c:\|^lib/sched_sim\.c:' || true)
if [ -n "$bad" ]; then
	echo "printf_nofp: a float conversion in a format string (lib/printf_like.h: its functions take no floating point):" >&2
	echo "$bad" >&2
	exit 1
fi
