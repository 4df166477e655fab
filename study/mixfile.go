package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// MixFile is a mix as tandem load --mix reads it: calls in a study's form,
// and the weights of those the mix sends, all to the one target of the
// command line.
type MixFile struct {
	Calls map[string]*Call `yaml:"calls,required" doc:"The mix's calls by name, each as a study's call: http, jsonrpc or grpc, with its values."`
	Mix   []MixCall        `yaml:"mix,required" doc:"The calls the mix sends and their weights, as a scenario's calls: are."`
	// Seed is the seed the file was read with: its values' and the mix's.
	Seed uint64 `yaml:"-"`
}

// ReadMix reads a mix file for tandem load --mix: a YAML mapping with
// calls (a study's calls: map) and mix (a scenario's calls: list of
// {call, weight}). The calls are checked as a study's are, and the mix as
// a scenario's (at least two calls, each once, of one protocol and HTTP
// version); a call may use its values but no case variable and no
// ${env.NAME}. Feeders and proto files are relative to the file's
// directory; every feeder is read and checked. Every error is at its
// file:line:col (an ErrorList). Weights left out are 1.
func ReadMix(path string, seed uint64) (*MixFile, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	var mf MixFile
	yf := parseYAML(path, data, &mf)
	if !yf.decoded || len(yf.errs) > 0 {
		return nil, capErrors(yf.errs)
	}
	s := &Study{Calls: mf.Calls, Seed: seed}
	v := &validator{s: s, file: path, pos: yf.pos, strs: yf.strs, bad: map[string]bool{}, lim: machineLimits()}
	for _, name := range slices.Sorted(maps.Keys(mf.Calls)) {
		c := mf.Calls[name]
		v.call(name, c)
		if c == nil {
			continue
		}
		if vars := v.caseVarsOf(name, c); len(vars) > 0 {
			v.errorf("calls."+name, "a request of the call's values only: tandem load has no cases to give ${"+vars[0]+"}",
				"call %s uses case variable%s ${%s}", name, plural(len(vars)), strings.Join(vars, "}, ${"))
		}
	}
	v.mixCalls("mix", mf.Mix)
	v.envElsewhere(yf.strs, nil) // nothing in a mix file is resolved from the environment
	if len(v.errs) > 0 {
		return nil, capErrors(v.errs)
	}
	if errs := compileProtos(s, path, yf.pos); len(errs) > 0 {
		return nil, capErrors(errs)
	}
	if errs := openValues(s, path, yf.pos); len(errs) > 0 {
		return nil, capErrors(errs)
	}
	for k := range mf.Mix {
		if mf.Mix[k].Weight == 0 {
			mf.Mix[k].Weight = 1
		}
	}
	mf.Seed = seed
	return &mf, nil
}

// plural is "s" for n other than 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// OnceRows is the most requests a run of the mix may send, the fewest
// rows of any of its calls' feeders read once; ok is false when none
// limits it.
func (mf *MixFile) OnceRows() (n uint64, ok bool) {
	for _, mc := range mf.Mix {
		if r, limited := mf.Calls[mc.Call].OnceRows(); limited && (!ok || r < n) {
			n, ok = r, true
		}
	}
	return n, ok
}

// String names the mix's calls and shares, e.g. "get 90 %, put 10 %".
func (mf *MixFile) String() string {
	total := 0.0
	for _, mc := range mf.Mix {
		total += mc.Weight
	}
	parts := make([]string, len(mf.Mix))
	for k, mc := range mf.Mix {
		parts[k] = fmt.Sprintf("%s %.4g %%", mc.Call, 100*mc.Weight/total)
	}
	return strings.Join(parts, ", ")
}
