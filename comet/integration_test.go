package comet_test

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/study"
)

// needTool finds a CometBFT tool on PATH. The test command installs them
// (cometbft and test/loadtime's report at a pinned version) and sets
// TANDEM_REQUIRE_COMETBFT=1, so there a missing tool fails the test.
func needTool(t *testing.T, name string) string {
	t.Helper()
	return tooltest.Need(t, "TANDEM_REQUIRE_COMETBFT", name)
}

// The example's --quick grid against a real single-validator node, checked
// against CometBFT's own report tool on the same blockstore: it reads every
// transaction tandem sent (none invalid), its per-experiment counts equal
// tandem's confirmed, its average latency is within 2 % of tandem's mean,
// and cells that kept up confirmed exactly what was expected.
func TestQuickGridAgainstCometBFT(t *testing.T) {
	needTool(t, "cometbft")
	report := needTool(t, "report")
	s, err := study.Read("../examples/cometbft/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Quick()
	out := t.TempDir()
	self, _ := os.Executable()
	res, err := runner.Run(context.Background(), s, runner.Options{Out: out, Self: self, Version: "test", KeepData: true, StopGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sweeps) != 1 || len(res.Sweeps[0].Cells) != 4 {
		t.Fatalf("sweeps: %+v", res.Sweeps)
	}
	// the results say which database the node kept its blocks in: report reads it with that
	backend := res.Sweeps[0].DBBackend
	if backend != "goleveldb" {
		t.Fatalf("the sweep records the node's database as %q; CometBFT v0.38's default is goleveldb", backend)
	}
	csvPath := filepath.Join(t.TempDir(), "latencies.csv")
	cmd := exec.Command(report, "--database-type", backend, "--data-dir", filepath.Join(out, "work", "node", "home", "data"), "--csv", csvPath)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][0] != "experiment_id" || rows[0][2] != "duration_ns" {
		t.Fatalf("report's CSV: %v, %d rows, header %v", err, len(rows), rows[:min(1, len(rows))])
	}
	type agg struct {
		n   int64
		sum float64
	}
	byID := map[string]*agg{}
	for _, r := range rows[1:] {
		d, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			t.Fatalf("duration %q: %v", r[2], err)
		}
		a := byID[r[0]]
		if a == nil {
			a = &agg{}
			byID[r[0]] = a
		}
		a.n++
		a.sum += d
	}
	if len(byID) != 4 {
		t.Errorf("report found %d experiments; want the 4 cells", len(byID))
	}
	for _, c := range res.Sweeps[0].Cells {
		a := byID[c.RunID]
		if a == nil {
			t.Errorf("cell c=%d r=%v (%s): not in the report", c.Connections, c.Rate, c.RunID)
			continue
		}
		if a.n != c.Confirmed {
			t.Errorf("cell c=%d r=%v: report counts %d, tandem confirmed %d", c.Connections, c.Rate, a.n, c.Confirmed)
		}
		if mean := a.sum / float64(a.n); math.Abs(mean-c.LatencyNs.Mean)/mean > 0.02 {
			t.Errorf("cell c=%d r=%v: report's mean %.0f ns, tandem's %.0f ns: more than 2 %% apart", c.Connections, c.Rate, mean, c.LatencyNs.Mean)
		}
		if !c.Saturated && float64(c.Confirmed) < 0.95*float64(c.Expected) {
			t.Errorf("cell c=%d r=%v kept up but confirmed %d of %d, below the 95 %% rule", c.Connections, c.Rate, c.Confirmed, c.Expected)
		}
		if c.Duplicates != 0 || c.Error != "" {
			t.Errorf("cell c=%d r=%v: %d duplicates, error %q", c.Connections, c.Rate, c.Duplicates, c.Error)
		}
	}
	// the report's text output counts the invalid transactions: none
	b, err := exec.Command(report, "--database-type", backend, "--data-dir", filepath.Join(out, "work", "node", "home", "data")).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "Total Invalid Tx: 0\n") {
		t.Errorf("report: %v\n%s", err, b)
	}
}
