// Package sampler draws samples of θ: exact Gaussian draws, the
// Albert–Chib Gibbs sampler for Bayesian probit regression (Appendix,
// "Implementation of Bayesian Probit Regression") and stochastic gradient
// Langevin dynamics (eq: update SGLD). Randomness always comes from a
// *rand.Rand supplied by the caller.
package sampler
