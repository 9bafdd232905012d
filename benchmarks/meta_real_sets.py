"""Test NLL / ECE of mixture smoothing and top-versus-all on every real set in ../shared/data.

Each method is fitted on ``logits_val`` / ``y_val`` and scored on
``logits_test`` / ``y_test`` (float32 logits as stored). NLL: each true-class
probability clipped at 1e-300 (a 0 costs 690.8); ECE: top-label, 15
equal-width bins, in %. Prints a Markdown table (NLL / ECE per cell).

Command (from the repository root)::

    OPENBLAS_NUM_THREADS=1 SKCAL_SHARED_DATA=/path/to/shared/data PYTHONPATH=. \\
        python benchmarks/meta_real_sets.py [--sets a,b] [--methods m1,m2]
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import clipped_nll

from skcal import (
    HistogramCalibrator,
    IsotonicScaler,
    PlattScaler,
    SmoothedCalibrator,
    TemperatureScaler,
    TopVersusAllCalibrator,
)
from skcal.metrics import calibration_error

DATA = Path(
    os.environ.get("SKCAL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)

METHODS = {
    "TS": lambda: TemperatureScaler(),
    "iso(clip=None)": lambda: IsotonicScaler(clip=None),
    "iso(clip=None)-mix": lambda: SmoothedCalibrator(IsotonicScaler(clip=None)),
    "iso(clip=None)-mix-cv": lambda: SmoothedCalibrator(IsotonicScaler(clip=None), pseudo_count="cv"),
    "hist": lambda: HistogramCalibrator(),
    "hist-mix": lambda: SmoothedCalibrator(HistogramCalibrator()),
    "TvA-Platt": lambda: TopVersusAllCalibrator(PlattScaler()),
    "TvA-iso": lambda: TopVersusAllCalibrator(IsotonicScaler()),
    "TvA-hist": lambda: TopVersusAllCalibrator(HistogramCalibrator()),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=None)
    ap.add_argument("--methods", default=None)
    args = ap.parse_args()
    names = sorted(p.stem for p in DATA.glob("*.npz"))
    if args.sets:
        names = [n for n in names if n in args.sets.split(",")]
    methods = METHODS if not args.methods else {m: METHODS[m] for m in args.methods.split(",")}
    print("| set | " + " | ".join(methods) + " |")
    print("|---" * (len(methods) + 1) + "|")
    fit_time = dict.fromkeys(methods, 0.0)
    for name in names:
        d = np.load(DATA / f"{name}.npz")
        Zv, yv, Zt, yt = d["logits_val"], d["y_val"], d["logits_test"], d["y_test"]
        cells = []
        for m, make in methods.items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = make().fit(Zv, yv)
            fit_time[m] += time.perf_counter() - t0
            P = np.asarray(est.predict_proba(Zt), dtype=np.float64)
            ece = calibration_error(yt, P, n_bins=15)
            cells.append(f"{clipped_nll(P, yt):.4f} / {100 * ece:.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
        sys.stdout.flush()
    print()
    print("fit time, s (summed over sets): " + ", ".join(f"{m} {t:.1f}" for m, t in fit_time.items()))


if __name__ == "__main__":
    main()
