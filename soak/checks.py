"""The soak's end checks: every drop in exactly one place with the right bytes,
exactly one terminal journal record each, nothing left in flight."""

import json
import os
import time

TERMINAL = ("accepted", "rejected")


def journal_files(directory, stem):
    """`STEM.jsonl` and its rotated `STEM.N.jsonl` in `directory`, oldest first."""
    names = [n for n in os.listdir(directory) if n.startswith(stem + ".") and n.endswith(".jsonl")
             and (n == stem + ".jsonl" or n[len(stem) + 1:-6].isdigit())]
    names.sort(key=lambda n: 0 if n == stem + ".jsonl" else int(n[len(stem) + 1:-6]), reverse=True)
    return [os.path.join(directory, n) for n in names]


def read_journal(state):
    """Every record of the root's journal and, in a fleet, of each instance's
    (state/journal/NAME.jsonl)."""
    paths = journal_files(state, "journal")
    fleet = os.path.join(state, "journal")
    if os.path.isdir(fleet):
        for stem in sorted(n[:-len(".generations")] for n in os.listdir(fleet) if n.endswith(".generations")):
            paths += journal_files(fleet, stem)
    records, torn = [], 0
    for path in paths:
        with open(path, "rb") as handle:
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


def is_claim_id(name):
    """Whether `name` begins as a claim id does (YYYYMMDDTHHMMSSZ-)."""
    return len(name) >= 17 and name[:8].isdigit() and name[8] == "T" and name[9:15].isdigit() and name[15:17] == "Z-"


def held(directory):
    """The entries of state/claimed or state/staging: a single daemon's directly,
    a fleet instance's inside its own directory (NAME/ID)."""
    found = []
    for name in listing(directory):
        path = os.path.join(directory, name)
        if not is_claim_id(name) and not name.startswith(".") and os.path.isdir(path):
            found += [name + "/" + entry for entry in listing(path)]
        else:
            found.append(name)
    return found


def check(root, drops, problems):
    """Appends every broken rule to `problems`; returns (outbox entries,
    quarantine entries, terminal records written by recovery, torn lines).

    A hostile drop may have been released (it went through intake again and
    ended once more) and its entries purged: its *lineage*, found by the drop's
    SHA-256, then has one terminal record per release plus one, each id at most
    one `released` and one `purged` record, and exactly one live end (an entry
    holding the original bytes, or one purged while it held them)."""
    for place in ("inbox", "state/claimed", "state/staging", "state/releasing", "state/purging"):
        left = held(os.path.join(root, place))
        if left:
            problems.append(f"{place} is not empty: {left[:5]}{' …' if len(left) > 5 else ''} ({len(left)})")
    outbox = outbox_entries(root, drops, problems)
    quarantine = quarantine_entries(root, problems)
    journal = Journal(os.path.join(root, "state"), drops, problems)
    for identifier in quarantine:
        if identifier not in journal.lineage:
            problems.append(f"quarantine/{identifier}: no terminal record")
    for drop in drops:
        records = journal.terminal.get(drop.name, [])
        if drop.expected == "accepted":
            if len(records) != 1:
                problems.append(f"{drop.name}: {len(records)} terminal records {[(r['event'], r.get('id')) for r in records]}")
            if drop.name not in outbox:
                problems.append(f"{drop.name} ({drop.delivery}): valid, and not in the outbox")
            else:
                check_accepted(root, drop, outbox[drop.name], records, problems)
        else:
            if drop.name in outbox:
                problems.append(f"{drop.name}: a hostile drop was accepted as outbox/{outbox[drop.name]}")
            check_lineage(drop, records, quarantine, journal, problems)
    return len(outbox), len(quarantine), journal.recovered, journal.torn


class Journal:
    """The journal's terminal records by drop (lineage), and its released and
    purged records by quarantine id."""

    def __init__(self, state, drops, problems):
        by_name = {drop.name: drop for drop in drops}
        by_sha = {drop.sha256: drop for drop in drops}
        records, self.torn = read_journal(state)
        self.terminal, self.lineage, self.released, self.purged = {}, {}, {}, {}
        claimed = set()
        for record in records:
            event, identifier = record["event"], record.get("id")
            if event == "claimed":
                claimed.add(identifier)
            elif event in TERMINAL:
                drop = by_sha.get(record.get("sha256")) or by_name.get(record.get("drop"))
                if drop is None:
                    problems.append(f"terminal record for a drop nobody dropped: {record}")
                    continue
                self.terminal.setdefault(drop.name, []).append(record)
                if identifier in self.lineage:
                    problems.append(f"id {identifier}: a second terminal record")
                self.lineage[identifier] = drop
            elif event in ("released", "purged"):
                counts = self.released if event == "released" else self.purged
                counts[identifier] = counts.get(identifier, 0) + 1
        for event, counts in (("released", self.released), ("purged", self.purged)):
            for identifier, count in counts.items():
                if count > 1:
                    problems.append(f"id {identifier}: {count} {event} records")
                if identifier not in self.lineage:
                    problems.append(f"id {identifier}: {event} but never ended")
        for identifier in sorted(i for i in claimed - set(self.lineage) if i):
            problems.append(f"id {identifier}: claimed record without a terminal record")
        self.recovered = sum(1 for rs in self.terminal.values() for r in rs if r.get("recovered"))


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


def quarantine_entries(root, problems):
    """Quarantine id -> (report, the drop's bytes or None once released)."""
    found = {}
    for entry in listing(os.path.join(root, "quarantine")):
        directory = os.path.join(root, "quarantine", entry)
        try:
            with open(os.path.join(directory, "report.json")) as handle:
                report = json.load(handle)
        except (OSError, ValueError) as error:
            problems.append(f"quarantine/{entry}: no readable report ({error})")
            continue
        try:
            with open(os.path.join(directory, "drop"), "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            data = None
        found[entry] = (report, data)
    return found


MANIFEST = ".airlock:manifest.json"


def check_accepted(root, drop, entry, records, problems):
    held = tree(os.path.join(root, "outbox", entry))
    # Every accepted entry carries airlock's manifest beside the archive's files.
    if MANIFEST not in held:
        problems.append(f"{drop.name}: outbox/{entry} has no {MANIFEST}")
    held.pop(MANIFEST, None)
    if held != drop.files:
        problems.append(f"{drop.name}: outbox/{entry} does not hold the archive's files byte for byte")
    for record in records:
        if record["event"] != "accepted" or record.get("output") != "outbox/" + entry:
            problems.append(f"{drop.name}: journal says {record['event']} {record.get('output')}, outbox has {entry}")


def check_lineage(drop, records, quarantine, journal, problems):
    identifiers = [record.get("id") for record in records]
    releases = sum(journal.released.get(i, 0) for i in identifiers)
    if len(records) != 1 + releases:
        problems.append(f"{drop.name}: {len(records)} terminal records after {releases} releases "
                        f"{[(r['event'], r.get('id')) for r in records]}")
    live = 0
    for record in records:
        identifier = record.get("id")
        released, purged = journal.released.get(identifier, 0), journal.purged.get(identifier, 0)
        if record["event"] != "rejected":
            problems.append(f"{drop.name}: a hostile drop ended {record['event']} as {identifier}")
            continue
        if identifier not in quarantine:
            if not purged:
                problems.append(f"{drop.name}: rejected as {identifier}, but no such entry and no purged record")
            live += 0 if released else 1
            continue
        report, data = quarantine[identifier]
        if purged:
            problems.append(f"{drop.name}: quarantine/{identifier} is still there after its purged record")
        if report.get("reason") != drop.reason:
            problems.append(f"{drop.name}: rejected as {report.get('reason')}, expected {drop.reason}")
        if data is None and not released:
            problems.append(f"{drop.name}: quarantine/{identifier} lost its drop without a released record")
        elif data is not None and released:
            problems.append(f"{drop.name}: quarantine/{identifier} still holds its drop after its released record")
        elif data is not None:
            live += 1
            if data != drop.data:
                problems.append(f"{drop.name}: quarantine/{identifier}/drop is not the original bytes")
    if live != 1:
        problems.append(f"{drop.name}: {live} live copies (held in the quarantine or purged while held)")


def settle(supervisor, root, seconds):
    """Waits until the inbox and the claims have stayed empty for a while."""
    deadline = time.monotonic() + seconds
    quiet_since = None
    while time.monotonic() < deadline:
        if not supervisor.running():
            return False
        busy = listing(os.path.join(root, "inbox")) or held(os.path.join(root, "state/claimed"))
        if not busy:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 1.5:
                return True
        else:
            quiet_since = None
        time.sleep(0.1)
    return False
