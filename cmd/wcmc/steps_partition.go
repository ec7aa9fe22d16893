package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"wcmc"
	"wcmc/dataset"
	"wcmc/runner"
)

func init() {
	extraCommands = append(extraCommands, func([]runner.Spec) *cobra.Command { return newPartitionCmd() })
}

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

func newPartitionCmd() *cobra.Command {
	var (
		data, mnist, classes, split, rule, out string
		k, pca                                 int
		zeta                                   float64
		seed                                   uint64
	)
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "Split a data set into K shard files, one per worker",
		Long: `Split a data set into K shards, one per worker (the server's first step).

Input is a CSV file of rows label,x1,…,xd (labels 0 or 1; an optional header
line), or the MNIST IDX files in a directory (--mnist DIR --classes A,B):
digit A gets label 0 and B label 1, the pixels are scaled to [0, 1],
projected on their first --pca principal components (fitted on the
training images) and a constant 1 is appended as the last covariate (the
intercept), as in the paper's Sec. VI-C.

--rule equal splits at random into shards whose sizes differ by at most one;
--rule heterogeneous gives worker k a share ∝ k^-ζ of the class-1 points and
∝ (K−k+1)^-ζ of the class-0 points (the paper's Fig. 7).

Writes to --out:
  shard-1.csv … shard-K.csv   the shards (label,x1,…,xd)
  partition.json              K, N, d, the rule, seed and shard sizes
  data.csv, test.csv          with --mnist only: the whole training set and
                              the test set after the projection`,
		Example: `  wcmc partition --data dataset/testdata/probit-small.csv --K 4 --out shards
  wcmc partition --mnist ./mnist --classes 0,1 --split t10k --K 10 --out shards`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("K") {
				return errors.New("--K is required: the number of workers")
			}
			if k < 1 {
				return fmt.Errorf("--K must be ≥ 1, got %d", k)
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
				if train, err = readData(data); err != nil {
					return err
				}
				source = data
			case mnist != "":
				if train, test, err = loadMNIST(mnist, classes, split, pca); err != nil {
					return err
				}
				source = mnist
			default:
				return errors.New("no input: give --data FILE.csv or --mnist DIR")
			}
			if k > train.Len() {
				return fmt.Errorf("--K %d workers for %d data points in %s: every worker needs data", k, train.Len(), source)
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
				Rule: rule, Zeta: zeta, Seed: seed, Source: source,
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
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d shards of %s (N = %d, d = %d, %s) to %s: sizes %v\n",
				k, source, train.Len(), train.Dim(), rule, out, meta.Sizes)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "data set, CSV rows label,x1,…,xd")
	f.StringVar(&mnist, "mnist", "", "directory of MNIST IDX files (instead of --data)")
	f.StringVar(&classes, "classes", "0,1", "with --mnist: digits A,B (A → label 0, B → label 1)")
	f.StringVar(&split, "split", dataset.SplitFull, "with --mnist: full (train files for training, t10k for test) or t10k (t10k files only, every 5th image held out)")
	f.IntVar(&pca, "pca", 30, "with --mnist: principal components kept (0 = raw pixels)")
	f.IntVar(&k, "K", 0, "number of workers K (required)")
	f.StringVar(&rule, "rule", "equal", "equal or heterogeneous")
	f.Float64Var(&zeta, "zeta", 0, "class-skew exponent ζ ≥ 0 of --rule heterogeneous")
	f.Uint64Var(&seed, "seed", 1, "random seed of the split")
	f.StringVar(&out, "out", "shards", "output directory")
	return cmd
}

// loadMNIST reads classes "A,B" from the IDX files in dir and projects
// them as described in the partition command's help.
func loadMNIST(dir, classes, split string, pca int) (train, test dataset.Set, err error) {
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
	if train, test, err = dataset.LoadMNIST(dir, ab[0], ab[1], split); err != nil {
		return train, test, err
	}
	if pca > 0 {
		p, err := dataset.FitPCA(train.U, pca)
		if err != nil {
			return train, test, fmt.Errorf("PCA of the training images: %w", err)
		}
		train.U, test.U = p.Transform(train.U), p.Transform(test.U)
	}
	train.U, test.U = dataset.WithBias(train.U), dataset.WithBias(test.U)
	return train, test, nil
}
