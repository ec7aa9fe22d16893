package wcmc

// The link and the server: Transmit, and Aggregate with its schemes.

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/model"
)

// Transmit sends the workers' samples (K matrices S×d, worker order) once
// over the uncoded uplink described by link (channel.Transmit): under OMA
// the server receives y_k = E_k θ_k + n_k per worker (eq: rev signal),
// under NOMA y = Σ_k E_k θ_k + n (eq: rev signal noma), with the power
// scales P_k of eq: approx pc and noise variance N0 = P/(m_r 10^{SNR/10}).
// With link.Centre each worker sends its samples minus their mean, and the
// mean digitally from the same budget of blocks (docs/BEYOND.md note 17).
func Transmit(samples []*mat.Dense, link channel.Config, seed uint64) (*channel.Received, error) {
	return channel.Transmit(stream(seed, stepTransmit, 0), link, samples)
}

// Aggregation schemes.
const (
	// GCMC is Scott et al.'s consensus on the decoded signals, ignoring the
	// noise (eq: est GCMC result); OMA only.
	GCMC = "gcmc"
	// WGCMC is the closed-form wireless Gaussian consensus (eq: est WGCMC
	// result, eq: est WGCMC result NOMA).
	WGCMC = "wgcmc"
	// WGCMCAware is WGCMC with the workers' channel-estimate error
	// statistics the link records (channel.Received.CSIGain, CSINoise;
	// docs/MATH.md eq. (20.5)): under imperfect CSI it accounts for the
	// gains and residual interference, under perfect CSI it is WGCMC.
	WGCMCAware = "wgcmc-csi"
	// WVCMC learns the map by minimising the free-energy bound (eq: obj OMA,
	// eq: obj NOMA; Algorithms 1 and 2); it needs the global target.
	WVCMC = "wvcmc"
)

// DefaultHoldout is the fraction of signals WVCMC holds out by default to
// stop early (consensus.DefaultHoldout).
const DefaultHoldout = consensus.DefaultHoldout

// Aggregation configures the server.
type Aggregation struct {
	// Scheme is GCMC, WGCMC, WGCMCAware or WVCMC.
	Scheme string
	// Target is the global posterior p(θ|Z) whose gradient WVCMC follows;
	// for probit data, model.NewProbit(data.U, data.V, σ²) with the σ² the
	// workers used. Unused by GCMC and WGCMC.
	Target model.Target
	// Optimizer configures WVCMC (consensus.Settings). Its zero value is
	// the documented default, as for consensus.WVCMC: L-BFGS with
	// DefaultHoldout of the signals held out to stop early.
	Optimizer consensus.Settings
}

// Result is the server's output.
type Result struct {
	// Theta holds the S global samples θ_s = Σ_k W_k y_k^{(s)} as rows (S×d),
	// plus the map's offset b on a mean-centred link (channel.Config.Centre).
	Theta *mat.Dense
	// Map is the learned affine map; it applies unchanged to fresh signals
	// of the same link (channel.Retransmit).
	Map consensus.Map
	// Fit is WVCMC's optimisation report (nil for GCMC and WGCMC).
	Fit *consensus.Fit
	// Fallback reports that WVCMC's OMA start point fell back from the GCMC
	// map (singular when S ≤ d) to the decoded average E_k^†/K.
	Fallback bool
}

// Aggregate maps the received signals rx to global-posterior samples with
// the scheme of a. WVCMC starts from the paper's start point
// (consensus.FitFromStart, docs/MATH.md note 7); its minibatches, if any, come from
// the generator of seed. A WVCMC run that ended far worse than it started
// (consensus.Fit.Diverged) fails with an error wrapping
// consensus.ErrDiverged.
func Aggregate(rx *channel.Received, a Aggregation, seed uint64) (*Result, error) {
	return AggregateContext(context.Background(), rx, a, seed)
}

// AggregateContext is Aggregate with a context: WVCMC's optimisation stops
// within one iteration of ctx being cancelled, with an error wrapping
// consensus.ErrCancelled.
func AggregateContext(ctx context.Context, rx *channel.Received, a Aggregation, seed uint64) (*Result, error) {
	res := &Result{}
	var err error
	switch a.Scheme {
	case GCMC:
		res.Map, err = consensus.GCMC(rx)
	case WGCMC:
		res.Map, err = consensus.WGCMC(rx)
	case WGCMCAware:
		res.Map, err = consensus.WGCMCAware(rx)
	case WVCMC:
		if a.Target == nil {
			return nil, fmt.Errorf("%s needs the global target (Aggregation.Target)", WVCMC)
		}
		if a.Target.Dim() != rx.D {
			return nil, fmt.Errorf("%s: the target has d = %d, the signals carry d = %d", WVCMC, a.Target.Dim(), rx.D)
		}
		if res.Fit, _, res.Fallback, err = consensus.FitFromStart(ctx, stream(seed, stepAggregate, 0), rx, a.Target, a.Optimizer); err == nil {
			err = res.Fit.Diverged()
			res.Map = res.Fit.Map
		}
	default:
		return nil, fmt.Errorf("unknown scheme %q (want %s, %s, %s or %s)", a.Scheme, GCMC, WGCMC, WGCMCAware, WVCMC)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Scheme, err)
	}
	res.Theta = res.Map.Apply(rx)
	return res, nil
}

// Metrics measure global samples against reference samples of the global
// posterior.
type Metrics struct {
	// Err2 is the second-order test error of eq: err2 against the
	// reference second moment (1/S_g) Σ θ_g θ_gᵀ.
	Err2 float64
	// KL is the predictive KL divergence of eq: KL divergence on the test
	// inputs; NaN when none were given.
	KL float64
	// The uncertainty metrics (metric.Uncertainty) against the reference
	// draws' mean μ, covariance C and per-coordinate empirical CDF: the RMS
	// of (μ̂_i − μ_i)/σ_i, ‖Ĉ − C‖_F/‖C‖_F, the reference mass in the
	// samples' central 90% intervals averaged over the coordinates (0.9
	// ideal), and the 2-Wasserstein distance of the Gaussian fits over
	// √tr C.
	MeanErr, CovErr, Coverage90, W2 float64
	// Err2Scaled is err2 with each entry's error in the scale of its two
	// coordinates, (1/d²) Σ |M̂_ij − R_ij| / √(R_ii R_jj): unlike Err2 it is
	// not dominated by entries R_ij near zero.
	Err2Scaled float64
}

// CheckReference reports a reference sample that Evaluate cannot use: fewer
// than two draws, no more draws than parameters, a constant parameter, or
// a covariance that is otherwise not positive definite.
func CheckReference(reference *mat.Dense) error {
	_, err := metric.NewSampleReference(reference)
	return err
}

// Evaluate computes err2 and the uncertainty metrics of samples (S×d, at
// least two) against reference (S_g×d, at least two) and, when test (N_t×d
// covariates) is not nil, the mean predictive KL divergence KL(p̂ ‖ p̂_g)
// of their ensemble predictives (eq: pred dist1).
func Evaluate(samples, reference, test *mat.Dense) (Metrics, error) {
	if samples == nil || reference == nil {
		return Metrics{}, fmt.Errorf("evaluate: samples and reference must not be nil (got samples %v, reference %v)", samples != nil, reference != nil)
	}
	_, d := samples.Dims()
	if _, dr := reference.Dims(); dr != d {
		return Metrics{}, fmt.Errorf("samples have d = %d, the reference d = %d", d, dr)
	}
	m := Metrics{KL: math.NaN()}
	var err error
	if m.Err2, err = metric.Err2(samples, metric.SecondMoment(reference)); err != nil {
		return Metrics{}, err
	}
	ref, err := metric.NewSampleReference(reference)
	if err != nil {
		return Metrics{}, err
	}
	u, err := ref.Score(samples)
	if err != nil {
		return Metrics{}, err
	}
	m.MeanErr, m.CovErr, m.Coverage90, m.W2, m.Err2Scaled = u.MeanErr, u.CovErr, u.Coverage90, u.W2, u.Err2Scaled
	if test == nil {
		return m, nil
	}
	if _, dt := test.Dims(); dt != d {
		return Metrics{}, fmt.Errorf("test inputs have d = %d covariates, the samples d = %d", dt, d)
	}
	p := model.PredictiveProb(nil, samples, test)
	q := model.PredictiveProb(nil, reference, test)
	if m.KL, err = metric.PredictiveKL(p, q); err != nil {
		return Metrics{}, err
	}
	return m, nil
}
