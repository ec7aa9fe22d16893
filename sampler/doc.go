// Package sampler draws samples of θ: exact Gaussian draws, the
// Albert–Chib Gibbs sampler for Bayesian probit regression (Appendix,
// "Implementation of Bayesian Probit Regression"), Laplace-preconditioned
// Hamiltonian Monte Carlo and stochastic gradient Langevin dynamics
// (eq: update SGLD).
//
// The Markov chain samplers share one shape (after BlackJAX): a kernel
// (GibbsKernel, HMCKernel, SGLDKernel) holds the target and its tuning
// parameters, a state holds the chain's position and cached quantities,
// and kernel.Step(rng, state) makes one transition in place and returns an
// Info (acceptance probability, log density, step size, divergence).
// Burn-in, thinning, step-size schedules (PolynomialDecay) and adaptation
// (StepSizeAdaptation) live outside the kernels, in the Schedule that the
// one driver, Run, follows; RunChains runs several chains in parallel,
// NewProbitChains starts them dispersed around the posterior mode. Gibbs
// and HMC bind a kernel to its state as a ready-to-run chain (a Runner;
// their Sample is shorthand for Run without thinning), and NameChains
// names a posterior's chains in their errors.
//
// Randomness always comes from a *rand.Rand supplied by the caller.
package sampler
