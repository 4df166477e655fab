package changepoint_test

import (
	"fmt"

	"github.com/tandem-bench/tandem/changepoint"
)

func Example() {
	// twelve runs of a p50 latency in µs, three rounds each; a slowdown
	// from the ninth run on
	var runs []changepoint.Run
	for i := range 12 {
		v := 200.0 + float64(i%3)
		if i >= 8 {
			v *= 1.15
		}
		runs = append(runs, changepoint.Run{Values: []float64{v - 1, v, v + 1}})
	}
	cs, _ := changepoint.Detect(runs, changepoint.Options{})
	for _, c := range cs {
		fmt.Printf("from run %d: ×%.2f [%.2f … %.2f]\n", c.Index, c.Ratio, c.Lo, c.Hi)
	}
	// Output: from run 8: ×1.15 [1.15 … 1.16]
}
