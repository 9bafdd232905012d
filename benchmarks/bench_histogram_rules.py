"""Histogram binning: skcal's rules against netcal's ``HistogramBinning`` on the same data (apples to apples).

Fits on one half (synthetic: the data of ``bench_perclass_peers.py``; real:
the bundled sets' validation split) and prints the NLL and top-label ECE on
the other, with the fit time, for netcal's default (10 equal-width bins of
the probabilities, no smoothing) and several ``HistogramCalibrator`` settings,
one of which (``strategy="uniform", smoothing=None``) is netcal's rule.

Usage::

    PYTHONPATH=. python benchmarks/bench_histogram_rules.py
"""

import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_logits  # noqa: E402

SETTINGS = [dict(), dict(strategy="uniform", smoothing=None), dict(strategy="uniform"),
            dict(smoothing=None), dict(n_bins=20), dict(strategy="uniform", n_bins=20)]


def _nll(P, y):
    return float(-np.mean(np.log(np.maximum(P[np.arange(len(y)), y], 1e-300))))


def _run(Zf, yf, Zt, yt, tag):
    from skcal import HistogramCalibrator
    from skcal.metrics import calibration_error

    try:
        from skcal.benchmark._peers import PEERS
        m = PEERS["netcal-histogram"][1](0)
        t = time.perf_counter()
        m.fit(Zf, yf)
        tf = time.perf_counter() - t
        P = m.predict_proba(Zt)
        print(f"| {tag} | netcal HistogramBinning(bins=10) | {tf:.2f} | {_nll(P, yt):.4f} | "
              f"{calibration_error(yt, P):.4f} |")
    except Exception as ex:  # netcal not installed
        print(f"| {tag} | netcal | {type(ex).__name__} | | |")
    for kw in SETTINGS:
        e = HistogramCalibrator(**kw)
        t = time.perf_counter()
        e.fit(Zf, yf)
        tf = time.perf_counter() - t
        P = e.predict_proba(Zt)
        print(f"| {tag} | skcal {kw or 'default'} | {tf:.2f} | {_nll(P, yt):.4f} | "
              f"{calibration_error(yt, P):.4f} |")


def main():
    warnings.simplefilter("ignore")
    print("| data | method | fit s | NLL | top-label ECE |")
    print("|---|---|---|---|---|")
    Z, y = make_logits(40000, 10, seed=0)
    _run(Z[:20000], y[:20000], Z[20000:], y[20000:], "synthetic 20,000x10")
    from skcal.datasets import load_logits
    for name in ("cifar10_resnet20_chenyaofo", "sst2_gpt2_zeroshot"):
        d = load_logits(name)
        _run(d.logits_val.astype(np.float64), d.y_val, d.logits_test.astype(np.float64),
             d.y_test, name)


if __name__ == "__main__":
    main()
