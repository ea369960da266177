#!/usr/bin/env python3
"""The cost of content classes and of libmagic on the 1,000-small-file ZIP, side
by side in one invocation: the builds and settings take turns round by round, so
the machine's load falls on all of them alike.

  base       BASE_AIRLOCK (a build without content classes) with content.detect_types false
  classes    AIRLOCK with its defaults: classes on every file, libmagic off
  libmagic   AIRLOCK with content.detect_types true: classes and libmagic

Each run is `run --once` over COPIES drops of bench's small.zip (make_inputs.py:
1,000 text-like files of 1-8 KiB, deflated). Reported: CPU per drop (user +
system of the supervisor and its decoder children), the steadier figure on a
shared machine, and drops per second, as medians with min-max, and each
configuration's median per-round ratio to base.

Usage: classes.py BASE_AIRLOCK AIRLOCK WORKDIR [COPIES=5] [ROUNDS=7]
"""
import os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_inputs import make_inputs  # noqa: E402
import side_by_side  # noqa: E402


def one(binary, settings, source, copies, work):
    """One `run --once` with SETTINGS as the content section: (drops per second, CPU ms per drop)."""
    return side_by_side.one(binary, source, copies, work, content=settings)


def main():
    base, airlock, work = sys.argv[1], sys.argv[2], sys.argv[3]
    copies = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 7
    os.makedirs(work, exist_ok=True)
    source = os.path.join(make_inputs(work), "small.zip")
    configurations = [("base", base, {"detect_types": False}), ("classes", airlock, {}),
                      ("libmagic", airlock, {"detect_types": True})]
    results = {name: [] for name, _, _ in configurations}
    for _ in range(rounds):
        for name, binary, settings in configurations:
            results[name].append(one(binary, settings, source, copies, work))
    for name, _, _ in configurations:
        rates, cpus = [r for r, _ in results[name]], [c for _, c in results[name]]
        line = (f"{name:9} CPU {statistics.median(cpus):7.2f} ms/drop ({min(cpus):.2f}-{max(cpus):.2f}), "
                f"{statistics.median(rates):6.2f} drops/s ({min(rates):.2f}-{max(rates):.2f})")
        if name != "base":
            cpu_ratio = statistics.median(a[1] / b[1] for a, b in zip(results[name], results["base"]))
            rate_ratio = statistics.median(a[0] / b[0] for a, b in zip(results[name], results["base"]))
            line += f"; CPU / base {cpu_ratio:.3f}, drops/s / base {rate_ratio:.3f}"
        print(line)


if __name__ == "__main__":
    main()
