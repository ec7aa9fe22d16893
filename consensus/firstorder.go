package consensus

// The first-order methods, SGD and Adam, on minibatches, with the
// divergence guard and held-out early stopping. A map's offset, when it
// has one, takes the same steps as its matrices.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// firstOrder runs SGD or Adam (step η or relative step α, iters
// iterations, minibatches of batch) with the divergence guard.
func (v *Variational) firstOrder(ctx context.Context, rng *rand.Rand, init Map, f0 float64, r resolved, step float64, iters, batchSize int, adam bool, stop *earlyStop) (*Fit, error) {
	name := r.Method.Name()
	m := init.Clone()
	prev := m.Clone()
	grad := m.Clone()
	fit := &Fit{Objective: []float64{f0}, Status: IterationCap}
	batch, perm := v.batchBuffers(batchSize)

	// Adam state: first and second moments, and per-stream step scales
	// (the RMS entry of the start's W_k; for the offset, of b, or 1 when
	// b = 0).
	var mom, sec Map
	scale := make([]float64, len(m.W))
	offScale := 1.0
	if adam {
		mom, sec = zeroLike(m), zeroLike(m)
		for k, w := range m.W {
			r, c := w.Dims()
			scale[k] = mat.Norm(w, 2) / math.Sqrt(float64(r*c))
		}
		if n := floats.Norm(m.Offset, 2); n > 0 {
			offScale = n / math.Sqrt(float64(len(m.Offset)))
		}
	}
	const b1, b2, eps = 0.9, 0.999, 1e-8

	ld, err := v.logDetsAll(m)
	if err != nil {
		return nil, err
	}
	shrink := 1.0
	for t := 1; t <= iters; t++ {
		if batch != nil {
			drawBatch(rng, perm, batch)
		}
		if err := v.Gradient(grad, m, batch); err != nil {
			return nil, fmt.Errorf("WVCMC %s iteration %d: %w", name, t, err)
		}
		fit.Evaluations++
		copyMap(prev, m)
		if adam {
			c1 := 1 - math.Pow(b1, float64(t))
			c2 := 1 - math.Pow(b2, float64(t))
			decay := 1 - float64(t-1)/float64(iters)
			for k := range m.W {
				g, mk, sk := grad.W[k].RawMatrix().Data, mom.W[k].RawMatrix().Data, sec.W[k].RawMatrix().Data
				mk2 := m.W[k].RawMatrix().Data
				for i, gi := range g {
					mk[i] = b1*mk[i] + (1-b1)*gi
					sk[i] = b2*sk[i] + (1-b2)*gi*gi
				}
				lr := step * scale[k] * decay
				for i := range g {
					mk2[i] -= shrink * lr * (mk[i] / c1) / (math.Sqrt(sk[i]/c2) + eps)
				}
			}
			lr := step * offScale * decay
			for i, gi := range grad.Offset {
				mom.Offset[i] = b1*mom.Offset[i] + (1-b1)*gi
				sec.Offset[i] = b2*sec.Offset[i] + (1-b2)*gi*gi
				m.Offset[i] -= shrink * lr * (mom.Offset[i] / c1) / (math.Sqrt(sec.Offset[i]/c2) + eps)
			}
		}
		// SGD: W ← W − η ∇L̃ (adam already stepped).
		tries := 0
		for {
			if !adam {
				for k := range m.W {
					m.W[k].Copy(prev.W[k])
					m.W[k].Add(m.W[k], scaled(-step*shrink, grad.W[k]))
				}
				for i, g := range grad.Offset {
					m.Offset[i] = prev.Offset[i] - step*shrink*g
				}
			}
			nld, err := v.logDetsAll(m)
			if err == nil && allFiniteMap(m) && math.Abs(nld-ld) <= float64(v.rx.D)*math.Ln10 {
				ld = nld
				break
			}
			tries++
			fit.Shrinks++
			if tries > maxShrinks {
				return nil, fmt.Errorf("%w at iteration %d of %s: the step was halved %d times (nominal step %g) and the map still breaks down; try a smaller step or the %s optimiser",
					ErrDiverged, t, name, maxShrinks, step, NameLBFGS)
			}
			shrink /= 2
			if adam {
				// Undo and retake the Adam step at half the size.
				for k := range m.W {
					var d mat.Dense
					d.Sub(m.W[k], prev.W[k])
					d.Scale(0.5, &d)
					m.W[k].Add(prev.W[k], &d)
				}
				for i, b := range m.Offset {
					m.Offset[i] = prev.Offset[i] + (b-prev.Offset[i])/2
				}
			}
		}
		fit.Iters = t
		if r.Trace || t == iters {
			f, err := v.Value(m)
			if err != nil {
				return nil, fmt.Errorf("%w at iteration %d of %s: %v", ErrDiverged, t, name, err)
			}
			fit.Objective = append(fit.Objective, f)
		}
		if r.Observe != nil {
			r.Observe(t, fit.Evaluations, m)
		}
		if r.Progress != nil {
			r.Progress(t, iters)
		}
		if ctx.Err() != nil {
			return nil, cancelled(ctx, t, name)
		}
		if stop != nil {
			if err := stop.observe(m, t); err != nil {
				fit.Status = HeldOutStop
				break
			}
		}
		if r.MaxEvaluations > 0 && fit.Evaluations >= r.MaxEvaluations {
			fit.Status = BudgetSpent
			break
		}
	}
	if !r.Trace && fit.Iters < iters && stop == nil {
		// Stopped before the last iteration: its objective is the end.
		f, err := v.Value(m)
		if err != nil {
			return nil, fmt.Errorf("%w at iteration %d of %s: %v", ErrDiverged, fit.Iters, name, err)
		}
		fit.Objective = append(fit.Objective, f)
	}
	fit.FinalStep = step * shrink
	fit.Map = m
	return fit, nil
}

// gonumRun is a run of a gonum optimiser: the method, its iteration cap,
// the relative gradient tolerance (0: none), the stall test's relative
// tolerance (Off: none), Confine, and for a second-order method the
