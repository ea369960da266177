#!/usr/bin/env python3
"""How each way of starting a decoder child costs a drop, side by side in one run.

    python3 bench/start_paths.py BUILD_DIR WORK OUT.md [--drops N] [--rounds R] [--no-callgrind]

BUILD_DIR holds airlock-decoder and airlock-keyed-decoder (a static release
build: `make static`, or `swift build -c release --static-swift-stdlib`). This
script is the supervisor: it speaks the decoders' start protocols itself, so
that only the start path differs between the rows, never the intake around it.

- spawn: posix_spawn of the program with the request on its command line and
  the drop, staging directory and result pipe at 3, 4 and 5, as `airlock inspect`
  and the probe start theirs, and as a drop's child starts when no template serves.
- hand-over: a child started ahead of need with `--await-hand-over` (the socket
  at 6) receives the request and descriptors, acknowledges, decodes; the next
  one is started while it decodes, as the daemon's worker did.
- template: a `--template` process forks each drop's child as this process's own
  (the request with the drop's descriptors and a go-ahead socket; a pidfd and
  pid back; the go-ahead), as the daemon and `run --once` start theirs.

Per path and drop kind (a small ZIP, a keyed memo): start-to-verdict latency of
drops one at a time (p50, p99), drops/s of that sequence, and the CPU the
children (and template) spent per drop (getrusage of reaped children), the most
load-resistant figure. With callgrind (valgrind), the instructions one drop's
child executes from its start to its exit: for spawn and hand-over the whole
program's start; for template only what the child runs after its fork (the
template's own loading is paid once per 256 children and is reported apart).
(valgrind stops each child at its confinement, so the decode, the same on every
path, is not in those counts.) A path the build lacks (a build without `--await-hand-over`) is reported as such.
"""
import argparse
import fcntl
import glob
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
KINDS = {
    "zip": ("airlock-decoder", "zip", os.path.join(FIXTURES, "archives", "zip-deflate-valid.zip")),
    "keyed": ("airlock-keyed-decoder", "keyed", os.path.join(FIXTURES, "keyed", "memo-binary.plist")),
}
DROP, STAGING, RESULT, SOCKET = 3, 4, 5, 6
ACK = b"\x06"


def hexed(text):
    return text.encode().hex()


def request(fmt, magic=None):
    """The decoder request `airlock` sends for `fmt` with the default settings (DecoderRequest.encoded)."""
    fields = [
        ("request_version", "2"), ("mode", "decode"), ("format", fmt), ("progress", "0"),
        ("magic_database", hexed(magic) if magic else ""),
        ("limit_as", str(1 << 30)), ("limit_cpu", "60"), ("limit_nofile", "64"), ("limit_fsize", str(20 * 1024 * 1024 + 1)),
        ("confinement", "required"),
        ("max_entries", "1000"), ("max_file_bytes", str(20 * 1024 * 1024)), ("max_total_bytes", str(100 * 1024 * 1024)),
        ("max_drop_bytes", str(100 * 1024 * 1024)), ("max_component_bytes", "255"), ("max_path_bytes", "1024"),
        ("max_depth", "32"), ("max_ratio", "100"), ("ratio_min_bytes", str(1024 * 1024)), ("private_modes", "0"),
        ("zip_legacy_encoding", hexed("CP437")), ("tar_legacy_encoding", ""),
        ("keyed_class_names", hexed("Memo")), ("keyed_max_bytes", str(1 << 20)), ("keyed_max_items", "1000"),
        ("keyed_max_text_units", "4096"), ("keyed_keep_original", "0"),
    ]
    return [k + "=" + v for k, v in fields]


def hand_over_message(arguments):
    """HandOverMessage: version 1, then each argument's UTF-8 and a NUL."""
    return b"\x01" + b"".join(a.encode() + b"\0" for a in arguments)


def environment():
    return ["SWIFT_BACKTRACE=enable=no", "TZ=UTC0", "AIRLOCK_SUPERVISOR_PID=%d" % os.getpid()]


class Drop:
    """One drop's descriptors: the file read-only, a fresh staging directory, the result pipe."""

    def __init__(self, work, path, n):
        self.staging_path = os.path.join(work, "staging-%d" % n)
        os.mkdir(self.staging_path, 0o700)
        self.drop = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        self.staging = os.open(self.staging_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.read, self.write = os.pipe2(os.O_CLOEXEC)

    def descriptors(self):
        return [self.drop, self.staging, self.write]

    def after_start(self):
        """The supervisor's copies of what the child now holds."""
        for fd in (self.drop, self.staging, self.write):
            os.close(fd)

    def verdict(self):
        out = b""
        while True:
            chunk = os.read(self.read, 65536)
            if not chunk:
                break
            out += chunk
        os.close(self.read)
        shutil.rmtree(self.staging_path)
        return out


def spawn(program, arguments, fds, env, extra_fds=()):
    """posix_spawn with /dev/null at 0 and 1, `fds` at 3, 4, 5 (and `extra_fds`: (fd, target))."""
    # Every source lifted above the targets first, so that no dup2 overwrites one still to be copied.
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    lifted = [fcntl.fcntl(null, fcntl.F_DUPFD_CLOEXEC, 32)]
    os.close(null)
    actions = [(os.POSIX_SPAWN_DUP2, lifted[0], 0), (os.POSIX_SPAWN_DUP2, lifted[0], 1)]
    for fd, target in list(zip(fds, (DROP, STAGING, RESULT))) + list(extra_fds):
        lifted.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 32))
        actions.append((os.POSIX_SPAWN_DUP2, lifted[-1], target))
    try:
        return os.posix_spawn(program, [program] + arguments, dict(item.split("=", 1) for item in env),
                              file_actions=actions, setsigmask=[])
    finally:
        for fd in lifted:
            os.close(fd)


def accepted(verdict):
    if b'"accepted"' not in verdict:
        raise SystemExit("start_paths: a drop was not accepted: %r" % verdict[:300])


class SpawnPath:
    name = "spawn"

    def __init__(self, program, args, magic):
        self.program, self.args = program, args

    def one(self, drop):
        pid = spawn(self.program, self.args, drop.descriptors(), environment())
        drop.after_start()
        verdict = drop.verdict()
        os.waitpid(pid, 0)
        return verdict

    def close(self):
        pass


class HandOverPath:
    name = "hand-over"

    def __init__(self, program, args, magic):
        self.program, self.args = program, args
        self.waiting = self.start()

    def start(self):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        pid = spawn(self.program, ["--await-hand-over"], [null, null, null], environment(), [(theirs.fileno(), SOCKET)])
        os.close(null)
        theirs.close()
        return pid, mine

    def one(self, drop):
        pid, sock = self.waiting
        socket.send_fds(sock, [hand_over_message(self.args)], drop.descriptors())
        if sock.recv(1) != ACK:
            raise SystemExit("start_paths: a waiting child did not acknowledge its hand-over")
        sock.close()
        drop.after_start()
        self.waiting = self.start()  # the next drop's child, started while this one decodes
        verdict = drop.verdict()
        os.waitpid(pid, 0)
        return verdict

    def close(self):
        pid, sock = self.waiting
        sock.close()
        os.waitpid(pid, 0)


class TemplatePath:
    name = "template"

    def __init__(self, program, args, magic):
        self.args = args
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        startup = ["--magic-database=" + magic] if magic else []
        self.pid = spawn(program, ["--template"] + startup, [null, null, null], environment() + ["LD_BIND_NOW=1"],
                         [(theirs.fileno(), SOCKET)])
        os.close(null)
        theirs.close()
        self.sock = mine
        self.forked = 0

    def one(self, drop):
        go, child_go = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        socket.send_fds(self.sock, [hand_over_message(self.args)], drop.descriptors() + [child_go.fileno()])
        child_go.close()
        drop.after_start()
        reply, fds, _, _ = socket.recv_fds(self.sock, 16, 1)
        if len(reply) != 5 or reply[0] != 1 or len(fds) != 1:
            raise SystemExit("start_paths: the template's reply is malformed: %r" % reply)
        pid = int.from_bytes(reply[1:5], "little")
        go.send(ACK)
        go.close()
        verdict = drop.verdict()
        os.waitpid(pid, 0)
        os.close(fds[0])
        self.forked += 1
        return verdict

    def close(self):
        self.sock.close()
        os.waitpid(self.pid, 0)


PATHS = [SpawnPath, HandOverPath, TemplatePath]


def supports_hand_over(program):
    with open(program, "rb") as f:
        return b"--await-hand-over" in f.read()


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(path_class, program, args, magic, drop_path, work, drops):
    cpu0 = children_cpu()
    path = path_class(program, args, magic)
    latencies = []
    began = time.monotonic()
    for n in range(drops):
        drop = Drop(work, drop_path, n)
        t0 = time.monotonic()
        accepted(path.one(drop))
        latencies.append((time.monotonic() - t0) * 1000)
    elapsed = time.monotonic() - began
    path.close()
    cpu = (children_cpu() - cpu0) / drops * 1000
    return latencies, drops / elapsed, cpu


def stripped(program, work):
    """A copy of `program` without debug information, which valgrind 3.19 cannot read
    (DWARF 5); its code, and so its instruction count, is the program's."""
    copy = os.path.join(work, os.path.basename(program) + ".stripped")
    if not os.path.exists(copy):
        subprocess.run(["objcopy", "--strip-debug", program, copy], check=True)
    return copy


def callgrind_spawn(program, args, drop_path, work, tag, hand_over=False):
    """Instructions of one spawned (or handed-over) child, start to exit."""
    program = stripped(program, work)
    out = os.path.join(work, "cg-%s.out" % tag)
    drop = Drop(work, drop_path, 10_000 + len(tag))
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, program]
    if not hand_over:
        pid = spawn("/usr/bin/valgrind", valgrind[1:] + args, drop.descriptors(), environment())
        drop.after_start()
    else:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        pid = spawn("/usr/bin/valgrind", valgrind[1:] + ["--await-hand-over"], [null, null, null], environment(),
                    [(theirs.fileno(), SOCKET)])
        os.close(null)
        theirs.close()
        socket.send_fds(mine, [hand_over_message(args)], drop.descriptors())
        drop.after_start()
        mine.recv(1)
        mine.close()
    verdict = drop.verdict()
    os.waitpid(pid, 0)
    return total_ir(out), verdict


def callgrind_template(program, args, magic, drop_path, work, tag):
    """Instructions of the template's start-up, and of one forked child from its fork.

    The template's counts are dumped and zeroed as it enters the fork
    (`--dump-before`), so the child, a copy made after that, counts from zero."""
    program = stripped(program, work)
    pattern = os.path.join(work, "cg-%s.%%p.out" % tag)
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    startup = ["--magic-database=" + magic] if magic else []
    template = spawn("/usr/bin/valgrind", ["--tool=callgrind", "--callgrind-out-file=" + pattern,
                                           "--dump-before=airlock_fork_sibling", program, "--template"] + startup,
                     [null, null, null], environment() + ["LD_BIND_NOW=1"], [(theirs.fileno(), SOCKET)])
    os.close(null)
    theirs.close()
    path = TemplatePath.__new__(TemplatePath)
    path.args, path.sock, path.pid, path.forked = args, mine, template, 0
    drop = Drop(work, drop_path, 20_000 + len(tag))
    try:
        verdict = path.one(drop)
    except SystemExit:
        verdict = b""
    path.close()
    prefix = os.path.join(work, "cg-%s." % tag)
    template_ir = child_ir = None
    for f in glob.glob(prefix + "*"):
        pid, part = f[len(prefix):].split(".out")
        if int(pid) == template and part == ".1":
            template_ir = total_ir(f)
        elif int(pid) != template and part == "":
            child_ir = total_ir(f)
    return template_ir, child_ir, verdict


def total_ir(path):
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def run_once(builds, work, drops, rounds):
    """`airlock run --once` over `drops` small ZIPs and `drops` memos per build, the
    builds taking turns each round: drops/s and the CPU of the supervisor and its
    children per drop. Rows: (label, drops/s median, min, max, CPU ms per drop median)."""
    results = {label: [] for label, _ in builds}
    zip_bytes = open(KINDS["zip"][2], "rb").read()
    memo_bytes = open(KINDS["keyed"][2], "rb").read()
    for _ in range(rounds):
        for label, directory in builds:
            root = os.path.join(work, "once-root")
            shutil.rmtree(root, ignore_errors=True)
            binary = os.path.join(directory, "airlock")
            subprocess.run([binary, "init", "--root", root], check=True, stderr=subprocess.DEVNULL)
            for n in range(drops):
                with open(os.path.join(root, "inbox", "drop-%d.zip" % n), "wb") as f:
                    f.write(zip_bytes)
                with open(os.path.join(root, "inbox", "memo-%d.plist" % n), "wb") as f:
                    f.write(memo_bytes)
            subprocess.run(["sync", "-f", root], check=True)
            cpu0 = children_cpu()
            began = time.monotonic()
            proc = subprocess.run([binary, "run", "--once", "--root", root], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            elapsed = time.monotonic() - began
            accepted_count = proc.stdout.count(b'"event":"accepted"')
            if accepted_count != 2 * drops:
                raise SystemExit("start_paths: %s accepted %d of %d drops" % (label, accepted_count, 2 * drops))
            results[label].append((2 * drops / elapsed, (children_cpu() - cpu0) / (2 * drops) * 1000))
    return [(label, statistics.median(r[0] for r in rows), min(r[0] for r in rows), max(r[0] for r in rows),
             statistics.median(r[1] for r in rows)) for label, rows in results.items()]


def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build")
    parser.add_argument("work")
    parser.add_argument("out")
    parser.add_argument("--drops", type=int, default=int(os.environ.get("START_DROPS", "200")))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("RUNS", "3")))
    parser.add_argument("--magic", help="a magic database for every child (content.detect_types on)")
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--once", action="append", default=[], metavar="LABEL=DIR",
                        help="also time `run --once` of the airlock in DIR (repeat: builds side by side)")
    parser.add_argument("--once-drops", type=int, default=200)
    options = parser.parse_args()
    os.makedirs(options.work, exist_ok=True)
    once = run_once([b.split("=", 1) for b in options.once], options.work, options.once_drops, options.rounds) if options.once else []
    rows = []
    irs = []
    for kind, (program_name, fmt, drop_path) in KINDS.items():
        program = os.path.join(options.build, program_name)
        args = request(fmt, options.magic)
        paths = [p for p in PATHS if p is not HandOverPath or supports_hand_over(program)]
        results = {p.name: [] for p in paths}
        # Rounds alternate the paths, so that a change of load touches them all alike.
        for _ in range(options.rounds):
            for p in paths:
                results[p.name].append(measure(p, program, args, options.magic, drop_path, options.work, options.drops))
        for p in PATHS:
            if p.name not in results:
                rows.append((kind, p.name, None))
                continue
            latencies = [x for r in results[p.name] for x in r[0]]
            rates = [r[1] for r in results[p.name]]
            cpus = [r[2] for r in results[p.name]]
            rows.append((kind, p.name, (pct(latencies, 50), pct(latencies, 99), statistics.median(rates), min(rates),
                                        max(rates), statistics.median(cpus))))
        if not options.no_callgrind and shutil.which("valgrind"):
            spawn_ir, _ = callgrind_spawn(program, args, drop_path, options.work, kind + "-spawn")
            hand_ir = None
            if supports_hand_over(program):
                hand_ir, _ = callgrind_spawn(program, args, drop_path, options.work, kind + "-hand", hand_over=True)
            template_ir, child_ir, _ = callgrind_template(program, args, options.magic, drop_path, options.work,
                                                          kind + "-template")
            irs.append((kind, spawn_ir, hand_ir, child_ir, template_ir))
    write(options, rows, irs, once)


def write(options, rows, irs, once):
    lines = ["## Decoder start paths (bench/start_paths.py)", "",
             "Command: `python3 bench/start_paths.py %s WORK OUT --drops %d --rounds %d%s%s`; %s, load %s." % (
                 options.build, options.drops, options.rounds, " --magic " + options.magic if options.magic else "",
                 "".join(" --once " + b for b in options.once) + (" --once-drops %d" % options.once_drops if options.once else ""),
                 time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), " ".join(open("/proc/loadavg").read().split()[:3])),
             "Drops one at a time; latency from the request to the verdict read and the child reaped. "
             "CPU: the children's (and the template's) user+system per drop. Ratios against spawn in the same run.", "",
             "| drop | path | p50 (ms) | p99 (ms) | drops/s (min–max) | CPU/drop (ms) | p50 vs spawn | CPU vs spawn |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    base = {}
    for kind, name, r in rows:
        if name == "spawn" and r:
            base[kind] = r
    for kind, name, r in rows:
        if r is None:
            lines.append("| %s | %s | not in this build | | | | | |" % (kind, name))
            continue
        b = base[kind]
        lines.append("| %s | %s | %.2f | %.2f | %.0f (%.0f–%.0f) | %.2f | %.2f | %.2f |" % (
            kind, name, r[0], r[1], r[2], r[3], r[4], r[5], r[0] / b[0], r[5] / b[5]))
    if irs:
        lines += ["", "Instructions (callgrind) one drop's child executes from its exec (spawn, hand-over) or its "
                  "fork (template) until it confines itself: valgrind cannot run a confined child (it lacks "
                  "Landlock and seccomp and refuses the RLIMIT_NOFILE change), so the child stops there, and "
                  "the decode itself, the same on every path, is not counted. The template's own start-up "
                  "is paid once per 256 children:", "",
                  "| drop | spawn | hand-over | template child | template child vs spawn | template start-up |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for kind, spawn_ir, hand_ir, child_ir, template_ir in irs:
            ratio = "%.3f" % (child_ir / spawn_ir) if child_ir and spawn_ir else "n/a"
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                kind, fmt_ir(spawn_ir), fmt_ir(hand_ir) if hand_ir else "not in this build", fmt_ir(child_ir), ratio,
                fmt_ir(template_ir)))
    if once:
        lines += ["", "`airlock run --once` over %d small ZIPs and %d memos (%d rounds, builds taking turns); "
                  "CPU: the supervisor's and its children's per drop:" % (options.once_drops, options.once_drops, options.rounds), "",
                  "| build | drops/s (min–max) | CPU/drop (ms) | drops/s vs first | CPU vs first |", "| --- | --- | --- | --- | --- |"]
        for label, rate, low, high, cpu in once:
            lines.append("| %s | %.0f (%.0f–%.0f) | %.2f | %.2f | %.2f |" % (label, rate, low, high, cpu, rate / once[0][1], cpu / once[0][4]))
    text = "\n".join(lines) + "\n\n"
    sys.stdout.write(text)
    with open(options.out, "a") as f:
        f.write(text)


def fmt_ir(value):
    return "{:,}".format(value) if value else "n/a"


if __name__ == "__main__":
    main()
