package main

import (
	"archive/zip"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/inferencedata"
	"github.com/wcmc-project/wcmc/npy"
)

// newExportCmd returns wcmc export.
func newExportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export FILE.npy",
		Short: "Export samples and sampler statistics for ArviZ/xarray (zarr InferenceData)",
		Long: `Write the chains of FILE.npy (wcmc sample or wcmc posterior) as an ArviZ
InferenceData in zarr format (version 2, uncompressed), a directory
FILE.zarr beside it (--out to choose), which Python opens in one line:

  idata = arviz.from_zarr("FILE.zarr")
  post  = xarray.open_zarr("FILE.zarr", group="posterior")

Groups:
  posterior     theta, dims (chain, draw, theta_dim_0): the draws
  sample_stats  per draw, dims (chain, draw), from FILE.sample_stats.npz:
                acceptance_rate, accepted (bool), lp (omitted for Gibbs,
                which does not compute it), step_size, n_steps (int) and
                diverging (bool), of the transition that made the draw;
                per chain, dim chain, from FILE.sampler.json:
                accept_rate, mean_accept_prob, mean_step_size,
                mean_leapfrog_steps, divergences and steps, over the
                transitions after burn-in
The groups' attributes record the sampler and its settings. Coordinates
are 0-based, as ArviZ numbers them (theta_dim_0 = j is theta[j+1] of
FILE.summary.csv). A zarr store that wcmc export wrote at the output is
replaced; any other existing file or directory, or a store holding files
that wcmc did not write, is refused and left untouched.`,
		Example: "  wcmc export posterior.npy\n  python3 -c 'import arviz; print(arviz.summary(arviz.from_zarr(\"posterior.zarr\")))'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := args[0]
			if err := checkOut(cmd, out, false); err != nil {
				return err
			}
			chains, err := npy.ReadChainsFile(in)
			if err != nil {
				return fmt.Errorf("reading samples %s: %w", in, err)
			}
			if out == "" {
				out = strings.TrimSuffix(in, ".npy") + ".zarr"
			}
			if samePath(out, in) {
				return fmt.Errorf("--out %s is the input file", out)
			}
			data := inferencedata.Data{Posterior: chains, Attrs: map[string]any{"inference_library": "wcmc", "samples": in}}
			draws, _ := chains[0].Dims()
			rec, err := readSamplerRecord(in, draws, len(chains))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				fmt.Fprintf(progressOut(cmd), "no %s: sample_stats holds the coordinates only\n", recordPath(in))
			case err != nil:
				return err
			default:
				data.Stats = samplerStats(rec)
				for k, v := range map[string]any{"sampler": rec.Sampler, "burnin": rec.BurnIn, "thin": rec.Thin, "seed": rec.Seed, "prior_var": rec.PriorVar} {
					data.Attrs[k] = v
				}
				if len(rec.DrawStats) == 0 {
					fmt.Fprintf(progressOut(cmd), "%s lists no per-draw statistics: sample_stats holds the per-chain ones only\n", recordPath(in))
					break
				}
				if data.DrawStats, err = readDrawStats(statsPath(in), rec.DrawStats, len(chains), draws); err != nil {
					return err
				}
			}
			if err := inferencedata.Write(out, data); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the zarr directory to write (default: FILE.zarr beside FILE.npy)")
	return cmd
}

// readSamplerRecord reads FILE.sampler.json beside the samples in and
// checks that it describes chains of draws each. A missing record is an
// error wrapping fs.ErrNotExist.
func readSamplerRecord(in string, draws, chains int) (samplerRecord, error) {
	var rec samplerRecord
	path := recordPath(in)
	if err := readJSON(path, &rec); err != nil {
		return rec, err
	}
	if rec.Format != samplerFormat {
		return rec, fmt.Errorf("%s: format %q, want %q", path, rec.Format, samplerFormat)
	}
	if rec.Chains != chains || rec.Draws != draws || len(rec.Stats) != chains {
		return rec, fmt.Errorf("%s describes %d chains of %d draws (%d with statistics), %s holds %d of %d: not its record",
			path, rec.Chains, rec.Draws, len(rec.Stats), in, chains, draws)
	}
	slices.SortFunc(rec.Stats, func(a, b chainStats) int { return a.Chain - b.Chain })
	return rec, nil
}

// samplerStats returns the per-chain statistics of rec as sample_stats
// variables.
func samplerStats(rec samplerRecord) []inferencedata.Stat {
	col := func(name string, isInt bool, f func(chainStats) float64) inferencedata.Stat {
		s := inferencedata.Stat{Name: name, Int: isInt}
		for _, c := range rec.Stats {
			s.Values = append(s.Values, f(c))
		}
		return s
	}
	return []inferencedata.Stat{
		col("accept_rate", false, func(c chainStats) float64 { return c.AcceptRate }),
		col("mean_accept_prob", false, func(c chainStats) float64 { return c.MeanAcceptProb }),
		col("mean_step_size", false, func(c chainStats) float64 { return c.StepSize }),
		col("mean_leapfrog_steps", false, func(c chainStats) float64 { return c.MeanIntegrationSteps }),
		col("divergences", true, func(c chainStats) float64 { return float64(c.Divergences) }),
		col("steps", true, func(c chainStats) float64 { return float64(c.Steps) }),
	}
}

// readDrawStats reads the per-draw statistics names from the .npz archive
// path (written by writeDrawStats), each a (chains, draws) array, as
// sample_stats variables: accepted and diverging as booleans, n_steps as
// integers, the others as floats; one whose values are all NaN (lp of a
// Gibbs chain) is left out.
func readDrawStats(path string, names []string, chains, draws int) ([]inferencedata.DrawStat, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("reading the per-draw statistics: %w", err)
	}
	defer zr.Close()
	var out []inferencedata.DrawStat
	for _, name := range names {
		f, err := zr.Open(name + ".npy")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		m, err := npy.Read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		if r, c := m.Dims(); r != chains || c != draws {
			return nil, fmt.Errorf("%s: %s has %d×%d values, the samples %d chains of %d draws", path, name, r, c, chains, draws)
		}
		st := inferencedata.DrawStat{Name: name, Type: drawStatTypes[name]}
		defined := false
		for c := range chains {
			row := mat.Row(nil, c, m)
			for _, x := range row {
				defined = defined || !math.IsNaN(x)
			}
			st.Values = append(st.Values, row)
		}
		if defined {
			out = append(out, st)
		}
	}
	return out, nil
}

// drawStatTypes are the storage types of the per-draw statistics that are
// not floats.
var drawStatTypes = map[string]inferencedata.Type{"accepted": inferencedata.Bool, "diverging": inferencedata.Bool, "n_steps": inferencedata.Int64}
