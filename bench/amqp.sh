#!/usr/bin/env bash
# The layered-consumer benchmark on a real RabbitMQ:
# tandem's raw consumer loop against a small hand-written Go consumer
# (examples/rabbitmq/consumer), side by side on one broker, classic and
# quorum queues, prefetch 1 and 512, three interleaved rounds of drains that
# last at least 5 s each. Starts a private node (Debian rabbitmq-server)
# unless TANDEM_AMQP_URL names a broker. docs/performance.md records the
# table it prints.
#
#   bench/amqp.sh [OUT]   (default /tmp/tandem-bench-amqp)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/tandem-bench-amqp}"
go build -o "$out/tandem" ./cmd/tandem
"$out/tandem" run examples/rabbitmq/study.yaml --out "$out" >/dev/null
"$out/tandem" report "$out/results.json" --format md
