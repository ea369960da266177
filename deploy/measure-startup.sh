#!/bin/bash
# Mean wall-clock time of 200 starts of each program in DIR (airlock version;
# each decoder with no arguments, which exits 64 at once): the cost of loading.
set -euo pipefail
dir=${1:?usage: measure-startup.sh DIR}
for program in "airlock version" "airlock-decoder" "airlock-keyed-decoder"; do
    set -- $program
    start=$(date +%s%N)
    for _ in $(seq 200); do "$dir/$1" ${2:-} >/dev/null 2>&1 || true; done
    end=$(date +%s%N)
    echo "$program: $(( (end - start) / 200000 )) us per start"
done
