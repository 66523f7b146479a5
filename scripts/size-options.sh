#!/bin/sh
# `make size-options`: what turning off each option of config/config_default.h saves in the
# stripped x86-64 binary, everything else on (PROFILE=max: the cost written beside each option),
# the default build against it, and what
# OWN_LIBC=0 (musl's vfprintf, getopt, strtol, qsort, strstr, mbstowcs) would add. Each
# variant is built in build/opt-NAME (ignored by `make size`). Takes a few minutes.
set -eu
cd "$(dirname "$0")/.."
make=${MAKE:-make}
$make -s spoolbox >/dev/null
$make -s PROFILE=max variant >/dev/null
full=$(wc -c < build/musl-max/spoolbox)
def=$(wc -c < build/musl-tls/spoolbox)
printf '%-24s %10s %10s\n' "option off" "bytes" "saves"
printf '%-24s %10d %10s\n' "(none: PROFILE=max)" "$full" "-"
printf '%-24s %10d %10s\n' "(the default build)" "$def" "$(awk -v d=$((full - def)) 'BEGIN { printf "%.1f KiB", d / 1024 }')"
for opt in $(sed -n 's/^#ifndef ENABLE_\([A-Z0-9_]*\)$/\1/p' config/config_default.h); do
	name=$(echo "$opt" | tr 'A-Z' 'a-z')
	case $opt in
	TLS) $make -s PROFILE=max TLS=0 VARIANT=opt-$name variant >/dev/null ;;
	# what needs local delivery goes with it (config/check.h)
	LOCAL) $make -s PROFILE=max OPTIONS="ENABLE_LOCAL=0 ENABLE_MAILDIR=0 ENABLE_DELIVER_CMD=0" VARIANT=opt-$name variant >/dev/null ;;
	*) $make -s PROFILE=max OPTIONS="ENABLE_$opt=0" VARIANT=opt-$name variant >/dev/null ;;
	esac
	b=$(wc -c < build/opt-$name/spoolbox)
	printf '%-24s %10d %10s\n' "ENABLE_$opt=0" "$b" "$(awk -v d=$((full - b)) 'BEGIN { printf "%.1f KiB", d / 1024 }')"
done
$make -s PROFILE=max OWN_LIBC=0 VARIANT=opt-musl-libc variant >/dev/null
b=$(wc -c < build/opt-musl-libc/spoolbox)
printf '%-24s %10d %10s\n' "OWN_LIBC=0 (adds)" "$b" "$(awk -v d=$((b - full)) 'BEGIN { printf "%.1f KiB", d / 1024 }')"
