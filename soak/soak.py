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
import os
import random
import shutil
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repository
from checks import check, settle  # noqa: E402
from drops import Producer  # noqa: E402
from rig import initialise, prepare  # noqa: E402
from operator_desk import Operator  # noqa: E402



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
    """Starts, kills and reaps the daemon and the operator's commands; as a child
    subreaper it also inherits (and so can see) any decoder that outlives a
    killed daemon."""

    def __init__(self, airlock, root, logs):
        self.airlock, self.root, self.logs = airlock, root, logs
        self.pid = None
        self.exits = {}
        self.commands = set()
        self.lives = 0
        self.lock = threading.Lock()
        self.environment = {k: v for k, v in os.environ.items()
                            if not k.startswith("AIRLOCK_TEST_") and k != "NOTIFY_SOCKET"}

    def spawn(self, arguments, actions, command=False):
        """posix_spawn under the reaper's lock: pids are reused, and an exit reaped
        long ago under this number is not this process's."""
        with self.lock:
            pid = os.posix_spawn(self.airlock, [self.airlock] + arguments, self.environment, file_actions=actions)
            self.exits.pop(pid, None)
            if command:
                self.commands.add(pid)
        return pid

    def send(self, pid, number):
        """kill(2) of a child not reaped yet (a reaped pid may belong to anyone now)."""
        with self.lock:
            if pid in self.exits:
                return False
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                return False
            return True

    def start(self):
        self.lives += 1
        out = os.path.join(self.logs, "daemon.out")
        err = os.path.join(self.logs, "daemon.err")
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
            (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
        ]
        self.pid = self.spawn(["run", "--root", self.root], actions)

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
                self.commands.discard(pid)

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
        """Children other than the daemon and the operator's commands still alive
        after `grace` seconds."""
        deadline = time.monotonic() + grace
        while True:
            running = self.running()
            with self.lock:
                expected = set(self.commands) | ({self.pid} if running else set())
            left = {p: c for p, c in children_of(os.getpid()).items() if p not in expected}
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.05)


def options():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--airlock", required=True, help="the airlock binary (airlock-decoder beside it)")
    parser.add_argument("--seconds", type=float, default=60, help="how long producers drop and the daemon is killed")
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.15, help="a producer's longest pause between drops, seconds")
    parser.add_argument("--kill-min", type=float, default=0.3, help="shortest life of a daemon before its SIGKILL")
    parser.add_argument("--kill-max", type=float, default=4.0, help="longest life of a daemon before its SIGKILL")
    parser.add_argument("--no-operator", action="store_true",
                        help="no quarantine release/purge (some SIGKILLed) alongside the daemon")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the soak's directory even when all is well")
    return parser.parse_args()


class Soak:
    def __init__(self, options, airlock, base):
        self.options = options
        self.seed = options.seed if options.seed is not None else random.randrange(1 << 32)
        self.rng = random.Random(self.seed)
        self.base = base
        self.root, self.logs, outside = (os.path.join(base, n) for n in ("root", "logs", "outside"))
        os.mkdir(self.logs)
        os.mkdir(outside)
        self.supervisor = Supervisor(airlock, self.root, self.logs)
        self.stop = threading.Event()
        self.ledger, lock = [], threading.Lock()
        inbox = os.path.join(self.root, "inbox")
        self.producers = [Producer(i + 1, inbox, outside, self.rng.randrange(1 << 32), options.pause, self.stop, self.ledger, lock)
                          for i in range(options.producers)]
        self.operator = None if options.no_operator else Operator(self.root, self.logs, self.rng.randrange(1 << 32),
                                                                  self.supervisor, self.stop)
        self.problems = []
        self.kills = 0
        self.strays = 0
        self.orphans = 0

    def chaos(self, deadline):
        """Daemons started and SIGKILLed at random until the deadline, producers dropping all along."""
        for producer in self.producers:
            producer.start()
        if self.operator:
            self.operator.start()
        supervisor = self.supervisor
        while time.monotonic() < deadline:
            supervisor.start()
            life_end = min(time.monotonic() + self.rng.uniform(self.options.kill_min, self.options.kill_max), deadline)
            while time.monotonic() < life_end and supervisor.running():
                time.sleep(0.02)
            if not supervisor.running():
                self.problems.append(f"the daemon (pid {supervisor.pid}) exited on its own with wait status "
                                     f"{supervisor.exits.get(supervisor.pid)}; see {self.logs}/daemon.err")
                continue
            if time.monotonic() >= deadline:
                break
            supervisor.send(supervisor.pid, signal.SIGKILL)
            self.kills += 1
            supervisor.wait(supervisor.pid, 10)
            # PR_SET_PDEATHSIG kills a decoder with its daemon, but only once the
            # decoder has set it: one started just before the kill runs on a while.
            time.sleep(0.3)
            self.strays += len(supervisor.survivors(grace=0))
            for pid, command in supervisor.survivors(grace=3).items():
                self.orphans += 1
                self.problems.append(f"after kill {self.kills}: pid {pid} ({command}) outlived the daemon by 3 s")
                supervisor.send(pid, signal.SIGKILL)
        self.stop.set()
        for producer in self.producers:
            producer.join()
            if producer.failure:
                self.problems.append(producer.failure)
        if self.operator:
            self.operator.join()
            self.problems += self.operator.problems

    def finish(self):
        """A last daemon, started after every other process ended (so its recovery
        sees what they left), works off the backlog and is stopped with SIGTERM."""
        supervisor = self.supervisor
        if supervisor.send(supervisor.pid, signal.SIGKILL):
            self.kills += 1
            supervisor.wait(supervisor.pid, 10)
        supervisor.start()
        if not settle(supervisor, self.root, seconds=120 + len(self.ledger) * 0.05):
            self.problems.append("the last daemon did not finish the drops within the time allowed")
        supervisor.send(supervisor.pid, signal.SIGTERM)
        status = supervisor.wait(supervisor.pid, 60)
        if status is None or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            self.problems.append(f"the last daemon did not stop cleanly on SIGTERM (wait status {status})")
            if status is None:
                supervisor.send(supervisor.pid, signal.SIGKILL)
                supervisor.wait(supervisor.pid, 10)
        for pid, command in supervisor.survivors(grace=3).items():
            self.problems.append(f"at the end: pid {pid} ({command}) is still running")
            supervisor.send(pid, signal.SIGKILL)

    def report(self, elapsed):
        accepted, rejected, recovered, torn = check(self.root, self.ledger, self.problems)
        deliveries = {}
        for drop in self.ledger:
            deliveries[drop.delivery] = deliveries.get(drop.delivery, 0) + 1
        hostile = sum(1 for drop in self.ledger if drop.expected == "rejected")
        print(f"soak: {elapsed:.0f} s, seed {self.seed}")
        print(f"drops      {len(self.ledger)} ({len(self.ledger) - hostile} valid, {hostile} hostile; "
              + ", ".join(f"{n} {k}" for k, n in sorted(deliveries.items())) + ")")
        print(f"outcomes   {accepted} in the outbox, {rejected} in the quarantine; "
              f"{recovered} terminal records written by recovery")
        print(f"kills      {self.kills} SIGKILLs over {self.supervisor.lives} daemon starts; "
              f"{self.strays} processes still ran 0.3 s after their daemon's SIGKILL, {self.orphans} after 3 s")
        if self.operator:
            counts = self.operator.counts
            print(f"operator   {counts['release']} releases, {counts['purge']} purges, {counts['killed']} of them SIGKILLed")
        print(f"journal    {torn} torn lines")
        print(f"problems   {len(self.problems)}")
        for problem in self.problems[:40]:
            print(f"  - {problem}")
        if len(self.problems) > 40:
            print(f"  … and {len(self.problems) - 40} more")


def main():
    arguments = options()
    prepared = prepare("soak", arguments.airlock, "airlock-soak")
    if prepared is None:
        return 2
    airlock, base = prepared
    soak = Soak(arguments, airlock, base)
    if not initialise("soak", airlock, soak.root):
        return 2
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
