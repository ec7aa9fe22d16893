package runner

import (
	"math/rand/v2"
	"strconv"

	"github.com/wcmc-project/wcmc/internal/seed"
)

// FormatX formats a sweep value as it appears in seeds, file rows and
// Task.Params: strconv 'g' with the shortest exact representation.
func FormatX(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// TaskRng returns the random source of trial trial: the PCG of the hash
// of (seed, specID, "trial", trial) (seed.Hash.ChainRand). Every sweep
// point's task of one trial gets the same stream — common random
// numbers: the trial's data, worker samples and standardised channel
// noise are shared across points wherever a point's value does not change
// how many draws come before them, so comparisons across points pair
// trials (package claims) and the curves are free of between-point
// sampling noise. Adding or removing sweep points leaves other points'
// results unchanged.
func TaskRng(s uint64, specID string, trial int) *rand.Rand {
	return seed.New(s).AddString(specID).AddString("trial").AddUint64(uint64(trial)).ChainRand()
}

// SetupRng returns the random source of Spec.Setup: the PCG of the hash
// of (seed, specID, "setup") (seed.Hash.ChainRand).
func SetupRng(s uint64, specID string) *rand.Rand {
	return seed.New(s).AddString(specID).AddString("setup").ChainRand()
}
