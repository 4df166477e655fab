package study

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// cpuListExpected is what a CPU list's errors say was expected.
const cpuListExpected = "a CPU list such as 0, 0-1 or 0,2-3"

// ParseCPUList parses a Linux CPU list such as "0", "1,3" or "0-2,5". The
// empty string is the empty list.
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 4096 {
				return nil, fmt.Errorf("bad CPU range %q", part)
			}
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	return cpus, nil
}

// FormatCPUList writes cpus as a Linux CPU list, in order, runs as ranges:
// [0 1 2 3 6] is "0-3,6".
func FormatCPUList(cpus []int) string {
	sorted := slices.Compact(slices.Sorted(slices.Values(cpus)))
	var parts []string
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j]+1 {
			j++
		}
		part := strconv.Itoa(sorted[i])
		if j > i {
			part += "-" + strconv.Itoa(sorted[j])
		}
		parts = append(parts, part)
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// generator checks generator.cpus.
func (v *validator) generator() {
	if _, err := ParseCPUList(v.s.Generator.CPUs); err != nil {
		v.errorf("generator.cpus", cpuListExpected, "%v", err)
	}
}

// GeneratorCPUs is generator.cpus as a list (nil where the study gives
// none), held against allowed, the CPUs of this machine that tandem may
// run on (nil: not checked). A CPU that allowed lacks is an error: an
// ErrorList located at generator.cpus, like validation's.
func (s *Study) GeneratorCPUs(allowed []int) ([]int, error) {
	cpus, err := ParseCPUList(s.Generator.CPUs)
	if err != nil { // validation refuses it; a study built in code may not have been validated
		return nil, s.errorAt("generator.cpus", cpuListExpected, err.Error())
	}
	if allowed == nil {
		return cpus, nil
	}
	var missing []int
	for _, c := range cpus {
		if !slices.Contains(allowed, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return cpus, nil
	}
	msg := fmt.Sprintf("CPU %d is not available here", missing[0])
	if len(missing) > 1 {
		msg = fmt.Sprintf("CPUs %s are not available here", FormatCPUList(missing))
	}
	return nil, s.errorAt("generator.cpus", "a CPU list within "+FormatCPUList(allowed)+", the CPUs tandem may run on here", msg)
}

// errorAt is a one-error ErrorList located where the value at path was
// read.
func (s *Study) errorAt(path, expected, msg string) error {
	pos, at := s.locate(path)
	return ErrorList{{File: s.File, Pos: pos, Path: at, Msg: msg, Expected: expected}}
}
