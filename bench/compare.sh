#!/usr/bin/env bash
# Side-by-side benchmark of tandem's generator against wrk, vegeta and ghz,
# in one run, on the same server: the sample service pinned to one core, each
# generator pinned to the other, the same connection count, interleaved
# rounds (tool order rotates every round). Prints best and median per tool
# and the ratios that docs/performance.md records.
#
#   bench/compare.sh [http|pong|grpc|open|rss|all]   (default: all but rss)
#
# http: the sample service (Go net/http, one core: the server is the
# bottleneck); pong: a minimal server (tandem-hotpath --serve, allocating
# nothing), so that the generators' own capacity shows.
#
# Needs two cores. Installs wrk (Debian) and pinned vegeta and ghz.
set -euo pipefail
cd "$(dirname "$0")/.."

VEGETA_VERSION=v12.13.0
GHZ_VERSION=v0.121.0
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-5}
CONNS=${CONNS:-32}
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"
what=${1:-default}

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk >/dev/null
  else echo "bench: wrk is missing: sudo apt-get install wrk" >&2; exit 2; fi
fi
[ -x "$TOOLS/vegeta" ] || GOBIN="$TOOLS" go install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"
[ -x "$TOOLS/ghz" ] || GOBIN="$TOOLS" go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION"
go build -o "$TOOLS/tandem" ./cmd/tandem
go build -o "$TOOLS/tandem-hotpath" ./cmd/tandem-hotpath
T="$TOOLS/tandem"
QUANTUM=${QUANTUM:-50us}

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || shuf -i 20000-30000 -n1; }
GP=$(port); HP=$(port); PP=$(port)
data=$(mktemp -d)
taskset -c 1 "$T" sample serve --build a --data "$data" --grpc "127.0.0.1:$GP" --http "127.0.0.1:$HP" --blocks 100 2>/dev/null &
server=$!
pongserver=""
trap 'kill $server $pongserver 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$HP/ping" >/dev/null 2>&1 && break; "$T" load "http://127.0.0.1:$HP/ping" --requests 1 >/dev/null 2>&1 && break; sleep 0.1; done

gen() { taskset -c 0 "$@"; }
# each tool prints its throughput (requests/s) on the last line
run_wrk()    { gen wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$HP/ping" | awk '/Requests\/sec/ {print $2}'; }
run_vegeta() { echo "GET http://127.0.0.1:$HP/ping" | gen "$TOOLS/vegeta" attack -rate=0 -max-workers="$CONNS" -workers="$CONNS" -duration="${SECS}s" | "$TOOLS/vegeta" report -type=json | python3 -c 'import json,sys; print(json.load(sys.stdin)["throughput"])'; }
run_tandem_http() { gen "$T" load "http://127.0.0.1:$HP/ping" --concurrency "$CONNS" --duration "${SECS}s" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["throughput"])'; }
run_tandem_loop() { gen "$T" load "http://127.0.0.1:$HP/ping" --concurrency "$CONNS" --duration "${SECS}s" --engine loop --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["throughput"])'; }
run_tandem_loopq() { gen "$T" load "http://127.0.0.1:$HP/ping" --concurrency "$CONNS" --duration "${SECS}s" --engine loop --quantum "$QUANTUM" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["throughput"], "think-p50-us", d["think_time_ns"]["p50"]/1e3)'; }
run_ghz()    { gen "$TOOLS/ghz" --insecure --call tandem.sample.v1.Ledger/Ping -c "$CONNS" --connections "$CONNS" -z "${SECS}s" "127.0.0.1:$GP" 2>/dev/null | awk '/Requests\/sec/ {print $2}'; }
run_tandem_grpc() { gen "$T" load "grpc://127.0.0.1:$GP/tandem.sample.v1.Ledger/Ping" --concurrency "$CONNS" --duration "${SECS}s" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["throughput"])'; }

# rounds TOOL… : interleaved rounds, rotating the order; prints "tool best median"
rounds() {
  declare -A got
  local tools=("$@") n=${#@}
  for r in $(seq "$ROUNDS"); do
    for i in $(seq 0 $((n - 1))); do
      local t=${tools[$(((i + r) % n))]}
      line=$("run_$t"); v=${line%% *}; got[$t]="${got[$t]:-} $v"
      echo "  round $r $t: $line req/s" >&2
    done
  done
  for t in "${tools[@]}"; do
    echo "$t ${got[$t]}" | python3 -c 'import sys,statistics; p=sys.stdin.read().split(); v=sorted(map(float,p[1:])); print(p[0], max(v), statistics.median(v))'
  done
}

ratio() { python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "$1" "$2"; }

# http_table TITLE: interleaved rounds of every HTTP generator against
# $URL, medians and ratios against wrk and vegeta
http_table() {
  echo "== $1, $CONNS connections, closed loop, ${SECS}s × $ROUNDS rounds"
  res=$(rounds wrk vegeta tandem_http tandem_loop tandem_loopq)
  echo "$res" | awk '{printf "  %-12s best %10.0f/s  median %10.0f/s\n", $1, $2, $3}'
  wm=$(echo "$res" | awk '$1=="wrk"{print $3}'); vm=$(echo "$res" | awk '$1=="vegeta"{print $3}')
  for t in tandem_http tandem_loop tandem_loopq; do
    m=$(echo "$res" | awk -v t=$t '$1==t{print $3}')
    echo "  $t: /wrk (median) $(ratio "$m" "$wm")   /vegeta (median) $(ratio "$m" "$vm")"
  done
  echo "  (tandem_http: --concurrency; tandem_loop: --engine loop; tandem_loopq: --engine loop --quantum $QUANTUM)"
}
if [ "$what" = http ] || [ "$what" = default ] || [ "$what" = all ]; then
  http_table "HTTP/1.1 GET /ping on the sample service"
fi
if [ "$what" = pong ] || [ "$what" = default ] || [ "$what" = all ]; then
  taskset -c 1 "$TOOLS/tandem-hotpath" --serve "127.0.0.1:$PP" &
  pongserver=$!
  for _ in $(seq 100); do "$T" load "http://127.0.0.1:$PP/ping" --requests 1 >/dev/null 2>&1 && break; sleep 0.1; done
  HP=$PP http_table "HTTP/1.1 GET /ping on a minimal server (tandem-hotpath --serve)"
  kill $pongserver; pongserver=""
fi
if [ "$what" = grpc ] || [ "$what" = default ] || [ "$what" = all ]; then
  echo "== gRPC unary Ping, $CONNS connections, closed loop, ${SECS}s × $ROUNDS rounds"
  res=$(rounds ghz tandem_grpc)
  echo "$res" | awk '{printf "  %-12s best %10.0f/s  median %10.0f/s\n", $1, $2, $3}'
  tm=$(echo "$res" | awk '$1=="tandem_grpc"{print $3}'); gm=$(echo "$res" | awk '$1=="ghz"{print $3}')
  echo "  tandem/ghz (median) $(ratio "$tm" "$gm")"
fi
cpu_of() { # CPU seconds (user+sys) the command's children used
  local out; out=$( { "$@" >/dev/null; times; } | tail -1); echo "$out" | python3 -c '
import re,sys
def s(x):
    m=re.match(r"(\d+)m([\d.]+)s",x); return int(m[1])*60+float(m[2])
u,sy=sys.stdin.read().split(); print(s(u)+s(sy))'
}
if [ "$what" = open ] || [ "$what" = default ] || [ "$what" = all ]; then
  echo "== open loop: CPU per request at 10,000/s for ${SECS}s ($CONNS connections)"
  for r in $(seq "$ROUNDS"); do
    vc=$(cpu_of bash -c "echo 'GET http://127.0.0.1:$HP/ping' | taskset -c 0 '$TOOLS/vegeta' attack -rate=10000 -workers=$CONNS -max-workers=$CONNS -duration=${SECS}s > /dev/null")
    tc=$(cpu_of taskset -c 0 "$T" load "http://127.0.0.1:$HP/ping" --rate 10000 --connections "$CONNS" --duration "${SECS}s")
    lc=$(cpu_of taskset -c 0 "$T" load "http://127.0.0.1:$HP/ping" --rate 10000 --connections "$CONNS" --duration "${SECS}s" --engine loop)
    qc=$(cpu_of taskset -c 0 "$T" load "http://127.0.0.1:$HP/ping" --rate 10000 --connections "$CONNS" --duration "${SECS}s" --engine loop --quantum 1ms)
    n=$((10000 * SECS))
    us() { python3 -c "print(f'{$1/$n*1e6:.1f}')"; }
    echo "  round $r: vegeta $(us "$vc") µs/request; tandem (workers) $(us "$tc"), ratio $(ratio "$tc" "$vc"); --engine loop $(us "$lc"), ratio $(ratio "$lc" "$vc"); --engine loop --quantum 1ms $(us "$qc"), ratio $(ratio "$qc" "$vc")"
  done
  echo "== open loop: achieved / offered (tandem, 64 connections)"
  for rate in 10000 25000 50000; do
    gen "$T" load "http://127.0.0.1:$HP/ping" --rate "$rate" --connections 64 --duration "${SECS}s" --format json |
      python3 -c "import json,sys; d=json.load(sys.stdin); print(f'  offered {d[\"offered_rate\"]:9.0f}/s achieved {d[\"achieved_rate\"]:9.0f}/s ({d[\"achieved_rate\"]/d[\"offered_rate\"]*100:.2f} %) dropped {d[\"dropped\"]} p50 {d[\"latency_ns\"][\"p50\"]/1e3:.0f}µs lag p99 {d[\"schedule_lag_ns\"][\"p99\"]/1e3:.0f}µs')"
  done
fi
if [ "$what" = rss ] || [ "$what" = all ]; then
  N=${RSS_REQUESTS:-10000000}
  echo "== RSS over $N requests (tandem, closed loop, $CONNS connections)"
  taskset -c 0 "$T" load "http://127.0.0.1:$HP/ping" --concurrency "$CONNS" --requests "$N" --format json > /tmp/tandem-rss.json &
  pid=$!
  first=""; peak=0; t=0
  while kill -0 $pid 2>/dev/null; do
    rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
    [ $t = 10 ] && first=$rss
    t=$((t + 1)); sleep 1
  done
  echo "  after 10 s: ${first:-?} KiB; peak: $peak KiB over ${t} s; $(python3 -c 'import json; d=json.load(open("/tmp/tandem-rss.json")); print(d["ok"], "ok at", round(d["throughput"]), "/s")')"
fi
