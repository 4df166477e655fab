package stats

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// rounds makes n healthy closed-loop rounds of 1,000 requests each at the
// given headlines.
func rounds(headlines ...float64) []Round {
	rs := make([]Round, len(headlines))
	for i, h := range headlines {
		rs[i] = Round{Headline: h, Requests: 1000, OK: 1000, GeneratorUse: 0.3}
	}
	return rs
}

// with applies f to every round.
func with(rs []Round, f func(*Round)) []Round {
	for i := range rs {
		f(&rs[i])
	}
	return rs
}

var latency = Metric{Format: func(v float64) string { return time.Duration(v).String() }}

// TestJudgeSpread holds the health gate and the spread rule (the layered
// broker study's, defaults.rule: spread) to their worked examples.
func TestJudgeSpread(t *testing.T) {
	p := DefaultPolicy()
	p.Rule = RuleSpread
	failFast := func(r *Round) { r.OK, r.Errors = 10, map[string]int64{"http:503": 990} }
	cases := []struct {
		name       string
		base, cand []Round
		higher     bool
		floor      float64
		want       Verdict
		reason     string
	}{
		{"identical builds, three noisy rounds", rounds(100e3, 104e3, 98e3), rounds(101e3, 97e3, 103e3), false, 0.02, Indistinguishable, "within the run-to-run spread 6µs"},
		{"below the noise floor", rounds(100e3, 100e3, 100e3), rounds(101e3, 101e3, 101e3), false, 0.02, Indistinguishable, "1.0 %, within the 2.0 % noise floor"},
		{"at the noise floor exactly", rounds(100e3, 100e3), rounds(110e3, 110e3), false, 0.10, Indistinguishable, "noise floor"},
		{"beyond the noise floor", rounds(100e3, 100e3), rounds(111e3, 111e3), false, 0.10, Slower, "11µs (11.0 %)"},
		{"4x slower latency", rounds(100e3, 102e3, 101e3), rounds(400e3, 410e3, 405e3), false, 0.02, Slower, "beyond the run-to-run spread 10µs"},
		{"4x faster latency", rounds(400e3, 410e3, 405e3), rounds(100e3, 102e3, 101e3), false, 0.02, Faster, ""},
		{"4x more throughput", rounds(100, 98, 99), rounds(400, 390, 395), true, 0.02, Faster, ""},
		{"4x less throughput", rounds(400, 390, 395), rounds(100, 98, 99), true, 0.02, Slower, ""},
		// 1. a target that fails fast is failing, not faster
		{"fast failures", rounds(1e6, 1e6, 1e6), with(rounds(22e3, 22e3, 22e3), failFast), false, 0.02, Failing,
			"failing: 99.0 % of requests failed (http:503 ×2,970); a: 0.0 %"},
		{"one error where the base has none", rounds(100e3, 100e3), with(rounds(100e3, 100e3), func(r *Round) { r.OK, r.Errors = 999, map[string]int64{"timeout": 1} }), false, 0.02, Failing, "0.1 % of requests failed (timeout ×2)"},
		{"errors within a point of the base's", with(rounds(100e3, 100e3), func(r *Round) { r.OK, r.Errors = 990, map[string]int64{"timeout": 10} }),
			with(rounds(100e3, 100e3), func(r *Round) { r.OK, r.Errors = 985, map[string]int64{"timeout": 15} }), false, 0.02, Indistinguishable, ""},
		{"the baseline fails more", with(rounds(100e3, 100e3), failFast), rounds(100e3, 100e3), false, 0.02, Withheld, "the baseline a failed 99.0 %"},
		{"a stray error in the baseline", with(rounds(100e3, 100e3), func(r *Round) { r.OK, r.Errors = 999, map[string]int64{"timeout": 1} }),
			rounds(400e3, 400e3), false, 0.02, Slower, ""},
		// 2. drops and a short achieved rate withhold
		{"dropped arrivals", rounds(1e6, 1e6), with(rounds(3e5, 3e5), func(r *Round) { r.Requests, r.OK, r.Dropped = 485, 485, 515 }), false, 0.02, Withheld,
			"could not keep up: b dropped 1,030 of 2,000 arrivals"},
		{"achieved short of offered", with(rounds(1e6, 1e6), func(r *Round) { r.Offered, r.Achieved = 4000, 3592.7 }), rounds(1e6, 1e6), false, 0.02, Withheld,
			"could not keep up: a achieved 3,593/s of 4,000/s offered (10.2 % short)"},
		{"achieved within 1 % of offered", with(rounds(1e6, 1e6), func(r *Round) { r.Offered, r.Achieved = 4000, 3990 }), rounds(4e6, 4e6), false, 0.02, Slower, ""},
		// 3. failed rounds are not rounds
		{"a throughput round with no success", rounds(100, 101, 99), append(rounds(100, 100), Round{Failed: true, Error: "no successful request"}), true, 0.02, Indistinguishable, "(1 failed rounds left out)"},
		{"no successful round", rounds(100, 101, 99), []Round{{Failed: true, Error: "target exited"}, {Failed: true}}, true, 0.02, Failing, "no successful round of 2 (target exited)"},
		{"base without a successful round", []Round{{Failed: true, Error: "refused"}}, rounds(100, 100), true, 0.02, Withheld, "the baseline a has no successful round (refused)"},
		// 13. one round is no verdict
		{"one round each", rounds(100e3), rounds(400e3), false, 0.02, Withheld, "one round: no spread to judge by"},
		// client-bound
		{"busy generator", rounds(100e3, 100e3), with(rounds(400e3, 400e3), func(r *Round) { r.GeneratorUse = 0.97 }), false, 0.02, Withheld, "client-bound: the generator used 97.0 %"},
		{"no rounds", rounds(1), nil, false, 0.02, Withheld, "b has no rounds"},
	}
	for _, c := range cases {
		m := latency
		if c.higher {
			m = Metric{HigherBetter: true}
		}
		j := p.Judge(NewSide("a", c.base, c.higher), NewSide("b", c.cand, c.higher), m, c.floor, Design{Paired: true})
		if j.Verdict != c.want || !strings.Contains(j.Reason, c.reason) {
			t.Errorf("%s: Judge = %s (%s); want %s (%s)", c.name, j.Verdict, j.Reason, c.want, c.reason)
		}
		if j.Verdict.Speed() == math.IsNaN(j.Ratio) {
			t.Errorf("%s: verdict %s with ratio %v", c.name, j.Verdict, j.Ratio)
		}
		if j.ClientBound != strings.HasPrefix(j.Reason, "client-bound") {
			t.Errorf("%s: client-bound %v, reason %q", c.name, j.ClientBound, j.Reason)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := DefaultPolicy().Validate(); err != nil {
		t.Errorf("default policy: %v", err)
	}
	for _, f := range []func(*Policy){
		func(p *Policy) { p.NoiseFloor = math.NaN() },
		func(p *Policy) { p.MaxErrorShareDiff = -0.1 },
		func(p *Policy) { p.MaxShortfall = 1 },
		func(p *Policy) { p.ClientBoundUse = 0 },
		func(p *Policy) { p.MinRounds = 1 },
	} {
		p := DefaultPolicy()
		f(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil; want an error", p)
		}
	}
}

func TestSideErrorKinds(t *testing.T) {
	s := NewSide("a", []Round{{Requests: 10, OK: 5, Errors: map[string]int64{"timeout": 1, "http:503": 3, "eof": 1}, Headline: 1}}, false)
	if got, want := s.ErrorKinds(), "http:503 ×3, eof ×1, timeout ×1"; got != want {
		t.Errorf("ErrorKinds() = %q; want %q", got, want)
	}
	if got := s.ErrorShare(); got != 0.5 {
		t.Errorf("ErrorShare() = %v; want 0.5", got)
	}
}

func ExamplePolicy_Judge_spread() {
	p := DefaultPolicy()
	p.Rule = RuleSpread
	ms := Metric{Format: func(v float64) string { return fmt.Sprintf("%.2fms", v) }}
	ok := func(vs ...float64) []Round {
		var rs []Round
		for _, v := range vs {
			rs = append(rs, Round{Headline: v, Requests: 1000, OK: 1000})
		}
		return rs
	}
	base := NewSide("a", ok(1.00, 1.02, 1.05), false) // ms, three rounds
	same := NewSide("b", ok(1.01, 1.03, 0.99), false)
	slow := NewSide("c", ok(4.10, 4.00, 4.20), false)
	failing := NewSide("d", []Round{{Headline: 0.02, Requests: 1000, OK: 10, Errors: map[string]int64{"http:503": 990}}}, false)
	d := Design{Paired: true}
	fmt.Println(p.Judge(base, same, ms, p.NoiseFloor, d).Verdict)
	j := p.Judge(base, slow, ms, p.NoiseFloor, d)
	fmt.Printf("%s %.1f\n", j.Verdict, j.Ratio)
	fmt.Println(p.Judge(base, failing, ms, p.NoiseFloor, d).Reason)
	// Output:
	// indistinguishable
	// slower 4.0
	// failing: 99.0 % of requests failed (http:503 ×990); a: 0.0 %
}
