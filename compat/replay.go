package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/study"
)

// Replayer sends a recorded exchange's request to one endpoint
// (driver.Querier is the real one).
type Replayer interface {
	Replay(ctx context.Context, ex *record.Exchange, endpoint string) (driver.Reply, error)
}

// recordings runs the exchanges of every recording of the compat
// section as cases, one after another in the order recorded (a request
// may read what an earlier one wrote); done hears of each.
func (r *runner) recordings(ctx context.Context, done func()) ([]results.Case, error) {
	rp, ok := r.o.Query.(Replayer)
	if !ok {
		return nil, fmt.Errorf("compat: %T cannot replay recordings", r.o.Query)
	}
	var cases []results.Case
	for i := range r.s.Compat.Recordings {
		rec := &r.s.Compat.Recordings[i]
		got, err := r.recording(ctx, rp, rec, done)
		cases = append(cases, got...)
		if err != nil {
			return cases, fmt.Errorf("compat.recordings[%d]: %w", i, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return cases, nil
}

// recording runs one recording's exchanges.
func (r *runner) recording(ctx context.Context, rp Replayer, rec *study.Recording, done func()) ([]results.Case, error) {
	path := rec.Path
	if path == "" {
		path = rec.File
		if !filepath.IsAbs(path) && r.s.File != "" {
			path = filepath.Join(filepath.Dir(r.s.File), path)
		}
	}
	rd, err := record.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var cases []results.Case
	for i := 0; rd.Scan(); i++ {
		ex := rd.Exchange()
		cs := r.replayed(ctx, rp, rec, i, &ex)
		if ctx.Err() != nil {
			return cases, nil // answers cut by the cancellation are not answers
		}
		cases = append(cases, cs)
		done()
	}
	return cases, rd.Err()
}

// replayed is the case of the i-th exchange of a recording.
func (r *runner) replayed(ctx context.Context, rp Replayer, rec *study.Recording, i int, ex *record.Exchange) results.Case {
	mode := rec.Mode
	if mode == "" {
		mode = study.ModeEqual
	}
	path, _, _ := strings.Cut(ex.Path, "?")
	out := results.Case{Call: Label(ex), Vars: map[string]any{}, Mode: mode, Answers: []results.Answer{}, Differences: []results.Difference{},
		Recording: &results.RecordedCase{File: rec.File, Exchange: i, Protocol: string(ex.Protocol), Method: ex.Method, Path: path},
		Order:     string(study.OrderListed)}
	r.judge(ctx, &out, func(ctx context.Context, target string) (answer, error) {
		a := answer{Answer: results.Answer{Target: target}}
		ep, err := r.recordedEndpoint(target, rec, ex.Protocol)
		if err != nil {
			a.Status, a.Error = "unreachable", err.Error()
			return a, nil
		}
		rep, err := rp.Replay(ctx, ex, ep)
		if err != nil {
			return a, err
		}
		return answerOf(a, rep), nil
	}, rec.Ignore)
	return out
}

// recordedEndpoint is the address of target's endpoint for an exchange of
// protocol p of rec.
func (r *runner) recordedEndpoint(target string, rec *study.Recording, p record.Protocol) (string, error) {
	t := r.s.Target(target)
	if t == nil {
		return "", fmt.Errorf("no target %q", target)
	}
	name, err := study.RecordingEndpoint(t, rec, p)
	if err != nil {
		return "", err
	}
	ep, ok := r.o.Endpoints[target][name]
	if !ok {
		return "", fmt.Errorf("target %s is not running", target)
	}
	return ep, nil
}

// Label names a recorded exchange's request in the results, as a call
// name does a listed case's: grpc METHOD, jsonrpc METHOD or http VERB PATH
// (the query left out).
func Label(ex *record.Exchange) string {
	switch ex.Protocol {
	case record.GRPC:
		return "grpc " + strings.TrimPrefix(ex.Path, "/")
	case record.JSONRPC:
		var req struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(ex.Body, &req) == nil && req.Method != "" {
			return "jsonrpc " + req.Method
		}
	}
	path, _, _ := strings.Cut(ex.Path, "?")
	return "http " + ex.Method + " " + path
}
