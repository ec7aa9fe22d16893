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
// the same data. When both the recorded digest and p's (p.InputDigests)
// are known, they decide, whatever the folders' paths: data moved or
// copied elsewhere matches, data replaced in the same folder does not
// (OtherData). Otherwise the same folder under another spelling (a
// relative path, a symbolic link) matches.
func (p *Plan) SameSetting(q Param, stored string, digests map[string]string) bool {
	if recorded, current, ok := p.dataDigests(q, digests); ok {
		return recorded == current
	}
	want := p.Values.Raw(q.Name)
	if q.SameValue(stored, want) {
		return true
	}
	if q.Digest == nil || stored == "" || want == "" {
		return false
	}
	a, err := os.Stat(stored)
	if err != nil {
		return false
	}
	b, err := os.Stat(want)
	return err == nil && os.SameFile(a, b)
}

// OtherData returns the recorded digest of the data parameter q names
// (from digests, as for SameSetting) and p's, when both are known and
// differ: the run read other data than p would.
func (p *Plan) OtherData(q Param, digests map[string]string) (recorded, current string, differ bool) {
	recorded, current, ok := p.dataDigests(q, digests)
	return recorded, current, ok && recorded != current
}

// dataDigests returns the recorded and p's digest of q's data, ok when q
// names data and both are known.
func (p *Plan) dataDigests(q Param, digests map[string]string) (recorded, current string, ok bool) {
	if q.Digest == nil {
		return "", "", false
	}
	recorded, ok = digests[q.Name]
	if !ok {
		return "", "", false
	}
	current, ok = p.InputDigests()[q.Name]
	return recorded, current, ok
}
