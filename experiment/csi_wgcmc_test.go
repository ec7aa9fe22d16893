package experiment

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/dgemm"
	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/runner"
)

// The csi-error-probit oddity (docs/BEYOND.md): WGCMC-OMA has a larger
// err2 with perfect CSI than with a small CSI error. WGCMC's weights are
// derived for zero-mean subposteriors; on signals with a mean, worker k's
// part of the output mean is Scott's combination of its mean shrunk by
// (Ĉ_k/(Ĉ_k + ν/P_k))^{1/2} (consensus/wgcmc_mean_test.go). The residual
// interference of imperfect CSI, which the server does not model, inflates
// Ĉ_k, which undoes the shrinkage and over-disperses the output. The test
// below measures that on the experiment's own trials.

// csiStats is what csiProbitStats measures at one sweep point, averaged
// over the trials: of WGCMC-OMA's output on fresh signals, the projection
// of its mean on the reference mean (1: the mean is right) and its
// dispersion tr Cov / tr Cov_ref; the projection that the shrinkage
// factors predict (shrinkPredicted); Σ_k tr Ĉ_k; and err2_fresh.
type csiStats struct {
	x, projection, predicted, dispersion, chat, err2 float64
	// The same of the in-sample output (the map applied to the signals it
	// was learned on), and Σ_k uᵀĈ_k u along the unit vector u of the
	// reference mean.
	projIn, dispIn, chatU float64
	// ν/P_k averaged over the workers, and the share of Ĉ_k's eigenvalues
	// clamped to 0 (directions WGCMC drops).
	noise, zeros float64
}

// csiProbitStats runs WGCMC-OMA on trials trials of csi-error-probit
// (seed 1) at σ_e² = csi and each SNR of snrs (dB), through the
// experiment's own code in the order of runProbitTrial, so that every
// number is one the experiment computes; the data and the reference are
// set up once, as they do not depend on either. It returns per SNR and
// σ_e² the trials' mean of each statistic and each trial's err2_fresh.
func csiProbitStats(t *testing.T, trials int, csi string, snrs ...string) ([][]csiStats, [][][]float64) {
	t.Helper()
	spec, err := Lookup("csi-error-probit")
	if err != nil {
		t.Fatal(err)
	}
	const runSeed = 1
	plan, err := runner.NewPlan(spec, runner.Options{Seed: runSeed, Trials: trials, Sets: []string{"schemes=" + SchemeWGCMCOMA, "csi_error=" + csi}})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := plan.Setup()
	if err != nil {
		t.Fatal(err)
	}
	p := shared.(*probitProblem)
	// The workers' draws of a trial do not read σ_e² (the channel alone
	// does): the points of one SNR take them from the cache, as the points
	// of an SNR sweep do (drawsFreeSweeps).
	p.draws.reuse = true
	decode := decodeProbit(decodeSynthetic)
	var pr problems
	xs := plan.Values.XList()
	first := decode(plan.Values.With(plan.Values.XName(), runner.FormatX(xs[0])), &pr)
	if err := pr.err(); err != nil {
		t.Fatal(err)
	}
	refMean, refCov := csiReference(t, plan, first)

	stats := make([][]csiStats, len(snrs))
	errs := make([][][]float64, len(snrs))
	for j, snr := range snrs {
		for i, x := range xs {
			pv := plan.Values.With(plan.Values.XName(), runner.FormatX(x)).With("snr_db", snr)
			c := decode(pv, &pr)
			if err := pr.err(); err != nil {
				t.Fatal(err)
			}
			st := csiStats{x: x}
			var perTrial []float64
			for trial := range trials {
				task := runner.Task{Params: pv, X: x, Point: i, Trial: trial, Rng: runner.TaskRng(runSeed, spec.StreamID(), trial), Shared: p, Ctx: t.Context()}
				// runProbitTrial, WGCMC-OMA only.
				omaS, nomaS := c.t/c.workers.k, c.t
				draws, err := p.trialDraws(task, c.workers, nomaS, c.freshFactor*nomaS)
				if err != nil {
					t.Fatal(err)
				}
				freshRng := seed.Split(task.Rng)
				cfg := c.cmc(t.Context(), p.global.Clone(), c.opt.runs(0, c.etaDivisor()), omaS, nomaS)
				o, err := runCMC(task.Rng, draws.samples, cfg)
				if err != nil {
					t.Fatal(err)
				}
				fresh, err := o.applyFresh(freshRng, c.link.channel, draws.fresh, c.freshFactor*omaS, c.freshFactor*nomaS)
				if err != nil {
					t.Fatal(err)
				}
				so, ok := o.schemes[SchemeWGCMCOMA]
				if !ok {
					t.Fatalf("csi_error=%v trial %d: no WGCMC-OMA output", x, trial)
				}
				out := fresh[SchemeWGCMCOMA]
				e, err := metric.Err2(out, p.refMoment)
				if err != nil {
					t.Fatal(err)
				}
				perTrial = append(perTrial, e)
				mean, cov := meanCov(out)
				st.projection += mat.Dot(mean, refMean) / mat.Dot(refMean, refMean)
				st.dispersion += mat.Trace(cov) / mat.Trace(refCov)
				// The means of the workers' fresh samples, as received: a m_k
				// (H = a Ĥ + Ẽ given the estimate, docs/BEYOND.md (12.3)).
				means := make([]*mat.VecDense, len(draws.fresh))
				for k, f := range draws.fresh {
					means[k], _ = meanCov(f.Slice(0, c.freshFactor*omaS, 0, c.data.d).(*mat.Dense))
					gain := 1.0
					if so.rx.Gain != nil {
						gain = so.rx.Gain[k]
					}
					a, _, _ := c.link.channel.CSILaw(gain)
					means[k].ScaleVec(a, means[k])
				}
				pred, chat, chatU, zeros := shrinkPredicted(so.rx, means, refMean)
				st.zeros += zeros
				for _, pk := range so.rx.Pk {
					st.noise += so.rx.CombinedNoise() / pk / float64(so.rx.K)
				}
				st.predicted += pred
				st.chat += chat
				st.chatU += chatU
				mIn, covIn := meanCov(so.theta)
				st.projIn += mat.Dot(mIn, refMean) / mat.Dot(refMean, refMean)
				st.dispIn += mat.Trace(covIn) / mat.Trace(refCov)
				st.err2 += e
			}
			n := float64(trials)
			st.projection /= n
			st.predicted /= n
			st.dispersion /= n
			st.chat /= n
			st.err2 /= n
			st.projIn /= n
			st.dispIn /= n
			st.chatU /= n
			st.noise /= n
			st.zeros /= n
			stats[j] = append(stats[j], st)
			errs[j] = append(errs[j], perTrial)
		}
	}
	return stats, errs
}

// csiReference redraws the run's reference samples (newProbitProblem
// keeps only their second moment): the setup stream draws the training
// and test sets and then the reference chain, as there. It returns their
// mean and covariance.
func csiReference(t *testing.T, plan *runner.Plan, c probitConfig) (*mat.VecDense, *mat.SymDense) {
	t.Helper()
	rng := runner.SetupRng(plan.Seed, plan.Spec.StreamID())
	theta := dataset.ThetaStar(c.data.d)
	train := dataset.Synthetic(rng, theta, c.data.n)
	dataset.Synthetic(rng, theta, c.data.nTest)
	set := chainSet{chains: 1}
	if err := set.add("reference", c.ref.sampler, []*rand.Rand{rng}, train, c.ref.priorVar); err != nil {
		t.Fatal(err)
	}
	draws, _, err := set.run(c.ref.samples, c.data.d, c.ref.burnin)
	if err != nil {
		t.Fatal(err)
	}
	mean, cov := meanCov(draws[0])
	return mean, cov
}

// meanCov returns the mean and covariance of the rows of x.
func meanCov(x *mat.Dense) (*mat.VecDense, *mat.SymDense) {
	_, d := x.Dims()
	mean := mat.NewVecDense(d, nil)
	for j := range d {
		mean.SetVec(j, stat.Mean(mat.Col(nil, j, x), nil))
	}
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, x, nil)
	return mean, &cov
}

// shrinkPredicted returns the projection on the reference mean m of the
// output mean that WGCMC-OMA's shrinkage predicts on rx for workers whose
// samples have the means means, Σ_k tr Ĉ_k, Σ_k uᵀĈ_k u along the unit
// vector u of m, and the share of Ĉ_k's eigenvalues that are 0. Ĉ_k = [Σ̂_{z_k} − νI]^+/P_k
// as consensus.WGCMC estimates it; with Scott's weights
// A_k = (Σ_j Ĉ_j^{-1})^{-1} Ĉ_k^{-1}, the output mean is Σ_k A_k F_k m_k with
// F_k = (Ĉ_k(Ĉ_k + ν/P_k)^{-1})^{1/2} (F_k = I would be Scott's consensus of
// the means), up to the mean of the noise and of any residual.
func shrinkPredicted(rx *channel.Received, means []*mat.VecDense, m *mat.VecDense) (proj, trChat, chatU, zeros float64) {
	nu := rx.CombinedNoise()
	d := rx.D
	eigs := make([]mat.EigenSym, rx.K)
	sumInv := mat.NewSymDense(d, nil)
	clamp := func(k int, v float64) float64 { return math.Max(v-nu, 0) / rx.Pk[k] }
	for k := range rx.K {
		_, cz := meanCov(rx.Combine(k))
		if !eigs[k].Factorize(cz, true) {
			panic("eigen-decomposition failed")
		}
		var vecs mat.Dense
		eigs[k].VectorsTo(&vecs)
		for i, v := range eigs[k].Values(nil) {
			v = clamp(k, v)
			trChat += v
			chatU += v * math.Pow(mat.Dot(vecs.ColView(i), m), 2) / mat.Dot(m, m)
			if v > 0 {
				sumInv.SymRankOne(sumInv, 1/v, vecs.ColView(i))
			} else {
				zeros += 1 / float64(rx.K*d)
			}
		}
	}
	var total mat.Dense
	if err := total.Inverse(sumInv); err != nil {
		panic(err)
	}
	out := mat.NewVecDense(d, nil)
	for k := range rx.K {
		var vecs mat.Dense
		eigs[k].VectorsTo(&vecs)
		// Ĉ_k^{-1} F_k m_k = Σ_i v_i^{-1} (v_i/(v_i + ν/P_k))^{1/2} (e_iᵀ m_k) e_i.
		g := mat.NewVecDense(d, nil)
		for i, v := range eigs[k].Values(nil) {
			v = clamp(k, v)
			if v <= 0 {
				continue
			}
			col := vecs.ColView(i)
			g.AddScaledVec(g, math.Sqrt(v/(v+nu/rx.Pk[k]))/v*mat.Dot(col, means[k]), col)
		}
		var a mat.VecDense
		a.MulVec(&total, g)
		out.AddVec(out, &a)
	}
	return mat.Dot(out, m) / mat.Dot(m, m), trChat, chatU, zeros
}

// useFastBLAS installs the wcmc command's BLAS (model.UseFastBLAS) for
// the rest of the test.
func useFastBLAS(t *testing.T) {
	saved := blas64.Implementation()
	t.Cleanup(func() { blas64.Use(saved) })
	model.UseFastBLAS()
}

// committedErr2 reads the per-trial err2_fresh of scheme in the committed
// csi-error-probit run: per csi_error value, by trial.
func committedErr2(t *testing.T, scheme string) map[string]map[int]float64 {
	t.Helper()
	f, err := os.Open("../docs/beyond-run/csi-error-probit.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int]float64{}
	for _, r := range recs[1:] { // experiment,scheme,x_name,x,trial,metric,value
		if r[1] != scheme || r[5] != "err2_fresh" {
			continue
		}
		trial, err1 := strconv.Atoi(r[4])
		v, err2 := strconv.ParseFloat(r[6], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("committed csi-error-probit.csv: bad row %q", r)
		}
		if out[r[3]] == nil {
			out[r[3]] = map[int]float64{}
		}
		out[r[3]][trial] = v
	}
	return out
}

// TestCSIResidualUndoesWGCMCShrinkage runs csi-error-probit's WGCMC-OMA at
// the experiment's defaults (20 dB, σ_e² = 0, 0.01, 0.2) and again at
// 30 dB, on the first trials of seed 1 (all 40 with
// WCMC_CSI_PROBIT=full, which also prints the table docs/BEYOND.md
// quotes). It checks that these are the committed run's trials (err2_fresh
// equal to the committed CSV's), and the mechanism: with perfect CSI at
// 20 dB the output mean is shrunk (projection on the reference mean well
// below 1) by what the factors (Ĉ_k/(Ĉ_k + ν/P_k))^{1/2} predict; a CSI
// error inflates Ĉ, which brings the projection near 1 and over-disperses
// the output; at 30 dB the shrinkage with perfect CSI is small.
func TestCSIResidualUndoesWGCMCShrinkage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs probit trials at the paper's size (-short)")
	}
	trials := 2
	full := os.Getenv("WCMC_CSI_PROBIT") == "full"
	if full {
		trials = 40
	}
	committed := committedErr2(t, SchemeWGCMCOMA)
	useFastBLAS(t) // the committed run's: the wcmc command installs it
	stats, errs := csiProbitStats(t, trials, "0,0.01,0.2", "20", "30")
	at20, at30 := stats[0], stats[1]
	// The committed run's build rounded the link's products differently in
	// the last bits (the CSI-error link multiplies by Ĥ^†): equal to 1e-12
	// relative under package dgemm's arithmetic; under another, whose
	// rounding the chains may carry further, to 1e-6, which still tells
	// these trials from any others.
	tol := 1e-12
	if machine.Arithmetic(machine.Describe()) != dgemm.Name {
		tol = 1e-6
	}
	for i, st := range at20 {
		for trial, e := range errs[0][i] {
			want, ok := committed[runner.FormatX(st.x)][trial]
			if !ok || math.Abs(e-want) > tol*want {
				t.Errorf("csi_error=%v trial %d: err2_fresh %v, the committed run has %v (present: %v)", st.x, trial, e, want, ok)
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "WGCMC-OMA, mean over %d trials; on fresh signals: err2, the projection of the output mean on the reference mean, that predicted, the output's tr Cov over the reference's; in-sample the same two; Σ_k tr Ĉ_k, Σ_k uᵀĈ_k u, ν/P_k, the share of Ĉ_k's eigenvalues clamped to 0:\n"+
		"%-6s %-6s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", trials, "SNR", "σ_e²", "err2_fresh", "proj", "predicted", "disp", "proj in", "disp in", "Σ tr Ĉ_k", "Σ uᵀĈ_k u", "ν/P_k", "Ĉ_k 0s")
	for _, r := range []struct {
		snr string
		st  []csiStats
	}{{"20 dB", at20}, {"30 dB", at30}} {
		for _, st := range r.st {
			fmt.Fprintf(&b, "%-6s %-6v %10.4g %10.3f %10.3f %10.3g %10.3f %10.3g %10.4g %10.4g %10.3g %10.3f\n", r.snr, st.x, st.err2, st.projection, st.predicted, st.dispersion,
				st.projIn, st.dispIn, st.chat, st.chatU, st.noise, st.zeros)
		}
	}
	t.Log("\n" + b.String())

	perfect, small := at20[0], at20[1]
	// The prediction leaves out the mean of the noise in 500 fresh
	// signals a worker, whose effect on the projection is of order
	// (ν/(P_k·500))^{1/2}/‖m‖ ≈ 1e-3.
	if math.Abs(perfect.projection-perfect.predicted) > 0.01 {
		t.Errorf("20 dB, perfect CSI: projection of the output mean %.3f, the shrinkage factors predict %.3f", perfect.projection, perfect.predicted)
	}
	if perfect.projection > 0.8 {
		t.Errorf("20 dB, perfect CSI: projection %.3f, want the output mean shrunk (< 0.8)", perfect.projection)
	}
	if small.chat < 2*perfect.chat {
		t.Errorf("20 dB: Σ tr Ĉ_k %.4g at σ_e² = 0.01, %.4g at 0: want the residual to inflate Ĉ (≥ 2×)", small.chat, perfect.chat)
	}
	if small.projection < 0.9 || small.dispersion < 1.5 {
		t.Errorf("20 dB, σ_e² = 0.01: projection %.3f, dispersion %.3g: want the shrinkage undone (≥ 0.9) and the output over-dispersed (≥ 1.5)", small.projection, small.dispersion)
	}
	if small.err2 >= perfect.err2 {
		t.Errorf("20 dB: err2_fresh %.4g at σ_e² = 0.01, %.4g at 0: the oddity is gone", small.err2, perfect.err2)
	}
	if p30 := at30[0]; p30.projection < 0.9 || p30.err2 >= perfect.err2/2 {
		t.Errorf("30 dB, perfect CSI: projection %.3f, err2_fresh %.4g: want the shrinkage small", p30.projection, p30.err2)
	}
}
