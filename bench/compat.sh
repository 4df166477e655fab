#!/usr/bin/env bash
# Compat engine benchmark: 1,000 GetBlock cases sent to three sample
# servers on loopback, in process. Prints time and memory per run;
# docs/performance.md records them.
#
#   bench/compat.sh [COUNT]   (default 3 runs of each)
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./compat -run '^$' -bench BenchmarkRun1000Cases -benchmem -count "${1:-3}"
