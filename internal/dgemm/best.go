package dgemm

import "sync"

// best is the fastest kernel of this machine; ok is false where there is
// none (no fused multiply-add hardware).
var best = sync.OnceValues(func() (kernel, bool) {
	ks := kernels()
	if len(ks) == 0 {
		return kernel{}, false
	}
	return ks[0], true
})
