package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/rabbittest"
	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/rabbitnode"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample"
)

// studySecrets are the secrets of secretStudy: each in the environment
// (by its variable) or written out in the study (no variable).
var studySecrets = []struct{ env, value string }{
	{"TSEC_URL", "UrlSecret3301"},     // a started target's endpoint URL
	{"TSEC_METRICS", "MetSecret4402"}, // its metrics URL
	{"TSEC_ARG", "ArgSecret1103"},     // an init command's argument, printed by a failing target
	{"TSEC_ENV", "EnvSecret2204"},     // a target's environment, printed by a failing target
	{"TSEC_HEADER", "HdrSecret5505"},  // an HTTP header
	{"TSEC_JHEADER", "JhdSecret6606"}, // a JSON-RPC header
	{"TSEC_AMQP", "AmqpSecret7707"},   // an AMQP URL
	{"TSEC_ORACLE", "OraSecret8808"},  // a compat oracle's URL
	{"", "LiteralUrlPw9909"},          // an endpoint of a target tandem does not start
	{"", "LiteralMetricsPw1010"},      // its metrics URL
}

// amqpUser adds a user with a password to a private node and returns its
// amqp:// URL; the password goes to rabbitmqctl on its standard input.
func amqpUser(t *testing.T, node *rabbitnode.Node, user, password string) string {
	t.Helper()
	add := exec.Command("rabbitmqctl", "-n", node.Name, "-q", "add_user", user)
	add.Stdin = strings.NewReader(password + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("add_user: %v: %s", err, out)
	}
	if out, err := exec.Command("rabbitmqctl", "-n", node.Name, "-q", "set_permissions", "-p", "/", user, ".*", ".*", ".*").CombinedOutput(); err != nil {
		t.Fatalf("set_permissions: %v: %s", err, out)
	}
	return strings.Replace(node.URL, "guest:guest", user+":"+password, 1)
}

// secretStudy writes a study with a secret in every place one can be:
// a started target (a) with a password in its endpoint and metrics URLs
// and in its AMQP URL, from the environment; a target tandem does not
// start (b, served at bAddr) with them written out; headers of HTTP and
// JSON-RPC calls and a compat oracle's URL from the environment; and a
// target (c) that fails to start, printing the secret of its environment
// and of its init command's argument.
func secretStudy(t *testing.T, bAddr, amqpHostPort string) string {
	t.Helper()
	src := fmt.Sprintf(`version: 1
name: secrets
defaults: {rounds: 2, warmup: 50ms}
targets:
  - name: a
    start:
      init: [[sh, -c, "true", "${env.TSEC_ARG}"]]
      command: ["${tandem}", sample, serve, --build, a, --blocks, "100", --work, "1", --data, "${workdir}/data",
                --grpc, "127.0.0.1:${port.grpc}", --http, "127.0.0.1:${port.http}"]
      env: {API_TOKEN: "${env.TSEC_ENV}"}
    endpoints:
      http: "http://user:${env.TSEC_URL}@127.0.0.1:${port.http}/"
      amqp: "amqp://tandemu:${env.TSEC_AMQP}@%[2]s/"
    metrics: "http://m:${env.TSEC_METRICS}@127.0.0.1:${port.http}/metrics"
    ready: {first_answer: {call: ping}, timeout: 5m}
  - name: b
    endpoints:
      http: "http://user:LiteralUrlPw9909@%[1]s/"
      amqp: "amqp://tandemu:AmqpSecret7707@%[2]s/"
    metrics: "http://m:LiteralMetricsPw1010@%[1]s/metrics"
  - name: c
    start:
      init: [[sh, -c, "echo init key $1", sh, "${env.TSEC_ARG}"]]
      command: [sh, -c, "echo token $API_TOKEN; echo key $1 >&2; exit 3", sh, "${env.TSEC_ARG}"]
      env: {API_TOKEN: "${env.TSEC_ENV}"}
    endpoints: {http: "http://127.0.0.1:${port.http}/"}
    ready: {timeout: 5m}
calls:
  ping: {http: {path: /ping, headers: {Authorization: "Bearer ${env.TSEC_HEADER}"}}}
  bal: {jsonrpc: {method: getbalance, params: [tz1000042], headers: {X-Key: "${env.TSEC_JHEADER}"}}}
  queue: {amqp: {prefetch: 16}}
scenarios:
  - {name: ping, call: ping, load: {concurrency: 1}, requests: 50, targets: [a, b]}
  - {name: bal, call: bal, load: {concurrency: 1}, requests: 50, targets: [a, b]}
  - {name: broker, call: queue, load: {concurrency: 1}, requests: 200, targets: [a, b]}
compat:
  reference: a
  targets: [a, b]
  oracles:
    node: {url: "http://o:${env.TSEC_ORACLE}@%[1]s/"}
  cases:
    - call: bal
      oracle: {name: node, call: bal, checks: [{path: balance, oracle: balance}]}
`, bAddr, amqpHostPort)
	path := filepath.Join(t.TempDir(), "secrets.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// No secret reaches anything a run prints or writes: tandem run, as a
// child, on secretStudy, with -v and with --progress json; stdout, stderr
// and every file under --out are searched for every secret. Each place
// that names an endpoint or a failing target's output must be there,
// hidden, so the search cannot pass on a line that was never printed.
func TestNoSecretInAnyOutput(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	node := rabbittest.StartNode(t)
	amqpURL := amqpUser(t, node, "tandemu", "AmqpSecret7707")
	b, err := sample.Start(context.Background(), sample.Options{Build: sample.BuildA, DataDir: t.TempDir(), Blocks: 100, Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	hostPort := strings.TrimSuffix(amqpURL[strings.Index(amqpURL, "@")+1:], "/")
	path := secretStudy(t, b.HTTPAddr(), hostPort)
	env := os.Environ()
	for _, s := range studySecrets {
		if s.env != "" {
			env = append(env, s.env+"="+s.value)
		}
	}
	for _, progress := range [][]string{{"-v"}, {"--progress", "json"}} {
		t.Run(progress[0], func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(os.Args[0], append([]string{"run", path, "--pin=false", "--out", out}, progress...)...)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitTarget { // c fails to start
				t.Fatalf("exit: %v; want %d (target c fails)\nstderr:\n%s", err, exitTarget, stderr.String())
			}
			texts := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
			err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(p)
				texts[p] = string(data)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range texts {
				for _, s := range studySecrets {
					if i := strings.Index(text, s.value); i >= 0 {
						t.Errorf("%s holds the secret %s: …%s…", name, s.value, text[max(i-80, 0):min(i+20, len(text))])
					}
				}
			}
			// the lines that name a secret's place are there, hidden
			for _, want := range []struct{ where, what string }{
				{"stderr", "not started by tandem, using map[amqp:amqp://tandemu:xxx@"},
				{"stderr", "http:http://user:xxx@" + b.HTTPAddr()},
				{"stderr", "token xxx"},
				{"stdout", "scraped from http://m:xxx@"},
				{filepath.Join(out, "report.html"), "http://m:xxx@" + b.HTTPAddr() + "/metrics"},
				{filepath.Join(out, "report.md"), "token xxx"},
				{filepath.Join(out, "report.txt"), "key xxx"},
			} {
				if !strings.Contains(texts[want.where], want.what) {
					t.Errorf("%s lacks %q", want.where, want.what)
				}
			}
			r, err := results.Read(filepath.Join(out, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Targets) != 3 || r.Targets[1].Metrics == nil || r.Targets[1].Metrics.URL != "http://m:xxx@"+b.HTTPAddr()+"/metrics" ||
				!strings.Contains(r.Targets[2].Error, "token xxx") || len(r.Scenarios) != 3 {
				t.Fatalf("results: %d targets, b's metrics %+v, c's error %q, %d scenarios", len(r.Targets), r.Targets[1].Metrics, r.Targets[2].Error, len(r.Scenarios))
			}
			for _, sc := range r.Scenarios { // every call went through, its secret with it
				for _, rd := range sc.Rounds {
					if rd.Failed || rd.OK == 0 {
						t.Errorf("scenario %s round %d on %s: failed %v (%s), %d ok", sc.Name, rd.Round, rd.Target, rd.Failed, rd.Error, rd.OK)
					}
				}
			}
			if r.Compat == nil || len(r.Compat.Cases) == 0 {
				t.Errorf("compat: %+v", r.Compat)
			}
		})
	}
}
