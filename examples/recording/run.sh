#!/usr/bin/env bash
# Records a session of curl requests to build a of tandem's sample service
# through `tandem record`, then replays it to builds a and b: as compat
# cases (the planted differences) and as load (each build's latency on the
# recorded traffic). README.md walks through it.
#
#   examples/recording/run.sh [OUT]     # default OUT: ./recording-out
#
# TANDEM names the tandem binary (default: tandem on PATH); TANDEM_RUN_FLAGS
# are added to `tandem run` (e.g. --rounds 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tandem=${TANDEM:-tandem}
out=${1:-recording-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -e "$out/session.jsonl" ]; then
  echo "run.sh: $out/session.jsonl exists: give another OUT (tandem record never overwrites a recording)" >&2
  exit 2
fi

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# address LOG WORD: waits (60 s at most) for "WORD 127.0.0.1:PORT" in LOG
# and prints the address.
address() {
  for _ in $(seq 600); do
    a=$(grep -o "$2 127\.0\.0\.1:[0-9]*" "$1" 2>/dev/null | head -n 1 | awk '{print $NF}') || true
    if [ -n "$a" ]; then echo "$a"; return; fi
    sleep 0.1
  done
  echo "run.sh: no \"$2 ADDRESS\" in $1 after 60 s:" >&2
  cat "$1" >&2
  exit 1
}

# 1. build a of the sample service (a short chain: it indexes before it listens)
"$tandem" sample serve --build a --data "$out/a" --blocks 200 --work 1 2> "$out/sample.log" &
pids+=($!)
upstream=$(address "$out/sample.log" http)

# 2. tandem record in front of it
"$tandem" record --listen 127.0.0.1:0 --to "http://$upstream" --out "$out/session.jsonl" 2> "$out/record.log" &
recorder=$!
pids+=("$recorder")
proxy=$(address "$out/record.log" "listening on")
echo "recording the session to build a ($upstream) through $proxy"

# 3. the session: curl through the recorder, a little apart, as a person
#    or a client would send them
rpc() { # ID METHOD PARAMS [curl args]
  local id=$1 method=$2 params=$3
  shift 3
  curl -sS --fail-with-body -H 'Content-Type: application/json' "$@" \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"$method\",\"params\":$params}" "http://$proxy/"
  echo
  sleep 0.05
}
rpc 1 getinfo '[]'
rpc 2 getbalance '["tz1000014"]' -H 'Authorization: Bearer example-token' # redacted in the file
rpc 3 getbalance '["tz1000007"]'
rpc 4 getbalance '["not-an-address"]'
block=$(rpc 5 getblock '[3]')
echo "$block"
txid=$(echo "$block" | grep -o '"tx":\["[0-9a-f]*' | sed 's/.*"//')
rpc 6 getrawtransaction "[\"$txid\", 0]"
rpc 7 getblock '[150]'
curl -sS --fail-with-body "http://$proxy/ping"
echo

# 4. stop the recorder (it syncs the file and says how many it recorded)
#    and build a: the study starts both builds itself, from empty
kill -INT "$recorder"
wait "$recorder"
cat "$out/record.log"

# 5. replay it to both builds: compat cases, then load
cp "$here/study.yaml" "$out/study.yaml"
"$tandem" validate "$out/study.yaml"
# shellcheck disable=SC2086 # the flags are words
"$tandem" run "$out/study.yaml" --out "$out/run" ${TANDEM_RUN_FLAGS:-}
