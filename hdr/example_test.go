package hdr_test

import (
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/hdr"
)

// Two shards' histograms, as results store them, merged into the
// histogram of the whole run.
func ExampleMerge() {
	var shards []string
	for _, ms := range []int64{2, 4} {
		h := hdr.New()
		h.RecordValue(hdr.Clamp(ms * int64(time.Millisecond)))
		enc, err := hdr.Encode(h)
		if err != nil {
			panic(err)
		}
		shards = append(shards, enc)
	}
	whole, err := hdr.Merge(shards...)
	if err != nil {
		panic(err)
	}
	d := hdr.Distribution(whole)
	fmt.Println(whole.TotalCount(), "values, max", time.Duration(d.Max).Round(time.Millisecond))
	// Output: 2 values, max 4ms
}
