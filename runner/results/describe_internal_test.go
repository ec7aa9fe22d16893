package results

import (
	"testing"

	"github.com/wcmc-project/wcmc/runner"
)

// A figure of another metric than the experiment's first names its own
// metric in the description, not the first one's.
func TestDescribeMetric(t *testing.T) {
	spec := runner.Spec{Metrics: []string{"err2", "kl"}}
	for _, c := range []struct{ d, metric, want string }{
		{"probit regression (d = 5, N = 8500): err2 vs SNR, T = 1000", "kl", "probit regression (d = 5, N = 8500): kl vs SNR, T = 1000"},
		{"MNIST 0 vs 1 (PCA 30): err2 vs SNR, T = 500", "kl", "MNIST 0 vs 1 (PCA 30): kl vs SNR, T = 500"},
		{"err2 vs SNR, heterogeneous Gaussian subposteriors", "kl", "kl vs SNR, heterogeneous Gaussian subposteriors"},
		{"probit regression: err2 vs SNR", "err2", "probit regression: err2 vs SNR"},
		{"no sweep named", "kl", "no sweep named"},
	} {
		if got := describeMetric(c.d, spec, c.metric); got != c.want {
			t.Errorf("describeMetric(%q, %s) = %q, want %q", c.d, c.metric, got, c.want)
		}
	}
}
