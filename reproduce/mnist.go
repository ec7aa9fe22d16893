package reproduce

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/runner"
)

// DefaultMNISTDir is where the MNIST files are looked for when --data-dir
// is not given (the shared data folder next to a checkout).
const DefaultMNISTDir = "../shared/data/mnist"

// mnistSets returns the data_dir and split settings of an MNIST
// experiment and the report's settings line (the folder as shownMNISTDir
// shows it, the split and its sizes N and N_t), or why it cannot run; fatal marks a reason that is an
// error (data the user pointed at is missing). Without --data-dir
// (cfg.DataDirGiven false) it uses cfg.DataDir if it holds all four files, else GoMNIST in the Go
// module cache if it is there (never downloaded), else cfg.DataDir's
// two t10k files (the reduced split=t10k).
func mnistSets(cfg Config, userSets map[string]bool) (sets []string, setting, notRun string, fatal bool) {
	if userSets["data_dir"] {
		dir, _ := lastSet(cfg.Sets, "data_dir")
		return nil, fmt.Sprintf("MNIST data: %s (as given by --set data_dir), %s", shownMNISTDir(dir, dataset.GoModCache()), mnistSplitText(cfg.Sets, dir, dataset.SplitFull)), "", false
	}
	dir, source := cfg.DataDir, ""
	found := dataset.MNISTSplitIn(dir)
	if !cfg.DataDirGiven && found != dataset.SplitFull {
		if gm, ok := dataset.FindGoMNIST(); ok {
			dir, found = gm, dataset.SplitFull
			source = fmt.Sprintf(" (the Go module %s@%s in the module cache)", dataset.GoMNISTModule, dataset.GoMNISTVersion)
		}
	}
	if found == "" {
		files := fmt.Sprintf("%s, %s, %s and %s, plain or .gz; the two t10k files alone run the reduced split=t10k",
			dataset.MNISTTrainImages, dataset.MNISTTrainLabels, dataset.MNISTTestImages, dataset.MNISTTestLabels)
		if cfg.DataDirGiven {
			return nil, "", fmt.Sprintf("no MNIST data: --data-dir %s does not hold the MNIST IDX files (%s); "+
				"`%s` fetches all four into the Go module cache: pass the data/ folder of the \"Dir\" it prints, or omit --data-dir",
				dir, files, dataset.GoMNISTDownload), true
		}
		return nil, "", fmt.Sprintf("no MNIST data in %s nor in the Go module cache (%s): run `%s` once "+
			"(wcmc reproduce then finds the files in the module cache), or pass --data-dir DIR holding the MNIST IDX files (%s)",
			dir, dataset.GoMNISTDir(dataset.GoModCache()), dataset.GoMNISTDownload, files), false
	}
	sets = []string{"data_dir=" + dir}
	if !userSets["split"] {
		sets = append(sets, "split="+found)
	}
	setting = fmt.Sprintf("MNIST data: %s%s, %s", shownMNISTDir(dir, dataset.GoModCache()), source, mnistSplitText(append(slices.Clone(cfg.Sets), sets...), dir, found))
	if found == dataset.SplitT10k && !userSets["split"] {
		setting += "; the training files are absent, so the MNIST experiments run the reduced version on the t10k digits, split into training and held-out parts"
	}
	return sets, setting, "", false
}

// mnistSplitText names the split that sets select (defaultSplit if none)
// and its sizes N and N_t read from the label files in dir.
func mnistSplitText(sets []string, dir, defaultSplit string) string {
	split, ok := lastSet(sets, "split")
	if !ok {
		split = defaultSplit
	}
	class := func(name string, def int) int {
		if v, ok := lastSet(sets, name); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
		return def
	}
	a, b := class("class_a", 0), class("class_b", 1)
	n, nt, err := dataset.MNISTSizes(dir, a, b, split)
	if err != nil {
		return fmt.Sprintf("split %s (sizes unknown: %v)", split, err)
	}
	what := "training and N_t = %d test digits"
	if split == dataset.SplitT10k {
		what = "training and N_t = %d held-out t10k digits"
	}
	return fmt.Sprintf("split %s: N = %d "+what+" (%d vs %d)", split, n, nt, a, b)
}

// lastSet returns the value of the last --set name=value in sets.
func lastSet(sets []string, name string) (string, bool) {
	for i := len(sets) - 1; i >= 0; i-- {
		if n, v, err := runner.ParseSet(sets[i]); err == nil && n == name {
			return v, true
		}
	}
	return "", false
}
