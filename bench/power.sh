#!/usr/bin/env bash
# The verdicts' power and false-alarm rate on this machine, measured with
# real runs: a study of five builds of one fixture (bench/powerfix: an
# HTTP/1.1 server whose every answer costs --work rounds of SHA-256) with
# the study's defaults (adaptive rounds, alpha 0.05 over the study, the
# 2 % noise floor): the baseline, an identical twin it does not declare as
# an A/A pair, and builds with +5 %, +10 % and +20 % more busy work per
# request, at one client. Each condition runs RUNS times (default 20):
#
#   quiet   nothing else runs
#   busy    a low-priority (nice 19) CPU burner on every core beside it
#
# and prints, per candidate, how often it was called faster, slower,
# indistinguishable or inconclusive, and the median rounds and seconds to
# the run's end; docs/methods.md records the table.
#
#   bench/power.sh [quiet|busy|both|summary]   (summary: the tables of OUT's logs again; RUNS=20 WORK=10000 by default: about 1 ms of work a request)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-20}
WORK=${WORK:-10000}
what=${1:-both}
TOOLS="$PWD/.tools"
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$TOOLS" "$OUT"
go build -o "$TOOLS/tandem" ./cmd/tandem
go build -o "$TOOLS/powerfix" ./bench/powerfix

work() { awk -v w="$WORK" -v f="$1" 'BEGIN { printf "%d", w * f + 0.5 }'; }
target() {
  cat <<EOF
  - name: $1
    start:
      command: ["$TOOLS/powerfix", --addr, "127.0.0.1:\${port.http}", --work, "$2"]
    endpoints: {http: "http://127.0.0.1:\${port.http}/"}
    ready: {first_answer: {call: get}, timeout: 20s}
EOF
}
study="$OUT/power.yaml"
{
  echo "version: 1"
  echo "name: power"
  echo "description: planted busy-work slowdowns and an undeclared identical twin, the study's defaults"
  echo "targets:"
  target base "$WORK"
  target twin "$WORK"
  target p5 "$(work 1.05)"
  target p10 "$(work 1.10)"
  target p20 "$(work 1.20)"
  echo "calls: {get: {http: {path: /}}}"
  echo "scenarios:"
  echo "  - {name: latency, call: get, load: {concurrency: 1}}"
} > "$study"
"$TOOLS/tandem" validate "$study" >/dev/null

burners=()
start_burners() {
  for _ in $(seq "$(nproc)"); do nice -n 19 bash -c 'while :; do :; done' & burners+=($!); done
}
stop_burners() {
  for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
  burners=()
}
trap stop_burners EXIT

# verdicts prints "candidate verdict rounds" for each comparison of a run,
# from tandem compare's one-run gate (the run's own paired comparisons).
verdicts() {
  { "$TOOLS/tandem" compare "$1" --format json --on-inconclusive pass || true; } |
    awk '/"target":/ { gsub(/[",]/, ""); sub(/^ *target: /, ""); cand = $1; rounds = "-" }
         cand != "" && /"rounds": [0-9]+/ && rounds == "-" { gsub(/[^0-9]/, ""); rounds = $0 }
         cand != "" && /"verdict":/ { gsub(/[",]/, ""); print cand, $2, rounds; cand = "" }'
}

run_condition() {
  local cond=$1 log="$OUT/$1.tsv"
  : > "$log"
  [ "$cond" = busy ] && start_burners
  for i in $(seq "$RUNS"); do
    local dir="$OUT/$cond-$i" t0=$SECONDS
    "$TOOLS/tandem" run "$study" --out "$dir" > "$dir.log" 2>&1 || { echo "run $cond $i failed: see $dir.log" >&2; exit 1; }
    local secs=$((SECONDS - t0))
    verdicts "$dir/results.json" | while read -r cand v rounds; do printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$cand" "$v" "$rounds" "$secs"; done >> "$log"
    rm -rf "$dir/work"
    printf '%s run %d/%d: %ss: %s\n' "$cond" "$i" "$RUNS" "$secs" "$(awk -v i="$i" -F'\t' '$1 == i { printf "%s %s (%s rounds)  ", $2, $3, $4 }' "$log")"
  done
  [ "$cond" = busy ] && stop_burners
  echo
  summarize "$cond" "$log"
}

# median of the numbers on standard input
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# summarize prints a condition's table from its log (run, candidate,
# verdict, rounds, seconds).
summarize() {
  local cond=$1 log=$2
  echo "$cond: $(cut -f1 "$log" | sort -u | wc -l) runs of $(grep -c '^  - name:' "$study") targets, work $WORK rounds of SHA-256 per request"
  printf '| candidate | faster | slower | indistinguishable | inconclusive | other | median rounds | median run |\n|---|---|---|---|---|---|---|---|\n'
  for cand in twin p5 p10 p20; do
    local counts rounds secs
    counts=$(awk -F'\t' -v c="$cand" '$2 == c { n++; v[$3]++ }
      END { printf "%d | %d | %d | %d | %d", v["faster"], v["slower"], v["indistinguishable"], v["inconclusive"],
        n - v["faster"] - v["slower"] - v["indistinguishable"] - v["inconclusive"] }' "$log")
    rounds=$(awk -F'\t' -v c="$cand" '$2 == c { print $4 }' "$log" | median)
    secs=$(awk -F'\t' -v c="$cand" '$2 == c { print $5 }' "$log" | median)
    printf '| %s | %s | %s | %ss |\n' "$cand" "$counts" "$rounds" "$secs"
  done
}

case "$what" in
  summary) for c in quiet busy; do [ -f "$OUT/$c.tsv" ] && summarize "$c" "$OUT/$c.tsv"; done ;;
  quiet) run_condition quiet ;;
  busy) run_condition busy ;;
  both) run_condition quiet; run_condition busy ;;
  *) echo "usage: bench/power.sh [quiet|busy|both|summary]" >&2; exit 2 ;;
esac
echo "results in $OUT"
