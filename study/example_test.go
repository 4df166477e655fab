package study_test

import (
	"fmt"

	"github.com/tandem-bench/tandem/study"
)

func ExampleParse() {
	src := []byte(`version: 1
name: two builds
targets:
  - name: a
    endpoints: {grpc: "127.0.0.1:9090"}
calls:
  ping: {grpc: {method: pkg.Service/Ping}}
scenarios:
  - {name: latency, call: ping, load: {concurrency: 1}}
`)
	s, err := study.Parse("study.yaml", src)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, s.Defaults.Rounds, s.Scenarios[0].Metric)

	_, err = study.Parse("bad.yaml", []byte("version: 1\nname: x\ntargets: []\ncalls: {}\nscenario: []\n"))
	fmt.Println(err)
	// Output:
	// two builds 3 latency
	// bad.yaml:3:10: targets: no targets (at least one target)
	// bad.yaml:5:1: scenario: unknown key "scenario" (one of: version, name, description, seed, baseline, aa, defaults, generator, services, targets, calls, startup, scenarios, compat, metrics, costs)
}

func ExampleExpand() {
	ports := map[string]string{"port.grpc": "41000"}
	s, err := study.Expand("127.0.0.1:${port.grpc}", func(name string) (string, bool) {
		v, ok := ports[name]
		return v, !ok
	})
	fmt.Println(s, err)
	// Output:
	// 127.0.0.1:41000 <nil>
}
