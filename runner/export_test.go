package runner

// Units exposes Plan.units to the external tests.
func (p *Plan) Units(keys []TaskKey) [][]int { return p.units(keys) }
