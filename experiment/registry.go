// Package experiment holds the paper's experiments (Section VI) as runner
// specs: parameters with the paper's defaults, the sweep, the schemes, and
// the per-task work that composes models, samplers, the channel and the
// consensus schemes.
package experiment

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

var registry = map[string]runner.Spec{}

// The experiments' registrations, listed here once: each adds the specs of
// one file (a new experiment adds its function to this list).
func init() {
	for _, add := range []func(){registerGauss, registerGradients, registerProbit, registerMNIST, registerBeyond, registerCentring} {
		add()
	}
}

// quickConvergedIters caps the converged protocol in --quick runs, which
// are smoke tests: at the cap its status says "iteration cap", not
// converged.
const quickConvergedIters = "1000"

// register stores s with its description filled in (see describe), the
// --quick cap of the converged protocol, when s has the parameter digital,
// the digital baselines among the schemes it may report (scheme.Digital),
// and when it runs WGCMC the CSI-aware schemes (scheme.CSIAware), plotted
// last.
func register(s runner.Spec) {
	s = describe(s)
	if slices.ContainsFunc(s.Params, func(p runner.Param) bool { return p.Name == "digital" }) {
		for _, d := range scheme.Digital {
			if !slices.Contains(s.Schemes, d) {
				s.Schemes = append(slices.Clone(s.Schemes), d)
			}
		}
	}
	if slices.Contains(s.Schemes, scheme.WGCMCOMA) {
		for _, a := range scheme.CSIAware {
			if !slices.Contains(s.Schemes, a) {
				s.Schemes = append(slices.Clone(s.Schemes), a)
			}
		}
	}
	if slices.ContainsFunc(s.Params, func(p runner.Param) bool { return p.Name == "converged_iters" }) {
		if _, ok := s.Quick["converged_iters"]; !ok {
			s.Quick = maps.Clone(s.Quick)
			s.Quick["converged_iters"] = quickConvergedIters
		}
	}
	registry[s.ID] = s
}

// placeholder is a parameter's place in a description template: {name}.
var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// describe reads s.Description as a template in which {name} stands for
// the value of parameter name, and returns s with Description filled in
// at the defaults and Describe filling it in at a run's values, so that a
// run's description names its own sizes. It panics on a placeholder that
// names no parameter, or a brace outside a placeholder.
func describe(s runner.Spec) runner.Spec {
	tmpl := s.Description
	defaults := map[string]string{}
	for _, p := range s.Params {
		defaults[p.Name] = p.Default
	}
	for _, m := range placeholder.FindAllStringSubmatch(tmpl, -1) {
		if _, ok := defaults[m[1]]; !ok {
			panic(fmt.Sprintf("experiment %s: the description names {%s}, which is not a parameter", s.ID, m[1]))
		}
	}
	if strings.ContainsAny(placeholder.ReplaceAllString(tmpl, ""), "{}") {
		panic(fmt.Sprintf("experiment %s: a brace outside a {parameter} in the description %q", s.ID, tmpl))
	}
	s.Description = expand(tmpl, func(name string) string { return defaults[name] })
	s.Describe = func(v runner.Values) string { return expand(tmpl, v.Raw) }
	return s
}

// expand replaces every {name} of tmpl with value(name).
func expand(tmpl string, value func(name string) string) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string { return value(m[1 : len(m)-1]) })
}

// All returns every experiment, ordered by ID.
func All() []runner.Spec {
	out := make([]runner.Spec, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the experiment with the given ID.
func Lookup(id string) (runner.Spec, error) {
	s, ok := registry[id]
	if !ok {
		return runner.Spec{}, fmt.Errorf("unknown experiment %q (known: %v; see `wcmc list`)", id, slices.Sorted(maps.Keys(registry)))
	}
	return s, nil
}
