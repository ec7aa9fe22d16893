package runner

import (
	"errors"
	"fmt"
	"math"
	"regexp"
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

// Suggest returns the candidates close to name: those within edit distance
// max(1, len(name)/3), or having name as a prefix, closest first.
func Suggest(name string, candidates []string) []string {
	type c struct {
		s string
		d int
	}
	var out []c
	lname := strings.ToLower(name)
	limit := max(1, len(name)/3)
	for _, cand := range candidates {
		lc := strings.ToLower(cand)
		d := editDistance(lname, lc)
		if d <= limit || (len(lname) >= 2 && strings.HasPrefix(lc, lname)) {
			out = append(out, c{cand, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].d < out[j].d })
	res := make([]string, len(out))
	for i, x := range out {
		res[i] = x.s
	}
	return res
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// Check reports mistakes in the spec itself: a missing ID or Run, an X
// that is not an Int or Float parameter, duplicate or reserved names,
// names unsafe in file names, Quick keys that are not parameters, invalid
// defaults or quick values, Trials < 1.
func (s Spec) Check() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("spec %q: %s", s.ID, fmt.Sprintf(format, args...))
	}
	if !safeName.MatchString(s.ID) {
		return fail("ID must be a file-name-safe word")
	}
	if s.Run == nil {
		return fail("Run is nil")
	}
	if s.Trials < 1 {
		return fail("Trials = %d, want ≥ 1", s.Trials)
	}
	if len(s.Metrics) == 0 || len(s.Schemes) == 0 {
		return fail("no Metrics or no Schemes")
	}
	for _, list := range [][]string{s.Metrics, s.Schemes} {
		seen := map[string]bool{}
		for _, m := range list {
			if !safeName.MatchString(m) {
				return fail("name %q must be a file-name-safe word", m)
			}
			if seen[m] {
				return fail("name %q listed twice", m)
			}
			seen[m] = true
		}
	}
	for _, m := range s.LinearY {
		if !slices.Contains(s.Metrics, m) {
			return fail("LinearY names %q, which is not a metric", m)
		}
	}
	byName := map[string]Param{}
	for _, p := range s.Params {
		if p.Name == "" || strings.ContainsAny(p.Name, "=, \t") {
			return fail("bad parameter name %q", p.Name)
		}
		if p.Name == trialsKey {
			return fail("parameter name %q is reserved", trialsKey)
		}
		if _, dup := byName[p.Name]; dup {
			return fail("parameter %q declared twice", p.Name)
		}
		byName[p.Name] = p
		if _, err := normalise(p, p.Default, p.Name == s.X); err != nil {
			return fail("default: %v", err)
		}
	}
	xp, ok := byName[s.X]
	if !ok || (xp.Kind != Int && xp.Kind != Float) {
		return fail("X %q must name an Int or Float parameter", s.X)
	}
	for k, val := range s.Quick {
		if k == trialsKey {
			if n, err := parseInt(val); err != nil || n < 1 {
				return fail("quick trials %q, want an integer ≥ 1", val)
			}
			continue
		}
		p, ok := byName[k]
		if !ok {
			return fail("Quick sets %q, which is not a parameter", k)
		}
		if _, err := normalise(p, val, k == s.X); err != nil {
			return fail("quick value: %v", err)
		}
	}
	return nil
}
