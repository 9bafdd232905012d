"""AutoCalibrator on every real logit set: test NLL against uncalibrated and the best in hindsight.

For each set (the bundled ones and ``../shared/data``), AutoCalibrator (defaults:
5 seeded stratified folds, NLL, the one-standard-error rule) is fitted on the
calibration split; so is each method of ``METHODS``. On the test split we report
the NLL of each, and paired bootstrap intervals (1000 resamples, seed 0) of

- ``auto - uncalibrated`` (the promise: never above 0 beyond noise), and
- ``auto - best``, where ``best`` is the method with the lowest *test* NLL
  (chosen in hindsight, so an optimistic reference).

Results are cached per set in ``results_auto_real.json`` (re-run a set with
``--force``); ``--rst`` prints the table of docs/user_guide/choosing.rst.

Usage (each call well under two minutes on 2 cores for a few sets)::

    python benchmarks/auto_real_sets.py --sets sst2_gpt2_zeroshot imdb_cv_labelerrors
    python benchmarks/auto_real_sets.py --rst
"""

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import softmax

import skcal
from skcal.datasets import list_datasets, load_logits, load_logits_file
from skcal.metrics import negative_log_likelihood, paired_difference_interval

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data"
OUT = HERE / "results_auto_real.json"

#: Methods fitted next to AutoCalibrator (matrix / Dirichlet only up to 20 classes).
METHODS = {
    "temperature": skcal.TemperatureScaler, "vector": skcal.VectorScaler,
    "structured-vector": skcal.StructuredVectorScaler,
    "matrix": skcal.MatrixScaler, "dirichlet": skcal.DirichletCalibrator,
    "platt": skcal.PlattScaler, "beta": skcal.BetaCalibrator,
    "isotonic": skcal.IsotonicScaler, "histogram": skcal.HistogramCalibrator,
    "smoothed-isotonic": lambda: skcal.SmoothedCalibrator(skcal.IsotonicScaler()),
}


def all_sets():
    out = {}
    if SHARED.is_dir():
        for p in sorted(SHARED.glob("*.npz")):
            out[p.stem] = p
    for name in list_datasets():
        out.setdefault(name, None)
    return out


def load(name, path):
    return load_logits(name) if path is None else load_logits_file(path)


def run_set(data):
    y = np.asarray(data.y_test)
    labels = np.arange(data.n_classes)
    probs = {"uncalibrated": softmax(np.asarray(data.logits_test, np.float64), axis=1)}
    t0 = time.perf_counter()
    auto = skcal.AutoCalibrator().fit(data.logits_val, data.y_val)
    auto_s = time.perf_counter() - t0
    probs["auto"] = np.exp(np.asarray(auto.predict_log_proba(data.logits_test), np.float64))
    for name, cls in METHODS.items():
        if name in ("matrix", "dirichlet") and data.n_classes > 20:
            continue
        try:
            est = cls().fit(data.logits_val, data.y_val)
            probs[name] = np.exp(np.asarray(est.predict_log_proba(data.logits_test), np.float64))
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            print(f"  {name}: {type(exc).__name__}: {exc}")
    nll = {m: float(negative_log_likelihood(y, p, labels=labels)) for m, p in probs.items()}
    finite = {m: v for m, v in nll.items() if m != "auto" and math.isfinite(v)}
    best = min(finite, key=finite.get)

    def diff(a, b):
        if a == b:
            return [0.0, 0.0, 0.0]
        d = paired_difference_interval("nll", y, probs[a], probs[b], labels=labels,
                                       n_resamples=1000, random_state=0)
        return [float(d.estimate), float(d.low), float(d.high)]

    return {
        "n_classes": int(data.n_classes), "n_val": int(len(data.y_val)),
        "n_test": int(len(y)), "chosen": auto.best_name_,
        "candidates": [str(c) for c in auto.cv_results_["candidate"]],
        "auto_fit_s": auto_s, "nll": nll, "best": best,
        "fold_losses": (-np.column_stack([auto.cv_results_[f"split{j}_test_score"]
                                          for j in range(auto.n_splits_)])).tolist(),
        "auto_vs_uncalibrated": diff("auto", "uncalibrated"),
        "auto_vs_best": diff("auto", best),
    }


def rst(results):
    rows = []
    head = ("set", "K", "cal rows", "chosen", "NLL uncal", "NLL auto", "best (hindsight)",
            "auto - uncal [95%]", "auto - best [95%]")
    for name, r in results.items():
        du, db = r["auto_vs_uncalibrated"], r["auto_vs_best"]
        rows.append((
            name, str(r["n_classes"]), str(r["n_val"]), r["chosen"],
            f"{r['nll']['uncalibrated']:.4f}", f"{r['nll']['auto']:.4f}",
            f"{r['best']} {r['nll'][r['best']]:.4f}",
            f"{du[0]:+.4f} [{du[1]:+.4f}, {du[2]:+.4f}]",
            f"{db[0]:+.4f} [{db[1]:+.4f}, {db[2]:+.4f}]",
        ))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    sep = " ".join("=" * w for w in widths)
    fmt = lambda r: " ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    lines = [sep, fmt(head), sep, *map(fmt, rows), sep]
    worse = sum(r["auto_vs_uncalibrated"][1] > 0 for r in results.values())
    gap = np.array([r["auto_vs_best"][0] for r in results.values()])
    beyond = sum(r["auto_vs_best"][1] > 0 for r in results.values())
    half = 1.96 * gap.std(ddof=1) / math.sqrt(len(gap)) if len(gap) > 1 else math.nan
    lines += ["", f"{len(results)} sets; auto worse than uncalibrated beyond noise on "
              f"{worse}; mean auto - best = {gap.mean():+.4f} ± {half:.4f} (1.96 sd/sqrt(n)); "
              f"worse than the hindsight best beyond noise on {beyond}."]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", help="set names (default: every set not cached)")
    ap.add_argument("--force", action="store_true", help="re-run cached sets")
    ap.add_argument("--rst", action="store_true", help="print the docs table and exit")
    args = ap.parse_args()
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    sets = all_sets()
    if args.rst:
        print(rst({n: results[n] for n in sets if n in results}))
        return
    names = args.sets or [n for n in sets if n not in results]
    for name in names:
        if name in results and not args.force:
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results[name] = run_set(load(name, sets[name]))
        print(f"{name}: chose {results[name]['chosen']} ({time.perf_counter() - t0:.1f} s)")
        OUT.write_text(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
