package dgemm

import "sync"

// best is the fastest vector kernel of this machine; ok is false where
// there is none (no AVX2 with FMA, another architecture, or the purego
// tag): there every product is gonum's, whose SSE2 and NEON kernels beat
// the portable one (2.7 against 7–8 GFLOP/s here).
var best = sync.OnceValues(func() (kernel, bool) {
	for _, k := range kernels() {
		if k.vector {
			return k, true
		}
	}
	return kernel{}, false
})
