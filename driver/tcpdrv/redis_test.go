package tcpdrv_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/stats"
	"github.com/tandem-bench/tandem/study"
)

// The plain TCP driver end to end: the Redis example study against real
// redis-server processes, with a third Redis whose memory limit refuses
// every write, so compat finds agreement and disagreement and the write
// scenario a failing target.
func TestRedisStudy(t *testing.T) {
	tooltest.Need(t, "TANDEM_REQUIRE_REDIS", "redis-server")
	src, err := os.ReadFile("../../examples/redis/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	full := `  - name: full
    start:
      command: [redis-server, --port, "${port.tcp}", --bind, 127.0.0.1, --save, "", --maxmemory, "1", --maxmemory-policy, noeviction]
    endpoints: {tcp: "127.0.0.1:${port.tcp}"}
    ready: {first_answer: {call: ping}, timeout: 20s}
calls:
`
	s, err := study.Parse("redis.yaml", []byte(strings.Replace(string(src), "calls:\n", full, 1)))
	if err != nil {
		t.Fatal(err)
	}
	s.Quick()
	s.Defaults.MinDuration = 200 * time.Millisecond
	o := runner.Options{Out: t.TempDir(), Version: "test", Rounds: 2}
	if os.Getenv("TANDEM_TEST_PROGRESS") == "1" {
		o.Progress = os.Stderr
	}
	res, err := runner.Run(context.Background(), s, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(o.Out + "/" + runner.ResultsFile); err != nil {
		t.Fatal(err)
	}
	// compat: aof answers as memory does; full refuses the writes
	agree := map[string]string{}
	for _, c := range res.Compat.Cases {
		key := c.Call
		if v, ok := c.Vars["key"]; ok {
			key += " " + v.(string)
		}
		agree[key] = c.Agreement
		for _, a := range c.Answers {
			if a.Target == "full" && c.Call == "set" && a.Status != "tcp:error" {
				t.Errorf("%s on full: status %q, want tcp:error (-OOM)", key, a.Status)
			}
		}
	}
	for key, want := range map[string]string{"set k1": "status differs", "exists nosuch": "identical", "type nosuch": "identical",
		"exists k1": "content differs"} {
		if agree[key] != want {
			t.Errorf("compat %s: %q, want %q (all: %v)", key, agree[key], want, agree)
		}
	}
	if res.Compat.Failed == 0 {
		t.Error("compat: no case failed, though full refuses every write")
	}
	// scenarios: every round on memory and aof succeeds; full fails its writes
	for _, sc := range res.Scenarios {
		for _, rd := range sc.Rounds {
			healthy := rd.Target != "full" || sc.Call == "ping"
			if healthy && (rd.Failed || rd.OK != rd.Requests || rd.OK == 0) {
				t.Errorf("%s round %d on %s: %+v", sc.Name, rd.Round, rd.Target, rd.Sample)
			}
			if !healthy && (rd.Errors["tcp:error"] == 0 || rd.OK != 0) {
				t.Errorf("%s round %d on full: %d ok, errors %v; want every write refused", sc.Name, rd.Round, rd.OK, rd.Errors)
			}
		}
		for _, c := range sc.Comparisons {
			if sc.Name == "write" && c.Candidate == "full" && c.Verdict != stats.Failing {
				t.Errorf("write: full is %s (%s), want failing", c.Verdict, c.Reason)
			}
		}
	}
}
