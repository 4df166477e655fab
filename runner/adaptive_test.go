package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
	"github.com/tandem-bench/tandem/stats"
)

// seesawServers are two in-process targets: a answers after 2 ms; b
// after 0.5 ms or 8 ms, switching whenever a has answered since b's last
// answer. Rounds alternate their order (a b, b a, a b, …), so b's rounds
// go slow, slow, fast, fast, …, or the other way round: every pair of
// rounds is 4× apart one way or the other, which no number of rounds
// decides.
func seesawServers(t *testing.T) (a, b string) {
	var mu sync.Mutex
	var aServed, bSaw int
	slow := false
	sa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		aServed++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		w.Write([]byte("a"))
	}))
	sb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		if aServed != bSaw {
			slow, bSaw = !slow, aServed
		}
		d := 500 * time.Microsecond
		if slow {
			d = 8 * time.Millisecond
		}
		mu.Unlock()
		time.Sleep(d)
		w.Write([]byte("b"))
	}))
	t.Cleanup(sa.Close)
	t.Cleanup(sb.Close)
	return sa.URL + "/", sb.URL + "/"
}

// A run with adaptive rounds says, at each planned look, which
// comparisons are still open and with what interval, and when the next
// look is; its results.json records the family its verdicts were held in.
// The seesaw keeps b open to the last look on a machine that honours
// sub-millisecond sleeps; where the machine's own delays swamp them (every
// core busy: 50 ms for a 2 ms answer) the rounds may decide at a look,
// and the progress must then say so at that look and stop there.
func TestAdaptiveRoundsSayWhatIsOpen(t *testing.T) {
	t.Parallel() // waits on its servers' sleeps; asserts what was said, not when
	a, b := seesawServers(t)
	const maxRounds = 8
	s := runtest.Parse(t, fmt.Sprintf(`version: 1
name: adaptive
defaults: {warmup: 50ms, max_rounds: %d}
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
calls:
  ping: {http: {path: ""}}
scenarios:
  - {name: lat, call: ping, load: {concurrency: 1}, requests: 10}
`, maxRounds, a, b))
	var progress runtest.Progress
	o := options(t, &progress)
	res, err := Run(context.Background(), s, o)
	if err != nil {
		t.Fatal(err)
	}
	looks := stats.Schedule(0.05, maxRounds) // one comparison: b against a
	if len(looks) != 2 || looks[1].Rounds != maxRounds {
		t.Fatalf("looks %+v; the test wants two, the last at %d", looks, maxRounds)
	}
	out := progress.String()
	sc := res.Scenarios[0]
	if len(sc.Comparisons) != 1 {
		t.Fatalf("comparisons %+v; want one, b against a", sc.Comparisons)
	}
	// the looks at which b was open: all of them when it ends
	// inconclusive, else those before the one that decided it
	open, last := len(looks), maxRounds
	if sc.Comparisons[0].Verdict != stats.Inconclusive {
		open = 0
		for open < len(looks) && 2*looks[open].Rounds < len(sc.Rounds) {
			open++
		}
		if open == len(looks) {
			open--
		}
		last = looks[open].Rounds
		t.Logf("b decided (%s) after %d rounds: this machine's delays swamped the seesaw's", sc.Comparisons[0].Verdict, last)
	}
	var says []string
	for k := range open {
		says = append(says, fmt.Sprintf("lat c=1: after %d rounds still open: b (ratio ", looks[k].Rounds))
		if k+1 < len(looks) {
			says = append(says, fmt.Sprintf("; next look after round %d\n", looks[k+1].Rounds))
		}
	}
	if open < len(looks) {
		says = append(says, fmt.Sprintf("lat c=1: every comparison decided after %d rounds", last))
	}
	says = append(says, fmt.Sprintf("lat c=1 round %d/%d b: 10 of 10 ok, ", last, maxRounds))
	var lacks []string
	for _, w := range says {
		if !strings.Contains(out, w) {
			lacks = append(lacks, w)
		}
	}
	if n := strings.Count(out, "still open"); len(lacks) > 0 || n != open {
		t.Errorf("the progress lacks %q, and %d lines say what is open (want one per look it was open at, %d):\n%s", lacks, n, open, out)
	}
	if len(sc.Rounds) != 2*last {
		t.Errorf("%d rounds; want %d a target, to the look that decided", len(sc.Rounds), last)
	}
	// the family, in results.json as written
	want := results.Family{Method: results.FamilyHolm, Alpha: 0.05, Planned: 1, Size: 1}
	if got := readResults(t, o.Out).Family; got == nil || *got != want {
		t.Errorf("results.json family %+v; want %+v", got, want)
	}
	data, err := os.ReadFile(filepath.Join(o.Out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Family map[string]any `json:"family"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"method", "alpha", "planned", "size", "upgraded"} {
		if _, ok := raw.Family[k]; !ok {
			t.Errorf("results.json's family lacks %q: %v", k, raw.Family)
		}
	}
}
