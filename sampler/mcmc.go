package sampler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// The samplers share one shape (after BlackJAX): a kernel holds the target
// and the tuning parameters, a state holds the chain's position and what is
// expensive to recompute, and
//
//	info := kernel.Step(rng, state)
//
// advances the state by one Markov transition that leaves the target
// invariant, drawing only from rng. Schedules (burn-in, thinning, a
// decreasing step size) and adaptation (of a step size, from the infos of
// the burn-in) live outside the kernel, in a Schedule run by the one
// driver, Run.

// Info reports one transition of a kernel.
type Info struct {
	// AcceptProb is the Metropolis–Hastings acceptance probability
	// min(1, e^{−ΔH}) of the proposal; 1 for kernels without an
	// accept/reject step (Gibbs, SGLD).
	AcceptProb float64
	// Accepted reports that the state moved to the proposal.
	Accepted bool
	// LogDensity is log p(θ, Z) + c at the state after the step; NaN when
	// the kernel does not compute it (Gibbs, SGLD).
	LogDensity float64
	// StepSize is the step the transition used: HMC's leapfrog ε after
	// jitter (whitened coordinates), SGLD's η_t; 0 for Gibbs.
	StepSize float64
	// IntegrationSteps is the number of leapfrog steps (HMC); 0 otherwise.
	IntegrationSteps int
	// Divergent flags a numerically failed move: an HMC trajectory whose
	// energy error ΔH exceeds DivergenceThreshold (or is not finite), an
	// SGLD iterate that is not finite.
	Divergent bool
}

// DivergenceThreshold is the energy error ΔH = H(end) − H(start) above
// which an HMC trajectory is flagged divergent (Stan's value): its
// acceptance probability is below e^{−1000}.
const DivergenceThreshold = 1000

// State is the state of a Markov chain.
type State interface {
	// Position returns the current θ (length d). It is a view valid until
	// the next step and must not be modified.
	Position() []float64
}

// Kernel advances a state of type S by one transition: Step(rng, s)
// updates s in place, using only rng for randomness, and reports on the
// move. GibbsKernel, HMCKernel and SGLDKernel are kernels.
type Kernel[S State] interface {
	Step(rng *rand.Rand, s S) Info
}

// The samplers' kernels.
var (
	_ Kernel[*GibbsState] = (*GibbsKernel)(nil)
	_ Kernel[*HMCState]   = (*HMCKernel)(nil)
	_ Kernel[*SGLDState]  = (*SGLDKernel)(nil)
)

// Schedule says how Run drives a chain: BurnIn steps first, whose draws are
// discarded, then Thin steps per kept draw.
type Schedule struct {
	// BurnIn is the number of initial steps discarded (≥ 0).
	BurnIn int
	// Thin keeps every Thin-th step after burn-in; 0 means 1.
	Thin int
	// Before, if not nil, is called before step t = 0, 1, … (burn-in
	// included), e.g. to set a decreasing step size η_t.
	Before func(t int)
	// After, if not nil, is called after step t with its info, once the
	// draw (if kept) is stored, e.g. to adapt a step size during burn-in.
	After func(t int, info Info)
	// Infos, if not nil, receives the info of the step that made each kept
	// draw: Infos[i] for row i of the output (with thinning, the last of
	// its Thin steps). It must have at least as many entries as rows.
	Infos []Info
	// Progress, if not nil, is told of the steps made (see Progress).
	Progress Progress
	// Ctx, if not nil, stops the run once it is done: Run checks it every
	// ProgressEvery steps and returns an error wrapping Ctx.Err().
	Ctx context.Context
}

// Progress is told of a chain's advance: the driver Run calls it with the
// number of steps made since its last call, every ProgressEvery steps
// (burn-in included) and after the last step, so that the counts sum to
// the steps made. It only observes: the draws do not depend on it.
type Progress func(steps int)

// ProgressEvery is the number of steps between two calls of a
// Schedule's Progress.
const ProgressEvery = 64

// Stats summarises the steps of one chain after burn-in: the sampler
// statistics saved with the samples.
type Stats struct {
	// Draws is the number of draws kept and Steps = Draws·Thin the number
	// of transitions made after burn-in.
	Draws, Steps int
	// AcceptRate is the fraction of accepted proposals and MeanAcceptProb
	// the mean acceptance probability (Stan's accept_stat) over Steps.
	AcceptRate, MeanAcceptProb float64
	// StepSize is the mean step size over Steps (0 for Gibbs).
	StepSize float64
	// MeanIntegrationSteps is the mean number of leapfrog steps (HMC).
	MeanIntegrationSteps float64
	// Divergences counts the divergent transitions among Steps.
	Divergences int
}

// add accumulates one step's info into sums (finished by finish).
func (s *Stats) add(info Info) {
	s.Steps++
	if info.Accepted {
		s.AcceptRate++
	}
	s.MeanAcceptProb += info.AcceptProb
	s.StepSize += info.StepSize
	s.MeanIntegrationSteps += float64(info.IntegrationSteps)
	if info.Divergent {
		s.Divergences++
	}
}

// finish turns the sums of add into means (NaN rates for no steps).
func (s *Stats) finish() {
	n := float64(s.Steps)
	if s.Steps == 0 {
		n = math.NaN()
	}
	s.AcceptRate /= n
	s.MeanAcceptProb /= n
	s.StepSize /= n
	s.MeanIntegrationSteps /= n
}

// ErrDiverged is wrapped by the error of a run stopped because the
// chain's position is no longer finite.
var ErrDiverged = errors.New("diverged")

// Run drives the chain (k, s) through sch.BurnIn + sch.Thin·S steps and
// stores the position after every Thin-th step past burn-in in the S rows
// of dst, the chain continuing from s on the next call. It returns the
// statistics of the steps after burn-in. It stops with an error wrapping
// ErrDiverged, naming the step, if the position becomes NaN or ±Inf, with
// one wrapping sch.Ctx.Err() once sch.Ctx is done (checked every
// ProgressEvery steps), and
// returns an error for a negative burn-in or thinning; it panics if dst
// does not have len(s.Position()) columns or sch.Infos (when not nil) has
// fewer entries than dst rows. Run does not allocate.
func Run[S State](rng *rand.Rand, k Kernel[S], s S, sch Schedule, dst *mat.Dense) (Stats, error) {
	thin := sch.Thin
	switch {
	case sch.BurnIn < 0:
		return Stats{}, fmt.Errorf("negative burn-in %d", sch.BurnIn)
	case thin < 0:
		return Stats{}, fmt.Errorf("negative thinning %d", thin)
	case thin == 0:
		thin = 1
	}
	rows, d := dst.Dims()
	if d != len(s.Position()) || (sch.Infos != nil && len(sch.Infos) < rows) {
		panic(mat.ErrShape)
	}
	var st Stats
	total := sch.BurnIn + thin*rows
	for t := 0; t < total; t++ {
		if sch.Before != nil {
			sch.Before(t)
		}
		info := k.Step(rng, s)
		pos := s.Position()
		for _, x := range pos {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return Stats{}, fmt.Errorf("θ not finite after iteration %d (step size %g): %w", t+1, info.StepSize, ErrDiverged)
			}
		}
		if t >= sch.BurnIn {
			st.add(info)
			if n := t - sch.BurnIn + 1; n%thin == 0 {
				copy(dst.RawRowView(n/thin-1), pos)
				if sch.Infos != nil {
					sch.Infos[n/thin-1] = info
				}
			}
		}
		if sch.After != nil {
			sch.After(t, info)
		}
		if (t+1)%ProgressEvery == 0 || t+1 == total {
			if sch.Progress != nil {
				sch.Progress(t%ProgressEvery + 1)
			}
			if sch.Ctx != nil && t+1 < total {
				if err := sch.Ctx.Err(); err != nil {
					return Stats{}, fmt.Errorf("stopped after step %d of %d: %w", t+1, total, err)
				}
			}
		}
	}
	st.Draws = rows
	st.finish()
	return st, nil
}
