package consensus

// Helpers on Maps: minibatch buffers, the summed log-determinants, and
// Maps as flat vectors (the coordinates gonum optimises over): the
// matrices W_k in stream order, then the offset b when the map has one.

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

func (v *Variational) batchBuffers(n int) (batch, perm []int) {
	mb, ok := v.target.(model.Minibatcher)
	if !ok || n <= 0 || n >= mb.NumData() {
		return nil, nil
	}
	perm = make([]int, mb.NumData())
	for i := range perm {
		perm[i] = i
	}
	return make([]int, n), perm
}

// logDetsAll sums the entropy-bound log-determinant terms over streams.
func (v *Variational) logDetsAll(m Map) (float64, error) {
	var sum float64
	for k, w := range m.W {
		ld, err := v.logDets(w, k, false)
		if err != nil {
			return 0, err
		}
		sum += ld
	}
	return sum, nil
}

func zeroLike(m Map) Map {
	out := Map{W: make([]*mat.Dense, len(m.W))}
	for i, w := range m.W {
		r, c := w.Dims()
		out.W[i] = mat.NewDense(r, c, nil)
	}
	if m.Offset != nil {
		out.Offset = make([]float64, len(m.Offset))
	}
	return out
}

func copyMap(dst, src Map) {
	for i := range src.W {
		dst.W[i].Copy(src.W[i])
	}
	copy(dst.Offset, src.Offset)
}

func frob(m Map) float64 {
	var s float64
	for _, w := range m.W {
		s += sqFrob(w)
	}
	s += floats.Dot(m.Offset, m.Offset)
	return math.Sqrt(s)
}

func allFiniteMap(m Map) bool {
	for _, w := range m.W {
		if !allFinite(w.RawMatrix().Data) {
			return false
		}
	}
	return allFinite(m.Offset)
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func flattenMap(m Map) []float64 {
	var x []float64
	for _, w := range m.W {
		x = append(x, w.RawMatrix().Data...)
	}
	return append(x, m.Offset...)
}

func unflattenMap(m Map, x []float64) {
	i := 0
	for _, w := range m.W {
		data := w.RawMatrix().Data
		copy(data, x[i:i+len(data)])
		i += len(data)
	}
	copy(m.Offset, x[i:])
}
