"""Calibration metrics with 95% bootstrap intervals, before and after temperature scaling.

For every real logit set of ``../shared/data`` (see its README): the test
split's metrics of the uncalibrated logits and of skcal's
``TemperatureScaler`` fitted on the calibration split, each with a bootstrap
interval (:func:`skcal.metrics.confidence_interval`, same resampled rows for
both methods), plus the p-values of the calibration tests and the paired
bootstrap interval of the ECE difference (TS minus uncalibrated).

Command (from the repository root; about 5 minutes on 2 loaded cores)::

    python benchmarks/metric_intervals_table.py [--data DIR] [--resamples 1000]
        [--smooth-resamples 200] [--method percentile|BCa] [--sets a,b]

Metrics (all top-label unless stated): ECE with 15 equal-width bins, the
debiased L2 calibration error of Kumar et al. (15 equal-mass bins), the
smooth ECE, accuracy (%), NLL, multiclass Brier score (summed over classes,
as in the data README). Intervals keep the full-sample bins (see
``confidence_interval``).
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skcal import TemperatureScaler  # noqa: E402
from skcal import metrics as M  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _pct(ci, scale=100.0, digits=2):
    return (f"{scale * ci.estimate:.{digits}f} "
            f"[{scale * ci.low:.{digits}f}, {scale * ci.high:.{digits}f}]")


def _row(name, method, y, Z, args, seed):
    kw = dict(input_type="logits", random_state=seed, method=args.method,
              n_resamples=args.resamples)
    ece = M.confidence_interval("ece", y, Z, **kw)
    dce = M.confidence_interval("debiased_calibration_error", y, Z, **kw)
    sm = M.confidence_interval("smooth_ece", y, Z, **{
        **kw, "n_resamples": args.smooth_resamples,
        "method": "percentile" if args.method == "BCa" else args.method})
    acc = M.confidence_interval("accuracy", y, Z, **kw)
    nll = M.confidence_interval("nll", y, Z, **kw)
    brier = M.confidence_interval("brier", y, Z, scale_by_half=False, **kw)
    sp = M.spiegelhalter_test(y, Z, input_type="logits").pvalue
    ks = M.kolmogorov_smirnov_calibration_test(y, Z, input_type="logits").pvalue
    return [name, method, _pct(ece), _pct(dce), _pct(sm), _pct(acc),
            _pct(nll, 1, 4), _pct(brier, 1, 4), _p(sp), _p(ks)]


def _p(p):
    return "<1e-300" if p == 0 else f"{p:.2g}"


HEADER = ["set", "method", "ECE %", "debiased CE %", "smECE %", "acc %", "NLL",
          "Brier", "Spiegelhalter p", "KS p"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("SKCAL_SHARED_DATA", DEFAULT_DATA))
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--smooth-resamples", type=int, default=200)
    ap.add_argument("--method", default="percentile", choices=["percentile", "BCa"])
    ap.add_argument("--sets", default=None, help="comma-separated subset")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    files = sorted(Path(args.data).glob("*.npz"))
    if args.sets:
        keep = set(args.sets.split(","))
        files = [f for f in files if f.stem in keep]
    if not files:
        print(f"no .npz sets under {args.data}", file=sys.stderr)
        return 1
    print(f"95% {args.method} bootstrap intervals, {args.resamples} resamples "
          f"({args.smooth_resamples} for smECE), seed {args.seed}; test split.\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    diffs = []
    for f in files:
        t0 = time.perf_counter()
        with np.load(f) as d:
            Zv, yv = d["logits_val"], d["y_val"]
            Zt, yt = d["logits_test"], d["y_test"]
        ts = TemperatureScaler().fit(Zv, yv)
        Zts = np.asarray(ts.predict_log_proba(Zt), dtype=np.float64)
        for method, Z in (("uncalibrated", Zt), (f"TS (T={ts.temperature_:.3f})", Zts)):
            print("| " + " | ".join(_row(f.stem, method, yt, Z, args, args.seed))
                  + " |", flush=True)
        d_ece = M.paired_difference_interval(
            "ece", yt, Zts, Zt, input_type="logits", random_state=args.seed,
            n_resamples=args.resamples)
        diffs.append((f.stem, d_ece, time.perf_counter() - t0))
    print("\nPaired bootstrap, ECE(TS) - ECE(uncalibrated), percentage points:\n")
    print("| set | difference [95% interval] | TS better beyond noise | seconds |")
    print("|---|---|---|---|")
    for name, d, sec in diffs:
        print(f"| {name} | {_pct(d)} | {'yes' if d.high < 0 else 'no'} | {sec:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
