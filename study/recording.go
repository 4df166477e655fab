package study

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/tandem-bench/tandem/record"
)

// Recording is a recording (tandem record, or a HAR file imported) whose
// exchanges are compat cases: each request sent to every target under
// test. In a study it is a file name, or a mapping with the file and its
// settings.
type Recording struct {
	File     string   `yaml:"file,required" doc:"A recording (JSONL, written by tandem record), relative to the study file; each exchange is a compat case."`
	Endpoint string   `yaml:"endpoint" doc:"The targets' endpoint every exchange goes to; default by protocol: grpc for gRPC, jsonrpc or http for JSON-RPC, http for HTTP (or a target's only endpoint)."`
	Mode     string   `yaml:"mode" doc:"equal (default): answers must agree; report: shown, not held to equality."`
	Ignore   []string `yaml:"ignore" doc:"Field paths left out of the comparison, as a case's ignore."`

	// Path is File resolved against the study file, and Exchanges how
	// many exchanges it holds; both are set when the study is read.
	Path      string `yaml:"-"`
	Exchanges int    `yaml:"-"`
}

// recordingType is decoded from a file name alone too (decode.go).
var recordingType = reflect.TypeFor[Recording]()

// RecordingEndpoint is the name of the endpoint of target t that an
// exchange of the protocol p goes to: the recording's endpoint, else the
// endpoint a call of that protocol would use.
func RecordingEndpoint(t *Target, rec *Recording, p record.Protocol) (string, error) {
	call := &Call{Endpoint: rec.Endpoint}
	switch p {
	case record.GRPC:
		call.GRPC = &GRPCCall{}
	case record.JSONRPC:
		call.JSONRPC = &JSONRPCCall{}
	default:
		call.HTTP = &HTTPCall{}
	}
	return call.EndpointName(t)
}

// recording checks the settings of compat.recordings[i].
func (v *validator) recording(path string, rec *Recording) {
	if _, set := v.pos[path+".file"]; set && strings.TrimSpace(rec.File) == "" { // a missing key is the decoder's error
		v.errorf(path+".file", "a recording's file, relative to the study file", "no file")
	}
	if rec.Mode != "" && rec.Mode != ModeEqual && rec.Mode != ModeReport {
		v.errorf(path+".mode", "equal or report", "unknown mode %q", rec.Mode)
	}
	for i, p := range rec.Ignore {
		if err := checkFieldPath(p); err != nil {
			v.errorf(fmt.Sprintf("%s.ignore[%d]", path, i), "a field path such as txs[*].time", "%v", err)
		}
	}
	if rec.Endpoint == "" {
		return
	}
	for _, name := range v.compatTargets() {
		if t := v.s.Target(name); t != nil {
			if _, ok := t.Endpoints[rec.Endpoint]; !ok {
				v.errorf(path+".endpoint", "an endpoint every target under test has", "target %s has no endpoint %q", name, rec.Endpoint)
			}
		}
	}
}

// compatTargets are the targets compat asks: the reference and those
// under test.
func (v *validator) compatTargets() []string {
	c := v.s.Compat
	ref := c.Reference
	if ref == "" {
		ref = v.s.Baseline
		if ref == "" && len(v.s.Targets) > 0 {
			ref = v.s.Targets[0].Name
		}
	}
	names := slices.Clone(c.Under(v.s))
	if !slices.Contains(names, ref) {
		names = append([]string{ref}, names...)
	}
	return names
}

// readRecordings reads every recording of compat.recordings through: a
// file that cannot be read is an error at its entry in the study, a bad
// line an error at the recording's file:line:col. It sets each entry's
// Path and Exchanges.
func readRecordings(s *Study, studyFile string, pos map[string]Pos) ErrorList {
	v := &validator{s: s, file: studyFile, pos: pos, bad: map[string]bool{}}
	for i := range s.Compat.Recordings {
		rec := &s.Compat.Recordings[i]
		path := fmt.Sprintf("compat.recordings[%d]", i)
		rec.Path = rec.File
		if !filepath.IsAbs(rec.Path) {
			rec.Path = filepath.Join(filepath.Dir(studyFile), rec.Path)
		}
		protocols, n, err := scanRecording(rec.Path)
		var le *record.LineError
		switch {
		case errors.As(err, &le):
			v.errs = append(v.errs, &Error{File: le.File, Pos: Pos{le.Line, le.Col}, Msg: le.Err.Error(),
				Expected: "a recording line (docs/recording.md)"})
			continue
		case err != nil:
			v.errorf(path, "a recording written by tandem record (docs/recording.md)", "%v", err)
			continue
		case n > MaxCases:
			v.errorf(path, fmt.Sprintf("at most %d exchanges per recording", MaxCases), "%d exchanges", n)
			continue
		}
		rec.Exchanges = n
		for _, name := range v.compatTargets() {
			t := s.Target(name)
			for _, p := range protocols {
				if _, err := RecordingEndpoint(t, rec, p); err != nil {
					v.errorf(path, "an endpoint for every protocol of the recording (set endpoint)", "its %s exchanges: %v", p, err)
				}
			}
		}
	}
	return v.errs
}

// scanRecording reads a recording through and returns the protocols of
// its exchanges (in the order first met) and how many there are.
func scanRecording(path string) ([]record.Protocol, int, error) {
	r, err := record.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	var protocols []record.Protocol
	n := 0
	for r.Scan() {
		n++
		if p := r.Exchange().Protocol; !slices.Contains(protocols, p) {
			protocols = append(protocols, p)
		}
	}
	return protocols, n, r.Err()
}
