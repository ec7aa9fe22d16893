package runner_test

import (
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
)

// Fuzz tests: none of the parsers of user input or files may panic, and
// what they accept must be consistent. Run one with, e.g.,
//
//	go test ./runner -run '^$' -fuzz FuzzResolve -fuzztime 30s
//
// Without -fuzz, `go test` runs the seed corpora below.

func FuzzParseSet(f *testing.F) {
	for _, s := range []string{"n=3", " n = 3 ", "x=1,2,3", "=3", "n=", "n", "", "a=b=c", "trials=2", "\x00=\xff", "n=1e4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, value, err := runner.ParseSet(s)
		if err != nil {
			return
		}
		if name == "" || name != strings.TrimSpace(name) || value != strings.TrimSpace(value) {
			t.Fatalf("ParseSet(%q) = %q, %q", s, name, value)
		}
		if !strings.Contains(s, "=") {
			t.Fatalf("ParseSet(%q) accepted a set without '='", s)
		}
	})
}

func FuzzResolve(f *testing.F) {
	for _, s := range sweeptest.ResolveSeeds {
		f.Add(s[0], s[1], s[2] == "true", 0)
	}
	spec := sweeptest.Noise()
	walk := sweeptest.Walk()
	f.Fuzz(func(t *testing.T, a, b string, quick bool, trials int) {
		for _, sp := range []runner.Spec{spec, walk} {
			v, n, err := runner.Resolve(sp, []string{a, b}, quick, trials)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("empty error")
				}
				continue
			}
			if n < 1 {
				t.Fatalf("sets %q %q: %d trials accepted", a, b, n)
			}
			// What Resolve accepts, the getters read without panicking
			// and a plan lists.
			xs := v.XList()
			if len(xs) == 0 {
				t.Fatal("empty sweep accepted")
			}
			for _, name := range v.Names() {
				_ = v.Raw(name)
			}
			if sp.ID == "noise" {
				_ = v.Float("scale") + float64(v.Int("n"))
				_, _ = v.String("mode"), v.Bool("verbose")
			}
			if n <= 1000 {
				plan := &runner.Plan{Spec: sp, Values: v, Trials: n, Tasks: runner.Tasks(v, n)}
				if len(plan.Tasks) != len(xs)*n {
					t.Fatalf("%d tasks for %d points × %d trials", len(plan.Tasks), len(xs), n)
				}
			}
		}
	})
}
