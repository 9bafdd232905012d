"""Per-class calibrators against their peer packages: fit / predict time and test NLL, same data, same run.

Each pair (skcal method, peer adapter of :mod:`skcal.benchmark._peers`) is fitted
on the first half of synthetic over-confident logits and measured on the second
half. Peers run in a subprocess with a time limit. On a loaded machine the
times are indicative only (best of ``--repeat`` for skcal, one run per peer).

Usage::

    PYTHONPATH=. python benchmarks/bench_perclass_peers.py [--sizes 20000x10,100000x2] [--timeout 600]
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_logits  # noqa: E402

PAIRS = [
    ("BetaCalibrator", "betacal-beta"),
    ("HistogramCalibrator", "netcal-histogram"),
    ("ScalingBinningCalibrator", "calibration-scaling-binning"),
    ("BBQCalibrator", "netcal-bbq"),
    ("SplineCalibrator", "splinecalib-spline"),
    ("VennAbersCalibrator", "venn-abers-ivap"),
]


def _data(n, k, seed):
    Z, y = make_logits(2 * n, k, seed=seed)
    return Z[:n], y[:n], Z[n:], y[n:]


def _nll(P, y):
    return float(-np.mean(np.log(np.maximum(P[np.arange(len(y)), y], 1e-300))))


def _child(name, n, k, seed):
    from skcal.benchmark._peers import PEERS

    Zf, yf, Zt, yt = _data(n, k, seed)
    warnings.simplefilter("ignore")
    model = PEERS[name][1](0)
    t0 = time.perf_counter()
    model.fit(Zf, yf)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    P = model.predict_proba(Zt)
    t_pred = time.perf_counter() - t0
    print(json.dumps({"fit_s": t_fit, "pred_s": t_pred, "nll": _nll(P, yt)}))


def _peer(name, n, k, seed, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, f"{n}x{k}",
           "--seed", str(seed)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out (> {timeout:.0f} s)"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return "not installed" if "not installed" in last else f"failed: {last[:70]}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="20000x10,100000x2")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default=None, help="comma-separated skcal class names")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("size", nargs="?", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        n, k = map(int, a.size.split("x"))
        return _child(a.child, n, k, a.seed)
    import skcal

    print(f"# per-class calibrators vs peers (2 CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; times indicative)")
    print("| size | method | skcal fit s | skcal predict s | skcal NLL | peer | peer fit s "
          "| peer predict s | peer NLL | peer fit / skcal fit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in a.sizes.split(","):
        n, k = map(int, size.split("x"))
        Zf, yf, Zt, yt = _data(n, k, a.seed)
        for cls_name, peer in PAIRS:
            if a.only and cls_name not in a.only.split(","):
                continue
            cls = getattr(skcal, cls_name)
            fits, preds = [], []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    est = cls().fit(Zf, yf)
                    fits.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    P = est.predict_proba(Zt)
                    preds.append(time.perf_counter() - t0)
            t_fit, t_pred, nll = min(fits), min(preds), _nll(P, yt)
            r = _peer(peer, n, k, a.seed, a.timeout)
            if isinstance(r, dict):
                cells = [f"{r['fit_s']:.3f}", f"{r['pred_s']:.3f}", f"{r['nll']:.4f}",
                         f"{r['fit_s'] / t_fit:.1f}x"]
            else:
                cells = [r, "", "", ""]
            print(f"| {n:,}x{k} | {cls_name} | {t_fit:.3f} | {t_pred:.3f} | {nll:.4f} | {peer} | "
                  + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
