// Package diagnostics says how far MCMC draws can be trusted: the
// rank-normalised split-R̂, the bulk and tail effective sample sizes (ESS)
// and the Monte Carlo standard errors (MCSE) of the mean and of quantiles,
// as defined by Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021),
// "Rank-normalization, folding, and localization: an improved R̂ for
// assessing convergence of MCMC", Bayesian Analysis 16(2), 667–718.
//
// The draws of one scalar quantity are given as chains: x[c][i] is draw i
// of chain c, every chain of the same length. Several chains are the normal
// case; one chain is allowed. Every chain is split into its first and last
// halves (the middle draw of an odd length is dropped), so that M chains of
// N draws become 2M chains of n = ⌊N/2⌋ draws, and a single chain that
// drifts shows up as two chains that disagree.
//
// Rank normalisation: z = Φ⁻¹((r − 3/8)/(S + 1/4)), r the average rank of a
// draw among all S split draws. Folding: |θ − median(θ)|. Then
//
//	R̂ = max(R̂ of z, R̂ of z(folded))            (bulk and tail)
//	ESS_bulk = ESS of z
//	ESS_tail = min(ESS of 1{θ ≤ q₀.₀₅}, ESS of 1{θ ≤ q₀.₉₅})
//	MCSE(mean) = sd(θ)/√(ESS of θ)
//
// with R̂ of split chains ψ_{ji} (j ≤ m, i ≤ n) the ratio
// √((n−1)/n + B/(nW)), B/n the variance of the chain means and W the mean
// within-chain variance, and the ESS mn/τ̂ with τ̂ = −1 + 2Σρ̂_t from
// Geyer's initial monotone sequence of the autocorrelations ρ̂_t (computed
// by FFT, combined across chains with the variance estimate of R̂).
//
// Recommended is the paper's rule for using the draws: R̂ < 1.01 and bulk
// and tail ESS > 400.
//
// The values agree with the R package posterior (1.4.0) to rounding; the
// tests compare with its output on stored draws. Like posterior, the ESS
// is capped at S·log₁₀(S) (τ̂ ≥ 1/log₁₀ S), quantiles are those of
// Hyndman & Fan's type 7 (R's and NumPy's default), and a quantity whose
// draws are all equal has undefined (NaN) R̂, ESS and MCSE.
package diagnostics
