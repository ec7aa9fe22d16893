package runner

import (
	"fmt"
	"math"
)

// checkWritable is the last line of defence before results files are
// written: it refuses a NaN value (naming the task, scheme and metric) —
// Plan.run already refuses them as tasks finish, so this catches only
// hand-built results — a NaN mean or quantile in the summary (+Inf and −Inf
// values averaged), and the result of one shard of a sharded run, whose
// files would look like those of a whole run.
func checkWritable(res *Result, summary []SummaryRow) error {
	if !res.Shard.Whole() {
		return fmt.Errorf("experiment %s: the result holds shard %s only; merge the shards' journals (wcmc merge) to write the run's files", res.Spec.ID, res.Shard)
	}
	for _, t := range res.Tasks {
		for _, r := range t.Rows {
			if math.IsNaN(r.Value) {
				return fmt.Errorf("experiment %s: task %s=%s trial %d: scheme %q has %s = NaN; refusing to write it to a results file",
					res.Spec.ID, res.Spec.X, FormatX(t.X), t.Trial, r.Scheme, r.Metric)
			}
		}
	}
	for _, r := range summary {
		for _, v := range []float64{r.Mean, r.Q05, r.Q95} {
			if math.IsNaN(v) {
				return fmt.Errorf("experiment %s: summary of scheme %q at %s=%s: %s has a NaN mean or quantile (its values include +Inf and −Inf); refusing to write it",
					res.Spec.ID, r.Scheme, r.XName, FormatX(r.X), r.Metric)
			}
		}
	}
	return nil
}
