"""Peak extra memory of :mod:`skcal.metrics`, as a fraction of the input's size.

"Extra" is what a metric allocates on top of the ``y_prob`` matrix that
already exists (float32 logits, or float32 probabilities from their softmax).
For NumPy input it is the peak traced by :mod:`tracemalloc` (numpy registers
its buffers with it), cross-checked with the peak resident set size sampled
by :mod:`psutil` every millisecond. torch does not report its CPU buffers to
tracemalloc, so for torch (CPU) tensors only the RSS figure is meaningful;
the traced column then shows the host-side NumPy work (bin sums, labels).
RSS can under-read a peak shorter than the sampling period, and over-read
when the allocator keeps freed pages, so read it as a cross-check.

Run (from the repository root)::

    python benchmarks/bench_metrics_memory.py                   # 1,000,000 x 100 float32
    python benchmarks/bench_metrics_memory.py --rows 200000 --classes 50 --backends numpy
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_logits
from bench_memory import measure


def _metrics():
    from skcal import metrics as M

    return [
        ("ECE top-label uniform", lambda y, P, it: M.expected_calibration_error(
            y, P, input_type=it)),
        ("ECE top-label quantile", lambda y, P, it: M.expected_calibration_error(
            y, P, strategy="quantile", input_type=it)),
        ("RMSCE top-label", lambda y, P, it: M.rms_calibration_error(
            y, P, input_type=it)),
        ("MCE top-label", lambda y, P, it: M.maximum_calibration_error(
            y, P, input_type=it)),
        ("ECE classwise uniform", lambda y, P, it: M.calibration_error(
            y, P, kind="classwise", input_type=it)),
        ("ECE classwise quantile", lambda y, P, it: M.calibration_error(
            y, P, kind="classwise", strategy="quantile", input_type=it)),
        ("ECE class_index=0 quantile", lambda y, P, it: M.calibration_error(
            y, P, kind="classwise", class_index=0, strategy="quantile",
            input_type=it)),
        ("brier_score", lambda y, P, it: M.brier_score(y, P, input_type=it)),
        ("negative_log_likelihood", lambda y, P, it: M.negative_log_likelihood(
            y, P, input_type=it)),
        ("reliability_curve", lambda y, P, it: M.reliability_curve(
            y, P, input_type=it)),
        ("reliability_curve n_bootstrap=10", lambda y, P, it: M.reliability_curve(
            y, P, input_type=it, n_bootstrap=10, random_state=0)),
    ]


def _softmax_float32(Z):
    from skcal._backend import _numpy as kernels

    return kernels.softmax(Z)  # float32, row chunks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--backends", default="numpy,torch",
                    help="comma-separated: numpy, torch (CPU tensors)")
    ap.add_argument("--inputs", default="logits,probabilities")
    ap.add_argument("--metrics", default=None,
                    help="comma-separated substrings of the metric names to run")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    n, k = args.rows, args.classes
    Z, y = make_logits(n, k, seed=args.seed)
    size = Z.nbytes
    metrics = _metrics()
    if args.metrics:
        keys = args.metrics.split(",")
        metrics = [m for m in metrics if any(s in m[0] for s in keys)]
    print(f"# skcal.metrics memory benchmark: float32 {n:,} x {k:,} = "
          f"{size / 2**20:.0f} MiB input")
    print("\n| backend | input | metric | traced peak extra | / input | RSS peak extra "
          "| / input | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for input_type in args.inputs.split(","):
        X = Z if input_type == "logits" else _softmax_float32(Z)
        for backend in args.backends.split(","):
            if backend == "torch":
                try:
                    import torch
                except ImportError:
                    print(f"| torch | {input_type} | torch not installed | | | | | |")
                    continue
                Xb, yb = torch.from_numpy(X), torch.from_numpy(y)
                # warm up torch's thread pool and allocator outside the figures
                _metrics()[0][1](yb[:1000], Xb[:1000], input_type)
            else:
                Xb, yb = X, y
            for name, fn in metrics:
                traced, rss, dt = measure(
                    lambda f=fn, a=yb, b=Xb, t=input_type: f(a, b, t))
                rss_s = "n/a" if rss is None else f"{rss / 2**20:.0f} MiB"
                rss_r = "n/a" if rss is None else f"{rss / size:.2f}x"
                traced_r = f"**{traced / size:.2f}x**" if backend == "numpy" else (
                    f"{traced / size:.2f}x")
                if backend == "torch" and rss is not None:
                    rss_r = f"**{rss_r}**"
                print(f"| {backend} | {input_type} | {name} | {traced / 2**20:.0f} MiB | "
                      f"{traced_r} | {rss_s} | {rss_r} | {dt:.2f} |", flush=True)
        del X


if __name__ == "__main__":
    main()
