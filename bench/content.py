#!/usr/bin/env python3
"""The cost of the content checks: type detection (libmagic in the decoder child)
on the 1,000-small-file ZIP and on the large ZIP, and virus scanning through clamd,
each as a ratio to the same `run --once` without it, run by run.

clamd is started here in the foreground with a private configuration and a
one-line signature database (the EICAR test string's MD5): the figure is the cost
of the FILDES round trips and of clamd's file-type engines, not of a full
signature set, which costs more per byte (and takes a minute and a GiB to load).

Usage: content.py AIRLOCK_BIN WORKDIR OUT.md   (RUNS=5 by default)
"""
import hashlib, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_inputs import make_inputs  # noqa: E402
from cases import Airlock, fmt, stats, MANY, RUNS  # noqa: E402

EICAR = rb"X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*"


def start_clamd(work):
    """clamd in the foreground on a private socket; (process, socket path)."""
    directory = os.path.join(work, "clamd")
    database = os.path.join(directory, "db")
    os.makedirs(database, exist_ok=True)
    with open(os.path.join(database, "bench.hdb"), "w") as f:
        f.write(f"{hashlib.md5(EICAR).hexdigest()}:{len(EICAR)}:Bench-EICAR\n")
    socket = os.path.join(directory, "clamd.sock")
    config = os.path.join(directory, "clamd.conf")
    with open(config, "w") as f:
        f.write(f"LocalSocket {socket}\nDatabaseDirectory {database}\nTemporaryDirectory {directory}\n"
                f"LogFile {directory}/clamd.log\nForeground yes\nAlertExceedsMax yes\n"
                "MaxFileSize 100M\nMaxScanSize 400M\n")
    process = subprocess.Popen(["clamd", "--foreground", f"--config-file={config}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not os.path.exists(socket):
        if time.time() > deadline or process.poll() is not None:
            raise SystemExit("clamd did not start")
        time.sleep(0.2)
    return process, socket


def compare(title, files, plain, checked, names=None):
    """One row: the same drops through `plain` and `checked` roots, alternately."""
    base, cost, ratios = [], [], []
    for _ in range(RUNS):
        seconds, _ = plain.run(files, names)
        with_check, _ = checked.run(files, names)
        base.append(seconds)
        cost.append(with_check)
        ratios.append(with_check / seconds)
    r, rlo, rhi = stats(ratios)
    return f"| {title} | {fmt(base)} | {fmt(cost)} | {r:.2f} ({rlo:.2f}–{rhi:.2f}) |"


def main():
    binary, work, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    inputs = make_inputs(work)
    small, large = os.path.join(inputs, "small.zip"), os.path.join(inputs, "large.zip")
    untyped = Airlock(binary, work, {"content": {"detect_types": False}})
    typed = Airlock(binary, work, {"content": {"detect_types": True}})
    # The many-drops case's input too: the cost of detection there is most of
    # what separates airlock from its target against the bsdtar loop.
    tiny = [os.path.join(inputs, "tiny.zip")] * MANY
    names = [f"drop-{i}.zip" for i in range(MANY)]
    rows = [compare("type detection, ZIP of 1,000 files of 1–8 KiB", [small], untyped, typed),
            compare("type detection, ZIP of five 18 MiB files", [large], untyped, typed),
            compare(f"type detection, {MANY} small ZIPs (all of them)", tiny, untyped, typed, names)]
    process, socket = start_clamd(work)
    try:
        scanned = Airlock(binary, work, {"content": {"detect_types": True}, "scan": {"clamd_socket": socket}})
        rows += [compare("clamd scanning (types on in both), ZIP of 1,000 files", [small], typed, scanned),
                 compare("clamd scanning (types on in both), ZIP of five 18 MiB files", [large], typed, scanned)]
    finally:
        process.terminate()
        process.wait()
    text = "\n".join([
        "## Content checks", "",
        f"Whole intake (`run --once`), median of {RUNS} runs (min–max); ratio = with ÷ without, run by run, median. "
        "clamd runs with a one-signature database (see bench/content.py).", "",
        "| case | without | with | ratio |", "| --- | --- | --- | --- |", *rows, ""])
    with open(out, "a") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
