package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/diagnostics"
)

func newEvaluateCmd() *cobra.Command {
	var (
		ref, test, out   string
		intercept        bool
		allowUnconverged bool
		limits           chainLimits
	)
	cmd := &cobra.Command{
		Use:   "evaluate --reference REF.npy [--test TEST.csv] SAMPLES.npy...",
		Short: "Compare global samples with reference samples: err2, predictive KL and uncertainty metrics",
		Long: `Measure how well each file of global samples (S×d .npy) approximates the
global posterior represented by the reference samples (wcmc posterior):

  err2  the second-order test error (1/d²) Σ_ij |M̂_ij − R_ij| / |R_ij| of the
        second moments M̂ = (1/S) Σ θ_s θ_sᵀ against the reference's R
  kl    with --test: the mean over the test inputs u_i of KL(p̂_i ‖ p̂_g,i),
        p̂_i = (1/S) Σ_s Φ(θ_sᵀu_i) the ensemble predictive of the samples and
        p̂_g,i that of the reference (the test labels are not used)

and the uncertainty metrics, which err2 cannot see for a posterior far from
the origin (there a point mass at the mean has a small err2), against the
reference draws' mean μ, covariance C (σ_i² = C_ii) and empirical CDF, the
samples having mean μ̂ and covariance Ĉ (divisor S − 1):

  mean_err    √((1/d) Σ_i ((μ̂_i − μ_i)/σ_i)²)
  cov_err     ‖Ĉ − C‖_F / ‖C‖_F
  coverage90  the share of the reference draws inside the samples' central
              90% interval (their ⌈0.05S⌉-th and ⌈0.95S⌉-th smallest values),
              averaged over the coordinates: 0.9 ideal, lower overconfident
  w2          the 2-Wasserstein distance of the Gaussian fits, √(‖μ̂ − μ‖² +
              tr(Ĉ + C − 2(C^½ Ĉ C^½)^½)), divided by √tr C (a point mass at
              μ scores 1)

Prints CSV with numbers in full precision, to stdout or --out, columns
file,err2[,kl],mean_err,cov_err,coverage90,w2 (kl only with --test). Each
file needs at least two samples.

The reference has to be a converged sample of the posterior, or err2 and kl
measure its error as much as the samples'. evaluate reads the diagnostics
wcmc posterior wrote beside it (REF.summary.csv) and refuses a reference
with a parameter whose R̂ exceeds 1.01 or whose bulk or tail ESS is below
400 (--max-rhat, --min-ess), naming them; --allow-unconverged-reference
evaluates against it anyway, with a warning. A reference without that file
(or with one that does not describe its draws) is evaluated against with a
warning that its convergence is unknown.` + interceptHelp,
		Example: `  wcmc evaluate --reference reference.npy --test test.csv global.npy wgcmc.npy`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ref == "" {
				return errors.New("no reference samples given (--reference REF.npy, written by wcmc posterior)")
			}
			if cmd.Flags().Changed("out") {
				// The reference's summary and sampler record are read too.
				inputs := append([]string{ref, summaryPath(ref), recordPath(ref), test}, args...)
				if err := checkNotInputs(outPaths(out), inputs); err != nil {
					return err
				}
			}
			lim, err := limits.check()
			if err != nil {
				return err
			}
			reference, err := readMatrix(ref, "reference-sample")
			if err != nil {
				return err
			}
			_, d := reference.Dims()
			if err := wcmc.CheckReference(reference); err != nil {
				return fmt.Errorf("%s: %w: a reference needs more draws than parameters, every parameter varying (draw one with wcmc posterior, --samples)", ref, err)
			}
			if intercept && test == "" {
				return errors.New("--intercept applies to --test only")
			}
			var testU *mat.Dense
			if test != "" {
				set, err := readCovariates(test, intercept)
				if err != nil {
					return err
				}
				if set.Dim() != d {
					return fmt.Errorf("d mismatch: test set %s has d = %d covariates, the reference %s has d = %d", test, set.Dim(), ref, d)
				}
				testU = set.U
			}
			switch c := checkReference(ref, reference, lim); {
			case c.unknown != "":
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", c.unknown, unknownReference)
			case c.failed != "" && !allowUnconverged:
				return fmt.Errorf("%s. err2 and kl against it would include its own error: draw a converged reference (wcmc posterior: %s), "+
					"or pass --allow-unconverged-reference to evaluate against it anyway", c.failed, c.remedy)
			case c.failed != "":
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s; evaluating against it anyway (--allow-unconverged-reference): err2 and kl include its own error\n", c.failed)
			}
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			header := []string{"file", "err2"}
			if testU != nil {
				header = append(header, "kl")
			}
			w.Write(append(header, "mean_err", "cov_err", "coverage90", "w2", "err2_scaled"))
			for _, p := range args {
				theta, err := readMatrix(p, "samples")
				if err != nil {
					return err
				}
				if _, c := theta.Dims(); c != d {
					return fmt.Errorf("d mismatch: %s has d = %d, the reference %s has d = %d", p, c, ref, d)
				}
				m, err := interruptible(cmd.Context(), func() (wcmc.Metrics, error) { return wcmc.Evaluate(theta, reference, testU) })
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				row := []string{p, fmtFloat(m.Err2)}
				if testU != nil {
					row = append(row, fmtFloat(m.KL))
				}
				w.Write(append(row, fmtFloat(m.MeanErr), fmtFloat(m.CovErr), fmtFloat(m.Coverage90), fmtFloat(m.W2), fmtFloat(m.Err2Scaled)))
			}
			w.Flush()
			if err := w.Error(); err != nil {
				return err
			}
			if out != "" {
				return writeAll([]outFile{{out, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }}})
			}
			_, err = cmd.OutOrStdout().Write(b.Bytes())
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&ref, "reference", "", "reference samples of the global posterior (.npy, from wcmc posterior)")
	f.StringVar(&test, "test", "", "test set, CSV rows label,x1,…,xd, for the predictive KL")
	f.BoolVar(&intercept, "intercept", false, "--test: "+interceptUsage)
	f.StringVar(&out, "out", "", "write the CSV here instead of stdout")
	f.BoolVar(&allowUnconverged, "allow-unconverged-reference", false, "evaluate against a reference whose diagnostics (REF.summary.csv) fail --max-rhat or --min-ess, with a warning, instead of refusing")
	limits.registerAs(f, "refuse a reference with a parameter whose split-R̂ exceeds this", "refuse a reference with a parameter whose bulk or tail ESS is below this")
	return cmd
}

// unknownReference ends the warning about a reference of unknown
// convergence.
const unknownReference = "its convergence is unknown; err2 and kl assume it is a converged sample of the posterior"

// referenceCheck is what the diagnostics beside a reference say of it:
// unknown says why there are none to go by (else ""); failed names the
// parameters that fail the thresholds (else ""), and remedy the settings
// of wcmc posterior that would help.
type referenceCheck struct {
	unknown, failed, remedy string
}

// checkReference judges the reference file ref, its draws pooled in
// reference, by the summary wcmc posterior wrote beside it
// (FILE.summary.csv, summaryPath) against limits. A summary whose means
// are not those of the draws is another file's and is not used.
func checkReference(ref string, reference *mat.Dense, limits diagnostics.Thresholds) referenceCheck {
	path := summaryPath(ref)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return referenceCheck{unknown: fmt.Sprintf("the reference %s has no diagnostics beside it (%s, which wcmc posterior writes)", ref, path)}
	}
	if err != nil {
		return referenceCheck{unknown: fmt.Sprintf("the diagnostics of the reference %s do not read: %v", ref, err)}
	}
	defer f.Close()
	names, rows, err := diagnostics.ReadCSV(f)
	if err != nil {
		return referenceCheck{unknown: fmt.Sprintf("the diagnostics of the reference %s do not read: %s: %v", ref, path, err)}
	}
	_, d := reference.Dims()
	if len(rows) != d {
		return referenceCheck{unknown: fmt.Sprintf("%s describes %d parameters, the reference %s has d = %d: it is not the reference's", path, len(rows), ref, d)}
	}
	for j, r := range rows {
		m := stat.Mean(mat.Col(nil, j, reference), nil)
		if !(math.Abs(m-r.Mean) <= 1e-9*(math.Abs(m)+r.SD)) {
			return referenceCheck{unknown: fmt.Sprintf("%s gives %s a mean of %g, the draws of the reference %s have %g: it is not the reference's", path, names[j], r.Mean, ref, m)}
		}
	}
	var bad []string
	worst := diagnostics.Summary{Rhat: math.Inf(-1), ESSBulk: math.Inf(1), ESSTail: math.Inf(1)}
	for j, r := range rows {
		worst.Rhat, worst.ESSBulk, worst.ESSTail = math.Max(worst.Rhat, r.Rhat), math.Min(worst.ESSBulk, r.ESSBulk), math.Min(worst.ESSTail, r.ESSTail)
		if limits.Failures(r) != nil {
			bad = append(bad, names[j])
		}
	}
	if bad == nil {
		return referenceCheck{}
	}
	c := referenceCheck{
		failed: fmt.Sprintf("the reference %s fails its convergence checks (%s): %d of %d parameters miss R̂ ≤ %g or bulk and tail ESS ≥ %g "+
			"(max R̂ %.4g, min bulk ESS %.0f, min tail ESS %.0f): %s",
			ref, path, len(bad), len(rows), limits.MaxRhat, limits.MinESS, worst.Rhat, worst.ESSBulk, worst.ESSTail, strings.Join(bad, ", ")),
		remedy: "more --samples or a longer --burnin",
	}
	var rec samplerRecord
	if readJSON(recordPath(ref), &rec) == nil && rec.Sampler == wcmc.Gibbs {
		c.remedy = "--sampler hmc, " + c.remedy
	}
	return c
}
