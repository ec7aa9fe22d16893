package runner

import (
	"math/rand/v2"
	"testing"
)

// TestSeedGolden pins the first draws of TaskRng and SetupRng, produced
// before their derivation moved to internal/seed: every result file of a
// sweep depends on them.
func TestSeedGolden(t *testing.T) {
	for _, c := range []struct {
		name   string
		rng    *rand.Rand
		w0, w1 uint64
	}{
		{"TaskRng(1, gauss-snr, 2.5, 3)", TaskRng(1, "gauss-snr", 2.5, 3), 0x8194f5de9dd806b1, 0x9b126e1c232b7226},
		{"TaskRng(7, long ID, -1e-3, 0)", TaskRng(7, "a-much-longer-experiment-id", -1e-3, 0), 0x1d71a9972364563e, 0xa4026c920c97a8a7},
		{"SetupRng(1, gauss-snr)", SetupRng(1, "gauss-snr"), 0x1971d65fdc09ac0c, 0x6230b1c60bd9a8e},
	} {
		if g0, g1 := c.rng.Uint64(), c.rng.Uint64(); g0 != c.w0 || g1 != c.w1 {
			t.Errorf("%s: first draws %#x %#x, want %#x %#x", c.name, g0, g1, c.w0, c.w1)
		}
	}
}
