#!/usr/bin/env bash
# What per-request values cost tandem's event loop (docs/performance.md,
# Per-request values): a fixed HTTP request against the same request with
# its path and JSON body taken from a 1,000,000-row CSV feeder, and against
# the fixed path with a JSON body template of 3 splices (a sequence, text
# around it, a Zipf key). The minimal server (tandem-hotpath --serve) is
# pinned to core 1, tandem to core 0; the variants run in interleaved
# rounds, the order rotating. Prints, per variant and round, the event
# loop thread's CPU per request (engine_cpu_ns: the generator's own work)
# and the process's (user + system, which also reads and indexes the
# feeder when it opens), then the medians and the ratios to the fixed
# request. rss runs 10,000,000 requests from the feeder and samples RSS.
#
#   bench/values.sh [cpu|rss|all]   (default: cpu)
#
# ROUNDS (5), REQUESTS (1,000,000 a run), CONNS (32), RSS_REQUESTS
# (10,000,000). Needs two cores.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
REQUESTS=${REQUESTS:-1000000}
CONNS=${CONNS:-32}
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"
what=${1:-cpu}
go build -o "$TOOLS/tandem" ./cmd/tandem
go build -o "$TOOLS/tandem-hotpath" ./cmd/tandem-hotpath
T="$TOOLS/tandem"
H="$TOOLS/tandem-hotpath"
echo "tandem $(git rev-parse --short HEAD 2>/dev/null || echo "?")$(git diff --quiet HEAD 2>/dev/null || echo "+changes"); $(go version | cut -d' ' -f3); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
data=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$data"' EXIT
PP=$(port)
taskset -c 1 "$H" --serve "127.0.0.1:$PP" 2>/dev/null &
server=$!
BASE="http://127.0.0.1:$PP"
for _ in $(seq 100); do curl -sf "$BASE/ping" >/dev/null 2>&1 && break; sleep 0.1; done

# the feeder: 1,000,000 rows (about 30 MB), and the values files
python3 - "$data/rows.csv" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("id,name\n")
    for i in range(1_000_000):
        f.write(f"{i},user-{i:07d}-{(i * 2654435761) % 4294967296:010d}\n")
EOF
cat > "$data/feeder.yaml" <<EOF
values:
  rows: {csv: $data/rows.csv}
EOF
cat > "$data/template.yaml" <<EOF
values:
  n: {seq: {from: 1}}
  k: {zipf: {n: 1000000, s: 0.99}}
EOF

# Each variant is one tandem load on core 0: a POST whose JSON body the
# minimal server skips (it answers each request head; a body holds no
# blank line).
# run VARIANT: prints "loop-µs process-µs ok engine" of a run, per request
run() {
  local out=$data/out a
  case $1 in
  fixed) a=("$BASE/items/7" --data '{"id":7,"key":12,"user":"user-0000007"}') ;;
  feeder) a=("$BASE/items/\${rows.id}" --data '{"id":"${rows.id}","key":12,"user":"${rows.name}"}' --values "$data/feeder.yaml") ;;
  template) a=("$BASE/items/7" --data '{"id":"${n}","key":"${k}","user":"user-${n}"}' --values "$data/template.yaml") ;;
  esac
  { taskset -c 0 "$T" load "${a[@]}" --concurrency "$CONNS" --requests "$REQUESTS" --format json > "$out" 2>/dev/null; times; } | tail -1 > "$data/times"
  python3 - "$out" "$data/times" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
def s(x):
    m = re.match(r"(\d+)m([\d.]+)s", x); return int(m[1]) * 60 + float(m[2])
u, sy = open(sys.argv[2]).read().split()
n = max(d["requests"], 1)
print(f'{d["engine_cpu_ns"] / n / 1e3:.3f} {(s(u) + s(sy)) / n * 1e6:.3f} {d["ok"]} {d["engine"]}')
EOF
}

if [ "$what" = cpu ] || [ "$what" = all ]; then
  echo "== event loop CPU per request: $REQUESTS requests a run, $CONNS connections, closed loop, $ROUNDS interleaved rounds"
  variants=(fixed feeder template)
  declare -A loop proc
  for r in $(seq "$ROUNDS"); do
    for i in 0 1 2; do
      v=${variants[$(((i + r) % 3))]}
      read -r l p ok engine < <(run "$v")
      [ "$ok" = "$REQUESTS" ] || { echo "bench: $v: $ok of $REQUESTS ok" >&2; exit 1; }
      loop[$v]="${loop[$v]:-} $l"; proc[$v]="${proc[$v]:-} $p"
      printf '  round %d %-9s loop %7.3f µs/request, process %7.3f µs/request (%s)\n' "$r" "$v" "$l" "$p" "$engine"
    done
  done
  python3 - "${loop[fixed]}" "${loop[feeder]}" "${loop[template]}" "${proc[fixed]}" "${proc[feeder]}" "${proc[template]}" <<'EOF'
import statistics as st, sys
lf, le, lt, pf, pe, pt = (st.median(map(float, a.split())) for a in sys.argv[1:])
print(f"  medians (loop thread): fixed {lf:.3f}, feeder {le:.3f} ({le / lf:.2f}×), template {lt:.3f} ({lt / lf:.2f}×) µs/request")
print(f"  medians (process):     fixed {pf:.3f}, feeder {pe:.3f} ({pe / pf:.2f}×), template {pt:.3f} ({pt / pf:.2f}×) µs/request")
for name, x in (("feeder", le / lf), ("template", lt / lf)):
    print(f"  {'met' if x <= 1.2 else 'MISSED'}: {name} within 1.2× of the fixed request on the event loop: {x:.2f}×")
EOF
fi

if [ "$what" = rss ] || [ "$what" = all ]; then
  N=${RSS_REQUESTS:-10000000}
  echo "== RSS over $N requests from the 1,000,000-row feeder (sequential: the file 10 times), $CONNS connections"
  taskset -c 0 "$T" load "$BASE/items/\${rows.id}" --data '{"id":"${rows.id}","key":12,"user":"${rows.name}"}' --values "$data/feeder.yaml" \
    --concurrency "$CONNS" --requests "$N" --format json > "$data/rss.json" 2>/dev/null &
  pid=$!
  first=""; peak=0; t=0; samples=()
  while kill -0 $pid 2>/dev/null; do
    rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
    [ $t = 10 ] && first=$rss
    [ -n "$rss" ] && [ $((t % 10)) = 0 ] && samples+=("$rss")
    t=$((t + 1)); sleep 1
  done
  wait $pid
  echo "  RSS every 10 s (KiB): ${samples[*]}"
  echo "  after 10 s: ${first:-?} KiB; peak: $peak KiB over ${t} s; $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["ok"], "ok at", round(d["throughput"]), "/s")' "$data/rss.json")"
fi
