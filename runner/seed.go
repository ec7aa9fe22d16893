package runner

import (
	"math/rand/v2"
	"strconv"

	"wcmc/internal/seed"
)

// FormatX formats a sweep value as it appears in seeds, file rows and
// Task.Params: strconv 'g' with the shortest exact representation.
func FormatX(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// TaskRng returns the random source of one task: the PCG of the hash of
// (seed, specID, "task", FormatX(x), trial) (seed.Hash.ChainRand). It
// depends on the point's value, not its index, so adding or removing
// sweep points leaves other points' results unchanged.
func TaskRng(s uint64, specID string, x float64, trial int) *rand.Rand {
	return seed.New(s).AddString(specID).AddString("task").AddString(FormatX(x)).AddUint64(uint64(trial)).ChainRand()
}

// SetupRng returns the random source of Spec.Setup: the PCG of the hash
// of (seed, specID, "setup") (seed.Hash.ChainRand).
func SetupRng(s uint64, specID string) *rand.Rand {
	return seed.New(s).AddString(specID).AddString("setup").ChainRand()
}
