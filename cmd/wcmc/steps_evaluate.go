package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
)

func newEvaluateCmd() *cobra.Command {
	var (
		ref, test, out string
		intercept      bool
	)
	cmd := &cobra.Command{
		Use:   "evaluate --reference REF.npy [--test TEST.csv] SAMPLES.npy...",
		Short: "Compare global samples with reference samples: err2 and predictive KL",
		Long: `Measure how well each file of global samples (S×d .npy) approximates the
global posterior represented by the reference samples (wcmc posterior):

  err2  the second-order test error (1/d²) Σ_ij |M̂_ij − R_ij| / |R_ij| of the
        second moments M̂ = (1/S) Σ θ_s θ_sᵀ against the reference's R
  kl    with --test: the mean over the test inputs u_i of KL(p̂_i ‖ p̂_g,i),
        p̂_i = (1/S) Σ_s Φ(θ_sᵀu_i) the ensemble predictive of the samples and
        p̂_g,i that of the reference (the test labels are not used)

Prints CSV (file,err2[,kl]) with numbers in full precision, to stdout or
--out.` + interceptHelp,
		Example: `  wcmc evaluate --reference reference.npy --test test.csv global.npy wgcmc.npy`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ref == "" {
				return errors.New("no reference samples given (--reference REF.npy, written by wcmc posterior)")
			}
			if cmd.Flags().Changed("out") {
				if err := checkNotInputs(outPaths(out), append([]string{ref, test}, args...)); err != nil {
					return err
				}
			}
			reference, err := readMatrix(ref, "reference-sample")
			if err != nil {
				return err
			}
			_, d := reference.Dims()
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
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			header := []string{"file", "err2"}
			if testU != nil {
				header = append(header, "kl")
			}
			w.Write(header)
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
				w.Write(row)
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
	return cmd
}
