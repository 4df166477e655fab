package values

import (
	"math"

	"github.com/tandem-bench/tandem/internal/splitmix"
)

// zipfSampler draws k in [1, n] with probability proportional to k^−s by
// rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", ACM TOMACS
// 6(3), 1996), in the form Apache Commons RNG gives it, which holds for
// every s > 0 (s ≤ 1 included). It needs O(1) memory and about 1.01
// uniform draws a value on average (TestZipfDraws holds it below 1.1).
//
// Products are converted to float64 explicitly where they meet a sum, so
// that no architecture fuses them (Go's spec allows fused multiply-add
// otherwise); math.Log and math.Exp may still differ in the last bit
// between architectures, which moves a draw only when it falls within one
// ulp of a boundary.
type zipfSampler struct {
	n         float64
	s         float64
	hX1       float64 // hIntegral(1.5) − 1
	hN        float64 // hIntegral(n + 0.5)
	threshold float64 // 2 − hIntegralInverse(hIntegral(2.5) − h(2))
}

func newZipf(n uint64, s float64) zipfSampler {
	z := zipfSampler{n: float64(n), s: s}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.threshold = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// sample returns a rank from 1 to n.
func (z *zipfSampler) sample(r *splitmix.Rand) uint64 {
	for {
		// u is uniform in (hX1, hN]
		u := z.hN + float64(unit(r)*(z.hX1-z.hN))
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		if k-x <= z.threshold || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k)
		}
	}
}

// h is the density's hat: x^−s.
func (z *zipfSampler) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is ∫h: (x^(1−s) − 1)/(1 − s), log x at s = 1.
func (z *zipfSampler) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return float64(helper2(float64((1-z.s)*logX)) * logX)
}

// hIntegralInverse is hIntegral's inverse.
func (z *zipfSampler) hIntegralInverse(x float64) float64 {
	t := float64(x * (1 - z.s))
	if t < -1 {
		t = -1 // only by rounding
	}
	return math.Exp(float64(helper1(t) * x))
}

// helper1 is log(1+x)/x, accurate near 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - float64(x*float64(0.5-float64(x*float64(1.0/3-float64(x*0.25)))))
}

// helper2 is (exp(x)−1)/x, accurate near 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + float64(x*0.5*float64(1+float64(x*(1.0/3)*float64(1+float64(x*0.25)))))
}

// unit is a float64 uniform in [0, 1): the top 53 bits of a draw.
func unit(r *splitmix.Rand) float64 { return float64(r.Next()>>11) * 0x1p-53 }
