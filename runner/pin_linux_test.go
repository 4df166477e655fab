package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/study"
)

// threadCPUs is the CPU set of the calling thread.
func threadCPUs(t *testing.T) []int {
	t.Helper()
	cpus, err := host.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	return cpus
}

// pinStudy is a one-target study of 20 requests; generator is its
// generator section, if any.
func pinStudy(generator string) string {
	return `version: 1
name: pinned
` + generator + `
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: a
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {log: "listening on", timeout: 5m}
calls:
  ping: {http: {path: ""}}
scenarios:
  - {name: latency, call: ping, load: {concurrency: 1}, requests: 20}
`
}

// A pinned run puts the generator on the study's generator.cpus, or on
// half the CPUs, and the targets on the rest; it records the generator's
// and gives the process its CPUs and GOMAXPROCS back when it ends: a
// library caller is not left on part of the machine. Unpinned, it applies
// no generator.cpus and says so.
func TestPinnedAndGivenBack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpus, procs := threadCPUs(t), runtime.GOMAXPROCS(0)
	if len(cpus) < 2 {
		t.Skip("one core: nothing to pin apart")
	}
	last := cpus[len(cpus)-1:] // the generator's, in the study
	cases := []struct {
		name, generator string
		pin             bool
		gen, target     []int // want; nil: not pinned
		warning         string
	}{
		{"half", "", true, cpus[:len(cpus)/2], cpus[len(cpus)/2:], ""},
		{"the study's", `generator: {cpus: "` + study.FormatCPUList(last) + `"}`, true, last, cpus[:len(cpus)-1], ""},
		{"unpinned", `generator: {cpus: "` + study.FormatCPUList(last) + `"}`, false, nil, nil, "generator.cpus " + study.FormatCPUList(last) + " is not applied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := options(t, nil)
			o.Pin = c.pin
			res, err := Run(context.Background(), runtest.Parse(t, pinStudy(c.generator)), o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Machine.GeneratorCPUs, c.gen) || !slices.Equal(res.Targets[0].CPUs, c.target) {
				t.Errorf("generator on CPUs %v, target on %v; want %v and %v", res.Machine.GeneratorCPUs, res.Targets[0].CPUs, c.gen, c.target)
			}
			if warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, c.warning) }); c.warning != "" && !warned {
				t.Errorf("warnings %q; want %q…", res.Warnings, c.warning)
			}
			if got := threadCPUs(t); !slices.Equal(got, cpus) {
				t.Errorf("after the run the process is on CPUs %v, before on %v", got, cpus)
			}
			if got := runtime.GOMAXPROCS(0); got != procs {
				t.Errorf("after the run GOMAXPROCS is %d, before %d", got, procs)
			}
		})
	}
}

// A generator.cpus that names a CPU tandem may not run on is refused
// before anything starts, located in the study file.
func TestGeneratorCPUsNotHere(t *testing.T) {
	cpus := threadCPUs(t)
	missing := cpus[len(cpus)-1] + 1
	o := options(t, nil)
	o.Out = filepath.Join(o.Out, "out")
	o.Pin = true
	res, err := Run(context.Background(), runtest.Parse(t, pinStudy(`generator: {cpus: "`+strconv.Itoa(missing)+`"}`)), o)
	var list study.ErrorList
	want := "test.yaml:3:19: generator.cpus: CPU " + strconv.Itoa(missing) + " is not available here (a CPU list within " + study.FormatCPUList(cpus)
	if res != nil || !errors.As(err, &list) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Run = %v, %v; want no results and %q…", res, err, want)
	}
	if _, err := os.Stat(o.Out); !os.IsNotExist(err) {
		t.Errorf("the output directory was created (%v): the run should not have begun", err)
	}
}
