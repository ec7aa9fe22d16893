package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/dataset"
)

// partitionFile is the sidecar partition.json that `wcmc partition` writes
// next to the shards; `wcmc sample` reads K from it.
type partitionFile struct {
	Format string  `json:"format"`
	K      int     `json:"K"`
	N      int     `json:"N"`
	D      int     `json:"d"`
	Rule   string  `json:"rule"`
	Zeta   float64 `json:"zeta,omitempty"`
	Seed   uint64  `json:"seed"`
	Source string  `json:"source"`
	// PCA is the number of principal components of --mnist (0: pixels).
	PCA int `json:"pca,omitempty"`
	// Intercept tells whether the last of the d covariates is the
	// constant 1 appended by --intercept.
	Intercept bool `json:"intercept"`
	// Shards lists the shard files (relative to this file), worker order.
	Shards []string `json:"shards"`
	Sizes  []int    `json:"sizes"`
	// Ones counts the class-1 points of each shard.
	Ones []int `json:"ones"`
	// Data and Test name the training and test sets written for IDX input.
	Data string `json:"data,omitempty"`
	Test string `json:"test,omitempty"`
}

const partitionFormat = "wcmc-partition/1"

// check compares the partition.json at meta with itself and with shard,
// a shard beside it: K shards listed with one size and class-1 count each,
// sizes non-negative and summing to N, and shard among them.
func (p partitionFile) check(meta, shard string) error {
	if p.K != len(p.Shards) || p.K != len(p.Sizes) || p.K != len(p.Ones) {
		return fmt.Errorf("%s: K = %d, but it lists %d shards, %d sizes and %d class-1 counts: not as wcmc partition wrote it; partition the data again", meta, p.K, len(p.Shards), len(p.Sizes), len(p.Ones))
	}
	n := 0
	for k, m := range p.Sizes {
		if m < 0 || p.Ones[k] < 0 || p.Ones[k] > m {
			return fmt.Errorf("%s: shard %d has size %d and %d class-1 points: not as wcmc partition wrote it; partition the data again", meta, k+1, m, p.Ones[k])
		}
		n += m
	}
	if n != p.N {
		return fmt.Errorf("%s: the shard sizes %v sum to %d, but N = %d: not as wcmc partition wrote it; partition the data again", meta, p.Sizes, n, p.N)
	}
	if !slices.Contains(p.Shards, filepath.Base(shard)) {
		return fmt.Errorf("%s is not one of the shards %v listed in %s: give a shard written by that partition", shard, p.Shards, meta)
	}
	return nil
}

// checkRows compares the shard read from file shard with the size and
// class-1 count that the partition.json at meta records for it, so that a
// partition.json of another partition is not taken for this one's (its K
// would temper the prior wrongly).
func (p partitionFile) checkRows(meta, shard string, s dataset.Set) error {
	i := slices.Index(p.Shards, filepath.Base(shard))
	if i < 0 {
		return fmt.Errorf("%s is not one of the shards %v listed in %s: give a shard written by that partition", shard, p.Shards, meta)
	}
	ones := 0
	for _, v := range s.V {
		ones += int(v)
	}
	if s.Len() != p.Sizes[i] || ones != p.Ones[i] {
		return fmt.Errorf("%s has %d rows with %d of class 1, but %s records %d rows with %d of class 1 for it: the shard and partition.json come from different partitions (K = %d there); give the partition.json written with this shard, or partition the data again",
			shard, s.Len(), ones, meta, p.Sizes[i], p.Ones[i], p.K)
	}
	return nil
}

func newPartitionCmd() *cobra.Command {
	var (
		data, mnist, classes, split, rule, out string
		k, pca                                 int
		zeta                                   float64
		seed                                   uint64
		intercept                              bool
	)
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "Split a data set into K shard files, one per worker",
		Long: `Split a data set into K shards, one per worker (the server's first step).

Input is a CSV file of rows label,x1,…,xd (labels 0 or 1; an optional header
line), or the MNIST IDX files in a directory (--mnist DIR --classes A,B):
digit A gets label 0 and B label 1, the pixels are scaled to [0, 1] and
projected on their first --pca principal components (fitted on the
training images): d = 30 by default, as in the paper's Sec. VI-C and the
mnist-* experiments. The four MNIST files are in the Go module
` + dataset.GoMNISTModule + `:
  ` + dataset.GoMNISTDownload + `
fetches them; pass the data/ folder of the "Dir" it prints as --mnist.

--intercept appends a constant 1 as the last covariate of every file
written (d + 1; the experiments' bias=true); the later steps then read it
as a covariate like any other and must not be given --intercept again.
Off by default: the covariates are written as they are.

--rule equal splits at random into shards whose sizes differ by at most one;
--rule heterogeneous gives worker k a share ∝ k^-ζ of the class-1 points and
∝ (K−k+1)^-ζ of the class-0 points (the paper's Fig. 7).

Writes to --out:
  shard-1.csv … shard-K.csv   the shards (label,x1,…,xd)
  partition.json              K, N, d, whether the last covariate is the
                              intercept, the rule, seed and shard sizes
  data.csv, test.csv          with --mnist only: the whole training set and
                              the test set after the projection`,
		Example: `  wcmc partition --data dataset/testdata/probit-small.csv --num-workers 4 --out shards
  wcmc partition --mnist ./mnist --classes 0,1 --split t10k --num-workers 10 --out shards`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("num-workers") {
				return errors.New("--num-workers is required: the number of workers")
			}
			if k < 1 {
				return fmt.Errorf("--num-workers must be ≥ 1, got %d", k)
			}
			if out == "" {
				return errEmptyOut
			}
			switch rule {
			case "equal":
				if cmd.Flags().Changed("zeta") {
					return errors.New("--zeta applies to --rule heterogeneous only")
				}
			case "heterogeneous":
			default:
				return fmt.Errorf("--rule %q: want equal or heterogeneous", rule)
			}
			var (
				train, test dataset.Set
				source      string
				err         error
			)
			switch {
			case data != "" && mnist != "":
				return errors.New("give either --data or --mnist, not both")
			case data != "":
				if train, err = readCovariates(data, intercept); err != nil {
					return err
				}
				source = data
			case mnist != "":
				sets, err := interruptible(cmd.Context(), func() ([2]dataset.Set, error) {
					train, test, err := loadMNIST(mnist, classes, split, pca, intercept)
					return [2]dataset.Set{train, test}, err
				})
				if err != nil {
					return err
				}
				train, test = sets[0], sets[1]
				source = mnist
			default:
				return errors.New("no input: give --data FILE.csv or --mnist DIR")
			}
			if k > train.Len() {
				return fmt.Errorf("--num-workers %d workers for %d data points in %s: every worker needs data", k, train.Len(), source)
			}
			stale, err := staleShards(out, k)
			if err != nil {
				return err
			}
			names := []string{"partition.json"}
			for i := range k {
				names = append(names, fmt.Sprintf("shard-%d.csv", i+1))
			}
			if mnist != "" {
				names = append(names, "data.csv", "test.csv")
			}
			written := make([]string, len(names))
			for i, n := range names {
				written[i] = filepath.Join(out, n)
			}
			if err := checkNotInputs(outPaths(append(written, stale...)...), []string{data}); err != nil {
				return err
			}
			var shards []dataset.Set
			if rule == "heterogeneous" {
				shards, err = wcmc.PartitionHeterogeneous(train, k, zeta, seed)
			} else {
				shards, err = wcmc.Partition(train, k, seed)
			}
			if err != nil {
				return fmt.Errorf("partitioning %s: %w", source, err)
			}
			meta := partitionFile{
				Format: partitionFormat, K: k, N: train.Len(), D: train.Dim(),
				Rule: rule, Zeta: zeta, Seed: seed, Source: source, Intercept: intercept,
			}
			if mnist != "" {
				meta.PCA = pca
			}
			var files []outFile
			for i, sh := range shards {
				name := fmt.Sprintf("shard-%d.csv", i+1)
				files = append(files, csvFile(filepath.Join(out, name), sh))
				meta.Shards = append(meta.Shards, name)
				meta.Sizes = append(meta.Sizes, sh.Len())
				ones := 0
				for _, v := range sh.V {
					ones += int(v)
				}
				meta.Ones = append(meta.Ones, ones)
			}
			if mnist != "" {
				meta.Data, meta.Test = "data.csv", "test.csv"
				files = append(files, csvFile(filepath.Join(out, "data.csv"), train), csvFile(filepath.Join(out, "test.csv"), test))
			}
			files = append(files, jsonFile(filepath.Join(out, "partition.json"), meta))
			if err := writeAll(files); err != nil {
				return err
			}
			for _, f := range stale {
				if err := os.Remove(f); err != nil {
					return fmt.Errorf("removing %s, a shard of an earlier partition with more workers: %w", f, err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d shards of %s (N = %d, %s) to %s: sizes %v\n",
				k, source, train.Len(), rule, out, meta.Sizes)
			if len(stale) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %d shard file(s) of an earlier partition with more workers: %s\n", len(stale), strings.Join(stale, ", "))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "d = %d covariates: %s\n", train.Dim(), describeCovariates(meta))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "data set, CSV rows label,x1,…,xd")
	f.StringVar(&mnist, "mnist", "", "directory of MNIST IDX files (instead of --data)")
	f.StringVar(&classes, "classes", "0,1", "with --mnist: digits A,B (A → label 0, B → label 1)")
	f.StringVar(&split, "split", dataset.SplitFull, "with --mnist: full (train files for training, t10k for test) or t10k (t10k files only, every 5th image held out)")
	f.IntVar(&pca, "pca", 30, "with --mnist: principal components kept (0 = raw pixels)")
	f.BoolVar(&intercept, "intercept", false, "append a constant-1 covariate (intercept) to the files written, d + 1 (default: none, d = 30 with --mnist)")
	f.IntVar(&k, "num-workers", 0, "number of workers K (required)")
	f.StringVar(&rule, "rule", "equal", "equal or heterogeneous")
	f.Float64Var(&zeta, "zeta", 0, "class-skew exponent ζ ≥ 0 of --rule heterogeneous")
	f.Uint64Var(&seed, "seed", 1, "random seed of the split")
	f.StringVar(&out, "out", "shards", "output directory")
	return cmd
}

// shardName matches the shard files that partition writes.
var shardName = regexp.MustCompile(`^shard-([0-9]+)\.csv$`)

// staleShards returns the shard files shard-j.csv in dir with j > k: those
// of an earlier partition into more workers, which a partition into k
// would otherwise leave beside its own.
func staleShards(dir string, k int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		m := shardName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		if j, err := strconv.Atoi(m[1]); err != nil || j > k {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// loadMNIST reads classes "A,B" from the IDX files in dir and projects
// them as described in the partition command's help.
func loadMNIST(dir, classes, split string, pca int, intercept bool) (train, test dataset.Set, err error) {
	parts := strings.Split(classes, ",")
	if len(parts) != 2 {
		return train, test, fmt.Errorf("--classes %q: want two digits A,B", classes)
	}
	var ab [2]int
	for i, p := range parts {
		if ab[i], err = strconv.Atoi(strings.TrimSpace(p)); err != nil || ab[i] < 0 || ab[i] > 9 || (i == 1 && ab[1] == ab[0]) {
			return train, test, fmt.Errorf("--classes %q: want two different digits 0–9", classes)
		}
	}
	if pca < 0 {
		return train, test, fmt.Errorf("--pca %d: want ≥ 0", pca)
	}
	return dataset.LoadMNISTFeatures(dir, ab[0], ab[1], split, pca, intercept)
}

// describeCovariates says what the d covariates partition wrote are.
func describeCovariates(m partitionFile) string {
	var what string
	switch {
	case m.Data == "":
		what = fmt.Sprintf("the %d covariates of %s", m.D-boolInt(m.Intercept), m.Source)
	case m.PCA > 0:
		what = fmt.Sprintf("%d principal components of the pixels", m.PCA)
	default:
		what = fmt.Sprintf("%d pixels", m.D-boolInt(m.Intercept))
	}
	if m.Intercept {
		return what + " + the constant-1 intercept (last column); run the later steps without --intercept"
	}
	return what + ", no intercept column (add one with --intercept, here or in each later step)"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The --intercept option of the steps that read covariate CSVs (sample,
// posterior, aggregate, evaluate).
const (
	interceptUsage = "append a constant-1 covariate (intercept) after the CSV's: d = columns (default off: d = columns − 1)"
	interceptHelp  = `

Covariates: by default the CSV's columns after the label (d = columns − 1);
--intercept appends a constant 1 to them as the last covariate (d =
columns). Give --intercept to every step that reads a CSV or to none (the
d checks catch a mix), and not at all to files written by wcmc partition
--intercept, which hold the column already.`
)

// readCovariates reads a CSV data set (readData), refuses covariates too
// large for the probit model's arithmetic (checkScale) and, with intercept,
// appends the constant-1 covariate, refusing a file whose last covariate
// is already the constant 1.
func readCovariates(path string, intercept bool) (dataset.Set, error) {
	s, err := readData(path)
	if err == nil {
		err = checkScale(s, path)
	}
	if err != nil || !intercept {
		return s, err
	}
	if d := s.Dim(); s.Len() > 0 && d > 0 {
		constant := true
		for i := range s.Len() {
			if s.U.At(i, d-1) != 1 {
				constant = false
				break
			}
		}
		if constant {
			return dataset.Set{}, fmt.Errorf("--intercept: the last covariate of %s is already the constant 1 (an intercept column, written by wcmc partition --intercept?): drop --intercept", path)
		}
	}
	s.U = dataset.WithBias(s.U)
	return s, nil
}

// checkScale refuses covariates u_n so large that the probit model's
// curvature Σ_n φ-weighted u_n u_nᵀ, whose entries reach N·max|u|², would
// overflow floating point: |u| ≤ √(MaxFloat64/(N·d)). The samplers'
// starting point (Newton's method on that curvature) would otherwise fail
// with "matrix singular", which is not the problem.
func checkScale(s dataset.Set, path string) error {
	n, d := s.Len(), s.Dim()
	if n == 0 || d == 0 {
		return nil
	}
	if i, j, v, limit, over := beyondSquareSum(s.U); over {
		return fmt.Errorf("%s: data point %d, covariate %d is %g: covariates beyond ±%.3g (√(MaxFloat64/(N·d)), N = %d, d = %d) overflow the products Σ_n u_n u_nᵀ of the probit model; rescale the covariates (standardise each column, say)",
			path, i+1, j+1, v, limit, n, d)
	}
	return nil
}

// beyondSquareSum returns the first entry (row i, column j, value v) of
// the r×c matrix m beyond limit = √(MaxFloat64/(r·c)), above which a sum
// of r outer products of its rows can overflow; over is false when there
// is none.
func beyondSquareSum(m *mat.Dense) (i, j int, v, limit float64, over bool) {
	r, c := m.Dims()
	limit = math.Sqrt(math.MaxFloat64 / (float64(r) * float64(c)))
	for i := range r {
		for j, v := range m.RawRowView(i) {
			if math.Abs(v) > limit {
				return i, j, v, limit, true
			}
		}
	}
	return 0, 0, 0, limit, false
}
