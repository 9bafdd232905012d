"""Test NLL / ECE / Brier of the per-class calibrators on every set of ../shared/data.

Each calibrator is fitted on ``val`` and measured on ``test``; ECE is the
top-label ECE with 15 equal-width bins (Guo et al. 2017), Brier the
multiclass Brier score summed over classes. Fit times are printed too (a
loaded machine: indicative only).

Usage::

    python benchmarks/bench_perclass_quality.py [--data DIR] [--sets a,b] [--methods beta,spline]

``--data`` defaults to ``$SKCAL_SHARED_DATA`` or ``../shared/data``.
"""

import argparse
import json
import time
import warnings
import os
from pathlib import Path

import numpy as np

import skcal
from skcal import metrics

DATA = Path(os.environ.get(
    "SKCAL_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"
))
METHODS = {
    "platt": lambda: skcal.PlattScaler(),
    "isotonic": lambda: skcal.IsotonicScaler(),
    "cir": lambda: skcal.CenteredIsotonicScaler(),
    "quadratic": lambda: skcal.QuadraticScaler(),
    "beta": lambda: skcal.BetaCalibrator(),
    "histogram": lambda: skcal.HistogramCalibrator(),
    "scaling-binning": lambda: skcal.ScalingBinningCalibrator(),
    "bbq": lambda: skcal.BBQCalibrator(),
    "spline": lambda: skcal.SplineCalibrator(),
    "venn-abers": lambda: skcal.VennAbersCalibrator(),
}


def scores(P, y):
    return (
        float(metrics.negative_log_likelihood(y, P)),
        100 * float(metrics.expected_calibration_error(y, P, n_bins=15)),
        float(metrics.brier_score(y, P)),
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--sets", default=None)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--json", default=None, help="write the results to this file")
    args = ap.parse_args(argv)
    data = Path(args.data)
    sets = sorted(p.stem for p in data.glob("*.npz"))
    if args.sets:
        sets = [s for s in sets if s in args.sets.split(",")]
    methods = args.methods.split(",")
    rows = []
    for name in sets:
        with np.load(data / f"{name}.npz") as f:
            d = {k: f[k] for k in f.files}
        Zv, yv, Zt, yt = d["logits_val"], d["y_val"], d["logits_test"], d["y_test"]
        K = Zv.shape[1]
        Pt = np.exp(Zt - Zt.max(1, keepdims=True).astype(np.float64))
        Pt /= Pt.sum(1, keepdims=True)
        r = {"set": name, "K": K, "uncalibrated": scores(Pt, yt)}
        print(f"{name} (K={K})\n  {'uncalibrated':16s} NLL {r['uncalibrated'][0]:.4f}  "
              f"ECE {r['uncalibrated'][1]:5.2f}%  Brier {r['uncalibrated'][2]:.4f}", flush=True)
        for m in methods:
            cal = METHODS[m]().set_params(classes=np.arange(K))
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cal.fit(Zv.astype(np.float64), yv)
            fit_s = time.perf_counter() - t0
            P = cal.predict_proba(Zt.astype(np.float64))
            r[m] = scores(P, yt) + (fit_s,)
            print(f"  {m:16s} NLL {r[m][0]:.4f}  ECE {r[m][1]:5.2f}%  Brier {r[m][2]:.4f}"
                  f"  (fit {fit_s:.2f} s)", flush=True)
        rows.append(r)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    # markdown table
    print("\n| set | " + " | ".join(["uncalibrated"] + methods) + " |")
    print("|---" * (len(methods) + 2) + "|")
    for r in rows:
        cells = [f"{r[k][0]:.3f} / {r[k][1]:.2f} / {r[k][2]:.3f}" for k in ["uncalibrated"] + methods]
        print(f"| {r['set']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
