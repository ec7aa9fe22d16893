# Reference values for package diagnostics, from the R package posterior
# (Debian's r-cran-posterior; these files were made with posterior 1.4.0).
#
#   cd diagnostics/testdata && Rscript reference.R
#
# writes one draws file per data set, draws-NAME.csv (a header chain1,…,chainC
# and one row per draw, every value to 17 significant digits so that Go reads
# back the very doubles R used), and reference.csv with posterior's
# diagnostics of each data set. The Go tests read these files; they do not
# need R.
suppressPackageStartupMessages(library(posterior))

ar1 <- function(n, rho) {
  # Stationary AR(1) with unit marginal variance.
  x <- numeric(n)
  x[1] <- rnorm(1)
  e <- rnorm(n, sd = sqrt(1 - rho^2))
  for (i in 2:n) x[i] <- rho * x[i - 1] + e[i]
  x
}

sets <- list()
set.seed(20210101)
# Well mixed: independent N(0, 1) draws, 4 chains.
sets$iid <- sapply(1:4, function(c) rnorm(500))
# Strongly autocorrelated AR(1) chains.
sets$ar1_0.9 <- sapply(1:4, function(c) ar1(500, 0.9))
sets$ar1_0.95 <- sapply(1:4, function(c) ar1(500, 0.95))
# Not mixing: one chain's mean shifted by one marginal sd.
sets$shifted <- sapply(1:4, function(c) rnorm(500, mean = if (c == 4) 1 else 0))
# Heavy tailed: standard Cauchy (no mean, no variance).
sets$cauchy <- sapply(1:4, function(c) rcauchy(500))
# Many ties (average ranks): Poisson(3) counts.
sets$ties <- sapply(1:4, function(c) as.numeric(rpois(500, 3)))
# One chain of odd length: split-R̂ and split ESS drop the middle draw.
sets$single_odd <- matrix(ar1(1001, 0.5), ncol = 1)
# Antithetic AR(1), ρ = −0.9: the ESS exceeds the draws and hits the cap.
sets$antithetic <- sapply(1:4, function(c) ar1(500, -0.9))

g <- function(x) sprintf("%.17g", x)
rows <- list()
for (name in names(sets)) {
  x <- sets[[name]]
  colnames(x) <- paste0("chain", seq_len(ncol(x)))
  write.csv(apply(x, 2, g), paste0("draws-", name, ".csv"), row.names = FALSE, quote = FALSE)
  q <- quantile(x, c(0.05, 0.5, 0.95)) # type 7, as summarise_draws
  ns <- asNamespace("posterior")
  rows[[name]] <- c(
    mean = mean(x), sd = sd(as.vector(x)),
    q05 = q[[1]], q50 = q[[2]], q95 = q[[3]],
    rhat = rhat(x),
    rhat_bulk = ns$.rhat(z_scale(ns$.split_chains(x))),
    rhat_tail = ns$.rhat(z_scale(ns$.split_chains(ns$fold_draws(x)))),
    rhat_basic = rhat_basic(x),
    ess_bulk = ess_bulk(x), ess_tail = ess_tail(x), ess_basic = ess_basic(x),
    ess_q05 = ess_quantile(x, 0.05, names = FALSE),
    ess_q95 = ess_quantile(x, 0.95, names = FALSE),
    mcse_mean = mcse_mean(x),
    mcse_q05 = mcse_quantile(x, 0.05, names = FALSE),
    mcse_q95 = mcse_quantile(x, 0.95, names = FALSE)
  )
}
ref <- do.call(rbind, rows)
out <- data.frame(dataset = rownames(ref), apply(ref, 2, g), check.names = FALSE)
write.csv(out, "reference.csv", row.names = FALSE, quote = FALSE)
cat(sprintf("posterior %s, %s\n", packageVersion("posterior"), R.version.string),
    file = "reference-version.txt")
