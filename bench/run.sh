#!/usr/bin/env bash
# make bench: static release build (the binaries a server runs: the decoder
# children start in a third of the time the dynamic stdlib takes), inputs
# generated here (never committed), each case beside its peer in the same
# invocation; results in bench/results/latest.md.
#
# QUICK=1 (make bench-quick): one run per case and smaller floods, for a
# developer's loop; the figures are noisier and written to bench/results/quick.md.
# BASELINE=path/to/airlock: the watcher cases also run that binary, side by side.
#
# Filesystems: every case on ext4 as mkfs.ext4 makes it (journal on), where the
# targets hold; then the intake cases and the watcher on XFS too (BENCH_FILESYSTEMS,
# default "ext4 xfs"; the first one gets every case).
set -euo pipefail
cd "$(dirname "$0")/.."
need=""
for tool in bsdtar inotifywait python3 unzip zstd clamd file mkfs.xfs; do command -v "$tool" >/dev/null || need="$need $tool"; done
if [ -n "$need" ]; then
  echo "installing the peers:$need"
  apt-get install -y libarchive-tools inotify-tools python3 unzip zstd clamav-daemon file xfsprogs >/dev/null
fi
read -r -a filesystems <<< "${BENCH_FILESYSTEMS:-ext4 xfs}"
swift build -c release --static-swift-stdlib >/dev/null
mkdir -p bench/results
out=bench/results/latest.md
if [ "${QUICK:-0}" = 1 ]; then
  out=bench/results/quick.md
  export RUNS=1 MANY_DROPS=300 LATENCY_DROPS=20 FLOOD_DROPS=300 SUPERVISOR_DROPS=1000
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")
# Each measurement mounts a new filesystem at $work/scratch (bench/scratch.py).
trap 'umount "$work/scratch" 2>/dev/null || true; rm -rf "$work"' EXIT
# Read before anything is written: the results file is itself tracked.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
{
  echo "# airlock benchmarks"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  for kind in "${filesystems[@]}"; do
    echo "- $kind: $(BENCH_FILESYSTEM=$kind python3 bench/scratch.py "$work")"
  done
  echo "- inputs and the peers' loops read from the work directory, on $(df -T "$work" | awk 'NR==2 {print $2}')"
  echo "- airlock $commit, static stdlib, $(swift --version 2>&1 | head -1)"
  echo "- every ratio is airlock against its peer measured in the same run; absolute times depend on the load"
  echo
} > "$out"
export BENCH_FILESYSTEM=${filesystems[0]}
echo "## Commit durability on $BENCH_FILESYSTEM: syncfs against fsync per file (median of 5)" >> "$out"
echo '```' >> "$out"
bash bench/sync-methods.sh | tee -a "$out"
echo '```' >> "$out"
echo >> "$out"
bin=.build/release/airlock
# The header says static stdlib: checked here, after everything that builds.
for program in "$bin" .build/release/airlock-decoder .build/release/airlock-keyed-decoder; do
  if ldd "$program" | grep -q libswiftCore; then
    echo "bench: $program is linked against the dynamic Swift standard library" >&2
    exit 1
  fi
done
python3 bench/cases.py "$bin" "$work" "$out"
python3 bench/content.py "$bin" "$work" "$out"
python3 bench/scaling.py "$bin" "$work" "$out"
# The last pipeline shows what type detection costs a flood (not the default).
python3 bench/watch.py ${BASELINE:+"$BASELINE=baseline"} "$bin=this build" "$bin=this build, content.detect_types on=typed" \
  fixtures/archives/zip-deflate-valid.zip "$out"
# What airlock publish costs the intake (nats-server on loopback, started by the script).
if command -v nats-server >/dev/null; then
  mkdir -p "$work/publish"
  python3 bench/publish_cost.py "$bin" "$work/publish" "$out"
else
  echo "bench: nats-server is not installed; the publisher's cost is not measured" | tee -a "$out"
fi
# The other filesystems: the intake cases (memory is the same on any) and the watcher.
for kind in "${filesystems[@]:1}"; do
  BENCH_FILESYSTEM=$kind MEMORY=0 python3 bench/cases.py "$bin" "$work" "$out"
  BENCH_FILESYSTEM=$kind python3 bench/watch.py ${BASELINE:+"$BASELINE=baseline"} "$bin=this build" \
    fixtures/archives/zip-deflate-valid.zip "$out"
done
echo "wrote $out"
