package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/wcmc-project/wcmc/model"
)

// specialName is the name of the special-function rows.
const specialName = "probit special functions (log Φ and λ)"

// specialFlopsPerMargin is the arithmetic of the special functions on a
// margin in the polynomial ranges: two degree-10 polynomials by fused
// multiply-adds (40 flops) and about 10 more — the part of
// wvcmcFlopsPerMargin that is not a product.
func specialFlopsPerMargin() float64 { return wvcmcFlopsPerMargin(0) }

// tailDivisions returns the divisions the scalar algorithm needs for log Φ
// and λ at a margin x in the right tail (8 ≤ x < 37): the depth
// n = min(20, 9 + int(500/x²)) of the continued fraction (one division),
// its n − 1 levels, 1/g, and −φ/f (model's millsTail and LogPhiMills).
func tailDivisions(x float64) float64 {
	n := min(20, 9+int(500/(x*x)))
	return float64(n + 2)
}

// special times the special functions of the probit log-joint and gradient
// on one row of margins (model.LogPhiInvMillsRow: log Φ and λ, with the
// vector kernel in use) on margins like a fitted model's, against their
// arithmetic (specialFlopsPerMargin) at the core's vector FMA peak, and on
// margins in the right tail (a confident model's, MNIST's), against the
// continued fraction's divisions (tailDivisions) at the core's vector
// division rate, each interleaved with its bound. The row is copied in
// before each call; the copy's time, measured alongside, is taken off.
func (b *suite) special() error {
	n := b.s.specialN
	rng := rand.New(rand.NewPCG(21, 22))
	fitted, tail, sg := make([]float64, n), make([]float64, n), make([]float64, n)
	var divs float64
	for i := range fitted {
		fitted[i], sg[i] = 2.1*rng.NormFloat64(), 1
		if rng.Float64() < 0.8 {
			fitted[i] = math.Abs(fitted[i])
		}
		tail[i] = 8 + 20*rng.Float64()
		divs += tailDivisions(tail[i])
	}
	row := make([]float64, n)
	var sink float64
	call := func(m []float64) func() {
		return func() {
			copy(row, m)
			sink += model.LogPhiInvMillsRow(row, sg, 1)
		}
	}
	copyOnly := func() { copy(row, fitted) }
	fma, fmaRound, fmaName, hasFMA := vectorPeak()
	div, divRound, divName, hasDiv := divisionPeak()
	const rounds = 1 << 10
	fs := []func(){call(fitted), call(tail), copyOnly}
	if hasFMA && hasDiv {
		fs = append(fs, func() { fma(rounds) }, func() { div(rounds) })
	}
	t := b.best(fs...)
	_ = sink
	size := func(what string) string { return fmt.Sprintf("%d margins %s", n, what) }
	for i, c := range []struct {
		size, bound string
		work        float64 // flops or divisions of the row
		perRound    float64
		peakName    string
	}{
		{size("like a fitted model's"), "%.0f flops per margin at the %s", float64(n) * specialFlopsPerMargin(), fmaRound, fmaName},
		{size("in the right tail, 8–28"), "%.3g divisions per margin at the %s", divs, divRound, divName},
	} {
		el := max(t[i]-t[2], time.Nanosecond)
		k := Kernel{
			Name: specialName, Size: c.size, Time: el, Rate: float64(n) / el.Seconds(), Unit: "margins/s",
			Allocs: allocsPerCall(3, fs[i]),
			Note:   fmt.Sprintf("%.3g ns per margin, %s kernel", float64(el.Nanoseconds())/float64(n), model.RowKernel()),
		}
		if hasFMA && hasDiv {
			rate := c.perRound * rounds / t[3+i].Seconds() // flops or divisions per second
			k.Bound = fmt.Sprintf(c.bound, c.work/float64(n), c.peakName)
			k.BoundTime = max(time.Duration(c.work/rate*1e9), time.Nanosecond)
			k.BoundRate = float64(n) / k.BoundTime.Seconds()
		}
		b.add(k)
	}
	return nil
}
