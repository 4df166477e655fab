#!/usr/bin/env bash
# The test command: installs what the tests need, then runs every check.
# A fresh machine needs only Go, gcc and git; see README.md.
set -euo pipefail
cd "$(dirname "$0")"

STATICCHECK_VERSION=v0.8.2
# actionlint checks the GitHub Actions workflow that `tandem ci init` writes.
ACTIONLINT_VERSION=v1.7.12
# CometBFT and its test/loadtime tools (load, report), for the sweep
# integration test against a real node.
COMETBFT_VERSION=v0.38.26
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS"

step() { printf '\n== %s (at %ds)\n' "$*" "$SECONDS"; }

step "tools"
if [ ! -x "$TOOLS/staticcheck" ]; then
  GOBIN="$TOOLS" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
if [ ! -x "$TOOLS/actionlint-$ACTIONLINT_VERSION/actionlint" ]; then
  GOBIN="$TOOLS/actionlint-$ACTIONLINT_VERSION" go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi
CMT="$TOOLS/cometbft-$COMETBFT_VERSION"
if [ ! -x "$CMT/cometbft" ] || [ ! -x "$CMT/report" ]; then
  echo "building cometbft $COMETBFT_VERSION (about a minute, once)"
  GOBIN="$CMT" go install "github.com/cometbft/cometbft/cmd/cometbft@$COMETBFT_VERSION" \
    "github.com/cometbft/cometbft/test/loadtime/cmd/report@$COMETBFT_VERSION"
fi
export PATH="$CMT:$TOOLS/actionlint-$ACTIONLINT_VERSION:$PATH" TANDEM_REQUIRE_COMETBFT=1 TANDEM_REQUIRE_ACTIONLINT=1
# Debian packages: headless Chromium (to check the HTML report as a person
# sees it), Prometheus (to query a real server for a run's metrics),
# valgrind (counted costs), RabbitMQ (private nodes for the AMQP driver),
# Redis (a line protocol for the TCP driver), PostgreSQL (run history) and
# iproute2 (network namespaces for distributed workers); the packages start
# no service without systemd, and the tests start their own.
missing=""
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing="$missing chromium"
command -v prometheus >/dev/null 2>&1 || missing="$missing prometheus"
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
command -v rabbitmq-server >/dev/null 2>&1 || missing="$missing rabbitmq-server"
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$missing postgresql"
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "test.sh: missing Debian packages:$missing (apt-get install$missing)" >&2; exit 1
  fi
  echo "installing Debian packages:$missing"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
export TANDEM_REQUIRE_CHROMIUM=1 TANDEM_REQUIRE_PROMETHEUS=1 TANDEM_REQUIRE_VALGRIND=1 TANDEM_REQUIRE_RABBITMQ=1 TANDEM_REQUIRE_REDIS=1
# As root on Linux the kernel's network path (network namespaces, a veth
# pair, tbf, nftables) can be made, so its tests must run, not skip.
if [ "$(id -u)" = 0 ] && [ "$(uname -s)" = Linux ]; then export TANDEM_REQUIRE_KERNEL=1; fi

# A private PostgreSQL server for the run history's store tests: a fresh
# cluster in a temporary directory on a loopback port, stopped and removed
# when this script ends. initdb refuses root, so as root the cluster is the
# postgres user's (the package made it).
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGDATA=$(mktemp -d)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$PGDATA"
as_pg "$PGBIN/initdb" -D "$PGDATA/db" -U tandem --auth=trust -E UTF8 >/dev/null
trap 'as_pg "$PGBIN/pg_ctl" -D "$PGDATA/db" -m immediate stop >/dev/null 2>&1; rm -rf "$PGDATA"' EXIT
for try in 1 2 3 4 5; do
  PGPORT=$((20000 + RANDOM % 20000))
  if as_pg "$PGBIN/pg_ctl" -D "$PGDATA/db" -l "$PGDATA/log" -w -t 30 \
      -o "-h 127.0.0.1 -p $PGPORT -k $PGDATA -c fsync=off" start >/dev/null; then break; fi
  [ "$try" = 5 ] && { cat "$PGDATA/log"; echo "test.sh: PostgreSQL did not start" >&2; exit 1; }
done
export TANDEM_TEST_POSTGRES="postgres://tandem@127.0.0.1:$PGPORT/postgres?sslmode=disable" TANDEM_REQUIRE_POSTGRES=1

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go mod tidy"
go mod tidy -diff

step "go vet"
go vet ./...

step "one place builds a load's executor (load.Spec.Run; docs/architecture.md)"
# outside package load, a load is a load.Spec; a Batched literal only asks
# for the requests a batched loop will send (Expected)
git ls-files --error-unmatch load/spec.go >/dev/null # the guard needs the repository's file list
built=$(git grep -nE 'load\.(Closed|Open|Batched)\{' -- '*.go' ':!*_test.go' ':!load/' | grep -v '\.Expected()' || true)
if [ -n "$built" ]; then
  echo "an executor built outside load.Spec.Run:"; echo "$built"; exit 1
fi

step "seams: protocols behind driver, a fleet's part as data (docs/architecture.md)"
# runner and cmd/tandem reach a protocol's package only through driver's
# table (a broker's too), and the fleet ships a part as data, not flags
seams=$(git grep -nE '"github.com/tandem-bench/tandem/driver/[a-z]+drv"' -- 'runner/*.go' 'cmd/tandem/*.go' ':!*_test.go' || true)
if [ -n "$seams" ]; then
  echo "a protocol's package imported past driver's table:"; echo "$seams"; exit 1
fi
flags=$(git grep -nE 'pflag|"args"' -- 'runner/*.go' 'fleet/*.go' 'load/*.go' ':!*_test.go' || true)
if [ -n "$flags" ]; then
  echo "command-line flags in what a fleet ships:"; echo "$flags"; exit 1
fi
# the command maps flags to the library and prints: what it does lives in
# the library's packages, so it stays small
cmdlines=$(git ls-files 'cmd/tandem/*.go' ':!*_test.go' | xargs cat | wc -l)
if [ "$cmdlines" -gt 1700 ]; then
  echo "cmd/tandem has $cmdlines non-test lines (at most 1,700): move what it does into a library package"; exit 1
fi

step "cross-builds: macOS and Windows (the worker engine; see README.md)"
for platform in darwin/arm64 windows/amd64; do
  # vet type-checks the tests too, so a Linux-only test without its build tag fails here
  GOOS="${platform%/*}" GOARCH="${platform#*/}" go vet ./...
  GOOS="${platform%/*}" GOARCH="${platform#*/}" go build -o /dev/null ./cmd/tandem
done

step "staticcheck"
"$TOOLS/staticcheck" ./...

step "go test -race"
# the packages that take longest first, so that the short ones fill the
# other slots while they run (go test starts packages in the order named);
# four packages and four tests of each at a time: the long tests mostly
# wait on real processes and servers (the step used 1.4 cores of 2), and
# they assert nothing a busy machine can break
go test -race -count=1 -p 4 -parallel 4 -timeout 20m ./runner ./cmd/tandem ./comet ./runner/drains ./driver/amqpdrv ./load ./cost ./...

step "Kubernetes Job against k8s.io/api's types (a module of its own: k8s.io/api is large to build)"
(cd internal/k8sjob/apicheck && go test -count=1 ./... &&
  for target in FuzzQuantity FuzzNames; do go test -run '^$' -fuzz "^$target\$" -fuzztime 5000x -fuzzminimizetime 5s .; done)

step "cost guard: tandem's own instructions and allocations per request"
# The generator's regression guard (docs/performance.md): instructions per
# HTTP request may not grow more than 5 % over the committed baseline, and
# the hot path's allocations per request may not rise.
go build -o "$TOOLS/tandem" ./cmd/tandem
go build -o "$TOOLS/tandem-hotpath" ./cmd/tandem-hotpath
"$TOOLS/tandem" cost --ops 2000 --name http-request --baseline bench/cost-baseline.json --max-increase 5 \
  --env GODEBUG=asyncpreemptoff=1 --env GOGC=off --env GOMAXPROCS=1 -- "$TOOLS/tandem-hotpath" --requests '{ops}'
go test -run '^$' -bench 'BenchmarkDo$' -benchmem -count 3 ./driver/httpdrv |
  "$TOOLS/tandem" cost --bench - --baseline bench/allocs-baseline.json

step "fuzz smoke (each target briefly)"
for target in "./study FuzzParse" "./results FuzzParse" "./driver/jsonrpc FuzzCheckReply" "./driver/grpcdrv FuzzDecodeJSON" \
  "./compat FuzzCanonical" "./compat FuzzDiff" "./comet FuzzParseTx" "./hdr FuzzDecodeHDR" \
  "./cost FuzzFromBench" "./driver/httpdrv FuzzFrame" "./driver/internal/h2wire FuzzNext" "./driver/grpcdrv FuzzData" "./driver/tcpdrv FuzzRead" "./history FuzzSeriesKey" \
  "./load FuzzSumAdd" "./internal/pong FuzzServeH2" "./record FuzzReader" "./record FuzzHAR" \
  "./values FuzzCSV" "./values FuzzJSONL" "./values FuzzTemplate" "./study FuzzReadValues" \
  "./link FuzzParseBandwidth" "./link FuzzParseDistribution"; do
  set -- $target
  # a count, not a duration: go1.26's fuzz coordinator can fail a
  # duration-bounded run with "context deadline exceeded" at its end under
  # load (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline
  go test -run '^$' -fuzz "^$2\$" -fuzztime 5000x -fuzzminimizetime 5s "$1"
done

echo
echo "all checks passed in ${SECONDS}s"
