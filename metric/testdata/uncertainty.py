"""Independent computation of the uncertainty metrics of package metric.

python3 uncertainty.py generate   writes samples.csv, reference.csv, gaussian.csv
python3 uncertainty.py            prints uncertainty.csv (the committed expected values)

Both implementations use the same definitions:
  mean, covariance: the sample mean and covariance with divisor S - 1;
  quantile q(p):    the ceil(p*S)-th smallest of the S values (the first when
                    p*S <= 1), gonum's stat.Quantile with stat.Empirical and
                    numpy's method="inverted_cdf";
  mean_err   = sqrt(mean_i ((m_i - mu_i) / sigma_i)^2), sigma_i^2 = C_ii
  cov_err    = ||Chat - C||_F / ||C||_F
  coverage90 = mean_i P_ref(q_i(0.05) <= theta_i <= q_i(0.95)), P_ref the normal
               law N(mu_i, sigma_i^2) or the fraction of reference draws in the
               closed interval; for an exact law N(m, Chat) the interval is
               m_i -/+ Phi^-1(0.95) sqrt(Chat_ii)
  w2         = sqrt(||m - mu||^2 + tr(Chat + C - 2 (C^1/2 Chat C^1/2)^1/2)) / sqrt(tr C)
  err2_scaled = mean_ij |M_ij - R_ij| / sqrt(R_ii R_jj), M and R the second
               moments: (1/S) sum theta theta^T of samples or draws, cov + mean mean^T
               of a Gaussian law or reference
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
Z95 = 1.6448536269514722  # Phi^-1(0.95)


def write(name, a):
    with open(os.path.join(HERE, name), "w") as f:
        for row in np.atleast_2d(a):
            f.write(",".join(repr(float(v)) for v in row) + "\n")


def read(name):
    return np.loadtxt(os.path.join(HERE, name), delimiter=",", ndmin=2)


def generate():
    rng = np.random.default_rng(20240611)
    d = 3
    # Reference draws: a correlated Gaussian far from the origin.
    L = np.array([[0.3, 0, 0], [0.1, 0.2, 0], [-0.05, 0.07, 0.4]])
    mu = np.array([2.0, -1.5, 0.7])
    ref = mu + rng.standard_normal((101, d)) @ L.T
    # Samples under test: shifted, too narrow in one coordinate, skewed in another.
    z = rng.standard_normal((37, d))
    samples = mu + 0.1 + (z @ L.T) * np.array([0.5, 1.0, 1.3])
    samples[:, 1] += 0.2 * rng.exponential(size=37)
    # A Gaussian reference and an exact Gaussian law under test.
    cov = L @ L.T
    law_mean = mu + np.array([0.05, -0.1, 0.02])
    A = np.array([[0.8, 0.1, 0], [0, 1.1, 0.2], [0.1, 0, 0.9]])
    law_cov = A @ cov @ A.T
    write("samples.csv", samples)
    write("reference.csv", ref)
    write("gaussian.csv", np.vstack([mu, cov, law_mean, law_cov]))


def quantile(x, p):
    x = np.sort(x)
    k = max(1, math.ceil(p * len(x)))
    q = x[k - 1]
    assert q == np.quantile(x, p, method="inverted_cdf"), (p, len(x))
    return q


def sqrtm(a):
    w, v = np.linalg.eigh(a)
    return (v * np.sqrt(np.clip(w, 0, None))) @ v.T


class Reference:
    def __init__(self, mean, cov, draws=None):
        self.mean, self.cov = mean, cov
        self.moment = draws.T @ draws / len(draws) if draws is not None else cov + np.outer(mean, mean)
        self.sd = np.sqrt(np.diag(cov))
        self.draws = draws

    def mass(self, i, lo, hi):
        if hi < lo:
            return 0.0
        if self.draws is not None:
            x = self.draws[:, i]
            return float(np.count_nonzero((x >= lo) & (x <= hi))) / len(x)
        cdf = lambda t: 0.5 * math.erfc(-(t - self.mean[i]) / (self.sd[i] * math.sqrt(2)))
        return cdf(hi) - cdf(lo)

    def score(self, m, c, moment, lo, hi):
        d = len(m)
        mean_err = math.sqrt(np.mean(((m - self.mean) / self.sd) ** 2))
        cov_err = np.linalg.norm(c - self.cov, "fro") / np.linalg.norm(self.cov, "fro")
        coverage = sum(self.mass(i, lo[i], hi[i]) for i in range(d)) / d
        r = sqrtm(self.cov)
        mm = r @ c @ r
        cross = np.sum(np.sqrt(np.clip(np.linalg.eigvalsh((mm + mm.T) / 2), 0, None)))
        w2sq = np.sum((m - self.mean) ** 2) + np.trace(c) + np.trace(self.cov) - 2 * cross
        w2 = math.sqrt(max(w2sq, 0) / np.trace(self.cov))
        dg = np.sqrt(np.diag(self.moment))
        err2_scaled = np.mean(np.abs(moment - self.moment) / np.outer(dg, dg))
        return mean_err, cov_err, coverage, w2, err2_scaled

    def score_samples(self, x):
        lo = [quantile(x[:, i], 0.05) for i in range(x.shape[1])]
        hi = [quantile(x[:, i], 0.95) for i in range(x.shape[1])]
        return self.score(x.mean(axis=0), np.cov(x, rowvar=False, ddof=1), x.T @ x / len(x), lo, hi)

    def score_gaussian(self, m, c):
        h = Z95 * np.sqrt(np.diag(c))
        return self.score(m, c, c + np.outer(m, m), m - h, m + h)


def main():
    if sys.argv[1:] == ["generate"]:
        generate()
        return
    samples, ref = read("samples.csv"), read("reference.csv")
    g = read("gaussian.csv")
    d = samples.shape[1]
    mu, cov = g[0], g[1 : 1 + d]
    law_mean, law_cov = g[1 + d], g[2 + d :]
    sample_ref = Reference(ref.mean(axis=0), np.cov(ref, rowvar=False, ddof=1), ref)
    gauss_ref = Reference(mu, cov)
    print("case,mean_err,cov_err,coverage90,w2,err2_scaled")
    for name, vals in [
        ("samples-vs-draws", sample_ref.score_samples(samples)),
        ("samples-vs-gaussian", gauss_ref.score_samples(samples)),
        ("law-vs-draws", sample_ref.score_gaussian(law_mean, law_cov)),
        ("law-vs-gaussian", gauss_ref.score_gaussian(law_mean, law_cov)),
        ("point-mass-vs-gaussian", gauss_ref.score_samples(np.tile(mu, (5, 1)))),
    ]:
        print(name + "," + ",".join(repr(float(v)) for v in vals))


main()
