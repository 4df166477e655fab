package link

import (
	"strings"
	"testing"
)

// FuzzParseBandwidth: whatever ParseBandwidth reads is a positive rate
// within its bound that FormatBandwidth writes back as the same number,
// and whatever it refuses says what it wanted.
func FuzzParseBandwidth(f *testing.F) {
	for _, s := range []string{"10MB/s", "1.5 MiB/s", "100Mbit/s", "1B/s", "7bit/s", "0B/s", "-1kB/s",
		"1e3kB/s", "9999999999999999999GiB/s", ".5MB/s", "5.MB/s", "MB/s", "12", " 3 kbit/s "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 200 {
			return
		}
		n, err := ParseBandwidth(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want") {
				t.Fatalf("ParseBandwidth(%q): error %q does not say what it wants", s, err)
			}
			return
		}
		if n < 1 || n > maxBandwidth {
			t.Fatalf("ParseBandwidth(%q) = %d: outside [1, %d]", s, n, int64(maxBandwidth))
		}
		back, err := ParseBandwidth(FormatBandwidth(n))
		if err != nil || back != n {
			t.Fatalf("ParseBandwidth(FormatBandwidth(%d)) = %d, %v", n, back, err)
		}
	})
}

// FuzzParseDistribution: a name read is the name written.
func FuzzParseDistribution(f *testing.F) {
	for _, s := range []string{"uniform", "normal", "Normal", "", "pareto"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDistribution(s)
		if err != nil {
			return
		}
		if d.String() != s {
			t.Fatalf("ParseDistribution(%q) = %v", s, d)
		}
	})
}
