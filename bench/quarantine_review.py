#!/usr/bin/env python3
"""How fast the Cockpit page's commands answer with a large quarantine.

Lays out a root whose quarantine holds N entries (100,000 by default) written
as the intake writes them (quarantine/ID/report.json and drop), with a journal
of their claimed and rejected records spread over the last 7 days, then times
each command the page runs, several times, and writes a table:

  list, first page, no index yet   quarantine list --json --limit 51 (builds state/quarantine.index)
  list, first page                 the same with the index
  list by reason / by uploader     --reason unsafe-path / --uploader bob, first page
  list, text search                --text, first page
  list after 100 new entries       the index learns them from their reports
  list after a release            the index notes it
  overview: status                status --json
  overview: chart                 history --per-hour --since 7d --json
  reindex                         quarantine reindex

Usage: bench/quarantine_review.py [--entries N] [--airlock PATH] [--out FILE]
"""
import argparse, hashlib, json, os, random, resource, shutil, statistics, subprocess, sys, tempfile, time
from datetime import datetime, timedelta, timezone

REASONS = ["unsafe-path", "unsupported-format", "name-collision", "corrupt-archive", "file-too-large", "malware-found"]
UPLOADERS = ["alice", "bob", "carol", "sftp-ingest", "dave"]
POLICY = {"file_mode": "0644", "max_component_bytes": 255, "max_depth": 32, "max_drop_bytes": 104857600, "max_entries": 1000,
          "max_file_bytes": 20971520, "max_path_bytes": 1024, "max_ratio": 100, "max_total_bytes": 104857600, "ratio_min_bytes": 1048576}


def stamp(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def populate(root, count, airlock):
    subprocess.run([airlock, "init", "--root", root], check=True, capture_output=True)
    now = datetime.now(timezone.utc)
    rng = random.Random(33)
    quarantine = os.path.join(root, "quarantine")
    lines = []
    for n in range(count):
        decided = now - timedelta(seconds=rng.randrange(7 * 86400))
        ident = decided.strftime("%Y%m%dT%H%M%SZ") + "-" + f"{n:08x}"
        name = f"drop-{n}.zip"
        reason = REASONS[n % len(REASONS)]
        report = {"airlock_version": "0.1.0", "bytes_written": 0, "decided_at": stamp(decided), "detail": "benchmark entry",
                  "drop": name, "drop_hex": name.encode().hex(), "entry": "../outside.txt", "entry_index": 0, "format": "zip",
                  "id": ident, "policy": POLICY, "reason": reason, "received_at": stamp(decided), "sha256": hashlib.sha256(name.encode()).hexdigest(),
                  "size": 116, "uploader": UPLOADERS[n % len(UPLOADERS)], "uploader_uid": 1000 + n % len(UPLOADERS)}
        entry = os.path.join(quarantine, ident)
        os.mkdir(entry)
        with open(os.path.join(entry, "report.json"), "w") as f:
            json.dump(report, f, indent=2, sort_keys=True)
        with open(os.path.join(entry, "drop"), "wb") as f:
            f.write(b"PK\x05\x06" + bytes(18))
        t = stamp(decided)
        lines.append((t, json.dumps({"time": t, "event": "claimed", "id": ident, "drop": name, "size": 116, "uploader": report["uploader"]},
                                    separators=(",", ":"))))
        lines.append((t, json.dumps({"time": t, "event": "rejected", "id": ident, "drop": name, "size": 116, "reason": reason,
                                     "entry": "../outside.txt", "bytes_written": 0}, separators=(",", ":"))))
    lines.sort()
    # As rotation leaves them: oldest in journal.N.jsonl, each under the default 16 MiB.
    chunks, chunk, size = [], [], 0
    for _, line in lines:
        if size + len(line) + 1 > 15 << 20:
            chunks.append(chunk)
            chunk, size = [], 0
        chunk.append(line)
        size += len(line) + 1
    chunks.append(chunk)
    state = os.path.join(root, "state")
    names = [f"journal.{i}.jsonl" for i in range(len(chunks) - 1, 0, -1)] + ["journal.jsonl"]
    for name, part in zip(names, chunks):
        with open(os.path.join(state, name), "w") as f:
            f.write("\n".join(part) + "\n")


CPU = []


def timed(argv, runs):
    """Wall-clock seconds per run; the CPU seconds (user + system) go to CPU."""
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        result = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.monotonic() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if result.returncode != 0:
            raise SystemExit(f"{' '.join(argv)}: {result.returncode}: {result.stderr}")
    return times, result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--airlock", default=".build/release/airlock")
    parser.add_argument("--out", default="bench/results/quarantine-review.md")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="airlock-bench-review-", dir="/var/tmp")
    root = os.path.join(work, "root")
    try:
        start = time.monotonic()
        populate(root, args.entries, args.airlock)
        print(f"laid out {args.entries} entries in {time.monotonic() - start:.1f} s", flush=True)
        a, r = args.airlock, ["--root", root]
        rows = []

        def case(label, argv, runs=args.runs, check=None):
            CPU.clear()
            times, out = timed([a, *argv, *r], runs)
            if check:
                check(out)
            rows.append((label, " ".join(["airlock", *argv]), times, statistics.median(CPU)))
            print(f"{label}: median {statistics.median(times):.3f} s, max {max(times):.3f} s, cpu {statistics.median(CPU):.3f} s", flush=True)
            return out

        page = ["quarantine", "list", "--json", "--limit", "51"]
        case("list, first page, no index yet", page, runs=1, check=lambda out: len(out.splitlines()) == 51 or sys.exit("short page"))
        case("list, first page", page)
        case("list by reason", page + ["--reason", "malware-found"],
             check=lambda out: all(json.loads(l)["reason"] == "malware-found" for l in out.splitlines()) or sys.exit("reason filter"))
        case("list by uploader", page + ["--uploader", "bob"],
             check=lambda out: all(json.loads(l)["uploader"] == "bob" for l in out.splitlines()) or sys.exit("uploader filter"))
        case("list, text search, 3rd page", page + ["--text", "drop-99", "--offset", "102"])
        case("list, last page", page + ["--offset", str(args.entries - 50)])
        # 100 entries arrive the way the intake adds them: whole directories renamed into quarantine/.
        quarantine = os.path.join(root, "quarantine")
        newest = sorted(os.listdir(quarantine))[-100:]
        for ident in newest:
            fresh = ident[:17] + "f" + ident[18:]
            shutil.copytree(os.path.join(quarantine, ident), os.path.join(work, fresh))
            with open(os.path.join(work, fresh, "report.json")) as f:
                report = json.load(f)
            report["id"] = fresh
            with open(os.path.join(work, fresh, "report.json"), "w") as f:
                json.dump(report, f)
            os.rename(os.path.join(work, fresh), os.path.join(quarantine, fresh))
        case("list after 100 new entries", page, runs=1)
        released = json.loads(timed([a, *page, *r], 1)[1].splitlines()[0])["id"]
        timed([a, "quarantine", "release", released, "--reason", "bench", *r], 1)
        case("list after a release", page, runs=1,
             check=lambda out: json.loads(out.splitlines()[0])["released"] or sys.exit("the release is not in the list"))
        case("overview: status", ["status", "--json"])
        case("overview: chart", ["history", "--per-hour", "--since", "7d", "--json"])
        case("history, newest 2000", ["history", "--json", "--limit", "2000"])
        case("reindex (rebuild from every report)", ["quarantine", "reindex"], runs=1)
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(f"# Quarantine review with {args.entries:,} entries\n\n")
            f.write(f"`python3 bench/quarantine_review.py --entries {args.entries}` with {args.airlock}, "
                    f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores. Seconds per command, wall clock "
                    "(the journal holds a claimed and a rejected record per entry); CPU is user + system seconds of the "
                    f"command, which a loaded machine does not inflate (load average then: {os.getloadavg()[0]:.1f}).\n\n")
            f.write("| case | command | runs | median | max | CPU (median) |\n| --- | --- | --- | --- | --- | --- |\n")
            for label, command, times, cpu in rows:
                f.write(f"| {label} | `{command}` | {len(times)} | {statistics.median(times):.3f} | {max(times):.3f} | {cpu:.3f} |\n")
        print(f"wrote {args.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
