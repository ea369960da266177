#!/bin/bash
# Installs the package built by make deb, checks what it put where, has the
# service user take a drop in through the installed binaries, then removes and
# purges it. Needs root; changes the machine (the airlock user and groups stay,
# as Debian leaves system users behind).
set -euo pipefail
deb=$(ls .build/deb/airlock_*_amd64.deb | tail -1)
[ "$(id -u)" = 0 ] || { echo "test-deb: skipped: needs root to install a package"; exit 0; }
if dpkg -s airlock >/dev/null 2>&1; then echo "test-deb: airlock is already installed; not touching it"; exit 1; fi
[ -e /var/lib/airlock ] && { echo "test-deb: /var/lib/airlock exists; not touching it"; exit 1; }
fail() { echo "test-deb: FAIL: $*"; exit 1; }
cleanup() { dpkg -P airlock >/dev/null 2>&1 || true; rm -rf /var/lib/airlock; }
trap cleanup EXIT

echo "== dpkg -i $deb"
dpkg -i "$deb"
for f in /usr/bin/airlock /usr/libexec/airlock/airlock-decoder /usr/libexec/airlock/airlock-keyed-decoder \
         /lib/systemd/system/airlock.service /usr/lib/sysusers.d/airlock.conf /usr/lib/tmpfiles.d/airlock.conf \
         /usr/share/man/man1/airlock.1.gz /usr/share/man/man5/airlock.json.5.gz /usr/share/doc/airlock/README.md \
         /usr/share/bash-completion/completions/airlock; do
    [ -e "$f" ] || fail "$f missing"
done
echo "== ldd of the installed programs"
for p in /usr/bin/airlock /usr/libexec/airlock/airlock-decoder /usr/libexec/airlock/airlock-keyed-decoder; do
    if ldd "$p" | grep -E 'libswift|libFoundation|_FoundationICU|libdispatch|libBlocksRuntime|/opt/swift'; then fail "$p links the Swift toolchain"; fi
done
getent passwd airlock >/dev/null || fail "no airlock user"
id -nG airlock | grep -qw airlock-read || fail "airlock is not in airlock-read"
getent group airlock-drop >/dev/null || fail "no airlock-drop group"
expect_mode() { [ "$(stat -c '%a %U:%G' "$1")" = "$2" ] || fail "$1 is $(stat -c '%a %U:%G' "$1"), expected $2"; }
expect_mode /var/lib/airlock/inbox "1730 airlock:airlock-drop"
expect_mode /var/lib/airlock/outbox "770 airlock:airlock-read"
expect_mode /var/lib/airlock/state "710 airlock:airlock-read"
expect_mode /etc/airlock/airlock.json "644 root:root"
[ ! -e /var/lib/airlock/airlock.json ] || fail "a second configuration in the root"
grep -q airlock-read /etc/airlock/airlock.json || fail "airlock.json is not the deployment configuration"
getfacl -p /var/lib/airlock/inbox 2>/dev/null | grep -q "default:user:airlock:r--" || fail "no default ACL on the inbox"
MANPAGER=cat man -P cat airlock >/dev/null 2>&1 || fail "man airlock"

echo "== the service user runs the installed airlock as the unit would"
runuser -u airlock -- airlock init
runuser -u airlock -- airlock doctor
cp fixtures/archives/zip-deflate-valid.zip /var/lib/airlock/inbox/a.zip
chown airlock /var/lib/airlock/inbox/a.zip
setpriv --reuid=airlock --regid=airlock --init-groups --inh-caps=+lease,+dac_read_search \
    --ambient-caps=+lease,+dac_read_search sh -c 'umask 077; airlock run --once' | grep -q '"event":"accepted"' || fail "drop not accepted"
expect_mode /var/lib/airlock/outbox/a "750 airlock:airlock-read"

echo "== dpkg -r, then -P"
dpkg -r airlock
[ ! -e /usr/bin/airlock ] && [ ! -e /usr/libexec/airlock ] || fail "program files left after dpkg -r"
[ -d /var/lib/airlock/outbox/a ] || fail "dpkg -r removed the data"
dpkg -P airlock
dpkg -s airlock >/dev/null 2>&1 && fail "still installed after purge"
[ ! -e /etc/airlock ] || fail "/etc/airlock left after purge"
echo "test-deb: ok"
