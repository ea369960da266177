#!/usr/bin/env python3
"""Watcher benchmark: drop-to-outbox latency and flood throughput of `airlock run`
against a reference pipeline measured in the same run:

    inotifywait -m -e close_write,moved_to INBOX | while read f; do
        bsdtar -xf INBOX/$f -C OUT/.tmp && sync -f OUT && mv OUT/.tmp OUT/$f
    done

Both take the same small ZIP, dropped as producers should (written under a
temporary name, then renamed); latency is from the rename until the output
directory appears (both publish with one rename). Usage: watch.py AIRLOCK_BIN FIXTURE OUT.md
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

LATENCY_DROPS = int(os.environ.get("LATENCY_DROPS", "60"))
FLOOD_DROPS = int(os.environ.get("FLOOD_DROPS", "1000"))

def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.0005)
    return predicate()

def drop(inbox, name, data):
    temporary = os.path.join(inbox, "." + name + ".part")
    with open(temporary, "wb") as f:
        f.write(data)
    os.rename(temporary, os.path.join(inbox, name))

class Airlock:
    def __init__(self, binary, work, settle_ms):
        self.root = os.path.join(work, "root")
        subprocess.run([binary, "init", "--root", self.root], check=True, stderr=subprocess.DEVNULL)
        config_path = os.path.join(self.root, "airlock.json")
        config = json.load(open(config_path))
        config["watch"]["settle_milliseconds"] = settle_ms
        config["watch"]["queue_limit"] = 256
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

def latencies(target, data):
    result = []
    for i in range(LATENCY_DROPS):
        name = f"lat-{i}.zip"
        start = time.monotonic()
        drop(target.inbox, name, data)
        assert wait_for(lambda: os.path.exists(target.output(name)), 60), name
        result.append((time.monotonic() - start) * 1000)
    return result

def flood(target, data):
    before = target.finished()
    start = time.monotonic()
    for i in range(FLOOD_DROPS):
        drop(target.inbox, f"flood-{i}.zip", data)
    assert wait_for(lambda: target.finished() - before >= FLOOD_DROPS, 600)
    return FLOOD_DROPS / (time.monotonic() - start)

def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

def main():
    binary, fixture, out = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(fixture, "rb").read()
    rows = []
    with tempfile.TemporaryDirectory(prefix="airlock-bench-") as work:
        ref = Reference(os.path.join(work))
        ref_lat = latencies(ref, data)
        ref_rate = flood(ref, data)
        ref.stop()
        for settle in (500, 20):
            sub = os.path.join(work, f"settle-{settle}")
            os.makedirs(sub)
            airlock = Airlock(binary, sub, settle)
            lat = latencies(airlock, data)
            rate = flood(airlock, data)
            airlock.stop()
            rows.append((settle, lat, rate))
    lines = ["## Watcher: drop-to-outbox latency and flood throughput", "",
             f"Small ZIP ({len(data)} bytes, 5 files), {LATENCY_DROPS} drops one at a time for latency, "
             f"{FLOOD_DROPS} drops at once for throughput. Reference: inotifywait piped into bsdtar -xf, sync -f, mv per drop.", "",
             "| pipeline | latency p50 (ms) | p99 (ms) | p50 ratio to reference | flood (drops/s) | throughput ratio to reference |",
             "| --- | --- | --- | --- | --- | --- |",
             f"| reference | {pct(ref_lat, 50):.1f} | {pct(ref_lat, 99):.1f} | 1.00 | {ref_rate:.0f} | 1.00 |"]
    for settle, lat, rate in rows:
        lines.append(f"| airlock, settle {settle} ms | {pct(lat, 50):.1f} | {pct(lat, 99):.1f} | "
                     f"{pct(lat, 50) / pct(ref_lat, 50):.2f} | {rate:.0f} | {rate / ref_rate:.2f} |")
    text = "\n".join(lines) + "\n"
    with open(out, "a") as f:
        f.write(text + "\n")
    print(text)

if __name__ == "__main__":
    main()
