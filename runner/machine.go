package runner

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Machine describes this machine for the results' machine block.
func Machine() results.Machine {
	m := results.Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPUModel: cpuModel()}
	m.Kernel = host.Kernel()
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Tool describes the running tandem binary.
func Tool(version string) results.Tool {
	t := results.Tool{Name: "tandem", Version: version, Settings: map[string]string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision", "vcs.modified", "vcs.time", "-race", "-tags", "CGO_ENABLED", "GOAMD64", "-gcflags", "-ldflags":
				t.Settings[s.Key] = s.Value
			}
		}
	}
	return t
}

// allowedCPUs is the CPUs tandem may run on: its affinity mask, or where
// that is unknown the first runtime.NumCPU.
func allowedCPUs() []int {
	if cpus, err := host.AllowedCPUs(); err == nil && len(cpus) > 0 {
		return cpus
	}
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// splitCPUs divides allowed, the CPUs tandem may run on, between the
// generator and the targets: the generator gets given (the study's
// generator.cpus, all of them in allowed) or else the first half of
// allowed, and the targets the rest. A warning, if any, says why the two
// share CPUs: with one CPU neither is pinned (generator nil); when given
// leaves the targets none, they are not pinned (targets nil).
func splitCPUs(allowed, given []int) (generator, targets []int, warning string) {
	if len(given) == 0 {
		if len(allowed) < 2 {
			return nil, nil, "one CPU core: the generator and the targets share it, so their timings interfere"
		}
		half := len(allowed) / 2
		return allowed[:half:half], allowed[half:], ""
	}
	targets = slices.DeleteFunc(slices.Clone(allowed), func(c int) bool { return slices.Contains(given, c) })
	if len(targets) == 0 {
		return given, nil, fmt.Sprintf("generator.cpus %s takes every CPU tandem may run on: the targets share them, so their timings interfere",
			study.FormatCPUList(given))
	}
	return given, targets, ""
}
