#!/usr/bin/env python3
"""Two builds side by side: `run --once` over N copies of one input, the builds
taking turns round by round so that the machine's load falls on both alike.
Reports drops per second and CPU per drop (user + system time of the
supervisor and its decoder children), each as a median with min–max, and the
median of the per-round ratios. CPU per drop is the steadier figure on a
shared machine, where the wall time follows other people's fsyncs.

Usage: side_by_side.py BEFORE_AIRLOCK AFTER_AIRLOCK INPUT N ROUNDS
"""
import json, os, resource, shutil, statistics, subprocess, sys, tempfile, time


def one(binary, source, count, work, content=None):
    """One `run --once` over COUNT copies of SOURCE in a new root beneath WORK,
    with CONTENT merged into the root's `content` settings: (drops per second,
    CPU ms per drop)."""
    root = os.path.join(work, "root")
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([binary, "init", "--root", root], check=True, capture_output=True)
    if content:
        path = os.path.join(root, "airlock.json")
        with open(path) as f:
            config = json.load(f)
        config.setdefault("content", {}).update(content)
        with open(path, "w") as f:
            json.dump(config, f)
    extension = os.path.splitext(source)[1]
    for i in range(count):
        shutil.copyfile(source, os.path.join(root, "inbox", f"d-{i}{extension}"))
    subprocess.run(["sync", "-f", root], check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run([binary, "run", "--once", "--root", root], check=True, capture_output=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    accepted = len(os.listdir(os.path.join(root, "outbox")))
    assert accepted == count, f"{binary} {content or {}}: {accepted} of {count} drops accepted"
    return count / wall, cpu * 1000 / count


def main():
    before, after, source, count, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    results = {before: [], after: []}
    with tempfile.TemporaryDirectory(prefix="airlock-sbs-") as work:
        for _ in range(rounds):
            for binary in (before, after):
                results[binary].append(one(binary, source, count, work))
    for label, binary in (("before", before), ("after", after)):
        rates, cpus = [r for r, _ in results[binary]], [c for _, c in results[binary]]
        print(f"{label}: {statistics.median(rates):.1f} drops/s ({min(rates):.1f}–{max(rates):.1f}), "
              f"CPU {statistics.median(cpus):.2f} ms/drop ({min(cpus):.2f}–{max(cpus):.2f})")
    pairs = list(zip(results[after], results[before]))
    print(f"CPU per drop, after ÷ before (median of rounds): {statistics.median(a[1] / b[1] for a, b in pairs):.3f}")
    print(f"drops per second, after ÷ before (median of rounds): {statistics.median(a[0] / b[0] for a, b in pairs):.3f}")


if __name__ == "__main__":
    main()
