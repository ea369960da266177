#!/usr/bin/env bash
# make bench: release build, inputs generated here (never committed), each case
# beside its peer in the same invocation; results in bench/results/latest.md.
set -euo pipefail
cd "$(dirname "$0")/.."
need=""
for tool in bsdtar inotifywait python3 unzip zstd clamd; do command -v "$tool" >/dev/null || need="$need $tool"; done
if [ -n "$need" ]; then
  echo "installing the peers:$need"
  apt-get install -y libarchive-tools inotify-tools python3 unzip zstd clamav-daemon >/dev/null
fi
swift build -c release >/dev/null
mkdir -p bench/results
out=bench/results/latest.md
{
  echo "# airlock benchmarks"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "- filesystem: $(df -T . | awk 'NR==2 {print $2}')"
  echo "- airlock $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(swift --version 2>&1 | head -1)"
  echo
} > "$out"
echo "## Commit durability: syncfs against fsync per file (median of 5)" >> "$out"
echo '```' >> "$out"
bash bench/sync-methods.sh | tee -a "$out"
echo '```' >> "$out"
echo >> "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/airlock-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 bench/cases.py .build/release/airlock "$work" "$out"
python3 bench/content.py .build/release/airlock "$work" "$out"
python3 bench/watch.py .build/release/airlock fixtures/archives/zip-deflate-valid.zip "$out"
echo "wrote $out"
