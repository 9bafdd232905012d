"""Test NLL / ECE of issue 26's methods beside the classic ones on every real logit set.

The sets: the bundled ones (:func:`skcal.datasets.list_datasets`) and every
``*.npz`` in ``../shared/data`` (12 in all; the bundled ones are among them).
Each method is fitted on ``logits_val`` / ``y_val`` and scored on
``logits_test`` / ``y_test`` (float32 logits as stored). NLL: each true-class
probability clipped at 1e-300 (a 0 costs 690.8); ECE: top-label, 15
equal-width bins, in %. Prints a Markdown table (``NLL / ECE`` per cell; the
lowest NLL of a row in bold) and the fit time of each method summed over the
sets.

Methods: the whole-vector maps SMS (``MatrixScaler()``), SVS, TS, ETS, VS;
the per-class maps isotonic, CIR, spline, quadratic (binary: one map of the
log-odds; multiclass: one-vs-rest); the wrappers Smoothed-isotonic
(``SmoothedCalibrator(IsotonicScaler())``, a = 1) and top-versus-all over
isotonic and Platt; ``AutoCalibrator()`` with its default candidates
("auto", structured vector scaling and smoothed isotonic among them), with
quadratic scaling and CIR added (``new_candidates``, "auto+new"), and with
plain isotonic in place of smoothed isotonic (``plain_isotonic_candidates``,
"auto-iso").

Command (from the repository root; about a minute on 2 shared cores)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice python benchmarks/new_methods_real_sets.py \\
        [--sets a,b] [--methods m1,m2]
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import clipped_nll

import skcal
from skcal.datasets import list_datasets, load_logits
from skcal.metrics import calibration_error

DATA = Path(
    os.environ.get("SKCAL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)

METHODS = {
    "uncal": None,
    "TS": lambda: skcal.TemperatureScaler(),
    "ETS": lambda: skcal.EnsembleTemperatureScaler(),
    "VS": lambda: skcal.VectorScaler(),
    "SVS": lambda: skcal.StructuredVectorScaler(),
    "SMS": lambda: skcal.MatrixScaler(),
    "iso": lambda: skcal.IsotonicScaler(),
    "CIR": lambda: skcal.CenteredIsotonicScaler(),
    "spline": lambda: skcal.SplineCalibrator(),
    "quad": lambda: skcal.QuadraticScaler(),
    "iso-mix": lambda: skcal.SmoothedCalibrator(skcal.IsotonicScaler()),
    "TvA-iso": lambda: skcal.TopVersusAllCalibrator(skcal.IsotonicScaler()),
    "TvA-Platt": lambda: skcal.TopVersusAllCalibrator(skcal.PlattScaler()),
    "auto": lambda: skcal.AutoCalibrator(),
    "auto+new": None,  # AutoCalibrator with the candidates of ``new_candidates``
    "auto-iso": None,  # AutoCalibrator with ``plain_isotonic_candidates``
}


def new_candidates(n_samples, n_classes):
    """``default_candidates`` plus the new methods it leaves out, each at its place.

    ``structured-vector`` is a default candidate (after ``vector``); this
    adds ``quadratic`` (3 parameters) after ``beta`` (binary, 20 rows) and
    ``centered-isotonic`` after ``smoothed-isotonic`` (its 500-row /
    ``100 K`` rule).
    """
    out = []
    for name, est in skcal.meta._auto.default_candidates(n_samples, n_classes):
        out.append((name, est))
        if name == "beta":
            out.append(("quadratic", skcal.QuadraticScaler()))
        elif name == "smoothed-isotonic":
            out.append(("centered-isotonic", skcal.CenteredIsotonicScaler()))
    return out


def plain_isotonic_candidates(n_samples, n_classes):
    """``default_candidates`` with plain isotonic in place of smoothed isotonic."""
    return [("isotonic", skcal.IsotonicScaler()) if name == "smoothed-isotonic" else (name, est)
            for name, est in skcal.meta._auto.default_candidates(n_samples, n_classes)]


def all_sets():
    """Set name -> (Zv, yv, Zt, yt): ../shared/data, then bundled sets not in it."""
    out = {}
    for p in sorted(DATA.glob("*.npz")) if DATA.is_dir() else []:
        with np.load(p) as d:
            out[p.stem] = (d["logits_val"], d["y_val"], d["logits_test"], d["y_test"])
    for name in list_datasets():
        if name not in out:
            d = load_logits(name)
            out[name] = (d.logits_val, d.y_val, d.logits_test, d.y_test)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=None)
    ap.add_argument("--methods", default=",".join(METHODS))
    args = ap.parse_args()
    sets = all_sets()
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    methods = args.methods.split(",")
    print("| set | K | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    times = dict.fromkeys(methods, 0.0)
    for name, (Zv, yv, Zt, yt) in sets.items():
        K = Zv.shape[1]
        nll, cells = {}, {}
        for m in methods:
            if m == "uncal":
                Zs = Zt.astype(np.float64)
                P = np.exp(Zs - Zs.max(1, keepdims=True))
                P /= P.sum(1, keepdims=True)
            else:
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if m in ("auto+new", "auto-iso"):
                        make = new_candidates if m == "auto+new" else plain_isotonic_candidates
                        cands = make(*Zv.shape)
                        est = skcal.AutoCalibrator(cands).fit(Zv, yv)
                    else:
                        est = METHODS[m]().fit(Zv, yv)
                dt = time.perf_counter() - t
                times[m] += dt
                extra = f" ({est.best_name_})" if m.startswith("auto") else ""
                print(f"  {name} {m}: {dt:.1f} s{extra}", file=sys.stderr, flush=True)
                P = np.asarray(est.predict_proba(Zt), dtype=np.float64)
            nll[m] = clipped_nll(P, yt)
            ece = 100 * calibration_error(yt, P, n_bins=15)
            cells[m] = f"{nll[m]:.4f} / {ece:.2f}"
        best = min((v, k) for k, v in nll.items() if k != "uncal")[1]
        cells[best] = f"**{cells[best]}**"
        print(f"| {name} | {K} | " + " | ".join(cells[m] for m in methods) + " |", flush=True)
    print("\nfit time summed over the sets (s): "
          + ", ".join(f"{m} {t:.1f}" for m, t in times.items() if m != "uncal"))


if __name__ == "__main__":
    main()
