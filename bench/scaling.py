#!/usr/bin/env python3
"""How cost grows: `run --once` throughput against the number of workers (1, 2,
4) over many small ZIPs, each beside the bsdtar loop measured in the same run,
and time per MiB against the drop's size (1 KiB ... 90 MiB), each beside
bsdtar -xf + sync -f on the same file.

Usage: scaling.py AIRLOCK_BIN WORKDIR OUT.md   (RUNS, MANY_DROPS as in cases.py)
"""
import io, json, os, random, shutil, statistics, subprocess, sys, zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import Airlock, peer_output, timed_shell, RUNS, MANY  # noqa: E402
from make_inputs import text_like  # noqa: E402

SIZES = [("1 KiB", 1 << 10), ("64 KiB", 64 << 10), ("1 MiB", 1 << 20), ("16 MiB", 16 << 20), ("90 MiB", 90 << 20)]


class Workers(Airlock):
    """An airlock whose fresh roots run `count` decoder workers."""
    def __init__(self, binary, work, count):
        super().__init__(binary, work)
        self.count = count

    def fresh_root(self):
        root = super().fresh_root()
        path = os.path.join(root, "airlock.json")
        config = json.load(open(path))
        config.setdefault("watch", {})["workers"] = self.count
        json.dump(config, open(path, "w"))
        return root


def sized_zip(path, size):
    """One ZIP holding five text files that add up to `size` bytes."""
    rng = random.Random(size)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(5):
            archive.writestr(f"part{i}.txt", text_like(rng, max(1, size // 5)))


def main():
    binary, work, out = sys.argv[1], sys.argv[2], sys.argv[3]
    inputs = os.path.join(work, "inputs")
    tiny = os.path.join(inputs, "tiny.zip")
    names = [f"drop-{i}.zip" for i in range(MANY)]
    loop_dir = os.path.join(work, "loop-in")
    shutil.rmtree(loop_dir, ignore_errors=True)
    os.makedirs(loop_dir)
    for name in names:
        shutil.copyfile(tiny, os.path.join(loop_dir, name))
    peer_out = peer_output(work)
    loop = f'cd "{loop_dir}" && for f in *.zip; do mkdir "{peer_out}/$f" && bsdtar -xf "$f" -C "{peer_out}/$f" && sync -f "{peer_out}"; done'
    lines = ["## How cost grows", "",
             f"### Throughput against workers: {MANY} small ZIPs, `run --once` (median of {RUNS}, min–max)", "",
             "| workers | airlock drops/s | bsdtar loop drops/s | ratio |", "| --- | --- | --- | --- |"]
    for count in (1, 2, 4):
        airlock = Workers(binary, work, count)
        ours, theirs = [], []
        for _ in range(RUNS):
            seconds, _ = airlock.run([tiny] * MANY, names)
            ours.append(MANY / seconds)
            theirs.append(MANY / timed_shell(loop, work))
        ratios = [o / t for o, t in zip(ours, theirs)]
        lines.append(f"| {count} | {statistics.median(ours):.0f} ({min(ours):.0f}–{max(ours):.0f}) | "
                     f"{statistics.median(theirs):.0f} ({min(theirs):.0f}–{max(theirs):.0f}) | "
                     f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |")
    lines += ["", f"### Time per MiB against drop size: one ZIP of five text files (median of {RUNS}, min–max)", "",
              "| size | airlock ms | ms per MiB | bsdtar -xf + sync -f ms | ratio |", "| --- | --- | --- | --- | --- |"]
    airlock = Airlock(binary, work)
    for label, size in SIZES:
        path = os.path.join(inputs, f"sized-{size}.zip")
        if not os.path.exists(path):
            sized_zip(path, size)
        ours, theirs = [], []
        for _ in range(RUNS):
            seconds, _ = airlock.run([path])
            ours.append(seconds)
            theirs.append(timed_shell(f'bsdtar -xf "{path}" -C "{peer_out}" && sync -f "{peer_out}"', work))
        mib = size / 1048576
        m = statistics.median(ours)
        ratios = [o / t for o, t in zip(ours, theirs)]
        lines.append(f"| {label} | {m * 1000:.1f} ({min(ours) * 1000:.1f}–{max(ours) * 1000:.1f}) | {m * 1000 / mib:.2f} | "
                     f"{statistics.median(theirs) * 1000:.1f} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |")
    text = "\n".join(lines) + "\n"
    with open(out, "a") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
