#!/usr/bin/env python3
"""Fleet soak for airlock: three instances (`airlock run --instance NAME`) share
one root on a local filesystem while producers drop valid and hostile archives.
Instances are SIGKILLed and restarted at random, and one at a time is frozen
(SIGSTOP) past a take-over: its instance lock is held by a small holder process
(AIRLOCK_TEST_INSTANCE_LOCK_HELD=1), which the soak kills while the instance is
stopped, as a shared filesystem's server frees a frozen client's locks when it
evicts it (its journal's lock, taken by the instance itself around each append,
stays held: the take-over waits for an append under way). Another instance must take it over within a poll interval (its
generation bumped); thawed (SIGCONT), the frozen instance must write nothing
more to its journal and exit with status 75. At the end every drop must have
ended exactly once across the fleet (an outbox entry with the right bytes, or a
quarantine entry holding the original bytes), with exactly one terminal record
across all journals, and nothing claimed or staged.

    python3 soak/fleet.py --airlock .build/debug/airlock --seconds 300

Prints the figures and exits 1 on any problem (2 on a usage or set-up error).
Standard library only.
"""

import argparse
import datetime
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repository
from checks import check, held, listing  # noqa: E402
from drops import Producer  # noqa: E402
from rig import initialise, prepare  # noqa: E402

FENCED_STATUS = 75
HOLDER = ("import fcntl, os, sys, time\n"
          "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
          "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
          "print('held', flush=True)\n"
          "time.sleep(1e9)\n")


def stamped(record):
    """A journal record's `time` (RFC 3339, UTC, milliseconds) as seconds since the epoch."""
    try:
        return datetime.datetime.strptime(record["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
    except (KeyError, ValueError):
        return float("inf")


def stopped(pid):
    """Whether every thread of `pid` is stopped (state T): SIGSTOP stops a process's
    threads one by one, not at one instant. True once it is gone."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] != "T":
                    return False
        except (OSError, IndexError):
            continue
    return True


class Instance:
    """One instance: its daemon's pid and the pid of the process holding its lock."""

    def __init__(self, name, soak):
        self.name, self.soak = name, soak
        self.pid = self.holder = None
        self.lives = 0
        self.environment = {k: v for k, v in os.environ.items() if not k.startswith("AIRLOCK_TEST_") and k != "NOTIFY_SOCKET"}
        self.environment["AIRLOCK_TEST_INSTANCE_LOCK_HELD"] = "1"
        if name in soak.options.rename_instances:
            self.environment["AIRLOCK_TEST_COMMIT_MODE"] = "rename"

    @property
    def record_path(self):
        return os.path.join(self.soak.root, "state", "instances", self.name + ".json")

    def record(self):
        try:
            with open(self.record_path) as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return {}

    def journal_size(self):
        try:
            return os.stat(os.path.join(self.soak.root, "state", "journal", self.name + ".jsonl")).st_size
        except FileNotFoundError:
            return 0

    def journal_tail(self, offset):
        """What the instance's journal holds past `offset` (a `claimed` line caught
        half-way by a freeze may land after it: it decides nothing)."""
        try:
            with open(os.path.join(self.soak.root, "state", "journal", self.name + ".jsonl"), "rb") as handle:
                handle.seek(offset)
                return handle.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def start(self):
        soak = self.soak
        lock = os.path.join(soak.root, "state", "instances", self.name + ".lock")
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, lock], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if holder.stdout.readline().strip() != b"held":
            holder.kill()
            holder.wait()
            return False
        self.holder = holder
        self.lives += 1
        logs = soak.logs
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.path.join(logs, self.name + ".out"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
            (os.POSIX_SPAWN_OPEN, 2, os.path.join(logs, self.name + ".err"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
        ]
        arguments = [soak.airlock, "run", "--root", soak.root, "--instance", self.name]
        with soak.lock:
            self.pid = os.posix_spawn(soak.airlock, arguments, self.environment, file_actions=actions)
            soak.exits.pop(self.pid, None)
        return True

    def release_lock(self):
        """Kills the lock's holder: the lock is free (the instance's death, or its eviction)."""
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()
            self.holder = None

    def running(self):
        self.soak.reap()
        return self.pid is not None and self.pid not in self.soak.exits

    def send(self, number):
        with self.soak.lock:
            if self.pid is None or self.pid in self.soak.exits:
                return False
            try:
                os.kill(self.pid, number)
            except ProcessLookupError:
                return False
            return True

    def wait(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.soak.reap()
            if self.pid in self.soak.exits:
                return self.soak.exits[self.pid]
            time.sleep(0.02)
        return None


def options():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--airlock", required=True, help="the airlock binary (airlock-decoder beside it)")
    parser.add_argument("--seconds", type=float, default=60, help="how long producers drop and instances are killed")
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.15, help="a producer's longest pause between drops, seconds")
    parser.add_argument("--chaos-min", type=float, default=0.5, help="shortest time between two acts of chaos")
    parser.add_argument("--chaos-max", type=float, default=3.0, help="longest time between two acts of chaos")
    parser.add_argument("--poll", type=int, default=1, help="watch.poll_seconds")
    parser.add_argument("--rename-instances", default="c",
                        help="comma-separated instances that commit by plain rename(2) (AIRLOCK_TEST_COMMIT_MODE)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the soak's directory even when all is well")
    parsed = parser.parse_args()
    parsed.rename_instances = set(filter(None, parsed.rename_instances.split(",")))
    return parsed


class FleetSoak:
    def __init__(self, options, airlock, base):
        self.options, self.airlock, self.base = options, airlock, base
        self.seed = options.seed if options.seed is not None else random.randrange(1 << 32)
        self.rng = random.Random(self.seed)
        self.root, self.logs, outside = (os.path.join(base, n) for n in ("root", "logs", "outside"))
        os.mkdir(self.logs)
        os.mkdir(outside)
        self.lock = threading.Lock()
        self.exits = {}
        self.instances = [Instance("abcdefghij"[i], self) for i in range(options.instances)]
        self.stop = threading.Event()
        self.ledger, ledger_lock = [], threading.Lock()
        inbox = os.path.join(self.root, "inbox")
        self.producers = [Producer(i + 1, inbox, outside, self.rng.randrange(1 << 32), options.pause, self.stop, self.ledger,
                                   ledger_lock) for i in range(options.producers)]
        self.problems = []
        self.kills = self.freezes = self.takeovers = 0
        self.takeover_seconds = []

    def reap(self):
        with self.lock:
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    return
                if pid == 0:
                    return
                self.exits[pid] = status

    def configure(self):
        path = os.path.join(self.root, "airlock.json")
        with open(path) as handle:
            configuration = json.load(handle)
        configuration["cluster"] = {"shared": True, "instance": "", "settled_writes": True}
        configuration["watch"]["poll_seconds"] = self.options.poll
        with open(path, "w") as handle:
            json.dump(configuration, handle, indent=2)
        os.makedirs(os.path.join(self.root, "state", "instances"), mode=0o700, exist_ok=True)

    def kill(self, instance):
        """SIGKILL: the instance dies, and with it its lock."""
        if instance.send(signal.SIGKILL):
            self.kills += 1
        instance.wait(10)
        instance.release_lock()

    def freeze(self, instance):
        """SIGSTOP, the lock freed behind its back, a take-over awaited, SIGCONT:
        the instance must write nothing more and exit 75."""
        record = instance.record()
        before = record.get("generation")
        if record.get("pid") != instance.pid or record.get("state") != "running":
            return  # still starting (its lock not yet its own): nothing to fence yet
        if not instance.send(signal.SIGSTOP):
            return
        self.freezes += 1
        # kill(2) returns before the process has stopped: wait until all its threads have.
        deadline = time.monotonic() + 10
        while not stopped(instance.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        journal = instance.journal_size()
        frozen_at = time.time()
        freed = time.monotonic()
        instance.release_lock()
        limit = self.options.poll * 3 + 30
        while time.monotonic() - freed < limit:
            record = instance.record()
            if record.get("generation") != before and record.get("state") == "taken-over":
                self.takeovers += 1
                self.takeover_seconds.append(time.monotonic() - freed)
                break
            time.sleep(0.05)
        else:
            if all(not other.running() for other in self.instances if other is not instance):
                instance.send(signal.SIGCONT)
                self.kill(instance)
                return  # nobody was left to take it over
            self.problems.append(f"instance {instance.name}: not taken over within {limit} s of its lock's release")
        instance.send(signal.SIGCONT)
        status = instance.wait(self.options.poll * 3 + 30)
        if status is None:
            self.problems.append(f"instance {instance.name}: still running 30 s after it was thawed past a take-over")
            self.kill(instance)
        elif not os.WIFEXITED(status) or os.WEXITSTATUS(status) != FENCED_STATUS:
            self.problems.append(f"instance {instance.name}: thawed past a take-over, ended with wait status {status}, not exit 75")
        # A record stamped before the freeze was being written when the freeze came
        # (past the instance's last look at its generation): only a filesystem that
        # fences the client stops that one. One stamped after it is an outcome decided
        # by a taken-over instance.
        for line in instance.journal_tail(journal).splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("event") in ("accepted", "rejected", "deferred") and stamped(record) > frozen_at:
                self.problems.append(f"instance {instance.name}: journalled an outcome it decided after its take-over: {line[:300]}")

    def chaos(self, deadline):
        for instance in self.instances:
            instance.start()
        for producer in self.producers:
            producer.start()
        while time.monotonic() < deadline:
            time.sleep(self.rng.uniform(self.options.chaos_min, self.options.chaos_max))
            for instance in self.instances:
                if not instance.running():
                    if instance.pid is not None and instance.pid in self.exits:
                        status = self.exits[instance.pid]
                        if not (os.WIFSIGNALED(status) or (os.WIFEXITED(status) and os.WEXITSTATUS(status) == FENCED_STATUS)):
                            self.problems.append(f"instance {instance.name} exited on its own with wait status {status}")
                    instance.release_lock()
                    instance.start()
            victim = self.rng.choice(self.instances)
            if self.rng.random() < 0.35 or self.freezes == 0:
                self.freeze(victim)
            else:
                self.kill(victim)
        self.stop.set()
        for producer in self.producers:
            producer.join()
            if producer.failure:
                self.problems.append(producer.failure)

    def settle(self, seconds):
        deadline = time.monotonic() + seconds
        quiet = None
        while time.monotonic() < deadline:
            busy = listing(os.path.join(self.root, "inbox")) or held(os.path.join(self.root, "state", "claimed"))
            if busy:
                quiet = None
            else:
                quiet = quiet or time.monotonic()
                if time.monotonic() - quiet > self.options.poll + 1.5:
                    return True
            time.sleep(0.1)
        return False

    def finish(self):
        for instance in self.instances:
            if not instance.running():
                instance.release_lock()
                # A peer taking the dead instance over holds its lock for a moment:
                # start() then cannot take it and must be tried again, or the
                # instance's last pid would stay the one chaos killed, and its wait
                # status be read below as a daemon that ignored SIGTERM.
                deadline = time.monotonic() + 30
                while not instance.start():
                    if time.monotonic() > deadline:
                        self.problems.append(f"instance {instance.name}: its lock stayed held 30 s after its death")
                        instance.pid = None
                        break
                    time.sleep(0.1)
        if not self.settle(120 + len(self.ledger) * 0.05):
            self.problems.append("the fleet did not finish the drops within the time allowed")
        for instance in self.instances:
            instance.send(signal.SIGTERM)
        for instance in self.instances:
            if instance.pid is None:
                continue
            status = instance.wait(60)
            if status is None or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                self.problems.append(f"instance {instance.name} did not stop cleanly on SIGTERM (wait status {status})")
                self.kill(instance)
            instance.release_lock()

    def report(self, elapsed):
        accepted, rejected, recovered, torn = check(self.root, self.ledger, self.problems)
        hostile = sum(1 for drop in self.ledger if drop.expected == "rejected")
        lives = sum(instance.lives for instance in self.instances)
        print(f"fleet soak: {elapsed:.0f} s, seed {self.seed}, {len(self.instances)} instances "
              f"(plain rename(2) commits: {','.join(sorted(self.options.rename_instances)) or 'none'})")
        print(f"drops      {len(self.ledger)} ({len(self.ledger) - hostile} valid, {hostile} hostile)")
        print(f"outcomes   {accepted} in the outbox, {rejected} in the quarantine; {recovered} terminal records written by recovery")
        print(f"kills      {self.kills} SIGKILLs over {lives} instance starts")
        taken = ", ".join(f"{s:.2f}" for s in sorted(self.takeover_seconds)[-3:])
        print(f"freezes    {self.freezes} frozen past a lock release, {self.takeovers} take-overs seen"
              + (f" (slowest {taken} s after the release)" if taken else ""))
        print(f"journal    {torn} torn lines")
        print(f"problems   {len(self.problems)}")
        for problem in self.problems[:40]:
            print(f"  - {problem}")


def main():
    arguments = options()
    prepared = prepare("fleet soak", arguments.airlock, "airlock-fleet-soak")
    if prepared is None:
        return 2
    airlock, base = prepared
    soak = FleetSoak(arguments, airlock, base)
    if not initialise("fleet soak", airlock, soak.root):
        return 2
    soak.configure()
    started = time.monotonic()
    soak.chaos(started + arguments.seconds)
    soak.finish()
    soak.report(time.monotonic() - started)
    if soak.problems or arguments.keep:
        print(f"kept for inspection: {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if soak.problems else 0


if __name__ == "__main__":
    sys.exit(main())
