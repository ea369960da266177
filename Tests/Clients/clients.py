#!/usr/bin/env python3
"""Real upload clients against airlock, as it is deployed.

The daemon runs as its own service user with the unit's ambient capabilities
(read from deploy/airlock.service) and umask; the root is laid out as
deploy/tmpfiles.d does it. Each client uploads as a producer uid of its own:
OpenSSH sftp and scp into a chroot built as deploy/sftp/airlock-sftp.conf says,
rsync over ssh, smbclient against smbd with deploy/samba/airlock-inbox.conf,
curl against Apache mod_dav with deploy/apache/airlock-dav.conf. Every server
is started here, on 127.0.0.1 at a free port, with configuration files in a
temporary directory, and stopped at the end; the users and groups made for the
run are removed.

Each case asserts that its drop ended exactly once (one terminal event, one
outbox or quarantine entry), with the right bytes (the event's SHA-256 and the
extracted file's), and, for a rename, that the name left the inbox within the
bound. `--table` prints the results and latencies as a Markdown table and
exits 0 whatever they are (for comparing builds); without it any failed
expectation exits 1.

Standard library only; needs root (users, mounts, servers).
"""
import argparse
import hashlib
import io
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVICE, GROUP = "alclient-svc", "alclient-drop"
PRODUCERS = {"sftp": "alclient-sftp", "shell": "alclient-rsync", "smb": "alclient-smb", "dav": "alclient-dav"}
RENAME_BOUND = 1.0      # seconds from the client's rename to the name leaving the inbox
WRITE_BOUND = 3.0       # a name written in place: the settle interval (0.5 s), then the lease
SMB_PASSWORD = "airlock-client-test"


def run(arguments, check=True, **options):
    result = subprocess.run(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **options)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} exited {result.returncode}: {result.stdout}")
    return result


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port, process, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {seconds} s")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def archive(name, size, seed):
    """A ZIP holding one file of `size` random bytes (stored: its size is the upload's)."""
    payload = random_bytes(size, seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        z.writestr(name, payload)
    return buffer.getvalue(), payload


def random_bytes(size, seed):
    out = bytearray()
    block = hashlib.sha256(str(seed).encode()).digest()
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:size])


class Users:
    """The service user, the producers' group and one producer per client, removed afterwards."""

    def __init__(self):
        self.made_users, self.made_groups = [], []

    def create(self):
        self.remove_leftovers()
        run(["groupadd", "--system", GROUP])
        self.made_groups.append(GROUP)
        run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
             "--shell", "/usr/sbin/nologin", SERVICE])
        self.made_users.append(SERVICE)
        for kind, name in PRODUCERS.items():
            shell = "/bin/sh" if kind == "shell" else "/usr/sbin/nologin"
            run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                 "--shell", shell, "--groups", GROUP, name])
            self.made_users.append(name)
            # A locked account ("!") may not log in over ssh at all, keys included.
            run(["usermod", "-p", "*", name])

    def remove_leftovers(self):
        for name in [SERVICE] + list(PRODUCERS.values()):
            run(["userdel", name], check=False)
        run(["groupdel", GROUP], check=False)

    def remove(self):
        for name in self.made_users:
            run(["userdel", name], check=False)
        for name in self.made_groups:
            run(["groupdel", name], check=False)


def unit_capabilities(unit):
    """AmbientCapabilities= of the unit, as setpriv's +cap,+cap list."""
    for line in open(unit, encoding="utf-8"):
        if line.startswith("AmbientCapabilities="):
            names = line.split("=", 1)[1].split()
            return ",".join("+" + name.lower().removeprefix("cap_") for name in names)
    return ""


class Root:
    """An airlock root laid out as deploy/tmpfiles.d does, under a root-owned
    base directory that is also the SFTP chroot (its inbox bind-mounted there)."""

    def __init__(self, airlock, base):
        self.airlock = airlock
        self.base = base
        self.path = os.path.join(base, "var", "airlock")
        self.inbox = os.path.join(self.path, "inbox")
        self.chroot = os.path.join(base, "sftp")
        self.mounted = False

    def lay_out(self):
        run([self.airlock, "init", "--root", self.path])
        run(["chown", "-R", f"{SERVICE}:{SERVICE}", self.path])
        run(["chmod", "0755", self.path])
        run(["chown", f"{SERVICE}:{GROUP}", self.inbox])
        run(["chmod", "1730", self.inbox])
        run(["setfacl", "-m", f"d:u:{SERVICE}:r", self.inbox])
        os.makedirs(os.path.join(self.chroot, "inbox"))
        run(["mount", "--bind", self.inbox, os.path.join(self.chroot, "inbox")])
        self.mounted = True

    def unmount(self):
        if self.mounted:
            run(["umount", os.path.join(self.chroot, "inbox")], check=False)
            self.mounted = False


class Daemon:
    def __init__(self, root, capabilities, logs):
        self.root, self.logs = root, logs
        self.out = open(os.path.join(logs, "daemon.out"), "w+")
        self.err = open(os.path.join(logs, "daemon.err"), "w+")
        wrapper = ["setpriv", "--reuid", SERVICE, "--regid", SERVICE, "--init-groups"]
        if capabilities:
            wrapper += [f"--inh-caps={capabilities}", f"--ambient-caps={capabilities}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("AIRLOCK_TEST_") and k != "NOTIFY_SOCKET"}
        self.process = subprocess.Popen(wrapper + ["--", root.airlock, "run", "--root", root.path], stdout=self.out,
                                        stderr=self.err, stdin=subprocess.DEVNULL, env=env,
                                        preexec_fn=lambda: os.umask(0o077))
        deadline = time.monotonic() + 30
        while "watching" not in self.stderr():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the daemon did not start: {self.stderr()}")
            time.sleep(0.05)

    def stderr(self):
        with open(self.err.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def events(self):
        with open(self.out.name, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.startswith("{")]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def snippet(name, replacements):
    """A file of deploy/ with the deployed paths and names replaced by the test's."""
    text = open(os.path.join(REPO, "deploy", name), encoding="utf-8").read()
    for old, new in replacements:
        if old not in text:
            raise RuntimeError(f"deploy/{name} no longer says {old!r}")
        text = text.replace(old, new)
    return text


class SSH:
    """sshd with deploy/sftp/airlock-sftp.conf: the SFTP producer chrooted, and a
    shell account (rsync needs one) outside the chroot."""

    def __init__(self, root, work):
        self.dir = os.path.join(work, "ssh")
        os.makedirs(os.path.join(self.dir, "keys"))
        self.port = free_port()
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(self.dir, "host")])
        self.key = os.path.join(self.dir, "client")
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.key])
        public = open(self.key + ".pub").read()
        for user in (PRODUCERS["sftp"], PRODUCERS["shell"]):
            path = os.path.join(self.dir, "keys", user)
            open(path, "w").write(public)
            os.chmod(path, 0o644)
        match = snippet("sftp/airlock-sftp.conf", [
            ("Match Group airlock-drop", f"Match Group {GROUP} User *,!{PRODUCERS['shell']}"),
            ("ChrootDirectory /srv/airlock-sftp", f"ChrootDirectory {root.chroot}")])
        config = os.path.join(self.dir, "sshd_config")
        open(config, "w").write(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {self.dir}/host
PidFile {self.dir}/sshd.pid
AuthorizedKeysFile {self.dir}/keys/%u
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
Subsystem sftp internal-sftp
LogLevel VERBOSE
{match}""")
        os.makedirs("/run/sshd", exist_ok=True)
        run(["/usr/sbin/sshd", "-t", "-f", config])
        self.log = open(os.path.join(self.dir, "sshd.log"), "w")
        self.process = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", config], stdout=self.log, stderr=self.log,
                                        start_new_session=True)
        wait_for_port(self.port, self.process)

    def options(self):
        return ["-i", self.key, "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no", "-o",
                "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"]

    def sftp(self, commands, limit=None):
        """sftp -b with `commands` as the SFTP producer; a Popen when `limit` (Kbit/s) throttles it."""
        batch = os.path.join(self.dir, f"batch-{time.monotonic_ns()}")
        open(batch, "w").write("\n".join(commands) + "\n")
        arguments = ["sftp", "-P", str(self.port)] + self.options() + ["-b", batch]
        if limit:
            return subprocess.Popen(arguments + ["-l", str(limit), f"{PRODUCERS['sftp']}@127.0.0.1"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return run(arguments + [f"{PRODUCERS['sftp']}@127.0.0.1"])

    def scp(self, local, remote):
        return run(["scp", "-P", str(self.port)] + self.options() + [local, f"{PRODUCERS['sftp']}@127.0.0.1:{remote}"])

    def rsync(self, flags, local, remote):
        shell = " ".join(["ssh", "-p", str(self.port)] + self.options())
        return run(["rsync"] + flags + ["-e", shell, local, f"{PRODUCERS['shell']}@127.0.0.1:{remote}"])

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


class SMB:
    """smbd with deploy/samba/airlock-inbox.conf (or, with `default_share`, a
    share with Samba's defaults) on the inbox."""

    def __init__(self, root, work, default_share=False):
        self.dir = os.path.join(work, "smb")
        for sub in ("private", "lock", "state", "cache", "run", "ncalrpc", "binddns"):
            os.makedirs(os.path.join(self.dir, sub))
        self.port = free_port()
        share = os.path.join(self.dir, "share.conf")
        if default_share:
            open(share, "w").write(f"[airlock-inbox]\n    path = {root.inbox}\n    valid users = @{GROUP}\n    read only = no\n")
        else:
            open(share, "w").write(snippet("samba/airlock-inbox.conf", [
                ("path = /var/lib/airlock/inbox", f"path = {root.inbox}"),
                ("valid users = @airlock-drop", f"valid users = @{GROUP}")]))
        self.config = os.path.join(self.dir, "smb.conf")
        d = self.dir
        open(self.config, "w").write(f"""[global]
    server role = standalone server
    passdb backend = tdbsam:{d}/passdb.tdb
    private dir = {d}/private
    lock directory = {d}/lock
    state directory = {d}/state
    cache directory = {d}/cache
    pid directory = {d}/run
    ncalrpc dir = {d}/ncalrpc
    binddns dir = {d}/binddns
    log file = {d}/log.%m
    smb ports = {self.port}
    interfaces = 127.0.0.1
    bind interfaces only = yes
    disable netbios = yes
    load printers = no
    printcap name = /dev/null
    disable spoolss = yes
    map to guest = never
    include = {share}
""")
        run(["smbpasswd", "-c", self.config, "-s", "-a", PRODUCERS["smb"]], input=f"{SMB_PASSWORD}\n{SMB_PASSWORD}\n")
        self.log = open(os.path.join(self.dir, "smbd.log"), "w")
        self.process = subprocess.Popen(["smbd", "--foreground", "--no-process-group", "--debug-stdout",
                                         f"--configfile={self.config}"], stdout=self.log, stderr=self.log,
                                        start_new_session=True)
        wait_for_port(self.port, self.process)

    def client(self, commands):
        return run(["smbclient", "//127.0.0.1/airlock-inbox", "-p", str(self.port), "-m", "SMB3",
                    f"--configfile={self.config}", "-U", f"{PRODUCERS['smb']}%{SMB_PASSWORD}", "-c", "; ".join(commands)],
                   check=False)

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


class DAV:
    """Apache with mod_dav and deploy/apache/airlock-dav.conf, as its own user, umask 077."""

    MODULES = ["mpm_event", "authz_core", "authn_core", "authn_file", "auth_basic", "authz_user", "alias",
               "allowmethods", "dav", "dav_fs"]

    def __init__(self, root, work):
        self.dir = os.path.join(work, "dav")
        os.makedirs(os.path.join(self.dir, "lock"))
        dav_user = PRODUCERS["dav"]
        shutil.chown(os.path.join(self.dir, "lock"), dav_user, GROUP)
        self.port = free_port()
        self.password = "airlock-dav-test"
        run(["htpasswd", "-bc", os.path.join(self.dir, "htpasswd"), "producer", self.password])
        os.chmod(os.path.join(self.dir, "htpasswd"), 0o644)
        conf = snippet("apache/airlock-dav.conf", [
            ("/var/lib/airlock/inbox", root.inbox), ("/etc/airlock/dav-producers.htpasswd", f"{self.dir}/htpasswd"),
            ("/var/lock/apache2/DAVLock", f"{self.dir}/lock/DAVLock")])
        modules = "\n".join(f"LoadModule {m}_module /usr/lib/apache2/modules/mod_{m}.so" for m in self.MODULES)
        config = os.path.join(self.dir, "apache2.conf")
        open(config, "w").write(f"""ServerRoot {self.dir}
ServerName 127.0.0.1
Listen 127.0.0.1:{self.port}
PidFile {self.dir}/httpd.pid
ErrorLog {self.dir}/error.log
DefaultRuntimeDir {self.dir}
Mutex file:{self.dir}
{modules}
User {dav_user}
Group {GROUP}
{conf}""")
        self.log = open(os.path.join(self.dir, "apache.log"), "w")
        self.process = subprocess.Popen(["/usr/sbin/apache2", "-f", config, "-DFOREGROUND"], stdout=self.log,
                                        stderr=self.log, preexec_fn=lambda: os.umask(0o077),
                                        # apache2 and smbd signal their whole process group when they stop.
                                        start_new_session=True)
        wait_for_port(self.port, self.process)

    def put(self, local, name):
        return run(["curl", "-sS", "-f", "-u", f"producer:{self.password}", "-H", "If-None-Match: *", "-T", local,
                    f"http://127.0.0.1:{self.port}/airlock-inbox/{name}"])

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


class Case:
    """One upload: its drop name, the uploader's steps, and what must become of it."""

    def __init__(self, label, name, mode, bound, expect="accepted"):
        self.label, self.name, self.mode, self.bound, self.expect = label, name, mode, bound, expect
        self.data = self.payload = None
        self.claim_seconds = self.event_seconds = None
        self.event = None
        self.problems = []
        self.note = ""


class Run:
    def __init__(self, root, daemon, ssh, smb, dav, work):
        self.root, self.daemon, self.ssh, self.smb, self.dav = root, daemon, ssh, smb, dav
        self.sources = os.path.join(work, "sources")
        os.makedirs(self.sources)
        os.chmod(self.sources, 0o755)
        self.cases = []

    def source(self, case, size=256 * 1024):
        case.data, case.payload = archive(f"payload-{case.name}.bin", size, case.name)
        path = os.path.join(self.sources, case.name)
        with open(path, "wb") as f:
            f.write(case.data)
        os.chmod(path, case.mode)
        return path

    def settle(self, case, started):
        """Waits for the name to leave the inbox and for its verdict; records both latencies."""
        path = os.path.join(self.root.inbox, case.name)
        deadline = started + 90
        while os.path.lexists(path) and time.monotonic() < deadline:
            time.sleep(0.01)
        if not os.path.lexists(path):
            case.claim_seconds = time.monotonic() - started
        while time.monotonic() < deadline:
            found = [e for e in self.daemon.events() if e.get("drop") == case.name and e.get("event") != "deferred"]
            if found:
                case.event_seconds = time.monotonic() - started
                case.event = found[0]
                break
            time.sleep(0.02)
        if case.claim_seconds is None:
            case.problems.append("never left the inbox within 90 s")
        elif case.bound is not None and case.claim_seconds > case.bound:
            case.problems.append(f"left the inbox {case.claim_seconds:.2f} s after the client finished, over {case.bound} s")
        if case.event is None:
            case.problems.append("no verdict within 90 s")

    def upload(self, case, steps):
        self.cases.append(case)
        local = self.source(case)
        try:
            steps(local)
        except RuntimeError as error:
            case.problems.append(f"the client failed: {error}")
            return
        self.settle(case, time.monotonic())

    def interrupted(self, case, remote, size=2 << 20):
        """A throttled sftp put of a large file to `remote`, killed after 1.5 s; returns the bytes it left."""
        local = self.source(case, size)
        client = self.ssh.sftp([f"put {local} {remote}"], limit=800)
        time.sleep(1.5)
        client.kill()
        client.wait()
        time.sleep(0.3)   # sshd notices the dead connection and closes the file
        return local

    def all_cases(self):
        ssh, inbox = self.ssh, "/inbox"
        self.upload(Case("sftp put .part, rename (posix-rename)", "sftp-posix.zip", 0o644, RENAME_BOUND),
                    lambda f: ssh.sftp([f"put {f} {inbox}/sftp-posix.zip.part",
                                        f"rename {inbox}/sftp-posix.zip.part {inbox}/sftp-posix.zip"]))
        self.upload(Case("sftp put .part, rename -l (legacy: link, unlink)", "sftp-legacy.zip", 0o644, RENAME_BOUND),
                    lambda f: ssh.sftp([f"put {f} {inbox}/sftp-legacy.zip.part",
                                        f"rename -l {inbox}/sftp-legacy.zip.part {inbox}/sftp-legacy.zip"]))
        self.upload(Case("sftp put 0600 .part, rename", "sftp-0600.zip", 0o600, RENAME_BOUND),
                    lambda f: ssh.sftp([f"put {f} {inbox}/sftp-0600.zip.part",
                                        f"rename {inbox}/sftp-0600.zip.part {inbox}/sftp-0600.zip"]))
        self.resumed()
        self.cut_short()
        self.upload(Case("scp (SFTP protocol) to the final name", "scp.zip", 0o644, WRITE_BOUND),
                    lambda f: ssh.scp(f, f"{inbox}/scp.zip"))
        self.upload(Case("scp 0600", "scp-0600.zip", 0o600, WRITE_BOUND), lambda f: ssh.scp(f, f"{inbox}/scp-0600.zip"))
        real = self.root.inbox
        self.upload(Case("rsync (temporary .name.XXXXXX, rename)", "rsync.zip", 0o644, RENAME_BOUND),
                    lambda f: ssh.rsync([], f, f"{real}/rsync.zip"))
        self.upload(Case("rsync --inplace", "rsync-inplace.zip", 0o644, WRITE_BOUND),
                    lambda f: ssh.rsync(["--inplace"], f, f"{real}/rsync-inplace.zip"))
        self.upload(Case("rsync -a 0600", "rsync-0600.zip", 0o600, RENAME_BOUND),
                    lambda f: ssh.rsync(["-a"], f, f"{real}/rsync-0600.zip"))
        self.upload(Case("smbclient put .tmp, rename (create mask 0600)", "smb.zip", 0o600, RENAME_BOUND), self.smb_steps)
        self.upload(Case("curl PUT to mod_dav (umask 077: 0600)", "dav.zip", 0o600, RENAME_BOUND),
                    lambda f: self.dav.put(f, "dav.zip"))

    def smb_steps(self, local):
        result = self.smb.client([f"put {local} smb.zip.tmp", "rename smb.zip.tmp smb.zip"])
        if result.returncode != 0 or "NT_STATUS" in result.stdout:
            raise RuntimeError(result.stdout.strip())

    def resumed(self):
        case = Case("sftp put .part interrupted, reput, rename", "sftp-reput.zip", 0o644, RENAME_BOUND)
        self.cases.append(case)
        local = self.interrupted(case, "/inbox/sftp-reput.zip.part")
        part = os.path.join(self.root.inbox, "sftp-reput.zip.part")
        partial = os.path.getsize(part) if os.path.exists(part) else -1
        if not 0 < partial < len(case.data):
            case.problems.append(f"premise: the interrupted upload left {partial} of {len(case.data)} bytes")
        time.sleep(1.5)
        if not os.path.exists(part) or any(e.get("drop", "").startswith("sftp-reput") for e in self.daemon.events()):
            case.problems.append("the interrupted temporary name was taken")
        try:
            self.ssh.sftp([f"reput {local} /inbox/sftp-reput.zip.part",
                           "rename /inbox/sftp-reput.zip.part /inbox/sftp-reput.zip"])
        except RuntimeError as error:
            case.problems.append(f"reput failed: {error}")
            return
        self.settle(case, time.monotonic())
        case.note = f"interrupted at {partial} bytes"

    def cut_short(self):
        """A direct put to the final name, interrupted: the shorter file looks complete
        (closed, no writer), so it is taken; as a truncated ZIP it is quarantined."""
        case = Case("sftp put to the final name, interrupted", "sftp-cut.zip", 0o644, None, expect="rejected")
        self.cases.append(case)
        self.interrupted(case, "/inbox/sftp-cut.zip")
        self.settle(case, time.monotonic())
        if case.event:
            size = case.event.get("size", -1)
            case.note = f"{size} of {len(case.data)} bytes, {case.event.get('reason')}"
            if not 0 < size < len(case.data) or case.event.get("sha256") != sha256(case.data[:size]):
                case.problems.append(f"the quarantined drop is not the first {size} bytes of the upload")

    def check_bytes(self):
        """Each verdict as expected, with the uploaded bytes and (accepted) the payload in the outbox."""
        for case in self.cases:
            if case.event is None:
                continue
            if case.event.get("event") != case.expect:
                case.problems.append(f"{case.event.get('event')} ({case.event.get('reason')}: {case.event.get('detail', '')}), "
                                     f"expected {case.expect}")
            if case.expect == "accepted" and case.event.get("sha256") != sha256(case.data):
                case.problems.append("the drop's SHA-256 is not the upload's")
            if case.expect == "accepted" and case.event.get("event") == "accepted":
                stem = case.name.removesuffix(".zip")
                extracted = os.path.join(self.root.path, "outbox", stem, f"payload-{case.name}.bin")
                if not os.path.exists(extracted) or sha256(open(extracted, "rb").read()) != sha256(case.payload):
                    case.problems.append(f"outbox/{stem} does not hold the payload's bytes")

    def check_once(self):
        """Every drop ended exactly once, and nothing else was taken."""
        problems = []
        terminal = [e for e in self.daemon.events() if e.get("event") in ("accepted", "rejected")]
        names = {case.name for case in self.cases}
        for case in self.cases:
            count = sum(1 for e in terminal if e.get("drop") == case.name)
            if count != 1:
                case.problems.append(f"{count} verdicts, not exactly one")
        strangers = sorted({e.get("drop") for e in terminal} - names)
        if strangers:
            problems.append(f"names taken that were no drop: {strangers}")
        deferred = [e for e in self.daemon.events() if e.get("event") == "deferred"]
        if deferred:
            problems.append(f"deferred: {deferred}")
        accepted = sorted(c.name.removesuffix(".zip") for c in self.cases if c.event and c.event.get("event") == "accepted")
        outbox = sorted(os.listdir(os.path.join(self.root.path, "outbox")))
        if outbox != accepted:
            problems.append(f"outbox holds {outbox}, accepted {accepted}")
        rejected = sum(1 for c in self.cases if c.event and c.event.get("event") == "rejected")
        quarantine = os.listdir(os.path.join(self.root.path, "quarantine"))
        if len(quarantine) != rejected:
            problems.append(f"{len(quarantine)} quarantine entries for {rejected} rejections")
        for directory in ("inbox", "state/claimed", "state/staging"):
            left = os.listdir(os.path.join(self.root.path, directory))
            if left:
                problems.append(f"{directory} still holds {left}")
        return problems


def table(cases):
    lines = ["| client | mode | result | left the inbox (s) | verdict (s) | bound (s) | notes |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for case in cases:
        result = case.event.get("event") if case.event else "none"
        if case.event and case.event.get("reason"):
            result += f" {case.event['reason']}"
        seconds = lambda value: f"{value:.2f}" if value is not None else "-"
        verdict = "ok" if not case.problems else "FAIL: " + "; ".join(case.problems)
        lines.append(f"| {case.label} | {case.mode:04o} | {result} | {seconds(case.claim_seconds)} | "
                     f"{seconds(case.event_seconds)} | {case.bound if case.bound is not None else '-'} | "
                     f"{case.note + ('; ' if case.note else '')}{verdict} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--airlock", default=os.path.join(REPO, ".build", "debug"), help="directory of the airlock binaries")
    parser.add_argument("--unit", default=os.path.join(REPO, "deploy", "airlock.service"), help="unit whose capabilities to grant")
    parser.add_argument("--default-share", action="store_true", help="a Samba share with the defaults, not deploy's snippet")
    parser.add_argument("--table", action="store_true", help="print the table and exit 0 whatever the results")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("clients.py needs root: it creates users and groups, bind-mounts the inbox into the SFTP chroot and "
              "starts sshd, smbd and apache2 (CI runs make test as root)", file=sys.stderr)
        return 1
    # A run stopped by SIGTERM (a CI timeout) still stops its servers, unmounts and removes its users.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(f"stopped by signal {number}"))
    users = Users()
    work = tempfile.mkdtemp(prefix="airlock-clients.", dir="/srv")
    os.chmod(work, 0o755)
    root = Root(os.path.join(args.airlock, "airlock"), work)
    started, run_problems, cases = [], [], []
    try:
        users.create()
        root.lay_out()
        daemon = Daemon(root, unit_capabilities(args.unit), work)
        started.append(daemon)
        ssh = SSH(root, work)
        started.append(ssh)
        smb = SMB(root, work, default_share=args.default_share)
        started.append(smb)
        dav = DAV(root, work)
        started.append(dav)
        uploads = Run(root, daemon, ssh, smb, dav, work)
        try:
            uploads.all_cases()
        finally:
            cases = uploads.cases
        uploads.check_bytes()
        run_problems = uploads.check_once()
    except Exception as error:      # a server that would not start: the run fails, saying why
        run_problems.append(f"{type(error).__name__}: {error}")
    finally:
        for server in reversed(started):
            server.stop()
        if run_problems or any(case.problems for case in cases):
            for name in ("daemon.err",):
                path = os.path.join(work, name)
                if os.path.exists(path):
                    print(f"--- {name}\n" + open(path, errors="replace").read()[-4000:], file=sys.stderr)
        root.unmount()
        shutil.rmtree(work, ignore_errors=True)
        users.remove()
    print(table(cases))
    for problem in run_problems:
        print(f"FAIL: {problem}")
    failed = bool(run_problems) or any(case.problems for case in cases) or not cases
    return 0 if args.table or not failed else 1


if __name__ == "__main__":
    sys.exit(main())
