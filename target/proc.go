package target

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SamplesUsage says whether tandem can sample a target's CPU time and
// memory here: it reads them from /proc, which only Linux has.
const SamplesUsage = runtime.GOOS == "linux"

// clockTick is the kernel's USER_HZ, the unit of CPU times in /proc; 100 on
// every Linux architecture Go supports.
const clockTick = 100

// sampler reads a process tree's CPU time and resident memory from /proc
// every 50 ms until the root exits.
type sampler struct {
	mu      sync.Mutex
	cpu     time.Duration
	peakRSS int64
	stop    chan struct{}
	once    sync.Once
}

func startSampler(root int, done <-chan struct{}) *sampler {
	s := &sampler{stop: make(chan struct{})}
	s.sample(root)
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-s.stop:
				return
			case <-t.C:
				s.sample(root)
			}
		}
	}()
	return s
}

// halt ends the sampling; later usage reads take one sample on demand.
func (s *sampler) halt() { s.once.Do(func() { close(s.stop) }) }

func (s *sampler) usage() (time.Duration, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cpu, s.peakRSS
}

func (s *sampler) sample(root int) {
	cpu, rss, ok := treeUsage(root)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cpu > s.cpu {
		s.cpu = cpu
	}
	if rss > s.peakRSS {
		s.peakRSS = rss
	}
}

// procStat is what tandem reads of /proc/PID/stat.
type procStat struct {
	ppid, pgrp int
	own        int64 // utime + stime
	children   int64 // cutime + cstime: of the children it waited for
}

func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 15 {
		return procStat{}, false
	}
	num := func(k int) int64 {
		v, _ := strconv.ParseInt(f[k], 10, 64)
		return v
	}
	// fields from state: state ppid pgrp … utime(11) stime cutime cstime
	return procStat{ppid: int(num(1)), pgrp: int(num(2)), own: num(11) + num(12), children: num(13) + num(14)}, true
}

// peakRSS reads VmHWM, the process's peak resident set, in bytes.
func peakRSS(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// treeUsage sums CPU time and peak RSS over the descendants of root, the
// target's supervisor, with the CPU time of those it has reaped; the
// supervisor's own are not the target's.
func treeUsage(root int) (time.Duration, int64, bool) {
	rootStat, ok := readStat(root)
	if !ok {
		return 0, 0, false
	}
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		if st, ok := readStat(pid); ok {
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	ticks, rss := rootStat.children, int64(0)
	queue := children[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if st, ok := readStat(pid); ok {
			ticks += st.own + st.children
			rss += peakRSS(pid)
		}
		queue = append(queue, children[pid]...)
	}
	return time.Duration(ticks) * time.Second / clockTick, rss, true
}
