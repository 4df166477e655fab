#!/usr/bin/env bash
# Side-by-side benchmark of tandem's generator against wrk, vegeta, ghz and
# h2load, in one run, on the same server: every server pinned to core 1,
# every generator to core 0, the same connections, interleaved rounds (the
# order rotates every round). Prints, per tool, requests/s (best and median)
# and the generator's CPU time per request (median), the ratios that
# docs/performance.md records, and the goals met or missed.
#
#   bench/compare.sh [http|pong|grpc|h2|open|floor|rss|all]   (default: all but rss)
#
# http:  the sample service (Go net/http on one core: the server is the
#        bottleneck, so requests/s says little about the generators)
# pong:  a minimal HTTP/1.1 server (tandem-hotpath --serve, allocating
#        nothing), so that the generators' own capacity shows
# grpc:  a minimal gRPC server (tandem-hotpath --serve-grpc): unary and
#        server streaming (10 messages), over 1 and 32 connections
# h2:    a minimal HTTP/2 server (tandem-hotpath --serve-h2), h2c and TLS,
#        1 and 10 streams a connection (h2load -m)
# open:  open loop at 10,000/s, CPU per request (beside the floor of per-arrival
#        timing: tandem-hotpath --open-floor); achieved/offered to 50,000/s
# floor: what one core spends per loopback request in the kernel
# rss:   tandem's memory over 10,000,000 requests (HTTP/1.1, h2c, gRPC)
#
# Needs two cores. Installs wrk and h2load (Debian) and pinned vegeta and
# ghz (the last two releases that build: v0.93.0 and v0.121.0).
set -euo pipefail
cd "$(dirname "$0")/.."

VEGETA_VERSION=v12.13.0
GHZ_VERSIONS="v0.93.0 v0.121.0"
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-5}
CONNS=${CONNS:-32}
INFLIGHT=${INFLIGHT:-64}   # gRPC calls in flight
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"
what=${1:-default}
is() { [ "$what" = "$1" ] || { [ "$what" = default ] && [ "$1" != rss ]; } || [ "$what" = all ]; }

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need h2load; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk nghttp2-client >/dev/null
  else echo "bench: wrk or h2load is missing: sudo apt-get install wrk nghttp2-client" >&2; exit 2; fi
fi
[ -x "$TOOLS/vegeta" ] || GOBIN="$TOOLS" go install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"
for v in $GHZ_VERSIONS; do
  if [ ! -x "$TOOLS/ghz-$v" ]; then
    d=$(mktemp -d); GOBIN="$d" go install "github.com/bojand/ghz/cmd/ghz@$v"; mv "$d/ghz" "$TOOLS/ghz-$v"; rmdir "$d"
  fi
done
go build -o "$TOOLS/tandem" ./cmd/tandem
go build -o "$TOOLS/tandem-hotpath" ./cmd/tandem-hotpath
T="$TOOLS/tandem"
H="$TOOLS/tandem-hotpath"
QUANTUM=${QUANTUM:-50us}
echo "peers: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), vegeta $VEGETA_VERSION, ghz $GHZ_VERSIONS, $(h2load --version | head -1); tandem $(git rev-parse --short HEAD 2>/dev/null || echo "?")$(git diff --quiet HEAD 2>/dev/null || echo "+changes"); $(go version | cut -d' ' -f3); $(nproc) cores"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
data=$(mktemp -d)
servers=()
trap 'kill "${servers[@]}" 2>/dev/null; rm -rf "$data"' EXIT
# serve NAME CMD…: starts a server pinned to core 1
serve() { taskset -c 1 "$@" 2>/dev/null & servers+=($!); }
stop_servers() { kill "${servers[@]}" 2>/dev/null || true; servers=(); }
wait_http() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return; sleep 0.1; done; }
gen() { taskset -c 0 "$@"; }

# measure OUT CMD…: runs CMD (stdout to OUT) and prints the CPU seconds
# (user + system) it and its children used
measure() { local out=$1; shift; { "$@" > "$out"; times; } | tail -1 | python3 -c '
import re,sys
def s(x):
    m=re.match(r"(\d+)m([\d.]+)s",x); return int(m[1])*60+float(m[2])
u,sy=sys.stdin.read().split(); print(s(u)+s(sy))'; }

# Each tool_* runs one load for SECS on core 0 and prints "requests/s
# requests" (completed requests) on stdout.
tandem_json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["throughput"], d["ok"])' "$1"; }
tool_wrk()    { local o=$data/o; gen wrk -t1 -c"$CONNS" -d"${SECS}s" "$URL" > "$o"; awk '/Requests\/sec/ {r=$2} /requests in/ {n=$1} END {print r, n}' "$o"; }
tool_vegeta() { echo "GET $URL" | gen "$TOOLS/vegeta" attack -rate=0 -max-workers="$CONNS" -workers="$CONNS" -duration="${SECS}s" | "$TOOLS/vegeta" report -type=json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["throughput"], round(d["requests"]*d["success"]))'; }
tool_tandem() { local o=$data/t; gen "$T" load "$URL" --concurrency "$CONNS" --duration "${SECS}s" --format json "$@" > "$o"; tandem_json "$o"; }
tool_tandem_workers() { tool_tandem --engine workers; }
tool_tandem_quantum() { tool_tandem --quantum "$QUANTUM"; }
ghz_run() { # ghz_run VERSION: $GRPC_CALL over $GRPC_CONNS connections
  local o=$data/g
  gen "$TOOLS/ghz-$1" --insecure --proto sample/ledgerpb/ledger.proto --call "$GRPC_CALL" -d '{}' -c "$INFLIGHT" --connections "$GRPC_CONNS" -z "${SECS}s" "$GRPC_ADDR" > "$o" 2>/dev/null
  awk '/Requests\/sec/ {r=$2} /Count:/ {n=$2} /\[OK\]/ {ok=$2} END {print r, (ok ? ok : n)}' "$o"
}
tool_ghz_v0.93.0()  { ghz_run v0.93.0; }
tool_ghz_v0.121.0() { ghz_run v0.121.0; }
tool_tandem_grpc() {
  local o=$data/t
  gen "$T" load "grpc://$GRPC_ADDR/$GRPC_CALL" --proto sample/ledgerpb/ledger.proto --concurrency "$INFLIGHT" --connections "$GRPC_CONNS" --duration "${SECS}s" --format json > "$o"
  tandem_json "$o"
}
tool_h2load() { # -m $STREAMS streams in flight per connection
  local o=$data/h
  gen h2load -c "$CONNS" -m "$STREAMS" -D "$SECS" "$URL" > "$o" 2>&1
  python3 - "$o" <<'EOF'
import re,sys
t=open(sys.argv[1]).read()
rps=re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", t); ok=re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", t)
print(rps[1], ok[1])
EOF
}
tool_tandem_h2() { # as h2load -c $CONNS -m $STREAMS: the clients share the connections
  local o=$data/t
  gen "$T" load "$URL" --http2 --insecure --concurrency $((CONNS * STREAMS)) --connections "$CONNS" --duration "${SECS}s" --format json > "$o"
  tandem_json "$o"
}

# rounds TOOL…: ROUNDS interleaved rounds, the order rotating; prints, per
# tool, "tool best-req/s median-req/s median-µs-of-CPU-per-request"
rounds() {
  declare -A rps cpu
  local tools=("$@") n=$#
  for r in $(seq "$ROUNDS"); do
    for i in $(seq 0 $((n - 1))); do
      local t=${tools[$(((i + r) % n))]}
      local c; c=$(measure "$data/line" "tool_$t")
      read -r v count < "$data/line"
      local us; us=$(python3 -c "print(f'{$c/max($count,1)*1e6:.2f}')")
      rps[$t]="${rps[$t]:-} $v"; cpu[$t]="${cpu[$t]:-} $us"
      printf '  round %d %-18s %10.0f/s  %6s µs CPU/request\n' "$r" "$t" "$v" "$us" >&2
    done
  done
  for t in "${tools[@]}"; do
    python3 -c 'import sys,statistics as st; t,r,c=sys.argv[1:]; r=sorted(map(float,r.split())); c=list(map(float,c.split())); print(t, max(r), st.median(r), st.median(c))' "$t" "${rps[$t]}" "${cpu[$t]}"
  done
}
field() { echo "$1" | awk -v t="$2" -v f="$3" '$1==t {print $f}'; }
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "$1" "$2"; }
table() { echo "$1" | awk '{printf "  %-18s best %10.0f/s  median %10.0f/s  CPU %7.2f µs/request\n", $1, $2, $3, $4}'; }
goals=()
goal() { # goal TEXT MET(1/0)
  if [ "$2" = 1 ]; then goals+=("met:    $1"); else goals+=("MISSED: $1"); fi
}
ge() { python3 -c "import sys; print(1 if float(sys.argv[1]) >= float(sys.argv[2]) else 0)" "$1" "$2"; }

http_table() {
  echo "== $1: HTTP/1.1 GET /ping, $CONNS connections, closed loop, ${SECS}s × $ROUNDS rounds"
  res=$(rounds wrk vegeta tandem tandem_workers tandem_quantum)
  table "$res"
  wm=$(field "$res" wrk 3); vm=$(field "$res" vegeta 3)
  for t in tandem tandem_workers tandem_quantum; do
    m=$(field "$res" $t 3)
    echo "  $t: $(ratio "$m" "$wm")× wrk, $(ratio "$m" "$vm")× vegeta (medians)"
  done
  echo "  (tandem: the default; tandem_workers: --engine workers; tandem_quantum: --quantum $QUANTUM)"
  last_http=$res
  r=$(ratio "$(field "$res" tandem 3)" "$wm"); c=$(ratio "$(field "$res" tandem 4)" "$(field "$res" wrk 4)")
  goal "HTTP/1.1 closed loop on $1, $CONNS connections: the default at ≥ 1.00× wrk's requests/s (${r}×) and ≤ 1.00× its CPU per request (${c}×)" "$(python3 -c "print(int($r >= 1.0 and $c <= 1.0))")"
  # one request in flight: where polling for the answer, not sleeping, pays
  local conns=$CONNS; CONNS=1
  echo "  -- 1 connection, ${SECS}s × $ROUNDS rounds"
  res=$(rounds wrk tandem)
  table "$res"
  echo "  tandem at 1 connection: $(ratio "$(field "$res" tandem 3)" "$(field "$res" wrk 3)")× wrk's requests/s, $(ratio "$(field "$res" tandem 4)" "$(field "$res" wrk 4)")× its CPU per request (medians)"
  CONNS=$conns
}
if is http; then
  GP=$(port); HP=$(port)
  serve "$T" sample serve --build a --data "$data/sample" --grpc "127.0.0.1:$GP" --http "127.0.0.1:$HP" --blocks 100
  URL="http://127.0.0.1:$HP/ping"; wait_http "$URL"
  http_table "the sample service"
  stop_servers
fi
if is pong; then
  PP=$(port); serve "$H" --serve "127.0.0.1:$PP"
  URL="http://127.0.0.1:$PP/ping"; wait_http "$URL"
  http_table "a minimal server (tandem-hotpath --serve)"
  stop_servers
fi
if is grpc; then
  for shape in unary stream; do
    GA=$(port)
    if [ $shape = unary ]; then serve "$H" --serve-grpc "127.0.0.1:$GA"; GRPC_CALL=tandem.sample.v1.Ledger/Ping
    else serve "$H" --serve-grpc "127.0.0.1:$GA" --messages 10; GRPC_CALL=tandem.sample.v1.Ledger/GetBlockRange; fi
    GRPC_ADDR="127.0.0.1:$GA"; sleep 0.3
    for GRPC_CONNS in 1 "$CONNS"; do
      echo "== gRPC $shape ($GRPC_CALL$([ $shape = stream ] && echo ', 10 messages a call')) on a minimal server, $INFLIGHT in flight over $GRPC_CONNS connection(s), ${SECS}s × $ROUNDS rounds"
      res=$(rounds ghz_v0.93.0 ghz_v0.121.0 tandem_grpc)
      table "$res"
      best_rps=$(python3 -c 'import sys; print(max(map(float,sys.argv[1:])))' "$(field "$res" ghz_v0.93.0 3)" "$(field "$res" ghz_v0.121.0 3)")
      least_cpu=$(python3 -c 'import sys; print(min(map(float,sys.argv[1:])))' "$(field "$res" ghz_v0.93.0 4)" "$(field "$res" ghz_v0.121.0 4)")
      rr=$(ratio "$(field "$res" tandem_grpc 3)" "$best_rps"); cr=$(ratio "$(field "$res" tandem_grpc 4)" "$least_cpu")
      echo "  tandem: ${rr}× the faster ghz's calls/s, ${cr}× the leaner ghz's CPU per call (medians)"
      goal "gRPC $shape, $GRPC_CONNS connection(s): tandem ≥ 1.00× the faster ghz's calls/s: ${rr}×" "$(ge "$rr" 1.0)"
      goal "gRPC $shape, $GRPC_CONNS connection(s): tandem ≤ 0.50× the leaner ghz's CPU per call: ${cr}×" "$(ge 0.5 "$cr")"
    done
    stop_servers
  done
fi
if is h2; then
  for scheme in http https; do
    P=$(port)
    if [ $scheme = http ]; then serve "$H" --serve-h2 "127.0.0.1:$P"; name=h2c; else serve "$H" --serve-h2 "127.0.0.1:$P" --tls; name="h2 over TLS"; fi
    URL="$scheme://127.0.0.1:$P/ping"; sleep 0.3
    for STREAMS in 1 10; do
      echo "== HTTP/2 ($name) on a minimal server, $CONNS connections, $STREAMS stream(s) each, ${SECS}s × $ROUNDS rounds"
      res=$(rounds h2load tandem_h2)
      table "$res"
      r=$(ratio "$(field "$res" tandem_h2 3)" "$(field "$res" h2load 3)")
      c=$(ratio "$(field "$res" tandem_h2 4)" "$(field "$res" h2load 4)")
      echo "  tandem --http2: ${r}× h2load's requests/s, ${c}× its CPU per request (medians)"
      goal "HTTP/2 $name, $STREAMS stream(s) a connection: tandem ≥ 1.00× h2load: ${r}×" "$(ge "$r" 1.0)"
    done
    stop_servers
  done
fi
if is open; then
  GP=$(port); HP=$(port)
  serve "$T" sample serve --build a --data "$data/sample-open" --grpc "127.0.0.1:$GP" --http "127.0.0.1:$HP" --blocks 100
  URL="http://127.0.0.1:$HP/ping"; wait_http "$URL"
  n=$((10000 * SECS))
  echo "== open loop at 10,000/s for ${SECS}s ($CONNS connections) on the sample service: CPU per request"
  declare -a vs ts ws qs fs
  for r in $(seq "$ROUNDS"); do
    vc=$(measure /dev/null bash -c "echo 'GET $URL' | taskset -c 0 '$TOOLS/vegeta' attack -rate=10000 -workers=$CONNS -max-workers=$CONNS -duration=${SECS}s")
    tc=$(measure /dev/null gen "$T" load "$URL" --rate 10000 --connections "$CONNS" --duration "${SECS}s")
    wc=$(measure /dev/null gen "$T" load "$URL" --rate 10000 --connections "$CONNS" --duration "${SECS}s" --engine workers)
    qc=$(measure /dev/null gen "$T" load "$URL" --rate 10000 --connections "$CONNS" --duration "${SECS}s" --quantum 1ms)
    fc=$(measure "$data/floor" gen "$H" --open-floor "127.0.0.1:$HP" --rate 10000 --connections "$CONNS" --duration "${SECS}s")
    us() { python3 -c "print(f'{$1/$n*1e6:.1f}')"; }
    vs+=("$(us "$vc")"); ts+=("$(us "$tc")"); ws+=("$(us "$wc")"); qs+=("$(us "$qc")"); fs+=("$(us "$fc")")
    echo "  round $r: vegeta $(us "$vc") µs/request; tandem (default) $(us "$tc"); --engine workers $(us "$wc"); --quantum 1ms $(us "$qc"); the floor $(us "$fc") ($(cat "$data/floor"))"
  done
  med() { python3 -c 'import sys,statistics; print(statistics.median(map(float,sys.argv[1:])))' "$@"; }
  r=$(ratio "$(med "${ts[@]}")" "$(med "${vs[@]}")")
  echo "  medians: vegeta $(med "${vs[@]}"), tandem $(med "${ts[@]}") (${r}×), workers $(med "${ws[@]}"), --quantum 1ms $(med "${qs[@]}") µs/request"
  echo "  the floor of per-arrival timing (tandem-hotpath --open-floor: a wake-up, a read and a write per arrival, nothing else): $(med "${fs[@]}") µs/request, $(ratio "$(med "${fs[@]}")" "$(med "${vs[@]}")")× vegeta's"
  goal "open loop at 10,000/s: the default at ≤ 0.50× vegeta's CPU per request: ${r}×" "$(ge 0.5 "$r")"
  stop_servers
  PP=$(port); serve "$H" --serve "127.0.0.1:$PP"; URL="http://127.0.0.1:$PP/ping"; wait_http "$URL"
  echo "== open loop, achieved / offered (tandem's default, 64 connections, minimal server)"
  for rate in 10000 25000 50000; do
    gen "$T" load "$URL" --rate "$rate" --connections 64 --duration "${SECS}s" --format json > "$data/o"
    line=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); a=d['achieved_rate']/d['offered_rate']*100; l=d['schedule_lag_ns']; print(f'{a:.2f}', f'offered {d[\"offered_rate\"]:9.0f}/s achieved {d[\"achieved_rate\"]:9.0f}/s ({a:.2f} %) dropped {d[\"dropped\"]} engine {d.get(\"engine\")} latency p50 {d[\"latency_ns\"][\"p50\"]/1e3:.0f} µs, schedule lag p50 {l[\"p50\"]/1e3:.0f} µs p99 {l[\"p99\"]/1e3:.0f} µs')" "$data/o")
    echo "  ${line#* }"
    goal "open loop at $rate/s: achieved within 0.5 % of offered: ${line%% *} %" "$(ge "${line%% *}" 99.5)"
  done
  stop_servers
fi
if is floor; then
  N=1000000
  echo "== the floor: one core, both ends of a loopback request, no wake-ups ($N round trips)"
  c=$(measure "$data/f" taskset -c 0 "$H" --floor --requests "$N")
  echo "  $(cat "$data/f"); CPU $(python3 -c "print(f'{$c/$N*1e6:.2f}')") µs per request: at most $(python3 -c "print(f'{$N/$c:,.0f}')") requests/s on one core for a generator and its server together"
fi
if is rss; then
  N=${RSS_REQUESTS:-10000000}
  rss_run() { # rss_run NAME URL ARGS…: tandem's peak RSS over N requests
    local name=$1 url=$2; shift 2
    echo "== RSS over $N requests ($name, tandem's default, minimal server)"
    taskset -c 0 "$T" load "$url" "$@" --requests "$N" --format json > "$data/rss.json" &
    local pid=$!  # tandem's own (taskset execs it)
    local first="" peak=0 t=0 rss
    while kill -0 $pid 2>/dev/null; do
      rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
      [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
      [ $t = 10 ] && first=$rss
      t=$((t + 1)); sleep 1
    done
    echo "  after 10 s: ${first:-?} KiB; peak: $peak KiB over ${t} s; $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["ok"], "ok at", round(d["throughput"]), "/s on", d["engine"])' "$data/rss.json")"
    goal "RSS over $N requests ($name) ≤ 64 MiB: peak $((peak / 1024)) MiB" "$([ "$peak" -le 65536 ] && echo 1 || echo 0)"
  }
  PP=$(port); serve "$H" --serve "127.0.0.1:$PP"; URL="http://127.0.0.1:$PP/ping"; wait_http "$URL"
  rss_run "HTTP/1.1, closed loop, $CONNS connections" "$URL" --concurrency "$CONNS"
  P2=$(port); serve "$H" --serve-h2 "127.0.0.1:$P2"; sleep 0.3
  rss_run "h2c, $CONNS connections × 10 streams" "http://127.0.0.1:$P2/ping" --http2 --concurrency $((CONNS * 10)) --connections "$CONNS"
  PG=$(port); serve "$H" --serve-grpc "127.0.0.1:$PG"; sleep 0.3
  rss_run "gRPC unary, $INFLIGHT in flight, 1 connection" "grpc://127.0.0.1:$PG/tandem.sample.v1.Ledger/Ping" --proto sample/ledgerpb/ledger.proto --concurrency "$INFLIGHT" --connections 1
  stop_servers
fi
if [ ${#goals[@]} -gt 0 ]; then
  echo "== goals"
  printf '  %s\n' "${goals[@]}"
fi
