#!/bin/sh
# Runs the integration tests on a machine that looks installed and busy (issue 12 point 9): a
# system /etc/spoolbox (spoolbox.conf, scheduler.conf, credentials), /etc/aliases, an installed
# spoolbox whose every name fails loudly, listeners on the usual mail ports (25, 587, 2525) and
# a file /tmp/x. A test that reads system configuration, a fixed path or a fixed port fails here.
#
# Nothing is planted on the real system: the script re-runs itself in private mount and
# network namespaces (unshare -mn), where /etc, /usr and /tmp are overlays on a private tmpfs
# that vanish with it. Needs root; without it (or without unshare) it says so and exits 77.
#
# usage: tests/hermetic.sh [TEST FILES...] [PYTEST ARGS...]     (SPOOLBOX= the binary, default ./spoolbox)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
: "${SPOOLBOX:=$root/spoolbox}"
export SPOOLBOX

if [ "${SPOOLBOX_HERMETIC_INSIDE:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
		echo "hermetic: needs root and unshare(1); skipped" >&2
		exit 77
	fi
	SPOOLBOX_HERMETIC_INSIDE=1 exec unshare -mn --propagation private sh "$0" "$@"
fi

ip link set lo up
scratch=$(mktemp -d)
mount -t tmpfs -o mode=0755 hermetic "$scratch"
for d in etc usr tmp; do
	mkdir -p "$scratch/$d.up" "$scratch/$d.work"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$scratch/$d.up,workdir=$scratch/$d.work" "/$d"
done
chmod 1777 /tmp

# the installed system: its configuration points everywhere a test must not go
mkdir -p /etc/spoolbox /usr/libexec/spoolbox
cat >/etc/spoolbox/spoolbox.conf <<'EOF'
# planted by tests/hermetic.sh: a test that reads this file is not hermetic
SPOOL=/etc/spoolbox/planted-spool
MYHOSTNAME=planted.invalid
QUALIFYDOMAIN=planted.invalid
SMARTHOST=127.0.0.1:2525
ALIASES=/etc/spoolbox/aliases
MBOX_DIR=/etc/spoolbox/planted-mail
MAILBOX_STYLE=maildir
SIZELIMIT=100
EOF
printf 'local  *  planted/no-such-agent\n' >/etc/spoolbox/scheduler.conf
printf '127.0.0.1:2525 planted planted\n' >/etc/spoolbox/credentials
chmod 600 /etc/spoolbox/credentials
printf 'root: planted-root\npostmaster: planted-root\n' >/etc/spoolbox/aliases
printf 'root: planted-root\npostmaster: planted-root\n' >/etc/aliases
rm -rf /tmp/x   # (inside the overlay: the real /tmp keeps whatever it has)
printf 'planted\n' >/tmp/x
groupadd -r spoolbox   # an installed spoolbox has its group
useradd -r -g spoolbox -d /nonexistent -M -s /sbin/nologin spoolbox   # and its agents' user

# an installed spoolbox that fails loudly under every name
cat >/usr/sbin/spoolbox <<'EOF'
#!/bin/sh
echo "PLANTED SYSTEM SPOOLBOX RAN: $0 $*" >&2
exit 99
EOF
chmod 755 /usr/sbin/spoolbox
for n in /usr/sbin/sendmail /usr/lib/sendmail /usr/bin/mailq /usr/bin/newaliases /usr/sbin/scheduler \
	/usr/libexec/spoolbox/smtp /usr/libexec/spoolbox/local /usr/libexec/spoolbox/errormail \
	/usr/libexec/spoolbox/hold /usr/libexec/spoolbox/cleaner; do
	ln -sf /usr/sbin/spoolbox "$n"
done

# busy mail ports: a server that refuses everything
/usr/bin/python3 - <<'EOF' &
import socket, threading
def serve(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(64)
    while True:
        c, _ = s.accept()
        try: c.sendall(b"554 planted busy port: a test used a fixed port\r\n"); c.close()
        except OSError: pass
for p in (25, 587, 2525):
    threading.Thread(target=serve, args=(p,), daemon=True).start()
threading.Event().wait()
EOF
busy=$!
trap 'kill $busy 2>/dev/null' EXIT
sleep 0.5

cd "$root"
# test files or node ids given: run those; only options: the whole suite with them
case "${1:-}" in
tests/*) /usr/bin/python3 -m pytest -q -p no:cacheprovider "$@" ;;
*) /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration "$@" ;;
esac
