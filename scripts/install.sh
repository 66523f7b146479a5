#!/bin/sh
# `make install`: copies a built spoolbox, its links, man pages and sample configuration into
# DESTDIR (a package's staging root, or empty for the live system).
#
# usage: DESTDIR=... PREFIX=/usr SYSCONFDIR=/etc MANDIR=PREFIX/share/man SUBMIT_GROUP= \
#        APPLETS_LIST= sh scripts/install.sh BINARY
#
# The link names and directories come from applets/applets.h, the table `spoolbox --install`
# uses, so the two cannot disagree; a directory under /usr there lands under PREFIX here. The
# Makefile passes the table as the build's preprocessor left it (APPLETS_LIST), so an applet a
# build option removed gets no link; the binary is not run, as it may be a cross-build. Links
# are relative, so they work inside DESTDIR, in a chroot and after the package is unpacked.
# Nothing under SYSCONFDIR is ever overwritten (an admin's edits win, as with Postfix's and
# OpenSMTPD's installers). With SUBMIT_GROUP the binary is installed setgid to that group
# (docs/spool.md 8); without it the commands to do so are printed. Accounts are never made
# here (DESTDIR may be a package's staging root): the agents' user is made by
# spoolbox --install or the package's install script, and the commands are printed.
set -eu

bin=${1:?usage: install.sh BINARY}
top=$(cd "$(dirname "$0")/.." && pwd)
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr}
SYSCONFDIR=${SYSCONFDIR:-/etc}
MANDIR=${MANDIR:-$PREFIX/share/man}
SUBMIT_GROUP=${SUBMIT_GROUP:-}
table=${APPLETS_LIST:-$top/applets/applets.h}
bad=0

case $PREFIX in /*) ;; *) echo "install: PREFIX must be an absolute path: $PREFIX" >&2; exit 64 ;; esac
[ -x "$bin" ] || { echo "install: $bin: no such executable (build it first)" >&2; exit 66; }

sbindir=$PREFIX/sbin
install -d "$DESTDIR$sbindir"
install -m 0755 "$bin" "$DESTDIR$sbindir/spoolbox"
echo "$DESTDIR$sbindir/spoolbox"
if [ -n "$SUBMIT_GROUP" ]; then
	chgrp "$SUBMIT_GROUP" "$DESTDIR$sbindir/spoolbox"
	chmod 2755 "$DESTDIR$sbindir/spoolbox"
	echo "  setgid $SUBMIT_GROUP (docs/spool.md 8)"
fi

# NAME DIR for every APPLET(name, "dir", flags) and LINK(name, applet, "dir") line
links=$(sed -n -e 's/^APPLET(\([a-z0-9_]*\), *"\([^"]*\)".*/\1 \2/p' \
	-e 's/^LINK(\([a-z0-9_]*\), *[a-z0-9_]*, *"\([^"]*\)".*/\1 \2/p' "$table")
[ -n "$links" ] || { echo "install: no applets found in $table" >&2; exit 70; }

while read -r name dir; do
	case $dir in
	/usr/*)
		rel=${dir#/usr/}
		dir=$PREFIX/$rel
		# one ../ per component of the directory below PREFIX
		up=$(echo "$rel" | sed 's|[^/][^/]*|..|g')
		[ "$rel" = sbin ] && target=spoolbox || target=$up/sbin/spoolbox
		;;
	*) target=$sbindir/spoolbox ;;
	esac
	path=$DESTDIR$dir/$name
	install -d "$DESTDIR$dir"
	if [ -e "$path" ] && [ ! -L "$path" ]; then
		echo "install: $path exists and is not a symlink; left alone" >&2
		bad=1
		continue
	fi
	ln -sfn "$target" "$path"
	echo "$path -> $target"
done <<EOF
$links
EOF

for page in "$top"/docs/man/*.[1-8]; do
	sec=${page##*.}
	install -d "$DESTDIR$MANDIR/man$sec"
	install -m 0644 "$page" "$DESTDIR$MANDIR/man$sec/"
	echo "$DESTDIR$MANDIR/man$sec/${page##*/}"
done

# Configuration: each file only when it is not there yet.
keep() { # SOURCE DEST MODE
	if [ -e "$2" ] || [ -L "$2" ]; then
		echo "$2: exists, kept"
	else
		install -m "$3" "$1" "$2"
		echo "$2"
	fi
}
etc=$DESTDIR$SYSCONFDIR/spoolbox
install -d "$etc"
for s in "$top"/config/*.sample; do
	keep "$s" "$etc/${s##*/}" 0644
done
keep "$top/config/spoolbox.conf.sample" "$etc/spoolbox.conf" 0644
keep "$top/config/aliases.sample" "$DESTDIR$SYSCONFDIR/aliases" 0644

if [ -z "$SUBMIT_GROUP" ]; then
	cat <<EOF

To let every user submit mail (docs/spool.md 8), as root:
  groupadd -r spoolbox   # addgroup -S spoolbox on BusyBox systems
  chgrp spoolbox $sbindir/spoolbox && chmod 2755 $sbindir/spoolbox
or run make install again with SUBMIT_GROUP=spoolbox (or, as root, spoolbox --install).
EOF
fi
# the agents' user is the live system's business, never a staging root's
cat <<EOF

The smtp, errormail and hold agents run as the user spoolbox (AGENT_USER, docs/spool.md 8.1);
until it exists they run as root. As root on the live system: spoolbox --install
(or: useradd -r -g spoolbox -d /nonexistent -M -s /sbin/nologin spoolbox).
EOF
exit $bad
