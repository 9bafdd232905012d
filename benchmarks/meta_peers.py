"""SmoothedCalibrator against probmetrics' "-mix" calibrators: same rule, NLL and speed.

1. On every real set in ../shared/data: test NLL of probmetrics 1.3
   ``get_calibrator("isotonic", calibrate_with_mixture=True)`` ("isotonic-mix";
   scikit-learn's one-vs-rest isotonic on
   probabilities, mixed with ``1 / (n + 1)`` of the uniform) and of skcal's
   ``SmoothedCalibrator(IsotonicScaler(clip=None))`` (same rule), fitted on
   ``val``, scored on ``test`` (NLL clipped at 1e-300).
2. Fit + predict time of both on synthetic float32 logits, 100,000 x 100 by
   default (``--n``, ``--k``), best of ``--repeat`` runs (wall and process
   CPU time), and their NLL on the same rows.

Command (from the repository root)::

    OPENBLAS_NUM_THREADS=1 SKCAL_SHARED_DATA=/path/to/shared/data PYTHONPATH=. \\
        python benchmarks/meta_peers.py [--n 100000] [--k 100] [--repeat 1]
"""

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
from _common import clipped_nll, make_logits
from scipy.special import softmax

from skcal import IsotonicScaler, SmoothedCalibrator

DATA = Path(
    os.environ.get("SKCAL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)


def peer():
    from probmetrics.calibrators import get_calibrator

    return get_calibrator("isotonic", calibrate_with_mixture=True)


def ours():
    return SmoothedCalibrator(IsotonicScaler(clip=None))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-real", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if not args.no_real:
        print("| set | probmetrics isotonic-mix NLL | skcal SmoothedCalibrator(IsotonicScaler(clip=None)) NLL |")
        print("|---|---|---|")
        for path in sorted(DATA.glob("*.npz")):
            d = np.load(path)
            Zv, yv = d["logits_val"].astype(np.float64), d["y_val"]
            Zt, yt = d["logits_test"].astype(np.float64), d["y_test"]
            Pv, Pt = softmax(Zv, axis=1), softmax(Zt, axis=1)
            p_nll = clipped_nll(peer().fit(Pv, yv).predict_proba(Pt), yt)
            s_nll = clipped_nll(ours().fit(Zv, yv).predict_proba(Zt), yt)
            print(f"| {path.stem} | {p_nll:.4f} | {s_nll:.4f} |")
    Z, y = make_logits(args.n, args.k, seed=0, dtype=np.float32)
    P = softmax(Z.astype(np.float64), axis=1)
    times = {}
    for name, run in (
        ("probmetrics isotonic-mix", lambda: peer().fit(P, y).predict_proba(P)),
        ("skcal SmoothedCalibrator(IsotonicScaler(clip=None))", lambda: ours().fit(Z, y).predict_proba(Z)),
    ):
        best, best_cpu = np.inf, np.inf
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            out = run()
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        times[name] = (best, best_cpu)
        print(f"{name}: fit + predict {best:.2f} s wall, {best_cpu:.2f} s CPU on "
              f"{args.n} x {args.k} float32, NLL on the same rows "
              f"{clipped_nll(np.asarray(out, dtype=np.float64), y):.4f}")
    (a, ac), (b, bc) = times.values()
    print(f"speed ratio (probmetrics / skcal): {a / b:.1f}x wall, {ac / bc:.1f}x CPU "
          f"(CPU time is the fairer figure on a loaded machine)")


if __name__ == "__main__":
    main()
