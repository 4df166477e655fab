#!/usr/bin/env bash
# Distributed load on one machine: the same closed loop run by tandem load
# alone, over one local worker and over two (each a process of its own,
# coordinated over the embedded NATS server), against a minimal server
# (tandem-hotpath --serve) pinned to one core, every generator pinned to
# the other. Interleaved rounds; prints best and median throughput per way
# and the coordination path's traffic (messages and bytes per second per
# worker, as the coordinator received them) that docs/performance.md
# records.
#
#   bench/fleet.sh            (ROUNDS=3 SECS=5 CONNS=32 by default)
#
# Needs two cores and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
SECS=${SECS:-5}
CONNS=${CONNS:-32}
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"
go build -o "$TOOLS/tandem" ./cmd/tandem
go build -o "$TOOLS/tandem-hotpath" ./cmd/tandem-hotpath
T="$TOOLS/tandem"
PP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 1 "$TOOLS/tandem-hotpath" --serve "127.0.0.1:$PP" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do "$T" load "http://127.0.0.1:$PP/ping" --requests 1 >/dev/null 2>&1 && break; sleep 0.1; done

# each way prints: throughput msgs/s/worker bytes/s/worker
summary='import json,sys
d=json.load(sys.stdin); f=d.get("fleet")
n=len(f["workers"]) if f else 0
print(d["throughput"], f["messages_per_s"]/n if f else 0, f["bytes_per_s"]/n if f else 0)'
run_alone()  { taskset -c 0 "$T" load "http://127.0.0.1:$PP/ping" --concurrency "$CONNS" --duration "${SECS}s" --format json | python3 -c "$summary"; }
run_fleet1() { taskset -c 0 "$T" load "http://127.0.0.1:$PP/ping" --concurrency "$CONNS" --duration "${SECS}s" --local-workers 1 --format json 2>/dev/null | python3 -c "$summary"; }
run_fleet2() { taskset -c 0 "$T" load "http://127.0.0.1:$PP/ping" --concurrency "$CONNS" --duration "${SECS}s" --local-workers 2 --format json 2>/dev/null | python3 -c "$summary"; }

declare -A tp msg byt
ways=(alone fleet1 fleet2)
for r in $(seq "$ROUNDS"); do
  for i in 0 1 2; do
    w=${ways[$(((i + r) % 3))]}
    read -r t m b < <("run_$w")
    tp[$w]="${tp[$w]:-} $t"; msg[$w]="${msg[$w]:-} $m"; byt[$w]="${byt[$w]:-} $b"
    echo "  round $r $w: $t req/s, $m msg/s and $b B/s per worker" >&2
  done
done
echo "== HTTP/1.1 GET /ping on a minimal server, $CONNS connections in all, closed loop, ${SECS}s × $ROUNDS rounds (generators on one core)"
for w in "${ways[@]}"; do
  python3 - "$w" "${tp[$w]}" "${msg[$w]}" "${byt[$w]}" <<'PY'
import statistics, sys
w, tp, msg, byt = sys.argv[1], *[list(map(float, a.split())) for a in sys.argv[2:]]
print(f"  {w:7s} best {max(tp):9.0f}/s  median {statistics.median(tp):9.0f}/s   coordination per worker: {statistics.median(msg):5.1f} msg/s, {statistics.median(byt):7.0f} B/s")
PY
done
