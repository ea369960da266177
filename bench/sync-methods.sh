#!/usr/bin/env bash
# Measures the two durability methods of the commit (commit.sync): one syncfs(2)
# on the staging directory's filesystem, against fsync(2) on every file and
# directory written. Each figure is the wall time of `airlock run --once` for one
# drop, median of RUNS runs, each on a new filesystem (bench/scratch.py).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
# The same build as bench/run.sh: a plain `-c release` here would relink the
# binaries against the dynamic standard library under the cases measured next.
swift build -c release --static-swift-stdlib >/dev/null
BIN=.build/release/airlock
WORK=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")
# Each run on a new filesystem at $WORK/scratch (bench/scratch.py).
trap 'umount "$WORK/scratch" 2>/dev/null || true; rm -rf "$WORK"' EXIT
python3 bench/make_inputs.py "$WORK"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for input in small.zip large.zip; do
  for method in syncfs fsync; do
    times=()
    for _ in $(seq "$RUNS"); do
      root="$(python3 bench/scratch.py "$WORK" --keep)/root"
      "$BIN" init --root "$root" 2>/dev/null
      sed -i "s/\"sync\": \"[a-z]*\"/\"sync\": \"$method\"/" "$root/airlock.json"
      cp "$WORK/inputs/$input" "$root/inbox/"
      # The copy is the producer's write, not the intake's: flushed before the clock starts.
      sync -f "$root"
      start=$(date +%s%N)
      "$BIN" run --once --root "$root" >/dev/null 2>&1
      end=$(date +%s%N)
      times+=($(( (end - start) / 1000000 )))
    done
    printf '%-16s %-7s median %5s ms  (runs: %s)\n' "$input" "$method" "$(printf '%s\n' "${times[@]}" | median)" "${times[*]}"
  done
done
