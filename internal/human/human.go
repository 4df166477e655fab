// Package human writes figures and text for people: durations and
// numbers to three significant digits, byte sizes, and text made safe to
// print on a terminal. The reports, the verdicts' reasons, the findings'
// summaries and the command line all write figures through it, so a
// figure reads the same wherever it appears.
package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Duration formats nanoseconds for people with three significant digits:
// 812µs, 40.3ms, 1.25s; whole seconds from 1,000 s on (1,230s). It rounds
// before it picks the unit, so 999.6µs is 1ms, never 1e+03µs.
func Duration(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "–"
	}
	r := math.Round(math.Abs(ns))
	sign := ""
	if ns < 0 && r > 0 {
		sign = "-"
	}
	if r < 1000 {
		return fmt.Sprintf("%s%.0fns", sign, r)
	}
	f := 1.0 // three significant digits: r a multiple of f, r/f < 1,000
	for r/f >= 1000 {
		f *= 10
	}
	r = math.Round(r/f) * f
	switch {
	case r >= 1e12:
		return sign + Number(r/1e9) + "s"
	case r >= 1e9:
		return fmt.Sprintf("%s%.3gs", sign, r/1e9)
	case r >= 1e6:
		return fmt.Sprintf("%s%.3gms", sign, r/1e6)
	}
	return fmt.Sprintf("%s%.3gµs", sign, r/1e3)
}

// Bytes formats a byte count: 1.40 GiB, 320 KiB. It rounds before it
// picks the unit, so 1,023.9 KiB is 1.00 MiB, never 1,024 KiB.
func Bytes(n int64) string {
	const unit = 1024
	if n > -unit && n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, exp := math.Abs(float64(n))/unit, 0
	for exp < 5 && math.Round(v) >= unit {
		v /= unit
		exp++
	}
	if n < 0 {
		v = -v
	}
	return Number(v) + fmt.Sprintf(" %ciB", "KMGTPE"[exp])
}

// Number formats a figure with three significant digits below 1,000 and
// as a whole number with thousands separators above. It rounds before it
// picks the form, so 9.996 is 10.0 (not 10.00) and 99.96 is 100.
func Number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	for _, f := range []struct {
		decimals int
		below    float64
	}{{2, 10}, {1, 100}} {
		s := strconv.FormatFloat(v, 'f', f.decimals, 64)
		if x, _ := strconv.ParseFloat(s, 64); math.Abs(x) < f.below {
			if x == 0 {
				s = strings.TrimPrefix(s, "-") // -0.001 is 0.00
			}
			return s
		}
	}
	digits := strconv.FormatFloat(math.Round(math.Abs(v)), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Count formats a whole count with thousands separators: 0, 999, 1,000.
func Count(n int64) string {
	if n < 0 {
		return "-" + Count(-n)
	}
	if n < 1000 {
		return strconv.FormatInt(n, 10)
	}
	return Number(float64(n))
}

// Printable makes text safe to print on a terminal: control characters
// other than newline and tab (ESC, CR, BEL, the C1 set, DEL), which could
// clear a screen, retitle a window or overwrite a line, are shown as
// escapes ("\x1b") instead. Text that came from a study, a target's
// output or a server's answer passes through it before tandem prints it.
func Printable(s string) string {
	i := strings.IndexFunc(s, unsafeRune)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if unsafeRune(r) {
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Unprintable reports whether Printable shows r as an escape: a control
// character other than newline and tab, DEL, the C1 set, a line or
// paragraph separator, or the replacement character that stands for
// bytes that were not UTF-8.
func Unprintable(r rune) bool { return unsafeRune(r) }

func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError
}

// Ordinal is 1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st, ….
func Ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return strconv.Itoa(n) + "th"
	case n%10 == 1:
		return strconv.Itoa(n) + "st"
	case n%10 == 2:
		return strconv.Itoa(n) + "nd"
	case n%10 == 3:
		return strconv.Itoa(n) + "rd"
	}
	return strconv.Itoa(n) + "th"
}

// Or is "a", "a or b", "a, b or c".
func Or(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Plural is "1 connection", "2 connections".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Sig formats a figure with three significant digits in plain notation,
// never e-notation: 0.00123, 1.21, 45.6, and as Number from 1,000 on
// (1,450). NaN and infinities are "–".
func Sig(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	a := math.Abs(v)
	if a == 0 {
		return "0"
	}
	if a >= 1 {
		return Number(v)
	}
	// decimals that keep three significant digits: 0.0123 needs 4
	decimals := 2 - int(math.Floor(math.Log10(a)))
	if decimals > 12 {
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if x, _ := strconv.ParseFloat(s, 64); math.Abs(x) >= 1 {
		return Number(x) // 0.9996 rounds to 1.00
	}
	return s
}

// Ratio formats a ratio with three significant digits and a times sign:
// 1.21×, 0.847×, 1,450×.
func Ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return Sig(v) + "×"
}

// Percent formats a fraction as a percentage with one decimal below
// 1,000 % and thousands separators above: 99.0 %, 2.1 %, 14,400 %.
// NaN and infinities are "–".
func Percent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	p := 100 * f
	if math.Abs(p) >= 999.95 {
		return Number(p) + " %"
	}
	s := strconv.FormatFloat(p, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	return s + " %"
}
