package runner

import "os"

// InputDigests returns p.Inputs, computing it on first use (not safe for a
// concurrent first use): the digest of the data each of p's parameters
// with a Digest names (Param.Digest), skipping those that name none or
// whose data cannot be read (the run reports that itself); nil if there
// are none.
func (p *Plan) InputDigests() map[string]string {
	if p.Inputs == nil {
		p.Inputs = p.digestInputs()
	}
	return p.Inputs
}

func (p *Plan) digestInputs() map[string]string {
	var out map[string]string
	for _, q := range p.Spec.Params {
		if q.Digest == nil {
			continue
		}
		d, err := q.Digest(p.Values.Raw(q.Name), p.Values)
		if err != nil || d == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[q.Name] = d
	}
	return out
}

// SameSetting reports whether a run recorded with value stored of
// parameter q, and digests of its input data (Result.InputDigests; nil if
// none were recorded), used plan's setting of q: the same value
// (Param.SameValue), or, for a parameter naming input data (Param.Digest),
// the same folder under another spelling (a relative path, a symbolic
// link) or data whose digest equals the recorded one (the data was moved
// or copied; p's own digests are p.InputDigests).
func (p *Plan) SameSetting(q Param, stored string, digests map[string]string) bool {
	want := p.Values.Raw(q.Name)
	if q.SameValue(stored, want) {
		return true
	}
	if q.Digest == nil || stored == "" || want == "" {
		return false
	}
	if a, err := os.Stat(stored); err == nil {
		if b, err := os.Stat(want); err == nil && os.SameFile(a, b) {
			return true
		}
	}
	recorded, ok := digests[q.Name]
	if !ok {
		return false
	}
	d, ok := p.InputDigests()[q.Name]
	return ok && d == recorded
}
