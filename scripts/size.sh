#!/bin/sh
# Prints the stripped size of the binaries and the code each applet, each lib/ module and BearSSL
# keep after --gc-sections (from a link map), so that growth shows up in review.
set -e
B=build/musl-tls
printf '%-30s %8s\n' "binary (stripped, static)" "bytes"
printf '%-30s %8s\n' "spoolbox (TLS)" "$(wc -c < spoolbox)"
[ -f build/musl-notls/spoolbox ] && printf '%-30s %8s\n' "spoolbox (no TLS)" "$(wc -c < build/musl-notls/spoolbox)"
musl-gcc -static -Wl,--gc-sections -Wl,-Map=$B/spoolbox.map -o $B/spoolbox.unstripped \
	$B/applets/*.o $B/libspool.a /usr/lib/x86_64-linux-gnu/libbearssl.a
${PYTHON:-/usr/bin/python3} scripts/mapsize.py $B/spoolbox.map
