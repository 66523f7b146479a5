#!/bin/sh
# Two error tiers (issue 9 point 8, STYLE.md 5): the allocation wrappers that exit on failure
# (xmalloc, xcalloc, xstrdup, ...) are for one-shot applets; code in lib/ runs inside the
# scheduler daemon too and must log and return instead. Fails when an object of lib/ other than
# the one that defines the wrappers calls one. CI runs it after the build.
#   scripts/lib_noexit.sh [OBJDIR]      OBJDIR: a build directory (default build/musl-tls)
set -eu
cd "$(dirname "$0")/.."
objdir=${1:-build/musl-tls}
ls "$objdir"/lib/*.o >/dev/null 2>&1 || { echo "lib_noexit: no objects under $objdir/lib (build first)" >&2; exit 2; }
wrap='^x(malloc|calloc|realloc|strdup|strndup|asprintf)$'
bad=0
for o in "$objdir"/lib/*.o; do
	# the file that defines a wrapper may use it (xstrdup calls xmalloc)
	nm -g --defined-only "$o" | awk '{ print $NF }' | grep -Eq "$wrap" && continue
	for sym in $(nm -u "$o" | awk '{ print $NF }' | grep -E "$wrap" || true); do
		src=lib/$(basename "$o" .o).c
		echo "lib_noexit: $src calls $sym, which exits on failure; log and return instead" >&2
		grep -n "\\b$sym(" "$src" | sed 's/^/  /' >&2 || true
		bad=1
	done
done
[ $bad -eq 0 ] && echo "lib_noexit: no exiting allocation wrappers in lib/"
exit $bad
