#!/usr/bin/env python3
"""Intake benchmarks beside the tools people use instead, measured pair by pair in
one invocation. Every airlock figure is the whole intake: `airlock run --once` on
a fresh root holding the input (claim, hash, decode in the confined child, checks,
audit, syncfs, commit). Every peer extracts into a fresh directory and then runs
`sync -f` on it, for the same durability.

Usage: cases.py AIRLOCK_BIN WORKDIR OUT.md   (RUNS=5 by default)
"""
import json, os, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_inputs import make_inputs  # noqa: E402  (the one input generator the benchmarks share)
from scratch import KIND, fresh_directory, scratch  # noqa: E402  (each measurement on a new filesystem)

RUNS = int(os.environ.get("RUNS", "5"))
MANY = int(os.environ.get("MANY_DROPS", "2000"))
# The supervisor's RSS is sampled over this many drops in one `run --once`.
SUPERVISOR_DROPS = int(os.environ.get("SUPERVISOR_DROPS", "10000"))
# MEMORY=0 leaves the memory measurements out (run.sh measures them on one filesystem).
MEMORY = os.environ.get("MEMORY", "1") != "0"


class Airlock:
    """`airlock run --once` on fresh roots; `settings` ({section: {key: value}})
    are merged into each root's airlock.json."""
    def __init__(self, binary, work, settings=None):
        self.binary, self.work, self.settings = binary, work, settings or {}

    def fresh_root(self):
        root = os.path.join(scratch(self.work).renew(), "root")
        subprocess.run([self.binary, "init", "--root", root], check=True, stderr=subprocess.DEVNULL)
        if self.settings:
            path = os.path.join(root, "airlock.json")
            with open(path) as f:
                config = json.load(f)
            for section, values in self.settings.items():
                config.setdefault(section, {}).update(values)
            with open(path, "w") as f:
                json.dump(config, f)
        return root

    def run(self, files, names=None):
        """Times run --once over `files` placed in a fresh inbox; returns (seconds, journal records)."""
        root = self.fresh_root()
        for index, path in enumerate(files):
            name = names[index] if names else os.path.basename(path)
            shutil.copyfile(path, os.path.join(root, "inbox", name))
        # The copies are the producer's writes, not the intake's: flush them before
        # the clock starts, or airlock's syncfs would pay for them.
        subprocess.run(["sync", "-f", root], check=True)
        start = time.perf_counter()
        proc = subprocess.run([self.binary, "run", "--once", "--root", root], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        assert proc.returncode == 0, proc.returncode
        events = [json.loads(line) for line in proc.stdout.decode().split("\n") if line]
        assert len(events) == len(files) and all(e["event"] == "accepted" for e in events), events[:3]
        with open(os.path.join(root, "state", "journal.jsonl")) as f:
            journal = [json.loads(line) for line in f]
        return elapsed, journal


def peer_output(work):
    """Where a peer extracts: one path, on the filesystem timed_shell renews each time."""
    return os.path.join(scratch(work).mountpoint, "peer-out")


def timed_shell(command, work):
    """Runs `command`, which writes into peer_output(work), on a new filesystem."""
    out = fresh_directory(work, "peer-out")
    subprocess.run(["sync", "-f", out], check=True)
    start = time.perf_counter()
    subprocess.run(["bash", "-c", command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


PEERS = {
    "bsdtar -xf + sync -f": 'bsdtar -xf "$IN" -C "$OUT" && sync -f "$OUT"',
    # libmagic on both sides: the shell types every extracted file with file(1),
    # one process for them all (xargs), after extracting.
    "bsdtar -xf + file --mime-type + sync -f":
        'bsdtar -xf "$IN" -C "$OUT" && find "$OUT" -type f -print0 | xargs -0 file --mime-type >/dev/null && sync -f "$OUT"',
    "unzip -q + sync -f": 'unzip -q "$IN" -d "$OUT" && sync -f "$OUT"',
    "python zipfile.extractall + sync -f": 'python3 -c "import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$IN" "$OUT" && sync -f "$OUT"',
}


def stats(values):
    return statistics.median(values), min(values), max(values)


def fmt(values, unit="ms", scale=1000):
    m, lo, hi = stats(values)
    return f"{m * scale:.0f} {unit} ({lo * scale:.0f}–{hi * scale:.0f})"


def main():
    binary, work, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    inputs = make_inputs(work)
    airlock = Airlock(binary, work)
    typed = Airlock(binary, work, {"content": {"detect_types": True}})
    lines = []
    verdicts = []

    def single_case(title, path, peers, target, airlock=airlock):
        lines.append(f"### {title}")
        lines.append("")
        lines.append(f"Input: `{os.path.basename(path)}`, {os.path.getsize(path) / 1048576:.1f} MiB. Median of {RUNS} runs (min–max); "
                     "ratio = airlock ÷ peer, run by run, median.")
        lines.append("")
        lines.append("| peer | airlock | peer | ratio (median, min–max) | target |")
        lines.append("| --- | --- | --- | --- | --- |")
        for peer in peers:
            ours, theirs, ratios = [], [], []
            for _ in range(RUNS):
                seconds, _ = airlock.run([path])
                env_command = PEERS[peer].replace('"$IN"', f'"{path}"').replace('"$OUT"', f'"{peer_output(work)}"')
                other = timed_shell(env_command, work)
                ours.append(seconds)
                theirs.append(other)
                ratios.append(seconds / other)
            r, rlo, rhi = stats(ratios)
            ok = "—"
            if peer.startswith("bsdtar") and target:
                ok = f"≤ {target}: {'met' if r <= target else 'MISSED'}"
                verdicts.append((title, r <= target))
            lines.append(f"| {peer} | {fmt(ours)} | {fmt(theirs)} | {r:.2f} ({rlo:.2f}–{rhi:.2f}) | {ok} |")
        lines.append("")

    zip_peers = [peer for peer in PEERS if "file --mime-type" not in peer]
    single_case("Large files: ZIP of five 18 MiB text files", os.path.join(inputs, "large.zip"), zip_peers, 0.6)
    single_case("Large files: the same as tar.gz", os.path.join(inputs, "large.tar.gz"), ["bsdtar -xf + sync -f"], 1.15)
    single_case("Large files: the same as tar.zst", os.path.join(inputs, "large.tar.zst"), ["bsdtar -xf + sync -f"], 1.0)
    single_case("Many small files: ZIP of 1,000 files of 1–8 KiB", os.path.join(inputs, "small.zip"), zip_peers, 1.0)
    single_case("Many small files, typed: the same ZIP with `content.detect_types: true`", os.path.join(inputs, "small.zip"),
                ["bsdtar -xf + file --mime-type + sync -f"], 0.7, airlock=typed)

    # Many drops: run --once over MANY small ZIPs against a loop of bsdtar + sync -f per drop.
    tiny = os.path.join(inputs, "tiny.zip")
    names = [f"drop-{i}.zip" for i in range(MANY)]
    loop_dir = os.path.join(work, "loop-in")
    shutil.rmtree(loop_dir, ignore_errors=True)
    os.makedirs(loop_dir)
    for name in names:
        shutil.copyfile(tiny, os.path.join(loop_dir, name))
    loop = f'cd "{loop_dir}" && for f in *.zip; do mkdir "$OUT/$f" && bsdtar -xf "$f" -C "$OUT/$f" && sync -f "$OUT"; done'
    ours, theirs, ratios = [], [], []
    supervisor_rss = []
    for _ in range(RUNS):
        seconds, journal = airlock.run([tiny] * MANY, names)
        other = timed_shell(loop.replace('"$OUT', f'"{peer_output(work)}'), work)
        ours.append(MANY / seconds)
        theirs.append(MANY / other)
        ratios.append((MANY / seconds) / (MANY / other))
    r, rlo, rhi = stats(ratios)
    verdicts.append(("Many drops", r >= 2.0))
    lines += [f"### Many drops: {MANY} small ZIPs in the inbox, `run --once`", "",
              "| | airlock | bsdtar loop (bsdtar -xf + sync -f per drop) | throughput ratio (median, min–max) | target |",
              "| --- | --- | --- | --- | --- |",
              f"| drops per second | {fmt(ours, '/s', 1)} | {fmt(theirs, '/s', 1)} | {r:.2f} ({rlo:.2f}–{rhi:.2f}) | ≥ 2: {'met' if r >= 2.0 else 'MISSED'} |", ""]

    # Keyed archives.
    memo = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "keyed", "memo-binary.plist")
    keyed_names = [f"memo-{i}.plist" for i in range(MANY)]
    rates = []
    for _ in range(RUNS):
        seconds, _ = airlock.run([memo] * MANY, keyed_names)
        rates.append(MANY / seconds)
    keyed_ok = statistics.median(rates) >= 600
    verdicts.append(("Keyed drops", keyed_ok))
    lines += [f"### Keyed archives: {MANY} memo archives, `run --once`", "",
              f"{fmt(rates, 'drops/s', 1)} (no peer: nothing else decodes NSKeyedArchiver memos on Linux); "
              f"target ≥ 600/s: {'met' if keyed_ok else 'MISSED'}.", ""]

    if MEMORY:
        lines += memory(binary, airlock, inputs, tiny, verdicts)
    text = f"## Intake on {KIND}\n\n" + "\n".join(lines) + "\nTargets: " + ", ".join(
        f"{name}: {'met' if ok else 'MISSED'}" for name, ok in verdicts) + "\n"
    with open(out, "a") as f:
        f.write(text + "\n")
    print(text)


def memory(binary, airlock, inputs, tiny, verdicts):
    """The decoder's peak RSS on a 1 MiB and a 90 MiB drop, and the supervisor's
    RSS sampled over SUPERVISOR_DROPS drops; the table's lines."""
    small_rss, large_rss = [], []
    for _ in range(RUNS):
        _, journal = airlock.run([os.path.join(inputs, "one-mib.tar")])
        small_rss += [r["decoder_max_rss_kib"] for r in journal if r["event"] == "accepted"]
        _, journal = airlock.run([os.path.join(inputs, "large.tar")])
        large_rss += [r["decoder_max_rss_kib"] for r in journal if r["event"] == "accepted"]
    s_med, l_med = statistics.median(small_rss), statistics.median(large_rss)
    mem_ok = l_med <= 1.2 * s_med and l_med < 64 * 1024
    verdicts.append(("Decoder memory", mem_ok))
    # Supervisor: its RSS sampled while it works through the many drops.
    root = airlock.fresh_root()
    for i in range(SUPERVISOR_DROPS):
        shutil.copyfile(tiny, os.path.join(root, "inbox", f"drop-{i}.zip"))
    subprocess.run(["sync", "-f", root], check=True)
    proc = subprocess.Popen([binary, "run", "--once", "--root", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples = []
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                rss = [int(l.split()[1]) for l in f if l.startswith("VmRSS:")]
            if rss:
                samples.append((len(os.listdir(os.path.join(root, "outbox"))), rss[0]))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        time.sleep(0.2)
    quarter = [s for s in samples if s[0] <= SUPERVISOR_DROPS // 4] or samples[:1]
    last = [s for s in samples if s[0] >= 3 * SUPERVISOR_DROPS // 4] or samples[-1:]
    # Flat: the last quarter's RSS within 10% of the first quarter's.
    flat = last[-1][1] <= 1.1 * quarter[-1][1]
    verdicts.append(("Supervisor memory", flat))
    return ["### Memory", "",
              "| | peak RSS |", "| --- | --- |",
              f"| decoder child, 1 MiB drop (`one-mib.tar`) | {s_med / 1024:.1f} MiB (median of {RUNS}) |",
              f"| decoder child, 90 MiB drop (`large.tar`) | {l_med / 1024:.1f} MiB (median of {RUNS}); ratio {l_med / s_med:.2f}; "
              f"target ≤ 1.2 and < 64 MiB: {'met' if mem_ok else 'MISSED'} |",
              f"| supervisor during {SUPERVISOR_DROPS} drops | {quarter[-1][1] / 1024:.1f} MiB after {quarter[-1][0]} drops, "
              f"{last[-1][1] / 1024:.1f} MiB after {last[-1][0]} drops; flat (within 10%): {'met' if flat else 'MISSED'} |", ""]


if __name__ == "__main__":
    main()
