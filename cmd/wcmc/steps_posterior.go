package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/diagnostics"
)

func newPosteriorCmd() *cobra.Command {
	var (
		data, out string
		sf        samplingFlags
		seed      uint64
		intercept bool
	)
	cmd := &cobra.Command{
		Use:   "posterior",
		Short: "The centralised reference: MCMC samples of the global posterior",
		Long: `Draw S samples of the global posterior p(θ|Z) ∝ N(θ; 0, σ² I) Π_n Φ(s_n θᵀu_n)
by Albert–Chib Gibbs sampling (or --sampler hmc) on the whole data set,
after --burnin transitions from the posterior mode: the reference that wcmc
evaluate compares the aggregated samples with (the paper uses one Gibbs
chain, S = 20000, burn-in 100).

Writes the S×d samples to --out (.npy; a (C, S, d) array with --chains
C > 1), their summary and diagnostics to FILE.summary.csv beside FILE.npy
(as wcmc sample does), also printed, with a warning on stderr for any
parameter with R̂ > 1.01 or an ESS < 400, and FILE.sampler.json.` + samplerHelp + interceptHelp,
		Example: `  wcmc posterior --data data.csv --out reference.npy
  wcmc posterior --data data.csv --sampler hmc --chains 4 --samples 5000 --out reference.npy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if data == "" {
				return errors.New("no data set given (--data FILE.csv)")
			}
			sampling, err := sf.sampling()
			if err != nil {
				return err
			}
			set, err := readCovariates(data, intercept)
			if err != nil {
				return err
			}
			if err := checkSampleRun(out, sampling, set.Len(), set.Dim(), data); err != nil {
				return err
			}
			draws, err := drawWatched(cmd, "posterior", sampling, func(ctx context.Context, s wcmc.Sampling) (*wcmc.Draws, error) {
				return wcmc.PosteriorChainsContext(ctx, set, s, seed)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", data, err)
			}
			o, err := newSampleOutput(out, draws, sampling, seed, diagnostics.Thresholds(sf.limits))
			if err != nil {
				return err
			}
			if err := o.write(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s reference samples of %s (N = %d, %s) to %s\n",
				shapeString(o.record.Shape), data, set.Len(), sampling.Sampler, out)
			o.print(cmd.OutOrStdout(), cmd.ErrOrStderr())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "the full data set, CSV rows label,x1,…,xd")
	sf.register(f, 20000, "variance σ² of the prior N(0, σ² I)")
	f.Uint64Var(&seed, "seed", 1, "random seed")
	f.BoolVar(&intercept, "intercept", false, interceptUsage)
	f.StringVar(&out, "out", "reference.npy", "output .npy file")
	return cmd
}
