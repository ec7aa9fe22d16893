package experiment

import (
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// rowsByName maps "scheme|metric|point|trial|x" to the value.
func rowsByName(res *runner.Result) map[string]float64 {
	out := map[string]float64{}
	for _, task := range res.Tasks {
		for _, r := range task.Rows {
			key := strings.Join([]string{r.Scheme, r.Metric, runner.FormatX(task.X), runner.FormatX(float64(task.Trial)), runner.FormatX(r.X)}, "|")
			out[key] = r.Value
		}
	}
	return out
}

// rename keeps the rows of one result name, renamed to another.
func rename(rows map[string]float64, from, to string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range rows {
		if name, rest, _ := strings.Cut(k, "|"); name == from {
			out[to+"|"+rest] = v
		}
	}
	return out
}

func sameRows(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: no rows to compare", what)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s = %v, want %v", what, k, g, w)
		}
	}
}

func TestProtocolsArePairedAndIndependent(t *testing.T) {
	// Evaluating more protocols changes no number of the others: every
	// protocol sees the same worker samples and signals, and the
	// non-variational schemes are computed once.
	only := rowsByName(run(t, "gauss-snr", 0, "trials=2", "snr_db=0,20"))
	all := rowsByName(run(t, "gauss-snr", 0, "trials=2", "snr_db=0,20", "protocols=converged,default,paper"))
	for k, v := range only {
		if all[k] != v {
			t.Errorf("%s: %v alone, %v with every protocol", k, v, all[k])
		}
	}
	paperAlone := rowsByName(run(t, "gauss-snr", 0, "trials=2", "snr_db=0,20", "protocols=paper"))
	for _, s := range scheme.Variational {
		name := scheme.Under(s, scheme.Paper)
		sameRows(t, name+" alone vs with others", rename(paperAlone, name, name), rename(all, name, name))
	}
}

func TestPaperProtocolIsThePapersSGD(t *testing.T) {
	// On Gaussian data the paper's SGD runs full batch (no randomness), so
	// the paper protocol equals the default protocol configured as the
	// paper's SGD with the same steps.
	sets := []string{"trials=2", "snr_db=0,20", "eta_oma=2e-3", "iters_noma=20"}
	paper := rowsByName(run(t, "gauss-snr", 0, append(sets, "protocols=paper")...))
	sgd := rowsByName(run(t, "gauss-snr", 0, append(sets, "optimizer=sgd", "holdout=0")...))
	for _, s := range scheme.Variational {
		sameRows(t, s, rename(paper, scheme.Under(s, scheme.Paper), s), rename(sgd, s, s))
	}
}

func TestProtocolsRejected(t *testing.T) {
	spec, err := Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ set, want string }{
		{"protocols=fast", `unknown protocol "fast"`},
		{"protocols=paper,paper", "paper is listed twice"},
		{"protocols=", `unknown protocol ""`},
	} {
		_, err := runner.NewPlan(spec, runner.Options{Quick: true, Sets: []string{c.set}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.set, err, c.want)
		}
	}
}

func TestGradientProtocolsNamed(t *testing.T) {
	res := run(t, "probit-gradients", 0, "trials=1", "gradients=1e5,1e6", "N=500", "ref_samples=500", "sgld_burnin=100",
		"protocols=default,paper")
	got := map[string]bool{}
	for _, task := range res.Tasks {
		for _, r := range task.Rows {
			got[r.Scheme] = true
		}
	}
	for _, s := range scheme.Variational {
		for _, p := range []scheme.Protocol{scheme.Default, scheme.Paper} {
			if !got[scheme.Under(s, p)] {
				t.Errorf("no rows of %s", scheme.Under(s, p))
			}
		}
		if got[scheme.Under(s, scheme.Converged)] {
			t.Errorf("rows of %s, which was not asked for", scheme.Under(s, scheme.Converged))
		}
	}
}

func TestCaptionNamesProtocols(t *testing.T) {
	spec, err := Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ set, want, not string }{
		{"protocols=default", "WVCMC: L-BFGS, held out 0.2;", "protocols"},
		{"protocols=converged,paper,default", "protocols paper, converged, default (default = L-BFGS, held out 0.2);", ""},
	} {
		plan, err := runner.NewPlan(spec, runner.Options{Quick: true, Sets: []string{c.set}})
		if err != nil {
			t.Fatal(err)
		}
		got := spec.Caption(plan.Values)
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s: caption %q, want it to contain %q", c.set, got, c.want)
		}
	}
}
