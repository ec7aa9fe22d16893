package runner

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// trialsKey is the reserved name that sets the number of trials in
// Spec.Quick and in --set.
const trialsKey = "trials"

// Values is the parsed, validated parameter set of a run. A Values is
// immutable: With returns a modified copy. The getters panic when the name
// is not a parameter of the spec or has another kind (programmer errors).
type Values struct {
	params []Param
	index  map[string]int
	raw    []string // validated, normalised value of each param
	x      string   // name of the swept parameter
}

func (v Values) lookup(name string) (Param, string) {
	i, ok := v.index[name]
	if !ok {
		panic(fmt.Sprintf("runner: unknown parameter %q", name))
	}
	return v.params[i], v.raw[i]
}

func (v Values) scalar(name string) (Param, string) {
	p, s := v.lookup(name)
	if name == v.x && strings.Contains(s, ",") {
		panic(fmt.Sprintf("runner: parameter %q holds the sweep list %q; use XList or Task.X", name, s))
	}
	return p, s
}

// Int returns the value of the Int parameter name.
func (v Values) Int(name string) int {
	p, s := v.scalar(name)
	if p.Kind != Int {
		panic(fmt.Sprintf("runner: parameter %q is not an Int", name))
	}
	n, err := parseInt(s)
	if err != nil {
		panic(fmt.Sprintf("runner: parameter %q: %v", name, err))
	}
	return n
}

// Float returns the value of the Float (or Int) parameter name.
func (v Values) Float(name string) float64 {
	p, s := v.scalar(name)
	if p.Kind != Float && p.Kind != Int {
		panic(fmt.Sprintf("runner: parameter %q is not a Float", name))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(fmt.Sprintf("runner: parameter %q: %v", name, err))
	}
	return f
}

// String returns the value of the String parameter name.
func (v Values) String(name string) string {
	p, s := v.lookup(name)
	if p.Kind != String {
		panic(fmt.Sprintf("runner: parameter %q is not a String", name))
	}
	return s
}

// Bool returns the value of the Bool parameter name.
func (v Values) Bool(name string) bool {
	p, s := v.lookup(name)
	if p.Kind != Bool {
		panic(fmt.Sprintf("runner: parameter %q is not a Bool", name))
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		panic(fmt.Sprintf("runner: parameter %q: %v", name, err))
	}
	return b
}

// Raw returns the value of parameter name as written (normalised: a sweep
// list has no spaces).
func (v Values) Raw(name string) string {
	_, s := v.lookup(name)
	return s
}

// XName returns the name of the swept parameter.
func (v Values) XName() string { return v.x }

// XList returns the sweep points: the value of the swept parameter parsed
// as a list, in the order given.
func (v Values) XList() []float64 {
	_, s := v.lookup(v.x)
	parts := strings.Split(s, ",")
	out := make([]float64, len(parts))
	for i, p := range parts {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			panic(fmt.Sprintf("runner: parameter %q: %v", v.x, err))
		}
		out[i] = f
	}
	return out
}

// With returns a copy of v with parameter name set to raw. It does not
// validate raw; it panics if name is unknown.
func (v Values) With(name, raw string) Values {
	i, ok := v.index[name]
	if !ok {
		panic(fmt.Sprintf("runner: unknown parameter %q", name))
	}
	w := v
	w.raw = slices.Clone(v.raw)
	w.raw[i] = raw
	return w
}

// Map returns the parameter values by name, as recorded in the run's JSON.
func (v Values) Map() map[string]string {
	m := make(map[string]string, len(v.raw))
	for i, p := range v.params {
		m[p.Name] = v.raw[i]
	}
	return m
}

// Names returns the parameter names in declaration order.
func (v Values) Names() []string {
	out := make([]string, len(v.params))
	for i, p := range v.params {
		out[i] = p.Name
	}
	return out
}

// ParseSet splits a --set argument "name=value". Spaces around the name
// are ignored.
func ParseSet(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("--set %q: want name=value", s)
	}
	return name, strings.TrimSpace(value), nil
}

// Resolve returns the validated parameter set and trial count of a run of
// spec. Values start from the defaults, then take spec.Quick when quick,
// then the user's sets ("name=value", see ParseSet; "trials=N" sets the
// trial count); trials > 0 overrides the trial count last. Every parameter
// is parsed and range-checked (all problems are reported together, each
// naming its parameter), then spec.Validate runs.
func Resolve(spec Spec, sets []string, quick bool, trials int) (Values, int, error) {
	if err := spec.Check(); err != nil {
		return Values{}, 0, err
	}
	v := Values{params: spec.Params, index: make(map[string]int, len(spec.Params)), x: spec.X}
	v.raw = make([]string, len(spec.Params))
	names := make([]string, len(spec.Params))
	for i, p := range spec.Params {
		v.index[p.Name] = i
		v.raw[i] = p.Default
		names[i] = p.Name
	}
	nTrials := strconv.Itoa(spec.Trials)
	trialsFrom := "the spec default"

	if quick {
		keys := make([]string, 0, len(spec.Quick))
		for k := range spec.Quick {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == trialsKey {
				nTrials, trialsFrom = spec.Quick[k], "the quick settings"
				continue
			}
			v.raw[v.index[k]] = spec.Quick[k] // Check verified k exists
		}
	}

	var errs []error
	seen := map[string]bool{}
	for _, s := range sets {
		name, value, err := ParseSet(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[name] {
			errs = append(errs, fmt.Errorf("parameter %q is set twice", name))
			continue
		}
		seen[name] = true
		if name == trialsKey {
			nTrials, trialsFrom = value, "--set"
			continue
		}
		i, ok := v.index[name]
		if !ok {
			msg := fmt.Sprintf("unknown parameter %q for experiment %s", name, spec.ID)
			if sug := Suggest(name, append(names, trialsKey)); len(sug) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(quoteAll(sug), " or "))
			}
			errs = append(errs, fmt.Errorf("%s; see `wcmc show %s`", msg, spec.ID))
			continue
		}
		v.raw[i] = value
	}

	for i, p := range spec.Params {
		norm, err := normalise(p, v.raw[i], p.Name == spec.X)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.raw[i] = norm
	}

	n, err := parseInt(nTrials)
	switch {
	case trials < 0:
		errs = append(errs, fmt.Errorf("trials must be ≥ 1, got %d", trials))
	case trials > 0:
		n = trials
	case err != nil:
		errs = append(errs, fmt.Errorf("trials (from %s): %q is not an integer", trialsFrom, nTrials))
	case n < 1:
		errs = append(errs, fmt.Errorf("trials (from %s) must be ≥ 1, got %d", trialsFrom, n))
	}
	if len(errs) > 0 {
		return Values{}, 0, errors.Join(errs...)
	}
	if spec.Validate != nil {
		if err := spec.Validate(v); err != nil {
			return Values{}, 0, fmt.Errorf("experiment %s: %w", spec.ID, err)
		}
	}
	return v, n, nil
}

// SetsOf turns recorded parameters into "name=value" settings, sorted by
// name so that a replay (Resolve) reads them in a fixed order.
func SetsOf(params map[string]string) []string {
	sets := make([]string, 0, len(params))
	for _, name := range slices.Sorted(maps.Keys(params)) {
		sets = append(sets, name+"="+params[name])
	}
	return sets
}

// SameValue reports whether a and b are the same value of p: numbers (and
// lists of them) compared by value ("1e1" equals "10"), the others as text.
func (p Param) SameValue(a, b string) bool {
	if a == b {
		return true
	}
	if p.Kind != Int && p.Kind != Float {
		return false
	}
	as, bs := strings.Split(a, ","), strings.Split(b, ",")
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		x, err1 := strconv.ParseFloat(strings.TrimSpace(as[i]), 64)
		y, err2 := strconv.ParseFloat(strings.TrimSpace(bs[i]), 64)
		if err1 != nil || err2 != nil || x != y || math.IsNaN(x) {
			return false
		}
	}
	return true
}

// normalise parses and checks one parameter value and returns it in
// canonical form (trimmed; a sweep list without spaces).
func normalise(p Param, raw string, isX bool) (string, error) {
	raw = strings.TrimSpace(raw)
	if !isX {
		if err := checkValue(p, raw); err != nil {
			return "", fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		return raw, nil
	}
	if raw == "" {
		return "", fmt.Errorf("parameter %q: the sweep list is empty", p.Name)
	}
	parts := strings.Split(raw, ",")
	seen := map[float64]string{}
	for i, e := range parts {
		e = strings.TrimSpace(e)
		if e == "" {
			return "", fmt.Errorf("parameter %q: empty entry %d in the sweep list %q", p.Name, i+1, raw)
		}
		if err := checkValue(p, e); err != nil {
			return "", fmt.Errorf("parameter %q: sweep entry %d: %w", p.Name, i+1, err)
		}
		f, _ := strconv.ParseFloat(e, 64)
		if prev, dup := seen[f]; dup {
			return "", fmt.Errorf("parameter %q: sweep entries %q and %q are the same value", p.Name, prev, e)
		}
		seen[f] = e
		parts[i] = e
	}
	return strings.Join(parts, ","), nil
}

// checkValue parses one scalar value of p and checks its range or choices.
func checkValue(p Param, s string) error {
	var f float64
	if (p.Kind == Int || p.Kind == Float) && strings.Contains(s, "_") {
		// strconv.ParseFloat reads Go's digit separators: "1_0" is 10.
		return fmt.Errorf("%q is not a number (no _ between digits)", s)
	}
	switch p.Kind {
	case Int:
		n, err := parseInt(s)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		f = float64(n)
	case Float:
		var err error
		f, err = strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%q is not a number", s)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a finite number", s)
		}
	case Bool:
		if _, err := strconv.ParseBool(s); err != nil {
			return fmt.Errorf("%q is not a boolean (true or false)", s)
		}
		return nil
	case String:
		if len(p.Choices) > 0 && !slices.Contains(p.Choices, s) {
			return fmt.Errorf("%q is not one of %s", s, strings.Join(p.Choices, ", "))
		}
		return nil
	default:
		return fmt.Errorf("unknown kind %d", p.Kind)
	}
	switch {
	case p.Positive && !(f > 0):
		return fmt.Errorf("%s must be > 0", s)
	case p.HasMin && p.HasMax && (f < p.Min || f > p.Max):
		return fmt.Errorf("%s is out of range [%s, %s]", s, fmtF(p.Min), fmtF(p.Max))
	case p.HasMin && f < p.Min:
		return fmt.Errorf("%s must be ≥ %s", s, fmtF(p.Min))
	case p.HasMax && f > p.Max:
		return fmt.Errorf("%s must be ≤ %s", s, fmtF(p.Max))
	}
	return nil
}

// parseInt parses a decimal integer; an exactly integral float such as
// "1e4" is accepted too.
func parseInt(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 0)
	if err == nil {
		return int(n), nil
	}
	f, ferr := strconv.ParseFloat(s, 64)
	if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, err
	}
	return int(f), nil
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Quote(x)
	}
	return out
}
