"""The soak's operator: releases and purges random quarantine entries while the
daemon runs, and SIGKILLs some of those commands part-way."""

import os
import random
import signal
import threading
import time


class Operator(threading.Thread):
    def __init__(self, root, logs, seed, supervisor, stop):
        super().__init__(daemon=True)
        self.root, self.supervisor, self.stop = root, supervisor, stop
        self.log = os.path.join(logs, "operator.log")
        self.rng = random.Random(seed)
        self.counts = {"release": 0, "purge": 0, "killed": 0}
        # How long a command takes when left alone, so kills land anywhere in it.
        self.duration = 0.2
        self.problems = []

    def run(self):
        quarantine = os.path.join(self.root, "quarantine")
        while not self.stop.wait(self.rng.uniform(0.1, 1.0)):
            held = [e for e in os.listdir(quarantine) if os.path.exists(os.path.join(quarantine, e, "drop"))]
            if not held:
                continue
            action = self.rng.choice(["release", "purge"])
            self.act(action, self.rng.choice(held))

    def act(self, action, identifier):
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ]
        pid = self.supervisor.spawn(["quarantine", action, identifier, "--root", self.root], actions, command=True)
        self.counts[action] += 1
        killed = False
        started = time.monotonic()
        if self.rng.random() < 0.5:
            time.sleep(self.rng.uniform(0, self.duration))
            killed = self.supervisor.send(pid, signal.SIGKILL)
        status = self.supervisor.wait(pid, 60)
        if not killed and status is not None:
            self.duration = 0.8 * self.duration + 0.2 * (time.monotonic() - started)
        if status is None:
            self.problems.append(f"quarantine {action} {identifier} did not finish in 60 s")
        elif os.WIFSIGNALED(status) and killed:
            self.counts["killed"] += 1
        elif not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            self.problems.append(f"quarantine {action} {identifier} ended with wait status {status}; see {self.log}")
