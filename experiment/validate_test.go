package experiment

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
)

// validated looks up an experiment: its Validate holds every check (the
// typed configuration's, typed.go).
func validated(t *testing.T, id string) runner.Spec {
	t.Helper()
	spec, err := Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestBadParametersNamed feeds each bad input of the issue to the real
// experiments: every one fails before any work starts, with a message
// naming the parameter.
func TestBadParametersNamed(t *testing.T) {
	cases := []struct {
		id   string
		sets []string
		want []string
	}{
		// Non-finite and out-of-range values (runner.Resolve).
		{"gauss-snr", []string{"snr_db=-10,NaN"}, []string{`"snr_db"`, "finite"}},
		{"gauss-snr", []string{"power=+Inf"}, []string{`"power"`, "finite"}},
		{"probit-snr", []string{"zeta=-Inf"}, []string{`"zeta"`, "finite"}},
		{"gauss-snr", []string{"T=0"}, []string{`"T"`, "≥ 1"}},
		{"gauss-blocks", []string{"T=7,0,20"}, []string{`"T"`, "entry 2"}},
		{"probit-snr", []string{"T=-5"}, []string{`"T"`, "≥ 1"}},
		{"gauss-snr", []string{"K=0"}, []string{`"K"`}},
		{"gauss-snr", []string{"d=0"}, []string{`"d"`}},
		{"probit-snr", []string{"holdout=0.95"}, []string{`"holdout"`, "out of range"}},
		{"gauss-snr", []string{"eta_oma=0"}, []string{`"eta_oma"`, "> 0"}},
		{"gauss-snr", []string{"fading=fast"}, []string{`"fading"`, "flat, rayleigh"}},
		{"gauss-snr", []string{"snr=5"}, []string{`"snr"`, `"snr_db"`}},
		// Relations (the specs' own Validate).
		{"probit-snr", []string{"K=2001"}, []string{"K = 2001", "N = 2000", "K ≤ N"}},
		{"probit-workers", []string{"K=5,3000"}, []string{"K = 3000"}},
		{"gauss-snr", []string{"schemes=gcmc,wvcmc"}, []string{"schemes", `"wvcmc"`}},
		{"probit-gradients", []string{"schemes=gcmc"}, []string{"schemes", `"gcmc"`}},
		{"probit-heterogeneity", []string{"zeta=0,-1"}, []string{"zeta = -1"}},
		{"mnist-snr", nil, []string{"data_dir"}},
		{"mnist-snr", []string{"data_dir=x", "class_b=0"}, []string{"class_a and class_b"}},
		// validate.go: values the specs declare without a range.
		{"gauss-snr", []string{"snr_db=-10,-3100"}, []string{"snr_db = -3100", "[-100, 100]"}},
		{"probit-snr", []string{"snr_db=500"}, []string{"snr_db = 500"}},
		{"probit-gradients", []string{"snr_db=-200"}, []string{"snr_db = -200"}},
		{"mnist-kl", []string{"data_dir=x", "snr_db=1000"}, []string{"snr_db = 1000"}},
		{"gauss-snr", []string{"power=1e-320"}, []string{"power = 1e-320"}},
		{"gauss-blocks", []string{"power=1e300"}, []string{"power = 1e+300"}},
		{"probit-snr", []string{"prior_var=1e-300"}, []string{"prior_var = 1e-300"}},
		{"gauss-snr", []string{"repetition=100000"}, []string{"repetition = 100000", "d = 5", "m_r"}},
		{"probit-highdim", []string{"repetition=200"}, []string{"repetition = 200", "d = 40"}},
		{"mnist-snr", []string{"data_dir=x", "pca_dim=1000"}, []string{"pca_dim = 1000", "784"}},
		{"mnist-snr", []string{"data_dir=x", "pca_dim=700", "repetition=6", "bias=true"}, []string{"repetition = 6", "d = 701"}},
	}
	for _, c := range cases {
		spec := validated(t, c.id)
		var setups atomic.Int32
		setup := spec.Setup
		spec.Setup = func(v runner.Values, rng *rand.Rand) (any, error) { setups.Add(1); return setup(v, rng) }
		_, err := runner.Run(context.Background(), spec, runner.Options{Quick: true, Sets: c.sets})
		if err == nil {
			t.Errorf("%s %q: no error", c.id, c.sets)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: error %q does not mention %q", c.id, c.sets, err, w)
			}
		}
		if setups.Load() != 0 {
			t.Errorf("%s %q: Setup ran before the error", c.id, c.sets)
		}
	}
	// Several problems are reported together.
	_, err := runner.NewPlan(validated(t, "gauss-snr"), runner.Options{Quick: true, Sets: []string{"snr_db=999", "power=1e99"}})
	if err == nil || !strings.Contains(err.Error(), "snr_db") || !strings.Contains(err.Error(), "power") {
		t.Errorf("two bad values: %v", err)
	}
}

// TestHeterogeneityCheckedAtSetup: a class skew that leaves a worker
// without data fails once the data exist, before the first task.
func TestHeterogeneityCheckedAtSetup(t *testing.T) {
	spec := validated(t, "probit-heterogeneity")
	var tasks atomic.Int32
	_, err := runner.Run(context.Background(), spec, runner.Options{Quick: true,
		Sets:   []string{"zeta=0,4", "K=20", "N=400", "n_test=50", "ref_samples=50"},
		OnTask: func(runner.TaskResult) error { tasks.Add(1); return nil }})
	if err == nil || !strings.Contains(err.Error(), "zeta = 4, K = 20") || !strings.Contains(err.Error(), "no data") {
		t.Fatalf("error %v", err)
	}
	if tasks.Load() != 0 {
		t.Errorf("%d tasks ran before the error", tasks.Load())
	}
}

// TestNumericEdgesWork runs the numeric edge cases of the issue on the real
// experiments (1 trial, reduced sizes): SNR from −30 to +60 dB and the
// limits ±100 dB, K = 1, covariance estimates from S ≤ d samples, worker
// shards holding a single class, the power and prior limits. Each works:
// no error (the runner refuses NaN and ±Inf, naming the task and scheme)
// and the schemes that apply report values.
func TestNumericEdgesWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the experiments")
	}
	// probitSmall returns the reduced probit settings with some replaced.
	probitSmall := func(over ...string) []string {
		sets := map[string]string{"trials": "1", "N": "200", "n_test": "50", "ref_samples": "200", "T": "100", "fresh_factor": "1", "lbfgs_iters": "30"}
		for _, o := range over {
			k, v, _ := strings.Cut(o, "=")
			sets[k] = v
		}
		var out []string
		for k, v := range sets {
			out = append(out, k+"="+v)
		}
		return out
	}
	cases := []struct {
		id      string
		sets    []string
		schemes []string // must have rows
	}{
		{"gauss-snr", []string{"trials=1", "snr_db=-100,-30,60,100"}, wirelessSchemes},
		{"gauss-snr", []string{"trials=1", "snr_db=-30,60", "fading=rayleigh"}, wirelessSchemes},
		{"gauss-snr", []string{"trials=1", "K=1"}, wirelessSchemes},
		// OMA: S = ⌊20/10⌋ = 2 ≤ d = 20; NOMA: S = 20 ≤ d.
		{"gauss-snr", []string{"trials=1", "T=20", "d=20", "snr_db=10"}, []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWGCMCNOMA, SchemeWVCMCNOMA, SchemeNoiseless}},
		{"gauss-blocks", []string{"trials=1", "T=5,10,30"}, []string{SchemeWGCMCNOMA, SchemeGCMC}},
		{"gauss-snr", []string{"trials=1", "power=1e-12", "snr_db=5"}, wirelessSchemes},
		{"gauss-snr", []string{"trials=1", "power=1e12", "snr_db=5"}, wirelessSchemes},
		{"probit-snr", probitSmall("snr_db=-30,60"), probitSchemes},
		{"probit-snr", probitSmall("K=1", "snr_db=20"), probitSchemes},
		// N = K = 20: one point, hence one class, per worker.
		{"probit-snr", probitSmall("K=20", "snr_db=20", "N=20", "T=200"), probitSchemes},
		// ζ = 3: the extreme workers hold (almost) a single class.
		{"probit-heterogeneity", probitSmall("zeta=3", "K=5"), probitSchemes},
		{"probit-snr", probitSmall("prior_var=1e-6", "snr_db=20"), probitSchemes},
		{"probit-snr", probitSmall("prior_var=1e6", "snr_db=20"), probitSchemes},
	}
	for _, c := range cases {
		res, err := runner.Run(context.Background(), validated(t, c.id), runner.Options{Seed: 3, Quick: true, Sets: c.sets})
		if err != nil {
			t.Errorf("%s %q: %v", c.id, c.sets, err)
			continue
		}
		got := map[string]bool{}
		for _, task := range res.Tasks {
			for _, r := range task.Rows {
				if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
					t.Fatalf("%s %q: %+v", c.id, c.sets, r) // unreachable: the runner refuses them
				}
				got[r.Scheme] = true
			}
		}
		for _, s := range c.schemes {
			if !got[s] {
				t.Errorf("%s %q: no rows of %s (notes: %v)", c.id, c.sets, s, res.Notes)
			}
		}
	}
}

// TestEverySpecDecodes resolves every experiment at its defaults and at
// its quick settings: each decodes its parameters into its configuration
// (a misspelt parameter name would panic here, not in a task) and writes
// its caption; a task given a shared state of another type fails with an
// error that names both types.
func TestEverySpecDecodes(t *testing.T) {
	for _, s := range All() {
		if err := s.Check(); err != nil {
			t.Errorf("%s: %v", s.ID, err)
		}
		var sets []string
		if slices.ContainsFunc(s.Params, func(p runner.Param) bool { return p.Name == "data_dir" }) {
			sets = []string{"data_dir=x"}
		}
		for _, quick := range []bool{false, true} {
			v, _, err := runner.Resolve(s, sets, quick, 1)
			if err != nil {
				t.Errorf("%s (quick %v): %v", s.ID, quick, err)
				continue
			}
			if c := s.Caption(v); !strings.Contains(c, "fading") {
				t.Errorf("%s: caption %q", s.ID, c)
			}
			task := runner.Task{Params: v, Shared: 3}
			if !s.Trajectory {
				task.Params = v.With(v.XName(), runner.FormatX(v.XList()[0]))
			}
			if _, err := s.Run(task); err == nil || !strings.Contains(err.Error(), "shared state is int") {
				t.Errorf("%s: a task with a foreign shared state: %v", s.ID, err)
			}
		}
	}
}
