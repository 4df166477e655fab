package link

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// bandwidthUnits are the units ParseBandwidth reads, in bits per second so
// that a bit rate stays exact; FormatBandwidth writes the byte units.
var bandwidthUnits = []struct {
	name string
	bits int64 // bits per second in one unit
}{
	{"GiB/s", 8 << 30}, {"MiB/s", 8 << 20}, {"KiB/s", 8 << 10},
	{"GB/s", 8e9}, {"MB/s", 8e6}, {"kB/s", 8e3}, {"KB/s", 8e3}, {"B/s", 8},
	{"Gbit/s", 1e9}, {"Mbit/s", 1e6}, {"kbit/s", 1e3}, {"bit/s", 1},
}

// ParseBandwidth reads a rate such as "10MB/s", "1.5 MiB/s" or "100Mbit/s"
// as whole bytes per second (rounded down). Byte units are B/s, kB/s (or
// KB/s), MB/s, GB/s (powers of 1000) and KiB/s, MiB/s, GiB/s (powers of
// 1024); bit units are bit/s, kbit/s, Mbit/s, Gbit/s. The rate must come to
// at least 1 byte per second.
func ParseBandwidth(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, u := range bandwidthUnits {
		num, ok := strings.CutSuffix(t, u.name)
		if !ok {
			continue
		}
		num = strings.TrimSpace(num)
		v, ok := new(big.Rat).SetString(num)
		if !ok || !isDecimal(num) {
			return 0, fmt.Errorf("link: bandwidth %q: want a decimal number before %s", s, u.name)
		}
		v.Mul(v, big.NewRat(u.bits, 8))
		bytes := new(big.Int).Quo(v.Num(), v.Denom()) // v ≥ 0: rounds down
		switch {
		case bytes.Sign() <= 0:
			return 0, fmt.Errorf("link: bandwidth %q: want at least 1 B/s", s)
		case bytes.Cmp(big.NewInt(maxBandwidth)) > 0:
			return 0, fmt.Errorf("link: bandwidth %q: want at most %d B/s", s, int64(maxBandwidth))
		}
		return bytes.Int64(), nil
	}
	return 0, fmt.Errorf("link: bandwidth %q: want a number and a unit: B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, bit/s, kbit/s, Mbit/s or Gbit/s", s)
}

// maxBandwidth is the largest rate ParseBandwidth reads (about 4.6 EB/s).
const maxBandwidth = math.MaxInt64 / 2

// isDecimal reports whether s is digits with at most one point inside.
func isDecimal(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(t string) bool {
		return t != "" && strings.Trim(t, "0123456789") == ""
	}
	return digits(whole) && (!dot || digits(frac))
}

// FormatBandwidth writes bytes per second in the largest byte unit that
// keeps it whole, so that ParseBandwidth reads back the same number.
func FormatBandwidth(bytesPerSecond int64) string {
	n := bytesPerSecond
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB/s", 1 << 30}, {"GB/s", 1e9}, {"MiB/s", 1 << 20}, {"MB/s", 1e6}, {"KiB/s", 1 << 10}, {"kB/s", 1e3}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B/s"
}
