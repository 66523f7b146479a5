#!/bin/sh
# Builds libbearssl.a from BearSSL's source for the static binary, with the binary's own size
# flags: Debian's library is compiled -Os with its hardening (position-independent code, stack
# protector, CET landing pads), which a static, non-PIE binary pays for; from source with -Oz and
# one section per function, BearSSL is 4.6 KiB smaller in the full build (docs/size.md); on x86
# also with the ABI's data alignment (ALIGN_FLAGS in the Makefile).
# The source is Debian's own (the orig tarball of the libbearssl-dev that deps.sh installs, the
# same 0.6 and the same headers), fetched from the Debian mirror with apt's downloader, which every
# Debian has, and checked against its SHA-256. When the source cannot be had (no network, a
# checksum that differs, a compiler that fails), the fallback library is copied instead and the
# build goes on with it, one line on stderr saying so.
# Usage: CC=... CFLAGS=... bearssl.sh OUT.a FALLBACK.a     (CC may be "cross-gcc -specs=FILE")
#        bearssl.sh --fetch                                (deps.sh: only download and unpack)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
ver=0.6+dfsg.1
tarball=bearssl_$ver.orig.tar.xz
sha256=102a625bd8f6155260867a50c508df8d8c3f796985dd744df1a68e5cd1a79004
mirror=${BEARSSL_MIRROR:-http://deb.debian.org/debian}
srcdir=$root/build/bearssl-src
src=$srcdir/bearssl-0.6

fetch() {
	[ -f "$src/.done" ] && return 0
	mkdir -p "$srcdir" || return 1
	t=$srcdir/$tarball
	if ! echo "$sha256  $t" | sha256sum -c --status 2>/dev/null; then
		rm -f "$t"
		url=$mirror/pool/main/b/bearssl/$tarball
		if [ -x /usr/lib/apt/apt-helper ]; then
			/usr/lib/apt/apt-helper -qq download-file "$url" "$t" "SHA256:$sha256" >/dev/null 2>&1
		elif command -v curl >/dev/null; then
			curl -fsS -o "$t" "$url" 2>/dev/null
		else
			wget -q -O "$t" "$url" 2>/dev/null
		fi
		echo "$sha256  $t" | sha256sum -c --status 2>/dev/null || { rm -f "$t"; return 1; }
	fi
	rm -rf "$src"
	# tar needs xz(1) for .xz; Python's tarfile has it built in
	tar -xJf "$t" -C "$srcdir" 2>/dev/null ||
		python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$t" "$srcdir" ||
		return 1
	[ -d "$src/src" ] && touch "$src/.done"
}

if [ "${1:-}" = --fetch ]; then
	fetch || echo "bearssl: the source could not be fetched ($mirror); builds use Debian's libbearssl.a" >&2
	exit 0
fi
case $1 in /*) out=$1 ;; *) out=$PWD/$1 ;; esac
fallback=$2
obj=$out.objs.$$ # a private directory and a rename: two makes may build it at once
build() {
	fetch || return 1
	rm -rf "$obj" && mkdir -p "$obj" || return 1
	# one object per source file, named after its path (BearSSL has a few equal base names)
	export BS_OBJ="$obj"
	(cd "$src" && find src -name '*.c' | sort | xargs -P "$(nproc 2>/dev/null || echo 2)" -n 16 sh -c '
		for f; do $CC $CFLAGS -Iinc -Isrc -c "$f" -o "$BS_OBJ/$(echo "$f" | tr / _).o" || exit 1; done' sh) ||
		return 1
	rm -f "$out.$$" && ${AR:-ar} rcs "$out.$$" "$obj"/*.o && mv -f "$out.$$" "$out" && rm -rf "$obj"
}
mkdir -p "$(dirname "$out")"
if ! build; then
	rm -rf "$obj" "$out.$$"
	echo "bearssl: building from source failed; using $fallback" >&2
	cp "$fallback" "$out"
fi
