#!/usr/bin/env python3
"""Watcher benchmark: drop-to-outbox latency and flood throughput of `airlock run`
against a reference pipeline measured in the same run:

    inotifywait -m -e close_write,moved_to INBOX | while read f; do
        bsdtar -xf INBOX/$f -C OUT/.tmp && sync -f OUT && mv OUT/.tmp OUT/$f
    done

Both take the same small ZIP. Renamed drops are written under a temporary name,
then renamed (the documented producer protocol); latency is from the rename
until the output directory appears (both publish with one rename). Close-write
drops are written straight under their final name; latency is from the close.
Latency drops go to the reference and each airlock in turn, one at a time, so
the machine's load falls on all alike; every airlock figure is a ratio to the
reference measured in the same invocation.

Usage: watch.py AIRLOCK_BIN[=LABEL[=typed]] ... FIXTURE OUT.md
(typed: that pipeline runs with content.detect_types on, to show what type
detection costs; it is not the default, and its verdicts are not the targets')
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scratch import KIND, scratch  # noqa: E402  (each pipeline on a new filesystem)

LATENCY_DROPS = int(os.environ.get("LATENCY_DROPS", "60"))
FLOOD_DROPS = int(os.environ.get("FLOOD_DROPS", "1000"))
FLOOD_ROUNDS = int(os.environ.get("RUNS", "5"))

def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.0005)
    return predicate()

def drop(inbox, name, data):
    """Renamed into place; returns the time of the rename."""
    temporary = os.path.join(inbox, "." + name + ".part")
    with open(temporary, "wb") as f:
        f.write(data)
    start = time.monotonic()
    os.rename(temporary, os.path.join(inbox, name))
    return start

def drop_written(inbox, name, data):
    """Written straight under its name; returns the time of the close."""
    with open(os.path.join(inbox, name), "wb") as f:
        f.write(data)
    return time.monotonic()

class Airlock:
    def __init__(self, binary, work, settle_ms, typed=False):
        self.root = os.path.join(work, "root")
        subprocess.run([binary, "init", "--root", self.root], check=True, stderr=subprocess.DEVNULL)
        config_path = os.path.join(self.root, "airlock.json")
        config = json.load(open(config_path))
        config["watch"]["settle_milliseconds"] = settle_ms
        config["watch"]["queue_limit"] = 256
        if typed:
            config.setdefault("content", {})["detect_types"] = True
        json.dump(config, open(config_path, "w"))
        self.inbox, self.outbox = os.path.join(self.root, "inbox"), os.path.join(self.root, "outbox")
        self.quarantine = os.path.join(self.root, "quarantine")
        self.err = open(os.path.join(work, "airlock.err"), "w+")
        self.proc = subprocess.Popen([binary, "run", "--root", self.root], stdout=subprocess.DEVNULL, stderr=self.err)
        assert wait_for(lambda: "watching" in open(self.err.name).read(), 20)

    def output(self, name):
        return os.path.join(self.outbox, name[:-4])

    def finished(self):
        return len(os.listdir(self.outbox)) + len(os.listdir(self.quarantine))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)

class Reference:
    SCRIPT = r'''
inotifywait -m -q -e close_write,moved_to --format '%f' "$1" | while IFS= read -r f; do
  case "$f" in .*) continue;; esac
  t="$2/.tmp-$f"; mkdir -p "$t" && bsdtar -xf "$1/$f" -C "$t" && sync -f "$2" && mv "$t" "$2/${f%.zip}"; rm -f "$1/$f"
done'''
    def __init__(self, work):
        self.inbox, self.outbox = os.path.join(work, "ref-inbox"), os.path.join(work, "ref-out")
        os.makedirs(self.inbox); os.makedirs(self.outbox)
        self.proc = subprocess.Popen(["bash", "-c", self.SCRIPT, "ref", self.inbox, self.outbox], start_new_session=True)
        time.sleep(0.5)

    def output(self, name):
        return os.path.join(self.outbox, name[:-4])

    def finished(self):
        return len([n for n in os.listdir(self.outbox) if not n.startswith(".")])

    def stop(self):
        os.killpg(self.proc.pid, 15)
        self.proc.wait(10)

def latencies(targets, data, put=drop, prefix="lat"):
    """One drop at a time, taking the pipelines in turn, so a change in the
    machine's load falls on all of them alike; per-pipeline lists of ms."""
    result = [[] for _ in targets]
    for i in range(LATENCY_DROPS):
        for index, target in enumerate(targets):
            name = f"{prefix}-{i}.zip"
            start = put(target.inbox, name, data)
            assert wait_for(lambda: os.path.exists(target.output(name)), 60), name
            result[index].append((time.monotonic() - start) * 1000)
            time.sleep(0.01)  # let the previous drop's writes drain
    return result

def flood(target, data, round=0):
    before = target.finished()
    start = time.monotonic()
    for i in range(FLOOD_DROPS):
        drop(target.inbox, f"flood{round}-{i}.zip", data)
    assert wait_for(lambda: target.finished() - before >= FLOOD_DROPS, 600)
    return FLOOD_DROPS / (time.monotonic() - start)

def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

def verdict(ok):
    return "met" if ok else "missed"

def main():
    *binaries, fixture, out = sys.argv[1:]
    data = open(fixture, "rb").read()
    settle = int(os.environ.get("SETTLE_MS", "500"))
    with tempfile.TemporaryDirectory(prefix="airlock-bench-") as base:
        try:
            results = measure(binaries, data, settle, base)
        finally:
            for name in os.listdir(base):
                scratch(os.path.join(base, name)).close()
    report(results, data, settle, out)

def pipeline_directory(base, name):
    """A new filesystem of the pipeline's own: no pipeline pays for another's deletions."""
    work = os.path.join(base, name)
    os.makedirs(work)
    return scratch(work).renew()

def measure(binaries, data, settle, base):
    # Every pipeline started is stopped, whatever happens: a daemon left running
    # keeps its filesystem busy, and main could not unmount it.
    pipelines = [Reference(pipeline_directory(base, "ref"))]
    try:
        return measure_pipelines(binaries, data, settle, base, pipelines)
    finally:
        for pipeline in pipelines:
            pipeline.stop()

def measure_pipelines(binaries, data, settle, base, pipelines):
    ref, airlocks, labels = pipelines[0], [], []
    for index, spec in enumerate(binaries):
        binary, _, label = spec.partition("=")
        label, _, option = label.partition("=")
        airlocks.append(Airlock(binary, pipeline_directory(base, f"airlock-{index}"), settle, typed=option == "typed"))
        pipelines.append(airlocks[-1])
        labels.append(label or binary)
    renamed = latencies([ref] + airlocks, data)
    written = latencies([ref] + airlocks, data, drop_written, "written")
    # Floods cannot be interleaved drop by drop: they alternate by round, the
    # reference first, and each airlock round is a ratio to the mean of the
    # reference rounds just before and after it.
    ref_rates = [flood(ref, data)]
    rates = [[] for _ in airlocks]
    for round in range(FLOOD_ROUNDS):
        for index, airlock in enumerate(airlocks):
            rates[index].append(flood(airlock, data, round=round))
        ref_rates.append(flood(ref, data, round=round + 1))
    ratios = [[r / statistics.mean(ref_rates[i:i + 2]) for i, r in enumerate(each)] for each in rates]
    return labels, renamed, written, ref_rates, rates, ratios

def report(results, data, settle, out):
    labels, renamed, written, ref_rates, rates, ratios = results
    ref_lat, ref_written, ref_rate = renamed[0], written[0], statistics.mean(ref_rates)
    rows = list(zip(labels, renamed[1:], written[1:], rates, ratios))
    r50, r99 = pct(ref_lat, 50), pct(ref_lat, 99)
    lines = [f"## Watcher on {KIND}: drop-to-outbox latency and flood throughput", "",
             f"Small ZIP ({len(data)} bytes, 5 files), {LATENCY_DROPS} drops one at a time for latency, "
             f"{FLOOD_DROPS} drops at once for throughput, {FLOOD_ROUNDS} rounds (median, min–max); airlock's settle interval {settle} ms. "
             "Reference: inotifywait piped into bsdtar -xf, sync -f, mv per drop; latency drops alternate between the pipelines; "
             "flood rounds alternate too, each airlock round against the mean of the reference rounds before and after it.", "",
             "| pipeline | renamed p50 (ms) | p99 (ms) | p50 ratio (target ≤ 0.8) | p99 ratio (target ≤ 1.2) "
             "| close-write p50 (ms) | p99 (ms) | flood (drops/s) | flood ratio (target ≥ 3) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
             f"| reference | {r50:.1f} | {r99:.1f} | 1.00 | 1.00 | {pct(ref_written, 50):.1f} | "
             f"{pct(ref_written, 99):.1f} | {ref_rate:.0f} ({min(ref_rates):.0f}–{max(ref_rates):.0f}) | 1.00 |"]
    for label, lat, written, rate, ratio in rows:
        r = statistics.median(ratio)
        p50, p99 = pct(lat, 50) / r50, pct(lat, 99) / r99
        lines.append(f"| airlock {label} | {pct(lat, 50):.1f} | {pct(lat, 99):.1f} | {p50:.2f} {verdict(p50 <= 0.8)} | "
                     f"{p99:.2f} {verdict(p99 <= 1.2)} | {pct(written, 50):.1f} | {pct(written, 99):.1f} | "
                     f"{statistics.median(rate):.0f} ({min(rate):.0f}–{max(rate):.0f}) | "
                     f"{r:.2f} ({min(ratio):.2f}–{max(ratio):.2f}) {verdict(r >= 3)} |")
    text = "\n".join(lines) + "\n"
    with open(out, "a") as f:
        f.write(text + "\n")
    print(text)

if __name__ == "__main__":
    main()
