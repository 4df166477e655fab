#!/usr/bin/env bash
# How closely a target's network: conditions hold (docs/network.md,
# Measured): one study, one HTTP server (python3's http.server on a small
# and an 8 MiB file), five targets on it that differ only in their path:
#
#   direct    no link
#   delayed   network: {delay: 25ms}                  goal: p50 rises by 50 ms ± 10 %
#   jittered  network: {delay: 25ms, jitter: 10ms}    goal: p50 as delayed's, p99 above it
#   capped    network: {bandwidth: 10MB/s}            goal: 8 MiB answers at 10 MB/s ± 10 %
#   bulk      the same 8 MiB answers without a link
#
# Where the kernel's path can be made here (root on Linux; tandem validate
# says), three more, their loss and bandwidth done by the kernel on a veth
# pair (network: {via: kernel}):
#
#   kcapped   network: {via: kernel, bandwidth: 10MB/s}   goal: 10 MB/s ± 10 %
#   klossy    network: {via: kernel, loss: 0.02}          goal: 2 % ± 0.5 % of packets dropped
#   lossy     network: {loss: 0.02} (tandem's model)      the p99 beside klossy's
#
# The small requests run in a closed loop of one client, ROUNDS rounds of
# REQUESTS each, the targets interleaved; the large ones, BIG_REQUESTS in
# one round. Prints each figure against its goal and, with --write-docs,
# replaces the table between the bench/network.sh markers in
# docs/network.md, with the machine's load average beside it.
#
#   bench/network.sh [--write-docs]
#
# ROUNDS (3), REQUESTS (200), BIG_REQUESTS (4).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200}
BIG_REQUESTS=${BIG_REQUESTS:-4}
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"
go build -o "$TOOLS/tandem" ./cmd/tandem
T="$TOOLS/tandem"
header="tandem $(git rev-parse --short HEAD 2>/dev/null || echo "?")$(git diff --quiet HEAD 2>/dev/null || echo "+changes"); $(go version | cut -d' ' -f3); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$header"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
data=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$data"' EXIT
mkdir "$data/www"
printf 'pong' > "$data/www/small"
head -c $((8 << 20)) /dev/zero > "$data/www/big"
P=$(port)
python3 -m http.server "$P" --bind 127.0.0.1 --directory "$data/www" >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$P/small" >/dev/null 2>&1 && break; sleep 0.1; done

ep="{http: \"http://127.0.0.1:$P/\"}"
cat > "$data/probe.yaml" <<EOF
version: 1
name: probe
targets: [{name: k, endpoints: $ep, network: {via: kernel}}]
calls: {small: {http: {path: small}}}
scenarios: [{name: s, call: small, load: {concurrency: 1}, requests: 1}]
EOF
kernel_targets="" kernel_small="" kernel_big=""
if "$T" validate "$data/probe.yaml" >"$data/probe.log" 2>&1; then
  kernel_targets="
  - {name: kcapped, endpoints: $ep, ready: {first_answer: {call: small}}, network: {via: kernel, bandwidth: 10MB/s}}
  - {name: klossy, endpoints: $ep, ready: {first_answer: {call: small}}, network: {via: kernel, loss: 0.02}}
  - {name: lossy, endpoints: $ep, ready: {first_answer: {call: small}}, network: {loss: 0.02}}"
  kernel_small=", klossy, lossy" kernel_big=", kcapped"
else
  echo "no kernel rows: $(tail -1 "$data/probe.log")"
fi
cat > "$data/network.yaml" <<EOF
version: 1
name: network conditions
defaults: {rounds: $ROUNDS, warmup: 200ms, timeout: 30s}
targets:
  - {name: direct, endpoints: $ep, ready: {first_answer: {call: small}}}
  - {name: delayed, endpoints: $ep, ready: {first_answer: {call: small}}, network: {delay: 25ms}}
  - {name: jittered, endpoints: $ep, ready: {first_answer: {call: small}}, network: {delay: 25ms, jitter: 10ms}}
  - {name: capped, endpoints: $ep, ready: {first_answer: {call: small}}, network: {bandwidth: 10MB/s}}
  - {name: bulk, endpoints: $ep, ready: {first_answer: {call: small}}}$kernel_targets
calls:
  small: {http: {path: small}}
  big: {http: {path: big}}
scenarios:
  - name: small
    call: small
    targets: [direct, delayed, jittered$kernel_small]
    load: {concurrency: 1}
    requests: $REQUESTS
  - name: big
    call: big
    targets: [bulk, capped$kernel_big]
    load: {concurrency: 1}
    requests: $BIG_REQUESTS
    rounds: 1
EOF
"$T" run "$data/network.yaml" --out "$data/out" --pin=false >"$data/run.log" 2>&1 || { tail -20 "$data/run.log"; exit 1; }

python3 - "$data/out/results.json" "$header" "${1:-}" <<'EOF'
import json, statistics, sys, re
res = json.load(open(sys.argv[1]))
header, write = sys.argv[2], sys.argv[3] == "--write-docs"
def rounds(sc, target):
    s = next(s for s in res["scenarios"] if s["name"] == sc)
    return [r for r in s["rounds"] if r["target"] == target]
def med(sc, target, key):
    return statistics.median(r["latency_ns"][key] for r in rounds(sc, target))
ms = lambda ns: ns / 1e6
p50 = {t: med("small", t, "p50") for t in ("direct", "delayed", "jittered")}
p99 = {t: med("small", t, "p99") for t in ("direct", "delayed", "jittered")}
rise = ms(p50["delayed"] - p50["direct"])
jit50 = ms(p50["jittered"] - p50["delayed"])
jit99 = ms(p99["jittered"] - p99["delayed"])
size = 8 << 20
def rate(target):
    r = rounds("big", target)[0]
    return r["throughput"] * size
capped, bulk = rate("capped"), rate("bulk")
rows = [
    ("p50 rise through 25 ms each way", f"{rise:.1f} ms", "50 ms ± 10 %", abs(rise - 50) <= 5),
    ("jitter 10 ms: p50 over the delayed path's", f"{jit50:+.1f} ms", "within ± 5 ms", abs(jit50) <= 5),
    ("jitter 10 ms: p99 over the delayed path's", f"{jit99:+.1f} ms", "above the p50's", jit99 > jit50),
    ("8 MiB answers at a 10 MB/s cap", f"{capped / 1e6:.2f} MB/s", "10 MB/s ± 10 %", abs(capped - 10e6) <= 1e6),
    ("8 MiB answers without a link", f"{bulk / 1e6:.1f} MB/s", "(the server's own)", True),
]
targets = {t["name"]: t for t in res["targets"]}
if "klossy" in targets:
    kcapped = rate("kcapped")
    lk = targets["klossy"]["network"]["links"][0]
    seen = lk["measured_up"]["packets"] + lk["measured_down"]["packets"]
    dropped = lk["measured_up"]["lost"] + lk["measured_down"]["lost"]
    share = dropped / seen if seen else 0
    k99, l99 = med("small", "klossy", "p99"), med("small", "lossy", "p99")
    rows += [
        ("via kernel: 8 MiB answers at a 10 MB/s cap", f"{kcapped / 1e6:.2f} MB/s", "10 MB/s ± 10 %", abs(kcapped - 10e6) <= 1e6),
        ("via kernel: 2 % loss, packets dropped", f"{100 * share:.2f} % of {seen}", "2 % ± 0.5 %", abs(share - 0.02) <= 0.005),
        ("2 % loss: p99 of a small request, kernel / tandem's model", f"{ms(k99):.1f} ms / {ms(l99):.1f} ms", "(the server closes each connection: a lost SYN costs the kernel 1 s; the model, 200 ms)", True),
    ]
lines = ["| figure | measured | goal | met |", "|---|---|---|---|"]
lines += [f"| {a} | {b} | {c} | {'yes' if ok else 'no'} |" for a, b, c, ok in rows]
table = "\n".join(lines)
print(table)
print(f"p50 direct {ms(p50['direct']):.2f} ms, delayed {ms(p50['delayed']):.2f} ms, jittered {ms(p50['jittered']):.2f} ms; "
      f"p99 direct {ms(p99['direct']):.2f} ms, delayed {ms(p99['delayed']):.2f} ms, jittered {ms(p99['jittered']):.2f} ms")
if write:
    path = "docs/network.md"
    doc = open(path).read()
    block = f"<!-- bench/network.sh -->\n{header}\n\n{table}\n<!-- end bench/network.sh -->"
    doc, n = re.subn(r"<!-- bench/network.sh -->.*?<!-- end bench/network.sh -->", lambda m: block, doc, flags=re.S)
    if n != 1:
        sys.exit(f"{path}: no bench/network.sh markers")
    open(path, "w").write(doc)
    print(f"wrote {path}")
EOF
