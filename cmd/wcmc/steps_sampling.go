package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"wcmc"
	"wcmc/sampler"
)

// samplingFlags are the Gibbs settings shared by wcmc sample and wcmc
// posterior: --S, --burnin and --prior-var.
type samplingFlags struct {
	s, burnin int
	priorVar  float64
}

// register adds the flags to f, with the command's default S and its
// wording of the prior variance.
func (sf *samplingFlags) register(f *pflag.FlagSet, defaultS int, priorDoc string) {
	f.IntVar(&sf.s, "S", defaultS, "samples to keep")
	f.IntVar(&sf.burnin, "burnin", sampler.DefaultBurnIn, "Gibbs sweeps discarded first")
	f.Float64Var(&sf.priorVar, "prior-var", wcmc.DefaultPriorVar, priorDoc)
}

// sampling checks the flags and returns them as a wcmc.Sampling.
func (sf *samplingFlags) sampling() (wcmc.Sampling, error) {
	if sf.s < 1 {
		return wcmc.Sampling{}, fmt.Errorf("--S must be ≥ 1, got %d", sf.s)
	}
	if sf.burnin < 0 {
		return wcmc.Sampling{}, fmt.Errorf("--burnin must be ≥ 0, got %d", sf.burnin)
	}
	if !(sf.priorVar > 0) {
		return wcmc.Sampling{}, fmt.Errorf("--prior-var must be positive, got %v", sf.priorVar)
	}
	return wcmc.Sampling{S: sf.s, BurnIn: sf.burnin, PriorVar: sf.priorVar}, nil
}
