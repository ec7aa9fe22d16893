package runner

import (
	"bufio"
	"encoding/csv"
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

	"wcmc/figure"
	"wcmc/internal/atomicfile"
)

// CSVHeader and SummaryHeader are the header lines of DIR/ID.csv and
// DIR/ID.summary.csv.
var (
	CSVHeader     = []string{"experiment", "scheme", "x_name", "x", "trial", "metric", "value"}
	SummaryHeader = []string{"experiment", "scheme", "x_name", "x", "metric", "mean", "q05", "q95", "n"}
)

// Write writes the outputs of res to dir (created if needed); see
// WriteFiles.
func Write(dir string, res *Result) error {
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
//     info, figure warnings, start/end time;
//   - ID.png, ID.svg: the main metric; ID.<metric>.png/.svg: the others.
//
// Floats are written with strconv 'g' -1 (exact round trip). Every file
// goes through a temporary file renamed into place. A result holding a
// non-finite value, or only one shard of a run, is refused (see
// checkWritable) before any file is written.
func WriteFiles(dir string, res *Result) (files, warnings []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	id := res.Spec.ID
	summary := Summarize(res)
	if err := checkWritable(res, summary); err != nil {
		return nil, nil, err
	}
	put := func(name string, write func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		if err := atomicfile.Write(path, write); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		files = append(files, path)
		return nil
	}
	if err := put(id+".csv", func(w io.Writer) error { return writeRows(w, res) }); err != nil {
		return files, nil, err
	}
	if err := put(id+".summary.csv", func(w io.Writer) error { return writeSummary(w, id, summary) }); err != nil {
		return files, nil, err
	}

	// Figures before the JSON so that it records their warnings.
	var figFiles []string
	for i, m := range res.Spec.Metrics {
		base := filepath.Join(dir, id)
		if i > 0 {
			base += "." + m
		}
		fs, ws, err := figure.Save(Chart(res.Spec, res.Values, summary, m), base)
		figFiles = append(figFiles, fs...)
		if err != nil {
			return append(files, figFiles...), warnings, err
		}
		for _, w := range ws {
			warnings = append(warnings, m+": "+w)
		}
	}
	if err := put(id+".json", func(w io.Writer) error { return writeJSON(w, res, warnings) }); err != nil {
		return append(files, figFiles...), warnings, err
	}
	return append(files, figFiles...), warnings, nil
}

// Chart builds the figure of one metric from summary rows: one series per
// scheme (Spec.Schemes order) of the mean with the 5–95% band, on a log y
// axis unless the metric is in Spec.LinearY.
func Chart(spec Spec, v Values, summary []SummaryRow, metric string) figure.Chart {
	title := spec.ID
	if spec.Figure != "" {
		title = spec.Figure + ": " + spec.ID
	}
	if metric != spec.Metrics[0] {
		title += " (" + metric + ")"
	}
	if spec.Caption != nil {
		if c := spec.Caption(v); c != "" {
			title += "\n" + c
		}
	}
	ylabel := spec.MetricLabel[metric]
	if ylabel == "" {
		ylabel = metric
	}
	xlabel := spec.XLabel
	if xlabel == "" {
		xlabel = spec.X
	}
	c := figure.Chart{Title: title, XLabel: xlabel, YLabel: ylabel, LogX: spec.LogX,
		LogY: !slices.Contains(spec.LinearY, metric)}
	for _, s := range spec.Schemes {
		var ser figure.Series
		for _, r := range summary {
			if r.Scheme == s && r.Metric == metric {
				ser.X = append(ser.X, r.X)
				ser.Mean = append(ser.Mean, r.Mean)
				ser.Lo = append(ser.Lo, r.Q05)
				ser.Hi = append(ser.Hi, r.Q95)
			}
		}
		if len(ser.X) > 0 {
			ser.Name = s
			c.Series = append(c.Series, ser)
		}
	}
	return c
}

func writeRows(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	rec := make([]string, len(CSVHeader))
	for _, t := range res.Tasks {
		for _, r := range t.Rows {
			rec[0], rec[1], rec[2], rec[3] = res.Spec.ID, r.Scheme, res.Spec.X, FormatX(t.X)
			rec[4], rec[5], rec[6] = strconv.Itoa(t.Trial), r.Metric, fmtF(r.Value)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeSummary(w io.Writer, id string, rows []SummaryRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(SummaryHeader); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write([]string{id, r.Scheme, r.XName, FormatX(r.X), r.Metric,
			fmtF(r.Mean), fmtF(r.Q05), fmtF(r.Q95), strconv.Itoa(r.N)}); err != nil {
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
	Experiment     string            `json:"experiment"`
	Figure         string            `json:"figure"`
	Description    string            `json:"description"`
	XName          string            `json:"x_name"`
	Params         map[string]string `json:"params"`
	Seed           uint64            `json:"seed"`
	Trials         int               `json:"trials"`
	Quick          bool              `json:"quick"`
	Version        string            `json:"version"`
	Skipped        []Note            `json:"skipped"`
	FigureWarnings []string          `json:"figure_warnings"`
	Info           []infoRecord      `json:"info"`
	Start          time.Time         `json:"start"`
	End            time.Time         `json:"end"`
	WallSeconds    float64           `json:"wall_seconds"`
}

func writeJSON(w io.Writer, res *Result, figWarnings []string) error {
	rec := runRecord{
		Experiment: res.Spec.ID, Figure: res.Spec.Figure, Description: res.Spec.Description,
		XName: res.Spec.X, Params: res.Values.Map(), Seed: res.Seed, Trials: res.Trials,
		Quick: res.Quick, Version: Version, Skipped: res.Notes, FigureWarnings: figWarnings,
		Info: []infoRecord{}, Start: res.Start, End: res.End,
		WallSeconds: res.Wall.Seconds(),
	}
	if rec.Skipped == nil {
		rec.Skipped = []Note{}
	}
	if rec.FigureWarnings == nil {
		rec.FigureWarnings = []string{}
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
				Info: jsonSafe(t.Info[s]).(map[string]any)})
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

// jsonSafe replaces non-finite floats (which JSON cannot hold) by the
// strings "NaN", "+Inf", "-Inf", recursing into maps and slices.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmtF(x)
		}
	case float32:
		return jsonSafe(float64(x))
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonSafe(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonSafe(e)
		}
		return out
	case []float64:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonSafe(e)
		}
		return out
	}
	return v
}
