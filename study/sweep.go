package study

import (
	"fmt"
	"time"
)

// Sweep defaults and names.
const (
	SweepBatched       = "batched"
	SweepOpen          = "open"
	ConfirmAnswer      = "answer"
	ConfirmCometBFT    = "cometbft"
	DefaultDrain       = 60 * time.Second
	DefaultPrecision   = 0.1
	DefaultTxSize      = 1024
	DefaultBroadcast   = "broadcast_tx_sync"
	DefaultRPCEndpoint = "rpc"
	// DefaultShortfall is the fraction of expected a sweep's cell may miss
	// and still keep up: it is saturated below 95 % of expected.
	DefaultShortfall = 0.05
)

// SaturatedBelow is the fraction of expected under which a cell is
// saturated: 1 − shortfall (0.95 by default).
func (s *Sweep) SaturatedBelow() float64 {
	if s.Shortfall == nil {
		return 1 - DefaultShortfall
	}
	return 1 - *s.Shortfall
}

func (s *Sweep) setDefaults() {
	if s.Load == "" {
		s.Load = SweepBatched
	}
	if s.Confirm == "" {
		s.Confirm = ConfirmAnswer
	}
	if s.Endpoint == "" && s.Confirm == ConfirmCometBFT {
		s.Endpoint = DefaultRPCEndpoint
	}
	if s.Drain == 0 {
		s.Drain = DefaultDrain
	}
	if s.Shortfall == nil {
		f := DefaultShortfall
		s.Shortfall = &f
	}
	if se := s.Search; se != nil {
		if se.Precision == 0 {
			se.Precision = DefaultPrecision
		}
		if se.Repeats == 0 {
			se.Repeats = 1
		}
	}
}

func (v *validator) sweep(path string, sc *Scenario) {
	sw := sc.Sweep
	l := sc.Load
	if len(l.Concurrency) > 0 || l.Rate > 0 || l.Ramp != nil || len(l.Steps) > 0 || l.Batch != nil || l.Connections > 0 {
		v.errorf(path+".load", "no load with a sweep: its cells set connections and rate", "both load and sweep given")
	}
	p := path + ".sweep"
	for i, c := range sw.Connections {
		if c <= 0 {
			v.errorf(fmt.Sprintf("%s.connections[%d]", p, i), "a positive integer", "connections %d", c)
		}
	}
	switch {
	case sw.Search == nil && len(sw.Rate) == 0:
		v.errorf(p+".rate", "a list of rates, or search", "no rates and no search")
	case sw.Search != nil && len(sw.Rate) > 0:
		v.errorf(p+".search", "either rate or search", "both a rate list and a search")
	}
	for i, r := range sw.Rate {
		if r <= 0 {
			v.errorf(fmt.Sprintf("%s.rate[%d]", p, i), "a positive rate", "rate %v", r)
		}
	}
	if se := sw.Search; se != nil {
		if se.From <= 0 || se.To <= se.From {
			v.errorf(p+".search", "0 < from < to", "search from %v to %v", se.From, se.To)
		}
		if se.Precision < 0 || se.Repeats < 0 {
			v.errorf(p+".search", "a positive precision and repeats", "precision %v, repeats %d", se.Precision, se.Repeats)
		}
	}
	if sw.Search != nil && sc.Rounds > 1 {
		v.errorf(path+".rounds", "rounds on a grid of rates; a search repeats each probe with search.repeats", "rounds %d on a search", sc.Rounds)
	}
	if sw.Duration < 2*time.Second {
		v.errorf(p+".duration", "at least 2s (a cell sends for T − 1 s and leaves the last second for the answers)", "duration %s", sw.Duration)
	}
	if sw.Load != "" && sw.Load != SweepBatched && sw.Load != SweepOpen {
		v.errorf(p+".load", "batched or open", "unknown load %q", sw.Load)
	}
	if sw.Confirm != "" && sw.Confirm != ConfirmAnswer && sw.Confirm != ConfirmCometBFT {
		v.errorf(p+".confirm", "answer or cometbft", "unknown confirmer %q", sw.Confirm)
	}
	if sw.Confirm == ConfirmCometBFT {
		if c := v.s.Calls[sc.Call]; c != nil && c.CometBFT == nil {
			v.errorf(p+".confirm", "a cometbft call (its transactions carry the payload the confirmer reads)", "call %s is not a cometbft call", sc.Call)
		}
		ep := sw.Endpoint
		if ep == "" {
			ep = DefaultRPCEndpoint
		}
		targets := sc.Targets
		if len(targets) == 0 {
			targets = v.targetNames()
		}
		for _, name := range targets {
			if t := v.s.Target(name); t != nil {
				if _, ok := t.Endpoints[ep]; !ok {
					v.errorf(p+".endpoint", "the name of the node's RPC endpoint (http://…)", "target %s has no endpoint %q", name, ep)
				}
			}
		}
	}
	if q := sw.Quick; q != nil && q.Duration != 0 && q.Duration < 2*time.Second {
		v.errorf(p+".quick.duration", "at least 2s", "duration %s", q.Duration)
	}
	if f := sw.Shortfall; f != nil && (*f < 0 || *f >= 1) {
		v.errorf(p+".shortfall", "a fraction from 0 (any shortfall saturates) to below 1; default 0.05", "shortfall %v", *f)
	}
}

func (v *validator) cometbftCall(path string, c *CometBFTCall) {
	switch c.Method {
	case "", "broadcast_tx_sync", "broadcast_tx_async", "broadcast_tx_commit":
	default:
		v.errorf(path+".method", "broadcast_tx_sync, broadcast_tx_async or broadcast_tx_commit", "unknown method %q", c.Method)
	}
	if c.Size != 0 && (c.Size < MinTxSize || c.Size > MaxTxSize) {
		v.errorf(path+".size", fmt.Sprintf("a size from %d to %d bytes (the payload's fields need %d)", MinTxSize, MaxTxSize, MinTxSize), "size %d", c.Size)
	}
}

// Transaction sizes a cometbft call can make: the loadtime payload's
// fields, hex-encoded behind its key, take up to MinTxSize bytes.
const (
	MinTxSize = 128
	MaxTxSize = 4 << 20
)

// Quick shortens the study for a run that must end soon (--quick): one
// start per target, short warm-ups and runs, adaptive rounds within 15 s
// a level, at most two concurrency levels, and each sweep's quick grid.
func (s *Study) Quick() {
	if s.Startup != nil {
		s.Startup.Runs = 1
	}
	s.Defaults.Warmup = min(s.Defaults.Warmup, 200*time.Millisecond)
	s.Defaults.MinDuration = min(s.Defaults.MinDuration, 200*time.Millisecond)
	s.Defaults.MaxTime = min(s.Defaults.MaxTime, 15*time.Second)
	s.Defaults.MaxRounds = min(s.Defaults.MaxRounds, 40) // fewer looks: the first one sooner
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		if sc.Adaptive {
			sc.Rounds = min(sc.Rounds, s.Defaults.MaxRounds) // the defaults already set its rounds to the old cap
		}
		if len(sc.Load.Concurrency) > 2 {
			sc.Load.Concurrency = sc.Load.Concurrency[:2]
		}
		if sc.Replay != nil && sc.Duration == 0 && sc.Requests == 0 {
			sc.Duration = time.Second // a second of the recording, not all of it
		}
		if sc.Duration > time.Second && len(sc.Perturbations) == 0 { // perturbations are timed within the round
			sc.Duration = time.Second
			if b := sc.Load.Batch; b != nil {
				sc.Duration = max(sc.Duration, b.Period) // one batch at least
			}
		}
		sw := sc.Sweep
		if sw == nil {
			continue
		}
		if q := sw.Quick; q != nil {
			if len(q.Connections) > 0 {
				sw.Connections = q.Connections
			}
			if len(q.Rate) > 0 {
				sw.Rate = q.Rate
			}
			if q.Duration > 0 {
				sw.Duration = q.Duration
			}
			continue
		}
		sw.Connections = sw.Connections[len(sw.Connections)-1:]
		sw.Duration = min(sw.Duration, 2*time.Second)
	}
}
