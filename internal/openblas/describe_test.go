package openblas

import "testing"

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		config, core string
		threads      int
		want         string
	}{
		{"OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64", "Haswell", 1,
			"OpenBLAS 0.3.21 (cgo), Haswell kernels, 1 thread"},
		{"OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64", "SkylakeX\n", 2,
			"OpenBLAS 0.3.21 (cgo), SkylakeX kernels, 2 threads"},
		{"", "", 4, "OpenBLAS (cgo), unnamed kernels, 4 threads"},
	} {
		if got := describe(c.config, c.core, c.threads); got != c.want {
			t.Errorf("describe(%q, %q, %d) = %q, want %q", c.config, c.core, c.threads, got, c.want)
		}
	}
}
