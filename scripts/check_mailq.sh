#!/bin/sh
# Fetches Debian's real check_mailq (monitoring-plugins) for the mailq tests, unpacked under
# build/check_mailq/ and never installed (its package depends on an MTA). Cached: nothing is
# done when it is there. Run by scripts/deps.sh; a failure (no network) only means the test
# that needs it tries again and skips if it still cannot have it.
set -e
dest=${1:-build/check_mailq}
plugin="$dest/usr/lib/nagios/plugins/check_mailq"
[ -f "$plugin" ] && [ -f "$dest/usr/lib/nagios/plugins/utils.pm" ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "check_mailq: no apt-get here" >&2; exit 1; }
mkdir -p "$dest/deb"
cd "$dest/deb"
# check_mailq is in -standard; its utils.pm (paths, exit codes) in -common
get() { apt-get download -q monitoring-plugins-standard monitoring-plugins-common >/dev/null 2>&1; }
if ! get; then
	[ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 || true
	get || { echo "check_mailq: apt-get download monitoring-plugins-standard failed" >&2; exit 1; }
fi
for f in monitoring-plugins-standard_*.deb monitoring-plugins-common_*.deb; do
	dpkg -x "$f" ..
done
echo "check_mailq: unpacked into $dest" >&2
