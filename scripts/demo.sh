#!/bin/sh
# make demo: the main job on an embedded default, in ./demo/ — submit a message as cron would,
# let the scheduler deliver it locally, and show the mailbox. Until submit, scheduler and local
# exist, it shows the applets and says so.
set -e
BIN=$(pwd)/spoolbox
D=$(pwd)/demo
if "$BIN" submit --help 2>/dev/null | grep -q 'not written yet'; then
	echo "spoolbox demo: submit, scheduler and local are not written yet; the applets so far:"
	"$BIN" --list
	exit 0
fi
rm -rf "$D"
mkdir -p "$D/etc" "$D/mail"
export SPOOL="$D/spool" MYHOSTNAME=router.lan LOG=stderr MBOX_DIR="$D/mail" \
	ALIASES="$D/etc/aliases" SCHEDULER_CONF="$D/etc/scheduler.conf"
echo "root: $(id -un)" > "$D/etc/aliases"
echo "== submitting a message as cron does: sendmail -FCronDaemon -i -B8BITMIME -oem root"
printf 'Subject: backup finished\n\nThe nightly backup finished at %s.\n' "$(date)" |
	"$BIN" submit -FCronDaemon -i -B8BITMIME -oem root
echo "== running the scheduler until the queue is empty"
"$BIN" scheduler -i -E 2>&1 | sed 's/^/   /'
echo "== $D/mail/$(id -un):"
cat "$D/mail/$(id -un)"
