#!/usr/bin/env python3
"""Chaos soak for airlock: producers drop valid and hostile archives into a
running `airlock run` daemon (by rename and by write-and-close) while the daemon
is SIGKILLed at random moments and restarted. At the end every drop must have
ended exactly once (an outbox entry with the right bytes, or a quarantine entry
holding the original bytes), with exactly one terminal journal record, and
inbox, claims and staging must be empty with no decoder left running.

    python3 soak/soak.py --airlock .build/debug/airlock --seconds 600

Prints the figures and exits 1 on any problem (2 on a usage or set-up error).
Standard library only.
"""

import argparse
import ctypes
import io
import json
import os
import random
import shutil
import signal
import sys
import tarfile
import tempfile
import threading
import time
import zipfile

PR_SET_CHILD_SUBREAPER = 36
TERMINAL = ("accepted", "rejected")


# ---------------------------------------------------------------- drops

def random_bytes(rng, low, high):
    return rng.randbytes(rng.randint(low, high))


def valid_zip(rng, stem):
    files = {f"{stem}/f{i}.bin": random_bytes(rng, 1, 20000) for i in range(rng.randint(1, 3))}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue(), files


def valid_tgz(rng, stem):
    files = {f"{stem}/t{i}.bin": random_bytes(rng, 1, 20000) for i in range(rng.randint(1, 3))}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 1_700_000_000
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue(), files


def traversal_zip(rng, stem):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("inside.txt", random_bytes(rng, 1, 2000))
        archive.writestr(zipfile.ZipInfo(f"../escape-{stem}.txt"), b"outside\n")
    return buffer.getvalue(), None


def garbage(rng, stem):
    return b"NOT AN ARCHIVE " + random_bytes(rng, 0, 5000), None


def truncated_zip(rng, stem):
    data, _ = valid_zip(rng, stem)
    return data[: max(40, len(data) // 2)], None


# kind -> (maker, suffix, expected outcome, expected reason)
KINDS = {
    "valid": (valid_zip, ".zip", "accepted", None),
    "validtgz": (valid_tgz, ".tar.gz", "accepted", None),
    "traversal": (traversal_zip, ".zip", "rejected", "unsafe-path"),
    "garbage": (garbage, ".dat", "rejected", "unsupported-format"),
    "truncated": (truncated_zip, ".zip", "rejected", "corrupt-archive"),
}
WEIGHTS = {"valid": 4, "validtgz": 2, "traversal": 2, "garbage": 1, "truncated": 1}


class Drop:
    def __init__(self, name, stem, kind, data, files, delivery):
        self.name, self.stem, self.kind, self.data, self.files, self.delivery = name, stem, kind, data, files, delivery

    @property
    def expected(self):
        return KINDS[self.kind][2]

    @property
    def reason(self):
        return KINDS[self.kind][3]


class Producer(threading.Thread):
    """Drops archives into the inbox until told to stop, each by one of the three ways."""

    def __init__(self, index, inbox, outside, seed, pause, stop, ledger, lock):
        super().__init__(daemon=True)
        self.index, self.inbox, self.outside, self.pause = index, inbox, outside, pause
        self.rng = random.Random(seed)
        self.stop, self.ledger, self.lock = stop, ledger, lock
        self.failure = None

    def run(self):
        try:
            sequence = 0
            kinds = [k for k, w in WEIGHTS.items() for _ in range(w)]
            while not self.stop.is_set():
                sequence += 1
                kind = self.rng.choice(kinds)
                maker, suffix, _, _ = KINDS[kind]
                stem = f"p{self.index}-{sequence:06d}-{kind}"
                data, files = maker(self.rng, stem)
                delivery = self.rng.choice(["rename-in-inbox", "rename-from-outside", "write-and-close"])
                drop = Drop(stem + suffix, stem, kind, data, files, delivery)
                with self.lock:
                    self.ledger.append(drop)
                self.deliver(drop)
                time.sleep(self.rng.uniform(0, self.pause))
        except Exception as error:  # reported as a problem by the main thread
            self.failure = f"producer {self.index}: {error!r}"

    def deliver(self, drop):
        target = os.path.join(self.inbox, drop.name)
        if drop.delivery == "rename-in-inbox":
            temporary = target + ".part"
            with open(temporary, "wb") as handle:
                handle.write(drop.data)
            os.rename(temporary, target)
        elif drop.delivery == "rename-from-outside":
            temporary = os.path.join(self.outside, drop.name)
            with open(temporary, "wb") as handle:
                handle.write(drop.data)
            os.rename(temporary, target)
        else:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                cut = self.rng.randint(0, len(drop.data))
                os.write(fd, drop.data[:cut])
                time.sleep(self.rng.uniform(0, 0.05))
                view = memoryview(drop.data)[cut:]
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)


# ---------------------------------------------------------------- processes

def children_of(pid):
    """Live (not zombie) processes whose parent is `pid`: pid -> command line."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) != pid or fields[0] == "Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                found[int(entry)] = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError, ValueError):
            continue
    return found


class Supervisor:
    """Starts, kills and reaps the daemon; as a child subreaper it also inherits
    (and so can see) any decoder that outlives a killed daemon."""

    def __init__(self, airlock, root, logs):
        self.airlock, self.root, self.logs = airlock, root, logs
        self.pid = None
        self.exits = {}
        self.lives = 0
        self.environment = {k: v for k, v in os.environ.items()
                            if not k.startswith("AIRLOCK_TEST_") and k != "NOTIFY_SOCKET"}

    def start(self):
        self.lives += 1
        out = os.path.join(self.logs, "daemon.out")
        err = os.path.join(self.logs, "daemon.err")
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
            (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
        ]
        self.pid = os.posix_spawn(self.airlock, [self.airlock, "run", "--root", self.root],
                                  self.environment, file_actions=actions)

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.exits[pid] = status

    def running(self):
        self.reap()
        return self.pid is not None and self.pid not in self.exits

    def wait(self, pid, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.reap()
            if pid in self.exits:
                return self.exits[pid]
            time.sleep(0.02)
        return None

    def survivors(self, grace):
        """Children other than the daemon still alive after `grace` seconds."""
        deadline = time.monotonic() + grace
        while True:
            self.reap()
            left = {p: c for p, c in children_of(os.getpid()).items() if p != self.pid or not self.running()}
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.05)


# ---------------------------------------------------------------- checks

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
            result[relative] = open(path, "rb").read() if os.path.isfile(path) and not os.path.islink(path) else None
    return result


def listing(directory):
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def check(root, drops, problems):
    state = os.path.join(root, "state")
    by_name = {drop.name: drop for drop in drops}
    by_stem = {drop.stem: drop for drop in drops}

    for place in ("inbox", "state/claimed", "state/staging", "state/releasing", "state/purging"):
        left = listing(os.path.join(root, place))
        if left:
            problems.append(f"{place} is not empty: {left[:5]}{' …' if len(left) > 5 else ''} ({len(left)})")

    outbox = {}
    for entry in listing(os.path.join(root, "outbox")):
        drop = by_stem.get(entry)
        if drop is None:
            problems.append(f"unexpected outbox entry {entry!r} (a drop committed twice, or a name nobody dropped)")
            continue
        outbox[drop.name] = entry
    quarantine = {}
    for entry in listing(os.path.join(root, "quarantine")):
        directory = os.path.join(root, "quarantine", entry)
        try:
            report = json.load(open(os.path.join(directory, "report.json")))
        except (OSError, ValueError) as error:
            problems.append(f"quarantine/{entry}: no readable report ({error})")
            continue
        name = report.get("drop")
        if name not in by_name:
            problems.append(f"quarantine/{entry}: report names a drop nobody dropped: {name!r}")
            continue
        if name in quarantine:
            problems.append(f"{name}: quarantined twice ({quarantine[name][0]}, {entry})")
        quarantine[name] = (entry, report, directory)

    records, torn = read_journal(state)
    terminal = {}
    claimed_ids = set()
    for record in records:
        if record["event"] == "claimed":
            claimed_ids.add(record.get("id"))
        if record["event"] in TERMINAL:
            name = record.get("drop")
            if name not in by_name:
                problems.append(f"terminal record for a drop nobody dropped: {record}")
                continue
            terminal.setdefault(name, []).append(record)
    ended_ids = {r.get("id") for rs in terminal.values() for r in rs}
    for identifier in sorted(i for i in claimed_ids - ended_ids if i):
        problems.append(f"id {identifier}: claimed record without a terminal record")

    for drop in drops:
        places = (drop.name in outbox) + (drop.name in quarantine)
        if places != 1:
            problems.append(f"{drop.name} ({drop.delivery}): in {places} places (outbox: {drop.name in outbox}, quarantine: {drop.name in quarantine})")
        records_for = terminal.get(drop.name, [])
        if len(records_for) != 1:
            problems.append(f"{drop.name}: {len(records_for)} terminal records {[(r['event'], r.get('id')) for r in records_for]}")
        if drop.name in outbox:
            if drop.expected != "accepted":
                problems.append(f"{drop.name}: a hostile drop was accepted")
            elif tree(os.path.join(root, "outbox", outbox[drop.name])) != drop.files:
                problems.append(f"{drop.name}: outbox/{outbox[drop.name]} does not hold the archive's files byte for byte")
            for record in records_for:
                if record["event"] != "accepted" or record.get("output") != "outbox/" + outbox[drop.name]:
                    problems.append(f"{drop.name}: journal says {record['event']} {record.get('output')}, outbox has {outbox[drop.name]}")
        if drop.name in quarantine:
            entry, report, directory = quarantine[drop.name]
            try:
                original = open(os.path.join(directory, "drop"), "rb").read()
            except OSError:
                original = None
            if original != drop.data:
                problems.append(f"{drop.name}: quarantine/{entry}/drop is not the original bytes")
            if drop.expected != "rejected":
                problems.append(f"{drop.name}: a valid drop was rejected: {report.get('reason')}: {report.get('detail')}")
            elif report.get("reason") != drop.reason:
                problems.append(f"{drop.name}: rejected as {report.get('reason')}, expected {drop.reason}")
            for record in records_for:
                if record["event"] != "rejected" or record.get("id") != entry:
                    problems.append(f"{drop.name}: journal says {record['event']} {record.get('id')}, quarantine has {entry}")
    recovered = sum(1 for rs in terminal.values() for r in rs if r.get("recovered"))
    return len(outbox), len(quarantine), recovered, torn


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


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--airlock", required=True, help="the airlock binary (airlock-decoder beside it)")
    parser.add_argument("--seconds", type=float, default=60, help="how long producers drop and the daemon is killed")
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.15, help="a producer's longest pause between drops, seconds")
    parser.add_argument("--kill-min", type=float, default=0.3, help="shortest life of a daemon before its SIGKILL")
    parser.add_argument("--kill-max", type=float, default=4.0, help="longest life of a daemon before its SIGKILL")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the soak's directory even when all is well")
    options = parser.parse_args()

    airlock = os.path.abspath(options.airlock)
    if not os.access(airlock, os.X_OK):
        print(f"soak: {airlock} is not an executable", file=sys.stderr)
        return 2
    seed = options.seed if options.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("soak: cannot become a child subreaper; orphaned decoders would go unseen", file=sys.stderr)
        return 2

    base = tempfile.mkdtemp(prefix="airlock-soak.")
    root, logs, outside = (os.path.join(base, n) for n in ("root", "logs", "outside"))
    os.mkdir(logs)
    os.mkdir(outside)
    import subprocess
    made = subprocess.run([airlock, "init", "--root", root], capture_output=True, text=True)
    if made.returncode != 0:
        print(f"soak: airlock init failed: {made.stderr}", file=sys.stderr)
        return 2
    inbox = os.path.join(root, "inbox")

    problems = []
    supervisor = Supervisor(airlock, root, logs)
    stop = threading.Event()
    ledger, lock = [], threading.Lock()
    producers = [Producer(i + 1, inbox, outside, rng.randrange(1 << 32), options.pause, stop, ledger, lock)
                 for i in range(options.producers)]
    started = time.monotonic()
    deadline = started + options.seconds
    for producer in producers:
        producer.start()
    kills = 0
    orphans = 0
    while time.monotonic() < deadline:
        supervisor.start()
        life_end = min(time.monotonic() + rng.uniform(options.kill_min, options.kill_max), deadline)
        while time.monotonic() < life_end and supervisor.running():
            time.sleep(0.02)
        if not supervisor.running():
            status = supervisor.exits.get(supervisor.pid)
            problems.append(f"the daemon (pid {supervisor.pid}) exited on its own with wait status {status}; see {logs}/daemon.err")
            continue
        if time.monotonic() >= deadline:
            break
        os.kill(supervisor.pid, signal.SIGKILL)
        kills += 1
        supervisor.wait(supervisor.pid, 10)
        left = supervisor.survivors(grace=3)
        for pid, command in left.items():
            orphans += 1
            problems.append(f"after kill {kills}: pid {pid} ({command}) outlived the daemon by 3 s")
            os.kill(pid, signal.SIGKILL)
    stop.set()
    for producer in producers:
        producer.join()
        if producer.failure:
            problems.append(producer.failure)
    if not supervisor.running():
        supervisor.start()
    settled = settle(supervisor, root, ledger, seconds=120 + len(ledger) * 0.05)
    if not settled:
        problems.append("the last daemon did not finish the drops within the time allowed")
    os.kill(supervisor.pid, signal.SIGTERM)
    status = supervisor.wait(supervisor.pid, 60)
    if status is None or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        problems.append(f"the last daemon did not stop cleanly on SIGTERM (wait status {status})")
        if status is None:
            os.kill(supervisor.pid, signal.SIGKILL)
            supervisor.wait(supervisor.pid, 10)
    for pid, command in supervisor.survivors(grace=3).items():
        problems.append(f"at the end: pid {pid} ({command}) is still running")
        os.kill(pid, signal.SIGKILL)

    accepted, rejected, recovered, torn = check(root, ledger, problems)
    elapsed = time.monotonic() - started
    deliveries = {}
    for drop in ledger:
        deliveries[drop.delivery] = deliveries.get(drop.delivery, 0) + 1
    hostile = sum(1 for drop in ledger if drop.expected == "rejected")
    print(f"soak: {elapsed:.0f} s, seed {seed}")
    print(f"drops      {len(ledger)} ({len(ledger) - hostile} valid, {hostile} hostile; "
          + ", ".join(f"{n} {k}" for k, n in sorted(deliveries.items())) + ")")
    print(f"outcomes   {accepted} in the outbox, {rejected} in the quarantine; {recovered} terminal records written by recovery")
    print(f"kills      {kills} SIGKILLs over {supervisor.lives} daemon starts; {orphans} processes outlived their daemon")
    print(f"journal    {torn} torn lines")
    print(f"problems   {len(problems)}")
    for problem in problems[:40]:
        print(f"  - {problem}")
    if len(problems) > 40:
        print(f"  … and {len(problems) - 40} more")
    if problems or options.keep:
        print(f"kept for inspection: {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
