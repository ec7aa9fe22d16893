package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"wcmc"
	"wcmc/runner"
	"wcmc/sampler"
)

func init() {
	extraCommands = append(extraCommands, func([]runner.Spec) *cobra.Command { return newPosteriorCmd() })
}

func newPosteriorCmd() *cobra.Command {
	var (
		data, out string
		s, burnin int
		priorVar  float64
		seed      uint64
	)
	cmd := &cobra.Command{
		Use:   "posterior",
		Short: "The centralised reference: Gibbs samples of the global posterior",
		Long: `Draw S samples of the global posterior p(θ|Z) ∝ N(θ; 0, σ² I) Π_n Φ(s_n θᵀu_n)
by Albert–Chib Gibbs sampling on the whole data set, after --burnin sweeps
from the posterior mode: the reference that wcmc evaluate compares the
aggregated samples with (the paper uses S = 20000, burn-in 100).

Writes the S×d samples to --out (.npy).`,
		Example: `  wcmc posterior --data data.csv --out reference.npy`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if data == "" {
				return errors.New("no data set given (--data FILE.csv)")
			}
			if s < 1 {
				return fmt.Errorf("--S must be ≥ 1, got %d", s)
			}
			if burnin < 0 {
				return fmt.Errorf("--burnin must be ≥ 0, got %d", burnin)
			}
			if !(priorVar > 0) {
				return fmt.Errorf("--prior-var must be positive, got %v", priorVar)
			}
			set, err := readData(data)
			if err != nil {
				return err
			}
			theta, err := wcmc.Posterior(set, wcmc.Sampling{S: s, BurnIn: burnin, PriorVar: priorVar}, seed)
			if err != nil {
				return fmt.Errorf("%s: %w", data, err)
			}
			if err := writeAll([]outFile{npyFile(out, theta)}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s reference samples of %s (N = %d) to %s\n", dims(theta), data, set.Len(), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "the full data set, CSV rows label,x1,…,xd")
	f.IntVar(&s, "S", 20000, "samples to keep")
	f.IntVar(&burnin, "burnin", sampler.DefaultBurnIn, "Gibbs sweeps discarded first")
	f.Float64Var(&priorVar, "prior-var", wcmc.DefaultPriorVar, "variance σ² of the prior N(0, σ² I)")
	f.Uint64Var(&seed, "seed", 1, "random seed")
	f.StringVar(&out, "out", "reference.npy", "output .npy file")
	return cmd
}
