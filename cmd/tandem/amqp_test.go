package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/rabbittest"
)

func TestLoadAMQP(t *testing.T) {
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	url := rabbittest.Start(t)
	code, out, stderr := tandem(t, "load", url, "--queue-type", "quorum", "--prefetch", "64", "--size", "256",
		"--confirm", "--requests", "2000", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Requests, OK int64
		Unit         string
		UnitsPerS    float64             `json:"units_per_s"`
		LatencyNs    struct{ P50 int64 } `json:"latency_ns"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Requests != 2000 || got.OK != 2000 || got.Unit != "message" || got.UnitsPerS <= 0 || got.LatencyNs.P50 <= 0 {
		t.Errorf("json: %+v", got)
	}
	code, out, _ = tandem(t, "load", url, "--rate", "500", "--duration", "1s")
	if code != exitOK || !strings.Contains(out, "message") {
		t.Errorf("paced: exit %d\n%s", code, out)
	}
	if code, _, stderr := tandem(t, "load", "amqp://guest:guest@127.0.0.1:1/", "--requests", "1"); code != exitBadInput || !strings.Contains(stderr, "amqp") {
		t.Errorf("closed port: exit %d, %q", code, stderr)
	}
	bad := strings.Replace(url, "guest:guest", "guest:wrong-secret", 1)
	if code, _, stderr := tandem(t, "load", bad, "--requests", "1"); code != exitBadInput || !strings.Contains(stderr, "password not allowed") || strings.Contains(stderr, "wrong-secret") {
		t.Errorf("bad credentials: exit %d, %q", code, stderr)
	}
	if code, _, stderr := tandem(t, "load", "amqp://guest:guest@127.0.0.1:99999/", "--requests", "1"); code != exitBadInput || strings.Count(stderr, "\n") > 1 {
		t.Errorf("bad URL: exit %d, %q", code, stderr)
	}
	if code, _, _ := tandem(t, "load", url, "--queue-type", "stream", "--requests", "1"); code != exitBadInput {
		t.Errorf("--queue-type stream: exit %d", code)
	}
}

// tandem load amqp://… stopped by SIGINT mid-run (as a child process): the
// messages in flight are unfinished, apart from the failures; the text's
// "failed" is what "errors" lists, and sent = ok + failed + unfinished.
func TestLoadAMQPInterrupted(t *testing.T) {
	t.Parallel() // child processes and waits; asserts outcomes, not speed
	node := rabbittest.StartNode(t)
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			// a pipelined publisher outruns a consumer that waits for each
			// ack (prefetch 1): messages are in flight at the cut
			cmd := exec.Command(os.Args[0], "load", node.URL, "--prefetch", "1", "--requests", "50000000", "--duration", "300s", "--format", format)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			for deadline := time.Now().Add(3 * time.Minute); len(rabbittest.Queues(t, node)) == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					<-done
					t.Fatalf("no queue declared within 3 minutes: %s", stderr.String())
				}
			}
			time.Sleep(300 * time.Millisecond) // publishing
			cmd.Process.Signal(os.Interrupt)
			var err error
			select {
			case err = <-done:
			case <-time.After(3 * time.Minute):
				cmd.Process.Kill()
				<-done
				t.Fatal("still running 3 minutes after SIGINT")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("exit %v; want %d: %s", err, exitInterrupted, stderr.String())
			}
			if format == "json" {
				var got struct {
					Requests, OK, Unfinished int64
					Errors                   map[string]int64
					Interrupted              bool
				}
				if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
					t.Fatalf("%v: %s", err, stdout.String())
				}
				if !got.Interrupted || len(got.Errors) != 0 || got.Requests != got.OK || got.Unfinished <= 0 {
					t.Errorf("after SIGINT: %+v; want interrupted, no error, requests = ok (finished), the messages in flight unfinished", got)
				}
				return
			}
			m := regexp.MustCompile(`requests +(\d+) sent, (\d+) ok, (\d+) failed in [^;]+; (\d+) unfinished`).FindStringSubmatch(stdout.String())
			if m == nil || !strings.Contains(stdout.String(), "errors        none\n") || !strings.Contains(stdout.String(), "INTERRUPTED") {
				t.Fatalf("after SIGINT:\n%s", stdout.String())
			}
			n := make([]int64, 4)
			for i := range n {
				n[i], _ = strconv.ParseInt(m[i+1], 10, 64)
			}
			if sent, ok, failed, unfinished := n[0], n[1], n[2], n[3]; failed != 0 || unfinished <= 0 || sent != ok+failed+unfinished {
				t.Errorf("sent %d, ok %d, failed %d (errors none), unfinished %d:\n%s", sent, ok, failed, unfinished, stdout.String())
			}
		})
	}
}
