#!/usr/bin/env python3
"""A one-node Ceph cluster with a CephFS, mounted twice, for tests.

One mon, one mgr, one OSD on memstore (the objects live in the OSD's memory),
one MDS; no authentication (cephx none); every daemon bound to 127.0.0.1 on
ports chosen at random; configuration, data, sockets and logs under one
temporary directory. The file system is mounted by ceph-fuse once per mount
namespace (`unshare -m`, kept alive by a bind mount of /proc/PID/ns/mnt, so
that `nsenter --mount=FILE` runs a command inside it): two mounts behave as
two clients of the MDS, as two hosts would. The file system's `session_timeout`
and `session_autoclose` are 30 s (the least Ceph allows; 60 s and 300 s by
default), so a frozen client is evicted, blocklisted and its locks freed
quickly.

    python3 Tests/CephFS/cluster.py shell   # up, two mounts, a shell in the first; down on exit

As a module: `with Cluster() as cluster: a, b = cluster.mount("a"), cluster.mount("b")`.
Stopping unmounts, kills every daemon and removes the directory: nothing is left.

Standard library only; needs root (mounts, /dev/fuse) and Debian's ceph,
ceph-mds and ceph-fuse packages.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

SESSION_TIMEOUT = 30  # seconds; Ceph refuses less
FS_NAME = "airlock"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(what, predicate, seconds, interval=0.2):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise RuntimeError(f"ceph: {what} within {seconds} s")


class Mount:
    """One ceph-fuse client in a mount namespace of its own."""

    def __init__(self, cluster, name):
        self.cluster, self.name = cluster, name
        self.namespace = os.path.join(cluster.base, f"ns-{name}")
        self.path = os.path.join(cluster.base, f"mnt-{name}")  # the mount point, inside the namespace only
        self.holder = None   # `unshare -m` keeping the namespace while it is bound
        self.fuse = None     # the ceph-fuse process (foreground), inside the namespace
        self.generation = 0  # how many ceph-fuse clients this mount has had

    def enter(self, arguments):
        """The command line that runs `arguments` inside this mount's namespace."""
        return ["nsenter", f"--mount={self.namespace}", "--"] + list(arguments)

    def start(self):
        os.mkdir(self.path)
        open(self.namespace, "w").close()
        # unshare --mount=FILE binds the new namespace onto FILE, which must sit on a
        # private mount: the cluster's directory is bound onto itself as one.
        self.holder = subprocess.Popen(["unshare", f"--mount={self.namespace}", "--propagation", "private",
                                        "sleep", "infinity"])
        wait_until(f"namespace {self.name} bound", lambda: os.stat(self.namespace).st_ino != 0
                   and self.namespace_bound(), 10, 0.05)
        self.start_fuse()

    def start_fuse(self):
        self.generation += 1  # a new client name each time: an evicted one is blocklisted
        log = open(os.path.join(self.cluster.base, "log", f"fuse-{self.name}.out"), "ab")
        self.fuse = subprocess.Popen(self.enter(["ceph-fuse", "-f", "-c", self.cluster.conf, "--id",
                                                 f"fuse{self.name}{self.generation}", "--client_mountpoint=/",
                                                 self.path]),
                                     stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        wait_until(f"ceph-fuse {self.name} mounted", self.mounted, 30)

    def namespace_bound(self):
        with open("/proc/self/mountinfo") as handle:
            return any(line.split()[4] == self.namespace for line in handle)

    def mounted(self):
        if self.fuse.poll() is not None:
            raise RuntimeError(f"ceph: ceph-fuse {self.name} exited {self.fuse.returncode}; "
                               f"see {self.cluster.base}/log")
        result = subprocess.run(self.enter(["findmnt", "-n", "-t", "fuse.ceph-fuse", self.path]),
                                capture_output=True)
        return result.returncode == 0

    def view(self, *parts):
        """The path of `parts` beneath this mount as seen from outside its namespace
        (through /proc/PID/root of its ceph-fuse); hangs while the client is frozen."""
        return os.path.join(f"/proc/{self.fuse.pid}/root" + self.path, *parts)

    def remount(self):
        """A fresh ceph-fuse client in the same namespace and place (after an eviction)."""
        if self.fuse is not None and self.fuse.poll() is None:
            os.kill(self.fuse.pid, signal.SIGCONT)
            self.fuse.kill()
        if self.fuse is not None:
            self.fuse.wait()
        subprocess.run(self.enter(["umount", "-l", self.path]), capture_output=True)
        self.start_fuse()

    def fuse_pid(self):
        """The ceph-fuse process itself (nsenter execs it: the same pid)."""
        return self.fuse.pid

    def stop(self):
        if self.fuse is not None:
            if self.fuse.poll() is None:
                os.kill(self.fuse.pid, signal.SIGCONT)
                subprocess.run(self.enter(["umount", "-l", self.path]), capture_output=True)
                try:
                    self.fuse.wait(10)
                except subprocess.TimeoutExpired:
                    self.fuse.kill()
                    self.fuse.wait()
            self.fuse = None
        subprocess.run(["umount", self.namespace], capture_output=True)
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()
            self.holder = None


class Cluster:
    """The cluster's daemons and directory; a context manager that stops them all."""

    def __init__(self, base=None):
        self.base = base or tempfile.mkdtemp(prefix="airlock-ceph.")
        self.conf = os.path.join(self.base, "ceph.conf")
        self.daemons = {}
        self.mounts = []
        self.bound = False

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *_):
        self.stop()

    def ceph(self, *arguments, check=True):
        result = subprocess.run(["ceph", "-c", self.conf, "--connect-timeout", "20"] + list(arguments),
                                capture_output=True, text=True)
        if check and result.returncode != 0:
            raise RuntimeError(f"ceph {' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    def write_conf(self, mon_port, ports):
        base = self.base
        lines = [
            "[global]",
            f"fsid = {uuid.uuid4()}",
            f"mon host = v2:127.0.0.1:{mon_port}",
            "ms bind msgr1 = false",
            "public addr = 127.0.0.1",
            "public network = 127.0.0.1/32",
            f"ms bind port min = {ports}",
            f"ms bind port max = {ports + 99}",
            "auth cluster required = none",
            "auth service required = none",
            "auth client required = none",
            "auth allow insecure global id reclaim = false",
            f"run dir = {base}/run",
            f"admin socket = {base}/run/$name.asok",
            f"log file = {base}/log/$name.log",
            f"pid file = {base}/run/$name.pid",
            f"keyring = {base}/keyring",
            "crash dir = " + f"{base}/crash",
            "osd pool default size = 1",
            "osd pool default min size = 1",
            "osd pool default pg autoscale mode = off",
            "osd crush chooseleaf type = 0",
            "mon allow pool size one = true",
            "mon allow pool delete = true",
            "mon warn on pool no redundancy = false",
            "mon data avail warn = 1",
            "mon data avail crit = 0",
            f"mon data = {base}/$name",
            f"mgr data = {base}/$name",
            f"mds data = {base}/$name",
            f"osd data = {base}/$name",
            "osd objectstore = memstore",
            "memstore device bytes = 1073741824",
            "osd op num shards = 1",
            "osd op num threads per shard = 2",
            "mgr initial modules = ",
            "client fuse allow other = true",
            f"client mount timeout = 30",
        ]
        with open(self.conf, "w") as handle:
            handle.write("\n".join(lines) + "\n")

    def spawn(self, name, arguments):
        log = open(os.path.join(self.base, "log", f"{name}.out"), "ab")
        self.daemons[name] = subprocess.Popen(arguments + ["-f", "-c", self.conf], stdout=log,
                                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()

    def start(self):
        os.chmod(self.base, 0o755)  # the mounts beneath it serve a service user too
        for directory in ("run", "log", "crash", "mon.a", "mgr.x", "osd.0", "mds.a"):
            os.mkdir(os.path.join(self.base, directory))
        # The namespaces' files are bound beneath this directory: make it a private mount.
        subprocess.run(["mount", "--bind", self.base, self.base], check=True)
        self.bound = True
        subprocess.run(["mount", "--make-private", self.base], check=True)
        self.write_conf(free_port(), random.randrange(20000, 30000, 100))
        run = lambda *a: subprocess.run(list(a), check=True, capture_output=True)
        fsid = open(self.conf).read().split("fsid = ")[1].split("\n")[0]
        monmap = os.path.join(self.base, "monmap")
        host = open(self.conf).read().split("mon host = ")[1].split("\n")[0]
        run("monmaptool", "--create", "--fsid", fsid, "--addv", "a", f"[{host}]", monmap)
        run("ceph-mon", "-c", self.conf, "--mkfs", "-i", "a", "--monmap", monmap)
        self.spawn("mon.a", ["ceph-mon", "-i", "a"])
        self.spawn("mgr.x", ["ceph-mgr", "-i", "x"])
        osd = self.ceph("osd", "create").strip()
        if osd != "0":
            raise RuntimeError(f"ceph: the first OSD got id {osd!r}")
        run("ceph-osd", "-c", self.conf, "-i", "0", "--mkfs")
        self.spawn("osd.0", ["ceph-osd", "-i", "0"])
        wait_until("osd.0 up", lambda: '"num_up_osds":1' in self.ceph("osd", "stat", "-f", "json").replace(" ", ""), 60)
        self.ceph("osd", "pool", "create", "cephfs_metadata", "8")
        self.ceph("osd", "pool", "create", "cephfs_data", "8")
        self.ceph("fs", "new", FS_NAME, "cephfs_metadata", "cephfs_data")
        self.spawn("mds.a", ["ceph-mds", "-i", "a"])
        wait_until("an active MDS", lambda: "up:active" in self.ceph("mds", "stat"), 60)
        # A client silent for session_timeout is stale; for session_autoclose, evicted
        # (blocklisted, its locks freed). Both at the least Ceph allows.
        self.ceph("fs", "set", FS_NAME, "session_timeout", str(SESSION_TIMEOUT))
        self.ceph("fs", "set", FS_NAME, "session_autoclose", str(SESSION_TIMEOUT))

    def mount(self, name):
        mount = Mount(self, name)
        self.mounts.append(mount)
        mount.start()
        return mount

    def stop(self):
        for mount in reversed(self.mounts):
            mount.stop()
        self.mounts = []
        for name in ("mds.a", "osd.0", "mgr.x", "mon.a"):
            process = self.daemons.pop(name, None)
            if process is None:
                continue
            if process.poll() is None:
                process.kill()
            process.wait()
        if self.bound:
            subprocess.run(["umount", "-l", self.base], capture_output=True)
            self.bound = False
        shutil.rmtree(self.base, ignore_errors=True)


def main():
    if len(sys.argv) != 2 or sys.argv[1] != "shell":
        print(__doc__, file=sys.stderr)
        return 64
    started = time.monotonic()
    with Cluster() as cluster:
        first, second = cluster.mount("a"), cluster.mount("b")
        print(f"cluster up with two mounts in {time.monotonic() - started:.1f} s under {cluster.base}")
        print(f"  mount a: {first.path} inside {first.namespace} (ceph-fuse pid {first.fuse_pid()})")
        print(f"  mount b: {second.path} inside {second.namespace} (ceph-fuse pid {second.fuse_pid()})")
        print(f"  enter b: nsenter --mount={second.namespace}")
        subprocess.run(first.enter([os.environ.get("SHELL", "/bin/sh")]), cwd="/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
