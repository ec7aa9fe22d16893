package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"wcmc"
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
		Short: "The centralised reference: Gibbs samples of the global posterior",
		Long: `Draw S samples of the global posterior p(θ|Z) ∝ N(θ; 0, σ² I) Π_n Φ(s_n θᵀu_n)
by Albert–Chib Gibbs sampling on the whole data set, after --burnin sweeps
from the posterior mode: the reference that wcmc evaluate compares the
aggregated samples with (the paper uses S = 20000, burn-in 100).

Writes the S×d samples to --out (.npy) and their summary and diagnostics
to FILE.summary.csv beside FILE.npy (as wcmc sample does), also printed, with a
warning on stderr for any parameter with R̂ > 1.01 or an ESS < 400.` + interceptHelp,
		Example: `  wcmc posterior --data data.csv --out reference.npy`,
		Args:    cobra.NoArgs,
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
			theta, err := wcmc.Posterior(set, sampling, seed)
			if err != nil {
				return fmt.Errorf("%s: %w", data, err)
			}
			summary, err := summarize(out, theta)
			if err != nil {
				return err
			}
			if err := writeAll([]outFile{npyFile(out, theta), summary.file()}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s reference samples of %s (N = %d) to %s\n", dims(theta), data, set.Len(), out)
			summary.print(cmd.OutOrStdout(), cmd.ErrOrStderr(), out, 1)
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
