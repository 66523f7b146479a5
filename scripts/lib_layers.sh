#!/bin/sh
# Layers of lib/ (issue 9 point 5): lib/ is a library under the applets, so no lib/ file
# includes an applet's header or calls into an applet; and the protocol code (the smtp client,
# lib/smtp_*.c, and the server engine, lib/smtpd.c) builds, links and fuzzes without the spool,
# so it neither includes spool.h (directly or through another header) nor calls a spool_*.c
# function; nor do its fuzz targets (tests/fuzz/fuzz_reply.c, fuzz_smtpd.c). Includes are read from the compiler's dependency lists, calls from the objects'
# symbol tables. Fails with the offending file and what it pulls in. CI runs it after the build.
#   scripts/lib_layers.sh [OBJDIR]      OBJDIR: a build directory (default build/musl-tls)
set -eu
cd "$(dirname "$0")/.."
objdir=${1:-build/musl-tls}
cc=${CC_DEPS:-gcc}
ls "$objdir"/lib/*.o "$objdir"/applets/*.o >/dev/null 2>&1 || { echo "lib_layers: no objects under $objdir (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

# the headers each lib/ source pulls in, with the Makefile's search path (-Iapplets included,
# so a bare #include "common.h" would resolve to the applet's header and be caught)
for src in lib/*.c tests/fuzz/fuzz_reply.c tests/fuzz/fuzz_smtpd.c; do
	$cc -MM -MG -D_GNU_SOURCE -DENABLE_TLS=1 -Iconfig -Ilib -Iapplets "$src" 2>"$tmp/err" |
		tr ' \\' '\n\n' | sed -n 's|^\./||; /\.h$/p' >"$tmp/deps" || { cat "$tmp/err" >&2; exit 2; }
	if grep -q '^applets/' "$tmp/deps"; then
		echo "lib_layers: $src includes an applet's header: $(grep '^applets/' "$tmp/deps" | tr '\n' ' ')" >&2
		bad=1
	fi
	case $src in lib/smtp_*.c | lib/smtpd.c | tests/fuzz/*)
		if grep -qx 'lib/spool.h' "$tmp/deps"; then
			echo "lib_layers: $src includes lib/spool.h (the protocol code builds without the spool):" >&2
			grep -l '#include "spool.h"' $(grep '\.h$' "$tmp/deps") "$src" 2>/dev/null | sed 's/^/  included by /' >&2
			bad=1
		fi
	esac
done

# calls: "symbol file" for what applets/ and spool_*.c define, "file symbol" for what lib/ uses
for o in "$objdir"/applets/*.o; do
	nm -g --defined-only "$o" | awk -v f="applets/$(basename "$o" .o).c" 'NF == 3 { print $3, f }'
done | sort >"$tmp/appdef"
for o in "$objdir"/lib/spool*.o; do
	nm -g --defined-only "$o" | awk -v f="lib/$(basename "$o" .o).c" 'NF == 3 { print $3, f }'
done | sort >"$tmp/spooldef"
for o in "$objdir"/lib/*.o; do
	f=lib/$(basename "$o" .o).c
	nm -u "$o" | awk '{ print $NF }' | sort >"$tmp/undef"
	join "$tmp/undef" "$tmp/appdef" | while read -r sym def; do
		echo "lib_layers: $f calls $sym of $def (lib/ never calls up into an applet)" >&2
		echo x
	done >"$tmp/hit"
	[ -s "$tmp/hit" ] && bad=1
	case $f in lib/smtp_*.c | lib/smtpd.c)
		join "$tmp/undef" "$tmp/spooldef" | while read -r sym def; do
			echo "lib_layers: $f calls $sym of $def (the protocol code links without the spool)" >&2
			echo x
		done >"$tmp/hit"
		[ -s "$tmp/hit" ] && bad=1
	esac
done
[ $bad -eq 0 ] && echo "lib_layers: lib/ includes and calls no applet; smtp_*.c and smtpd.c stand without the spool"
exit $bad
