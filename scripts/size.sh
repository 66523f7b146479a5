#!/bin/sh
# `make size`: prints the stripped size of every binary built (each variant, each architecture),
# what each subsystem keeps after --gc-sections (from the link maps), and fails when a binary is
# over its budget in config/size-budget or a budgeted x86-64 variant was not built.
# SIZE_VERBOSE=1 adds the table by object.
set -eu
cd "$(dirname "$0")/.."
budget_file=config/size-budget
status=0
maps=""
printf '%-24s %10s %10s %10s  %s\n' "binary (stripped, static)" "bytes" "KiB" "budget" "verdict"
for b in build/*/spoolbox; do
	[ -f "$b" ] || continue
	v=${b#build/}
	v=${v%/spoolbox}
	case $v in gcc-*|exp|opt-*) continue ;; esac
	bytes=$(wc -c < "$b")
	budget=$(awk -v v="$v" '$1 == v { print $2 }' "$budget_file")
	verdict="no budget"
	if [ -n "$budget" ]; then
		if [ "$bytes" -le "$budget" ]; then
			verdict="ok, $((budget - bytes)) bytes to spare"
		else
			verdict="OVER BUDGET by $((bytes - budget)) bytes"
			status=1
		fi
	fi
	printf '%-24s %10d %10s %10s  %s\n' "$v" "$bytes" "$(awk -v n="$bytes" 'BEGIN { printf "%.1f", n / 1024 }')" \
		"${budget:--}" "$verdict"
	[ -f "build/$v/spoolbox.map" ] && maps="$maps build/$v/spoolbox.map"
done
# every budgeted native variant must exist: a missing one would pass unseen
for v in $(awk '!/^#/ && NF >= 2 && $1 ~ /^musl-/ { print $1 }' "$budget_file"); do
	if [ ! -f "build/$v/spoolbox" ]; then
		echo "size: build/$v/spoolbox was not built (make size builds every budgeted x86-64 variant)" >&2
		status=1
	fi
done
# lib/libc/stdio.c and malloc.c replace musl's whole FILE and allocator: a musl member of either
# linked beside them (a new caller of fseek, say) would link without a clash and then read our
# FILE as musl's, or free our blocks into mallocng. Every budgeted variant is checked.
for m in $maps; do
	v=${m#build/}
	v=${v%/spoolbox.map}
	grep -q "^$v " "$budget_file" || continue
	bad=$(grep -oE 'libc\.a\((__stdio_[a-z]+|__lockfile|__towrite|__toread|__uflow|__overflow|std(in|out|err)|__fdopen|ofl|ofl_add|malloc|free|realloc|lite_malloc|calloc|libc_calloc)\.lo\)' "$m" | sort -u | tr '\n' ' ')
	if [ -n "$bad" ]; then
		echo "size: $v links musl's stdio or malloc beside ours (lib/libc/stdio.c, malloc.c): $bad; the map says who pulled them" >&2
		status=1
	fi
done
echo
# shellcheck disable=SC2086
${PYTHON:-/usr/bin/python3} scripts/mapsize.py $maps
if [ "${SIZE_VERBOSE:-0}" = 1 ]; then
	echo
	${PYTHON:-/usr/bin/python3} scripts/mapsize.py -v $maps
fi
[ $status = 0 ] || echo "size: over budget (config/size-budget); see docs/size.md" >&2
exit $status
