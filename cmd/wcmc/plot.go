package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/figure"
	"github.com/wcmc-project/wcmc/npy"
)

// maxPanels is the number of parameters plotted when --params is not given.
const maxPanels = 9

// newPlotCmd returns wcmc plot with its subcommands trace and rank.
func newPlotCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plot",
		Short: "Draw MCMC diagnostics of a sample file: trace and rank plots",
		Long: `Draw the chains of a sample file (.npy written by wcmc sample or wcmc
posterior: (chains, draws, d), or draws × d for one chain), one panel per
parameter, each chain in its own colour, as PNG and SVG.

  wcmc plot trace FILE.npy   each chain's draws against the draw index
  wcmc plot rank FILE.npy    histograms of the ranks of each chain's draws
                             among all draws (Vehtari et al. 2021): flat
                             bars when the chains mix`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newPlotKindCmd("trace", figure.Trace, "Trace plots: each chain's draws against the draw index",
			"A trace plot shows each chain's draws in order: chains that mix overlap\nas stationary noise around one level; a trend, a chain stuck at its own\nlevel or long flat stretches mean more draws or a better sampler.\nChains longer than 2000 draws are drawn through the minimum and maximum\nof consecutive blocks, so no excursion is hidden."),
		newPlotKindCmd("rank", figure.Rank, "Rank plots: histograms of each chain's ranks among all draws",
			"A rank plot pools the draws of all chains, ranks them, and draws each\nchain's histogram of ranks (Vehtari, Gelman, Simpson, Carpenter &\nBürkner 2021). Chains that sample the same distribution give flat\nhistograms near the dashed line (draws/bins); a chain whose histogram\nslopes or piles up at one end sits above or below the others."),
	)
	return cmd
}

// newPlotKindCmd returns wcmc plot trace or wcmc plot rank.
func newPlotKindCmd(name string, kind figure.ChainKind, short, long string) *cobra.Command {
	var (
		out, params string
		bins, cols  int
	)
	cmd := &cobra.Command{
		Use:   name + " FILE.npy",
		Short: short,
		Long: long + `

Writes FILE.` + name + `.png and FILE.` + name + `.svg beside FILE.npy (--out BASE:
BASE.png and BASE.svg), and prints their paths. --params chooses the
parameters (1-based, as in FILE.summary.csv: "1-6", "1,3,7-9", "all");
by default the first ` + strconv.Itoa(maxPanels) + `.`,
		Example: "  wcmc plot " + name + " posterior.npy --params 1-6",
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
			_, d := chains[0].Dims()
			spec := params
			if !cmd.Flags().Changed("params") && d > maxPanels {
				spec = "1-" + strconv.Itoa(maxPanels)
				fmt.Fprintf(progressOut(cmd), "plotting parameters 1–%d of %d (--params to choose)\n", maxPanels, d)
			}
			idx, err := parseParams(spec, d)
			if err != nil {
				return fmt.Errorf("--params: %w", err)
			}
			if kind == figure.Rank && cmd.Flags().Changed("bins") && bins < 1 {
				return fmt.Errorf("--bins %d: need at least 1", bins)
			}
			names := diagnostics.Names("theta", d)
			g := figure.ChainGrid{Title: in, Kind: kind, Bins: bins, Cols: cols}
			for _, j := range idx {
				g.Names = append(g.Names, names[j])
				per := make([][]float64, len(chains))
				for c, m := range chains {
					per[c] = mat.Col(nil, j, m)
				}
				g.Draws = append(g.Draws, per)
			}
			base := out
			if base == "" {
				base = strings.TrimSuffix(in, ".npy") + "." + name
			}
			base = strings.TrimSuffix(strings.TrimSuffix(base, ".png"), ".svg")
			if err := checkNotInputs(outPaths(base+".png", base+".svg"), []string{in}); err != nil {
				return err
			}
			files, err := g.Save(base, "png", "svg")
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "write BASE.png and BASE.svg (default: FILE."+name+" beside FILE.npy)")
	f.StringVar(&params, "params", "", `parameters to plot, 1-based: "1-6", "1,3,7-9" or "all" (default: the first `+strconv.Itoa(maxPanels)+`)`)
	f.IntVar(&cols, "cols", 3, "panels per row")
	if kind == figure.Rank {
		f.IntVar(&bins, "bins", figure.DefaultRankBins, "bins of each rank histogram (fewer if the chains are shorter)")
	}
	return cmd
}

// parseParams parses a 1-based list of parameters ("1-6", "1,3,7-9",
// "all"; empty means all) of a d-dimensional sample into 0-based column
// indices, in the order given and without repeats.
func parseParams(spec string, d int) ([]int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "all" {
		spec = "1-" + strconv.Itoa(d)
	}
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil {
			return nil, fmt.Errorf("%q is not a parameter number or range like 1-6", part)
		}
		if a < 1 || b > d || a > b {
			return nil, fmt.Errorf("%q is outside the parameters 1–%d", part, d)
		}
		for j := a - 1; j < b; j++ {
			if !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no parameters chosen")
	}
	return out, nil
}
