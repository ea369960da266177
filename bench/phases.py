#!/usr/bin/env python3
"""Where `run --once` of the 1,000-file ZIP spends its time, phase by phase, builds side by side.

    bench/phases.py ROUNDS BUILD_DIR...      (root: it mounts, and runs perf)

Each run gets a new filesystem from bench/scratch.py (ext4 with its journal
unless BENCH_FILESYSTEM says xfs), with small.zip (or the input BENCH_INPUT names, e.g.
large.tar.zst) in the inbox, and is recorded with perf's scheduler and system-call
tracepoints only (no sampling, so the program runs at its own speed). Builds
alternate run by run. Prints per build the median of each phase, in ms from the
supervisor's exec: the decoder template's exec, the fork of the drop's child, its
confinement, its decode (confined to exit), the supervisor's walk, manifest and
journal up to syncfs, syncfs to the outbox rename, and the rename to exit.
"""
import os
import statistics
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_inputs import make_inputs  # noqa: E402
from scratch import scratch  # noqa: E402

EVENTS = ["sched:sched_process_fork", "sched:sched_process_exec", "sched:sched_process_exit", "syscalls:sys_enter_syncfs",
          "syscalls:sys_enter_renameat2", "syscalls:sys_enter_landlock_restrict_self", "syscalls:sys_enter_exit_group"]


def record(build, work, inputs):
    mnt = scratch(work).renew()
    subprocess.run([build + "/airlock", "init", "--root", mnt + "/root"], stderr=subprocess.DEVNULL, check=True)
    name = os.environ.get("BENCH_INPUT", "small.zip")
    shutil.copyfile(os.path.join(inputs, name), mnt + "/root/inbox/" + name)
    subprocess.run(["sync", "-f", mnt + "/root"], check=True)
    command = ["perf", "record", "-q", "-o", work + "/perf.data"]
    for event in EVENTS:
        command += ["-e", event]
    subprocess.run(command + [build + "/airlock", "run", "--once", "--root", mnt + "/root"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    committed = len(os.listdir(mnt + "/root/outbox"))
    script = subprocess.run(["perf", "script", "-i", work + "/perf.data", "-F", "tid,time,event,trace"],
                            capture_output=True, text=True, check=True).stdout
    return phases(script), committed


def phases(script):
    at, main, child = {}, None, None
    for line in script.splitlines():
        fields = line.split()
        tid, ms, event, rest = fields[0], float(fields[1].rstrip(":")) * 1000, fields[2], " ".join(fields[3:])
        if main is None:
            main, at["start"] = tid, ms
        if event.startswith("sched:sched_process_exec") and "airlock-decoder" in rest and tid != main:
            at.setdefault("template", ms)
        if event.startswith("sched:sched_process_fork") and "child_comm=airlock-decoder" in rest and child is None and "template" in at:
            at["fork"], child = ms, rest.split("child_pid=")[1].split()[0]
        if "landlock" in event and tid == child:
            at.setdefault("confined", ms)
        if "exit_group" in event and tid == child:
            at.setdefault("child_exit", ms)
        if "syncfs" in event and tid == main:
            at["syncfs"] = ms
        if "renameat2" in event and tid == main:
            at["rename"] = ms
        if event.startswith("sched:sched_process_exit") and tid == main:
            at["end"] = ms
    start = at["start"]
    return {
        "template exec": at["template"] - start, "child fork": at["fork"] - start,
        "fork to confined": at["confined"] - at["fork"], "decode": at["child_exit"] - at["confined"],
        "exit to syncfs": at["syncfs"] - at["child_exit"], "syncfs to rename": at["rename"] - at["syncfs"],
        "rename to exit": at["end"] - at["rename"], "total": at["end"] - start,
    }


def main():
    rounds, builds = int(sys.argv[1]), sys.argv[2:]
    work = tempfile.mkdtemp(prefix="airlock-phases.")
    inputs = make_inputs(work)
    results = {build: [] for build in builds}
    try:
        for _ in range(rounds):
            for build in builds:
                measured, committed = record(build, work, inputs)
                if committed != 1:
                    print(f"WARNING: {build} committed {committed}")
                results[build].append(measured)
    finally:
        scratch(work).close()
        shutil.rmtree(work, ignore_errors=True)
    for build, runs in results.items():
        print(build + ": " + ", ".join("%s %.1f" % (key, statistics.median(r[key] for r in runs)) for key in runs[0]))


if __name__ == "__main__":
    main()
