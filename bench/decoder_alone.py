#!/usr/bin/env python3
"""The archive decoder child alone, as the supervisor starts it, builds side by side.

    bench/decoder_alone.py ROUNDS INPUT BUILD_DIR...      (root: it mounts)

INPUT is one of bench/make_inputs.py's inputs (small.zip, large.zip, large.tar,
one-mib.tar, ...). Each run gets a new filesystem from bench/scratch.py (ext4 with
its journal unless BENCH_FILESYSTEM says xfs) holding the drop and an empty
staging directory; airlock-decoder is started with the drop on
descriptor 3, staging on 4 and the result pipe on 5, and the request `airlock
run` sends with the default configuration (DecoderRequest version 4; update
REQUEST when that changes). Builds alternate run by run, so load affects each
alike. Prints per build the median wall time (exec to verdict), user and system
CPU, peak RSS, and how many runs were accepted with every file in staging.
Unlike `run --once` this includes the decoder's exec and dynamic loading, which a
template pays once, and excludes the supervisor.
"""
import json
import os
import statistics
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_inputs import make_inputs  # noqa: E402
from scratch import scratch  # noqa: E402

REQUEST = [
    "request_version=4", "mode=decode", "progress=0", "magic_database=", "limit_as=1073741824", "limit_cpu=60",
    "limit_nofile=64", "limit_fsize=20971521", "confinement=required", "max_entries=1000", "max_file_bytes=20971520",
    "max_total_bytes=104857600", "max_drop_bytes=104857600", "max_component_bytes=255", "max_path_bytes=1024",
    "max_depth=32", "max_ratio=100", "ratio_min_bytes=1048576", "private_modes=0", "staged_file_mode=644",
    "staged_directory_mode=755",
    "zip_legacy_encoding=4350343337", "tar_legacy_encoding=", "keyed_class_names=4d656d6f", "keyed_max_bytes=1048576",
    "keyed_max_items=1000", "keyed_max_text_units=4096", "keyed_keep_original=0",
]
FORMATS = {".zip": "zip", ".tar": "tar", ".tar.gz": "tar.gz", ".tar.zst": "tar.zst"}


def run_once(build, work, inputs, drop_name, fmt):
    mnt = scratch(work).renew()
    shutil.copyfile(os.path.join(inputs, drop_name), mnt + "/drop")
    os.mkdir(mnt + "/staging")
    subprocess.run(["sync", "-f", mnt], check=True)
    drop = os.open(mnt + "/drop", os.O_RDONLY)
    staging = os.open(mnt + "/staging", os.O_RDONLY | os.O_DIRECTORY)
    read_end, write_end = os.pipe()

    def descriptors():
        os.dup2(drop, 3)
        os.dup2(staging, 4)
        os.dup2(write_end, 5)

    start = time.perf_counter()
    child = subprocess.Popen([build + "/airlock-decoder"] + REQUEST + ["format=" + fmt], preexec_fn=descriptors,
                             pass_fds=(3, 4, 5), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    output = b""
    while chunk := os.read(read_end, 65536):
        output += chunk
    # The decoder's own usage (mkfs and mount are children of this process too).
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    wall = (time.perf_counter() - start) * 1000
    for fd in (read_end, drop, staging):
        os.close(fd)
    files = sum(len(names) for _, _, names in os.walk(mnt + "/staging"))
    return dict(wall=wall, user=usage.ru_utime * 1000, sys=usage.ru_stime * 1000, rss=usage.ru_maxrss,
                accepted=b'"verdict":"accepted"' in output, files=files)


def main():
    rounds, drop_name, builds = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    fmt = next(f for suffix, f in sorted(FORMATS.items(), key=lambda kv: -len(kv[0])) if drop_name.endswith(suffix))
    work = tempfile.mkdtemp(prefix="airlock-decoder-alone.")
    inputs = make_inputs(work)
    results = {build: [] for build in builds}
    try:
        for _ in range(rounds):
            for build in builds:
                line = subprocess.run([sys.executable, __file__, "--one", build, work, inputs, drop_name, fmt],
                                      capture_output=True, text=True, check=True).stdout
                results[build].append(json.loads(line))
    finally:
        scratch(work).close()
        shutil.rmtree(work, ignore_errors=True)
    for build, runs in results.items():
        print("%s: wall %.1f ms (min %.1f), user %.1f ms, sys %.1f ms, peak RSS %.1f MiB, accepted %d/%d, files %s" % (
            build, statistics.median(r["wall"] for r in runs), min(r["wall"] for r in runs),
            statistics.median(r["user"] for r in runs), statistics.median(r["sys"] for r in runs),
            statistics.median(r["rss"] for r in runs) / 1024, sum(r["accepted"] for r in runs), len(runs),
            sorted({r["files"] for r in runs})))


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        print(json.dumps(run_once(*sys.argv[2:7])))
    else:
        main()
