#!/usr/bin/env python3
"""Mutation fuzzing of keyed-archive drops through the real decode path.

Each round writes a batch of mutated samples (from fixtures/keyed) into the inbox
of a fresh root and runs `airlock run --once` on it: the supervisor must survive
every input and end each drop in exactly one place, and every decoder crash must
be a quarantined `decoder-failed`. Crashing inputs are re-run one by one with
`airlock inspect` to group them by signal and Foundation's fatal-error line.

Usage: keyed.py AIRLOCK_BIN SECONDS CRASH_DIR
"""
import glob, hashlib, json, os, random, re, shutil, subprocess, sys, tempfile, time

BATCH = 200


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3, 5, 8])):
        op = rng.random()
        if not data:
            data = bytearray(b"bplist00")
        i = rng.randrange(len(data))
        if op < 0.45:
            data[i] ^= 1 << rng.randrange(8)
        elif op < 0.65:
            data[i] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, 0x10, 0x20, 0x0F])
        elif op < 0.75:
            del data[i:i + rng.randint(1, 8)]
        elif op < 0.85:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op < 0.92:
            data = data[: max(8, i)]
        else:
            j = rng.randrange(len(data))
            data[i:i + 4] = data[j:j + 4]
    return bytes(data)


def main():
    binary, seconds, crash_dir = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seeds = [open(p, "rb").read() for p in sorted(glob.glob(os.path.join(repo, "fixtures/keyed/*.plist")))]
    rng = random.Random(int(os.environ.get("FUZZ_SEED", "1")))
    os.makedirs(crash_dir, exist_ok=True)
    deadline = time.monotonic() + seconds
    tried = crashed = rounds = 0
    outcomes = {}
    crashes = {}
    failures = []
    while time.monotonic() < deadline:
        work = tempfile.mkdtemp(prefix="airlock-fuzz-")
        root = os.path.join(work, "root")
        subprocess.run([binary, "init", "--root", root], check=True, stderr=subprocess.DEVNULL)
        inputs = {}
        for n in range(BATCH):
            data = mutate(rng, rng.choice(seeds))
            name = f"m{n:04d}.plist"
            inputs[name] = data
            with open(os.path.join(root, "inbox", name), "wb") as f:
                f.write(data)
        run = subprocess.run([binary, "run", "--once", "--root", root], capture_output=True, text=True, timeout=600)
        events = [json.loads(line) for line in run.stdout.split("\n") if line.startswith("{")]
        rounds += 1
        tried += len(inputs)
        problems = []
        if run.returncode != 0:
            problems.append(f"exit {run.returncode}")
        if sorted(e["drop"] for e in events) != sorted(inputs):
            problems.append("not every drop has exactly one event")
        finished = len(os.listdir(os.path.join(root, "outbox"))) + len(os.listdir(os.path.join(root, "quarantine")))
        if finished != len(inputs):
            problems.append(f"{finished} drops finished of {len(inputs)}")
        for d in ("inbox", "state/staging", "state/claimed"):
            if os.listdir(os.path.join(root, d)):
                problems.append(f"{d} not empty")
        if problems:
            failures.append(problems)
        for e in events:
            key = e["event"] + ("/" + e["reason"] if "reason" in e else "")
            outcomes[key] = outcomes.get(key, 0) + 1
            if e.get("reason") == "decoder-failed":
                crashed += 1
                data = inputs[e["drop"]]
                digest = hashlib.sha256(data).hexdigest()[:16]
                inspect = subprocess.run([binary, "inspect", os.path.join(root, "quarantine", e["id"], "drop")],
                                         capture_output=True, text=True, timeout=120)
                fatal = re.findall(r"Fatal error: [^\n]*", inspect.stderr)
                detail = e.get("detail", "")
                signature = (fatal[0] if fatal else "no message") + " | " + detail
                signature = re.sub(r"0x[0-9a-f]+", "0x…", signature)
                if signature not in crashes:
                    crashes[signature] = digest
                    with open(os.path.join(crash_dir, f"crash-{digest}.plist"), "wb") as f:
                        f.write(data)
        shutil.rmtree(work)
    report = {"rounds": rounds, "inputs": tried, "decoder_failed": crashed, "distinct_crashes": len(crashes),
              "crash_signatures": crashes, "outcomes": dict(sorted(outcomes.items())), "invariant_failures": failures}
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
