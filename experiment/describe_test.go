package experiment

import (
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
)

// valuesOf resolves spec's values without its Validate (which needs
// input data for the MNIST experiments).
func valuesOf(t *testing.T, spec runner.Spec, quick bool, sets ...string) runner.Values {
	t.Helper()
	spec.Validate = nil
	v, _, err := runner.Resolve(spec, sets, quick, 0)
	if err != nil {
		t.Fatalf("%s: %v", spec.ID, err)
	}
	return v
}

// Every description is filled in: at the defaults it is Description, at
// a run's values it names those values.
func TestDescriptionsFollowTheValues(t *testing.T) {
	for _, spec := range All() {
		if spec.Describe == nil || strings.ContainsAny(spec.Description, "{}") {
			t.Errorf("%s: description %q not filled in", spec.ID, spec.Description)
			continue
		}
		if got := spec.Describe(valuesOf(t, spec, false)); got != spec.Description {
			t.Errorf("%s: at the defaults %q, want %q", spec.ID, got, spec.Description)
		}
	}
	for _, c := range []struct {
		id    string
		quick bool
		sets  []string
		want  string
	}{
		{"probit-highdim", true, nil, "probit regression, d = 40, N = 3000: err2 vs SNR, T = 400, K = 10"},
		{"gauss-snr", true, []string{"T=100"}, "err2 vs SNR, heterogeneous Gaussian subposteriors, T = 100"},
		{"mnist-gradients", true, []string{"snr_db=10"}, "MNIST 0 vs 1 (PCA 10): err2 vs gradients computed at the server, WVCMC (S = 50, 10 dB, K = 10) vs SGLD"},
	} {
		spec, err := Lookup(c.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.Describe(valuesOf(t, spec, c.quick, c.sets...)); got != c.want {
			t.Errorf("%s quick=%v %v: %q, want %q", c.id, c.quick, c.sets, got, c.want)
		}
	}
}

// A template naming no parameter, or with a stray brace, is refused.
func TestDescribeRefusesBadTemplates(t *testing.T) {
	for _, tmpl := range []string{"T = {T}, {nope}", "T = {T", "a {} b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("template %q accepted", tmpl)
				}
			}()
			describe(runner.Spec{ID: "x", Description: tmpl, Params: []runner.Param{{Name: "T", Default: "1"}}})
		}()
	}
}
