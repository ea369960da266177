#!/bin/bash
# Upgrade over the previous release with work in flight, as an administrator would
# meet it: install the previous package (PREV_DEB), run its daemon as its unit
# would (user, ambient capabilities, umask, ExecStartPre and ExecStart read from the
# installed unit: this machine need not run systemd), take drops in (accepted and
# quarantined), note consumers' cursors, leave two drops claimed in a running
# daemon (deferred: their staging cannot be made), then install the new package (NEW_DEB) over it and
# restart the daemon the way systemd's restart after an upgrade does. Then every
# claimed drop must end exactly once, the old quarantine and journal must read
# with the new airlock, the old cursors must resume where they were (now as a
# consumer, not root), the configuration must have moved to /etc/airlock with the
# operator's edits, and a new drop must go through. Purges at the end.
#
# Needs root and dpkg; changes the machine (users airlock-u-prod and -cons are
# made and removed; the package's own users stay, as Debian leaves them). Not part
# of make test: make deb-upgrade-test.
set -euo pipefail
prev=${PREV_DEB:?give PREV_DEB, the previous release package}
new=${NEW_DEB:-$(ls .build/deb/airlock_*_amd64.deb | tail -1)}
root=/var/lib/airlock
[ "$(id -u)" = 0 ] || { echo "test-upgrade: needs root to install packages"; exit 1; }
if dpkg -s airlock >/dev/null 2>&1; then echo "test-upgrade: airlock is already installed; not touching it"; exit 1; fi
for p in $root /etc/airlock; do [ -e $p ] && { echo "test-upgrade: $p exists; not touching it"; exit 1; }; done
work=$(mktemp -d /tmp/airlock-upgrade.XXXXXX)
chmod 0755 "$work"
daemon=""
fail() { echo "test-upgrade: FAIL: $*"; [ -f "$work/daemon.err" ] && tail -20 "$work/daemon.err"; exit 1; }
cleanup() {
    [ -n "$daemon" ] && { kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true; }
    dpkg -P airlock >/dev/null 2>&1 || true
    rm -rf $root /etc/airlock "$work"
    for u in airlock-u-prod airlock-u-cons; do userdel "$u" 2>/dev/null || true; done
}
trap cleanup EXIT

unit() { sed -n "s/^$1=//p" /lib/systemd/system/airlock.service | tail -1; }
# Becomes "$@" as the installed unit runs its commands: its User,
# AmbientCapabilities and UMask. It execs: call it in a subshell, ( as_unit … ),
# whose pid is then the program's own.
as_unit() {
    local caps
    caps=$(unit AmbientCapabilities | tr 'A-Z ' 'a-z,' | sed 's/cap_/+/g')
    exec setpriv --reuid="$(unit User)" --regid="$(unit Group)" --init-groups ${caps:+--inh-caps=$caps --ambient-caps=$caps} \
        -- sh -c 'umask "$0"; exec "$@"' "$(unit UMask)" "$@"
}
# ExecStartPre, then ExecStart in the background; returns once it watches the inbox.
start_daemon() {
    # shellcheck disable=SC2046
    ( as_unit $(unit ExecStartPre) ) || fail "ExecStartPre: $(unit ExecStartPre)"
    # shellcheck disable=SC2046
    ( as_unit $(unit ExecStart) ) > "$work/daemon.out" 2> "$work/daemon.err" &
    daemon=$!
    for _ in $(seq 100); do grep -qs "watching" "$work/daemon.err" && return; sleep 0.1; done
    fail "the daemon did not start: $(unit ExecStart)"
}
# The restart systemd does after an upgrade: SIGTERM to the daemon (KillMode=mixed),
# then SIGKILL to whatever of its cgroup is left (here: its children).
stop_daemon() {
    local children
    children=$(pgrep -P "$daemon" || true)
    kill -TERM "$daemon"
    wait "$daemon" || fail "the daemon exited $? on SIGTERM"
    for c in $children; do kill -KILL "$c" 2>/dev/null || true; done
    daemon=""
}
wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
    local seconds=$1 what=$2; shift 2
    for _ in $(seq $((seconds * 10))); do "$@" && return; sleep 0.1; done
    fail "waited ${seconds}s for $what"
}
count() { find "$1" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l; }
# Checks for wait_for, which runs them again each time (arguments are expanded once).
count_is() { [ "$(count "$1")" = "$2" ]; }
drop() { # drop FIXTURE NAME: as a producer, written under a temporary name and renamed
    cp "fixtures/archives/$1" "$work/$2"; chmod 0644 "$work/$2"
    runuser -u airlock-u-prod -- sh -c 'cat "$1" > "$2/.$3.part" && mv "$2/.$3.part" "$2/$3"' sh "$work/$2" $root/inbox "$2"
}
terminal_records() { # lines "ID EVENT" of every accepted or rejected record in every journal file
    cat $root/state/journal*.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    try: r = json.loads(line)
    except ValueError: continue
    if r.get("event") in ("accepted", "rejected"): print(r["id"], r["event"])'
}
outcomes_at_least() { [ "$(terminal_records | wc -l)" -ge "$1" ]; }

echo "== the previous release: dpkg -i $prev"
dpkg -i "$prev" >/dev/null
[ -f $root/airlock.json ] || fail "the previous release keeps no $root/airlock.json"
# The operator's edits, which must survive the move: a small journal that rotates, a short grace.
python3 - $root/airlock.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.setdefault("journal", {}).update({"max_bytes": 2048, "keep": 50})
c.setdefault("watch", {}).update({"grace_seconds": 2})
c.setdefault("decoder", {}).update({"timeout_seconds": 600})
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
cp $root/airlock.json "$work/edited.json"
useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --groups airlock-drop airlock-u-prod
useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --groups airlock-read airlock-u-cons

echo "== its daemon, as its unit runs it: $(unit ExecStart)"
start_daemon
for n in 1 2 3; do drop zip-deflate-valid.zip "before-$n.zip"; done
drop zip-traversal.zip before-evil.zip
wait_for 60 "four outcomes" outcomes_at_least 4
[ "$(count $root/outbox)" = 3 ] && [ "$(count $root/quarantine)" = 1 ] || fail "before: $(ls $root/outbox $root/quarantine)"
old_quarantined=$(ls $root/quarantine)
first=$(/usr/bin/airlock events --root $root | head -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["cursor"])')
last=$(/usr/bin/airlock events --root $root | tail -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["cursor"])')
ls $root/state/journal.*.jsonl >/dev/null 2>&1 || fail "the journal did not rotate before the upgrade"
echo "   cursors kept by a consumer: first $first, last $last"

echo "== two drops claimed, deferred and retried: state/staging made read-only under the daemon"
# Each attempt then fails to make the drop's staging directory, which is not the
# drop's fault: the drop stays claimed and is retried with backoff.
chmod 0500 $root/state/staging
drop zip-deflate-valid.zip during.zip
drop zip-traversal.zip during-evil.zip
wait_for 30 "two claims" count_is $root/state/claimed 2
wait_for 30 "both to be deferred" grep -q "deferred.*during-evil.zip\|during-evil.zip.*deferred" "$work/daemon.err"
[ "$(count $root/inbox)" = 0 ] || fail "drops left in the inbox"

echo "== the new release: dpkg -i $new (the old daemon still runs)"
dpkg -i "$new" >/dev/null
cmp -s /etc/airlock/airlock.json "$work/edited.json" || fail "/etc/airlock/airlock.json is not the operator's edited configuration"
[ ! -e $root/airlock.json ] || fail "$root/airlock.json left beside /etc/airlock/airlock.json"
echo "== restart as after an upgrade: SIGTERM, then $(unit ExecStartPre); $(unit ExecStart)"
stop_daemon
[ "$(count $root/state/claimed)" = 2 ] || fail "the stop did not leave the two drops claimed: $(ls $root/state/claimed)"
chmod 0700 $root/state/staging
start_daemon
wait_for 60 "the claims to be finished" count_is $root/state/claimed 0
wait_for 30 "six outcomes" outcomes_at_least 6

echo "== every drop ended exactly once"
terminal_records | awk '{print $1}' | sort | uniq -d | grep . && fail "a drop has two terminal records"
[ "$(terminal_records | wc -l)" = 6 ] || fail "$(terminal_records | wc -l) terminal records for 6 drops"
[ "$(count $root/outbox)" = 4 ] && [ "$(count $root/quarantine)" = 2 ] || fail "after: $(ls $root/outbox $root/quarantine)"
[ -d $root/outbox/during ] || fail "the drop claimed across the upgrade is not in the outbox"

echo "== the old quarantine and journal read with the new airlock, with no --root"
airlock quarantine show "$old_quarantined" --json | grep -q '"reason":"unsafe-path"' || fail "quarantine show $old_quarantined"
[ "$(airlock quarantine list --json | wc -l)" = 2 ] || fail "quarantine list"
airlock history --id "$old_quarantined" --json | grep -q '"event":"rejected"' || fail "history of $old_quarantined"
airlock status >/dev/null || fail "status"

echo "== the consumer's old cursors resume, read as the consumer"
as_consumer() { runuser -u airlock-u-cons -- airlock events "$@"; }
after_first=$(as_consumer --after "$first") || fail "events --after $first (as the consumer)"
[ "$(echo "$after_first" | wc -l)" = "$(($(airlock events | wc -l) - 1))" ] || fail "--after $first did not resume after the first record"
after_last=$(as_consumer --after "$last") || fail "events --after $last"
echo "$after_last" | grep -q '"drop":"during.zip"' || fail "--after $last misses the drop finished after the upgrade"
echo "$after_last" | grep -q '"drop":"before-evil.zip","reason"' && fail "--after $last repeats a record from before it"
runuser -u airlock-u-cons -- ls $root/state >/dev/null 2>&1 && fail "the consumer may list state/"

echo "== a new drop goes through the upgraded daemon"
drop zip-deflate-valid.zip after.zip
wait_for 30 "the new drop" test -d $root/outbox/after
stop_daemon

echo "== dpkg -P"
dpkg -P airlock >/dev/null
[ ! -e /etc/airlock ] || fail "/etc/airlock left after purge"
echo "test-upgrade: ok"
