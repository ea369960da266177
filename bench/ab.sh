#!/usr/bin/env bash
# Builds side by side, round after round, each run on a new loop-mounted ext4 (journal
# on, as mkfs.ext4 makes it; XFS with BENCH_FILESYSTEM=xfs): `run --once` over one input, and, for every mode but `keyed`, bsdtar -xf +
# sync -f of the same input in the same round, so each build gets a ratio per round.
#
# Usage: bench/ab.sh zip|large-zip|tar-zst|keyed ROUNDS BUILD_DIR...   (root: it mounts)
#   zip:   small.zip of bench/make_inputs.py (1,000 files of 1-8 KiB), one drop
#   large-zip, tar-zst: large.zip, large.tar.zst of bench/make_inputs.py (five 18 MiB files), one drop
#   keyed: 2,000 copies of fixtures/keyed/memo-binary.plist
# Each BUILD_DIR holds airlock and its decoders (e.g. a copy of .build/release made
# before a change). Prints medians (min-max); for the single drops, the ratio to bsdtar per round;
# for every build after the first, its time over the first's in the same round; and
# the processor time of each run (user + system of airlock and every decoder child,
# which it waits for), which a loaded machine changes much less than the wall clock.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=$1 rounds=$2
shift 2
case $mode in
  zip) input=small.zip ;;
  large-zip) input=large.zip ;;
  tar-zst) input=large.tar.zst ;;
  keyed) input= ;;
  *) echo "usage: bench/ab.sh zip|large-zip|tar-zst|keyed ROUNDS BUILD_DIR..." >&2; exit 64 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/airlock-ab.XXXXXX")
trap 'umount "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/mnt"
inputs=$(python3 -c "import sys; sys.path.insert(0, 'bench'); from make_inputs import make_inputs; print(make_inputs('$work'))")
memo=fixtures/keyed/memo-binary.plist

fresh() {
  umount "$work/mnt" 2>/dev/null || true
  rm -f "$work/img"
  truncate -s 2G "$work/img"
  if [ "${BENCH_FILESYSTEM:-ext4}" = xfs ]; then
    mkfs.xfs -q -f "$work/img"
    mount -o loop "$work/img" "$work/mnt"
  else
    mkfs.ext4 -q -F "$work/img"
    mount -o loop,noinit_itable "$work/img" "$work/mnt"
  fi
}

now() { date +%s%N; }

for _ in $(seq "$rounds"); do
  if [ "$mode" != keyed ]; then
    fresh
    mkdir "$work/mnt/out"
    sync -f "$work/mnt/out"
    start=$(now)
    bsdtar -xf "$inputs/$input" -C "$work/mnt/out" && sync -f "$work/mnt/out"
    echo "bsdtar $(( ($(now) - start) / 1000 ))"
  fi
  for build in "$@"; do
    fresh
    "$build/airlock" init --root "$work/mnt/root" 2>/dev/null
    if [ "$mode" != keyed ]; then
      cp "$inputs/$input" "$work/mnt/root/inbox/"
    else
      for i in $(seq 2000); do cp "$memo" "$work/mnt/root/inbox/memo-$i.plist"; done
    fi
    sync -f "$work/mnt/root"
    start=$(now)
    cpu=$( { TIMEFORMAT='%3U %3S'; time "$build/airlock" run --once --root "$work/mnt/root" >/dev/null 2>&1; } 2>&1 )
    echo "$build $(( ($(now) - start) / 1000 )) $(ls "$work/mnt/root/outbox" | wc -l) $cpu"
  done
done | python3 -c '
import collections, statistics, sys
mode = sys.argv[1]
times = collections.defaultdict(list)
cpu = collections.defaultdict(list)
for line in sys.stdin:
    fields = line.split()
    times[fields[0]].append(int(fields[1]) / 1000)
    if len(fields) > 2 and int(fields[2]) != (1 if mode != "keyed" else 2000):
        print("WARNING: %s committed %s" % (fields[0], fields[2]))
    if len(fields) > 4:
        cpu[fields[0]].append((float(fields[3]) + float(fields[4])) * 1000)
peer = times.pop("bsdtar", None)
if peer:
    print("bsdtar -xf + sync -f: median %.1f ms (%.1f-%.1f)" % (statistics.median(peer), min(peer), max(peer)))
for build, runs in times.items():
    if peer:
        ratios = [a / b for a, b in zip(runs, peer)]
        print("%s: median %.1f ms (%.1f-%.1f), ratio to bsdtar %.2f (%.2f-%.2f)" % (
            build, statistics.median(runs), min(runs), max(runs), statistics.median(ratios), min(ratios), max(ratios)))
    else:
        rates = [2000 / (ms / 1000) for ms in runs]
        print("%s: median %.0f drops/s (%.0f-%.0f)" % (build, statistics.median(rates), min(rates), max(rates)))
first = next(iter(times))
for build, runs in times.items():
    if build != first:
        ratios = [a / b for a, b in zip(runs, times[first])]
        print("%s: time over %s per round %s, median %.2f" % (build, first, " ".join("%.2f" % r for r in ratios), statistics.median(ratios)))
    if cpu[build]:
        per = [ms / (1 if mode != "keyed" else 2000) for ms in cpu[build]]
        unit = "ms per run" if mode != "keyed" else "ms per drop"
        line = "%s: processor time %.3f %s (%.3f-%.3f)" % (build, statistics.median(per), unit, min(per), max(per))
        if build != first and cpu[first]:
            ratios = [a / b for a, b in zip(cpu[build], cpu[first])]
            line += ", over %s per round median %.2f (%.2f-%.2f)" % (first, statistics.median(ratios), min(ratios), max(ratios))
        print(line)
' "$mode"
