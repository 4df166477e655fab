#!/usr/bin/env bash
# Change points on real histories: how often tandem history finds a change
# in an unchanged build's runs (false change points per 100 runs) and how
# soon it finds a planted slowdown. Each repetition builds a fresh history
# of A runs of one build (bench/powerfix: an HTTP/1.1 server whose every
# answer costs WORK rounds of SHA-256) and then B runs of a build with
# STEP more work per request, each a `tandem run` of one target, one
# client, ten rounds of 250 ms, added with `tandem history add` as CI
# would; it counts the change points `history add` reports as each run
# arrives, and those `history changes` finds at the end.
#
#   bench/history.sh                 REPS=3 A=30 B=5 STEP=1.10 WORK=10000
#   OUT=dir bench/history.sh summary   the table of OUT's logs again
#
# Nothing else should run beside it (a neighbour's load is itself a change
# in the machine's speed); docs/history.md records the table.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
A=${A:-30}
B=${B:-5}
STEP=${STEP:-1.10}
WORK=${WORK:-10000}
what=${1:-run}
TOOLS="$PWD/.tools"
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$TOOLS" "$OUT"
go build -o "$TOOLS/tandem" ./cmd/tandem
go build -o "$TOOLS/powerfix" ./bench/powerfix

study() { # work
  cat <<EOF2
version: 1
name: history-bench
targets:
  - name: svc
    start:
      command: ["$TOOLS/powerfix", --addr, "127.0.0.1:\${port.http}", --work, "$1"]
    endpoints: {http: "http://127.0.0.1:\${port.http}/"}
    ready: {first_answer: {call: get}, timeout: 20s}
calls: {get: {http: {path: /}}}
defaults: {rounds: 10, warmup: 1s, min_duration: 250ms}
scenarios:
  - {name: latency, call: get, load: {concurrency: 1}}
EOF2
}
study "$WORK" > "$OUT/a.yaml"
study "$(awk -v w="$WORK" -v s="$STEP" 'BEGIN { printf "%d", w * s + 0.5 }')" > "$OUT/b.yaml"
"$TOOLS/tandem" validate "$OUT/a.yaml" >/dev/null

# one repetition: A runs of a, then B of b, into a fresh history; the log
# has a line per change point history add reported: rep, run, first run
# after it (its index), ratio
rep() {
  local r=$1 db="$OUT/history-$r.db" log="$OUT/added.tsv"
  rm -f "$db"
  for i in $(seq $((A + B))); do
    local s=a; [ "$i" -gt "$A" ] && s=b
    local dir="$OUT/run-$r-$i"
    "$TOOLS/tandem" run "$OUT/$s.yaml" --out "$dir" > "$dir.log" 2>&1 || { echo "run $r/$i failed: see $dir.log" >&2; exit 1; }
    local added
    added=$("$TOOLS/tandem" history add "$dir/results.json" --db "$db" --branch main --commit "$(printf 'r%02di%03d' "$r" "$i")")
    # a change point names its first run after by id; map it back to i
    { grep '^change point:' <<<"$added" || true; } | { grep 'latency svc c=1 headline' || true; } | while read -r line; do
      local commit ratio
      commit=$(sed -n 's/.*from run [0-9a-f]* (commit \(r[0-9]*i[0-9]*\)).*/\1/p' <<<"$line")
      ratio=$(sed -n 's/.*headline: ×\([0-9.]*\).*/\1/p' <<<"$line")
      printf '%s\t%s\t%s\t%s\n' "$r" "$i" "${commit##*i}" "$ratio" >> "$log"
    done
    rm -rf "$dir"
    printf 'rep %d/%d run %d/%d (%s)%s\n' "$r" "$REPS" "$i" $((A + B)) "$s" "$(grep -c "^$r	$i	" "$log" 2>/dev/null | sed 's/^0$//; s/^[1-9].*/: a change point reported/')"
  done
}

summarize() {
  local log="$OUT/added.tsv"
  [ -f "$log" ] || : > "$log"
  awk -F'\t' -v A="$A" -v B="$B" -v reps="$REPS" '
    { at = $3 + 0; if (at >= A && at <= A + 2) { if (!($1 in found) || $2 < found[$1]) found[$1] = $2 } else false_++ }
    END {
      n = 0; soon = 0
      for (r = 1; r <= reps; r++) if (r in found) { n++; if (found[r] - A <= 3) soon++ }
      printf "| repetitions | runs of the unchanged build | false change points | per 100 runs | step found | found within 3 runs after |\n|---|---|---|---|---|---|\n"
      printf "| %d | %d | %d | %.2f | %d of %d | %d of %d |\n", reps, reps * A, false_, 100 * false_ / (reps * A), n, reps, soon, reps
    }' "$log"
}

case "$what" in
  run) : > "$OUT/added.tsv"; for r in $(seq "$REPS"); do rep "$r"; done; summarize ;;
  summary) summarize ;;
  *) echo "usage: bench/history.sh [run|summary]" >&2; exit 2 ;;
esac
echo "results in $OUT"
