package digital

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestGaussianUniformMatchesMax(t *testing.T) {
	// Max (1960), Table II: optimum uniform quantisers of a unit Gaussian,
	// step and mean squared error, given to four digits.
	for b, want := range map[int][2]float64{1: {1.596, 0.3634}, 2: {0.9957, 0.1188}, 3: {0.5860, 0.03744}, 4: {0.3352, 0.01154}} {
		step, mse := gaussianUniform(b)
		if math.Abs(step-want[0]) > 6e-4*want[0] || math.Abs(mse-want[1]) > 6e-4*want[1] {
			t.Errorf("%d bits: step %.5f, mse %.5f; Max: %v", b, step, mse, want)
		}
	}
}

func TestUniformMSEHighResolution(t *testing.T) {
	// Beyond exactCells levels the inner cells are Δ²/12 times their
	// probability; the first-order correction ∝ (z² − 1)Δ² averages to 0,
	// so at 2^8 and 2^10 levels the shortcut is within Δ² (relative) of
	// the exact sum.
	for _, b := range []int{8, 10} {
		step, exact := gaussianUniform(b)
		levels := math.Exp2(float64(b))
		edge := (levels/2 - 1) * step
		approx := step*step/12*(2*distuv.UnitNormal.CDF(edge)-1) + 2*cellMSE(edge, math.Inf(1), edge+step/2)
		if math.Abs(approx-exact) > step*step*exact {
			t.Errorf("%d bits: high-resolution %v, exact %v", b, approx, exact)
		}
	}
}

// block returns S Gaussian samples, equicorrelated with ρ = 0.6 and a
// non-zero mean, and their source.
func block(t *testing.T, rng *rand.Rand, s, d int) (*mat.Dense, *Source) {
	t.Helper()
	mean := make([]float64, d)
	for i := range mean {
		mean[i] = 0.5 * float64(i+1)
	}
	x := gaussian(rng, s, mean, equicorrelated(d, 0.6))
	src, err := NewSource(x)
	if err != nil {
		t.Fatal(err)
	}
	return x, src
}

// perSampleError returns the mean and standard error of ‖x_s − x̂_s‖².
func perSampleError(x, y *mat.Dense) (mean, se float64) {
	s, _ := x.Dims()
	e := make([]float64, s)
	for i := range s {
		e[i] = floats.Distance(x.RawRowView(i), y.RawRowView(i), 2)
		e[i] *= e[i]
	}
	mean, sd := stat.MeanStdDev(e, nil)
	return mean, sd / math.Sqrt(float64(s))
}

func TestTestChannelMeetsTheBound(t *testing.T) {
	// Given the block, E‖u − û‖² = Σ_i [(1−a_i)² λ_i + a_i D_i] = Σ_i D_i
	// exactly (λ_i is the 1/S second moment of u_i); only the test-channel
	// noise w varies, with variance Σ_i [2a_i²D_i² + 4(1−a_i)²λ_i a_i D_i]/S
	// for the mean.
	rng := rand.New(rand.NewPCG(7, 8))
	const s, d = 4000, 4
	x, src := block(t, rng, s, d)
	for _, rate := range []float64{0.4, 2.5, 7} {
		q, err := TestChannel{}.Quantize(rng, src, rate)
		if err != nil {
			t.Fatal(err)
		}
		alloc := src.WaterFill(rate)
		var v float64
		for i, di := range alloc.Distortion {
			a := 1 - di/src.Var[i]
			v += 2*a*a*di*di + 4*(1-a)*(1-a)*src.Var[i]*a*di
		}
		got := meanSquaredError(x, q.X)
		if se := math.Sqrt(v / s); math.Abs(got-alloc.Bound()) > 4*se {
			t.Errorf("rate %v: distortion %v, bound D(R) = %v (4 SE = %.2g)", rate, got, alloc.Bound(), 4*se)
		}
		if !floats.EqualApprox(q.Bits, alloc.Bits, 1e-12) {
			t.Errorf("rate %v: spent %v bits, allocated %v", rate, q.Bits, alloc.Bits)
		}
	}
}

func TestTestChannelMatchesRateDistortionFunction(t *testing.T) {
	// Against D(R) of the true covariance: over fresh Gaussian blocks the
	// mean distortion is D(R) up to the Monte Carlo error of the trials
	// (the O(1/S) bias of the estimated eigenvalues is ~20 times smaller).
	rng := rand.New(rand.NewPCG(9, 10))
	const s, d, trials, rate = 2000, 3, 20, 2.2
	var eig mat.EigenSym
	eig.Factorize(equicorrelated(d, 0.6), false)
	vals := eig.Values(nil)
	slices.Reverse(vals)
	want := reverseWaterFill(vals, rate).Bound()
	dist := make([]float64, trials)
	for i := range dist {
		x, src := block(t, rng, s, d)
		q, err := TestChannel{}.Quantize(rng, src, rate)
		if err != nil {
			t.Fatal(err)
		}
		dist[i] = meanSquaredError(x, q.X)
	}
	mean, sd := stat.MeanStdDev(dist, nil)
	if se := sd / math.Sqrt(trials); math.Abs(mean-want) > 4*se {
		t.Errorf("mean distortion %v, D(%v) = %v (4 SE = %.2g)", mean, rate, want, 4*se)
	}
}

func TestTestChannelPosteriorDraw(t *testing.T) {
	// x̃ = x̂ + U ẽ, ẽ_i ~ N(0, D_i): the decoded block has the covariance
	// Σ̂ of the source whatever the rate (SE of a Gaussian sample covariance
	// entry: √((Σ_ii Σ_jj + Σ_ij²)/S)), and the mean squared error is 2·D(R).
	rng := rand.New(rand.NewPCG(21, 22))
	const s, d = 6000, 3
	x, src := block(t, rng, s, d)
	var sigma mat.SymDense
	sigma.SymOuterK(1/float64(s), centred(x, src.Mean).T())
	for _, rate := range []float64{0, 1, 4} {
		q, err := TestChannel{PosteriorDraw: true}.Quantize(rng, src, rate)
		if err != nil {
			t.Fatal(err)
		}
		cov := mat.NewSymDense(d, nil)
		stat.CovarianceMatrix(cov, q.X, nil)
		for i := range d {
			for j := i; j < d; j++ {
				se := math.Sqrt((sigma.At(i, i)*sigma.At(j, j) + sigma.At(i, j)*sigma.At(i, j)) / s)
				if math.Abs(cov.At(i, j)-sigma.At(i, j)) > 4*se {
					t.Errorf("rate %v: decoded covariance (%d,%d) = %v, source %v (4 SE = %.2g)", rate, i, j, cov.At(i, j), sigma.At(i, j), 4*se)
				}
			}
		}
		bound := src.WaterFill(rate).Bound()
		if got, se := perSampleError(x, q.X); math.Abs(got-2*bound) > 4*se {
			t.Errorf("rate %v: distortion %v, 2·D(R) = %v (4 SE = %.2g)", rate, got, 2*bound, 4*se)
		}
	}
}

func TestUniformAboveTheBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const s, d = 3000, 3
	x, src := block(t, rng, s, d)
	for _, rate := range []float64{1, 2.5, 6, 12} {
		bound := src.WaterFill(rate).Bound()
		for _, q := range []Uniform{{}, {Dither: true}} {
			out, err := q.Quantize(rng, src, rate)
			if err != nil {
				t.Fatal(err)
			}
			got, se := perSampleError(x, out.X)
			if got-bound < 4*se {
				t.Errorf("dither %v, rate %v: distortion %v not above the bound %v (4 SE = %.2g)", q.Dither, rate, got, bound, 4*se)
			}
			// Time sharing spends ⌊S·R⌋ bits on the block.
			if spent := floats.Sum(out.Bits) * s; math.Abs(spent-math.Floor(s*rate)) > 1e-6 {
				t.Errorf("dither %v, rate %v: %v bits spent on the block, want %v", q.Dither, rate, spent, math.Floor(s*rate))
			}
		}
	}
}

func TestUniformDistortionModel(t *testing.T) {
	// At an integer rate every sample gets the same integer bits b_i.
	// Without dither the distortion is Σ_i λ_i·mse(b_i) of Max's quantiser
	// (the normalised coordinates are unit Gaussian). With dither, on the
	// samples whose coordinates all lie a step inside the outermost
	// thresholds (no overload whatever the dither), the error of entry i
	// is uniform on ±Δ_i√λ_i/2: mean square Σ_i λ_i Δ_i²/12, uncorrelated
	// with the sample.
	rng := rand.New(rand.NewPCG(13, 14))
	const s, d, rate = 20000, 2, 5
	x, src := block(t, rng, s, d)
	bits := roundBits(src.WaterFill(rate).Bits, rate)
	steps := make([]float64, d)
	var want, wantDither float64
	for i, b := range bits {
		step, mse := gaussianUniform(b)
		steps[i] = step
		want += src.Var[i] * mse
		wantDither += src.Var[i] * step * step / 12
	}
	out, err := Uniform{}.Quantize(rng, src, rate)
	if err != nil {
		t.Fatal(err)
	}
	if got, se := perSampleError(x, out.X); math.Abs(got-want) > 4*se {
		t.Errorf("bits %v: distortion %v, model %v (4 SE = %.2g)", bits, got, want, 4*se)
	}

	out, err = Uniform{Dither: true}.Quantize(rng, src, rate)
	if err != nil {
		t.Fatal(err)
	}
	u := src.Coords()
	var inside []int
	for r := range s {
		ok := true
		for i, b := range bits {
			edge := (math.Exp2(float64(b))/2 - 1) * steps[i]
			ok = ok && math.Abs(u.At(r, i))/math.Sqrt(src.Var[i]) < edge
		}
		if ok {
			inside = append(inside, r)
		}
	}
	if len(inside) < s/2 {
		t.Fatalf("only %d of %d samples inside the granular region", len(inside), s)
	}
	var diff mat.Dense
	diff.Sub(out.X, x)
	e2 := make([]float64, len(inside))
	for j, r := range inside {
		e := floats.Norm(diff.RawRowView(r), 2)
		e2[j] = e * e
	}
	var v float64 // variance of ‖e‖²: Σ_i (λ_i Δ_i²)²/180 for independent uniforms
	for i := range d {
		w := src.Var[i] * steps[i] * steps[i]
		v += w * w / 180
	}
	if got, se := stat.Mean(e2, nil), math.Sqrt(v/float64(len(inside))); math.Abs(got-wantDither) > 4*se {
		t.Errorf("dithered, bits %v: granular distortion %v, Σλ_iΔ_i²/12 = %v (4 SE = %.2g)", bits, got, wantDither, 4*se)
	}
	// Uncorrelated with the sample: corr(e_1, x_1) on the inside samples.
	e1, x1 := make([]float64, len(inside)), make([]float64, len(inside))
	for j, r := range inside {
		e1[j], x1[j] = diff.At(r, 0), x.At(r, 0)
	}
	if c := stat.Correlation(e1, x1, nil); math.Abs(c) > 4/math.Sqrt(float64(len(inside))) {
		t.Errorf("dithered error correlates with the sample: %v", c)
	}
}

func TestRoundBits(t *testing.T) {
	for _, c := range []struct {
		bits []float64
		n    int
		want []int
	}{
		{[]float64{1.5, 0.5, 0}, 2, []int{2, 0, 0}},   // tie 0.5/0.5 goes to the larger variance
		{[]float64{2.7, 1.2, 0.1}, 4, []int{3, 1, 0}}, // largest remainder
		{[]float64{40, 2}, 42, []int{MaxBits, 2}},     // capped
		{[]float64{0, 0}, 3, []int{0, 0}},             // nothing to code
	} {
		if got := roundBits(c.bits, c.n); !slices.Equal(got, c.want) {
			t.Errorf("roundBits(%v, %d) = %v, want %v", c.bits, c.n, got, c.want)
		}
	}
}

func TestAdditiveNoise(t *testing.T) {
	// x̂ − x is N(0, N·I): its sample covariance is N·I up to Monte Carlo
	// error (SE N√(2/S) on the diagonal, N/√S off it); the rate identity
	// Σ_i ½log2(1 + λ_i/N) = R holds; the error d·N is above D(R).
	rng := rand.New(rand.NewPCG(15, 16))
	const s, d = 5000, 3
	x, src := block(t, rng, s, d)
	for _, rate := range []float64{0.3, 3, 20} {
		q, err := AdditiveNoise{}.Quantize(rng, src, rate)
		if err != nil {
			t.Fatal(err)
		}
		n := q.White
		if got := floats.Sum(q.Bits); math.Abs(got-rate) > 1e-9*rate {
			t.Errorf("rate %v: bits sum to %v", rate, got)
		}
		var diff mat.Dense
		diff.Sub(q.X, x)
		cov := mat.NewSymDense(d, nil)
		stat.CovarianceMatrix(cov, &diff, nil)
		for i := range d {
			for j := i; j < d; j++ {
				want, se := 0.0, n/math.Sqrt(s)
				if i == j {
					want, se = n, n*math.Sqrt(2.0/s)
				}
				if math.Abs(cov.At(i, j)-want) > 4*se {
					t.Errorf("rate %v: error covariance (%d,%d) = %v, want %v (N = %v)", rate, i, j, cov.At(i, j), want, n)
				}
			}
		}
		if bound := src.WaterFill(rate).Bound(); float64(d)*n < bound {
			t.Errorf("rate %v: d·N = %v below the bound %v", rate, float64(d)*n, bound)
		}
	}
	if _, err := (AdditiveNoise{}).Quantize(rng, src, 0); err == nil {
		t.Error("rate 0 accepted")
	}
}
