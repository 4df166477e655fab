package runner

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/results"
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

// selfCPU is the CPU time tandem's own process has used, in nanoseconds
// (0 where the OS does not say).
func selfCPU() int64 {
	d, _ := host.CPUTime()
	return int64(d)
}

// splitCPUs gives the generator the first half of the machine's cores and
// the targets the rest; with one core they share it.
func splitCPUs(n int) (generator, targets []int, shared bool) {
	if n < 2 {
		return []int{0}, []int{0}, true
	}
	for c := 0; c < n; c++ {
		if c < n/2 {
			generator = append(generator, c)
		} else {
			targets = append(targets, c)
		}
	}
	return generator, targets, false
}
