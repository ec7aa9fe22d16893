package bench

import (
	"math"
	"runtime"
	"time"

	"gonum.org/v1/gonum/stat"
)

// bestOf times the functions fs in rounds: in each of reps rounds every
// function runs n_i times in a row, n_i chosen once so that such a sample
// lasts at least minSample, and the time per call of the sample is noted.
// It returns, per function, the smallest time per call over the rounds.
//
// Interleaving the functions makes each of them see the same machine
// (turbo state, other load), so ratios between them are stable even when
// the machine is busy; the minimum discards samples slowed down by other
// processes, which only ever add time.
func bestOf(reps int, minSample time.Duration, fs ...func()) []time.Duration {
	n := make([]int, len(fs))
	for i, f := range fs {
		f() // warm caches, grow scratch space
		t0 := time.Now()
		f()
		el := max(time.Since(t0), time.Microsecond)
		n[i] = max(1, int(minSample/el))
	}
	best := make([]time.Duration, len(fs))
	for i := range best {
		best[i] = math.MaxInt64
	}
	for range reps {
		for i, f := range fs {
			t0 := time.Now()
			for range n[i] {
				f()
			}
			if d := time.Since(t0) / time.Duration(n[i]); d < best[i] {
				best[i] = d
			}
		}
	}
	return best
}

// allocsPerCall returns the number of heap allocations of one call of f,
// from the runtime's malloc counter: the smallest count over runs calls
// (after one warm-up call), since anything else allocating meanwhile (the
// runtime, another goroutine) can only add to it.
func allocsPerCall(runs int, f func()) float64 {
	f()
	best := uint64(math.MaxUint64)
	var before, after runtime.MemStats
	for range runs {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		best = min(best, after.Mallocs-before.Mallocs)
	}
	return float64(best)
}

// withProcs runs f with GOMAXPROCS set to p and restores it.
func withProcs(p int, f func()) {
	old := runtime.GOMAXPROCS(p)
	defer runtime.GOMAXPROCS(old)
	f()
}

// logLogSlope returns the least-squares slope of log y against log x.
func logLogSlope(x, y []float64) float64 {
	lx, ly := make([]float64, len(x)), make([]float64, len(y))
	for i := range x {
		lx[i], ly[i] = math.Log(x[i]), math.Log(y[i])
	}
	_, b := stat.LinearRegression(lx, ly, nil, false)
	return b
}
