package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/internal/progress"
	"github.com/wcmc-project/wcmc/model"
	schemes "github.com/wcmc-project/wcmc/scheme"
)

// schemeNoiseless is classical CMC on the workers' own samples (no
// channel), named as in results files; the former name "noiseless" is
// still accepted (noiselessAlias).
const (
	schemeNoiseless = schemes.Noiseless
	noiselessAlias  = "noiseless"
)

// The paper's SGD steps (Sec. VI-B), used when --eta is not given.
const (
	paperEtaOMA  = 1e-6
	paperEtaNOMA = 1e-7
)

func newAggregateCmd() *cobra.Command {
	var (
		rxPath, scheme, data, optimizer, out string
		priorVar, holdout, eta               float64
		iters, batch                         int
		seed                                 uint64
		intercept                            bool
	)
	cmd := &cobra.Command{
		Use:   "aggregate [flags] [SAMPLES.npy... (cmc-noiseless only)]",
		Short: "The server: turn received signals into global posterior samples",
		Long: `Map the received signals (the directory written by wcmc transmit, with its
link.json) to S samples of the global posterior, θ_s = Σ_k W_k y_k^{(s)}, with
the weights W of one scheme:

  gcmc       Scott et al.'s consensus on the decoded signals (OMA only)
  wgcmc      the closed-form wireless Gaussian consensus (OMA or NOMA)
  wgcmc-csi  wgcmc with the channel-estimate error statistics that
             link.json records (charged pilots or a CSI error: their gains
             and residual interference); with perfect CSI it is wgcmc
  wvcmc      W minimising the variational free-energy bound (OMA or NOMA);
             needs the full data set (--data) for the gradient of log p(θ, Z)
  cmc-noiseless  classical CMC on the workers' own samples, no channel (also
             accepted as noiseless): give the sample files instead of --rx
             (a benchmark)

WVCMC's optimiser (--optimizer): lbfgs (default; full batch, stops on a
small gradient, a stalled objective, or when the objective on the held-out
last --holdout fraction of the signals stops improving), newton (Newton's
method with the exact Hessian, full batch, stops on a small gradient,
without a held-out set unless --holdout is given; whitened lbfgs where the
map is too large or the signals do not span every receive dimension), adam
(minibatches of --batch, relative step --eta, default 0.01) or sgd (the
paper's fixed step --eta, default 1e-6 under OMA and 1e-7 under NOMA, for
--iters iterations, default 50). The iterations done out of --iters (or
its default), the rate and the time left are shown on stderr as wcmc
sample shows its transitions (-q silences them); lbfgs, newton and a
held-out stop may end before --iters.

Writes the S×d samples to --out (.npy).` + interceptHelp,
		Example: `  wcmc aggregate --rx rx --scheme wvcmc --data data.csv --out global.npy
  wcmc aggregate --rx rx --scheme wgcmc --out wgcmc.npy
  wcmc aggregate --scheme cmc-noiseless --out noiseless.npy samples/samples-*.npy`,
		RunE: func(cmd *cobra.Command, args []string) error {
			changed := cmd.Flags().Changed
			if scheme != wcmc.WVCMC {
				for _, f := range []string{"data", "intercept", "prior-var", "optimizer", "holdout", "eta", "iters", "batch"} {
					if changed(f) {
						return fmt.Errorf("--%s applies to --scheme wvcmc only", f)
					}
				}
			}
			if out == "" {
				return errEmptyOut
			}
			if scheme == noiselessAlias {
				scheme = schemeNoiseless
			}
			if scheme == schemeNoiseless {
				if rxPath != "" {
					return errors.New("--scheme cmc-noiseless uses the workers' sample files, not --rx")
				}
				paths, samples, err := readSamples(args)
				if err != nil {
					return err
				}
				if err := checkNotInputs(outPaths(out), paths); err != nil {
					return err
				}
				if err := checkSampleScale(paths, samples); err != nil {
					return err
				}
				theta, err := interruptible(cmd.Context(), func() (*mat.Dense, error) { return consensus.Noiseless(samples) })
				if constant := (*consensus.ConstantError)(nil); errors.As(err, &constant) {
					return fmt.Errorf("%s: %s: %w", schemeNoiseless, paths[constant.Worker], err)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", schemeNoiseless, err)
				}
				if err := writeAll([]outFile{npyFile(out, theta)}); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s global samples to %s (%s)\n", dims(theta), out, schemeNoiseless)
				return nil
			}
			if len(args) > 0 {
				return fmt.Errorf("unexpected arguments %v: sample files are for --scheme cmc-noiseless only", args)
			}
			a := wcmc.Aggregation{Scheme: scheme}
			switch scheme {
			case wcmc.GCMC, wcmc.WGCMC, wcmc.WGCMCAware, wcmc.WVCMC:
			default:
				return fmt.Errorf("--scheme %q: want gcmc, wgcmc, wgcmc-csi, wvcmc or cmc-noiseless", scheme)
			}
			if rxPath == "" {
				return errors.New("no received signals: give --rx, the directory written by wcmc transmit")
			}
			rx, link, err := loadReceived(rxPath)
			if err != nil {
				return err
			}
			linkPath, err := channel.LinkPath(rxPath)
			if err != nil {
				return err
			}
			inputs := append(link.SignalFiles(linkPath), linkPath)
			if data != "" {
				inputs = append(inputs, data)
			}
			if err := checkNotInputs(outPaths(out), inputs); err != nil {
				return err
			}
			if scheme == wcmc.GCMC && rx.Access != channel.OMA {
				return fmt.Errorf("gcmc needs one stream per worker (OMA), but %s holds NOMA signals: use wgcmc or wvcmc", rxPath)
			}
			if scheme == wcmc.WVCMC {
				if data == "" {
					return errors.New("wvcmc needs the data set: give --data FILE.csv (the full training set, label,x1,…,xd)")
				}
				set, err := readCovariates(data, intercept)
				if err != nil {
					return err
				}
				if set.Dim() != rx.D {
					return fmt.Errorf("d mismatch: %s has d = %d covariates, the signals in %s carry d = %d", data, set.Dim(), rxPath, rx.D)
				}
				if a.Target, err = model.NewProbit(set.U, set.V, priorVar); err != nil {
					return fmt.Errorf("%s: %w", data, err)
				}
				if a.Optimizer, err = optimizerFlags(optimizer, rx.Access, eta, iters, batch, holdout, changed("holdout")); err != nil {
					return err
				}
			}
			res, err := aggregateWatched(cmd, rx, a, seed)
			if errors.Is(err, consensus.ErrDiverged) && stepped(a.Optimizer.Method) {
				return fmt.Errorf("%w; give a smaller --eta or --optimizer lbfgs (no step size to choose)", err)
			}
			if errors.Is(err, consensus.ErrNotFinite) {
				return fmt.Errorf("%s: %w", rxPath, err)
			}
			if err != nil {
				return err
			}
			if err := writeAll([]outFile{npyFile(out, res.Theta)}); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s global samples to %s (%s over %s)\n", dims(res.Theta), out, scheme, rx.Access)
			if rx.Mean != nil {
				fmt.Fprintf(w, "centred link: the workers' decoded means combined and added back (offset %s)\n", fmtVec(res.Map.Offset))
			}
			if fit := res.Fit; fit != nil {
				fmt.Fprintf(w, "wvcmc: %s, %d iterations, objective %s → %s, gradient norm %s → %s: %s\n", fit.Method.Name(), fit.Iters,
					fmtFloat(fit.Objective[0]), fmtFloat(fit.Objective[len(fit.Objective)-1]),
					fmtFloat(fit.StartGradNorm), fmtFloat(fit.GradNorm), fit.Status)
				if res.Fallback {
					fmt.Fprintln(w, "wvcmc: started from the decoded average E_k^†/K (the GCMC map is singular for S ≤ d)")
				}
				if fit.Iters > 0 && fit.Objective[len(fit.Objective)-1] >= fit.Objective[0] {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: wvcmc made no progress: the map written is its start (objective %s → %s); "+
						"a step too large for --optimizer %s? try a smaller --eta or --optimizer lbfgs\n",
						fmtFloat(fit.Objective[0]), fmtFloat(fit.Objective[len(fit.Objective)-1]), fit.Method.Name())
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&rxPath, "rx", "", "directory written by wcmc transmit (or its link.json)")
	f.StringVar(&scheme, "scheme", wcmc.WVCMC, "gcmc, wgcmc, wgcmc-csi, wvcmc or cmc-noiseless (formerly noiseless)")
	f.StringVar(&data, "data", "", "wvcmc: the full data set, CSV rows label,x1,…,xd")
	f.BoolVar(&intercept, "intercept", false, "wvcmc: "+interceptUsage)
	f.Float64Var(&priorVar, "prior-var", wcmc.DefaultPriorVar, "wvcmc: variance σ² of the global prior N(0, σ² I), as given to the workers")
	f.StringVar(&optimizer, "optimizer", consensus.NameLBFGS, "wvcmc: lbfgs, newton, adam or sgd")
	f.Float64Var(&holdout, "holdout", wcmc.DefaultHoldout, "wvcmc: fraction of the signals held out to stop lbfgs/adam early (0 = off; sgd, newton: off unless given)")
	f.Float64Var(&eta, "eta", 0, "wvcmc: sgd step η (default 1e-6 OMA, 1e-7 NOMA) or adam relative step (default 0.01)")
	f.IntVar(&iters, "iters", 0, "wvcmc: maximum iterations (default 1000 for lbfgs, 20000 for newton, 50 for sgd and adam)")
	f.IntVar(&batch, "batch", 0, "wvcmc: minibatch size N_b for sgd/adam (0 = full batch)")
	f.Uint64Var(&seed, "seed", 1, "random seed (wvcmc minibatches)")
	f.StringVar(&out, "out", "global.npy", "output .npy file")
	return cmd
}

// aggregateWatched runs the aggregation, interruptible by cmd's context;
// for WVCMC it shows the optimiser's iterations on cmd's progress output
// (none with --quiet) as wcmc sample shows its transitions: "wvcmc:
// done/cap iterations (p%), elapsed, rate, ~left" lines, or a bar on a
// terminal, the cap being --iters or its default (L-BFGS and a held-out
// stop may end sooner). Watching changes nothing in the result.
func aggregateWatched(cmd *cobra.Command, rx *channel.Received, a wcmc.Aggregation, seed uint64) (*wcmc.Result, error) {
	run := func() (*wcmc.Result, error) { return wcmc.AggregateContext(cmd.Context(), rx, a, seed) }
	if a.Scheme != wcmc.WVCMC {
		return interruptible(cmd.Context(), run)
	}
	meter := progress.New(progressOut(cmd), "wvcmc", "iteration", a.Optimizer.IterationCap())
	a.Optimizer.Progress = func(done, _ int) { meter.Set(done) }
	stop := meter.Watch()
	res, err := interruptible(cmd.Context(), run)
	stop()
	meter.Stop()
	return res, err
}

// maxIters bounds --iters: 1e7 iterations of the objective's gradient
// are hours for the walkthrough's sizes.
const maxIters = 10_000_000

// optimizerFlags builds WVCMC's optimiser settings from the flags (--holdout
// 0 means none). With the default flags the result runs as the library
// default, the zero consensus.Settings (L-BFGS, holdout 0.2).
func optimizerFlags(method string, acc channel.Access, eta float64, iters, batch int, holdout float64, holdoutGiven bool) (consensus.Settings, error) {
	switch {
	case iters < 0:
		return consensus.Settings{}, fmt.Errorf("--iters must be ≥ 0, got %d", iters)
	case iters > maxIters:
		return consensus.Settings{}, fmt.Errorf("--iters %d is more than %d: an optimiser that has not stopped by then will not (lbfgs stops by itself on a small gradient)", iters, maxIters)
	case batch < 0:
		return consensus.Settings{}, fmt.Errorf("--batch must be ≥ 0, got %d", batch)
	case eta < 0:
		return consensus.Settings{}, fmt.Errorf("--eta must be ≥ 0, got %v", eta)
	case !(holdout >= 0 && holdout < 1):
		return consensus.Settings{}, fmt.Errorf("--holdout must be in [0, 1), got %v", holdout)
	}
	s := consensus.Settings{Holdout: holdout}
	if holdout == 0 {
		s.Holdout = consensus.Off
	}
	m, err := consensus.ParseMethod(method)
	if err != nil {
		return s, fmt.Errorf("--optimizer: %w", err)
	}
	switch m.(type) {
	case consensus.LBFGS:
		if eta != 0 || batch != 0 {
			return s, errors.New("--eta and --batch do not apply to lbfgs (full batch, no step size)")
		}
		s.Method = consensus.LBFGS{Iters: iters}
	case consensus.Newton:
		if eta != 0 || batch != 0 {
			return s, errors.New("--eta and --batch do not apply to newton (full batch, no step size)")
		}
		if !holdoutGiven {
			s.Holdout = consensus.Off
		}
		s.Method = consensus.Newton{Iters: iters}
	case consensus.Adam:
		s.Method = consensus.Adam{Step: eta, Iters: iters, BatchSize: batch}
	case consensus.SGD:
		if !holdoutGiven {
			s.Holdout = consensus.Off
		}
		if eta == 0 {
			eta = paperEtaOMA
			if acc == channel.NOMA {
				eta = paperEtaNOMA
			}
		}
		s.Method = consensus.SGD{Step: eta, Iters: iters, BatchSize: batch}
	}
	return s, nil
}

// stepped reports whether m is an optimiser with a step size (--eta).
func stepped(m consensus.Method) bool {
	switch m.(type) {
	case consensus.SGD, consensus.Adam:
		return true
	}
	return false
}

// checkSampleScale refuses samples so large that their sample covariance
// Σ_s θ θᵀ would overflow: |θ| ≤ √(MaxFloat64/(S·d)).
func checkSampleScale(paths []string, samples []*mat.Dense) error {
	for k, m := range samples {
		if i, j, v, limit, over := beyondSquareSum(m); over {
			r, c := m.Dims()
			return fmt.Errorf("%s: sample %d, coordinate %d is %g: samples beyond ±%.3g (√(MaxFloat64/(S·d)), S = %d, d = %d) overflow their covariance; rescale them (and the covariates they came from)",
				paths[k], i+1, j+1, v, limit, r, c)
		}
	}
	return nil
}

func dims(m *mat.Dense) string {
	r, c := m.Dims()
	return fmt.Sprintf("%d×%d", r, c)
}

// fmtVec prints a vector with 4 significant digits per entry.
func fmtVec(x []float64) string {
	parts := make([]string, len(x))
	for i, v := range x {
		parts[i] = strconv.FormatFloat(v, 'g', 4, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
