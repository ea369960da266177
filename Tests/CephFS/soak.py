#!/usr/bin/env python3
"""A fleet of two airlock instances on a real CephFS, under chaos.

A one-node Ceph cluster (cluster.py) is mounted twice by ceph-fuse, each mount
in a mount namespace of its own, as two hosts would mount it; an instance runs
on each (`airlock run --instance a|b` inside the namespace, as a service user
with the unit's ambient capabilities, on a root with `cluster.shared`).
Producers on both mounts drop valid and hostile archives by rename (written
under a temporary name in the inbox or beside the root, then renamed in).
Instances are SIGKILLed and restarted at random; now and then a ceph-fuse
client is frozen (SIGSTOP) past the MDS's session_timeout: the MDS evicts it
and frees its instance's lock, the other instance must take the frozen one
over, and once thawed (SIGCONT) the frozen instance must end (a fenced client
fails its calls) having journalled nothing more; its mount is then made again.

At the end, with the soak/ checker (checks.py): every drop ended exactly once
across the fleet (an outbox entry with the archive's files, or a quarantine
entry with the original bytes), one terminal record each across the
instances' journals, nothing claimed or staged, no empty directory in the
outbox, nothing written outside the root, and the sentinel beside the inbox
unchanged.

    python3 Tests/CephFS/soak.py --airlock .build/debug/airlock --seconds 300

Prints the figures and exits 1 on any problem (2 on a set-up error).
Standard library only; needs root.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repository
HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPOSITORY, "soak"))
from checks import check, held, listing  # noqa: E402
from cluster import SESSION_TIMEOUT, Cluster  # noqa: E402
from drops import KINDS, WEIGHTS, Drop  # noqa: E402

SERVICE = "alceph-svc"
FENCED_STATUS = 75
SENTINEL = b"the sentinel beside the inbox\n"
# seconds from SIGTERM to an instance's exit. Each writes its metrics as it stops,
# stat-ing every quarantine entry, and on CephFS (ceph-fuse 16.2) each stat of an
# entry another client made waits for that client to give up its capabilities: an
# idle client (its instance stopped) takes seconds each, so with a few hundred
# entries the stop takes minutes. Hosts are stopped one at a time, each unmounting
# after its instance has stopped; the stop times are reported.
STOP_BOUND = 300


def run(arguments, **options):
    result = subprocess.run(arguments, capture_output=True, text=True, **options)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def unit_capabilities():
    """AmbientCapabilities= of deploy/airlock@.service, as setpriv's +cap,+cap list."""
    with open(os.path.join(REPOSITORY, "deploy", "airlock@.service"), encoding="utf-8") as unit:
        for line in unit:
            if line.startswith("AmbientCapabilities="):
                return ",".join("+" + n.lower().removeprefix("cap_") for n in line.split("=", 1)[1].split())
    return ""


class Instance:
    """One airlock instance on one mount."""

    def __init__(self, soak, mount):
        self.soak, self.mount, self.name = soak, mount, mount.name
        self.root = os.path.join(mount.path, "root")  # inside the namespace
        self.process = None
        self.lives = 0

    def start(self):
        self.lives += 1
        logs = self.soak.logs
        capabilities = self.soak.capabilities
        wrapper = ["setpriv", "--reuid", SERVICE, "--regid", SERVICE, "--init-groups"]
        if capabilities:
            wrapper += [f"--inh-caps={capabilities}", f"--ambient-caps={capabilities}"]
        environment = {k: v for k, v in os.environ.items() if not k.startswith("AIRLOCK_TEST_") and k != "NOTIFY_SOCKET"}
        with open(os.path.join(logs, f"{self.name}.err"), "ab") as err:
            self.process = subprocess.Popen(self.mount.enter(wrapper + ["--", self.soak.airlock, "run", "--root", self.root,
                                                                        "--instance", self.name]),
                                            stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=environment,
                                            preexec_fn=lambda: os.umask(0o077))

    def running(self):
        return self.process is not None and self.process.poll() is None

    def kill(self):
        if self.running():
            self.process.kill()
            self.process.wait()
            return True
        return False


class Producer(threading.Thread):
    """Drops archives by rename through one mount until told to stop; `gate` is
    held around each drop, so that a mount about to be frozen is left alone."""

    def __init__(self, soak, index, mount, seed):
        super().__init__(daemon=True)
        self.soak, self.index, self.mount = soak, index, mount
        self.rng = random.Random(seed)
        self.gate = threading.Lock()
        self.failure = None

    def run(self):
        kinds = [k for k, w in WEIGHTS.items() for _ in range(w)]
        sequence = 0
        try:
            while not self.soak.stop.is_set():
                sequence += 1
                kind = self.rng.choice(kinds)
                maker, suffix, _, _ = KINDS[kind]
                stem = f"{self.mount.name}{self.index}-{sequence:06d}-{kind}"
                data, files = maker(self.rng, stem)
                delivery = self.rng.choice(["rename-in-inbox", "rename-from-outside"])
                drop = Drop(stem + suffix, stem, kind, data, files, delivery)
                with self.gate:
                    self.deliver(drop)
                    with self.soak.ledger_lock:
                        self.soak.ledger.append(drop)
                time.sleep(self.rng.uniform(0, self.soak.options.pause))
        except Exception as error:  # reported as a problem by the main thread
            self.failure = f"producer {self.mount.name}{self.index}: {error!r}"

    def deliver(self, drop):
        inbox = self.mount.view("root", "inbox")
        temporary = (os.path.join(inbox, drop.name + ".part") if drop.delivery == "rename-in-inbox"
                     else self.mount.view("outside-" + self.mount.name, drop.name))
        with open(temporary, "wb") as handle:
            handle.write(drop.data)
        os.rename(temporary, os.path.join(inbox, drop.name))


def options():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--airlock", required=True, help="the airlock binary (airlock-decoder beside it)")
    parser.add_argument("--seconds", type=float, default=60, help="how long producers drop and chaos goes on")
    parser.add_argument("--producers", type=int, default=2, help="producers on each mount")
    parser.add_argument("--pause", type=float, default=0.2, help="a producer's longest pause between drops, seconds")
    parser.add_argument("--chaos-min", type=float, default=1.0, help="shortest time between two acts of chaos")
    parser.add_argument("--chaos-max", type=float, default=5.0, help="longest time between two acts of chaos")
    parser.add_argument("--freeze-chance", type=float, default=0.15, help="chance that an act of chaos is a freeze")
    parser.add_argument("--freezes", type=int, default=1,
                        help="at least this many freezes (after the first SIGKILL; one from mid-run if none yet)")
    parser.add_argument("--poll", type=int, default=1, help="watch.poll_seconds")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the logs even when all is well")
    return parser.parse_args()


class Soak:
    def __init__(self, options, cluster):
        self.options, self.cluster = options, cluster
        self.airlock = os.path.abspath(options.airlock)
        self.seed = options.seed if options.seed is not None else random.randrange(1 << 32)
        self.rng = random.Random(self.seed)
        self.logs = os.path.join(cluster.base, "log")
        self.capabilities = unit_capabilities()
        self.mounts = [cluster.mount("a"), cluster.mount("b")]
        self.instances = [Instance(self, mount) for mount in self.mounts]
        self.stop = threading.Event()
        self.ledger, self.ledger_lock = [], threading.Lock()
        self.producers = [Producer(self, i + 1, mount, self.rng.randrange(1 << 32))
                          for mount in self.mounts for i in range(options.producers)]
        self.problems = []
        self.kills = self.freezes = self.takeovers = self.fenced = 0
        self.takeover_seconds = []
        self.stop_seconds = {}

    def lay_out(self):
        """The root on the CephFS, laid out by `airlock init` as the service user."""
        first = self.mounts[0]
        root = first.view("root")
        os.mkdir(root)
        os.chown(root, *self.service_ids())
        os.chmod(root, 0o755)
        for mount in self.mounts:
            os.mkdir(mount.view("outside-" + mount.name))
        run(first.enter(["setpriv", "--reuid", SERVICE, "--regid", SERVICE, "--init-groups", "--",
                         self.airlock, "init", "--root", self.instances[0].root]))
        path = os.path.join(root, "airlock.json")
        with open(path) as handle:
            configuration = json.load(handle)
        configuration["cluster"] = {"shared": True, "instance": "", "settled_writes": False}
        configuration.setdefault("watch", {})["poll_seconds"] = self.options.poll
        with open(path, "w") as handle:
            json.dump(configuration, handle, indent=2)
        with open(os.path.join(root, "sentinel"), "wb") as handle:
            handle.write(SENTINEL)

    @staticmethod
    def service_ids():
        import pwd
        entry = pwd.getpwnam(SERVICE)
        return entry.pw_uid, entry.pw_gid

    def record(self, mount, name):
        """state/instances/NAME.json read through `mount`."""
        try:
            with open(mount.view("root", "state", "instances", name + ".json")) as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return {}

    def freeze(self, instance):
        """Its ceph-fuse frozen past session_timeout: evicted, its lock freed, taken
        over by the other instance; thawed, it must end without journalling more."""
        other = next(i for i in self.instances if i is not instance)
        if not instance.running() or not other.running():
            return
        record = self.record(other.mount, instance.name)
        if record.get("pid") != instance.process.pid or record.get("state") != "running":
            return  # still starting (its lock not yet its own): nothing to take over yet
        gates = [p.gate for p in self.producers if p.mount is instance.mount]
        for gate in gates:
            gate.acquire()
        try:
            before = record.get("generation")
            journal = self.journal_size(other.mount, instance.name)
            os.kill(instance.mount.fuse_pid(), signal.SIGSTOP)
            self.freezes += 1
            frozen = time.monotonic()
            limit = SESSION_TIMEOUT + 60 + self.options.poll * 3
            while time.monotonic() - frozen < limit:
                record = self.record(other.mount, instance.name)
                if record.get("generation") != before and record.get("state") == "taken-over":
                    self.takeovers += 1
                    self.takeover_seconds.append(time.monotonic() - frozen)
                    break
                if not other.running():
                    other.start()
                time.sleep(0.5)
            else:
                self.problems.append(f"instance {instance.name}: not taken over within {limit} s of its client's freeze")
            os.kill(instance.mount.fuse_pid(), signal.SIGCONT)
            try:
                status = instance.process.wait(60)
            except subprocess.TimeoutExpired:
                status = None
                self.problems.append(f"instance {instance.name}: still running 60 s after its evicted client was thawed")
                instance.kill()
            if status is not None:
                self.fenced += 1
            written = self.journal_tail(other.mount, instance.name, journal)
            if any(f'"event":"{event}"' in written for event in ("accepted", "rejected")):
                self.problems.append(f"instance {instance.name}: an outcome journalled after its freeze: {written[:300]}")
            instance.mount.remount()
            instance.start()
        finally:
            for gate in gates:
                gate.release()

    def journal_size(self, mount, name):
        try:
            return os.stat(mount.view("root", "state", "journal", name + ".jsonl")).st_size
        except FileNotFoundError:
            return 0

    def journal_tail(self, mount, name, offset):
        """What instance `name`'s journal holds past `offset`, read through `mount`; the
        instance's own record of being taken over comes from the other instance."""
        try:
            with open(mount.view("root", "state", "journal", name + ".jsonl"), "rb") as handle:
                handle.seek(offset)
                return handle.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def chaos(self, deadline):
        for instance in self.instances:
            instance.start()
        for producer in self.producers:
            producer.start()
        middle = time.monotonic() + (deadline - time.monotonic()) / 2
        while time.monotonic() < deadline:
            time.sleep(self.rng.uniform(self.options.chaos_min, self.options.chaos_max))
            for instance in self.instances:
                if not instance.running():
                    status = instance.process.returncode
                    if status not in (-signal.SIGKILL, FENCED_STATUS):
                        self.problems.append(f"instance {instance.name} exited on its own with status {status}")
                    instance.start()
            victim = self.rng.choice(self.instances)
            owed = self.freezes < self.options.freezes and time.monotonic() > middle
            if self.kills and (owed or self.rng.random() < self.options.freeze_chance):
                self.freeze(victim)
            elif victim.kill():
                self.kills += 1
        self.stop.set()
        for producer in self.producers:
            producer.join()
            if producer.failure:
                self.problems.append(producer.failure)

    def settle(self, seconds):
        root = self.mounts[0].view("root")
        deadline = time.monotonic() + seconds
        quiet = None
        while time.monotonic() < deadline:
            if listing(os.path.join(root, "inbox")) or held(os.path.join(root, "state", "claimed")):
                quiet = None
            else:
                quiet = quiet or time.monotonic()
                if time.monotonic() - quiet > self.options.poll + 2:
                    return True
            time.sleep(0.2)
        return False

    def finish(self):
        for instance in self.instances:
            if not instance.running():
                instance.start()
        if not self.settle(120 + len(self.ledger) * 0.1):
            self.problems.append("the fleet did not finish the drops within the time allowed")
        # A host at a time, as a rolling stop: SIGTERM its instance, wait, unmount.
        # The check then reads through the second mount alone.
        for instance in self.instances:
            stopping = time.monotonic()
            if instance.running():
                instance.process.send_signal(signal.SIGTERM)
            try:
                status = instance.process.wait(STOP_BOUND)
            except subprocess.TimeoutExpired:
                status = None
                instance.kill()
            self.stop_seconds[instance.name] = time.monotonic() - stopping
            if status != 0:
                self.problems.append(f"instance {instance.name} did not stop cleanly within {STOP_BOUND} s of "
                                     f"SIGTERM (status {status})")
            if instance.mount is self.mounts[0]:
                instance.mount.stop()

    def check_root(self):
        """The rules beyond checks.py: no empty outbox directory, the sentinel, nothing beside the root."""
        top = self.mounts[1].view()
        root = os.path.join(top, "root")
        for entry in listing(os.path.join(root, "outbox")):
            path = os.path.join(root, "outbox", entry)
            if os.path.isdir(path) and not os.listdir(path):
                self.problems.append(f"outbox/{entry} is an empty directory")
        with open(os.path.join(root, "sentinel"), "rb") as handle:
            if handle.read() != SENTINEL:
                self.problems.append("the sentinel beside the inbox changed")
        if sorted(os.listdir(top)) != ["outside-a", "outside-b", "root"]:
            self.problems.append(f"the file system's top holds {sorted(os.listdir(top))}")
        for mount in self.mounts:
            left = os.listdir(os.path.join(top, "outside-" + mount.name))
            if left:
                self.problems.append(f"a producer's temporary files are left: {left[:5]}")
        return root

    def report(self, elapsed):
        root = self.check_root()
        accepted, rejected, recovered, torn = check(root, self.ledger, self.problems)
        hostile = sum(1 for drop in self.ledger if drop.expected == "rejected")
        lives = sum(instance.lives for instance in self.instances)
        print(f"cephfs soak: {elapsed:.0f} s, seed {self.seed}, 2 instances on two ceph-fuse mounts")
        print(f"drops      {len(self.ledger)} ({len(self.ledger) - hostile} valid, {hostile} hostile)")
        print(f"outcomes   {accepted} in the outbox, {rejected} in the quarantine; "
              f"{recovered} terminal records written by recovery")
        print(f"kills      {self.kills} SIGKILLs over {lives} instance starts")
        taken = ", ".join(f"{s:.1f}" for s in sorted(self.takeover_seconds))
        logged = 0
        for instance in self.instances:
            with open(os.path.join(self.logs, f"{instance.name}.err"), errors="replace") as err:
                logged += sum(1 for line in err if line.startswith("airlock: take-over: instance "))
        print(f"freezes    {self.freezes} clients frozen past session_timeout ({SESSION_TIMEOUT} s), "
              f"{self.takeovers} take-overs seen" + (f" ({taken} s after the freeze)" if taken else "")
              + f", {self.fenced} thawed instances ended")
        print(f"take-overs {logged} in the instances' logs (of killed and of frozen instances)")
        print("stop       " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in sorted(self.stop_seconds.items()))
              + " from SIGTERM to exit")
        print(f"journal    {torn} torn lines")
        print(f"problems   {len(self.problems)}")
        for problem in self.problems[:40]:
            print(f"  - {problem}")


def stop_on_sigterm(number, frame):
    raise SystemExit(128 + number)  # unwinds through the cluster's teardown


def main():
    arguments = options()
    if not os.access(arguments.airlock, os.X_OK):
        print(f"cephfs soak: {arguments.airlock} is not an executable", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("cephfs soak: needs root (mounts, /dev/fuse, a service user)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    subprocess.run(["userdel", SERVICE], capture_output=True)
    run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/usr/sbin/nologin", SERVICE])
    started = time.monotonic()
    try:
        with Cluster() as cluster:
            soak = Soak(arguments, cluster)
            print(f"cluster up with two mounts in {time.monotonic() - started:.1f} s", flush=True)
            try:
                soak.lay_out()
                begun = time.monotonic()
                soak.chaos(begun + arguments.seconds)
                soak.finish()
                soak.report(time.monotonic() - begun)
            finally:
                soak.stop.set()
                for instance in soak.instances:
                    instance.kill()
            if soak.problems or arguments.keep:
                kept = tempfile.mkdtemp(prefix="airlock-cephfs-soak.")
                shutil.copytree(cluster.base + "/log", kept + "/log")
                print(f"kept for inspection: {kept} (the instances' and the cluster's logs)")
    finally:
        subprocess.run(["userdel", SERVICE], capture_output=True)
    return 1 if soak.problems else 0


if __name__ == "__main__":
    sys.exit(main())
