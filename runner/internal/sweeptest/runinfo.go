package sweeptest

import (
	"math"
	"math/rand/v2"

	"github.com/wcmc-project/wcmc/runner"
)

// Reporting returns spec with a Setup state that reports on itself
// (runner.RunInfoer): {"setup": {"state": S, "nan": NaN}}, S being what
// spec's Setup returned, which spec's tasks still see as Task.Shared.
func Reporting(spec runner.Spec) runner.Spec {
	setup, run := spec.Setup, spec.Run
	spec.Setup = func(v runner.Values, rng *rand.Rand) (any, error) {
		s, err := setup(v, rng)
		return reported{s}, err
	}
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		t.Shared = t.Shared.(reported).state
		return run(t)
	}
	return spec
}

type reported struct{ state any }

func (r reported) RunInfo() map[string]map[string]any {
	return map[string]map[string]any{"setup": {"state": r.state, "nan": math.NaN()}}
}
