#!/bin/sh
# Fetches what a cross-build for one Debian architecture needs: the cross gcc/binutils and
# qemu-user-static (installed with apt-get, as scripts/deps.sh does), and that architecture's
# musl-dev and libbearssl-dev, which are unpacked under build/sysroot/ARCH with `apt-get download`
# + `dpkg -x` so that the host's package set is not changed by a foreign architecture.
# Usage: deps-cross.sh DEBIAN_ARCH TRIPLET-   (e.g. arm64 aarch64-linux-gnu-)
# Prints the sysroot directory on stdout.
set -e
arch=$1
cross=$2
[ -n "$arch" ] && [ -n "$cross" ] || { echo "usage: $0 DEBIAN_ARCH CROSS_COMPILE" >&2; exit 64; }
root=$(cd "$(dirname "$0")/.." && pwd)
sysroot=$root/build/sysroot/$arch
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
need=""
for p in "gcc-${cross%-}" "binutils-${cross%-}" qemu-user-static; do
	have_pkg "$p" || need="$need $p"
done
if [ -n "$need" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps-cross: missing packages:$need; run as root: apt-get install -y$need" >&2
		exit 1
	fi
	echo "deps-cross: installing:$need" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || true
	apt-get install -y -qq --no-install-recommends $need >&2
fi
if [ ! -f "$sysroot/.done" ]; then
	if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
		[ "$(id -u)" = 0 ] || { echo "deps-cross: run as root: dpkg --add-architecture $arch && apt-get update" >&2; exit 1; }
		# apt-get download needs the architecture's package lists; nothing of it is installed
		echo "deps-cross: adding package lists for $arch" >&2
		dpkg --add-architecture "$arch"
		apt-get update -qq >&2 || true
	fi
	rm -rf "$sysroot" && mkdir -p "$sysroot/deb"
	(cd "$sysroot/deb" && apt-get download -qq "musl-dev:$arch" "libbearssl-dev:$arch" >&2)
	for d in "$sysroot"/deb/*.deb; do dpkg -x "$d" "$sysroot"; done
	# musl's gcc specs name /usr/...: pointed into the sysroot, they drive the cross gcc
	specs=$(ls "$sysroot"/usr/lib/*-musl*/musl-gcc.specs)
	sed "s#/usr/#$sysroot/usr/#g" "$specs" > "$sysroot/musl-gcc.specs"
	touch "$sysroot/.done"
fi
echo "$sysroot"
