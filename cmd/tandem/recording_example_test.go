package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/results"
)

// The example examples/recording: its script records a session of curl
// requests to build a through tandem record, then replays it to both
// builds as compat cases, which find the planted differences that
// JSON-RPC shows (status, value, type), and as load, which every round
// of both builds takes from the same recorded timetable (each offered
// exactly its arrivals) or in the same closed loop, with each build's
// latency. The Authorization header sent is not in the file.
func TestRecordingExample(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // child processes; asserts what was sent and found, not speed
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the example's script needs it", tool)
		}
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", "examples", "recording", "run.sh"), out)
	cmd.Env = append(os.Environ(), "TANDEM="+os.Args[0], "TANDEM_RUN_FLAGS=--pin=false --rounds 2")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run.sh: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	session := filepath.Join(out, "session.jsonl")
	data, err := os.ReadFile(session)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("example-token")) {
		t.Error("the session holds the Authorization header's token")
	}
	idx, err := record.OpenIndex(session)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if idx.Len() != 8 {
		t.Fatalf("the session has %d exchanges; want the script's 8 requests", idx.Len())
	}
	res, err := results.Read(filepath.Join(out, "run", "results.json"))
	if err != nil {
		t.Fatal(err)
	}

	// compat: every recorded request a case; the planted differences found
	if res.Compat == nil || len(res.Compat.Cases) != 8 {
		t.Fatalf("compat: %+v; want the 8 recorded requests as cases", res.Compat)
	}
	found := map[string]bool{}
	for _, cs := range res.Compat.Cases {
		if cs.Recording == nil || cs.Recording.File != "session.jsonl" {
			t.Errorf("case %s: recording %+v", cs.Call, cs.Recording)
		}
		for _, k := range kinds(cs) {
			found[cs.Call+": "+k] = true
		}
	}
	for _, want := range []string{"jsonrpc getbalance: status ", "jsonrpc getbalance: value tx_count", "jsonrpc getrawtransaction: type "} {
		if !found[want] {
			t.Errorf("compat does not find %q; it found %v", want, found)
		}
	}

	// load: the same arrivals offered in every round on both builds
	timetable := load.Recorded{Arrivals: idx, Speed: 2, Loop: true}
	arrivals := int64(0)
	for {
		if off, ok := timetable.Offset(arrivals); !ok || off >= 2*time.Second {
			break
		}
		arrivals++
	}
	for _, sc := range res.Scenarios {
		if sc.Replay == nil || sc.Replay.SHA256 != idx.SHA256() || sc.Replay.Exchanges != 8 || !sc.Replay.Loop {
			t.Errorf("%s: replay %+v; want the session (sha256 %s)", sc.Name, sc.Replay, idx.SHA256())
		}
		targets := map[string]int{}
		for _, rd := range sc.Rounds {
			targets[rd.Target]++
			if rd.Failed || rd.OK == 0 {
				t.Errorf("%s round %d on %s: failed %v (%s), %d ok", sc.Name, rd.Round, rd.Target, rd.Failed, rd.Error, rd.OK)
			}
			if sc.Name == "replay-timetable" && rd.Requests+rd.Dropped+rd.Unfinished != arrivals {
				t.Errorf("%s round %d on %s: %d sent, %d dropped, %d unfinished; want the timetable's %d arrivals in 2 s",
					sc.Name, rd.Round, rd.Target, rd.Requests, rd.Dropped, rd.Unfinished, arrivals)
			}
		}
		if targets["a"] != 2 || targets["b"] != 2 {
			t.Errorf("%s: rounds per target %v; want 2 on a and b", sc.Name, targets)
		}
		if !strings.Contains(stdout.String(), "Scenario "+sc.Name) {
			t.Errorf("the report does not show scenario %s:\n%s", sc.Name, stdout.String())
		}
	}
	if len(res.Scenarios) != 2 {
		t.Errorf("%d scenarios; want the timetable and the closed loop", len(res.Scenarios))
	}
}
