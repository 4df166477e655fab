package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
)

// compatStudy starts both sample builds as child processes; cases holds
// the compat cases.
func compatStudy(t *testing.T, cases string) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("version: 1\nname: compat cli\ntargets:\n")
	for _, build := range []string{"a", "b"} {
		b.WriteString(`  - name: ` + build + `
    start:
      command: ["${tandem}", sample, serve, --build, ` + build + `, --blocks, "50", --work, "1", --data, "${workdir}/data",
                --grpc, "127.0.0.1:${port.grpc}", --http, "127.0.0.1:${port.http}"]
    endpoints: {grpc: "127.0.0.1:${port.grpc}", http: "http://127.0.0.1:${port.http}/"}
    ready:
      first_answer: {call: info}
      condition: {call: info, path: indexed, equals: true}
`)
	}
	b.WriteString(`calls:
  info: {grpc: {method: tandem.sample.v1.Ledger/Info}}
  block: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: "${h}"}}}
  balance: {jsonrpc: {method: getbalance, params: ["${addr}"]}}
scenarios:
  - {name: lat, call: info, load: {concurrency: 1}}
compat:
  cases:
` + cases)
	path := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunOnlyCompatStrict(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // answers, not speed
	cases := []struct {
		name, cases string
		strict      bool
		code        int
		agreement   string
	}{
		{"agree", "    - {call: block, vary: {h: [0, 60]}}\n", true, exitOK, "identical"},
		{"disagree, strict", "    - {call: block, vary: {h: [5]}}\n", true, exitCheckFailed, "content differs"},
		{"disagree, not strict", "    - {call: block, vary: {h: [5]}}\n", false, exitOK, "content differs"},
		{"report mode, strict", "    - {call: info, mode: report}\n", true, exitOK, "content differs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"run", compatStudy(t, c.cases), "--only", "compat", "--pin=false", "--out", out}
			if c.strict {
				args = append(args, "--strict")
			}
			code, stdout, stderr := tandem(t, args...)
			if code != c.code {
				t.Fatalf("exit %d; want %d\n%s\n%s", code, c.code, stdout, stderr)
			}
			r, err := results.Read(filepath.Join(out, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if r.Compat == nil || len(r.Compat.Cases) == 0 || len(r.Scenarios) != 0 {
				t.Fatalf("compat %+v, %d scenarios; want compat only", r.Compat, len(r.Scenarios))
			}
			if got := r.Compat.Cases[0].Agreement; got != c.agreement {
				t.Errorf("agreement %q; want %q", got, c.agreement)
			}
			if !strings.Contains(stdout, "Compatibility") {
				t.Errorf("the summary has no compat table:\n%s", stdout)
			}
		})
	}
	code, _, stderr := tandem(t, "run", "../../demo/demo.yaml", "--only", "compat,nosuch")
	if code != exitBadInput || !strings.Contains(stderr, "nosuch") {
		t.Errorf("--only with an unknown name: exit %d, %q", code, stderr)
	}
}
