#!/usr/bin/env python3
"""Compare two runs of one experiment trial by trial, mean by mean.

usage: compare_means.py RUN.csv REFERENCE.csv

For each (scheme, x, metric) with at least three trials in both files
(wcmc's ID.csv: experiment,scheme,x_name,x,trial,metric,value), over their
common trials: the mean ± standard error of each run, z of the difference
of the means treating the runs as independent, z of the mean paired
difference, and the median relative difference per trial. Ends with how
many |z| exceed 2 and 3, and the largest, leaving out the keys whose trials
agree within 1e-9 (median relative difference): there z measures rounding,
not sampling, and is marked "(rounding)".
"""
import collections
import csv
import math
import statistics
import sys


def load(path):
    """{(scheme, x, metric): {trial: value}}"""
    values = collections.defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["scheme"], float(r["x"]), r["metric"])
            values[key][int(r["trial"])] = float(r["value"])
    return values


def mean_se(xs):
    return statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))


def z_of(diff, se):
    return diff / se if se > 0 else 0.0


def main(run_path, ref_path):
    run, ref = load(run_path), load(ref_path)
    unpaired, paired = [], []
    for key in sorted(run.keys() & ref.keys()):
        trials = sorted(run[key].keys() & ref[key].keys())
        if len(trials) < 3:
            continue
        a = [run[key][t] for t in trials]
        b = [ref[key][t] for t in trials]
        ma, sa = mean_se(a)
        mb, sb = mean_se(b)
        md, sd = mean_se([x - y for x, y in zip(a, b)])
        z, zp = z_of(ma - mb, math.hypot(sa, sb)), z_of(md, sd)
        rel = statistics.median(abs(x - y) / abs(y) for x, y in zip(a, b) if y != 0)
        rounding = rel <= 1e-9
        if not rounding:
            unpaired.append(abs(z))
            paired.append(abs(zp))
        scheme, x, metric = key
        print(f"{scheme:22} {x:<10g} {metric:10} n={len(trials)} {ma:.4g}±{sa:.2g} "
              f"{mb:.4g}±{sb:.2g} z={z:.2f} z_paired={zp:.2f} median_rel={rel:.2g}"
              + (" (rounding)" if rounding else ""))
    if not unpaired:
        sys.exit("no (scheme, x, metric) with three common trials that differ beyond rounding")
    for name, zs in (("independent", unpaired), ("paired", paired)):
        print(f"{len(zs)} means, {name}: |z| > 2: {sum(z > 2 for z in zs)}, "
              f"|z| > 3: {sum(z > 3 for z in zs)}, largest {max(zs):.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
