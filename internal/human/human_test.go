package human

import (
	"math"
	"testing"
)

// Units are rounded before the unit or form is chosen: no exponents, no
// 1,000 of a unit, no figure with a digit too many.
func TestUnitsDuration(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{0, "0ns"},
		{0.4, "0ns"},
		{-0.4, "0ns"},
		{999.4, "999ns"},
		{999.5, "1µs"},
		{999.6, "1µs"},
		{1000, "1µs"},
		{1234, "1.23µs"},
		{812_000, "812µs"},
		{999_400, "999µs"},
		{999_500, "1ms"},
		{999_600, "1ms"},
		{1_000_000, "1ms"},
		{40_300_000, "40.3ms"},
		{99_950_000, "100ms"},
		{999_400_000, "999ms"},
		{999_500_000, "1s"},
		{999_600_000, "1s"},
		{1_250_000_000, "1.25s"},
		{999.4e9, "999s"},
		{999.6e9, "1,000s"},
		{1234e9, "1,230s"},
		{-1_500_000, "-1.5ms"},
	} {
		if got := Duration(tc.ns); got != tc.want {
			t.Errorf("Duration(%v) = %q; want %q", tc.ns, got, tc.want)
		}
	}
}

func TestUnitsNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0.00"},
		{-0.001, "0.00"},
		{9.994, "9.99"},
		{9.996, "10.0"},
		{-9.996, "-10.0"},
		{99.94, "99.9"},
		{99.96, "100"},
		{999.4, "999"},
		{999.6, "1,000"},
		{1234567, "1,234,567"},
		{1e21, "1,000,000,000,000,000,000,000"},
	} {
		if got := Number(tc.v); got != tc.want {
			t.Errorf("Number(%v) = %q; want %q", tc.v, got, tc.want)
		}
	}
}

func TestUnitsBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.00 KiB"},
		{10229, "9.99 KiB"},  // 9.989 KiB
		{10236, "10.0 KiB"},  // 9.996 KiB
		{102348, "99.9 KiB"}, // 99.95 KiB
		{1047961, "1,023 KiB"},
		{1048474, "1.00 MiB"}, // 1023.9 KiB
		{1048575, "1.00 MiB"}, // 1 MiB − 1 B
		{1 << 30, "1.00 GiB"},
		{1<<40 - 1, "1.00 TiB"},
		{1<<63 - 1, "8.00 EiB"},
		{-2048, "-2.00 KiB"},
	} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q; want %q", tc.n, got, tc.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text, ünïcode — ok", "plain text, ünïcode — ok"},
		{"line\nnext\ttab", "line\nnext\ttab"},
		{"\x1b[2J\x1b]0;pwned\x07title", `\x1b[2J\x1b]0;pwned\x07title`},
		{"over\rwrite", `over\x0dwrite`},
		{"c1 \u009b31m del \x7f", `c1 \x9b31m del \x7f`},
		{"bad \xff byte", `bad \ufffd byte`},
	}
	for _, c := range cases {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestNumber(t *testing.T) {
	cases := map[float64]string{0: "0.00", 3.14159: "3.14", 42.42: "42.4", 999.6: "1,000", 1234567: "1,234,567", -2500: "-2,500"}
	for in, want := range cases {
		if got := Number(in); got != want {
			t.Errorf("Number(%v) = %q; want %q", in, got, want)
		}
	}
	if got := Duration(40_300_000); got != "40.3ms" {
		t.Errorf("Duration(40.3ms) = %q", got)
	}
	if got := Bytes(1536); got != "1.50 KiB" {
		t.Errorf("Bytes(1536) = %q", got)
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1234567: "1,234,567", -2500: "-2,500"} {
		if got := Count(in); got != want {
			t.Errorf("Count(%d) = %q; want %q", in, got, want)
		}
	}
}

func TestOrdinalAndPlural(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		if got := Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %q; want %q", n, got, want)
		}
	}
	if Plural(1, "client") != "1 client" || Plural(0, "client") != "0 clients" || Plural(3, "connection") != "3 connections" {
		t.Error("Plural")
	}
}

func TestSigRatioPercent(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{Sig(0.001234), "0.00123"}, {Sig(0.01), "0.0100"}, {Sig(0.9996), "1.00"}, {Sig(1.2345), "1.23"},
		{Sig(1449.6), "1,450"}, {Sig(0), "0"}, {Sig(-0.5), "-0.500"}, {Sig(math.Inf(1)), "–"}, {Sig(1e-20), "0"},
		{Ratio(1450), "1,450×"}, {Ratio(1.5), "1.50×"}, {Ratio(0.8471), "0.847×"}, {Ratio(math.NaN()), "–"},
		{Percent(0.99), "99.0 %"}, {Percent(0.021), "2.1 %"}, {Percent(144), "14,400 %"}, {Percent(-0.0001), "0.0 %"},
		{Percent(math.Inf(1)), "–"}, {Percent(9.9996), "1,000 %"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %q; want %q", i, c.got, c.want)
		}
	}
}
