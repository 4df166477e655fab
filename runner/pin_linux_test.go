package runner

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// threadCPUs is the CPU set of the calling thread.
func threadCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// A pinned run records the generator's cores and gives the process its
// cores and GOMAXPROCS back when it ends: a library caller is not left on
// half the machine.
func TestPinnedAndGivenBack(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one core: nothing to pin apart")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpus, procs := threadCPUs(t), runtime.GOMAXPROCS(0)
	src := `version: 1
name: pinned
defaults: {rounds: 1, warmup: 50ms}
targets:
  - name: a
    start:
      command: ["${tandem}", --addr, "127.0.0.1:${port.http}"]
      env: {TANDEM_TEST_DELAY: "1"}
    endpoints: {http: "http://127.0.0.1:${port.http}/ping"}
    ready: {log: "listening on", timeout: 20s}
calls:
  ping: {http: {path: ""}}
scenarios:
  - {name: latency, call: ping, load: {concurrency: 1}, requests: 20}
`
	o := options(t, nil)
	o.Pin = true
	res, err := Run(context.Background(), parse(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Machine.GeneratorCPUs) == 0 || len(res.Machine.GeneratorCPUs) >= runtime.NumCPU() {
		t.Errorf("generator CPUs %v of %d: want some, not all", res.Machine.GeneratorCPUs, runtime.NumCPU())
	}
	if got := threadCPUs(t); !slices.Equal(got, cpus) {
		t.Errorf("after the run the process is on CPUs %v, before on %v", got, cpus)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("after the run GOMAXPROCS is %d, before %d", got, procs)
	}
}
