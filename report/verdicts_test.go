package report

// Tests of the claims' verdicts as the report holds them: evaluated per
// protocol, side by side, in claims.csv and in the verdict table.

import (
	"bytes"
	"encoding/csv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
	"github.com/wcmc-project/wcmc/scheme"
)

func TestNewEvaluatesClaims(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	want, outcomes := 0, 0
	for _, run := range runs {
		for _, c := range claims.For(run.Spec.ID) {
			if c.Addition {
				continue
			}
			want++
			// A claim about WVCMC is judged under two protocols; one that
			// compares only schemes that learn no map, once.
			if c.MapFree {
				outcomes++
			} else {
				outcomes += 2
			}
		}
	}
	if r.NumClaims() != want {
		t.Errorf("%d claims, want %d", r.NumClaims(), want)
	}
	total := 0
	for _, p := range judgedUnder {
		total += r.Totals().Judged(p)
	}
	if total != outcomes {
		t.Errorf("totals add up to %d, want %d", total, outcomes)
	}
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			if len(c.Outcomes) != len(c.Claim.Protocols()) {
				t.Errorf("%s: %d outcomes for protocols %v", c.Claim.ID, len(c.Outcomes), c.Claim.Protocols())
			}
			for i, o := range c.Outcomes {
				if o.Protocol != c.Claim.Protocols()[i] {
					t.Errorf("%s: outcome %d under %s, want %s", c.Claim.ID, i, o.Protocol, c.Claim.Protocols()[i])
				}
			}
		}
		if s.Result == nil {
			for _, c := range s.Claims {
				for _, o := range c.Outcomes {
					if o.Verdict != claims.NotEvaluated || !strings.Contains(o.Reason, "experiment not run") {
						t.Errorf("%s of a run that did not happen: %v %q", c.Claim.ID, o.Verdict, o.Reason)
					}
				}
			}
			continue
		}
		if len(s.Figures) != len(s.Spec.Metrics) {
			t.Errorf("%s: %d figures, want %d", s.Spec.ID, len(s.Figures), len(s.Spec.Metrics))
		}
		for _, f := range s.Figures {
			if f.SVG == nil {
				t.Errorf("%s: figure %s unusable: %s", s.Spec.ID, f.File, f.Err)
			}
		}
		for _, c := range s.Claims {
			for _, o := range c.Outcomes {
				if o.Reason == "" {
					t.Errorf("%s under %s: empty reason", c.Claim.ID, o.Protocol)
				}
			}
		}
	}
}

// synthetic returns a gauss-snr result of n trials whose per-trial values
// make fig3-wvcmc-best hold under the paper and default protocols and
// fail under the converged one: the WVCMC rows of each protocol have their
// own means (log-normal trials, σ = 0.1, shared per trial).
func synthetic(t *testing.T, n int) (runner.Spec, *runner.Result) {
	t.Helper()
	spec, err := experiment.Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	v, trials, err := runner.Resolve(spec, nil, false, n)
	if err != nil {
		t.Fatal(err)
	}
	res := &runner.Result{Spec: spec, Values: v, Trials: trials, Seed: 1}
	mean := map[string]float64{"gcmc": 0.5, "wgcmc-oma": 0.3, "wgcmc-noma": 0.4, "cmc-noiseless": 0.1}
	rng := rand.New(rand.NewPCG(1, 2))
	for p, x := range v.XList() {
		for tr := range trials {
			task := runner.TaskResult{TaskKey: runner.TaskKey{Point: p, X: x, Trial: tr}}
			u := rng.NormFloat64()
			for _, m := range spec.Metrics {
				for _, s := range slices.Sorted(maps.Keys(mean)) {
					mu := mean[s]
					task.Rows = append(task.Rows, runner.Row{Scheme: s, Metric: m, Value: mu * math.Exp(0.07*u+0.07*rng.NormFloat64())})
				}
				for _, pr := range scheme.Protocols {
					mu := 0.05
					if pr == scheme.Converged {
						mu = 2
					}
					for _, s := range scheme.Variational {
						task.Rows = append(task.Rows, runner.Row{Scheme: scheme.Under(s, pr), Metric: m, Value: mu * math.Exp(0.07*u+0.07*rng.NormFloat64())})
					}
				}
			}
			// Rows in a fixed order, whatever the map's.
			slices.SortFunc(task.Rows, func(a, b runner.Row) int { return strings.Compare(a.Scheme+a.Metric, b.Scheme+b.Metric) })
			res.Tasks = append(res.Tasks, task)
		}
	}
	return spec, res
}

// Per claim, the verdict under each protocol is shown side by side, and
// claims.csv has one row per claim and protocol with the deciding numbers.
func TestProtocolsSideBySide(t *testing.T) {
	spec, res := synthetic(t, 40)
	r := New(t.TempDir(), testMeta, []Run{{Spec: spec, Result: res}})
	want := map[scheme.Protocol]claims.Verdict{scheme.Paper: claims.Holds, scheme.Converged: claims.Fails, scheme.Default: claims.Holds}
	for _, c := range r.Sections[0].Claims {
		if c.Claim.ID != "fig3-wvcmc-best" && c.Claim.ID != "fig3-wvcmc-best-fresh" {
			continue
		}
		for _, o := range c.Outcomes {
			if o.Verdict != want[o.Protocol] {
				t.Errorf("%s under %s: %v (%s), want %v", c.Claim.ID, o.Protocol, o.Verdict, o.Reason, want[o.Protocol])
			}
		}
	}
	md, _ := render(t, r)
	if !strings.Contains(string(md), "| [fig3-wvcmc-best](#fig3-wvcmc-best) | Fig. 3 | err2 | **holds** | **fails** | – |") ||
		!strings.Contains(string(md), "| [fig3-wvcmc-best-fresh](#fig3-wvcmc-best-fresh) | Fig. 3 | err2_fresh | – | **fails** | **holds** |") {
		t.Errorf("the claims table does not show the verdicts side by side:\n%s", md[:min(len(md), 4000)])
	}

	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != "claim,figure,metric,source,protocol,verdict,estimate,ci_low,ci_high,trials,other_reading,other_verdict" {
		t.Fatalf("header %q", got)
	}
	n := 0
	for _, c := range r.Sections[0].Claims {
		n += len(c.Claim.Protocols())
	}
	if len(rows)-1 != n {
		t.Errorf("%d rows, want one per claim and protocol (%d)", len(rows)-1, n)
	}
	found := 0
	for _, row := range rows[1:] {
		if !slices.Contains([]string{"holds", "fails", "inconclusive", "not-evaluated"}, row[5]) {
			t.Errorf("verdict %q", row[5])
		}
		c, _ := claims.Lookup(row[0])
		if (c.Other == nil) != (row[10] == "") || (row[10] == "") != (row[11] == "") {
			t.Errorf("%s %s: other reading %q, verdict %q", row[0], row[4], row[10], row[11])
		}
		if (row[4] == "any") != c.MapFree {
			t.Errorf("%s judged under %s, map-free %v", row[0], row[4], c.MapFree)
		}
		if row[0] != "fig3-wvcmc-best" {
			continue
		}
		found++
		est, _ := strconv.ParseFloat(row[6], 64)
		lo, _ := strconv.ParseFloat(row[7], 64)
		hi, _ := strconv.ParseFloat(row[8], 64)
		// The deciding ratio: WVCMC at 0.05 against gcmc, wgcmc at ≥ 0.3
		// holds by ≥ 6×; at 2 it fails against wgcmc-oma at 0.3 by ≤ 0.15×.
		switch row[4] {
		case "paper":
			if row[5] != "holds" || !(lo > 1 && lo <= est && est <= hi && math.Abs(est-6) < 1) || row[9] != "40" || row[3] != "paper" {
				t.Errorf("paper row %v", row)
			}
		case "converged":
			if row[5] != "fails" || !(hi < 1 && lo <= est && est <= hi && math.Abs(est-0.15) < 0.03) {
				t.Errorf("converged row %v", row)
			}
		default:
			t.Errorf("fig3-wvcmc-best judged under %s", row[4])
		}
	}
	if found != 2 {
		t.Errorf("fig3-wvcmc-best has %d rows, want 2", found)
	}
}

// A run without a protocol's WVCMC rows leaves the claims about WVCMC
// under that protocol not evaluated, saying so.
func TestProtocolNotRun(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	for _, s := range r.Sections {
		if s.Result == nil || claims.HasProtocol(s.Result, scheme.Paper) {
			continue
		}
		for _, c := range s.Claims {
			o, ok := c.Under(scheme.Paper)
			if ok && strings.Contains(c.Claim.ID, "wvcmc") && (o.Verdict != claims.NotEvaluated || !strings.Contains(o.Reason, "without the paper protocol")) {
				t.Errorf("%s under paper, not run: %v (%s)", c.Claim.ID, o.Verdict, o.Reason)
			}
		}
	}
}

// Claims read the per-trial values of ID.csv: a result loaded back from
// its files gives the same outcomes as the run that wrote them.
func TestClaimsFromStoredResults(t *testing.T) {
	dir, runs := quickRuns(t)
	var loaded []Run
	for _, run := range runs {
		if run.Result == nil {
			continue
		}
		res, err := results.Load(dir, run.Spec)
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, Run{Spec: run.Spec, Result: res})
	}
	a := New(dir, testMeta, runs[:len(loaded)])
	b := New(dir, testMeta, loaded)
	var ca, cb bytes.Buffer
	if err := a.WriteCSV(&ca); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteCSV(&cb); err != nil {
		t.Fatal(err)
	}
	if ca.String() != cb.String() {
		t.Errorf("claims from stored results differ:\n%s\nvs\n%s", ca.String(), cb.String())
	}
	for i, s := range a.Sections {
		for j, c := range s.Claims {
			for k, o := range c.Outcomes {
				if o.Reason != b.Sections[i].Claims[j].Outcomes[k].Reason {
					t.Errorf("%s under %s: %q vs %q", c.Claim.ID, o.Protocol, o.Reason, b.Sections[i].Claims[j].Outcomes[k].Reason)
				}
			}
		}
	}
}

func TestVerdictTable(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	var b bytes.Buffer
	if err := r.WriteVerdictTable(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, run := range runs {
		if !strings.Contains(s, "| "+run.Spec.ID) {
			t.Errorf("no row for %s:\n%s", run.Spec.ID, s)
		}
	}
	if !strings.Contains(s, "mnist-snr (not run)") || !strings.Contains(s, "**total**") {
		t.Errorf("table:\n%s", s)
	}
}
