#!/usr/bin/env python3
"""Where the time goes: a profile of `airlock run --once` for each benchmark case,
so that a missed target comes with the evidence of what would close it.

For each case the intake runs twice on a fresh root: once under `perf record -g`
(the supervisor and every child it starts, nothing else on the machine), once
under `strace -f -c` (system calls, counted and timed across all processes).
The report gives CPU by process and library, the hottest symbols of each
process, and the costliest system calls.

Usage: profile.py AIRLOCK_BIN WORKDIR OUT.md [CASE ...]
Cases: many-tiny (300 small ZIPs), keyed (300 memos), one-kib (one 1 KiB ZIP),
large-zip, large-tar-zst, small-zip (one ZIP of 1,000 files); all by default.
"""
import os, shutil, subprocess, sys, zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_inputs import make_inputs  # noqa: E402
from scratch import scratch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MEMO = os.path.join(HERE, "..", "fixtures", "keyed", "memo-binary.plist")


def one_kib_zip(path):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(5):
            z.writestr(f"part-{i}.txt", (f"line {i}\n" * 40)[:200])
    return path


def cases(inputs, work):
    tiny = os.path.join(inputs, "tiny.zip")
    return {
        "many-tiny": ("300 copies of a 3 KiB ZIP of 5 files", [tiny] * 300),
        "keyed": ("300 keyed memo archives", [MEMO] * 300),
        "one-kib": ("one ZIP of five 200-byte files", [one_kib_zip(os.path.join(work, "one-kib.zip"))]),
        "large-zip": ("one ZIP of five 18 MiB text files", [os.path.join(inputs, "large.zip")]),
        "large-tar-zst": ("the same files as tar.zst", [os.path.join(inputs, "large.tar.zst")]),
        "small-zip": ("one ZIP of 1,000 files of 1-8 KiB", [os.path.join(inputs, "small.zip")]),
    }


def fresh_root(binary, work, files):
    root = os.path.join(scratch(work).renew(), "root")
    subprocess.run([binary, "init", "--root", root], check=True, capture_output=True)
    for index, path in enumerate(files):
        shutil.copyfile(path, os.path.join(root, "inbox", f"d-{index}{os.path.splitext(path)[1]}"))
    subprocess.run(["sync", "-f", root], check=True)
    return root


def perf_section(binary, work, files):
    root = fresh_root(binary, work, files)
    data = os.path.join(work, "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", "2000", "-g", "-o", data, "--",
                    binary, "run", "--once", "--root", root], check=True, capture_output=True)
    accepted = len(os.listdir(os.path.join(root, "outbox")))

    def report(*arguments):
        text = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "-g", "none",
                               "--percent-limit", "0.7", *arguments],
                              check=True, capture_output=True, text=True).stdout
        return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]

    lines = [f"accepted {accepted} of {len(files)} drops", "", "CPU by process and library (share of all samples):",
             "```", *report("--sort", "comm,dso")[:20], "```", ""]
    # perf keeps the first 15 characters of a process name.
    for comm in ("airlock", "airlock-decoder", "airlock-keyed-d"):
        top = report("--comm", comm, "--sort", "dso,sym")[:15]
        if top:
            lines += [f"Hottest symbols in {comm}:", "```", *top, "```", ""]
    return lines


def strace_section(binary, work, files):
    root = fresh_root(binary, work, files)
    counts = os.path.join(work, "strace.txt")
    subprocess.run(["strace", "-f", "-c", "-S", "time", "-o", counts, binary, "run", "--once", "--root", root],
                   check=True, capture_output=True)
    with open(counts) as f:
        text = f.read()
    rows = [line for line in text.splitlines() if line.strip()]
    return ["System calls, all processes (strace -f -c, by time):", "```", *rows[:18], "```", ""]


def main():
    binary, work, out = sys.argv[1:4]
    wanted = sys.argv[4:]
    inputs = os.path.join(work, "inputs")
    if not os.path.exists(os.path.join(inputs, "tiny.zip")):
        make_inputs(work)
    chosen = cases(inputs, work)
    lines = ["# Where the time goes: profiles of `airlock run --once`", "",
             f"Binary: {binary}. Regenerate with `make profile` (or bench/profile.py).", ""]
    for name, (what, files) in chosen.items():
        if wanted and name not in wanted:
            continue
        print(f"profiling {name}", file=sys.stderr)
        lines += [f"## {name}: {what}", ""]
        lines += perf_section(binary, work, files)
        lines += strace_section(binary, work, files)
    # Known once a run has tried to make its filesystem.
    lines[2] += f" Filesystem: {scratch(work).describe()}."
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
