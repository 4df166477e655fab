package results

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/host"
)

func sampleResults() *Results {
	r := New()
	r.Tool = Tool{Name: "tandem", Version: "test", Settings: map[string]string{"-race": "true"}}
	r.Study = Study{Name: "s", File: "s.yaml", ConfigSHA256: strings.Repeat("ab", 32), Seed: 1}
	r.CreatedAt = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r.Machine = Machine{CPUModel: "cpu", Cores: 2, Kernel: "6.1", OS: "linux", Arch: "amd64", GoVersion: "go1.26", GOMAXPROCS: 1, GeneratorCPUs: []int{0}, GeneratorCPUNs: 5}
	r.Targets = []Target{
		{Name: "a", Command: []string{"a", "--x"}, CPUs: []int{1}, Startup: &Startup{FirstAnswerNs: 1, ReadyNs: 2, CPUNs: 3, PeakRSSBytes: 4, DiskBytes: 5},
			Network: &Network{Seed: 3, Up: LinkConditions{DelayNs: 25e6, JitterNs: 1e6, Distribution: "normal", Loss: 0.01},
				Down: LinkConditions{DelayNs: 25e6, BandwidthBytesPerS: 1e6, ResetAfterNs: 1e9, ResetAfterBytes: 10},
				Links: []Link{{Endpoint: "http", Upstream: "127.0.0.1:8080", Listen: "127.0.0.1:40001", RTTCall: "ping", RTTSamples: 5,
					RTTNs: 50_300_000, DirectRTTNs: 90_000}, {Endpoint: "admin", Upstream: "127.0.0.1:8081", Listen: "127.0.0.1:40002",
					Note: "no call to time"}}}},
		{Name: "b", Error: "target b exited: exit status 1"},
	}
	d := Distribution{Min: 1, Mean: 2.5, P50: 2, P90: 3, P99: 4, P999: 5, Max: 6}
	r.Scenarios = []Scenario{{
		Name: "lat", Call: "ping", Metric: "latency_p50_ns", Direction: "lower", Unit: "request",
		Load: Load{Model: "closed", Concurrency: []int{1}}, Requests: 100, DurationNs: 9,
		Rounds: []Round{{Round: 1, Order: 1, Target: "a", Concurrency: 1, Headline: 2, Sample: Sample{
			Requests: 10, OK: 9, Errors: map[string]int64{"grpc:NOT_FOUND": 1}, DurationNs: 7, Throughput: 9, Unit: "request",
			UnitsPerS: 9, LatencyNs: d, ServiceTimeNs: d, ScheduleLagNs: &d, HDR: "SElTRg=="},
			Perturbations: []Perturbation{{Action: "degrade", Target: "a", Time: time.Date(2026, 11, 29, 12, 0, 1, 0, time.UTC), AtNs: 1e9,
				DownNs: 2e8, AnswersAfterNs: 2e8, ReadyAfterNs: 2e8, Degraded: &Degraded{Up: LinkConditions{Loss: 0.5}, Down: LinkConditions{DelayNs: 1e8}}}}}},
		Summary: []Summary{{Target: "a", Concurrency: 1, N: 1, Best: 2, Median: 2, Worst: 2}},
		// a noisy A/A pair can raise the floor past 100 %: still valid
		Comparisons: []Comparison{{Base: "a", Candidate: "b", Concurrency: 1, Ratio: 1.5, Verdict: "slower", Reason: "r", ServerBound: true,
			NoiseFloor: 1.69}},
	}}
	r.Findings = []Finding{{ID: "delayed-ack-stall", Target: "b", Summary: "s", Evidence: map[string]string{"p50": "40ms"}}}
	r.Warnings = []string{"w"}
	return r
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	want := sampleResults()
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read(Write(r)) differs:\n got %+v\nwant %+v", got, want)
	}
	data, _ := os.ReadFile(path)
	if err := Validate(data); err != nil {
		t.Errorf("written results do not validate: %v", err)
	}
}

func TestSchemaRejects(t *testing.T) {
	good, err := Marshal(sampleResults())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"wrong schema":     strings.Replace(string(good), Schema, "tandem.results/v9", 1),
		"unknown verdict":  strings.Replace(string(good), `"verdict": "slower"`, `"verdict": "better"`, 1),
		"negative ns":      strings.Replace(string(good), `"ready_ns": 2`, `"ready_ns": -2`, 1),
		"missing machine":  strings.Replace(string(good), `"machine"`, `"machina"`, 1),
		"string for count": strings.Replace(string(good), `"ok": 9`, `"ok": "9"`, 1),
		"negative floor":   strings.Replace(string(good), `"noise_floor": 1.69`, `"noise_floor": -0.1`, 1),
		"loss of all":      strings.Replace(string(good), `"loss": 0.01`, `"loss": 1`, 1),
		"link unnamed":     strings.Replace(string(good), `"endpoint": "admin",`, ``, 1),
		"unknown action":   strings.Replace(string(good), `"action": "degrade"`, `"action": "flood"`, 1),
	}
	for name, doc := range cases {
		if doc == string(good) {
			t.Fatalf("%s: replacement did not apply", name)
		}
		if err := Validate([]byte(doc)); err == nil {
			t.Errorf("%s: Validate = nil; want an error", name)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"newer major", `{"schema":"tandem.results/v2"}`, `schema "tandem.results/v2": unsupported results schema version`},
		{"no schema", `{"tool":{}}`, `no "schema" field`},
		{"other schema", `{"schema":"k6/v1"}`, `not a tandem results schema`},
		{"syntax", "{\n  \"schema\": \"tandem.results/v1\",\n  \"x\": ]\n}", `3:8: invalid character ']'`},
		{"type", "{\"schema\": \"tandem.results/v1\",\n\"targets\": 5}", `2:`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Parse error %v; want it to contain %q", c.name, err, c.want)
		}
	}
	_, err := Parse([]byte(`{"schema":"tandem.results/v3"}`))
	if !errors.Is(err, ErrVersion) {
		t.Errorf("Parse(v3) error %v; want ErrVersion", err)
	}
}

func TestReadNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, []byte("{\n]"), 0o644)
	_, err := Read(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2:1: ") {
		t.Errorf("Read error %q; want it to start with %q", err, path+":2:1: ")
	}
}

func TestWriteAtomicReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	for _, content := range []string{"first", "second"} {
		if err := WriteFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(got) != "second" || len(entries) != 1 {
		t.Errorf("after two writes: content %q, %d files; want \"second\", 1 file", got, len(entries))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x.json"), []byte("x")); err == nil {
		t.Error("WriteFileAtomic into a missing dir = nil; want an error")
	}
}

func FuzzParse(f *testing.F) {
	good, _ := Marshal(sampleResults())
	f.Add(good)
	f.Add([]byte(`{"schema":"tandem.results/v2"}`))
	f.Add([]byte(`{"schema":"tandem.results/v1","scenarios":[{"rounds":[{"errors":{"x":1}}]}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			return
		}
		if r.Schema != Schema {
			t.Fatalf("Parse accepted schema %q", r.Schema)
		}
		again, err := Marshal(r)
		if err != nil {
			t.Fatalf("Marshal of a parsed file: %v", err)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("Parse(Marshal(Parse(data))): %v", err)
		}
	})
}

func ExampleParse() {
	r, err := Parse([]byte(`{"schema": "tandem.results/v1", "study": {"name": "demo"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Study.Name, len(r.Scenarios))
	_, err = Parse([]byte(`{"schema": "tandem.results/v2"}`))
	fmt.Println(err)
	// Output:
	// demo 0
	// schema "tandem.results/v2": unsupported results schema version: this tandem reads tandem.results/v1; use a tandem that knows this version
}

// The half-written files of a run killed mid-write are removed by the next
// run; nothing else is: not a user's file named like one, not a file of a
// process still running.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := dead.Process.Pid // exited and reaped
	keep := []string{"results.json", ".hidden", "notes.tmp", ".x.abc.tmp", "report.html",
		".notes.2024.tmp", ".report.html.123456.tmp", // the old pattern: a user's file may look like it
		tempName("report.md", os.Getpid()),     // this process's own
		tempName("results.json", os.Getppid()), // a live process's
		".results.json.tandem-x-1.tmp", ".results.json.tandem-12-.tmp"}
	stale := []string{tempName("report.html", gone), tempName("results.json", gone)}
	slices.Sort(stale)
	for _, n := range append(append([]string{}, keep...), stale...) {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	removed, err := RemoveStaleTemps(dir)
	if err != nil || !slices.Equal(removed, stale) {
		t.Errorf("RemoveStaleTemps = %v, %v; want %v", removed, err, stale)
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
}

// tempName is a name WriteFileAtomic would make for name in process pid.
func tempName(name string, pid int) string {
	return tempPrefix(name) + strconv.Itoa(pid) + "-4242.tmp"
}

// WriteFileAtomic's temporary files carry its pid, so RemoveStaleTemps
// can tell its own from a user's.
func TestTempNamesCarryThePid(t *testing.T) {
	name := strings.Replace(tempPattern("a*b.json"), "*", "99", 1)
	pid, ok := host.StalePID(name, tempPrefix("a*b.json"), ".tmp")
	if !ok || pid != os.Getpid() {
		t.Errorf("%s: pid %d, %v; want %d", name, pid, ok, os.Getpid())
	}
}
