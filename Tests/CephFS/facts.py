#!/usr/bin/env python3
"""The facts of CephFS a fleet of airlock instances on one shared root rests on,
checked from two ceph-fuse mounts of a one-node cluster (two clients of the
MDS, as two hosts would be):

- renameat2(RENAME_NOREPLACE) is refused with EINVAL, so a commit falls back
  to plain rename(2);
- two clients renaming one source (a drop claimed by two instances): exactly
  one wins, the other gets ENOENT, and the file is in the winner's place only;
- a non-empty directory renamed onto a non-empty one fails with ENOTEMPTY or
  EEXIST (the name is taken), and onto an empty one replaces it (why no empty
  directory may ever stand in the outbox);
- POSIX, OFD and flock locks taken through one mount are seen through the
  other, and a SIGKILLed holder's lock is freed within LOCK_FREED seconds;
- with --freeze: a client frozen (SIGSTOP) past the MDS's session_timeout is
  evicted, its lock freed, and once thawed it is fenced (its calls fail).

Fails (exit 1) when any of them no longer holds, so a Ceph upgrade that changes
one is noticed before a fleet relies on it. Prints the figures measured.

    python3 Tests/CephFS/facts.py [--races 200] [--freeze]

Standard library only; needs root and the ceph, ceph-mds and ceph-fuse packages.
"""
import argparse
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repository
from cluster import SESSION_TIMEOUT, Cluster  # noqa: E402

RENAME_NOREPLACE = 1
AT_FDCWD = -100
LOCK_FREED = 15.0     # seconds: a killed holder's lock must be free by then (2 ms to 5 s measured)
FENCE_BOUND = SESSION_TIMEOUT + 60  # a frozen client's lock freed by eviction within this
LOCK_KINDS = ("posix", "ofd", "flock")
ANSWER_BOUND = 30.0   # seconds: a call through ceph-fuse unanswered by then is a hang


class Hung(Exception):
    pass


# --- the worker: one per mount, running inside the mount's namespace ------------------

def flock_struct():
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (and padding to 32 bytes)
    return struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)


def try_lock(fd, kind):
    """A non-blocking exclusive lock of `kind` on `fd`."""
    if kind == "posix":
        fcntl.fcntl(fd, fcntl.F_SETLK, flock_struct())
    elif kind == "ofd":
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, flock_struct())
    else:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


class Worker:
    """Answers one JSON command a line with one JSON result a line: "ok" or an errno name."""

    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.held = {}

    def renameat2(self, source, target):
        if self.libc.renameat2(AT_FDCWD, source.encode(), AT_FDCWD, target.encode(), RENAME_NOREPLACE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")

    def perform(self, command):
        op = command["op"]
        if "at" in command:
            time.sleep(max(0.0, command["at"] - time.monotonic()))
        if op == "write":
            with open(command["path"], "wb") as handle:
                handle.write(command["data"].encode())
        elif op == "mkdir":
            os.mkdir(command["path"])
        elif op == "rename":
            os.rename(command["source"], command["target"])
        elif op == "renameat2":
            self.renameat2(command["source"], command["target"])
        elif op == "exists":
            return "ok" if os.path.lexists(command["path"]) else "ENOENT"
        elif op == "lock":
            fd = os.open(command["path"], os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                try_lock(fd, command["kind"])
            except BaseException:
                os.close(fd)
                raise
            self.held[command["path"], command["kind"]] = fd
        elif op == "unlock":
            os.close(self.held.pop((command["path"], command["kind"])))
        elif op == "list":
            return os.listdir(command["path"])
        elif op == "stat":
            os.stat(command["path"])
        else:
            raise ValueError(f"unknown op {op!r}")
        return "ok"

    def serve(self):
        for line in sys.stdin:
            try:
                result = self.perform(json.loads(line))
            except OSError as error:
                result = errno.errorcode.get(error.errno, str(error.errno))
            print(json.dumps(result), flush=True)


# --- the test: drives one worker per mount ---------------------------------------------

class Client:
    """A worker inside one mount's namespace; paths are relative to the mount's root."""

    def __init__(self, mount):
        self.mount = mount
        self.process = subprocess.Popen(mount.enter([sys.executable, os.path.abspath(__file__), "--worker"]),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, op, **fields):
        for key in ("path", "source", "target"):
            if key in fields:
                fields[key] = os.path.join(self.mount.path, fields[key])
        self.process.stdin.write(json.dumps(dict(op=op, **fields)) + "\n")
        self.process.stdin.flush()

    def receive(self, seconds=ANSWER_BOUND):
        """The worker's answer; a call through ceph-fuse unanswered after `seconds` is a hung client."""
        ready, _, _ = select.select([self.process.stdout], [], [], seconds)
        if not ready:
            raise Hung(f"mount {self.mount.name}: no answer within {seconds:.0f} s")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker in mount {self.mount.name} ended")
        return json.loads(line)

    def call(self, op, **fields):
        self.send(op, **fields)
        return self.receive()

    def close(self):
        self.process.stdin.close()
        self.process.wait(10)


class Facts:
    def __init__(self, cluster, races):
        self.cluster, self.races = cluster, races
        self.a, self.b = cluster.mount("a"), cluster.mount("b")
        self.one, self.two = Client(self.a), Client(self.b)
        self.failures = []
        self.probes = []

    def expect(self, fact, condition, detail=""):
        print(f"{'ok  ' if condition else 'FAIL'} {fact}{': ' + detail if detail else ''}", flush=True)
        if not condition:
            self.failures.append(fact)

    def noreplace(self):
        self.one.call("write", path="nr-source", data="x")
        self.one.call("write", path="nr-target", data="y")
        for client in (self.one, self.two):
            result = client.call("renameat2", source="nr-source", target="nr-fresh")
            self.expect(f"renameat2(RENAME_NOREPLACE) through mount {client.mount.name} is refused with EINVAL",
                        result == "EINVAL", result)

    def rename_races(self):
        self.one.call("mkdir", path="inbox")
        for client in (self.one, self.two):
            client.call("mkdir", path=f"claimed-{client.mount.name}")
        outcomes, problems = {}, []
        for race in range(self.races):
            name = f"drop-{race:04d}"
            self.one.call("write", path=f"inbox/{name}", data=name)
            self.two.call("stat", path=f"inbox/{name}")  # the second client has looked it up too
            at = time.monotonic() + 0.02
            for client in (self.one, self.two):
                client.send("rename", source=f"inbox/{name}", target=f"claimed-{client.mount.name}/{name}", at=at)
            results = (self.one.receive(), self.two.receive())
            outcomes[results] = outcomes.get(results, 0) + 1
            if sorted(results) != ["ENOENT", "ok"]:
                problems.append(f"race {race}: {results}")
                continue
            winner = self.one if results[0] == "ok" else self.two
            # Only the winner's place is looked up, never the loser's target: see lost_target_lookup.
            for client in (self.one, self.two):
                if client.call("exists", path=f"claimed-{winner.mount.name}/{name}") != "ok":
                    problems.append(f"race {race}: mount {client.mount.name} does not see the file in the winner's place")
        figures = ", ".join(f"{n}× {a}/{b}" for (a, b), n in sorted(outcomes.items()))
        self.expect(f"rename(2) of one source by two clients: one winner, the other ENOENT ({self.races} races)",
                    not problems, figures + ("; " + "; ".join(problems[:5]) if problems else ""))

    def directory_onto_directory(self):
        self.one.call("mkdir", path="full-1")
        self.one.call("write", path="full-1/manifest", data="1")
        self.one.call("mkdir", path="full-2")
        self.one.call("write", path="full-2/manifest", data="2")
        result = self.two.call("rename", source="full-2", target="full-1")
        self.expect("a non-empty directory renamed onto a non-empty one fails with ENOTEMPTY or EEXIST",
                    result in ("ENOTEMPTY", "EEXIST"), result)
        self.one.call("mkdir", path="empty")
        result = self.two.call("rename", source="full-2", target="empty")
        replaced = result == "ok" and self.one.call("exists", path="empty/manifest") == "ok"
        self.expect("a non-empty directory renamed onto an empty one replaces it", replaced, result)

    def lost_target_lookup(self, races=10):
        """ceph-fuse 16.2.15 (Debian bookworm): after losing a rename race, a lookup
        of the rename's target through the loser's client can wait for ever,
        unkillable (Client::_lookup: "rename is on the way, will wait for dn"; the
        client believes its refused rename still under way). Reported, not asserted:
        airlock never looks up the target of a rename it lost (a claim's target is a
        fresh id), and a fixed client needs no change."""
        self.one.call("mkdir", path="lost")
        answered = 0
        for race in range(races):
            name = f"lost-{race:02d}"
            self.one.call("write", path=f"lost/{name}", data=name)
            self.two.call("stat", path=f"lost/{name}")
            at = time.monotonic() + 0.02
            for client in (self.one, self.two):
                client.send("rename", source=f"lost/{name}", target=f"lost/{name}.{client.mount.name}", at=at)
            results = (self.one.receive(), self.two.receive())
            if sorted(results) != ["ENOENT", "ok"]:
                continue
            loser = self.two if results[0] == "ok" else self.one
            probe = Client(loser.mount)
            self.probes.append(probe)
            probe.send("exists", path=f"lost/{name}.{loser.mount.name}")
            try:
                probe.receive(5)
                answered += 1
            except Hung:
                print(f"note the loser of a rename race looked up its target: hangs (after {answered} that answered); "
                      "the ceph-fuse defect is still there", flush=True)
                return
        print(f"note the loser of a rename race looked up its target: answered {answered} times of {races}", flush=True)

    def locks(self):
        for kind in LOCK_KINDS:
            path = f"lock-{kind}"
            self.one.call("write", path=path, data="")
            held = self.one.call("lock", path=path, kind=kind)
            refused = self.two.call("lock", path=path, kind=kind)
            self.expect(f"a {kind} lock held through one mount is refused through the other",
                        held == "ok" and refused in ("EAGAIN", "EACCES"), f"{held}, then {refused}")
            self.one.call("unlock", path=path, kind=kind)
            self.killed_holder(kind, path)
            self.two.call("unlock", path=path, kind=kind)

    def killed_holder(self, kind, path):
        holder = Client(self.a)
        if holder.call("lock", path=path, kind=kind) != "ok":
            self.expect(f"a {kind} lock taken by a holder that is then SIGKILLed", False, "the holder could not lock")
            return
        os.kill(holder.process.pid, signal.SIGKILL)
        holder.process.wait()
        killed = time.monotonic()
        while self.two.call("lock", path=path, kind=kind) != "ok":
            if time.monotonic() - killed > LOCK_FREED:
                break
            time.sleep(0.01)
        waited = time.monotonic() - killed
        self.expect(f"a SIGKILLed holder's {kind} lock is free through the other mount within {LOCK_FREED:.0f} s",
                    waited <= LOCK_FREED, f"{waited * 1000:.0f} ms")

    def freeze(self):
        """The frozen client is the first mount's; it is evicted and cannot be used afterwards."""
        path = "lock-frozen"
        self.one.call("write", path=path, data="")
        self.one.call("lock", path=path, kind="flock")
        os.kill(self.a.fuse_pid(), signal.SIGSTOP)
        frozen = time.monotonic()
        try:
            # Through the other mount, even opening the file waits for the frozen
            # client's capabilities until the MDS evicts it.
            while True:
                self.two.send("lock", path=path, kind="flock")
                if self.two.receive(FENCE_BOUND) == "ok" or time.monotonic() - frozen > FENCE_BOUND:
                    break
                time.sleep(0.5)
            waited = time.monotonic() - frozen
        finally:
            os.kill(self.a.fuse_pid(), signal.SIGCONT)
        self.expect(f"a frozen client's lock is freed after session_timeout ({SESSION_TIMEOUT} s)",
                    SESSION_TIMEOUT - 1 <= waited <= FENCE_BOUND, f"{waited:.1f} s")
        time.sleep(1)
        try:
            result = self.one.call("write", path="after-thaw", data="late")
        except Hung:
            result = "hung"
        seen = self.two.call("exists", path="after-thaw")
        self.expect("the thawed client is fenced: its write fails and nothing it wrote appears",
                    result != "ok" and seen == "ENOENT", f"write {result}, seen through the other mount: {seen}")

    def close(self):
        """Kills the workers; one hung in ceph-fuse ends only once its mount is gone (reap)."""
        for client in [self.one, self.two] + self.probes:
            client.process.kill()

    def reap(self):
        for client in [self.one, self.two] + self.probes:
            client.process.wait()


def stop_on_sigterm(number, frame):
    raise SystemExit(128 + number)  # unwinds through the cluster's teardown


def main():
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=200, help="rename races between the two clients")
    parser.add_argument("--freeze", action="store_true",
                        help=f"also freeze a client past session_timeout (adds about {SESSION_TIMEOUT + 15} s)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        Worker().serve()
        return 0
    if os.geteuid() != 0:
        print("facts: needs root (mounts and /dev/fuse)", file=sys.stderr)
        return 77
    started = time.monotonic()
    with Cluster() as cluster:
        print(f"cluster up in {time.monotonic() - started:.1f} s", flush=True)
        facts = Facts(cluster, arguments.races)
        try:
            facts.noreplace()
            facts.rename_races()
            facts.directory_onto_directory()
            facts.locks()
            facts.lost_target_lookup()
            if arguments.freeze:
                facts.freeze()
        finally:
            facts.close()
    facts.reap()
    print(f"facts: {len(facts.failures)} failed, {time.monotonic() - started:.0f} s")
    return 1 if facts.failures else 0


if __name__ == "__main__":
    sys.exit(main())
