// Package results writes the files of a finished sweep and reads them
// back: DIR/ID.csv (one row per measured value), DIR/ID.summary.csv (mean
// and 5–95% quantiles per scheme, sweep point and metric, see Summarize),
// DIR/ID.json (the run's settings, notes and diagnostics) and the figures
// DIR/ID.png and .svg (one per metric, see Chart). Load and LoadMatching
// read a stored result back, so that a reproduction reuses it.
package results

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/wcmc-project/wcmc/figure"
	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/runner"
)

// CSVHeader and SummaryHeader are the header lines of DIR/ID.csv and
// DIR/ID.summary.csv.
var (
	CSVHeader     = []string{"experiment", "scheme", "x_name", "x", "trial", "metric", "value"}
	SummaryHeader = []string{"experiment", "scheme", "x_name", "x", "metric", "mean", "q05", "q95", "n"}
)

// Write writes the outputs of res to dir (created if needed); see
// WriteFiles.
func Write(dir string, res *runner.Result) error {
	_, _, err := WriteFiles(dir, res)
	return err
}

// WriteFiles writes the outputs of res to dir, creating it, and returns the
// paths written and the figure warnings (points left off a log axis):
//
//   - ID.csv: one row per measured value (CSVHeader);
//   - ID.summary.csv: mean and 5–95% quantiles per scheme, x and metric
//     (SummaryHeader, see Summarize);
//   - ID.json: parameters, seed, trials, version, skip notes, per-task
//     info, the run's Setup report (run_info), figure warnings, start/end
//     time;
//   - the figures, as PNG, SVG and PDF (see Figures): ID for the main
//     metric, ID.<metric> for the others, and ID[.<metric>].<protocol> for
//     WVCMC under each protocol other than the main figure's.
//
// The figures' bands are 95% confidence intervals of the mean; see
// WriteFilesWith for the other choice. Floats are written with strconv 'g' -1 (exact round trip). Every file
// goes through a temporary file renamed into place. A result holding a
// non-finite value, or only one shard of a run, is refused (see
// checkWritable) before any file is written.
func WriteFiles(dir string, res *runner.Result) (files, warnings []string, err error) {
	return WriteFilesWith(dir, res, Options{})
}

// WriteFilesWith is WriteFiles with the figures drawn as opts says. The
// files are written all or nothing (atomicfile.Set): every one is written
// under a temporary name first, then all are renamed into place; if that
// fails, the files they replaced are restored. Temporary files of the same
// names that a killed write left in dir are removed first (the caller must
// be the only one writing them).
func WriteFilesWith(dir string, res *runner.Result, opts Options) (files, warnings []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	id := res.Spec.ID
	summary := Summarize(res)
	if err := checkWritable(res, summary); err != nil {
		return nil, nil, err
	}
	// The temporary files of an earlier, killed write of these names go
	// first (atomicfile.RemoveStale), so that none stays behind for good.
	names := map[string]bool{id + ".csv": true, id + ".summary.csv": true, id + ".json": true}
	figures := Figures(res.Spec, summary)
	for _, f := range figures {
		for _, ext := range figure.Formats {
			names[f.Base+"."+ext] = true
		}
	}
	stale, err := atomicfile.RemoveStale(dir, func(name string) bool { return names[name] })
	if err != nil {
		return nil, nil, fmt.Errorf("removing the temporary files of an earlier, killed write in %s: %w", dir, err)
	}
	if opts.Removed != nil {
		for _, p := range stale {
			opts.Removed(p)
		}
	}
	var set atomicfile.Set
	defer set.Abort()
	put := func(name string, write func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		if err := set.Add(path, write); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}
	digests := map[string]string{}
	// putDigested is put, recording the SHA-256 of the file in digests.
	putDigested := func(name string, write func(io.Writer) error) error {
		h := sha256.New()
		if err := put(name, func(w io.Writer) error { return write(io.MultiWriter(w, h)) }); err != nil {
			return err
		}
		digests[name] = hex.EncodeToString(h.Sum(nil))
		return nil
	}
	if err := putDigested(id+".csv", func(w io.Writer) error { return WriteCSV(w, res) }); err != nil {
		return nil, nil, err
	}
	if err := putDigested(id+".summary.csv", func(w io.Writer) error { return WriteSummaryCSV(w, id, summary) }); err != nil {
		return nil, nil, err
	}

	// Figures before the JSON so that it records their warnings.
	seen := map[string]bool{} // a scheme that learns no map is in every protocol's figure
	for _, f := range figures {
		ws, err := figure.AddTo(&set, Chart(res, summary, f, opts), filepath.Join(dir, f.Base))
		if err != nil {
			return nil, warnings, err
		}
		for _, w := range ws {
			if w = f.Metric + ": " + w; !seen[w] {
				seen[w] = true
				warnings = append(warnings, w)
			}
		}
	}
	if err := put(id+".json", func(w io.Writer) error { return writeJSON(w, res, warnings, digests) }); err != nil {
		return nil, warnings, err
	}
	// The JSON first in the list, as the files were listed before.
	paths := set.Paths()
	if err := set.Commit(); err != nil {
		return nil, warnings, err
	}
	n := len(paths)
	return append(append(paths[:2:2], paths[n-1]), paths[2:n-1]...), warnings, nil
}

// WriteCSV writes the rows of DIR/ID.csv: one per measured value
// (CSVHeader).
func WriteCSV(w io.Writer, res *runner.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	rec := make([]string, len(CSVHeader))
	for _, t := range res.Tasks {
		for _, r := range t.Rows {
			rec[0], rec[1], rec[2], rec[3] = res.Spec.ID, r.Scheme, res.Spec.X, runner.FormatX(t.X)
			rec[4], rec[5], rec[6] = strconv.Itoa(t.Trial), r.Metric, formatFloat(r.Value)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummaryCSV writes DIR/ID.summary.csv of experiment id from its
// summary rows (SummaryHeader).
func WriteSummaryCSV(w io.Writer, id string, rows []SummaryRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(SummaryHeader); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write([]string{id, r.Scheme, r.XName, runner.FormatX(r.X), r.Metric,
			formatFloat(r.Mean), formatFloat(r.Q05), formatFloat(r.Q95), strconv.Itoa(r.N)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

type infoRecord struct {
	X      float64        `json:"x"`
	Trial  int            `json:"trial"`
	Scheme string         `json:"scheme"`
	Info   map[string]any `json:"info"`
}

type runRecord struct {
	// Format is the version of this layout, resultsFormat when written;
	// absent (0) in results written before it was recorded, which may
	// lack Digests.
	Format         int               `json:"format,omitempty"`
	Experiment     string            `json:"experiment"`
	Figure         string            `json:"figure"`
	Description    string            `json:"description"`
	XName          string            `json:"x_name"`
	Params         map[string]string `json:"params"`
	Seed           uint64            `json:"seed"`
	Trials         int               `json:"trials"`
	Quick          bool              `json:"quick"`
	Version        string            `json:"version"`
	Skipped        []runner.Note     `json:"skipped"`
	FigureWarnings []string          `json:"figure_warnings"`
	Info           []infoRecord      `json:"info"`
	// RunInfo is what the run's Setup reported (runner.RunInfoer).
	RunInfo map[string]map[string]any `json:"run_info,omitempty"`
	// InputDigests is runner.Result.InputDigests: the digest of the data
	// each data-folder parameter named.
	InputDigests map[string]string `json:"input_digests,omitempty"`
	Start        time.Time         `json:"start"`
	End          time.Time         `json:"end"`
	WallSeconds  float64           `json:"wall_seconds"`
	// Sessions is runner.Result.Sessions; absent in results stored before
	// sessions were recorded.
	Sessions []sessionRecord `json:"sessions,omitempty"`
	// Digests is the SHA-256 (hex) of ID.csv and ID.summary.csv as
	// written, by file name, checked when the result is read back (see
	// Load); absent in results written before digests were recorded.
	Digests map[string]string `json:"digests,omitempty"`
}

// resultsFormat is the format of the ID.json that WriteFiles writes.
// Format 2 records the digests of ID.csv and ID.summary.csv always; the
// files before it had no format field (format 1) and may have none.
const resultsFormat = 2

// sessionRecord is a runner.Session in the results JSON.
type sessionRecord struct {
	Began       time.Time `json:"began"`
	Tasks       int       `json:"tasks"`
	WallSeconds float64   `json:"wall_seconds"`
	Machine     string    `json:"machine,omitempty"`
	Workers     int       `json:"workers,omitempty"`
}

func writeJSON(w io.Writer, res *runner.Result, figWarnings []string, digests map[string]string) error {
	rec := runRecord{
		Format: resultsFormat, Experiment: res.Spec.ID, Figure: res.Spec.Figure, Description: Describe(res.Spec, res),
		XName: res.Spec.X, Params: res.Values.Map(), Seed: res.Seed, Trials: res.Trials,
		Quick: res.Quick, Version: res.ComputedBy(), Skipped: res.Notes, FigureWarnings: figWarnings,
		Info: []infoRecord{}, Start: res.Start, End: res.End,
		WallSeconds: res.Wall.Seconds(), InputDigests: res.InputDigests, Digests: digests,
	}
	for _, ss := range res.Sessions {
		rec.Sessions = append(rec.Sessions, sessionRecord{Began: ss.Began.UTC(), Tasks: ss.Tasks, WallSeconds: ss.Wall.Seconds(), Machine: ss.Machine, Workers: ss.Workers})
	}
	if rec.Skipped == nil {
		rec.Skipped = []runner.Note{}
	}
	if rec.FigureWarnings == nil {
		rec.FigureWarnings = []string{}
	}
	for topic, m := range res.RunInfo {
		if rec.RunInfo == nil {
			rec.RunInfo = map[string]map[string]any{}
		}
		rec.RunInfo[topic] = runner.JSONSafe(m).(map[string]any)
	}
	for _, t := range res.Tasks {
		schemes := make([]string, 0, len(t.Info))
		for s := range t.Info {
			schemes = append(schemes, s)
		}
		sort.Slice(schemes, func(i, j int) bool {
			a, b := slices.Index(res.Spec.Schemes, schemes[i]), slices.Index(res.Spec.Schemes, schemes[j])
			if a != b {
				return a < b
			}
			return schemes[i] < schemes[j]
		})
		for _, s := range schemes {
			rec.Info = append(rec.Info, infoRecord{X: t.X, Trial: t.Trial, Scheme: s,
				Info: runner.JSONSafe(t.Info[s]).(map[string]any)})
		}
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return err
	}
	return bw.Flush()
}

// formatFloat writes a value with the shortest exact representation
// (strconv 'g' -1), as every results file does.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// checkWritable is the last line of defence before results files are
// written: it refuses a NaN value (naming the task, scheme and metric) —
// Plan.run already refuses them as tasks finish, so this catches only
// hand-built results — a NaN mean or quantile in the summary (+Inf and −Inf
// values averaged), and the result of one shard of a sharded run, whose
// files would look like those of a whole run.
func checkWritable(res *runner.Result, summary []SummaryRow) error {
	if !res.Shard.Whole() {
		return fmt.Errorf("experiment %s: the result holds shard %s only; merge the shards' journals (wcmc merge) to write the run's files", res.Spec.ID, res.Shard)
	}
	for _, t := range res.Tasks {
		for _, r := range t.Rows {
			if math.IsNaN(r.Value) {
				return fmt.Errorf("experiment %s: task %s=%s trial %d: scheme %q has %s = NaN; refusing to write it to a results file",
					res.Spec.ID, res.Spec.X, runner.FormatX(t.X), t.Trial, r.Scheme, r.Metric)
			}
		}
	}
	for _, r := range summary {
		for _, v := range []float64{r.Mean, r.Q05, r.Q95} {
			if math.IsNaN(v) {
				return fmt.Errorf("experiment %s: summary of scheme %q at %s=%s: %s has a NaN mean or quantile (its values include +Inf and −Inf); refusing to write it",
					res.Spec.ID, r.Scheme, r.XName, runner.FormatX(r.X), r.Metric)
			}
		}
	}
	return nil
}
