package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/diagnostics"
)

func newSampleCmd() *cobra.Command {
	var (
		shard, out string
		worker, k  int
		sf         samplingFlags
		seed       uint64
		intercept  bool
	)
	cmd := &cobra.Command{
		Use:   "sample",
		Short: "One worker: draw S subposterior samples from its shard",
		Long: `Run worker k: draw S samples of its subposterior p(θ)^{1/K} p(Z_k|θ) by
Albert–Chib Gibbs sampling (or --sampler hmc) on its shard, with the global
prior N(0, σ² I) tempered to N(0, Kσ² I), after --burnin transitions from
the shard's posterior mode. Writes an S×d .npy file (samples as rows; a
(C, S, d) array with --chains C > 1) and, beside it, for FILE.npy:
FILE.summary.csv, per parameter the mean, sd, 5/50/95% quantiles, the Monte
Carlo error of the mean, bulk and tail ESS and split-R̂ (Vehtari et al.
2021) over all chains, also printed, with a warning on stderr for any
parameter with R̂ > 1.01 or an ESS < 400; and FILE.sampler.json.

K is read from partition.json beside the shard when --num-workers is not given (and
must agree with it when both are). The random streams depend only on
(--seed, --worker) and the chain, so the workers can run as separate jobs
in any order and on any machines: the output equals worker k's samples
from the in-process pipeline (wcmc.SampleWorkers) with the same seed.` + samplerHelp + interceptHelp,
		Example: `  wcmc sample --shard shards/shard-3.csv --worker 3 --samples 1000 --out samples/samples-3.npy
  wcmc sample --shard shards/shard-3.csv --worker 3 --sampler hmc --chains 4 --out samples/samples-3.npy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if shard == "" {
				return errors.New("no shard given (--shard shards/shard-k.csv)")
			}
			K, part, err := workerCount(shard, k, cmd.Flags().Changed("num-workers"))
			if err != nil {
				return err
			}
			if worker < 1 || worker > K {
				return fmt.Errorf("--worker %d: want 1 ≤ k ≤ K = %d", worker, K)
			}
			sampling, err := sf.sampling()
			if err != nil {
				return err
			}
			data, err := readCovariates(shard, intercept)
			if err != nil {
				return err
			}
			if part != nil {
				if err := part.checkRows(filepath.Join(filepath.Dir(shard), "partition.json"), shard, data); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("out") && out == "" {
				return errEmptyOut
			}
			if out == "" {
				out = fmt.Sprintf("samples-%d.npy", worker)
			}
			if err := checkSampleRun(out, sampling, data.Len(), data.Dim(), shard, filepath.Join(filepath.Dir(shard), "partition.json")); err != nil {
				return err
			}
			draws, err := drawWatched(cmd, fmt.Sprintf("worker %d", worker), sampling, func(ctx context.Context, s wcmc.Sampling) (*wcmc.Draws, error) {
				return wcmc.SampleWorkerChainsContext(ctx, data, worker, K, s, seed)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", shard, err)
			}
			o, err := newSampleOutput(out, draws, sampling, seed, diagnostics.Thresholds(sf.limits))
			if err != nil {
				return err
			}
			o.record.Worker, o.record.K = worker, K
			if err := o.write(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "worker %d of %d: wrote %s samples of %s (%d points, %s) to %s\n",
				worker, K, shapeString(o.record.Shape), shard, data.Len(), sampling.Sampler, out)
			o.print(cmd.OutOrStdout(), cmd.ErrOrStderr())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&shard, "shard", "", "the worker's shard, CSV rows label,x1,…,xd")
	f.IntVar(&worker, "worker", 0, "worker index k, 1…K (required)")
	f.IntVar(&k, "num-workers", 0, "number of workers K (default: from partition.json beside the shard)")
	sf.register(f, 1000, "variance σ² of the global prior N(0, σ² I); the worker uses Kσ²")
	f.Uint64Var(&seed, "seed", 1, "random seed; worker k's stream derives from (seed, k)")
	f.BoolVar(&intercept, "intercept", false, interceptUsage)
	f.StringVar(&out, "out", "", "output .npy file (default samples-<k>.npy)")
	return cmd
}

// workerCount returns K from the flag and/or the partition.json beside
// shard, which must agree when both are present, and that partition.json
// (nil when there is none).
func workerCount(shard string, flagK int, given bool) (int, *partitionFile, error) {
	meta := filepath.Join(filepath.Dir(shard), "partition.json")
	var p partitionFile
	err := readJSON(meta, &p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !given {
			return 0, nil, fmt.Errorf("--num-workers is required: there is no %s beside %s to read it from", meta, shard)
		}
		if flagK < 1 {
			return 0, nil, fmt.Errorf("--num-workers must be ≥ 1, got %d", flagK)
		}
		return flagK, nil, nil
	case err != nil:
		return 0, nil, err
	case p.Format != partitionFormat || p.K < 1:
		return 0, nil, fmt.Errorf("%s: not a partition.json written by wcmc partition (format %q, K = %d)", meta, p.Format, p.K)
	case given && flagK != p.K:
		return 0, nil, fmt.Errorf("--num-workers %d disagrees with K = %d in %s: the prior tempering p(θ)^{1/K} needs the true number of workers", flagK, p.K, meta)
	}
	if err := p.check(meta, shard); err != nil {
		return 0, nil, err
	}
	return p.K, &p, nil
}
