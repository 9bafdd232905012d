"""Test NLL / ECE of the full-vector scaling family on every real set in ../shared/data.

Each method is fitted on ``logits_val`` / ``y_val`` and scored on
``logits_test`` / ``y_test`` (float32 logits as stored). ECE: top-label,
15 equal-width bins, in %. Prints a Markdown table (NLL / ECE per cell) and the
fit time of each method summed over the sets.

Command (from the repository root)::

    OPENBLAS_NUM_THREADS=1 SKCAL_SHARED_DATA=/path/to/shared/data PYTHONPATH=. \
        python benchmarks/family_real_sets.py [--sets a,b] [--methods m1,m2]
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
    BiasCorrectedTemperatureScaler,
    DirichletCalibrator,
    EnsembleTemperatureScaler,
    MatrixScaler,
    NoBiasVectorScaler,
    StructuredVectorScaler,
    TemperatureScaler,
    VectorScaler,
)
from skcal.metrics import calibration_error

DATA = Path(
    os.environ.get("SKCAL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)

METHODS = {
    "uncal": None,
    "TS": lambda: TemperatureScaler(),
    "ETS": lambda: EnsembleTemperatureScaler(),
    "BCTS": lambda: BiasCorrectedTemperatureScaler(),
    "NBVS": lambda: NoBiasVectorScaler(),
    "VS": lambda: VectorScaler(),
    "MS-sms": lambda: MatrixScaler(),
    "SVS": lambda: StructuredVectorScaler(),
    "MS-odir": lambda: MatrixScaler(reg="odir", reg_lambda=1e-2),
    "MS-none": lambda: MatrixScaler(reg="none"),
    "Dir-odir-auto": lambda: DirichletCalibrator(reg="odir", reg_lambda="auto"),
    "Dir-odir-1e-2": lambda: DirichletCalibrator(reg="odir", reg_lambda=1e-2),
    "Dir-l2": lambda: DirichletCalibrator(reg="l2", reg_lambda=1e-2),
    "Dir-sms": lambda: DirichletCalibrator(),
    "Dir-diag": lambda: DirichletCalibrator(parametrization="diagonal", reg="l2", reg_lambda=1e-2),
    "Dir-fixdiag": lambda: DirichletCalibrator(parametrization="fixed_diagonal", reg="l2", reg_lambda=1e-2),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=None)
    ap.add_argument(
        "--methods", default=",".join(m for m in METHODS if m not in ("Dir-odir-auto", "MS-none"))
    )
    args = ap.parse_args()
    sets = sorted(p.stem for p in DATA.glob("*.npz")) if args.sets is None else args.sets.split(",")
    methods = args.methods.split(",")
    print("| set | K | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    times = {m: 0.0 for m in methods}
    for name in sets:
        with np.load(DATA / f"{name}.npz") as d:
            Zv, yv, Zt, yt = d["logits_val"], d["y_val"], d["logits_test"], d["y_test"]
        cells = []
        for m in methods:
            if METHODS[m] is None:
                Zs = Zt.astype(np.float64)
                P = np.exp(Zs - Zs.max(1, keepdims=True))
                P /= P.sum(1, keepdims=True)
            else:
                est = METHODS[m]()
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(Zv, yv)
                times[m] += time.perf_counter() - t
                print(f"  {name} {m}: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
                P = est.predict_proba(Zt).astype(np.float64)
            ece = 100 * calibration_error(yt, P, n_bins=15)
            cells.append(f"{clipped_nll(P, yt):.4f} / {ece:.2f}")
        print(f"| {name} | {Zv.shape[1]} | " + " | ".join(cells) + " |", flush=True)
    print("\nfit time summed over the sets (s): "
          + ", ".join(f"{m} {t:.1f}" for m, t in times.items() if METHODS[m] is not None))


if __name__ == "__main__":
    main()
