#!/bin/sh
# Fetches Debian's real pflogsumm (a Perl script) for the log-summary test, unpacked under
# build/pflogsumm/ and never installed (its package depends on an MTA). Cached: nothing is done
# when it is there. Run by scripts/deps.sh; a failure (no network) only means the test that
# needs it tries again and skips if it still cannot have it.
set -e
dest=${1:-build/pflogsumm}
[ -f "$dest/usr/sbin/pflogsumm" ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "pflogsumm: no apt-get here" >&2; exit 1; }
mkdir -p "$dest/deb"
cd "$dest/deb"
get() { apt-get download -q pflogsumm >/dev/null 2>&1; }
if ! get; then
	[ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 || true
	get || { echo "pflogsumm: apt-get download pflogsumm failed" >&2; exit 1; }
fi
dpkg -x pflogsumm_*.deb ..
echo "pflogsumm: unpacked into $dest" >&2
