#!/bin/bash
# Builds the package in a clean Debian 12 chroot that holds only the essential
# packages, build-essential, the Build-Depends of debian/control and the Swift
# toolchain's own run-time libraries, then installs it there, runs it (init,
# doctor, a drop taken in by run --once as the service user) and purges it.
# This proves the Build-Depends are complete: dpkg-buildpackage refuses to build
# when one is missing, and the build finds no library the chroot lacks.
#
# The Swift toolchain is not a Debian package: it is bind-mounted read-only from
# the host's SWIFT_TOOLCHAIN (/opt/swift) to the same path in the chroot, and put
# on PATH there. The libraries its own programs load (swift-build: libcurl,
# libxml2, libsqlite3, libncurses; swift-frontend: libuuid, zlib) are installed
# beside the Build-Depends: they are the toolchain's, not airlock's.
#
# Needs root, mmdebstrap (installed here when missing) and the Debian mirror the
# host's apt uses. Slow (a release build from nothing): not part of make test.
set -euo pipefail
toolchain=${SWIFT_TOOLCHAIN:-/opt/swift}
suite=${SUITE:-bookworm}
[ "$(id -u)" = 0 ] || { echo "test-chroot: needs root (mmdebstrap, mounts, chroot)"; exit 1; }
[ -x "$toolchain/usr/bin/swift" ] || { echo "test-chroot: no Swift toolchain at $toolchain (SWIFT_TOOLCHAIN)"; exit 1; }
command -v mmdebstrap >/dev/null || apt-get install -y mmdebstrap >/dev/null
work=$(mktemp -d /tmp/airlock-chroot.XXXXXX)
trap 'umount -R "$work/root/opt/swift" 2>/dev/null || true; rm -rf "$work"' EXIT

# Build-Depends as package names: versions, alternatives after the first and
# debhelper-compat's virtual name (debhelper provides it) resolved.
build_depends=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*:/p' debian/control | sed '$d' \
    | sed 's/^Build-Depends://; s/([^)]*)//g; s/|[^,]*//g' | tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep . \
    | sed 's/^debhelper-compat$/debhelper/' | tr '\n' ',' | sed 's/,$//')
toolchain_libraries=libcurl4,libxml2,libsqlite3-0,libncurses6,libuuid1,zlib1g
echo "== Build-Depends: $build_depends"
echo "== the toolchain's libraries: $toolchain_libraries"
git archive --format=tar --prefix=airlock/ HEAD > "$work/source.tar"

# The customize hooks run with the chroot's /proc, /sys and /dev mounted.
started=$(date +%s)
mmdebstrap --variant=buildd --include="$build_depends,$toolchain_libraries" \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --customize-hook="mkdir -p \"\$1/opt/swift\" && mount --bind -o ro \"$toolchain\" \"\$1/opt/swift\"" \
    --customize-hook="mkdir -p \"\$1/build\" && tar -xf \"$work/source.tar\" -C \"\$1/build\"" \
    --customize-hook='chroot "$1" sh -ec "
        export PATH=/opt/swift/usr/bin:\$PATH HOME=/build
        cd /build/airlock
        start=\$(date +%s)
        dpkg-buildpackage -b -us -uc
        echo \"== built in \$((\$(date +%s) - start)) s\"
        ls -l /build/airlock_*.deb"' \
    --customize-hook='umount "$1/opt/swift"' \
    --customize-hook='chroot "$1" sh -ec "
        apt-get install -y /build/airlock_*_amd64.deb >/dev/null
        ldd /usr/bin/airlock | grep -q /opt/swift && { echo linked to the toolchain; exit 1; }
        test -f /etc/airlock/airlock.json
        runuser -u airlock -- airlock init
        runuser -u airlock -- airlock doctor >/dev/null
        cp /build/airlock/fixtures/archives/zip-deflate-valid.zip /var/lib/airlock/inbox/a.zip
        chown airlock /var/lib/airlock/inbox/a.zip
        setpriv --reuid=airlock --regid=airlock --init-groups --inh-caps=+lease,+dac_read_search --ambient-caps=+lease,+dac_read_search sh -c \"umask 077; airlock run --once\" | grep -q \\\"event\\\":\\\"accepted\\\"
        test -d /var/lib/airlock/outbox/a
        airlock status >/dev/null
        dpkg -P airlock
        test ! -e /usr/bin/airlock && test ! -e /etc/airlock
        echo \"== installed, ran, purged in the chroot\""' \
    "$suite" "$work/root" /etc/apt/sources.list.d/debian.sources
echo "test-chroot: ok ($(($(date +%s) - started)) s in all)"
