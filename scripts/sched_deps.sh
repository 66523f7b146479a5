#!/bin/sh
# Which scheduler file calls which, read from the objects' symbol tables, and which scheduler
# header includes which: prints both graphs and fails on a cycle (issue 9 point 3: the files
# form layers, docs/scheduler.md "Code"). CI runs it after the build.
#   scripts/sched_deps.sh [OBJDIR]      OBJDIR: a build directory (default build/musl-tls)
set -eu
cd "$(dirname "$0")/.."
objdir=${1:-build/musl-tls}
objs=$(ls "$objdir"/lib/sched*.o "$objdir"/lib/ta.o "$objdir"/applets/scheduler.o 2>/dev/null || true)
[ -n "$objs" ] || { echo "sched_deps: no objects under $objdir (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# defined symbols: "symbol file"; undefined: "file symbol"
for o in $objs; do
	f=$(basename "$o" .o)
	nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }' >>"$tmp/def"
	nm -u "$o" | awk -v f="$f" '{ print f, $NF }' >>"$tmp/undef"
done
# caller callee, for every call that lands in another scheduler file
awk 'NR == FNR { def[$1] = $2; next } ($2 in def) && def[$2] != $1 { print $1, def[$2] }' \
	"$tmp/def" "$tmp/undef" | sort -u >"$tmp/calls"

# include edges among the scheduler's own files (lib/sched*.[ch], lib/ta.[ch], lib/schedconf.[ch])
for f in lib/sched*.[ch] lib/ta.[ch]; do
	sed -n 's/^#include "\(sched[a-z_]*\.h\|ta\.h\)".*/\1/p' "$f" | while read -r h; do
		echo "$(basename "$f") $h"
	done
done | awk '$1 != $2' | sort -u >"$tmp/incl"

echo "scheduler calls (caller -> callee):"
sed 's/ / -> /' "$tmp/calls" | sed 's/^/  /'
echo "scheduler includes (file -> header):"
sed 's/ / -> /' "$tmp/incl" | sed 's/^/  /'
rc=0
for g in calls incl; do
	if ! tsort "$tmp/$g" >/dev/null 2>"$tmp/err"; then
		echo "sched_deps: a cycle in the $g graph:" >&2
		cat "$tmp/err" >&2
		rc=1
	fi
done
[ $rc -eq 0 ] && echo "sched_deps: no cycles"
exit $rc
