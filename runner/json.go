package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// The JSON forms of a task's record: rows with infinite values, and
// diagnostics with non-finite floats, as the journal and ID.json hold them.

// normaliseInfo returns info as it reads back from the journal (or from
// ID.json): JSON types only — float64 numbers, strings, bools, []any and
// map[string]any (so structs become maps) — with non-finite floats as the
// strings "NaN", "+Inf", "-Inf" (see JSONSafe). It fails on values JSON
// cannot hold.
func normaliseInfo(info map[string]map[string]any) (map[string]map[string]any, error) {
	if info == nil {
		return nil, nil
	}
	safe := make(map[string]any, len(info))
	for s, m := range info {
		safe[s] = JSONSafe(map[string]any(m))
	}
	data, err := json.Marshal(safe)
	if err != nil {
		return nil, fmt.Errorf("info is not JSON-encodable: %w", err)
	}
	var out map[string]map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("info does not read back from JSON: %w", err)
	}
	return out, nil
}

// rowJSON is the JSON form of a Row: Value is a number, or "+Inf"/"-Inf",
// which JSON numbers cannot hold.
type rowJSON struct {
	Scheme string    `json:"scheme"`
	Metric string    `json:"metric"`
	Value  jsonFloat `json:"value"`
	X      float64   `json:"x,omitempty"`
}

// MarshalJSON writes r with an infinite Value as "+Inf" or "-Inf"; NaN is
// an error.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(rowJSON{r.Scheme, r.Metric, jsonFloat(r.Value), r.X})
}

// UnmarshalJSON reads what MarshalJSON writes; unknown fields are errors.
func (r *Row) UnmarshalJSON(data []byte) error {
	var j rowJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*r = Row{Scheme: j.Scheme, Metric: j.Metric, Value: float64(j.Value), X: j.X}
	return nil
}

type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v) // NaN: an error
}

func (f *jsonFloat) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case `"+Inf"`:
		*f = jsonFloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = jsonFloat(math.Inf(-1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("value %s: want a number, \"+Inf\" or \"-Inf\"", short(data))
	}
	*f = jsonFloat(v)
	return nil
}

// short quotes b for an error message, cut after 80 bytes.
func short(b []byte) string {
	const n = 80
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}

// JSONSafe replaces non-finite floats (which JSON cannot hold) by the
// strings "NaN", "+Inf", "-Inf", recursing into maps and slices.
func JSONSafe(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return FormatX(x)
		}
	case float32:
		return JSONSafe(float64(x))
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = JSONSafe(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONSafe(e)
		}
		return out
	case []float64:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONSafe(e)
		}
		return out
	}
	return v
}
