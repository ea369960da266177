#!/usr/bin/env python3
"""Runs the built test bundle as several processes at once (as `swift test
--skip-build` runs it, but side by side), each given whole suites, and fails unless every listed test ran and passed.

Why: one test process keeps about one core busy on this suite. Most end-to-end
tests spend their time waiting (for a daemon to settle, a child to be killed, a
poll to come round), and Swift Testing runs only as many tests at once as the
cooperative pool has threads, one per core, which a test waiting on a process
holds. Several processes wait side by side, so both cores stay busy.

Suites are never split: a suite's `.serialized` trait and its shared fixtures
hold within one process. Suites are packed into batches by the processor
seconds in Tests/suite-weights.tsv (measured by `make test-weights`; a suite
missing there counts as the median), and the batches wait in one queue,
costliest first: a process starts for the next batch whenever one finishes, so
the costliest suites start at once, the cheap ones fill in around them, and no
process idles at the end while another still has a fixed share to get through
(measured back to back: 75.8 s against 84.5 s with four fixed shares). Six
run at once by default: most of the suite waits on processes, and six kept the
two cores busier than four (82.5, 86.7 and 89.1 s against 90.2 and 97.3 s).

The count is checked: the tests each batch ran must add up to the tests the
bundle lists (as `swift test list` does), so a filter that matched nothing
cannot pass unseen.

Where the tests write: run as root, on a new ext4 made with mkfs.ext4's defaults
(journal on) in a sparse file, loop-mounted for this run only and removed after
it, as the tests' TMPDIR: the filesystem servers run airlock on, and the one
`make bench` measures on, whatever the machine's own /tmp is. (An ext4 made
without a journal, as some machines' root is, makes every file creation skip the
inodes freed in the last 30 seconds: on this suite, a quarter of its wall-clock
time.) TEST_SCRATCH=tmpdir, a user without root, or a mount that fails keep
the tests in TMPDIR, and say why.

Usage: test_shards.py [--shards N] [--weights FILE] [--measure]
  --measure: run each suite alone and write its seconds to the weights file.
"""
import argparse, os, re, resource, statistics, subprocess, sys, tempfile, time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_WEIGHTS = os.path.join(REPOSITORY, "Tests", "suite-weights.tsv")
# Taken before TMPDIR may point at the scratch filesystem: a failed batch's log outlives it.
LOGS = tempfile.gettempdir()
SUMMARY = re.compile(r"Test run with (\d+) tests? in (\d+) suites? (passed|failed)")


def bundle():
    """The built test bundle. The shards run it directly, as `swift test` does:
    SwiftPM holds a lock on .build/ for as long as each `swift test` runs, so
    several of them would take turns rather than run side by side."""
    result = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPOSITORY,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    directory = result.stdout.strip()
    found = sorted(name for name in os.listdir(directory) if name.endswith("PackageTests.xctest")) if directory else []
    if result.returncode != 0 or len(found) != 1:
        sys.exit(f"test_shards: no test bundle in {directory or 'the build'}: run swift build --build-tests first")
    return [os.path.join(directory, found[0]), "--testing-library", "swift-testing"]


def listed_tests(command):
    """Test ids as the bundle lists them (what `swift test list` prints): Module.Suite/test(…)."""
    result = subprocess.run(command + ["--list-tests"], cwd=REPOSITORY,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"test_shards: listing the tests failed ({result.returncode}):\n{result.stderr}")
    return [line.strip() for line in result.stdout.splitlines() if "/" in line]


def suites_of(tests):
    """Test counts by top-level suite (the id up to its first '/')."""
    counts = {}
    for test in tests:
        suite = test.split("/", 1)[0]
        counts[suite] = counts.get(suite, 0) + 1
    return counts


def read_weights(path):
    weights = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                seconds, suite = line.split("\t")
                weights[suite.strip()] = float(seconds)
    return weights


def deal(suites, weights, shards):
    """Batches of whole suites for the processes to take from one queue, costliest
    first: a suite that costs at least a third of a process's share runs alone,
    the rest are packed into batches of about that much. Dealt out from a queue
    as processes finish, rather than fixed per process up front, the batches
    keep every process busy to the end, however long a suite waits."""
    fallback = statistics.median(weights.values()) if weights else 1.0
    cost = {suite: weights.get(suite, fallback) for suite in suites}
    share = sum(cost.values()) / (shards * 3)
    batches = []
    for suite in sorted(suites, key=lambda s: (-cost[s], s)):
        open_batch = next((batch for batch in batches if batch[0] + cost[suite] <= share), None)
        if open_batch is None or cost[suite] >= share:
            batches.append([cost[suite], [suite]])
        else:
            open_batch[0] += cost[suite]
            open_batch[1].append(suite)
    return sorted(batches, key=lambda batch: -batch[0])


def filters(suites):
    args = []
    for suite in suites:
        args += ["--filter", "^" + re.escape(suite) + "/"]
    return args


def journaled_scratch():
    """A new journaled ext4 for the tests' TMPDIR, or None (after saying why):
    (work directory, mount point)."""
    if os.environ.get("TEST_SCRATCH", "ext4") != "ext4":
        return None
    if os.geteuid() != 0:
        print("test_shards: not root, so the tests write in TMPDIR, not on a journaled ext4 of their own")
        return None
    work = tempfile.mkdtemp(prefix="airlock-test-scratch-")
    # mkdtemp makes it 0700: the users the tests run as must pass through it to the mount.
    os.chmod(work, 0o711)
    image, mount = os.path.join(work, "ext4.img"), os.path.join(work, "tmp")
    os.mkdir(mount)
    with open(os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        f.truncate(32 << 30)  # sparse: only what the tests write takes space, until it is removed
    for step in (["mkfs.ext4", "-q", "-F", image], ["mount", "-o", "loop,noinit_itable", image, mount]):
        result = subprocess.run(step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            print(f"test_shards: {' '.join(step[:2])} failed, so the tests write in TMPDIR: {result.stdout.strip()}")
            subprocess.run(["rm", "-rf", work])
            return None
    os.chmod(mount, 0o1777)  # as /tmp: the tests run producers and consumers as other users
    return work, mount


def remove_scratch(scratch):
    work, mount = scratch
    if subprocess.run(["umount", mount], stderr=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["umount", "-l", mount])  # a straggling process still has it open
    subprocess.run(["rm", "-rf", work])


def run_shards(command, groups, processes):
    """Runs the batches, at most `processes` at a time, each started as another
    finishes; returns [(suites, returncode, log path, seconds)] in batch order."""
    environment = dict(os.environ, NO_COLOR="1")
    waiting = list(enumerate(groups))
    running = {}
    finished = [None] * len(groups)
    while waiting or running:
        while waiting and len(running) < processes:
            index, (_, suites) = waiting.pop(0)
            log = tempfile.NamedTemporaryFile(prefix="airlock-shard-", suffix=".log", dir=LOGS, delete=False)
            process = subprocess.Popen(command + filters(suites), cwd=REPOSITORY, env=environment,
                                       stdout=log, stderr=subprocess.STDOUT)
            running[index] = (suites, process, log, time.monotonic())
        for index, (suites, process, log, started) in list(running.items()):
            if process.poll() is not None:
                log.close()
                finished[index] = (suites, process.returncode, log.name, time.monotonic() - started)
                del running[index]
        time.sleep(0.1)
    return finished


def report(finished, expected):
    ran, failed = 0, False
    for index, (suites, code, path, seconds) in enumerate(finished, 1):
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
        summary = next((m for m in map(SUMMARY.search, reversed(lines)) if m), None)
        count = int(summary.group(1)) if summary else 0
        ran += count
        state = "passed" if code == 0 and summary and summary.group(3) == "passed" else "FAILED"
        print(f"batch {index}: {count} tests in {len(suites)} suites {state} after {seconds:.1f} s")
        if state != "passed":
            failed = True
            problems = [line for line in lines if "✘" in line or "error:" in line or "Fatal error" in line]
            print("\n".join(problems[-80:] or lines[-80:]))
            print(f"(whole log: {path})")
        else:
            os.unlink(path)
    if ran != expected:
        print(f"test_shards: the shards ran {ran} tests, the bundle lists {expected}")
        failed = True
    return not failed


def measure(command, suites, path):
    """Each suite alone, the processor seconds it used (its processes' user and
    system time) written to `path`. Processor time, not wall-clock time, is what
    the processes share: several at once on two cores keep both busy."""
    rows = []
    for suite in sorted(suites):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        code = subprocess.run(command + filters([suite]), cwd=REPOSITORY,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if code != 0:
            sys.exit(f"test_shards: {suite} failed on its own ({code}); weights not written")
        rows.append((seconds, suite))
        print(f"{seconds:7.2f} {suite}", flush=True)
    with open(path, "w") as f:
        f.write("# processor seconds\tsuite: each suite run alone by `make test-weights` (scripts/test_shards.py --measure)\n")
        for seconds, suite in sorted(rows, reverse=True):
            f.write(f"{seconds:.2f}\t{suite}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=int(os.environ.get("TEST_SHARDS", "6")))
    parser.add_argument("--weights", default=DEFAULT_WEIGHTS)
    parser.add_argument("--measure", action="store_true")
    options = parser.parse_args()
    if options.shards < 1:
        sys.exit("test_shards: --shards must be at least 1")
    command = bundle()
    tests = listed_tests(command)
    suites = suites_of(tests)
    scratch = journaled_scratch()
    if scratch:
        os.environ["TMPDIR"] = scratch[1]
    try:
        if options.measure:
            measure(command, suites, options.weights)
            return
        groups = deal(suites, read_weights(options.weights), options.shards)
        started = time.monotonic()
        passed = report(run_shards(command, groups, options.shards), len(tests))
    finally:
        if scratch:
            remove_scratch(scratch)
    print(f"{len(tests)} tests in {len(suites)} suites, {len(groups)} batches, {options.shards} at a time: "
          f"{'passed' if passed else 'FAILED'} after {time.monotonic() - started:.1f} s")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
