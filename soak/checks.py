"""The soak's end checks: every drop in exactly one place with the right bytes,
exactly one terminal journal record each, nothing left in flight."""

import json
import os
import time

TERMINAL = ("accepted", "rejected")


def read_journal(state):
    names = [n for n in os.listdir(state) if n.startswith("journal.") and n.endswith(".jsonl")]
    names.sort(key=lambda n: 0 if n == "journal.jsonl" else int(n.split(".")[1]), reverse=True)
    records, torn = [], 0
    for name in names:
        with open(os.path.join(state, name), "rb") as handle:
            for line in handle.read().split(b"\n"):
                if not line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    torn += 1
                    continue
                if isinstance(record, dict) and isinstance(record.get("event"), str):
                    records.append(record)
    return records, torn


def tree(directory):
    """Relative path -> bytes of every regular file beneath `directory`; other kinds as None."""
    result = {}
    for current, directories, files in os.walk(directory):
        for name in files:
            path = os.path.join(current, name)
            relative = os.path.relpath(path, directory)
            if os.path.islink(path) or not os.path.isfile(path):
                result[relative] = None
                continue
            with open(path, "rb") as handle:
                result[relative] = handle.read()
    return result


def listing(directory):
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def check(root, drops, problems):
    """Appends every broken rule to `problems`; returns (outbox entries,
    quarantine entries, terminal records written by recovery, torn lines)."""
    by_name = {drop.name: drop for drop in drops}
    for place in ("inbox", "state/claimed", "state/staging", "state/releasing", "state/purging"):
        left = listing(os.path.join(root, place))
        if left:
            problems.append(f"{place} is not empty: {left[:5]}{' …' if len(left) > 5 else ''} ({len(left)})")
    outbox = outbox_entries(root, drops, problems)
    quarantine = quarantine_entries(root, by_name, problems)
    terminal, torn = terminal_records(os.path.join(root, "state"), by_name, problems)
    for drop in drops:
        places = (drop.name in outbox) + (drop.name in quarantine)
        if places != 1:
            problems.append(f"{drop.name} ({drop.delivery}): in {places} places "
                            f"(outbox: {drop.name in outbox}, quarantine: {drop.name in quarantine})")
        records = terminal.get(drop.name, [])
        if len(records) != 1:
            problems.append(f"{drop.name}: {len(records)} terminal records {[(r['event'], r.get('id')) for r in records]}")
        if drop.name in outbox:
            check_accepted(root, drop, outbox[drop.name], records, problems)
        if drop.name in quarantine:
            check_rejected(drop, quarantine[drop.name], records, problems)
    recovered = sum(1 for records in terminal.values() for r in records if r.get("recovered"))
    return len(outbox), len(quarantine), recovered, torn


def outbox_entries(root, drops, problems):
    """Drop name -> its outbox entry, found by the name's stem (the outbox name)."""
    by_stem = {drop.stem: drop for drop in drops}
    found = {}
    for entry in listing(os.path.join(root, "outbox")):
        drop = by_stem.get(entry)
        if drop is None:
            problems.append(f"unexpected outbox entry {entry!r} (a drop committed twice, or a name nobody dropped)")
            continue
        found[drop.name] = entry
    return found


def quarantine_entries(root, by_name, problems):
    """Drop name -> (id, report, directory) of its quarantine entry."""
    found = {}
    for entry in listing(os.path.join(root, "quarantine")):
        directory = os.path.join(root, "quarantine", entry)
        try:
            with open(os.path.join(directory, "report.json")) as handle:
                report = json.load(handle)
        except (OSError, ValueError) as error:
            problems.append(f"quarantine/{entry}: no readable report ({error})")
            continue
        name = report.get("drop")
        if name not in by_name:
            problems.append(f"quarantine/{entry}: report names a drop nobody dropped: {name!r}")
            continue
        if name in found:
            problems.append(f"{name}: quarantined twice ({found[name][0]}, {entry})")
        found[name] = (entry, report, directory)
    return found


def terminal_records(state, by_name, problems):
    """Drop name -> its terminal records; and the number of torn lines."""
    records, torn = read_journal(state)
    terminal = {}
    claimed = set()
    for record in records:
        if record["event"] == "claimed":
            claimed.add(record.get("id"))
        if record["event"] in TERMINAL:
            name = record.get("drop")
            if name not in by_name:
                problems.append(f"terminal record for a drop nobody dropped: {record}")
                continue
            terminal.setdefault(name, []).append(record)
    ended = {r.get("id") for records in terminal.values() for r in records}
    for identifier in sorted(i for i in claimed - ended if i):
        problems.append(f"id {identifier}: claimed record without a terminal record")
    return terminal, torn


def check_accepted(root, drop, entry, records, problems):
    if drop.expected != "accepted":
        problems.append(f"{drop.name}: a hostile drop was accepted as outbox/{entry}")
    elif tree(os.path.join(root, "outbox", entry)) != drop.files:
        problems.append(f"{drop.name}: outbox/{entry} does not hold the archive's files byte for byte")
    for record in records:
        if record["event"] != "accepted" or record.get("output") != "outbox/" + entry:
            problems.append(f"{drop.name}: journal says {record['event']} {record.get('output')}, outbox has {entry}")


def check_rejected(drop, found, records, problems):
    entry, report, directory = found
    try:
        with open(os.path.join(directory, "drop"), "rb") as handle:
            original = handle.read()
    except OSError:
        original = None
    if original != drop.data:
        problems.append(f"{drop.name}: quarantine/{entry}/drop is not the original bytes")
    if drop.expected != "rejected":
        problems.append(f"{drop.name}: a valid drop was rejected: {report.get('reason')}: {report.get('detail')}")
    elif report.get("reason") != drop.reason:
        problems.append(f"{drop.name}: rejected as {report.get('reason')}, expected {drop.reason}")
    for record in records:
        if record["event"] != "rejected" or record.get("id") != entry:
            problems.append(f"{drop.name}: journal says {record['event']} {record.get('id')}, quarantine has {entry}")


def settle(supervisor, root, drops, seconds):
    """Waits until every drop has landed somewhere and nothing is in flight."""
    deadline = time.monotonic() + seconds
    quiet_since = None
    while time.monotonic() < deadline:
        if not supervisor.running():
            return False
        landed = len(listing(os.path.join(root, "outbox"))) + len(listing(os.path.join(root, "quarantine")))
        busy = listing(os.path.join(root, "inbox")) or listing(os.path.join(root, "state/claimed"))
        if landed >= len(drops) and not busy:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 1.5:
                return True
        else:
            quiet_since = None
        time.sleep(0.1)
    return False
