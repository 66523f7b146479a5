#!/bin/sh
# Installs what building and testing spoolbox needs on Debian, when it is missing.
# Called by the Makefile; as root it runs apt-get, otherwise it prints the command to run.
set -e
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in musl-tools libbearssl-dev xz-utils python3-pytest python3-aiosmtpd openssl dnsmasq-base iproute2 clang strace busybox groff-base systemd runit s6 libdate-calc-perl; do
	have_pkg "$p" || need="$need $p"
done
# the real check_mailq for the mailq tests, unpacked under build/ (never installed)
sh "$(dirname "$0")/check_mailq.sh" || true
# the real pflogsumm for the log-summary test (its Date::Calc is in the package list above)
sh "$(dirname "$0")/pflogsumm.sh" || true
# BearSSL's source for the static build (scripts/bearssl.sh; without it Debian's library is used)
sh "$(dirname "$0")/bearssl.sh" --fetch || true
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "deps: installing:$need" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || true
	apt-get install -y -qq --no-install-recommends $need >&2
else
	echo "deps: missing packages:$need" >&2
	echo "deps: run as root: apt-get install -y$need" >&2
	exit 1
fi
