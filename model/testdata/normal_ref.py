#!/usr/bin/env python3
"""Reference values of log Φ(x), λ(x) = φ(x)/Φ(x) and Φ(x) for model's accuracy tests.

Writes normal_ref.txt: one line per x, four hexadecimal floats (Python's
float.hex, which Go's strconv.ParseFloat reads): x, log Φ(x), λ(x), Φ(x), each
function evaluated by mpmath with 60 significant digits to spare (beyond the
digits of x² that exp(−x²/2) consumes) and rounded to the
nearest double. The x are doubles chosen to cover every branch of the
functions and of the vector kernels: the left tail (x ≤ −8, out to −1e150),
both polynomial ranges, the band 6 ≤ x < 8, the right tail and the
underflow of φ, with their edges. Run from this directory:

    python3 normal_ref.py > normal_ref.txt
"""
import math
import random

import mpmath

DIGITS = 60


def refs(x):
    # exp(-x²/2) needs x² to 60 digits beyond its own size.
    with mpmath.workdps(DIGITS + 2 * max(0, int(math.log10(abs(x) + 1)))):
        X = mpmath.mpf(x)
        phi = mpmath.npdf(X)
        if x <= 0:
            cdf = mpmath.ncdf(X)
            return float(mpmath.log(cdf)), float(phi / cdf), float(cdf)
        # Φ(x) = 1 − Q(x) with Q(x) = Φ(−x) far below the working precision.
        q = mpmath.ncdf(-X)
        return float(mpmath.log1p(-q)), float(phi / (1 - q)), float(1 - q)


def grid():
    rng = random.Random(20261127)
    xs = set()
    # Left tail, log-spaced out to 1e150, and uniform in [-40, -8].
    for k in range(0, 150):
        xs.add(-8 * 10 ** (k / 151 * math.log10(1e150 / 8)))
    for _ in range(150):
        xs.add(rng.uniform(-40, -8))
    # The polynomial ranges and the band, on a grid of step 1/64 (every
    # piece edge of both tables) and uniformly.
    for i in range(-8 * 64, 8 * 64 + 1):
        xs.add(i / 64)
    for _ in range(500):
        xs.add(rng.uniform(-8, 8))
    # Right tail through the underflow of φ (x ≈ 38.6).
    for _ in range(150):
        xs.add(rng.uniform(8, 40))
    # Edges and their neighbours.
    for e in (0.0, 6.0, 8.0, -8.0, 37.0, 38.5, 38.6, 38.7, 1e-300, 5e-324, 1.5, 3.0):
        for v in (e, -e):
            xs.add(v)
            xs.add(math.nextafter(v, math.inf))
            xs.add(math.nextafter(v, -math.inf))
    return sorted(xs)


def main():
    print("# x, log Φ(x), λ(x), Φ(x): mpmath %s, %d digits to spare, rounded to double (normal_ref.py)"
          % (mpmath.__version__, DIGITS))
    for x in grid():
        lp, lam, cdf = refs(x)
        print(x.hex(), lp.hex(), lam.hex(), cdf.hex())


if __name__ == "__main__":
    main()
