package dgemm

import "math"

// kernel computes one mr×nr tile of a chunk's product from packed
// slivers: t[i, j] = fma chain over p of a[p·mr+i]·b[p·nr+j] from 0, and
// then c[i·ldc+j] = t[i, j], or c[i·ldc+j] + t[i, j] when accumulate.
type kernel struct {
	name   string
	mr, nr int
	vector bool // assembly: fast enough to replace gonum's Dgemm
	run    func(kb int, a, b, c []float64, ldc int, accumulate bool)
}

// goKernel is the portable kernel, the arithmetic written plainly: the
// tests check the assembly kernels against it, bit for bit. It is not fast
// (math.FMA one element at a time), so Dgemm never runs it.
var goKernel = kernel{name: "portable Go (4×8)", mr: 4, nr: 8, run: tileGo}

func tileGo(kb int, a, b, c []float64, ldc int, accumulate bool) {
	const mr, nr = 4, 8
	var t [mr * nr]float64
	a, b = a[:kb*mr], b[:kb*nr]
	for p := range kb {
		ap := a[p*mr : p*mr+mr]
		bp := b[p*nr : p*nr+nr]
		for i, ai := range ap {
			ti := t[i*nr : i*nr+nr]
			for j, bj := range bp {
				ti[j] = math.FMA(ai, bj, ti[j])
			}
		}
	}
	for i := range mr {
		ci := c[i*ldc : i*ldc+nr]
		ti := t[i*nr : i*nr+nr]
		if accumulate {
			for j := range ci {
				ci[j] += ti[j]
			}
		} else {
			copy(ci, ti)
		}
	}
}
