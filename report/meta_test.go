package report

import (
	"slices"
	"strings"
	"testing"
)

// TestMetaLinesSayWhoComputedWhatAndWhen: the settings name the version
// that computed each result (a reused result records its own) and the one
// that drew the report, "dev" as `wcmc version` names it; the generation
// line says whether its wall time computed results or only drew the report.
func TestMetaLinesSayWhoComputedWhatAndWhen(t *testing.T) {
	dir, runs := quickRuns(t)
	// stored returns the runs with the results of the first n read from
	// files written by version v.
	stored := func(v string, n int) []Run {
		out := slices.Clone(runs)
		for i := range n {
			res := *out[i].Result
			res.Version = v
			out[i].Result = &res
		}
		return out
	}
	for _, c := range []struct {
		name      string
		version   string
		runs      []Run
		versions  []string
		generated string
	}{
		{"computed here", "v2", stored("", 0), []string{"wcmc v2"},
			"Generated 2030-01-02T03:04:05Z; this invocation took 1.5 s of wall time, computing the results of 2 experiments."},
		{"stored by the same version", "v2", stored("v2", 2), []string{"wcmc v2"},
			"Generated 2030-01-02T03:04:05Z from the stored results of 2 experiments in 1.5 s of wall time, reading them and judging the claims: nothing was computed."},
		{"a build without its commit", "dev", stored("", 0), []string{"wcmc dev (no commit recorded)"}, ""},
		{"reused from another version", "dev", stored("v1", 2),
			[]string{"results: gauss-blocks, gauss-snr computed by wcmc v1", "report drawn by wcmc dev (no commit recorded)"},
			"Generated 2030-01-02T03:04:05Z from the stored results of 2 experiments in 1.5 s of wall time, reading them and judging the claims: nothing was computed."},
		{"partly reused", "v2", stored("v1", 1),
			[]string{"results: gauss-blocks computed by wcmc v1; gauss-snr by wcmc v2", "report drawn by wcmc v2"},
			"Generated 2030-01-02T03:04:05Z; this invocation took 1.5 s of wall time, computing the results of gauss-snr and reusing the stored results of gauss-blocks."},
	} {
		meta := testMeta
		meta.Version = c.version
		r := New(dir, meta, c.runs)
		if got := r.settings(); !slices.Equal(got[:len(c.versions)], c.versions) || !strings.HasPrefix(got[len(c.versions)], "seed ") {
			t.Errorf("%s: settings begin %q, want %q then the seed", c.name, got[:len(c.versions)+1], c.versions)
		}
		if got := r.Meta.generatedLine(); c.generated != "" && got != c.generated {
			t.Errorf("%s: generated line\n%q\nwant\n%q", c.name, got, c.generated)
		}
		// The results' own computing time, whoever computed them.
		if got := r.computeLine(); !strings.HasPrefix(got, "Computing the results took ") || !strings.Contains(got, "the 2 experiments run, as recorded when each was computed") {
			t.Errorf("%s: compute line %q", c.name, got)
		}
	}
}
